/* svc_watch.c: the discoveries as the loop runs them (queued; the tables
 * they find registered, watched and timed; the walk itself is
 * svc_discover.c's), inotify watches, the triggers (debounce,
 * max_delay, the count of new small fragments) and planner checks (see
 * svc_watch.h).
 *
 * Tables and watched directories live in arrays of pointers indexed by a
 * hash map from path to slot, and are never freed before shutdown, so a
 * handle callback or an in-flight check may keep a pointer. A table that
 * vanishes is unwatched and marked absent; if it comes back, its slot is
 * reused. Checks run on libuv's thread pool; at most one per table is in
 * flight, and a trigger that arrives meanwhile is remembered and replayed
 * when the check ends (so no commit is ever missed, and no table is planned
 * twice at once); a QUIET check asked meanwhile wins over a COUNT one. One
 * timer per table serves the debounce and max_delay: each commit sets it to
 * whichever of the two comes first. */
#include "svc_watch.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bri/compact.h"
#include "bri/table.h"
#include "bri/util.h"
#include "brid/1_leaves/svc_log.h"
#include "svc_discover.h"
#include "svc_poll.h"
#include "svc_roots.h"

#define RESCAN_DELAY_MS 1000

static int64_t debounce_ms(const brid_table *t) {
  int64_t s = t->policy.debounce_sec >= 0 ? t->policy.debounce_sec : t->d->cfg.debounce_sec;
  return s * 1000;
}

/* The wait before the first check of a table brid has just found: the
 * debounce counts from its last commit (a writer may be busy right now),
 * not from brid's start, so that a restart over 100,000 quiet tables does
 * not wait the debounce before checking them. changed_ms 0: not known: the
 * whole debounce. */
static uint64_t first_check_ms(const brid_table *t, int64_t changed_ms) {
  int64_t wait = debounce_ms(t), quiet = changed_ms > 0 ? bri_now_ms() - changed_ms : 0;
  return (uint64_t)(quiet >= wait ? 0 : quiet > 0 ? wait - quiet : wait);
}

/* ---------------------------------------------------------------- checks */

typedef struct check_req {
  uv_work_t req;
  brid_table *t;
  char *root;
  int64_t table_id;
  svc_policy policy;
  svc_probe how;
  bool draining;
  bri_jobs_store *store;
  svc_check res;
} check_req;

static void check_work(uv_work_t *req) {
  check_req *c = req->data;
  svc_check_probe(c->root, &c->policy, &c->how, &c->res);
  svc_check_settle(c->store, c->table_id, c->root, c->policy.auto_compact && !c->draining, c->how.has_seen,
                   c->how.seen, &c->res);
}

/* On the loop thread, memory only: t's state becomes what c found
 * (version, fragments, has_work, check_error, the seen version), and the
 * scheduler looks when c queued a job. */
static void svc_watch_apply(brid_table *t, const svc_check *c) {
  brid *d = t->d;
  t->last_check_ms = bri_now_ms();
  if (c->rc) {
    d->n_check_errors++;
    bool unsupported = c->rc == BRI_EUNSUPPORTED;
    if (!t->check_error || strcmp(t->check_error, c->err.msg) != 0)
      log_warn("%s: %s: %s", t->root, unsupported ? "unsupported, left alone" : "cannot plan", c->err.msg);
    free(t->check_error);
    t->check_error = strdup(c->err.msg);
    t->check_unsupported = unsupported;
    return;
  }
  if (t->check_error) log_info("%s: %s again", t->root, t->check_unsupported ? "supported" : "readable");
  free(t->check_error);
  t->check_error = NULL;
  t->check_unsupported = false;
  if (!c->empty) {
    t->has_latest = true;
    t->latest_version = c->latest;
  }
  if (!c->loaded) return;
  t->loaded = true;
  t->fragments = c->fragments;
  if (c->planned) {
    t->has_work = c->bins > 0;
    t->new_after = c->max_fragment_id; /* planned: what comes next is new */
  }
  if (c->seen_recorded) {
    t->has_seen = true;
    t->seen_version = c->latest;
  }
  log_debug("%s: version %llu, %llu fragments, %llu new small, %s %llu bins to compact", t->root,
            (unsigned long long)c->latest, (unsigned long long)c->fragments, (unsigned long long)c->new_small,
            c->planned ? "planned:" : "not planned", (unsigned long long)c->bins);
  if (c->queued) d->n_triggers[c->trigger]++;
  /* the commits a queued compaction covers wait no longer */
  if (c->waiting && c->trigger == SVC_TRIGGER_COUNT) t->pending_ms = 0;
  /* a job queued before by another instance is this one's to claim too */
  if (c->waiting) svc_state_work_queued(d);
}

/* Checks run on libuv's thread pool, which also serves the socket's
 * requests and the metrics: at most SVC_CHECKS_MAX run at once, so that a
 * sweep of many tables never leaves `brictl status` waiting behind it. The
 * others wait in a FIFO, each table at most once. */
#define SVC_CHECKS_MAX 2

static void wait_for_slot(brid_table *t, svc_trigger trigger, bool force) {
  brid *d = t->d;
  t->check_waiting_force |= force;
  t->check_waiting_quiet |= trigger == SVC_TRIGGER_QUIET;
  if (t->check_waiting) return;
  t->check_waiting = true;
  t->check_next = NULL;
  if (d->checks_tail) d->checks_tail->check_next = t;
  else d->checks_head = t;
  d->checks_tail = t;
  d->checks_waiting++;
}

/* The first sweep is done once the start-up discovery has ended and every
 * table registered has been checked once. */
static void first_sweep_maybe_done(brid *d) {
  if (d->first_sweep_ms || !d->discovered_ms || d->n_unchecked) return;
  d->first_sweep_ms = bri_now_ms();
  log_notice("first sweep done: %zu table(s) discovered and checked once, %.1f s after start", d->n_tables,
             (double)(d->first_sweep_ms - d->started_ms) / 1000);
}

static void mark_checked(brid_table *t) {
  if (t->checked) return;
  t->checked = true;
  t->d->n_unchecked--;
  first_sweep_maybe_done(t->d);
}

static void check_as(brid_table *t, svc_trigger trigger, bool force);
static void note_commit(brid_table *t);

/* Starts waiting checks while slots are free. */
static void start_waiting(brid *d) {
  while (d->checks_head && d->checks_inflight < SVC_CHECKS_MAX && !d->draining) {
    brid_table *t = d->checks_head;
    d->checks_head = t->check_next;
    if (!d->checks_head) d->checks_tail = NULL;
    d->checks_waiting--;
    bool force = t->check_waiting_force, quiet = t->check_waiting_quiet;
    t->check_waiting = t->check_waiting_force = t->check_waiting_quiet = false;
    check_as(t, quiet ? SVC_TRIGGER_QUIET : SVC_TRIGGER_COUNT, force);
  }
}

static void check_done(uv_work_t *req, int status) {
  check_req *c = req->data;
  brid_table *t = c->t;
  brid *d = t->d;
  t->check_running = false;
  d->checks_inflight--;
  d->n_checks++;
  uint64_t before = t->has_latest ? t->latest_version : 0;
  if (status == 0) svc_watch_apply(t, &c->res);
  /* a busy polled table moves on (a commit), or rests (svc_poll.h) */
  if (t->busy && status == 0 && !c->res.rc && !c->res.empty) {
    int64_t now = bri_now_ms();
    if (c->res.latest > before) {
      t->busy_moved_ms = now;
      note_commit(t);
    } else if (now - t->busy_moved_ms >= SVC_BUSY_IDLE_MS) {
      t->busy = false;
    }
  }
  if (c->how.trigger == SVC_TRIGGER_QUIET || c->res.planned) mark_checked(t);
  bool again = t->check_again, force = t->check_again_force, quiet = t->check_again_quiet;
  t->check_again = t->check_again_force = t->check_again_quiet = false;
  free(c->root);
  free(c);
  if (again && !d->draining) check_as(t, quiet ? SVC_TRIGGER_QUIET : SVC_TRIGGER_COUNT, force);
  start_waiting(d);
  svc_state_busy_end(d); /* the check began in check_as */
}

/* Asks the planner about t now, for trigger (force: plan even if the
 * version did not move). */
static void check_as(brid_table *t, svc_trigger trigger, bool force) {
  brid *d = t->d;
  if (d->draining || !t->present) return;
  if (svc_roots_table_unreachable(d, t->root)) return; /* checked again when its root is back */
  if (t->check_running) {
    t->check_again = true;
    t->check_again_force |= force;
    t->check_again_quiet |= trigger == SVC_TRIGGER_QUIET;
    return;
  }
  if (t->check_waiting || d->checks_inflight >= SVC_CHECKS_MAX) {
    wait_for_slot(t, trigger, force);
    return;
  }
  check_req *c = calloc(1, sizeof *c);
  if (!c || !(c->root = strdup(t->root))) {
    free(c);
    log_err("%s: out of memory for a planner check", t->root);
    return;
  }
  c->req.data = c;
  c->t = t;
  c->table_id = t->id;
  c->store = d->store;
  c->draining = d->draining;
  c->policy = t->policy;
  /* after a restart the fragments are not known yet: read them */
  c->how = (svc_probe){.trigger = trigger, .force = force || (trigger == SVC_TRIGGER_QUIET && !t->loaded),
                       .has_seen = t->has_seen, .seen = t->seen_version, .new_after = t->new_after};
  int e = uv_queue_work(&d->loop, &c->req, check_work, check_done);
  if (e) {
    log_err("%s: cannot start a planner check: %s", t->root, uv_strerror(e));
    free(c->root);
    free(c);
    return;
  }
  t->check_running = true;
  d->checks_inflight++;
  svc_state_busy_begin(d); /* a draining daemon waits for checks too */
  /* a QUIET check covers the commits so far: max_delay counts from the next */
  if (trigger == SVC_TRIGGER_QUIET) t->pending_ms = 0;
}

void svc_watch_check(brid_table *t, bool force) { check_as(t, SVC_TRIGGER_QUIET, force); }

/* A COUNT check of t now (a busy polled table between polls, svc_poll.c):
 * a version it finds newer counts as a commit, an unchanged one ends t's
 * busy state. */
static void svc_watch_count(brid_table *t) { check_as(t, SVC_TRIGGER_COUNT, false); }

/* ---------------------------------------------------------- fs events */

static void on_debounce(uv_timer_t *h) { svc_watch_check(h->data, false); }

static int64_t max_delay_ms(const brid_table *t) { return t->policy.max_delay_sec * 1000; }

/* A commit: the QUIET check waits for the debounce, or until max_delay
 * after the first commit it has not covered, whichever comes first. */
static void note_commit(brid_table *t) {
  int64_t now = bri_now_ms();
  t->last_event_ms = now;
  if (!t->pending_ms) t->pending_ms = now;
  if (t->d->draining) return;
  int64_t wait = debounce_ms(t), left = t->pending_ms + max_delay_ms(t) - now;
  if (max_delay_ms(t) > 0 && left < wait) wait = left > 0 ? left : 0;
  uv_timer_start(&t->debounce, on_debounce, (uint64_t)wait, 0);
}

/* A commit of version v (an inotify event, a poll that saw the version
 * move): the QUIET check's timer (note_commit), and the COUNT check now
 * (svc_watch.h). */
static void commit_seen(brid_table *t, uint64_t v) {
  note_commit(t);
  if (t->d->draining || !t->policy.max_new_fragments || !t->policy.auto_compact) return;
  /* while a job of brid's runs on the table, a commit is most likely its
   * own: the count waits for the job's end (svc_watch_job_ended), not a
   * manifest read per compaction */
  if (!t->job_running) check_as(t, SVC_TRIGGER_COUNT, false);
  else if (v > t->job_event_version) t->job_event_version = v;
}

/* On the loop: a worker's job of t ended (commits seen while it ran
 * started no COUNT check: most were its own; one newer than what the job
 * saw after its commit starts it now). */
static void svc_watch_job_ended(brid_table *t) {
  t->job_running = false;
  /* no look ran meanwhile (svc_poll.c): the job's end restarts the idle window */
  if (t->busy) t->busy_moved_ms = bri_now_ms();
  /* the job's own check after its commit saw up to latest_version; a
   * commit named after it is another writer's */
  bool newer = t->job_event_version && (!t->has_latest || t->job_event_version > t->latest_version);
  t->job_event_version = 0;
  if (newer && t->policy.max_new_fragments && t->policy.auto_compact) check_as(t, SVC_TRIGGER_COUNT, false);
}

static void discover(brid *d, svc_discover_scope scope);

/* inotify saw a directory change: the local roots are walked again (the
 * S3 roots have their polls) */
static void on_rescan(uv_timer_t *h) { discover(h->data, SVC_DISCOVER_LOCAL); }

/* Coalesced: the first event arms the timer, later ones ride along. */
static void schedule_rescan(brid *d) {
  if (!d->draining && !uv_is_active((uv_handle_t *)&d->rescan_timer))
    uv_timer_start(&d->rescan_timer, on_rescan, RESCAN_DELAY_MS, 0);
}

static void on_table_event(uv_fs_event_t *h, const char *name, int events, int status) {
  brid_table *t = h->data;
  brid *d = t->d;
  d->n_fs_events++;
  if (status < 0) {
    log_debug("%s: watch error: %s", t->root, uv_strerror(status));
    return;
  }
  uint64_t v;
  bri_naming scheme;
  if (name && bri_version_parse_name(name, &v, &scheme)) {
    commit_seen(t, v);
    return;
  }
  (void)events;
  /* a writer's staging file or the version hint (every commit of brid's
   * and of Lance's makes and renames them): nothing a check would see */
  if (name && (!strncmp(name, ".tmp", 4) || !strcmp(name, "latest_version_hint.json"))) return;
  /* something else changed in _versions/ (it may be gone, with the table;
   * libuv names the directory itself then): the rescan, off the loop, tells */
  schedule_rescan(d);
}

static void on_dir_event(uv_fs_event_t *h, const char *name, int events, int status) {
  brid_dirwatch *w = h->data;
  (void)name, (void)events;
  w->d->n_fs_events++;
  if (status >= 0) schedule_rescan(w->d);
}

/* A table brid cannot watch (ENOSPC: fs.inotify.max_user_watches is
 * exhausted) is found by the periodic sweep instead, which also tries to
 * watch it again. One warning until a watch succeeds again, not one per
 * table: 100,000 tables over the limit would flood the journal. */
static void watch_table(brid_table *t) {
  if (t->s3 || t->watching || bri_failpoint_armed("watch.no_inotify")) return; /* S3: polled */
  brid *d = t->d;
  char p[PATH_MAX];
  snprintf(p, sizeof p, "%s/_versions", t->root);
  int e = bri_failpoint_armed("watch.inotify_exhausted") ? UV_ENOSPC : uv_fs_event_start(&t->ev, on_table_event, p, 0);
  if (e) {
    snprintf(d->watch_error, sizeof d->watch_error, "%s%s", uv_strerror(e),
             e == UV_ENOSPC ? " (fs.inotify.max_user_watches is exhausted)" : "");
    if (!d->watch_failing) {
      char every[48];
      bri_duration_format(d->cfg.sweep_sec, every, sizeof every);
      log_warn("%s: cannot watch %s: %s; it and any other table brid cannot watch rely on the periodic sweep "
               "(every %s; status: tables.sweep_only)", t->root, p, d->watch_error, every);
    }
    d->watch_failing = true;
    return;
  }
  if (d->watch_failing) log_notice("%s: watched again; tables still unwatched: see status (tables.sweep_only)", t->root);
  d->watch_failing = false;
  t->watching = true;
}

static void unwatch_table(brid_table *t) {
  if (t->watching) uv_fs_event_stop(&t->ev);
  t->watching = false;
  uv_timer_stop(&t->debounce);
}

/* ------------------------------------------------------------ registry */

typedef struct pause_req {
  uv_work_t req;
  brid_table *t;
  bri_jobs_store *store;
  int64_t id;
  bool pause;
  int rc;
  bri_error err;
} pause_req;

static void pause_work(uv_work_t *req) {
  pause_req *p = req->data;
  p->rc = bri_jobs_table_set_paused(p->store, p->id, p->pause, &p->err);
}

static void pause_done(uv_work_t *req, int status) {
  pause_req *p = req->data;
  brid_table *t = p->t;
  if (status == 0 && p->rc == 0) {
    t->paused_by_config = p->pause;
    log_info("%s: %s by the configuration", t->root, p->pause ? "paused" : "no longer paused");
    if (!p->pause) svc_state_work_queued(t->d);
  } else {
    log_err("%s: %s: %s", t->root, p->pause ? "pausing" : "resuming", status ? uv_strerror(status) : p->err.msg);
  }
  free(p);
}

void svc_watch_apply_pause(brid_table *t) {
  if (t->policy.paused == t->paused_by_config) return;
  pause_req *p = calloc(1, sizeof *p);
  if (!p) {
    log_err("%s: out of memory", t->root);
    return;
  }
  p->req.data = p;
  p->t = t, p->store = t->d->store, p->id = t->id, p->pause = t->policy.paused;
  int e = uv_queue_work(&t->d->loop, &p->req, pause_work, pause_done);
  if (e) pause_done(&p->req, e);
}

/* ------------------------------------------------------------ discovery
 *
 * A discovery walks the roots on libuv's thread pool (svc_discover.c) and
 * registers the new tables in the job store there, in batches; the loop takes each batch as it is registered (the
 * discovery of every root or of the local ones: new tables, their watches
 * and timers, while the walk goes on, so 100,000 tables never hold the
 * loop or the socket), and the result when the walk ends: tables gone,
 * directory watches. The first one, at start-up, makes brid ready.
 * At most one runs at a time; a request meanwhile runs another after it,
 * and whoever waits for a discovery (a control request naming a table not
 * registered yet) is called when one that started after the request ends. */

typedef struct disc_waiter {
  void (*cb)(void *user);
  void *user;
  struct disc_waiter *next;
} disc_waiter;

/* A poll's word on a table: a latest version other than the last one
 * seen (by a poll, else by a check) is a commit, as an inotify event is. */
static void polled(brid_table *t, const svc_discovered *f) {
  if (!f->has_version) return;
  bool moved = t->has_polled ? f->version != t->polled_version : !t->has_latest || f->version != t->latest_version;
  t->has_polled = true;
  t->polled_version = f->version;
  if (!moved || !t->present || t->d->draining) return;
  log_debug("%s: version %llu (polled)", t->root, (unsigned long long)f->version);
  commit_seen(t, f->version);
  svc_poll_busy(t);
}

/* A walk found table t, which the loop knows already. */
static void found_known(brid_table *t, const svc_discovered *f) {
  t->found = true;
  if (!t->present) {
    log_info("%s: table is back", f->root);
    t->present = true;
    watch_table(t);
    uv_timer_start(&t->debounce, on_debounce, first_check_ms(t, f->changed_ms), 0);
  }
  polled(t, f);
}

/* The table a walk found, known or new: watched and its first check timed.
 * Returns it (NULL: not registered). */
static brid_table *register_table(brid *d, const svc_discovered *f) {
  brid_table *t = f->placed ? f->placed : svc_state_table(d, f->root);
  if (t) {
    found_known(t, f);
    return t;
  }
  if (!f->fresh || f->failed) return NULL; /* registered and gone again meanwhile, or no id */
  if (d->n_tables == d->cap_tables) {
    size_t cap = d->cap_tables ? d->cap_tables * 2 : 64;
    brid_table **a = realloc(d->tables, cap * sizeof *a);
    if (!a) {
      log_err("%s: out of memory", f->root);
      return NULL;
    }
    d->tables = a, d->cap_tables = cap;
  }
  t = calloc(1, sizeof *t);
  if (!t || !(t->root = strdup(f->root)) || !bri_strmap_put(&d->by_root, f->root, d->n_tables, 0)) {
    if (t) free(t->root);
    free(t);
    log_err("%s: out of memory", f->root);
    return NULL;
  }
  t->d = d;
  t->id = f->id;
  t->present = t->found = true;
  t->has_seen = f->has_seen;
  t->seen_version = f->seen;
  t->s3 = f->s3;
  t->has_polled = f->has_version;
  t->polled_version = f->version;
  t->root_unreachable = svc_roots_table_unreachable(d, f->root);
  svc_config_policy_for(&d->cfg, f->root, &t->policy);
  uv_fs_event_init(&d->loop, &t->ev);
  uv_timer_init(&d->loop, &t->debounce);
  t->ev.data = t;
  t->debounce.data = t;
  d->tables[d->n_tables++] = t;
  d->n_unchecked++;
  log_info("%s: %s table (id %lld)", f->root, f->created ? "new" : "watching", (long long)f->id);
  svc_watch_apply_pause(t);
  watch_table(t);
  uv_timer_start(&t->debounce, on_debounce, first_check_ms(t, f->changed_ms), 0);
  /* a polled table committed to within the idle window (by the clock of
   * its store: a skew only delays the look to the next poll) may have a
   * writer at work right now: looked at every SVC_BUSY_POLL_MS from now,
   * not first at the root's next poll, a poll_interval away */
  if (f->has_version && f->changed_ms > 0 && bri_now_ms() - f->changed_ms < SVC_BUSY_IDLE_MS) svc_poll_busy(t);
  return t;
}

static void watch_dir(brid *d, const char *path) {
  bri_strmap_entry *e = bri_strmap_get(&d->dir_index, path);
  brid_dirwatch *w = e ? d->dirs[e->a] : NULL;
  if (!w) {
    if (d->n_dirs == d->cap_dirs) {
      size_t cap = d->cap_dirs ? d->cap_dirs * 2 : 16;
      brid_dirwatch **a = realloc(d->dirs, cap * sizeof *a);
      if (!a) return;
      d->dirs = a, d->cap_dirs = cap;
    }
    w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path)) || !bri_strmap_put(&d->dir_index, path, d->n_dirs, 0)) {
      if (w) free(w->path);
      free(w);
      return;
    }
    w->d = d;
    uv_fs_event_init(&d->loop, &w->ev);
    w->ev.data = w;
    d->dirs[d->n_dirs++] = w;
  }
  w->present = true;
  if (!w->watching && !bri_failpoint_armed("watch.no_inotify")) {
    int rc = uv_fs_event_start(&w->ev, on_dir_event, path, 0);
    if (rc) log_warn("%s: cannot watch for new tables: %s; relying on the periodic sweep", path, uv_strerror(rc));
    else w->watching = true;
  }
}

/* Whether the discovery r decides about table t: t lies under a root it
 * walked (and listed), or r walked every root. A table under a root that
 * could not be listed just now is left as it is. */
static bool in_scope(const svc_discovery *r, const brid_table *t) {
  ssize_t i = svc_discovery_root_of(r, t->root);
  if (i >= 0) return r->root_rc[i] == 0;
  return r->full;
}

/* The async handle: the streaming discovery's walk registered a batch of
 * tables in the store; the loop registers, watches and schedules them now,
 * not when the whole walk of 100,000 tables ends. */
static void on_discovery_batch(uv_async_t *h) {
  brid *d = h->data;
  svc_discovery *r = d->streaming;
  if (!r || d->handles_closed) return;
  pthread_mutex_lock(&r->mu);
  for (; r->n_applied < r->n_published; r->n_applied++) {
    svc_discovered *f = &r->tables[r->n_applied];
    if (f->fresh) f->placed = register_table(d, f);
  }
  pthread_mutex_unlock(&r->mu);
}

static void discover_done(uv_work_t *req, int status) {
  svc_discovery *r = req->data;
  brid *d = r->d;
  if (!r->done) d->discovering = false;
  if (d->streaming == r) d->streaming = NULL;
  if (status == 0 && !d->handles_closed) {
    for (size_t i = 0; i < d->n_tables; i++) d->tables[i]->found = !in_scope(r, d->tables[i]);
    if (r->all_local)
      for (size_t i = 0; i < d->n_dirs; i++) d->dirs[i]->present = false;
    for (size_t i = 0; i < r->n_roots; i++)
      if (svc_roots_report(d, r->roots[i], r->root_rc[i] ? NULL : r->canon[i], r->root_rc[i], r->root_why[i]))
        for (size_t k = 0; k < d->n_tables; k++) /* back: what changed meanwhile is planned now */
          if (svc_discovery_root_of(r, d->tables[k]->root) == (ssize_t)i) svc_watch_check(d->tables[k], false);
    for (size_t i = 0; i < r->n_tables; i++) register_table(d, &r->tables[i]);
    for (size_t i = 0; i < r->n_dirs; i++) watch_dir(d, r->dirs[i]);
    for (size_t i = 0; i < d->n_tables; i++) {
      brid_table *t = d->tables[i];
      if (!t->found && t->present) {
        log_info("%s: table is gone (or no longer under a root); not watched any more", t->root);
        unwatch_table(t);
        t->present = false;
        mark_checked(t);
      }
    }
    for (size_t i = 0; r->all_local && i < d->n_dirs; i++) {
      brid_dirwatch *w = d->dirs[i];
      if (!w->present && w->watching) {
        uv_fs_event_stop(&w->ev);
        w->watching = false;
      }
    }
  }
  for (disc_waiter *w = r->waiters, *next; w; w = next) {
    next = w->next;
    w->cb(w->user);
    free(w);
  }
  if (r->done) {
    int rc = status ? BRI_EIO : r->root_err.code;
    bri_error e = r->root_err;
    if (status) bri_error_set(&e, BRI_EIO, "%s", uv_strerror(status));
    r->done(r->done_user, rc, &e);
    svc_discovery_free(r);
    return;
  }
  bool startup = r->startup;
  svc_discovery_free(r);
  if (startup) {
    d->discovered_ms = bri_now_ms();
    svc_state_ready(d);
    first_sweep_maybe_done(d);
  }
  if (d->discover_again) {
    d->discover_again = false;
    svc_watch_discover(d);
  }
  svc_state_busy_end(d); /* the discovery began in queue_discovery */
}

/* A discovery of scope's roots, whoever waits for one (not of one root)
 * called when it ends; NULL out of memory. */
static svc_discovery *discover_req(brid *d, svc_discover_scope scope, const char *only) {
  svc_discovery *r = svc_discovery_new(d, scope, only);
  if (r && scope != SVC_DISCOVER_ONE) {
    r->waiters = d->discover_waiting;
    d->discover_waiting = NULL;
  }
  return r;
}

/* Starts r, the one discovery of every root or of the local ones, whose
 * batches the loop takes as they come. */
static void queue_discovery(brid *d, svc_discovery *r) {
  d->discovering = true;
  svc_state_busy_begin(d); /* a draining daemon waits for discoveries too */
  d->streaming = r;
  r->stream = true;
  int e = uv_queue_work(&d->loop, &r->req, svc_discovery_work, discover_done);
  if (e) {
    log_err("discovery: %s", uv_strerror(e));
    discover_done(&r->req, e);
  }
}

/* A discovery of every root (scope SVC_DISCOVER_ALL) or of the local ones. */
static void discover(brid *d, svc_discover_scope scope) {
  if (d->draining) return;
  if (d->discovering) {
    d->discover_again = true;
    return;
  }
  svc_discovery *r = discover_req(d, scope, NULL);
  if (!r) {
    log_err("discovery: out of memory");
    return;
  }
  queue_discovery(d, r);
}

void svc_watch_discover(brid *d) { discover(d, SVC_DISCOVER_ALL); }

/* A discovery of one S3 root (its poll, svc_poll.c), beside any other;
 * done(user, rc, err) on the loop when it has ended (rc: the root could not
 * be listed; at once when brid drains). */
static void svc_watch_discover_root(brid *d, const char *root, svc_discovered_fn done, void *user) {
  svc_discovery *r = d->draining ? NULL : discover_req(d, SVC_DISCOVER_ONE, root);
  if (r) {
    r->done = done, r->done_user = user;
    if (uv_queue_work(&d->loop, &r->req, svc_discovery_work, discover_done) == 0) return;
    svc_discovery_free(r);
  }
  bri_error err;
  bri_error_set(&err, d->draining ? BRI_EINVAL : BRI_ENOMEM, "%s", d->draining ? "draining" : "out of memory");
  done(user, err.code, &err);
}

void svc_watch_discover_then(brid *d, void (*cb)(void *user), void *user) {
  disc_waiter *w = calloc(1, sizeof *w);
  if (!w || d->draining) {
    free(w);
    cb(user); /* no discovery to wait for */
    return;
  }
  w->cb = cb, w->user = user, w->next = d->discover_waiting;
  d->discover_waiting = w;
  /* one that runs now began before this request: the next one serves it */
  if (d->discovering) d->discover_again = true;
  else svc_watch_discover(d);
}

/* ------------------------------------------------------------- public */

static void on_sweep(uv_timer_t *h) {
  brid *d = h->data;
  d->n_sweeps++;
  svc_watch_discover(d);
  for (size_t i = 0; i < d->n_tables; i++) {
    brid_table *t = d->tables[i];
    /* S3 tables: their polls see new versions; re-checked here only when
     * the last check failed or none has read them yet */
    if (t->present && (!t->s3 || t->check_error || !t->loaded)) svc_watch_check(t, false);
    if (t->present && !t->watching) watch_table(t); /* the watch limit may have room again */
  }
  svc_state_swept(d);
}

static void start_sweep(brid *d) {
  uv_timer_stop(&d->sweep_timer);
  if (d->cfg.sweep_sec > 0)
    uv_timer_start(&d->sweep_timer, on_sweep, (uint64_t)d->cfg.sweep_sec * 1000, (uint64_t)d->cfg.sweep_sec * 1000);
}

static int svc_watch_start(brid *d, bri_error *err) {
  uv_timer_init(&d->loop, &d->sweep_timer);
  uv_timer_init(&d->loop, &d->rescan_timer);
  uv_async_init(&d->loop, &d->discovery_async, on_discovery_batch);
  d->sweep_timer.data = d;
  d->rescan_timer.data = d;
  d->discovery_async.data = d;
  /* the first discovery of the local roots runs off the loop like any
   * other, so that the control socket answers from the first second; brid
   * is ready (READY=1, the "ready" log line) when it ends (S3 roots: their
   * first poll comes right after, so that a store that does not answer
   * cannot hold start-up) */
  svc_discovery *r = discover_req(d, SVC_DISCOVER_LOCAL, NULL);
  if (!r) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  r->startup = true;
  d->hooks.table_checked = svc_watch_apply;
  d->hooks.job_ended = svc_watch_job_ended;
  d->hooks.discover_root = svc_watch_discover_root;
  d->hooks.count_check = svc_watch_count;
  queue_discovery(d, r);
  start_sweep(d);
  return 0;
}

static void svc_watch_apply_config(brid *d) {
  for (size_t i = 0; i < d->n_tables; i++) {
    brid_table *t = d->tables[i];
    svc_policy old = t->policy;
    svc_config_policy_for(&d->cfg, t->root, &t->policy);
    svc_watch_apply_pause(t);
    if (memcmp(&old.compact, &t->policy.compact, sizeof old.compact) != 0 || old.auto_compact != t->policy.auto_compact)
      if (t->present) svc_watch_check(t, true); /* thresholds moved: plan again */
  }
  svc_watch_discover(d);
  start_sweep(d);
}

static void svc_watch_stop(brid *d) {
  uv_timer_stop(&d->sweep_timer);
  uv_timer_stop(&d->rescan_timer);
  for (size_t i = 0; i < d->n_tables; i++) unwatch_table(d->tables[i]);
  for (size_t i = 0; i < d->n_dirs; i++) {
    if (d->dirs[i]->watching) uv_fs_event_stop(&d->dirs[i]->ev);
    d->dirs[i]->watching = false;
  }
}

static void svc_watch_close(brid *d) {
  svc_watch_stop(d);
  uv_close((uv_handle_t *)&d->sweep_timer, NULL);
  uv_close((uv_handle_t *)&d->rescan_timer, NULL);
  uv_close((uv_handle_t *)&d->discovery_async, NULL);
  for (size_t i = 0; i < d->n_tables; i++) {
    uv_close((uv_handle_t *)&d->tables[i]->ev, NULL);
    uv_close((uv_handle_t *)&d->tables[i]->debounce, NULL);
  }
  for (size_t i = 0; i < d->n_dirs; i++) uv_close((uv_handle_t *)&d->dirs[i]->ev, NULL);
}

static void svc_watch_dispose(brid *d) {
  for (size_t i = 0; i < d->n_tables; i++) {
    free(d->tables[i]->root);
    free(d->tables[i]->check_error);
    free(d->tables[i]);
  }
  free(d->tables);
  d->tables = NULL;
  d->n_tables = d->cap_tables = 0;
  for (size_t i = 0; i < d->n_dirs; i++) {
    free(d->dirs[i]->path);
    free(d->dirs[i]);
  }
  free(d->dirs);
  d->dirs = NULL;
  d->n_dirs = d->cap_dirs = 0;
  bri_strmap_dispose(&d->by_root);
  bri_strmap_dispose(&d->dir_index);
}


const brid_module svc_watch_module = {.name = "watch",
                                      .start = svc_watch_start,
                                      .apply_config = svc_watch_apply_config,
                                      .drain = svc_watch_stop,
                                      .close = svc_watch_close,
                                      .dispose = svc_watch_dispose};
