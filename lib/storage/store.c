/* store.c: the front of the storage interface (see store.h, backend.h).
 *
 * It picks the backend by URI scheme, turns every path into a clean key
 * before a backend sees it, keeps the byte count of writers, and supplies
 * what a backend leaves out (copies through this process, one delete per
 * key, implicit directories). A NULL store (a file named by its own path,
 * outside any table) is served by a short-lived local store rooted at the
 * file's directory, so that no second way to open a file exists. */
#include "storage/backend.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fsutil.h"

/* Backends by scheme; the local one (scheme NULL) takes plain paths and
 * file:// URIs. A new backend adds one line. */
static const bri_store_ops *const BACKENDS[] = {
    &bri_local_store_ops,
    &bri_s3_store_ops,
    &bri_azure_store_ops,
};

#define N_BACKENDS (sizeof BACKENDS / sizeof BACKENDS[0])

/* Chunk of a copy that passes through this process. */
#define COPY_CHUNK ((size_t)8 << 20)

/* ------------------------------------------------------------ opening */

/* Length of "scheme" in "scheme://...", 0 when uri has none. */
static size_t scheme_len(const char *uri) {
  size_t i = 0;
  while ((uri[i] >= 'a' && uri[i] <= 'z') || (uri[i] >= 'A' && uri[i] <= 'Z') ||
         (i && ((uri[i] >= '0' && uri[i] <= '9') || uri[i] == '+' || uri[i] == '-' || uri[i] == '.')))
    i++;
  return i && !strncmp(uri + i, "://", 3) ? i : 0;
}

static bool scheme_is(const char *s, const char *uri, size_t sl) {
  return s && strlen(s) == sl && !strncmp(s, uri, sl);
}

/* The backend of uri (file:// dropped from *uri), or NULL with err set. */
static const bri_store_ops *backend_of(const char **uri, bri_error *err) {
  size_t sl = scheme_len(*uri);
  if (sl == 4 && !strncmp(*uri, "file", 4)) {
    *uri += 7; /* file:///abs -> /abs */
    sl = 0;
  }
  for (size_t i = 0; i < N_BACKENDS; i++) {
    const bri_store_ops *b = BACKENDS[i];
    bool match = sl ? scheme_is(b->scheme, *uri, sl) : !b->scheme;
    for (size_t j = 0; sl && !match && b->also && b->also[j]; j++) match = scheme_is(b->also[j], *uri, sl);
    if (match) return b;
  }
  bri_error_set(err, BRI_EUNSUPPORTED, "%s: no storage backend for scheme \"%.*s\" (brid reads local "
                "paths, file://, s3:// and az:// (azure://, abfss://) locations)", *uri, (int)sl, *uri);
  return NULL;
}

int bri_store_open(const char *uri, unsigned flags, bri_store **out, bri_error *err) {
  *out = NULL;
  const bri_store_ops *b = backend_of(&uri, err);
  return b ? b->open(uri, flags, out, err) : BRI_EUNSUPPORTED;
}

/* A local path's canonical name (malloc'd; NULL out of memory), the rule of
 * bri_store_location: its real path when it exists; else the real path of
 * its parent directory and its last name; else the path made absolute
 * (against the working directory) as it is. Never a trailing slash. */
static char *local_location(const char *path) {
  char real[PATH_MAX], cwd[PATH_MAX];
  if (realpath(*path ? path : ".", real)) return strdup(real);
  char *abs = path[0] == '/' ? strdup(path) : bri_strdupf("%s/%s", getcwd(cwd, sizeof cwd) ? cwd : ".", path);
  if (!abs) return NULL;
  size_t n = strlen(abs);
  while (n > 1 && abs[n - 1] == '/') abs[--n] = '\0';
  char *last = strrchr(abs, '/');
  if (!last || !strcmp(last, "/.") || !strcmp(last, "/..")) return abs;
  *last = '\0';
  if (!realpath(last == abs ? "/" : abs, real)) {
    *last = '/';
    return abs;
  }
  char *out = bri_strdupf("%s/%s", strcmp(real, "/") ? real : "", last + 1);
  free(abs);
  return out;
}

int bri_store_location(const char *uri, char **out, bri_error *err) {
  *out = NULL;
  const bri_store_ops *b = backend_of(&uri, err);
  if (!b) return BRI_EUNSUPPORTED;
  if (b->canonical) {
    *out = b->canonical(uri, err);
    return *out ? 0 : err && err->code ? err->code : BRI_EINVAL;
  }
  *out = local_location(uri);
  return *out ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
}

int bri_store_location_caps(const char *uri, unsigned *caps, bri_error *err) {
  const bri_store_ops *b = backend_of(&uri, err);
  *caps = b ? b->caps : 0;
  return b ? 0 : BRI_EUNSUPPORTED;
}

/* The backend of uri for a settings question (NULL: unknown scheme). */
static const bri_store_ops *settings_backend(const char *uri) {
  bri_error ignored;
  return backend_of(&uri, &ignored);
}

const char *const *bri_store_setting_names(const char *uri) {
  static const char *const none[] = {NULL};
  const bri_store_ops *b = settings_backend(uri);
  return b && b->setting_names ? b->setting_names : none;
}

int bri_store_setting_kind(const char *uri, const char *name) {
  const bri_store_ops *b = settings_backend(uri);
  for (size_t i = 0; b && b->setting_names && b->setting_names[i]; i++)
    if (!strcmp(b->setting_names[i], name)) return b->setting_secret[i] ? BRI_SETTING_SECRET : BRI_SETTING_PLAIN;
  return 0;
}

int bri_store_configure_root(const char *uri, const bri_store_setting *settings, size_t n,
                             const bri_store_limits *limits, bool check_only, bri_error *err) {
  const char *given = uri;
  const bri_store_ops *b = backend_of(&uri, err);
  if (!b) return BRI_EUNSUPPORTED;
  for (size_t i = 0; i < n; i++)
    if (!bri_store_setting_kind(given, settings[i].name))
      return bri_error_set(err, BRI_EINVAL, "%s: %s is not a setting of such a location", given, settings[i].name);
  if (!b->configure) return 0; /* local: nothing to set (and no setting was given) */
  return b->configure(uri, settings, n, limits, check_only, err);
}

void bri_store_close(bri_store *st) {
  if (st) st->ops->close(st);
}

/* ------------------------------------------------------------ counters */

static const char *const REQ_NAMES[BRI_REQ_KINDS] = {
    "get", "head", "put", "list", "delete", "copy", "create_multipart", "upload_part",
    "upload_part_copy", "complete_multipart", "abort_multipart"};
static const char *const CLASS_NAMES[BRI_REQ_CLASSES] = {"none", "2xx", "3xx", "4xx", "5xx"};

const char *bri_store_req_name(bri_store_req kind) {
  return kind >= 0 && kind < BRI_REQ_KINDS ? REQ_NAMES[kind] : "?";
}

const char *bri_store_req_class_name(int cls) {
  return cls >= 0 && cls < BRI_REQ_CLASSES ? CLASS_NAMES[cls] : "?";
}

void bri_store_counts_add(bri_store_counts *counts, bri_store_counter c, uint64_t v) {
  for (; counts && v; counts = counts->parent) __atomic_fetch_add(&counts->n[c], v, __ATOMIC_RELAXED);
}

void bri_store_counts_request(bri_store_counts *counts, bri_store_req kind, int cls) {
  for (; counts; counts = counts->parent) __atomic_fetch_add(&counts->req[kind][cls], 1, __ATOMIC_RELAXED);
}

void bri_store_counts_get(const bri_store_counts *counts, bri_store_stats *out) {
  memset(out, 0, sizeof *out);
  out->bytes_read = __atomic_load_n(&counts->n[BRI_COUNT_READ], __ATOMIC_RELAXED);
  out->bytes_written = __atomic_load_n(&counts->n[BRI_COUNT_WRITTEN], __ATOMIC_RELAXED);
  out->bytes_copied_server = __atomic_load_n(&counts->n[BRI_COUNT_COPIED_SERVER], __ATOMIC_RELAXED);
  out->retries = __atomic_load_n(&counts->n[BRI_COUNT_RETRIES], __ATOMIC_RELAXED);
  for (int k = 0; k < BRI_REQ_KINDS; k++)
    for (int c = 0; c < BRI_REQ_CLASSES; c++)
      out->requests += out->by_kind[k][c] = __atomic_load_n(&counts->req[k][c], __ATOMIC_RELAXED);
}

void bri_store_count(bri_store *st, bri_store_counter c, uint64_t n) {
  if (st) bri_store_counts_add(&st->counts, c, n);
}

/* What the front counts for backends that do not count themselves. */
static void front_count(bri_store *st, const bri_store_ops *ops, bri_store_counter c, uint64_t n) {
  if (!ops->counts_itself) bri_store_count(st, c, n);
}

void bri_store_stats_get(const bri_store *st, bri_store_stats *out) { bri_store_counts_get(&st->counts, out); }

void bri_store_stats_add(bri_store_stats *acc, const bri_store_stats *x) {
  acc->bytes_read += x->bytes_read, acc->bytes_written += x->bytes_written;
  acc->bytes_copied_server += x->bytes_copied_server;
  acc->requests += x->requests, acc->retries += x->retries;
  for (int k = 0; k < BRI_REQ_KINDS; k++)
    for (int c = 0; c < BRI_REQ_CLASSES; c++) acc->by_kind[k][c] += x->by_kind[k][c];
}

/* Registered roots (bri_store_count_root): a list that only grows, so a
 * store's parent pointer stays valid for the life of the process. */
typedef struct count_root {
  char *uri;
  bri_store_counts counts;
  struct count_root *next;
} count_root;

static pthread_mutex_t roots_lock = PTHREAD_MUTEX_INITIALIZER;
static count_root *count_roots;

/* Whether location lies at or below uri. */
static bool at_or_below(const char *uri, const char *location) {
  size_t n = strlen(uri);
  while (n > 1 && uri[n - 1] == '/') n--;
  return !strncmp(location, uri, n) && (location[n] == '\0' || location[n] == '/' || uri[n - 1] == '/');
}

static count_root *find_root(const char *uri) {
  for (count_root *r = count_roots; r; r = r->next)
    if (!strcmp(r->uri, uri)) return r;
  return NULL;
}

int bri_store_count_root(const char *uri, bri_error *err) {
  int rc = 0;
  pthread_mutex_lock(&roots_lock);
  if (!find_root(uri)) {
    count_root *r = calloc(1, sizeof *r);
    if (!r || !(r->uri = strdup(uri))) {
      free(r);
      rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    } else {
      r->next = count_roots;
      count_roots = r;
    }
  }
  pthread_mutex_unlock(&roots_lock);
  return rc;
}

int bri_store_root_stats(const char *uri, bri_store_stats *out) {
  pthread_mutex_lock(&roots_lock);
  count_root *r = find_root(uri);
  pthread_mutex_unlock(&roots_lock);
  if (!r) {
    memset(out, 0, sizeof *out);
    return BRI_ENOTFOUND;
  }
  bri_store_counts_get(&r->counts, out);
  return 0;
}

/* The counters of the registered root location lies below (longest
 * match), or NULL. */
static bri_store_counts *root_counts_of(const char *location) {
  count_root *best = NULL;
  pthread_mutex_lock(&roots_lock);
  for (count_root *r = count_roots; r; r = r->next)
    if (at_or_below(r->uri, location) && (!best || strlen(r->uri) > strlen(best->uri))) best = r;
  pthread_mutex_unlock(&roots_lock);
  return best ? &best->counts : NULL;
}

int bri_store_base_init(bri_store *st, const bri_store_ops *ops, const char *uri,
                        const char *canonical, unsigned caps, bri_error *err) {
  size_t n = strlen(uri);
  while (n > 1 && uri[n - 1] == '/') n--;
  st->ops = ops;
  st->caps = caps;
  memset(&st->counts, 0, sizeof st->counts);
  st->uri = n ? bri_strdupf("%.*s", (int)n, uri) : strdup(".");
  st->canonical = strdup(canonical ? canonical : st->uri ? st->uri : "");
  if (!st->uri || !st->canonical) {
    bri_store_base_clear(st);
    return bri_error_set(err, BRI_ENOMEM, "%s: out of memory", uri);
  }
  st->counts.parent = root_counts_of(st->canonical);
  return 0;
}

void bri_store_base_clear(bri_store *st) {
  free(st->uri);
  free(st->canonical);
  st->uri = st->canonical = NULL;
}

const char *bri_store_uri(const bri_store *st) { return st->uri; }
const char *bri_store_canonical(const bri_store *st) { return st->canonical; }
unsigned bri_store_caps(const bri_store *st) { return st->caps; }

const char *bri_store_key(const bri_store *st, const char *path) {
  if (!strcmp(path, st->uri)) return "";
  return bri_path_below(st->uri, path);
}

char *bri_store_path(const bri_store *st, const char *key) {
  return *key ? bri_strdupf("%s/%s", st->uri, key) : strdup(st->uri);
}

/* Lance never writes an empty, "." or ".." component, a leading '/' or a
 * NUL: a key with one is refused before any backend sees it. "" is the
 * root itself. */
static int check_key(const bri_store *st, const char *key, bri_error *err) {
  for (const char *p = key; *p;) {
    const char *e = strchr(p, '/');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
      return bri_error_set(err, BRI_ECORRUPT, "%s/%s: not a plain relative path (an empty, '.' or "
                           "'..' component); brid resolves table files only beneath %s", st->uri,
                           key, st->uri);
    if (!e) break;
    p = e + 1;
  }
  return 0;
}

/* The clean key of path in st (key_of) or BRI_EINVAL naming what. */
static int key_of(const bri_store *st, const char *path, const char **key, bri_error *err) {
  if (!(*key = bri_store_key(st, path)))
    return bri_error_set(err, BRI_EINVAL, "%s is not inside %s; brid reaches a table's files only "
                         "beneath its root", path, st->uri);
  return check_key(st, *key, err);
}

/* The store and key a call works on. st NULL: a local store rooted at the
 * directory of path (*tmp, closed by the caller), key its last component;
 * whole_dir: path itself is the directory (listing). */
static int resolve(bri_store *st, const char *path, bool whole_dir, bri_store **use,
                   const char **key, bri_store **tmp, bri_error *err) {
  *tmp = NULL;
  if (st) {
    *use = st;
    return key_of(st, path, key, err);
  }
  const char *slash = whole_dir ? NULL : strrchr(path, '/');
  char *dir = whole_dir ? strdup(path)
              : slash ? (slash == path ? strdup("/") : bri_strdupf("%.*s", (int)(slash - path), path))
                      : strdup(".");
  if (!dir) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  int rc = bri_local_store_ops.open(dir, 0, tmp, err);
  free(dir);
  if (rc == BRI_ENOTFOUND)
    return bri_error_set(err, rc, "%s: no such %s", path, whole_dir ? "directory" : "file");
  if (rc) return rc;
  *use = *tmp;
  *key = whole_dir ? "" : slash ? slash + 1 : path;
  return 0;
}

/* ------------------------------------------------------------ reading */

void bri_store_prefetch(bri_store *st, const char *const *paths, size_t n, unsigned flags) {
  if (!st || !st->ops->prefetch || !n) return;
  const char **keys = calloc(n, sizeof *keys);
  size_t k = 0;
  bri_error ignored;
  for (size_t i = 0; keys && i < n; i++) {
    const char *key;
    if (key_of(st, paths[i], &key, &ignored) == 0 && *key) keys[k++] = key;
  }
  if (k) st->ops->prefetch(st, keys, k, flags);
  free(keys);
}

int bri_store_open_file(bri_store *st, const char *path, bri_sfile **out, bri_error *err) {
  *out = NULL;
  bri_store *use, *tmp;
  const char *key;
  int rc = resolve(st, path, false, &use, &key, &tmp, err);
  if (!rc) {
    char *full = st ? bri_store_path(use, key) : strdup(path);
    rc = full ? use->ops->open_file(use, key, full, out, err)
              : bri_error_set(err, BRI_ENOMEM, "out of memory");
    free(full);
    if (!rc) (*out)->st = st;
  }
  bri_store_close(tmp); /* an open file does not need it (backend.h) */
  return rc;
}

uint64_t bri_sfile_size(const bri_sfile *f) { return f->size; }
const char *bri_sfile_path(const bri_sfile *f) { return f->path; }

int bri_sfile_read(bri_sfile *f, uint64_t offset, void *buf, size_t len, bri_error *err) {
  if (offset > f->size || len > f->size - offset)
    return bri_error_set(err, BRI_ECORRUPT, "%s: wanted %zu bytes at offset %llu, file ends after %llu",
                         f->path, len, (unsigned long long)offset, (unsigned long long)f->size);
  int rc = len ? f->ops->read(f, offset, buf, len, err) : 0;
  if (!rc) front_count(f->st, f->ops, BRI_COUNT_READ, len);
  return rc;
}

int bri_sfile_readv(bri_sfile *f, const bri_sread *reads, size_t n, bri_error *err) {
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++) {
    const bri_sread *r = &reads[i];
    if (r->offset > f->size || r->len > f->size - r->offset)
      return bri_error_set(err, BRI_ECORRUPT, "%s: wanted %zu bytes at offset %llu, file ends after %llu",
                           f->path, r->len, (unsigned long long)r->offset, (unsigned long long)f->size);
    total += r->len;
  }
  if (!f->ops->readv) {
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) rc = bri_sfile_read(f, reads[i].offset, reads[i].buf, reads[i].len, err);
    return rc;
  }
  int rc = n ? f->ops->readv(f, reads, n, err) : 0;
  if (!rc) front_count(f->st, f->ops, BRI_COUNT_READ, total);
  return rc;
}

void bri_sfile_close(bri_sfile *f) {
  if (f) f->ops->close_file(f);
}

int bri_store_read(bri_store *st, const char *path, size_t max_len, uint8_t **out, size_t *len,
                   bri_error *err) {
  *out = NULL;
  *len = 0;
  bri_sfile *f;
  int rc = bri_store_open_file(st, path, &f, err);
  if (rc) return rc;
  uint64_t n = bri_sfile_size(f);
  uint8_t *buf = NULL;
  if (n > max_len)
    rc = bri_error_set(err, BRI_EUNSUPPORTED, "%s: %llu bytes is more than the %zu allowed",
                       bri_sfile_path(f), (unsigned long long)n, max_len);
  else if (!(buf = malloc((size_t)n + 1)))
    rc = bri_error_set(err, BRI_ENOMEM, "%s: out of memory for %llu bytes", bri_sfile_path(f),
                       (unsigned long long)n);
  else
    rc = bri_sfile_read(f, 0, buf, (size_t)n, err);
  bri_sfile_close(f);
  if (rc) {
    free(buf);
    return rc;
  }
  buf[n] = 0;
  *out = buf;
  *len = (size_t)n;
  return 0;
}

/* ------------------------------------------------------------ stat, list */

int bri_store_stat(bri_store *st, const char *path, bri_store_info *out, bri_error *err) {
  bri_store *use, *tmp;
  const char *key;
  int rc = resolve(st, path, false, &use, &key, &tmp, err);
  if (!rc) rc = use->ops->stat(use, key, out, err);
  bri_store_close(tmp);
  return rc;
}

int bri_store_check_dir(bri_store *st, const char *path, bool absent_ok, bri_error *err) {
  bri_store_info info;
  bri_error e;
  int rc = bri_store_stat(st, path, &info, &e);
  if (rc == BRI_ENOTFOUND)
    return absent_ok ? 0 : bri_error_set(err, rc, "%s: no such directory", path);
  if (rc) {
    if (err) *err = e;
    return rc;
  }
  if (info.kind == BRI_ENTRY_LINK)
    return bri_error_set(err, BRI_ECORRUPT, "%s is a symbolic link; brid never follows links out of "
                         "a table", path);
  if (info.kind != BRI_ENTRY_DIR) return bri_error_set(err, BRI_ECORRUPT, "%s is not a directory", path);
  return 0;
}

static int cmp_entry(const void *a, const void *b) {
  return strcmp(((const bri_store_entry *)a)->name, ((const bri_store_entry *)b)->name);
}

int bri_store_list(bri_store *st, const char *dir, unsigned flags, bri_store_entry **out,
                   size_t *count, bri_error *err) {
  *out = NULL;
  *count = 0;
  bri_store *use, *tmp;
  const char *key;
  int rc = resolve(st, dir, true, &use, &key, &tmp, err);
  if (!rc) rc = use->ops->list(use, key, flags, out, count, err);
  bri_store_close(tmp);
  if (!rc && *count) qsort(*out, *count, sizeof **out, cmp_entry);
  return rc;
}

int bri_store_list_tree(bri_store *st, const char *dir, size_t max_pages, bri_store_entry **out,
                        size_t *count, bri_error *err) {
  *out = NULL;
  *count = 0;
  if (!st || !st->ops->list_tree)
    return bri_error_set(err, BRI_EUNSUPPORTED, "%s: no listing of a whole tree here", dir);
  const char *key;
  int rc = key_of(st, dir, &key, err);
  if (!rc) rc = st->ops->list_tree(st, key, max_pages, out, count, err);
  if (!rc && *count) qsort(*out, *count, sizeof **out, cmp_entry);
  return rc;
}

/* Sorts what a backend listed and keeps the first n (it may give more). */
static void keep_first(bri_store_entry *e, size_t *count, size_t n) {
  if (*count) qsort(e, *count, sizeof *e, cmp_entry);
  if (*count > n) {
    for (size_t i = n; i < *count; i++) free(e[i].name);
    *count = n;
  }
}

int bri_store_list_first(bri_store *st, const char *dir, unsigned flags, size_t n,
                         bri_store_entry **out, size_t *count, bri_error *err) {
  *out = NULL;
  *count = 0;
  const char *key;
  int rc = key_of(st, dir, &key, err);
  if (rc) return rc;
  rc = st->ops->list_first ? st->ops->list_first(st, key, flags, n, out, count, err)
                           : st->ops->list(st, key, flags, out, count, err);
  if (!rc) keep_first(*out, count, n);
  return rc;
}

int bri_store_list_first_many(bri_store *st, bri_store_listing *dirs, size_t n, unsigned flags,
                              size_t first, bri_error *err) {
  for (size_t i = 0; i < n; i++) {
    dirs[i].entries = NULL, dirs[i].count = 0, dirs[i].rc = 0;
    dirs[i].err.code = 0, dirs[i].err.msg[0] = 0;
  }
  if (!st->ops->list_first_many) {
    for (size_t i = 0; i < n; i++)
      dirs[i].rc = bri_store_list_first(st, dirs[i].dir, flags, first, &dirs[i].entries, &dirs[i].count,
                                        &dirs[i].err);
    return 0;
  }
  /* the directories whose key is clean go to the backend together */
  const char **keys = calloc(n + 1, sizeof *keys);
  bri_store_listing *ok = calloc(n + 1, sizeof *ok);
  size_t *from = calloc(n + 1, sizeof *from), k = 0;
  if (!keys || !ok || !from) {
    free(keys), free(ok), free(from);
    return bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < n; i++) {
    if ((dirs[i].rc = key_of(st, dirs[i].dir, &keys[k], &dirs[i].err)) != 0) continue;
    ok[k] = dirs[i];
    from[k++] = i;
  }
  int rc = k ? st->ops->list_first_many(st, ok, keys, k, flags, first, err) : 0;
  for (size_t j = 0; j < k; j++) {
    if (!rc && !ok[j].rc) keep_first(ok[j].entries, &ok[j].count, first);
    dirs[from[j]] = ok[j];
  }
  free(keys), free(ok), free(from);
  return rc;
}

void bri_store_entries_free(bri_store_entry *e, size_t count) {
  for (size_t i = 0; e && i < count; i++) free(e[i].name);
  free(e);
}

/* ------------------------------------------------------------ writing */

static const bri_store_steps NO_STEPS;

static int put(bri_store *st, const char *path, const void *data, size_t len, unsigned how,
               const bri_store_steps *steps, bri_error *err) {
  bri_store *use, *tmp;
  const char *key;
  int rc = resolve(st, path, false, &use, &key, &tmp, err);
  if (!rc) rc = use->ops->put(use, key, data, len, how, steps ? steps : &NO_STEPS, err);
  if (!rc) front_count(st, use->ops, BRI_COUNT_WRITTEN, len);
  bri_store_close(tmp);
  return rc;
}

int bri_store_put_new(bri_store *st, const char *path, const void *data, size_t len,
                      const bri_store_steps *steps, bri_error *err) {
  return put(st, path, data, len, BRI_PUT_IF_ABSENT, steps, err);
}

int bri_store_put(bri_store *st, const char *path, const void *data, size_t len,
                  const bri_store_steps *steps, bri_error *err) {
  return put(st, path, data, len, 0, steps, err);
}

int bri_store_put_volatile(bri_store *st, const char *path, const void *data, size_t len,
                           const bri_store_steps *steps, bri_error *err) {
  return put(st, path, data, len, BRI_PUT_VOLATILE, steps, err);
}

int bri_store_put_new_volatile(bri_store *st, const char *path, const void *data, size_t len,
                               const bri_store_steps *steps, bri_error *err) {
  return put(st, path, data, len, BRI_PUT_IF_ABSENT | BRI_PUT_VOLATILE, steps, err);
}

int bri_store_create(bri_store *st, const char *path, const bri_store_steps *steps,
                     bri_swriter **out, bri_error *err) {
  *out = NULL;
  bri_store *use, *tmp;
  const char *key;
  int rc = resolve(st, path, false, &use, &key, &tmp, err);
  char *k = NULL, *full = NULL;
  if (!rc && (!(k = strdup(key)) || !(full = st ? bri_store_path(use, key) : strdup(path))))
    rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (!rc) rc = use->ops->create(use, key, out, err);
  if (!rc) {
    bri_swriter *w = *out;
    w->ops = use->ops, w->st = st, w->key = k, w->path = full, w->size = 0;
    w->steps = steps ? *steps : NO_STEPS;
  } else {
    free(k), free(full);
  }
  bri_store_close(tmp); /* a writer does not need it (backend.h) */
  return rc;
}

int bri_swriter_append(bri_swriter *w, const void *data, size_t len, bri_error *err) {
  if (!len) return 0;
  int rc = w->ops->append(w, data, len, err);
  if (!rc) w->size += len;
  if (!rc) front_count(w->st, w->ops, BRI_COUNT_WRITTEN, len);
  return rc;
}

/* A copy through this process: read from f, append to w. */
static int copy_through(bri_swriter *w, bri_sfile *f, uint64_t offset, uint64_t len, bri_error *err) {
  size_t cap = len < COPY_CHUNK ? (size_t)len : COPY_CHUNK;
  uint8_t *buf = malloc(cap ? cap : 1);
  if (!buf) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  int rc = 0;
  while (len && !rc) {
    size_t n = len < cap ? (size_t)len : cap;
    rc = bri_sfile_read(f, offset, buf, n, err);
    if (!rc) rc = bri_swriter_append(w, buf, n, err);
    offset += n, len -= n;
  }
  free(buf);
  return rc;
}

int bri_swriter_append_copy(bri_swriter *w, bri_store *src, const char *src_path, uint64_t offset,
                            uint64_t len, bri_error *err) {
  if (!len) return 0;
  bri_store *use, *tmp;
  const char *key;
  int rc = resolve(src, src_path, false, &use, &key, &tmp, err);
  if (rc) return rc;
  rc = BRI_EUNSUPPORTED;
  if (w->ops->append_copy && use->ops == w->ops) {
    rc = w->ops->append_copy(w, use, key, offset, len, err);
    if (!rc) w->size += len;
    if (!rc) front_count(w->st, w->ops, BRI_COUNT_COPIED_SERVER, len);
  }
  bri_store_close(tmp);
  if (rc != BRI_EUNSUPPORTED) return rc;
  /* between backends, or one that cannot: through this process */
  bri_sfile *f = NULL;
  rc = bri_store_open_file(src, src_path, &f, err);
  if (!rc && (offset > bri_sfile_size(f) || len > bri_sfile_size(f) - offset))
    rc = bri_error_set(err, BRI_EIO, "%s: has %llu bytes, wanted %llu to copy from (did it shrink?)",
                       bri_sfile_path(f), (unsigned long long)bri_sfile_size(f),
                       (unsigned long long)(offset + len));
  if (!rc) rc = copy_through(w, f, offset, len, err);
  bri_sfile_close(f);
  return rc;
}

uint64_t bri_swriter_size(const bri_swriter *w) { return w->size; }
const char *bri_swriter_path(const bri_swriter *w) { return w->path; }

int bri_swriter_finish(bri_swriter *w, bri_error *err) {
  char *k = w->key, *p = w->path; /* the front's; the backend frees w */
  int rc = w->ops->finish(w, err);
  free(k), free(p);
  return rc;
}

void bri_swriter_abort(bri_swriter *w) {
  if (!w) return;
  char *k = w->key, *p = w->path;
  w->ops->abort(w);
  free(k), free(p);
}

int bri_store_copy(bri_store *src, const char *src_path, bri_store *dst, const char *dst_path,
                   unsigned flags, bool *linked, uint64_t *bytes, bri_error *err) {
  bool lk = false;
  *bytes = 0;
  if (linked) *linked = false;
  bri_store *use, *tmp;
  const char *skey, *dkey;
  int rc = key_of(dst, dst_path, &dkey, err);
  if (!rc) rc = resolve(src, src_path, false, &use, &skey, &tmp, err);
  if (rc) return rc;
  rc = BRI_EUNSUPPORTED;
  if (dst->ops->copy && use->ops == dst->ops)
    rc = dst->ops->copy(use, skey, dst, dkey, flags, &lk, bytes, err);
  if (!rc) front_count(dst, dst->ops, BRI_COUNT_COPIED_SERVER, *bytes);
  bri_store_close(tmp);
  if (rc == BRI_EUNSUPPORTED) {
    /* between backends, or one that cannot: through this process */
    bri_sfile *f = NULL;
    bri_swriter *w = NULL;
    rc = bri_store_open_file(src, src_path, &f, err);
    if (!rc) rc = bri_store_create(dst, dst_path, NULL, &w, err);
    if (!rc) rc = copy_through(w, f, 0, bri_sfile_size(f), err);
    if (!rc) {
      *bytes = bri_sfile_size(f);
      rc = bri_swriter_finish(w, err);
    } else {
      bri_swriter_abort(w);
    }
    bri_sfile_close(f);
  }
  if (linked) *linked = lk;
  return rc;
}

int bri_store_link(bri_store *src, const char *src_path, bri_store *dst, const char *dst_path,
                   uint64_t *bytes, bri_error *err) {
  *bytes = 0;
  const char *skey, *dkey;
  int rc = key_of(src, src_path, &skey, err);
  if (!rc) rc = key_of(dst, dst_path, &dkey, err);
  if (rc) return rc;
  if (!dst->ops->link || src->ops != dst->ops || !(dst->caps & BRI_STORE_CAP_LINK))
    return bri_error_set(err, BRI_EUNSUPPORTED, "cannot hard-link %s to %s: the store has no links",
                         src_path, dst_path);
  return dst->ops->link(src, skey, dst, dkey, bytes, err);
}

static int make_dir(bri_store *st, const char *path, bool durable, bri_error *err) {
  const char *key;
  int rc = key_of(st, path, &key, err);
  if (rc) return rc;
  return st->ops->mkdir ? st->ops->mkdir(st, key, durable, err) : 0;
}

int bri_store_mkdir(bri_store *st, const char *path, bri_error *err) { return make_dir(st, path, true, err); }

int bri_store_mkdir_unsynced(bri_store *st, const char *path, bri_error *err) {
  return make_dir(st, path, false, err);
}

int bri_store_sync(bri_store *st, const char *dir, bri_error *err) {
  const char *key;
  int rc = key_of(st, dir, &key, err);
  if (rc) return rc;
  return st->ops->sync ? st->ops->sync(st, key, err) : 0;
}

/* ------------------------------------------------------------ deleting */

int bri_store_delete(bri_store *st, const char *path, bri_error *err) {
  bri_store *use, *tmp;
  const char *key;
  int rc = resolve(st, path, false, &use, &key, &tmp, err);
  if (!rc) rc = use->ops->delete_one(use, key, err);
  bri_store_close(tmp);
  return rc;
}

int bri_store_delete_many(bri_store *st, const char *const *paths, size_t n, int *rcs,
                          bri_error *err) {
  for (size_t i = 0; i < n; i++) { /* all inside, or nothing is deleted */
    const char *key;
    int rc = key_of(st, paths[i], &key, err);
    if (rc) return bri_error_wrap(err, "nothing deleted");
  }
  const char **keys = malloc((n ? n : 1) * sizeof *keys);
  int *own = rcs ? NULL : malloc((n ? n : 1) * sizeof *own);
  if (!keys || (!rcs && !own)) {
    free(keys), free(own);
    return bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  int *r = rcs ? rcs : own, rc = 0;
  for (size_t i = 0; i < n; i++) keys[i] = bri_store_key(st, paths[i]);
  if (st->ops->delete_many) {
    rc = st->ops->delete_many(st, keys, n, r, err);
  } else {
    for (size_t i = 0; i < n; i++) {
      bri_error e;
      r[i] = st->ops->delete_one(st, keys[i], &e);
      if (r[i] == BRI_ENOTFOUND) r[i] = 0;
      if (r[i] && !rc) {
        rc = r[i];
        if (err) *err = e;
      }
    }
  }
  free(keys), free(own);
  return rc;
}

/* ------------------------------------------------------------ locks */

int bri_store_lock(bri_store *st, const char *path, const char *who, bri_slock **out, bri_error *err) {
  *out = NULL;
  const char *key;
  int rc = key_of(st, path, &key, err);
  if (rc) return rc;
  if (!st->ops->lock)
    return bri_error_set(err, BRI_EUNSUPPORTED, "%s: this store has no locks", path);
  rc = st->ops->lock(st, key, path, who, out, err);
  if (!rc) (*out)->ops = st->ops;
  return rc;
}

void bri_store_unlock(bri_slock *l) {
  if (l) l->ops->unlock(l);
}
