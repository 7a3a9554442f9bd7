/* object_store.c: the storage interface on an object store (see
 * object_store.h, store.h), whatever the client's dialect.
 *
 * Mapping: a file is an object, a directory a prefix ending in '/', a list
 * is a listing with delimiter "/", put_new a PUT with If-None-Match: *
 * (taken: BRI_ETAKEN), a writer a multipart upload, append_copy a part
 * copied on the server, copy a server-side copy, deletes the client's
 * (as few requests as its dialect can). There are no links (the front
 * answers BRI_EUNSUPPORTED) and no real directories (mkdir and sync are
 * the front's no-ops).
 *
 * Writers and the part minimum. Every part but the last must be at least
 * the dialect's part minimum (S3's 5 MiB), so a writer buffers appended
 * bytes and sends 8 MiB parts. Copied ranges wait: the next copy of the
 * bytes right after one in the same object extends it (compaction copies a
 * pack's blobs in order), so runs of small blobs become one range. A range
 * of at least the part minimum becomes part copies (payload bytes never
 * pass through brid); when bytes are buffered before it, the buffer is
 * first topped up to the part minimum from the head of that range (a
 * ranged GET: at most the part minimum of it through brid) and sent. The
 * last range of an object may be a part of any size, so an object that is
 * one copied range is copied whole by the server. Shorter ranges elsewhere
 * are read and buffered. A writer that never reached a part is one PUT at
 * finish. A copy's errors (a source shorter than the range) surface when
 * its range is sent: at the next append of another kind or at finish.
 *
 * Never overwriting: radosgw ignores If-None-Match on CompleteMultipartUpload
 * and CopyObject, so create and copy check with a HEAD first; only a second
 * writer making the same fresh name at the same moment could slip between,
 * which fresh names (UUIDs) rule out. Manifests, the names writers race
 * for, go through put_new: one atomic conditional PUT.
 *
 * Clients: one per distinct endpoint, credentials and registered prefix
 * (what the backend's connector says makes clients differ), shared and
 * reference-counted (stores, files and writers hold references), so
 * connections are reused across the many short-lived stores lib opens.
 *
 * Counting: every request is counted into the counters of the store it
 * works for (a file's or writer's store; a copy's destination), which the
 * front rolls up into the registered root's (backend.h). */
#include "storage/object_store.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "util/bytes.h"
#include "util/failpoint.h"
#include "util/fsutil.h"

#define PART_SIZE ((size_t)8 << 20)

/* ------------------------------------------------------------ clients */

typedef struct obj_conn {
  bri_obj_client *client;
  char *id; /* the connector's identity and the registered prefix: what makes clients differ */
  _Atomic int refs; /* the last one drops under registry_lock (conn_unref) */
  struct obj_conn *next;
} obj_conn;

/* Per-prefix settings (bri_obj_store_configure). */
typedef struct obj_setting {
  char *prefix;
  void *settings; /* the backend's */
  void (*dispose)(void *settings);
  bri_store_limits limits;
  struct obj_setting *next;
} obj_setting;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static obj_conn *conns;
static obj_setting *registered;

/* Drops a reference; the last one unlists and frees c. The count drops
 * under registry_lock, where conn_for looks clients up: a client listed is
 * never one whose last reference is being dropped (dropped outside the
 * lock, a lookup could take a client another thread is about to free). */
static void conn_unref(obj_conn *c) {
  if (!c) return;
  pthread_mutex_lock(&registry_lock);
  if (atomic_fetch_sub(&c->refs, 1) != 1) {
    pthread_mutex_unlock(&registry_lock);
    return;
  }
  for (obj_conn **p = &conns; *p; p = &(*p)->next) {
    if (*p == c) {
      *p = c->next;
      break;
    }
  }
  pthread_mutex_unlock(&registry_lock);
  bri_obj_client_free(c->client);
  explicit_bzero(c->id, strlen(c->id));
  free(c->id);
  free(c);
}

static void setting_free(obj_setting *s) {
  s->dispose(s->settings);
  free(s->prefix);
  free(s);
}

int bri_obj_store_configure(const char *prefix_uri, void *settings, void (*dispose)(void *),
                            const bri_store_limits *limits, bri_error *err) {
  size_t n = strlen(prefix_uri);
  while (n > 5 && prefix_uri[n - 1] == '/') n--;
  obj_setting *s = NULL;
  if (settings) {
    if (!(s = calloc(1, sizeof *s)) || !(s->prefix = strndup(prefix_uri, n))) {
      free(s);
      dispose(settings);
      return bri_error_set(err, BRI_ENOMEM, "out of memory");
    }
    s->settings = settings;
    s->dispose = dispose;
    if (limits) s->limits = *limits;
  }
  pthread_mutex_lock(&registry_lock);
  for (obj_setting **p = &registered; *p; p = &(*p)->next) {
    if (strlen((*p)->prefix) == n && !strncmp((*p)->prefix, prefix_uri, n)) {
      obj_setting *old = *p;
      *p = old->next;
      setting_free(old);
      break;
    }
  }
  if (s) {
    s->next = registered;
    registered = s;
  }
  pthread_mutex_unlock(&registry_lock);
  return 0;
}

/* The settings of the longest registered prefix of uri, and the client
 * options of its limits (registry_lock held). */
static const obj_setting *best_setting(const char *uri, bri_obj_options *opt) {
  const obj_setting *best = NULL;
  for (const obj_setting *s = registered; s; s = s->next) {
    size_t n = strlen(s->prefix);
    if (!strncmp(uri, s->prefix, n) && (uri[n] == '\0' || uri[n] == '/') &&
        (!best || n > strlen(best->prefix))) {
      best = s;
    }
  }
  if (best) {
    opt->max_rate = best->limits.max_requests_per_second;
    opt->max_active = best->limits.max_requests_in_flight;
    if (opt->max_active > 0 && opt->max_active < 16) opt->max_in_flight = opt->max_active;
  }
  return best;
}

/* The shared client of the store at uri: the connector resolves the
 * settings of the longest registered prefix (copied out under
 * registry_lock), else the environment; a registered prefix gets a client
 * of its own, so that its limits are its own. */
static int conn_for(const char *uri, const bri_obj_connector *how, const char *account, obj_conn **out,
                    bri_error *err) {
  *out = NULL;
  void *cfg = calloc(1, how->config_size);
  if (!cfg) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  char *who = NULL, *id = NULL;
  bri_obj_options opt = {0};
  pthread_mutex_lock(&registry_lock);
  const obj_setting *best = best_setting(uri, &opt);
  int rc = how->load(best ? best->settings : NULL, account, cfg, err);
  if (rc == 0 && (who = how->identity(cfg))) id = bri_strdupf("%s|%s", who, best ? best->prefix : "");
  pthread_mutex_unlock(&registry_lock);
  if (who) explicit_bzero(who, strlen(who));
  free(who);
  if (rc) {
    free(cfg);
    return bri_error_wrap(err, "%s", uri);
  }
  if (!id) {
    how->clear(cfg);
    free(cfg);
    return bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  pthread_mutex_lock(&registry_lock);
  for (obj_conn *c = conns; c; c = c->next) {
    if (!strcmp(c->id, id)) { /* listed: referenced (conn_unref) */
      atomic_fetch_add(&c->refs, 1);
      *out = c;
      break;
    }
  }
  if (!*out) {
    obj_conn *c = calloc(1, sizeof *c);
    if (!c) {
      rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    } else if ((rc = how->make(cfg, &opt, &c->client, err)) != 0) {
      free(c);
    } else {
      c->id = id;
      id = NULL;
      atomic_store(&c->refs, 1);
      c->next = conns;
      conns = c;
      *out = c;
    }
  }
  pthread_mutex_unlock(&registry_lock);
  if (id) {
    explicit_bzero(id, strlen(id));
    free(id);
  }
  how->clear(cfg);
  free(cfg);
  return rc;
}

static obj_conn *conn_ref(obj_conn *c) {
  atomic_fetch_add(&c->refs, 1);
  return c;
}

/* ------------------------------------------------------------ stores */

/* A file's tail fetched ahead (bri_store_prefetch) or at an earlier open:
 * objects Lance refers to are never rewritten, and put and delete through
 * this store drop their entry; the cache lives as long as the store (one
 * job), so a file deleted by someone else meanwhile is at worst read from
 * here once more. Bounded by CACHE_MAX bytes. */
typedef struct tail_entry {
  char *key; /* the object's */
  uint64_t size;
  uint8_t *data; /* the tail, when has_tail */
  size_t len;
  bool has_tail;
  bool has_stat; /* size and mtime from a HEAD (BRI_PREFETCH_STAT) */
  int64_t mtime;
  struct tail_entry *next;
} tail_entry;

#define CACHE_MAX ((size_t)64 << 20)

typedef struct obj_store {
  bri_store base;
  obj_conn *conn;
  char *bucket;
  char *prefix; /* key of the root, no trailing slash; "" for a whole bucket */
  pthread_mutex_t cache_lock;
  tail_entry *cache;
  size_t cache_bytes;
} obj_store;

/* The object key of a store key ("" = the root's own prefix). malloc'd. */
static char *full_key(const obj_store *s, const char *key) {
  if (!*s->prefix) return strdup(key);
  return *key ? bri_strdupf("%s/%s", s->prefix, key) : strdup(s->prefix);
}

/* The listing prefix of directory key dir: "<full>/" ("" for the bucket root). */
static char *dir_prefix(const obj_store *s, const char *dir) {
  char *k = full_key(s, dir);
  if (!k || !*k) return k;
  char *p = bri_strdupf("%s/", k);
  free(k);
  return p;
}

static void cache_drop(obj_store *s, const char *key) {
  pthread_mutex_lock(&s->cache_lock);
  for (tail_entry **p = &s->cache; *p;) {
    if (!strcmp((*p)->key, key)) {
      tail_entry *e = *p;
      *p = e->next;
      s->cache_bytes -= e->len + 64;
      free(e->key);
      free(e->data);
      free(e);
    } else {
      p = &(*p)->next;
    }
  }
  pthread_mutex_unlock(&s->cache_lock);
}

/* Keeps a tail (data taken; NULL for a stat only: size, mtime) under key
 * when there is room; frees data otherwise. */
static void cache_put(obj_store *s, const char *key, uint8_t *data, size_t len, uint64_t size,
                      int64_t mtime) {
  tail_entry *e = calloc(1, sizeof *e);
  pthread_mutex_lock(&s->cache_lock);
  if (e && s->cache_bytes + len <= CACHE_MAX && (e->key = strdup(key))) {
    e->data = data;
    e->len = len;
    e->size = size;
    e->has_tail = data != NULL;
    e->has_stat = data == NULL;
    e->mtime = mtime;
    e->next = s->cache;
    s->cache = e;
    s->cache_bytes += len + 64;
    data = NULL;
    e = NULL;
  }
  pthread_mutex_unlock(&s->cache_lock);
  free(e);
  free(data);
}

/* Size and mtime of key from a prefetched HEAD, if any. */
static bool cache_stat(obj_store *s, const char *key, uint64_t *size, int64_t *mtime) {
  bool hit = false;
  pthread_mutex_lock(&s->cache_lock);
  for (tail_entry *e = s->cache; e && !hit; e = e->next) {
    if (e->has_stat && !strcmp(e->key, key)) {
      *size = e->size;
      *mtime = e->mtime;
      hit = true;
    }
  }
  pthread_mutex_unlock(&s->cache_lock);
  return hit;
}

/* A copy of the cached tail of key, if any. */
static bool cache_get(obj_store *s, const char *key, uint8_t **data, size_t *len, uint64_t *size) {
  bool hit = false;
  pthread_mutex_lock(&s->cache_lock);
  for (tail_entry *e = s->cache; e; e = e->next) {
    if (e->has_tail && !strcmp(e->key, key)) {
      if ((*data = malloc(e->len ? e->len : 1))) {
        memcpy(*data, e->data, e->len);
        *len = e->len;
        *size = e->size;
        hit = true;
      }
      break;
    }
  }
  pthread_mutex_unlock(&s->cache_lock);
  return hit;
}

int bri_obj_store_open(const bri_store_ops *ops, const bri_obj_connector *how, const char *uri, char *bucket,
                       char *key, const char *account, bri_store **out, bri_error *err) {
  *out = NULL;
  obj_store *s = calloc(1, sizeof *s);
  if (!s) {
    free(bucket), free(key);
    return bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  pthread_mutex_init(&s->cache_lock, NULL);
  s->bucket = bucket;
  s->prefix = key;
  size_t n = strlen(s->prefix);
  while (n && s->prefix[n - 1] == '/') s->prefix[--n] = '\0';
  char *canonical = *s->prefix ? bri_strdupf("%s://%s/%s", ops->scheme, s->bucket, s->prefix)
                               : bri_strdupf("%s://%s", ops->scheme, s->bucket);
  int rc = canonical ? bri_store_base_init(&s->base, ops, uri, canonical, BRI_OBJ_STORE_CAPS, err)
                     : bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (rc == 0) rc = conn_for(canonical, how, account, &s->conn, err);
  free(canonical);
  if (rc) {
    bri_store_base_clear(&s->base);
    pthread_mutex_destroy(&s->cache_lock);
    free(s->bucket);
    free(s->prefix);
    free(s);
    return rc;
  }
  *out = &s->base;
  return 0;
}

void bri_obj_store_close(bri_store *st) {
  obj_store *s = (obj_store *)st;
  while (s->cache) {
    tail_entry *e = s->cache;
    s->cache = e->next;
    free(e->key);
    free(e->data);
    free(e);
  }
  pthread_mutex_destroy(&s->cache_lock);
  conn_unref(s->conn);
  bri_store_base_clear(st);
  free(s->bucket);
  free(s->prefix);
  free(s);
}

/* Where a store's, a file's and a writer's requests are counted. */
static bri_store_counts *store_tally(obj_store *s) { return &s->base.counts; }
static bri_store_counts *file_tally(bri_sfile *f) { return f->st ? &f->st->counts : NULL; }
static bri_store_counts *writer_tally(bri_swriter *w) { return w->st ? &w->st->counts : NULL; }

/* Is there anything below key/ (a "directory")? */
static int has_children(obj_store *s, const char *key, bool *yes, bri_error *err) {
  char *p = dir_prefix(s, key);
  if (!p) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  bri_obj_list_args a = {.prefix = p, .max_keys = 1};
  bri_obj_listing l;
  int rc = bri_obj_list_page(s->conn->client, store_tally(s), s->bucket, &a, &l, err);
  *yes = rc == 0 && (l.n_objects || l.n_prefixes);
  if (rc == 0) bri_obj_listing_clear(&l);
  free(p);
  return rc;
}

/* ------------------------------------------------------------ reading */

/* Opening a file GETs its last TAIL bytes: that one request gives the size
 * (Content-Range) and the part a Lance reader wants first (footer, column
 * metadata, and often the whole of a small data file), where a HEAD and a
 * read per structure would take a round trip each. */
#define TAIL ((size_t)256 << 10)

typedef struct obj_file {
  bri_sfile base;
  obj_conn *conn;
  char *bucket;
  char *key;
  uint8_t *tail; /* bytes [size - tail_len, size) */
  size_t tail_len;
} obj_file;

int bri_obj_store_open_file(bri_store *st, const char *key, const char *path, bri_sfile **out,
                        bri_error *err) {
  obj_store *s = (obj_store *)st;
  *out = NULL;
  char *k = full_key(s, key);
  if (!k) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  uint8_t *tail = NULL;
  size_t tail_len = 0;
  uint64_t size = 0;
  int rc = 0;
  if (!cache_get(s, k, &tail, &tail_len, &size)) {
    rc = bri_obj_get_suffix(s->conn->client, store_tally(s), s->bucket, k, TAIL, &tail, &tail_len, &size, err);
    if (rc == BRI_ENOTFOUND) rc = bri_error_set(err, BRI_ENOTFOUND, "%s: no such file", path);
    uint8_t *copy = rc ? NULL : malloc(tail_len ? tail_len : 1);
    if (copy) {
      memcpy(copy, tail, tail_len);
      cache_put(s, k, copy, tail_len, size, 0); /* a second open of it (plan, then rewrite) is free */
    }
  }
  obj_file *f = rc ? NULL : calloc(1, sizeof *f);
  if (rc == 0 && (!f || !(f->base.path = strdup(path)) || !(f->bucket = strdup(s->bucket)))) {
    rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  if (rc) {
    if (f) {
      free(f->base.path);
      free(f->bucket);
      free(f);
    }
    free(tail);
    free(k);
    return rc;
  }
  f->base.ops = st->ops;
  f->base.size = size;
  f->tail = tail;
  f->tail_len = tail_len;
  f->key = k;
  f->conn = conn_ref(s->conn);
  *out = &f->base;
  return 0;
}

int bri_obj_store_read(bri_sfile *bf, uint64_t offset, void *buf, size_t len, bri_error *err) {
  obj_file *f = (obj_file *)bf;
  if (!bri_range_ok(offset, len, bf->size)) {
    return bri_error_set(err, BRI_ECORRUPT, "%s: wanted %zu bytes at offset %llu, file ends after %llu",
                         bf->path, len, (unsigned long long)offset, (unsigned long long)bf->size);
  }
  uint64_t tail_off = bf->size - f->tail_len;
  if (offset >= tail_off) {
    memcpy(buf, f->tail + (offset - tail_off), len);
    return 0;
  }
  bri_obj_batch *b = bri_obj_batch_new(f->conn->client, file_tally(bf));
  if (!b) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  int rc = bri_obj_batch_get_range(b, f->bucket, f->key, offset, len, buf, err);
  if (rc == 0) rc = bri_obj_batch_run(b, err);
  bri_obj_batch_free(b);
  return rc;
}

/* Many ranges in flight; those inside the fetched tail cost nothing. */
int bri_obj_store_readv(bri_sfile *bf, const bri_sread *reads, size_t n, bri_error *err) {
  obj_file *f = (obj_file *)bf;
  uint64_t tail_off = bf->size - f->tail_len;
  bri_obj_batch *b = bri_obj_batch_new(f->conn->client, file_tally(bf));
  if (!b) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  int rc = 0;
  for (size_t i = 0; rc == 0 && i < n; i++) {
    if (reads[i].offset >= tail_off) memcpy(reads[i].buf, f->tail + (reads[i].offset - tail_off), reads[i].len);
    else rc = bri_obj_batch_get_range(b, f->bucket, f->key, reads[i].offset, reads[i].len, reads[i].buf, err);
  }
  if (rc == 0) rc = bri_obj_batch_run(b, err);
  bri_obj_batch_free(b);
  return rc;
}

void bri_obj_store_close_file(bri_sfile *bf) {
  obj_file *f = (obj_file *)bf;
  conn_unref(f->conn);
  free(f->base.path);
  free(f->bucket);
  free(f->key);
  free(f->tail);
  free(f);
}

/* ------------------------------------------------------------ stat, list */

int bri_obj_store_stat(bri_store *st, const char *key, bri_store_info *out, bri_error *err) {
  obj_store *s = (obj_store *)st;
  memset(out, 0, sizeof *out);
  if (!*key) {
    out->kind = BRI_ENTRY_DIR;
    return 0;
  }
  char *k = full_key(s, key);
  if (!k) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  bri_obj_info o = {0};
  int rc = 0;
  if (cache_stat(s, k, &o.size, &o.mtime)) {
    out->kind = BRI_ENTRY_FILE;
    out->size = o.size;
    out->mtime_ns = o.mtime * 1000000000LL;
    free(k);
    return 0;
  }
  rc = bri_obj_head(s->conn->client, store_tally(s), s->bucket, k, &o, err);
  if (rc == 0) {
    out->kind = BRI_ENTRY_FILE;
    out->size = o.size;
    out->mtime_ns = o.mtime * 1000000000LL;
  } else if (rc == BRI_ENOTFOUND) {
    bool dir;
    rc = has_children(s, key, &dir, err);
    if (rc == 0 && dir) out->kind = BRI_ENTRY_DIR;
    else if (rc == 0) rc = bri_error_set(err, BRI_ENOTFOUND, "%s/%s: no such file or directory", st->uri, key);
  }
  bri_obj_info_clear(&o);
  free(k);
  return rc;
}

/* The entries of a listing of prefix p: objects, and common prefixes
 * under "/" (their trailing "/" dropped). */
static int entries_of(const char *p, const bri_obj_listing *l, bri_store_entry **out, size_t *count,
                      bri_error *err) {
  *out = NULL;
  *count = 0;
  size_t plen = strlen(p), k = 0;
  int rc = 0;
  bri_store_entry *e = calloc(l->n_objects + l->n_prefixes + 1, sizeof *e);
  if (!e) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  for (size_t i = 0; rc == 0 && i < l->n_objects; i++) {
    const char *name = l->objects[i].key + plen;
    if (!*name) continue; /* a "directory marker" object named like the prefix */
    e[k].info = (bri_store_info){BRI_ENTRY_FILE, l->objects[i].size, l->objects[i].mtime * 1000000000LL};
    if (!(e[k++].name = strdup(name))) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  for (size_t i = 0; rc == 0 && i < l->n_prefixes; i++) {
    const char *name = l->prefixes[i] + plen;
    size_t nl = strlen(name);
    if (nl < 2) continue; /* "/" alone: an empty component, never Lance's */
    e[k].info.kind = BRI_ENTRY_DIR;
    if (!(e[k++].name = strndup(name, nl - 1))) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  if (rc) {
    bri_store_entries_free(e, k);
    return rc;
  }
  *out = e;
  *count = k;
  return 0;
}

/* A listing of directory p with delimiter "/": n > 0 one page of max-keys n
 * (object stores give keys and prefixes in name order), n == 0 all. */
static bri_obj_list_args dir_args(const char *p, size_t n) {
  return (bri_obj_list_args){.prefix = p, .delimiter = "/", .max_keys = n > 1000 ? 1000 : (int)n};
}

/* The immediate children of dir, from one page (n > 0) or every page. */
static int list_dir(obj_store *s, const char *dir, size_t n, bri_store_entry **out, size_t *count,
                    bri_error *err) {
  *out = NULL;
  *count = 0;
  char *p = dir_prefix(s, dir);
  if (!p) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  bri_obj_list_args a = dir_args(p, n);
  bri_obj_listing l;
  int rc = n ? bri_obj_list_page(s->conn->client, store_tally(s), s->bucket, &a, &l, err)
             : bri_obj_list_all(s->conn->client, store_tally(s), s->bucket, &a, &l, err);
  if (rc == 0) {
    rc = entries_of(p, &l, out, count, err);
    bri_obj_listing_clear(&l);
  }
  free(p);
  return rc;
}

int bri_obj_store_list(bri_store *st, const char *dir, unsigned flags, bri_store_entry **out,
                   size_t *count, bri_error *err) {
  (void)flags; /* sizes and times come with the listing */
  return list_dir((obj_store *)st, dir, 0, out, count, err);
}

/* Every object below dir: a listing without a delimiter, page after page,
 * up to max_pages. */
int bri_obj_store_list_tree(bri_store *st, const char *dir, size_t max_pages, bri_store_entry **out, size_t *count,
                        bri_error *err) {
  obj_store *s = (obj_store *)st;
  char *p = dir_prefix(s, dir), *token = NULL;
  int rc = p ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
  for (size_t page = 0; rc == 0; page++) {
    if (page == max_pages) {
      rc = bri_error_set(err, BRI_EUNSUPPORTED, "%s/%s: more than %zu pages of names", st->uri, dir, max_pages);
      break;
    }
    bri_obj_list_args a = {.prefix = p, .continuation_token = token};
    bri_obj_listing l;
    bri_store_entry *e = NULL;
    size_t n = 0;
    if ((rc = bri_obj_list_page(s->conn->client, store_tally(s), s->bucket, &a, &l, err)) != 0) break;
    rc = entries_of(p, &l, &e, &n, err);
    bri_store_entry *all = rc || !n ? *out : realloc(*out, (*count + n) * sizeof *all);
    if (!rc && !all && n) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    if (!rc) {
      if (n) memcpy(all + *count, e, n * sizeof *e);
      *out = all, *count += n;
      free(e);
    } else {
      bri_store_entries_free(e, n);
    }
    free(token);
    token = l.truncated ? l.next_token : NULL; /* the next page's, taken */
    if (token) l.next_token = NULL;
    bri_obj_listing_clear(&l);
    if (!token) break;
  }
  free(token), free(p);
  if (rc) {
    bri_store_entries_free(*out, *count);
    *out = NULL, *count = 0;
  }
  return rc;
}

/* The first n entries of dir: one listing page of max-keys n. */
int bri_obj_store_list_first(bri_store *st, const char *dir, unsigned flags, size_t n,
                         bri_store_entry **out, size_t *count, bri_error *err) {
  (void)flags;
  return list_dir((obj_store *)st, dir, n ? n : 1, out, count, err);
}

/* The first n entries of many directories: one batch of pages in flight. */
int bri_obj_store_list_first_many(bri_store *st, bri_store_listing *dirs, const char *const *keys,
                              size_t count, unsigned flags, size_t n, bri_error *err) {
  (void)flags;
  obj_store *s = (obj_store *)st;
  bri_obj_batch *b = bri_obj_batch_new(s->conn->client, store_tally(s));
  char **p = calloc(count + 1, sizeof *p);
  bri_obj_listing *l = calloc(count + 1, sizeof *l);
  int rc = b && p && l ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
  for (size_t i = 0; rc == 0 && i < count; i++) {
    bri_obj_list_args a = dir_args(p[i] = dir_prefix(s, keys[i]), n ? n : 1);
    if (!p[i]) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    else rc = bri_obj_batch_list(b, s->bucket, &a, &l[i], &dirs[i].rc, &dirs[i].err, err);
  }
  bri_error ignored; /* each listing has its own outcome */
  if (rc == 0) bri_obj_batch_run(b, &ignored);
  for (size_t i = 0; rc == 0 && i < count; i++) {
    if (dirs[i].rc == 0) dirs[i].rc = entries_of(p[i], &l[i], &dirs[i].entries, &dirs[i].count, &dirs[i].err);
  }
  for (size_t i = 0; l && i < count; i++) bri_obj_listing_clear(&l[i]);
  for (size_t i = 0; p && i < count; i++) free(p[i]);
  free(p), free(l);
  bri_obj_batch_free(b);
  return rc;
}

/* ------------------------------------------------------------ writing */

static int pass(const char *failpoint, bri_error *err) {
  return failpoint ? bri_failpoint(failpoint, err) : 0;
}

int bri_obj_store_put(bri_store *st, const char *key, const void *data, size_t len, unsigned how,
                  const bri_store_steps *steps, bri_error *err) {
  obj_store *s = (obj_store *)st;
  char *k = full_key(s, key);
  if (!k) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  int rc;
  if ((rc = pass(steps->written, err)) || (rc = pass(steps->durable, err)) ||
      (rc = pass(steps->publish, err))) {
    free(k);
    return rc;
  }
  cache_drop(s, k);
  rc = bri_obj_put(s->conn->client, store_tally(s), s->bucket, k, data, len, how & BRI_PUT_IF_ABSENT ? BRI_OBJ_PUT_IF_ABSENT : 0, err);
  if (rc == BRI_ETAKEN) rc = bri_error_set(err, BRI_ETAKEN, "%s/%s: exists", st->uri, key);
  if (rc == 0) {
    bri_error warn;
    if (pass(steps->published, &warn) && err) *err = warn; /* a warning, never a failure */
  }
  free(k);
  return rc;
}

typedef struct obj_writer {
  bri_swriter base;
  obj_conn *conn;
  const char *scheme; /* the store's, for messages */
  char *bucket;
  char *key;       /* the object's */
  char *upload_id; /* NULL until the first part */
  bri_obj_part *parts;
  size_t n_parts, cap_parts;
  uint8_t *buf; /* PART_SIZE bytes */
  size_t buf_len;
  /* A copied range not sent yet: the next copy of the bytes right after it
   * in the same object extends it, so a run of adjacent small ranges (the
   * blobs of a pack file, in order) becomes one server-side copy. */
  char *pend_bucket, *pend_key;
  uint64_t pend_off, pend_len;
} obj_writer;

static void writer_free(obj_writer *w) {
  conn_unref(w->conn);
  free(w->pend_bucket);
  free(w->pend_key);
  free(w->bucket);
  free(w->key);
  free(w->upload_id);
  free(w->parts);
  free(w->buf);
  free(w);
}

/* Refuses a name that exists (see the top of the file for why a HEAD). */
static int check_absent(obj_conn *c, bri_store_counts *tally, const char *bucket, const char *key,
                        const char *what, bri_error *err) {
  bri_obj_info o;
  int rc = bri_obj_head(c->client, tally, bucket, key, &o, err);
  bri_obj_info_clear(&o);
  if (rc == 0) return bri_error_set(err, BRI_ETAKEN, "%s: exists", what);
  return rc == BRI_ENOTFOUND ? 0 : rc;
}

int bri_obj_store_create(bri_store *st, const char *key, bri_swriter **out, bri_error *err) {
  obj_store *s = (obj_store *)st;
  *out = NULL;
  obj_writer *w = calloc(1, sizeof *w);
  if (!w) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  w->conn = conn_ref(s->conn);
  w->scheme = st->ops->scheme;
  w->base.st = st; /* the front sets it too; bri_obj_store_copy makes writers without the front */
  w->bucket = strdup(s->bucket);
  w->key = full_key(s, key);
  w->buf = malloc(PART_SIZE);
  if (!w->bucket || !w->key || !w->buf) {
    writer_free(w);
    return bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  char *what = bri_strdupf("%s/%s", st->uri, key);
  int rc = check_absent(w->conn, store_tally(s), w->bucket, w->key, what ? what : key, err);
  free(what);
  if (rc) {
    writer_free(w);
    return rc;
  }
  *out = &w->base;
  return 0;
}

static int add_part_slot(obj_writer *w, bri_error *err) {
  if (!w->upload_id) {
    int rc = bri_obj_mpu_create(w->conn->client, writer_tally(&w->base), w->bucket, w->key, &w->upload_id, err);
    if (rc) return rc;
  }
  if (w->n_parts == w->cap_parts) {
    size_t cap = w->cap_parts ? w->cap_parts * 2 : 16;
    bri_obj_part *grown = realloc(w->parts, cap * sizeof *grown);
    if (!grown) return bri_error_set(err, BRI_ENOMEM, "out of memory");
    w->parts = grown;
    w->cap_parts = cap;
  }
  bri_obj_size_limits limits;
  bri_obj_client_size_limits(w->conn->client, &limits);
  if (w->n_parts == limits.max_parts) {
    return bri_error_set(err, BRI_EUNSUPPORTED, "%s: more than the service's %zu parts", w->base.path,
                         limits.max_parts);
  }
  return 0;
}

/* Sends the buffer as the next part. */
static int flush_part(obj_writer *w, bri_error *err) {
  int rc = add_part_slot(w, err);
  if (rc) return rc;
  bri_obj_batch *b = bri_obj_batch_new(w->conn->client, writer_tally(&w->base));
  if (!b) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  rc = bri_obj_batch_put_part(b, w->bucket, w->key, w->upload_id, (int)w->n_parts + 1, w->buf,
                             w->buf_len, &w->parts[w->n_parts], err);
  if (rc == 0) rc = bri_obj_batch_run(b, err);
  bri_obj_batch_free(b);
  if (rc == 0) {
    w->n_parts++;
    w->buf_len = 0;
  }
  return rc;
}

static int flush_pending(obj_writer *w, bool last, bri_error *err);

int bri_obj_store_append(bri_swriter *bw, const void *data, size_t len, bri_error *err) {
  obj_writer *w = (obj_writer *)bw;
  const uint8_t *p = data;
  int rc = flush_pending(w, false, err);
  if (rc) return rc;
  while (len) {
    size_t n = PART_SIZE - w->buf_len < len ? PART_SIZE - w->buf_len : len;
    memcpy(w->buf + w->buf_len, p, n);
    w->buf_len += n;
    p += n;
    len -= n;
    if (w->buf_len == PART_SIZE && (rc = flush_part(w, err)) != 0) return rc;
  }
  return 0;
}

/* Reads [off, off + len) of src into the buffer (through this process). */
static int append_read(obj_writer *w, const char *bucket, const char *key, uint64_t off,
                       uint64_t len, bri_error *err) {
  while (len) {
    size_t n = PART_SIZE - w->buf_len < len ? PART_SIZE - w->buf_len : (size_t)len;
    size_t got = 0;
    int rc = bri_obj_get_range(w->conn->client, writer_tally(&w->base), bucket, key, off, n, w->buf + w->buf_len, &got, NULL, err);
    if (rc == 0 && got != n) {
      rc = bri_error_set(err, BRI_EIO, "%s://%s/%s: ends before byte %llu (copying into %s)",
                         w->scheme, bucket, key, (unsigned long long)(off + n), w->base.path);
    }
    if (rc) return rc;
    w->buf_len += n;
    off += n;
    len -= n;
    if (w->buf_len == PART_SIZE && (rc = flush_part(w, err))) return rc;
  }
  return 0;
}

/* Same endpoint and credentials: the store can copy between the two. */
static bool same_conn(const obj_conn *a, const obj_conn *b) { return a == b || !strcmp(a->id, b->id); }

/* Appends [offset, offset + len) of object bucket/key: parts copied on the
 * server when the range can be parts (at least the part minimum after
 * topping up what is buffered, or any size as the object's last part),
 * else read through this process. */
static int copy_range(obj_writer *w, const char *bucket, const char *key, uint64_t offset,
                      uint64_t len, bool last, bri_error *err) {
  int rc;
  bri_obj_size_limits limits;
  bri_obj_client_size_limits(w->conn->client, &limits);
  if (len < limits.part_min && !last) return append_read(w, bucket, key, offset, len, err);
  if (w->buf_len) { /* top the buffer up to a valid part from the head of the range */
    uint64_t top = w->buf_len < limits.part_min ? limits.part_min - w->buf_len : 0;
    if (top >= len) return append_read(w, bucket, key, offset, len, err);
    if ((rc = append_read(w, bucket, key, offset, top, err))) return rc;
    offset += top;
    len -= top;
    if (w->buf_len && (rc = flush_part(w, err))) return rc;
    if (len < limits.part_min && !last) return append_read(w, bucket, key, offset, len, err);
  }
  uint64_t pieces = (len + limits.part_max - 1) / limits.part_max, each = len / pieces;
  bri_obj_batch *b = bri_obj_batch_new(w->conn->client, writer_tally(&w->base));
  if (!b) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  size_t first = w->n_parts;
  rc = 0;
  for (uint64_t i = 0; rc == 0 && i < pieces; i++) {
    uint64_t n = i + 1 == pieces ? len - each * i : each;
    if ((rc = add_part_slot(w, err)) == 0) {
      rc = bri_obj_batch_copy_part(b, w->bucket, w->key, w->upload_id, (int)w->n_parts + 1, bucket,
                                  key, offset + each * i, n, &w->parts[w->n_parts], err);
      if (rc == 0) w->n_parts++;
    }
  }
  if (rc == 0) rc = bri_obj_batch_run(b, err);
  if (rc) {
    w->n_parts = first;
    bri_error_wrap(err, "copying bytes %llu-%llu of %s://%s/%s", (unsigned long long)offset,
                   (unsigned long long)(offset + len - 1), w->scheme, bucket, key);
  }
  bri_obj_batch_free(b);
  return rc;
}

/* Sends the pending copied range, if any; last: nothing follows it. */
static int flush_pending(obj_writer *w, bool last, bri_error *err) {
  if (!w->pend_key) return 0;
  int rc = copy_range(w, w->pend_bucket, w->pend_key, w->pend_off, w->pend_len, last, err);
  free(w->pend_bucket);
  free(w->pend_key);
  w->pend_bucket = w->pend_key = NULL;
  return rc;
}

int bri_obj_store_append_copy(bri_swriter *bw, bri_store *src, const char *src_key, uint64_t offset,
                          uint64_t len, bri_error *err) {
  obj_writer *w = (obj_writer *)bw;
  obj_store *s = (obj_store *)src;
  if (!same_conn(w->conn, s->conn)) return BRI_EUNSUPPORTED; /* the front reads and writes */
  char *k = full_key(s, src_key);
  if (!k) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (w->pend_key && !strcmp(w->pend_bucket, s->bucket) && !strcmp(w->pend_key, k) &&
      offset == w->pend_off + w->pend_len) {
    w->pend_len += len;
    free(k);
    return 0;
  }
  int rc = flush_pending(w, false, err);
  if (rc == 0 && !(w->pend_bucket = strdup(s->bucket))) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (rc) {
    free(k);
    return rc;
  }
  w->pend_key = k;
  w->pend_off = offset;
  w->pend_len = len;
  return 0;
}

void bri_obj_store_abort(bri_swriter *bw) {
  obj_writer *w = (obj_writer *)bw;
  if (w->upload_id) {
    bri_error ignored;
    bri_obj_mpu_abort(w->conn->client, writer_tally(&w->base), w->bucket, w->key, w->upload_id, &ignored);
  }
  writer_free(w);
}

int bri_obj_store_finish(bri_swriter *bw, bri_error *err) {
  obj_writer *w = (obj_writer *)bw;
  int rc = flush_pending(w, true, err);
  if (rc == 0 && !w->upload_id) {
    if ((rc = pass(bw->steps.written, err)) == 0) {
      rc = bri_obj_put(w->conn->client, writer_tally(&w->base), w->bucket, w->key, w->buf, w->buf_len, BRI_OBJ_PUT_IF_ABSENT, err);
      if (rc == BRI_ETAKEN) rc = bri_error_set(err, BRI_ETAKEN, "%s: exists", bw->path);
    }
  } else if (rc == 0) {
    if (w->buf_len) rc = flush_part(w, err);
    if (rc == 0) rc = pass(bw->steps.written, err);
    if (rc == 0) rc = bri_obj_mpu_complete(w->conn->client, writer_tally(&w->base), w->bucket, w->key, w->upload_id, w->parts, w->n_parts, err);
  }
  if (rc) {
    bri_obj_store_abort(bw);
    return rc;
  }
  writer_free(w);
  return 0;
}

/* Whole-object copy within one endpoint: one copy on the server, or part
 * copies above the store's limit of one copy. */
int bri_obj_store_copy(bri_store *src, const char *src_key, bri_store *dst, const char *dst_key,
                   unsigned flags, bool *linked, uint64_t *bytes, bri_error *err) {
  (void)flags; /* no links on an object store: always a copy */
  obj_store *s = (obj_store *)src, *d = (obj_store *)dst;
  if (linked) *linked = false;
  if (!same_conn(s->conn, d->conn)) return BRI_EUNSUPPORTED;
  char *sk = full_key(s, src_key), *dk = full_key(d, dst_key);
  char *spath = bri_strdupf("%s/%s", src->uri, src_key), *dpath = bri_strdupf("%s/%s", dst->uri, dst_key);
  int rc = 0;
  bri_obj_info o = {0};
  if (!sk || !dk || !spath || !dpath) {
    rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    goto out;
  }
  rc = bri_obj_head(s->conn->client, store_tally(d), s->bucket, sk, &o, err);
  if (rc == BRI_ENOTFOUND) rc = bri_error_set(err, BRI_ENOTFOUND, "%s: no such file", spath);
  if (rc || (rc = check_absent(d->conn, store_tally(d), d->bucket, dk, dpath, err))) goto out;
  bri_obj_size_limits limits;
  bri_obj_client_size_limits(s->conn->client, &limits);
  if (o.size <= limits.copy_max) {
    rc = bri_obj_copy(s->conn->client, store_tally(d), s->bucket, sk, d->bucket, dk, o.size, err);
  } else {
    bri_swriter *w;
    if ((rc = bri_obj_store_create(dst, dst_key, &w, err)) == 0) {
      w->path = dpath; /* for messages only; the front's fields are not set here */
      rc = bri_obj_store_append_copy(w, src, src_key, 0, o.size, err);
      if (rc == 0) {
        rc = bri_obj_store_finish(w, err);
      } else {
        bri_obj_store_abort(w);
      }
    }
  }
  if (rc == 0) *bytes = o.size;
out:
  bri_obj_info_clear(&o);
  free(sk);
  free(dk);
  free(spath);
  free(dpath);
  return rc;
}

/* ------------------------------------------------------------ deleting */

int bri_obj_store_delete_one(bri_store *st, const char *key, bri_error *err) {
  obj_store *s = (obj_store *)st;
  char *k = full_key(s, key);
  if (!k) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  bri_obj_info o;
  int rc = bri_obj_head(s->conn->client, store_tally(s), s->bucket, k, &o, err);
  bri_obj_info_clear(&o);
  if (rc == BRI_ENOTFOUND) { /* a prefix ("directory") deletes nothing */
    bool dir = false;
    rc = has_children(s, key, &dir, err);
    if (rc == 0 && !dir) rc = bri_error_set(err, BRI_ENOTFOUND, "%s/%s: no such file", st->uri, key);
  } else if (rc == 0) {
    size_t deleted;
    const char *keys[] = {k};
    cache_drop(s, k);
    rc = bri_obj_delete(s->conn->client, store_tally(s), s->bucket, keys, 1, NULL, &deleted, err);
  }
  free(k);
  return rc;
}

int bri_obj_store_delete_many(bri_store *st, const char *const *keys, size_t n, int *rcs, bri_error *err) {
  obj_store *s = (obj_store *)st;
  char **full = calloc(n ? n : 1, sizeof *full);
  int rc = full ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
  for (size_t i = 0; rc == 0 && i < n; i++) {
    if (!(full[i] = full_key(s, keys[i]))) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    else cache_drop(s, full[i]);
  }
  size_t deleted;
  if (rc == 0) rc = bri_obj_delete(s->conn->client, store_tally(s), s->bucket, (const char *const *)full, n, rcs, &deleted, err);
  for (size_t i = 0; full && i < n; i++) free(full[i]);
  free(full);
  return rc;
}

/* Tails (or HEADs) of many files at once, max_in_flight requests at a
 * time; only as many as the cache has room for (a tail fetched and not
 * kept would be fetched again by its open). */
void bri_obj_store_prefetch(bri_store *st, const char *const *keys, size_t n, unsigned flags) {
  obj_store *s = (obj_store *)st;
  bool stat = flags & BRI_PREFETCH_STAT;
  pthread_mutex_lock(&s->cache_lock);
  size_t free_bytes = s->cache_bytes < CACHE_MAX ? CACHE_MAX - s->cache_bytes : 0;
  size_t room = free_bytes / ((stat ? 0 : TAIL) + 64);
  pthread_mutex_unlock(&s->cache_lock);
  if (n > room) n = room;
  bri_obj_batch *b = bri_obj_batch_new(s->conn->client, store_tally(s));
  char **full = calloc(n, sizeof *full);
  uint8_t **data = calloc(n, sizeof *data);
  size_t *len = calloc(n, sizeof *len);
  uint64_t *size = calloc(n, sizeof *size);
  bri_obj_info *heads = calloc(n, sizeof *heads);
  int *rcs = calloc(n, sizeof *rcs);
  bri_error ignored;
  bool ok = b && full && data && len && size && heads && rcs;
  for (size_t i = 0; ok && i < n; i++) rcs[i] = BRI_ENOTFOUND; /* not asked */
  for (size_t i = 0; ok && i < n; i++) {
    uint8_t *hit;
    size_t hl;
    uint64_t hs;
    int64_t hm;
    if (!(full[i] = full_key(s, keys[i]))) break;
    if (stat ? cache_stat(s, full[i], &hs, &hm) : cache_get(s, full[i], &hit, &hl, &hs)) {
      if (!stat) free(hit);
      continue;
    }
    if (stat ? bri_obj_batch_head(b, s->bucket, full[i], &heads[i], &rcs[i], &ignored)
             : bri_obj_batch_get_suffix(b, s->bucket, full[i], TAIL, &data[i], &len[i], &size[i], &rcs[i], &ignored))
      break;
  }
  if (ok) bri_obj_batch_run(b, &ignored);
  for (size_t i = 0; ok && i < n; i++) {
    if (rcs[i] == 0 && stat) cache_put(s, full[i], NULL, 0, heads[i].size, heads[i].mtime);
    else if (rcs[i] == 0) cache_put(s, full[i], data[i], len[i], size[i], 0);
    else free(data[i]);
    bri_obj_info_clear(&heads[i]);
    free(full[i]);
  }
  bri_obj_batch_free(b);
  free(full);
  free(data);
  free(len);
  free(size);
  free(heads);
  free(rcs);
}

/* ------------------------------------------------------- roots' settings */

const char *bri_obj_setting(const bri_store_setting *s, size_t n, const char *name) {
  const char *v = NULL;
  for (size_t i = 0; i < n; i++)
    if (!strcmp(s[i].name, name)) v = s[i].value;
  return v;
}

int bri_obj_check_endpoint(const char *uri, const char *endpoint, bri_error *err) {
  if (endpoint && strncmp(endpoint, "http://", 7) && strncmp(endpoint, "https://", 8))
    return bri_error_set(err, BRI_EINVAL, "%s endpoint: \"%s\" is not an http:// or https:// URL", uri, endpoint);
  return 0;
}

char *bri_obj_setting_dup(const char *s, bool *ok) {
  if (!s) return NULL;
  char *d = strdup(s);
  if (!d) *ok = false;
  return d;
}

void bri_obj_secret_free(const char *s) {
  if (s) explicit_bzero((char *)s, strlen(s));
  free((char *)s);
}
