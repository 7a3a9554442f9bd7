/* svc_poll.h: roots on object stores (a root whose store libbri says is
 * found changed by polling, BRI_STORE_CAP_POLL: s3://BUCKET/PREFIX,
 * az://CONTAINER/PREFIX): their poll timers and the looks at busy tables.
 * Nothing here knows a scheme.
 *
 * There is no inotify on an object store: brid lists. Every poll_interval
 * (per root), a discovery of that root runs off the loop (svc_watch.c,
 * walking it as svc_discover.h says): one
 * listing (ListObjectsV2, List Blobs) of the root with delimiter "/" (more pages past 1000
 * entries; prefixes other than tables walked down to discovery_depth),
 * and for every NAME.lance prefix one ListObjectsV2 of NAME.lance/_versions/
 * with max-keys 1, all of them in flight together within the root's
 * request limits. Lance's V2 manifest names sort newest first, so that one
 * key is the table's latest version; a version that moved restarts the
 * table's debounce as an inotify event does locally, and the planner check
 * after it is the same as for a local table.
 *
 * A table a poll saw move is busy, and so is one a poll finds (new to
 * brid, at its start or later) with a latest manifest written within
 * SVC_BUSY_IDLE_MS (its LastModified, from the same listing): until it has
 * not moved for SVC_BUSY_IDLE_MS it is looked at every SVC_BUSY_POLL_MS between the
 * root's polls, by a COUNT check of its
 * own (svc_watch.h: a listing of its _versions/, and its manifest when it
 * moved, what an inotify event costs locally), so that the count trigger
 * and the debounce see a busy writer within seconds rather than at the
 * next poll_interval. An idle table costs nothing more.
 *
 * Main design choice: a poll is a discovery of one root, so new tables,
 * vanished tables and new versions come from the same requests, and what
 * a root costs is predictable: 1 + (tables) requests per poll_interval,
 * never more at once than max_requests_in_flight, never faster than
 * max_requests_per_second (the client of the root enforces both for every
 * request below the root: polls, checks and jobs alike). */
#ifndef BRI_SVC_POLL_H
#define BRI_SVC_POLL_H

#include <stdbool.h>
#include <stdint.h>

#include "brid/2_state/svc_state.h"

/* How often a busy table is looked at between polls: 2 s, the count
 * trigger's resolution under an object-store root; it costs the table one
 * LIST (and one GET when it moved) every 2 s, while its writer sends
 * several requests for each of its commits. */
#define SVC_BUSY_POLL_MS 2000
/* A busy table no look has seen move for this long is busy no more (a
 * writer pausing between batches stays busy; one written once costs 5
 * looks). */
#define SVC_BUSY_IDLE_MS (5 * SVC_BUSY_POLL_MS)

/* Polled table t was seen moving: it is busy (loop thread). */
void svc_poll_busy(brid_table *t);

/* The module lifecycle drives (svc_daemon.c): start and a reload give the
 * configured polled roots their poll timers (new roots get one, polled at
 * once; removed ones stop); the drain stops the timers, close closes them,
 * dispose comes after the loop ran the close callbacks. Loop thread. */
extern const brid_module svc_poll_module;

#endif
