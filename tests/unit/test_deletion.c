/* test_deletion.c: reading Lance deletion files (lib/lance/table/deletion.c).
 *
 * Fixtures in tests/fixtures/deletion were written by LanceDB 0.39.0 (Lance
 * 12.0.0) with the oracle (make_tables.mjs --tables plain --fragments 1):
 *   mod7eq3_1000rows_143.arrow       --rows 1000  --plain-delete "id % 7 = 3"
 *                                    (143 rows; validity stored raw)
 *   mod3eq1_lt2490_3000rows_830.arrow --rows 3000 --plain-delete "id % 3 = 1 AND id < 2490"
 *                                    (830 rows; validity zstd-compressed)
 *   even_12000rows_6000.bin          --rows 12000 --plain-delete "id % 2 = 0"
 *   range_70000rows_6002.bin         --rows 70000 --plain-delete
 *                                    "(id >= 1000 AND id < 7000) OR id = 65540 OR id = 69999"
 * num_deleted_rows and physical_rows come from the manifests. raw_*.arrow are
 * uncompressed IPC files written by apache-arrow 18 (JS) with values
 * [9,2,7,0,4] (raw_dup: [9,2,7,2,4]) to cover schema and duplicate checks.
 * CRoaring serves as an independent Roaring encoder/decoder. */
#include <roaring/roaring.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lance/table/deletion.h"
#include "testutil.h"
#include "util/bytes.h"
#include "util/fsutil.h"

static char *out_path(const char *dir, int i) {
  char *p = bri_strdupf("%s/0-1-%d.bin", dir, i);
  ck_assert_ptr_nonnull(p);
  return p;
}

static uint32_t *read_ok(const char *name, int type, uint64_t ndel, uint64_t phys, size_t *n) {
  char *p = bri_fixture(name);
  uint32_t *v = NULL;
  bri_error err = {0};
  int rc = bri_deletion_read(NULL, p, type, ndel, phys, &v, n, &err);
  ck_assert_msg(rc == 0, "%s: %s", name, err.msg);
  free(p);
  return v;
}

/* Parses bytes expecting failure with code; the message must name path. */
static void expect_fail(const uint8_t *b, size_t len, int type, uint64_t ndel, uint64_t phys,
                        int code, const char *needle) {
  uint32_t *v = (uint32_t *)1;
  size_t n = 99;
  bri_error err = {0};
  int rc = bri_deletion_parse(b, len, "/x/_deletions/0-1-2.del", type, ndel, phys, &v, &n, &err);
  ck_assert_msg(rc == code, "expected %d got %d (%s)", code, rc, err.msg);
  ck_assert_ptr_null(v);
  ck_assert_uint_eq(n, 0);
  ck_assert_msg(strstr(err.msg, "/x/_deletions/0-1-2.del") != NULL, "no path in: %s", err.msg);
  if (needle) ck_assert_msg(strstr(err.msg, needle) != NULL, "'%s' not in: %s", needle, err.msg);
}

START_TEST(arrow_143_values_match_predicate) {
  size_t n;
  uint32_t *v = read_ok("deletion/mod7eq3_1000rows_143.arrow", BRI_DELETION_ARROW, 143, 1000, &n);
  ck_assert_uint_eq(n, 143);
  size_t k = 0;
  for (uint32_t id = 0; id < 1000; id++)
    if (id % 7 == 3) {
      ck_assert_uint_lt(k, n);
      ck_assert_uint_eq(v[k], id);
      k++;
    }
  ck_assert_uint_eq(k, n);
  free(v);
}
END_TEST

START_TEST(arrow_830_compressed_validity) {
  size_t n;
  uint32_t *v =
      read_ok("deletion/mod3eq1_lt2490_3000rows_830.arrow", BRI_DELETION_ARROW, 830, 3000, &n);
  ck_assert_uint_eq(n, 830);
  size_t k = 0;
  for (uint32_t id = 0; id < 3000; id++)
    if (id % 3 == 1 && id < 2490) ck_assert_uint_eq(v[k++], id);
  ck_assert_uint_eq(k, 830);
  free(v);
  /* 0 = count not recorded in the manifest: no cross-check. */
  v = read_ok("deletion/mod3eq1_lt2490_3000rows_830.arrow", BRI_DELETION_ARROW, 0, 3000, &n);
  ck_assert_uint_eq(n, 830);
  free(v);
}
END_TEST

START_TEST(bin_even_rows) {
  size_t n;
  uint32_t *v = read_ok("deletion/even_12000rows_6000.bin", BRI_DELETION_BITMAP, 6000, 12000, &n);
  ck_assert_uint_eq(n, 6000);
  for (size_t i = 0; i < n; i++) ck_assert_uint_eq(v[i], 2 * i);
  free(v);
}
END_TEST

START_TEST(bin_two_containers) {
  size_t n;
  uint32_t *v = read_ok("deletion/range_70000rows_6002.bin", BRI_DELETION_BITMAP, 6002, 70000, &n);
  ck_assert_uint_eq(n, 6002);
  for (size_t i = 0; i < 6000; i++) ck_assert_uint_eq(v[i], 1000 + i);
  ck_assert_uint_eq(v[6000], 65540);
  ck_assert_uint_eq(v[6001], 69999);
  free(v);
}
END_TEST

START_TEST(arrow_uncompressed_and_schema_checks) {
  size_t n;
  uint32_t *v = read_ok("deletion/raw_ok_5.arrow", BRI_DELETION_ARROW, 5, 10, &n);
  ck_assert_uint_eq(n, 5);
  static const uint32_t want[] = {0, 2, 4, 7, 9};
  for (size_t i = 0; i < 5; i++) ck_assert_uint_eq(v[i], want[i]);
  free(v);
  struct {
    const char *name;
    int code;
    const char *needle;
  } bad[] = {
      {"deletion/raw_dup.arrow", BRI_ECORRUPT, "row offset 2 is listed twice"},
      {"deletion/raw_nullable.arrow", BRI_ECORRUPT, "nullable"},
      {"deletion/raw_int32.arrow", BRI_ECORRUPT, "expected uint32"},
      {"deletion/raw_wrongname.arrow", BRI_ECORRUPT, "expected \"row_id\""},
      {"deletion/raw_twobatches.arrow", BRI_ECORRUPT, "2 record batches"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char *p = bri_fixture(bad[i].name);
    bri_error err = {0};
    v = NULL;
    int rc = bri_deletion_read(NULL, p, BRI_DELETION_ARROW, 0, 10, &v, &n, &err);
    ck_assert_msg(rc == bad[i].code, "%s: rc %d (%s)", bad[i].name, rc, err.msg);
    ck_assert_ptr_null(v);
    ck_assert_msg(strstr(err.msg, p) && strstr(err.msg, bad[i].needle), "%s: %s", bad[i].name,
                  err.msg);
    free(p);
  }
}
END_TEST

START_TEST(count_and_range_mismatch) {
  char *p = bri_fixture("deletion/mod7eq3_1000rows_143.arrow");
  size_t len;
  uint8_t *b = bri_slurp(p, &len);
  expect_fail(b, len, BRI_DELETION_ARROW, 142, 1000, BRI_ECORRUPT, "the manifest records 142");
  expect_fail(b, len, BRI_DELETION_ARROW, 143, 997, BRI_ECORRUPT, "997 physical rows");
  expect_fail(b, len, BRI_DELETION_ARROW, 143, 100, BRI_ECORRUPT, "100 physical rows");
  expect_fail(b, len, BRI_DELETION_BITMAP, 143, 1000, BRI_ECORRUPT, "cookie");
  expect_fail(b, len, 7, 143, 1000, BRI_EUNSUPPORTED, "type 7");
  /* The file path is named by the file reader too. */
  bri_error err = {0};
  uint32_t *v;
  size_t n;
  ck_assert_int_eq(bri_deletion_read(NULL, p, BRI_DELETION_ARROW, 144, 1000, &v, &n, &err), BRI_ECORRUPT);
  ck_assert_ptr_nonnull(strstr(err.msg, p));
  free(b);
  free(p);

  p = bri_fixture("deletion/range_70000rows_6002.bin");
  b = bri_slurp(p, &len);
  expect_fail(b, len, BRI_DELETION_BITMAP, 6001, 70000, BRI_ECORRUPT, "the manifest records 6001");
  /* Container key 1 starts at 65536: not below 65536 physical rows. */
  expect_fail(b, len, BRI_DELETION_BITMAP, 6002, 65536, BRI_ECORRUPT, "key 1");
  /* 69999 is the largest offset: 69999 physical rows exclude it. */
  expect_fail(b, len, BRI_DELETION_BITMAP, 6002, 69999, BRI_ECORRUPT, "69999");
  expect_fail(b, len, BRI_DELETION_ARROW, 6002, 70000, BRI_ECORRUPT, "ARROW1");
  free(b);
  free(p);
}
END_TEST

START_TEST(arrow_other_codecs_refused) {
  /* Byte 351 of the 143-row file is BodyCompression.codec (1 = ZSTD), found
   * by walking the record batch flatbuffer. 0 = LZ4_FRAME: valid Arrow that
   * Lance never writes. */
  char *p = bri_fixture("deletion/mod7eq3_1000rows_143.arrow");
  size_t len;
  uint8_t *b = bri_slurp(p, &len);
  ck_assert_uint_eq(b[351], 1);
  b[351] = 0;
  expect_fail(b, len, BRI_DELETION_ARROW, 143, 1000, BRI_EUNSUPPORTED, "codec 0");
  b[351] = 2;
  expect_fail(b, len, BRI_DELETION_ARROW, 143, 1000, BRI_EUNSUPPORTED, "codec 2");
  free(b);
  free(p);
}
END_TEST

static void truncations(const char *name, int type, uint64_t ndel, uint64_t phys) {
  char *p = bri_fixture(name);
  size_t len;
  uint8_t *b = bri_slurp(p, &len);
  for (size_t l = 0; l < len; l++) {
    /* A fresh copy of exactly l bytes so ASan sees any read past the end. */
    uint8_t *c = malloc(l ? l : 1);
    memcpy(c, b, l);
    expect_fail(c, l, type, ndel, phys, BRI_ECORRUPT, NULL);
    free(c);
  }
  free(b);
  free(p);
}

START_TEST(truncated_files) {
  truncations("deletion/mod7eq3_1000rows_143.arrow", BRI_DELETION_ARROW, 143, 1000);
  truncations("deletion/raw_ok_5.arrow", BRI_DELETION_ARROW, 5, 10);
  truncations("deletion/range_70000rows_6002.bin", BRI_DELETION_BITMAP, 6002, 70000);
}
END_TEST

START_TEST(arrow_byte_flips_never_crash) {
  /* Every single-byte corruption of a real file parses or fails cleanly;
   * a success must still satisfy the contract. */
  char *p = bri_fixture("deletion/mod7eq3_1000rows_143.arrow");
  size_t len;
  uint8_t *b = bri_slurp(p, &len);
  for (size_t i = 0; i < len; i++) {
    for (int x = 1; x < 256; x <<= 2) {
      uint8_t *c = malloc(len);
      memcpy(c, b, len);
      c[i] ^= (uint8_t)x;
      uint32_t *v = NULL;
      size_t n = 0;
      bri_error err = {0};
      int rc = bri_deletion_parse(c, len, "f.arrow", BRI_DELETION_ARROW, 143, 1000, &v, &n, &err);
      if (rc == 0) {
        ck_assert_uint_eq(n, 143);
        for (size_t k = 1; k < n; k++) ck_assert_uint_lt(v[k - 1], v[k]);
        ck_assert_uint_lt(v[n - 1], 1000);
      } else {
        ck_assert_ptr_nonnull(strstr(err.msg, "f.arrow"));
      }
      free(v);
      free(c);
    }
  }
  free(b);
  free(p);
}
END_TEST

START_TEST(roaring_hostile_headers) {
  uint8_t b[64];
  memset(b, 0, sizeof b);
  /* Wrong cookie. */
  bri_put_le32(b, 12345);
  expect_fail(b, 16, BRI_DELETION_BITMAP, 0, 100, BRI_ECORRUPT, "cookie 12345");
  /* 12346 with a huge container count. */
  bri_put_le32(b, 12346);
  bri_put_le32(b + 4, 0xFFFFFFFFu);
  expect_fail(b, 16, BRI_DELETION_BITMAP, 0, 100, BRI_ECORRUPT, "4294967295 containers");
  bri_put_le32(b + 4, 65536);
  expect_fail(b, 64, BRI_DELETION_BITMAP, 0, 1u << 31, BRI_ECORRUPT, "65536 containers");
  /* 12347 with 65536 containers in 16 bytes. */
  bri_put_le32(b, 12347u | 0xFFFFu << 16);
  expect_fail(b, 16, BRI_DELETION_BITMAP, 0, 1u << 31, BRI_ECORRUPT, "65536 containers");
  /* A run container claiming the whole key range: cardinality check against
   * the manifest comes before any allocation. */
  uint8_t r[] = {0x3b, 0x30, 0, 0, 1, 0, 0, 0xff, 0xff, 1, 0, 0, 0, 0xff, 0xff};
  expect_fail(r, sizeof r, BRI_DELETION_BITMAP, 10, 1u << 20, BRI_ECORRUPT, "records 10");
  expect_fail(r, sizeof r, BRI_DELETION_BITMAP, 0, 1000, BRI_ECORRUPT, "1000 physical rows");
  /* Overlapping runs. */
  uint8_t ov[] = {0x3b, 0x30, 0, 0, 1, 0, 0, 9, 0, 2, 0, 0, 0, 4, 0, 3, 0, 4, 0};
  expect_fail(ov, sizeof ov, BRI_DELETION_BITMAP, 10, 100, BRI_ECORRUPT, "overlaps");
  /* Array container not increasing: {5, 5}. */
  uint8_t ar[] = {0x3a, 0x30, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 16, 0, 0, 0, 5, 0, 5, 0};
  expect_fail(ar, sizeof ar, BRI_DELETION_BITMAP, 2, 100, BRI_ECORRUPT, "not strictly increasing");
  ar[18] = 6;
  uint32_t *v;
  size_t n;
  bri_error err = {0};
  ck_assert_int_eq(bri_deletion_parse(ar, sizeof ar, "a.bin", 1, 2, 100, &v, &n, &err), 0);
  ck_assert_uint_eq(n, 2);
  ck_assert_uint_eq(v[0], 5);
  ck_assert_uint_eq(v[1], 6);
  free(v);
  /* Wrong declared offset; trailing bytes. */
  ar[12] = 17;
  expect_fail(ar, sizeof ar, BRI_DELETION_BITMAP, 2, 100, BRI_ECORRUPT, "declared at offset 17");
  ar[12] = 16;
  uint8_t tr[sizeof ar + 1];
  memcpy(tr, ar, sizeof ar);
  tr[sizeof ar] = 0;
  expect_fail(tr, sizeof tr, BRI_DELETION_BITMAP, 2, 100, BRI_ECORRUPT, "follow");
  /* Keys not increasing: two containers with key 0. */
  uint8_t kk[] = {0x3a, 0x30, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                  24, 0, 0, 0, 26, 0, 0, 0, 1, 0, 2, 0};
  expect_fail(kk, sizeof kk, BRI_DELETION_BITMAP, 2, 100, BRI_ECORRUPT, "keys must increase");
  /* Bitmap container whose popcount disagrees with its cardinality. */
  char *p = bri_fixture("deletion/even_12000rows_6000.bin");
  size_t len;
  uint8_t *bm = bri_slurp(p, &len);
  bm[16] ^= 0x02; /* add row 1 */
  expect_fail(bm, len, BRI_DELETION_BITMAP, 6000, 12000, BRI_ECORRUPT, "6001 bits set");
  free(bm);
  free(p);
}
END_TEST

/* Random bitmaps serialized by CRoaring (with run containers after
 * run_optimize, cookie 12347) decode to exactly CRoaring's values. */
START_TEST(croaring_cross_check) {
  uint64_t s = 0x9E3779B97F4A7C15ull;
  for (int round = 0; round < 60; round++) {
    roaring_bitmap_t *r = roaring_bitmap_create();
    int kind = round % 4;
    for (int i = 0; i < 40; i++) {
      s ^= s << 13; s ^= s >> 7; s ^= s << 17;
      uint32_t x = (uint32_t)(s % 300000);
      if (kind == 0) roaring_bitmap_add(r, x);
      else roaring_bitmap_add_range(r, x, x + 1 + (s >> 40) % (kind == 1 ? 50 : 9000));
    }
    if (round & 1) roaring_bitmap_run_optimize(r);
    size_t sz = roaring_bitmap_portable_size_in_bytes(r);
    char *buf = malloc(sz);
    ck_assert_uint_eq(roaring_bitmap_portable_serialize(r, buf), sz);
    uint64_t card = roaring_bitmap_get_cardinality(r);
    uint32_t *want = malloc(card * sizeof *want);
    roaring_bitmap_to_uint32_array(r, want);
    uint32_t *v;
    size_t n;
    bri_error err = {0};
    int rc = bri_deletion_parse((const uint8_t *)buf, sz, "cr.bin", BRI_DELETION_BITMAP, card,
                                400000, &v, &n, &err);
    ck_assert_msg(rc == 0, "round %d: %s", round, err.msg);
    ck_assert_uint_eq(n, card);
    ck_assert_int_eq(memcmp(v, want, card * sizeof *v), 0);
    /* Our encoder's bytes are read back by CRoaring and by us. */
    uint8_t *enc;
    size_t enc_len;
    ck_assert_int_eq(bri_deletion_encode_bin(v, n, &enc, &enc_len, &err), 0);
    ck_assert_uint_eq(bri_le32(enc), 12346);
    roaring_bitmap_t *back = roaring_bitmap_portable_deserialize_safe((const char *)enc, enc_len);
    ck_assert_ptr_nonnull(back);
    ck_assert(roaring_bitmap_equals(back, r));
    roaring_bitmap_free(back);
    free(enc);
    free(v);
    free(want);
    free(buf);
    roaring_bitmap_free(r);
  }
}
END_TEST

START_TEST(writer_round_trip_and_lance_bytes) {
  char *dir = bri_tmpdir();
  /* Re-encoding Lance's own bitmaps reproduces their bytes exactly. */
  const char *names[] = {"deletion/even_12000rows_6000.bin", "deletion/range_70000rows_6002.bin"};
  uint64_t ndel[] = {6000, 6002}, phys[] = {12000, 70000};
  for (int i = 0; i < 2; i++) {
    size_t n, len;
    uint32_t *v = read_ok(names[i], BRI_DELETION_BITMAP, ndel[i], phys[i], &n);
    char *p = bri_fixture(names[i]);
    uint8_t *orig = bri_slurp(p, &len);
    char *out = out_path(dir, i);
    bri_error err = {0};
    ck_assert_msg(bri_deletion_write_bin(NULL, out, v, n, &err) == 0, "%s", err.msg);
    size_t wlen;
    uint8_t *w = bri_slurp(out, &wlen);
    ck_assert_uint_eq(wlen, len);
    ck_assert_int_eq(memcmp(w, orig, len), 0);
    /* Never overwrite: a second write fails and leaves the file intact. */
    ck_assert_int_eq(bri_deletion_write_bin(NULL, out, v, 1, &err), BRI_ETAKEN);
    ck_assert_ptr_nonnull(strstr(err.msg, out));
    free(w);
    w = bri_slurp(out, &wlen);
    ck_assert_uint_eq(wlen, len);
    free(w);
    free(out);
    free(orig);
    free(p);
    free(v);
  }
  /* Round trip of a mix of array and bitmap containers. */
  size_t n = 0;
  uint32_t *v = malloc(20000 * sizeof *v);
  for (uint32_t x = 5; x < 200000 && n < 20000; x += (x < 70000 ? 7 : 3)) v[n++] = x;
  char *out = out_path(dir, 9);
  bri_error err = {0};
  ck_assert_int_eq(bri_deletion_write_bin(NULL, out, v, n, &err), 0);
  uint32_t *back;
  size_t bn;
  ck_assert_msg(bri_deletion_read(NULL, out, BRI_DELETION_BITMAP, n, 200000, &back, &bn, &err) == 0,
                "%s", err.msg);
  ck_assert_uint_eq(bn, n);
  ck_assert_int_eq(memcmp(back, v, n * sizeof *v), 0);
  free(back);
  /* Unsorted, duplicate or empty input is refused and creates nothing. */
  uint32_t bad[] = {3, 3};
  char *out2 = out_path(dir, 10);
  ck_assert_int_eq(bri_deletion_write_bin(NULL, out2, bad, 2, &err), BRI_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, out2));
  ck_assert_int_eq(bri_deletion_write_bin(NULL, out2, bad, 0, &err), BRI_EINVAL);
  ck_assert_int_ne(access(out2, F_OK), 0);
  free(out2);
  free(out);
  free(v);
  bri_rmtree(dir);
  free(dir);
}
END_TEST

START_TEST(file_names) {
  char *s = bri_deletion_file_name(0, 4, 14651164030590483025ull, BRI_DELETION_ARROW);
  ck_assert_str_eq(s, "0-4-14651164030590483025.arrow");
  free(s);
  s = bri_deletion_file_name(12, 1, 7, BRI_DELETION_BITMAP);
  ck_assert_str_eq(s, "12-1-7.bin");
  free(s);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("deletion");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, arrow_143_values_match_predicate);
  tcase_add_test(tc, arrow_830_compressed_validity);
  tcase_add_test(tc, bin_even_rows);
  tcase_add_test(tc, bin_two_containers);
  tcase_add_test(tc, arrow_uncompressed_and_schema_checks);
  tcase_add_test(tc, count_and_range_mismatch);
  tcase_add_test(tc, arrow_other_codecs_refused);
  tcase_add_test(tc, truncated_files);
  tcase_add_test(tc, arrow_byte_flips_never_crash);
  tcase_add_test(tc, roaring_hostile_headers);
  tcase_add_test(tc, croaring_cross_check);
  tcase_add_test(tc, writer_round_trip_and_lance_bytes);
  tcase_add_test(tc, file_names);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(suite)
