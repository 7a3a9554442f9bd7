/* svc_discover.h: a discovery's work off the loop: the walk of each of its
 * roots that finds their tables, for every kind of store, and the
 * registration of the new ones in the job store, in batches handed to the
 * loop as they are registered (svc_watch.c queues discoveries on libuv's
 * thread pool and applies what they found).
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
#include <sys/types.h>

#include "brid/2_state/svc_state.h"

/* What a discovery found of one table. */
typedef struct svc_discovered {
  char *root;
  int64_t id;
  bool fresh;   /* not registered when the walk began: id and seen are from the store */
  bool created; /* the store did not know it either */
  bool has_seen, failed;
  uint64_t seen;
  bool s3;          /* under an S3 root: polled */
  bool has_version; /* the walk listed its latest version (S3) */
  uint64_t version;
  int64_t changed_ms; /* when its _versions/ last changed (local) or its latest manifest was
                         written (object stores, to the second); 0: not known */
  struct brid_table *placed; /* the loop's table, once a batch registered it */
} svc_discovered;

/* One discovery of some roots: a copy of what the walk needs, taken on the
 * loop (svc_discovery_new), what the walk found, and what the loop keeps
 * with it until it ends (svc_watch.c). */
typedef struct svc_discovery {
  uv_work_t req;
  brid *d;
  bri_jobs_store *store;
  char **roots;  /* the roots this discovery walks */
  char **canon;  /* their canonical form (a local root that cannot be resolved: the
                  * one it had when last listed, or NULL) */
  int *root_rc;  /* a root that could not be listed: its tables are left as they are */
  char **root_why; /* and why (svc_roots.c reports it) */
  bri_error root_err; /* the first such failure */
  size_t n_roots;
  bool all_local; /* every local root is walked: directory watches are refreshed */
  bool full;      /* every root is walked (a table under none is gone) */
  void (*done)(void *user, int rc, const bri_error *err); /* a poll's (svc_poll.c) */
  void *done_user;
  int depth;
  bri_strset known; /* registered roots: no store call for them */
  svc_discovered *tables;
  size_t n_tables, cap_tables;
  size_t n_registered; /* the walk's: tables before this one are registered in the store */
  pthread_mutex_t mu;  /* tables (the walk appends) and n_published */
  size_t n_published;  /* registered and handed to the loop (d->streaming) */
  size_t n_applied;    /* the loop's: tables before this one it has registered */
  bool stream;         /* the loop takes the batches as they come (d->streaming) */
  bool startup;        /* the start-up discovery: brid is ready when it ends */
  bool walking_polled; /* the walk's: the root it walks now is an object store's (polled) */
  char **dirs;
  size_t n_dirs, cap_dirs;
  struct disc_waiter *waiters; /* the loop's: called when it ends (svc_watch.c) */
} svc_discovery;

/* Which roots a discovery walks. */
typedef enum {
  SVC_DISCOVER_ALL,   /* every root: a table under none is gone */
  SVC_DISCOVER_LOCAL, /* the local roots (at start-up; inotify saw a directory change) */
  SVC_DISCOVER_ONE,   /* one root (an object-store root's poll, a root's retry) */
} svc_discover_scope;

/* On the loop: a discovery of scope's roots (only: the root of
 * SVC_DISCOVER_ONE) with a copy of what its walk needs; NULL out of
 * memory. */
svc_discovery *svc_discovery_new(brid *d, svc_discover_scope scope, const char *only);
void svc_discovery_free(svc_discovery *r);
/* libuv's work callback (req->data is the discovery): walks its roots and
 * registers the new tables in the job store, REGISTER_BATCH a transaction,
 * each batch handed to the loop (d->discovery_async) when r->stream. */
void svc_discovery_work(uv_work_t *req);
/* The index of the walked root path lies under, or -1. */
ssize_t svc_discovery_root_of(const svc_discovery *r, const char *path);

#endif
