/* queue.c: job state transitions (see queue.h). Every transition is one
 * BEGIN IMMEDIATE transaction under the store's mutex: it reads the job,
 * checks the transition is allowed, then writes the job row, its attempt
 * record, the per-kind counters and the table's state together, so a crash
 * leaves either the old state or the new one. The partial unique indexes of
 * the schema back the two queue invariants; the code checks them first to
 * give a useful answer instead of a constraint error. */
#include "jobs/queue.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/internal.h"
#include "bri/util.h"

void bri_jobs_job_clear(bri_jobs_job *job) {
  if (!job) return;
  free(job->root);
  free(job->owner);
  free(job->params);
  free(job->result);
  free(job->error);
  free(job->commit_uuid);
  free(job->instance);
  memset(job, 0, sizeof *job);
}

static int64_t clamp_bytes(uint64_t v) { return v > INT64_MAX ? INT64_MAX : (int64_t)v; }

int64_t bri_jobs_backoff_ms(const bri_jobs_store *s, int attempts) {
  int64_t d = s->opt.retry_base_ms;
  for (int i = 1; i < attempts && d < s->opt.retry_max_ms; i++)
    d = d > s->opt.retry_max_ms / 2 ? s->opt.retry_max_ms : 2 * d;
  return d < s->opt.retry_max_ms ? d : s->opt.retry_max_ms;
}

int bri_jobs_enqueue(bri_jobs_store *s, int64_t table_id, bri_job_kind kind, int priority,
                     const char *params_json, int64_t not_before, int64_t *job_id,
                     int *was_duplicate, bri_error *err) {
  if (!rpc_kind_of(kind))
    return bri_error_set(err, BRI_EINVAL, "%s: enqueue: job kind %d is not one of %s", s->path,
                         (int)kind, rpc_kind_list());
  char what[64];
  snprintf(what, sizeof what, "the params of a %s job", bri_job_kind_name(kind));
  char *params = NULL;
  int rc = jobs_check_json(s, params_json, what, &params, err);
  if (rc) return rc;
  const char *step = "queueing a job";
  jobs_stmt *st = NULL;
  int dup = 0, conflicts = 0;
  pthread_mutex_lock(&s->mu);
  int64_t now;
again:
  now = jobs_now_locked(s);
  if (not_before <= 0) not_before = now;
  if ((rc = jobs_begin(s, step, err))) goto out;
  rc = jobs_query(s, &st, step, err, "SELECT 1 FROM tables WHERE id = ?", "i", table_id);
  if (rc == 0)
    rc = bri_error_set(err, BRI_ENOTFOUND, "%s: cannot queue a %s job: no table %lld", s->path,
                       bri_job_kind_name(kind), (long long)table_id);
  if (rc < 0) goto out;
  jobs_finalize(st);
  st = NULL;
  rc = jobs_queued_same_locked(s, table_id, kind, params, 0, job_id, err);
  if (rc < 0) goto out;
  if (rc == 1) {
    /* Dedupe: one queued job per request; the request's urgency wins. */
    dup = 1;
    rc = jobs_run(s, step, err,
                  "UPDATE jobs SET priority = CASE WHEN ?1 > priority THEN ?1 ELSE priority END, "
                  "not_before = CASE WHEN ?2 < not_before THEN ?2 ELSE not_before END WHERE id = ?3",
                  "iii", (int64_t)priority, not_before, *job_id);
  } else {
    rc = jobs_query(s, &st, step, err,
                    "INSERT INTO jobs (table_id, kind, state, priority, max_attempts, not_before, "
                    "created_at, params) VALUES (?, ?, 'queued', ?, ?, ?, ?, ?) RETURNING id",
                    "itiiiit", table_id, bri_job_kind_name(kind), (int64_t)priority,
                    (int64_t)s->opt.max_attempts, not_before, now, params);
    if (rc == 1) {
      *job_id = jobs_col_i64(st, 0);
      jobs_finalize(st); /* the statement is done before the commit */
      st = NULL;
      rc = 0;
    } else if (rc == 0) {
      rc = bri_error_set(err, BRI_EIO, "%s: %s: the insert returned no id", s->path, step);
    }
  }
  if (!rc) rc = jobs_commit(s, step, err);
out:
  jobs_finalize(st);
  st = NULL;
  if (rc) {
    jobs_rollback(s);
    /* another instance queued the same request meanwhile (the driver's
     * conflict: PostgreSQL under READ COMMITTED): dedupe against it */
    if (s->drv->conflict(s) && ++conflicts < 10) {
      dup = 0;
      goto again;
    }
  }
  pthread_mutex_unlock(&s->mu);
  free(params);
  if (!rc && was_duplicate) *was_duplicate = dup;
  return rc;
}

int jobs_queued_same_locked(bri_jobs_store *s, int64_t table_id, bri_job_kind kind, const char *params,
                            int64_t except, int64_t *found, bri_error *err) {
  /* the same expression as the unique index jobs_one_queued_per_request
   * (schema_sqlite.sql, schema_pg.sql): the driver's request_expr */
  char sql[512], mine[128], theirs[128];
  snprintf(mine, sizeof mine, s->drv->request_expr, "params");
  snprintf(theirs, sizeof theirs, s->drv->request_expr, "?");
  snprintf(sql, sizeof sql,
           "SELECT id FROM jobs WHERE table_id = ? AND kind = ? AND state = 'queued' AND id != ? "
           "AND %s = %s",
           mine, theirs);
  jobs_stmt *st = NULL;
  int rc = jobs_query(s, &st, "looking for a queued job of the same request", err, sql, "itit",
                      table_id, bri_job_kind_name(kind), except, params);
  if (rc == 1) *found = jobs_col_i64(st, 0);
  jobs_finalize(st);
  return rc;
}

/* Writes " AND j.kind IN ('compact', ...)", the kinds this brid runs
 * (rpc/rpc_kinds.h; our constants, never input), to out: a job of a kind
 * it does not know (queued by a newer brid on the same store) waits for
 * one that does instead of being claimed and failed. */
static void known_kinds(char *out, size_t cap) {
  size_t n = (size_t)snprintf(out, cap, " AND j.kind IN (");
  for (size_t i = 0; i < BRI_JOB_NKINDS && n < cap; i++)
    n += (size_t)snprintf(out + n, cap - n, "%s'%s'", i ? ", " : "", rpc_kind_at(i)->name);
  if (n < cap) snprintf(out + n, cap - n, ")");
}

int bri_jobs_claim_next(bri_jobs_store *s, bri_jobs_job *job, int *claimed, bri_error *err) {
  /* The pick walks jobs_queue in its order and takes the first due job
   * (the unary + keeps the planner off jobs_due, whose range would have it
   * sort every due job for one). The pick and the update run in one write
   * transaction under the mutex:
   * no other thread or process can claim in between (SQLite's write lock;
   * on PostgreSQL the picked row is locked, rows other instances lock are
   * skipped, and a race on the table's one running job is a conflict that
   * picks again). */
  char kinds[256], pick[768];
  known_kinds(kinds, sizeof kinds);
  snprintf(pick, sizeof pick,
           "SELECT j.id FROM jobs j JOIN tables t ON t.id = j.table_id "
           "WHERE j.state = 'queued' AND +j.not_before <= ? AND t.paused = 0%s "
           "AND NOT EXISTS (SELECT 1 FROM jobs r WHERE r.table_id = j.table_id AND r.state = "
           "'running') "
           "ORDER BY j.priority DESC, j.not_before, j.id LIMIT 1%s",
           kinds, s->drv->claim_lock);
  const char *step = "claiming a job";
  jobs_stmt *st = NULL;
  memset(job, 0, sizeof *job);
  *claimed = 0;
  pthread_mutex_lock(&s->mu);
  int conflicts = 0, rc;
  int64_t now;
again:
  now = jobs_now_locked(s);
  rc = jobs_begin(s, step, err);
  if (rc) goto out;
  rc = jobs_query(s, &st, step, err, pick, "i", now);
  if (rc <= 0) goto out; /* nothing claimable (0) or an error */
  int64_t id = jobs_col_i64(st, 0);
  jobs_finalize(st);
  st = NULL;
  rc = jobs_run(s, step, err,
                "UPDATE jobs SET state = 'running', owner = ?, instance = ?, attempts = attempts + 1, "
                "started_at = ?, lease_expires_at = ?, cancel_requested = 0, commit_uuid = NULL, "
                "commit_read_version = NULL WHERE id = ? AND state = 'queued'",
                "ttiii", s->session, s->instance, now, now + s->opt.lease_ttl_ms, id);
  if (!rc)
    rc = jobs_run(s, step, err,
                  "INSERT INTO job_attempts (job_id, attempt, owner, instance, started_at) "
                  "SELECT id, attempts, owner, instance, started_at FROM jobs WHERE id = ?",
                  "i", id);
  if (!rc) rc = jobs_get_locked(s, id, job, err);
  if (!rc) rc = bri_failpoint("jobs.before_claim", err);
  if (!rc) rc = jobs_commit(s, step, err);
  if (!rc) *claimed = 1;
out:
  jobs_finalize(st);
  st = NULL;
  if (rc < 0) {
    jobs_rollback(s);
    bri_jobs_job_clear(job);
    /* another instance claimed a job of the same table meanwhile (the
     * driver's conflict: PostgreSQL under READ COMMITTED): pick again */
    if (s->drv->conflict(s) && ++conflicts < 10) goto again;
  } else if (!*claimed) {
    jobs_rollback(s); /* nothing written: just end the transaction */
  }
  pthread_mutex_unlock(&s->mu);
  return rc < 0 ? rc : 0;
}

int jobs_end_locked(bri_jobs_store *s, const bri_jobs_job *job, bri_job_state state,
                    const char *result, const char *error, uint64_t bytes_written,
                    uint64_t bytes_reused, const char *attempt_outcome, int64_t now,
                    bri_error *err) {
  const char *step = "ending a job";
  int64_t run_ms = attempt_outcome && job->started_at ? now - job->started_at : 0;
  int rc = jobs_run(s, step, err,
                    "UPDATE jobs SET state = ?, owner = NULL, finished_at = ?, result = ?, "
                    "error = ?, bytes_written = ?, bytes_reused = ? WHERE id = ?",
                    "tittiii", bri_job_state_name(state), now, result, error,
                    clamp_bytes(bytes_written), clamp_bytes(bytes_reused), job->id);
  if (!rc && attempt_outcome)
    rc = jobs_run(s, step, err,
                  "UPDATE job_attempts SET finished_at = ?, outcome = ?, error = ? "
                  "WHERE job_id = ? AND attempt = ?",
                  "ittii", now, attempt_outcome, error, job->id, (int64_t)job->attempts);
  if (!rc)
    rc = jobs_stats_add_locked(s, job->table_id, job->kind, bri_job_state_name(state), run_ms,
                               bytes_written, bytes_reused, err);
  if (rc) return rc;
  const rpc_kind *d = rpc_kind_of(job->kind);
  bri_job_stamp stamp = state == BRI_JOB_SUCCEEDED && d ? d->stamp : BRI_STAMP_NONE;
  if (stamp == BRI_STAMP_COMPACTION)
    rc = jobs_run(s, step, err, "UPDATE tables SET last_compaction_at = ? WHERE id = ?", "ii",
                  now, job->table_id);
  else if (stamp == BRI_STAMP_CLEANUP)
    rc = jobs_run(s, step, err, "UPDATE tables SET last_cleanup_at = ? WHERE id = ?", "ii", now,
                  job->table_id);
  else if (state == BRI_JOB_FAILED)
    rc = jobs_run(s, step, err,
                  "UPDATE tables SET last_error = ? || ' job ' || ? || ': ' || ?, "
                  "last_error_at = ? WHERE id = ?",
                  "titii", bri_job_kind_name(job->kind), job->id,
                  error ? error : "failed (no message)", now, job->table_id);
  return rc;
}

int bri_jobs_finish(bri_jobs_store *s, int64_t job_id, const bri_jobs_outcome *o,
                    bri_error *err) {
  if (!o || (o->state != BRI_JOB_SUCCEEDED && o->state != BRI_JOB_FAILED &&
             o->state != BRI_JOB_CANCELLED))
    return bri_error_set(err, BRI_EINVAL,
                         "%s: finishing job %lld: the outcome must be succeeded, failed or "
                         "cancelled",
                         s->path, (long long)job_id);
  int rc = jobs_check_json(s, o->result_json, "a job result", NULL, err);
  if (rc) return rc;
  if ((rc = bri_failpoint("jobs.before_finish", err)) != 0)
    return bri_error_wrap(err, "%s: finishing job %lld", s->path, (long long)job_id);
  const char *step = "finishing a job";
  bri_jobs_job job;
  rc = jobs_job_begin(s, job_id, "finish", step, &job, err);
  int64_t now = jobs_now_locked(s);
  if (!rc && o->has_seen_version && o->seen_version > INT64_MAX)
    rc = bri_error_set(err, BRI_EINVAL, "%s: finishing job %lld: version %llu does not fit the store", s->path,
                       (long long)job_id, (unsigned long long)o->seen_version);
  if (!rc)
    rc = jobs_end_locked(s, &job, o->state, o->result_json, o->error, o->bytes_written,
                         o->bytes_reused, bri_job_state_name(o->state), now, err);
  if (!rc && o->state == BRI_JOB_SUCCEEDED)
    rc = jobs_run(s, step, err, "DELETE FROM job_outputs WHERE job_id = ?", "i", job_id);
  if (!rc && o->has_seen_version)
    rc = jobs_run(s, step, err, "UPDATE tables SET last_seen_version = ? WHERE id = ?", "ii",
                  (int64_t)o->seen_version, job.table_id);
  return jobs_job_end(s, rc, 0, step, &job, err);
}

/* Ends job cancelled in favour of the queued job other (the same request),
 * which takes job's priority if higher and not_before >= next. */
static int supersede_locked(bri_jobs_store *s, const bri_jobs_job *job, int64_t other, const char *why,
                            int64_t next, int64_t now, bri_error *err) {
  char result[64];
  snprintf(result, sizeof result, "{\"superseded_by\": %lld}", (long long)other);
  char *text = bri_strdupf("superseded by job %lld, queued while this one ran; last attempt: %s",
                           (long long)other, why);
  if (!text) return bri_error_set(err, BRI_ENOMEM, "%s: out of memory", s->path);
  int rc = jobs_end_locked(s, job, BRI_JOB_CANCELLED, result, text, 0, 0, NULL, now, err);
  free(text);
  if (!rc)
    rc = jobs_run(s, "superseding a job", err,
                  "UPDATE jobs SET priority = CASE WHEN ?1 > priority THEN ?1 ELSE priority END, "
                  "not_before = CASE WHEN ?2 > not_before THEN ?2 ELSE not_before END WHERE id = ?3",
                  "iii", (int64_t)job->priority, next, other);
  return rc;
}

int jobs_requeue_locked(bri_jobs_store *s, const bri_jobs_job *job, const char *error,
                        const char *attempt_outcome, int count_run_time, int64_t now,
                        bri_job_state *new_state, int64_t *not_before, bri_error *err) {
  const char *step = "requeueing a job";
  int64_t run_ms = count_run_time && job->started_at ? now - job->started_at : 0;
  int rc = jobs_run(s, step, err,
                    "UPDATE job_attempts SET finished_at = ?, outcome = ?, error = ? "
                    "WHERE job_id = ? AND attempt = ?",
                    "ittii", now, attempt_outcome, error, job->id, (int64_t)job->attempts);
  if (!rc)
    rc = jobs_stats_add_locked(s, job->table_id, job->kind, attempt_outcome, run_ms, 0, 0, err);
  if (rc) return rc;
  const char *msg = error ? error : "no message";
  int64_t next = now + bri_jobs_backoff_ms(s, job->attempts);
  char *text = NULL;

  if (job->cancel_requested) {
    text = bri_strdupf("cancelled on request; the last attempt ended with: %s", msg);
    rc = text ? jobs_end_locked(s, job, BRI_JOB_CANCELLED, NULL, text, 0, 0, NULL, now, err)
              : BRI_ENOMEM;
    *new_state = BRI_JOB_CANCELLED;
    *not_before = 0;
  } else if (job->attempts >= job->max_attempts) {
    text = bri_strdupf("gave up after %d attempts: %s", job->attempts, msg);
    rc = text ? jobs_end_locked(s, job, BRI_JOB_FAILED, NULL, text, 0, 0, NULL, now, err)
              : BRI_ENOMEM;
    *new_state = BRI_JOB_FAILED;
    *not_before = 0;
  } else {
    int64_t other = 0;
    rc = jobs_queued_same_locked(s, job->table_id, job->kind, job->params, job->id, &other, err);
    if (rc < 0) return rc;
    if (rc == 1) {
      /* The same request was queued again while this one ran: it will plan
       * from a newer version, so it replaces this one (the backoff carries
       * over: the conflict that made this attempt fail may still be on). */
      rc = supersede_locked(s, job, other, msg, next, now, err);
      *new_state = BRI_JOB_CANCELLED;
      *not_before = next;
    } else {
      rc = jobs_run(s, step, err,
                    "UPDATE jobs SET state = 'queued', owner = NULL, not_before = ?, error = ?, "
                    "commit_uuid = NULL, commit_read_version = NULL WHERE id = ?",
                    "iti", next, error, job->id);
      *new_state = BRI_JOB_QUEUED;
      *not_before = next;
    }
  }
  if (rc == BRI_ENOMEM) rc = bri_error_set(err, BRI_ENOMEM, "%s: out of memory", s->path);
  free(text);
  return rc;
}

int bri_jobs_retry_later(bri_jobs_store *s, int64_t job_id, const char *error,
                         bri_job_state *new_state, int64_t *not_before, bri_error *err) {
  const char *step = "retrying a job";
  bri_jobs_job job;
  bri_job_state ns = 0;
  int64_t nb = 0;
  int rc = jobs_job_begin(s, job_id, "retry", step, &job, err);
  int64_t now = jobs_now_locked(s);
  if (!rc) rc = jobs_requeue_locked(s, &job, error, "retried", 1, now, &ns, &nb, err);
  rc = jobs_job_end(s, rc, 0, step, &job, err);
  if (!rc && new_state) *new_state = ns;
  if (!rc && not_before) *not_before = nb;
  return rc;
}

/* Moves job (running under this session, not started yet) back to the
 * queue at next; or ends it when a cancel was asked for, or when the same
 * request is queued already (superseded). */
static int defer_locked(bri_jobs_store *s, const bri_jobs_job *job, const char *why, int64_t next,
                        int64_t now, bri_job_state *ns, bri_error *err) {
  const char *step = "deferring a job";
  int64_t other = 0;
  int rc;
  *ns = BRI_JOB_QUEUED;
  if (job->cancel_requested) {
    *ns = BRI_JOB_CANCELLED;
    rc = jobs_end_locked(s, job, BRI_JOB_CANCELLED, NULL, "cancelled on request (it had not started)", 0, 0,
                         NULL, now, err);
  } else if ((rc = jobs_queued_same_locked(s, job->table_id, job->kind, job->params, job->id, &other, err)) == 1) {
    *ns = BRI_JOB_CANCELLED;
    rc = supersede_locked(s, job, other, why, next, now, err);
  } else if (rc == 0) {
    /* the claim is undone: no attempt is counted, no run time */
    rc = jobs_run(s, step, err, "DELETE FROM job_attempts WHERE job_id = ? AND attempt = ?", "ii", job->id,
                  (int64_t)job->attempts);
    if (!rc)
      rc = jobs_run(s, step, err,
                    "UPDATE jobs SET state = 'queued', owner = NULL, attempts = attempts - 1, not_before = ?, "
                    "error = ?, commit_uuid = NULL, commit_read_version = NULL WHERE id = ?",
                    "iti", next, why, job->id);
  }
  return rc;
}

int bri_jobs_defer(bri_jobs_store *s, int64_t job_id, int64_t delay_ms, const char *why,
                   bri_job_state *new_state, bri_error *err) {
  const char *step = "deferring a job";
  bri_jobs_job job;
  bri_job_state ns = BRI_JOB_QUEUED;
  int rc = jobs_job_begin(s, job_id, "defer", step, &job, err);
  int64_t now = jobs_now_locked(s), next = now + (delay_ms > 0 ? delay_ms : 0);
  if (!rc) rc = defer_locked(s, &job, why, next, now, &ns, err);
  rc = jobs_job_end(s, rc, 0, step, &job, err);
  if (!rc && new_state) *new_state = ns;
  return rc;
}

int bri_jobs_cancel(bri_jobs_store *s, int64_t job_id, bri_job_state *state_after,
                    bri_error *err) {
  const char *step = "cancelling a job";
  bri_jobs_job job;
  bri_job_state after = 0;
  int rc = jobs_job_begin(s, job_id, NULL, step, &job, err);
  int64_t now = jobs_now_locked(s);
  if (rc) goto out;
  switch (job.state) {
  case BRI_JOB_QUEUED:
    rc = jobs_end_locked(s, &job, BRI_JOB_CANCELLED, NULL, "cancelled on request", 0, 0, NULL,
                         now, err);
    after = BRI_JOB_CANCELLED;
    break;
  case BRI_JOB_RUNNING:
    /* The worker owns the job's files: only it can stop at a safe point. */
    rc = jobs_run(s, step, err, "UPDATE jobs SET cancel_requested = 1 WHERE id = ?", "i",
                  job_id);
    after = BRI_JOB_RUNNING;
    break;
  case BRI_JOB_CANCELLED: after = BRI_JOB_CANCELLED; break;
  default:
    rc = bri_error_set(err, BRI_EINVAL, "%s: job %lld has already finished (%s): nothing to cancel",
                       s->path, (long long)job_id, bri_job_state_name(job.state));
  }
out:
  rc = jobs_job_end(s, rc, 0, step, &job, err);
  if (!rc && state_after) *state_after = after;
  return rc;
}

int bri_jobs_cancel_requested(bri_jobs_store *s, int64_t job_id, int *requested, bri_error *err) {
  jobs_stmt *st = NULL;
  pthread_mutex_lock(&s->mu);
  int rc = jobs_query(s, &st, "reading a cancel request", err,
                      "SELECT cancel_requested FROM jobs WHERE id = ?", "i", job_id);
  if (rc == 1) *requested = jobs_col_int(st, 0);
  else if (rc == 0)
    rc = bri_error_set(err, BRI_ENOTFOUND, "%s: no job %lld", s->path, (long long)job_id);
  jobs_finalize(st);
  pthread_mutex_unlock(&s->mu);
  return rc < 0 ? rc : 0;
}

int bri_jobs_next_due(bri_jobs_store *s, int64_t after, int64_t *when, int *has, bri_error *err) {
  jobs_stmt *st = NULL;
  *has = 0;
  *when = 0;
  pthread_mutex_lock(&s->mu);
  char kinds[256], sql[512];
  known_kinds(kinds, sizeof kinds);
  snprintf(sql, sizeof sql,
           "SELECT j.not_before FROM jobs j JOIN tables t ON t.id = j.table_id "
           "WHERE j.state = 'queued' AND j.not_before > ? AND t.paused = 0%s "
           "ORDER BY j.not_before LIMIT 1",
           kinds);
  /* in the order of jobs_due: the first row that passes is the answer */
  int rc = jobs_query(s, &st, "finding the next due job", err, sql, "i", after);
  if (rc == 1) {
    *has = 1;
    *when = jobs_col_i64(st, 0);
  }
  jobs_finalize(st);
  pthread_mutex_unlock(&s->mu);
  return rc < 0 ? rc : 0;
}
