/* test_manifest.c: manifest framing, decoding, lossless re-encoding, unknown
 * field preservation, and refusal of damaged manifests (the damaged-manifest
 * corpus is generated here from real Lance 12 manifests: truncations at every
 * length, bad magic, lengths and offsets past the end, wrong wire types,
 * unknown feature flags). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lance/table/flags.h"
#include "lance/table/manifest.h"
#include "lance/table/table.h"
#include "testutil.h"
#include "util/bytes.h"
#include "util/fsutil.h"

static const char *TABLES[] = {"tables/plain.lance", "tables/blobs.lance", "tables/stable.lance", "tables/v21.lance"};

/* Path of the latest manifest of a fixture table (malloc'd). */
static char *latest_manifest(const char *table) {
  char *root = bri_fixture(table);
  bri_table *t;
  bri_error err;
  ck_assert_msg(bri_table_open(root, &t, &err) == 0, "%s", err.msg);
  char *p = bri_table_manifest_path(t, bri_table_latest_version(t));
  bri_table_close(t);
  free(root);
  return p;
}

/* Decodes every manifest of the table at root and checks that serializing it
 * again gives the bytes Lance wrote, nothing lost or reordered, but for
 * the transaction pointer of the other Lance generation (fields 21 and 23,
 * both written by brid): the sections are the same bytes at the same
 * offsets, and the Manifest message without the added pointer is too. */
static void roundtrip_table(const char *root) {
  bri_table *t;
  bri_error err;
  ck_assert_msg(bri_table_open(root, &t, &err) == 0, "%s", err.msg);
  for (size_t i = 0; i < t->n_versions; i++) {
    char *p = bri_table_manifest_path(t, t->versions[i].version);
    size_t len;
    uint8_t *orig = bri_slurp(p, &len);
    bri_manifest *m;
    ck_assert_msg(bri_manifest_parse(orig, len, p, &m, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(m->pb->version, t->versions[i].version);
    ck_assert_ptr_nonnull(m->txn); /* Lance 12 embeds every transaction */
    uint8_t *again;
    size_t again_len;
    bool had21 = m->pb->has_transaction_section_deprecated, had23 = m->pb->has_transaction_section;
    ck_assert_int_eq(bri_manifest_serialize(m->pb, m->txn, m->indices, &again, &again_len, &err), 0);
    ck_assert_msg(m->manifest_pos == bri_le64(again + again_len - 16), "%s: sections moved", p);
    ck_assert_msg(memcmp(again, orig, m->manifest_pos) == 0, "%s: sections differ", p);
    m->pb->has_transaction_section_deprecated = had21, m->pb->has_transaction_section = had23;
    size_t mlen = lance__table__manifest__get_packed_size(m->pb);
    uint8_t *mbuf = malloc(mlen);
    lance__table__manifest__pack(m->pb, mbuf);
    ck_assert_msg(mlen == len - m->manifest_pos - 20 && memcmp(mbuf, orig + m->manifest_pos + 4, mlen) == 0,
                  "%s: re-encoded manifest differs", p);
    free(mbuf);
    free(again);
    bri_manifest_free(m);
    free(orig);
    free(p);
  }
  bri_table_close(t);
}

/* The fixtures, plus the tables named in BRI_EXTRA_TABLES (colon-separated
 * paths; the interop tests set it to tables LanceDB wrote during the run). */
START_TEST(test_roundtrip_every_manifest) {
  for (size_t k = 0; k < sizeof TABLES / sizeof TABLES[0]; k++) {
    char *root = bri_fixture(TABLES[k]);
    roundtrip_table(root);
    free(root);
  }
  const char *extra = getenv("BRI_EXTRA_TABLES");
  char *list = strdup(extra ? extra : ""), *save = NULL;
  for (char *p = strtok_r(list, ":", &save); p; p = strtok_r(NULL, ":", &save)) roundtrip_table(p);
  free(list);
}
END_TEST

START_TEST(test_index_section_and_tag) {
  char *root = bri_fixture("tables/plain.lance");
  bri_table *t;
  bri_manifest *m;
  bri_error err;
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  ck_assert_int_eq(bri_table_load(t, 0, &m, &err), 0);
  ck_assert_ptr_nonnull(m->indices);
  ck_assert_uint_eq(m->indices->n_indices, 1);
  ck_assert_str_eq(m->indices->indices[0]->name, "id_idx");
  ck_assert_int_eq(m->indices->indices[0]->n_fields, 1);
  bri_ref *tags;
  size_t n;
  ck_assert_int_eq(bri_table_tags(t, &tags, &n, &err), 0);
  ck_assert_uint_eq(n, 1);
  ck_assert_str_eq(tags[0].name, "v2tag");
  ck_assert_uint_eq(tags[0].version, 2);
  ck_assert_ptr_null(tags[0].branch);
  bri_refs_free(tags, n);
  bri_manifest_free(m);
  bri_table_close(t);
  free(root);
}
END_TEST

/* Every fragment is found by its id, through the index made at read time
 * and by the scan of a manifest that has none; an absent id is not. */
START_TEST(test_fragment_by_id) {
  for (size_t k = 0; k < sizeof TABLES / sizeof TABLES[0]; k++) {
    char *p = latest_manifest(TABLES[k]);
    bri_manifest *m;
    bri_error err;
    ck_assert_msg(bri_manifest_read(NULL, p, &m, &err) == 0, "%s", err.msg);
    ck_assert_uint_gt(m->pb->n_fragments, 1);
    bri_manifest bare = {.pb = m->pb};
    uint64_t absent = 0;
    for (size_t i = 0; i < m->pb->n_fragments; i++) {
      const Lance__Table__DataFragment *f = m->pb->fragments[i];
      ck_assert_ptr_eq(bri_manifest_fragment(m, f->id), f);
      ck_assert_ptr_eq(bri_manifest_fragment(&bare, f->id), f);
      if (f->id >= absent) absent = f->id + 1;
    }
    ck_assert_ptr_null(bri_manifest_fragment(m, absent));
    ck_assert_ptr_null(bri_manifest_fragment(&bare, absent));
    bri_manifest_free(m);
    free(p);
  }
}
END_TEST

/* Fields brid does not know survive decode and re-encode, at top level and
 * inside nested messages. */
START_TEST(test_unknown_fields_survive) {
  char *p = latest_manifest("tables/blobs.lance");
  size_t len;
  uint8_t *orig = bri_slurp(p, &len);
  bri_manifest *m;
  bri_error err;
  ck_assert_int_eq(bri_manifest_parse(orig, len, p, &m, &err), 0);
  /* a DataFile with two foreign fields: 30 (varint) and 31 (bytes) */
  Lance__Table__DataFile *df = m->pb->fragments[0]->files[0];
  size_t dlen = lance__table__data_file__get_packed_size(df);
  uint8_t *dbuf = malloc(dlen + 8);
  lance__table__data_file__pack(df, dbuf);
  const uint8_t extra[] = {0xf0, 0x01, 0x2a, 0xfa, 0x01, 0x02, 'h', 'i'};
  memcpy(dbuf + dlen, extra, sizeof extra);
  Lance__Table__DataFile *df2 = lance__table__data_file__unpack(NULL, dlen + sizeof extra, dbuf);
  ck_assert_ptr_nonnull(df2);
  ck_assert_uint_eq(df2->base.n_unknown_fields, 2);
  uint8_t *dbuf2 = malloc(dlen + 8);
  ck_assert_uint_eq(lance__table__data_file__pack(df2, dbuf2), dlen + sizeof extra);
  ck_assert_mem_eq(dbuf2, dbuf, dlen + sizeof extra);
  /* the same inside a whole manifest: swap the data file and serialize */
  m->pb->fragments[0]->files[0] = df2;
  uint8_t *out;
  size_t out_len;
  ck_assert_int_eq(bri_manifest_serialize(m->pb, m->txn, m->indices, &out, &out_len, &err), 0);
  bri_manifest *m2;
  ck_assert_msg(bri_manifest_parse(out, out_len, "modified", &m2, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(m2->pb->fragments[0]->files[0]->base.n_unknown_fields, 2);
  /* protobuf-c keeps the length prefix of a length-delimited unknown field */
  ck_assert_uint_eq(m2->pb->fragments[0]->files[0]->base.unknown_fields[1].len, 3);
  ck_assert_mem_eq(m2->pb->fragments[0]->files[0]->base.unknown_fields[1].data, "\x02hi", 3);
  m->pb->fragments[0]->files[0] = df;
  lance__table__data_file__free_unpacked(df2, NULL);
  bri_manifest_free(m2);
  bri_manifest_free(m);
  free(out), free(dbuf), free(dbuf2), free(orig), free(p);
}
END_TEST

/* Parses bytes that must be refused; checks the code and that the message
 * names the file. */
static void expect_refused(const uint8_t *buf, size_t len, int code, const char *needle) {
  bri_manifest *m = (bri_manifest *)0x1;
  bri_error err = {0};
  int rc = bri_manifest_parse(buf, len, "/x/_versions/damaged.manifest", &m, &err);
  ck_assert_msg(rc == code, "expected %d got %d (%s)", code, rc, err.msg);
  ck_assert_ptr_null(m);
  ck_assert_msg(strstr(err.msg, "/x/_versions/damaged.manifest") != NULL, "no file in: %s", err.msg);
  if (needle) ck_assert_msg(strstr(err.msg, needle) != NULL, "'%s' not in: %s", needle, err.msg);
}

START_TEST(test_truncated_at_every_length) {
  char *p = latest_manifest("tables/plain.lance");
  size_t len;
  uint8_t *orig = bri_slurp(p, &len);
  for (size_t n = 0; n < len; n++) {
    uint8_t *copy = malloc(n ? n : 1); /* exact size, so ASan sees any overread */
    memcpy(copy, orig, n);
    expect_refused(copy, n, BRI_ECORRUPT, NULL);
    free(copy);
  }
  free(orig), free(p);
}
END_TEST

/* Truncating the middle (keeping a valid-looking tail) must be caught too. */
START_TEST(test_cut_out_of_the_middle) {
  char *p = latest_manifest("tables/plain.lance");
  size_t len;
  uint8_t *orig = bri_slurp(p, &len);
  for (size_t cut = 1; cut + 16 < len; cut += 7) {
    size_t n = len - cut;
    uint8_t *copy = malloc(n);
    memcpy(copy, orig, n - 16);
    memcpy(copy + n - 16, orig + len - 16, 16);
    expect_refused(copy, n, BRI_ECORRUPT, NULL);
    free(copy);
  }
  free(orig), free(p);
}
END_TEST

START_TEST(test_bad_magic_and_positions) {
  char *p = latest_manifest("tables/plain.lance");
  size_t len;
  uint8_t *b = bri_slurp(p, &len);
  b[len - 1] = 'X';
  expect_refused(b, len, BRI_ECORRUPT, "LANC");
  b[len - 1] = 'C';
  uint64_t pos = bri_le64(b + len - 16);
  bri_put_le64(b + len - 16, len + 100); /* manifest position past the end */
  expect_refused(b, len, BRI_ECORRUPT, "outside the file");
  bri_put_le64(b + len - 16, UINT64_MAX);
  expect_refused(b, len, BRI_ECORRUPT, "outside the file");
  bri_put_le64(b + len - 16, pos);
  uint32_t mlen = bri_le32(b + pos);
  bri_put_le32(b + pos, mlen + 1); /* manifest length past the tail */
  expect_refused(b, len, BRI_ECORRUPT, "does not match");
  bri_put_le32(b + pos, mlen);
  bri_put_le32(b + 0, 0xffffff00); /* index section length past the manifest */
  expect_refused(b, len, BRI_ECORRUPT, "runs past");
  free(b), free(p);
}
END_TEST

/* Flip the wire type of the first field of the Manifest message (fields = 1,
 * length-delimited) to varint: the message names the field and the offset. */
START_TEST(test_wrong_wire_type) {
  char *p = latest_manifest("tables/plain.lance");
  size_t len;
  uint8_t *b = bri_slurp(p, &len);
  uint64_t pos = bri_le64(b + len - 16);
  ck_assert_uint_eq(b[pos + 4], 0x0a);
  b[pos + 4] = 0x08;
  char want[64];
  snprintf(want, sizeof want, "offset %llu", (unsigned long long)(pos + 4));
  expect_refused(b, len, BRI_ECORRUPT, want);
  expect_refused(b, len, BRI_ECORRUPT, "wire type varint, expected length-delimited");
  b[pos + 4] = 0x0b; /* group start: never written by Lance */
  expect_refused(b, len, BRI_ECORRUPT, "group start");
  free(b), free(p);
}
END_TEST

/* Re-serializes the latest plain manifest after edit() and returns bytes. */
static uint8_t *edited(void (*edit)(Lance__Table__Manifest *), size_t *len) {
  char *p = latest_manifest("tables/plain.lance");
  bri_manifest *m;
  bri_error err;
  ck_assert_int_eq(bri_manifest_read(NULL, p, &m, &err), 0);
  edit(m->pb);
  uint8_t *out;
  ck_assert_int_eq(bri_manifest_serialize(m->pb, m->txn, m->indices, &out, len, &err), 0);
  bri_manifest_free(m);
  free(p);
  return out;
}

static void set_overlay_flag(Lance__Table__Manifest *m) { m->reader_feature_flags |= 64; }
static void set_unknown_writer_bit(Lance__Table__Manifest *m) { m->writer_feature_flags |= (uint64_t)1 << 50; }
static void set_bri_flag_only(Lance__Table__Manifest *m) {
  m->reader_feature_flags |= BRI_FLAG_BLOB_REUSE_INDEX;
  m->writer_feature_flags |= BRI_FLAG_BLOB_REUSE_INDEX;
}
static void set_bri_reader_only(Lance__Table__Manifest *m) { m->reader_feature_flags |= BRI_FLAG_BLOB_REUSE_INDEX; }
static void set_mixed_reader_only(Lance__Table__Manifest *m) { m->reader_feature_flags |= BRI_FLAG_MIXED_DATA_FILE_VERSIONS; }
static void set_mixed_both(Lance__Table__Manifest *m) {
  m->reader_feature_flags |= BRI_FLAG_MIXED_DATA_FILE_VERSIONS;
  m->writer_feature_flags |= BRI_FLAG_MIXED_DATA_FILE_VERSIONS;
}
static void set_managed_writer_only(Lance__Table__Manifest *m) { m->writer_feature_flags |= BRI_FLAG_MANAGED_BLOBS; }
static void set_fragment_tree(Lance__Table__Manifest *m) {
  m->reader_feature_flags |= BRI_FLAG_FRAGMENT_TREE;
  m->writer_feature_flags |= BRI_FLAG_FRAGMENT_TREE;
}
/* a fragment tree without its flag: no fragments, Lance 14's field 22 */
static void tree_shaped(Lance__Table__Manifest *m) {
  for (size_t i = 0; i < m->n_fragments; i++) lance__table__data_fragment__free_unpacked(m->fragments[i], NULL);
  m->n_fragments = 0;
  m->has_fragment_tree = 1;
  m->fragment_tree.data = malloc(3);
  memcpy(m->fragment_tree.data, "abc", 3);
  m->fragment_tree.len = 3;
}
/* Lance 14's non-reusable field ids: writer flag 15 without field 24, and
 * the flag in the reader word */
static void field_ids_flag_alone(Lance__Table__Manifest *m) {
  m->writer_feature_flags |= BRI_FLAG_NON_REUSABLE_FIELD_IDS;
}
static void field_ids_reader_flag(Lance__Table__Manifest *m) {
  m->reader_feature_flags |= BRI_FLAG_NON_REUSABLE_FIELD_IDS;
  m->writer_feature_flags |= BRI_FLAG_NON_REUSABLE_FIELD_IDS;
  m->has_max_allocated_field_id = 1;
}
static void managed_opt_in_garbled(Lance__Table__Manifest *m) {
  Lance__Table__Manifest__SchemaMetadataEntry *e = malloc(sizeof *e);
  lance__table__manifest__schema_metadata_entry__init(e);
  e->key = strdup(BRI_MANAGED_BLOBS_KEY);
  e->has_value = 1, e->value.data = (uint8_t *)strdup("yes"), e->value.len = 3;
  m->schema_metadata = realloc(m->schema_metadata, (m->n_schema_metadata + 1) * sizeof *m->schema_metadata);
  m->schema_metadata[m->n_schema_metadata++] = e;
}
static void set_path(Lance__Table__Manifest *m, const char *p) {
  free(m->fragments[0]->files[0]->path);
  m->fragments[0]->files[0]->path = strdup(p);
}
static void traversal_path(Lance__Table__Manifest *m) { set_path(m, "../../etc/passwd"); }
static void absolute_path(Lance__Table__Manifest *m) { set_path(m, "/etc/passwd"); }
static void duplicate_fragment(Lance__Table__Manifest *m) { m->fragments[1]->id = m->fragments[0]->id; }
static void unknown_base(Lance__Table__Manifest *m) {
  m->fragments[0]->files[0]->has_base_id = 1;
  m->fragments[0]->files[0]->base_id = 7;
}
static void too_many_deleted(Lance__Table__Manifest *m) {
  m->fragments[0]->deletion_file->num_deleted_rows = m->fragments[0]->physical_rows + 1;
}

START_TEST(test_semantic_refusals) {
  static const struct {
    void (*edit)(Lance__Table__Manifest *);
    int code;
    const char *needle;
  } cases[] = {
      {set_overlay_flag, BRI_EUNSUPPORTED, "reader feature flag 64 (unstable_data_overlay_files)"},
      {set_unknown_writer_bit, BRI_EUNSUPPORTED, "writer feature flag 1125899906842624 (unknown to brid)"},
      {set_bri_flag_only, BRI_ECORRUPT, "no data file carries a BRI"},
      {set_bri_reader_only, BRI_ECORRUPT, "reader flags only"},
      {set_mixed_reader_only, BRI_ECORRUPT, "flag 256 (mixed_data_file_versions) is set in the reader word only"},
      {set_managed_writer_only, BRI_ECORRUPT, "flag 16384 (managed_blobs) is set in the writer word only"},
      {set_fragment_tree, BRI_EUNSUPPORTED, "reader feature flag 4096 (fragment_tree) is not supported"},
      {tree_shaped, BRI_EUNSUPPORTED, "Manifest field 22 (fragment_tree) is set"},
      {field_ids_flag_alone, BRI_ECORRUPT, "writer flag non_reusable_field_ids is set but max_allocated_field_id"},
      {field_ids_reader_flag, BRI_ECORRUPT, "flag 32768 (non_reusable_field_ids) is set in the reader word"},
      {managed_opt_in_garbled, BRI_ECORRUPT, "schema metadata lance.blob.managed is \"yes\""},
      {traversal_path, BRI_ECORRUPT, "\"../../etc/passwd\" has an empty, '.' or '..' component"},
      {absolute_path, BRI_ECORRUPT, "is absolute"},
      {duplicate_fragment, BRI_ECORRUPT, "appears twice"},
      {unknown_base, BRI_ECORRUPT, "base id 7"},
      {too_many_deleted, BRI_ECORRUPT, "deleted rows but only"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    size_t len;
    uint8_t *b = edited(cases[i].edit, &len);
    expect_refused(b, len, cases[i].code, cases[i].needle);
    free(b);
  }
}
END_TEST

/* Read for a report, a version brid will not act on parses and says why;
 * bit 8 in both words is read normally. */
START_TEST(test_any_features_for_reports) {
  size_t len;
  uint8_t *b = edited(set_fragment_tree, &len);
  bri_manifest *m;
  bri_error err;
  ck_assert_int_eq(bri_manifest_parse_opts(b, len, "/x/tree.manifest", BRI_MANIFEST_ANY_FEATURES, &m, &err), 0);
  ck_assert_ptr_nonnull(strstr(m->unsupported, "/x/tree.manifest: reader feature flag 4096 (fragment_tree)"));
  bri_manifest_free(m);
  free(b);
  b = edited(tree_shaped, &len);
  ck_assert_int_eq(bri_manifest_parse_opts(b, len, "/x/t.manifest", BRI_MANIFEST_ANY_FEATURES, &m, &err), 0);
  ck_assert_ptr_nonnull(strstr(m->unsupported, "Manifest field 22 (fragment_tree)"));
  bri_manifest_free(m);
  free(b);
  b = edited(set_mixed_both, &len);
  ck_assert_int_eq(bri_manifest_parse(b, len, "/x/mixed.manifest", &m, &err), 0);
  ck_assert_str_eq(m->unsupported, "");
  bri_manifest_free(m);
  free(b);
}
END_TEST

/* Deterministic byte flips over the whole file: anything goes except a crash
 * or a result that re-encodes to different bytes than it decoded from. */
START_TEST(test_byte_flips_never_crash) {
  char *p = latest_manifest("tables/blobs.lance");
  size_t len;
  uint8_t *orig = bri_slurp(p, &len);
  uint32_t x = 12345;
  for (int round = 0; round < 4000; round++) {
    uint8_t *b = malloc(len);
    memcpy(b, orig, len);
    for (int k = 0; k < 3; k++) {
      x ^= x << 13, x ^= x >> 17, x ^= x << 5;
      b[x % len] ^= (uint8_t)(x >> 8);
    }
    bri_manifest *m;
    bri_error err;
    if (bri_manifest_parse(b, len, "flipped", &m, &err) == 0) bri_manifest_free(m);
    else ck_assert_msg(strstr(err.msg, "flipped") != NULL, "no file name: %s", err.msg);
    free(b);
  }
  free(orig), free(p);
}
END_TEST

static Suite *manifest_suite(void) {
  Suite *s = suite_create("manifest");
  TCase *tc = tcase_create("manifest");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_roundtrip_every_manifest);
  tcase_add_test(tc, test_index_section_and_tag);
  tcase_add_test(tc, test_fragment_by_id);
  tcase_add_test(tc, test_unknown_fields_survive);
  tcase_add_test(tc, test_truncated_at_every_length);
  tcase_add_test(tc, test_cut_out_of_the_middle);
  tcase_add_test(tc, test_bad_magic_and_positions);
  tcase_add_test(tc, test_wrong_wire_type);
  tcase_add_test(tc, test_semantic_refusals);
  tcase_add_test(tc, test_any_features_for_reports);
  tcase_add_test(tc, test_byte_flips_never_crash);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(manifest_suite)
