/* refs.c: prints what every version of a table references, one path a line,
 * for the reliability scripts' "no file of a crashed attempt is left" check
 * (tests/reliability/orphans.py compares it with the files on disk).
 *
 *   refs TABLE
 *
 * For each manifest in _versions/ (every version, whatever its age or tags:
 * the retention decision is the caller's), in version order:
 *   V <version>
 *   F <data file>        D <its own sidecar directory>
 *   B <sidecar a BRI names>
 *   X <deletion file>    T <transaction file>    I <index directory>
 * Paths are absolute as libbri resolves them (base paths included), from
 * the one walk cleanup and brid's recovery use (lance/table/reach.h). A
 * manifest that cannot be read is an error (exit 2): the check must not pass
 * by skipping a version. Built by the scripts themselves against the
 * libbri.a under test (no Makefile rule needed). */
#include <stdio.h>

#include "lance/table/reach.h"
#include "lance/table/table.h"

/* One letter per kind of reference; the directory holding a BRI'd sidecar
 * is implied by its B line (orphans.py derives it). */
static int print_ref(void *user, bri_reach_kind kind, const char *path, bri_error *err) {
  (void)user, (void)err;
  static const char letter[] = {[BRI_REACH_DATA] = 'F', [BRI_REACH_SIDECAR_DIR] = 'D',
                                [BRI_REACH_BRI_SIDECAR] = 'B', [BRI_REACH_DELETION] = 'X',
                                [BRI_REACH_TRANSACTION] = 'T', [BRI_REACH_INDEX_DIR] = 'I'};
  if (kind != BRI_REACH_BRI_DIR) printf("%c %s\n", letter[kind], path);
  return 0;
}

static int one(bri_table *t, uint64_t v, bri_error *err) {
  bri_manifest *bm;
  int rc = bri_table_load(t, v, &bm, err);
  if (rc) return rc;
  printf("V %llu\n", (unsigned long long)v);
  rc = bri_reach_manifest(t, bm, print_ref, NULL, err);
  bri_manifest_free(bm);
  return rc;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: refs TABLE\n");
    return 1;
  }
  bri_table *t = NULL;
  bri_error err = {0};
  int rc = bri_table_open(argv[1], &t, &err);
  for (size_t i = 0; !rc && i < t->n_versions; i++) rc = one(t, t->versions[i].version, &err);
  if (t) bri_table_close(t);
  if (rc) {
    fprintf(stderr, "refs: %s\n", err.msg);
    return 2;
  }
  return 0;
}
