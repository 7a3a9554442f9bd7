/* test_reach.c: the one walk over what a manifest references
 * (lance/table/reach.h), each kind of reference checked against the table on
 * disk: data files and their sidecar directories, deletion files, the
 * transaction file and the index directory of plain.lance; the sidecars a
 * BRI names and their directories after a bri compaction of blobs.lance;
 * data files under a base path (a shallow clone); and a walk that stops on
 * the callback's error or on a base id the manifest does not define. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compact/execute.h"
#include "lance/table/reach.h"
#include "lance/table/table.h"
#include "ops/clone.h"
#include "testutil.h"
#include "util/fsutil.h"

typedef struct seen {
  size_t n[BRI_REACH_INDEX_DIR + 1];
  char *paths[BRI_REACH_INDEX_DIR + 1][64];
  size_t calls, stop_at;
} seen;

static int record(void *user, bri_reach_kind kind, const char *path, bri_error *err) {
  seen *s = user;
  if (++s->calls == s->stop_at) return bri_error_set(err, BRI_ECANCELLED, "stopped at %s", path);
  if (s->n[kind] < 64) s->paths[kind][s->n[kind]++] = strdup(path);
  return 0;
}

static void seen_dispose(seen *s) {
  for (int k = 0; k <= BRI_REACH_INDEX_DIR; k++)
    for (size_t i = 0; i < s->n[k]; i++) free(s->paths[k][i]);
}

static bool is_kind(const char *path, mode_t kind) {
  struct stat st;
  return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == kind;
}

static void walk_latest(const char *root, seen *s) {
  bri_table *t;
  bri_manifest *m;
  bri_error err = {0};
  ck_assert_msg(bri_table_open(root, &t, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(bri_table_load(t, 0, &m, &err), 0);
  ck_assert_msg(bri_reach_manifest(t, m, record, s, &err) == 0, "%s", err.msg);
  bri_manifest_free(m);
  bri_table_close(t);
}

START_TEST(test_plain_table_every_kind) {
  char *tmp, *root;
  bri_fixture_table("tables/plain.lance", &tmp, &root);
  bri_table *t;
  bri_manifest *m;
  bri_error err = {0};
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  ck_assert_int_eq(bri_table_load(t, 0, &m, &err), 0);
  seen s = {0};
  ck_assert_int_eq(bri_reach_manifest(t, m, record, &s, &err), 0);
  size_t files = 0, dels = 0;
  for (size_t i = 0; i < m->pb->n_fragments; i++) {
    files += m->pb->fragments[i]->n_files;
    dels += m->pb->fragments[i]->deletion_file != NULL;
  }
  /* every data file, as a file under data/, each with its own sidecar dir */
  ck_assert_uint_eq(s.n[BRI_REACH_DATA], files);
  ck_assert_uint_eq(s.n[BRI_REACH_SIDECAR_DIR], files);
  char *data = bri_path_join(root, "data");
  for (size_t i = 0; i < files; i++) {
    const char *p = s.paths[BRI_REACH_DATA][i];
    ck_assert_msg(is_kind(p, S_IFREG) && bri_path_below(data, p), "%s", p);
    ck_assert_uint_eq(strlen(s.paths[BRI_REACH_SIDECAR_DIR][i]), strlen(p) - strlen(".lance"));
    ck_assert(!strncmp(s.paths[BRI_REACH_SIDECAR_DIR][i], p, strlen(p) - strlen(".lance")));
  }
  /* deletion files (plain.lance deletes rows in its fragments) */
  ck_assert_uint_gt(dels, 0);
  ck_assert_uint_eq(s.n[BRI_REACH_DELETION], dels);
  for (size_t i = 0; i < dels; i++)
    ck_assert_msg(is_kind(s.paths[BRI_REACH_DELETION][i], S_IFREG), "%s", s.paths[BRI_REACH_DELETION][i]);
  /* the transaction file the manifest names */
  ck_assert_uint_eq(s.n[BRI_REACH_TRANSACTION], 1);
  char *txn = bri_strdupf("%s/_transactions/%s", root, m->pb->transaction_file);
  ck_assert_str_eq(s.paths[BRI_REACH_TRANSACTION][0], txn);
  ck_assert(is_kind(txn, S_IFREG));
  /* the BTree index on id */
  ck_assert_uint_eq(s.n[BRI_REACH_INDEX_DIR], 1);
  ck_assert_msg(is_kind(s.paths[BRI_REACH_INDEX_DIR][0], S_IFDIR), "%s", s.paths[BRI_REACH_INDEX_DIR][0]);
  ck_assert_uint_eq(s.n[BRI_REACH_BRI_SIDECAR] + s.n[BRI_REACH_BRI_DIR], 0);
  seen_dispose(&s);
  /* the callback's error stops the walk and is returned */
  seen stop = {.stop_at = 2};
  ck_assert_int_eq(bri_reach_manifest(t, m, record, &stop, &err), BRI_ECANCELLED);
  ck_assert_uint_eq(stop.calls, 2);
  ck_assert_msg(strstr(err.msg, "stopped at"), "%s", err.msg);
  seen_dispose(&stop);
  /* a base id the manifest does not define is an error, not a skipped file */
  Lance__Table__DataFile *df = m->pb->fragments[0]->files[0];
  df->has_base_id = 1, df->base_id = 99;
  seen bad = {0};
  ck_assert_int_eq(bri_reach_manifest(t, m, record, &bad, &err), BRI_ECORRUPT);
  ck_assert_msg(strstr(err.msg, "base id 99"), "%s", err.msg);
  ck_assert_uint_eq(bad.n[BRI_REACH_DATA], 0);
  seen_dispose(&bad);
  bri_manifest_free(m);
  bri_table_close(t);
  free(txn), free(data);
  bri_rmtree(tmp);
  free(tmp), free(root);
}
END_TEST

START_TEST(test_bri_sidecars_and_their_dirs) {
  char *tmp, *root;
  bri_fixture_table("tables/blobs.lance", &tmp, &root);
  bri_compact_request q;
  bri_compact_request_default(&q);
  q.strategy = BRI_STRATEGY_BRI;
  bri_compact_report rep;
  bri_error err = {0};
  ck_assert_msg(bri_compact_table(root, &q, NULL, &rep, &err) == 0, "%s", err.msg);
  json_decref(rep.plan);
  seen s = {0};
  walk_latest(root, &s);
  /* the Packed and Dedicated sidecars of the old files, now named by the BRI */
  ck_assert_uint_gt(s.n[BRI_REACH_BRI_SIDECAR], 0);
  ck_assert_uint_eq(s.n[BRI_REACH_BRI_DIR], s.n[BRI_REACH_BRI_SIDECAR]);
  for (size_t i = 0; i < s.n[BRI_REACH_BRI_SIDECAR]; i++) {
    const char *p = s.paths[BRI_REACH_BRI_SIDECAR][i], *d = s.paths[BRI_REACH_BRI_DIR][i];
    ck_assert_msg(is_kind(p, S_IFREG), "%s", p);
    ck_assert_msg(strlen(p) > 5 && !strcmp(p + strlen(p) - 5, ".blob"), "%s", p);
    ck_assert_uint_eq(strrchr(p, '/') - p, strlen(d)); /* its directory */
    ck_assert(!strncmp(p, d, strlen(d)) && is_kind(d, S_IFDIR));
    for (size_t k = 0; k < s.n[BRI_REACH_SIDECAR_DIR]; k++) /* an old file's, not the new one's */
      ck_assert_str_ne(d, s.paths[BRI_REACH_SIDECAR_DIR][k]);
  }
  seen_dispose(&s);
  bri_rmtree(tmp);
  free(tmp), free(root);
}
END_TEST

START_TEST(test_files_under_a_base_path) {
  char *tmp, *root;
  bri_fixture_table("tables/plain.lance", &tmp, &root);
  char *clone = bri_path_join(tmp, "clone.lance");
  bri_clone_options o = {0};
  bri_clone_report rep;
  bri_error err = {0};
  ck_assert_msg(bri_clone_table(root, clone, &o, NULL, &rep, &err) == 0, "%s", err.msg);
  seen s = {0};
  walk_latest(clone, &s);
  /* a shallow clone's files are the source's, reached through its base */
  char *real = realpath(root, NULL);
  ck_assert_uint_gt(s.n[BRI_REACH_DATA], 0);
  for (size_t i = 0; i < s.n[BRI_REACH_DATA]; i++)
    ck_assert_msg(bri_path_below(real, s.paths[BRI_REACH_DATA][i]) &&
                      is_kind(s.paths[BRI_REACH_DATA][i], S_IFREG),
                  "%s", s.paths[BRI_REACH_DATA][i]);
  ck_assert_uint_eq(s.n[BRI_REACH_INDEX_DIR], 1);
  ck_assert(bri_path_below(real, s.paths[BRI_REACH_INDEX_DIR][0]));
  /* its own transaction file is the clone's */
  ck_assert_uint_eq(s.n[BRI_REACH_TRANSACTION], 1);
  ck_assert(bri_path_below(clone, s.paths[BRI_REACH_TRANSACTION][0]));
  seen_dispose(&s);
  free(real), free(clone);
  bri_rmtree(tmp);
  free(tmp), free(root);
}
END_TEST

static Suite *reach_suite(void) {
  Suite *s = suite_create("reach");
  TCase *tc = tcase_create("reach");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_plain_table_every_kind);
  tcase_add_test(tc, test_bri_sidecars_and_their_dirs);
  tcase_add_test(tc, test_files_under_a_base_path);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(reach_suite)
