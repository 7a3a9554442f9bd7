/* svc_sched.c: claiming jobs for idle workers, the cleanup schedule,
 * pruning the job history, and the STATUS line (see svc_sched.h).
 *
 * Every store call runs on libuv's thread pool; the loop keeps the timers
 * and hands claimed jobs to workers. One claim runs at a time (a kick
 * meanwhile runs another after it), and only the loop hands jobs to
 * workers, so the idle count a claim starts from holds until it comes back.
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
#include "brid/1_leaves/svc_kinds.h"
#include "brid/1_leaves/svc_log.h"
#include "brid/1_leaves/svc_notify.h"
#include "brid/3_exec/svc_worker.h"
#include "brid/4_sources/svc_roots.h"

/* after a failed claim (a busy or failing job store) */
#define CLAIM_RETRY_MS 1000
/* how long a job whose table no listing has reached yet waits, queued */
#define UNDISCOVERED_DEFER_MS 1000

static bool notify_enabled;

static void on_sched_timer(uv_timer_t *h) { svc_sched_kick(h->data); }
static void on_cleanup_timer(uv_timer_t *h) { svc_sched_cleanup_tick(h->data); }

/* ------------------------------------------------------------- claiming */

typedef struct claim_req {
  uv_work_t req;
  brid *d;
  bri_jobs_store *store;
  int want;          /* idle workers */
  bri_jobs_job *jobs;
  size_t n;
  int64_t next_due;
  int has_due;
  int rc;
  bri_error err;
} claim_req;

static void claim_work(uv_work_t *req) {
  claim_req *c = req->data;
  bri_error err;
  int64_t began = bri_jobs_now(c->store);
  while ((int)c->n < c->want) {
    int claimed = 0;
    if ((c->rc = bri_jobs_claim_next(c->store, &c->jobs[c->n], &claimed, &c->err)) || !claimed) break;
    c->n++;
  }
  if (!c->rc && bri_jobs_next_due(c->store, began, &c->next_due, &c->has_due, &err)) c->has_due = 0;
  (void)bri_failpoint("sched.after_claim", &err);
}

/* Claimed jobs the loop does not hand to a worker: a table gone (or no
 * longer under a root: the job is cancelled), a table not discovered yet
 * while a root's first listing still runs (a job queued before a restart,
 * claimed while the start-up discovery walks: it waits, queued), a table
 * whose root cannot be reached now (kept for when it is back), a daemon
 * that began to drain meanwhile (back to the queue as if never claimed).
 * The loop decides, from its own table list, when the claim comes back;
 * the store writes run here, on the thread pool. */
typedef enum { SETTLE_GONE, SETTLE_UNDISCOVERED, SETTLE_UNREACHABLE, SETTLE_STOPPING } settle_why;

typedef struct settle_req {
  uv_work_t req;
  brid *d;
  bri_jobs_store *store;
  bri_jobs_job *jobs;
  settle_why *why;
  size_t n;
} settle_req;

static void settle_work(uv_work_t *req) {
  settle_req *u = req->data;
  bri_error err;
  for (size_t i = 0; i < u->n; i++) {
    const bri_jobs_job *job = &u->jobs[i];
    int rc;
    if (u->why[i] == SETTLE_GONE) {
      bri_jobs_outcome o = {.state = BRI_JOB_CANCELLED,
                            .error = "the table is gone or no longer under a configured root"};
      log_notice("job %lld (%s %s): %s", (long long)job->id, bri_job_kind_name(job->kind), job->root, o.error);
      rc = bri_jobs_finish(u->store, job->id, &o, &err);
    } else if (u->why[i] == SETTLE_UNDISCOVERED) {
      rc = bri_jobs_defer(u->store, job->id, UNDISCOVERED_DEFER_MS, "brid's discovery has not reached the table yet",
                          NULL, &err);
    } else if (u->why[i] == SETTLE_UNREACHABLE) {
      rc = bri_jobs_defer(u->store, job->id, SVC_ROOT_DEFER_MS, "the table's root cannot be reached", NULL, &err);
    } else {
      rc = bri_jobs_defer(u->store, job->id, 0, "brid was stopping when the job was claimed", NULL, &err);
    }
    if (rc) log_err("job %lld: %s; the next start-up settles it", (long long)job->id, err.msg);
  }
}

static void settle_done(uv_work_t *req, int status) {
  (void)status;
  settle_req *u = req->data;
  brid *d = u->d;
  for (size_t i = 0; i < u->n; i++) bri_jobs_job_clear(&u->jobs[i]);
  free(u->jobs);
  free(u->why);
  free(u);
  if (!d->handles_closed) svc_sched_kick(d); /* the workers those jobs did not take */
}

/* A settle_req for at most n jobs, or NULL (out of memory). */
static settle_req *settle_new(brid *d, bri_jobs_store *store, size_t n) {
  settle_req *u = calloc(1, sizeof *u);
  if (u && (u->jobs = calloc(n, sizeof *u->jobs)) && (u->why = calloc(n, sizeof *u->why))) {
    u->req.data = u;
    u->d = d;
    u->store = store;
    return u;
  }
  if (u) free(u->jobs);
  free(u);
  return NULL;
}

static void claim_done(uv_work_t *req, int status) {
  claim_req *c = req->data;
  brid *d = c->d;
  d->claiming = false;
  settle_req *u = NULL;
  for (size_t i = 0; status == 0 && i < c->n; i++) {
    brid_table *t = svc_state_table(d, c->jobs[i].root);
    settle_why why;
    if (d->draining) why = SETTLE_STOPPING;
    else if (!t && !svc_roots_all_listed(d)) why = SETTLE_UNDISCOVERED;
    else if (!t || !t->present) why = SETTLE_GONE;
    else if (svc_roots_table_unreachable(d, t->root)) why = SETTLE_UNREACHABLE;
    else {
      t->job_running = true; /* until svc_watch_job_ended */
      svc_pool_run(d->pool, &c->jobs[i], &t->policy); /* takes the job */
      continue;
    }
    if (!u && !(u = settle_new(d, c->store, c->n))) {
      log_err("out of memory: job %lld stays running in the store until the next start-up", (long long)c->jobs[i].id);
      continue;
    }
    u->why[u->n] = why;
    u->jobs[u->n++] = c->jobs[i];
    memset(&c->jobs[i], 0, sizeof c->jobs[i]);
  }
  if (u && uv_queue_work(&d->loop, &u->req, settle_work, settle_done)) settle_done(&u->req, 0);
  if (!d->handles_closed) {
    uv_timer_stop(&d->sched_timer);
    if (status || c->rc) {
      /* the jobs stay queued: nothing else may come to kick again */
      log_err("claiming the next job: %s; trying again in %ds", status ? uv_strerror(status) : c->err.msg,
              CLAIM_RETRY_MS / 1000);
      uv_timer_start(&d->sched_timer, on_sched_timer, CLAIM_RETRY_MS, 0);
    } else if (c->has_due) {
      /* the next job to fall due after the claim began (one due by then
       * but not claimed waits for a worker or for its table's running job:
       * a worker ending kicks again). It may have fallen due while the
       * claim ran: then at once, or it would wait for a kick that may
       * never come. */
      int64_t now = bri_now_ms();
      uint64_t wait = c->next_due > now ? (uint64_t)(c->next_due - now) : 0;
      uv_timer_start(&d->sched_timer, on_sched_timer, wait + 5, 0);
    }
  }
  for (size_t k = 0; k < c->n; k++) bri_jobs_job_clear(&c->jobs[k]);
  free(c->jobs);
  free(c);
  svc_status_update(d, false);
  if (d->kick_again) {
    d->kick_again = false;
    svc_sched_kick(d);
  }
  svc_state_busy_end(d); /* the claim began in svc_sched_kick */
}

void svc_sched_kick(brid *d) {
  if (d->draining || !d->pool) return;
  if (d->claiming) {
    d->kick_again = true;
    return;
  }
  int idle = svc_pool_idle(d->pool);
  if (idle <= 0) return; /* a worker ending kicks again */
  claim_req *c = calloc(1, sizeof *c);
  if (!c || !(c->jobs = calloc((size_t)idle, sizeof *c->jobs))) {
    free(c);
    log_err("claiming jobs: out of memory");
    return;
  }
  c->req.data = c;
  c->d = d;
  c->store = d->store;
  c->want = idle;
  d->claiming = true;
  svc_state_busy_begin(d); /* a draining daemon waits for claims too */
  int e = uv_queue_work(&d->loop, &c->req, claim_work, claim_done);
  if (e) claim_done(&c->req, e);
}

/* ----------------------------------------------------------- the cleanups */

typedef struct tick_table {
  int64_t id, every_ms, enqueued_ms;
  size_t slot; /* its index in d->tables when the tick started */
  bool queued;
} tick_table;

typedef struct tick_req {
  uv_work_t req;
  brid *d;
  bri_jobs_store *store;
  tick_table *t; /* sorted by id on the pool thread */
  size_t n;
  int64_t now, next;
  int rc;
  bri_error err;
  bool queued;
} tick_req;

static int by_id(const void *a, const void *b) {
  int64_t x = ((const tick_table *)a)->id, y = ((const tick_table *)b)->id;
  return (x > y) - (x < y);
}

/* Runs on the pool: the store's tables (in id order) against the scheduled
 * ones (sorted here, not on the loop: 100,000 tables at start-up). */
static void tick_work(uv_work_t *req) {
  tick_req *k = req->data;
  bri_jobs_table *rows = NULL;
  size_t n = 0;
  bri_error err;
  if ((k->rc = bri_jobs_table_list(k->store, &rows, &n, &k->err))) return;
  qsort(k->t, k->n, sizeof *k->t, by_id);
  for (size_t i = 0, j = 0; i < n && j < k->n; i++) {
    while (j < k->n && k->t[j].id < rows[i].id) j++;
    if (j == k->n || k->t[j].id != rows[i].id) continue;
    tick_table *t = &k->t[j];
    int64_t base = rows[i].last_cleanup_at;
    if (rows[i].created_at > base) base = rows[i].created_at;
    if (t->enqueued_ms > base) base = t->enqueued_ms;
    int64_t due = base + t->every_ms;
    if (due <= k->now) {
      int64_t id;
      int dup = 0;
      if (bri_jobs_enqueue(k->store, t->id, BRI_JOB_CLEANUP, SVC_PRIO_SCHEDULED, "{\"trigger\":\"schedule\"}", 0, &id,
                           &dup, &err))
        log_err("%s: queueing a scheduled cleanup: %s", rows[i].root, err.msg);
      else if (!dup)
        log_info("%s: scheduled cleanup queued as job %lld", rows[i].root, (long long)id);
      t->queued = k->queued = true;
      due = k->now + t->every_ms;
    }
    if (due < k->next) k->next = due;
  }
  bri_jobs_table_list_free(rows, n);
}

static void tick_done(uv_work_t *req, int status) {
  tick_req *k = req->data;
  brid *d = k->d;
  d->ticking = false;
  for (size_t i = 0; i < k->n; i++) {
    const tick_table *x = &k->t[i];
    /* tables are only ever appended to d->tables: the slot still holds it */
    if (x->queued && x->slot < d->n_tables && d->tables[x->slot]->id == x->id)
      d->tables[x->slot]->cleanup_enqueued_ms = k->now;
  }
  if (!d->handles_closed && !d->draining) {
    uv_timer_stop(&d->cleanup_timer);
    if (status || k->rc) {
      log_err("cleanup schedule: %s", status ? uv_strerror(status) : k->err.msg);
      uv_timer_start(&d->cleanup_timer, on_cleanup_timer, 60000, 0);
    } else if (k->next != INT64_MAX) {
      int64_t wait = k->next - bri_now_ms();
      uv_timer_start(&d->cleanup_timer, on_cleanup_timer, (uint64_t)(wait < 1000 ? 1000 : wait), 0);
    }
    if (k->queued) svc_sched_kick(d);
  }
  free(k->t);
  free(k);
  if (d->tick_again) {
    d->tick_again = false;
    svc_sched_cleanup_tick(d);
  }
}

void svc_sched_cleanup_tick(brid *d) {
  if (d->draining) return;
  if (d->ticking) {
    d->tick_again = true;
    return;
  }
  tick_req *k = calloc(1, sizeof *k);
  if (!k || !(k->t = calloc(d->n_tables + 1, sizeof *k->t))) {
    free(k);
    log_err("cleanup schedule: out of memory");
    return;
  }
  for (size_t i = 0; i < d->n_tables; i++) {
    const brid_table *t = d->tables[i];
    if (!t->present || t->policy.cleanup_interval_sec <= 0 || svc_roots_table_unreachable(d, t->root)) continue;
    k->t[k->n++] = (tick_table){.id = t->id, .every_ms = t->policy.cleanup_interval_sec * 1000,
                                .enqueued_ms = t->cleanup_enqueued_ms, .slot = i};
  }
  k->req.data = k;
  k->d = d;
  k->store = d->store;
  k->now = bri_now_ms();
  k->next = INT64_MAX;
  d->ticking = true;
  int e = uv_queue_work(&d->loop, &k->req, tick_work, tick_done);
  if (e) tick_done(&k->req, e);
}

static void sched_stop(brid *d) {
  uv_timer_stop(&d->sched_timer);
  uv_timer_stop(&d->cleanup_timer);
}

/* ------------------------------------------------------------- STATUS= */

typedef struct status_req {
  uv_work_t req;
  brid *d;
  bri_jobs_store *store;
  uint64_t counts[BRI_JOB_NSTATES + 1];
} status_req;

static void status_work(uv_work_t *req) {
  status_req *r = req->data;
  bri_error err;
  bri_jobs_count_states(r->store, 0, r->counts, &err);
}

static void status_done(uv_work_t *req, int status) {
  status_req *r = req->data;
  brid *d = r->d;
  d->status_running = false;
  if (status == 0) {
    json_t *run = svc_pool_running(d->pool);
    char cur[256] = "";
    json_t *j0 = json_array_get(run, 0);
    if (j0) {
      json_t *pr = json_object_get(j0, "progress");
      json_t *pct = json_object_get(pr, "percent");
      snprintf(cur, sizeof cur, "; %s %s %.0f%%", json_string_value(json_object_get(j0, "kind")),
               json_string_value(json_object_get(j0, "table")), pct ? json_real_value(pct) : 0.0);
    }
    const brid_root *down;
    size_t n_down = svc_roots_unreachable(d, &down);
    char degraded[512] = "";
    if (!d->store_health.up)
      snprintf(degraded, sizeof degraded, "degraded: the job store does not answer; ");
    else if (n_down)
      snprintf(degraded, sizeof degraded, "degraded: root %s unreachable%s; ", down->uri,
               n_down > 1 ? " (and others)" : "");
    svc_notify_status("%s%s%zu tables; %llu running, %llu queued%s", d->draining ? "draining: " : "", degraded,
                      d->n_tables, (unsigned long long)r->counts[BRI_JOB_RUNNING],
                      (unsigned long long)r->counts[BRI_JOB_QUEUED], cur);
    json_decref(run);
  }
  free(r);
  if (d->status_again && !d->handles_closed) {
    d->status_again = false;
    svc_status_update(d, true);
  }
}

void svc_status_update(brid *d, bool force) {
  if (!notify_enabled) return;
  if (d->status_running) { /* a change meanwhile: said once this one ends */
    d->status_again |= force;
    return;
  }
  static int64_t last;
  int64_t now = bri_now_ms();
  if (!force && now - last < 1000) return;
  last = now;
  status_req *r = calloc(1, sizeof *r);
  if (!r) return;
  r->req.data = r;
  r->d = d;
  r->store = svc_state_reads(d);
  d->status_running = true;
  int e = uv_queue_work(&d->loop, &r->req, status_work, status_done);
  if (e) {
    d->status_running = false;
    free(r);
  }
}

/* ------------------------------------------------------------- history */

typedef struct prune_req {
  uv_work_t req;
  bri_jobs_store *store;
  int64_t max_age_ms;
  size_t max_rows;
} prune_req;

static void prune_work(uv_work_t *req) {
  prune_req *p = req->data;
  size_t removed = 0;
  bri_error err;
  if (bri_jobs_prune(p->store, p->max_age_ms, p->max_rows, &removed, &err))
    log_err("pruning the job history: %s", err.msg);
  else if (removed)
    log_info("pruned %zu finished job(s) from the history", removed);
}

static void prune_done(uv_work_t *req, int status) {
  (void)status;
  free(req->data);
}

/* A sweep ran (svc_state.h's swept hook): the cleanup schedule, and the
 * job history pruned to history_max_age and history_max_rows. */
static void on_swept(brid *d) {
  svc_sched_cleanup_tick(d);
  prune_req *p = calloc(1, sizeof *p);
  if (!p) return;
  p->req.data = p;
  p->store = d->store;
  p->max_age_ms = d->cfg.history_max_age_sec * 1000;
  p->max_rows = (size_t)d->cfg.history_max_rows;
  if (uv_queue_work(&d->loop, &p->req, prune_work, prune_done)) free(p);
}

/* ------------------------------------------------------------- lifecycle */

static int sched_start(brid *d, bri_error *err) {
  (void)err;
  uv_timer_init(&d->loop, &d->sched_timer);
  uv_timer_init(&d->loop, &d->cleanup_timer);
  d->sched_timer.data = d;
  d->cleanup_timer.data = d;
  const char *ns = getenv("NOTIFY_SOCKET");
  notify_enabled = ns && *ns;
  d->hooks.work_queued = svc_sched_kick;
  d->hooks.status_changed = svc_status_update;
  d->hooks.tables_changed = svc_sched_cleanup_tick;
  d->hooks.swept = on_swept;
  return 0;
}

/* A reload: the policies changed (svc_watch's reload ran before this one):
 * the cleanup schedule again, and claims for what a resumed table lets run. */
static void sched_apply_config(brid *d) {
  svc_sched_cleanup_tick(d);
  svc_sched_kick(d);
}

static void sched_close(brid *d) {
  uv_close((uv_handle_t *)&d->sched_timer, NULL);
  uv_close((uv_handle_t *)&d->cleanup_timer, NULL);
}

const brid_module svc_sched_module = {.name = "sched",
                                      .start = sched_start,
                                      .apply_config = sched_apply_config,
                                      .drain = sched_stop,
                                      .close = sched_close};
