/* managed.c: the objects Managed descriptors name (see managed.h).
 *
 * Per fragment the objects are collected once, deduplicated (every row of
 * a pack names the same object), and kept under the fragment's key: its
 * data files' paths and its deletion file's, which is what decides the
 * rows read. A later version holding the same fragment gets the list
 * again without a read. */
#include "blob/managed.h"

#include <stdlib.h>
#include <string.h>

#include "blob/resolve.h"
#include "blob/walk.h"
#include "util/fsutil.h"
#include "util/strbuf.h"
#include "util/strmap.h"

typedef struct objects {
  char **paths;
  size_t n, cap;
} objects;

struct bri_managed_refs {
  bri_strmap by_fragment; /* fragment key -> index into lists */
  objects *lists;
  size_t n_lists;
};

int bri_managed_refs_new(bri_managed_refs **out, bri_error *err) {
  *out = calloc(1, sizeof **out);
  return *out ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
}

static void objects_dispose(objects *o) {
  for (size_t i = 0; i < o->n; i++) free(o->paths[i]);
  free(o->paths);
}

void bri_managed_refs_free(bri_managed_refs *c) {
  if (!c) return;
  for (size_t i = 0; i < c->n_lists; i++) objects_dispose(&c->lists[i]);
  free(c->lists);
  bri_strmap_dispose(&c->by_fragment);
  free(c);
}

/* One fragment's walk: the resolvers of its data files, the callback. */
typedef struct frag_walk {
  const bri_table *t;
  const bri_manifest *bm;
  const Lance__Table__DataFragment *f;
  bri_blob_resolver **res; /* per data file, opened on demand */
  bri_managed_fn fn;
  void *ctx;
} frag_walk;

static int visit(void *ctx, long fi, const Lance__Table__DataFile *df, const bri_blob_desc *d, uint64_t row,
                 bri_error *err) {
  (void)fi, (void)row;
  frag_walk *w = ctx;
  if (d->kind != BRI_BLOB_MANAGED && d->kind != BRI_BLOB_MANAGED_BASE) return 0;
  size_t k = 0;
  while (k < w->f->n_files && w->f->files[k] != df) k++;
  if (k == w->f->n_files)
    return bri_error_set(err, BRI_ECORRUPT, "%s: fragment %llu: a blob value's data file is not the fragment's",
                         w->t->root, (unsigned long long)w->f->id);
  int rc = w->res[k] ? 0 : bri_blob_resolver_open(w->t, w->bm->pb, df, &w->res[k], err);
  char *path = NULL;
  if (!rc) rc = bri_blob_managed_path(w->res[k], d, &path, err);
  if (!rc) rc = w->fn(w->ctx, d, path, err);
  free(path);
  return rc;
}

int bri_managed_fragment(const bri_table *t, const bri_manifest *bm, const Lance__Table__DataFragment *f,
                         bri_managed_fn fn, void *ctx, bri_error *err) {
  frag_walk w = {t, bm, f, calloc(f->n_files + 1, sizeof *w.res), fn, ctx};
  int rc = w.res ? bri_blob_walk_fragment(t, bm, f, visit, &w, err) : bri_error_set(err, BRI_ENOMEM, "out of memory");
  for (size_t k = 0; w.res && k < f->n_files; k++) bri_blob_resolver_close(w.res[k]);
  free(w.res);
  return rc;
}

/* Collects one fragment's objects, each once. */
typedef struct collect {
  objects *found;
  bri_strmap seen; /* paths already in found */
} collect;

static int add_object(void *ctx, const bri_blob_desc *d, const char *path, bri_error *err) {
  (void)d;
  collect *c = ctx;
  if (bri_strmap_get(&c->seen, path)) return 0;
  objects *o = c->found;
  if (o->n == o->cap) {
    size_t cap = o->cap ? 2 * o->cap : 8;
    char **g = realloc(o->paths, cap * sizeof *g);
    if (!g) return bri_error_set(err, BRI_ENOMEM, "out of memory");
    o->paths = g, o->cap = cap;
  }
  char *p = strdup(path);
  if (!p) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  o->paths[o->n++] = p;
  return bri_strmap_put(&c->seen, path, 0, 0) ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
}

/* The key of fragment f: what decides which descriptors its rows show. */
static char *fragment_key(const bri_table *t, const bri_manifest *bm, const Lance__Table__DataFragment *f,
                          bri_error *err) {
  bri_strbuf k = BRI_STRBUF_INIT;
  char *p = NULL;
  int rc = 0;
  for (size_t i = 0; i < f->n_files && !rc; i++) {
    if (!(rc = bri_table_datafile_path(t, bm->pb, f->files[i], &p, err))) bri_strbuf_printf(&k, "%s|", p);
    free(p);
  }
  if (!rc && f->deletion_file && !(rc = bri_table_deletion_path(t, bm->pb, f, &p, err))) {
    bri_strbuf_puts(&k, p);
    free(p);
  }
  if (rc) {
    bri_strbuf_clear(&k);
    return NULL;
  }
  char *out = bri_strbuf_take(&k);
  if (!out) bri_error_set(err, BRI_ENOMEM, "out of memory");
  return out;
}

/* The objects fragment f names, read once (c->lists[*idx]). */
static int fragment_objects(bri_managed_refs *c, const bri_table *t, const bri_manifest *bm,
                            const Lance__Table__DataFragment *f, size_t *idx, bri_error *err) {
  char *key = fragment_key(t, bm, f, err);
  if (!key) return err && err->code ? err->code : BRI_ENOMEM;
  bri_strmap_entry *e = bri_strmap_get(&c->by_fragment, key);
  if (e) {
    *idx = (size_t)e->a;
    free(key);
    return 0;
  }
  objects *g = realloc(c->lists, (c->n_lists + 1) * sizeof *g);
  if (!g) {
    free(key);
    return bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  c->lists = g;
  objects *found = &c->lists[c->n_lists];
  memset(found, 0, sizeof *found);
  collect col = {found, {0}};
  int rc = bri_managed_fragment(t, bm, f, add_object, &col, err);
  bri_strmap_dispose(&col.seen);
  if (!rc && !bri_strmap_put(&c->by_fragment, key, c->n_lists, 0)) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  free(key);
  if (rc) {
    objects_dispose(found);
    return rc;
  }
  *idx = c->n_lists++;
  return 0;
}

int bri_managed_reach(bri_managed_refs *c, const bri_table *t, const bri_manifest *bm, bri_reach_fn fn,
                      void *user, bri_error *err) {
  if (!bri_manifest_blobs_managed(bm->pb)) return 0;
  int rc = 0;
  for (size_t i = 0; i < bm->pb->n_fragments && !rc; i++) {
    size_t idx = 0;
    if ((rc = fragment_objects(c, t, bm, bm->pb->fragments[i], &idx, err)) != 0) {
      bri_error_wrap(err, "%s: the Managed blobs of version %llu cannot be listed", t->root,
                     (unsigned long long)bm->pb->version);
      break;
    }
    const objects *o = &c->lists[idx];
    for (size_t k = 0; k < o->n && !rc; k++) rc = fn(user, BRI_REACH_MANAGED, o->paths[k], err);
  }
  return rc;
}
