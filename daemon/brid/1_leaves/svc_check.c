/* svc_check.c: the planner check (see svc_check.h): a probe reads the
 * table's latest version and, when it is new, plans it as the compaction
 * would; settling queues the compaction or records the version seen. */
#include "svc_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bri/compact.h"
#include "bri/table.h"
#include "bri/util.h"
#include "svc_kinds.h"
#include "svc_log.h"

/* The payload each fragment of m would copy, when pol's strategy counts it
 * (*out NULL otherwise): what the compaction's planner will count
 * (compact/fragsize.h), so that a check queues no job that then finds its
 * fragments at target size. An object store's data/ is listed once. */
static int check_payloads(bri_table *t, const bri_manifest *m, const svc_policy *pol, const bri_compact_options *o,
                          uint64_t **out, bri_error *err) {
  *out = NULL;
  if (!bri_compact_counts_payload(pol->strategy, (unsigned)pol->min_reader, t, m->pb)) return 0;
  bri_sidecar_sizes *sizes = NULL;
  uint64_t *payload = calloc(m->pb->n_fragments + 1, sizeof *payload);
  int rc = payload ? bri_sidecar_sizes_new(&sizes, err) : bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (!rc && !(bri_store_caps(t->store) & BRI_STORE_CAP_LOCAL)) {
    char *data = bri_path_join(bri_store_uri(t->store), "data");
    rc = data ? bri_sidecar_sizes_prime(sizes, t->store, data, BRI_SIDECAR_PRIME_ALL, err)
              : bri_error_set(err, BRI_ENOMEM, "out of memory");
    free(data);
  }
  if (!rc) rc = bri_fragment_payloads(t, m, o, sizes, payload, err);
  bri_sidecar_sizes_free(sizes);
  if (rc) free(payload);
  else *out = payload;
  return rc;
}

/* The fragments of m above id after that are small by their data files
 * and rows (what the COUNT trigger counts: no payload is measured for
 * it); *max_id: the highest id m has used. */
static uint64_t count_new_small(const Lance__Table__Manifest *m, const bri_compact_options *o, uint64_t after,
                                uint64_t *max_id) {
  uint64_t n = 0, top = m->has_max_fragment_id ? m->max_fragment_id : 0;
  for (size_t i = 0; i < m->n_fragments; i++) {
    const Lance__Table__DataFragment *f = m->fragments[i];
    if (f->id > top) top = f->id;
    if (f->id > after && f->physical_rows < o->target_rows_per_fragment &&
        bri_fragment_data_bytes(f) < o->target_fragment_bytes)
      n++;
  }
  *max_id = top;
  return n;
}

void svc_check_probe(const char *root, const svc_policy *pol, const svc_probe *how, svc_check *c) {
  memset(c, 0, sizeof *c);
  c->trigger = how->trigger;
  bri_table *t = NULL;
  bri_manifest *m = NULL;
  bri_plan *plan = NULL;
  uint64_t *payload = NULL;
  c->rc = bri_table_open(root, &t, &c->err);
  if (c->rc == BRI_ENOTFOUND) { /* a directory with an empty _versions/ */
    c->rc = 0;
    c->empty = true;
    return;
  }
  if (c->rc) return;
  c->latest = bri_table_latest_version(t);
  if (!how->force && how->has_seen && c->latest == how->seen) goto out; /* nothing new: no manifest read */
  bri_compact_options o = pol->compact;
  c->rc = bri_table_load(t, c->latest, &m, &c->err);
  if (!c->rc) c->rc = bri_compact_options_from_config(m, &o, &c->err);
  if (c->rc) goto out;
  c->loaded = true;
  c->fragments = m->pb->n_fragments;
  c->new_small = count_new_small(m->pb, &o, how->new_after, &c->max_fragment_id);
  if (how->trigger == SVC_TRIGGER_COUNT && (!pol->max_new_fragments || c->new_small < pol->max_new_fragments))
    goto out; /* not yet */
  c->rc = check_payloads(t, m, pol, &o, &payload, &c->err);
  bri_plan_hints h = {.payload_bytes = payload};
  if (!c->rc) c->rc = bri_compact_plan(t, m, &o, &h, &plan, &c->err);
  if (!c->rc) {
    c->planned = true;
    c->bins = plan->n_bins;
    c->budget_exhausted = plan->budget_exhausted;
  }
out:
  free(payload);
  bri_plan_free(plan);
  bri_manifest_free(m);
  bri_table_close(t);
}

/* True when the table's latest compaction already ran at this version and
 * found nothing to commit: the planner's cheap check (no pack survey) may
 * see work the full compaction does not, and re-queueing would loop. */
static bool noop_at(bri_jobs_store *store, int64_t table_id, uint64_t version) {
  bri_jobs_filter f = {.table_id = table_id, .kind = BRI_JOB_COMPACT, .limit = 1,
                       .state_mask = 1u << BRI_JOB_SUCCEEDED};
  bri_jobs_job *jobs = NULL;
  size_t n = 0;
  bri_error err;
  bool noop = false;
  if (bri_jobs_list(store, &f, &jobs, &n, &err) == 0 && n == 1 && jobs[0].result) {
    json_t *r = json_loads(jobs[0].result, 0, NULL);
    json_t *v = json_object_get(r, "version"), *rv = json_object_get(r, "read_version"),
           *dry = json_object_get(r, "dry_run");
    noop = json_is_integer(v) && json_integer_value(v) == 0 && json_is_integer(rv) &&
           (uint64_t)json_integer_value(rv) == version && !json_is_true(dry);
    json_decref(r);
  }
  bri_jobs_list_free(jobs, n);
  return noop;
}

/* What the log line says triggered a queued compaction. */
static const char *trigger_words(const svc_check *c, char *buf, size_t cap) {
  switch (c->trigger) {
  case SVC_TRIGGER_COUNT:
    snprintf(buf, cap, " (%llu new small fragments)", (unsigned long long)c->new_small);
    return buf;
  case SVC_TRIGGER_AFTER: return " (left by the last job's budget)";
  default: return "";
  }
}

void svc_check_settle(bri_jobs_store *store, int64_t table_id, const char *root, bool auto_compact, bool has_seen,
                      uint64_t seen, svc_check *c) {
  bri_error err;
  if (c->rc || !c->planned) return;
  /* right after brid's own commit only what a budget left is queued: what
   * writers added meanwhile waits for the triggers (the commit's own event
   * starts them), not for a compaction after every compaction */
  bool wanted = c->bins && (c->trigger != SVC_TRIGGER_AFTER || c->budget_exhausted);
  bool queue = wanted && auto_compact && !noop_at(store, table_id, c->latest);
  /* a table given a compaction has its version recorded at the job's end
   * (the one it leaves), not here: one write fewer for each */
  if (!queue && (!has_seen || seen != c->latest)) {
    if (bri_jobs_table_set_seen_version(store, table_id, c->latest, &err))
      log_err("%s: recording version %llu: %s", root, (unsigned long long)c->latest, err.msg);
    else
      c->seen_recorded = true;
  }
  if (queue) {
    int dup = 0;
    if (bri_jobs_enqueue(store, table_id, BRI_JOB_COMPACT, SVC_PRIO_AUTO, "{\"trigger\":\"auto\"}", 0, &c->job,
                         &dup, &err))
      log_err("%s: queueing a compaction: %s", root, err.msg);
    else
      c->waiting = true;
    if (c->waiting && !dup) {
      char why[64];
      c->queued = true;
      log_info("%s: version %llu has %llu bin(s) to compact%s: queued job %lld", root, (unsigned long long)c->latest,
               (unsigned long long)c->bins, trigger_words(c, why, sizeof why), (long long)c->job);
    }
  }
}

