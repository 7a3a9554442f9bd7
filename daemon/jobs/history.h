/* history.h: the read side of the job store (job lists, attempts, counts,
 * per-table metrics) and history pruning.
 *
 * Finished jobs stay in the jobs table as history until pruned; each claim
 * leaves an attempt record (who ran it, when, how it ended, the error). The
 * counters of job_stats are monotonic (they survive pruning), which is what
 * Prometheus counters need; job counts by state are gauges over the rows
 * present. */
#ifndef BRI_JOBS_HISTORY_H
#define BRI_JOBS_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "jobs/queue.h"
#include "jobs/store.h"

/* One job by id: BRI_ENOTFOUND when there is none. */
int bri_jobs_get(bri_jobs_store *s, int64_t id, bri_jobs_job *job, bri_error *err);

typedef struct bri_jobs_filter {
  int64_t table_id;    /* 0 = any table */
  unsigned state_mask; /* bits 1u << state; 0 = any state */
  bri_job_kind kind;   /* 0 = any kind */
  int64_t before_id;   /* only ids below this (paging); 0 = no bound */
  size_t limit;        /* 0 = 100; at most 10000 */
} bri_jobs_filter;

/* Jobs matching f (NULL = all), newest (highest id) first. */
int bri_jobs_list(bri_jobs_store *s, const bri_jobs_filter *f, bri_jobs_job **out, size_t *n,
                  bri_error *err);
void bri_jobs_list_free(bri_jobs_job *jobs, size_t n);

typedef struct bri_jobs_attempt {
  int attempt; /* 1, 2, ... */
  char *owner;    /* session that ran it */
  char *instance; /* the brid instance of that session (NULL in stores older than version 4) */
  int64_t started_at, finished_at; /* finished_at 0 while running */
  /* NULL while running, else "succeeded", "failed", "cancelled" (the
   * worker finished the job so), "retried" (the worker gave it back to the
   * queue) or "crashed" (its session died). What became of the job after a
   * retried or crashed attempt is on the job itself. */
  char *outcome;
  char *error;
} bri_jobs_attempt;

/* The attempts of one job, oldest first. */
int bri_jobs_attempts(bri_jobs_store *s, int64_t job_id, bri_jobs_attempt **out, size_t *n,
                      bri_error *err);
void bri_jobs_attempts_free(bri_jobs_attempt *a, size_t n);

/* Number of jobs in each state, indexed by bri_job_state (counts[0] is the
 * total), for one table or all (table_id 0). */
int bri_jobs_count_states(bri_jobs_store *s, int64_t table_id,
                          uint64_t counts[BRI_JOB_NSTATES + 1], bri_error *err);

/* Monotonic per-table, per-kind counters. */
typedef struct bri_jobs_stat {
  int64_t table_id;
  char *root;
  bri_job_kind kind;
  uint64_t succeeded, failed, cancelled; /* finished jobs */
  uint64_t retried, crashed;             /* attempts that ended in a retry / a crash */
  int64_t run_ms;                        /* total run time of finished attempts */
  uint64_t bytes_written, bytes_reused;
} bri_jobs_stat;

int bri_jobs_stats(bri_jobs_store *s, bri_jobs_stat **out, size_t *n, bri_error *err);
void bri_jobs_stats_free(bri_jobs_stat *st, size_t n);

/* Deletes finished jobs (with their attempts) that finished more than
 * max_age_ms ago (0 = no age limit) or that fall beyond the newest max_rows
 * finished jobs (0 = no row limit). Jobs that still have journal entries are
 * kept: recovery needs them. *removed (may be NULL) gets the count. */
int bri_jobs_prune(bri_jobs_store *s, int64_t max_age_ms, size_t max_rows, size_t *removed,
                   bri_error *err);

#endif
