/* test_plan.c: compaction planning on synthetic manifests: Lance's candidate
 * rules and bin splitting, index boundaries with and without stable row ids
 * (coverage read through the fragment reuse index; types brid cannot carry
 * and HNSW indices over deleted rows hold fragments back), repack-driven
 * candidates, job budgets, and lance.compaction.* config keys. */
#include <roaring/roaring.h>
#include <stdlib.h>
#include <string.h>

#include "compact/plan.h"
#include "lance/table/flags.h"
#include "testutil.h"

#define MAXF 16
typedef struct fake {
  bri_manifest bm;
  Lance__Table__Manifest pb;
  Lance__Table__DataFragment frags[MAXF], *fp[MAXF];
  Lance__Table__DeletionFile dels[MAXF];
  Lance__Table__IndexSection sec;
  Lance__Table__IndexMetadata idx[3], *ip[3];
  Google__Protobuf__Any any[3];
  Lance__Table__Manifest__ConfigEntry cfg[2], *cp[2];
  char *bitmaps[3];
} fake;

/* rows[i] physical rows, deleted[i] deleted rows; ids = 10 + i. */
static void make(fake *f, size_t n, const uint64_t *rows, const uint64_t *deleted) {
  memset(f, 0, sizeof *f);
  lance__table__manifest__init(&f->pb);
  f->pb.version = 7;
  for (size_t i = 0; i < n; i++) {
    lance__table__data_fragment__init(&f->frags[i]);
    f->frags[i].id = 10 + i;
    f->frags[i].physical_rows = rows[i];
    if (deleted && deleted[i]) {
      lance__table__deletion_file__init(&f->dels[i]);
      f->dels[i].num_deleted_rows = deleted[i];
      f->frags[i].deletion_file = &f->dels[i];
    }
    f->fp[i] = &f->frags[i];
  }
  f->pb.fragments = f->fp;
  f->pb.n_fragments = n;
  f->bm.pb = &f->pb;
  f->bm.path = "/t/_versions/x.manifest";
}

/* An index covering fragments ids[0..n) whose details have type_url (NULL:
 * no details), built from dataset version `version`. */
static void add_index(fake *f, const uint32_t *ids, size_t n, const char *type_url, uint64_t version) {
  size_t k = f->sec.n_indices;
  lance__table__index_section__init(&f->sec);
  f->sec.n_indices = k + 1;
  lance__table__index_metadata__init(&f->idx[k]);
  roaring_bitmap_t *r = roaring_bitmap_of_ptr(n, ids);
  size_t len = roaring_bitmap_portable_size_in_bytes(r);
  f->bitmaps[k] = malloc(len);
  roaring_bitmap_portable_serialize(r, f->bitmaps[k]);
  roaring_bitmap_free(r);
  f->idx[k].has_fragment_bitmap = 1;
  f->idx[k].fragment_bitmap.data = (uint8_t *)f->bitmaps[k];
  f->idx[k].fragment_bitmap.len = len;
  f->idx[k].name = "idx";
  f->idx[k].dataset_version = version;
  if (type_url) {
    google__protobuf__any__init(&f->any[k]);
    f->any[k].type_url = (char *)type_url;
    f->idx[k].index_details = &f->any[k];
  }
  f->ip[k] = &f->idx[k];
  f->sec.indices = f->ip;
  f->bm.indices = &f->sec;
}

static void release(fake *f) {
  for (int k = 0; k < 3; k++) free(f->bitmaps[k]);
}

static bri_plan *plan(fake *f, const bri_compact_options *o, const bool *repack) {
  bri_plan *p;
  bri_error err;
  ck_assert_msg(bri_compact_plan(NULL, &f->bm, o, repack, &p, &err) == 0, "%s", err.msg);
  return p;
}

static void expect_bins(const bri_plan *p, size_t n, const size_t (*want)[2]) {
  ck_assert_uint_eq(p->n_bins, n);
  for (size_t k = 0; k < n; k++) {
    ck_assert_uint_eq(p->bins[k].first, want[k][0]);
    ck_assert_uint_eq(p->bins[k].count, want[k][1]);
  }
}

START_TEST(test_small_neighbours_merge_big_ones_split) {
  bri_compact_options o;
  bri_compact_options_default(&o);
  fake f;
  /* small, small, big (not a candidate), small (alone: dropped), big, small, small */
  const uint64_t rows[] = {100, 100, 2000000, 100, 2000000, 50, 60};
  make(&f, 7, rows, NULL);
  bri_plan *p = plan(&f, &o, NULL);
  const size_t want[][2] = {{0, 2}, {5, 2}};
  expect_bins(p, 2, want);
  ck_assert_uint_eq(p->bins[1].rows, 110);
  ck_assert_uint_eq(p->read_version, 7);
  bri_plan_free(p);
}
END_TEST

START_TEST(test_deletions_compact_alone) {
  bri_compact_options o;
  bri_compact_options_default(&o);
  fake f;
  const uint64_t rows[] = {2000000, 2000000, 2000000}, del[] = {300000, 100000, 0};
  make(&f, 3, rows, del); /* 15% deleted > 10%: alone; 5%: no */
  bri_plan *p = plan(&f, &o, NULL);
  const size_t want[][2] = {{0, 1}};
  expect_bins(p, 1, want);
  ck_assert_uint_eq(p->bins[0].deleted_rows, 300000);
  ck_assert_uint_eq(p->bins[0].rows, 1700000);
  bri_plan_free(p);
  o.materialize_deletions = false;
  p = plan(&f, &o, NULL);
  ck_assert_uint_eq(p->n_bins, 0);
  bri_plan_free(p);
  /* a low-utilization pack makes a big fragment a candidate on its own */
  bool repack[] = {false, false, true};
  p = plan(&f, &o, repack);
  const size_t want2[][2] = {{2, 1}};
  expect_bins(p, 1, want2);
  bri_plan_free(p);
}
END_TEST

START_TEST(test_split_for_size_and_budget) {
  bri_compact_options o;
  bri_compact_options_default(&o);
  o.target_rows_per_fragment = 200;
  fake f;
  const uint64_t rows[] = {100, 100, 100, 100, 100};
  make(&f, 5, rows, NULL);
  bri_plan *p = plan(&f, &o, NULL);
  const size_t want[][2] = {{0, 2}, {2, 3}}; /* the 100-row remainder joins the last bin */
  expect_bins(p, 2, want);
  ck_assert(!p->budget_exhausted);
  bri_plan_free(p);
  o.max_source_fragments = 3;
  p = plan(&f, &o, NULL);
  expect_bins(p, 1, want);
  ck_assert(p->budget_exhausted);
  bri_plan_free(p);
  o.max_source_fragments = 1; /* the first bin always runs, or nothing ever would */
  p = plan(&f, &o, NULL);
  ck_assert_uint_eq(p->n_bins, 1);
  bri_plan_free(p);
}
END_TEST

#define BTREE "/lance.table.BTreeIndexDetails"
#define BITMAP "/lance.table.BitmapIndexDetails"

START_TEST(test_index_boundaries) {
  bri_compact_options o;
  bri_compact_options_default(&o);
  fake f;
  const uint64_t rows[] = {100, 100, 100, 100, 100};
  make(&f, 5, rows, NULL);
  const uint32_t covered[] = {10, 11};
  add_index(&f, covered, 2, BITMAP, 1);
  /* no stable row ids, a type the fragment reuse index carries: bins follow
   * the index boundary, as Lance's planner does */
  bri_plan *p = plan(&f, &o, NULL);
  const size_t want[][2] = {{0, 2}, {2, 3}};
  expect_bins(p, 2, want);
  ck_assert_uint_eq(p->n_skipped_indexed, 0);
  json_t *j = bri_plan_to_json(p, &f.bm);
  char *s = json_dumps(json_object_get(j, "indices"), JSON_COMPACT | JSON_PRESERVE_ORDER);
  ck_assert_str_eq(s, "[{\"name\":\"idx\",\"type\":\"Bitmap\",\"carried\":\"fragment_reuse_index\","
                      "\"hnsw\":false,\"fragments\":2,\"holds\":0}]");
  free(s);
  json_decref(j);
  bri_plan_free(p);
  /* with stable row ids: the same bins, the bitmap follows the rows */
  f.pb.reader_feature_flags = BRI_FLAG_STABLE_ROW_IDS;
  p = plan(&f, &o, NULL);
  expect_bins(p, 2, want);
  ck_assert_str_eq(p->views->v[0].type, "Bitmap");
  ck_assert_int_eq(p->views->v[0].carry, BRI_CARRY_ROW_IDS);
  bri_plan_free(p);
  release(&f);
  /* BTREE: carried with stable row ids; without, its fragments are held back
   * (Lance 13 and 14 lose its rows when they compact after an FRI, fri.c) */
  make(&f, 5, rows, NULL);
  add_index(&f, covered, 2, BTREE, 1);
  p = plan(&f, &o, NULL);
  ck_assert_int_eq(p->views->v[0].carry, BRI_CARRY_HELD);
  const size_t rest[][2] = {{2, 3}};
  expect_bins(p, 1, rest);
  ck_assert_uint_eq(p->n_skipped_indexed, 2);
  bri_plan_free(p);
  f.pb.reader_feature_flags = BRI_FLAG_STABLE_ROW_IDS;
  p = plan(&f, &o, NULL);
  ck_assert_int_eq(p->views->v[0].carry, BRI_CARRY_ROW_IDS);
  expect_bins(p, 2, want);
  bri_plan_free(p);
  release(&f);
}
END_TEST

START_TEST(test_index_held_back) {
  bri_compact_options o;
  bri_compact_options_default(&o);
  fake f;
  const uint64_t rows[] = {100, 100, 100, 100, 100}, del[] = {0, 0, 5, 5, 0};
  make(&f, 5, rows, del);
  const uint32_t a[] = {10, 11}, b[] = {12, 13, 14};
  /* an index type brid does not know holds its fragments back, reported */
  add_index(&f, a, 2, "/lance.table.SomeFutureIndexDetails", 1);
  bri_plan *p = plan(&f, &o, NULL);
  const size_t want[][2] = {{2, 3}};
  expect_bins(p, 1, want);
  ck_assert_uint_eq(p->n_skipped_indexed, 2);
  ck_assert_uint_eq(p->skipped_indexed_ids[0], 10);
  ck_assert_uint_eq(p->skipped_indexed_ids[1], 11);
  json_t *j = bri_plan_to_json(p, &f.bm);
  char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
  ck_assert_str_eq(s, "{\"read_version\":7,\"bins\":[{\"fragments\":[12,13,14],\"rows\":290,"
                      "\"physical_rows\":300,\"deleted_rows\":10,\"data_bytes\":0}],"
                      "\"indices\":[{\"name\":\"idx\",\"type\":\"SomeFuture\",\"carried\":"
                      "\"held_back\",\"hnsw\":false,\"fragments\":2,\"holds\":2}],"
                      "\"held_back\":[10,11],\"budget_exhausted\":false}");
  free(s);
  json_decref(j);
  bri_plan_free(p);
  /* ... but not with stable row ids, where Lance only recalculates bitmaps */
  f.pb.reader_feature_flags = BRI_FLAG_STABLE_ROW_IDS;
  p = plan(&f, &o, NULL);
  ck_assert_uint_eq(p->n_skipped_indexed, 0);
  bri_plan_free(p);
  f.pb.reader_feature_flags = 0;
  /* an index without details or bitmap covers everything and is not carried */
  f.idx[0].index_details = NULL;
  f.idx[0].has_fragment_bitmap = 0;
  p = plan(&f, &o, NULL);
  ck_assert_uint_eq(p->n_bins, 0);
  ck_assert_uint_eq(p->n_skipped_indexed, 5);
  bri_plan_free(p);
  release(&f);

  /* HNSW: fragments with rows deleted after the index was built stay */
  make(&f, 5, rows, del);
  f.dels[2].read_version = 3; /* deleted before an index built from version 5 */
  f.dels[3].read_version = 8; /* after it */
  /* hnsw_index_config {m: 20}, sq {num_bits: 8} */
  static const uint8_t hnsw_details[] = {0x1a, 0x02, 0x08, 0x14, 0x2a, 0x02, 0x08, 0x08};
  add_index(&f, b, 3, "/lance.index.pb.VectorIndexDetails", 5);
  f.any[0].has_value = 1;
  f.any[0].value.data = (uint8_t *)hnsw_details;
  f.any[0].value.len = sizeof hnsw_details;
  p = plan(&f, &o, NULL);
  ck_assert(p->views->v[0].hnsw);
  ck_assert_uint_eq(p->n_skipped_indexed, 1);
  ck_assert_uint_eq(p->skipped_indexed_ids[0], 13);
  const size_t want2[][2] = {{0, 2}};
  expect_bins(p, 1, want2); /* 12 alone merges with nothing, 14 neither */
  bri_plan_free(p);
  f.any[0].value.data += 4; /* IVF_SQ: deleted rows are fine */
  f.any[0].value.len = 4;
  p = plan(&f, &o, NULL);
  ck_assert(!p->views->v[0].hnsw);
  const size_t want3[][2] = {{0, 2}, {2, 3}};
  expect_bins(p, 2, want3);
  bri_plan_free(p);
  f.any[0].value.len = 0; /* no quantizer brid knows (IVF_RQ, ...): held back */
  p = plan(&f, &o, NULL);
  ck_assert_int_eq(p->views->v[0].carry, BRI_CARRY_HELD);
  ck_assert_uint_eq(p->n_skipped_indexed, 3);
  bri_plan_free(p);
  release(&f);
}
END_TEST

START_TEST(test_bins_ascend) {
  bri_compact_options o;
  bri_compact_options_default(&o);
  fake f;
  const uint64_t rows[] = {100, 100, 100, 100};
  make(&f, 4, rows, NULL);
  f.frags[2].id = 5; /* ids 10, 11, 5, 13 */
  bri_plan *p = plan(&f, &o, NULL); /* no index: one bin, as before */
  const size_t one[][2] = {{0, 4}};
  expect_bins(p, 1, one);
  bri_plan_free(p);
  const uint32_t all[] = {10, 11, 5, 13};
  add_index(&f, all, 4, BITMAP, 1);
  p = plan(&f, &o, NULL); /* the fragment reuse index needs ascending groups */
  const size_t want[][2] = {{0, 2}, {2, 2}};
  expect_bins(p, 2, want);
  bri_plan_free(p);
  f.pb.reader_feature_flags = BRI_FLAG_STABLE_ROW_IDS; /* bitmaps only: no order needed */
  p = plan(&f, &o, NULL);
  expect_bins(p, 1, one);
  bri_plan_free(p);
  release(&f);
}
END_TEST

START_TEST(test_config_keys) {
  fake f;
  const uint64_t rows[] = {100};
  make(&f, 1, rows, NULL);
  lance__table__manifest__config_entry__init(&f.cfg[0]);
  lance__table__manifest__config_entry__init(&f.cfg[1]);
  f.cfg[0].key = "lance.compaction.target_rows_per_fragment";
  f.cfg[0].value = "5000";
  f.cfg[1].key = "lance.compaction.materialize_deletions_threshold";
  f.cfg[1].value = "0.5";
  f.cp[0] = &f.cfg[0], f.cp[1] = &f.cfg[1];
  f.pb.config = f.cp;
  f.pb.n_config = 2;
  bri_compact_options o;
  bri_compact_options_default(&o);
  bri_error err;
  ck_assert_int_eq(bri_compact_options_from_config(&f.bm, &o, &err), 0);
  ck_assert_uint_eq(o.target_rows_per_fragment, 5000);
  ck_assert(o.materialize_deletions_threshold == 0.5);
  f.cfg[0].value = "lots";
  ck_assert_int_eq(bri_compact_options_from_config(&f.bm, &o, &err), BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "lance.compaction.target_rows_per_fragment = \"lots\"") != NULL, "%s", err.msg);
  ck_assert_msg(strstr(err.msg, "/t/_versions/x.manifest") != NULL, "%s", err.msg);
  f.cfg[0].value = "0";
  ck_assert_int_eq(bri_compact_options_from_config(&f.bm, &o, &err), BRI_EINVAL);
}
END_TEST

static Suite *plan_suite(void) {
  Suite *s = suite_create("plan");
  TCase *tc = tcase_create("plan");
  tcase_add_test(tc, test_small_neighbours_merge_big_ones_split);
  tcase_add_test(tc, test_deletions_compact_alone);
  tcase_add_test(tc, test_split_for_size_and_budget);
  tcase_add_test(tc, test_index_boundaries);
  tcase_add_test(tc, test_index_held_back);
  tcase_add_test(tc, test_bins_ascend);
  tcase_add_test(tc, test_config_keys);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(plan_suite)
