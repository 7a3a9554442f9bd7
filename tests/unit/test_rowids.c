/* test_rowids.c: RowIdSequence / EncodedU64Array decoding: every segment
 * kind, the LSB-first bitmap rule, absolute holes, the real stable row ids
 * of a Lance 12 table, and bounded refusal of hostile sequences. */
#include <stdlib.h>
#include <string.h>

#include "lance/table/rowids.h"
#include "lance/table/table.h"
#include "testutil.h"

static Lance__Table__RowIdSequence *one(Lance__Table__U64Segment *s) {
  static Lance__Table__RowIdSequence seq;
  static Lance__Table__U64Segment *segs[1];
  lance__table__row_id_sequence__init(&seq);
  segs[0] = s;
  seq.segments = segs;
  seq.n_segments = 1;
  return &seq;
}

static void expect(Lance__Table__RowIdSequence *seq, const uint64_t *want, size_t n) {
  uint64_t *v;
  size_t got;
  bri_error err;
  ck_assert_msg(bri_u64seq_decode(seq, 1000, &v, &got, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(got, n);
  for (size_t i = 0; i < n; i++) ck_assert_uint_eq(v[i], want[i]);
  free(v);
}

START_TEST(test_segment_kinds) {
  Lance__Table__U64Segment s = LANCE__TABLE__U64_SEGMENT__INIT;
  Lance__Table__U64Segment__RangeWithBitmap rb = LANCE__TABLE__U64_SEGMENT__RANGE_WITH_BITMAP__INIT;
  uint8_t bits[] = {0x6d, 0x01}; /* 0110 1101, then bit 8: 0,2,3,5,6,8 */
  rb.start = 100, rb.end = 110, rb.has_start = rb.has_end = 1;
  rb.bitmap.data = bits, rb.bitmap.len = 2, rb.has_bitmap = 1;
  s.segment_case = LANCE__TABLE__U64_SEGMENT__SEGMENT_RANGE_WITH_BITMAP;
  s.range_with_bitmap = &rb;
  const uint64_t w1[] = {100, 102, 103, 105, 106, 108};
  expect(one(&s), w1, 6);
  rb.bitmap.len = 1; /* too short for a range of 10 */
  uint64_t *v;
  size_t n;
  bri_error err;
  ck_assert_int_eq(bri_u64seq_decode(one(&s), 1000, &v, &n, &err), BRI_ECORRUPT);

  Lance__Table__U64Segment__RangeWithHoles rh = LANCE__TABLE__U64_SEGMENT__RANGE_WITH_HOLES__INIT;
  Lance__Table__EncodedU64Array holes = LANCE__TABLE__ENCODED_U64_ARRAY__INIT;
  Lance__Table__EncodedU64Array__U16Array h16 = LANCE__TABLE__ENCODED_U64_ARRAY__U16_ARRAY__INIT;
  uint8_t hoff[] = {1, 0, 3, 0}; /* base 10: holes 11 and 13 (absolute values) */
  h16.base_value = 10, h16.offsets.data = hoff, h16.offsets.len = 4;
  holes.array_case = LANCE__TABLE__ENCODED_U64_ARRAY__ARRAY_U16_ARRAY;
  holes.u16_array = &h16;
  rh.start = 10, rh.end = 15, rh.holes = &holes;
  s.segment_case = LANCE__TABLE__U64_SEGMENT__SEGMENT_RANGE_WITH_HOLES;
  s.range_with_holes = &rh;
  const uint64_t w2[] = {10, 12, 14};
  expect(one(&s), w2, 3);
  hoff[0] = 9; /* hole 19 lies outside [10,15) */
  ck_assert_int_eq(bri_u64seq_decode(one(&s), 1000, &v, &n, &err), BRI_ECORRUPT);

  Lance__Table__EncodedU64Array arr = LANCE__TABLE__ENCODED_U64_ARRAY__INIT;
  Lance__Table__EncodedU64Array__U32Array a32 = LANCE__TABLE__ENCODED_U64_ARRAY__U32_ARRAY__INIT;
  uint8_t off32[] = {5, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0};
  a32.base_value = 1000, a32.offsets.data = off32, a32.offsets.len = 12;
  arr.array_case = LANCE__TABLE__ENCODED_U64_ARRAY__ARRAY_U32_ARRAY;
  arr.u32_array = &a32;
  s.segment_case = LANCE__TABLE__U64_SEGMENT__SEGMENT_ARRAY;
  s.array = &arr;
  const uint64_t w3[] = {1005, 1001, 1000 + 65536};
  expect(one(&s), w3, 3);
  s.segment_case = LANCE__TABLE__U64_SEGMENT__SEGMENT_SORTED_ARRAY; /* 1005 > 1001: not sorted */
  s.sorted_array = &arr;
  ck_assert_int_eq(bri_u64seq_decode(one(&s), 1000, &v, &n, &err), BRI_ECORRUPT);
  a32.offsets.len = 11;
  ck_assert_int_eq(bri_u64seq_decode(one(&s), 1000, &v, &n, &err), BRI_ECORRUPT);
}
END_TEST

START_TEST(test_hostile_sizes_bounded) {
  Lance__Table__U64Segment s = LANCE__TABLE__U64_SEGMENT__INIT;
  Lance__Table__U64Segment__Range r = LANCE__TABLE__U64_SEGMENT__RANGE__INIT;
  r.start = 0, r.end = UINT64_MAX;
  s.segment_case = LANCE__TABLE__U64_SEGMENT__SEGMENT_RANGE;
  s.range = &r;
  uint64_t *v, c;
  size_t n;
  bri_error err;
  ck_assert_int_eq(bri_u64seq_count(one(&s), &c, &err), 0);
  ck_assert_uint_eq(c, UINT64_MAX);
  ck_assert_int_eq(bri_u64seq_decode(one(&s), 1 << 20, &v, &n, &err), BRI_ECORRUPT);
  ck_assert_msg(strstr(err.msg, "more than") != NULL, "%s", err.msg);
  r.start = 5, r.end = 4;
  ck_assert_int_eq(bri_u64seq_count(one(&s), &c, &err), BRI_ECORRUPT);
}
END_TEST

/* The stable-row-id fixture: each fragment's inline row ids are its rows. */
START_TEST(test_real_stable_row_ids) {
  char *root = bri_fixture("tables/stable.lance");
  bri_table *t;
  bri_manifest *m;
  bri_error err;
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  ck_assert_int_eq(bri_table_load(t, 0, &m, &err), 0);
  uint64_t next = 0;
  for (size_t i = 0; i < m->pb->n_fragments; i++) {
    Lance__Table__DataFragment *f = m->pb->fragments[i];
    ck_assert_int_eq(f->row_id_sequence_case, LANCE__TABLE__DATA_FRAGMENT__ROW_ID_SEQUENCE_INLINE_ROW_IDS);
    Lance__Table__RowIdSequence *seq;
    ck_assert_int_eq(bri_u64seq_unpack(f->inline_row_ids.data, f->inline_row_ids.len, &seq, &err), 0);
    uint64_t *v;
    size_t n;
    ck_assert_int_eq(bri_u64seq_decode(seq, f->physical_rows, &v, &n, &err), 0);
    ck_assert_uint_eq(n, f->physical_rows);
    for (size_t k = 0; k < n; k++) ck_assert_uint_eq(v[k], next + k);
    next += n;
    free(v);
    lance__table__row_id_sequence__free_unpacked(seq, NULL);
  }
  ck_assert_uint_eq(next, m->pb->next_row_id);
  bri_manifest_free(m);
  bri_table_close(t);
  free(root);
}
END_TEST

static void roundtrip(const uint64_t *v, size_t n, size_t want_segments) {
  uint8_t *buf;
  size_t len;
  bri_error err;
  ck_assert_int_eq(bri_u64seq_pack(v, n, &buf, &len, &err), 0);
  Lance__Table__RowIdSequence *seq;
  ck_assert_int_eq(bri_u64seq_unpack(buf, len, &seq, &err), 0);
  ck_assert_uint_eq(seq->n_segments, want_segments);
  uint64_t *got;
  size_t m;
  ck_assert_int_eq(bri_u64seq_decode(seq, n, &got, &m, &err), 0);
  ck_assert_uint_eq(m, n);
  for (size_t i = 0; i < n; i++) ck_assert_uint_eq(got[i], v[i]);
  free(got), free(buf);
  lance__table__row_id_sequence__free_unpacked(seq, NULL);
}

START_TEST(test_pack_sequences) {
  uint64_t v[3000];
  for (size_t i = 0; i < 3000; i++) v[i] = 100 + i + (i >= 1000 ? 7 : 0) + (i >= 2000 ? 1 : 0);
  roundtrip(v, 3000, 3);                          /* three runs: Range segments */
  for (size_t i = 0; i < 3000; i++) v[i] = 5 + 3 * i;
  roundtrip(v, 3000, 1);                          /* gaps everywhere: one sorted array */
  for (size_t i = 0; i < 3000; i++) v[i] = (i * 7919) % 3001 + ((uint64_t)1 << 40);
  roundtrip(v, 3000, 1);                          /* unsorted, wide: one array */
  roundtrip(v, 0, 0);
}
END_TEST

START_TEST(test_pack_versions) {
  uint64_t v[10] = {1, 1, 1, 2, 2, 5, 5, 5, 5, 1};
  uint8_t *buf;
  size_t len;
  bri_error err;
  ck_assert_int_eq(bri_versions_pack(v, 10, &buf, &len, &err), 0);
  uint64_t *got;
  ck_assert_int_eq(bri_versions_unpack(buf, len, 10, &got, &err), 0);
  for (size_t i = 0; i < 10; i++) ck_assert_uint_eq(got[i], v[i]);
  free(got);
  ck_assert_int_eq(bri_versions_unpack(buf, len, 11, &got, &err), BRI_ECORRUPT);
  ck_assert_int_eq(bri_versions_unpack(buf, len, 9, &got, &err), BRI_ECORRUPT);
  free(buf);
}
END_TEST

static Suite *rowids_suite(void) {
  Suite *s = suite_create("rowids");
  TCase *tc = tcase_create("rowids");
  tcase_add_test(tc, test_segment_kinds);
  tcase_add_test(tc, test_hostile_sizes_bounded);
  tcase_add_test(tc, test_real_stable_row_ids);
  tcase_add_test(tc, test_pack_sequences);
  tcase_add_test(tc, test_pack_versions);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(rowids_suite)
