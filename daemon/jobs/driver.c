/* driver.c: the job store's statement interface (internal.h) routed to the
 * store's backend, SQLite (sqlite.c) or PostgreSQL (pg.c), and the choice
 * of backend from the store's path (see bri_jobs_open in store.h), and what
 * both drivers' messages share (the abbreviated SQL). */
#include "jobs/internal.h"

#include <stdatomic.h>
#include <string.h>

const jobs_driver *jobs_driver_for(const char *path) {
  if (strncmp(path, "postgresql://", 13) == 0 || strncmp(path, "postgres://", 11) == 0)
    return &jobs_pg_driver;
  /* a conninfo: "key=value ..." with the '=' before any '/' (a file path
   * with '=' in a directory name stays a file) */
  const char *eq = strchr(path, '='), *slash = strchr(path, '/');
  if (eq && eq > path && (!slash || eq < slash)) return &jobs_pg_driver;
  return &jobs_sqlite_driver;
}

void jobs_abbreviate_sql(const char *sql, char *out, size_t cap) {
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

int jobs_db_open(bri_jobs_store *s, bri_error *err) { return s->drv->open(s, err); }

void jobs_db_close(bri_jobs_store *s) { s->drv->close(s); }

int jobs_sqlerr(bri_jobs_store *s, const char *sql, const char *step, bri_error *err) {
  return s->drv->sqlerr(s, sql, step, err);
}

/* Every statement run (each is prepared for its run, from a cache where the
 * driver keeps one), and each transaction's begin and end, counts as one
 * round trip to the database. */
static void count(bri_jobs_store *s) { atomic_fetch_add_explicit(&s->statements, 1, memory_order_relaxed); }

uint64_t bri_jobs_statements(bri_jobs_store *s) {
  return atomic_load_explicit(&s->statements, memory_order_relaxed);
}

int jobs_prepare(bri_jobs_store *s, const char *sql, jobs_stmt **st, const char *step,
                 bri_error *err) {
  count(s);
  return s->drv->prepare(s, sql, st, step, err);
}

int jobs_bind_i64(jobs_stmt *st, int i, int64_t v) { return st->drv->bind_i64(st, i, v); }

int jobs_bind_text(jobs_stmt *st, int i, const char *text) {
  return st->drv->bind_text(st, i, text);
}

int jobs_bind_count(jobs_stmt *st) { return st->drv->bind_count(st); }

const char *jobs_sql(jobs_stmt *st) { return st->drv->sql(st); }

int jobs_step(bri_jobs_store *s, jobs_stmt *st, const char *step, bri_error *err) {
  return s->drv->step(s, st, step, err);
}

void jobs_finalize(jobs_stmt *st) {
  if (st) st->drv->finalize(st);
}

int64_t jobs_col_i64(jobs_stmt *st, int col) { return st->drv->col_i64(st, col); }

int jobs_col_int(jobs_stmt *st, int col) { return (int)st->drv->col_i64(st, col); }

int jobs_col_null(jobs_stmt *st, int col) { return st->drv->col_null(st, col); }

const char *jobs_col_str(jobs_stmt *st, int col) { return st->drv->col_str(st, col); }

int64_t jobs_changes(bri_jobs_store *s) { return s->drv->changes(s); }

int jobs_exec(bri_jobs_store *s, const char *sql, const char *step, bri_error *err) {
  count(s);
  return s->drv->exec(s, sql, step, err);
}

int jobs_begin(bri_jobs_store *s, const char *step, bri_error *err) {
  count(s);
  return s->drv->begin(s, step, err);
}

int jobs_commit(bri_jobs_store *s, const char *step, bri_error *err) {
  count(s);
  return s->drv->commit(s, step, err);
}

void jobs_rollback(bri_jobs_store *s) {
  count(s);
  s->drv->rollback(s);
}

int jobs_make_durable(bri_jobs_store *s, bri_error *err) { return s->drv->make_durable(s, err); }
