/* test_fields.c: the field rules of lance/table/fields.h. Every field of
 * brid's protos has a rule and docs/format/fields.md lists the same rules;
 * refused fields stop a version; the codec writes both transaction
 * pointers and drops the Manifest's unknown fields; and the unknown-field
 * refusals on messages built here: which unknown fields each check lets
 * pass (the BRI and the size hint, varints where only names of files
 * matter), which it refuses, and that every message names the file, the
 * message type and the field. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lance/table/fields.h"
#include "lance/table/manifest.h"
#include "testutil.h"
#include "util/bytes.h"

static uint8_t seven[] = {0x07};
static uint8_t text[] = {0x03, 'a', 'b', 'c'};

static ProtobufCMessageUnknownField varint_field(uint32_t tag) {
  return (ProtobufCMessageUnknownField){tag, PROTOBUF_C_WIRE_TYPE_VARINT, sizeof seven, seven};
}
static ProtobufCMessageUnknownField ld_field(uint32_t tag) {
  return (ProtobufCMessageUnknownField){tag, PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED, sizeof text, text};
}

static void expect(int rc, const bri_error *err, const char *needle) {
  ck_assert_int_eq(rc, BRI_EUNSUPPORTED);
  ck_assert_msg(strstr(err->msg, "/t/_versions/m.manifest: ") == err->msg, "no file: %s", err->msg);
  ck_assert_msg(strstr(err->msg, needle) != NULL, "'%s' not in: %s", needle, err->msg);
}

/* A fragment a compaction removes: the BRI and a varint field 8 of its data
 * file pass; any other unknown field of the fragment, the data file or the
 * deletion file is refused. */
START_TEST(test_removed_fragment) {
  Lance__Table__DataFragment f;
  lance__table__data_fragment__init(&f);
  Lance__Table__DataFile df = LANCE__TABLE__DATA_FILE__INIT, *dfs[] = {&df};
  Lance__Table__DeletionFile d = LANCE__TABLE__DELETION_FILE__INIT;
  f.id = 3, f.files = dfs, f.n_files = 1, f.deletion_file = &d;
  df.path = "a.lance";
  ProtobufCMessageUnknownField ok[] = {ld_field(8), varint_field(8)};
  df.base.unknown_fields = ok, df.base.n_unknown_fields = 2;
  bri_error err = {0};
  ck_assert_int_eq(bri_fields_check_removed(&f, "/t/_versions/m.manifest", &err), 0);
  ProtobufCMessageUnknownField bad[] = {ld_field(8), varint_field(12)};
  df.base.unknown_fields = bad;
  expect(bri_fields_check_removed(&f, "/t/_versions/m.manifest", &err), &err,
         "fragment 3: data file a.lance: DataFile field 12 (varint) is unknown to brid");
  df.base.n_unknown_fields = 0;
  ProtobufCMessageUnknownField del = varint_field(9);
  d.base.unknown_fields = &del, d.base.n_unknown_fields = 1;
  expect(bri_fields_check_removed(&f, "/t/_versions/m.manifest", &err), &err,
         "fragment 3: DeletionFile field 9 (varint)");
}
END_TEST

/* Clone and cleanup let varints pass and refuse length-delimited fields,
 * at every level, the BRI aside. */
START_TEST(test_files_named) {
  Lance__Table__Manifest m = LANCE__TABLE__MANIFEST__INIT;
  Lance__Table__DataFragment f, *fs[] = {&f};
  lance__table__data_fragment__init(&f);
  Lance__Table__DataFile df = LANCE__TABLE__DATA_FILE__INIT, *dfs[] = {&df};
  Lance__Table__IndexMetadata x = LANCE__TABLE__INDEX_METADATA__INIT, *xs[] = {&x};
  Lance__Table__IndexSection idx = LANCE__TABLE__INDEX_SECTION__INIT;
  m.fragments = fs, m.n_fragments = 1, f.files = dfs, f.n_files = 1, df.path = "a.lance";
  idx.indices = xs, idx.n_indices = 1, x.name = "id_idx";
  ProtobufCMessageUnknownField v = varint_field(30), bri = ld_field(8), ld = ld_field(31);
  m.base.unknown_fields = f.base.unknown_fields = x.base.unknown_fields = &v;
  m.base.n_unknown_fields = f.base.n_unknown_fields = x.base.n_unknown_fields = 1;
  df.base.unknown_fields = &bri, df.base.n_unknown_fields = 1;
  bri_error err = {0};
  const char *p = "/t/_versions/m.manifest";
  ck_assert_int_eq(bri_fields_check_files(&m, &idx, BRI_FIELDS_CLONE, p, &err), 0);
  x.base.unknown_fields = &ld;
  expect(bri_fields_check_files(&m, &idx, BRI_FIELDS_CLEANUP, p, &err), &err,
         "index id_idx: IndexMetadata field 31 (length-delimited) is unknown to brid; it may name files, "
         "which cleanup would take for unreferenced and delete");
  df.base.unknown_fields = &ld;
  expect(bri_fields_check_files(&m, &idx, BRI_FIELDS_CLONE, p, &err), &err,
         "fragment 0: data file a.lance: DataFile field 31 (length-delimited) is unknown to brid; it may "
         "name files, which the clone would not follow");
}
END_TEST

/* Another writer's transaction with a top-level field brid does not know. */
START_TEST(test_winner_transaction) {
  Lance__Table__Transaction t = LANCE__TABLE__TRANSACTION__INIT;
  bri_error err = {0};
  ck_assert_int_eq(bri_fields_check_txn(&t, "/t/_versions/m.manifest", &err), 0);
  ProtobufCMessageUnknownField v = varint_field(5);
  t.base.unknown_fields = &v, t.base.n_unknown_fields = 1;
  expect(bri_fields_check_txn(&t, "/t/_versions/m.manifest", &err), &err,
         "Transaction field 5 (varint) is unknown to brid; brid cannot tell what that transaction changed");
}
END_TEST

/* The fragment reuse index: an unknown field in its inline content, and
 * Lance 14's tagged transitions (field 2), are refused; a plain one passes. */
START_TEST(test_fragment_reuse_index) {
  Lance__Table__FragmentReuseIndexDetails d;
  lance__table__fragment_reuse_index_details__init(&d);
  Lance__Table__FragmentReuseIndexDetails__InlineContent in =
      LANCE__TABLE__FRAGMENT_REUSE_INDEX_DETAILS__INLINE_CONTENT__INIT;
  ProtobufCMessageUnknownField tr = ld_field(7);
  in.base.unknown_fields = &tr, in.base.n_unknown_fields = 1;
  d.content_case = LANCE__TABLE__FRAGMENT_REUSE_INDEX_DETAILS__CONTENT_INLINE, d.inline_ = &in;
  uint8_t buf[64];
  size_t n = lance__table__fragment_reuse_index_details__pack(&d, buf);
  Google__Protobuf__Any any = GOOGLE__PROTOBUF__ANY__INIT;
  any.value.data = buf, any.value.len = n;
  Lance__Table__IndexMetadata x = LANCE__TABLE__INDEX_METADATA__INIT;
  x.name = "__lance_frag_reuse", x.index_details = &any;
  bri_error err = {0};
  expect(bri_fields_check_fri(&x, "/t/_versions/m.manifest", &err), &err,
         "index __lance_frag_reuse: InlineContent field 7 (length-delimited) is unknown to brid");
  in.base.n_unknown_fields = 0;
  ProtobufCBinaryData tagged = {3, (uint8_t *)"abc"};
  in.transitions = &tagged, in.n_transitions = 1;
  any.value.len = lance__table__fragment_reuse_index_details__pack(&d, buf);
  expect(bri_fields_check_fri(&x, "/t/_versions/m.manifest", &err), &err,
         "index __lance_frag_reuse: FragmentReuseIndexDetails.InlineContent field 2 (transitions) is set");
  in.n_transitions = 0;
  any.value.len = lance__table__fragment_reuse_index_details__pack(&d, buf);
  ck_assert_int_eq(bri_fields_check_fri(&x, "/t/_versions/m.manifest", &err), 0);
  ck_assert_int_eq(bri_fields_check_fri(NULL, "/t/_versions/m.manifest", &err), 0);
}
END_TEST

/* Every field of every message with rules is declared in brid's protos
 * with a rule (and the other way round: a rule names a declared field, but
 * the BRI, which brid leaves undeclared on purpose), in ascending order. */
START_TEST(test_every_field_has_a_rule) {
  size_t n;
  const bri_message_rules *m = bri_fields_messages(&n);
  ck_assert_uint_ge(n, 8);
  for (size_t i = 0; i < n; i++) {
    const ProtobufCMessageDescriptor *d = m[i].desc;
    for (unsigned k = 0; k < d->n_fields; k++)
      ck_assert_msg(bri_field_rule_of(d, d->fields[k].id) != NULL, "%s field %u (%s) has no rule", m[i].name,
                    d->fields[k].id, d->fields[k].name);
    for (size_t k = 0; k < m[i].n_fields; k++) {
      const bri_field_rule *r = &m[i].fields[k];
      ck_assert_msg(k == 0 || r->number > m[i].fields[k - 1].number, "%s: rules out of order at %u", m[i].name,
                    r->number);
      ck_assert_msg(protobuf_c_message_descriptor_get_field(d, r->number) != NULL ||
                        (d == &lance__table__data_file__descriptor && r->number == BRI_DATAFILE_FIELD),
                    "%s: rule for field %u (%s), which brid's proto does not declare", m[i].name, r->number, r->name);
      ck_assert_msg(r->what && *r->what, "%s field %u: no text", m[i].name, r->number);
    }
    ck_assert_msg(m[i].unknown && *m[i].unknown, "%s: no rule for unknown fields", m[i].name);
  }
}
END_TEST

/* docs/format/fields.md holds the same tables, row for row. */
START_TEST(test_document_agrees) {
  const char *src = getenv("BRI_SOURCE_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", src ? src : ".", "docs/format/fields.md");
  size_t len;
  char *doc = (char *)bri_slurp(path, &len);
  doc = realloc(doc, len + 1);
  doc[len] = 0;
  size_t n;
  const bri_message_rules *m = bri_fields_messages(&n);
  char line[1024];
  for (size_t i = 0; i < n; i++) {
    snprintf(line, sizeof line, "### %s\n\n| # | field | rule | what brid does |\n|---|---|---|---|\n", m[i].name);
    char *at = strstr(doc, line);
    ck_assert_msg(at != NULL, "docs/format/fields.md has no table for %s", m[i].name);
    at += strlen(line);
    for (size_t k = 0; k < m[i].n_fields; k++) {
      const bri_field_rule *r = &m[i].fields[k];
      snprintf(line, sizeof line, "| %u | %s | %s | %s |\n", r->number, r->name, bri_field_fate_name(r->fate),
               r->what);
      ck_assert_msg(!strncmp(at, line, strlen(line)), "docs/format/fields.md, %s: expected the row\n%sbut found\n%.200s",
                    m[i].name, line, at);
      at += strlen(line);
    }
    snprintf(line, sizeof line, "\nOther field numbers: %s.\n", m[i].unknown);
    ck_assert_msg(!strncmp(at, line, strlen(line)), "docs/format/fields.md, %s: expected\n%sbut found\n%.200s", m[i].name,
                  line, at);
  }
  free(doc);
}
END_TEST

/* A refused field stops the version, naming where it is and why. */
START_TEST(test_refused_fields) {
  Lance__Table__Manifest m = LANCE__TABLE__MANIFEST__INIT;
  Lance__Table__DataFragment f, *fs[] = {&f};
  lance__table__data_fragment__init(&f);
  Lance__Table__DataFile df = LANCE__TABLE__DATA_FILE__INIT, *dfs[] = {&df};
  m.fragments = fs, m.n_fragments = 1, f.id = 4, f.files = dfs, f.n_files = 1, df.path = "a.lance";
  Lance__Table__IndexMetadata x = LANCE__TABLE__INDEX_METADATA__INIT, *xs[] = {&x};
  Lance__Table__IndexSection idx = LANCE__TABLE__INDEX_SECTION__INIT;
  idx.indices = xs, idx.n_indices = 1, x.name = "vec_idx";
  bri_error err = {0};
  const char *p = "/t/_versions/m.manifest";
  ck_assert_int_eq(bri_fields_check_manifest(&m, &idx, p, &err), 0);
  ProtobufCBinaryData ov = {3, (uint8_t *)"abc"};
  f.overlays = &ov, f.n_overlays = 1;
  expect(bri_fields_check_manifest(&m, &idx, p, &err), &err,
         "fragment 4: DataFragment field 11 (overlays) is set: data overlay files");
  f.n_overlays = 0;
  Lance__Table__RowLineageColumn col = LANCE__TABLE__ROW_LINEAGE_COLUMN__INIT;
  f.row_id_sequence_case = LANCE__TABLE__DATA_FRAGMENT__ROW_ID_SEQUENCE_COLUMN_ROW_IDS, f.column_row_ids = &col;
  expect(bri_fields_check_manifest(&m, &idx, p, &err), &err, "DataFragment field 12 (column_row_ids) is set");
  f.row_id_sequence_case = LANCE__TABLE__DATA_FRAGMENT__ROW_ID_SEQUENCE__NOT_SET;
  x.has_clustering_id = 1, x.clustering_id = 2;
  expect(bri_fields_check_manifest(&m, &idx, p, &err), &err, "index vec_idx: IndexMetadata field 12 (clustering_id)");
  x.has_clustering_id = 0;
  m.has_fragment_tree = 1;
  expect(bri_fields_check_manifest(&m, &idx, p, &err), &err, "Manifest field 22 (fragment_tree) is set");
  m.has_fragment_tree = 0, m.has_max_clustering_id = 1;
  expect(bri_fields_check_manifest(&m, NULL, p, &err), &err, "Manifest field 26 (max_clustering_id) is set");
}
END_TEST

/* The codec lays out a new file: both transaction pointers name the
 * transaction's bytes, the index section sits at 0, and the Manifest's
 * unknown fields (here a stale pointer, 40) and version_aux_data are gone. */
START_TEST(test_codec_pointers) {
  Lance__Table__Manifest m = LANCE__TABLE__MANIFEST__INIT;
  m.has_version = 1, m.version = 3;
  m.has_version_aux_data = 1, m.version_aux_data = 99;
  m.has_transaction_section = 1, m.transaction_section = 12345;
  uint8_t *stale = malloc(1);
  stale[0] = 0x07;
  m.base.unknown_fields = malloc(sizeof *m.base.unknown_fields);
  m.base.unknown_fields[0] = (ProtobufCMessageUnknownField){40, PROTOBUF_C_WIRE_TYPE_VARINT, 1, stale};
  m.base.n_unknown_fields = 1;
  Lance__Table__Transaction t = LANCE__TABLE__TRANSACTION__INIT;
  t.has_read_version = 1, t.read_version = 2, t.uuid = "u";
  Lance__Table__IndexSection idx = LANCE__TABLE__INDEX_SECTION__INIT;
  uint8_t *buf;
  size_t len;
  bri_error err = {0};
  ck_assert_int_eq(bri_manifest_serialize(&m, &t, &idx, &buf, &len, &err), 0);
  ck_assert_int_eq(m.base.n_unknown_fields, 0);
  bri_manifest *bm;
  ck_assert_int_eq(bri_manifest_parse(buf, len, "/t/_versions/m.manifest", &bm, &err), 0);
  ck_assert(bm->pb->has_index_section && bm->pb->index_section == 0);
  ck_assert(bm->pb->has_transaction_section && bm->pb->has_transaction_section_deprecated);
  ck_assert_uint_eq(bm->pb->transaction_section, bm->pb->transaction_section_deprecated);
  ck_assert_uint_eq(bm->pb->transaction_section, 4); /* after the empty index section's length */
  ck_assert_uint_eq(bri_le32(buf + 4), lance__table__transaction__get_packed_size(&t));
  ck_assert(!bm->pb->has_version_aux_data);
  ck_assert_int_eq(bm->pb->base.n_unknown_fields, 0);
  ck_assert_ptr_nonnull(bm->txn);
  ck_assert_uint_eq(bm->txn->read_version, 2);
  bri_manifest_free(bm);
  free(buf);
}
END_TEST

/* A Lance 12 or 13 manifest (field 21 only) and a Lance 14 one (23, with a
 * 21 that an older writer left: 23 wins) find their transaction. */
START_TEST(test_transaction_pointer_read) {
  Lance__Table__Manifest m = LANCE__TABLE__MANIFEST__INIT;
  uint64_t off = 0;
  ck_assert(!bri_manifest_transaction_offset(&m, &off));
  m.has_transaction_section_deprecated = 1, m.transaction_section_deprecated = 7;
  ck_assert(bri_manifest_transaction_offset(&m, &off) && off == 7);
  m.has_transaction_section = 1, m.transaction_section = 0;
  ck_assert(bri_manifest_transaction_offset(&m, &off) && off == 0);
}
END_TEST

static Suite *fields_suite(void) {
  Suite *s = suite_create("fields");
  TCase *tc = tcase_create("fields");
  tcase_add_test(tc, test_every_field_has_a_rule);
  tcase_add_test(tc, test_document_agrees);
  tcase_add_test(tc, test_refused_fields);
  tcase_add_test(tc, test_codec_pointers);
  tcase_add_test(tc, test_transaction_pointer_read);
  tcase_add_test(tc, test_removed_fragment);
  tcase_add_test(tc, test_files_named);
  tcase_add_test(tc, test_winner_transaction);
  tcase_add_test(tc, test_fragment_reuse_index);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(fields_suite)
