/* history.c: read-only queries of the job store and history pruning (see
 * history.h). Lists are read into malloc'd arrays under the mutex and
 * returned as copies: nothing handed out points into SQLite memory. */
#include "jobs/history.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/internal.h"

#define LIST_DEFAULT 100
#define LIST_MAX 10000

int bri_jobs_get(bri_jobs_store *s, int64_t id, bri_jobs_job *job, bri_error *err) {
  pthread_mutex_lock(&s->mu);
  int rc = jobs_peek_locked(s, id, job, err);
  pthread_mutex_unlock(&s->mu);
  return rc;
}

void bri_jobs_list_free(bri_jobs_job *jobs, size_t n) {
  for (size_t i = 0; jobs && i < n; i++) bri_jobs_job_clear(&jobs[i]);
  free(jobs);
}


int bri_jobs_list(bri_jobs_store *s, const bri_jobs_filter *f, bri_jobs_job **out, size_t *n,
                  bri_error *err) {
  static const bri_jobs_filter all = {0};
  if (!f) f = &all;
  *out = NULL;
  *n = 0;
  size_t limit = f->limit == 0 ? LIST_DEFAULT : f->limit > LIST_MAX ? LIST_MAX : f->limit;
  /* The state names pasted into the SQL are our constants, never input. */
  char sql[1024];
  int len = snprintf(sql, sizeof sql, "SELECT " JOBS_JOB_COLUMNS JOBS_JOB_FROM "WHERE TRUE");
  if (f->table_id) len += snprintf(sql + len, sizeof sql - (size_t)len, " AND j.table_id = ?");
  if (f->state_mask) {
    len += snprintf(sql + len, sizeof sql - (size_t)len, " AND j.state IN (''");
    for (int st = 1; st <= BRI_JOB_NSTATES; st++)
      if (f->state_mask & (1u << st))
        len += snprintf(sql + len, sizeof sql - (size_t)len, ", '%s'",
                        bri_job_state_name((bri_job_state)st));
    len += snprintf(sql + len, sizeof sql - (size_t)len, ")");
  }
  if (f->kind) len += snprintf(sql + len, sizeof sql - (size_t)len, " AND j.kind = ?");
  if (f->before_id) len += snprintf(sql + len, sizeof sql - (size_t)len, " AND j.id < ?");
  snprintf(sql + len, sizeof sql - (size_t)len, " ORDER BY j.id DESC LIMIT ?");

  bri_jobs_job *v = NULL;
  size_t count = 0, cap = 0;
  jobs_stmt *st;
  pthread_mutex_lock(&s->mu);
  int rc = jobs_prepare(s, sql, &st, "listing jobs", err);
  if (!rc) {
    int i = 1;
    if (f->table_id) jobs_bind_i64(st, i++, f->table_id);
    if (f->kind) jobs_bind_text(st, i++, bri_job_kind_name(f->kind));
    if (f->before_id) jobs_bind_i64(st, i++, f->before_id);
    jobs_bind_i64(st, i, (int64_t)limit);
    while ((rc = jobs_step(s, st, "listing jobs", err)) == 1) {
      if (jobs_grow((void **)&v, &cap, count, sizeof *v)) {
        rc = bri_error_set(err, BRI_ENOMEM, "%s: out of memory listing jobs", s->path);
        break;
      }
      if ((rc = jobs_read_job(s, st, &v[count], err))) break;
      count++;
    }
    jobs_finalize(st);
  }
  pthread_mutex_unlock(&s->mu);
  if (rc < 0) {
    bri_jobs_list_free(v, count);
    return rc;
  }
  *out = v;
  *n = count;
  return 0;
}

void bri_jobs_attempts_free(bri_jobs_attempt *a, size_t n) {
  for (size_t i = 0; a && i < n; i++) {
    free(a[i].owner);
    free(a[i].instance);
    free(a[i].outcome);
    free(a[i].error);
  }
  free(a);
}

int bri_jobs_attempts(bri_jobs_store *s, int64_t job_id, bri_jobs_attempt **out, size_t *n,
                      bri_error *err) {
  *out = NULL;
  *n = 0;
  bri_jobs_attempt *v = NULL;
  size_t count = 0, cap = 0;
  jobs_stmt *st;
  pthread_mutex_lock(&s->mu);
  int rc = jobs_prepare(s,
                        "SELECT attempt, owner, started_at, finished_at, outcome, error, instance "
                        "FROM job_attempts WHERE job_id = ? ORDER BY attempt",
                        &st, "listing a job's attempts", err);
  if (!rc) {
    jobs_bind_i64(st, 1, job_id);
    while ((rc = jobs_step(s, st, "listing a job's attempts", err)) == 1) {
      if (jobs_grow((void **)&v, &cap, count, sizeof *v)) {
        rc = bri_error_set(err, BRI_ENOMEM, "%s: out of memory listing attempts", s->path);
        break;
      }
      bri_jobs_attempt *a = &v[count++];
      int oom = 0;
      a->attempt = jobs_col_int(st, 0);
      a->owner = jobs_col_text(st, 1, &oom);
      a->started_at = jobs_col_i64(st, 2);
      a->finished_at = jobs_col_i64(st, 3);
      a->outcome = jobs_col_text(st, 4, &oom);
      a->error = jobs_col_text(st, 5, &oom);
      a->instance = jobs_col_text(st, 6, &oom);
      if (oom) {
        rc = bri_error_set(err, BRI_ENOMEM, "%s: out of memory listing attempts", s->path);
        break;
      }
    }
    jobs_finalize(st);
  }
  pthread_mutex_unlock(&s->mu);
  if (rc < 0) {
    bri_jobs_attempts_free(v, count);
    return rc;
  }
  *out = v;
  *n = count;
  return 0;
}

int bri_jobs_count_states(bri_jobs_store *s, int64_t table_id,
                          uint64_t counts[BRI_JOB_NSTATES + 1], bri_error *err) {
  memset(counts, 0, (BRI_JOB_NSTATES + 1) * sizeof counts[0]);
  jobs_stmt *st;
  pthread_mutex_lock(&s->mu);
  int rc = jobs_prepare(s,
                        "SELECT state, count(*) FROM jobs WHERE ?1 = 0 OR table_id = ?1 "
                        "GROUP BY state",
                        &st, "counting jobs", err);
  if (!rc) {
    jobs_bind_i64(st, 1, table_id);
    while ((rc = jobs_step(s, st, "counting jobs", err)) == 1) {
      bri_job_state state;
      const char *name = jobs_col_str(st, 0);
      if (jobs_state_from_text(name, &state)) {
        rc = bri_error_set(err, BRI_ECORRUPT, "%s: jobs in unknown state '%s'", s->path,
                           name ? name : "(null)");
        break;
      }
      counts[state] = (uint64_t)jobs_col_i64(st, 1);
      counts[0] += counts[state];
    }
    jobs_finalize(st);
  }
  pthread_mutex_unlock(&s->mu);
  return rc < 0 ? rc : 0;
}

void bri_jobs_stats_free(bri_jobs_stat *st, size_t n) {
  for (size_t i = 0; st && i < n; i++) free(st[i].root);
  free(st);
}

int bri_jobs_stats(bri_jobs_store *s, bri_jobs_stat **out, size_t *n, bri_error *err) {
  *out = NULL;
  *n = 0;
  bri_jobs_stat *v = NULL;
  size_t count = 0, cap = 0;
  jobs_stmt *st;
  pthread_mutex_lock(&s->mu);
  int rc = jobs_prepare(s,
                        "SELECT s.table_id, t.root, s.kind, s.succeeded, s.failed, s.cancelled, "
                        "s.retried, s.crashed, s.run_ms, s.bytes_written, s.bytes_reused "
                        "FROM job_stats s JOIN tables t ON t.id = s.table_id "
                        "ORDER BY s.table_id, s.kind",
                        &st, "reading job statistics", err);
  while (!rc && (rc = jobs_step(s, st, "reading job statistics", err)) == 1) {
    rc = 0; /* a row: keep going */
    if (jobs_grow((void **)&v, &cap, count, sizeof *v)) {
      rc = bri_error_set(err, BRI_ENOMEM, "%s: out of memory reading statistics", s->path);
      break;
    }
    bri_jobs_stat *x = &v[count];
    memset(x, 0, sizeof *x);
    const char *kind = jobs_col_str(st, 2);
    if (jobs_kind_from_text(kind, &x->kind)) {
      rc = bri_error_set(err, BRI_ECORRUPT, "%s: statistics for unknown job kind '%s'", s->path,
                         kind ? kind : "(null)");
      break;
    }
    int oom = 0;
    x->table_id = jobs_col_i64(st, 0);
    x->root = jobs_col_text(st, 1, &oom);
    count++;
    if (oom) {
      rc = bri_error_set(err, BRI_ENOMEM, "%s: out of memory reading statistics", s->path);
      break;
    }
    x->succeeded = (uint64_t)jobs_col_i64(st, 3);
    x->failed = (uint64_t)jobs_col_i64(st, 4);
    x->cancelled = (uint64_t)jobs_col_i64(st, 5);
    x->retried = (uint64_t)jobs_col_i64(st, 6);
    x->crashed = (uint64_t)jobs_col_i64(st, 7);
    x->run_ms = jobs_col_i64(st, 8);
    x->bytes_written = (uint64_t)jobs_col_i64(st, 9);
    x->bytes_reused = (uint64_t)jobs_col_i64(st, 10);
  }
  jobs_finalize(st);
  pthread_mutex_unlock(&s->mu);
  if (rc < 0) {
    bri_jobs_stats_free(v, count);
    return rc;
  }
  *out = v;
  *n = count;
  return 0;
}

int bri_jobs_prune(bri_jobs_store *s, int64_t max_age_ms, size_t max_rows, size_t *removed,
                   bri_error *err) {
  /* Attempts go with their job (ON DELETE CASCADE); counters stay. */
  static const char sql[] =
      "DELETE FROM jobs WHERE finished_at IS NOT NULL "
      "AND NOT EXISTS (SELECT 1 FROM job_outputs o WHERE o.job_id = jobs.id) "
      "AND ((?1 > 0 AND finished_at < ?2) OR (?3 > 0 AND id NOT IN ("
      "  SELECT id FROM jobs WHERE finished_at IS NOT NULL "
      "  ORDER BY finished_at DESC, id DESC LIMIT ?3)))";
  pthread_mutex_lock(&s->mu);
  int64_t now = jobs_now_locked(s);
  int64_t rows = max_rows > INT64_MAX ? INT64_MAX : (int64_t)max_rows;
  int rc = jobs_run(s, "pruning job history", err, sql, "iii", max_age_ms, now - max_age_ms, rows);
  size_t n = rc ? 0 : (size_t)jobs_changes(s);
  pthread_mutex_unlock(&s->mu);
  if (!rc && removed) *removed = n;
  return rc;
}
