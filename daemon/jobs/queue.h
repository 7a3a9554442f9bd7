/* queue.h: the job state machine of the job store.
 *
 *   enqueue -> queued --claim--> running --finish--> succeeded | failed | cancelled
 *                ^                  |
 *                +---retry_later----+   (backoff; cancelled when a cancel was
 *                                        requested, failed after max_attempts,
 *                                        superseded when the same request was
 *                                        queued again meanwhile)
 *   queued --cancel--> cancelled;  running --cancel--> cancel_requested (the
 *   worker polls it at safe points and finishes the job as cancelled)
 *
 * Two invariants are enforced by the schema itself (partial unique indexes),
 * not only by this code: at most one running job per table, and at most one
 * queued job per (table, kind, request), where the request is the job's
 * params without "trigger" (what asked for it: "api", "auto",
 * "schedule"). Identical requests are one job; a request with other options
 * (a dry run, another strategy) is a job of its own. A job is moved out of "running" only by the
 * session that claimed it (others get BRI_EINVAL); a job left running by a
 * dead session is recover.h's business. Each claim opens an attempt record
 * (history.h) that the transition out of "running" closes. */
#ifndef BRI_JOBS_QUEUE_H
#define BRI_JOBS_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jobs/store.h"

typedef struct bri_jobs_job {
  int64_t id;
  int64_t table_id;
  char *root; /* the table's root path */
  bri_job_kind kind;
  bri_job_state state;
  int priority;     /* higher runs first */
  int attempts;     /* claims so far (a crash counts as one) */
  int max_attempts; /* after this many, a retry or a crash fails the job */
  int cancel_requested;
  int64_t not_before; /* not claimed before this time */
  int64_t created_at, started_at, finished_at; /* started_at: latest claim */
  char *owner;                                 /* session running it, else NULL */
  char *params;                                /* JSON object or NULL */
  char *result;                                /* JSON object or NULL */
  char *error;                                 /* last error message or NULL */
  char *commit_uuid;                           /* journal.h commit intent or NULL */
  int has_commit_read_version;
  uint64_t commit_read_version;
  uint64_t bytes_written, bytes_reused; /* reported by finish */
  int64_t lease_expires_at;             /* running: the owner's lease ends then */
  char *instance;                       /* the instance that claimed it last, else NULL */
} bri_jobs_job;

/* Frees the members and zeroes the struct (safe on a zeroed struct). */
void bri_jobs_job_clear(bri_jobs_job *job);

/* Queues a job of kind for table_id (which must exist: BRI_ENOTFOUND), to
 * run no earlier than not_before (0 = now), with optional params (a JSON
 * object, stored in canonical form: keys sorted, compact; BRI_EINVAL if it
 * does not parse). When a queued job of the same kind and the same request
 * (params equal but for "trigger") already exists for the table, no job is
 * added: *job_id is the existing one, *was_duplicate is 1, and the existing
 * job keeps its params but takes the higher priority and the earlier
 * not_before of the two (a request for "now" is not held back by an older,
 * later job). A queued job with other params is not a duplicate, nor is a
 * running job of the same request: it planned from an older version, so the
 * new job is queued behind it. Paused tables accept
 * jobs; they are simply not claimed. was_duplicate may be NULL. */
int bri_jobs_enqueue(bri_jobs_store *s, int64_t table_id, bri_job_kind kind, int priority,
                     const char *params_json, int64_t not_before, int64_t *job_id,
                     int *was_duplicate, bri_error *err);

/* Atomically picks the queued job with the highest priority, then the
 * earliest not_before, then the lowest id, among those whose not_before has
 * passed, whose table is not paused and has no running job, of a kind this
 * brid knows (rpc/rpc_kinds.h: a newer brid's kind waits for it); marks it
 * running under this session (attempts + 1, started_at = now, commit intent
 * and cancel request cleared) and returns it in *job with *claimed = 1.
 * Nothing claimable: *claimed = 0 and *job zeroed. Safe from any number of
 * threads: a job is never handed out twice. */
int bri_jobs_claim_next(bri_jobs_store *s, bri_jobs_job *job, int *claimed, bri_error *err);

/* How a worker ends a running job. */
typedef struct bri_jobs_outcome {
  bri_job_state state;     /* succeeded, failed or cancelled */
  const char *result_json; /* JSON object or NULL */
  const char *error;       /* message for failed/cancelled, or NULL */
  uint64_t bytes_written;  /* payload and metadata bytes the job wrote */
  uint64_t bytes_reused;   /* payload bytes it referenced instead of copying */
  bool has_seen_version;   /* the table's latest version as the job left it, */
  uint64_t seen_version;   /* recorded as bri_jobs_table_set_seen_version does */
} bri_jobs_outcome;

/* Ends a running job owned by this session, in one transaction. Adds the
 * attempt's run time and bytes to the table's counters; a succeeded
 * compact/cleanup sets the table's last compaction/cleanup time, a failed
 * job sets the table's last error ("<kind> job <id>: <error>"). A succeeded
 * job's output journal is cleared with it (its outputs belong to the
 * version it committed, journal.h); another job's is not touched: the
 * worker rolled it back, and entries left behind are handled by the next
 * recovery. */
int bri_jobs_finish(bri_jobs_store *s, int64_t job_id, const bri_jobs_outcome *o,
                    bri_error *err);

/* Backoff before attempt n+1 after n attempts: retry_base_ms * 2^(n-1),
 * capped at retry_max_ms (no jitter: one daemon per store, nothing to
 * de-synchronize). */
int64_t bri_jobs_backoff_ms(const bri_jobs_store *s, int attempts);

/* Gives a running job (owned by this session) back to the queue after a
 * transient failure such as a lost commit race, with
 * not_before = now + bri_jobs_backoff_ms(attempts). Instead:
 *  - a job whose cancellation was requested becomes cancelled;
 *  - a job that has used max_attempts becomes failed ("gave up after N
 *    attempts: <error>") and sets the table's last error;
 *  - when a queued job of the same request exists for the table (queued
 *    while this one ran), this one is cancelled with result
 *    {"superseded_by": <id>} and the queued one takes the higher priority
 *    and the later not_before of the two (the backoff still applies).
 * *new_state and *not_before (either may be NULL) say what happened. */
int bri_jobs_retry_later(bri_jobs_store *s, int64_t job_id, const char *error,
                         bri_job_state *new_state, int64_t *not_before, bri_error *err);

/* Gives a running job (owned by this session) back to the queue before it
 * did anything, as if it had not been claimed: its attempt is not counted
 * (the attempt record is removed), it may be claimed again after delay_ms,
 * and why is its error meanwhile (what it waits for: "the table is locked
 * by ..."). A job whose cancellation was requested becomes cancelled; one
 * whose request was queued again meanwhile is superseded by that one.
 * *new_state (may be NULL) says which. */
int bri_jobs_defer(bri_jobs_store *s, int64_t job_id, int64_t delay_ms, const char *why,
                   bri_job_state *new_state, bri_error *err);

/* Cancels a job: queued -> cancelled at once; running -> its
 * cancel_requested flag is set and it stays running until its worker
 * notices (bri_jobs_cancel_requested) and finishes it; already cancelled ->
 * nothing to do. Succeeded or failed jobs: BRI_EINVAL. *state_after (may be
 * NULL) is the job's state after the call. */
int bri_jobs_cancel(bri_jobs_store *s, int64_t job_id, bri_job_state *state_after,
                    bri_error *err);

/* The flag a worker polls at its safe points. */
int bri_jobs_cancel_requested(bri_jobs_store *s, int64_t job_id, int *requested, bri_error *err);

/* Earliest not_before later than after among queued jobs of unpaused
 * tables, of the kinds claims take (*has = 0 when there are none): when the scheduler's timer should
 * next try to claim, after a claim that began at after. Jobs due by then
 * were offered to that claim; those it left (every worker busy, or their
 * table's job running) are claimed when a worker ends. */
int bri_jobs_next_due(bri_jobs_store *s, int64_t after, int64_t *when, int *has, bri_error *err);

#endif
