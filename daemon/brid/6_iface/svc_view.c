/* svc_view.c: taking and reading views of the loop's state (see
 * svc_view.h). Taking one copies every registered table (strings
 * included; a summary only the unreadable ones) and the scalars; nothing
 * in it points back into the loop's structures. */
#include "svc_view.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>


static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

svc_view *svc_view_take(brid *d, bool every_table) {
  svc_view *v = calloc(1, sizeof *v);
  if (!v) return NULL;
  bool ok = (v->tables = calloc(every_table ? d->n_tables + 1 : 1, sizeof *v->tables)) &&
            (v->present_ids = calloc(d->n_tables + 1, sizeof *v->present_ids)) &&
            (v->roots = calloc(d->cfg.n_roots + 1, sizeof *v->roots));
  size_t cap = every_table ? d->n_tables : 0;
  for (size_t i = 0; ok && i < d->n_tables; i++) {
    const brid_table *t = d->tables[i];
    if (t->present) v->present_ids[v->n_present++] = t->id;
    v->inotify_watches += t->watching;
    v->sweep_only += t->present && !t->s3 && !t->watching;
    if (!every_table && !(t->present && t->check_error)) continue;
    if (v->n_tables == cap) {
      svc_table_view *a = realloc(v->tables, (cap = cap * 2 + 8) * sizeof *a);
      if (!(ok = a != NULL)) break;
      v->tables = a;
    }
    svc_table_view *tv = &v->tables[v->n_tables];
    *tv = (svc_table_view){.id = t->id, .present = t->present, .watching = t->watching, .polled = t->s3,
                           .paused_by_config = t->paused_by_config, .has_latest = t->has_latest,
                           .loaded = t->loaded, .has_work = t->has_work, .latest_version = t->latest_version,
                           .fragments = t->fragments, .last_check_ms = t->last_check_ms,
                           .cleanup_enqueued_ms = t->cleanup_enqueued_ms, .policy = t->policy,
                           .check_unsupported = t->check_unsupported,
                           .root_unreachable = t->root_unreachable};
    ok = (tv->root = strdup(t->root)) && (!t->check_error || (tv->check_error = strdup(t->check_error)));
    if (ok) ok = bri_strmap_put(&v->by_root, tv->root, v->n_tables, 0);
    if (tv->root) v->n_tables++;
  }
  for (size_t i = 0; ok && i < d->cfg.n_roots; i++) ok = (v->roots[v->n_roots++] = strdup(d->cfg.roots[i])) != NULL;
  ok = ok && (v->root_states = calloc(d->cfg.n_roots + 1, sizeof *v->root_states));
  /* the configured roots' states come first, in the configuration's order */
  for (size_t i = 0; ok && i < d->n_root_states && d->root_states[i]->configured; i++) {
    const brid_root *r = d->root_states[i];
    svc_root_view *rv = &v->root_states[v->n_root_states];
    *rv = (svc_root_view){.known = r->known, .up = r->up, .last_ok_ms = r->last_ok_ms,
                          .last_error_ms = r->last_error_ms, .down_since_ms = r->down_since_ms,
                          .failures = r->failures};
    ok = (rv->root = strdup(r->uri)) && (!r->last_error || (rv->last_error = strdup(r->last_error)));
    if (rv->root) v->n_root_states++;
  }
  ok = ok && (v->polls = calloc(d->n_polls + 1, sizeof *v->polls));
  for (size_t i = 0; ok && i < d->n_polls; i++) {
    const brid_poll *p = d->polls[i];
    if (!p->configured) continue;
    v->polls[v->n_polls] = (svc_poll_view){.root = strdup(p->root), .polls = p->n_polls, .failures = p->n_failures};
    ok = v->polls[v->n_polls++].root != NULL;
  }
  v->config_file = dup_or_null(d->cfg.file);
  v->socket_path = dup_or_null(d->cfg.socket_path);
  v->readonly_socket = dup_or_null(d->cfg.readonly_socket);
  v->state_path = dup_or_null(d->cfg.state_path);
  v->http_address = dup_or_null(d->http_address);
  v->last_reload_error = dup_or_null(d->last_reload_error);
  ok = ok && v->socket_path && v->readonly_socket && v->state_path && (!d->cfg.file || v->config_file) &&
       (!d->http || v->http_address) &&
       (!d->last_reload_error || v->last_reload_error);
  v->draining = d->draining;
  v->draining_ms = d->draining_ms;
  v->started_ms = d->started_ms;
  v->store = d->store_health;
  v->store_statements = bri_jobs_statements(d->store) + (d->reader ? bri_jobs_statements(d->reader) : 0);
  v->last_reload_ms = d->last_reload_ms;
  v->checks_inflight = d->checks_inflight;
  v->checks_waiting = d->checks_waiting;
  v->connections = d->connections;
  v->watch_error = d->watch_failing ? strdup(d->watch_error) : NULL;
  ok = ok && (!d->watch_failing || v->watch_error);
  v->discovering = d->discovering;
  v->discovered_ms = d->discovered_ms, v->first_sweep_ms = d->first_sweep_ms, v->n_unchecked = d->n_unchecked;
  v->n_fs_events = d->n_fs_events, v->n_checks = d->n_checks;
  memcpy(v->n_triggers, d->n_triggers, sizeof v->n_triggers);
  v->n_requests = d->n_requests, v->n_request_errors = d->n_request_errors;
  v->n_peers_refused = d->n_peers_refused, v->n_connections_refused = d->n_connections_refused;
  v->n_sweeps = d->n_sweeps, v->n_check_errors = d->n_check_errors;
  if (!ok) {
    svc_view_free(v);
    return NULL;
  }
  return v;
}

void svc_view_free(svc_view *v) {
  if (!v) return;
  for (size_t i = 0; i < v->n_tables; i++) free(v->tables[i].root), free(v->tables[i].check_error);
  free(v->tables);
  bri_strmap_dispose(&v->by_root);
  for (size_t i = 0; i < v->n_roots; i++) free(v->roots[i]);
  free(v->roots);
  for (size_t i = 0; i < v->n_root_states; i++) free(v->root_states[i].root), free(v->root_states[i].last_error);
  free(v->root_states);
  for (size_t i = 0; i < v->n_polls; i++) free(v->polls[i].root);
  free(v->polls);
  free(v->config_file), free(v->socket_path), free(v->readonly_socket), free(v->state_path), free(v->http_address);
  free(v->last_reload_error);
  free(v->present_ids);
  free(v->watch_error);
  free(v);
}

const svc_table_view *svc_view_table(const svc_view *v, const char *root) {
  bri_strmap_entry *e = bri_strmap_get((bri_strmap *)&v->by_root, root);
  return e ? &v->tables[e->a] : NULL;
}

bool svc_view_under_root(const svc_view *v, const char *path) {
  bool under = false;
  for (size_t i = 0; !under && i < v->n_roots; i++) {
    char *root = NULL;
    bri_error ignored;
    under = bri_store_location(v->roots[i], &root, &ignored) == 0 && svc_root_contains(root, path);
    free(root);
  }
  return under;
}
