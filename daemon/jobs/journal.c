/* journal.c: the output journal and commit intent of running jobs (see
 * journal.h). The two writes a worker acts on (an entry before creating the
 * file, an intent with the outputs it reserves before the first of them
 * and the commit) are durable transactions (jobs_job_end's durable: the
 * WAL is fdatasynced before the call returns); everything else is not,
 * because recovery repairs what a power loss could undo there. */
#include "jobs/journal.h"

#include <stdlib.h>

#include "jobs/internal.h"
#include "bri/util.h"

void bri_jobs_journal_free(bri_jobs_output *o, size_t n) {
  for (size_t i = 0; o && i < n; i++) {
    free(o[i].path);
    free(o[i].kind);
  }
  free(o);
}

/* Inserts one entry of job (running under this session), in a transaction
 * the caller holds. */
static int insert_entry(bri_jobs_store *s, const bri_jobs_job *job, const char *path, const char *kind,
                        const char *step, bri_error *err) {
  if (!path || !*path || !kind || !*kind)
    return bri_error_set(err, BRI_EINVAL, "%s: journaling for job %lld: empty path or kind", s->path,
                         (long long)job->id);
  return jobs_run(s, step, err,
                  "INSERT INTO job_outputs (job_id, path, kind, attempt, created_at) "
                  "VALUES (?, ?, ?, ?, ?) ON CONFLICT (job_id, path) DO NOTHING",
                  "ittii", job->id, path, kind, (int64_t)job->attempts, jobs_now_locked(s));
}

int bri_jobs_journal_add(bri_jobs_store *s, int64_t job_id, const char *path, const char *kind,
                         bri_error *err) {
  if (!path || !*path || !kind || !*kind)
    return bri_error_set(err, BRI_EINVAL, "%s: journaling for job %lld: empty path or kind",
                         s->path, (long long)job_id);
  const char *step = "journaling a job output";
  bri_jobs_job job;
  int rc = bri_failpoint("jobs.before_journal_add", err);
  if (rc) return bri_error_wrap(err, "%s: journaling %s for job %lld", s->path, path, (long long)job_id);
  rc = jobs_job_begin(s, job_id, "journal an output of", step, &job, err);
  if (!rc) rc = insert_entry(s, &job, path, kind, step, err);
  rc = jobs_job_end(s, rc, 1, step, &job, err);
  if (!rc && (rc = bri_failpoint("jobs.after_journal_add", err)) != 0)
    bri_error_wrap(err, "%s: journaled %s for job %lld", s->path, path, (long long)job_id);
  return rc;
}

int bri_jobs_set_commit_intent(bri_jobs_store *s, int64_t job_id, const char *txn_uuid,
                               uint64_t read_version, const bri_jobs_reserved *outputs, size_t n_outputs,
                               bri_error *err) {
  if (!txn_uuid || !*txn_uuid)
    return bri_error_set(err, BRI_EINVAL, "%s: commit intent for job %lld: empty uuid", s->path,
                         (long long)job_id);
  if (read_version > INT64_MAX)
    return bri_error_set(err, BRI_EINVAL,
                         "%s: commit intent for job %lld: read version %llu does not fit",
                         s->path, (long long)job_id, (unsigned long long)read_version);
  const char *step = "recording a commit intent";
  bri_jobs_job job;
  int rc = jobs_job_begin(s, job_id, "record a commit intent of", step, &job, err);
  if (!rc) rc = jobs_check_lease(s, &job, "record a commit intent of", jobs_now_locked(s), err);
  for (size_t i = 0; !rc && i < n_outputs; i++)
    rc = insert_entry(s, &job, outputs[i].path, outputs[i].kind, step, err);
  if (!rc)
    rc = jobs_run(s, step, err,
                  "UPDATE jobs SET commit_uuid = ?, commit_read_version = ? WHERE id = ?", "tii",
                  txn_uuid, (int64_t)read_version, job_id);
  rc = jobs_job_end(s, rc, 1, step, &job, err);
  return rc ? rc : bri_failpoint("jobs.after_commit_intent", err);
}

int bri_jobs_journal_list(bri_jobs_store *s, int64_t job_id, bri_jobs_output **out, size_t *n,
                          bri_error *err) {
  *out = NULL;
  *n = 0;
  bri_jobs_output *v = NULL;
  size_t count = 0, cap = 0;
  jobs_stmt *st;
  pthread_mutex_lock(&s->mu);
  int rc = jobs_prepare(s,
                        "SELECT seq, path, kind, attempt, created_at FROM job_outputs "
                        "WHERE job_id = ? ORDER BY seq",
                        &st, "reading a job's journal", err);
  if (!rc) {
    jobs_bind_i64(st, 1, job_id);
    while ((rc = jobs_step(s, st, "reading a job's journal", err)) == 1) {
      if (jobs_grow((void **)&v, &cap, count, sizeof *v)) {
          rc = bri_error_set(err, BRI_ENOMEM, "%s: out of memory reading a journal", s->path);
          break;
      }
      bri_jobs_output *o = &v[count++];
      int oom = 0;
      o->seq = jobs_col_i64(st, 0);
      o->path = jobs_col_text(st, 1, &oom);
      o->kind = jobs_col_text(st, 2, &oom);
      o->attempt = jobs_col_int(st, 3);
      o->created_at = jobs_col_i64(st, 4);
      if (oom || !o->path || !o->kind) {
        rc = bri_error_set(err, BRI_ENOMEM, "%s: out of memory reading a journal", s->path);
        break;
      }
    }
    jobs_finalize(st);
  }
  pthread_mutex_unlock(&s->mu);
  if (rc < 0) {
    bri_jobs_journal_free(v, count);
    return rc;
  }
  *out = v;
  *n = count;
  return 0;
}

int bri_jobs_journal_remove(bri_jobs_store *s, int64_t job_id, const char *path,
                            bri_error *err) {
  if (!path) return bri_error_set(err, BRI_EINVAL, "%s: journal remove: no path", s->path);
  pthread_mutex_lock(&s->mu);
  int rc = jobs_run(s, "dropping a journal entry", err,
                    "DELETE FROM job_outputs WHERE job_id = ? AND path = ?", "it", job_id, path);
  pthread_mutex_unlock(&s->mu);
  return rc;
}

int bri_jobs_journal_clear(bri_jobs_store *s, int64_t job_id, bri_error *err) {
  pthread_mutex_lock(&s->mu);
  int rc = jobs_run(s, "clearing a job's journal", err,
                    "DELETE FROM job_outputs WHERE job_id = ?", "i", job_id);
  pthread_mutex_unlock(&s->mu);
  return rc;
}
