/* recover.h: putting the job store right after a daemon died.
 *
 * A job still "running" whose lease has expired was interrupted: its brid
 * died, stalled past its lease or lost the store (instances.h). So was, at
 * once, a job running under another session of a store only one process
 * can open (SQLite's lock file guarantees that session's process is gone).
 * Recovery first takes such a job over (it becomes this session's, with a
 * fresh lease, renewed while recovery works on it; a job another instance
 * took over first is left to that one), then decides:
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
 * failure is returned (a stuck job keeps the lease recovery gave it, so it
 * is tried again once that expires). Calling bri_jobs_recover again
 * retries. It is safe at any time, from any number of instances: jobs
 * whose lease holds, and jobs ops->in_flight says this process runs, are
 * never touched.
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
  /* Optional: 1 when this process still runs job_id (a worker whose
   * lease could not be renewed in time, about to give up): left alone. */
  int (*in_flight)(void *user, int64_t job_id);
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
