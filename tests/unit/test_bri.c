/* test_bri.c: the Blob Reuse Index in DataFile field 8: wire-type dispatch
 * (a varint field 8 is someone else's and is kept), storing and reading a
 * BRI, and refusal of every invalid BRI with the rule of docs/format/bri.md 3
 * named in the message (the bad-BRI corpus). */
#include <stdlib.h>
#include <string.h>

#include "lance/table/bri.h"
#include "lance/table/flags.h"
#include "lance/table/manifest.h"
#include "lance/table/table.h"
#include "testutil.h"
#include "util/bytes.h"

/* Stack-built protobuf values: a sequence of one segment. */
typedef struct seq_buf {
  Lance__Table__RowIdSequence seq;
  Lance__Table__U64Segment seg, *segp;
  Lance__Table__U64Segment__Range range;
  Lance__Table__EncodedU64Array arr;
  Lance__Table__EncodedU64Array__U64Array u64;
  uint8_t bytes[64];
} seq_buf;

static Lance__Table__RowIdSequence *range_seq(seq_buf *b, uint64_t start, uint64_t end) {
  lance__table__row_id_sequence__init(&b->seq);
  lance__table__u64_segment__init(&b->seg);
  lance__table__u64_segment__range__init(&b->range);
  b->range.has_start = b->range.has_end = 1;
  b->range.start = start, b->range.end = end;
  b->seg.segment_case = LANCE__TABLE__U64_SEGMENT__SEGMENT_RANGE;
  b->seg.range = &b->range;
  b->segp = &b->seg;
  b->seq.n_segments = 1;
  b->seq.segments = &b->segp;
  return &b->seq;
}

static Lance__Table__EncodedU64Array *u64_array(seq_buf *b, const uint64_t *v, size_t n) {
  lance__table__encoded_u64_array__init(&b->arr);
  lance__table__encoded_u64_array__u64_array__init(&b->u64);
  for (size_t i = 0; i < n; i++) bri_put_le64(b->bytes + 8 * i, v[i]);
  b->u64.has_values = 1;
  b->u64.values.data = b->bytes;
  b->u64.values.len = 8 * n;
  b->arr.array_case = LANCE__TABLE__ENCODED_U64_ARRAY__ARRAY_U64_ARRAY;
  b->arr.u64_array = &b->u64;
  return &b->arr;
}

static Lance__Table__RowIdSequence *array_seq(seq_buf *b, const uint64_t *v, size_t n) {
  range_seq(b, 0, 0);
  b->seg.segment_case = LANCE__TABLE__U64_SEGMENT__SEGMENT_ARRAY;
  b->seg.array = u64_array(b, v, n);
  return &b->seq;
}

typedef struct src_buf {
  Lance__Table__BlobReuseSource src;
  seq_buf local, phys;
} src_buf;

/* A source mapping local ids [lo, lo+n) to physical ids starting at p0. */
static Lance__Table__BlobReuseSource *source(src_buf *s, const char *dir, uint64_t lo, size_t n,
                                             uint64_t p0) {
  lance__table__blob_reuse_source__init(&s->src);
  s->src.blob_dir = (char *)dir;
  s->src.local_ids = range_seq(&s->local, lo, lo + n);
  uint64_t v[8];
  for (size_t i = 0; i < n; i++) v[i] = p0 + i;
  s->src.physical_ids = u64_array(&s->phys, v, n);
  return &s->src;
}

static bri_manifest *load_plain(void) {
  char *root = bri_fixture("tables/plain.lance");
  bri_table *t;
  bri_manifest *m;
  bri_error err;
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  ck_assert_int_eq(bri_table_load(t, 0, &m, &err), 0);
  bri_table_close(t);
  free(root);
  return m;
}

/* Attaches sources to fragment 0's data file, sets or clears the flag, and
 * parses the result; returns the parse code with err filled. */
static int try_bri(Lance__Table__BlobReuseSource **srcs, size_t n, int flag, bri_error *err) {
  bri_manifest *m = load_plain();
  Lance__Table__BlobReuseIndex b;
  lance__table__blob_reuse_index__init(&b);
  b.sources = srcs;
  b.n_sources = n;
  ck_assert_int_eq(bri_datafile_set_bri(m->pb->fragments[0]->files[0], &b, err), 0);
  if (flag) {
    m->pb->reader_feature_flags |= BRI_FLAG_BLOB_REUSE_INDEX;
    m->pb->writer_feature_flags |= BRI_FLAG_BLOB_REUSE_INDEX;
  }
  uint8_t *buf;
  size_t len;
  ck_assert_int_eq(bri_manifest_serialize(m->pb, m->txn, m->indices, &buf, &len, err), 0);
  bri_manifest_free(m);
  bri_manifest *m2 = NULL;
  int rc = bri_manifest_parse(buf, len, "/t/_versions/bri.manifest", &m2, err);
  if (rc == 0) {
    Lance__Table__BlobReuseIndex *got;
    bri_error e2;
    ck_assert_int_eq(bri_datafile_get_bri(m2->pb->fragments[0]->files[0], "x", &got, &e2), 1);
    ck_assert_uint_eq(got->n_sources, n);
    ck_assert_str_eq(got->sources[0]->blob_dir, srcs[0]->blob_dir);
    lance__table__blob_reuse_index__free_unpacked(got, NULL);
    ck_assert_int_eq(bri_datafile_get_bri(m2->pb->fragments[1]->files[0], "x", &got, &e2), 0);
    ck_assert(bri_manifest_has_bri(m2->pb));
  }
  bri_manifest_free(m2);
  free(buf);
  return rc;
}

static void expect_rule(Lance__Table__BlobReuseSource **srcs, size_t n, int flag, const char *needle) {
  bri_error err = {0};
  int rc = try_bri(srcs, n, flag, &err);
  ck_assert_msg(rc == BRI_ECORRUPT, "expected refusal, got %d: %s", rc, err.msg);
  ck_assert_msg(strstr(err.msg, needle) != NULL, "'%s' not in: %s", needle, err.msg);
  ck_assert_msg(strstr(err.msg, "/t/_versions/bri.manifest") != NULL, "no file in %s", err.msg);
}

START_TEST(test_valid_bri_roundtrip) {
  src_buf a, b;
  Lance__Table__BlobReuseSource *s[] = {source(&a, "stem_a", 1, 3, 10), source(&b, "stem_b", 4, 2, 1)};
  bri_error err;
  ck_assert_msg(try_bri(s, 2, 1, &err) == 0, "%s", err.msg);
}
END_TEST

START_TEST(test_each_rule_refused) {
  src_buf a, b;
  Lance__Table__BlobReuseSource *one[] = {source(&a, "stem_a", 1, 3, 10)};
  expect_rule(one, 0, 1, "rule 1");                 /* no sources */
  expect_rule(one, 1, 0, "rule 8");                 /* BRI without the flag */
  Lance__Table__BlobReuseSource *dup[] = {source(&a, "same", 1, 2, 10), source(&b, "same", 5, 2, 20)};
  expect_rule(dup, 2, 1, "rule 2");                 /* same blob_dir twice on one base */
  source(&a, "stem_a", 1, 3, 10);
  a.src.has_base_id = 1, a.src.base_id = 9;
  expect_rule(one, 1, 1, "rule 3");                 /* unknown base */
  Lance__Table__BlobReuseSource *overlap[] = {source(&a, "x", 1, 3, 10), source(&b, "y", 3, 2, 20)};
  expect_rule(overlap, 2, 1, "rule 4");             /* local id 3 in two sources */
  uint64_t down[] = {5, 4};
  source(&a, "stem_a", 1, 2, 10);
  a.src.local_ids = array_seq(&a.local, down, 2);
  expect_rule(one, 1, 1, "rule 4");                 /* not increasing */
  source(&a, "stem_a", 1, 3, 10);
  a.src.physical_ids = u64_array(&a.phys, down, 2);
  expect_rule(one, 1, 1, "rule 5");                 /* 3 local ids, 2 physical */
  source(&a, "stem_a", 0, 2, 10);
  expect_rule(one, 1, 1, "rule 6");                 /* local id 0 */
  source(&a, "stem_a", 1, 2, 0);
  expect_rule(one, 1, 1, "rule 6");                 /* physical id 0 */
  source(&a, "stem_a", 1, 2, UINT32_MAX);
  expect_rule(one, 1, 1, "rule 6");                 /* physical id 2^32 */
  const char *bad_dirs[] = {"", ".", "..", "a/b", "../x", "a\\b"};
  for (size_t i = 0; i < sizeof bad_dirs / sizeof bad_dirs[0]; i++) {
    source(&a, bad_dirs[i], 1, 2, 10);
    expect_rule(one, 1, 1, "rule 7");
  }
}
END_TEST

/* A varint field 8 (the upstream file_metadata_size_bytes) is not a BRI and
 * survives re-encoding; a BRI whose blob_dir is given twice is ambiguous. */
START_TEST(test_wire_type_dispatch) {
  bri_manifest *m = load_plain();
  Lance__Table__DataFile *df = m->pb->fragments[0]->files[0];
  size_t len = lance__table__data_file__get_packed_size(df);
  uint8_t *buf = malloc(len + 16);
  lance__table__data_file__pack(df, buf);
  buf[len] = 0x40, buf[len + 1] = 0xd2, buf[len + 2] = 0x09; /* field 8 varint 1234 */
  Lance__Table__DataFile *v = lance__table__data_file__unpack(NULL, len + 3, buf);
  ck_assert_ptr_nonnull(v);
  Lance__Table__BlobReuseIndex *got;
  bri_error err;
  ck_assert_int_eq(bri_datafile_get_bri(v, "m", &got, &err), 0);
  ck_assert_ptr_null(got);
  uint8_t *again = malloc(len + 16);
  ck_assert_uint_eq(lance__table__data_file__pack(v, again), len + 3);
  ck_assert_mem_eq(again, buf, len + 3);
  lance__table__data_file__free_unpacked(v, NULL);
  /* field 8 length-delimited holding BlobReuseIndex{sources{blob_dir "a", blob_dir "b"}} */
  const uint8_t amb[] = {0x42, 0x08, 0x0a, 0x06, 0x12, 0x01, 'a', 0x12, 0x01, 'b'};
  memcpy(buf + len, amb, sizeof amb);
  v = lance__table__data_file__unpack(NULL, len + sizeof amb, buf);
  ck_assert_ptr_nonnull(v);
  ck_assert_int_eq(bri_datafile_get_bri(v, "m", &got, &err), BRI_ECORRUPT);
  ck_assert_msg(strstr(err.msg, "ambiguous") != NULL, "%s", err.msg);
  lance__table__data_file__free_unpacked(v, NULL);
  free(buf), free(again);
  bri_manifest_free(m);
}
END_TEST

static Suite *bri_suite(void) {
  Suite *s = suite_create("bri");
  TCase *tc = tcase_create("bri");
  tcase_add_test(tc, test_valid_bri_roundtrip);
  tcase_add_test(tc, test_each_rule_refused);
  tcase_add_test(tc, test_wire_type_dispatch);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(bri_suite)
