/* svc_discover.h: the walk of one root that finds its tables, for every
 * kind of store (off the loop: svc_watch.c runs it on libuv's thread pool).
 *
 * The walk lists the root level by level through its store (bri_store_list:
 * readdir locally, never following a symbolic link; ListObjectsV2 or List
 * Blobs with delimiter "/" on an object store), skips hidden entries, and
 * lets the store's kind (bri_store_caps) say how a directory is told to be a
 * table:
 *   - a local root (BRI_STORE_CAP_LOCAL): any directory holding a
 *     _versions/ directory is a table (its inside is never walked); every
 *     other directory the walk passes is named to the caller (its inotify
 *     watch finds tables created later); directories down to
 *     discovery_depth are looked at, those above it listed;
 *   - an object-store root (BRI_STORE_CAP_POLL): a NAME.lance prefix is a
 *     table if its _versions/ holds a version: the first entry of every
 *     candidate's _versions/ is asked for in one batch
 *     (bri_store_list_first_many, max-keys 1: Lance's V2 manifest names
 *     sort newest first), and a table with an older naming costs a full
 *     listing of its _versions/; prefixes are listed down to
 *     discovery_depth itself (svc_poll.h: 1 + (tables) requests a poll).
 * A sub-level that cannot be listed is logged and the walk goes on; the
 * root's own level failing fails the walk. */
#ifndef BRI_SVC_DISCOVER_H
#define BRI_SVC_DISCOVER_H

#include <stdbool.h>
#include <stdint.h>

#include "bri/error.h"

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
  int64_t changed_ms; /* a local table: when its _versions/ last changed (its mtime), else 0 */
} svc_found;

/* Where the walk tells what it found, on the walk's thread. */
typedef struct svc_discover_sink {
  void (*table)(void *ctx, const svc_found *found);
  void (*dir)(void *ctx, const char *path); /* a local directory that is no table */
  void *ctx;
} svc_discover_sink;

/* Walks root (a local root: its canonical path) down to max_depth levels,
 * in the order of the listings (any thread but the loop's). Fails (nothing
 * more found) when the root itself cannot be listed. */
int svc_discover_walk(const char *root, int max_depth, const svc_discover_sink *sink, bri_error *err);

#endif
