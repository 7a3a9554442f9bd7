/* test_roaring_strict.c: the strict Roaring decoder (lance/table/roaring_strict.c).
 * Hostile 32-bit images, each refused with a message naming the bytes and
 * what is wrong: truncated at every length, keys out of order or twice,
 * cardinalities that lie (arrays, bitmaps, runs), arrays not sorted, runs
 * past 65535, overlapping or unsorted runs, runs with no run, declared
 * offsets that are not where containers start or lie past the end, trailing
 * bytes. Accepted: what CRoaring writes (arrays, bitmaps, runs, with and
 * without offsets), read back by bri_roaring_read to equal bitmaps and by
 * bri_roaring_to_array to the same values; Lance's own fragment bitmaps;
 * an index's fragment_bitmap named by file, index and field. Treemaps:
 * tests/unit/test_frag_reuse.c. */
#include <stdlib.h>
#include <string.h>

#include "lance/table/roaring_strict.h"
#include "testutil.h"
#include "util/bytes.h"

/* A small image builder: containers of kind 'a' (array), 'b' (bitmap) or
 * 'r' (runs, as start/length pairs), in the order given. */
typedef struct cont {
  uint16_t key;
  char kind;
  const uint16_t *v; /* values, or (start, length) pairs for runs */
  size_t n;          /* values, or runs */
} cont;

static size_t body_len(const cont *c) {
  return c->kind == 'a' ? 2 * c->n : c->kind == 'b' ? 8192 : 2 + 4 * c->n;
}

static uint32_t card_of(const cont *c) {
  if (c->kind != 'r') return (uint32_t)c->n;
  uint32_t s = 0;
  for (size_t j = 0; j < c->n; j++) s += c->v[2 * j + 1];
  return s;
}

/* Serializes cs; runs: cookie 12347 (offsets from 4 containers on). */
static uint8_t *image(const cont *cs, size_t n, bool runs, size_t *len) {
  bool offsets = !runs || n >= 4;
  size_t hdr = runs ? 4 + (n + 7) / 8 : 8;
  size_t pos = hdr + 4 * n + (offsets ? 4 * n : 0), total = pos;
  for (size_t i = 0; i < n; i++) total += body_len(&cs[i]);
  uint8_t *b = calloc(1, total);
  if (runs) {
    bri_put_le32(b, 12347u | (uint32_t)(n - 1) << 16);
    for (size_t i = 0; i < n; i++)
      if (cs[i].kind == 'r') b[4 + i / 8] |= (uint8_t)(1u << (i % 8));
  } else {
    bri_put_le32(b, 12346);
    bri_put_le32(b + 4, (uint32_t)n);
  }
  for (size_t i = 0; i < n; i++) {
    bri_put_le16(b + hdr + 4 * i, cs[i].key);
    bri_put_le16(b + hdr + 4 * i + 2, (uint16_t)(card_of(&cs[i]) - 1));
    if (offsets) bri_put_le32(b + hdr + 4 * n + 4 * i, (uint32_t)pos);
    uint8_t *p = b + pos;
    if (cs[i].kind == 'a') {
      for (size_t j = 0; j < cs[i].n; j++) bri_put_le16(p + 2 * j, cs[i].v[j]);
    } else if (cs[i].kind == 'b') {
      for (size_t j = 0; j < cs[i].n; j++) p[cs[i].v[j] / 8] |= (uint8_t)(1u << (cs[i].v[j] % 8));
    } else {
      bri_put_le16(p, (uint16_t)cs[i].n);
      for (size_t j = 0; j < cs[i].n; j++) {
        bri_put_le16(p + 2 + 4 * j, cs[i].v[2 * j]);
        bri_put_le16(p + 4 + 4 * j, (uint16_t)(cs[i].v[2 * j + 1] - 1));
      }
    }
    pos += body_len(&cs[i]);
  }
  *len = total;
  return b;
}

static void expect_refused(const uint8_t *b, size_t len, const char *needle) {
  /* a copy of exactly len bytes, so ASan sees any read past the end */
  uint8_t *c = malloc(len ? len : 1);
  memcpy(c, b, len);
  bri_roaring_info info;
  bri_error err = {0};
  int rc = bri_roaring_check(c, len, "t.bin", false, &info, &err);
  ck_assert_msg(rc == BRI_ECORRUPT, "accepted (%zu bytes), wanted \"%s\"", len, needle ? needle : "");
  ck_assert_msg(!strncmp(err.msg, "t.bin: ", 7), "the bytes are not named: %s", err.msg);
  if (needle) ck_assert_msg(strstr(err.msg, needle), "'%s' not in: %s", needle, err.msg);
  roaring_bitmap_t *r = (roaring_bitmap_t *)1;
  ck_assert_int_eq(bri_roaring_read(c, len, "t.bin", &r, &err), BRI_ECORRUPT);
  ck_assert_ptr_null(r);
  free(c);
}

static const uint16_t A3[] = {1, 5, 9}, BIG[] = {0, 100, 65535}, R2[] = {0, 10, 100, 5};

/* four containers (so 12347 carries offsets): array, runs, bitmap, array */
static uint8_t *mixed(size_t *len, uint16_t **bitvals) {
  uint16_t *bv = malloc(5000 * sizeof *bv);
  for (int i = 0; i < 5000; i++) bv[i] = (uint16_t)(i * 13);
  *bitvals = bv;
  cont cs[] = {{0, 'a', A3, 3}, {1, 'r', R2, 2}, {2, 'b', bv, 5000}, {9, 'a', BIG, 3}};
  return image(cs, 4, true, len);
}

START_TEST(test_accepts_what_croaring_writes) {
  uint64_t s = 0x243F6A8885A308D3ull;
  for (int round = 0; round < 40; round++) {
    roaring_bitmap_t *r = roaring_bitmap_create();
    for (int i = 0; i < 30; i++) {
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      uint32_t x = (uint32_t)(s % 600000);
      if (round % 3 == 0) roaring_bitmap_add(r, x);
      else roaring_bitmap_add_range(r, x, x + 1 + (s >> 40) % (round % 3 == 1 ? 40 : 7000));
    }
    if (round & 1) roaring_bitmap_run_optimize(r);
    size_t len = roaring_bitmap_portable_size_in_bytes(r);
    uint8_t *b = malloc(len);
    roaring_bitmap_portable_serialize(r, (char *)b);
    bri_roaring_info info;
    bri_error err;
    ck_assert_msg(bri_roaring_check(b, len, "c", false, &info, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(info.len, len);
    ck_assert_uint_eq(info.cardinality, roaring_bitmap_get_cardinality(r));
    ck_assert_uint_eq(info.max, roaring_bitmap_maximum(r));
    uint32_t *v = malloc(info.cardinality * sizeof *v), *w = malloc(info.cardinality * sizeof *w);
    bri_roaring_to_array(b, &info, v);
    roaring_bitmap_to_uint32_array(r, w);
    ck_assert_int_eq(memcmp(v, w, info.cardinality * sizeof *v), 0);
    roaring_bitmap_t *back;
    ck_assert_int_eq(bri_roaring_read(b, len, "c", &back, &err), 0);
    ck_assert(roaring_bitmap_equals(back, r));
    /* a prefix read leaves what follows to the caller */
    uint8_t *more = malloc(len + 3);
    memcpy(more, b, len);
    memset(more + len, 0xEE, 3);
    ck_assert_int_eq(bri_roaring_check(more, len + 3, "c", true, &info, &err), 0);
    ck_assert_uint_eq(info.len, len);
    free(more);
    roaring_bitmap_free(back);
    free(v);
    free(w);
    free(b);
    roaring_bitmap_free(r);
  }
}
END_TEST

START_TEST(test_lance_fragment_bitmaps) {
  /* as LanceDB 0.39 writes them: {0,1,2,3} as one run; {4} as an array;
   * nothing (an index over no fragment) */
  static const uint8_t runs[] = {0x3b, 0x30, 0, 0, 1, 0, 0, 3, 0, 1, 0, 0, 0, 3, 0};
  static const uint8_t four[] = {0x3a, 0x30, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 4, 0};
  static const uint8_t none[] = {0x3a, 0x30, 0, 0, 0, 0, 0, 0};
  roaring_bitmap_t *r;
  bri_error err;
  ck_assert_msg(bri_roaring_read(runs, sizeof runs, "m", &r, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(roaring_bitmap_get_cardinality(r), 4);
  ck_assert(roaring_bitmap_contains(r, 0) && roaring_bitmap_contains(r, 3));
  roaring_bitmap_free(r);
  ck_assert_int_eq(bri_roaring_read(four, sizeof four, "m", &r, &err), 0);
  ck_assert_uint_eq(roaring_bitmap_get_cardinality(r), 1);
  ck_assert(roaring_bitmap_contains(r, 4));
  roaring_bitmap_free(r);
  ck_assert_int_eq(bri_roaring_read(none, sizeof none, "m", &r, &err), 0);
  ck_assert(roaring_bitmap_is_empty(r));
  roaring_bitmap_free(r);
}
END_TEST

START_TEST(test_truncated) {
  size_t len;
  uint16_t *bv;
  uint8_t *b = mixed(&len, &bv);
  bri_roaring_info info;
  bri_error err;
  ck_assert_msg(bri_roaring_check(b, len, "t.bin", false, &info, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(info.cardinality, 3 + 15 + 5000 + 3);
  ck_assert_uint_eq(info.max, 9u << 16 | 65535);
  for (size_t cut = 0; cut < len; cut++) expect_refused(b, cut, NULL);
  expect_refused(b, 3, "too short for a Roaring bitmap cookie");
  expect_refused(b, len - 1, "Roaring array container 3 needs 6 bytes, 5 remain");
  expect_refused(b, 10, "need");
  /* trailing bytes */
  uint8_t *t = malloc(len + 1);
  memcpy(t, b, len);
  t[len] = 0;
  expect_refused(t, len + 1, "1 bytes follow the Roaring bitmap");
  free(t);
  free(b);
  free(bv);
}
END_TEST

START_TEST(test_keys_out_of_order) {
  cont down[] = {{3, 'a', A3, 3}, {2, 'a', A3, 3}};
  cont twice[] = {{2, 'a', A3, 3}, {2, 'a', BIG, 3}};
  size_t len;
  uint8_t *b = image(down, 2, false, &len);
  expect_refused(b, len, "Roaring container 1 has key 2 after key 3, keys must increase");
  free(b);
  b = image(twice, 2, true, &len);
  expect_refused(b, len, "has key 2 after key 2");
  free(b);
}
END_TEST

START_TEST(test_cardinalities_that_lie) {
  size_t len;
  uint16_t *bv;
  uint8_t *b = mixed(&len, &bv);
  /* the header (12347, 4 containers: cookie, 1 flag byte, 4 x 4 descriptive,
   * 4 x 4 offsets) starts its descriptions at 5 */
  enum { DESC = 5 };
  uint8_t *x = malloc(len);
  /* array container 0 claims 2 values: container 1 is then not where its
   * offset says (37 + 4) */
  memcpy(x, b, len);
  bri_put_le16(x + DESC + 2, 1);
  expect_refused(x, len, "Roaring container 1 is declared at offset 43 but starts at 41");
  /* ... or 4: its fourth value is container 1's first bytes */
  bri_put_le16(x + DESC + 2, 3);
  expect_refused(x, len, "Roaring array container 0 is not strictly increasing (2 after 9)");
  /* the run container claims 14 values, its runs hold 15 */
  memcpy(x, b, len);
  bri_put_le16(x + DESC + 4 + 2, 13);
  expect_refused(x, len, "holds more than the 14 values its header says");
  /* ... or 16 */
  bri_put_le16(x + DESC + 4 + 2, 15);
  expect_refused(x, len, "Roaring run container 1 holds 15 values, its header says 16");
  /* the bitmap container claims 5001 values, 5000 bits are set */
  memcpy(x, b, len);
  bri_put_le16(x + DESC + 8 + 2, 5000);
  expect_refused(x, len, "Roaring bitmap container 2 has 5000 bits set, its header says 5001");
  /* a lying bitmap claims few enough to be read as an array: the bytes
   * that follow do not line up */
  bri_put_le16(x + DESC + 8 + 2, 99);
  expect_refused(x, len, NULL);
  free(x);
  free(b);
  free(bv);
}
END_TEST

START_TEST(test_arrays_not_sorted) {
  static const uint16_t dup[] = {1, 5, 5}, down[] = {9, 5, 7};
  cont a[] = {{0, 'a', dup, 3}};
  size_t len;
  uint8_t *b = image(a, 1, false, &len);
  expect_refused(b, len, "Roaring array container 0 is not strictly increasing (5 after 5)");
  free(b);
  a[0].v = down;
  b = image(a, 1, false, &len);
  expect_refused(b, len, "(5 after 9)");
  free(b);
}
END_TEST

START_TEST(test_runs) {
  size_t len;
  /* past 65535: start 65530, length 10 */
  static const uint16_t past[] = {65530, 10};
  cont c[] = {{0, 'r', past, 1}};
  uint8_t *b = image(c, 1, true, &len);
  expect_refused(b, len, "Roaring run 0 of container 0 (start 65530, length 10) runs past 65535");
  free(b);
  /* overlapping: [0,9] then [5,8] */
  static const uint16_t over[] = {0, 10, 5, 4};
  c[0].v = over, c[0].n = 2;
  b = image(c, 1, true, &len);
  expect_refused(b, len, "starts at 5, which overlaps or precedes the run before it (ending at 9)");
  free(b);
  /* unsorted: [100,101] then [0,1] */
  static const uint16_t unsorted[] = {100, 2, 0, 2};
  c[0].v = unsorted;
  b = image(c, 1, true, &len);
  expect_refused(b, len, "starts at 0");
  free(b);
  /* adjacent runs are distinct runs: accepted */
  static const uint16_t adjacent[] = {0, 10, 10, 5};
  c[0].v = adjacent;
  b = image(c, 1, true, &len);
  bri_roaring_info info;
  bri_error err;
  ck_assert_int_eq(bri_roaring_check(b, len, "t.bin", false, &info, &err), 0);
  ck_assert_uint_eq(info.cardinality, 15);
  ck_assert_uint_eq(info.max, 14);
  /* no run at all */
  bri_put_le16(b + 9, 0);
  expect_refused(b, len, "claims 0 runs");
  free(b);
}
END_TEST

START_TEST(test_offsets) {
  size_t len;
  cont cs[] = {{0, 'a', A3, 3}, {1, 'a', BIG, 3}};
  uint8_t *b = image(cs, 2, false, &len);
  /* 12346: 8 + 2 x 4 descriptive, offsets at 16 and 20; containers at 24 and 30 */
  ck_assert_uint_eq(bri_le32(b + 20), 30);
  bri_put_le32(b + 20, 1u << 30);
  expect_refused(b, len, "Roaring container 1 is declared at offset 1073741824 but starts at 30");
  bri_put_le32(b + 20, 24);
  expect_refused(b, len, "declared at offset 24 but starts at 30");
  free(b);
  /* a container count no bytes can hold */
  uint8_t h[16] = {0x3a, 0x30, 0, 0, 1, 0, 1, 0};
  expect_refused(h, sizeof h, "claims 65537 containers, at most 65536 exist");
  bri_put_le32(h + 4, 5000);
  expect_refused(h, sizeof h, "Roaring header for 5000 containers needs 40000 bytes, only 8 remain");
  bri_put_le32(h, 12345);
  expect_refused(h, sizeof h, "Roaring cookie 12345");
}
END_TEST

START_TEST(test_index_bitmap_named) {
  static uint8_t junk[] = {0x3b, 0x30, 0, 0, 1, 0, 0, 3, 0, 1, 0, 0xFF, 0xFF, 3, 0};
  Lance__Table__IndexMetadata x = LANCE__TABLE__INDEX_METADATA__INIT;
  x.name = "num_idx";
  x.has_fragment_bitmap = 1;
  x.fragment_bitmap.data = junk, x.fragment_bitmap.len = sizeof junk;
  roaring_bitmap_t *r;
  bri_error err;
  ck_assert_int_eq(bri_index_bitmap_read(&x, "/t/_versions/9.manifest", &r, &err), BRI_ECORRUPT);
  ck_assert_msg(strstr(err.msg, "/t/_versions/9.manifest: index num_idx: fragment_bitmap: offset 11: "
                                "Roaring run 0 of container 0 (start 65535, length 4) runs past 65535"),
                "%s", err.msg);
  ck_assert_int_eq(bri_index_bitmap_read(&x, NULL, &r, &err), BRI_ECORRUPT);
  ck_assert_msg(!strncmp(err.msg, "index num_idx: fragment_bitmap: ", 32), "%s", err.msg);
  junk[11] = 0;
  ck_assert_int_eq(bri_index_bitmap_read(&x, "m", &r, &err), 0);
  ck_assert_uint_eq(roaring_bitmap_get_cardinality(r), 4);
  roaring_bitmap_free(r);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("roaring_strict");
  TCase *tc = tcase_create("decode");
  tcase_add_test(tc, test_accepts_what_croaring_writes);
  tcase_add_test(tc, test_lance_fragment_bitmaps);
  tcase_add_test(tc, test_truncated);
  tcase_add_test(tc, test_keys_out_of_order);
  tcase_add_test(tc, test_cardinalities_that_lie);
  tcase_add_test(tc, test_arrays_not_sorted);
  tcase_add_test(tc, test_runs);
  tcase_add_test(tc, test_offsets);
  tcase_add_test(tc, test_index_bitmap_named);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(suite)
