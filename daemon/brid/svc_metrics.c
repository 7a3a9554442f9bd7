/* svc_metrics.c: Prometheus text for brid (see svc_metrics.h).
 *
 * Label values are escaped as the exposition format requires (backslash,
 * double quote, newline); error messages used as labels are cut to 200
 * bytes to bound the series' size. Families:
 *   brid_info, brid_start_time_seconds, brid_workers, brid_workers_busy,
 *   brid_tables, brid_tables_paused, brid_inotify_watches,
 *   brid_jobs{state}, brid_queue_depth, brid_running_job_rows_done/_total,
 *   brid_jobs_finished_total{table,kind,outcome}, brid_job_attempts_total{table,kind,outcome}
 *   brid_job_run_seconds_total{table,kind}, brid_bytes_written_total{table,kind},
 *   brid_bytes_reused_total{table,kind}, brid_table_last_error_timestamp_seconds{table,message},
 *   brid_table_last_compaction_timestamp_seconds{table}, brid_table_last_cleanup_timestamp_seconds{table},
 *   brid_table_fragments{table}, brid_table_version{table},
 *   brid_fs_events_total, brid_checks_total, brid_check_errors_total, brid_triggers_total,
 *   brid_sweeps_total, brid_requests_total, brid_request_errors_total, brid_peers_refused_total,
 *   brid_connections_refused_total, brid_connections. */
#include "svc_metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svc_control.h"
#include "svc_watch.h"
#include "svc_worker.h"

static void label(FILE *f, const char *s, size_t max) {
  size_t n = 0;
  for (; *s && n < max; s++, n++) {
    if (*s == '\\') fputs("\\\\", f);
    else if (*s == '"') fputs("\\\"", f);
    else if (*s == '\n') fputs("\\n", f);
    else fputc(*s, f);
  }
}

static void family(FILE *f, const char *name, const char *type, const char *help) {
  fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static brid_table *registry(brid *d, const char *root) {
  bri_strmap_entry *e = bri_strmap_get(&d->by_root, root);
  return e ? d->tables[e->a] : NULL;
}

char *svc_metrics_text(brid *d) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  bri_error err;

  family(f, "brid_info", "gauge", "brid's version (always 1).");
  fprintf(f, "brid_info{version=\"%s\"} 1\n", BRID_VERSION);
  family(f, "brid_start_time_seconds", "gauge", "When the daemon started, seconds since the epoch.");
  fprintf(f, "brid_start_time_seconds %.3f\n", (double)d->started_ms / 1000.0);
  family(f, "brid_workers", "gauge", "Worker threads.");
  fprintf(f, "brid_workers %d\n", svc_pool_size(d->pool));
  family(f, "brid_workers_busy", "gauge", "Worker threads running a job.");
  fprintf(f, "brid_workers_busy %d\n", svc_pool_size(d->pool) - svc_pool_idle(d->pool));

  bri_jobs_table *rows = NULL;
  size_t n = 0;
  if (bri_jobs_table_list(d->store, &rows, &n, &err) != 0) rows = NULL, n = 0;
  size_t present = 0, paused = 0;
  for (size_t i = 0; i < n; i++) {
    brid_table *t = registry(d, rows[i].root);
    if (t && t->present) present++, paused += rows[i].paused != 0;
  }
  family(f, "brid_tables", "gauge", "Tables watched.");
  fprintf(f, "brid_tables %zu\n", present);
  family(f, "brid_tables_paused", "gauge", "Watched tables that are paused.");
  fprintf(f, "brid_tables_paused %zu\n", paused);
  family(f, "brid_inotify_watches", "gauge", "Tables with a live inotify watch on _versions/.");
  fprintf(f, "brid_inotify_watches %zu\n", svc_watch_count_watching(d));

  uint64_t counts[BRI_JOB_NSTATES + 1] = {0};
  bri_jobs_count_states(d->store, 0, counts, &err);
  family(f, "brid_jobs", "gauge", "Jobs in the store by state (finished ones until pruned).");
  for (int s = 1; s <= BRI_JOB_NSTATES; s++)
    fprintf(f, "brid_jobs{state=\"%s\"} %llu\n", bri_job_state_name(s), (unsigned long long)counts[s]);
  family(f, "brid_queue_depth", "gauge", "Queued jobs.");
  fprintf(f, "brid_queue_depth %llu\n", (unsigned long long)counts[BRI_JOB_QUEUED]);

  json_t *run = svc_pool_running(d->pool);
  family(f, "brid_running_job_rows_done", "gauge", "Rows written so far by each running job.");
  size_t i;
  json_t *r;
  json_array_foreach(run, i, r) {
    fprintf(f, "brid_running_job_rows_done{job=\"%lld\",kind=\"%s\",table=\"", (long long)json_integer_value(json_object_get(r, "job")),
            json_string_value(json_object_get(r, "kind")));
    label(f, json_string_value(json_object_get(r, "table")), 4096);
    fprintf(f, "\"} %lld\n", (long long)json_integer_value(json_object_get(json_object_get(r, "progress"), "rows_done")));
  }
  family(f, "brid_running_job_rows_total", "gauge", "Rows each running job will write.");
  json_array_foreach(run, i, r) {
    fprintf(f, "brid_running_job_rows_total{job=\"%lld\",kind=\"%s\",table=\"", (long long)json_integer_value(json_object_get(r, "job")),
            json_string_value(json_object_get(r, "kind")));
    label(f, json_string_value(json_object_get(r, "table")), 4096);
    fprintf(f, "\"} %lld\n", (long long)json_integer_value(json_object_get(json_object_get(r, "progress"), "rows_total")));
  }
  json_decref(run);

  bri_jobs_stat *st = NULL;
  size_t ns = 0;
  if (bri_jobs_stats(d->store, &st, &ns, &err) != 0) st = NULL, ns = 0;
#define LBL(k)                                                                                                       \
  do {                                                                                                               \
    fputs("table=\"", f);                                                                                            \
    label(f, st[k].root, 4096);                                                                                      \
    fprintf(f, "\",kind=\"%s\"", bri_job_kind_name(st[k].kind));                                                     \
  } while (0)
  family(f, "brid_jobs_finished_total", "counter", "Finished jobs by outcome.");
  for (size_t k = 0; k < ns; k++) {
    const char *o[3] = {"succeeded", "failed", "cancelled"};
    uint64_t v[3] = {st[k].succeeded, st[k].failed, st[k].cancelled};
    for (int j = 0; j < 3; j++) {
      fputs("brid_jobs_finished_total{", f);
      LBL(k);
      fprintf(f, ",outcome=\"%s\"} %llu\n", o[j], (unsigned long long)v[j]);
    }
  }
  family(f, "brid_job_attempts_total", "counter", "Attempts that ended in a retry or a crash.");
  for (size_t k = 0; k < ns; k++) {
    fputs("brid_job_attempts_total{", f);
    LBL(k);
    fprintf(f, ",outcome=\"retried\"} %llu\n", (unsigned long long)st[k].retried);
    fputs("brid_job_attempts_total{", f);
    LBL(k);
    fprintf(f, ",outcome=\"crashed\"} %llu\n", (unsigned long long)st[k].crashed);
  }
  family(f, "brid_job_run_seconds_total", "counter", "Run time of finished attempts.");
  for (size_t k = 0; k < ns; k++) {
    fputs("brid_job_run_seconds_total{", f);
    LBL(k);
    fprintf(f, "} %.3f\n", (double)st[k].run_ms / 1000.0);
  }
  family(f, "brid_bytes_written_total", "counter", "Bytes written by finished jobs (data files and copied payload).");
  for (size_t k = 0; k < ns; k++) {
    fputs("brid_bytes_written_total{", f);
    LBL(k);
    fprintf(f, "} %llu\n", (unsigned long long)st[k].bytes_written);
  }
  family(f, "brid_bytes_reused_total", "counter", "Blob payload bytes referenced in place instead of copied.");
  for (size_t k = 0; k < ns; k++) {
    fputs("brid_bytes_reused_total{", f);
    LBL(k);
    fprintf(f, "} %llu\n", (unsigned long long)st[k].bytes_reused);
  }
#undef LBL
  bri_jobs_stats_free(st, ns);

  family(f, "brid_table_last_error_timestamp_seconds", "gauge", "When a table's last job failed, with the message.");
  for (size_t k = 0; k < n; k++) {
    if (!rows[k].last_error) continue;
    fputs("brid_table_last_error_timestamp_seconds{table=\"", f);
    label(f, rows[k].root, 4096);
    fputs("\",message=\"", f);
    label(f, rows[k].last_error, 200);
    fprintf(f, "\"} %.3f\n", (double)rows[k].last_error_at / 1000.0);
  }
  family(f, "brid_table_last_compaction_timestamp_seconds", "gauge", "Last successful compaction of a table.");
  for (size_t k = 0; k < n; k++) {
    if (!rows[k].last_compaction_at) continue;
    fputs("brid_table_last_compaction_timestamp_seconds{table=\"", f);
    label(f, rows[k].root, 4096);
    fprintf(f, "\"} %.3f\n", (double)rows[k].last_compaction_at / 1000.0);
  }
  family(f, "brid_table_last_cleanup_timestamp_seconds", "gauge", "Last successful cleanup of a table.");
  for (size_t k = 0; k < n; k++) {
    if (!rows[k].last_cleanup_at) continue;
    fputs("brid_table_last_cleanup_timestamp_seconds{table=\"", f);
    label(f, rows[k].root, 4096);
    fprintf(f, "\"} %.3f\n", (double)rows[k].last_cleanup_at / 1000.0);
  }
  family(f, "brid_table_fragments", "gauge", "Fragments in a table's latest version (as of its last check).");
  for (size_t k = 0; k < n; k++) {
    brid_table *t = registry(d, rows[k].root);
    if (!t || !t->present || !t->has_latest) continue;
    fputs("brid_table_fragments{table=\"", f);
    label(f, rows[k].root, 4096);
    fprintf(f, "\"} %llu\n", (unsigned long long)t->fragments);
  }
  family(f, "brid_table_version", "gauge", "A table's latest version (as of its last check).");
  for (size_t k = 0; k < n; k++) {
    brid_table *t = registry(d, rows[k].root);
    if (!t || !t->present || !t->has_latest) continue;
    fputs("brid_table_version{table=\"", f);
    label(f, rows[k].root, 4096);
    fprintf(f, "\"} %llu\n", (unsigned long long)t->latest_version);
  }
  bri_jobs_table_list_free(rows, n);

  struct {
    const char *name, *help;
    uint64_t v;
  } c[] = {
      {"brid_fs_events_total", "inotify events received.", d->n_fs_events},
      {"brid_checks_total", "Planner checks run.", d->n_checks},
      {"brid_check_errors_total", "Planner checks that could not read a table.", d->n_check_errors},
      {"brid_triggers_total", "Compactions queued by a planner check.", d->n_triggers},
      {"brid_sweeps_total", "Periodic sweeps.", d->n_sweeps},
      {"brid_requests_total", "Control requests received.", d->n_requests},
      {"brid_request_errors_total", "Control requests answered with an error.", d->n_request_errors},
      {"brid_peers_refused_total", "Control connections refused by the credential check.", d->n_peers_refused},
      {"brid_connections_refused_total", "Control connections refused by max_connections.", d->n_connections_refused},
  };
  for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
    family(f, c[k].name, "counter", c[k].help);
    fprintf(f, "%s %llu\n", c[k].name, (unsigned long long)c[k].v);
  }
  family(f, "brid_connections", "gauge", "Open control connections.");
  fprintf(f, "brid_connections %zu\n", svc_control_connections(d->ctl));
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}
