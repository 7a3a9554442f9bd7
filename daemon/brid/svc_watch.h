/* svc_watch.h: which tables brid watches, and when it asks the planner
 * whether one needs compacting.
 *
 * Discovery walks each root (up to discovery_depth levels) for directories
 * holding _versions/ (a table; its inside is never walked) and watches every
 * other directory it passes, so a table created later is found within a
 * second. Each table's _versions/ gets an inotify watch (uv_fs_event); a new
 * manifest name (re)starts the table's debounce timer, and when the writer
 * has been quiet for the debounce the planner is asked, off the loop thread
 * (uv_queue_work), whether there is work; if so a compaction is queued. A
 * periodic sweep rediscovers and re-checks every table whose latest
 * version moved, which is the whole mechanism on filesystems without
 * inotify (NFS, FUSE) and a safety net elsewhere.
 *
 * Main design choice: a check first compares the latest version name with
 * the last version seen (a directory listing, no manifest read), so a sweep
 * over a thousand idle tables costs a thousand readdirs and nothing more. */
#ifndef BRI_SVC_WATCH_H
#define BRI_SVC_WATCH_H

#include <stdbool.h>

#include "svc_daemon.h"

/* What a planner check found. */
typedef struct svc_check {
  int rc;          /* 0, or why the table could not be read (err) */
  bri_error err;
  bool empty;      /* no version yet (an empty _versions/) */
  bool loaded;     /* the latest manifest was read: fragments and bins are known */
  uint64_t latest, fragments, bins;
  bool budget_exhausted;
} svc_check;

/* A planner check of the table at root with policy pol, on any thread
 * (libuv's pool, a worker): the latest version, and unless it is seen
 * (has_seen and equal to seen) and not force, its fragments and the bins
 * the planner would compact. */
void svc_watch_probe(const char *root, const svc_policy *pol, bool force, bool has_seen, uint64_t seen,
                     svc_check *out);
/* On the loop thread: t's state becomes what c found (version, fragments,
 * has_work, check_error; the seen version recorded), and a compaction is
 * queued when there is work and the policy says auto_compact. */
void svc_watch_apply(brid_table *t, const svc_check *c);

/* Initializes the timers and runs the first discovery. */
int svc_watch_start(brid *d, bri_error *err);
/* Walks the roots again: new tables are registered and watched, vanished
 * ones unwatched. */
void svc_watch_discover(brid *d);
/* Asks the planner about t now (force: plan even if the version did not
 * move, e.g. after a policy change). */
void svc_watch_check(brid_table *t, bool force);
/* The table whose canonical root is path's realpath, or NULL. A table not
 * yet discovered but inside a root is discovered on the way. */
brid_table *svc_watch_find(brid *d, const char *path);
/* The registered table whose canonical root is root (no disk access), or NULL. */
brid_table *svc_watch_find_known(const brid *d, const char *root);
/* After a reload: policies, pauses, timers, roots. */
void svc_watch_apply_config(brid *d);
/* Applies a table's configured pause to the store. */
void svc_watch_apply_pause(brid_table *t);
/* Drain: stops watches and timers (handles stay open). */
void svc_watch_stop(brid *d);
/* Shutdown: closes every handle; free after the loop ran the callbacks. */
void svc_watch_close(brid *d);
void svc_watch_free(brid *d);

size_t svc_watch_count_watching(const brid *d);

#endif
