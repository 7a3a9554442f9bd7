/* svc_poll.c: roots on object stores (S3, Azure): walks, poll
 * timers and the looks at busy tables between polls (see svc_poll.h).
 *
 * A walk lists the root level by level through a store rooted at the root
 * (bri_store_list: S3's ListObjectsV2, Azure's List Blobs, with delimiter
 * "/", every page), collects
 * the NAME.lance prefixes, and asks for the first entry of each one's
 * _versions/ in one call (bri_store_list_first_many: the listings in
 * flight together). A first entry that is not a V2 manifest name (a table
 * with Lance's older naming, whose names do not sort newest first) costs
 * that table a full listing of its _versions/. */
#include "svc_poll.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "bri/table.h"
#include "bri/util.h"
#include "brid/1_leaves/svc_log.h"

/* ------------------------------------------------------------------ walk */

typedef struct walk {
  bri_store *st;
  int max_depth;
  char **cands; /* NAME.lance prefixes: tables, if they hold a version */
  size_t n, cap;
} walk;

static bool table_name(const char *name) {
  size_t n = strlen(name);
  return n > 6 && !strcmp(name + n - 6, ".lance");
}

static int add_candidate(walk *w, const char *path, bri_error *err) {
  if (w->n == w->cap) {
    size_t cap = w->cap ? w->cap * 2 : 64;
    char **a = realloc(w->cands, cap * sizeof *a);
    if (!a) return bri_error_set(err, BRI_ENOMEM, "out of memory");
    w->cands = a, w->cap = cap;
  }
  if (!(w->cands[w->n] = strdup(path))) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  w->n++;
  return 0;
}

/* One level below dir: NAME.lance prefixes are candidates, other prefixes
 * are walked further (their failures logged: the rest of the root goes
 * on); a failure at the root's own level fails the walk. */
static int walk_level(walk *w, const char *dir, int depth, bri_error *err) {
  bri_store_entry *e = NULL;
  size_t n = 0;
  int rc = bri_store_list(w->st, dir, 0, &e, &n, err);
  if (rc) return rc;
  for (size_t i = 0; !rc && i < n; i++) {
    if (e[i].info.kind != BRI_ENTRY_DIR || e[i].name[0] == '.') continue;
    char *child = bri_path_join(dir, e[i].name);
    if (!child) {
      rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    } else if (table_name(e[i].name)) {
      rc = add_candidate(w, child, err);
    } else if (depth < w->max_depth) {
      bri_error sub;
      int src = walk_level(w, child, depth + 1, &sub);
      if (src == BRI_ENOMEM) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
      else if (src) log_warn("%s: cannot list: %s", child, sub.msg);
    }
    free(child);
  }
  bri_store_entries_free(e, n);
  return rc;
}

/* The latest version of a table whose _versions/ starts with first (a
 * name that is not a V2 manifest's: the whole listing decides). */
static svc_poll_kind latest_of(bri_store *st, const char *vdir, const char *first, uint64_t *version) {
  bri_naming scheme;
  if (bri_version_parse_name(first, version, &scheme) == 1 && scheme == BRI_NAMING_V2) return SVC_POLL_TABLE;
  bri_version_entry *v = NULL;
  size_t n = 0;
  bri_error err;
  if (bri_versions_list(st, vdir, &v, &n, &scheme, &err) != 0) return SVC_POLL_UNKNOWN;
  svc_poll_kind k = n ? SVC_POLL_TABLE : SVC_POLL_UNKNOWN;
  if (n) *version = v[n - 1].version;
  bri_versions_free(v, n);
  return k;
}

int svc_poll_walk(const char *root, int max_depth, svc_poll_found_fn found, void *ctx, bri_error *err) {
  walk w = {.max_depth = max_depth};
  int rc = bri_store_open(root, 0, &w.st, err);
  if (!rc && table_name(root)) rc = add_candidate(&w, root, err); /* the root itself is a table */
  if (!rc) rc = walk_level(&w, root, 0, err);
  bri_store_listing *l = rc ? NULL : calloc(w.n + 1, sizeof *l);
  char **vdirs = rc ? NULL : calloc(w.n + 1, sizeof *vdirs);
  if (!rc && (!l || !vdirs)) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  for (size_t i = 0; !rc && i < w.n; i++)
    if (!(l[i].dir = vdirs[i] = bri_path_join(w.cands[i], "_versions")))
      rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (!rc) rc = bri_store_list_first_many(w.st, l, w.n, 0, 1, err);
  for (size_t i = 0; !rc && i < w.n; i++) {
    uint64_t v = 0;
    if (l[i].rc) {
      log_debug("%s: cannot list: %s", vdirs[i], l[i].err.msg);
      found(ctx, w.cands[i], SVC_POLL_UNKNOWN, 0);
    } else if (l[i].count) { /* an empty or missing _versions/: not a table (yet) */
      svc_poll_kind k = latest_of(w.st, vdirs[i], l[i].entries[0].name, &v);
      found(ctx, w.cands[i], k, v);
    }
  }
  for (size_t i = 0; i < w.n; i++) {
    if (l) bri_store_entries_free(l[i].entries, l[i].count);
    if (vdirs) free(vdirs[i]);
    free(w.cands[i]);
  }
  free(l), free(vdirs), free(w.cands);
  bri_store_close(w.st);
  return rc;
}

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
