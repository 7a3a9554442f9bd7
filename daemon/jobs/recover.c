/* recover.c: rolling back or finishing the jobs a dead daemon left behind
 * (see recover.h for the contract). Each job is handled on its own: its
 * journal is read, the callbacks run without the store's lock, each
 * handled entry leaves the journal at once (so a crash during recovery
 * resumes where it stopped), and the job's state changes in one final
 * transaction that first re-checks the job is still the interrupted attempt
 * it was when recovery looked at it. */
#include "jobs/recover.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/history.h"
#include "jobs/internal.h"
#include "jobs/tables.h"

/* Calls a callback's result through: makes sure err says something. */
static int callback_failed(int rc, bri_error *e, const char *what) {
  if (e->msg[0] == '\0') bri_error_set(e, rc, "%s failed with code %d", what, rc);
  if (e->code >= 0) e->code = rc < 0 ? rc : BRI_EIO;
  return e->code;
}

/* The job is stuck: note it on the table (best effort) and report. */
static int stuck(bri_jobs_store *s, const bri_jobs_job *job, bri_jobs_recovery_report *rep,
                 bri_error *e) {
  bri_error_wrap(e, "%s: recovering %s job %lld of %s", s->path, bri_job_kind_name(job->kind),
                 (long long)job->id, job->root ? job->root : "?");
  bri_error ignored;
  bri_jobs_table_set_error(s, job->table_id, e->msg, &ignored);
  rep->stuck++;
  return e->code;
}

/* Moves the interrupted job to its new state: succeeded when its commit
 * landed, else requeued (or failed/cancelled) like a retry. */
static int settle(bri_jobs_store *s, const bri_jobs_job *seen, int landed, uint64_t version,
                  bri_jobs_recovery_report *rep, bri_error *err) {
  const char *step = "settling a recovered job";
  bri_jobs_job job;
  int rc = jobs_job_begin(s, seen->id, NULL, 0, step, &job, err);
  int64_t now = jobs_now_locked(s);
  if (rc) goto out;
  /* Still the attempt we looked at? (Nothing else should have moved it;
   * if something did, the transaction ends with nothing written.) */
  if (job.state != BRI_JOB_RUNNING || job.attempts != seen->attempts || !job.owner ||
      strcmp(job.owner, seen->owner) != 0)
    goto out;
  if (landed) {
    char result[96];
    snprintf(result, sizeof result, "{\"recovered\": true, \"version\": %llu}",
             (unsigned long long)version);
    /* The run time of a crashed attempt is unknown: none is counted. */
    rc = jobs_end_locked(s, &job, BRI_JOB_SUCCEEDED, result, NULL, 0, 0, NULL, now, err);
    if (!rc)
      rc = jobs_run(s, step, err,
                    "UPDATE job_attempts SET finished_at = ?, outcome = 'succeeded' "
                    "WHERE job_id = ? AND attempt = ?",
                    "iii", now, job.id, (int64_t)job.attempts);
    if (!rc) rep->succeeded++;
  } else {
    char msg[160];
    snprintf(msg, sizeof msg,
             "interrupted: the daemon stopped while attempt %d was running (session %s)",
             job.attempts, job.owner);
    bri_job_state ns = 0;
    int64_t nb = 0;
    rc = jobs_requeue_locked(s, &job, msg, "crashed", 0, now, &ns, &nb, err);
    if (!rc) {
      if (ns == BRI_JOB_QUEUED) rep->requeued++;
      else if (ns == BRI_JOB_FAILED) rep->failed++;
      else rep->cancelled++;
    }
  }
out:
  return jobs_job_end(s, rc, 0, step, &job, err);
}

static int recover_one(bri_jobs_store *s, int64_t id, const bri_jobs_recovery_ops *ops,
                       bri_jobs_recovery_report *rep, bri_error *err) {
  bri_jobs_job job = {0};
  bri_jobs_output *outs = NULL;
  size_t n = 0;
  int rc = bri_jobs_get(s, id, &job, err);
  if (!rc) rc = bri_jobs_journal_list(s, id, &outs, &n, err);
  if (rc) goto out;
  int running = job.state == BRI_JOB_RUNNING;
  if (running && job.owner && strcmp(job.owner, s->session) == 0) goto out; /* ours, live */
  if (running) rep->interrupted++;
  else rep->leftovers++;

  int landed = 0;
  uint64_t version = 0;
  bri_error e = {0};
  if (running && ops->commit_landed && job.commit_uuid) {
    int crc = ops->commit_landed(ops->user, &job, &landed, &version, &e);
    if (crc) {
      callback_failed(crc, &e, "commit_landed");
      rc = stuck(s, &job, rep, &e);
      *err = e;
      goto out;
    }
  }
  /* Newest first: a directory or link journaled before its contents goes last. */
  for (size_t i = n; i-- > 0;) {
    int referenced = 0;
    e = (bri_error){0};
    int crc = ops->is_referenced(ops->user, &job, &outs[i], &referenced, &e);
    if (!crc && !referenced) crc = ops->remove(ops->user, &job, &outs[i], &e);
    if (crc) {
      callback_failed(crc, &e, referenced ? "is_referenced" : "remove");
      bri_error_wrap(&e, "%s", outs[i].path);
      rc = stuck(s, &job, rep, &e);
      *err = e;
      goto out;
    }
    if (referenced) rep->files_kept++;
    else rep->files_removed++;
    if ((rc = bri_jobs_journal_remove(s, id, outs[i].path, err))) {
      rep->stuck++;
      goto out;
    }
  }
  if (running && (rc = settle(s, &job, landed, version, rep, err))) rep->stuck++;
out:
  bri_jobs_job_clear(&job);
  bri_jobs_journal_free(outs, n);
  return rc;
}

int bri_jobs_recover(bri_jobs_store *s, const bri_jobs_recovery_ops *ops,
                     bri_jobs_recovery_report *rep, bri_error *err) {
  bri_jobs_recovery_report local;
  if (!rep) rep = &local;
  memset(rep, 0, sizeof *rep);
  if (!ops || !ops->is_referenced || !ops->remove)
    return bri_error_set(err, BRI_EINVAL,
                         "%s: recovery needs is_referenced and remove callbacks", s->path);
  /* The candidates: interrupted jobs, and any other job with a journal. */
  int64_t *ids = NULL;
  size_t n = 0, cap = 0;
  jobs_stmt *st;
  pthread_mutex_lock(&s->mu);
  int rc = jobs_prepare(s,
                        "SELECT id FROM jobs WHERE (state = 'running' AND owner <> ?1) "
                        "OR (state <> 'running' AND "
                        "    EXISTS (SELECT 1 FROM job_outputs o WHERE o.job_id = jobs.id)) "
                        "ORDER BY id",
                        &st, "finding jobs to recover", err);
  if (!rc) {
    jobs_bind_text(st, 1, s->session);
    while ((rc = jobs_step(s, st, "finding jobs to recover", err)) == 1) {
      if (n == cap) {
        size_t nc = cap ? 2 * cap : 16;
        int64_t *nv = realloc(ids, nc * sizeof *nv);
        if (!nv) {
          rc = bri_error_set(err, BRI_ENOMEM, "%s: out of memory", s->path);
          break;
        }
        ids = nv, cap = nc;
      }
      ids[n++] = jobs_col_i64(st, 0);
    }
    jobs_finalize(st);
  }
  pthread_mutex_unlock(&s->mu);
  if (rc < 0) {
    free(ids);
    return rc;
  }
  int first = 0;
  for (size_t i = 0; i < n; i++) {
    bri_error e = {0};
    int r = recover_one(s, ids[i], ops, rep, &e);
    if (r && !first) {
      first = r;
      if (err) *err = e;
    }
  }
  free(ids);
  return first;
}
