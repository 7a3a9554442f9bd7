/* svc_lease.h: this brid's standing in its job store: its instance record,
 * the heartbeat that renews its jobs' leases, the recovery of jobs whose
 * lease expired (any instance's, this one's included), and whether the
 * store answers.
 *
 * Main design choice: a thread of its own, not the loop, because a store
 * that stops answering (PostgreSQL restarting, a network partition) may
 * hold a call for seconds; the loop must go on answering the socket and
 * the workers must learn that their leases are no longer confirmed. Every
 * lease_ttl / 3 it sends one heartbeat (one transaction: the instance's
 * heartbeat and the leases of the jobs the workers hold), tells the pool
 * which leases were renewed and until when, and then recovers the jobs
 * whose lease has expired. A worker whose lease was not renewed in time
 * stops at its next safe point, and confirms its lease in the store before
 * its commit and before each batch of deletes (instances.h). */
#ifndef BRI_SVC_LEASE_H
#define BRI_SVC_LEASE_H

#include <stdbool.h>
#include <stdint.h>

#include "brid/2_state/svc_state.h"

typedef struct svc_lease svc_lease;

/* Starts the thread; after each beat it kicks the scheduler through the
 * loop, so that idle workers claim what other instances queued. */
int svc_lease_start(brid *d, svc_lease **out, bri_error *err);
/* Stops the thread, marks the instance stopped (best effort). */
void svc_lease_stop(svc_lease *l);
/* Frees it after the loop ran the close callback of its async handle. */
void svc_lease_free(svc_lease *l);
/* The module lifecycle drives (svc_daemon.c): prepare registers the
 * instance (refused when a live brid holds its name) and then recovers the
 * jobs a previous run left, before any worker can claim one (the jobs of
 * instances of this machine that died are recovered at once, instances.h);
 * start starts the thread into d->lease, close stops it, dispose frees it. */
extern const brid_module svc_lease_module;

#endif
