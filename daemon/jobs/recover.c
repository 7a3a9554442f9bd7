/* recover.c: rolling back or finishing the jobs a dead daemon left behind
 * (see recover.h for the contract). Each job is handled on its own: an
 * interrupted one is first taken over (its owner and lease become this
 * session's, in one statement that only succeeds while the lease is still
 * expired, so two instances never recover one job), its journal is read,
 * the callbacks run without the store's lock, each handled entry leaves the
 * journal at once (so a crash during recovery resumes where it stopped),
 * and the job's state changes in one final transaction that first
 * re-checks the job is still the attempt recovery took over. */
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

/* The job is stuck: note it on the table (best effort), give up the lease
 * recovery took (the next recovery, of any instance, tries again) and
 * report. */
static int stuck(bri_jobs_store *s, const bri_jobs_job *job, bri_jobs_recovery_report *rep,
                 bri_error *e) {
  bri_error_wrap(e, "%s: recovering %s job %lld of %s", s->path, bri_job_kind_name(job->kind),
                 (long long)job->id, job->root ? job->root : "?");
  bri_error ignored;
  bri_jobs_table_set_error(s, job->table_id, e->msg, &ignored);
  if (job->state == BRI_JOB_RUNNING) {
    pthread_mutex_lock(&s->mu);
    jobs_run(s, "releasing a stuck job's lease", &ignored,
             "UPDATE jobs SET lease_expires_at = 0 WHERE id = ? AND owner = ?", "it", job->id, s->session);
    pthread_mutex_unlock(&s->mu);
  }
  rep->stuck++;
  return e->code;
}

/* Moves the interrupted job to its new state: succeeded when its commit
 * landed, else requeued (or failed/cancelled) like a retry. */
static int settle(bri_jobs_store *s, const bri_jobs_job *seen, const char *was, int landed,
                  uint64_t version, bri_jobs_recovery_report *rep, bri_error *err) {
  const char *step = "settling a recovered job";
  bri_jobs_job job;
  int rc = jobs_job_begin(s, seen->id, NULL, step, &job, err);
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
    char msg[320];
    snprintf(msg, sizeof msg,
             "interrupted: the daemon stopped or lost its lease while attempt %d was running (%s)",
             job.attempts, was);
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

/* Makes the interrupted job (as seen) this session's, with a fresh lease,
 * if its lease is still expired (or its owner is dead for sure: a store
 * only one brid opens); *taken = 0 when another instance was faster or the
 * owner renewed meanwhile. On success job->owner is this session. */
static int take_over(bri_jobs_store *s, bri_jobs_job *job, int *taken, bri_error *err) {
  pthread_mutex_lock(&s->mu);
  int64_t now = jobs_now_locked(s);
  int rc = jobs_run(s, "taking over an interrupted job", err,
                    "UPDATE jobs SET owner = ?, instance = ?, lease_expires_at = ? "
                    "WHERE id = ? AND state = 'running' AND owner = ? AND attempts = ? "
                    "AND (? = 1 OR lease_expires_at IS NULL OR lease_expires_at <= ?)",
                    "ttiitiii", s->session, s->instance, now + s->opt.lease_ttl_ms, job->id, job->owner,
                    (int64_t)job->attempts, (int64_t)(bri_jobs_exclusive(s) && strcmp(job->owner, s->session)),
                    now);
  *taken = !rc && jobs_changes(s) == 1;
  pthread_mutex_unlock(&s->mu);
  if (*taken) {
    char *mine = strdup(s->session);
    if (!mine) return bri_error_set(err, BRI_ENOMEM, "%s: out of memory", s->path);
    free(job->owner);
    job->owner = mine;
    job->lease_expires_at = now + s->opt.lease_ttl_ms;
  }
  return rc;
}

/* Renews the lease of a job being recovered once a third of it is used. */
static int keep_lease(bri_jobs_store *s, bri_jobs_job *job, bri_error *err) {
  pthread_mutex_lock(&s->mu);
  int64_t now = jobs_now_locked(s);
  int rc = 0;
  if (job->lease_expires_at - now < 2 * s->opt.lease_ttl_ms / 3) {
    rc = jobs_run(s, "renewing the lease of a job being recovered", err,
                  "UPDATE jobs SET lease_expires_at = ? WHERE id = ? AND owner = ?", "iit",
                  now + s->opt.lease_ttl_ms, job->id, s->session);
    if (!rc) job->lease_expires_at = now + s->opt.lease_ttl_ms;
  }
  pthread_mutex_unlock(&s->mu);
  return rc;
}

static int recover_one(bri_jobs_store *s, int64_t id, const bri_jobs_recovery_ops *ops,
                       bri_jobs_recovery_report *rep, bri_error *err) {
  bri_jobs_job job = {0};
  bri_jobs_output *outs = NULL;
  size_t n = 0;
  char was[160] = "";
  int rc = bri_jobs_get(s, id, &job, err);
  if (rc) goto out;
  int running = job.state == BRI_JOB_RUNNING;
  if (running && ops->in_flight && ops->in_flight(ops->user, job.id)) goto out; /* ours, live */
  if (running) {
    int taken = 0;
    snprintf(was, sizeof was, "session %s, instance %s", job.owner ? job.owner : "?",
             job.instance ? job.instance : "?");
    if (!job.owner || (rc = take_over(s, &job, &taken, err)) || !taken) goto out;
    rep->interrupted++;
  } else {
    rep->leftovers++;
  }
  if ((rc = bri_jobs_journal_list(s, id, &outs, &n, err))) goto out;

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
    if ((rc = bri_jobs_journal_remove(s, id, outs[i].path, err)) || (running && (rc = keep_lease(s, &job, err)))) {
      rep->stuck++;
      goto out;
    }
  }
  if (running && (rc = settle(s, &job, was, landed, version, rep, err))) rep->stuck++;
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
                        "SELECT id FROM jobs WHERE (state = 'running' AND "
                        "    (lease_expires_at IS NULL OR lease_expires_at <= ?2 OR (?3 = 1 AND owner <> ?1))) "
                        "OR (state <> 'running' AND "
                        "    EXISTS (SELECT 1 FROM job_outputs o WHERE o.job_id = jobs.id)) "
                        "ORDER BY id",
                        &st, "finding jobs to recover", err);
  if (!rc) {
    jobs_bind_text(st, 1, s->session);
    jobs_bind_i64(st, 2, jobs_now_locked(s));
    jobs_bind_i64(st, 3, bri_jobs_exclusive(s));
    while ((rc = jobs_step(s, st, "finding jobs to recover", err)) == 1) {
      if (jobs_grow((void **)&ids, &cap, n, sizeof *ids)) {
          rc = bri_error_set(err, BRI_ENOMEM, "%s: out of memory", s->path);
          break;
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
