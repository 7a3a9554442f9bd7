/* store.c: the job store's object (options, session, opening through the
 * backend's driver, driver.c), kind and state names, and the helpers the
 * other files of daemon/jobs share on top of the driver: statements with
 * bound arguments, the job row reader, per-job write transactions, JSON
 * checks and counters (see store.h, internal.h). */
#include "jobs/internal.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "bri/util.h"

static const char *const STATE_NAMES[] = {NULL,     "queued",    "running",
                                          "succeeded", "failed", "cancelled"};

const char *bri_job_kind_name(bri_job_kind k) {
  const rpc_kind *d = rpc_kind_of(k);
  return d ? d->name : "?";
}

const char *bri_job_state_name(bri_job_state s) {
  return s >= 1 && s <= BRI_JOB_NSTATES ? STATE_NAMES[s] : "?";
}

int jobs_kind_from_text(const char *t, bri_job_kind *k) {
  const rpc_kind *d = rpc_kind_named(t);
  if (!d) return BRI_EINVAL;
  *k = d->kind;
  return 0;
}

int jobs_state_from_text(const char *t, bri_job_state *st) {
  for (int i = 1; t && i <= BRI_JOB_NSTATES; i++)
    if (strcmp(t, STATE_NAMES[i]) == 0) {
      *st = (bri_job_state)i;
      return 0;
    }
  return BRI_EINVAL;
}

int bri_job_kind_parse(const char *name, bri_job_kind *out, bri_error *err) {
  if (jobs_kind_from_text(name, out) == 0) return 0;
  return bri_error_set(err, BRI_EINVAL, "unknown job kind '%s' (expected %s)",
                       name ? name : "(null)", rpc_kind_list());
}

int bri_job_state_parse(const char *name, bri_job_state *out, bri_error *err) {
  if (jobs_state_from_text(name, out) == 0) return 0;
  return bri_error_set(err, BRI_EINVAL,
                       "unknown job state '%s' (expected queued, running, succeeded, failed or "
                       "cancelled)",
                       name ? name : "(null)");
}

void bri_jobs_options_init(bri_jobs_options *o) {
  memset(o, 0, sizeof *o);
  o->busy_timeout_ms = 5000;
  o->max_attempts = 5;
  o->retry_base_ms = 30 * 1000;
  o->retry_max_ms = 60 * 60 * 1000;
  o->lease_ttl_ms = 30 * 1000;
}

/* ---- SQL helpers ------------------------------------------------------- */

static int bind_args(bri_jobs_store *s, jobs_stmt *st, const char *types, va_list ap,
                     const char *step, bri_error *err) {
  for (int i = 0; types[i]; i++) {
    int rc;
    if (types[i] == 'i') rc = jobs_bind_i64(st, i + 1, va_arg(ap, int64_t));
    else rc = jobs_bind_text(st, i + 1, va_arg(ap, const char *));
    if (rc) return jobs_sqlerr(s, jobs_sql(st), step, err);
  }
  return 0;
}

int jobs_run(bri_jobs_store *s, const char *step, bri_error *err, const char *sql,
             const char *types, ...) {
  jobs_stmt *st;
  int rc = jobs_prepare(s, sql, &st, step, err);
  if (rc) return rc;
  va_list ap;
  va_start(ap, types);
  rc = bind_args(s, st, types, ap, step, err);
  va_end(ap);
  while (!rc && (rc = jobs_step(s, st, step, err)) == 1) {
  }
  jobs_finalize(st);
  return rc;
}

int jobs_query(bri_jobs_store *s, jobs_stmt **st, const char *step, bri_error *err,
               const char *sql, const char *types, ...) {
  int rc = jobs_prepare(s, sql, st, step, err);
  if (rc) return rc;
  va_list ap;
  va_start(ap, types);
  rc = bind_args(s, *st, types, ap, step, err);
  va_end(ap);
  if (!rc) rc = jobs_step(s, *st, step, err);
  if (rc != 1) {
    jobs_finalize(*st);
    *st = NULL;
  }
  return rc;
}

static int64_t realtime_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t jobs_now_locked(bri_jobs_store *s) {
  return s->opt.clock_ms ? s->opt.clock_ms(s->opt.clock_user) : realtime_ms();
}

int64_t bri_jobs_now(bri_jobs_store *s) {
  pthread_mutex_lock(&s->mu);
  int64_t t = jobs_now_locked(s);
  pthread_mutex_unlock(&s->mu);
  return t;
}

char *jobs_col_text(jobs_stmt *st, int col, int *oom) {
  const char *t = jobs_col_str(st, col);
  if (!t) {
    if (!jobs_col_null(st, col)) *oom = 1;
    return NULL;
  }
  char *c = strdup(t);
  if (!c) *oom = 1;
  return c;
}

int jobs_read_job(bri_jobs_store *s, jobs_stmt *st, bri_jobs_job *job, bri_error *err) {
  memset(job, 0, sizeof *job);
  job->id = jobs_col_i64(st, 0);
  job->table_id = jobs_col_i64(st, 1);
  const char *kind = jobs_col_str(st, 3);
  if (jobs_kind_from_text(kind, &job->kind))
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "%s: job %lld is of kind '%s', which this brid does not know (%s): "
                         "a newer brid queued it; run that one",
                         s->path, (long long)job->id, kind ? kind : "(null)", rpc_kind_list());
  const char *state = jobs_col_str(st, 4);
  if (jobs_state_from_text(state, &job->state))
    return bri_error_set(err, BRI_ECORRUPT, "%s: job %lld has unknown state '%s'", s->path,
                         (long long)job->id, state ? state : "(null)");
  job->priority = jobs_col_int(st, 5);
  job->attempts = jobs_col_int(st, 6);
  job->max_attempts = jobs_col_int(st, 7);
  job->cancel_requested = jobs_col_int(st, 8);
  job->not_before = jobs_col_i64(st, 9);
  job->created_at = jobs_col_i64(st, 10);
  job->started_at = jobs_col_i64(st, 11);
  job->finished_at = jobs_col_i64(st, 12);
  int oom = 0;
  job->root = jobs_col_text(st, 2, &oom);
  job->owner = jobs_col_text(st, 13, &oom);
  job->params = jobs_col_text(st, 14, &oom);
  job->result = jobs_col_text(st, 15, &oom);
  job->error = jobs_col_text(st, 16, &oom);
  job->commit_uuid = jobs_col_text(st, 17, &oom);
  job->has_commit_read_version = !jobs_col_null(st, 18);
  job->commit_read_version = (uint64_t)jobs_col_i64(st, 18);
  job->bytes_written = (uint64_t)jobs_col_i64(st, 19);
  job->bytes_reused = (uint64_t)jobs_col_i64(st, 20);
  job->lease_expires_at = jobs_col_i64(st, 21);
  job->instance = jobs_col_text(st, 22, &oom);
  if (oom) {
    bri_jobs_job_clear(job);
    return bri_error_set(err, BRI_ENOMEM, "%s: out of memory reading job", s->path);
  }
  return 0;
}

/* Loads job id, locking its row (row_lock) or not. */
static int get_job(bri_jobs_store *s, int64_t id, const char *row_lock, bri_jobs_job *job,
                   bri_error *err) {
  char sql[512];
  snprintf(sql, sizeof sql, "SELECT " JOBS_JOB_COLUMNS JOBS_JOB_FROM "WHERE j.id = ?%s", row_lock);
  jobs_stmt *st;
  memset(job, 0, sizeof *job);
  int rc = jobs_prepare(s, sql, &st, "reading a job", err);
  if (rc) return rc;
  jobs_bind_i64(st, 1, id);
  rc = jobs_step(s, st, "reading a job", err);
  if (rc == 1) rc = jobs_read_job(s, st, job, err);
  else if (rc == 0)
    rc = bri_error_set(err, BRI_ENOTFOUND, "%s: no job %lld", s->path, (long long)id);
  jobs_finalize(st);
  return rc;
}

int jobs_get_locked(bri_jobs_store *s, int64_t id, bri_jobs_job *job, bri_error *err) {
  /* inside a write transaction the read locks the row where the backend
   * has row locks (the transaction then updates it) */
  return get_job(s, id, s->drv->row_lock, job, err);
}

int jobs_peek_locked(bri_jobs_store *s, int64_t id, bri_jobs_job *job, bri_error *err) {
  return get_job(s, id, "", job, err);
}

int jobs_check_owned(bri_jobs_store *s, const bri_jobs_job *job, const char *what,
                     bri_error *err) {
  if (job->state != BRI_JOB_RUNNING)
    return bri_error_set(err, BRI_ELEASE,
                         "%s: cannot %s job %lld: it is %s, not running",
                         s->path, what, (long long)job->id, bri_job_state_name(job->state));
  if (!job->owner || strcmp(job->owner, s->session) != 0)
    return bri_error_set(err, BRI_ELEASE,
                         "%s: cannot %s job %lld: it is running under session %s (instance %s), "
                         "not this one (%s); an interrupted job is recovered, not finished",
                         s->path, what, (long long)job->id, job->owner ? job->owner : "?",
                         job->instance ? job->instance : "?", s->session);
  /* ours, but its lease ran out: recovery (any instance's) may be taking it
   * over, and it alone ends it now */
  int64_t over = jobs_now_locked(s) - job->lease_expires_at;
  if (over >= 0)
    return bri_error_set(err, BRI_ELEASE,
                         "%s: cannot %s job %lld: its lease ran out %lld ms ago; an interrupted job is "
                         "recovered, not finished",
                         s->path, what, (long long)job->id, (long long)over);
  return 0;
}

int jobs_check_lease(bri_jobs_store *s, const bri_jobs_job *job, const char *what, int64_t now,
                     bri_error *err) {
  int rc = jobs_check_owned(s, job, what, err);
  if (rc) return rc;
  int64_t left = job->lease_expires_at - now, margin = s->opt.lease_ttl_ms / 3;
  if (left < margin)
    return bri_error_set(err, BRI_ELEASE,
                         "%s: will not %s job %lld: its lease %s %lld ms%s (lease_ttl %lld ms; "
                         "it must have a third of it left); another instance may take the job over",
                         s->path, what, (long long)job->id, left < 0 ? "ended" : "ends in",
                         (long long)(left < 0 ? -left : left), left < 0 ? " ago" : "",
                         (long long)s->opt.lease_ttl_ms);
  return 0;
}

int jobs_job_begin(bri_jobs_store *s, int64_t job_id, const char *what, const char *step,
                   bri_jobs_job *job, bri_error *err) {
  memset(job, 0, sizeof *job);
  pthread_mutex_lock(&s->mu);
  int rc = jobs_begin(s, step, err);
  if (!rc) rc = jobs_get_locked(s, job_id, job, err);
  if (!rc && what) rc = jobs_check_owned(s, job, what, err);
  return rc;
}

int jobs_job_end(bri_jobs_store *s, int rc, int durable, const char *step, bri_jobs_job *job,
                 bri_error *err) {
  if (!rc) rc = jobs_commit(s, step, err);
  if (rc) jobs_rollback(s);
  pthread_mutex_unlock(&s->mu);
  if (!rc && durable) rc = jobs_make_durable(s, err);
  bri_jobs_job_clear(job);
  return rc;
}

int jobs_check_json(bri_jobs_store *s, const char *json, const char *what, char **canonical,
                    bri_error *err) {
  if (canonical) *canonical = NULL;
  if (!json) return 0;
  json_error_t je;
  json_t *v = json_loads(json, 0, &je);
  if (!v)
    return bri_error_set(err, BRI_EINVAL, "%s: %s is not valid JSON (line %d, column %d: %s)",
                         s->path, what, je.line, je.column, je.text);
  int obj = json_is_object(v);
  if (obj && canonical && !(*canonical = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS))) {
    json_decref(v);
    return bri_error_set(err, BRI_ENOMEM, "%s: out of memory", s->path);
  }
  json_decref(v);
  if (!obj) return bri_error_set(err, BRI_EINVAL, "%s: %s must be a JSON object", s->path, what);
  return 0;
}

int jobs_stats_add_locked(bri_jobs_store *s, int64_t table_id, bri_job_kind kind,
                          const char *counter, int64_t run_ms, uint64_t bytes_written,
                          uint64_t bytes_reused, bri_error *err) {
  /* counter is one of our column names (callers pass a literal), never
   * caller input: checked because it is pasted into the SQL text */
  static const char *const counters[] = {"succeeded", "failed", "cancelled", "retried",
                                         "crashed"};
  int known = 0;
  for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++)
    known |= strcmp(counter, counters[i]) == 0;
  if (!known)
    return bri_error_set(err, BRI_EINVAL, "%s: internal: unknown job counter '%s'", s->path,
                         counter);
  char sql[512];
  snprintf(sql, sizeof sql,
           "INSERT INTO job_stats (table_id, kind, %s, run_ms, bytes_written, bytes_reused) "
           "VALUES (?1, ?2, 1, ?3, ?4, ?5) "
           "ON CONFLICT (table_id, kind) DO UPDATE SET %s = job_stats.%s + 1, "
           "run_ms = job_stats.run_ms + ?3, bytes_written = job_stats.bytes_written + ?4, "
           "bytes_reused = job_stats.bytes_reused + ?5",
           counter, counter, counter);
  jobs_stmt *st;
  int rc = jobs_prepare(s, sql, &st, "updating job statistics", err);
  if (rc) return rc;
  jobs_bind_i64(st, 1, table_id);
  jobs_bind_text(st, 2, bri_job_kind_name(kind));
  jobs_bind_i64(st, 3, run_ms > 0 ? run_ms : 0);
  jobs_bind_i64(st, 4, (int64_t)(bytes_written > INT64_MAX ? INT64_MAX : bytes_written));
  jobs_bind_i64(st, 5, (int64_t)(bytes_reused > INT64_MAX ? INT64_MAX : bytes_reused));
  rc = jobs_step(s, st, "updating job statistics", err);
  jobs_finalize(st);
  return rc < 0 ? rc : 0;
}

int jobs_grow(void **v, size_t *cap, size_t len, size_t sz) {
  if (len < *cap) return 0;
  size_t nc = *cap ? 2 * *cap : 16;
  void *nv = realloc(*v, nc * sz);
  if (!nv) return BRI_ENOMEM;
  *v = nv;
  *cap = nc;
  return 0;
}

/* ---- opening ----------------------------------------------------------- */

static void make_session(char out[40]) {
  uint8_t r[8];
  size_t got = 0;
  while (got < sizeof r) {
    ssize_t n = getrandom(r + got, sizeof r - got, 0);
    if (n > 0) got += (size_t)n;
    else if (errno != EINTR) break;
  }
  if (got < sizeof r) { /* no entropy source: time and pid still differ per open */
    uint64_t t = (uint64_t)realtime_ms() ^ ((uint64_t)getpid() << 40);
    memcpy(r, &t, sizeof r);
  }
  snprintf(out, 40, "%d-%02x%02x%02x%02x%02x%02x%02x%02x", (int)getpid(), r[0], r[1], r[2], r[3],
           r[4], r[5], r[6], r[7]);
}

int bri_jobs_open(const char *path, const bri_jobs_options *opt, bri_jobs_store **out,
                  bri_error *err) {
  *out = NULL;
  if (!path || !*path) return bri_error_set(err, BRI_EINVAL, "job store: empty path");
  bri_jobs_store *s = calloc(1, sizeof *s);
  if (!s || !(s->path = strdup(path))) {
    free(s);
    return bri_error_set(err, BRI_ENOMEM, "%s: out of memory", path);
  }
  s->drv = jobs_driver_for(path);
  if (opt) s->opt = *opt;
  else bri_jobs_options_init(&s->opt);
  s->opt.password = NULL; /* the copy below is the store's */
  if (opt && opt->password && !(s->password = strdup(opt->password))) {
    free(s->path);
    free(s);
    return bri_error_set(err, BRI_ENOMEM, "%s: out of memory", path);
  }
  if (s->opt.max_attempts < 1) s->opt.max_attempts = 1;
  if (s->opt.retry_base_ms < 0) s->opt.retry_base_ms = 0;
  if (s->opt.retry_max_ms < s->opt.retry_base_ms) s->opt.retry_max_ms = s->opt.retry_base_ms;
  if (s->opt.lease_ttl_ms < 1000) s->opt.lease_ttl_ms = 1000;
  pthread_mutex_init(&s->mu, NULL);
  make_session(s->session);
  s->instance = strdup(s->opt.instance && *s->opt.instance ? s->opt.instance : s->session);
  s->opt.instance = NULL; /* the caller's string is not kept */
  if (!s->instance) {
    bri_jobs_close(s);
    return bri_error_set(err, BRI_ENOMEM, "%s: out of memory", path);
  }

  int rc = jobs_db_open(s, err);
  if (rc) goto fail;
  *out = s;
  return 0;

fail:
  bri_jobs_close(s);
  return rc;
}

void bri_jobs_close(bri_jobs_store *s) {
  if (!s) return;
  jobs_db_close(s);
  pthread_mutex_destroy(&s->mu);
  free(s->instance);
  if (s->password) explicit_bzero(s->password, strlen(s->password));
  free(s->password);
  free(s->path);
  free(s);
}

const char *bri_jobs_path(const bri_jobs_store *s) { return s->path; }

const char *bri_jobs_session(const bri_jobs_store *s) { return s->session; }

const char *bri_jobs_instance(const bri_jobs_store *s) { return s->instance; }

int bri_jobs_exclusive(const bri_jobs_store *s) { return s->drv->exclusive; }

int64_t bri_jobs_lease_ttl_ms(const bri_jobs_store *s) { return s->opt.lease_ttl_ms; }

const char *bri_jobs_backend(const bri_jobs_store *s) { return s->drv->name; }

int bri_jobs_health(bri_jobs_store *s, char *last_error, size_t cap) {
  pthread_mutex_lock(&s->mu);
  int up = s->drv->health(s, last_error, cap);
  pthread_mutex_unlock(&s->mu);
  return up;
}
