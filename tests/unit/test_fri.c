/* test_fri.c: indices through a compaction (compact/fri.c), on copies of
 * tests/fixtures/tables/plain.lance (LanceDB's BTree index on every
 * fragment, rows deleted in all three) and stable.lance (stable row ids):
 *  - without stable row ids a BTree index holds its fragments back (Lance 13
 *    and 14 lose its rows when they compact after an FRI), so the FRI cases
 *    relabel it as a Bitmap index, a type the FRI carries;
 *  - without stable row ids the commit appends a fragment reuse index version
 *    whose groups are the bins, whose changed row addresses are exactly the
 *    surviving rows (all offsets minus the deletion files), index bitmaps
 *    untouched; an earlier version is kept or trimmed by Lance's rule;
 *  - with stable row ids the bitmap follows the rows (a zone map's loses them);
 *  - a corrupt fragment reuse index in the latest manifest stops compaction
 *    with a message naming the manifest, and nothing changes on disk. */
#include <stdlib.h>
#include <string.h>

#include "compact/execute.h"
#include "compact/fri.h"
#include "lance/table/commit.h"
#include "lance/table/deletion.h"
#include "lance/table/frag_reuse.h"
#include "testutil.h"
#include "util/fsutil.h"

static char *tmp, *root;

static void setup_plain(void) { bri_fixture_table("tables/plain.lance", &tmp, &root); }
static void setup_stable(void) { bri_fixture_table("tables/stable.lance", &tmp, &root); }

static void teardown(void) {
  bri_rmtree(tmp);
  free(tmp), free(root);
}

static bri_manifest *latest(bri_table **t) {
  bri_error err;
  ck_assert_msg(bri_table_open(root, t, &err) == 0, "%s", err.msg);
  bri_manifest *m;
  ck_assert_msg(bri_table_load(*t, 0, &m, &err) == 0, "%s", err.msg);
  return m;
}

static void compact(bri_compact_report *rep) {
  bri_compact_request q;
  bri_compact_request_default(&q);
  q.strategy = BRI_STRATEGY_LINK;
  bri_error err;
  ck_assert_msg(bri_compact_table(root, &q, NULL, rep, &err) == 0, "%s", err.msg);
}

/* Commits `extra` (an index entry) next to the latest version's indices. */
static void add_entry(Lance__Table__IndexMetadata *extra) {
  bri_table *t;
  bri_manifest *m = latest(&t);
  size_t n = m->indices ? m->indices->n_indices : 0;
  Lance__Table__IndexMetadata **list = calloc(n + 1, sizeof *list);
  for (size_t i = 0; i < n; i++) list[i] = m->indices->indices[i];
  list[n] = extra;
  Lance__Table__IndexSection sec;
  lance__table__index_section__init(&sec);
  sec.indices = list, sec.n_indices = n + 1;
  Lance__Table__Transaction txn;
  Lance__Table__Transaction__CreateIndex ci;
  lance__table__transaction__init(&txn);
  lance__table__transaction__create_index__init(&ci);
  ci.new_indices = &extra, ci.n_new_indices = 1;
  txn.operation_case = LANCE__TABLE__TRANSACTION__OPERATION_CREATE_INDEX;
  txn.create_index = &ci;
  txn.read_version = m->pb->version, txn.has_read_version = 1;
  /* planted FRI versions name fragments 90 and 91: ids handed out once */
  if (m->pb->max_fragment_id < 91) m->pb->max_fragment_id = 91, m->pb->has_max_fragment_id = 1;
  bri_error err;
  ck_assert_msg(bri_commit(t, m->pb, &txn, &sec, m->pb->version + 1, NULL, &err) == 0, "%s", err.msg);
  free(txn.uuid);
  free(list);
  bri_manifest_free(m);
  bri_table_close(t);
}

/* Relabels the latest version's first index (plain.lance's BTree id_idx)
 * as a Bitmap index, in a new version: the FRI carries that type. */
static void relabel_as_bitmap(void) {
  bri_table *t;
  bri_manifest *m = latest(&t);
  Google__Protobuf__Any *d = m->indices->indices[0]->index_details;
  free(d->type_url);
  d->type_url = strdup("/lance.table.BitmapIndexDetails");
  Lance__Table__Transaction txn;
  Lance__Table__Transaction__CreateIndex ci;
  lance__table__transaction__init(&txn);
  lance__table__transaction__create_index__init(&ci);
  txn.operation_case = LANCE__TABLE__TRANSACTION__OPERATION_CREATE_INDEX;
  txn.create_index = &ci;
  txn.read_version = m->pb->version, txn.has_read_version = 1;
  bri_error err;
  ck_assert_msg(bri_commit(t, m->pb, &txn, m->indices, m->pb->version + 1, NULL, &err) == 0, "%s", err.msg);
  free(txn.uuid);
  bri_manifest_free(m);
  bri_table_close(t);
}

/* A one-version FRI entry for fragments that no longer exist (90 -> 91). */
static Lance__Table__IndexMetadata *old_fri(bri_fri_content *c, bri_fri_version *v,
                                            bri_fri_group *g, bri_fri_digest *d,
                                            bri_fri_version **vp, bri_fri_group **gp,
                                            bri_fri_digest **dp, uint64_t dataset_version) {
  lance__table__fragment_reuse_index_details__inline_content__init(c);
  lance__table__fragment_reuse_index_details__version__init(v);
  lance__table__fragment_reuse_index_details__group__init(g);
  for (int i = 0; i < 2; i++) {
    lance__table__fragment_reuse_index_details__fragment_digest__init(&d[i]);
    d[i].has_id = d[i].has_physical_rows = 1;
    d[i].id = 90 + (uint64_t)i, d[i].physical_rows = 10;
    dp[i] = &d[i];
  }
  bri_treemap_part p = {90, roaring_bitmap_from_range(0, 10, 1)};
  bri_error err;
  ck_assert_int_eq(bri_treemap_encode(&p, 1, &g->changed_row_addrs.data, &g->changed_row_addrs.len, &err), 0);
  roaring_bitmap_free(p.low);
  g->has_changed_row_addrs = 1;
  g->old_fragments = &dp[0], g->n_old_fragments = 1;
  g->new_fragments = &dp[1], g->n_new_fragments = 1;
  *gp = g;
  v->groups = gp, v->n_groups = 1;
  v->has_dataset_version = 1, v->dataset_version = dataset_version;
  *vp = v;
  c->versions = vp, c->n_versions = 1;
  bri_table *t;
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  roaring_bitmap_t *nb = roaring_bitmap_create();
  roaring_bitmap_add(nb, 91);
  Lance__Table__IndexMetadata *x;
  char *ext;
  ck_assert_int_eq(bri_fri_entry_build(t, c, NULL, dataset_version, nb, &x, &ext, &err), 0);
  ck_assert_ptr_null(ext);
  roaring_bitmap_free(nb);
  bri_table_close(t);
  return x;
}

/* The surviving offsets of fragment f of manifest m, from its deletion file. */
static roaring_bitmap_t *surviving(bri_table *t, const bri_manifest *m,
                                   const Lance__Table__DataFragment *f) {
  roaring_bitmap_t *b = roaring_bitmap_from_range(0, f->physical_rows, 1);
  if (!f->deletion_file) return b;
  char *p;
  uint32_t *off;
  size_t n;
  bri_error err;
  ck_assert_int_eq(bri_table_deletion_path(t, m->pb, f, &p, &err), 0);
  bri_store *st;
  ck_assert_int_eq(bri_table_store_of(t, m->pb, p, &st, &err), 0);
  ck_assert_msg(bri_deletion_read(st, p, (int)f->deletion_file->file_type,
                                  f->deletion_file->num_deleted_rows, f->physical_rows, &off, &n,
                                  &err) == 0, "%s", err.msg);
  for (size_t i = 0; i < n; i++) roaring_bitmap_remove(b, off[i]);
  free(off), free(p);
  return b;
}

/* Compacts plain.lance (after planting an FRI version built at
 * planted_version, when given) and checks the FRI the commit wrote. */
static void fri_cycle(uint64_t planted_version, size_t want_versions, size_t want_trimmed) {
  bri_fri_content c0;
  bri_fri_version v0, *vp0;
  bri_fri_group g0, *gp0;
  bri_fri_digest d0[2], *dp0[2];
  relabel_as_bitmap();
  if (planted_version) {
    Lance__Table__IndexMetadata *x = old_fri(&c0, &v0, &g0, d0, &vp0, &gp0, dp0, planted_version);
    add_entry(x);
    bri_fri_entry_free(x);
    free(g0.changed_row_addrs.data);
  }
  bri_table *t;
  bri_manifest *before = latest(&t);
  bri_compact_report rep;
  compact(&rep);
  ck_assert_uint_eq(rep.fragments_before, 3);
  ck_assert_uint_eq(rep.fragments_after, 1);
  json_t *fri = json_object_get(json_object_get(rep.plan, "index_update"), "fragment_reuse_index");
  ck_assert_ptr_nonnull(fri);
  ck_assert_int_eq(json_integer_value(json_object_get(fri, "versions")), (json_int_t)want_versions);
  ck_assert_int_eq(json_integer_value(json_object_get(fri, "trimmed")), (json_int_t)want_trimmed);
  json_decref(rep.plan);
  bri_table_close(t);
  bri_manifest *after = latest(&t);
  const Lance__Table__IndexMetadata *x = bri_fri_find(after->indices);
  ck_assert_ptr_nonnull(x);
  /* Lance's shape: the FRI entry last, the index entry unchanged */
  ck_assert_ptr_eq(x, after->indices->indices[after->indices->n_indices - 1]);
  ck_assert_uint_eq(x->dataset_version, before->pb->version);
  const Lance__Table__IndexMetadata *bt = after->indices->indices[0];
  ck_assert_str_eq(bt->name, "id_idx");
  ck_assert_uint_eq(bt->fragment_bitmap.len, before->indices->indices[0]->fragment_bitmap.len);
  ck_assert(!memcmp(bt->fragment_bitmap.data, before->indices->indices[0]->fragment_bitmap.data,
                    bt->fragment_bitmap.len));
  bri_fri_content *c;
  bri_error err;
  ck_assert_msg(bri_fri_load(t, after, x, &c, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(c->n_versions, want_versions);
  const bri_fri_version *v = c->versions[c->n_versions - 1];
  ck_assert_uint_eq(v->dataset_version, before->pb->version);
  ck_assert_uint_eq(v->n_groups, 1);
  const bri_fri_group *g = v->groups[0];
  ck_assert_uint_eq(g->n_old_fragments, 3);
  ck_assert_uint_eq(g->n_new_fragments, 1);
  ck_assert_uint_eq(g->new_fragments[0]->id, after->pb->fragments[0]->id);
  ck_assert_uint_eq(g->new_fragments[0]->physical_rows, after->pb->fragments[0]->physical_rows);
  bri_treemap_part *parts;
  size_t n;
  ck_assert_int_eq(bri_treemap_decode(g->changed_row_addrs.data, g->changed_row_addrs.len, "t",
                                      &parts, &n, &err), 0);
  ck_assert_uint_eq(n, 3);
  for (size_t i = 0; i < 3; i++) {
    const Lance__Table__DataFragment *f = before->pb->fragments[i];
    ck_assert_uint_eq(g->old_fragments[i]->id, f->id);
    ck_assert_uint_eq(g->old_fragments[i]->physical_rows, f->physical_rows);
    ck_assert_uint_eq(g->old_fragments[i]->num_deleted_rows, f->deletion_file->num_deleted_rows);
    roaring_bitmap_t *want = surviving(t, before, f);
    ck_assert_uint_eq(parts[i].high, f->id);
    ck_assert(roaring_bitmap_equals(parts[i].low, want));
    roaring_bitmap_free(want);
  }
  bri_treemap_free(parts, n);
  bri_fri_content_free(c);
  bri_manifest_free(before);
  bri_manifest_free(after);
  bri_table_close(t);
}

START_TEST(test_fri_written) { fri_cycle(0, 1, 0); }
END_TEST

/* plain.lance as LanceDB wrote it: its BTree index covers every fragment
 * and holds them all back; nothing is written, the report says why */
START_TEST(test_btree_held_back) {
  char *listing = bri_tree_listing(root);
  bri_compact_report rep;
  compact(&rep);
  ck_assert_uint_eq(rep.version, 0);
  ck_assert_uint_eq(rep.fragments_after, 3);
  json_t *x = json_array_get(json_object_get(rep.plan, "indices"), 0);
  ck_assert_str_eq(json_string_value(json_object_get(x, "type")), "BTree");
  ck_assert_str_eq(json_string_value(json_object_get(x, "carried")), "held_back");
  ck_assert_int_eq(json_integer_value(json_object_get(x, "holds")), 3);
  ck_assert_uint_eq(json_array_size(json_object_get(rep.plan, "held_back")), 3);
  json_decref(rep.plan);
  char *after = bri_tree_listing(root);
  ck_assert_str_eq(listing, after);
  free(listing), free(after);
}
END_TEST

START_TEST(test_fri_version_kept) {
  /* the BTree index (built from version 4) predates the planted version 9 */
  fri_cycle(9, 2, 0);
}
END_TEST

START_TEST(test_fri_version_trimmed) {
  /* planted version 2: the index came after it and covers none of its old
   * fragments: caught up, trimmed */
  fri_cycle(2, 1, 1);
}
END_TEST

START_TEST(test_corrupt_fri_refused) {
  bri_fri_content c0;
  bri_fri_version v0, *vp0;
  bri_fri_group g0, *gp0;
  bri_fri_digest d0[2], *dp0[2];
  relabel_as_bitmap();
  Lance__Table__IndexMetadata *x = old_fri(&c0, &v0, &g0, d0, &vp0, &gp0, dp0, 2);
  /* flip the treemap's first key in the packed details: fragment 90 -> 92 */
  uint8_t *p = x->index_details->value.data;
  size_t len = x->index_details->value.len;
  int hits = 0;
  for (size_t i = 0; i + 12 <= len; i++)
    if (!memcmp(p + i, "\x01\0\0\0\0\0\0\0\x5a\0\0\0", 12)) p[i + 8] = 92, hits++;
  ck_assert_int_eq(hits, 1);
  add_entry(x);
  bri_fri_entry_free(x);
  free(g0.changed_row_addrs.data);
  char *listing = bri_tree_listing(root);
  bri_table *t;
  bri_manifest *m = latest(&t);
  bri_compact_request q;
  bri_compact_request_default(&q);
  bri_compact_report rep;
  bri_error err;
  ck_assert_int_eq(bri_compact_table(root, &q, NULL, &rep, &err), BRI_ECORRUPT);
  json_decref(rep.plan);
  ck_assert_msg(strstr(err.msg, m->path) && strstr(err.msg, "fragment 92") &&
                strstr(err.msg, "not one of the group's old fragments"), "%s", err.msg);
  char *after = bri_tree_listing(root);
  ck_assert_str_eq(listing, after);
  free(listing), free(after);
  bri_manifest_free(m);
  bri_table_close(t);
}
END_TEST

/* stable.lance with an index of type `type_url` on both fragments. */
static void stable_cycle(const char *type_url, bool follows) {
  Lance__Table__IndexMetadata x;
  Google__Protobuf__Any any;
  Lance__Table__UUID u;
  lance__table__index_metadata__init(&x);
  google__protobuf__any__init(&any);
  lance__table__uuid__init(&u);
  static uint8_t id[16] = {1};
  u.uuid.data = id, u.uuid.len = 16, u.has_uuid = 1;
  any.type_url = (char *)type_url;
  x.uuid = &u, x.name = "ix", x.index_details = &any, x.dataset_version = 2, x.has_dataset_version = 1;
  roaring_bitmap_t *b = roaring_bitmap_from_range(0, 2, 1);
  uint8_t buf[64];
  x.fragment_bitmap.len = roaring_bitmap_portable_serialize(b, (char *)buf);
  x.fragment_bitmap.data = buf, x.has_fragment_bitmap = 1;
  roaring_bitmap_free(b);
  add_entry(&x);
  bri_compact_report rep;
  compact(&rep);
  ck_assert_uint_eq(rep.fragments_after, 1);
  ck_assert_ptr_null(json_object_get(json_object_get(rep.plan, "index_update"), "fragment_reuse_index"));
  json_decref(rep.plan);
  bri_table *t;
  bri_manifest *m = latest(&t);
  ck_assert_ptr_null(bri_fri_find(m->indices));
  const Lance__Table__IndexMetadata *y = m->indices->indices[0];
  roaring_bitmap_t *got = roaring_bitmap_portable_deserialize_safe((const char *)y->fragment_bitmap.data,
                                                                   y->fragment_bitmap.len);
  ck_assert_uint_eq(roaring_bitmap_get_cardinality(got), follows ? 1 : 0);
  if (follows) ck_assert(roaring_bitmap_contains(got, (uint32_t)m->pb->fragments[0]->id));
  roaring_bitmap_free(got);
  bri_manifest_free(m);
  bri_table_close(t);
}

START_TEST(test_stable_bitmap_follows) { stable_cycle("/lance.table.BTreeIndexDetails", true); }
END_TEST

START_TEST(test_stable_zonemap_dropped) { stable_cycle("/lance.table.ZoneMapIndexDetails", false); }
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("fri");
  TCase *tc = tcase_create("plain");
  tcase_add_checked_fixture(tc, setup_plain, teardown);
  tcase_add_test(tc, test_fri_written);
  tcase_add_test(tc, test_btree_held_back);
  tcase_add_test(tc, test_fri_version_kept);
  tcase_add_test(tc, test_fri_version_trimmed);
  tcase_add_test(tc, test_corrupt_fri_refused);
  suite_add_tcase(s, tc);
  TCase *ts = tcase_create("stable");
  tcase_add_checked_fixture(ts, setup_stable, teardown);
  tcase_add_test(ts, test_stable_bitmap_follows);
  tcase_add_test(ts, test_stable_zonemap_dropped);
  suite_add_tcase(s, ts);
  return s;
}

BRI_TEST_MAIN(suite)
