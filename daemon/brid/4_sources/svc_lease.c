/* svc_lease.c: the heartbeat thread (see svc_lease.h). */
#include "svc_lease.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "brid/1_leaves/svc_log.h"
#include "brid/3_exec/svc_recover.h"
#include "brid/3_exec/svc_worker.h"

#define HELD_MAX 256 /* job ids per heartbeat: more than any worker count brid accepts */

struct svc_lease {
  brid *d;
  pthread_t thread;
  bool started;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool stop;               /* under mu */
  svc_store_health health; /* under mu */
  bool beat_done;          /* under mu: a heartbeat went through and recovery ran after it */
  uv_async_t kick;         /* to the loop: the health changed, or recovery requeued jobs */
};

/* On the loop: publishes the store's health into the state (what status
 * shows), and after a heartbeat and its recovery lets idle workers claim. */
static void on_kick(uv_async_t *h) {
  svc_lease *l = h->data;
  pthread_mutex_lock(&l->mu);
  l->d->store_health = l->health;
  bool claim = l->beat_done;
  l->beat_done = false;
  pthread_mutex_unlock(&l->mu);
  if (claim && !l->d->draining) svc_state_work_queued(l->d);
}

/* Notes the heartbeat's outcome; logs a change of state, not every failure. */
static void note(svc_lease *l, int rc, const bri_error *err) {
  int64_t now = bri_now_ms();
  pthread_mutex_lock(&l->mu);
  svc_store_health *h = &l->health;
  bool was_up = h->up;
  if (!rc) {
    if (!was_up)
      log_notice("job store %s answers again (after %llu failed heartbeat(s))", bri_jobs_path(l->d->store),
                 (unsigned long long)h->failures);
    h->up = true, h->last_ok_ms = now, h->failures = 0, h->down_since_ms = 0;
  } else {
    if (was_up) {
      log_warn("job store %s: heartbeat failed: %s; running jobs stop when their lease can no longer be "
               "confirmed, and no job starts until it answers",
               bri_jobs_path(l->d->store), err->msg);
      h->down_since_ms = now;
    }
    h->up = false, h->failures++;
    snprintf(h->last_error, sizeof h->last_error, "%s", err->msg);
  }
  pthread_mutex_unlock(&l->mu);
  uv_async_send(&l->kick); /* published on the loop */
}

static bool pool_holds(void *pool, int64_t job_id) { return svc_pool_holds(pool, job_id); }

static void beat(svc_lease *l) {
  brid *d = l->d;
  int64_t ids[HELD_MAX];
  int renewed[HELD_MAX];
  size_t n = svc_pool_held(d->pool, ids, HELD_MAX);
  int64_t sent = bri_mono_ms(), ttl = bri_jobs_lease_ttl_ms(d->store);
  bri_error err;
  int rc = bri_jobs_heartbeat(d->store, ids, n, renewed, NULL, &err);
  note(l, rc, &err);
  if (rc) return;
  svc_pool_leases(d->pool, ids, renewed, n, sent + ttl - ttl / 3);
  for (size_t i = 0; i < n; i++)
    if (!renewed[i]) log_warn("job %lld: its lease ran out or was taken over; stopping it", (long long)ids[i]);
  bri_jobs_recovery_report rep = {0};
  rc = svc_recover_jobs(d->store, pool_holds, d->pool, &rep, &err);
  if (rc) log_err("recovery of jobs whose lease expired left %zu job(s) as they were: %s", rep.stuck, err.msg);
  if (rep.interrupted)
    log_notice("recovered %zu job(s) whose lease expired: %zu requeued, %zu finished (their commit had landed), "
               "%zu failed, %zu cancelled; %zu file(s) removed, %zu kept",
               rep.interrupted, rep.requeued, rep.succeeded, rep.failed, rep.cancelled, rep.files_removed,
               rep.files_kept);
  /* every beat: jobs other instances queued (or requeued) are claimed by
   * this one's idle workers within lease_ttl / 3, even when none of its own
   * checks found them */
  pthread_mutex_lock(&l->mu);
  l->beat_done = true;
  pthread_mutex_unlock(&l->mu);
  uv_async_send(&l->kick);
}

static void *lease_main(void *arg) {
  svc_lease *l = arg;
  int64_t every = bri_jobs_lease_ttl_ms(l->d->store) / 3;
  pthread_mutex_lock(&l->mu);
  while (!l->stop) {
    pthread_mutex_unlock(&l->mu);
    beat(l);
    pthread_mutex_lock(&l->mu);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += every / 1000;
    ts.tv_nsec += (every % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    while (!l->stop && pthread_cond_timedwait(&l->cv, &l->mu, &ts) == 0) {
    }
  }
  pthread_mutex_unlock(&l->mu);
  return NULL;
}

/* Before the loop: registers the instance (refused when a live brid holds
 * its name), then recovers what a previous run left (before any worker can
 * claim a job): the jobs of instances of this machine that died are
 * recovered at once (instances.h). */
static int lease_prepare(brid *d, bri_error *err) {
  char host[256] = "?", locality[160];
  gethostname(host, sizeof host - 1);
  bri_jobs_locality(locality, sizeof locality);
  size_t dead = 0;
  int rc = bri_jobs_instance_register(d->store, host, (int64_t)getpid(), locality, BRID_VERSION, &dead, err);
  if (rc) return rc;
  if (dead) log_notice("%zu instance(s) of this machine died without stopping: their jobs are recovered now", dead);
  bri_jobs_recovery_report rep = {0};
  bri_error rerr;
  if (svc_recover_jobs(d->store, NULL, NULL, &rep, &rerr))
    log_err("recovery left %zu job(s) as they were: %s", rep.stuck, rerr.msg);
  if (rep.interrupted || rep.leftovers)
    log_notice("recovery: %zu interrupted job(s): %zu requeued, %zu finished (their commit had landed), %zu failed, "
               "%zu cancelled; %zu file(s) removed, %zu kept; %zu job(s) with leftover outputs",
               rep.interrupted, rep.requeued, rep.succeeded, rep.failed, rep.cancelled, rep.files_removed,
               rep.files_kept, rep.leftovers);
  return 0;
}

int svc_lease_start(brid *d, svc_lease **out, bri_error *err) {
  *out = NULL;
  svc_lease *l = calloc(1, sizeof *l);
  if (!l) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  l->d = d;
  l->health.up = true;
  l->health.last_ok_ms = bri_now_ms();
  d->store_health = l->health;
  pthread_mutex_init(&l->mu, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&l->cv, &ca);
  pthread_condattr_destroy(&ca);
  uv_async_init(&d->loop, &l->kick, on_kick);
  l->kick.data = l;
  int e = pthread_create(&l->thread, NULL, lease_main, l);
  if (e) {
    *out = l;
    return bri_error_set(err, BRI_EIO, "cannot start the heartbeat thread: %s", strerror(e));
  }
  l->started = true;
  *out = l;
  return 0;
}

void svc_lease_stop(svc_lease *l) {
  if (!l) return;
  pthread_mutex_lock(&l->mu);
  l->stop = true;
  pthread_cond_signal(&l->cv);
  pthread_mutex_unlock(&l->mu);
  if (l->started) pthread_join(l->thread, NULL);
  l->started = false;
  bri_error err;
  if (bri_jobs_instance_stop(l->d->store, &err)) log_warn("marking this instance stopped: %s", err.msg);
  if (!uv_is_closing((uv_handle_t *)&l->kick)) uv_close((uv_handle_t *)&l->kick, NULL);
}

void svc_lease_free(svc_lease *l) {
  if (!l) return;
  pthread_cond_destroy(&l->cv);
  pthread_mutex_destroy(&l->mu);
  free(l);
}

static int lease_start(brid *d, bri_error *err) { return svc_lease_start(d, &d->lease, err); }
static void lease_close(brid *d) { svc_lease_stop(d->lease); }
static void lease_dispose(brid *d) { svc_lease_free(d->lease); }

const brid_module svc_lease_module = {
    .name = "lease", .prepare = lease_prepare, .start = lease_start, .close = lease_close, .dispose = lease_dispose};
