/* svc_sched.c: queueing and claiming jobs, the cleanup schedule, and the
 * STATUS line (see svc_sched.h).
 *
 * The cleanup schedule keeps no timer per table: one timer is armed for the
 * earliest due cleanup across tables, and each tick walks the table list
 * (one store query), which costs O(tables) per tick and ticks are hours
 * apart in production. A table's next cleanup is due one interval after its
 * last successful cleanup, or after brid first saw it, or after the last
 * cleanup brid queued for it (so a failing cleanup is retried once per
 * interval, not in a loop). */
#include "svc_sched.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "bri/util.h"
#include "svc_log.h"
#include "svc_notify.h"
#include "svc_watch.h"
#include "svc_worker.h"

/* after a failed claim (a busy or failing job store) */
#define CLAIM_RETRY_MS 1000

static bool notify_enabled;

static void on_sched_timer(uv_timer_t *h) { svc_sched_kick(h->data); }
static void on_cleanup_timer(uv_timer_t *h) { svc_sched_cleanup_tick(h->data); }

void svc_sched_init(brid *d) {
  uv_timer_init(&d->loop, &d->sched_timer);
  uv_timer_init(&d->loop, &d->cleanup_timer);
  d->sched_timer.data = d;
  d->cleanup_timer.data = d;
  const char *ns = getenv("NOTIFY_SOCKET");
  notify_enabled = ns && *ns;
}

void svc_sched_kick(brid *d) {
  if (d->draining || !d->pool) return;
  bri_error err;
  while (svc_pool_idle(d->pool) > 0) {
    bri_jobs_job job;
    memset(&job, 0, sizeof job);
    int claimed = 0;
    if (bri_jobs_claim_next(d->store, &job, &claimed, &err)) {
      /* the job stays queued: nothing else may come to kick again */
      log_err("claiming the next job: %s; trying again in %ds", err.msg, CLAIM_RETRY_MS / 1000);
      uv_timer_stop(&d->sched_timer);
      uv_timer_start(&d->sched_timer, on_sched_timer, CLAIM_RETRY_MS, 0);
      svc_status_update(d, false);
      return;
    }
    if (!claimed) break;
    brid_table *t = svc_watch_find_known(d, job.root);
    if (!t || !t->present) {
      bri_jobs_outcome o = {.state = BRI_JOB_CANCELLED,
                            .error = "the table is gone or no longer under a configured root"};
      log_notice("job %lld (%s %s): %s", (long long)job.id, bri_job_kind_name(job.kind), job.root, o.error);
      if (bri_jobs_finish(d->store, job.id, &o, &err)) log_err("job %lld: %s", (long long)job.id, err.msg);
      bri_jobs_job_clear(&job);
      continue;
    }
    svc_pool_run(d->pool, &job, &t->policy);
  }
  int64_t when = 0;
  int has = 0;
  uv_timer_stop(&d->sched_timer);
  if (bri_jobs_next_due(d->store, &when, &has, &err) == 0 && has) {
    int64_t now = bri_now_ms();
    /* a job already due but not claimed waits for a worker or for its
     * table's running job: a worker ending kicks again, no timer needed */
    if (when > now) uv_timer_start(&d->sched_timer, on_sched_timer, (uint64_t)(when - now) + 5, 0);
  }
  svc_status_update(d, false);
}

int svc_sched_enqueue(brid *d, brid_table *t, bri_job_kind kind, int priority, const char *params_json,
                      int64_t *job_id, int *duplicate, bri_error *err) {
  int rc = bri_jobs_enqueue(d->store, t->id, kind, priority, params_json, 0, job_id, duplicate, err);
  if (!rc) svc_sched_kick(d);
  return rc;
}

void svc_sched_cleanup_tick(brid *d) {
  if (d->draining) return;
  bri_jobs_table *rows = NULL;
  size_t n = 0;
  bri_error err;
  if (bri_jobs_table_list(d->store, &rows, &n, &err)) {
    log_err("cleanup schedule: %s", err.msg);
    uv_timer_start(&d->cleanup_timer, on_cleanup_timer, 60000, 0);
    return;
  }
  int64_t now = bri_now_ms(), next = INT64_MAX;
  for (size_t i = 0; i < n; i++) {
    brid_table *t = svc_watch_find_known(d, rows[i].root);
    if (!t || !t->present || t->policy.cleanup_interval_sec <= 0) continue;
    int64_t every = t->policy.cleanup_interval_sec * 1000;
    int64_t base = rows[i].last_cleanup_at;
    if (rows[i].created_at > base) base = rows[i].created_at;
    if (t->cleanup_enqueued_ms > base) base = t->cleanup_enqueued_ms;
    int64_t due = base + every;
    if (due <= now) {
      int64_t id;
      int dup = 0;
      if (svc_sched_enqueue(d, t, BRI_JOB_CLEANUP, SVC_PRIO_SCHEDULED, "{\"trigger\":\"schedule\"}", &id, &dup, &err))
        log_err("%s: queueing a scheduled cleanup: %s", t->root, err.msg);
      else if (!dup)
        log_info("%s: scheduled cleanup queued as job %lld", t->root, (long long)id);
      t->cleanup_enqueued_ms = now;
      due = now + every;
    }
    if (due < next) next = due;
  }
  bri_jobs_table_list_free(rows, n);
  uv_timer_stop(&d->cleanup_timer);
  if (next != INT64_MAX) {
    int64_t wait = next - now;
    if (wait < 1000) wait = 1000;
    uv_timer_start(&d->cleanup_timer, on_cleanup_timer, (uint64_t)wait, 0);
  }
}

void svc_sched_stop(brid *d) {
  uv_timer_stop(&d->sched_timer);
  uv_timer_stop(&d->cleanup_timer);
}

void svc_status_update(brid *d, bool force) {
  if (!notify_enabled) return;
  static int64_t last;
  int64_t now = bri_now_ms();
  if (!force && now - last < 1000) return;
  last = now;
  uint64_t counts[BRI_JOB_NSTATES + 1] = {0};
  bri_error err;
  bri_jobs_count_states(d->store, 0, counts, &err);
  json_t *run = svc_pool_running(d->pool);
  char cur[256] = "";
  json_t *j0 = json_array_get(run, 0);
  if (j0) {
    json_t *pr = json_object_get(j0, "progress");
    json_t *pct = json_object_get(pr, "percent");
    snprintf(cur, sizeof cur, "; %s %s %.0f%%", json_string_value(json_object_get(j0, "kind")),
             json_string_value(json_object_get(j0, "table")), pct ? json_real_value(pct) : 0.0);
  }
  svc_notify_status("%s%zu tables; %llu running, %llu queued%s", d->draining ? "draining: " : "", d->n_tables,
                    (unsigned long long)counts[BRI_JOB_RUNNING], (unsigned long long)counts[BRI_JOB_QUEUED], cur);
  json_decref(run);
}
