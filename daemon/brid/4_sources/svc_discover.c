/* svc_discover.c: a discovery off the loop (see svc_discover.h): the walk
 * of one root, on any store, and the registration of what the walks found.
 * One walk lists every level through the store; a way per kind of store
 * (discover_way) says how a directory is told to be a table, which
 * directories are named to the caller, how deep it lists, and what is
 * settled once the listing ends. */
#include "svc_discover.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bri/table.h"
#include "bri/util.h"
#include "brid/1_leaves/svc_log.h"
#include "svc_roots.h"

/* What the walk found at a path. */
typedef enum {
  SVC_FOUND_TABLE,   /* a table */
  SVC_FOUND_UNKNOWN, /* an object store's NAME.lance prefix whose _versions/ could not be listed now */
} svc_found_kind;

typedef struct svc_found {
  const char *path;
  svc_found_kind kind;
  bool has_version;   /* an object store's table: version is its latest */
  uint64_t version;
  int64_t changed_ms; /* when its _versions/ last changed (local: its mtime) or its latest
                         manifest was written (object stores: LastModified, to the second); 0
                         when not known */
} svc_found;

/* Where the walk tells what it found, on the walk's thread. */
typedef struct svc_discover_sink {
  void (*table)(void *ctx, const svc_found *found);
  void (*dir)(void *ctx, const char *path); /* a local directory that is no table */
  void *ctx;
} svc_discover_sink;

typedef struct walk walk;

/* How a kind of store tells its tables. */
typedef struct discover_way {
  /* Whether the directory at path (name: its last component; the root's
   * whole path) is a table, or a candidate the way settles at the end;
   * *table says so. Fails only out of memory. */
  int (*tell)(walk *w, const char *path, const char *name, bool *table, bri_error *err);
  bool names_dirs;        /* every other directory passed goes to the sink (local: watched) */
  bool lists_max_depth;   /* directories at max_depth are listed too, not only above it */
  bool lists_table_root;  /* a root that is a table is listed all the same */
  int (*settle)(walk *w, bri_error *err); /* after the listing, when it did not fail (or NULL) */
} discover_way;

struct walk {
  bri_store *st;
  const discover_way *way;
  const svc_discover_sink *sink;
  int max_depth;
  char **cands; /* object stores: NAME.lance prefixes, tables if they hold a version */
  size_t n, cap;
};

/* ----------------------------------------------------------- local roots */

/* Whether dir holds a _versions/ directory; *changed_ms is when its entries
 * last changed (a commit, a cleanup), from its mtime. */
static bool has_versions_dir(const char *dir, int64_t *changed_ms) {
  char p[PATH_MAX];
  struct stat st;
  if (snprintf(p, sizeof p, "%s/_versions", dir) >= (int)sizeof p || stat(p, &st) != 0 || !S_ISDIR(st.st_mode))
    return false;
  *changed_ms = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
  return true;
}

static int tell_by_versions_dir(walk *w, const char *path, const char *name, bool *table, bri_error *err) {
  (void)name, (void)err;
  int64_t changed_ms;
  if ((*table = has_versions_dir(path, &changed_ms)))
    w->sink->table(w->sink->ctx, &(svc_found){.path = path, .kind = SVC_FOUND_TABLE, .changed_ms = changed_ms});
  return 0;
}

static const discover_way local_way = {.tell = tell_by_versions_dir, .names_dirs = true};

/* ---------------------------------------------------- object-store roots */

static bool table_name(const char *name) {
  size_t n = strlen(name);
  return n > 6 && !strcmp(name + n - 6, ".lance");
}

static int tell_by_name(walk *w, const char *path, const char *name, bool *table, bri_error *err) {
  if (!(*table = table_name(name))) return 0;
  if (w->n == w->cap) {
    size_t cap = w->cap ? w->cap * 2 : 64;
    char **a = realloc(w->cands, cap * sizeof *a);
    if (!a) return bri_error_set(err, BRI_ENOMEM, "out of memory");
    w->cands = a, w->cap = cap;
  }
  if (!(w->cands[w->n] = strdup(path))) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  w->n++;
  return 0;
}

/* The latest version of a table whose _versions/ starts with entry first
 * (listed with its LastModified), and, when first is that version, when it
 * was written; a name that is not a V2 manifest's: the whole listing
 * decides which is the latest. */
static svc_found_kind latest_of(bri_store *st, const char *vdir, const bri_store_entry *first, uint64_t *version,
                                int64_t *changed_ms) {
  bri_naming scheme;
  uint64_t first_version = 0;
  bool named = bri_version_parse_name(first->name, &first_version, &scheme) == 1;
  *version = first_version;
  if (!named || scheme != BRI_NAMING_V2) {
    bri_version_entry *v = NULL;
    size_t n = 0;
    bri_error err;
    if (bri_versions_list(st, vdir, &v, &n, &scheme, &err) != 0 || !n) {
      bri_versions_free(v, n);
      return SVC_FOUND_UNKNOWN;
    }
    *version = v[n - 1].version;
    bri_versions_free(v, n);
  }
  if (named && first_version == *version) *changed_ms = first->info.mtime_ns / 1000000;
  return SVC_FOUND_TABLE;
}

/* The first entry of every candidate's _versions/, in one batch: those
 * holding one are tables (an empty or missing _versions/: not a table
 * yet), those that could not be listed are named as unknown. */
static int settle_candidates(walk *w, bri_error *err) {
  int rc = 0;
  bri_store_listing *l = calloc(w->n + 1, sizeof *l);
  char **vdirs = calloc(w->n + 1, sizeof *vdirs);
  if (!l || !vdirs) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  for (size_t i = 0; !rc && i < w->n; i++)
    if (!(l[i].dir = vdirs[i] = bri_path_join(w->cands[i], "_versions")))
      rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (!rc) rc = bri_store_list_first_many(w->st, l, w->n, BRI_LIST_STAT, 1, err);
  for (size_t i = 0; !rc && i < w->n; i++) {
    svc_found f = {.path = w->cands[i], .kind = SVC_FOUND_UNKNOWN};
    if (l[i].rc) {
      log_debug("%s: cannot list: %s", vdirs[i], l[i].err.msg);
      w->sink->table(w->sink->ctx, &f);
    } else if (l[i].count) {
      f.kind = latest_of(w->st, vdirs[i], &l[i].entries[0], &f.version, &f.changed_ms);
      f.has_version = f.kind == SVC_FOUND_TABLE;
      w->sink->table(w->sink->ctx, &f);
    }
  }
  for (size_t i = 0; i < w->n; i++) {
    if (l) bri_store_entries_free(l[i].entries, l[i].count);
    if (vdirs) free(vdirs[i]);
  }
  free(l), free(vdirs);
  return rc;
}

static const discover_way object_way = {
    .tell = tell_by_name, .lists_max_depth = true, .lists_table_root = true, .settle = settle_candidates};

/* ------------------------------------------------------------------ walk */

static int visit(walk *w, const char *path, const char *name, int depth, bri_error *err);

/* The directories one level below dir (depth levels below the root). */
static int list_level(walk *w, const char *dir, int depth, bri_error *err) {
  bri_store_entry *e = NULL;
  size_t n = 0;
  int rc = bri_store_list(w->st, dir, 0, &e, &n, err);
  for (size_t i = 0; !rc && i < n; i++) {
    if (e[i].info.kind != BRI_ENTRY_DIR || e[i].name[0] == '.') continue; /* hidden and staging directories */
    char *child = bri_path_join(dir, e[i].name);
    rc = child ? visit(w, child, e[i].name, depth + 1, err) : bri_error_set(err, BRI_ENOMEM, "out of memory");
    free(child);
  }
  if (e) bri_store_entries_free(e, n);
  return rc;
}

/* The directory at path, depth levels below the root: a table (whose
 * inside is the table's business), or a directory listed while above the
 * depth limit. A sub-level that cannot be listed is logged; the root's own
 * level fails the walk. */
static int visit(walk *w, const char *path, const char *name, int depth, bri_error *err) {
  bool table = false;
  int rc = w->way->tell(w, path, name, &table, err);
  if (rc || (table && (depth > 0 || !w->way->lists_table_root))) return rc;
  if (!table && w->way->names_dirs) w->sink->dir(w->sink->ctx, path);
  if (depth > w->max_depth || (depth == w->max_depth && !w->way->lists_max_depth)) return 0;
  if (depth == 0) return list_level(w, path, depth, err);
  bri_error sub;
  rc = list_level(w, path, depth, &sub);
  if (rc == BRI_ENOMEM) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (rc) log_warn("%s: cannot list: %s", path, sub.msg);
  return 0;
}

/* Walks root (a local root: its canonical path) down to max_depth levels,
 * in the order of the listings. Fails (nothing more found) when the root
 * itself cannot be listed. */
static int walk_root(const char *root, int max_depth, const svc_discover_sink *sink, bri_error *err) {
  walk w = {.sink = sink, .max_depth = max_depth};
  int rc = bri_store_open(root, 0, &w.st, err);
  if (rc) return rc;
  w.way = bri_store_caps(w.st) & BRI_STORE_CAP_POLL ? &object_way : &local_way;
  rc = visit(&w, root, root, 0, err);
  if (!rc && w.way->settle) rc = w.way->settle(&w, err);
  for (size_t i = 0; i < w.n; i++) free(w.cands[i]);
  free(w.cands);
  bri_store_close(w.st);
  return rc;
}

/* ------------------------------------------------------------- discovery */

/* A discovery registers new tables in the job store this many per
 * transaction, and hands each batch to the loop (which watches them and
 * plans their first check) while it walks on. */
#define REGISTER_BATCH 256

void svc_discovery_free(svc_discovery *r) {
  for (size_t i = 0; i < r->n_roots; i++) free(r->roots[i]), free(r->canon[i]), free(r->root_why[i]);
  free(r->roots), free(r->canon), free(r->root_rc), free(r->root_why);
  bri_strset_dispose(&r->known);
  pthread_mutex_destroy(&r->mu);
  for (size_t i = 0; i < r->n_tables; i++) free(r->tables[i].root);
  free(r->tables);
  for (size_t i = 0; i < r->n_dirs; i++) free(r->dirs[i]);
  free(r->dirs);
  free(r);
}

/* On the walk's thread: registers the new tables found since the last
 * batch in one transaction, and hands them to the loop. */
static void register_batch(svc_discovery *r) {
  size_t n = 0, end = r->n_tables;
  bri_error fp;
  (void)bri_failpoint("watch.register_batch", &fp);
  const char **roots = malloc((end - r->n_registered + 1) * sizeof *roots);
  bri_jobs_registered *got = calloc(end - r->n_registered + 1, sizeof *got);
  for (size_t i = r->n_registered; roots && i < end; i++)
    if (r->tables[i].fresh) roots[n++] = r->tables[i].root;
  bri_error err;
  int rc = roots && got ? bri_jobs_tables_register(r->store, roots, n, got, &err)
                        : bri_error_set(&err, BRI_ENOMEM, "out of memory");
  if (rc && n) log_err("%s and %zu other new table(s): cannot register them: %s", roots ? roots[0] : "?", n - 1, err.msg);
  for (size_t i = r->n_registered, k = 0; i < end; i++) {
    svc_discovered *t = &r->tables[i];
    if (!t->fresh) continue;
    t->failed = rc != 0;
    if (rc) continue;
    t->id = got[k].id, t->created = got[k].created;
    t->has_seen = got[k].has_seen_version, t->seen = got[k].last_seen_version;
    k++;
  }
  free(roots);
  free(got);
  r->n_registered = end;
  pthread_mutex_lock(&r->mu);
  r->n_published = end;
  pthread_mutex_unlock(&r->mu);
  if (r->stream) uv_async_send(&r->d->discovery_async);
}

/* A table the walk passed; registered in the store, in batches, when it is
 * new (a prefix an object-store walk could not tell about is only kept if
 * known). */
static void found_table(void *ctx, const svc_found *f) {
  svc_discovery *r = ctx;
  bool known = bri_strset_has(&r->known, f->path);
  if (f->kind == SVC_FOUND_UNKNOWN && !known) return;
  char *copy = strdup(f->path);
  if (!copy) return;
  pthread_mutex_lock(&r->mu); /* the loop may be reading the published tables */
  if (r->n_tables == r->cap_tables) {
    size_t cap = r->cap_tables ? r->cap_tables * 2 : 64;
    svc_discovered *a = realloc(r->tables, cap * sizeof *a);
    if (!a) {
      pthread_mutex_unlock(&r->mu);
      free(copy);
      return;
    }
    r->tables = a, r->cap_tables = cap;
  }
  svc_discovered *t = &r->tables[r->n_tables++];
  *t = (svc_discovered){.root = copy, .s3 = r->walking_polled, .has_version = f->has_version,
                        .version = f->version, .fresh = !known, .changed_ms = f->changed_ms};
  pthread_mutex_unlock(&r->mu);
  if (r->n_tables - r->n_registered >= REGISTER_BATCH) register_batch(r);
}

/* A directory with no table the walk passed (local roots): watched. */
static void found_dir(void *ctx, const char *path) {
  svc_discovery *r = ctx;
  if (r->n_dirs == r->cap_dirs) {
    size_t cap = r->cap_dirs ? r->cap_dirs * 2 : 16;
    char **a = realloc(r->dirs, cap * sizeof *a);
    if (!a) return;
    r->dirs = a, r->cap_dirs = cap;
  }
  if ((r->dirs[r->n_dirs] = strdup(path))) r->n_dirs++;
}

/* The location root i is walked at: an object-store root as configured, a
 * local one canonical (realpath) once it can be listed. */
static int walked_location(svc_discovery *r, size_t i, bri_error *err) {
  char *canon = NULL;
  int rc;
  if (r->walking_polled) rc = (canon = strdup(r->roots[i])) ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
  else if (!(rc = bri_store_location(r->roots[i], &canon, err))) rc = svc_roots_local_listable(canon, err);
  if (!rc) {
    free(r->canon[i]);
    r->canon[i] = canon;
    canon = NULL;
  }
  free(canon);
  return rc;
}

void svc_discovery_work(uv_work_t *req) {
  svc_discovery *r = req->data;
  const svc_discover_sink sink = {.table = found_table, .dir = found_dir, .ctx = r};
  for (size_t i = 0; i < r->n_roots; i++) {
    bri_error err = {0};
    r->walking_polled = svc_location_caps(r->roots[i]) & BRI_STORE_CAP_POLL;
    r->root_rc[i] = walked_location(r, i, &err);
    if (!r->root_rc[i]) r->root_rc[i] = walk_root(r->canon[i], r->depth, &sink, &err);
    if (r->root_rc[i]) {
      if (!r->root_err.code) r->root_err = err;
      r->root_why[i] = strdup(err.msg);
    }
  }
  register_batch(r);
}

/* The index of the walked root path lies under, or -1. */
ssize_t svc_discovery_root_of(const svc_discovery *r, const char *path) {
  for (size_t i = 0; i < r->n_roots; i++)
    if (svc_root_contains(r->canon[i], path)) return (ssize_t)i;
  return -1;
}

svc_discovery *svc_discovery_new(brid *d, svc_discover_scope scope, const char *only) {
  svc_discovery *r = calloc(1, sizeof *r);
  if (r) pthread_mutex_init(&r->mu, NULL); /* svc_discovery_free destroys it */
  size_t n = d->cfg.n_roots + 1;
  bool ok = r && (r->roots = calloc(n, sizeof *r->roots)) && (r->canon = calloc(n, sizeof *r->canon)) &&
            (r->root_rc = calloc(n, sizeof *r->root_rc)) && (r->root_why = calloc(n, sizeof *r->root_why));
  for (size_t i = 0; ok && i < d->cfg.n_roots; i++) {
    const char *root = d->cfg.roots[i];
    if (scope == SVC_DISCOVER_ONE ? strcmp(root, only) : scope == SVC_DISCOVER_LOCAL && !(svc_location_caps(root) & BRI_STORE_CAP_INOTIFY)) continue;
    const brid_root *st = svc_roots_find(d, root);
    ok = (r->roots[r->n_roots] = strdup(root)) != NULL &&
         (!st || !st->canon || (r->canon[r->n_roots] = strdup(st->canon)) != NULL);
    r->n_roots++;
  }
  for (size_t i = 0; ok && i < d->n_tables; i++) ok = bri_strset_add(&r->known, d->tables[i]->root);
  if (!ok) {
    if (r) svc_discovery_free(r);
    return NULL;
  }
  bri_strset_freeze(&r->known);
  r->req.data = r;
  r->d = d;
  r->store = d->store;
  r->depth = d->cfg.discovery_depth;
  r->all_local = scope != SVC_DISCOVER_ONE;
  r->full = scope == SVC_DISCOVER_ALL;
  return r;
}
