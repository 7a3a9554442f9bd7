/* svc_recover.h: deciding what to do with the files of a job that did not
 * finish cleanly: at start-up for the jobs of a daemon that died (the job
 * store's recovery, with callbacks that read the table), and in a worker
 * for the outputs of a failed attempt.
 *
 * Main design choice: a journaled output is removed only when no committed
 * version of its table references it, decided by reading the manifests
 * themselves (data files, their sidecar directories, deletion files,
 * transaction files and every sidecar file a Blob Reuse Index names), never
 * by guessing from the job's state: a commit may have landed just before
 * the crash. Only versions written after the job started are read (a file
 * the job created cannot be referenced by an older version; an hour of
 * slack covers clock steps), and a manifest that cannot be read stops the
 * job's recovery (fail closed: a file of unknown status stays). Nothing
 * outside the table root is ever removed. */
#ifndef BRI_SVC_RECOVER_H
#define BRI_SVC_RECOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bri/error.h"
#include "jobs/jobs.h"

/* Whether a worker of this daemon still holds the job (svc_pool_holds). */
typedef bool (*svc_job_held_fn)(void *ctx, int64_t job_id);

/* bri_jobs_recover with brid's callbacks: at start-up (held NULL: no
 * worker runs yet), and then after each heartbeat for the jobs whose lease
 * expired, leaving alone those held(held_ctx, id) says a worker holds. */
int svc_recover_jobs(bri_jobs_store *s, svc_job_held_fn held, void *held_ctx, bri_jobs_recovery_report *rep,
                     bri_error *err);

/* For a running job of this session whose attempt failed: every output
 * journaled by that attempt (job->attempts) that still exists and is not
 * referenced is removed, and leaves the journal. Entries of other attempts
 * are left alone: after a lost lease they may be the next owner's, and a
 * dead attempt's are settled by recovery. *removed / *kept (may be NULL)
 * count files. */
int svc_recover_outputs(bri_jobs_store *s, const bri_jobs_job *job, size_t *removed, size_t *kept,
                        bri_error *err);

#endif
