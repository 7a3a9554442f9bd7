/* svc_state.c: the shared state's few functions (see svc_state.h): the
 * table registry's lookup, the control reads' connection, the drain's busy
 * count, and the hooks through which a lower layer tells a higher one. */
#include "svc_state.h"

brid_table *svc_state_table(const brid *d, const char *root) {
  bri_strmap_entry *e = bri_strmap_get(&d->by_root, root);
  return e ? d->tables[e->a] : NULL;
}

bri_jobs_store *svc_state_reads(const brid *d) { return d->reader ? d->reader : d->store; }

void svc_state_busy_begin(brid *d) { d->in_flight++; }

void svc_state_busy_end(brid *d) {
  if (--d->in_flight == 0 && d->hooks.idle) d->hooks.idle(d);
}

void svc_state_work_queued(brid *d) {
  if (d->hooks.work_queued) d->hooks.work_queued(d);
}

void svc_state_status_changed(brid *d, bool force) {
  if (d->hooks.status_changed) d->hooks.status_changed(d, force);
}

void svc_state_tables_changed(brid *d) {
  if (d->hooks.tables_changed) d->hooks.tables_changed(d);
}

void svc_state_swept(brid *d) {
  if (d->hooks.swept) d->hooks.swept(d);
}

void svc_state_table_checked(brid_table *t, const svc_check *c) {
  if (t->d->hooks.table_checked) t->d->hooks.table_checked(t, c);
}

void svc_state_job_ended(brid_table *t) {
  if (t->d->hooks.job_ended) t->d->hooks.job_ended(t);
}

void svc_state_discover_root(brid *d, const char *root, svc_discovered_fn done, void *user) {
  if (d->hooks.discover_root) {
    d->hooks.discover_root(d, root, done, user);
    return;
  }
  bri_error err;
  bri_error_set(&err, BRI_EINVAL, "no discovery");
  done(user, err.code, &err);
}

void svc_state_count_check(brid_table *t) {
  if (t->d->hooks.count_check) t->d->hooks.count_check(t);
}

void svc_state_ready(brid *d) {
  if (d->hooks.ready) d->hooks.ready(d);
}

void svc_state_fatal(brid *d) {
  if (d->hooks.fatal) d->hooks.fatal(d);
}

int svc_state_reload_apply(brid *d, int rc, svc_config *loaded, const bri_error *err, json_t **changes) {
  return d->hooks.reload_apply(d, rc, loaded, err, changes);
}
