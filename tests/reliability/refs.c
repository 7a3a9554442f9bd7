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
 * Paths are absolute as libbri resolves them (base paths included). A
 * manifest that cannot be read is an error (exit 2): the check must not pass
 * by skipping a version. Built by the scripts themselves against the
 * libbri.a under test (no Makefile rule needed). */
#include <stdio.h>
#include <stdlib.h>

#include "lance/table/bri.h"
#include "lance/table/table.h"
#include "util/fsutil.h"

static int print_bri(void *user, const char *path) {
  (void)user;
  printf("B %s\n", path);
  return 0;
}

static int one(bri_table *t, uint64_t v, bri_error *err) {
  bri_manifest *bm;
  int rc = bri_table_load(t, v, &bm, err);
  if (rc) return rc;
  const Lance__Table__Manifest *m = bm->pb;
  printf("V %llu\n", (unsigned long long)v);
  for (size_t i = 0; !rc && i < m->n_fragments; i++) {
    const Lance__Table__DataFragment *f = m->fragments[i];
    for (size_t k = 0; !rc && k < f->n_files; k++) {
      char *p = NULL, *d = NULL;
      if (!(rc = bri_table_datafile_path(t, m, f->files[k], &p, err)) &&
          !(rc = bri_table_sidecar_dir(t, m, f->files[k], &d, err))) {
        printf("F %s\nD %s\n", p, d);
        rc = bri_datafile_bri_paths(t, m, f->files[k], bm->path, print_bri, NULL, err);
      }
      free(p), free(d);
    }
    if (!rc && f->deletion_file) {
      char *p = NULL;
      if (!(rc = bri_table_deletion_path(t, m, f, &p, err))) printf("X %s\n", p);
      free(p);
    }
  }
  if (!rc && m->transaction_file && *m->transaction_file)
    printf("T %s/_transactions/%s\n", t->root, m->transaction_file);
  for (size_t i = 0; !rc && bm->indices && i < bm->indices->n_indices; i++) {
    char *d = NULL;
    if (!(rc = bri_table_index_dir(t, m, bm->indices->indices[i], &d, err))) printf("I %s\n", d);
    free(d);
  }
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
