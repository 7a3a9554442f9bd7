/* svc_poll.c: roots on object stores (S3, Azure): their poll timers and
 * the looks at busy tables between polls (see svc_poll.h; a poll's walk is
 * svc_discover.c's). */
#include "svc_poll.h"

#include <stdlib.h>
#include <string.h>

#include "bri/table.h"
#include "bri/util.h"
#include "brid/1_leaves/svc_log.h"

/* ---------------------------------------------------------------- timers */

/* A poll ended: counted (its outcome for the root's state is reported by
 * the discovery itself, svc_roots.c, which logs it). */
static void poll_done(void *user, int rc, const bri_error *err) {
  (void)err;
  brid_poll *p = user;
  brid *d = p->d;
  p->running = false;
  d->polls_inflight--;
  p->n_polls++;
  if (rc) p->n_failures++;
  svc_state_busy_end(d); /* the poll began in on_poll */
}

static void on_poll(uv_timer_t *h) {
  brid_poll *p = h->data;
  brid *d = p->d;
  if (p->running || d->draining) return; /* a slow poll: the next tick comes after it */
  p->running = true;
  d->polls_inflight++;
  svc_state_busy_begin(d); /* a draining daemon waits for polls too */
  svc_state_discover_root(d, p->root, poll_done, p);
}

/* Every SVC_BUSY_POLL_MS: a COUNT check of each busy table (its check
 * says whether it still moves, svc_watch.c); one whose job runs waits
 * for the job's end, as an inotify event does. Tables no longer busy
 * leave the list. */
static void on_busy(uv_timer_t *h) {
  brid *d = h->data;
  size_t k = 0;
  for (size_t i = 0; i < d->n_busy; i++) {
    brid_table *t = d->busy[i];
    if (!t->busy || !t->present) {
      t->busy = false;
      continue;
    }
    d->busy[k++] = t;
    if (!t->job_running) svc_state_count_check(t);
  }
  d->n_busy = k;
  if (!k) uv_timer_stop(h);
}

void svc_poll_busy(brid_table *t) {
  brid *d = t->d;
  if (t->busy || d->draining) return;
  if (d->n_busy == d->cap_busy) {
    size_t cap = d->cap_busy ? d->cap_busy * 2 : 16;
    brid_table **a = realloc(d->busy, cap * sizeof *a);
    if (!a) return; /* looked at at the root's next poll instead */
    d->busy = a, d->cap_busy = cap;
  }
  d->busy[d->n_busy++] = t;
  t->busy = true;
  t->busy_moved_ms = bri_now_ms();
  if (!d->busy_timer_init) {
    uv_timer_init(&d->loop, &d->busy_timer);
    d->busy_timer.data = d;
    d->busy_timer_init = true;
  }
  if (!uv_is_active((uv_handle_t *)&d->busy_timer))
    uv_timer_start(&d->busy_timer, on_busy, SVC_BUSY_POLL_MS, SVC_BUSY_POLL_MS);
}

static brid_poll *poll_of(brid *d, const char *root) {
  for (size_t i = 0; i < d->n_polls; i++)
    if (!strcmp(d->polls[i]->root, root)) return d->polls[i];
  brid_poll **a = realloc(d->polls, (d->n_polls + 1) * sizeof *a);
  if (!a) return NULL;
  d->polls = a;
  brid_poll *p = calloc(1, sizeof *p);
  if (!p || !(p->root = strdup(root))) {
    free(p);
    return NULL;
  }
  p->d = d;
  uv_timer_init(&d->loop, &p->timer);
  p->timer.data = p;
  d->polls[d->n_polls++] = p;
  return p;
}

static void poll_apply_config(brid *d) {
  for (size_t i = 0; i < d->n_polls; i++) d->polls[i]->configured = false;
  for (size_t i = 0; i < d->cfg.n_roots; i++) {
    if (!(svc_location_caps(d->cfg.roots[i]) & BRI_STORE_CAP_POLL)) continue;
    brid_poll *p = poll_of(d, d->cfg.roots[i]);
    if (!p) {
      log_err("root %s: out of memory for its poll timer", d->cfg.roots[i]);
      continue;
    }
    p->configured = true;
    uint64_t every = (uint64_t)svc_config_root(&d->cfg, p->root)->poll_interval_sec * 1000;
    /* a root new to this daemon is polled at once (its first discovery) */
    if (!uv_is_active((uv_handle_t *)&p->timer)) uv_timer_start(&p->timer, on_poll, 0, every);
    else if (uv_timer_get_repeat(&p->timer) != every) uv_timer_start(&p->timer, on_poll, every, every);
  }
  for (size_t i = 0; i < d->n_polls; i++)
    if (!d->polls[i]->configured) uv_timer_stop(&d->polls[i]->timer);
}

static int poll_start(brid *d, bri_error *err) {
  (void)err;
  poll_apply_config(d);
  return 0;
}

static void poll_stop(brid *d) {
  for (size_t i = 0; i < d->n_polls; i++) uv_timer_stop(&d->polls[i]->timer);
  if (d->busy_timer_init) uv_timer_stop(&d->busy_timer);
}

static void poll_close(brid *d) {
  for (size_t i = 0; i < d->n_polls; i++) uv_close((uv_handle_t *)&d->polls[i]->timer, NULL);
  if (d->busy_timer_init) uv_close((uv_handle_t *)&d->busy_timer, NULL);
}

static void poll_dispose(brid *d) {
  for (size_t i = 0; i < d->n_polls; i++) {
    free(d->polls[i]->root);
    free(d->polls[i]);
  }
  free(d->polls);
  d->polls = NULL;
  d->n_polls = 0;
  free(d->busy);
  d->busy = NULL;
  d->n_busy = d->cap_busy = 0;
}

const brid_module svc_poll_module = {.name = "poll",
                                     .start = poll_start,
                                     .apply_config = poll_apply_config,
                                     .drain = poll_stop,
                                     .close = poll_close,
                                     .dispose = poll_dispose};
