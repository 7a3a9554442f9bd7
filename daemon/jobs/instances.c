/* instances.c: instance registration, heartbeats and lease renewal and
 * confirmation (see instances.h). Each call is one short transaction under
 * the store's mutex, like every other store call. */
#include "jobs/instances.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobs/internal.h"

void bri_jobs_locality(char *out, size_t cap) {
  char boot[64] = "", ns[64] = "";
  FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
  if (f) {
    if (!fgets(boot, sizeof boot, f)) boot[0] = '\0';
    fclose(f);
  }
  boot[strcspn(boot, "\n")] = '\0';
  ssize_t n = readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
  ns[n > 0 ? n : 0] = '\0';
  if (boot[0] && ns[0]) snprintf(out, cap, "%s:%s", boot, ns);
  else if (cap) out[0] = '\0';
}

/* Marks the instances of locality whose process is gone stopped, and ends
 * their running jobs' leases; *dead counts them. */
static int bury_dead_locked(bri_jobs_store *s, const char *locality, int64_t now, size_t *dead, bri_error *err) {
  const char *step = "looking for dead instances on this machine";
  jobs_stmt *st;
  char *sessions[64];
  size_t n = 0;
  int rc = jobs_prepare(s,
                        "SELECT session, pid FROM instances WHERE locality = ? AND stopped_at IS NULL AND session <> ?",
                        &st, step, err);
  if (!rc) {
    jobs_bind_text(st, 1, locality);
    jobs_bind_text(st, 2, s->session);
    while ((rc = jobs_step(s, st, step, err)) == 1) {
      pid_t pid = (pid_t)jobs_col_i64(st, 1);
      if (n == sizeof sessions / sizeof sessions[0] || pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH) continue;
      if (!(sessions[n] = strdup(jobs_col_str(st, 0)))) {
        rc = bri_error_set(err, BRI_ENOMEM, "%s: out of memory", s->path);
        break;
      }
      n++;
    }
    jobs_finalize(st);
  }
  for (size_t i = 0; i < n; i++) {
    if (rc >= 0)
      rc = jobs_run(s, step, err, "UPDATE jobs SET lease_expires_at = 0 WHERE state = 'running' AND owner = ?", "t",
                    sessions[i]);
    if (rc >= 0)
      rc = jobs_run(s, step, err, "UPDATE instances SET stopped_at = ? WHERE session = ? AND stopped_at IS NULL",
                    "it", now, sessions[i]);
    free(sessions[i]);
  }
  if (dead && rc >= 0) *dead = n;
  return rc < 0 ? rc : 0;
}

int bri_jobs_instance_register(bri_jobs_store *s, const char *host, int64_t pid, const char *locality,
                               const char *version, size_t *dead, bri_error *err) {
  const char *step = "registering this instance";
  jobs_stmt *st = NULL;
  if (dead) *dead = 0;
  pthread_mutex_lock(&s->mu);
  int64_t now = jobs_now_locked(s);
  int rc = jobs_begin(s, step, err);
  if (!rc && locality && *locality) rc = bury_dead_locked(s, locality, now, dead, err);
  if (!rc) rc = jobs_query(s, &st, step, err,
                           "SELECT session, host, pid, heartbeat_at FROM instances "
                           "WHERE name = ? AND stopped_at IS NULL AND heartbeat_at > ? AND session <> ?",
                           "tit", s->instance, now - s->opt.lease_ttl_ms, s->session);
  if (rc == 1) {
    rc = bri_error_set(err, BRI_EINVAL,
                       "%s: instance name '%s' is held by a running brid (host %s, pid %lld, last "
                       "heartbeat %lld ms ago): give each brid its own instance_name",
                       s->path, s->instance, jobs_col_str(st, 1), (long long)jobs_col_i64(st, 2),
                       (long long)(now - jobs_col_i64(st, 3)));
  }
  jobs_finalize(st);
  if (!rc)
    rc = jobs_run(s, step, err,
                  "INSERT INTO instances (name, session, host, pid, locality, version, started_at, heartbeat_at) "
                  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7) "
                  "ON CONFLICT (name) DO UPDATE SET session = ?2, host = ?3, pid = ?4, locality = ?5, version = ?6, "
                  "started_at = ?7, heartbeat_at = ?7, stopped_at = NULL",
                  "tttitti", s->instance, s->session, host, pid, locality ? locality : "", version, now);
  if (!rc) rc = jobs_commit(s, step, err);
  if (rc) jobs_rollback(s);
  pthread_mutex_unlock(&s->mu);
  return rc;
}

int bri_jobs_instance_stop(bri_jobs_store *s, bri_error *err) {
  pthread_mutex_lock(&s->mu);
  int rc = jobs_run(s, "marking this instance stopped", err,
                    "UPDATE instances SET stopped_at = ?1, heartbeat_at = ?1 WHERE name = ?2 AND session = ?3",
                    "itt", jobs_now_locked(s), s->instance, s->session);
  pthread_mutex_unlock(&s->mu);
  return rc;
}

int bri_jobs_heartbeat(bri_jobs_store *s, const int64_t *job_ids, size_t n, int *renewed,
                       int64_t *lease_until, bri_error *err) {
  const char *step = "heartbeat";
  pthread_mutex_lock(&s->mu);
  int64_t now = jobs_now_locked(s), until = now + s->opt.lease_ttl_ms;
  int rc = jobs_begin(s, step, err);
  if (!rc)
    rc = jobs_run(s, step, err, "UPDATE instances SET heartbeat_at = ? WHERE name = ? AND session = ?", "itt",
                  now, s->instance, s->session);
  if (!rc && jobs_changes(s) != 1)
    rc = bri_error_set(err, BRI_EINVAL,
                       "%s: heartbeat: instance '%s' of session %s is not registered (another brid "
                       "took its name)",
                       s->path, s->instance, s->session);
  for (size_t i = 0; !rc && i < n; i++) {
    rc = jobs_run(s, step, err,
                  "UPDATE jobs SET lease_expires_at = ? WHERE id = ? AND state = 'running' AND owner = ? "
                  "AND lease_expires_at > ?",
                  "iiti", until, job_ids[i], s->session, now);
    if (!rc && renewed) renewed[i] = jobs_changes(s) == 1;
  }
  if (!rc) rc = jobs_commit(s, step, err);
  if (rc) jobs_rollback(s);
  pthread_mutex_unlock(&s->mu);
  if (!rc && lease_until) *lease_until = until;
  return rc;
}

int bri_jobs_lease_confirm(bri_jobs_store *s, int64_t job_id, const char *what, bri_error *err) {
  bri_jobs_job job;
  pthread_mutex_lock(&s->mu);
  int rc = jobs_get_locked(s, job_id, &job, err);
  if (!rc) rc = jobs_check_lease(s, &job, what, jobs_now_locked(s), err);
  pthread_mutex_unlock(&s->mu);
  bri_jobs_job_clear(&job);
  return rc;
}

void bri_jobs_instances_free(bri_jobs_instance_info *v, size_t n) {
  for (size_t i = 0; v && i < n; i++) free(v[i].name), free(v[i].session), free(v[i].host), free(v[i].version);
  free(v);
}

int bri_jobs_instances(bri_jobs_store *s, bri_jobs_instance_info **out, size_t *n, bri_error *err) {
  *out = NULL;
  *n = 0;
  bri_jobs_instance_info *v = NULL;
  size_t count = 0, cap = 0;
  jobs_stmt *st;
  const char *step = "listing instances";
  pthread_mutex_lock(&s->mu);
  int rc = jobs_prepare(s,
                        "SELECT name, session, host, pid, version, started_at, heartbeat_at, stopped_at "
                        "FROM instances ORDER BY name",
                        &st, step, err);
  if (!rc) {
    while ((rc = jobs_step(s, st, step, err)) == 1) {
      if (jobs_grow((void **)&v, &cap, count, sizeof *v)) {
        rc = bri_error_set(err, BRI_ENOMEM, "%s: out of memory listing instances", s->path);
        break;
      }
      bri_jobs_instance_info *in = &v[count++];
      int oom = 0;
      in->name = jobs_col_text(st, 0, &oom);
      in->session = jobs_col_text(st, 1, &oom);
      in->host = jobs_col_text(st, 2, &oom);
      in->pid = jobs_col_i64(st, 3);
      in->version = jobs_col_text(st, 4, &oom);
      in->started_at = jobs_col_i64(st, 5);
      in->heartbeat_at = jobs_col_i64(st, 6);
      in->stopped_at = jobs_col_i64(st, 7);
      if (oom) {
        rc = bri_error_set(err, BRI_ENOMEM, "%s: out of memory listing instances", s->path);
        break;
      }
    }
    jobs_finalize(st);
  }
  pthread_mutex_unlock(&s->mu);
  if (rc < 0) {
    bri_jobs_instances_free(v, count);
    return rc;
  }
  *out = v;
  *n = count;
  return 0;
}
