/* tables.c: the watched tables of the job store (see tables.h). Each call is
 * one statement or one short transaction under the store's mutex; derived
 * values (running job, queue length, byte totals) are computed by the
 * query, not stored, so they can never disagree with the jobs table. */
#include "jobs/tables.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/internal.h"

#define TABLE_COLUMNS                                                                         \
  "SELECT t.id, t.root, t.paused, t.last_seen_version, t.last_error, t.last_error_at, "       \
  "t.last_compaction_at, t.last_cleanup_at, t.created_at, "                                   \
  "(SELECT id FROM jobs WHERE table_id = t.id AND state = 'running'), "                       \
  "(SELECT count(*) FROM jobs WHERE table_id = t.id AND state = 'queued'), "                  \
  "(SELECT coalesce(sum(bytes_written), 0) FROM job_stats WHERE table_id = t.id), "           \
  "(SELECT coalesce(sum(bytes_reused), 0) FROM job_stats WHERE table_id = t.id) "             \
  "FROM tables t "

void bri_jobs_table_clear(bri_jobs_table *t) {
  if (!t) return;
  free(t->root);
  free(t->last_error);
  memset(t, 0, sizeof *t);
}

void bri_jobs_table_list_free(bri_jobs_table *ts, size_t n) {
  for (size_t i = 0; ts && i < n; i++) bri_jobs_table_clear(&ts[i]);
  free(ts);
}

static int read_table(bri_jobs_store *s, jobs_stmt *st, bri_jobs_table *t, bri_error *err) {
  memset(t, 0, sizeof *t);
  int oom = 0;
  t->id = jobs_col_i64(st, 0);
  t->root = jobs_col_text(st, 1, &oom);
  t->paused = jobs_col_int(st, 2);
  t->has_seen_version = !jobs_col_null(st, 3);
  t->last_seen_version = (uint64_t)jobs_col_i64(st, 3);
  t->last_error = jobs_col_text(st, 4, &oom);
  t->last_error_at = jobs_col_i64(st, 5);
  t->last_compaction_at = jobs_col_i64(st, 6);
  t->last_cleanup_at = jobs_col_i64(st, 7);
  t->created_at = jobs_col_i64(st, 8);
  t->running_job = jobs_col_i64(st, 9);
  t->queued_jobs = (uint64_t)jobs_col_i64(st, 10);
  t->bytes_written = (uint64_t)jobs_col_i64(st, 11);
  t->bytes_reused = (uint64_t)jobs_col_i64(st, 12);
  if (oom || !t->root) {
    bri_jobs_table_clear(t);
    return bri_error_set(err, BRI_ENOMEM, "%s: out of memory reading a table", s->path);
  }
  return 0;
}

int bri_jobs_tables_register(bri_jobs_store *s, const char *const *roots, size_t n,
                              bri_jobs_registered *out, bri_error *err) {
  static const char ins[] =
      "INSERT INTO tables (root, created_at) VALUES (?, ?) ON CONFLICT (root) DO NOTHING";
  static const char sel[] = "SELECT id, last_seen_version FROM tables WHERE root = ?";
  const char *step = "registering tables";
  for (size_t i = 0; i < n; i++)
    if (!roots[i] || !*roots[i])
      return bri_error_set(err, BRI_EINVAL, "%s: a table needs a non-empty root path", s->path);
  jobs_stmt *st = NULL;
  pthread_mutex_lock(&s->mu);
  int rc = n ? jobs_begin(s, step, err) : 0;
  int64_t now = jobs_now_locked(s);
  for (size_t i = 0; !rc && i < n; i++) {
    memset(&out[i], 0, sizeof out[i]);
    if ((rc = jobs_prepare(s, ins, &st, step, err))) break;
    jobs_bind_text(st, 1, roots[i]);
    jobs_bind_i64(st, 2, now);
    if ((rc = jobs_step(s, st, step, err)) < 0) break;
    out[i].created = jobs_changes(s) > 0;
    jobs_finalize(st);
    st = NULL;
    if ((rc = jobs_prepare(s, sel, &st, step, err))) break;
    jobs_bind_text(st, 1, roots[i]);
    rc = jobs_step(s, st, step, err);
    if (rc == 0) rc = bri_error_set(err, BRI_EIO, "%s: table %s vanished while added", s->path, roots[i]);
    if (rc < 0) break;
    out[i].id = jobs_col_i64(st, 0);
    out[i].has_seen_version = !jobs_col_null(st, 1);
    out[i].last_seen_version = (uint64_t)jobs_col_i64(st, 1);
    jobs_finalize(st);
    st = NULL;
    rc = 0;
  }
  jobs_finalize(st);
  if (!rc && n) rc = jobs_commit(s, step, err);
  if (rc && n) jobs_rollback(s);
  pthread_mutex_unlock(&s->mu);
  return rc;
}

int bri_jobs_table_upsert(bri_jobs_store *s, const char *root, int64_t *id, int *created,
                          bri_error *err) {
  bri_jobs_registered r;
  int rc = bri_jobs_tables_register(s, &root, 1, &r, err);
  if (rc) return rc;
  *id = r.id;
  if (created) *created = r.created;
  return 0;
}

int bri_jobs_table_paused_ids(bri_jobs_store *s, int64_t **ids, size_t *n, bri_error *err) {
  *ids = NULL;
  *n = 0;
  int64_t *v = NULL;
  size_t len = 0, cap = 0;
  jobs_stmt *st = NULL;
  pthread_mutex_lock(&s->mu);
  int rc = jobs_prepare(s, "SELECT id FROM tables WHERE paused <> 0 ORDER BY id", &st,
                        "listing paused tables", err);
  while (!rc && (rc = jobs_step(s, st, "listing paused tables", err)) == 1) {
    if (jobs_grow((void **)&v, &cap, len, sizeof *v)) {
      rc = bri_error_set(err, BRI_ENOMEM, "%s: out of memory listing paused tables", s->path);
      break;
    }
    v[len++] = jobs_col_i64(st, 0);
    rc = 0;
  }
  jobs_finalize(st);
  pthread_mutex_unlock(&s->mu);
  if (rc < 0) {
    free(v);
    return rc;
  }
  *ids = v;
  *n = len;
  return 0;
}

static int get_where(bri_jobs_store *s, const char *where, int64_t id, const char *root,
                     bri_jobs_table *out, bri_error *err) {
  char sql[1024];
  snprintf(sql, sizeof sql, "%s%s", TABLE_COLUMNS, where);
  jobs_stmt *st;
  memset(out, 0, sizeof *out);
  pthread_mutex_lock(&s->mu);
  int rc = jobs_prepare(s, sql, &st, "reading a table", err);
  if (!rc) {
    if (root) jobs_bind_text(st, 1, root);
    else jobs_bind_i64(st, 1, id);
    rc = jobs_step(s, st, "reading a table", err);
    if (rc == 1) rc = read_table(s, st, out, err);
    else if (rc == 0 && root)
      rc = bri_error_set(err, BRI_ENOTFOUND, "%s: no table with root %s", s->path, root);
    else if (rc == 0)
      rc = bri_error_set(err, BRI_ENOTFOUND, "%s: no table %lld", s->path, (long long)id);
    jobs_finalize(st);
  }
  pthread_mutex_unlock(&s->mu);
  return rc;
}

int bri_jobs_table_get(bri_jobs_store *s, int64_t id, bri_jobs_table *out, bri_error *err) {
  return get_where(s, "WHERE t.id = ?", id, NULL, out, err);
}

int bri_jobs_table_find(bri_jobs_store *s, const char *root, bri_jobs_table *out,
                        bri_error *err) {
  if (!root) return bri_error_set(err, BRI_EINVAL, "%s: no root given", s->path);
  return get_where(s, "WHERE t.root = ?", 0, root, out, err);
}

int bri_jobs_table_list(bri_jobs_store *s, bri_jobs_table **out, size_t *n, bri_error *err) {
  *out = NULL;
  *n = 0;
  bri_jobs_table *v = NULL;
  size_t len = 0, cap = 0;
  jobs_stmt *st;
  pthread_mutex_lock(&s->mu);
  int rc = jobs_prepare(s, TABLE_COLUMNS "ORDER BY t.id", &st, "listing tables", err);
  while (!rc && (rc = jobs_step(s, st, "listing tables", err)) == 1) {
    if (jobs_grow((void **)&v, &cap, len, sizeof *v)) {
        rc = bri_error_set(err, BRI_ENOMEM, "%s: out of memory listing tables", s->path);
        break;
    }
    rc = read_table(s, st, &v[len], err);
    if (!rc) len++;
  }
  jobs_finalize(st);
  pthread_mutex_unlock(&s->mu);
  if (rc < 0) {
    bri_jobs_table_list_free(v, len);
    return rc;
  }
  *out = v;
  *n = len;
  return 0;
}

/* Runs an UPDATE of one table row: ?1 is the id, ?2 text (has_text) or i2,
 * ?3 (when the statement has it) i3. BRI_ENOTFOUND when no row matched. */
static int update_table(bri_jobs_store *s, int64_t id, const char *sql, const char *step,
                        int has_text, const char *text, int64_t i2, int64_t i3,
                        bri_error *err) {
  jobs_stmt *st;
  pthread_mutex_lock(&s->mu);
  int rc = jobs_prepare(s, sql, &st, step, err);
  if (!rc) {
    jobs_bind_i64(st, 1, id);
    if (has_text) jobs_bind_text(st, 2, text);
    else jobs_bind_i64(st, 2, i2);
    if (jobs_bind_count(st) >= 3) jobs_bind_i64(st, 3, i3);
    rc = jobs_step(s, st, step, err);
    if (rc == 0 && jobs_changes(s) == 0)
      rc = bri_error_set(err, BRI_ENOTFOUND, "%s: %s: no table %lld", s->path, step,
                         (long long)id);
    jobs_finalize(st);
  }
  pthread_mutex_unlock(&s->mu);
  return rc < 0 ? rc : 0;
}

int bri_jobs_table_set_paused(bri_jobs_store *s, int64_t id, int paused, bri_error *err) {
  return update_table(s, id, "UPDATE tables SET paused = ?2 WHERE id = ?1",
                      paused ? "pausing a table" : "resuming a table", 0, NULL, paused ? 1 : 0,
                      0, err);
}

int bri_jobs_table_set_seen_version(bri_jobs_store *s, int64_t id, uint64_t version,
                                    bri_error *err) {
  if (version > INT64_MAX)
    return bri_error_set(err, BRI_EINVAL, "%s: table %lld: version %llu does not fit the store",
                         s->path, (long long)id, (unsigned long long)version);
  return update_table(s, id, "UPDATE tables SET last_seen_version = ?2 WHERE id = ?1",
                      "recording a table's version", 0, NULL, (int64_t)version, 0, err);
}

int bri_jobs_table_set_error(bri_jobs_store *s, int64_t id, const char *msg, bri_error *err) {
  pthread_mutex_lock(&s->mu);
  int64_t now = jobs_now_locked(s);
  pthread_mutex_unlock(&s->mu);
  return update_table(s, id,
                      "UPDATE tables SET last_error = ?2, "
                      "last_error_at = CASE WHEN ?2 IS NULL THEN NULL ELSE ?3 END WHERE id = ?1",
                      "recording a table's error", 1, msg, 0, now, err);
}

int bri_jobs_table_remove(bri_jobs_store *s, int64_t id, bri_error *err) {
  static const char busy[] =
      "SELECT (SELECT count(*) FROM jobs WHERE table_id = ?1 AND state = 'running'), "
      "(SELECT count(*) FROM job_outputs o JOIN jobs j ON j.id = o.job_id "
      " WHERE j.table_id = ?1)";
  const char *step = "removing a table";
  jobs_stmt *st = NULL;
  pthread_mutex_lock(&s->mu);
  int rc = jobs_begin(s, step, err);
  if (rc) goto out;
  if ((rc = jobs_prepare(s, busy, &st, step, err))) goto out;
  jobs_bind_i64(st, 1, id);
  if ((rc = jobs_step(s, st, step, err)) < 0) goto out;
  if (jobs_col_i64(st, 0) > 0 || jobs_col_i64(st, 1) > 0) {
    rc = bri_error_set(err, BRI_EINVAL,
                       "%s: table %lld cannot be removed: it has a running job or journaled "
                       "outputs that recovery still needs",
                       s->path, (long long)id);
    goto out;
  }
  jobs_finalize(st);
  if ((rc = jobs_prepare(s, "DELETE FROM tables WHERE id = ?", &st, step, err))) goto out;
  jobs_bind_i64(st, 1, id);
  if ((rc = jobs_step(s, st, step, err)) < 0) goto out;
  if (jobs_changes(s) == 0) {
    rc = bri_error_set(err, BRI_ENOTFOUND, "%s: no table %lld", s->path, (long long)id);
    goto out;
  }
  rc = jobs_commit(s, step, err);
out:
  jobs_finalize(st);
  if (rc) jobs_rollback(s);
  pthread_mutex_unlock(&s->mu);
  return rc;
}
