/* internal.h: what the files of daemon/jobs share and nobody else may use: the
 * store struct, the lock discipline, the statements of the store's database
 * (through its backend's driver: sqlite.c or pg.c), helpers that turn every
 * database failure into a bri_error naming the store, the step and the SQL,
 * and the job row reader used by every query that returns jobs.
 *
 * Main design choice: the queue's logic (queue.c, tables.c, history.c,
 * journal.c, recover.c) speaks SQL through the small statement interface
 * below and never calls the database library itself, so that the backend
 * is one file of SQL (schema_sqlite.sql, schema_pg.sql) plus its driver
 * (sqlite.c, pg.c). A
 * statement is prepared, bound (parameters numbered from 1), stepped row
 * by row and finalized; columns are read from the current row. The SQL is
 * the common part of SQLite's and PostgreSQL's (parameters ? or ?N, CASE
 * rather than two-argument max/min, TRUE, ON CONFLICT, RETURNING); what is
 * one database's (transactions, sync level, the request expression of the
 * dedup query, json_remove, row locks) stays in its driver and schema file or is a
 * snippet of struct jobs_driver pasted where it is used.
 *
 * Lock rule: every public function takes s->mu on entry and releases it
 * before returning; helpers named *_locked expect it held. Callbacks into
 * the caller (recovery) are always made without it. */
#ifndef BRI_JOBS_INTERNAL_H
#define BRI_JOBS_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "jobs/queue.h"
#include "jobs/store.h"

typedef struct jobs_driver jobs_driver;

struct bri_jobs_store {
  const jobs_driver *drv; /* the backend (driver.c picks it from the path) */
  void *conn;             /* the driver's connection state */
  char *path;             /* a file (SQLite) or a libpq URI/conninfo without password */
  char *password;         /* PostgreSQL only: from the options, never printed; or NULL */
  pthread_mutex_t mu;
  char session[40];
  char *instance; /* this brid's name (bri_jobs_instance) */
  bri_jobs_options opt;
  _Atomic uint64_t statements; /* round trips so far (bri_jobs_statements) */
};

/* A prepared statement of the store's backend: every driver's statement
 * starts with this header, which routes the calls below to its driver. */
typedef struct jobs_stmt {
  const jobs_driver *drv;
} jobs_stmt;

/* ---- the drivers (sqlite.c, pg.c), dispatched by driver.c ----------------
 *
 * A driver implements each call of the statement interface below (same
 * contract) and provides the few SQL snippets where the two dialects
 * differ; the shared SQL pastes them in. */
struct jobs_driver {
  const char *name; /* "SQLite", "PostgreSQL" */
  /* 1 when one process at a time opens a store (SQLite's lock file): a
   * job running under another session is then interrupted for sure. */
  int exclusive;
  int (*open)(bri_jobs_store *s, bri_error *err);
  void (*close)(bri_jobs_store *s);
  int (*sqlerr)(bri_jobs_store *s, const char *sql, const char *step, bri_error *err);
  int (*prepare)(bri_jobs_store *s, const char *sql, jobs_stmt **st, const char *step,
                 bri_error *err);
  int (*bind_i64)(jobs_stmt *st, int i, int64_t v);
  int (*bind_text)(jobs_stmt *st, int i, const char *text);
  int (*bind_count)(jobs_stmt *st);
  const char *(*sql)(jobs_stmt *st);
  int (*step)(bri_jobs_store *s, jobs_stmt *st, const char *step, bri_error *err);
  void (*finalize)(jobs_stmt *st);
  int64_t (*col_i64)(jobs_stmt *st, int col);
  int (*col_null)(jobs_stmt *st, int col);
  const char *(*col_str)(jobs_stmt *st, int col);
  int64_t (*changes)(bri_jobs_store *s);
  int (*exec)(bri_jobs_store *s, const char *sql, const char *step, bri_error *err);
  int (*begin)(bri_jobs_store *s, const char *step, bri_error *err);
  int (*commit)(bri_jobs_store *s, const char *step, bri_error *err);
  void (*rollback)(bri_jobs_store *s);
  /* Makes every commit so far durable against a power loss; called
   * without the store's mutex (safe beside the other calls). */
  int (*make_durable)(bri_jobs_store *s, bri_error *err);
  /* 1 when the store answers, 0 when not; last_error gets the last
   * connection failure ("" when none). */
  int (*health)(bri_jobs_store *s, char *last_error, size_t cap);
  /* 1 when the last failure was a conflict with another connection that
   * running the transaction again resolves (PostgreSQL: a unique violation
   * under READ COMMITTED); SQLite's write lock makes that impossible. */
  int (*conflict)(bri_jobs_store *s);
  /* Dialect snippets. request_expr is a printf format with one %s (a JSON
   * text expression): the request of those params, the params without
   * "trigger", as the index jobs_one_queued_per_request computes it.
   * claim_lock ends the claim's pick (PostgreSQL: lock the picked job,
   * skipping jobs another instance is claiming); row_lock ends a read of
   * one job inside a write transaction (PostgreSQL: lock its row). */
  const char *request_expr;
  const char *claim_lock;
  const char *row_lock;
};

extern const jobs_driver jobs_sqlite_driver;
extern const jobs_driver jobs_pg_driver;

/* A SQLite store's connection (tests inspect its settings); NULL for
 * another backend. */
struct sqlite3 *jobs_sqlite_db(bri_jobs_store *s);

/* The first words of sql, whitespace collapsed, for the drivers' messages
 * (out: cap bytes, "..." when cut). */
void jobs_abbreviate_sql(const char *sql, char *out, size_t cap);

/* The driver of a store path: PostgreSQL for a libpq URI or conninfo (see
 * bri_jobs_open), SQLite otherwise. */
const jobs_driver *jobs_driver_for(const char *path);

/* A backend's schema file, built in (schema_sqlite.sql, schema_pg.sql):
 * scripts, each from its "-- version N:" line to the next, script N taking
 * the store from version N - 1 to N; first is the script a new store
 * starts with. */
typedef struct jobs_schema {
  const char *text;
  const char *file; /* its name, for messages */
  int64_t first;
} jobs_schema;

/* A driver's way to run one migration script and record its version
 * (step names it in messages). */
typedef int (*jobs_migration_step)(bri_jobs_store *s, const char *script, int64_t version,
                                   const char *step, bri_error *err);

/* The one migration runner (migrate.c): refuses a schema file with a
 * script beyond BRI_JOBS_SCHEMA_VERSION, then runs the scripts from
 * version from + 1 (schema->first when from is 0, a new store) up to
 * BRI_JOBS_SCHEMA_VERSION, each through run_step, and stops at the first
 * failure. */
int jobs_migrate(bri_jobs_store *s, const jobs_schema *schema, int64_t from,
                 jobs_migration_step run_step, bri_error *err);

/* ---- the statement interface (driver.c: calls s->drv or st->drv) ------- */

/* Opens s->path (s->opt set, s->path and s->mu ready): takes the store's
 * lock (SQLite), connects, checks identity and health, migrates; refusals as
 * bri_jobs_open documents. jobs_db_close releases what it took (safe on a
 * half-open store). */
int jobs_db_open(bri_jobs_store *s, bri_error *err);
void jobs_db_close(bri_jobs_store *s);

/* Fills err from the connection's last error: "<db>: <step> (<sql...>):
 * <message>" and returns the mapped code (corrupt -> BRI_ECORRUPT, nomem ->
 * BRI_ENOMEM, constraint -> BRI_EINVAL, else BRI_EIO). */
int jobs_sqlerr(bri_jobs_store *s, const char *sql, const char *step, bri_error *err);

/* Prepares sql; on failure fills err. */
int jobs_prepare(bri_jobs_store *s, const char *sql, jobs_stmt **st, const char *step,
                 bri_error *err);
/* Binds parameter i (from 1); text is copied, NULL binds NULL. 0, or
 * BRI_EIO (no such parameter, out of memory: jobs_sqlerr says which). */
int jobs_bind_i64(jobs_stmt *st, int i, int64_t v);
int jobs_bind_text(jobs_stmt *st, int i, const char *text);
/* The number of parameters the statement takes; its SQL text. */
int jobs_bind_count(jobs_stmt *st);
const char *jobs_sql(jobs_stmt *st);
/* Steps st: 1 for a row, 0 when done, negative (err filled) on failure. */
int jobs_step(bri_jobs_store *s, jobs_stmt *st, const char *step, bri_error *err);
/* Frees st (NULL is fine). */
void jobs_finalize(jobs_stmt *st);
/* Columns of the current row, from 0: an integer (0 for NULL), whether it
 * is NULL, text (NULL for NULL; valid until the next step). */
int64_t jobs_col_i64(jobs_stmt *st, int col);
int jobs_col_int(jobs_stmt *st, int col);
int jobs_col_null(jobs_stmt *st, int col);
const char *jobs_col_str(jobs_stmt *st, int col);
/* Rows changed by the last statement that ran to its end. */
int64_t jobs_changes(bri_jobs_store *s);
/* Runs statements that return no rows. */
int jobs_exec(bri_jobs_store *s, const char *sql, const char *step, bri_error *err);

/* Write transactions: begin takes the write lock up front (a transaction
 * never fails half way to upgrade it); commit; rollback when one is open. */
int jobs_begin(bri_jobs_store *s, const char *step, bri_error *err);
int jobs_commit(bri_jobs_store *s, const char *step, bri_error *err);
void jobs_rollback(bri_jobs_store *s);
/* Makes every commit so far durable against a power loss (see store.h,
 * Durability); without the store's mutex, so that the syncs of two workers
 * overlap and nobody waits behind them. */
int jobs_make_durable(bri_jobs_store *s, bri_error *err);

/* ---- on top of the driver (store.c) ------------------------------------- */

/* Prepares sql and binds the variadic arguments described by types, one
 * letter per parameter: 'i' int64_t, 't' const char * (NULL binds NULL).
 * jobs_run steps to the end (for statements without rows) and returns 0 or
 * a negative code. jobs_query steps once: 1 with *st on the row (the caller
 * finalizes it), 0 when there is no row (*st NULL), negative on error. */
int jobs_run(bri_jobs_store *s, const char *step, bri_error *err, const char *sql,
             const char *types, ...);
int jobs_query(bri_jobs_store *s, jobs_stmt **st, const char *step, bri_error *err,
               const char *sql, const char *types, ...);

int64_t jobs_now_locked(bri_jobs_store *s);

/* Grows *v (elements of sz bytes, *cap of them) to hold one more than len:
 * 0, or BRI_ENOMEM with *v unchanged. */
int jobs_grow(void **v, size_t *cap, size_t len, size_t sz);

/* malloc'd copy of a text column, NULL for SQL NULL; *oom set on failure. */
char *jobs_col_text(jobs_stmt *st, int col, int *oom);

/* The column list (prefix "j." on jobs, "t." on tables) read by
 * jobs_read_job; queries append "FROM jobs j JOIN tables t ON t.id =
 * j.table_id WHERE ...". */
#define JOBS_JOB_COLUMNS                                                                      \
  "j.id, j.table_id, t.root, j.kind, j.state, j.priority, j.attempts, j.max_attempts, "       \
  "j.cancel_requested, j.not_before, j.created_at, j.started_at, j.finished_at, j.owner, "    \
  "j.params, j.result, j.error, j.commit_uuid, j.commit_read_version, j.bytes_written, "      \
  "j.bytes_reused, j.lease_expires_at, j.instance"
#define JOBS_JOB_FROM " FROM jobs j JOIN tables t ON t.id = j.table_id "

/* Reads one row of JOBS_JOB_COLUMNS into job (members malloc'd). */
int jobs_read_job(bri_jobs_store *s, jobs_stmt *st, bri_jobs_job *job, bri_error *err);
/* Loads job id; BRI_ENOTFOUND when there is none. Inside a write
 * transaction: it locks the job's row where the backend has row locks.
 * jobs_peek_locked loads it without the row lock, for a read on its own
 * (which a read connection may not take). */
int jobs_get_locked(bri_jobs_store *s, int64_t id, bri_jobs_job *job, bri_error *err);
int jobs_peek_locked(bri_jobs_store *s, int64_t id, bri_jobs_job *job, bri_error *err);

/* Kind/state names as stored in the database. */
int jobs_kind_from_text(const char *t, bri_job_kind *k);
int jobs_state_from_text(const char *t, bri_job_state *st);

/* Adds one to counter ("succeeded", "failed", "cancelled", "retried" or
 * "crashed") and run_ms and bytes to the per-table, per-kind statistics. */
int jobs_stats_add_locked(bri_jobs_store *s, int64_t table_id, bri_job_kind kind,
                          const char *counter, int64_t run_ms, uint64_t bytes_written,
                          uint64_t bytes_reused, bri_error *err);

/* Checks that job is running under this session with a lease that has not
 * run out (the only jobs whose state this session may move on); BRI_ELEASE
 * when it is not (any more): an expired lease is recovery's to settle. */
int jobs_check_owned(bri_jobs_store *s, const bri_jobs_job *job, const char *what,
                     bri_error *err);

/* jobs_check_owned, and the job's lease has at least a third of lease_ttl
 * left at now: what a job must hold before an action it cannot take back
 * (a commit, a delete). BRI_ELEASE otherwise, err saying how the lease
 * stands. */
int jobs_check_lease(bri_jobs_store *s, const bri_jobs_job *job, const char *what, int64_t now,
                     bri_error *err);

/* One write transaction on one job, under the store's mutex.
 * jobs_job_begin takes the mutex, opens the transaction and loads job_id
 * into *job; what non-NULL also checks that the job runs under this session
 * (jobs_check_owned; what names the action in the message). jobs_job_end
 * follows every jobs_job_begin, whatever it returned, with the code so far:
 * it commits when rc is 0 and rolls back otherwise, releases the mutex,
 * then, when durable, makes the commit durable (jobs_make_durable: the call
 * returns once it is), clears *job and returns the final code. Between the
 * two the mutex is held. */
int jobs_job_begin(bri_jobs_store *s, int64_t job_id, const char *what, const char *step,
                   bri_jobs_job *job, bri_error *err);
int jobs_job_end(bri_jobs_store *s, int rc, int durable, const char *step, bri_jobs_job *job,
                 bri_error *err);

/* Moves job (as loaded by jobs_get_locked, inside a transaction) to a
 * terminal state at now. attempt_outcome non-NULL closes the current
 * attempt with that outcome and counts its run time; the job-end counter
 * (the state's name) is bumped with the bytes; the table's last
 * compaction/cleanup time (succeeded) or last error (failed) is set. */
int jobs_end_locked(bri_jobs_store *s, const bri_jobs_job *job, bri_job_state state,
                    const char *result, const char *error, uint64_t bytes_written,
                    uint64_t bytes_reused, const char *attempt_outcome, int64_t now,
                    bri_error *err);

/* Ends the current attempt of a running job with attempt_outcome
 * ("retried" or "crashed", the counter bumped too; count_run_time adds
 * now - started_at) and decides what comes next, as bri_jobs_retry_later
 * documents: cancelled, failed, superseded (cancelled) or queued again. */
int jobs_requeue_locked(bri_jobs_store *s, const bri_jobs_job *job, const char *error,
                        const char *attempt_outcome, int count_run_time, int64_t now,
                        bri_job_state *new_state, int64_t *not_before, bri_error *err);

/* The id of a queued job of table_id and kind, other than except, that
 * asks for the same as params (canonical text, or NULL): the params
 * without "trigger" are equal. 1 and *found when there is one, 0 when not,
 * < 0 on error. */
int jobs_queued_same_locked(bri_jobs_store *s, int64_t table_id, bri_job_kind kind, const char *params,
                            int64_t except, int64_t *found, bri_error *err);

/* Validates optional JSON text: NULL passes; otherwise a JSON object. With
 * canonical, *canonical gets the object's canonical text (keys sorted,
 * compact; NULL for NULL json), which the caller frees. */
int jobs_check_json(bri_jobs_store *s, const char *json, const char *what, char **canonical,
                    bri_error *err);

#endif
