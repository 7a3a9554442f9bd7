/* svc_metrics.c: brid's metrics (see svc_metrics.h).
 *
 * The metrics are built once as a list of families (name, type, help, and
 * samples of labels and a value); the Prometheus text is rendered from
 * that list and the JSON form is that list, so the two cannot differ.
 * Label values are escaped as the exposition format requires (backslash,
 * double quote, newline); error messages used as labels are cut to 200
 * bytes to bound the series' size. Families:
 *   brid_info, brid_start_time_seconds, brid_workers, brid_workers_busy,
 *   brid_tables, brid_tables_paused, brid_tables_unreadable, brid_inotify_watches,
 *   brid_jobs{state}, brid_queue_depth, brid_running_job_rows_done/_total,
 *   brid_running_job_bytes_written{job,kind,table},
 *   brid_jobs_finished_total{table,kind,outcome}, brid_job_attempts_total{table,kind,outcome}
 *   brid_job_run_seconds_total{table,kind}, brid_bytes_written_total{table,kind},
 *   brid_bytes_reused_total{table,kind}, brid_table_last_error_timestamp_seconds{table,message},
 *   brid_table_last_compaction_timestamp_seconds{table}, brid_table_last_cleanup_timestamp_seconds{table},
 *   brid_table_fragments{table}, brid_table_version{table},
 *   brid_fs_events_total, brid_checks_total, brid_check_errors_total, brid_triggers_total{trigger},
 *   brid_sweeps_total, brid_requests_total, brid_request_errors_total, brid_peers_refused_total,
 *   brid_connections_refused_total, brid_managed_switches_total, brid_connections,
 *   brid_storage_requests_total{root,kind,status}, brid_storage_retries_total{root},
 *   brid_storage_bytes_read_total{root}, brid_storage_bytes_written_total{root},
 *   brid_storage_bytes_copied_total{root}, brid_polls_total{root}, brid_poll_failures_total{root},
 *   brid_root_up{root}, brid_root_last_success_timestamp_seconds{root},
 *   brid_root_consecutive_failures{root},
 *   brid_store_up{backend}, brid_store_consecutive_failures, brid_store_statements_total,
 *   brid_instances{state}. */
#include "svc_metrics.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bri/table.h"

#include "brid/1_leaves/svc_kinds.h"
#include "brid/3_exec/svc_worker.h"

/* ------------------------------------------------------------ building */

/* Appends a family to all and returns its samples (borrowed). */
static json_t *family(json_t *all, const char *name, const char *type, const char *help) {
  json_t *samples = json_array();
  json_array_append_new(all, json_pack("{s:s, s:s, s:s, s:o}", "name", name, "type", type, "help", help, "samples",
                                       samples));
  return samples;
}

/* A sample; labels (consumed) may be NULL. */
static void sample(json_t *samples, json_t *labels, json_t *value) {
  json_array_append_new(samples, json_pack("{s:o, s:o}", "labels", labels ? labels : json_object(), "value", value));
}

static json_t *num(uint64_t v) { return json_integer((json_int_t)v); }
static json_t *secs(int64_t ms) { return json_real((double)ms / 1000.0); }

static json_t *table_label(const char *root) { return json_pack("{s:s}", "table", root); }

static json_t *cut(const char *s, size_t max) {
  size_t n = strlen(s) < max ? strlen(s) : max;
  while (n && n < strlen(s) && ((unsigned char)s[n] & 0xC0) == 0x80) n--; /* whole UTF-8 characters */
  return json_stringn(s, n);
}

static json_t *root_label(const char *root) { return json_pack("{s:s}", "root", root); }

/* What went to and from each root's storage (libbri counts it per root,
 * every job, check and poll under it included; storage/store.h), and the
 * S3 roots' polls. */
static void storage_families(json_t *all, const svc_view *v) {
  json_t *req = family(all, "brid_storage_requests_total", "counter",
                       "Object-store requests under a root, every attempt, by kind and answer (status none: no answer).");
  json_t *ret = family(all, "brid_storage_retries_total", "counter", "Object-store requests retried under a root.");
  json_t *in = family(all, "brid_storage_bytes_read_total", "counter",
                      "Bytes brid read from a root's storage (S3: response bodies).");
  json_t *out = family(all, "brid_storage_bytes_written_total", "counter",
                       "Bytes brid wrote to a root's storage (S3: request bodies).");
  json_t *cp = family(all, "brid_storage_bytes_copied_total", "counter",
                      "Bytes a root's storage copied for brid without them passing through brid (S3 server-side copies).");
  for (size_t i = 0; i < v->n_roots; i++) {
    const char *root = v->roots[i];
    char *canon = NULL;
    bri_error ignored;
    bri_store_stats s;
    /* a root counts under its canonical name (svc_config_register_roots) */
    bool counted = bri_store_location(root, &canon, &ignored) == 0 && bri_store_root_stats(canon, &s) == 0;
    free(canon);
    if (!counted) continue;
    for (int k = 0; k < BRI_REQ_KINDS; k++)
      for (int c = 0; c < BRI_REQ_CLASSES; c++)
        if (s.by_kind[k][c])
          sample(req, json_pack("{s:s, s:s, s:s}", "root", root, "kind", bri_store_req_name(k), "status",
                                bri_store_req_class_name(c)), num(s.by_kind[k][c]));
    sample(ret, root_label(root), num(s.retries));
    sample(in, root_label(root), num(s.bytes_read));
    sample(out, root_label(root), num(s.bytes_written));
    sample(cp, root_label(root), num(s.bytes_copied_server));
  }
  json_t *polls = family(all, "brid_polls_total", "counter",
                         "Polls of an S3 root: a listing of the root and of each table's _versions/.");
  json_t *failed = family(all, "brid_poll_failures_total", "counter", "Polls of an S3 root that could not list the root.");
  for (size_t i = 0; i < v->n_polls; i++) {
    sample(polls, root_label(v->polls[i].root), num(v->polls[i].polls));
    sample(failed, root_label(v->polls[i].root), num(v->polls[i].failures));
  }
}

/* Whether each configured root could be listed (svc_roots.h); a root not
 * listed yet (an S3 root in the first second after start-up) has no
 * samples rather than a 0 that would raise an alert. */
static void root_families(json_t *all, const svc_view *v) {
  json_t *up = family(all, "brid_root_up", "gauge",
                      "Whether brid's last listing of the root succeeded (1) or failed (0).");
  json_t *ok = family(all, "brid_root_last_success_timestamp_seconds", "gauge",
                      "When brid last listed the root successfully, seconds since the epoch (0: never).");
  json_t *fails = family(all, "brid_root_consecutive_failures", "gauge",
                         "Failed listings of the root since its last successful one.");
  for (size_t i = 0; i < v->n_root_states; i++) {
    const svc_root_view *r = &v->root_states[i];
    if (!r->known) continue;
    sample(up, root_label(r->root), json_integer(r->up));
    sample(ok, root_label(r->root), secs(r->last_ok_ms));
    sample(fails, root_label(r->root), num(r->failures));
  }
}

/* Whether the job store answers the heartbeat (svc_lease.h), and the
 * instances that share it by state. */
static void store_families(json_t *all, const svc_view *v, bri_jobs_store *store) {
  bool up = v->store.up && bri_jobs_health(store, NULL, 0);
  sample(family(all, "brid_store_up", "gauge",
                "Whether the job store answers (1) or not (0): its last heartbeat and its connection (PostgreSQL)."),
         json_pack("{s:s}", "backend", bri_jobs_backend(store)), json_integer(up));
  sample(family(all, "brid_store_statements_total", "counter",
                "Statements brid's job store ran (transactions' begins and ends included): its round trips."),
         NULL, num(v->store_statements));
  sample(family(all, "brid_store_consecutive_failures", "gauge", "Heartbeats the job store failed since it last answered."),
         NULL, num(v->store.failures));
  bri_jobs_instance_info *in = NULL;
  size_t n = 0;
  bri_error err;
  if (!up || bri_jobs_instances(store, &in, &n, &err)) return;
  uint64_t running = 0, lost = 0, stopped = 0;
  int64_t now = bri_now_ms(), ttl = bri_jobs_lease_ttl_ms(store);
  for (size_t i = 0; i < n; i++) {
    if (in[i].stopped_at) stopped++;
    else if (now - in[i].heartbeat_at > ttl) lost++;
    else running++;
  }
  bri_jobs_instances_free(in, n);
  json_t *f = family(all, "brid_instances", "gauge",
                     "brid instances registered in the job store: running (heartbeat within lease_ttl), lost, stopped.");
  sample(f, json_pack("{s:s}", "state", "running"), num(running));
  sample(f, json_pack("{s:s}", "state", "lost"), num(lost));
  sample(f, json_pack("{s:s}", "state", "stopped"), num(stopped));
}

json_t *svc_metrics_json(const svc_view *v, bri_jobs_store *store, svc_pool *pool) {
  json_t *all = json_array(), *f;
  bri_error err;
  store_families(all, v, store);

  f = family(all, "brid_info", "gauge", "brid's version (always 1).");
  sample(f, json_pack("{s:s}", "version", BRID_VERSION), json_integer(1));
  f = family(all, "brid_start_time_seconds", "gauge", "When the daemon started, seconds since the epoch.");
  sample(f, NULL, secs(v->started_ms));
  f = family(all, "brid_workers", "gauge", "Worker threads.");
  sample(f, NULL, json_integer(svc_pool_size(pool)));
  f = family(all, "brid_workers_busy", "gauge", "Worker threads running a job.");
  sample(f, NULL, json_integer(svc_pool_size(pool) - svc_pool_idle(pool)));

  bri_jobs_table *rows = NULL;
  size_t n = 0;
  if (bri_jobs_table_list(store, &rows, &n, &err) != 0) rows = NULL, n = 0;
  size_t present = 0, paused = 0, unreadable = 0, unsupported = 0;
  for (size_t i = 0; i < n; i++) {
    const svc_table_view *t = svc_view_table(v, rows[i].root);
    if (!t || !t->present) continue;
    present++, paused += rows[i].paused != 0;
    if (t->check_error) t->check_unsupported ? unsupported++ : unreadable++;
  }
  sample(family(all, "brid_tables", "gauge", "Tables watched."), NULL, num(present));
  sample(family(all, "brid_tables_paused", "gauge", "Watched tables that are paused."), NULL, num(paused));
  sample(family(all, "brid_tables_unreadable", "gauge",
                "Watched tables whose last check could not read them (status: degraded)."),
         NULL, num(unreadable));
  sample(family(all, "brid_tables_unsupported", "gauge",
                "Watched tables brid leaves alone: they use a Lance feature it refuses (status lists why)."),
         NULL, num(unsupported));
  sample(family(all, "brid_inotify_watches", "gauge", "Tables with a live inotify watch on _versions/."), NULL,
         num(v->inotify_watches));

  uint64_t counts[BRI_JOB_NSTATES + 1] = {0};
  bri_jobs_count_states(store, 0, counts, &err);
  f = family(all, "brid_jobs", "gauge", "Jobs in the store by state (finished ones until pruned).");
  for (int s = 1; s <= BRI_JOB_NSTATES; s++)
    sample(f, json_pack("{s:s}", "state", bri_job_state_name(s)), num(counts[s]));
  sample(family(all, "brid_queue_depth", "gauge", "Queued jobs."), NULL, num(counts[BRI_JOB_QUEUED]));

  json_t *run = svc_pool_running(pool);
  static const struct {
    const char *name, *help, *key;
  } R[] = {
      {"brid_running_job_rows_done", "Rows written so far by each running job.", "rows_done"},
      {"brid_running_job_rows_total", "Rows each running job will write.", "rows_total"},
      {"brid_running_job_bytes_written", "Bytes written so far by each running job (data and payload).",
       "bytes_written"},
  };
  for (size_t k = 0; k < sizeof R / sizeof R[0]; k++) {
    f = family(all, R[k].name, "gauge", R[k].help);
    size_t i;
    json_t *r;
    json_array_foreach(run, i, r) {
      char job[24];
      snprintf(job, sizeof job, "%lld", (long long)json_integer_value(json_object_get(r, "job")));
      sample(f, json_pack("{s:s, s:O, s:O}", "job", job, "kind", json_object_get(r, "kind"), "table",
                          json_object_get(r, "table")),
             json_integer(json_integer_value(json_object_get(json_object_get(r, "progress"), R[k].key))));
    }
  }
  json_decref(run);

  bri_jobs_stat *st = NULL;
  size_t ns = 0;
  if (bri_jobs_stats(store, &st, &ns, &err) != 0) st = NULL, ns = 0;
#define LBL(k) json_pack("{s:s, s:s}", "table", st[k].root, "kind", bri_job_kind_name(st[k].kind))
  f = family(all, "brid_jobs_finished_total", "counter", "Finished jobs by outcome.");
  for (size_t k = 0; k < ns; k++) {
    const char *o[3] = {"succeeded", "failed", "cancelled"};
    uint64_t n_of[3] = {st[k].succeeded, st[k].failed, st[k].cancelled};
    for (int j = 0; j < 3; j++) {
      json_t *l = LBL(k);
      json_object_set_new(l, "outcome", json_string(o[j]));
      sample(f, l, num(n_of[j]));
    }
  }
  f = family(all, "brid_job_attempts_total", "counter", "Attempts that ended in a retry or a crash.");
  for (size_t k = 0; k < ns; k++) {
    json_t *l = LBL(k);
    json_object_set_new(l, "outcome", json_string("retried"));
    sample(f, l, num(st[k].retried));
    l = LBL(k);
    json_object_set_new(l, "outcome", json_string("crashed"));
    sample(f, l, num(st[k].crashed));
  }
  f = family(all, "brid_job_run_seconds_total", "counter", "Run time of finished attempts.");
  for (size_t k = 0; k < ns; k++) sample(f, LBL(k), secs(st[k].run_ms));
  f = family(all, "brid_bytes_written_total", "counter", "Bytes written by finished jobs (data files and copied payload).");
  for (size_t k = 0; k < ns; k++) sample(f, LBL(k), num(st[k].bytes_written));
  f = family(all, "brid_bytes_reused_total", "counter", "Blob payload bytes referenced in place instead of copied.");
  for (size_t k = 0; k < ns; k++) sample(f, LBL(k), num(st[k].bytes_reused));
#undef LBL
  bri_jobs_stats_free(st, ns);

  f = family(all, "brid_table_last_error_timestamp_seconds", "gauge", "When a table's last job failed, with the message.");
  for (size_t k = 0; k < n; k++)
    if (rows[k].last_error)
      sample(f, json_pack("{s:s, s:o}", "table", rows[k].root, "message", cut(rows[k].last_error, 200)),
             secs(rows[k].last_error_at));
  f = family(all, "brid_table_last_compaction_timestamp_seconds", "gauge", "Last successful compaction of a table.");
  for (size_t k = 0; k < n; k++)
    if (rows[k].last_compaction_at) sample(f, table_label(rows[k].root), secs(rows[k].last_compaction_at));
  f = family(all, "brid_table_last_cleanup_timestamp_seconds", "gauge", "Last successful cleanup of a table.");
  for (size_t k = 0; k < n; k++)
    if (rows[k].last_cleanup_at) sample(f, table_label(rows[k].root), secs(rows[k].last_cleanup_at));
  json_t *frags = family(all, "brid_table_fragments", "gauge", "Fragments in a table's latest version (as of its last check).");
  json_t *vers = family(all, "brid_table_version", "gauge", "A table's latest version (as of its last check).");
  for (size_t k = 0; k < n; k++) {
    const svc_table_view *t = svc_view_table(v, rows[k].root);
    if (!t || !t->present) continue;
    if (t->loaded) sample(frags, table_label(rows[k].root), num(t->fragments));
    if (t->has_latest) sample(vers, table_label(rows[k].root), num(t->latest_version));
  }
  bri_jobs_table_list_free(rows, n);

  struct {
    const char *name, *help;
    uint64_t v;
  } c[] = {
      {"brid_fs_events_total", "inotify events received.", v->n_fs_events},
      {"brid_checks_total", "Planner checks run.", v->n_checks},
      {"brid_check_errors_total", "Planner checks that could not read a table.", v->n_check_errors},
      {"brid_sweeps_total", "Periodic sweeps.", v->n_sweeps},
      {"brid_requests_total", "Control requests received.", v->n_requests},
      {"brid_request_errors_total", "Control requests answered with an error.", v->n_request_errors},
      {"brid_peers_refused_total", "Control connections refused by the credential check.", v->n_peers_refused},
      {"brid_connections_refused_total", "Control connections refused by max_connections.", v->n_connections_refused},
      {"brid_managed_switches_total", "Tables compactions switched to Managed blobs (Lance 12 and 13 refuse them).",
       svc_kinds_managed_switches()},
  };
  for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) sample(family(all, c[k].name, "counter", c[k].help), NULL, num(c[k].v));
  /* by what fired the check: the debounce or max_delay (quiet), the count of new small fragments, or what
   * a job's budget left (svc_check.h's SVC_TRIGGER_QUIET, _COUNT, _AFTER) */
  static const char *const triggers[] = {"quiet", "count", "budget"};
  json_t *tr = family(all, "brid_triggers_total", "counter", "Compactions queued by a planner check, by trigger.");
  for (size_t k = 0; k < sizeof triggers / sizeof triggers[0]; k++)
    sample(tr, json_pack("{s:s}", "trigger", triggers[k]), num(v->n_triggers[k]));
  sample(family(all, "brid_connections", "gauge", "Open control connections."), NULL,
         num(v->connections));
  storage_families(all, v);
  root_families(all, v);
  return all;
}

/* ------------------------------------------------------------ rendering */

static void label(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '\\') fputs("\\\\", f);
    else if (*s == '"') fputs("\\\"", f);
    else if (*s == '\n') fputs("\\n", f);
    else fputc(*s, f);
  }
}

char *svc_metrics_text(const svc_view *v, bri_jobs_store *store, svc_pool *pool) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  json_t *all = svc_metrics_json(v, store, pool);
  size_t i, k;
  json_t *fam, *s;
  json_array_foreach(all, i, fam) {
    const char *name = json_string_value(json_object_get(fam, "name"));
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, json_string_value(json_object_get(fam, "help")), name,
            json_string_value(json_object_get(fam, "type")));
    json_array_foreach(json_object_get(fam, "samples"), k, s) {
      fputs(name, f);
      json_t *labels = json_object_get(s, "labels"), *val = json_object_get(s, "value");
      const char *key;
      json_t *lv;
      bool first = true;
      json_object_foreach(labels, key, lv) {
        fprintf(f, "%s%s=\"", first ? "{" : ",", key);
        label(f, json_string_value(lv));
        fputc('"', f);
        first = false;
      }
      if (!first) fputc('}', f);
      if (json_is_integer(val)) fprintf(f, " %lld\n", (long long)json_integer_value(val));
      else fprintf(f, " %.3f\n", json_number_value(val));
    }
  }
  json_decref(all);
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}
