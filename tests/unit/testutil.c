/* testutil.c: fixture paths, temp directories and file helpers for the unit
 * tests (see testutil.h). Failures abort the current test through ck_abort. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lance/table/commit.h"
#include "util/fsutil.h"

char *bri_fixture(const char *rel) {
  const char *src = getenv("BRI_SOURCE_DIR");
  char *p = bri_strdupf("%s/tests/fixtures/%s", src ? src : ".", rel);
  ck_assert_ptr_nonnull(p);
  return p;
}

char *bri_tmpdir(void) {
  char tmpl[] = "/tmp/bri-test-XXXXXX";
  char *d = mkdtemp(tmpl);
  ck_assert_msg(d != NULL, "mkdtemp failed");
  return strdup(d);
}

static void run_or_abort(const char *cmd) {
  int rc = system(cmd);
  ck_assert_msg(rc == 0, "command failed (%d): %s", rc, cmd);
}

void bri_rmtree(const char *path) {
  char *cmd = bri_strdupf("rm -rf '%s'", path);
  run_or_abort(cmd);
  free(cmd);
}

void bri_copytree(const char *src, const char *dst) {
  char *cmd = bri_strdupf("cp -a '%s' '%s'", src, dst);
  run_or_abort(cmd);
  free(cmd);
}

void bri_write_bytes(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  ck_assert_msg(f != NULL, "cannot create %s", path);
  ck_assert_uint_eq(fwrite(data, 1, len, f), len);
  ck_assert_int_eq(fclose(f), 0);
}

uint8_t *bri_slurp(const char *path, size_t *len) {
  uint8_t *buf;
  bri_error err;
  int rc = bri_read_file(path, (size_t)1 << 32, &buf, len, &err);
  ck_assert_msg(rc == 0, "%s", err.msg);
  return buf;
}

void bri_fixture_table(const char *name, char **tmp, char **root) {
  *tmp = bri_tmpdir();
  *root = bri_path_join(*tmp, "t.lance");
  char *src = bri_fixture(name);
  bri_copytree(src, *root);
  free(src);
  char *cmd = bri_strdupf("find '%s' -exec touch -h -d 2020-01-01 {} +", *root);
  run_or_abort(cmd);
  free(cmd);
}

char *bri_tree_listing(const char *dir) {
  char *cmd = bri_strdupf("cd '%s' && find . -printf '%%p %%s %%y\\n' | sort", dir);
  FILE *f = popen(cmd, "r");
  ck_assert_msg(f != NULL, "cannot run %s", cmd);
  char *out = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&out, &len);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) fwrite(buf, 1, n, m);
  pclose(f);
  fclose(m);
  free(cmd);
  return out;
}

uint64_t bri_fnv1a(const uint8_t *p, size_t n) {
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}

int bri_run_suite(Suite *s) {
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

int bri_commit_reserve(bri_table *t, uint64_t version, bri_error *err) {
  bri_manifest *m;
  ck_assert_int_eq(bri_table_load(t, 0, &m, err), 0);
  Lance__Table__Transaction txn = LANCE__TABLE__TRANSACTION__INIT;
  Lance__Table__Transaction__ReserveFragments rf = LANCE__TABLE__TRANSACTION__RESERVE_FRAGMENTS__INIT;
  rf.has_num_fragments = 1, rf.num_fragments = 1;
  txn.read_version = m->pb->version, txn.has_read_version = 1;
  txn.operation_case = LANCE__TABLE__TRANSACTION__OPERATION_RESERVE_FRAGMENTS;
  txn.reserve_fragments = &rf;
  m->pb->max_fragment_id += 1;
  int rc = bri_commit(t, m->pb, &txn, m->indices, version, NULL, err);
  free(txn.uuid);
  bri_manifest_free(m);
  return rc;
}

char *bri_test_at(const char *root, const char *rel) {
  static char buf[4][768];
  static int i;
  i = (i + 1) % 4;
  snprintf(buf[i], sizeof buf[i], "%s/%s", root, rel);
  return buf[i];
}

uint8_t *bri_pattern(size_t n, unsigned seed) {
  uint8_t *p = malloc(n ? n : 1);
  ck_assert_ptr_nonnull(p);
  uint32_t x = seed * 2654435761u + 7;
  for (size_t i = 0; i < n; i++) {
    x = x * 1103515245u + 12345u;
    p[i] = (uint8_t)(x >> 16);
  }
  return p;
}
