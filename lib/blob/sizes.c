/* sizes.c: a cache of sidecar sizes and the damaged-source check (see
 * sizes.h).
 *
 * One map, path -> (size, exists), behind one mutex. A local store is asked
 * per file (a stat, never following a link; a negative answer is kept too).
 * An object store is asked per directory: the first miss in a directory
 * lists it with sizes (ListObjectsV2 carries them) and enters every object;
 * a path of a listed directory that is not in the map is missing. A
 * directory's total (the planner's payload of a data file, compact/fragsize.h)
 * comes from a listing of it on every store, kept per directory. A whole
 * tree may be listed first (bri_sidecar_sizes_prime: one listing without a
 * delimiter instead of one per directory below it); a directory below a
 * primed tree counts as listed. The lock
 * is not held while the store answers: two workers may then ask for the
 * same directory, and the second listing only finds its entries present.
 * A tree may also be listed on a thread of its own while the fragments are
 * read: a lookup below it waits for that listing. */
#include "blob/sizes.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/fsutil.h"
#include "util/strmap.h"

/* What the store found at a path. */
enum kind { MISSING = 0, REGULAR, LINK, OTHER };

struct bri_sidecar_sizes {
  pthread_mutex_t mu;
  pthread_cond_t primed; /* the pending tree's listing ended */
  bri_strmap files; /* path -> a: size, b: what is there (enum kind) */
  bri_strmap dirs;  /* directories listed (object stores; any store for their bytes) */
  bri_strmap dir_bytes; /* directory -> a: the bytes of the files directly in it, as listed */
  char **trees;     /* directories listed with everything below them */
  size_t n_trees;
  /* a tree being listed on its own thread (bri_sidecar_sizes_prime_start):
   * a lookup below it waits for the listing rather than list its directory */
  char *pending;
  bri_store *pending_store;
  size_t pending_pages;
  pthread_t lister;
  bool listing;
};

int bri_sidecar_sizes_new(bri_sidecar_sizes **out, bri_error *err) {
  *out = calloc(1, sizeof **out);
  if (!*out) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  pthread_mutex_init(&(*out)->mu, NULL);
  pthread_cond_init(&(*out)->primed, NULL);
  return 0;
}

void bri_sidecar_sizes_free(bri_sidecar_sizes *s) {
  if (!s) return;
  if (s->listing) pthread_join(s->lister, NULL);
  free(s->pending);
  pthread_cond_destroy(&s->primed);
  pthread_mutex_destroy(&s->mu);
  for (size_t i = 0; i < s->n_trees; i++) free(s->trees[i]);
  free(s->trees);
  bri_strmap_dispose(&s->files);
  bri_strmap_dispose(&s->dirs);
  bri_strmap_dispose(&s->dir_bytes);
  free(s);
}

/* Enters path (absent so far) under the lock; *added (may be NULL): it was. */
static int put_file(bri_sidecar_sizes *s, const char *path, uint64_t size, enum kind k, bool *added) {
  if (added) *added = false;
  if (bri_strmap_get(&s->files, path)) return 0;
  if (!bri_strmap_put(&s->files, path, size, k)) return -1;
  if (added) *added = true;
  return 0;
}

/* Adds bytes to directory dir's total (set: replaces it), under the lock. */
static int dir_bytes_add(bri_sidecar_sizes *s, const char *dir, uint64_t bytes, bool set) {
  bri_strmap_entry *e = bri_strmap_get(&s->dir_bytes, dir);
  if (!e && !(e = bri_strmap_put(&s->dir_bytes, dir, 0, 0))) return -1;
  e->a = set ? bytes : e->a + bytes;
  return 0;
}

int bri_sidecar_sizes_copied(bri_sidecar_sizes *s, const char *path, uint64_t bytes, bri_error *err) {
  pthread_mutex_lock(&s->mu);
  bri_strmap_entry *e = bri_strmap_get(&s->files, path);
  uint64_t was = e ? e->a : 0;
  bool changed = e && (e->b != REGULAR || e->a != bytes);
  pthread_mutex_unlock(&s->mu);
  if (!changed) return 0;
  return bri_error_set(err, BRI_ECORRUPT, "%s: had %llu bytes when checked, the copy found %llu; "
                       "refusing to carry damage into a new version", path,
                       (unsigned long long)was, (unsigned long long)bytes);
}

/* Lists dir with sizes and enters its regular files. */
static int list_dir(bri_sidecar_sizes *s, bri_store *st, const char *dir, bri_error *err) {
  bri_store_entry *e = NULL;
  size_t n = 0;
  int rc = bri_store_list(st, dir, BRI_LIST_STAT, &e, &n, err);
  if (rc == BRI_ENOTFOUND) rc = 0, n = 0; /* a missing directory: every sidecar of it is missing */
  if (rc) return rc;
  pthread_mutex_lock(&s->mu);
  uint64_t total = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    if (e[i].info.kind != BRI_ENTRY_FILE) continue;
    char *p = bri_path_join(dir, e[i].name);
    if (!p || put_file(s, p, e[i].info.size, REGULAR, NULL)) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    total += e[i].info.size;
    free(p);
  }
  if (!rc && ((!bri_strmap_get(&s->dirs, dir) && !bri_strmap_put(&s->dirs, dir, 0, 0)) ||
              dir_bytes_add(s, dir, total, true)))
    rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  pthread_mutex_unlock(&s->mu);
  bri_store_entries_free(e, n);
  return rc;
}

static bool below(const char *dir, const char *tree) {
  size_t n = strlen(tree);
  return !strncmp(dir, tree, n) && (dir[n] == '/' || !dir[n]);
}

/* Whether dir lies in a primed tree (under the lock). */
static bool in_tree(const bri_sidecar_sizes *s, const char *dir) {
  for (size_t i = 0; i < s->n_trees; i++)
    if (below(dir, s->trees[i])) return true;
  return false;
}

int bri_sidecar_sizes_prime(bri_sidecar_sizes *s, bri_store *st, const char *dir, size_t max_pages,
                            bri_error *err) {
  bri_store_entry *e = NULL;
  size_t n = 0;
  bri_error ignored;
  if (bri_store_list_tree(st, dir, max_pages, &e, &n, &ignored) != 0) return 0; /* asked per directory */
  int rc = 0;
  pthread_mutex_lock(&s->mu);
  for (size_t i = 0; i < n && !rc; i++) {
    char *p = bri_path_join(dir, e[i].name);
    bool added = false;
    if (!p || put_file(s, p, e[i].info.size, REGULAR, &added)) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    /* the file's directory counts it (once: a directory listed before has it) */
    char *slash = p ? strrchr(p, '/') : NULL;
    if (!rc && added && slash) {
      *slash = 0;
      if (dir_bytes_add(s, p, e[i].info.size, false)) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    }
    free(p);
  }
  char **t = rc ? NULL : realloc(s->trees, (s->n_trees + 1) * sizeof *t);
  if (!rc && (!t || !(t[s->n_trees] = strdup(dir)))) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (t) s->trees = t;
  if (!rc) s->n_trees++;
  pthread_mutex_unlock(&s->mu);
  bri_store_entries_free(e, n);
  return rc;
}

static void *prime_main(void *arg) {
  bri_sidecar_sizes *s = arg;
  bri_error ignored; /* out of memory: nothing primed, each directory is listed when asked */
  (void)bri_sidecar_sizes_prime(s, s->pending_store, s->pending, s->pending_pages, &ignored);
  pthread_mutex_lock(&s->mu);
  free(s->pending);
  s->pending = NULL;
  pthread_cond_broadcast(&s->primed);
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

int bri_sidecar_sizes_prime_start(bri_sidecar_sizes *s, bri_store *st, const char *dir, size_t max_pages,
                                  bri_error *err) {
  if (s->listing) return bri_sidecar_sizes_prime(s, st, dir, max_pages, err); /* one at a time */
  pthread_mutex_lock(&s->mu);
  s->pending = strdup(dir);
  s->pending_store = st;
  s->pending_pages = max_pages;
  pthread_mutex_unlock(&s->mu);
  if (s->pending && pthread_create(&s->lister, NULL, prime_main, s) == 0) {
    s->listing = true;
    return 0;
  }
  free(s->pending);
  s->pending = NULL;
  return bri_sidecar_sizes_prime(s, st, dir, max_pages, err);
}

/* Looks path up: 1 when known (*size, *k), 0 when the store must be asked. */
static int lookup(bri_sidecar_sizes *s, const char *path, const char *dir, uint64_t *size, enum kind *k) {
  pthread_mutex_lock(&s->mu);
  while (dir && s->pending && below(dir, s->pending)) pthread_cond_wait(&s->primed, &s->mu);
  bri_strmap_entry *e = bri_strmap_get(&s->files, path);
  int known = e || (dir && (bri_strmap_get(&s->dirs, dir) || in_tree(s, dir)));
  if (e) *size = e->a, *k = (enum kind)e->b;
  else *size = 0, *k = MISSING;
  pthread_mutex_unlock(&s->mu);
  return known;
}

int bri_sidecar_sizes_get(bri_sidecar_sizes *s, bri_store *st, const char *path, uint64_t *size,
                          bri_error *err) {
  bool local = (bri_store_caps(st) & BRI_STORE_CAP_LOCAL) != 0;
  enum kind k = MISSING;
  const char *slash = strrchr(path, '/');
  char *dir = local || !slash ? NULL : bri_strdupf("%.*s", (int)(slash - path), path);
  if (!local && slash && !dir) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  int rc = 0;
  if (!lookup(s, path, dir, size, &k)) {
    if (dir) {
      rc = list_dir(s, st, dir, err);
    } else {
      bri_store_info info;
      bri_error e;
      rc = bri_store_stat(st, path, &info, &e);
      if (rc && rc != BRI_ENOTFOUND) *err = e;
      enum kind found = rc ? MISSING : info.kind == BRI_ENTRY_FILE ? REGULAR
                        : info.kind == BRI_ENTRY_LINK ? LINK : OTHER;
      if (!rc || rc == BRI_ENOTFOUND) {
        pthread_mutex_lock(&s->mu);
        rc = put_file(s, path, found == REGULAR ? info.size : 0, found, NULL) ? bri_error_set(err, BRI_ENOMEM, "out of memory") : 0;
        pthread_mutex_unlock(&s->mu);
      }
    }
    if (!rc) (void)lookup(s, path, dir, size, &k);
  }
  free(dir);
  if (rc) return rc;
  switch (k) {
  case REGULAR: return 0;
  case MISSING: return bri_error_set(err, BRI_ENOTFOUND, "%s: no such sidecar", path);
  case LINK:
    return bri_error_set(err, BRI_ECORRUPT, "%s is a symbolic link, not a regular file (brid does not "
                         "follow links out of a table)", path);
  default: return bri_error_set(err, BRI_ECORRUPT, "%s is not a regular file", path);
  }
}

int bri_sidecar_sizes_dir_bytes(bri_sidecar_sizes *s, bri_store *st, const char *dir, uint64_t *bytes,
                                bri_error *err) {
  for (int listed = 0;; listed++) {
    pthread_mutex_lock(&s->mu);
    while (s->pending && below(dir, s->pending)) pthread_cond_wait(&s->primed, &s->mu);
    bool known = bri_strmap_get(&s->dirs, dir) || in_tree(s, dir);
    bri_strmap_entry *e = bri_strmap_get(&s->dir_bytes, dir);
    *bytes = e ? e->a : 0;
    pthread_mutex_unlock(&s->mu);
    if (known || listed) return 0;
    int rc = list_dir(s, st, dir, err);
    if (rc) return rc;
  }
}

/* The bytes a sidecar must hold for the value (UINT64_MAX when position +
 * size overflows). */
static uint64_t needed(uint8_t kind, uint64_t position, uint64_t size) {
  if (kind != 1) return size;
  return position + size < position ? UINT64_MAX : position + size;
}

/* "fragment F row R", or "fragment F (a value of a nested field)". */
static void value_at(const bri_value_ref *w, char *buf, size_t cap) {
  if (w->row == BRI_VALUE_ROW_UNKNOWN)
    snprintf(buf, cap, "fragment %llu (a value of a nested field)", (unsigned long long)w->fragment);
  else
    snprintf(buf, cap, "fragment %llu row %llu", (unsigned long long)w->fragment, (unsigned long long)w->row);
}

int bri_sidecar_refuse(const char *path, uint8_t kind, uint64_t position, uint64_t size,
                       const bri_value_ref *where, uint64_t actual, bool missing, bri_error *err) {
  uint64_t need = needed(kind, position, size);
  /* Packed: the range lies within the pack; Dedicated: the file is the value
   * (the reader refuses any other length, lib/blob/resolve.c) */
  if (!missing && (kind == 1 ? actual >= need : actual == need)) return 0;
  char what[96];
  if (kind == 1)
    snprintf(what, sizeof what, "packed value [%llu, +%llu)", (unsigned long long)position,
             (unsigned long long)size);
  else
    snprintf(what, sizeof what, "dedicated value of %llu bytes", (unsigned long long)size);
  char at[96];
  value_at(where, at, sizeof at);
  if (missing)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: %s: sidecar %s is missing, so it does not hold "
                         "its %s (expected %s%llu bytes, actual 0); refusing to carry damage into a "
                         "new version",
                         where->table, at, path, what, kind == 1 ? "at least " : "", (unsigned long long)need);
  return bri_error_set(err, BRI_ECORRUPT,
                       "%s: %s: sidecar %s does not hold its %s (expected "
                       "%s%llu bytes, actual %llu); refusing to carry damage into a new version",
                       where->table, at, path, what, kind == 1 ? "at least " : "",
                       (unsigned long long)need, (unsigned long long)actual);
}

int bri_sidecar_check(bri_sidecar_sizes *s, bri_store *st, const char *path, uint8_t kind,
                      uint64_t position, uint64_t size, const bri_value_ref *where,
                      uint64_t *actual, bri_error *err) {
  uint64_t have = 0;
  int rc = bri_sidecar_sizes_get(s, st, path, &have, err);
  if (rc && rc != BRI_ENOTFOUND) {
    char at[96];
    value_at(where, at, sizeof at);
    return bri_error_wrap(err, "%s: %s: checking its sidecar", where->table, at);
  }
  if (actual) *actual = have;
  return bri_sidecar_refuse(path, kind, position, size, where, have, rc == BRI_ENOTFOUND, err);
}
