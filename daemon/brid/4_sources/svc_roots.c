/* svc_roots.c: the reachability of each configured root and its log lines
 * (see svc_roots.h). */
#include "svc_roots.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "brid/1_leaves/svc_log.h"

static brid_root *add(brid *d, const char *uri) {
  brid_root **a = realloc(d->root_states, (d->n_root_states + 1) * sizeof *a);
  if (!a) return NULL;
  d->root_states = a;
  brid_root *r = calloc(1, sizeof *r);
  if (!r || !(r->uri = strdup(uri))) {
    free(r);
    return NULL;
  }
  r->d = d;
  uv_timer_init(&d->loop, &r->retry);
  r->retry.data = r;
  d->root_states[d->n_root_states++] = r;
  return r;
}

static brid_root *lookup(const brid *d, const char *uri) {
  for (size_t i = 0; i < d->n_root_states; i++)
    if (!strcmp(d->root_states[i]->uri, uri)) return d->root_states[i];
  return NULL;
}

/* Publishes into each table whether its root is known to be unreachable
 * (what the view shows, brid_table.root_unreachable): after a root's state,
 * its canonical form or the configured roots changed. */
static void publish_tables(brid *d) {
  for (size_t i = 0; i < d->n_tables; i++)
    d->tables[i]->root_unreachable = svc_roots_table_unreachable(d, d->tables[i]->root);
}

static void roots_apply_config(brid *d) {
  for (size_t i = 0; i < d->n_root_states; i++) d->root_states[i]->configured = false;
  size_t placed = 0; /* the configured roots come first, in the configuration's order (the view's) */
  for (size_t i = 0; i < d->cfg.n_roots; i++) {
    brid_root *r = lookup(d, d->cfg.roots[i]);
    if (!r && !(r = add(d, d->cfg.roots[i]))) {
      log_err("root %s: out of memory for its state", d->cfg.roots[i]);
      continue;
    }
    if (r->configured) continue; /* named twice */
    r->configured = true;
    for (size_t k = placed; k < d->n_root_states; k++)
      if (d->root_states[k] == r) {
        d->root_states[k] = d->root_states[placed];
        d->root_states[placed++] = r;
        break;
      }
  }
  publish_tables(d);
}

brid_root *svc_roots_find(brid *d, const char *uri) {
  brid_root *r = lookup(d, uri);
  return r && r->configured ? r : NULL;
}

static void retry_done(void *user, int rc, const bri_error *err) {
  (void)rc, (void)err; /* reported by the discovery itself */
  brid_root *r = user;
  r->retrying = false;
}

static void on_retry(uv_timer_t *h) {
  brid_root *r = h->data;
  if (r->retrying || r->d->draining) return;
  r->retrying = true;
  svc_state_discover_root(r->d, r->uri, retry_done, r);
}

/* Whether *dst changed. */
static bool replace(char **dst, const char *src) {
  if (*dst && src && !strcmp(*dst, src)) return false;
  free(*dst);
  *dst = src ? strdup(src) : NULL;
  return true;
}

bool svc_roots_report(brid *d, const char *uri, const char *canon, int rc, const char *why) {
  brid_root *r = svc_roots_find(d, uri);
  if (!r) return false; /* removed by a reload while it was listed */
  int64_t now = bri_now_ms();
  bool was_down = r->known && !r->up;
  r->known = true;
  if (!rc) {
    if (was_down)
      log_notice("root %s: reachable again after %llu failed listing(s) over %llds", uri,
                 (unsigned long long)r->failures, (long long)((now - r->down_since_ms) / 1000));
    if (!r->up) svc_state_status_changed(d, true); /* back, or listed for the first time */
    uv_timer_stop(&r->retry);
    bool changed = (canon && replace(&r->canon, canon)) || !r->up;
    r->up = true;
    r->failures = 0;
    r->last_ok_ms = now;
    if (changed) publish_tables(d);
    return was_down;
  }
  r->up = false;
  r->failures++;
  r->last_error_ms = now;
  replace(&r->last_error, why ? why : "cannot list");
  if (!was_down) {
    svc_state_status_changed(d, true);
    if (!(svc_location_caps(uri) & BRI_STORE_CAP_POLL) && !d->draining) uv_timer_start(&r->retry, on_retry, SVC_ROOT_RETRY_MS, SVC_ROOT_RETRY_MS);
    r->down_since_ms = r->reminded_ms = now;
    publish_tables(d);
    log_warn("root %s: unreachable: %s; its tables keep their state and get no job until it is listed again", uri,
             r->last_error);
  } else if (now - r->reminded_ms >= SVC_ROOT_REMINDER_MS) {
    r->reminded_ms = now;
    log_warn("root %s: still unreachable after %llu failed listing(s) over %llds: %s", uri,
             (unsigned long long)r->failures, (long long)((now - r->down_since_ms) / 1000), r->last_error);
  }
  return false;
}

int svc_roots_local_listable(const char *dir, bri_error *err) {
  struct stat st;
  if (stat(dir, &st)) return bri_error_set(err, BRI_EIO, "cannot list: %s", strerror(errno));
  if (!S_ISDIR(st.st_mode)) return bri_error_set(err, BRI_EIO, "cannot list: not a directory");
  DIR *d = opendir(dir);
  if (!d) return bri_error_set(err, BRI_EIO, "cannot list: %s", strerror(errno));
  closedir(d);
  return 0;
}

const brid_root *svc_roots_of_table(const brid *d, const char *table_root) {
  const brid_root *best = NULL;
  for (size_t i = 0; i < d->n_root_states; i++) {
    const brid_root *r = d->root_states[i];
    const char *c = r->canon ? r->canon : r->uri;
    if (r->configured && svc_root_contains(c, table_root) &&
        (!best || strlen(c) > strlen(best->canon ? best->canon : best->uri)))
      best = r;
  }
  return best;
}

bool svc_roots_table_unreachable(const brid *d, const char *table_root) {
  if (!svc_roots_unreachable(d, NULL)) return false; /* the usual case: no prefix to match per table */
  const brid_root *r = svc_roots_of_table(d, table_root);
  return r && r->known && !r->up;
}

bool svc_roots_all_listed(const brid *d) {
  for (size_t i = 0; i < d->n_root_states; i++)
    if (d->root_states[i]->configured && !d->root_states[i]->known) return false;
  return true;
}

size_t svc_roots_unreachable(const brid *d, const brid_root **first) {
  size_t n = 0;
  if (first) *first = NULL;
  for (size_t i = 0; i < d->n_root_states; i++) {
    const brid_root *r = d->root_states[i];
    if (!r->configured || !r->known || r->up) continue;
    if (!n++ && first) *first = r;
  }
  return n;
}

/* Before the loop: the roots' settings and counters handed to libbri, before
 * recovery opens a table under one. */
static int roots_prepare(brid *d, bri_error *err) { return svc_config_register_roots(&d->cfg, err); }

static int roots_start(brid *d, bri_error *err) {
  (void)err;
  roots_apply_config(d);
  return 0;
}

static void roots_stop(brid *d) {
  for (size_t i = 0; i < d->n_root_states; i++) uv_timer_stop(&d->root_states[i]->retry);
}

static void roots_close(brid *d) {
  for (size_t i = 0; i < d->n_root_states; i++) uv_close((uv_handle_t *)&d->root_states[i]->retry, NULL);
}

static void roots_dispose(brid *d) {
  for (size_t i = 0; i < d->n_root_states; i++) {
    free(d->root_states[i]->uri);
    free(d->root_states[i]->canon);
    free(d->root_states[i]->last_error);
    free(d->root_states[i]);
  }
  free(d->root_states);
  d->root_states = NULL;
  d->n_root_states = 0;
}

const brid_module svc_roots_module = {.name = "roots",
                                      .prepare = roots_prepare,
                                      .start = roots_start,
                                      .apply_config = roots_apply_config,
                                      .drain = roots_stop,
                                      .close = roots_close,
                                      .dispose = roots_dispose};
