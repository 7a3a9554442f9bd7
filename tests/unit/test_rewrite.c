/* test_rewrite.c: Rewrite commits: fragments replaced in place, the
 * transaction records old and new fragments, new ids come from the latest
 * max_fragment_id, compatible winners are rebased over, and a winner that
 * touched our fragments aborts the commit (the rules per operation pair are
 * tested in test_conflict.c, carrying deletions over in test_carry.c). The "new"
 * fragments reuse the old data files, which keeps the tables readable. */
#include <stdlib.h>
#include <string.h>

#include "compact/rewrite.h"
#include "lance/table/commit.h"
#include "testutil.h"
#include "util/fsutil.h"

static char *tmp, *root;

static void setup(void) {
  tmp = bri_tmpdir();
  root = bri_path_join(tmp, "t.lance");
  char *src = bri_fixture("tables/v21.lance");
  bri_copytree(src, root);
  free(src);
}

static void teardown(void) {
  bri_rmtree(tmp);
  free(tmp), free(root);
}

/* A copy of fragment `from` of manifest m, with id 0 (assigned at commit). */
static Lance__Table__DataFragment *copy_fragment(const Lance__Table__DataFragment *from) {
  size_t len = lance__table__data_fragment__get_packed_size(from);
  uint8_t *buf = malloc(len);
  lance__table__data_fragment__pack(from, buf);
  Lance__Table__DataFragment *f = lance__table__data_fragment__unpack(NULL, len, buf);
  free(buf);
  f->id = 0;
  return f;
}

/* Commits an operation on top of the latest version (a concurrent writer). */
static void other_writer(bri_table *t, Lance__Table__Transaction *txn, uint64_t max_frag_bump) {
  bri_manifest *m;
  bri_error err;
  ck_assert_int_eq(bri_table_load(t, 0, &m, &err), 0);
  txn->read_version = m->pb->version, txn->has_read_version = 1;
  m->pb->max_fragment_id += (uint32_t)max_frag_bump;
  ck_assert_msg(bri_commit(t, m->pb, txn, m->indices, m->pb->version + 1, NULL, &err) == 0, "%s", err.msg);
  free(txn->uuid);
  txn->uuid = NULL;
  bri_manifest_free(m);
}

typedef struct setup_rw {
  bri_rewrite rw;
  bri_rewrite_group g[2];
  uint64_t old0, old1;
  Lance__Table__DataFragment *n0, *n1;
} setup_rw;

static void plan_two_groups(bri_table *t, setup_rw *s) {
  bri_manifest *m;
  bri_error err;
  ck_assert_int_eq(bri_table_load(t, 0, &m, &err), 0);
  ck_assert_uint_eq(m->pb->n_fragments, 2);
  s->old0 = m->pb->fragments[0]->id, s->old1 = m->pb->fragments[1]->id;
  s->n0 = copy_fragment(m->pb->fragments[0]);
  s->n1 = copy_fragment(m->pb->fragments[1]);
  s->g[0] = (bri_rewrite_group){.n_old = 1, .old_ids = &s->old0, .n_new = 1, .new_frags = &s->n0};
  s->g[1] = (bri_rewrite_group){.n_old = 1, .old_ids = &s->old1, .n_new = 1, .new_frags = &s->n1};
  s->rw = (bri_rewrite){.read_version = m->pb->version, .n_groups = 2, .groups = s->g};
  bri_manifest_free(m);
}

static void free_rw(setup_rw *s) {
  lance__table__data_fragment__free_unpacked(s->n0, NULL);
  lance__table__data_fragment__free_unpacked(s->n1, NULL);
}

START_TEST(test_rewrite_in_place) {
  bri_table *t;
  bri_error err;
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  setup_rw s;
  plan_two_groups(t, &s);
  uint64_t v;
  ck_assert_msg(bri_rewrite_commit(t, &s.rw, 3, &v, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(v, s.rw.read_version + 1);
  bri_manifest *m;
  ck_assert_int_eq(bri_table_load(t, v, &m, &err), 0);
  ck_assert_uint_eq(m->pb->n_fragments, 2);
  ck_assert_uint_eq(m->pb->fragments[0]->id, 2); /* max_fragment_id was 1 */
  ck_assert_uint_eq(m->pb->fragments[1]->id, 3);
  ck_assert_uint_eq(m->pb->max_fragment_id, 3);
  ck_assert_int_eq(m->txn->operation_case, LANCE__TABLE__TRANSACTION__OPERATION_REWRITE);
  ck_assert_uint_eq(m->txn->read_version, s.rw.read_version);
  ck_assert_uint_eq(m->txn->rewrite->n_groups, 2);
  ck_assert_uint_eq(m->txn->rewrite->groups[1]->old_fragments[0]->id, s.old1);
  ck_assert_uint_eq(m->txn->rewrite->groups[1]->new_fragments[0]->id, 3);
  ck_assert_str_eq(m->pb->fragments[1]->files[0]->path, s.n1->files[0]->path);
  bri_manifest_free(m);
  free_rw(&s);
  bri_table_close(t);
}
END_TEST

START_TEST(test_rebase_over_compatible_winner) {
  bri_table *t;
  bri_error err;
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  setup_rw s;
  plan_two_groups(t, &s);
  Lance__Table__Transaction txn = LANCE__TABLE__TRANSACTION__INIT;
  Lance__Table__Transaction__ReserveFragments rf = LANCE__TABLE__TRANSACTION__RESERVE_FRAGMENTS__INIT;
  rf.num_fragments = 5, rf.has_num_fragments = 1;
  txn.operation_case = LANCE__TABLE__TRANSACTION__OPERATION_RESERVE_FRAGMENTS;
  txn.reserve_fragments = &rf;
  other_writer(t, &txn, 5); /* ids 2..6 taken meanwhile */
  uint64_t v;
  ck_assert_msg(bri_rewrite_commit(t, &s.rw, 3, &v, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(v, s.rw.read_version + 2);
  bri_manifest *m;
  ck_assert_int_eq(bri_table_load(t, v, &m, &err), 0);
  ck_assert_uint_eq(m->pb->fragments[0]->id, 7);
  ck_assert_uint_eq(m->pb->fragments[1]->id, 8);
  ck_assert_uint_eq(m->txn->read_version, s.rw.read_version);
  bri_manifest_free(m);
  free_rw(&s);
  bri_table_close(t);
}
END_TEST

START_TEST(test_conflicting_winners_abort) {
  bri_table *t;
  bri_error err;
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  setup_rw s;
  plan_two_groups(t, &s);
  /* a delete that updated fragment old1 */
  bri_manifest *m;
  ck_assert_int_eq(bri_table_load(t, 0, &m, &err), 0);
  Lance__Table__Transaction txn = LANCE__TABLE__TRANSACTION__INIT;
  Lance__Table__Transaction__Delete del = LANCE__TABLE__TRANSACTION__DELETE__INIT;
  Lance__Table__DataFragment *upd[] = {m->pb->fragments[1]};
  del.updated_fragments = upd, del.n_updated_fragments = 1;
  txn.operation_case = LANCE__TABLE__TRANSACTION__OPERATION_DELETE;
  txn.delete_ = &del;
  other_writer(t, &txn, 0);
  uint64_t before = bri_table_latest_version(t), v;
  ck_assert_int_eq(bri_rewrite_commit(t, &s.rw, 3, &v, &err), BRI_ECONFLICT);
  ck_assert_msg(strstr(err.msg, "a delete touched fragment 1, which this compaction rewrites") != NULL, "%s", err.msg);
  ck_assert_uint_eq(bri_table_latest_version(t), before); /* nothing committed */
  bri_manifest_free(m);
  free_rw(&s);
  bri_table_close(t);
}
END_TEST

static Suite *rewrite_suite(void) {
  Suite *s = suite_create("rewrite");
  TCase *tc = tcase_create("rewrite");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_rewrite_in_place);
  tcase_add_test(tc, test_rebase_over_compatible_winner);
  tcase_add_test(tc, test_conflicting_winners_abort);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(rewrite_suite)
