/* test_jobs.c: the job store on both backends: SQLite on real database
 * files in a temp dir, and PostgreSQL on a fresh database of the test
 * server (BRI_TEST_PG, scripts/pg-server.sh) per test. The cases that only
 * use the store's API and standard SQL run on both ("core" and "pg"); the
 * SQLite-only ones (PRAGMAs, file damage, the flock, the trace of sync
 * levels) stay in "core"; "pg" adds its own (version and identity refusals,
 * inline passwords, two instances claiming, reconnection). SQLite:
 * schema creation, reopen and migration refusals (future version, foreign
 * or corrupt files, a second process), the queue's rules (dedupe, claim
 * order, one running job per table, paused tables, retry backoff and max
 * attempts, supersession, cancellation), the journal's durability (FULL
 * sync around its writes, entries surviving close/reopen), recovery after a
 * real crash (a forked child SIGKILLs itself mid-job), concurrent claims
 * from many threads, history queries and pruning, and error messages that
 * name the database file and the failing step. A fake clock makes every
 * time assertion exact. */
#include <errno.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jobs/internal.h"
#include "jobs/jobs.h"
#include "jobs/schema_sqlite.sql.h"
#include "testutil.h"
#include "util/fsutil.h"

#define T0 1700000000000LL

static int64_t fake_now = T0;
static int64_t fake_clock(void *user) {
  (void)user;
  return fake_now;
}

static char *tmp;    /* per-test temp dir */
static char *dbpath; /* tmp/jobs.db */

static char *pg_db; /* the PostgreSQL case's database, NULL on SQLite */

static void setup(void) {
  tmp = bri_tmpdir();
  dbpath = bri_path_join(tmp, "jobs.db");
  fake_now = T0;
}

/* A connection to the test server's maintenance database. */
static PGconn *pg_admin(void) {
  PGconn *c = PQconnectdb(getenv("BRI_TEST_PG"));
  ck_assert_msg(PQstatus(c) == CONNECTION_OK, "BRI_TEST_PG: %s", PQerrorMessage(c));
  return c;
}

static void pg_admin_exec(const char *sql) {
  PGconn *c = pg_admin();
  PGresult *r = PQexec(c, sql);
  ck_assert_msg(PQresultStatus(r) == PGRES_COMMAND_OK, "%s: %s", sql, PQerrorMessage(c));
  PQclear(r);
  PQfinish(c);
}

/* A fresh database per case; dbpath is its URI. */
static void setup_pg(void) {
  setup();
  free(dbpath);
  static int n;
  struct timeval tv;
  gettimeofday(&tv, NULL);
  pg_db = bri_strdupf("brid_test_%d_%d_%ld", (int)getpid(), n++, (long)tv.tv_usec);
  char *sql = bri_strdupf("CREATE DATABASE %s", pg_db);
  pg_admin_exec(sql);
  free(sql);
  dbpath = bri_strdupf("%s&dbname=%s", getenv("BRI_TEST_PG"), pg_db);
}

static void teardown(void) {
  if (pg_db) {
    char *sql = bri_strdupf("DROP DATABASE IF EXISTS %s WITH (FORCE)", pg_db);
    pg_admin_exec(sql);
    free(sql);
    free(pg_db);
    pg_db = NULL;
  }
  bri_rmtree(tmp);
  free(tmp);
  free(dbpath);
}

static void test_options(bri_jobs_options *o) {
  bri_jobs_options_init(o);
  o->clock_ms = fake_clock;
  o->retry_base_ms = 1000;
  o->retry_max_ms = 5000;
  o->max_attempts = 4;
  /* a second's lease: a session closed (the tests' dead daemon) has lost
   * its jobs once the clock moved on by that much, on any backend */
  o->lease_ttl_ms = 1000;
}

static bri_jobs_store *open_with(const bri_jobs_options *o) {
  bri_jobs_store *s;
  bri_error err = {0};
  int rc = bri_jobs_open(dbpath, o, &s, &err);
  ck_assert_msg(rc == 0, "open: %s", err.msg);
  return s;
}

static bri_jobs_store *open_store(void) {
  bri_jobs_options o;
  test_options(&o);
  return open_with(&o);
}

/* A store whose leases outlast the seconds a test moves its clock on by:
 * its jobs are finished by a worker that still holds them (a lease that
 * ran out is recovery's to end). */
static bri_jobs_store *open_store_held(void) {
  bri_jobs_options o;
  test_options(&o);
  o.lease_ttl_ms = 60000;
  return open_with(&o);
}

static int64_t add_table(bri_jobs_store *s, const char *root) {
  int64_t id;
  bri_error err;
  ck_assert_msg(bri_jobs_table_upsert(s, root, &id, NULL, &err) == 0, "%s", err.msg);
  return id;
}

static int64_t enqueue(bri_jobs_store *s, int64_t table, bri_job_kind kind, int prio,
                       int64_t not_before) {
  int64_t id;
  int dup = -1;
  bri_error err;
  ck_assert_msg(bri_jobs_enqueue(s, table, kind, prio, NULL, not_before, &id, &dup, &err) == 0,
                "%s", err.msg);
  ck_assert_int_eq(dup, 0);
  return id;
}

/* Claims and returns the job id, or 0 when nothing is claimable. */
static int64_t claim(bri_jobs_store *s) {
  bri_jobs_job j;
  int got;
  bri_error err;
  ck_assert_msg(bri_jobs_claim_next(s, &j, &got, &err) == 0, "%s", err.msg);
  int64_t id = got ? j.id : 0;
  if (got) {
    ck_assert_int_eq(j.state, BRI_JOB_RUNNING);
    ck_assert_str_eq(j.owner, bri_jobs_session(s));
    ck_assert_int_eq(j.started_at, fake_now);
  } else {
    ck_assert_int_eq(j.id, 0);
  }
  bri_jobs_job_clear(&j);
  return id;
}

static bri_jobs_job get_job(bri_jobs_store *s, int64_t id) {
  bri_jobs_job j;
  bri_error err;
  ck_assert_msg(bri_jobs_get(s, id, &j, &err) == 0, "%s", err.msg);
  return j;
}

static void finish(bri_jobs_store *s, int64_t id, bri_job_state st, const char *error) {
  bri_jobs_outcome o = {.state = st, .error = error};
  bri_error err;
  ck_assert_msg(bri_jobs_finish(s, id, &o, &err) == 0, "%s", err.msg);
}

/* An integer from a raw connection (next to the store's own). */
static int64_t raw_int(const char *sql) {
  if (pg_db) {
    PGconn *c = PQconnectdb(dbpath);
    ck_assert_msg(PQstatus(c) == CONNECTION_OK, "%s", PQerrorMessage(c));
    PGresult *r = PQexec(c, sql);
    ck_assert_msg(PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1, "%s: %s", sql,
                  PQerrorMessage(c));
    int64_t v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    PQfinish(c);
    return v;
  }
  sqlite3 *db;
  ck_assert_int_eq(sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
  sqlite3_stmt *st;
  ck_assert_msg(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK, "%s", sqlite3_errmsg(db));
  ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
  int64_t v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

/* Runs sql on a raw connection: 0 (SQLITE_OK) or nonzero with the message. */
static int raw_exec(const char *sql, char *errbuf, size_t cap) {
  if (pg_db) {
    PGconn *c = PQconnectdb(dbpath);
    ck_assert_msg(PQstatus(c) == CONNECTION_OK, "%s", PQerrorMessage(c));
    PGresult *r = PQexec(c, sql);
    int rc = PQresultStatus(r) == PGRES_COMMAND_OK ? 0 : 1;
    if (errbuf) snprintf(errbuf, cap, "%s", rc ? PQerrorMessage(c) : "");
    PQclear(r);
    PQfinish(c);
    return rc;
  }
  sqlite3 *db;
  ck_assert_int_eq(sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL),
                   SQLITE_OK);
  char *msg = NULL;
  int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
  if (errbuf) snprintf(errbuf, cap, "%s", msg ? msg : "");
  sqlite3_free(msg);
  sqlite3_close(db);
  return rc;
}

/* How the backend words a unique index's refusal. */
static const char *unique_failed(void) {
  return pg_db ? "violates unique constraint" : "UNIQUE constraint failed";
}

static int file_exists(const char *p) { return access(p, F_OK) == 0; }

/* ---- opening ----------------------------------------------------------- */

START_TEST(schema_created_and_reopened) {
  bri_jobs_store *s = open_store();
  char *session1 = strdup(bri_jobs_session(s));
  int64_t t = add_table(s, "/data/a.lance");
  int64_t j = enqueue(s, t, BRI_JOB_COMPACT, 3, 0);
  ck_assert_int_eq(raw_int("PRAGMA user_version"), BRI_JOBS_SCHEMA_VERSION);
  ck_assert_int_eq(raw_int("PRAGMA application_id"), BRI_JOBS_APPLICATION_ID);
  ck_assert_int_eq(raw_int("SELECT journal_mode = 'wal' FROM pragma_journal_mode"), 1);
  ck_assert_int_eq(raw_int("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN "
                           "('jobs_one_running_per_table', 'jobs_one_queued_per_request')"),
                   2);
  /* the connection's settings */
  sqlite3_stmt *st;
  ck_assert_int_eq(sqlite3_prepare_v2(jobs_sqlite_db(s), "PRAGMA foreign_keys", -1, &st, NULL), SQLITE_OK);
  ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
  ck_assert_int_eq(sqlite3_column_int(st, 0), 1);
  sqlite3_finalize(st);
  ck_assert_int_eq(sqlite3_prepare_v2(jobs_sqlite_db(s), "PRAGMA synchronous", -1, &st, NULL), SQLITE_OK);
  ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
  ck_assert_int_eq(sqlite3_column_int(st, 0), 1); /* NORMAL */
  sqlite3_finalize(st);
  bri_jobs_close(s);

  s = open_store();
  ck_assert_str_ne(bri_jobs_session(s), session1);
  bri_jobs_table tb;
  bri_error err;
  ck_assert_int_eq(bri_jobs_table_find(s, "/data/a.lance", &tb, &err), 0);
  ck_assert_int_eq(tb.id, t);
  ck_assert_uint_eq(tb.queued_jobs, 1);
  bri_jobs_table_clear(&tb);
  bri_jobs_job job = get_job(s, j);
  ck_assert_int_eq(job.state, BRI_JOB_QUEUED);
  ck_assert_int_eq(job.kind, BRI_JOB_COMPACT);
  ck_assert_int_eq(job.priority, 3);
  ck_assert_int_eq(job.created_at, T0);
  ck_assert_int_eq(job.not_before, T0);
  ck_assert_int_eq(job.max_attempts, 4);
  ck_assert_str_eq(job.root, "/data/a.lance");
  bri_jobs_job_clear(&job);
  bri_jobs_close(s);
  free(session1);
}
END_TEST

START_TEST(future_schema_version_refused) {
  bri_jobs_close(open_store());
  const int future = BRI_JOBS_SCHEMA_VERSION + 1;
  char *bump = bri_strdupf("PRAGMA user_version = %d", future);
  ck_assert_int_eq(raw_exec(bump, NULL, 0), SQLITE_OK);
  free(bump);
  bri_jobs_store *s = NULL;
  bri_error err = {0};
  ck_assert_int_eq(bri_jobs_open(dbpath, NULL, &s, &err), BRI_EUNSUPPORTED);
  ck_assert_ptr_null(s);
  char *want = bri_strdupf("%s: job store schema version %d is newer than this brid supports (%d)",
                           dbpath, future, BRI_JOBS_SCHEMA_VERSION);
  ck_assert_msg(strstr(err.msg, want) == err.msg, "got: %s", err.msg);
  free(want);
  ck_assert_int_eq(raw_int("PRAGMA user_version"), future); /* untouched */
}
END_TEST

/* A version 1 store (one queued job per kind) with a queued job is
 * migrated: the job stays, identical requests still merge into it, and a
 * request with other params becomes a job of its own. */
/* Builds the schema as version v's scripts leave it (the scripts of
 * schema_sqlite.sql up to v, never edited once released). */
static void raw_schema_upto(int v) {
  char mark[32];
  snprintf(mark, sizeof mark, "\n-- version %d:", v + 1);
  const char *next = strstr(SCHEMA_SQLITE, mark);
  ck_assert_ptr_nonnull(next);
  char *script = strndup(SCHEMA_SQLITE, (size_t)(next - SCHEMA_SQLITE)), msg[256];
  ck_assert_msg(raw_exec(script, msg, sizeof msg) == SQLITE_OK, "%s", msg);
  free(script);
}

START_TEST(schema_v1_migrated) {
  /* what version 1 wrote: its script and a queued job */
  raw_schema_upto(1);
  char msg[256];
  ck_assert_msg(raw_exec("PRAGMA user_version = 1;"
                         "INSERT INTO tables (id, root, created_at) VALUES (1, '/t/a', 1);"
                         "INSERT INTO jobs (id, table_id, kind, state, max_attempts, not_before, created_at, params) "
                         "  VALUES (1, 1, 'cleanup', 'queued', 5, 1, 1, '{\"trigger\":\"schedule\"}')",
                         msg, sizeof msg) == SQLITE_OK,
                "%s", msg);
  int64_t t = 1, j = 1;
  int dup = -1;
  bri_error err;
  bri_jobs_store *s;
  s = open_store();
  ck_assert_int_eq(raw_int("PRAGMA user_version"), BRI_JOBS_SCHEMA_VERSION);
  ck_assert_int_eq(raw_int("SELECT count(*) FROM sqlite_master WHERE name = 'jobs_one_queued_per_kind'"), 0);
  int64_t k = 0;
  ck_assert_int_eq(bri_jobs_enqueue(s, t, BRI_JOB_CLEANUP, 10, "{\"trigger\":\"api\"}", 0, &k, &dup, &err), 0);
  ck_assert_int_eq(dup, 1);
  ck_assert_int_eq(k, j);
  ck_assert_int_eq(bri_jobs_enqueue(s, t, BRI_JOB_CLEANUP, 10, "{\"dry_run\":true,\"trigger\":\"api\"}", 0, &k,
                                    &dup, &err),
                   0);
  ck_assert_int_eq(dup, 0);
  ck_assert_int_ne(k, j);
  bri_jobs_close(s);
}
END_TEST

/* A version 2 store, as brid wrote it before the kinds left the schema
 * (its scripts are the first two of schema_sqlite.sql, never edited): a
 * CHECK pinned the four kinds. Migrated to version 3, its rows, their
 * references and the id counter (ids 3 to 7 pruned) are intact, the
 * queue's dedup index holds, and the schema takes any kind's name. */
START_TEST(schema_v2_migrated) {
  raw_schema_upto(2);
  char msg[256];
  ck_assert_int_eq(raw_exec("PRAGMA user_version = 2;"
                            "INSERT INTO tables (id, root, created_at) VALUES (1, '/t/a', 1);"
                            "INSERT INTO jobs (id, table_id, kind, state, attempts, max_attempts, "
                            "  not_before, created_at, started_at, finished_at, result) "
                            "  VALUES (1, 1, 'compact', 'succeeded', 1, 5, 1, 1, 2, 3, '{\"version\":4}');"
                            "INSERT INTO job_attempts VALUES (1, 1, 'old-session', 2, 3, 'succeeded', NULL);"
                            "INSERT INTO jobs (id, table_id, kind, state, max_attempts, not_before, "
                            "  created_at, params) VALUES (2, 1, 'cleanup', 'queued', 5, 1, 1, "
                            "  '{\"trigger\":\"schedule\"}');"
                            "UPDATE sqlite_sequence SET seq = 7 WHERE name = 'jobs';",
                            msg, sizeof msg),
                   SQLITE_OK);
  ck_assert_int_ne(raw_exec("INSERT INTO jobs (table_id, kind, state, max_attempts, not_before, "
                            "created_at) VALUES (1, 'vacuum', 'queued', 5, 1, 1)",
                            msg, sizeof msg),
                   SQLITE_OK);
  ck_assert_msg(strstr(msg, "CHECK constraint failed"), "got: %s", msg);

  bri_jobs_store *s = open_store();
  ck_assert_int_eq(raw_int("PRAGMA user_version"), BRI_JOBS_SCHEMA_VERSION);
  ck_assert_int_eq(raw_int("SELECT count(*) FROM sqlite_master WHERE name = 'jobs_v3'"), 0);
  ck_assert_int_eq(raw_int("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'jobs' "
                           "AND name LIKE 'jobs_%'"),
                   6); /* version 5 added jobs_due */
  bri_jobs_job j = get_job(s, 1);
  ck_assert_int_eq(j.kind, BRI_JOB_COMPACT);
  ck_assert_int_eq(j.state, BRI_JOB_SUCCEEDED);
  ck_assert_int_eq(j.finished_at, 3);
  ck_assert_str_eq(j.result, "{\"version\":4}");
  bri_jobs_job_clear(&j);
  int64_t id = 0;
  int dup = -1;
  bri_error err;
  ck_assert_int_eq(bri_jobs_enqueue(s, 1, BRI_JOB_CLEANUP, 10, "{\"trigger\":\"api\"}", 0, &id, &dup, &err), 0);
  ck_assert_int_eq(dup, 1);
  ck_assert_int_eq(id, 2);
  ck_assert_int_eq(enqueue(s, 1, BRI_JOB_VERIFY, 0, 0), 8); /* after the pruned 7 */
  bri_jobs_close(s);
  ck_assert_msg(raw_exec("INSERT INTO jobs (table_id, kind, state, max_attempts, not_before, created_at, "
                         "finished_at) VALUES (1, 'vacuum', 'cancelled', 5, 1, 1, 2)",
                         msg, sizeof msg) == SQLITE_OK,
                "%s", msg);
  ck_assert_int_eq(raw_exec("PRAGMA foreign_keys = ON; DELETE FROM tables WHERE id = 1", msg, sizeof msg),
                   SQLITE_OK);
  ck_assert_int_eq(raw_int("SELECT count(*) FROM jobs"), 0);
  ck_assert_int_eq(raw_int("SELECT count(*) FROM job_attempts"), 0); /* still references jobs */
}
END_TEST

/* A kind this brid does not know (queued by a newer brid sharing the
 * store, which schema version 3 allows) is never claimed, nor is a timer
 * armed for it; reading it says what it is. */
START_TEST(unknown_kinds_wait) {
  bri_jobs_store *s = open_store();
  int64_t t = add_table(s, "/t/a");
  char msg[256];
  ck_assert_msg(raw_exec("INSERT INTO jobs (id, table_id, kind, state, priority, max_attempts, not_before, "
                         "created_at, params) VALUES (50, 1, 'vacuum', 'queued', 99, 5, 0, 0, NULL), "
                         "(51, 1, 'vacuum', 'queued', 99, 5, 1700000009000, 0, '{\"full\":true}')",
                         msg, sizeof msg) == SQLITE_OK,
                "%s", msg);
  int64_t j = enqueue(s, t, BRI_JOB_VERIFY, 0, 0);
  ck_assert_int_eq(claim(s), j); /* the priority 99 job is not taken */
  ck_assert_int_eq(claim(s), 0);
  int64_t when = 0;
  int has = 1;
  bri_error err;
  ck_assert_int_eq(bri_jobs_next_due(s, T0, &when, &has, &err), 0);
  ck_assert_int_eq(has, 0);
  bri_jobs_job job;
  ck_assert_int_eq(bri_jobs_get(s, 50, &job, &err), BRI_EUNSUPPORTED);
  ck_assert_msg(strstr(err.msg, "job 50 is of kind 'vacuum', which this brid does not know "
                                "(compact, cleanup, materialize or verify)"),
                "got: %s", err.msg);
  bri_jobs_close(s);
}
END_TEST

START_TEST(foreign_sqlite_files_refused) {
  ck_assert_int_eq(raw_exec("CREATE TABLE notes (x)", NULL, 0), SQLITE_OK);
  bri_jobs_store *s = NULL;
  bri_error err = {0};
  ck_assert_int_eq(bri_jobs_open(dbpath, NULL, &s, &err), BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "not a brid job store: a SQLite database with 1 schema objects"),
                "got: %s", err.msg);
  ck_assert_msg(strncmp(err.msg, dbpath, strlen(dbpath)) == 0, "got: %s", err.msg);
  ck_assert_int_eq(raw_exec("PRAGMA application_id = 42", NULL, 0), SQLITE_OK);
  ck_assert_int_eq(bri_jobs_open(dbpath, NULL, &s, &err), BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "application_id is 0x0000002a, expected 0x62726964"), "got: %s",
                err.msg);
  ck_assert_int_eq(raw_int("SELECT count(*) FROM sqlite_master"), 1);
}
END_TEST

START_TEST(garbage_file_is_corrupt) {
  char junk[8192];
  for (size_t i = 0; i < sizeof junk; i++) junk[i] = (char)(i * 7 + 3);
  bri_write_bytes(dbpath, junk, sizeof junk);
  bri_jobs_store *s = NULL;
  bri_error err = {0};
  ck_assert_int_eq(bri_jobs_open(dbpath, NULL, &s, &err), BRI_ECORRUPT);
  ck_assert_ptr_null(s);
  char *want = bri_strdupf("%s: not a job store: SQLite says \"file is not a database\" reading "
                           "the header (expected a SQLite database written by brid)",
                           dbpath);
  ck_assert_str_eq(err.msg, want);
  free(want);
  /* nothing was written over the file */
  size_t len;
  uint8_t *back = bri_slurp(dbpath, &len);
  ck_assert_uint_eq(len, sizeof junk);
  ck_assert_int_eq(memcmp(back, junk, len), 0);
  free(back);
}
END_TEST

START_TEST(damaged_store_is_corrupt) {
  bri_jobs_store *s = open_store();
  int64_t t = add_table(s, "/data/a.lance");
  for (int k = 1; k <= BRI_JOB_NKINDS; k++) enqueue(s, t, (bri_job_kind)k, 0, 0);
  bri_jobs_close(s);
  /* Overwrite every page but the header page with a pattern. */
  size_t len;
  uint8_t *b = bri_slurp(dbpath, &len);
  ck_assert_uint_gt(len, 8192);
  for (size_t i = 4096; i < len; i++) b[i] = 0xA5;
  bri_write_bytes(dbpath, b, len);
  free(b);
  bri_error err = {0};
  int rc = bri_jobs_open(dbpath, NULL, &s, &err);
  ck_assert_int_eq(rc, BRI_ECORRUPT);
  char *dmg = bri_strdupf("%s: damaged job store: SQLite", dbpath);
  ck_assert_msg(strstr(err.msg, dmg) == err.msg, "got: %s", err.msg);
  ck_assert_msg(strchr(err.msg, '\n') == NULL, "one line: %s", err.msg);
  free(dmg);
  /* A truncated header page. */
  b = malloc(60);
  memcpy(b, "SQLite format 3", 16);
  memset(b + 16, 0xff, 44);
  bri_write_bytes(dbpath, b, 60);
  free(b);
  char *wal = bri_strdupf("%s-wal", dbpath);
  unlink(wal); /* a stale WAL would be replayed: drop it */
  free(wal);
  rc = bri_jobs_open(dbpath, NULL, &s, &err);
  ck_assert_msg(rc == BRI_ECORRUPT, "rc %d: %s", rc, err.msg);
  ck_assert_msg(strstr(err.msg, dbpath) == err.msg && strstr(err.msg, "job store: SQLite says"),
                "got: %s", err.msg);
}
END_TEST

START_TEST(second_process_refused) {
  bri_jobs_store *s = open_store();
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) { /* another process: must be refused while s is open */
    bri_jobs_store *s2 = NULL;
    bri_error err = {0};
    int rc = bri_jobs_open(dbpath, NULL, &s2, &err);
    _exit(rc == BRI_EIO && strstr(err.msg, "in use by another process") &&
                  strstr(err.msg, ".lock")
              ? 0
              : 1);
  }
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  bri_jobs_close(s);
  s = open_store(); /* released on close */
  bri_jobs_close(s);
}
END_TEST

/* ---- tables ------------------------------------------------------------ */

START_TEST(tables_state) {
  bri_jobs_store *s = open_store();
  bri_error err;
  int64_t a, a2, b;
  int created = -1;
  ck_assert_int_eq(bri_jobs_table_upsert(s, "/t/a", &a, &created, &err), 0);
  ck_assert_int_eq(created, 1);
  ck_assert_int_eq(bri_jobs_table_upsert(s, "/t/a", &a2, &created, &err), 0);
  ck_assert_int_eq(created, 0);
  ck_assert_int_eq(a, a2);
  b = add_table(s, "/t/b");
  ck_assert_int_eq(bri_jobs_table_upsert(s, "", &a2, NULL, &err), BRI_EINVAL);

  fake_now = T0 + 5;
  ck_assert_int_eq(bri_jobs_table_set_seen_version(s, a, 17, &err), 0);
  ck_assert_int_eq(bri_jobs_table_set_error(s, a, "manifest 17 unreadable", &err), 0);
  ck_assert_int_eq(bri_jobs_table_set_paused(s, b, 1, &err), 0);
  ck_assert_int_eq(bri_jobs_table_set_paused(s, 999, 1, &err), BRI_ENOTFOUND);
  ck_assert_int_eq(bri_jobs_table_set_seen_version(s, a, UINT64_MAX, &err), BRI_EINVAL);

  bri_jobs_table *ts;
  size_t n;
  ck_assert_int_eq(bri_jobs_table_list(s, &ts, &n, &err), 0);
  ck_assert_uint_eq(n, 2);
  ck_assert_str_eq(ts[0].root, "/t/a");
  ck_assert_int_eq(ts[0].has_seen_version, 1);
  ck_assert_uint_eq(ts[0].last_seen_version, 17);
  ck_assert_str_eq(ts[0].last_error, "manifest 17 unreadable");
  ck_assert_int_eq(ts[0].last_error_at, T0 + 5);
  ck_assert_int_eq(ts[0].paused, 0);
  ck_assert_int_eq(ts[1].paused, 1);
  ck_assert_int_eq(ts[1].has_seen_version, 0);
  ck_assert_ptr_null(ts[1].last_error);
  bri_jobs_table_list_free(ts, n);

  ck_assert_int_eq(bri_jobs_table_set_error(s, a, NULL, &err), 0);
  bri_jobs_table t;
  ck_assert_int_eq(bri_jobs_table_get(s, a, &t, &err), 0);
  ck_assert_ptr_null(t.last_error);
  ck_assert_int_eq(t.last_error_at, 0);
  bri_jobs_table_clear(&t);
  ck_assert_int_eq(bri_jobs_table_get(s, 999, &t, &err), BRI_ENOTFOUND);
  ck_assert_int_eq(bri_jobs_table_find(s, "/t/zz", &t, &err), BRI_ENOTFOUND);
  ck_assert_msg(strstr(err.msg, "no table with root /t/zz"), "%s", err.msg);

  /* remove: refused while a job runs, then the history goes with it */
  int64_t j = enqueue(s, a, BRI_JOB_VERIFY, 0, 0);
  ck_assert_int_eq(claim(s), j);
  ck_assert_int_eq(bri_jobs_table_remove(s, a, &err), BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "has a running job"), "%s", err.msg);
  finish(s, j, BRI_JOB_SUCCEEDED, NULL);
  ck_assert_int_eq(bri_jobs_table_remove(s, a, &err), 0);
  bri_jobs_job job;
  ck_assert_int_eq(bri_jobs_get(s, j, &job, &err), BRI_ENOTFOUND);
  ck_assert_int_eq(raw_int("SELECT count(*) FROM job_attempts"), 0);
  ck_assert_int_eq(raw_int("SELECT count(*) FROM job_stats"), 0);
  bri_jobs_close(s);
}
END_TEST

/* ---- queue ------------------------------------------------------------- */

START_TEST(enqueue_dedupes_queued_jobs) {
  bri_jobs_store *s = open_store();
  bri_error err;
  int64_t t = add_table(s, "/t/a"), u = add_table(s, "/t/b");
  int64_t id1, id2;
  int dup = -1;
  ck_assert_int_eq(bri_jobs_enqueue(s, t, BRI_JOB_COMPACT, 1, "{\"trigger\": \"auto\", \"strategy\": \"bri\"}",
                                    T0 + 5000, &id1, &dup, &err),
                   0);
  ck_assert_int_eq(dup, 0);
  /* the same request from elsewhere (another trigger, keys in another
   * order): the existing id, more urgent, params kept (canonical) */
  ck_assert_int_eq(bri_jobs_enqueue(s, t, BRI_JOB_COMPACT, 7, "{\"strategy\":\"bri\", \"trigger\": \"api\"}",
                                    T0 + 1000, &id2, &dup, &err),
                   0);
  ck_assert_int_eq(dup, 1);
  ck_assert_int_eq(id2, id1);
  bri_jobs_job j = get_job(s, id1);
  ck_assert_int_eq(j.priority, 7);
  ck_assert_int_eq(j.not_before, T0 + 1000);
  ck_assert_str_eq(j.params, "{\"strategy\":\"bri\",\"trigger\":\"auto\"}");
  bri_jobs_job_clear(&j);
  /* a less urgent duplicate lowers nothing */
  ck_assert_int_eq(bri_jobs_enqueue(s, t, BRI_JOB_COMPACT, 0, "{\"strategy\":\"bri\"}", T0 + 9000, &id2, &dup,
                                    &err),
                   0);
  ck_assert_int_eq(id2, id1);
  j = get_job(s, id1);
  ck_assert_int_eq(j.priority, 7);
  ck_assert_int_eq(j.not_before, T0 + 1000);
  bri_jobs_job_clear(&j);
  /* other options: a job of its own, not merged */
  ck_assert_int_eq(bri_jobs_enqueue(s, t, BRI_JOB_COMPACT, 7, "{\"strategy\": \"copy\"}", T0 + 1000, &id2, &dup,
                                    &err),
                   0);
  ck_assert_int_eq(dup, 0);
  ck_assert_int_ne(id2, id1);
  ck_assert_int_eq(bri_jobs_enqueue(s, t, BRI_JOB_COMPACT, 0, NULL, T0 + 9000, &id2, &dup, &err), 0);
  ck_assert_int_eq(dup, 0);
  int64_t plain = id2;
  ck_assert_int_eq(bri_jobs_enqueue(s, t, BRI_JOB_COMPACT, 0, "{\"trigger\":\"auto\"}", 0, &id2, &dup, &err), 0);
  ck_assert_int_eq(dup, 1); /* no options = {} with a trigger */
  ck_assert_int_eq(id2, plain);
  /* other kind, other table: new jobs */
  ck_assert_int_ne(enqueue(s, t, BRI_JOB_CLEANUP, 0, 0), id1);
  ck_assert_int_ne(enqueue(s, u, BRI_JOB_COMPACT, 0, 0), id1);
  /* a running job of the request is not a duplicate */
  fake_now = T0 + 1000;
  ck_assert_int_eq(claim(s), id1);
  ck_assert_int_eq(bri_jobs_enqueue(s, t, BRI_JOB_COMPACT, 0, "{\"strategy\":\"bri\"}", 0, &id2, &dup, &err), 0);
  ck_assert_int_eq(dup, 0);
  ck_assert_int_ne(id2, id1);
  /* the schema itself refuses a second queued identical request for t */
  char msg[256];
  ck_assert_int_ne(raw_exec("INSERT INTO jobs (table_id, kind, state, max_attempts, not_before, "
                            "created_at, params) VALUES (1, 'compact', 'queued', 1, 0, 0, '{\"strategy\":\"copy\"}')",
                            msg, sizeof msg),
                   SQLITE_OK);
  ck_assert_msg(strstr(msg, unique_failed()), "%s", msg);

  /* refusals */
  ck_assert_int_eq(bri_jobs_enqueue(s, 999, BRI_JOB_COMPACT, 0, NULL, 0, &id2, &dup, &err),
                   BRI_ENOTFOUND);
  ck_assert_msg(strstr(err.msg, "cannot queue a compact job: no table 999"), "%s", err.msg);
  ck_assert_int_eq(bri_jobs_enqueue(s, t, BRI_JOB_VERIFY, 0, "{\"a\": ", 0, &id2, &dup, &err),
                   BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "the params of a verify job is not valid JSON"), "%s", err.msg);
  ck_assert_int_eq(bri_jobs_enqueue(s, t, BRI_JOB_VERIFY, 0, "[1]", 0, &id2, &dup, &err),
                   BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "must be a JSON object"), "%s", err.msg);
  ck_assert_int_eq(bri_jobs_enqueue(s, t, (bri_job_kind)9, 0, NULL, 0, &id2, &dup, &err),
                   BRI_EINVAL);
  bri_jobs_close(s);
}
END_TEST

START_TEST(claim_order_priority_then_time) {
  bri_jobs_store *s = open_store();
  int64_t t[6];
  char root[32];
  for (int i = 0; i < 6; i++) {
    snprintf(root, sizeof root, "/t/%d", i);
    t[i] = add_table(s, root);
  }
  int64_t low = enqueue(s, t[0], BRI_JOB_COMPACT, 1, T0 - 100);
  int64_t high_later = enqueue(s, t[1], BRI_JOB_COMPACT, 9, T0 + 500);
  int64_t mid_b = enqueue(s, t[2], BRI_JOB_COMPACT, 5, T0 - 10);
  int64_t mid_a = enqueue(s, t[3], BRI_JOB_COMPACT, 5, T0 - 20); /* earlier not_before */
  int64_t mid_c = enqueue(s, t[4], BRI_JOB_COMPACT, 5, T0 - 10); /* same as mid_b, higher id */
  int64_t neg = enqueue(s, t[5], BRI_JOB_COMPACT, -3, T0 - 1000);
  int64_t when;
  int has;
  bri_error err;
  ck_assert_int_eq(bri_jobs_next_due(s, T0 - 2000, &when, &has, &err), 0);
  ck_assert_int_eq(has, 1);
  ck_assert_int_eq(when, T0 - 1000);
  /* after a claim that began at T0, only what falls due later: those due
   * by then were offered to it (a worker ending claims what it left) */
  ck_assert_int_eq(bri_jobs_next_due(s, T0, &when, &has, &err), 0);
  ck_assert_int_eq(has, 1);
  ck_assert_int_eq(when, T0 + 500);
  ck_assert_int_eq(claim(s), mid_a);
  ck_assert_int_eq(claim(s), mid_b);
  ck_assert_int_eq(claim(s), mid_c);
  ck_assert_int_eq(claim(s), low);
  ck_assert_int_eq(claim(s), neg);
  ck_assert_int_eq(claim(s), 0); /* high_later is not due yet */
  ck_assert_int_eq(bri_jobs_next_due(s, T0, &when, &has, &err), 0);
  ck_assert_int_eq(has, 1);
  ck_assert_int_eq(when, T0 + 500);
  fake_now = T0 + 499;
  ck_assert_int_eq(claim(s), 0);
  /* a claim that began before high_later fell due still reports it, though
   * it is due by now: the scheduler's timer must not wait for a kick */
  fake_now = T0 + 501;
  ck_assert_int_eq(bri_jobs_next_due(s, T0 + 499, &when, &has, &err), 0);
  ck_assert_int_eq(has, 1);
  ck_assert_int_eq(when, T0 + 500);
  ck_assert_int_eq(claim(s), high_later);
  ck_assert_int_eq(bri_jobs_next_due(s, T0 - 2000, &when, &has, &err), 0);
  ck_assert_int_eq(has, 0);
  bri_jobs_job j = get_job(s, high_later);
  ck_assert_int_eq(j.attempts, 1);
  ck_assert_int_eq(j.started_at, T0 + 501);
  bri_jobs_job_clear(&j);
  bri_jobs_close(s);
}
END_TEST

START_TEST(one_running_job_per_table) {
  bri_jobs_store *s = open_store();
  int64_t t = add_table(s, "/t/a"), u = add_table(s, "/t/b");
  int64_t c = enqueue(s, t, BRI_JOB_COMPACT, 9, 0);
  int64_t v = enqueue(s, t, BRI_JOB_VERIFY, 5, 0);
  int64_t other = enqueue(s, u, BRI_JOB_CLEANUP, 0, 0);
  ck_assert_int_eq(claim(s), c);
  ck_assert_int_eq(claim(s), other); /* v waits for c although it ranks higher */
  ck_assert_int_eq(claim(s), 0);
  bri_jobs_table tb;
  bri_error err;
  ck_assert_int_eq(bri_jobs_table_get(s, t, &tb, &err), 0);
  ck_assert_int_eq(tb.running_job, c);
  ck_assert_uint_eq(tb.queued_jobs, 1);
  bri_jobs_table_clear(&tb);
  /* the schema refuses a second running job on t */
  char msg[256];
  ck_assert_int_ne(raw_exec("UPDATE jobs SET state = 'running', owner = 'x' WHERE id = 2", msg,
                            sizeof msg),
                   SQLITE_OK);
  ck_assert_msg(strstr(msg, unique_failed()), "%s", msg);
  finish(s, c, BRI_JOB_SUCCEEDED, NULL);
  ck_assert_int_eq(claim(s), v);
  bri_jobs_close(s);
}
END_TEST

START_TEST(paused_tables_are_skipped) {
  bri_jobs_store *s = open_store();
  bri_error err;
  int64_t t = add_table(s, "/t/a");
  ck_assert_int_eq(bri_jobs_table_set_paused(s, t, 1, &err), 0);
  int64_t j = enqueue(s, t, BRI_JOB_COMPACT, 0, 0); /* accepted while paused */
  ck_assert_int_eq(claim(s), 0);
  int64_t when;
  int has;
  ck_assert_int_eq(bri_jobs_next_due(s, -1, &when, &has, &err), 0);
  ck_assert_int_eq(has, 0);
  ck_assert_int_eq(bri_jobs_table_set_paused(s, t, 0, &err), 0);
  ck_assert_int_eq(claim(s), j);
  /* pausing does not stop a running job */
  ck_assert_int_eq(bri_jobs_table_set_paused(s, t, 1, &err), 0);
  bri_jobs_job job = get_job(s, j);
  ck_assert_int_eq(job.state, BRI_JOB_RUNNING);
  bri_jobs_job_clear(&job);
  finish(s, j, BRI_JOB_SUCCEEDED, NULL);
  bri_jobs_close(s);
}
END_TEST

START_TEST(retry_backoff_then_give_up) {
  bri_jobs_store *s = open_store(); /* base 1 s, cap 5 s, 4 attempts */
  bri_error err;
  ck_assert_int_eq(bri_jobs_backoff_ms(s, 1), 1000);
  ck_assert_int_eq(bri_jobs_backoff_ms(s, 2), 2000);
  ck_assert_int_eq(bri_jobs_backoff_ms(s, 3), 4000);
  ck_assert_int_eq(bri_jobs_backoff_ms(s, 4), 5000);
  ck_assert_int_eq(bri_jobs_backoff_ms(s, 1000), 5000);
  int64_t t = add_table(s, "/t/a");
  int64_t j = enqueue(s, t, BRI_JOB_COMPACT, 0, 0);
  const int64_t waits[] = {1000, 2000, 4000};
  for (int a = 1; a <= 3; a++) {
    ck_assert_int_eq(claim(s), j);
    fake_now += 10;
    bri_job_state ns;
    int64_t nb;
    ck_assert_int_eq(bri_jobs_retry_later(s, j, "commit conflict", &ns, &nb, &err), 0);
    ck_assert_int_eq(ns, BRI_JOB_QUEUED);
    ck_assert_int_eq(nb, fake_now + waits[a - 1]);
    bri_jobs_job job = get_job(s, j);
    ck_assert_int_eq(job.attempts, a);
    ck_assert_str_eq(job.error, "commit conflict");
    ck_assert_ptr_null(job.owner);
    bri_jobs_job_clear(&job);
    fake_now = nb - 1;
    ck_assert_int_eq(claim(s), 0);
    fake_now = nb;
  }
  ck_assert_int_eq(claim(s), j);
  fake_now += 10;
  bri_job_state ns;
  ck_assert_int_eq(bri_jobs_retry_later(s, j, "commit conflict", &ns, NULL, &err), 0);
  ck_assert_int_eq(ns, BRI_JOB_FAILED);
  bri_jobs_job job = get_job(s, j);
  ck_assert_int_eq(job.state, BRI_JOB_FAILED);
  ck_assert_str_eq(job.error, "gave up after 4 attempts: commit conflict");
  ck_assert_int_eq(job.finished_at, fake_now);
  bri_jobs_job_clear(&job);
  bri_jobs_table tb;
  ck_assert_int_eq(bri_jobs_table_get(s, t, &tb, &err), 0);
  char *want = bri_strdupf("compact job %lld: gave up after 4 attempts: commit conflict",
                           (long long)j);
  ck_assert_str_eq(tb.last_error, want);
  free(want);
  bri_jobs_table_clear(&tb);

  bri_jobs_attempt *at;
  size_t n;
  ck_assert_int_eq(bri_jobs_attempts(s, j, &at, &n, &err), 0);
  ck_assert_uint_eq(n, 4);
  for (size_t i = 0; i < n; i++) {
    ck_assert_int_eq(at[i].attempt, (int)i + 1);
    ck_assert_str_eq(at[i].outcome, "retried");
    ck_assert_str_eq(at[i].error, "commit conflict");
    ck_assert_int_eq(at[i].finished_at - at[i].started_at, 10);
  }
  bri_jobs_attempts_free(at, n);
  bri_jobs_stat *st;
  ck_assert_int_eq(bri_jobs_stats(s, &st, &n, &err), 0);
  ck_assert_uint_eq(n, 1);
  ck_assert_uint_eq(st[0].retried, 4);
  ck_assert_uint_eq(st[0].failed, 1);
  ck_assert_uint_eq(st[0].succeeded, 0);
  ck_assert_int_eq(st[0].run_ms, 40);
  bri_jobs_stats_free(st, n);
  /* a finished job cannot be retried */
  ck_assert_int_eq(bri_jobs_retry_later(s, j, "again", NULL, NULL, &err), BRI_ELEASE);
  ck_assert_msg(strstr(err.msg, "it is failed, not running"), "%s", err.msg);
  bri_jobs_close(s);
}
END_TEST

/* A deferred job goes back to the queue as if never claimed: no attempt
 * counted, due after the delay, its reason as its error; a cancel
 * requested meanwhile ends it. */
START_TEST(defer_undoes_the_claim) {
  bri_jobs_store *s = open_store();
  bri_error err;
  int64_t t = add_table(s, "/t/a");
  int64_t j = enqueue(s, t, BRI_JOB_COMPACT, 0, 0);
  ck_assert_int_eq(claim(s), j);
  bri_job_state ns;
  ck_assert_int_eq(bri_jobs_defer(s, j, 5000, "locked by brictl", &ns, &err), 0);
  ck_assert_int_eq(ns, BRI_JOB_QUEUED);
  bri_jobs_job a = get_job(s, j);
  ck_assert_int_eq(a.state, BRI_JOB_QUEUED);
  ck_assert_int_eq(a.attempts, 0);
  ck_assert_int_eq(a.not_before, T0 + 5000);
  ck_assert_str_eq(a.error, "locked by brictl");
  bri_jobs_job_clear(&a);
  ck_assert_int_eq(raw_int("SELECT count(*) FROM job_attempts"), 0);
  ck_assert_int_eq(claim(s), 0); /* not due yet */
  fake_now = T0 + 5000;
  ck_assert_int_eq(claim(s), j);
  a = get_job(s, j);
  ck_assert_int_eq(a.attempts, 1);
  bri_jobs_job_clear(&a);
  /* not this session's, or not running: refused */
  ck_assert_int_eq(bri_jobs_cancel(s, j, &ns, &err), 0);
  ck_assert_int_eq(bri_jobs_defer(s, j, 0, "locked", &ns, &err), 0);
  ck_assert_int_eq(ns, BRI_JOB_CANCELLED);
  ck_assert_int_ne(bri_jobs_defer(s, j, 0, "locked", &ns, &err), 0);
  bri_jobs_close(s);
}
END_TEST

/* A job with other params queued meanwhile does not replace the retried
 * one: both stay queued. */
START_TEST(retry_not_superseded_by_other_request) {
  bri_jobs_store *s = open_store();
  bri_error err;
  int64_t t = add_table(s, "/t/a");
  int64_t j = enqueue(s, t, BRI_JOB_COMPACT, 4, 0);
  ck_assert_int_eq(claim(s), j);
  int64_t k;
  int dup;
  ck_assert_int_eq(bri_jobs_enqueue(s, t, BRI_JOB_COMPACT, 1, "{\"dry_run\":true}", 0, &k, &dup, &err), 0);
  bri_job_state ns;
  int64_t nb;
  ck_assert_int_eq(bri_jobs_retry_later(s, j, "lost race", &ns, &nb, &err), 0);
  ck_assert_int_eq(ns, BRI_JOB_QUEUED);
  bri_jobs_job a = get_job(s, j), b = get_job(s, k);
  ck_assert_int_eq(a.state, BRI_JOB_QUEUED);
  ck_assert_int_eq(b.state, BRI_JOB_QUEUED);
  bri_jobs_job_clear(&a);
  bri_jobs_job_clear(&b);
  bri_jobs_close(s);
}
END_TEST

START_TEST(retry_superseded_by_queued_job) {
  bri_jobs_store *s = open_store();
  bri_error err;
  int64_t t = add_table(s, "/t/a");
  int64_t j = enqueue(s, t, BRI_JOB_COMPACT, 4, 0);
  ck_assert_int_eq(claim(s), j);
  int64_t k = enqueue(s, t, BRI_JOB_COMPACT, 1, 0); /* a new version arrived meanwhile */
  bri_job_state ns;
  int64_t nb;
  ck_assert_int_eq(bri_jobs_retry_later(s, j, "lost race", &ns, &nb, &err), 0);
  ck_assert_int_eq(ns, BRI_JOB_CANCELLED);
  bri_jobs_job a = get_job(s, j), b = get_job(s, k);
  ck_assert_int_eq(a.state, BRI_JOB_CANCELLED);
  char *want = bri_strdupf("{\"superseded_by\": %lld}", (long long)k);
  ck_assert_str_eq(a.result, want);
  free(want);
  ck_assert_msg(strstr(a.error, "superseded by job") && strstr(a.error, "lost race"), "%s",
                a.error);
  ck_assert_int_eq(b.state, BRI_JOB_QUEUED);
  ck_assert_int_eq(b.priority, 4);
  ck_assert_int_eq(b.not_before, T0 + 1000); /* the backoff carries over */
  ck_assert_int_eq(nb, T0 + 1000);
  bri_jobs_job_clear(&a);
  bri_jobs_job_clear(&b);
  bri_jobs_close(s);
}
END_TEST

START_TEST(cancellation) {
  bri_jobs_store *s = open_store();
  bri_error err;
  int64_t t = add_table(s, "/t/a"), u = add_table(s, "/t/b");
  int64_t q = enqueue(s, t, BRI_JOB_VERIFY, 0, 0);
  bri_job_state after;
  ck_assert_int_eq(bri_jobs_cancel(s, q, &after, &err), 0);
  ck_assert_int_eq(after, BRI_JOB_CANCELLED);
  bri_jobs_job j = get_job(s, q);
  ck_assert_int_eq(j.state, BRI_JOB_CANCELLED);
  ck_assert_int_eq(j.finished_at, T0);
  ck_assert_int_eq(j.attempts, 0);
  bri_jobs_job_clear(&j);
  ck_assert_int_eq(bri_jobs_cancel(s, q, &after, &err), 0); /* idempotent */
  ck_assert_int_eq(claim(s), 0);

  /* running: a request the worker sees, then finishes with */
  int64_t r = enqueue(s, t, BRI_JOB_COMPACT, 0, 0);
  ck_assert_int_eq(claim(s), r);
  int req = -1;
  ck_assert_int_eq(bri_jobs_cancel_requested(s, r, &req, &err), 0);
  ck_assert_int_eq(req, 0);
  ck_assert_int_eq(bri_jobs_cancel(s, r, &after, &err), 0);
  ck_assert_int_eq(after, BRI_JOB_RUNNING);
  ck_assert_int_eq(bri_jobs_cancel_requested(s, r, &req, &err), 0);
  ck_assert_int_eq(req, 1);
  finish(s, r, BRI_JOB_CANCELLED, "stopped at a safe point");
  ck_assert_int_eq(bri_jobs_cancel(s, r, &after, &err), 0);

  /* a cancel request wins over a retry */
  int64_t r2 = enqueue(s, u, BRI_JOB_COMPACT, 0, 0);
  ck_assert_int_eq(claim(s), r2);
  ck_assert_int_eq(bri_jobs_cancel(s, r2, NULL, &err), 0);
  bri_job_state ns;
  ck_assert_int_eq(bri_jobs_retry_later(s, r2, "conflict", &ns, NULL, &err), 0);
  ck_assert_int_eq(ns, BRI_JOB_CANCELLED);

  /* finished jobs cannot be cancelled */
  int64_t d = enqueue(s, t, BRI_JOB_CLEANUP, 0, 0);
  ck_assert_int_eq(claim(s), d);
  finish(s, d, BRI_JOB_SUCCEEDED, NULL);
  ck_assert_int_eq(bri_jobs_cancel(s, d, &after, &err), BRI_EINVAL);
  char *want = bri_strdupf("%s: job %lld has already finished (succeeded): nothing to cancel",
                           dbpath, (long long)d);
  ck_assert_str_eq(err.msg, want);
  free(want);
  ck_assert_int_eq(bri_jobs_cancel(s, 12345, &after, &err), BRI_ENOTFOUND);
  ck_assert_int_eq(bri_jobs_cancel_requested(s, 12345, &req, &err), BRI_ENOTFOUND);
  bri_jobs_close(s);
}
END_TEST

START_TEST(finish_rules_and_counters) {
  bri_jobs_store *s = open_store_held();
  bri_error err;
  int64_t t = add_table(s, "/t/a");
  int64_t c = enqueue(s, t, BRI_JOB_COMPACT, 0, 0);
  bri_jobs_outcome o = {.state = BRI_JOB_SUCCEEDED, .result_json = "{\"version\": 9}",
                        .bytes_written = 1000, .bytes_reused = 50000};
  ck_assert_int_eq(bri_jobs_finish(s, c, &o, &err), BRI_ELEASE); /* still queued: not held */
  ck_assert_msg(strstr(err.msg, "it is queued, not running"), "%s", err.msg);
  ck_assert_int_eq(claim(s), c);
  bri_jobs_outcome bad = {.state = BRI_JOB_QUEUED};
  ck_assert_int_eq(bri_jobs_finish(s, c, &bad, &err), BRI_EINVAL);
  bri_jobs_outcome badjson = {.state = BRI_JOB_SUCCEEDED, .result_json = "{oops"};
  ck_assert_int_eq(bri_jobs_finish(s, c, &badjson, &err), BRI_EINVAL);
  fake_now = T0 + 2500;
  /* a succeeded job's journal goes with its end, and the version it saw is recorded */
  ck_assert_int_eq(bri_jobs_journal_add(s, c, "/t/a/data/c.lance", "data", &err), 0);
  o.has_seen_version = true, o.seen_version = 9;
  ck_assert_int_eq(bri_jobs_finish(s, c, &o, &err), 0);
  ck_assert_int_eq(bri_jobs_finish(s, c, &o, &err), BRI_ELEASE); /* only once */
  bri_jobs_output *outs;
  size_t n_outs;
  ck_assert_int_eq(bri_jobs_journal_list(s, c, &outs, &n_outs, &err), 0);
  ck_assert_uint_eq(n_outs, 0);
  bri_jobs_job j = get_job(s, c);
  ck_assert_int_eq(j.state, BRI_JOB_SUCCEEDED);
  ck_assert_str_eq(j.result, "{\"version\": 9}");
  ck_assert_uint_eq(j.bytes_written, 1000);
  ck_assert_uint_eq(j.bytes_reused, 50000);
  ck_assert_int_eq(j.finished_at, T0 + 2500);
  ck_assert_ptr_null(j.owner);
  bri_jobs_job_clear(&j);

  int64_t cl = enqueue(s, t, BRI_JOB_CLEANUP, 0, 0);
  ck_assert_int_eq(claim(s), cl);
  fake_now = T0 + 3000;
  bri_jobs_outcome o2 = {.state = BRI_JOB_SUCCEEDED, .bytes_written = 7};
  ck_assert_int_eq(bri_jobs_finish(s, cl, &o2, &err), 0);
  int64_t f = enqueue(s, t, BRI_JOB_COMPACT, 0, 0);
  ck_assert_int_eq(claim(s), f);
  fake_now = T0 + 3100;
  ck_assert_int_eq(bri_jobs_journal_add(s, f, "/t/a/data/f.lance", "data", &err), 0);
  finish(s, f, BRI_JOB_FAILED, "bad page in x.lance");
  /* a failed job's journal is left to recovery */
  ck_assert_int_eq(bri_jobs_journal_list(s, f, &outs, &n_outs, &err), 0);
  ck_assert_uint_eq(n_outs, 1);
  bri_jobs_journal_free(outs, n_outs);

  bri_jobs_table tb;
  ck_assert_int_eq(bri_jobs_table_get(s, t, &tb, &err), 0);
  ck_assert_int_eq(tb.has_seen_version, 1);
  ck_assert_uint_eq(tb.last_seen_version, 9);
  ck_assert_int_eq(tb.last_compaction_at, T0 + 2500);
  ck_assert_int_eq(tb.last_cleanup_at, T0 + 3000);
  char *want = bri_strdupf("compact job %lld: bad page in x.lance", (long long)f);
  ck_assert_str_eq(tb.last_error, want);
  free(want);
  ck_assert_int_eq(tb.last_error_at, T0 + 3100);
  ck_assert_uint_eq(tb.bytes_written, 1007);
  ck_assert_uint_eq(tb.bytes_reused, 50000);
  bri_jobs_table_clear(&tb);

  bri_jobs_stat *st;
  size_t n;
  ck_assert_int_eq(bri_jobs_stats(s, &st, &n, &err), 0);
  ck_assert_uint_eq(n, 2);
  ck_assert_int_eq(st[0].kind, BRI_JOB_CLEANUP); /* ordered by kind name */
  ck_assert_uint_eq(st[0].succeeded, 1);
  ck_assert_int_eq(st[0].run_ms, 500);
  ck_assert_int_eq(st[1].kind, BRI_JOB_COMPACT);
  ck_assert_uint_eq(st[1].succeeded, 1);
  ck_assert_uint_eq(st[1].failed, 1);
  ck_assert_int_eq(st[1].run_ms, 2500 + 100);
  ck_assert_str_eq(st[1].root, "/t/a");
  bri_jobs_stats_free(st, n);

  /* a job left running by an earlier session cannot be finished, only recovered */
  int64_t r = enqueue(s, t, BRI_JOB_VERIFY, 0, 0);
  ck_assert_int_eq(claim(s), r);
  bri_jobs_close(s);
  s = open_store();
  ck_assert_int_eq(bri_jobs_finish(s, r, &o2, &err), BRI_ELEASE);
  ck_assert_msg(strstr(err.msg, "not this one") && strstr(err.msg, "recovered"), "%s", err.msg);
  bri_jobs_close(s);
}
END_TEST

/* ---- journal ----------------------------------------------------------- */

typedef struct trace_log {
  char *sql[64];
  int n;
} trace_log;

static int trace_cb(unsigned type, void *ctx, void *p, void *x) {
  (void)type;
  (void)p;
  trace_log *t = ctx;
  if (t->n < 64) t->sql[t->n++] = strdup((const char *)x);
  return 0;
}

static int trace_find(const trace_log *t, const char *prefix, int from) {
  for (int i = from; i < t->n; i++)
    if (strncmp(t->sql[i], prefix, strlen(prefix)) == 0) return i;
  return -1;
}

START_TEST(journal_is_durable_and_survives_reopen) {
  bri_jobs_store *s = open_store();
  bri_error err;
  int64_t t = add_table(s, "/t/a");
  int64_t j = enqueue(s, t, BRI_JOB_COMPACT, 0, 0);
  ck_assert_int_eq(bri_jobs_journal_add(s, j, "/t/a/data/x.lance", "data", &err), BRI_ELEASE);
  ck_assert_msg(strstr(err.msg, "cannot journal an output of job") &&
                    strstr(err.msg, "it is queued, not running"),
                "%s", err.msg);
  ck_assert_int_eq(claim(s), j);

  /* The entry is committed in a transaction of its own (then the call
   * fdatasyncs the WAL: tests/powerloss checks that it is on disk before
   * the file); the connection never leaves synchronous=NORMAL. */
  trace_log log = {0};
  sqlite3_trace_v2(jobs_sqlite_db(s), SQLITE_TRACE_STMT, trace_cb, &log);
  ck_assert_int_eq(bri_jobs_journal_add(s, j, "/t/a/data/x.lance", "data", &err), 0);
  sqlite3_trace_v2(jobs_sqlite_db(s), 0, NULL, NULL);
  int begin = trace_find(&log, "BEGIN IMMEDIATE", 0);
  int ins = trace_find(&log, "INSERT INTO job_outputs", begin + 1);
  int com = trace_find(&log, "COMMIT", ins + 1);
  ck_assert_msg(begin >= 0 && ins > begin && com > ins, "%d %d %d", begin, ins, com);
  ck_assert_int_lt(trace_find(&log, "PRAGMA synchronous", 0), 0);
  for (int i = 0; i < log.n; i++) free(log.sql[i]);

  fake_now += 1;
  ck_assert_int_eq(bri_jobs_journal_add(s, j, "/t/a/_deletions/1-2-3.bin", "deletion", &err), 0);
  ck_assert_int_eq(bri_jobs_journal_add(s, j, "/t/a/data/x.lance", "data", &err), 0); /* again */
  /* the intent journals the outputs reserved with it, in its transaction */
  const bri_jobs_reserved res[] = {{"/t/a/data/y.lance", "data"}, {"/t/a/data/y", "tree"}};
  ck_assert_int_eq(bri_jobs_set_commit_intent(s, j, "5a0e5a0e-1111-4222-8333-944445555666", 12, res, 2,
                                              &err),
                   0);
  ck_assert_int_eq(bri_jobs_journal_add(s, j, "", "data", &err), BRI_EINVAL);
  ck_assert_int_eq(bri_jobs_set_commit_intent(s, j, "", 12, NULL, 0, &err), BRI_EINVAL);
  const bri_jobs_reserved bad[] = {{"", "data"}};
  ck_assert_int_eq(bri_jobs_set_commit_intent(s, j, "5a0e5a0e-1111-4222-8333-944445555667", 13, bad, 1, &err),
                   BRI_EINVAL);
  bri_jobs_close(s); /* no finish: as if the daemon died */

  s = open_store();
  bri_jobs_output *o;
  size_t n;
  ck_assert_int_eq(bri_jobs_journal_list(s, j, &o, &n, &err), 0);
  ck_assert_uint_eq(n, 4);
  ck_assert_str_eq(o[0].path, "/t/a/data/x.lance");
  ck_assert_str_eq(o[0].kind, "data");
  ck_assert_int_eq(o[0].attempt, 1);
  ck_assert_int_eq(o[0].created_at, T0);
  ck_assert_str_eq(o[1].path, "/t/a/_deletions/1-2-3.bin");
  ck_assert_str_eq(o[1].kind, "deletion");
  ck_assert_int_lt(o[0].seq, o[1].seq);
  ck_assert_str_eq(o[2].path, "/t/a/data/y.lance");
  ck_assert_str_eq(o[3].path, "/t/a/data/y");
  ck_assert_str_eq(o[3].kind, "tree");
  bri_jobs_journal_free(o, n);
  bri_jobs_job job = get_job(s, j);
  ck_assert_str_eq(job.commit_uuid, "5a0e5a0e-1111-4222-8333-944445555666");
  ck_assert_int_eq(job.has_commit_read_version, 1);
  ck_assert_uint_eq(job.commit_read_version, 12);
  bri_jobs_job_clear(&job);
  /* this session does not own the job: no journaling for it */
  ck_assert_int_eq(bri_jobs_journal_add(s, j, "/t/a/other", "data", &err), BRI_ELEASE);
  /* remove and clear */
  ck_assert_int_eq(bri_jobs_journal_remove(s, j, "/t/a/data/x.lance", &err), 0);
  ck_assert_int_eq(bri_jobs_journal_remove(s, j, "/t/a/data/x.lance", &err), 0);
  ck_assert_int_eq(bri_jobs_journal_list(s, j, &o, &n, &err), 0);
  ck_assert_uint_eq(n, 3);
  bri_jobs_journal_free(o, n);
  ck_assert_int_eq(bri_jobs_journal_clear(s, j, &err), 0);
  ck_assert_int_eq(bri_jobs_journal_list(s, j, &o, &n, &err), 0);
  ck_assert_uint_eq(n, 0);
  ck_assert_ptr_null(o);
  bri_jobs_close(s);
}
END_TEST

/* ---- recovery ---------------------------------------------------------- */

typedef struct fake_table {
  const char *referenced[8]; /* paths a committed version references */
  int n_referenced;
  const char *landed_uuid; /* a committed transaction uuid, or NULL */
  uint64_t landed_version;
  const char *fail_on; /* is_referenced fails for this path */
  char removed[8][256];
  int n_removed;
  int landed_calls;
} fake_table;

static int cb_is_referenced(void *user, const bri_jobs_job *job, const bri_jobs_output *out,
                            int *referenced, bri_error *err) {
  fake_table *f = user;
  ck_assert_ptr_nonnull(job->root);
  if (f->fail_on && strcmp(out->path, f->fail_on) == 0)
    return bri_error_set(err, BRI_EIO, "reading manifests of %s: disk on fire", job->root);
  *referenced = 0;
  for (int i = 0; i < f->n_referenced; i++)
    if (strcmp(out->path, f->referenced[i]) == 0) *referenced = 1;
  return 0;
}

static int cb_remove(void *user, const bri_jobs_job *job, const bri_jobs_output *out,
                     bri_error *err) {
  (void)job;
  fake_table *f = user;
  if (f->n_removed < 8) snprintf(f->removed[f->n_removed++], 256, "%s", out->path);
  if (unlink(out->path) != 0 && errno != ENOENT) return bri_error_errno(err, "removing", out->path);
  return 0;
}

static int cb_commit_landed(void *user, const bri_jobs_job *job, int *landed, uint64_t *version,
                            bri_error *err) {
  (void)err;
  fake_table *f = user;
  f->landed_calls++;
  *landed = f->landed_uuid && job->commit_uuid && strcmp(f->landed_uuid, job->commit_uuid) == 0 &&
            job->has_commit_read_version && f->landed_version > job->commit_read_version;
  if (*landed) *version = f->landed_version;
  return 0;
}

static void touch(const char *p) { bri_write_bytes(p, "x", 1); }

/* Child process: claims the table's compact job, journals and writes two
 * files, journals a third it never creates, then dies by SIGKILL. */
static void crash_child(int with_intent) {
  bri_jobs_options o;
  test_options(&o);
  bri_jobs_store *s;
  bri_error err;
  if (bri_jobs_open(dbpath, &o, &s, &err)) _exit(10);
  bri_jobs_job j;
  int got;
  if (bri_jobs_claim_next(s, &j, &got, &err) || !got) _exit(11);
  char *a = bri_path_join(tmp, "a.lance"), *b = bri_path_join(tmp, "b.lance"),
       *c = bri_path_join(tmp, "c.lance");
  if (bri_jobs_journal_add(s, j.id, a, "data", &err)) _exit(12);
  touch(a);
  if (bri_jobs_journal_add(s, j.id, b, "data", &err)) _exit(13);
  touch(b);
  if (with_intent && bri_jobs_set_commit_intent(s, j.id, "uuid-1", 3, NULL, 0, &err)) _exit(14);
  if (bri_jobs_journal_add(s, j.id, c, "txn", &err)) _exit(15);
  kill(getpid(), SIGKILL);
  _exit(16);
}

static int64_t run_crash(int with_intent) {
  bri_jobs_store *s = open_store();
  int64_t t = add_table(s, tmp);
  int64_t j = enqueue(s, t, BRI_JOB_COMPACT, 0, 0);
  bri_jobs_close(s);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) crash_child(with_intent);
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "child status %d", status);
  fake_now += 1000; /* its lease runs out (test_options) */
  return j;
}

START_TEST(recovery_after_crash_rolls_back_and_requeues) {
  int64_t j = run_crash(0);
  char *a = bri_path_join(tmp, "a.lance"), *b = bri_path_join(tmp, "b.lance"),
       *c = bri_path_join(tmp, "c.lance");
  ck_assert(file_exists(a) && file_exists(b) && !file_exists(c));
  fake_now = T0 + 60000;
  bri_jobs_store *s = open_store();
  bri_error err;
  bri_jobs_table tb;
  ck_assert_int_eq(bri_jobs_table_find(s, tmp, &tb, &err), 0);
  ck_assert_int_eq(tb.running_job, j); /* the dead session's claim blocks the table */
  bri_jobs_table_clear(&tb);
  ck_assert_int_eq(claim(s), 0);

  fake_table f = {.referenced = {b}, .n_referenced = 1};
  bri_jobs_recovery_ops ops = {.is_referenced = cb_is_referenced, .remove = cb_remove, .commit_landed = cb_commit_landed, .user = &f};
  bri_jobs_recovery_report rep;
  ck_assert_msg(bri_jobs_recover(s, &ops, &rep, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(rep.interrupted, 1);
  ck_assert_uint_eq(rep.requeued, 1);
  ck_assert_uint_eq(rep.stuck, 0);
  ck_assert_uint_eq(rep.files_removed, 2);
  ck_assert_uint_eq(rep.files_kept, 1);
  ck_assert_int_eq(f.landed_calls, 0); /* no intent recorded: nothing to ask */
  /* newest first: c (never created) then a; b is referenced and stays */
  ck_assert_int_eq(f.n_removed, 2);
  ck_assert_str_eq(f.removed[0], c);
  ck_assert_str_eq(f.removed[1], a);
  ck_assert(!file_exists(a) && file_exists(b));

  bri_jobs_job job = get_job(s, j);
  ck_assert_int_eq(job.state, BRI_JOB_QUEUED);
  ck_assert_int_eq(job.attempts, 1);
  ck_assert_int_eq(job.not_before, T0 + 60000 + 1000);
  ck_assert_msg(strstr(job.error, "interrupted: the daemon stopped or lost its lease while attempt 1 was running"),
                "%s", job.error);
  ck_assert_ptr_null(job.owner);
  bri_jobs_job_clear(&job);
  bri_jobs_output *o;
  size_t n;
  ck_assert_int_eq(bri_jobs_journal_list(s, j, &o, &n, &err), 0);
  ck_assert_uint_eq(n, 0);
  bri_jobs_attempt *at;
  ck_assert_int_eq(bri_jobs_attempts(s, j, &at, &n, &err), 0);
  ck_assert_uint_eq(n, 1);
  ck_assert_str_eq(at[0].outcome, "crashed");
  bri_jobs_attempts_free(at, n);

  /* a second recovery finds nothing; the job runs again after the backoff */
  ck_assert_int_eq(bri_jobs_recover(s, &ops, &rep, &err), 0);
  ck_assert_uint_eq(rep.interrupted + rep.leftovers, 0);
  fake_now = T0 + 61000;
  ck_assert_int_eq(claim(s), j);
  job = get_job(s, j);
  ck_assert_int_eq(job.attempts, 2);
  bri_jobs_job_clear(&job);
  /* and recovery leaves this session's running job alone */
  ck_assert_int_eq(bri_jobs_recover(s, &ops, &rep, &err), 0);
  ck_assert_uint_eq(rep.interrupted, 0);
  job = get_job(s, j);
  ck_assert_int_eq(job.state, BRI_JOB_RUNNING);
  bri_jobs_job_clear(&job);
  bri_jobs_stat *st;
  ck_assert_int_eq(bri_jobs_stats(s, &st, &n, &err), 0);
  ck_assert_uint_eq(n, 1);
  ck_assert_uint_eq(st[0].crashed, 1);
  bri_jobs_stats_free(st, n);
  bri_jobs_close(s);
  free(a), free(b), free(c);
}
END_TEST

START_TEST(recovery_finishes_a_landed_commit) {
  int64_t j = run_crash(1);
  char *a = bri_path_join(tmp, "a.lance"), *b = bri_path_join(tmp, "b.lance"),
       *c = bri_path_join(tmp, "c.lance");
  fake_now = T0 + 1234;
  bri_jobs_store *s = open_store();
  bri_error err;
  /* the commit of uuid-1 landed as version 4; it references a and b */
  fake_table f = {.referenced = {a, b}, .n_referenced = 2, .landed_uuid = "uuid-1",
                  .landed_version = 4};
  bri_jobs_recovery_ops ops = {.is_referenced = cb_is_referenced, .remove = cb_remove, .commit_landed = cb_commit_landed, .user = &f};
  bri_jobs_recovery_report rep;
  ck_assert_msg(bri_jobs_recover(s, &ops, &rep, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(f.landed_calls, 1);
  ck_assert_uint_eq(rep.succeeded, 1);
  ck_assert_uint_eq(rep.files_kept, 2);
  ck_assert_uint_eq(rep.files_removed, 1);
  ck_assert(file_exists(a) && file_exists(b));
  bri_jobs_job job = get_job(s, j);
  ck_assert_int_eq(job.state, BRI_JOB_SUCCEEDED);
  ck_assert_str_eq(job.result, "{\"recovered\": true, \"version\": 4}");
  ck_assert_int_eq(job.finished_at, T0 + 1234);
  bri_jobs_job_clear(&job);
  bri_jobs_table tb;
  ck_assert_int_eq(bri_jobs_table_find(s, tmp, &tb, &err), 0);
  ck_assert_int_eq(tb.last_compaction_at, T0 + 1234);
  ck_assert_int_eq(tb.running_job, 0);
  bri_jobs_table_clear(&tb);
  bri_jobs_close(s);
  free(a), free(b), free(c);
}
END_TEST

/* A claim holds its table for lease_ttl; a heartbeat renews the leases it
 * is given; before an irreversible step the job needs a third of the lease
 * left (BRI_ELEASE, the commit intent not recorded); once the lease has
 * expired, its holder's heartbeat no longer renews it, recovery takes the
 * job over unless the caller says it still runs it, and the worker that
 * lost it can no longer end it. */
static int64_t in_flight_id;
static int cb_in_flight(void *user, int64_t job_id) {
  (void)user;
  return job_id == in_flight_id;
}

/* A store opened as instance brid-a with 30 s leases. */
static void instance_options(bri_jobs_options *o) {
  test_options(o);
  o->lease_ttl_ms = 30000;
  o->instance = "brid-a";
}

START_TEST(leases_renew_fence_and_expire) {
  bri_jobs_options o;
  instance_options(&o);
  bri_jobs_store *s = open_with(&o);
  bri_error err;
  ck_assert_str_eq(bri_jobs_instance(s), "brid-a");
  ck_assert_msg(bri_jobs_instance_register(s, "host-a", 42, "", "0.1.0", NULL, &err) == 0, "%s", err.msg);
  int64_t t = add_table(s, tmp);
  int64_t j = enqueue(s, t, BRI_JOB_COMPACT, 0, 0);
  ck_assert_int_eq(claim(s), j);
  bri_jobs_job job = get_job(s, j);
  ck_assert_int_eq(job.lease_expires_at, T0 + 30000);
  ck_assert_str_eq(job.instance, "brid-a");
  bri_jobs_job_clear(&job);

  /* 25 s later: 5 s left, less than a third: no commit, no deletes */
  fake_now = T0 + 25000;
  ck_assert_int_eq(bri_jobs_set_commit_intent(s, j, "uuid-9", 3, NULL, 0, &err), BRI_ELEASE);
  ck_assert_msg(strstr(err.msg, "its lease ends in 5000 ms") && strstr(err.msg, "lease_ttl 30000 ms"), "%s", err.msg);
  ck_assert_int_eq(bri_jobs_lease_confirm(s, j, "delete files for", &err), BRI_ELEASE);
  job = get_job(s, j);
  ck_assert_ptr_null(job.commit_uuid);
  bri_jobs_job_clear(&job);
  /* a heartbeat renews it */
  int renewed = -1;
  int64_t until = 0;
  ck_assert_msg(bri_jobs_heartbeat(s, &j, 1, &renewed, &until, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(renewed, 1);
  ck_assert_int_eq(until, T0 + 55000);
  ck_assert_int_eq(bri_jobs_lease_confirm(s, j, "delete files for", &err), 0);
  ck_assert_msg(bri_jobs_set_commit_intent(s, j, "uuid-9", 3, NULL, 0, &err) == 0, "%s", err.msg);

  /* no heartbeat for longer than the lease: recovery takes the job, unless
   * this process says it still runs it */
  fake_now = T0 + 56000;
  /* an expired lease is not revived by a late heartbeat of its holder */
  ck_assert_int_eq(bri_jobs_heartbeat(s, &j, 1, &renewed, NULL, &err), 0);
  ck_assert_int_eq(renewed, 0);
  ck_assert_int_eq(bri_jobs_lease_confirm(s, j, "go on with", &err), BRI_ELEASE);
  /* nor does it end the job itself, even before anyone took it over */
  bri_jobs_outcome late = {.state = BRI_JOB_SUCCEEDED};
  ck_assert_int_eq(bri_jobs_finish(s, j, &late, &err), BRI_ELEASE);
  ck_assert_msg(strstr(err.msg, "its lease ran out 1000 ms ago"), "%s", err.msg);
  ck_assert_int_eq(bri_jobs_retry_later(s, j, "transient", NULL, NULL, &err), BRI_ELEASE);
  fake_table f = {0};
  bri_jobs_recovery_ops ops = {.is_referenced = cb_is_referenced, .remove = cb_remove,
                               .commit_landed = cb_commit_landed, .in_flight = cb_in_flight, .user = &f};
  bri_jobs_recovery_report rep;
  in_flight_id = j;
  ck_assert_msg(bri_jobs_recover(s, &ops, &rep, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(rep.interrupted, 0);
  in_flight_id = 0;
  ck_assert_msg(bri_jobs_recover(s, &ops, &rep, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(rep.interrupted, 1);
  ck_assert_uint_eq(rep.requeued, 1);
  job = get_job(s, j);
  ck_assert_int_eq(job.state, BRI_JOB_QUEUED);
  ck_assert_msg(strstr(job.error, "lost its lease") && strstr(job.error, "instance brid-a"), "%s", job.error);
  bri_jobs_job_clear(&job);
  /* the heartbeat no longer renews it, and its end is not this worker's to record */
  ck_assert_int_eq(bri_jobs_heartbeat(s, &j, 1, &renewed, NULL, &err), 0);
  ck_assert_int_eq(renewed, 0);
  bri_jobs_outcome oc = {.state = BRI_JOB_SUCCEEDED};
  ck_assert_int_eq(bri_jobs_finish(s, j, &oc, &err), BRI_ELEASE);
  /* the attempt says which instance ran it */
  bri_jobs_attempt *a;
  size_t na;
  ck_assert_int_eq(bri_jobs_attempts(s, j, &a, &na, &err), 0);
  ck_assert_uint_eq(na, 1);
  ck_assert_str_eq(a[0].instance, "brid-a");
  ck_assert_str_eq(a[0].outcome, "crashed");
  bri_jobs_attempts_free(a, na);
  bri_jobs_close(s);
}
END_TEST

/* Instances register, heartbeat and stop; a name a live brid holds is
 * refused; a stopped or lost one's name may be taken again. */
START_TEST(instances_register_heartbeat_and_stop) {
  bri_jobs_options o;
  instance_options(&o);
  bri_jobs_store *s = open_with(&o);
  bri_error err;
  ck_assert_msg(bri_jobs_instance_register(s, "host-a", 42, "", "0.1.0", NULL, &err) == 0, "%s", err.msg);
  fake_now = T0 + 1000;
  ck_assert_int_eq(bri_jobs_heartbeat(s, NULL, 0, NULL, NULL, &err), 0);
  bri_jobs_instance_info *in;
  size_t n;
  ck_assert_int_eq(bri_jobs_instances(s, &in, &n, &err), 0);
  ck_assert_uint_eq(n, 1);
  ck_assert_str_eq(in[0].name, "brid-a");
  ck_assert_str_eq(in[0].host, "host-a");
  ck_assert_int_eq(in[0].pid, 42);
  ck_assert_int_eq(in[0].heartbeat_at, T0 + 1000);
  ck_assert_int_eq(in[0].stopped_at, 0);
  ck_assert_str_eq(in[0].session, bri_jobs_session(s));
  bri_jobs_instances_free(in, n);
  bri_jobs_close(s); /* killed: no stop recorded */

  /* another session under the same name while the first one's heartbeat is fresh */
  s = open_with(&o);
  ck_assert_int_eq(bri_jobs_instance_register(s, "host-b", 7, "", "0.1.0", NULL, &err), BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "instance name 'brid-a' is held by a running brid (host host-a, pid 42"), "%s",
                err.msg);
  ck_assert_int_eq(bri_jobs_heartbeat(s, NULL, 0, NULL, NULL, &err), BRI_EINVAL); /* not registered */
  fake_now = T0 + 32000; /* lost: its name is free */
  ck_assert_msg(bri_jobs_instance_register(s, "host-b", 7, "", "0.1.0", NULL, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(bri_jobs_instance_stop(s, &err), 0);
  ck_assert_int_eq(bri_jobs_instances(s, &in, &n, &err), 0);
  ck_assert_uint_eq(n, 1);
  ck_assert_str_eq(in[0].host, "host-b");
  ck_assert_int_eq(in[0].stopped_at, T0 + 32000);
  bri_jobs_instances_free(in, n);
  bri_jobs_close(s);
}
END_TEST

/* Two instances on one PostgreSQL store: b leaves a's running job alone
 * while a's lease holds; once it has run out b takes the job over, and a
 * can neither record its commit intent nor end the job any more. */
START_TEST(pg_lease_decides_between_instances) {
  bri_jobs_options o;
  instance_options(&o);
  bri_jobs_store *a = open_with(&o);
  o.instance = "brid-b";
  bri_jobs_store *b = open_with(&o);
  bri_error err;
  int64_t j = enqueue(a, add_table(a, tmp), BRI_JOB_COMPACT, 0, 0);
  ck_assert_int_eq(claim(a), j);
  fake_table f = {0};
  bri_jobs_recovery_ops ops = {.is_referenced = cb_is_referenced, .remove = cb_remove, .user = &f};
  bri_jobs_recovery_report rep;
  fake_now = T0 + 29000;
  ck_assert_msg(bri_jobs_recover(b, &ops, &rep, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(rep.interrupted, 0); /* a's lease holds */
  fake_now = T0 + 30001;
  ck_assert_msg(bri_jobs_recover(b, &ops, &rep, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(rep.interrupted, 1);
  ck_assert_uint_eq(rep.requeued, 1);
  ck_assert_int_eq(bri_jobs_set_commit_intent(a, j, "uuid-a", 1, NULL, 0, &err), BRI_ELEASE);
  bri_jobs_outcome oc = {.state = BRI_JOB_SUCCEEDED};
  ck_assert_int_eq(bri_jobs_finish(a, j, &oc, &err), BRI_ELEASE);
  /* b runs it now */
  bri_jobs_job job;
  int got = 0;
  ck_assert_int_eq(bri_jobs_claim_next(b, &job, &got, &err), 0);
  ck_assert_int_eq(got, 0); /* backoff first */
  fake_now = T0 + 40000;
  ck_assert_int_eq(bri_jobs_claim_next(b, &job, &got, &err), 0);
  ck_assert_int_eq(got, 1);
  ck_assert_str_eq(job.instance, "brid-b");
  ck_assert_int_eq(job.attempts, 2);
  bri_jobs_job_clear(&job);
  bri_jobs_close(a);
  bri_jobs_close(b);
}
END_TEST

/* An instance of this machine whose process is gone is buried when
 * another registers there: marked stopped, its running job's lease ended,
 * so that recovery takes the job at once. From another locality it is
 * not. */
START_TEST(dead_instances_of_this_machine_are_buried) {
  char here[160];
  bri_jobs_locality(here, sizeof here);
  ck_assert_msg(here[0], "no boot id or pid namespace in /proc");
  pid_t gone = fork();
  if (gone == 0) _exit(0);
  waitpid(gone, NULL, 0);
  bri_jobs_options o;
  instance_options(&o);
  bri_jobs_store *a = open_with(&o);
  bri_error err;
  size_t dead = 9;
  ck_assert_msg(bri_jobs_instance_register(a, "host-a", gone, here, "0.1.0", &dead, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(dead, 0);
  int64_t j = enqueue(a, add_table(a, tmp), BRI_JOB_COMPACT, 0, 0);
  ck_assert_int_eq(claim(a), j);
  bri_jobs_close(a); /* its process is gone (the pid it registered) */
  o.instance = "brid-b";
  bri_jobs_store *b = open_with(&o);
  /* from another locality: nothing happens */
  ck_assert_int_eq(bri_jobs_instance_register(b, "host-a", getpid(), "elsewhere", "0.1.0", &dead, &err), 0);
  ck_assert_uint_eq(dead, 0);
  bri_jobs_job job = get_job(b, j);
  ck_assert_int_eq(job.lease_expires_at, T0 + 30000);
  bri_jobs_job_clear(&job);
  ck_assert_int_eq(bri_jobs_instance_register(b, "host-a", getpid(), here, "0.1.0", &dead, &err), 0);
  ck_assert_uint_eq(dead, 1);
  job = get_job(b, j);
  ck_assert_int_eq(job.lease_expires_at, 0);
  bri_jobs_job_clear(&job);
  fake_table f = {0};
  bri_jobs_recovery_ops ops = {.is_referenced = cb_is_referenced, .remove = cb_remove, .user = &f};
  bri_jobs_recovery_report rep;
  ck_assert_msg(bri_jobs_recover(b, &ops, &rep, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(rep.requeued, 1);
  bri_jobs_instance_info *in;
  size_t n;
  ck_assert_int_eq(bri_jobs_instances(b, &in, &n, &err), 0);
  ck_assert_uint_eq(n, 2);
  ck_assert_str_eq(in[0].name, "brid-a");
  ck_assert_int_eq(in[0].stopped_at, T0);
  bri_jobs_instances_free(in, n);
  bri_jobs_close(b);
}
END_TEST

START_TEST(recovery_stops_on_callback_failure) {
  int64_t j = run_crash(1);
  char *a = bri_path_join(tmp, "a.lance"), *b = bri_path_join(tmp, "b.lance");
  bri_jobs_store *s = open_store();
  bri_error err;
  fake_table f = {.fail_on = a}; /* uuid-1 did not land */
  bri_jobs_recovery_ops ops = {.is_referenced = cb_is_referenced, .remove = cb_remove, .commit_landed = cb_commit_landed, .user = &f};
  bri_jobs_recovery_report rep;
  ck_assert_int_eq(bri_jobs_recover(s, &ops, &rep, &err), BRI_EIO);
  char *want = bri_strdupf("%s: recovering compact job %lld of %s: %s: reading manifests of %s: "
                           "disk on fire",
                           dbpath, (long long)j, tmp, a, tmp);
  ck_assert_str_eq(err.msg, want);
  free(want);
  ck_assert_uint_eq(rep.stuck, 1);
  ck_assert(file_exists(a) && !file_exists(b)); /* b (newer) went before a failed */
  bri_jobs_job job = get_job(s, j);
  ck_assert_int_eq(job.state, BRI_JOB_RUNNING); /* stays blocked */
  bri_jobs_job_clear(&job);
  ck_assert_int_eq(claim(s), 0);
  bri_jobs_table tb;
  ck_assert_int_eq(bri_jobs_table_find(s, tmp, &tb, &err), 0);
  ck_assert_msg(strstr(tb.last_error, "disk on fire"), "%s", tb.last_error);
  bri_jobs_table_clear(&tb);
  bri_jobs_output *o;
  size_t n;
  ck_assert_int_eq(bri_jobs_journal_list(s, j, &o, &n, &err), 0);
  ck_assert_uint_eq(n, 1); /* only a's entry is left */
  ck_assert_str_eq(o[0].path, a);
  bri_jobs_journal_free(o, n);
  /* fixed: the retry finishes the job */
  f.fail_on = NULL;
  ck_assert_msg(bri_jobs_recover(s, &ops, &rep, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(rep.requeued, 1);
  ck_assert(!file_exists(a));
  job = get_job(s, j);
  ck_assert_int_eq(job.state, BRI_JOB_QUEUED);
  bri_jobs_job_clear(&job);
  /* missing callbacks */
  bri_jobs_recovery_ops none = {0};
  ck_assert_int_eq(bri_jobs_recover(s, &none, NULL, &err), BRI_EINVAL);
  bri_jobs_close(s);
  free(a), free(b);
}
END_TEST

/* A remove callback that moves the job under recovery meanwhile (as if
 * something else had taken it up again) before removing the file. */
static int cb_remove_and_move(void *user, const bri_jobs_job *job, const bri_jobs_output *out,
                              bri_error *err) {
  char sql[96], msg[256];
  snprintf(sql, sizeof sql, "UPDATE jobs SET attempts = attempts + 1 WHERE id = %lld",
           (long long)job->id);
  ck_assert_msg(raw_exec(sql, msg, sizeof msg) == SQLITE_OK, "%s", msg);
  return cb_remove(user, job, out, err);
}

START_TEST(recovery_leaves_a_job_moved_meanwhile) {
  bri_jobs_store *s = open_store();
  bri_error err;
  int64_t j = enqueue(s, add_table(s, "/t/a"), BRI_JOB_COMPACT, 0, 0);
  ck_assert_int_eq(claim(s), j);
  char *x = bri_path_join(tmp, "x.lance");
  ck_assert_int_eq(bri_jobs_journal_add(s, j, x, "data", &err), 0);
  bri_jobs_close(s);
  fake_now += 1000; /* the dead session's lease runs out */

  s = open_store();
  fake_table f = {0};
  bri_jobs_recovery_ops ops = {.is_referenced = cb_is_referenced, .remove = cb_remove_and_move, .commit_landed = NULL, .user = &f};
  bri_jobs_recovery_report rep;
  ck_assert_msg(bri_jobs_recover(s, &ops, &rep, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(rep.interrupted, 1);
  ck_assert_uint_eq(rep.files_removed, 1);
  ck_assert_uint_eq(rep.succeeded + rep.requeued + rep.failed + rep.cancelled + rep.stuck, 0);
  /* settling wrote nothing, and its transaction ended: the store takes the
   * next write */
  ck_assert_msg(bri_jobs_cancel(s, j, NULL, &err) == 0, "%s", err.msg);
  bri_jobs_job job = get_job(s, j);
  ck_assert_int_eq(job.state, BRI_JOB_RUNNING);
  ck_assert_int_eq(job.attempts, 2);
  ck_assert(job.cancel_requested);
  bri_jobs_job_clear(&job);
  bri_jobs_close(s);
  free(x);
}
END_TEST

START_TEST(recovery_edge_cases) {
  /* max attempts reached by the crash: failed, not requeued */
  bri_jobs_options o;
  test_options(&o);
  o.max_attempts = 1;
  bri_jobs_store *s = open_with(&o);
  bri_error err;
  int64_t t = add_table(s, "/t/a"), u = add_table(s, "/t/b"), v = add_table(s, "/t/c");
  int64_t once = enqueue(s, t, BRI_JOB_COMPACT, 0, 0);
  ck_assert_int_eq(claim(s), once);
  /* a cancel was requested before the crash */
  int64_t cancelled = enqueue(s, u, BRI_JOB_CLEANUP, 0, 0);
  ck_assert_int_eq(claim(s), cancelled);
  ck_assert_int_eq(bri_jobs_cancel(s, cancelled, NULL, &err), 0);
  /* a failed job whose worker could not remove its file */
  int64_t leftover = enqueue(s, v, BRI_JOB_MATERIALIZE, 0, 0);
  ck_assert_int_eq(claim(s), leftover);
  char *x = bri_path_join(tmp, "x.lance");
  ck_assert_int_eq(bri_jobs_journal_add(s, leftover, x, "link", &err), 0);
  touch(x);
  finish(s, leftover, BRI_JOB_FAILED, "EIO while linking");
  bri_jobs_close(s);
  fake_now += 1000; /* the dead session's leases run out */

  s = open_with(&o);
  fake_table f = {0};
  bri_jobs_recovery_ops ops = {.is_referenced = cb_is_referenced, .remove = cb_remove, .commit_landed = NULL, .user = &f};
  bri_jobs_recovery_report rep;
  ck_assert_msg(bri_jobs_recover(s, &ops, &rep, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(rep.interrupted, 2);
  ck_assert_uint_eq(rep.failed, 1);
  ck_assert_uint_eq(rep.cancelled, 1);
  ck_assert_uint_eq(rep.leftovers, 1);
  ck_assert_uint_eq(rep.files_removed, 1);
  ck_assert(!file_exists(x));
  bri_jobs_job j = get_job(s, once);
  ck_assert_int_eq(j.state, BRI_JOB_FAILED);
  ck_assert_msg(strstr(j.error, "gave up after 1 attempts: interrupted"), "%s", j.error);
  bri_jobs_job_clear(&j);
  j = get_job(s, cancelled);
  ck_assert_int_eq(j.state, BRI_JOB_CANCELLED);
  bri_jobs_job_clear(&j);
  j = get_job(s, leftover);
  ck_assert_int_eq(j.state, BRI_JOB_FAILED);
  ck_assert_str_eq(j.error, "EIO while linking");
  bri_jobs_job_clear(&j);
  bri_jobs_close(s);
  free(x);
}
END_TEST

/* ---- concurrency ------------------------------------------------------- */

#define CT_TABLES 12
#define CT_THREADS 8
#define CT_JOBS (CT_TABLES * BRI_JOB_NKINDS)

typedef struct conc {
  bri_jobs_store *s;
  int64_t first_id;
  atomic_int running[CT_TABLES + 1]; /* by table id */
  atomic_int claims[CT_JOBS + 1];    /* by job id - first_id */
  atomic_int done;
  atomic_int violations;
} conc;

static void *conc_worker(void *arg) {
  conc *c = arg;
  bri_error err;
  while (atomic_load(&c->done) < CT_JOBS) {
    bri_jobs_job j;
    int got;
    if (bri_jobs_claim_next(c->s, &j, &got, &err)) {
      atomic_fetch_add(&c->violations, 1000);
      break;
    }
    if (!got) {
      usleep(100);
      continue;
    }
    if (atomic_fetch_add(&c->running[j.table_id], 1) != 0) atomic_fetch_add(&c->violations, 1);
    int k = atomic_fetch_add(&c->claims[j.id - c->first_id], 1);
    usleep(300);
    atomic_fetch_sub(&c->running[j.table_id], 1);
    if (k == 0 && (j.id % 2) == 0) { /* even jobs fail once with a conflict */
      bri_job_state ns;
      if (bri_jobs_retry_later(c->s, j.id, "conflict", &ns, NULL, &err) || ns != BRI_JOB_QUEUED)
        atomic_fetch_add(&c->violations, 1000);
    } else {
      bri_jobs_outcome o = {.state = BRI_JOB_SUCCEEDED, .bytes_written = 1};
      if (bri_jobs_finish(c->s, j.id, &o, &err)) atomic_fetch_add(&c->violations, 1000);
      atomic_fetch_add(&c->done, 1);
    }
    bri_jobs_job_clear(&j);
  }
  return NULL;
}

START_TEST(concurrent_claims_never_double_claim) {
  bri_jobs_options o;
  bri_jobs_options_init(&o); /* real clock */
  o.retry_base_ms = 0;       /* retried jobs are due again at once */
  o.retry_max_ms = 0;
  bri_jobs_store *s = open_with(&o);
  static conc c;
  memset(&c, 0, sizeof c);
  c.s = s;
  char root[32];
  int64_t tid[CT_TABLES];
  for (int i = 0; i < CT_TABLES; i++) {
    snprintf(root, sizeof root, "/t/%d", i);
    tid[i] = add_table(s, root);
    ck_assert_int_eq(tid[i], i + 1);
  }
  for (int i = 0; i < CT_TABLES; i++)
    for (int k = 1; k <= BRI_JOB_NKINDS; k++) {
      int64_t id = enqueue(s, tid[i], (bri_job_kind)k, k, 0);
      if (i == 0 && k == 1) c.first_id = id;
      ck_assert_int_lt(id - c.first_id, CT_JOBS);
    }
  pthread_t th[CT_THREADS];
  for (int i = 0; i < CT_THREADS; i++)
    ck_assert_int_eq(pthread_create(&th[i], NULL, conc_worker, &c), 0);
  for (int i = 0; i < CT_THREADS; i++) pthread_join(th[i], NULL);
  ck_assert_int_eq(atomic_load(&c.violations), 0);
  ck_assert_int_eq(atomic_load(&c.done), CT_JOBS);
  for (int i = 0; i < CT_JOBS; i++) {
    int64_t id = c.first_id + i;
    ck_assert_int_eq(atomic_load(&c.claims[i]), id % 2 == 0 ? 2 : 1);
    bri_jobs_job j = get_job(s, id);
    ck_assert_int_eq(j.state, BRI_JOB_SUCCEEDED);
    ck_assert_int_eq(j.attempts, id % 2 == 0 ? 2 : 1);
    bri_jobs_job_clear(&j);
  }
  uint64_t counts[BRI_JOB_NSTATES + 1];
  bri_error err;
  ck_assert_int_eq(bri_jobs_count_states(s, 0, counts, &err), 0);
  ck_assert_uint_eq(counts[BRI_JOB_SUCCEEDED], CT_JOBS);
  ck_assert_uint_eq(counts[0], CT_JOBS);
  bri_jobs_close(s);
}
END_TEST

/* ---- history ----------------------------------------------------------- */

START_TEST(history_lists_counts_and_prunes) {
  bri_jobs_store *s = open_store_held();
  bri_error err;
  int64_t t = add_table(s, "/t/a"), u = add_table(s, "/t/b");
  int64_t ids[6];
  /* t: compact succeeded at +1000, cleanup failed at +2000, verify queued;
   * u: compact succeeded at +3000 (with a journal left), cleanup cancelled, verify running */
  ids[0] = enqueue(s, t, BRI_JOB_COMPACT, 0, 0);
  ids[1] = enqueue(s, t, BRI_JOB_CLEANUP, 0, 0);
  ids[2] = enqueue(s, t, BRI_JOB_VERIFY, 0, 0);
  ids[3] = enqueue(s, u, BRI_JOB_COMPACT, 0, 0);
  ids[4] = enqueue(s, u, BRI_JOB_CLEANUP, 0, 0);
  ids[5] = enqueue(s, u, BRI_JOB_VERIFY, 0, 0);
  ck_assert_int_eq(bri_jobs_cancel(s, ids[4], NULL, &err), 0);
  ck_assert_int_eq(bri_jobs_cancel(s, ids[2], NULL, &err), 0);
  ids[2] = enqueue(s, t, BRI_JOB_VERIFY, 0, T0 + 999999); /* the queued one */
  ck_assert_int_eq(claim(s), ids[0]);
  ck_assert_int_eq(claim(s), ids[3]);
  fake_now = T0 + 1000;
  finish(s, ids[0], BRI_JOB_SUCCEEDED, NULL);
  ck_assert_int_eq(claim(s), ids[1]);
  fake_now = T0 + 2000;
  finish(s, ids[1], BRI_JOB_FAILED, "no");
  ck_assert_int_eq(bri_jobs_journal_add(s, ids[3], "/t/b/data/y.lance", "data", &err), 0);
  fake_now = T0 + 3000;
  finish(s, ids[3], BRI_JOB_SUCCEEDED, NULL);
  ck_assert_int_eq(claim(s), ids[5]);

  uint64_t counts[BRI_JOB_NSTATES + 1];
  ck_assert_int_eq(bri_jobs_count_states(s, 0, counts, &err), 0);
  ck_assert_uint_eq(counts[0], 7);
  ck_assert_uint_eq(counts[BRI_JOB_QUEUED], 1);
  ck_assert_uint_eq(counts[BRI_JOB_RUNNING], 1);
  ck_assert_uint_eq(counts[BRI_JOB_SUCCEEDED], 2);
  ck_assert_uint_eq(counts[BRI_JOB_FAILED], 1);
  ck_assert_uint_eq(counts[BRI_JOB_CANCELLED], 2);
  ck_assert_int_eq(bri_jobs_count_states(s, t, counts, &err), 0);
  ck_assert_uint_eq(counts[0], 4);

  bri_jobs_job *v;
  size_t n;
  ck_assert_int_eq(bri_jobs_list(s, NULL, &v, &n, &err), 0);
  ck_assert_uint_eq(n, 7);
  for (size_t i = 1; i < n; i++) ck_assert_int_gt(v[i - 1].id, v[i].id); /* newest first */
  bri_jobs_list_free(v, n);
  bri_jobs_filter f = {.table_id = u,
                       .state_mask = (1u << BRI_JOB_SUCCEEDED) | (1u << BRI_JOB_RUNNING)};
  ck_assert_int_eq(bri_jobs_list(s, &f, &v, &n, &err), 0);
  ck_assert_uint_eq(n, 2);
  ck_assert_int_eq(v[0].id, ids[5]);
  ck_assert_int_eq(v[1].id, ids[3]);
  bri_jobs_list_free(v, n);
  f = (bri_jobs_filter){.kind = BRI_JOB_CLEANUP};
  ck_assert_int_eq(bri_jobs_list(s, &f, &v, &n, &err), 0);
  ck_assert_uint_eq(n, 2);
  ck_assert_int_eq(v[0].id, ids[4]);
  ck_assert_int_eq(v[1].id, ids[1]);
  bri_jobs_list_free(v, n);
  f = (bri_jobs_filter){.limit = 3};
  ck_assert_int_eq(bri_jobs_list(s, &f, &v, &n, &err), 0);
  ck_assert_uint_eq(n, 3);
  int64_t last = v[2].id;
  bri_jobs_list_free(v, n);
  f.before_id = last; /* next page */
  ck_assert_int_eq(bri_jobs_list(s, &f, &v, &n, &err), 0);
  ck_assert_uint_eq(n, 3);
  ck_assert_int_lt(v[0].id, last);
  bri_jobs_list_free(v, n);

  /* prune: by age (finished before +1500: ids[0] and the two cancelled at T0) */
  fake_now = T0 + 5000;
  size_t removed;
  ck_assert_int_eq(bri_jobs_prune(s, 3500, 0, &removed, &err), 0);
  ck_assert_uint_eq(removed, 3);
  bri_jobs_job j;
  ck_assert_int_eq(bri_jobs_get(s, ids[0], &j, &err), BRI_ENOTFOUND);
  ck_assert_int_eq(bri_jobs_get(s, ids[4], &j, &err), BRI_ENOTFOUND);
  /* by rows: keep the newest finished one (ids[3], which has a journal anyway) */
  ck_assert_int_eq(bri_jobs_prune(s, 0, 1, &removed, &err), 0);
  ck_assert_uint_eq(removed, 1); /* ids[1] */
  ck_assert_int_eq(bri_jobs_prune(s, 0, 0, &removed, &err), 0); /* no limits: nothing */
  ck_assert_uint_eq(removed, 0);
  ck_assert_int_eq(bri_jobs_journal_clear(s, ids[3], &err), 0);
  ck_assert_int_eq(bri_jobs_prune(s, 1, 0, &removed, &err), 0);
  ck_assert_uint_eq(removed, 1); /* ids[3] once its journal is gone */
  ck_assert_int_eq(bri_jobs_count_states(s, 0, counts, &err), 0);
  ck_assert_uint_eq(counts[0], 2); /* the queued and the running job */
  /* counters survive pruning */
  bri_jobs_stat *st;
  ck_assert_int_eq(bri_jobs_stats(s, &st, &n, &err), 0);
  uint64_t succeeded = 0;
  for (size_t i = 0; i < n; i++) succeeded += st[i].succeeded;
  ck_assert_uint_eq(succeeded, 2);
  bri_jobs_stats_free(st, n);
  ck_assert_int_eq(raw_int("SELECT count(*) FROM job_attempts"), 1);
  bri_jobs_close(s);
}
END_TEST

/* A read connection (bri_jobs_options.read_only) beside the store: it sees
 * every commit of the store at once, answers while the store's connection
 * is inside a write transaction (a worker's commit), and the database
 * refuses its writes; it cannot stand in for opening the store. */
START_TEST(read_connection_reads_beside_the_store) {
  bri_jobs_options o;
  test_options(&o);
  o.read_only = 1;
  bri_error err = {0};
  bri_jobs_store *r = NULL;
  if (!pg_db) { /* SQLite: a store nobody created yet */
    ck_assert_int_ne(bri_jobs_open(dbpath, &o, &r, &err), 0);
    ck_assert_msg(strstr(err.msg, dbpath), "got: %s", err.msg);
  }
  bri_jobs_store *s = open_store();
  r = open_with(&o);
  int64_t t = add_table(s, "/data/a.lance");
  int64_t a = enqueue(s, t, BRI_JOB_COMPACT, 0, 0);
  uint64_t counts[BRI_JOB_NSTATES + 1];
  ck_assert_int_eq(bri_jobs_count_states(r, 0, counts, &err), 0);
  ck_assert_int_eq(counts[BRI_JOB_QUEUED], 1);
  ck_assert_int_eq(claim(s), a);
  /* the store's connection holds a write transaction open, as a worker's
   * journal write does; the reader still answers, with the last commit */
  bri_jobs_job inside, seen;
  ck_assert_int_eq(jobs_job_begin(s, a, NULL, "holding", &inside, &err), 0);
  ck_assert_msg(bri_jobs_get(r, a, &seen, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(seen.state, BRI_JOB_RUNNING);
  bri_jobs_job_clear(&seen);
  ck_assert_int_eq(bri_jobs_count_states(r, 0, counts, &err), 0);
  ck_assert_int_eq(counts[BRI_JOB_RUNNING], 1);
  ck_assert_int_eq(jobs_job_end(s, 0, 0, "holding", &inside, &err), 0);
  /* writes through the reader are refused by the database */
  int64_t id;
  ck_assert_int_ne(bri_jobs_enqueue(r, t, BRI_JOB_CLEANUP, 0, NULL, 0, &id, NULL, &err), 0);
  ck_assert_msg(strstr(err.msg, "read") || strstr(err.msg, "READ"), "got: %s", err.msg);
  ck_assert_int_eq(bri_jobs_count_states(s, 0, counts, &err), 0);
  ck_assert_int_eq(counts[BRI_JOB_QUEUED], 0);
  if (pg_db) {
    /* the server drops the reader's session (as a restart does): the next
     * read reconnects at once, and the new session is read-only too */
    ck_assert_int_eq(raw_exec("DO $$ BEGIN PERFORM pg_terminate_backend(pid) FROM pg_stat_activity "
                              "WHERE datname = current_database() AND pid <> pg_backend_pid(); END $$",
                              NULL, 0),
                     0);
    ck_assert_msg(bri_jobs_count_states(r, 0, counts, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(counts[BRI_JOB_RUNNING], 1);
    ck_assert_int_ne(bri_jobs_enqueue(r, t, BRI_JOB_CLEANUP, 0, NULL, 0, &id, NULL, &err), 0);
    ck_assert_msg(strstr(err.msg, "read-only"), "got: %s", err.msg);
  }
  bri_jobs_close(r);
  bri_jobs_close(s);
}
END_TEST

START_TEST(names_and_parsing) {
  bri_error err;
  bri_job_kind k;
  bri_job_state st;
  ck_assert_str_eq(bri_job_kind_name(BRI_JOB_MATERIALIZE), "materialize");
  ck_assert_str_eq(bri_job_kind_name((bri_job_kind)0), "?");
  ck_assert_str_eq(bri_job_state_name(BRI_JOB_CANCELLED), "cancelled");
  ck_assert_int_eq(bri_job_kind_parse("verify", &k, &err), 0);
  ck_assert_int_eq(k, BRI_JOB_VERIFY);
  ck_assert_int_eq(bri_job_kind_parse("vacuum", &k, &err), BRI_EINVAL);
  ck_assert_str_eq(err.msg,
                   "unknown job kind 'vacuum' (expected compact, cleanup, materialize or verify)");
  ck_assert_int_eq(bri_job_state_parse("failed", &st, &err), 0);
  ck_assert_int_eq(st, BRI_JOB_FAILED);
  ck_assert_int_eq(bri_job_state_parse("done", &st, &err), BRI_EINVAL);
}
END_TEST

START_TEST(sql_failures_name_file_and_step) {
  bri_jobs_store *s = open_store();
  bri_error err;
  int64_t t = add_table(s, "/t/a");
  int64_t j = enqueue(s, t, BRI_JOB_COMPACT, 0, 0);
  ck_assert_int_eq(claim(s), j);
  /* Break the schema under the store's feet. */
  ck_assert_int_eq(sqlite3_exec(jobs_sqlite_db(s), "DROP TABLE job_stats", NULL, NULL, NULL), SQLITE_OK);
  ck_assert_int_eq(bri_jobs_finish(s, j, &(bri_jobs_outcome){.state = BRI_JOB_SUCCEEDED}, &err),
                   BRI_EIO);
  char *want = bri_strdupf("%s: updating job statistics (INSERT INTO job_stats (table_id, kind, "
                           "succeeded,",
                           dbpath);
  ck_assert_msg(strstr(err.msg, want) == err.msg, "got: %s", err.msg);
  ck_assert_msg(strstr(err.msg, "no such table: job_stats"), "got: %s", err.msg);
  free(want);
  /* the transaction was rolled back: still running */
  bri_jobs_job job = get_job(s, j);
  ck_assert_int_eq(job.state, BRI_JOB_RUNNING);
  bri_jobs_job_clear(&job);
  bri_jobs_close(s);
  /* and a reopen refuses the damaged schema */
  bri_jobs_store *s2 = NULL;
  ck_assert_int_eq(bri_jobs_open(dbpath, NULL, &s2, &err), BRI_ECORRUPT);
  ck_assert_msg(strstr(err.msg, "damaged job store: table 'job_stats' is missing"), "got: %s",
                err.msg);
}
END_TEST


/* ---- PostgreSQL only --------------------------------------------------- */

START_TEST(pg_schema_created_and_versioned) {
  bri_jobs_store *s = open_store();
  ck_assert_str_eq(bri_jobs_backend(s), "PostgreSQL");
  /* the store's session names itself, and its URI's settings win */
  ck_assert_int_eq(raw_int("SELECT count(*) FROM pg_stat_activity WHERE datname = "
                           "current_database() AND application_name = 'brid'"),
                   1);
  bri_jobs_close(s);
  char *named = bri_strdupf("%s&application_name=brid-a", dbpath);
  bri_error err;
  ck_assert_msg(bri_jobs_open(named, NULL, &s, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(raw_int("SELECT count(*) FROM pg_stat_activity WHERE datname = "
                           "current_database() AND application_name = 'brid-a'"),
                   1);
  bri_jobs_close(s);
  free(named);
  ck_assert_int_eq(raw_int("SELECT version FROM brid_schema WHERE application = 'brid'"),
                   BRI_JOBS_SCHEMA_VERSION);
  ck_assert_int_eq(raw_int("SELECT count(*) FROM pg_indexes WHERE indexname IN "
                           "('jobs_one_running_per_table', 'jobs_one_queued_per_request')"),
                   2);
  s = open_store(); /* a reopen finds it current */
  bri_jobs_close(s);
  ck_assert_int_eq(raw_int("SELECT count(*) FROM brid_schema"), 1);
}
END_TEST

START_TEST(pg_newer_version_refused) {
  bri_jobs_close(open_store());
  char msg[256];
  ck_assert_msg(raw_exec("UPDATE brid_schema SET version = 99", msg, sizeof msg) == 0, "%s", msg);
  bri_jobs_store *s = NULL;
  bri_error err;
  ck_assert_int_eq(bri_jobs_open(dbpath, NULL, &s, &err), BRI_EUNSUPPORTED);
  ck_assert_msg(strstr(err.msg, "job store schema version 99 is newer than this brid supports"),
                "got: %s", err.msg);
  ck_assert_ptr_null(s);
}
END_TEST

START_TEST(pg_foreign_database_refused) {
  char msg[256];
  ck_assert_msg(raw_exec("CREATE TABLE invoices (id int)", msg, sizeof msg) == 0, "%s", msg);
  bri_jobs_store *s = NULL;
  bri_error err;
  ck_assert_int_eq(bri_jobs_open(dbpath, NULL, &s, &err), BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "not a brid job store: the database has 1 tables"), "got: %s",
                err.msg);
  ck_assert_int_eq(raw_int("SELECT count(*) FROM pg_tables WHERE tablename = 'jobs'"), 0);
}
END_TEST

START_TEST(pg_inline_password_refused) {
  bri_jobs_store *s = NULL;
  bri_error err;
  char *uri = bri_strdupf("%s&password=hunter2", dbpath);
  ck_assert_int_eq(bri_jobs_open(uri, NULL, &s, &err), BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "holds a password; give it with store_password_file"), "got: %s",
                err.msg);
  ck_assert_msg(!strstr(err.msg, "hunter2"), "the message shows the password: %s", err.msg);
  free(uri);
  ck_assert_int_eq(bri_jobs_open("postgresql://brid:hunter2@db.example/brid", NULL, &s, &err),
                   BRI_EINVAL);
  ck_assert_msg(!strstr(err.msg, "hunter2") && strstr(err.msg, "holds a password"), "got: %s",
                err.msg);
  ck_assert_int_eq(bri_jobs_open("host=db.example password=hunter2 dbname=brid", NULL, &s, &err),
                   BRI_EINVAL);
  ck_assert_msg(!strstr(err.msg, "hunter2"), "got: %s", err.msg);
  ck_assert_ptr_null(s);
  /* the backend choice: a path with '=' after a '/' is a file */
  char *file = bri_strdupf("%s/a=b.db", tmp);
  ck_assert_int_eq(bri_jobs_open(file, NULL, &s, &err), 0);
  ck_assert_str_eq(bri_jobs_backend(s), "SQLite");
  bri_jobs_close(s);
  free(file);
}
END_TEST

START_TEST(pg_conninfo_opens_the_same_store) {
  bri_jobs_store *s = open_store();
  int64_t t = add_table(s, "/t/a");
  bri_jobs_close(s);
  /* the same database as a key=value conninfo */
  PQconninfoOption *opts = PQconninfoParse(dbpath, NULL);
  ck_assert_ptr_nonnull(opts);
  const char *host = NULL, *port = NULL;
  for (PQconninfoOption *o = opts; o->keyword; o++) {
    if (!strcmp(o->keyword, "host")) host = o->val;
    if (!strcmp(o->keyword, "port")) port = o->val;
  }
  char *conninfo = bri_strdupf("host=%s port=%s user=postgres dbname=%s", host, port, pg_db);
  PQconninfoFree(opts);
  bri_error err;
  ck_assert_msg(bri_jobs_open(conninfo, NULL, &s, &err) == 0, "%s", err.msg);
  ck_assert_str_eq(bri_jobs_backend(s), "PostgreSQL");
  bri_jobs_table tb;
  ck_assert_msg(bri_jobs_table_find(s, "/t/a", &tb, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(tb.id, t);
  bri_jobs_table_clear(&tb);
  bri_jobs_close(s);
  free(conninfo);
}
END_TEST

static int64_t elapsed_ms(const struct timeval *a) {
  struct timeval b;
  gettimeofday(&b, NULL);
  return (int64_t)(b.tv_sec - a->tv_sec) * 1000 + (b.tv_usec - a->tv_usec) / 1000;
}

START_TEST(pg_claim_skips_rows_another_instance_locked) {
  bri_jobs_store *a = open_store(), *b = open_store();
  int64_t t1 = add_table(a, "/t/1"), t2 = add_table(a, "/t/2");
  int64_t j1 = enqueue(a, t1, BRI_JOB_COMPACT, 9, 0);
  int64_t j2 = enqueue(a, t2, BRI_JOB_COMPACT, 0, 0);
  /* another instance is in the middle of claiming j1: its row is locked */
  PGconn *c = PQconnectdb(dbpath);
  ck_assert_int_eq(PQstatus(c), CONNECTION_OK);
  PGresult *r = PQexec(c, "BEGIN");
  PQclear(r);
  char sql[96];
  snprintf(sql, sizeof sql, "SELECT id FROM jobs WHERE id = %lld FOR UPDATE", (long long)j1);
  r = PQexec(c, sql);
  ck_assert_int_eq(PQresultStatus(r), PGRES_TUPLES_OK);
  PQclear(r);
  struct timeval t0;
  gettimeofday(&t0, NULL);
  ck_assert_int_eq(claim(b), j2); /* skips j1, does not wait for it */
  ck_assert_int_lt(elapsed_ms(&t0), 1000);
  ck_assert_int_eq(claim(b), 0);
  r = PQexec(c, "COMMIT");
  PQclear(r);
  PQfinish(c);
  ck_assert_int_eq(claim(a), j1);
  bri_jobs_job j = get_job(b, j1);
  ck_assert_str_eq(j.owner, bri_jobs_session(a));
  bri_jobs_job_clear(&j);
  bri_jobs_close(a);
  bri_jobs_close(b);
}
END_TEST

#define TI_TABLES 6
#define TI_ROUNDS 4

typedef struct two_instances {
  bri_jobs_store *s[2];
  atomic_int claims[TI_TABLES * TI_ROUNDS + 1]; /* by job id */
  atomic_int running[TI_TABLES + 1];            /* by table id */
  atomic_int done;
  atomic_int violations;
} two_instances;

static void *ti_worker(void *arg) {
  two_instances *ti = ((void **)arg)[0];
  bri_jobs_store *s = ((void **)arg)[1];
  bri_error err;
  while (atomic_load(&ti->done) < TI_TABLES * TI_ROUNDS) {
    bri_jobs_job j;
    int got;
    if (bri_jobs_claim_next(s, &j, &got, &err)) {
      fprintf(stderr, "claim: %s\n", err.msg);
      atomic_fetch_add(&ti->violations, 1000);
      break;
    }
    if (!got) {
      usleep(200);
      continue;
    }
    if (atomic_fetch_add(&ti->running[j.table_id], 1) != 0) atomic_fetch_add(&ti->violations, 1);
    atomic_fetch_add(&ti->claims[j.id], 1);
    usleep(500);
    atomic_fetch_sub(&ti->running[j.table_id], 1);
    bri_jobs_outcome o = {.state = BRI_JOB_SUCCEEDED};
    if (bri_jobs_finish(s, j.id, &o, &err)) {
      fprintf(stderr, "finish: %s\n", err.msg);
      atomic_fetch_add(&ti->violations, 1000);
    }
    atomic_fetch_add(&ti->done, 1);
    bri_jobs_job_clear(&j);
  }
  return NULL;
}

START_TEST(pg_two_instances_never_claim_one_job_twice) {
  bri_jobs_options o;
  bri_jobs_options_init(&o); /* real clock */
  static two_instances ti;
  memset(&ti, 0, sizeof ti);
  ti.s[0] = open_with(&o);
  ti.s[1] = open_with(&o);
  char root[32];
  for (int i = 1; i <= TI_TABLES; i++) {
    snprintf(root, sizeof root, "/t/%d", i);
    ck_assert_int_eq(add_table(ti.s[0], root), i);
  }
  /* each table: one job per kind (TI_ROUNDS kinds), all due */
  for (int k = 1; k <= TI_ROUNDS; k++)
    for (int i = 1; i <= TI_TABLES; i++) {
      int64_t id;
      bri_error err;
      ck_assert_int_eq(
          bri_jobs_enqueue(ti.s[k % 2], i, (bri_job_kind)k, 0, NULL, 0, &id, NULL, &err), 0);
    }
  pthread_t th[4];
  void *args[4][2];
  for (int i = 0; i < 4; i++) {
    args[i][0] = &ti;
    args[i][1] = ti.s[i % 2];
    ck_assert_int_eq(pthread_create(&th[i], NULL, ti_worker, args[i]), 0);
  }
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  ck_assert_int_eq(atomic_load(&ti.violations), 0);
  for (int id = 1; id <= TI_TABLES * TI_ROUNDS; id++)
    ck_assert_msg(atomic_load(&ti.claims[id]) == 1, "job %d claimed %d times", id,
                  atomic_load(&ti.claims[id]));
  uint64_t counts[BRI_JOB_NSTATES + 1];
  bri_error err;
  ck_assert_int_eq(bri_jobs_count_states(ti.s[1], 0, counts, &err), 0);
  ck_assert_uint_eq(counts[BRI_JOB_SUCCEEDED], TI_TABLES * TI_ROUNDS);
  bri_jobs_close(ti.s[0]);
  bri_jobs_close(ti.s[1]);
}
END_TEST

typedef struct claim_call {
  bri_jobs_store *s;
  int64_t id;
  int rc, got;
} claim_call;

static void *claim_thread(void *arg) {
  claim_call *c = arg;
  bri_jobs_job j;
  bri_error err;
  c->rc = bri_jobs_claim_next(c->s, &j, &c->got, &err);
  if (c->rc) fprintf(stderr, "claim: %s\n", err.msg);
  c->id = c->got ? j.id : 0;
  if (c->got) bri_jobs_job_clear(&j);
  return NULL;
}

START_TEST(pg_claim_race_on_one_table_picks_again) {
  bri_jobs_store *s = open_store();
  int64_t t = add_table(s, "/t/a"), u = add_table(s, "/t/b");
  int64_t j1 = enqueue(s, t, BRI_JOB_COMPACT, 9, 0);
  enqueue(s, t, BRI_JOB_CLEANUP, 8, 0);
  int64_t j3 = enqueue(s, u, BRI_JOB_COMPACT, 0, 0);
  /* another instance is claiming j1 of table a, not committed yet: this
   * one skips j1, takes j2 of the same table, meets the other's running
   * job on the index when it commits, and picks again: j3 */
  PGconn *c = PQconnectdb(dbpath);
  ck_assert_int_eq(PQstatus(c), CONNECTION_OK);
  PQclear(PQexec(c, "BEGIN"));
  char sql[160];
  snprintf(sql, sizeof sql,
           "UPDATE jobs SET state = 'running', owner = 'other', attempts = 1, started_at = 1 "
           "WHERE id = %lld",
           (long long)j1);
  PGresult *r = PQexec(c, sql);
  ck_assert_int_eq(PQresultStatus(r), PGRES_COMMAND_OK);
  PQclear(r);
  claim_call cc = {.s = s};
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, claim_thread, &cc), 0);
  usleep(300 * 1000);
  PQclear(PQexec(c, "COMMIT"));
  pthread_join(th, NULL);
  PQfinish(c);
  ck_assert_int_eq(cc.rc, 0);
  ck_assert_int_eq(cc.got, 1);
  ck_assert_int_eq(cc.id, j3);
  ck_assert_int_eq(raw_int("SELECT count(*) FROM jobs WHERE state = 'running'"), 2);
  bri_jobs_close(s);
}
END_TEST

typedef struct enqueue_call {
  bri_jobs_store *s;
  int64_t table, id;
  int rc, dup;
} enqueue_call;

static void *enqueue_thread(void *arg) {
  enqueue_call *e = arg;
  bri_error err;
  e->rc = bri_jobs_enqueue(e->s, e->table, BRI_JOB_COMPACT, 0, "{\"trigger\":\"b\"}", 0, &e->id,
                           &e->dup, &err);
  if (e->rc) fprintf(stderr, "enqueue: %s\n", err.msg);
  return NULL;
}

START_TEST(pg_enqueue_dedupes_against_another_instance) {
  bri_jobs_store *s = open_store();
  int64_t t = add_table(s, "/t/a");
  /* another instance queues the same request (another trigger) and has
   * not committed yet when this one looks */
  PGconn *c = PQconnectdb(dbpath);
  ck_assert_int_eq(PQstatus(c), CONNECTION_OK);
  PQclear(PQexec(c, "BEGIN"));
  PGresult *r = PQexec(c, "INSERT INTO jobs (table_id, kind, state, max_attempts, not_before, "
                          "created_at, params) VALUES (1, 'compact', 'queued', 1, 0, 0, "
                          "'{\"trigger\":\"a\"}') RETURNING id");
  ck_assert_int_eq(PQresultStatus(r), PGRES_TUPLES_OK);
  int64_t theirs = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
  PQclear(r);
  enqueue_call e = {.s = s, .table = t};
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, enqueue_thread, &e), 0);
  usleep(300 * 1000); /* the insert waits on the unique index */
  PQclear(PQexec(c, "COMMIT"));
  pthread_join(th, NULL);
  PQfinish(c);
  ck_assert_int_eq(e.rc, 0);
  ck_assert_int_eq(e.dup, 1);
  ck_assert_int_eq(e.id, theirs);
  ck_assert_int_eq(raw_int("SELECT count(*) FROM jobs"), 1);
  bri_jobs_close(s);
}
END_TEST

START_TEST(pg_sql_failures_name_store_step_and_sqlstate) {
  bri_jobs_store *s = open_store();
  bri_error err;
  int64_t t = add_table(s, "/t/a");
  int64_t j = enqueue(s, t, BRI_JOB_COMPACT, 0, 0);
  ck_assert_int_eq(claim(s), j);
  char msg[256];
  ck_assert_msg(raw_exec("DROP TABLE job_stats", msg, sizeof msg) == 0, "%s", msg);
  ck_assert_int_eq(bri_jobs_finish(s, j, &(bri_jobs_outcome){.state = BRI_JOB_SUCCEEDED}, &err),
                   BRI_EIO);
  char *want = bri_strdupf("%s: updating job statistics (INSERT INTO job_stats (table_id, kind, "
                           "succeeded,",
                           dbpath);
  ck_assert_msg(strstr(err.msg, want) == err.msg, "got: %s", err.msg);
  ck_assert_msg(strstr(err.msg, "relation \"job_stats\" does not exist (SQLSTATE 42P01)"),
                "got: %s", err.msg);
  free(want);
  bri_jobs_job job = get_job(s, j); /* rolled back: still running */
  ck_assert_int_eq(job.state, BRI_JOB_RUNNING);
  bri_jobs_job_clear(&job);
  bri_jobs_close(s);
  bri_jobs_store *s2 = NULL;
  ck_assert_int_eq(bri_jobs_open(dbpath, NULL, &s2, &err), BRI_ECORRUPT);
  ck_assert_msg(strstr(err.msg, "damaged job store: table 'job_stats' is missing"), "got: %s",
                err.msg);
}
END_TEST

START_TEST(pg_reconnects_after_the_connection_is_lost) {
  bri_jobs_store *s = open_store();
  int64_t t = add_table(s, "/t/a");
  char up_error[256];
  ck_assert_int_eq(bri_jobs_health(s, up_error, sizeof up_error), 1);
  ck_assert_str_eq(up_error, "");
  /* the server ends the store's session (as a restart or a failover does) */
  char *sql = bri_strdupf("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                          "WHERE datname = '%s'",
                          pg_db);
  PGconn *c = pg_admin();
  PGresult *r = PQexec(c, sql);
  ck_assert_int_eq(PQresultStatus(r), PGRES_TUPLES_OK);
  ck_assert_str_eq(PQgetvalue(r, 0, 0), "1");
  PQclear(r);
  PQfinish(c);
  free(sql);
  int64_t id;
  bri_error err;
  ck_assert_int_eq(bri_jobs_enqueue(s, t, BRI_JOB_COMPACT, 0, NULL, 0, &id, NULL, &err), BRI_EIO);
  ck_assert_msg(strstr(err.msg, "the PostgreSQL connection is lost"), "got: %s", err.msg);
  ck_assert_int_eq(bri_jobs_health(s, up_error, sizeof up_error), 0);
  ck_assert_msg(up_error[0] != '\0', "no last error");
  /* at once: no reconnect yet (back-off) */
  ck_assert_int_eq(bri_jobs_enqueue(s, t, BRI_JOB_COMPACT, 0, NULL, 0, &id, NULL, &err), BRI_EIO);
  ck_assert_msg(strstr(err.msg, "next reconnect attempt in"), "got: %s", err.msg);
  usleep(1100 * 1000);
  ck_assert_msg(bri_jobs_enqueue(s, t, BRI_JOB_COMPACT, 0, NULL, 0, &id, NULL, &err) == 0, "%s",
                err.msg);
  ck_assert_int_eq(bri_jobs_health(s, up_error, sizeof up_error), 1);
  ck_assert_int_eq(claim(s), id);
  bri_jobs_close(s);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("jobs");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, schema_created_and_reopened);
  tcase_add_test(tc, future_schema_version_refused);
  tcase_add_test(tc, schema_v1_migrated);
  tcase_add_test(tc, schema_v2_migrated);
  tcase_add_test(tc, unknown_kinds_wait);
  tcase_add_test(tc, foreign_sqlite_files_refused);
  tcase_add_test(tc, garbage_file_is_corrupt);
  tcase_add_test(tc, damaged_store_is_corrupt);
  tcase_add_test(tc, second_process_refused);
  tcase_add_test(tc, tables_state);
  tcase_add_test(tc, enqueue_dedupes_queued_jobs);
  tcase_add_test(tc, claim_order_priority_then_time);
  tcase_add_test(tc, one_running_job_per_table);
  tcase_add_test(tc, paused_tables_are_skipped);
  tcase_add_test(tc, retry_backoff_then_give_up);
  tcase_add_test(tc, retry_superseded_by_queued_job);
  tcase_add_test(tc, retry_not_superseded_by_other_request);
  tcase_add_test(tc, defer_undoes_the_claim);
  tcase_add_test(tc, cancellation);
  tcase_add_test(tc, finish_rules_and_counters);
  tcase_add_test(tc, journal_is_durable_and_survives_reopen);
  tcase_add_test(tc, recovery_after_crash_rolls_back_and_requeues);
  tcase_add_test(tc, recovery_finishes_a_landed_commit);
  tcase_add_test(tc, recovery_stops_on_callback_failure);
  tcase_add_test(tc, recovery_edge_cases);
  tcase_add_test(tc, recovery_leaves_a_job_moved_meanwhile);
  tcase_add_test(tc, leases_renew_fence_and_expire);
  tcase_add_test(tc, instances_register_heartbeat_and_stop);
  tcase_add_test(tc, dead_instances_of_this_machine_are_buried);
  tcase_add_test(tc, concurrent_claims_never_double_claim);
  tcase_add_test(tc, history_lists_counts_and_prunes);
  tcase_add_test(tc, read_connection_reads_beside_the_store);
  tcase_add_test(tc, names_and_parsing);
  tcase_add_test(tc, sql_failures_name_file_and_step);
  suite_add_tcase(s, tc);

  if (!getenv("BRI_TEST_PG") || !*getenv("BRI_TEST_PG")) {
    fprintf(stderr, "test_jobs: BRI_TEST_PG is unset: the PostgreSQL cases are SKIPPED "
                    "(scripts/run-tests.sh sets it)\n");
    return s;
  }
  TCase *pg = tcase_create("pg");
  tcase_set_timeout(pg, 120);
  tcase_add_checked_fixture(pg, setup_pg, teardown);
  /* the backend-neutral cases of "core" */
  tcase_add_test(pg, unknown_kinds_wait);
  tcase_add_test(pg, read_connection_reads_beside_the_store);
  tcase_add_test(pg, tables_state);
  tcase_add_test(pg, enqueue_dedupes_queued_jobs);
  tcase_add_test(pg, claim_order_priority_then_time);
  tcase_add_test(pg, one_running_job_per_table);
  tcase_add_test(pg, paused_tables_are_skipped);
  tcase_add_test(pg, retry_backoff_then_give_up);
  tcase_add_test(pg, retry_superseded_by_queued_job);
  tcase_add_test(pg, retry_not_superseded_by_other_request);
  tcase_add_test(pg, defer_undoes_the_claim);
  tcase_add_test(pg, cancellation);
  tcase_add_test(pg, finish_rules_and_counters);
  tcase_add_test(pg, recovery_after_crash_rolls_back_and_requeues);
  tcase_add_test(pg, recovery_finishes_a_landed_commit);
  tcase_add_test(pg, recovery_stops_on_callback_failure);
  tcase_add_test(pg, recovery_edge_cases);
  tcase_add_test(pg, recovery_leaves_a_job_moved_meanwhile);
  tcase_add_test(pg, concurrent_claims_never_double_claim);
  tcase_add_test(pg, history_lists_counts_and_prunes);
  /* its own */
  tcase_add_test(pg, pg_schema_created_and_versioned);
  tcase_add_test(pg, pg_newer_version_refused);
  tcase_add_test(pg, pg_foreign_database_refused);
  tcase_add_test(pg, pg_inline_password_refused);
  tcase_add_test(pg, pg_conninfo_opens_the_same_store);
  tcase_add_test(pg, pg_claim_skips_rows_another_instance_locked);
  tcase_add_test(pg, pg_two_instances_never_claim_one_job_twice);
  tcase_add_test(pg, pg_claim_race_on_one_table_picks_again);
  tcase_add_test(pg, pg_enqueue_dedupes_against_another_instance);
  tcase_add_test(pg, pg_sql_failures_name_store_step_and_sqlstate);
  tcase_add_test(pg, pg_reconnects_after_the_connection_is_lost);
  tcase_add_test(pg, pg_lease_decides_between_instances);
  tcase_add_test(pg, dead_instances_of_this_machine_are_buried);
  tcase_add_test(pg, leases_renew_fence_and_expire);
  tcase_add_test(pg, instances_register_heartbeat_and_stop);
  suite_add_tcase(s, pg);
  return s;
}

BRI_TEST_MAIN(suite)
