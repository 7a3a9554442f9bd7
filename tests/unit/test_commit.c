/* test_commit.c: committing a version: naming, transaction file identical to
 * the embedded transaction, writer version, flags, fragment ids, hint file,
 * and put-if-not-exists (a taken version is a conflict and nothing is
 * overwritten or left behind). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lance/table/commit.h"
#include "lance/table/flags.h"
#include "lance/table/table.h"
#include "testutil.h"
#include "util/fsutil.h"

static char *tmp, *root;

static void setup(void) {
  tmp = bri_tmpdir();
  root = bri_path_join(tmp, "t.lance");
  char *src = bri_fixture("tables/plain.lance");
  bri_copytree(src, root);
  free(src);
}

static void teardown(void) {
  bri_rmtree(tmp);
  free(tmp), free(root);
}

static int count_tmp_files(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) n += strncmp(e->d_name, ".tmp", 4) == 0;
  closedir(d);
  return n;
}

START_TEST(test_commit_next_version) {
  bri_table *t;
  bri_error err;
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  uint64_t v = bri_table_latest_version(t);
  bri_manifest *before;
  ck_assert_int_eq(bri_table_load(t, v, &before, &err), 0);
  char *hint = bri_strdupf("%s/_versions/latest_version_hint.json", root);
  size_t hl;
  uint8_t *h0 = bri_slurp(hint, &hl);
  ck_assert_msg(bri_commit_reserve(t, v + 1, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(bri_table_latest_version(t), v + 1);
  char *name = bri_version_file_name(v + 1, BRI_NAMING_V2);
  char *path = bri_strdupf("%s/_versions/%s", root, name);
  bri_manifest *m;
  ck_assert_msg(bri_manifest_read(NULL, path, &m, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(m->pb->version, v + 1);
  ck_assert_str_eq(m->pb->writer_version->library, BRI_WRITER_LIBRARY);
  ck_assert_uint_eq(m->pb->max_fragment_id, before->pb->max_fragment_id + 1);
  ck_assert_uint_eq(m->pb->n_fragments, before->pb->n_fragments);
  ck_assert_uint_eq(m->pb->reader_feature_flags, before->pb->reader_feature_flags);
  ck_assert_ptr_nonnull(m->indices); /* the index section is carried over */
  ck_assert_ptr_nonnull(m->txn);
  ck_assert_uint_eq(m->txn->read_version, v);
  ck_assert_int_eq(m->txn->operation_case, LANCE__TABLE__TRANSACTION__OPERATION_RESERVE_FRAGMENTS);
  /* the .txn file holds exactly the embedded transaction */
  char *tfile = bri_strdupf("%s/_transactions/%s", root, m->pb->transaction_file);
  char *want = bri_strdupf("%llu-%s.txn", (unsigned long long)v, m->txn->uuid);
  ck_assert_str_eq(m->pb->transaction_file, want);
  size_t tlen;
  uint8_t *tbytes = bri_slurp(tfile, &tlen);
  uint8_t *emb = malloc(tlen + 1);
  ck_assert_uint_eq(lance__table__transaction__pack(m->txn, emb), tlen);
  ck_assert_mem_eq(emb, tbytes, tlen);
  /* a local table's hint is left to Lance (docs/format/table.md 3) */
  uint8_t *h = bri_slurp(hint, &hl);
  ck_assert_str_eq((char *)h, (char *)h0);
  char *vdir = bri_path_join(root, "_versions");
  ck_assert_int_eq(count_tmp_files(vdir), 0);
  free(name), free(path), free(tfile), free(want), free(tbytes), free(emb), free(hint), free(h), free(h0), free(vdir);
  bri_manifest_free(m);
  bri_manifest_free(before);
  bri_table_close(t);
}
END_TEST

START_TEST(test_conflict_never_overwrites) {
  bri_table *t;
  bri_error err;
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  uint64_t v = bri_table_latest_version(t);
  char *path = bri_table_manifest_path(t, v);
  size_t len;
  uint8_t *orig = bri_slurp(path, &len);
  int rc = bri_commit_reserve(t, v, &err); /* version v is taken */
  ck_assert_int_eq(rc, BRI_ETAKEN);
  ck_assert_msg(strstr(err.msg, "committed by another writer") != NULL, "%s", err.msg);
  size_t len2;
  uint8_t *now = bri_slurp(path, &len2);
  ck_assert_uint_eq(len, len2);
  ck_assert_mem_eq(orig, now, len);
  char *vdir = bri_path_join(root, "_versions");
  ck_assert_int_eq(count_tmp_files(vdir), 0);
  ck_assert_uint_eq(bri_table_latest_version(t), v);
  free(path), free(orig), free(now), free(vdir);
  bri_table_close(t);
}
END_TEST

START_TEST(test_fragment_ids_and_flags) {
  Lance__Table__Manifest m = LANCE__TABLE__MANIFEST__INIT;
  Lance__Table__DataFragment a, b, c;
  lance__table__data_fragment__init(&a);
  lance__table__data_fragment__init(&b);
  lance__table__data_fragment__init(&c);
  a.id = 4;
  Lance__Table__DataFragment *old[] = {&a};
  m.fragments = old, m.n_fragments = 1;
  m.has_max_fragment_id = 1, m.max_fragment_id = 9; /* ids 5..9 were used before */
  Lance__Table__DataFragment *fresh[] = {&b, &c};
  bri_manifest_assign_fragment_ids(&m, fresh, 2);
  ck_assert_uint_eq(b.id, 10);
  ck_assert_uint_eq(c.id, 11);
  ck_assert_uint_eq(m.max_fragment_id, 11);
  Lance__Table__DeletionFile d = LANCE__TABLE__DELETION_FILE__INIT;
  a.deletion_file = &d;
  m.reader_feature_flags = m.writer_feature_flags = BRI_FLAG_BLOB_REUSE_INDEX; /* stale */
  bri_manifest_derive_flags(&m);
  ck_assert_uint_eq(m.reader_feature_flags, BRI_FLAG_DELETION_FILES);
  ck_assert_uint_eq(m.writer_feature_flags, BRI_FLAG_DELETION_FILES);
  /* sticky: mixed_data_file_versions stays, in both words, with no content deriving it */
  m.reader_feature_flags |= BRI_FLAG_MIXED_DATA_FILE_VERSIONS;
  m.writer_feature_flags |= BRI_FLAG_MIXED_DATA_FILE_VERSIONS;
  a.deletion_file = NULL;
  bri_manifest_derive_flags(&m);
  ck_assert_uint_eq(m.reader_feature_flags, BRI_FLAG_MIXED_DATA_FILE_VERSIONS);
  ck_assert_uint_eq(m.writer_feature_flags, BRI_FLAG_MIXED_DATA_FILE_VERSIONS);
}
END_TEST

/* Every commit lists fragments in id order, as Lance's build_manifest does;
 * a manifest that breaks one of Lance's invariants is refused with the rule
 * named, and nothing is written. */
START_TEST(test_sorted_and_refused) {
  bri_table *t;
  bri_error err;
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  uint64_t v = bri_table_latest_version(t);
  bri_manifest *m;
  ck_assert_int_eq(bri_table_load(t, v, &m, &err), 0);
  ck_assert_uint_ge(m->pb->n_fragments, 3);
  Lance__Table__DataFragment **f = m->pb->fragments, *first = f[0];
  f[0] = f[2], f[2] = first; /* out of order: sorted on the way out */
  Lance__Table__Transaction txn = LANCE__TABLE__TRANSACTION__INIT;
  Lance__Table__Transaction__ReserveFragments rf = LANCE__TABLE__TRANSACTION__RESERVE_FRAGMENTS__INIT;
  txn.operation_case = LANCE__TABLE__TRANSACTION__OPERATION_RESERVE_FRAGMENTS;
  txn.reserve_fragments = &rf;
  txn.has_read_version = 1, txn.read_version = v;
  ck_assert_msg(bri_commit(t, m->pb, &txn, m->indices, v + 1, NULL, &err) == 0, "%s", err.msg);
  free(txn.uuid), txn.uuid = NULL;
  bri_manifest *c;
  ck_assert_int_eq(bri_table_load(t, v + 1, &c, &err), 0);
  for (size_t i = 1; i < c->pb->n_fragments; i++) ck_assert_uint_lt(c->pb->fragments[i - 1]->id, c->pb->fragments[i]->id);
  bri_manifest_free(c);
  /* a fragment above the high-water mark: refused, nothing written */
  char *before = bri_tree_listing(root);
  m->pb->fragments[0]->id = m->pb->max_fragment_id + 7;
  m->pb->max_fragment_id = 0, m->pb->has_max_fragment_id = 1;
  int rc = bri_commit(t, m->pb, &txn, m->indices, v + 2, NULL, &err);
  ck_assert_int_eq(rc, BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "refusing to commit version") && strstr(err.msg, "rule max-fragment-id: fragment"),
                "%s", err.msg);
  char *after = bri_tree_listing(root);
  ck_assert_str_eq(before, after);
  ck_assert_uint_eq(bri_table_latest_version(t), v + 1);
  free(txn.uuid);
  free(before), free(after);
  bri_manifest_free(m);
  bri_table_close(t);
}
END_TEST

static Suite *commit_suite(void) {
  Suite *s = suite_create("commit");
  TCase *tc = tcase_create("commit");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_commit_next_version);
  tcase_add_test(tc, test_conflict_never_overwrites);
  tcase_add_test(tc, test_fragment_ids_and_flags);
  tcase_add_test(tc, test_sorted_and_refused);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(commit_suite)
