/* test_rows.c: finding a row by offset, address, stable row id and key
 * (lib/lance/dataset/rows.h, lib/scan/key.h bri_key_find) and reading one
 * value of it (lib/scan/cell.h), on the LanceDB-written fixtures whose rows
 * tests/fixtures/tables/README.md describes:
 *   plain.lance  3 fragments x 100 rows, id 0..299 in order, rows with
 *                id % 7 == 3 or 110 <= id < 150 deleted;
 *   stable.lance stable row ids, 2 x 50 rows, id % 3 == 1 deleted;
 *   blobs.lance  Blob v2 payloads of 256 B (2 x 3 rows), 1 KiB (2 rows),
 *                4 KiB (1 row); row id 1 deleted.
 * The expected rows are computed here from those rules, not copied from a
 * run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lance/dataset/rows.h"
#include "scan/cell.h"
#include "scan/key.h"
#include "testutil.h"

typedef struct opened {
  bri_table *t;
  bri_manifest *m;
} opened;

static opened open_fixture(const char *name) {
  char rel[64];
  snprintf(rel, sizeof rel, "tables/%s", name);
  char *root = bri_fixture(rel);
  opened o = {0};
  bri_error err;
  ck_assert_msg(bri_table_open(root, &o.t, &err) == 0, "%s", err.msg);
  ck_assert_msg(bri_table_load(o.t, 0, &o.m, &err) == 0, "%s", err.msg);
  free(root);
  return o;
}

static void close_fixture(opened *o) {
  bri_manifest_free(o->m);
  bri_table_close(o->t);
}

/* The int64 column "id" of a found row. */
static int64_t id_of(const opened *o, bri_fragment_reader *rd, const bri_row *row) {
  struct ArrowArray a;
  struct ArrowSchema s;
  bri_error err;
  ck_assert_msg(bri_fragment_read_rows(rd, 0, row->index, 1, &a, &s, &err) == 0, "%s", err.msg);
  ck_assert_str_eq(s.format, "l");
  (void)o;
  int64_t v;
  memcpy(&v, (const uint8_t *)a.buffers[1] + 8 * a.offset, 8);
  a.release(&a);
  s.release(&s);
  return v;
}

static bool plain_deleted(int64_t id) { return id % 7 == 3 || (id >= 110 && id < 150); }

START_TEST(test_offsets_and_addresses) {
  opened o = open_fixture("plain.lance");
  bri_error err;
  bri_fragment_reader *rd;
  bri_row row;
  /* every offset names the id-th surviving row, in order */
  uint64_t off = 0;
  for (int64_t id = 0; id < 300; id++) {
    if (plain_deleted(id)) continue;
    ck_assert_msg(bri_row_find(o.t, o.m, BRI_ROW_BY_OFFSET, off, &row, &rd, &err) == 0, "offset %llu: %s",
                  (unsigned long long)off, err.msg);
    ck_assert_int_eq(id_of(&o, rd, &row), id);
    ck_assert_uint_eq(row.address, (uint64_t)(id / 100) << 32 | (uint64_t)(id % 100));
    bri_fragment_close(rd);
    /* the same row by its address, and by "row id" (no stable ids: the address) */
    for (int by = BRI_ROW_BY_ADDRESS; by <= BRI_ROW_BY_ID; by++) {
      bri_row again;
      ck_assert_msg(bri_row_find(o.t, o.m, (bri_row_by)by, row.address, &again, &rd, &err) == 0, "%s", err.msg);
      ck_assert_uint_eq(again.index, row.index);
      ck_assert_ptr_eq(again.fragment, row.fragment);
      bri_fragment_close(rd);
    }
    off++;
  }
  ck_assert_uint_eq(off, 222);
  /* past the end, a deleted row, a fragment that is not there */
  ck_assert_int_eq(bri_row_find(o.t, o.m, BRI_ROW_BY_OFFSET, 222, &row, &rd, &err), BRI_ENOTFOUND);
  ck_assert_ptr_null(rd);
  ck_assert_msg(strstr(err.msg, "row offset 222 does not exist: version 5 has 222 rows") != NULL, "%s", err.msg);
  ck_assert_int_eq(bri_row_find(o.t, o.m, BRI_ROW_BY_ADDRESS, 3, &row, &rd, &err), BRI_ENOTFOUND);
  ck_assert_msg(strstr(err.msg, "row address 3 (fragment 0, offset 3) is deleted") != NULL, "%s", err.msg);
  ck_assert_int_eq(bri_row_find(o.t, o.m, BRI_ROW_BY_ADDRESS, 100, &row, &rd, &err), BRI_ENOTFOUND);
  ck_assert_msg(strstr(err.msg, "does not exist") != NULL, "%s", err.msg);
  ck_assert_int_eq(bri_row_find(o.t, o.m, BRI_ROW_BY_ADDRESS, (uint64_t)7 << 32, &row, &rd, &err), BRI_ENOTFOUND);
  ck_assert_msg(strstr(err.msg, "has no fragment 7 (row addresses change when a table is compacted") != NULL, "%s",
                err.msg);
  close_fixture(&o);
}
END_TEST

START_TEST(test_stable_row_ids) {
  opened o = open_fixture("stable.lance");
  bri_error err;
  bri_fragment_reader *rd;
  bri_row row;
  /* rows got ids 0..99 as they were appended, like the id column */
  for (int64_t id = 0; id < 100; id++) {
    int rc = bri_row_find(o.t, o.m, BRI_ROW_BY_ID, (uint64_t)id, &row, &rd, &err);
    if (id % 3 == 1) {
      ck_assert_int_eq(rc, BRI_ENOTFOUND);
      ck_assert_msg(strstr(err.msg, "is deleted") != NULL, "%s", err.msg);
      continue;
    }
    ck_assert_msg(rc == 0, "row id %lld: %s", (long long)id, err.msg);
    ck_assert_int_eq(id_of(&o, rd, &row), id);
    bri_fragment_close(rd);
  }
  ck_assert_int_eq(bri_row_find(o.t, o.m, BRI_ROW_BY_ID, 100, &row, &rd, &err), BRI_ENOTFOUND);
  ck_assert_msg(strstr(err.msg, "has no row with row id 100") != NULL, "%s", err.msg);
  /* an address is not a row id here: fragment 1's first row is id 50 */
  ck_assert_int_eq(bri_row_find(o.t, o.m, BRI_ROW_BY_ADDRESS, (uint64_t)1 << 32, &row, &rd, &err), 0);
  ck_assert_int_eq(id_of(&o, rd, &row), 50);
  bri_fragment_close(rd);
  close_fixture(&o);
}
END_TEST

START_TEST(test_key_lookup) {
  opened o = open_fixture("plain.lance");
  bri_error err;
  bri_fragment_reader *rd;
  bri_row row;
  ck_assert_msg(bri_key_find(o.t, o.m, "id", "205", &row, &rd, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(row.address, (uint64_t)2 << 32 | 5);
  bri_fragment_close(rd);
  ck_assert_int_eq(bri_key_find(o.t, o.m, "id", "3", &row, &rd, &err), BRI_ENOTFOUND); /* deleted */
  ck_assert_ptr_null(rd);
  ck_assert_int_eq(bri_key_find(o.t, o.m, "id", "x", &row, &rd, &err), BRI_EINVAL);
  ck_assert_int_eq(bri_key_find(o.t, o.m, "nope", "1", &row, &rd, &err), BRI_ENOTFOUND);
  ck_assert_int_eq(bri_key_find(o.t, o.m, "vec", "1", &row, &rd, &err), BRI_EUNSUPPORTED);
  /* cat takes 5 values (red, green, blue, cyan, magenta) over 222 rows:
   * some value is shared, and a shared value names no row */
  int shared = 0;
  static const char *const cats[] = {"red", "green", "blue", "cyan", "magenta"};
  for (int i = 0; i < 5; i++) {
    int rc = bri_key_find(o.t, o.m, "cat", cats[i], &row, &rd, &err);
    ck_assert_ptr_null(rd);
    if (rc == BRI_EINVAL) {
      ck_assert_msg(strstr(err.msg, "name one by its offset") != NULL, "%s", err.msg);
      shared++;
    }
  }
  ck_assert_int_gt(shared, 0);
  close_fixture(&o);
}
END_TEST

typedef struct sink {
  size_t n;
  uint64_t fnv;
} sink;

static int count_chunk(void *ctx, const uint8_t *data, size_t len, bri_error *err) {
  (void)err;
  sink *s = ctx;
  s->n += len;
  s->fnv ^= bri_fnv1a(data, len) + s->n;
  return 0;
}

START_TEST(test_cell) {
  opened o = open_fixture("blobs.lance");
  bri_error err;
  bri_fragment_reader *rd;
  bri_row row;
  /* visible rows: 256 B x 5 (row id 1 deleted), 1 KiB x 2, 4 KiB x 1 */
  static const size_t sizes[] = {256, 256, 256, 256, 256, 1024, 1024, 4096};
  for (uint64_t off = 0; off < 8; off++) {
    ck_assert_int_eq(bri_row_find(o.t, o.m, BRI_ROW_BY_OFFSET, off, &row, &rd, &err), 0);
    sink by_offset = {0}, by_key = {0};
    ck_assert_msg(bri_cell_stream(o.t, o.m, rd, &row, "blob", count_chunk, &by_offset, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(by_offset.n, sizes[off]);
    char id[24];
    snprintf(id, sizeof id, "%lld", (long long)id_of(&o, rd, &row));
    bri_fragment_close(rd);
    ck_assert_int_eq(bri_key_find(o.t, o.m, "id", id, &row, &rd, &err), 0);
    ck_assert_int_eq(bri_cell_stream(o.t, o.m, rd, &row, "blob", count_chunk, &by_key, &err), 0);
    ck_assert_uint_eq(by_key.fnv, by_offset.fnv);
    /* a string column streams its raw value; an integer column is refused */
    sink label = {0};
    ck_assert_int_eq(bri_cell_stream(o.t, o.m, rd, &row, "label", count_chunk, &label, &err), 0);
    ck_assert_uint_gt(label.n, 0);
    ck_assert_int_eq(bri_cell_stream(o.t, o.m, rd, &row, "id", count_chunk, &label, &err), BRI_EUNSUPPORTED);
    ck_assert_int_eq(bri_cell_stream(o.t, o.m, rd, &row, "nope", count_chunk, &label, &err), BRI_ENOTFOUND);
    bri_fragment_close(rd);
  }
  close_fixture(&o);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("rows");
  TCase *tc = tcase_create("rows");
  tcase_add_test(tc, test_offsets_and_addresses);
  tcase_add_test(tc, test_stable_row_ids);
  tcase_add_test(tc, test_key_lookup);
  tcase_add_test(tc, test_cell);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(suite)
