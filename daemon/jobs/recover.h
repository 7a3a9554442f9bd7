/* recover.h: putting the job store right after a daemon died.
 *
 * A job still "running" under another session than this store's was
 * interrupted (the store's lock file guarantees that session's process is
 * gone). Recovery decides, per such job:
 *   - if it recorded a commit intent and ops->commit_landed says that commit
 *     is in the table, the job is finished as succeeded with result
 *     {"recovered": true, "version": V};
 *   - otherwise its outputs are rolled back and it goes back to the queue
 *     like a retry (the crash counts as an attempt, so a job that kills the
 *     daemon every time ends failed instead of looping; backoff applies; a
 *     requested cancel makes it cancelled; a queued job of the same kind
 *     supersedes it).
 * In both cases every journaled output, newest first, is asked to
 * ops->is_referenced: referenced files are kept (a committed version needs
 * them), the others are passed to ops->remove; each entry leaves the journal
 * once handled. The store never touches table files itself.
 * Finished or queued jobs with leftover journal entries (a worker that could
 * not finish its own rollback) get the same per-file treatment, without a
 * state change.
 *
 * When a callback fails for a job, nothing more is done for that job: it
 * stays as it is (a crashed one stays "running", so its table gets no new
 * job while files of unknown status may remain), the table's last error
 * names the failure, recovery goes on with the other jobs, and the first
 * failure is returned. Calling bri_jobs_recover again retries. It is safe
 * at any time (jobs of this session are never touched) but meant for
 * start-up, before workers claim jobs.
 *
 * Callbacks are called without the store's lock held (they may call into
 * the store) and must be idempotent: a crash during recovery repeats it. */
#ifndef BRI_JOBS_RECOVER_H
#define BRI_JOBS_RECOVER_H

#include <stddef.h>
#include <stdint.h>

#include "jobs/journal.h"
#include "jobs/queue.h"
#include "jobs/store.h"

typedef struct bri_jobs_recovery_ops {
  /* *referenced = 1 when a committed version of the table (job->root)
   * references out->path. Required. */
  int (*is_referenced)(void *user, const bri_jobs_job *job, const bri_jobs_output *out,
                       int *referenced, bri_error *err);
  /* Removes out->path; a path that does not exist counts as removed. Required. */
  int (*remove)(void *user, const bri_jobs_job *job, const bri_jobs_output *out,
                bri_error *err);
  /* Optional. Called only for an interrupted job with a commit intent
   * (job->commit_uuid, job->commit_read_version): *landed = 1 and *version
   * set when a committed version after the read version carries that
   * transaction uuid. */
  int (*commit_landed)(void *user, const bri_jobs_job *job, int *landed, uint64_t *version,
                       bri_error *err);
  void *user;
} bri_jobs_recovery_ops;

typedef struct bri_jobs_recovery_report {
  size_t interrupted; /* running jobs of dead sessions found */
  size_t requeued, succeeded, failed, cancelled; /* what became of them */
  size_t leftovers;   /* other jobs whose leftover journal was processed */
  size_t stuck;       /* jobs left as they were because a callback failed */
  size_t files_removed, files_kept;
} bri_jobs_recovery_report;

/* rep may be NULL. Returns 0 when every job was recovered, else the first
 * callback or store error (err filled; the report still counts). */
int bri_jobs_recover(bri_jobs_store *s, const bri_jobs_recovery_ops *ops,
                     bri_jobs_recovery_report *rep, bri_error *err);

#endif
