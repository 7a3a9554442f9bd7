/* svc_discover.c: the walk of one root that finds its tables, on any store
 * (see svc_discover.h). One walk lists every level through the store; a
 * way per kind of store (discover_way) says how a directory is told to be a
 * table, which directories are named to the caller, how deep it lists, and
 * what is settled once the listing ends. */
#include "svc_discover.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bri/table.h"
#include "bri/util.h"
#include "brid/1_leaves/svc_log.h"

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

/* The latest version of a table whose _versions/ starts with first (a
 * name that is not a V2 manifest's: the whole listing decides). */
static svc_found_kind latest_of(bri_store *st, const char *vdir, const char *first, uint64_t *version) {
  bri_naming scheme;
  if (bri_version_parse_name(first, version, &scheme) == 1 && scheme == BRI_NAMING_V2) return SVC_FOUND_TABLE;
  bri_version_entry *v = NULL;
  size_t n = 0;
  bri_error err;
  if (bri_versions_list(st, vdir, &v, &n, &scheme, &err) != 0) return SVC_FOUND_UNKNOWN;
  svc_found_kind k = n ? SVC_FOUND_TABLE : SVC_FOUND_UNKNOWN;
  if (n) *version = v[n - 1].version;
  bri_versions_free(v, n);
  return k;
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
  if (!rc) rc = bri_store_list_first_many(w->st, l, w->n, 0, 1, err);
  for (size_t i = 0; !rc && i < w->n; i++) {
    svc_found f = {.path = w->cands[i], .kind = SVC_FOUND_UNKNOWN};
    if (l[i].rc) {
      log_debug("%s: cannot list: %s", vdirs[i], l[i].err.msg);
      w->sink->table(w->sink->ctx, &f);
    } else if (l[i].count) {
      f.kind = latest_of(w->st, vdirs[i], l[i].entries[0].name, &f.version);
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

int svc_discover_walk(const char *root, int max_depth, const svc_discover_sink *sink, bri_error *err) {
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
