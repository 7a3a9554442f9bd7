/* reach.c: the references of one manifest (see reach.h). Paths come from
 * the same resolvers readers use (bri_table_*_path, bri_table_bri_paths),
 * so the walk cannot name a file other than the one a reader opens. */
#include "lance/table/reach.h"

#include <stdlib.h>
#include <string.h>

#include "lance/table/bri.h"
#include "util/fsutil.h"

const char *bri_reach_kind_name(bri_reach_kind k) {
  static const char *names[] = {"data", "sidecar-dir", "bri-sidecar", "bri-dir",
                                "deletion", "transaction", "index-dir", "managed"};
  return k <= BRI_REACH_MANAGED ? names[k] : "?";
}

typedef struct walk {
  bri_reach_fn fn;
  void *user;
  bri_error *err;
  int rc; /* the callback's, when it stopped a BRI walk */
} walk;

/* Hands a malloc'd path to the callback and frees it. */
static int emit(walk *w, bri_reach_kind kind, char *path) {
  int rc = w->fn(w->user, kind, path, w->err);
  free(path);
  return rc;
}

static int bri_cb(void *user, const char *path) {
  walk *w = user;
  const char *slash = strrchr(path, '/');
  char *dir = slash ? strndup(path, (size_t)(slash - path)) : NULL;
  char *p = strdup(path);
  if (!p || (slash && !dir)) {
    free(p), free(dir);
    w->rc = bri_error_set(w->err, BRI_ENOMEM, "out of memory");
    return w->rc;
  }
  int rc = emit(w, BRI_REACH_BRI_SIDECAR, p);
  if (!rc && dir) rc = emit(w, BRI_REACH_BRI_DIR, dir);
  else free(dir);
  return w->rc = rc;
}

int bri_reach_manifest(const bri_table *t, const bri_manifest *bm, bri_reach_fn fn, void *user,
                       bri_error *err) {
  const Lance__Table__Manifest *m = bm->pb;
  walk w = {fn, user, err, 0};
  char *p = NULL;
  int rc = 0;
  for (size_t i = 0; i < m->n_fragments && !rc; i++) {
    const Lance__Table__DataFragment *f = m->fragments[i];
    for (size_t k = 0; k < f->n_files && !rc; k++) {
      const Lance__Table__DataFile *df = f->files[k];
      if (!(rc = bri_table_datafile_path(t, m, df, &p, err))) rc = emit(&w, BRI_REACH_DATA, p);
      if (!rc && !(rc = bri_table_sidecar_dir(t, m, df, &p, err)))
        rc = emit(&w, BRI_REACH_SIDECAR_DIR, p);
      if (!rc && (rc = bri_table_bri_paths(t, m, df, bm->path, bri_cb, &w, err)) && w.rc)
        rc = w.rc; /* the callback's own code, not the BRI walk's */
    }
    if (!rc && f->deletion_file && !(rc = bri_table_deletion_path(t, m, f, &p, err)))
      rc = emit(&w, BRI_REACH_DELETION, p);
  }
  if (!rc && m->transaction_file && *m->transaction_file) {
    p = bri_strdupf("%s/_transactions/%s", t->root, m->transaction_file);
    rc = p ? emit(&w, BRI_REACH_TRANSACTION, p) : bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  for (size_t i = 0; !rc && bm->indices && i < bm->indices->n_indices; i++)
    if (!(rc = bri_table_index_dir(t, m, bm->indices->indices[i], &p, err)))
      rc = emit(&w, BRI_REACH_INDEX_DIR, p);
  return rc;
}
