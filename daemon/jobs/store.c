/* store.c: opening the job store (lock file, SQLite connection, identity and
 * version checks, WAL, migrations) and the SQL helpers the other files of
 * daemon/jobs share (see store.h, internal.h).
 *
 * Migrations are the scripts of schema_sqlite.sql, built in: script N takes
 * user_version N - 1 to N and runs in one transaction together with the
 * user_version bump, so a crash mid-migration leaves the previous version
 * intact. A file whose user_version is newer than the last script is
 * refused untouched. */
#include "jobs/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "bri/util.h"

/* The schema: migration scripts, one per version (schema_sqlite.sql). */
#include "jobs/schema_sqlite.sql.h"

/* The tables a store of the current version must have. */
static const char *const REQUIRED_TABLES[] = {"tables", "jobs", "job_attempts", "job_outputs",
                                              "job_stats"};

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
}

/* ---- SQL helpers ------------------------------------------------------- */

static int map_sqlite(int rc) {
  switch (rc & 0xff) {
  case SQLITE_CORRUPT:
  case SQLITE_NOTADB: return BRI_ECORRUPT;
  case SQLITE_NOMEM: return BRI_ENOMEM;
  case SQLITE_CONSTRAINT: return BRI_EINVAL;
  default: return BRI_EIO;
  }
}

/* The first words of a statement, whitespace collapsed, for messages. */
static void abbreviate_sql(const char *sql, char *out, size_t cap) {
  size_t n = 0;
  int space = 0;
  for (const char *p = sql; p && *p && n + 4 < cap; p++) {
    if (*p == ' ' || *p == '\n' || *p == '\t') {
      space = n > 0;
      continue;
    }
    if (space) out[n++] = ' ';
    space = 0;
    out[n++] = *p;
  }
  if (sql && strlen(sql) > n && n + 4 <= cap) memcpy(out + n, "...", 3), n += 3;
  out[n] = '\0';
}

int jobs_sqlerr(bri_jobs_store *s, const char *sql, const char *step, bri_error *err) {
  int rc = sqlite3_extended_errcode(s->db);
  s->last_sqlite_rc = rc;
  char abbr[72];
  abbreviate_sql(sql, abbr, sizeof abbr);
  return bri_error_set(err, map_sqlite(rc), "%s: %s (%s): %s (SQLite error %d)", s->path, step,
                       abbr, sqlite3_errmsg(s->db), rc);
}

int jobs_prepare(bri_jobs_store *s, const char *sql, sqlite3_stmt **st, const char *step,
                 bri_error *err) {
  *st = NULL;
  if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK) {
    sqlite3_finalize(*st);
    *st = NULL;
    return jobs_sqlerr(s, sql, step, err);
  }
  return 0;
}

int jobs_step(bri_jobs_store *s, sqlite3_stmt *st, const char *step, bri_error *err) {
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) return 1;
  if (rc == SQLITE_DONE) return 0;
  return jobs_sqlerr(s, sqlite3_sql(st), step, err);
}

int jobs_exec(bri_jobs_store *s, const char *sql, const char *step, bri_error *err) {
  if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
    return jobs_sqlerr(s, sql, step, err);
  return 0;
}

static int bind_args(bri_jobs_store *s, sqlite3_stmt *st, const char *types, va_list ap,
                     const char *step, bri_error *err) {
  for (int i = 0; types[i]; i++) {
    int rc;
    if (types[i] == 'i') rc = sqlite3_bind_int64(st, i + 1, va_arg(ap, int64_t));
    else rc = sqlite3_bind_text(st, i + 1, va_arg(ap, const char *), -1, SQLITE_TRANSIENT);
    if (rc != SQLITE_OK) return jobs_sqlerr(s, sqlite3_sql(st), step, err);
  }
  return 0;
}

int jobs_run(bri_jobs_store *s, const char *step, bri_error *err, const char *sql,
             const char *types, ...) {
  sqlite3_stmt *st;
  int rc = jobs_prepare(s, sql, &st, step, err);
  if (rc) return rc;
  va_list ap;
  va_start(ap, types);
  rc = bind_args(s, st, types, ap, step, err);
  va_end(ap);
  while (!rc && (rc = jobs_step(s, st, step, err)) == 1) {
  }
  sqlite3_finalize(st);
  return rc;
}

int jobs_query(bri_jobs_store *s, sqlite3_stmt **st, const char *step, bri_error *err,
               const char *sql, const char *types, ...) {
  int rc = jobs_prepare(s, sql, st, step, err);
  if (rc) return rc;
  va_list ap;
  va_start(ap, types);
  rc = bind_args(s, *st, types, ap, step, err);
  va_end(ap);
  if (!rc) rc = jobs_step(s, *st, step, err);
  if (rc != 1) {
    sqlite3_finalize(*st);
    *st = NULL;
  }
  return rc;
}

int jobs_begin(bri_jobs_store *s, const char *step, bri_error *err) {
  return jobs_exec(s, "BEGIN IMMEDIATE", step, err);
}

int jobs_commit(bri_jobs_store *s, const char *step, bri_error *err) {
  int rc = jobs_exec(s, "COMMIT", step, err);
  if (rc) jobs_rollback(s);
  return rc;
}

void jobs_rollback(bri_jobs_store *s) {
  if (!sqlite3_get_autocommit(s->db)) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

int jobs_sync_full(bri_jobs_store *s, int full, bri_error *err) {
  return jobs_exec(s, full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL",
                   "setting the sync level", err);
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

char *jobs_col_text(sqlite3_stmt *st, int col, int *oom) {
  const unsigned char *t = sqlite3_column_text(st, col);
  if (!t) {
    if (sqlite3_column_type(st, col) != SQLITE_NULL) *oom = 1;
    return NULL;
  }
  char *c = strdup((const char *)t);
  if (!c) *oom = 1;
  return c;
}

static int64_t col_i64(sqlite3_stmt *st, int col) { return sqlite3_column_int64(st, col); }

int jobs_read_job(bri_jobs_store *s, sqlite3_stmt *st, bri_jobs_job *job, bri_error *err) {
  memset(job, 0, sizeof *job);
  job->id = col_i64(st, 0);
  job->table_id = col_i64(st, 1);
  const char *kind = (const char *)sqlite3_column_text(st, 3);
  if (jobs_kind_from_text(kind, &job->kind))
    return bri_error_set(err, BRI_ECORRUPT, "%s: job %lld has unknown kind '%s'", s->path,
                         (long long)job->id, kind ? kind : "(null)");
  const char *state = (const char *)sqlite3_column_text(st, 4);
  if (jobs_state_from_text(state, &job->state))
    return bri_error_set(err, BRI_ECORRUPT, "%s: job %lld has unknown state '%s'", s->path,
                         (long long)job->id, state ? state : "(null)");
  job->priority = sqlite3_column_int(st, 5);
  job->attempts = sqlite3_column_int(st, 6);
  job->max_attempts = sqlite3_column_int(st, 7);
  job->cancel_requested = sqlite3_column_int(st, 8);
  job->not_before = col_i64(st, 9);
  job->created_at = col_i64(st, 10);
  job->started_at = col_i64(st, 11);
  job->finished_at = col_i64(st, 12);
  int oom = 0;
  job->root = jobs_col_text(st, 2, &oom);
  job->owner = jobs_col_text(st, 13, &oom);
  job->params = jobs_col_text(st, 14, &oom);
  job->result = jobs_col_text(st, 15, &oom);
  job->error = jobs_col_text(st, 16, &oom);
  job->commit_uuid = jobs_col_text(st, 17, &oom);
  job->has_commit_read_version = sqlite3_column_type(st, 18) != SQLITE_NULL;
  job->commit_read_version = (uint64_t)col_i64(st, 18);
  job->bytes_written = (uint64_t)col_i64(st, 19);
  job->bytes_reused = (uint64_t)col_i64(st, 20);
  if (oom) {
    bri_jobs_job_clear(job);
    return bri_error_set(err, BRI_ENOMEM, "%s: out of memory reading job", s->path);
  }
  return 0;
}

int jobs_get_locked(bri_jobs_store *s, int64_t id, bri_jobs_job *job, bri_error *err) {
  static const char sql[] = "SELECT " JOBS_JOB_COLUMNS JOBS_JOB_FROM "WHERE j.id = ?";
  sqlite3_stmt *st;
  memset(job, 0, sizeof *job);
  int rc = jobs_prepare(s, sql, &st, "reading a job", err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, id);
  rc = jobs_step(s, st, "reading a job", err);
  if (rc == 1) rc = jobs_read_job(s, st, job, err);
  else if (rc == 0)
    rc = bri_error_set(err, BRI_ENOTFOUND, "%s: no job %lld", s->path, (long long)id);
  sqlite3_finalize(st);
  return rc;
}

int jobs_check_owned(bri_jobs_store *s, const bri_jobs_job *job, const char *what,
                     bri_error *err) {
  if (job->state != BRI_JOB_RUNNING)
    return bri_error_set(err, BRI_EINVAL, "%s: cannot %s job %lld: it is %s, not running",
                         s->path, what, (long long)job->id, bri_job_state_name(job->state));
  if (!job->owner || strcmp(job->owner, s->session) != 0)
    return bri_error_set(err, BRI_EINVAL,
                         "%s: cannot %s job %lld: it is running under session %s, not this "
                         "one (%s); an interrupted job is recovered, not finished",
                         s->path, what, (long long)job->id, job->owner ? job->owner : "?",
                         s->session);
  return 0;
}

int jobs_job_begin(bri_jobs_store *s, int64_t job_id, const char *what, int durable,
                   const char *step, bri_jobs_job *job, bri_error *err) {
  memset(job, 0, sizeof *job);
  pthread_mutex_lock(&s->mu);
  int rc = durable ? jobs_sync_full(s, 1, err) : 0;
  if (!rc) rc = jobs_begin(s, step, err);
  if (!rc) rc = jobs_get_locked(s, job_id, job, err);
  if (!rc && what) rc = jobs_check_owned(s, job, what, err);
  return rc;
}

int jobs_job_end(bri_jobs_store *s, int rc, int durable, const char *step, bri_jobs_job *job,
                 bri_error *err) {
  if (!rc) rc = jobs_commit(s, step, err);
  if (rc) jobs_rollback(s);
  if (durable) {
    bri_error e2;
    int rc2 = jobs_sync_full(s, 0, &e2);
    if (!rc && rc2) { /* the write is durable; the connection is not back to NORMAL */
      rc = rc2;
      if (err) *err = e2;
    }
  }
  pthread_mutex_unlock(&s->mu);
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
           "ON CONFLICT (table_id, kind) DO UPDATE SET %s = %s + 1, run_ms = run_ms + ?3, "
           "bytes_written = bytes_written + ?4, bytes_reused = bytes_reused + ?5",
           counter, counter, counter);
  sqlite3_stmt *st;
  int rc = jobs_prepare(s, sql, &st, "updating job statistics", err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, table_id);
  sqlite3_bind_text(st, 2, bri_job_kind_name(kind), -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 3, run_ms > 0 ? run_ms : 0);
  sqlite3_bind_int64(st, 4, (int64_t)(bytes_written > INT64_MAX ? INT64_MAX : bytes_written));
  sqlite3_bind_int64(st, 5, (int64_t)(bytes_reused > INT64_MAX ? INT64_MAX : bytes_reused));
  rc = jobs_step(s, st, "updating job statistics", err);
  sqlite3_finalize(st);
  return rc < 0 ? rc : 0;
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

/* Runs a single-value PRAGMA or query returning an integer. */
static int query_int(bri_jobs_store *s, const char *sql, const char *step, int64_t *out,
                     bri_error *err) {
  sqlite3_stmt *st;
  int rc = jobs_prepare(s, sql, &st, step, err);
  if (rc) return rc;
  rc = jobs_step(s, st, step, err);
  if (rc == 1) {
    *out = sqlite3_column_int64(st, 0);
    rc = 0;
  } else if (rc == 0) {
    rc = bri_error_set(err, BRI_EIO, "%s: %s (%s): no result", s->path, step, sql);
  }
  sqlite3_finalize(st);
  return rc;
}

static int take_lock(bri_jobs_store *s, bri_error *err) {
  char *lp = bri_strdupf("%s.lock", s->path);
  if (!lp) return bri_error_set(err, BRI_ENOMEM, "%s: out of memory", s->path);
  int rc = 0;
  s->lock_fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC, 0600); /* storage: not a table file */
  if (s->lock_fd < 0) {
    rc = bri_error_errno(err, "creating the job store lock file", lp);
  } else if (flock(s->lock_fd, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    rc = bri_error_set(err, BRI_EIO,
                       "%s: the job store is in use by another process (lock file %s: %s); "
                       "one brid per job store",
                       s->path, lp, strerror(e));
  }
  free(lp);
  return rc;
}

/* Rewrites a corruption error met while reading the header or the schema
 * into what the user must know: not SQLite at all, or damaged SQLite. */
static int header_failure(bri_jobs_store *s, const char *what, bri_error *err) {
  const char *why = sqlite3_errstr(s->last_sqlite_rc);
  if ((s->last_sqlite_rc & 0xff) == SQLITE_NOTADB)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: not a job store: SQLite says \"%s\" %s (expected a SQLite "
                         "database written by brid)",
                         s->path, why, what);
  return bri_error_set(err, BRI_ECORRUPT,
                       "%s: damaged job store: SQLite says \"%s\" %s (restore a backup or move "
                       "the file away to start with an empty store)",
                       s->path, why, what);
}

/* Identity and version checks before anything is written. */
static int check_identity(bri_jobs_store *s, int64_t *user_version, bri_error *err) {
  int64_t app, uv, n_objects;
  int rc = query_int(s, "PRAGMA application_id", "reading the database header", &app, err);
  if (rc == BRI_ECORRUPT) return header_failure(s, "reading the header", err);
  if (rc) return rc;
  rc = query_int(s, "PRAGMA user_version", "reading the schema version", &uv, err);
  if (rc == BRI_ECORRUPT) return header_failure(s, "reading the header", err);
  if (rc) return rc;
  rc = query_int(s, "SELECT count(*) FROM sqlite_master", "listing the schema", &n_objects, err);
  if (rc == BRI_ECORRUPT) return header_failure(s, "reading the schema", err);
  if (rc) return rc;
  if (app != 0 && app != BRI_JOBS_APPLICATION_ID)
    return bri_error_set(err, BRI_EINVAL,
                         "%s: not a brid job store: SQLite application_id is 0x%08llx, "
                         "expected 0x%08x (\"brid\")",
                         s->path, (unsigned long long)(uint32_t)app, BRI_JOBS_APPLICATION_ID);
  if (app == 0 && n_objects > 0)
    return bri_error_set(err, BRI_EINVAL,
                         "%s: not a brid job store: a SQLite database with %lld schema objects "
                         "but no brid application_id",
                         s->path, (long long)n_objects);
  if (uv > BRI_JOBS_SCHEMA_VERSION)
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "%s: job store schema version %lld is newer than this brid supports "
                         "(%d): it was written by a newer brid; run that version or move the "
                         "file away",
                         s->path, (long long)uv, BRI_JOBS_SCHEMA_VERSION);
  if (uv < 0)
    return bri_error_set(err, BRI_ECORRUPT, "%s: job store schema version %lld is negative",
                         s->path, (long long)uv);
  if (app == BRI_JOBS_APPLICATION_ID && uv == 0)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: brid job store with schema version 0 (an interrupted creation "
                         "would have left no application_id)",
                         s->path);
  *user_version = uv;
  return 0;
}

static int set_pragmas(bri_jobs_store *s, bri_error *err) {
  sqlite3_stmt *st;
  int rc = jobs_prepare(s, "PRAGMA journal_mode = WAL", &st, "enabling WAL mode", err);
  if (rc) return rc;
  rc = jobs_step(s, st, "enabling WAL mode", err);
  if (rc == 1) {
    const char *mode = (const char *)sqlite3_column_text(st, 0);
    rc = mode && strcmp(mode, "wal") == 0
             ? 0
             : bri_error_set(err, BRI_EIO,
                             "%s: enabling WAL mode: SQLite kept journal mode '%s' (WAL needs "
                             "shared memory and a local filesystem)",
                             s->path, mode ? mode : "?");
  } else if (rc == 0) {
    rc = bri_error_set(err, BRI_EIO, "%s: enabling WAL mode: no result", s->path);
  }
  sqlite3_finalize(st);
  if (rc) return rc;
  if ((rc = jobs_exec(s, "PRAGMA synchronous = NORMAL", "setting the sync level", err))) return rc;
  return jobs_exec(s, "PRAGMA foreign_keys = ON", "enabling foreign keys", err);
}

static int quick_check(bri_jobs_store *s, bri_error *err) {
  sqlite3_stmt *st;
  int rc = jobs_prepare(s, "PRAGMA quick_check(1)", &st, "checking the database", err);
  if (rc) return rc;
  rc = jobs_step(s, st, "checking the database", err);
  if (rc == 1) {
    const char *r = (const char *)sqlite3_column_text(st, 0);
    if (r && strcmp(r, "ok") == 0) {
      rc = 0;
    } else {
      char report[400];
      snprintf(report, sizeof report, "%s", r ? r : "?");
      for (char *p = report; *p; p++)
        if (*p == '\n') *p = ' ';
      rc = bri_error_set(err, BRI_ECORRUPT,
                         "%s: damaged job store: SQLite quick_check reports: %s (restore a "
                         "backup or move the file away to start with an empty store)",
                         s->path, report);
    }
  } else if (rc == 0) {
    rc = bri_error_set(err, BRI_EIO, "%s: checking the database: no result", s->path);
  } else if (rc == BRI_ECORRUPT) {
    rc = header_failure(s, "checking the database", err);
  }
  sqlite3_finalize(st);
  if (rc) return rc;
  for (size_t i = 0; i < sizeof REQUIRED_TABLES / sizeof REQUIRED_TABLES[0]; i++) {
    rc = jobs_prepare(s, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", &st,
                      "checking the schema", err);
    if (rc) return rc;
    sqlite3_bind_text(st, 1, REQUIRED_TABLES[i], -1, SQLITE_STATIC);
    rc = jobs_step(s, st, "checking the schema", err);
    sqlite3_finalize(st);
    if (rc < 0) return rc;
    if (rc == 0)
      return bri_error_set(err, BRI_ECORRUPT, "%s: damaged job store: table '%s' is missing",
                           s->path, REQUIRED_TABLES[i]);
  }
  return 0;
}

/* The script of version v in SCHEMA_SQLITE, from its "-- version v:" line
 * to the next such line (malloc'd); NULL when there is none. */
static char *migration_script(int64_t v) {
  char mark[40];
  snprintf(mark, sizeof mark, "\n-- version %lld:", (long long)v);
  const char *a = strstr(SCHEMA_SQLITE, mark);
  if (!a) return NULL;
  a++;
  const char *b = strstr(a, "\n-- version ");
  return strndup(a, b ? (size_t)(b - a) : strlen(a));
}

/* Fails when a foreign key of the store points nowhere (a migration that
 * rebuilt a table must leave every reference intact). */
static int check_foreign_keys(bri_jobs_store *s, const char *step, bri_error *err) {
  sqlite3_stmt *st;
  int rc = jobs_prepare(s, "PRAGMA foreign_key_check", &st, step, err);
  if (rc) return rc;
  rc = jobs_step(s, st, step, err);
  if (rc == 1)
    rc = bri_error_set(err, BRI_ECORRUPT, "%s: %s: a row of table %s references a missing row",
                       s->path, step, (const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  return rc;
}

/* Runs the scripts from version from + 1 to BRI_JOBS_SCHEMA_VERSION, each
 * in a transaction of its own with foreign keys off (a script may rebuild
 * a table others reference) and checked before the commit. */
static int migrate(bri_jobs_store *s, int64_t from, bri_error *err) {
  char *extra = migration_script(BRI_JOBS_SCHEMA_VERSION + 1);
  free(extra);
  if (extra)
    return bri_error_set(err, BRI_EINVAL,
                         "%s: internal: schema_sqlite.sql goes beyond version %d "
                         "(BRI_JOBS_SCHEMA_VERSION)",
                         s->path, BRI_JOBS_SCHEMA_VERSION);
  if (from >= BRI_JOBS_SCHEMA_VERSION) return 0;
  int rc = jobs_exec(s, "PRAGMA foreign_keys = OFF", "preparing the migration", err);
  for (int64_t v = from + 1; !rc && v <= BRI_JOBS_SCHEMA_VERSION; v++) {
    char step[64], bump[64];
    snprintf(step, sizeof step, "migrating the schema to version %lld", (long long)v);
    snprintf(bump, sizeof bump, "PRAGMA user_version = %lld", (long long)v);
    char *script = migration_script(v);
    if (!script) {
      rc = bri_error_set(err, BRI_EINVAL, "%s: %s: internal: schema_sqlite.sql has no such version",
                         s->path, step);
      break;
    }
    rc = jobs_begin(s, step, err);
    if (!rc) rc = jobs_exec(s, script, step, err);
    if (!rc) rc = check_foreign_keys(s, step, err);
    if (!rc) rc = jobs_exec(s, bump, step, err);
    if (!rc) rc = jobs_commit(s, step, err);
    if (rc) jobs_rollback(s);
    free(script);
  }
  bri_error e2;
  int rc2 = jobs_exec(s, "PRAGMA foreign_keys = ON", "enabling foreign keys", rc ? &e2 : err);
  return rc ? rc : rc2;
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
  s->lock_fd = -1;
  if (opt) s->opt = *opt;
  else bri_jobs_options_init(&s->opt);
  if (s->opt.max_attempts < 1) s->opt.max_attempts = 1;
  if (s->opt.retry_base_ms < 0) s->opt.retry_base_ms = 0;
  if (s->opt.retry_max_ms < s->opt.retry_base_ms) s->opt.retry_max_ms = s->opt.retry_base_ms;
  pthread_mutex_init(&s->mu, NULL);
  make_session(s->session);

  int rc = take_lock(s, err);
  if (rc) goto fail;
  /* FULLMUTEX although our own mutex serializes every call: belt and braces
   * for the read-only sqlite3_* calls made while reading rows. */
  int orc = sqlite3_open_v2(path, &s->db,
                            SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                            NULL);
  if (orc != SQLITE_OK) {
    rc = bri_error_set(err, map_sqlite(orc), "%s: opening the job store: %s", path,
                       s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(orc));
    goto fail;
  }
  sqlite3_extended_result_codes(s->db, 1);
  sqlite3_busy_timeout(s->db, s->opt.busy_timeout_ms > 0 ? s->opt.busy_timeout_ms : 0);

  int64_t uv = 0;
  if ((rc = check_identity(s, &uv, err))) goto fail;
  if ((rc = set_pragmas(s, err))) goto fail;
  if (uv > 0 && (rc = quick_check(s, err))) goto fail;
  if ((rc = migrate(s, uv, err))) goto fail;
  *out = s;
  return 0;

fail:
  bri_jobs_close(s);
  return rc;
}

void bri_jobs_close(bri_jobs_store *s) {
  if (!s) return;
  if (s->db) sqlite3_close_v2(s->db);
  if (s->lock_fd >= 0) close(s->lock_fd); /* releases the flock */
  pthread_mutex_destroy(&s->mu);
  free(s->path);
  free(s);
}

const char *bri_jobs_path(const bri_jobs_store *s) { return s->path; }

const char *bri_jobs_session(const bri_jobs_store *s) { return s->session; }
