/* test_plan.c: compaction planning on synthetic manifests: Lance's candidate
 * rules and bin splitting, index boundaries with and without stable row ids
 * (coverage read through the fragment reuse index; types brid cannot carry
 * and HNSW indices over deleted rows hold fragments back), repack-driven
 * candidates, job budgets, lance.compaction.* config keys, and the size
 * rule: fragments at the target size held back (payload counted only when
 * the caller says the strategy copies it), size tiers below it, and what
 * tiers save over many append rounds. */
#include <roaring/roaring.h>
#include <stdlib.h>
#include <string.h>

#include "compact/plan.h"
#include "lance/table/flags.h"
#include "testutil.h"

#define MAXF 64
typedef struct fake {
  bri_manifest bm;
  Lance__Table__Manifest pb;
  Lance__Table__DataFragment frags[MAXF], *fp[MAXF];
  Lance__Table__DeletionFile dels[MAXF];
  Lance__Table__DataFile files[MAXF], *filep[MAXF];
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

/* Gives fragment i one data file of bytes[i] bytes. */
static void set_bytes(fake *f, const uint64_t *bytes) {
  for (size_t i = 0; i < f->pb.n_fragments; i++) {
    lance__table__data_file__init(&f->files[i]);
    f->files[i].path = "x.lance";
    f->files[i].has_file_size_bytes = 1;
    f->files[i].file_size_bytes = bytes[i];
    f->filep[i] = &f->files[i];
    f->frags[i].files = &f->filep[i];
    f->frags[i].n_files = 1;
  }
}

static void release(fake *f) {
  for (int k = 0; k < 3; k++) free(f->bitmaps[k]);
}

static bri_plan *plan_with(fake *f, const bri_compact_options *o, const bool *repack, const uint64_t *payload) {
  bri_plan *p;
  bri_error err;
  bri_plan_hints h = {repack, payload};
  ck_assert_msg(bri_compact_plan(NULL, &f->bm, o, &h, &p, &err) == 0, "%s", err.msg);
  return p;
}

static bri_plan *plan(fake *f, const bri_compact_options *o, const bool *repack) {
  return plan_with(f, o, repack, NULL);
}

/* The ids of the fragments p holds back for reason why, as "10 11". */
static const char *held_ids(const bri_plan *p, bri_hold why) {
  static char buf[256];
  size_t n = 0;
  buf[0] = 0;
  for (size_t i = 0; i < p->n_held; i++)
    if (p->held[i].why == why)
      n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%llu", n ? " " : "", (unsigned long long)p->held[i].id);
  return buf;
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
  ck_assert_uint_eq(p->n_held, 0);
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
  ck_assert_str_eq(held_ids(p, BRI_HOLD_INDEX), "10 11");
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
  ck_assert_str_eq(held_ids(p, BRI_HOLD_INDEX), "10 11");
  ck_assert_uint_eq(p->n_held, 2);
  json_t *j = bri_plan_to_json(p, &f.bm);
  char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
  ck_assert_str_eq(s, "{\"read_version\":7,\"target_fragment_bytes\":1073741824,\"size_counts_payload\":false,"
                      "\"bins\":[{\"fragments\":[12,13,14],\"rows\":290,"
                      "\"physical_rows\":300,\"deleted_rows\":10,\"data_bytes\":0,\"size_bytes\":0}],"
                      "\"indices\":[{\"name\":\"idx\",\"type\":\"SomeFuture\",\"carried\":"
                      "\"held_back\",\"hnsw\":false,\"fragments\":2,\"holds\":2}],"
                      "\"held_back\":[{\"fragment\":10,\"reason\":\"an index brid cannot carry covers it\","
                      "\"size_bytes\":0},{\"fragment\":11,\"reason\":\"an index brid cannot carry covers it\","
                      "\"size_bytes\":0}],\"budget_exhausted\":false}");
  free(s);
  json_decref(j);
  bri_plan_free(p);
  /* ... but not with stable row ids, where Lance only recalculates bitmaps */
  f.pb.reader_feature_flags = BRI_FLAG_STABLE_ROW_IDS;
  p = plan(&f, &o, NULL);
  ck_assert_uint_eq(p->n_held, 0);
  bri_plan_free(p);
  f.pb.reader_feature_flags = 0;
  /* an index without details or bitmap covers everything and is not carried */
  f.idx[0].index_details = NULL;
  f.idx[0].has_fragment_bitmap = 0;
  p = plan(&f, &o, NULL);
  ck_assert_uint_eq(p->n_bins, 0);
  ck_assert_str_eq(held_ids(p, BRI_HOLD_INDEX), "10 11 12 13 14");
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
  ck_assert_str_eq(held_ids(p, BRI_HOLD_INDEX), "13");
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
  ck_assert_str_eq(held_ids(p, BRI_HOLD_INDEX), "12 13 14");
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

/* make() with one data file of bytes[i] bytes per fragment. */
static void sized(fake *f, size_t n, const uint64_t *rows, const uint64_t *deleted, const uint64_t *bytes) {
  make(f, n, rows, deleted);
  set_bytes(f, bytes);
}

/* Frees p after checking its bins and how many fragments it held back. */
static void expect_done(bri_plan *p, size_t n, const size_t (*want)[2], size_t held) {
  expect_bins(p, n, want);
  ck_assert_uint_eq(p->n_held, held);
  bri_plan_free(p);
}

static const uint64_t ROWS[] = {100, 100, 100, 100, 100};

START_TEST(test_size_rule_at_target) {
  bri_compact_options o;
  bri_compact_options_default(&o);
  o.target_fragment_bytes = 1000; /* tier floor 15 */
  fake f;
  const size_t rest[][2] = {{1, 3}}, all[][2] = {{0, 4}};
  /* bri and link: a fragment's size is its data bytes */
  const uint64_t big_data[] = {2000, 100, 100, 100};
  sized(&f, 4, ROWS, NULL, big_data);
  bri_plan *p = plan(&f, &o, NULL);
  ck_assert_str_eq(held_ids(p, BRI_HOLD_AT_TARGET), "10");
  ck_assert_uint_eq(p->held[0].size, 2000);
  ck_assert_uint_eq(p->bins[0].size, 300);
  json_t *j = bri_plan_to_json(p, &f.bm);
  char *s = json_dumps(json_object_get(j, "held_back"), JSON_COMPACT | JSON_PRESERVE_ORDER);
  ck_assert_str_eq(s, "[{\"fragment\":10,\"reason\":\"at target size\",\"size_bytes\":2000}]");
  free(s);
  json_decref(j);
  expect_done(p, 1, rest, 1);
  /* copy: the payload it would copy counts too; without it (bri, link) the
   * same fragments are small and merge */
  const uint64_t data[] = {50, 50, 50, 50}, payload[] = {5000, 100, 100, 100};
  sized(&f, 4, ROWS, NULL, data);
  p = plan_with(&f, &o, NULL, payload);
  ck_assert_str_eq(held_ids(p, BRI_HOLD_AT_TARGET), "10");
  ck_assert(p->counts_payload);
  expect_done(p, 1, rest, 1);
  p = plan(&f, &o, NULL);
  ck_assert(!p->counts_payload);
  expect_done(p, 1, all, 0);
  /* deletions past the threshold: rewritten whatever its size */
  const uint64_t del[] = {15, 0, 0, 0};
  sized(&f, 4, ROWS, del, data);
  expect_done(plan_with(&f, &o, NULL, payload), 1, all, 0);
  /* at Lance's row target a fragment is no candidate whatever its size, and
   * not reported: Lance's own rule */
  const uint64_t many[] = {2000000, 100, 100, 100};
  sized(&f, 4, many, NULL, data);
  expect_done(plan_with(&f, &o, NULL, payload), 1, rest, 0);
}
END_TEST

START_TEST(test_size_tiers) {
  bri_compact_options o;
  bri_compact_options_default(&o);
  o.target_fragment_bytes = 64000; /* tier floor 1000 */
  fake f;
  /* each older fragment at most half again as large as the newer ones
   * together: one bin */
  const uint64_t carry[] = {5000, 3000, 1600, 1500};
  sized(&f, 4, ROWS, NULL, carry);
  const size_t all[][2] = {{0, 4}};
  expect_done(plan(&f, &o, NULL), 1, all, 0);
  /* a larger one is not rewritten for the small ones after it */
  const uint64_t larger[] = {8000, 1500, 1500};
  sized(&f, 3, ROWS, NULL, larger);
  bri_plan *p = plan(&f, &o, NULL);
  ck_assert_str_eq(held_ids(p, BRI_HOLD_LARGER), "10");
  json_t *j = bri_plan_to_json(p, &f.bm);
  ck_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(j, "held_back"), 0), "reason")),
                   "larger than the newer fragments");
  json_decref(j);
  const size_t newer[][2] = {{1, 2}};
  expect_done(p, 1, newer, 1);
  /* ... unless it is below the floor: small tables compact to one fragment */
  const uint64_t floor[] = {900, 100, 100};
  sized(&f, 3, ROWS, NULL, floor);
  const size_t three[][2] = {{0, 3}};
  expect_done(plan(&f, &o, NULL), 1, three, 0);
  /* a larger fragment between two groups starts the older one */
  const uint64_t two[] = {3000, 3000, 20000, 1500, 1500};
  sized(&f, 5, ROWS, NULL, two);
  const size_t groups[][2] = {{0, 3}, {3, 2}};
  expect_done(plan(&f, &o, NULL), 2, groups, 0);
  /* groups are split at the target bytes as at the target rows */
  const uint64_t big[] = {40000, 40000, 40000, 40000};
  sized(&f, 4, ROWS, NULL, big);
  const size_t halves[][2] = {{0, 2}, {2, 2}};
  expect_done(plan(&f, &o, NULL), 2, halves, 0);
}
END_TEST

/* Appends `per` fragments of `bytes` each round and compacts after every
 * round as planned (each bin becomes one fragment where its first was);
 * returns the bytes rewritten divided by the bytes appended. */
static double amplification(uint64_t target, int rounds, int per, uint64_t bytes) {
  bri_compact_options o;
  bri_compact_options_default(&o);
  o.target_fragment_bytes = target;
  fake f;
  uint64_t rows[MAXF], size[MAXF], written = 0, appended = 0;
  size_t n = 0;
  for (int r = 0; r < rounds; r++) {
    for (int k = 0; k < per; k++) rows[n] = 10, size[n++] = bytes, appended += bytes;
    make(&f, n, rows, NULL);
    set_bytes(&f, size);
    bri_plan *p = plan(&f, &o, NULL);
    size_t m = 0, next = 0;
    for (size_t b = 0; b <= p->n_bins; b++) {
      size_t first = b < p->n_bins ? p->bins[b].first : n;
      for (; next < first; next++) rows[m] = rows[next], size[m++] = size[next];
      if (b == p->n_bins) break;
      rows[m] = p->bins[b].physical_rows, size[m++] = p->bins[b].size;
      written += p->bins[b].size;
      next = first + p->bins[b].count;
    }
    n = m;
    bri_plan_free(p);
    ck_assert_uint_lt(n + (size_t)per, MAXF);
  }
  return (double)written / (double)appended;
}

START_TEST(test_tiers_rewrite_what_is_new) {
  /* 200 rounds of four 1.35 MB fragments: without a size rule (Lance's
   * rows only) every round rewrites the whole table, about rounds / 2 per
   * byte; with the 1 GiB default each byte is rewritten a few times */
  double lance = amplification(UINT64_MAX, 200, 4, 1350000);
  double brid = amplification(BRI_TARGET_FRAGMENT_BYTES, 200, 4, 1350000);
  ck_assert_msg(lance > 90, "%.2f", lance);
  ck_assert_msg(brid < 6, "%.2f", brid);
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
  tcase_add_test(tc, test_size_rule_at_target);
  tcase_add_test(tc, test_size_tiers);
  tcase_add_test(tc, test_tiers_rewrite_what_is_new);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(plan_suite)
