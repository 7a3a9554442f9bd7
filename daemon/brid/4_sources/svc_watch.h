/* svc_watch.h: which tables brid watches, and when it asks the planner
 * whether one needs compacting.
 *
 * Discovery walks each root (up to discovery_depth levels, through its
 * store: svc_discover.h; object-store roots at each poll, svc_poll.h) for directories
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

#include "brid/2_state/svc_state.h"

/* The module lifecycle drives (svc_daemon.c): start initializes the
 * timers, runs the first discovery of the local roots (the S3 roots are
 * polled at once by svc_poll's start) and installs the hooks through which
 * the layers below reach the watches (a check's or a job's end, a root's
 * discovery, a busy table's count check); a reload applies policies,
 * pauses, timers and roots; the drain stops watches and timers (handles
 * stay open); close closes every handle, dispose comes after the loop ran
 * their callbacks. */
extern const brid_module svc_watch_module;

/* Walks the roots again, off the loop: new tables are registered and
 * watched, vanished ones unwatched, when the walk comes back. */
void svc_watch_discover(brid *d);
/* cb(user) on the loop once a discovery that starts after this call has
 * ended (at once when brid drains). */
void svc_watch_discover_then(brid *d, void (*cb)(void *user), void *user);
/* Asks the planner about t now (force: plan even if the version did not
 * move, e.g. after a policy change). */
void svc_watch_check(brid_table *t, bool force);
/* Applies a table's configured pause to the store (off the loop; the
 * table shows paused_by_config once it is recorded). */
void svc_watch_apply_pause(brid_table *t);

#endif
