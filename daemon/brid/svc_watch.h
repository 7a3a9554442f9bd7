/* svc_watch.h: which tables brid watches, and when it asks the planner
 * whether one needs compacting.
 *
 * Discovery walks each root (up to discovery_depth levels; S3 roots by
 * listing, svc_poll.h) for directories
 * holding _versions/ (a table; its inside is never walked) and watches every
 * other directory it passes, so a table created later is found within a
 * second. Each table's _versions/ gets an inotify watch (uv_fs_event); a new
 * manifest name is a commit (under an object-store root, a poll that sees
 * the latest version move, svc_poll.h), and three triggers follow one:
 *   - the debounce: when the writer has been quiet for it (a burst of
 *     appends gives one compaction), the planner is asked, off the loop
 *     thread (uv_queue_work), whether there is work; if so a compaction is
 *     queued;
 *   - max_delay: the same check comes at the latest max_delay after the
 *     first commit not checked yet, writes or not (a table written every
 *     few seconds is never quiet);
 *   - max_new_fragments: each commit counts the table's new small
 *     fragments (committed since brid last planned it, below the targets
 *     by their data files and rows: one manifest read), and a compaction
 *     is queued once they are that many (a busy writer's fragments stay
 *     bounded, whatever the timers).
 * A
 * periodic sweep rediscovers and re-checks every table whose latest
 * version moved, which is the whole mechanism on filesystems without
 * inotify (NFS, FUSE) and a safety net elsewhere.
 *
 * Nothing here waits on a disk on the loop: the walks, the checks and their
 * store writes run on libuv's thread pool; the loop keeps the registry,
 * the watches and the timers.
 *
 * Main design choice: a check first compares the latest version name with
 * the last version seen (a directory listing, no manifest read), so a sweep
 * over a thousand idle tables costs a thousand readdirs and nothing more. */
#ifndef BRI_SVC_WATCH_H
#define BRI_SVC_WATCH_H

#include <stdbool.h>

#include "svc_daemon.h"

/* What asks the planner, and what it queues a compaction for. */
typedef enum svc_trigger {
  SVC_TRIGGER_QUIET, /* the debounce or max_delay ran out, a sweep, a policy change: any bins */
  SVC_TRIGGER_COUNT, /* a commit: bins once max_new_fragments new small fragments wait */
  SVC_TRIGGER_AFTER, /* right after brid's own commit: only bins a job's budget left */
} svc_trigger;

/* How a check asks. */
typedef struct svc_probe {
  svc_trigger trigger;
  bool force;         /* plan even when the latest version is the one seen */
  bool has_seen;
  uint64_t seen;      /* the version seen last (a check with nothing newer reads no manifest) */
  uint64_t new_after; /* COUNT: fragments with a larger id are new */
} svc_probe;

/* What a planner check found. */
typedef struct svc_check {
  int rc;          /* 0, or why the table could not be read (err) */
  bri_error err;
  svc_trigger trigger;
  bool empty;      /* no version yet (an empty _versions/) */
  bool loaded;     /* the latest manifest was read: fragments are known */
  bool planned;    /* ... and planned: bins are known (a COUNT check below its count plans nothing) */
  uint64_t latest, fragments, bins;
  uint64_t new_small;       /* COUNT: new fragments below the targets by their data files and rows */
  uint64_t max_fragment_id; /* the highest fragment id the latest version has used */
  bool budget_exhausted;
  /* svc_watch_settle */
  bool seen_recorded; /* the store now says latest is seen */
  bool queued;        /* a compaction was queued: job */
  bool waiting;       /* a compaction is queued for the table (this check's, or an
                         identical one queued before, maybe by another instance) */
  int64_t job;
} svc_check;

/* A planner check of the table at root with policy pol, on any thread
 * (libuv's pool, a worker): the latest version, and unless it is seen
 * and not how->force, its fragments and the bins the planner would
 * compact (sizes as pol's strategy counts them, compact/fragsize.h). A
 * COUNT check counts the new small fragments first and plans only when
 * they reach pol->max_new_fragments. */
void svc_watch_probe(const char *root, const svc_policy *pol, const svc_probe *how, svc_check *out);
/* The store's part of a check, on the same thread as the probe: queues a
 * compaction when the check planned bins its trigger asks for,
 * auto_compact (false while draining) and the last compaction at this
 * version did not find nothing to commit; else records the version as
 * seen when it planned (a compaction records the version it leaves when
 * it ends). */
void svc_watch_settle(bri_jobs_store *store, int64_t table_id, const char *root, bool auto_compact, bool has_seen,
                      uint64_t seen, svc_check *c);
/* On the loop thread, memory only: t's state becomes what c found
 * (version, fragments, has_work, check_error, the seen version), and the
 * scheduler looks when c queued a job. */
void svc_watch_apply(brid_table *t, const svc_check *c);

/* Initializes the timers and runs the first discovery of the local roots
 * (the S3 roots are polled at once by svc_poll_apply_config). */
int svc_watch_start(brid *d, bri_error *err);
/* Walks the roots again, off the loop: new tables are registered and
 * watched, vanished ones unwatched, when the walk comes back. */
void svc_watch_discover(brid *d);
/* A discovery of one S3 root (its poll, svc_poll.c), beside any other;
 * done(user, rc, err) on the loop when it has ended (rc: the root could not
 * be listed; at once when brid drains). */
void svc_watch_discover_root(brid *d, const char *root, void (*done)(void *user, int rc, const bri_error *err),
                             void *user);
/* cb(user) on the loop once a discovery that starts after this call has
 * ended (at once when brid drains). */
void svc_watch_discover_then(brid *d, void (*cb)(void *user), void *user);
/* Asks the planner about t now (force: plan even if the version did not
 * move, e.g. after a policy change). */
void svc_watch_check(brid_table *t, bool force);
/* A COUNT check of t now (a busy polled table between polls, svc_poll.c):
 * a version it finds newer counts as a commit, an unchanged one ends t's
 * busy state. */
void svc_watch_count(brid_table *t);
/* On the loop: a worker's job of t ended (commits seen while it ran
 * started no COUNT check: most were its own; one newer than what the job
 * saw after its commit starts it now). */
void svc_watch_job_ended(brid_table *t);
/* The registered table whose canonical root is root (no disk access), or NULL. */
brid_table *svc_watch_find_known(const brid *d, const char *root);
/* After a reload: policies, pauses, timers, roots. */
void svc_watch_apply_config(brid *d);
/* Applies a table's configured pause to the store (off the loop; the
 * table shows paused_by_config once it is recorded). */
void svc_watch_apply_pause(brid_table *t);
/* Drain: stops watches and timers (handles stay open). */
void svc_watch_stop(brid *d);
/* Shutdown: closes every handle; free after the loop ran the callbacks. */
void svc_watch_close(brid *d);
void svc_watch_free(brid *d);

#endif
