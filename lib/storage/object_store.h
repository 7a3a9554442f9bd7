/* object_store.h: the storage interface (store.h, backend.h) on an object
 * store, for the backends of lib/storage that are one (s3_store.c,
 * azure_store.c): a store rooted at SCHEME://bucket/p/t.lance names objects
 * "p/t.lance/KEY" in bucket, and reaches them through an object-store
 * client (object_client.h) of the backend's dialect.
 *
 * A backend gives its own open (it parses its locations, then calls
 * bri_obj_store_open with its connector), canonical, settings and
 * configure, and takes the rest of its bri_store_ops from
 * BRI_OBJ_STORE_OPS.
 *
 * Every store (and every file and writer opened from it) holds a reference
 * to one shared client per distinct connection identity and registered
 * prefix, so stores opened and closed per table reuse connections, and a
 * root's request limits hold for everything done below it. */
#ifndef BRI_OBJECT_STORE_H
#define BRI_OBJECT_STORE_H

#include "storage/backend.h"
#include "storage/object_client.h"
#include "util/error.h"

/* How a backend gets the client of a store: config_size bytes of its
 * configuration, loaded from the settings registered for the store's
 * prefix (NULL: none; the backend's own type) and the account its location
 * names (NULL: none), holding nothing on failure; its identity (malloc'd,
 * NULL out of memory: everything that makes two clients differ, secrets
 * included: it is compared, never shown); a client made of it; and clear,
 * which frees what a loaded configuration holds. */
typedef struct bri_obj_connector {
  size_t config_size;
  int (*load)(const void *settings, const char *account, void *cfg, bri_error *err);
  char *(*identity)(const void *cfg);
  int (*make)(const void *cfg, const bri_obj_options *opt, bri_obj_client **out, bri_error *err);
  void (*clear)(void *cfg);
} bri_obj_connector;

/* Opens a store of ops at bucket / key (both malloc'd, taken; key's
 * trailing slashes dropped) for uri as the user gave it; its client through
 * how, for the account the location names (may be NULL). */
int bri_obj_store_open(const bri_store_ops *ops, const bri_obj_connector *how, const char *uri, char *bucket,
                       char *key, const char *account, bri_store **out, bri_error *err);

/* Settings for every store opened at or below prefix_uri (its trailing
 * slashes dropped; the longest registered prefix wins; stores elsewhere
 * take the environment), as the backend's connector reads them: settings
 * is taken (freed with dispose, also on failure); NULL forgets the prefix.
 * Stores under a registered prefix share one client of their own, so the
 * limits are the prefix's alone. Thread-safe; stores already open keep the
 * client they have. */
int bri_obj_store_configure(const char *prefix_uri, void *settings, void (*dispose)(void *),
                            const bri_store_limits *limits, bri_error *err);

/* For a backend's configure: the value of setting name among s[0..n)
 * (NULL: not given); an endpoint that is not an http:// or https:// URL
 * refused, naming uri. */
const char *bri_obj_setting(const bri_store_setting *s, size_t n, const char *name);
int bri_obj_check_endpoint(const char *uri, const char *endpoint, bri_error *err);
/* For a backend's copy of its settings: a copy of s (NULL for NULL; out of
 * memory: NULL and *ok false); freeing a secret's copy, wiped first. */
char *bri_obj_setting_dup(const char *s, bool *ok);
void bri_obj_secret_free(const char *s);

/* What an object store can do (store.h): poll, copy on the server,
 * put-if-absent; no links, no real directories, no inotify. */
#define BRI_OBJ_STORE_CAPS (BRI_STORE_CAP_POLL | BRI_STORE_CAP_SERVER_COPY | BRI_STORE_CAP_PUT_IF_ABSENT)

/* The operations of bri_store_ops (backend.h) every object-store backend
 * shares. */
void bri_obj_store_close(bri_store *st);
int bri_obj_store_open_file(bri_store *st, const char *key, const char *path, bri_sfile **out, bri_error *err);
int bri_obj_store_read(bri_sfile *f, uint64_t offset, void *buf, size_t len, bri_error *err);
int bri_obj_store_readv(bri_sfile *f, const bri_sread *reads, size_t n, bri_error *err);
void bri_obj_store_close_file(bri_sfile *f);
int bri_obj_store_stat(bri_store *st, const char *key, bri_store_info *out, bri_error *err);
int bri_obj_store_list(bri_store *st, const char *dir, unsigned flags, bri_store_entry **out, size_t *count,
                       bri_error *err);
int bri_obj_store_list_tree(bri_store *st, const char *dir, size_t max_pages, bri_store_entry **out,
                            size_t *count, bri_error *err);
int bri_obj_store_list_first(bri_store *st, const char *dir, unsigned flags, size_t n, bri_store_entry **out,
                             size_t *count, bri_error *err);
int bri_obj_store_list_first_many(bri_store *st, bri_store_listing *dirs, const char *const *keys, size_t count,
                                  unsigned flags, size_t n, bri_error *err);
int bri_obj_store_put(bri_store *st, const char *key, const void *data, size_t len, unsigned how,
                      const bri_store_steps *steps, bri_error *err);
int bri_obj_store_create(bri_store *st, const char *key, bri_swriter **out, bri_error *err);
int bri_obj_store_append(bri_swriter *w, const void *data, size_t len, bri_error *err);
int bri_obj_store_append_copy(bri_swriter *w, bri_store *src, const char *src_key, uint64_t offset, uint64_t len,
                              bri_error *err);
int bri_obj_store_finish(bri_swriter *w, bri_error *err);
void bri_obj_store_abort(bri_swriter *w);
int bri_obj_store_copy(bri_store *src, const char *src_key, bri_store *dst, const char *dst_key, unsigned flags,
                       bool *linked, uint64_t *bytes, bri_error *err);
int bri_obj_store_delete_one(bri_store *st, const char *key, bri_error *err);
int bri_obj_store_delete_many(bri_store *st, const char *const *keys, size_t n, int *rcs, bri_error *err);
void bri_obj_store_prefetch(bri_store *st, const char *const *keys, size_t n, unsigned flags);

#define BRI_OBJ_STORE_OPS                                                                                        \
  .counts_itself = true, .caps = BRI_OBJ_STORE_CAPS, .close = bri_obj_store_close,                             \
  .open_file = bri_obj_store_open_file, .read = bri_obj_store_read, .readv = bri_obj_store_readv,               \
  .close_file = bri_obj_store_close_file, .stat = bri_obj_store_stat, .list = bri_obj_store_list,               \
  .list_tree = bri_obj_store_list_tree, .list_first = bri_obj_store_list_first,                                 \
  .list_first_many = bri_obj_store_list_first_many, .put = bri_obj_store_put, .create = bri_obj_store_create,   \
  .append = bri_obj_store_append, .append_copy = bri_obj_store_append_copy, .finish = bri_obj_store_finish,     \
  .abort = bri_obj_store_abort, .copy = bri_obj_store_copy, .delete_one = bri_obj_store_delete_one,             \
  .delete_many = bri_obj_store_delete_many, .prefetch = bri_obj_store_prefetch

#endif
