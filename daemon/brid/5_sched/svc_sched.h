/* svc_sched.h: from triggers to running jobs.
 *
 * Turns the daemon's reasons to act (a planner check that found work, a
 * cleanup that is due, an API request) into rows of the job store, and
 * rows into running jobs: whenever a worker is idle it claims the next
 * claimable job (the store picks by priority, due time and id, one job per
 * table at a time, none of a paused table) and hands it over. A single
 * timer wakes the scheduler when the earliest delayed job (a retry's
 * backoff) becomes due; a worker finishing wakes it through the pool.
 *
 * The store's calls run on libuv's thread pool, never on the loop.
 *
 * Main design choice: the store is the queue. Nothing is held in memory
 * that a restart would lose, and the scheduler's own state is only "when to
 * look again", so it can be poked as often as convenient. */
#ifndef BRI_SVC_SCHED_H
#define BRI_SVC_SCHED_H

#include <stdbool.h>

#include "brid/2_state/svc_state.h"

/* The module lifecycle drives (svc_daemon.c): start initializes the timers
 * and installs the hooks through which the layers below say that work was
 * queued, that STATUS may be stale, that tables changed or that a sweep
 * ran (the job history is pruned then); a reload re-evaluates the
 * cleanup schedule and claims; the drain stops the timers, close closes
 * them. */
extern const brid_module svc_sched_module;
/* Claims jobs while workers are idle (off the loop), hands them over and
 * arms the timer for the next due job (on it). */
void svc_sched_kick(brid *d);
/* Re-evaluates the cleanup schedules (after discovery or a reload). */
void svc_sched_cleanup_tick(brid *d);
/* Sends STATUS to systemd (rate-limited unless force). */
void svc_status_update(brid *d, bool force);

#endif
