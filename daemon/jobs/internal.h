/* internal.h: what the files of daemon/jobs share and nobody else may use: the
 * store struct, the lock discipline, SQL helpers that turn every SQLite
 * failure into a bri_error naming the database file, the step and the SQL,
 * and the job row reader used by every query that returns jobs.
 *
 * Lock rule: every public function takes s->mu on entry and releases it
 * before returning; helpers named *_locked expect it held. Callbacks into
 * the caller (recovery) are always made without it. */
#ifndef BRI_JOBS_INTERNAL_H
#define BRI_JOBS_INTERNAL_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>

#include "jobs/queue.h"
#include "jobs/store.h"

struct bri_jobs_store {
  sqlite3 *db;
  char *path;
  pthread_mutex_t mu;
  int lock_fd;
  char session[40];
  bri_jobs_options opt;
  int last_sqlite_rc; /* extended code of the last failure jobs_sqlerr saw */
};

/* Fills err from the connection's last error: "<db>: <step> (<sql...>):
 * <sqlite message>" and returns the mapped code (corrupt/notadb ->
 * BRI_ECORRUPT, nomem -> BRI_ENOMEM, constraint -> BRI_EINVAL, else BRI_EIO). */
int jobs_sqlerr(bri_jobs_store *s, const char *sql, const char *step, bri_error *err);

/* Prepares sql; on failure fills err. */
int jobs_prepare(bri_jobs_store *s, const char *sql, sqlite3_stmt **st, const char *step,
                 bri_error *err);
/* Steps st: 1 for a row, 0 when done, negative (err filled) on failure. */
int jobs_step(bri_jobs_store *s, sqlite3_stmt *st, const char *step, bri_error *err);
/* Runs statements that return no rows. */
int jobs_exec(bri_jobs_store *s, const char *sql, const char *step, bri_error *err);

/* Prepares sql and binds the variadic arguments described by types, one
 * letter per parameter: 'i' int64_t, 't' const char * (NULL binds NULL).
 * jobs_run steps to the end (for statements without rows) and returns 0 or
 * a negative code. jobs_query steps once: 1 with *st on the row (the caller
 * finalizes it), 0 when there is no row (*st NULL), negative on error. */
int jobs_run(bri_jobs_store *s, const char *step, bri_error *err, const char *sql,
             const char *types, ...);
int jobs_query(bri_jobs_store *s, sqlite3_stmt **st, const char *step, bri_error *err,
               const char *sql, const char *types, ...);

/* BEGIN IMMEDIATE (the write lock is taken up front, so a transaction never
 * fails half way to upgrade it); COMMIT; ROLLBACK when one is open. */
int jobs_begin(bri_jobs_store *s, const char *step, bri_error *err);
int jobs_commit(bri_jobs_store *s, const char *step, bri_error *err);
void jobs_rollback(bri_jobs_store *s);
/* Switches PRAGMA synchronous between NORMAL and FULL (outside transactions). */
int jobs_sync_full(bri_jobs_store *s, int full, bri_error *err);

int64_t jobs_now_locked(bri_jobs_store *s);

/* malloc'd copy of a text column, NULL for SQL NULL; *oom set on failure. */
char *jobs_col_text(sqlite3_stmt *st, int col, int *oom);

/* The column list (prefix "j." on jobs, "t." on tables) read by
 * jobs_read_job; queries append "FROM jobs j JOIN tables t ON t.id =
 * j.table_id WHERE ...". */
#define JOBS_JOB_COLUMNS                                                                      \
  "j.id, j.table_id, t.root, j.kind, j.state, j.priority, j.attempts, j.max_attempts, "       \
  "j.cancel_requested, j.not_before, j.created_at, j.started_at, j.finished_at, j.owner, "    \
  "j.params, j.result, j.error, j.commit_uuid, j.commit_read_version, j.bytes_written, "      \
  "j.bytes_reused"
#define JOBS_JOB_FROM " FROM jobs j JOIN tables t ON t.id = j.table_id "

/* Reads one row of JOBS_JOB_COLUMNS into job (members malloc'd). */
int jobs_read_job(bri_jobs_store *s, sqlite3_stmt *st, bri_jobs_job *job, bri_error *err);
/* Loads job id; BRI_ENOTFOUND when there is none. */
int jobs_get_locked(bri_jobs_store *s, int64_t id, bri_jobs_job *job, bri_error *err);

/* Kind/state names as stored in the database. */
int jobs_kind_from_text(const char *t, bri_job_kind *k);
int jobs_state_from_text(const char *t, bri_job_state *st);

/* Adds one to counter ("succeeded", "failed", "cancelled", "retried" or
 * "crashed") and run_ms and bytes to the per-table, per-kind statistics. */
int jobs_stats_add_locked(bri_jobs_store *s, int64_t table_id, bri_job_kind kind,
                          const char *counter, int64_t run_ms, uint64_t bytes_written,
                          uint64_t bytes_reused, bri_error *err);

/* Checks that job is running under this session (the only jobs whose
 * state this session may move on). */
int jobs_check_owned(bri_jobs_store *s, const bri_jobs_job *job, const char *what,
                     bri_error *err);

/* One write transaction on one job, under the store's mutex.
 * jobs_job_begin takes the mutex, switches to synchronous=FULL when durable
 * (the COMMIT then fsyncs the WAL before returning), opens the transaction
 * and loads job_id into *job; what non-NULL also checks that the job runs
 * under this session (jobs_check_owned; what names the action in the
 * message). jobs_job_end follows every jobs_job_begin, whatever it returned,
 * with the code so far: it commits when rc is 0 and rolls back otherwise,
 * restores NORMAL after a durable transaction, releases the mutex, clears
 * *job and returns the final code. Between the two the mutex is held. */
int jobs_job_begin(bri_jobs_store *s, int64_t job_id, const char *what, int durable,
                   const char *step, bri_jobs_job *job, bri_error *err);
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
