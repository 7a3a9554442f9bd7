/* svc_worker.h: the worker pool: N threads, each running one job at a time
 * with a library call (compaction, cleanup, materialize, verify: what each
 * kind does is svc_kinds.c's, through the svc_job a worker hands it).
 *
 * Main design choice: a worker owns its job from claim to the store's
 * finish/retry (it journals outputs before creating them, rolls back its own
 * leftovers, ends the job), so a job's life never depends on the loop
 * thread being responsive. The loop sees only what it needs: which workers
 * are idle (an async handle fires when a job ends) and each running job's
 * progress (rows, bytes; updated under the pool mutex, read by the status
 * and metrics calls; the same async handle fires so STATUS can follow).
 * Workers touch no libuv object except uv_async_send. Cancellation is an
 * atomic flag per worker, polled by the library at its safe points (between
 * batches); a cancel for shutdown puts the job back in the queue instead of
 * cancelling it. */
#ifndef BRI_SVC_WORKER_H
#define BRI_SVC_WORKER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "brid/2_state/svc_state.h"

typedef struct svc_progress {
  uint64_t rows_done, rows_total, bytes_written;
  int64_t started_ms, updated_ms;
  int64_t writing_ms; /* the first progress report: where the rates are measured from */
  const char *phase; /* "planning", "writing", "cleaning", ... (static string) */
} svc_progress;

/* Starts n threads. */
int svc_pool_start(brid *d, int n, svc_pool **out, bri_error *err);
/* The module lifecycle drives (svc_daemon.c): start starts d->cfg.workers
 * threads into d->pool, close stops and joins them, dispose frees the pool. */
extern const brid_module svc_worker_module;

int svc_pool_size(const svc_pool *p);
int svc_pool_idle(const svc_pool *p);

/* Hands a claimed job to an idle worker (there must be one): the pool takes
 * *job's members (the struct is zeroed) and runs it with policy pol. */
void svc_pool_run(svc_pool *p, bri_jobs_job *job, const svc_policy *pol);

/* Asks the worker running job_id to stop at its next safe point. With
 * for_shutdown the job goes back to the queue instead of being cancelled.
 * False when no worker runs that job. */
bool svc_pool_cancel(svc_pool *p, int64_t job_id, bool for_shutdown);
/* The same for every running job (drain deadline). */
void svc_pool_cancel_all(svc_pool *p, bool for_shutdown);

/* Leases (svc_lease.c, any thread): the ids of the jobs workers hold (at
 * most cap); whether job_id is one of them; after a heartbeat, the jobs
 * whose lease was renewed may go on until ok_until_mono (CLOCK_MONOTONIC
 * ms), the others stop at their next safe point and go back to the queue
 * (or, when another instance recovered them, are let go). */
size_t svc_pool_held(svc_pool *p, int64_t *ids, size_t cap);
bool svc_pool_holds(svc_pool *p, int64_t job_id);
void svc_pool_leases(svc_pool *p, const int64_t *ids, const int *renewed, size_t n, int64_t ok_until_mono);

/* On the loop thread: applies the table states workers read after their
 * commits (svc_watch_apply). The async handle does it when a job ends;
 * whatever shows a table's state calls it first, so that a job seen to
 * have ended never leaves its table's old state on display. */
void svc_pool_collect(svc_pool *p);

/* Progress of a running job; false when it does not run here. */
bool svc_pool_progress(svc_pool *p, int64_t job_id, svc_progress *out);
/* [{job, table, kind, progress...}] of the running jobs. */
json_t *svc_pool_running(svc_pool *p);
json_t *svc_progress_to_json(const svc_progress *pr);

/* Stops and joins the threads (call when every worker is idle, or they will
 * be waited for) and closes the async handle; free after the loop has run
 * the close callback. */
void svc_pool_stop(svc_pool *p);
void svc_pool_free(svc_pool *p);

#endif
