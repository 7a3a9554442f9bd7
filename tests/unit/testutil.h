/* testutil.h: shared scaffolding for brid's Check unit tests.
 *
 * Each tests/unit/test_*.c is its own executable: it defines one Suite
 * factory and ends with BRI_TEST_MAIN(factory). Fixtures live under
 * tests/fixtures; bri_fixture() builds their path from BRI_SOURCE_DIR (set by
 * scripts/run-tests.sh) so that tests run from any working directory. */
#ifndef BRI_TESTUTIL_H
#define BRI_TESTUTIL_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

#include "lance/table/table.h"
#include "util/error.h"

/* Path of tests/fixtures/<rel> (malloc'd). */
char *bri_fixture(const char *rel);

/* Creates a fresh empty temporary directory (malloc'd path) and removes it
 * recursively with bri_rmtree. */
char *bri_tmpdir(void);
void bri_rmtree(const char *path);

/* Copies a directory tree (used to get a writable copy of a fixture table). */
void bri_copytree(const char *src, const char *dst);

/* Writes bytes to a file, failing the test on error. */
void bri_write_bytes(const char *path, const void *data, size_t len);

/* Reads a whole file, failing the test on error (malloc'd, *len set). */
uint8_t *bri_slurp(const char *path, size_t *len);

/* A fresh temp directory (*tmp) holding a copy of fixture `name` at
 * *tmp/t.lance (*root). The copy's files are dated 2020-01-01: a fresh
 * checkout dates them "now", which cleanup rightly treats as possibly in
 * flight. Free with bri_rmtree(*tmp) and free(). */
void bri_fixture_table(const char *name, char **tmp, char **root);

/* Every path under dir with its size and type, sorted (for "nothing
 * changed" assertions). malloc'd. */
char *bri_tree_listing(const char *dir);

/* FNV-1a of bytes (cheap fingerprints in tests). */
uint64_t bri_fnv1a(const uint8_t *p, size_t n);

/* Commits "reserve one fragment id" on top of t's latest version, as
 * LanceDB's optimize() does before a rewrite, under the name `version`
 * (bri_commit's result: BRI_ETAKEN when that version exists). */
int bri_commit_reserve(bri_table *t, uint64_t version, bri_error *err);

/* n pseudo-random bytes from seed (malloc'd): payloads whose every byte
 * matters when compared after a round trip. */
uint8_t *bri_pattern(size_t n, unsigned seed);

/* "<root>/<rel>" in one of four rotating static buffers (so that a call may
 * take up to four of them): a store path under a test's root. */
char *bri_test_at(const char *root, const char *rel);

int bri_run_suite(Suite *s);

#define BRI_TEST_MAIN(factory) \
  int main(void) { return bri_run_suite(factory()); }

#endif
