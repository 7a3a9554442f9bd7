/* svc_api.c: the control socket's methods (see svc_api.h).
 *
 * A method is a function from a checked request (svc_request.c: every
 * parameter, unknown names included, is checked before anything acts) to a
 * result; the table at the bottom maps methods to functions. Methods run on
 * libuv's thread pool: they read the job store and the pool (both
 * thread-safe) and a view of the loop's state (svc_view.h), never the
 * loop's structures, and leave what only the loop may do (kick the
 * scheduler, discover, apply a reload) as post actions. Mutating methods
 * are logged with the peer's uid and pid, so the journal says who paused
 * or cancelled what. */
#include "svc_api.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bri/util.h"
#include "brid/1_leaves/svc_log.h"
#include "brid/3_exec/svc_worker.h"
#include "brid/5_sched/svc_sched.h"
#include "svc_metrics.h"

typedef svc_call call;

static json_t *fail(call *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static json_t *fail(call *c, int code, const char *fmt, ...) {
  c->code = code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->msg, sizeof c->msg, fmt, ap);
  va_end(ap);
  return NULL;
}

/* --------------------------------------------------------------- params */

static bool has_versions_dir(const char *dir) {
  char p[PATH_MAX];
  struct stat st;
  return snprintf(p, sizeof p, "%s/_versions", dir) < (int)sizeof p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The watched table named by params.table (checked: an absolute path), in
 * any spelling that resolves to its root. A table under a root that brid
 * has not discovered yet asks the loop for a discovery and to run the call
 * again (once). */
static const svc_table_view *param_table(call *c) {
  const char *p = c->r.table;
  bool local = svc_location_caps(p) & BRI_STORE_CAP_LOCAL;
  char *canon = NULL;
  bri_error ignored;
  bool known = p && bri_store_location(p, &canon, &ignored) == 0;
  const svc_table_view *t = known ? svc_view_table(c->view, canon) : NULL;
  bool undiscovered = known && !(t && t->present) && !c->discovered && (!local || has_versions_dir(canon)) &&
                      svc_view_under_root(c->view, canon);
  free(canon);
  if (t && t->present) return t;
  if (undiscovered) {
    c->post |= SVC_POST_DISCOVER;
    return fail(c, RPC_NOT_FOUND, "%s: not discovered yet", p), NULL;
  }
  return fail(c, RPC_NOT_FOUND, "%s is not a table brid watches (a directory with _versions/, or an "
                                "object-store NAME.lance prefix, under a configured root)", p ? p : "(none)"), NULL;
}

/* ----------------------------------------------------------------- JSON */

static json_t *ms_or_null(int64_t ms) { return ms ? json_integer(ms) : json_null(); }
static json_t *str_or_null(const char *s) { return s ? json_string(s) : json_null(); }

/* ms since the epoch as ISO 8601 in UTC ("2026-12-02T12:35:12.123Z"), or null */
static json_t *iso_or_null(int64_t ms) {
  if (!ms) return json_null();
  time_t t = (time_t)(ms / 1000);
  struct tm tm;
  char buf[40];
  if (!gmtime_r(&t, &tm)) return json_null();
  size_t n = strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(buf + n, sizeof buf - n, ".%03dZ", (int)(ms % 1000));
  return json_string(buf);
}

static json_t *parse_or_null(const char *s) {
  if (!s) return json_null();
  json_t *v = json_loads(s, 0, NULL);
  return v ? v : json_string(s);
}

json_t *svc_api_job_json(bri_jobs_store *store, svc_pool *pool, const bri_jobs_job *j, int full) {
  json_t *o = json_pack("{s:I, s:s, s:I, s:s, s:s, s:i, s:i, s:i, s:b}", "id", (json_int_t)j->id, "table", j->root,
                        "table_id", (json_int_t)j->table_id, "kind", bri_job_kind_name(j->kind), "state",
                        bri_job_state_name(j->state), "priority", j->priority, "attempts", j->attempts,
                        "max_attempts", j->max_attempts, "cancel_requested", j->cancel_requested != 0);
  json_object_set_new(o, "created_at", ms_or_null(j->created_at));
  json_object_set_new(o, "not_before", ms_or_null(j->not_before));
  json_object_set_new(o, "started_at", ms_or_null(j->started_at));
  json_object_set_new(o, "finished_at", ms_or_null(j->finished_at));
  json_object_set_new(o, "start", iso_or_null(j->started_at));
  json_object_set_new(o, "end", iso_or_null(j->finished_at));
  json_object_set_new(o, "instance", str_or_null(j->instance));
  json_object_set_new(o, "error", str_or_null(j->error));
  json_object_set_new(o, "bytes_written", json_integer((json_int_t)j->bytes_written));
  json_object_set_new(o, "bytes_reused", json_integer((json_int_t)j->bytes_reused));
  json_object_set_new(o, "params", parse_or_null(j->params));
  json_t *res = parse_or_null(j->result);
  if (!full && json_is_object(res)) json_object_del(res, "plan"); /* lists stay small */
  json_object_set_new(o, "result", res);
  svc_progress pr;
  if (j->state == BRI_JOB_RUNNING && pool && svc_pool_progress(pool, j->id, &pr))
    json_object_set_new(o, "progress", svc_progress_to_json(&pr));
  if (!full) return o;
  bri_error err;
  bri_jobs_attempt *a = NULL;
  size_t na = 0;
  json_t *attempts = json_array();
  if (bri_jobs_attempts(store, j->id, &a, &na, &err) == 0) {
    for (size_t i = 0; i < na; i++) {
      json_t *x = json_pack("{s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "attempt", a[i].attempt, "owner",
                            str_or_null(a[i].owner), "instance", str_or_null(a[i].instance), "started_at",
                            ms_or_null(a[i].started_at), "finished_at", ms_or_null(a[i].finished_at), "start",
                            iso_or_null(a[i].started_at), "end", iso_or_null(a[i].finished_at), "outcome",
                            str_or_null(a[i].outcome), "error", str_or_null(a[i].error));
      json_array_append_new(attempts, x);
    }
    bri_jobs_attempts_free(a, na);
  }
  json_object_set_new(o, "attempt_log", attempts);
  bri_jobs_output *outs = NULL;
  size_t no = 0;
  json_t *journal = json_array();
  if (bri_jobs_journal_list(store, j->id, &outs, &no, &err) == 0) {
    for (size_t i = 0; i < no; i++)
      json_array_append_new(journal, json_pack("{s:s, s:s, s:i}", "path", outs[i].path, "kind", outs[i].kind,
                                               "attempt", outs[i].attempt));
    bri_jobs_journal_free(outs, no);
  }
  json_object_set_new(o, "journal", journal);
  json_object_set_new(o, "commit_uuid", str_or_null(j->commit_uuid));
  return o;
}

/* One word for a table's state, most urgent first: gone (no longer
 * watched), running (a job), unreachable (its root cannot be listed now:
 * the table keeps its state and gets no job), unsupported (the last check
 * found something brid will not act on: a Lance feature or field it
 * refuses, named in check_error), unreadable (the last check could not
 * read it), paused, queued (a job waits), pending (the latest version has work
 * but no job is queued: auto_compact is off, or a dry run planned it),
 * idle. */
static const char *table_state(const svc_table_view *t, const bri_jobs_table *row) {
  if (!t || !t->present) return "gone";
  if (row->running_job) return "running";
  if (t->root_unreachable) return "unreachable";
  if (t->check_error) return t->check_unsupported ? "unsupported" : "unreadable";
  if (row->paused) return "paused";
  if (row->queued_jobs) return "queued";
  if (t->has_work) return "pending";
  return "idle";
}

static json_t *table_json(const svc_view *v, const bri_jobs_table *row) {
  const svc_table_view *t = svc_view_table(v, row->root);
  json_t *o = json_pack("{s:I, s:s, s:b, s:b, s:b, s:b}", "id", (json_int_t)row->id, "root", row->root, "present",
                        t && t->present, "watching", t && t->watching, "paused", row->paused != 0,
                        "paused_by_config", t && t->paused_by_config);
  json_object_set_new(o, "polled", json_boolean(t && t->polled));
  json_object_set_new(o, "state", json_string(table_state(t, row)));
  json_object_set_new(o, "auto_compact", json_boolean(!t || t->policy.auto_compact));
  json_object_set_new(o, "min_reader", t && t->policy.min_reader ? json_integer(t->policy.min_reader) : json_null());
  json_object_set_new(o, "latest_version", t && t->has_latest ? json_integer((json_int_t)t->latest_version) : json_null());
  json_object_set_new(o, "seen_version", row->has_seen_version ? json_integer((json_int_t)row->last_seen_version) : json_null());
  json_object_set_new(o, "fragments", t && t->loaded ? json_integer((json_int_t)t->fragments) : json_null());
  json_object_set_new(o, "has_work", json_boolean(t && t->has_work));
  json_object_set_new(o, "check_error", str_or_null(t ? t->check_error : NULL));
  json_object_set_new(o, "last_check_at", ms_or_null(t ? t->last_check_ms : 0));
  json_object_set_new(o, "last_error", str_or_null(row->last_error));
  json_object_set_new(o, "last_error_at", ms_or_null(row->last_error_at));
  json_object_set_new(o, "last_compaction_at", ms_or_null(row->last_compaction_at));
  json_object_set_new(o, "last_cleanup_at", ms_or_null(row->last_cleanup_at));
  json_object_set_new(o, "running_job", row->running_job ? json_integer(row->running_job) : json_null());
  json_object_set_new(o, "queued_jobs", json_integer((json_int_t)row->queued_jobs));
  json_object_set_new(o, "bytes_written", json_integer((json_int_t)row->bytes_written));
  json_object_set_new(o, "bytes_reused", json_integer((json_int_t)row->bytes_reused));
  return o;
}

/* The configured roots' reachability (svc_roots.h): [{root, state
 * (reachable, unreachable, or unknown before its first listing),
 * last_success_at, consecutive_failures, last_error: {message, at} or null,
 * unreachable_since}]. */
static json_t *roots_json(const svc_view *v) {
  json_t *a = json_array();
  for (size_t i = 0; i < v->n_root_states; i++) {
    const svc_root_view *r = &v->root_states[i];
    bool down = r->known && !r->up;
    json_t *o = json_pack("{s:s, s:s, s:o, s:I}", "root", r->root, "state",
                          !r->known ? "unknown" : r->up ? "reachable" : "unreachable", "last_success_at",
                          ms_or_null(r->last_ok_ms), "consecutive_failures", (json_int_t)r->failures);
    json_object_set_new(o, "last_error", r->last_error ? json_pack("{s:s, s:I}", "message", r->last_error, "at",
                                                                   (json_int_t)r->last_error_ms)
                                                       : json_null());
    json_object_set_new(o, "unreachable_since", ms_or_null(down ? r->down_since_ms : 0));
    json_array_append_new(a, o);
  }
  return a;
}

static size_t roots_unreachable(const svc_view *v) {
  size_t n = 0;
  for (size_t i = 0; i < v->n_root_states; i++) n += v->root_states[i].known && !v->root_states[i].up;
  return n;
}

static json_t *store_fail(call *c, const bri_error *err) {
  return fail(c, err->code == BRI_ENOTFOUND ? RPC_NOT_FOUND : RPC_FAILED, "%s", err->msg);
}

/* -------------------------------------------------------------- methods */

/* The instances sharing the store: running (heartbeat within the lease),
 * lost (no heartbeat for longer: its jobs are recovered by the others) or
 * stopped (it exited cleanly). */
static json_t *instances_json(bri_jobs_store *store, int64_t now) {
  bri_jobs_instance_info *in = NULL;
  size_t n = 0;
  bri_error err;
  if (bri_jobs_instances(store, &in, &n, &err)) return json_null();
  json_t *a = json_array();
  int64_t ttl = bri_jobs_lease_ttl_ms(store);
  for (size_t i = 0; i < n; i++) {
    const char *st = in[i].stopped_at ? "stopped" : now - in[i].heartbeat_at > ttl ? "lost" : "running";
    json_t *o = json_pack("{s:s, s:s, s:s, s:I, s:s, s:s, s:b}", "name", in[i].name, "state", st, "host",
                          in[i].host, "pid", (json_int_t)in[i].pid, "version", in[i].version, "session",
                          in[i].session, "this", !strcmp(in[i].session, bri_jobs_session(store)));
    json_object_set_new(o, "started_at", ms_or_null(in[i].started_at));
    json_object_set_new(o, "heartbeat_at", ms_or_null(in[i].heartbeat_at));
    json_object_set_new(o, "heartbeat_age_ms", json_integer((json_int_t)(now - in[i].heartbeat_at)));
    json_object_set_new(o, "stopped_at", ms_or_null(in[i].stopped_at));
    json_array_append_new(a, o);
  }
  bri_jobs_instances_free(in, n);
  return a;
}

/* The job store's backend and whether it answers (PostgreSQL may be down
 * while brid runs): this status's own queries, the driver's connection,
 * the heartbeat (svc_lease.h). */
static json_t *store_json(const svc_view *v, bri_jobs_store *store, const char *error) {
  const svc_store_health *h = &v->store;
  char conn_error[512] = "";
  bool up = h->up && !error && bri_jobs_health(store, conn_error, sizeof conn_error);
  json_t *o = json_pack("{s:s, s:s, s:s, s:b, s:I, s:o, s:o}", "backend", bri_jobs_backend(store), "location",
                        v->state_path, "instance", bri_jobs_instance(store), "up", up, "consecutive_failures",
                        (json_int_t)h->failures, "last_ok_at", ms_or_null(h->last_ok_ms), "down_since",
                        ms_or_null(up ? 0 : h->down_since_ms ? h->down_since_ms : bri_now_ms()));
  const char *why = error ? error : conn_error[0] ? conn_error : h->last_error[0] ? h->last_error : NULL;
  json_object_set_new(o, "error", up || !why ? json_null() : json_string(why));
  json_object_set_new(o, "lease_ttl_ms", json_integer((json_int_t)bri_jobs_lease_ttl_ms(store)));
  return o;
}

static int cmp_id(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* The present tables paused (by brictl pause or the configuration): the
 * store's paused ids, usually few, looked up among the view's present ids
 * (sorted here, off the loop), instead of reading every table row. */
static int count_paused(bri_jobs_store *store, const svc_view *v, size_t *paused, bri_error *err) {
  int64_t *ids = NULL;
  size_t n = 0;
  *paused = 0;
  int rc = bri_jobs_table_paused_ids(store, &ids, &n, err);
  if (rc) return rc;
  if (n) qsort(v->present_ids, v->n_present, sizeof *v->present_ids, cmp_id);
  for (size_t i = 0; i < n; i++)
    *paused += bsearch(&ids[i], v->present_ids, v->n_present, sizeof *v->present_ids, cmp_id) != NULL;
  free(ids);
  return 0;
}

/* Where the discovery stands (docs/api.md, status): whether a walk is in
 * flight, when the start-up discovery ended (every local table registered
 * and watched: READY=1), and when its first sweep did (every table it found
 * checked once by the planner). */
static json_t *discovery_json(const svc_view *v) {
  json_t *o = json_pack("{s:b, s:o, s:b, s:o, s:I}", "running", v->discovering, "startup_done_at",
                        ms_or_null(v->discovered_ms), "first_sweep_done", v->first_sweep_ms != 0,
                        "first_sweep_done_at", ms_or_null(v->first_sweep_ms), "unchecked_tables",
                        (json_int_t)v->n_unchecked);
  return o;
}

static json_t *m_status(call *c) {
  const svc_view *v = c->view;
  bri_error err;
  /* a store that does not answer is part of the status, not a failure of it */
  const char *store_error = NULL;
  uint64_t counts[BRI_JOB_NSTATES + 1] = {0};
  if (bri_jobs_count_states(c->store, 0, counts, &err)) store_error = err.msg;
  size_t paused = 0;
  bri_error err2;
  if (!store_error && count_paused(c->store, v, &paused, &err2)) store_error = err2.msg;
  /* a table brid cannot read, or a root it cannot reach, makes the daemon
   * degraded, as a failed unit makes systemd's state degraded: running, but
   * not doing all its work; a table brid will not act on (a Lance feature
   * it refuses) is listed apart and degrades nothing: that is a choice */
  json_t *unreadable = json_array(), *unsupported = json_array();
  for (size_t i = 0; i < v->n_tables; i++) {
    const svc_table_view *t = &v->tables[i];
    if (t->present && t->check_error && !t->root_unreachable) /* the root's own error says it */
      json_array_append_new(t->check_unsupported ? unsupported : unreadable,
                            json_pack("{s:s, s:s, s:o}", "table", t->root, "error", t->check_error, "since",
                                      ms_or_null(t->last_check_ms)));
  }
  json_t *jobs = json_object();
  for (int s = 1; s <= BRI_JOB_NSTATES; s++)
    json_object_set_new(jobs, bri_job_state_name(s), json_integer((json_int_t)counts[s]));
  int64_t now = bri_now_ms();
  json_t *store = store_json(v, c->store, store_error);
  const char *state = v->draining ? "draining"
                      : json_array_size(unreadable) || roots_unreachable(v) || !json_is_true(json_object_get(store, "up"))
                          ? "degraded"
                          : "running";
  json_t *o = json_pack("{s:s, s:i, s:s, s:I, s:I, s:o, s:s, s:s}", "version", BRID_VERSION, "pid", (int)getpid(),
                        "state", state, "started_at", (json_int_t)v->started_ms,
                        "uptime_seconds", (json_int_t)((now - v->started_ms) / 1000), "config",
                        str_or_null(v->config_file), "socket", v->socket_path, "store", v->state_path);
  json_object_set_new(o, "draining_since", ms_or_null(v->draining ? v->draining_ms : 0));
  json_object_set_new(o, "metrics_listen", str_or_null(v->http_address));
  json_object_set_new(o, "unreadable_tables", unreadable);
  json_object_set_new(o, "unsupported_tables", unsupported);
  json_object_set_new(o, "roots", roots_json(v));
  json_object_set_new(o, "store_status", store);
  json_object_set_new(o, "instances", store_error ? json_null() : instances_json(c->store, now));
  json_object_set_new(o, "workers", json_pack("{s:i, s:i}", "total", svc_pool_size(c->pool), "busy",
                                              svc_pool_size(c->pool) - svc_pool_idle(c->pool)));
  json_object_set_new(o, "tables", json_pack("{s:I, s:I, s:I, s:I, s:o}", "watched", (json_int_t)v->n_present,
                                             "paused", (json_int_t)paused, "inotify_watches",
                                             (json_int_t)v->inotify_watches, "sweep_only",
                                             (json_int_t)v->sweep_only, "watch_error",
                                             str_or_null(v->watch_error)));
  json_object_set_new(o, "discovery", discovery_json(v));
  json_object_set_new(o, "jobs", jobs);
  json_object_set_new(o, "running", svc_pool_running(c->pool));
  json_object_set_new(o, "checks_in_flight", json_integer((json_int_t)v->checks_inflight));
  json_object_set_new(o, "checks_waiting", json_integer((json_int_t)v->checks_waiting));
  json_object_set_new(o, "connections", json_integer((json_int_t)v->connections));
  json_object_set_new(o, "last_reload", json_pack("{s:o, s:o}", "at", ms_or_null(v->last_reload_ms), "error",
                                                  str_or_null(v->last_reload_error)));
  return o;
}

static json_t *m_tables_list(call *c) {
  bri_jobs_table *rows = NULL;
  size_t n = 0;
  bri_error err;
  bool all = c->r.all;
  if (bri_jobs_table_list(c->store, &rows, &n, &err)) return store_fail(c, &err);
  json_t *a = json_array();
  for (size_t i = 0; i < n; i++) {
    const svc_table_view *t = svc_view_table(c->view, rows[i].root);
    if (all || (t && t->present)) json_array_append_new(a, table_json(c->view, &rows[i]));
  }
  bri_jobs_table_list_free(rows, n);
  return json_pack("{s:o, s:o}", "tables", a, "roots", roots_json(c->view));
}

static json_t *m_tables_get(call *c) {
  const svc_table_view *t = param_table(c);
  if (!t) return NULL;
  bri_jobs_table row;
  memset(&row, 0, sizeof row);
  bri_error err;
  if (bri_jobs_table_get(c->store, t->id, &row, &err)) return store_fail(c, &err);
  json_t *o = table_json(c->view, &row);
  bri_jobs_table_clear(&row);
  json_object_set_new(o, "policy", svc_policy_to_json(&t->policy));
  /* the readers a switch to Managed blobs locks out, by the declaration */
  json_object_set_new(o, "older_than_declared", bri_lance_releases_below((unsigned)t->policy.min_reader));
  bri_jobs_filter f = {.table_id = t->id, .limit = 10};
  bri_jobs_job *jobs = NULL;
  size_t n = 0;
  json_t *recent = json_array();
  if (bri_jobs_list(c->store, &f, &jobs, &n, &err) == 0) {
    for (size_t i = 0; i < n; i++) json_array_append_new(recent, svc_api_job_json(c->store, c->pool, &jobs[i], 0));
    bri_jobs_list_free(jobs, n);
  }
  json_object_set_new(o, "recent_jobs", recent);
  return o;
}

static json_t *m_jobs_list(call *c) {
  bri_jobs_filter f = c->r.filter;
  if (c->r.table) {
    const svc_table_view *t = param_table(c);
    if (!t) return NULL;
    f.table_id = t->id;
  }
  bri_error err;
  bri_jobs_job *jobs = NULL;
  size_t n = 0;
  if (bri_jobs_list(c->store, &f, &jobs, &n, &err)) return store_fail(c, &err);
  json_t *a = json_array();
  for (size_t i = 0; i < n; i++) json_array_append_new(a, svc_api_job_json(c->store, c->pool, &jobs[i], 0));
  bri_jobs_list_free(jobs, n);
  return json_pack("{s:o}", "jobs", a);
}

/* The job params.id names into *j; false with the error set (no such job,
 * or the store's error). */
static bool load_job(call *c, bri_jobs_job *j) {
  memset(j, 0, sizeof *j);
  bri_error err;
  if (!bri_jobs_get(c->store, c->r.id, j, &err)) return true;
  if (err.code == BRI_ENOTFOUND) fail(c, RPC_NOT_FOUND, "no job %lld", (long long)c->r.id);
  else store_fail(c, &err);
  return false;
}

static json_t *m_jobs_get(call *c) {
  bri_jobs_job j;
  if (!load_job(c, &j)) return NULL;
  json_t *o = svc_api_job_json(c->store, c->pool, &j, 1);
  bri_jobs_job_clear(&j);
  return o;
}

static json_t *m_jobs_cancel(call *c) {
  json_int_t id = c->r.id;
  bri_jobs_job j;
  if (!load_job(c, &j)) return NULL;
  bri_error err;
  bri_job_state before = j.state;
  bri_jobs_job_clear(&j);
  if (before == BRI_JOB_SUCCEEDED || before == BRI_JOB_FAILED)
    return fail(c, RPC_BAD_STATE, "job %lld already %s: nothing to cancel", (long long)id, bri_job_state_name(before));
  bri_job_state after;
  if (bri_jobs_cancel(c->store, id, &after, &err)) return fail(c, RPC_BAD_STATE, "%s", err.msg);
  bool signalled = after == BRI_JOB_RUNNING && c->pool && svc_pool_cancel(c->pool, id, false);
  log_notice("job %lld: cancel requested by uid %u (pid %d): %s", (long long)id, (unsigned)c->peer.uid,
             (int)c->peer.pid, after == BRI_JOB_RUNNING ? "stops at its next safe point" : bri_job_state_name(after));
  return json_pack("{s:I, s:s, s:s, s:b}", "id", (json_int_t)id, "state_before", bri_job_state_name(before), "state",
                   bri_job_state_name(after), "stopping", signalled);
}

/* The other queued jobs of kind for t: requests with other options (an
 * identical request would have been merged), which run one after the
 * other. [{job, params}] */
static json_t *other_requests(call *c, const svc_table_view *t, bri_job_kind kind, int64_t id) {
  bri_jobs_filter f = {.table_id = t->id, .kind = kind, .state_mask = 1u << BRI_JOB_QUEUED};
  bri_jobs_job *jobs = NULL;
  size_t n = 0;
  bri_error err;
  json_t *a = json_array();
  if (bri_jobs_list(c->store, &f, &jobs, &n, &err)) return a;
  for (size_t i = 0; i < n; i++)
    if (jobs[i].id != id)
      json_array_append_new(a, json_pack("{s:I, s:o}", "job", (json_int_t)jobs[i].id, "params",
                                         parse_or_null(jobs[i].params)));
  bri_jobs_list_free(jobs, n);
  return a;
}

/* Queues kind for the table with the job params of the checked request:
 * an identical request already queued is that job (duplicate), another
 * one is a job of its own (daemon/jobs/queue.h). */
static json_t *submit(call *c, const svc_table_view *t, bri_job_kind kind) {
  char *pj = json_dumps(c->r.job_params, JSON_COMPACT | JSON_SORT_KEYS);
  int64_t id;
  int dup = 0;
  bri_error err;
  int rc = bri_jobs_enqueue(c->store, t->id, kind, rpc_kind_of(kind)->priority, pj, 0, &id, &dup, &err);
  free(pj);
  if (rc) return store_fail(c, &err);
  log_notice("%s %s requested by uid %u (pid %d): %s job %lld", bri_job_kind_name(kind), t->root,
             (unsigned)c->peer.uid, (int)c->peer.pid, dup ? "already queued as" : "queued", (long long)id);
  c->post |= SVC_POST_KICK;
  bri_jobs_job j;
  memset(&j, 0, sizeof j);
  const char *state = "queued";
  if (bri_jobs_get(c->store, id, &j, &err) == 0) state = bri_job_state_name(j.state);
  json_t *o = json_pack("{s:I, s:s, s:s, s:b, s:s}", "job", (json_int_t)id, "table", t->root, "kind",
                        bri_job_kind_name(kind), "duplicate", dup != 0, "state", state);
  bri_jobs_job_clear(&j);
  json_t *others = other_requests(c, t, kind, id);
  if (json_array_size(others)) json_object_set(o, "also_queued", others);
  json_decref(others);
  bri_jobs_table row;
  memset(&row, 0, sizeof row);
  if (c->view->draining)
    json_object_set_new(o, "note", json_string("brid is shutting down: the job runs after its restart"));
  else if (bri_jobs_table_get(c->store, t->id, &row, &err) == 0 && row.paused)
    json_object_set_new(o, "note", json_string(t->paused_by_config
                                                   ? "the table is paused by the configuration: the job waits"
                                                   : "the table is paused: the job waits for brictl resume"));
  bri_jobs_table_clear(&row);
  return o;
}

static json_t *m_job(call *c) {
  const svc_table_view *t = param_table(c);
  return t ? submit(c, t, c->r.kind) : NULL;
}

static json_t *pause_resume(call *c, bool pause) {
  bri_error err;
  json_t *done = json_array(), *kept = json_array();
  bool cancel_running = pause && c->r.cancel_running;
  if (c->r.table) {
    const svc_table_view *t = param_table(c);
    if (!t) goto bad;
    if (!pause && t->paused_by_config) {
      fail(c, RPC_BAD_STATE, "%s is paused by the configuration (paused = yes); change it and reload", t->root);
      goto bad;
    }
    if (bri_jobs_table_set_paused(c->store, t->id, pause, &err)) {
      store_fail(c, &err);
      goto bad;
    }
    json_array_append_new(done, json_string(t->root));
  } else {
    for (size_t i = 0; i < c->view->n_tables; i++) {
      const svc_table_view *t = &c->view->tables[i];
      if (!t->present) continue;
      if (!pause && t->paused_by_config) {
        json_array_append_new(kept, json_string(t->root));
        continue;
      }
      if (bri_jobs_table_set_paused(c->store, t->id, pause, &err)) {
        store_fail(c, &err);
        goto bad;
      }
      json_array_append_new(done, json_string(t->root));
    }
  }
  json_t *cancelled = json_array();
  if (pause && cancel_running) {
    /* the running jobs of the paused tables go back to the queue */
    size_t i;
    json_t *r;
    json_t *running = svc_pool_running(c->pool);
    json_array_foreach(running, i, r) {
      const char *root = json_string_value(json_object_get(r, "table"));
      size_t k;
      json_t *p;
      json_array_foreach(done, k, p) if (root && !strcmp(root, json_string_value(p))) {
        json_int_t id = json_integer_value(json_object_get(r, "job"));
        if (svc_pool_cancel(c->pool, id, true)) json_array_append_new(cancelled, json_integer(id));
      }
    }
    json_decref(running);
  }
  log_notice("%s %s by uid %u (pid %d)", pause ? "paused" : "resumed",
             c->r.table ? json_string_value(json_array_get(done, 0)) : "every table",
             (unsigned)c->peer.uid, (int)c->peer.pid);
  if (!pause) c->post |= SVC_POST_KICK;
  json_decref(pause ? kept : cancelled); /* the one the reply does not carry */
  return json_pack("{s:o, s:o, s:o}", pause ? "paused" : "resumed", done, pause ? "requeued_jobs" : "kept_paused",
                   pause ? cancelled : kept, "all", json_boolean(!c->r.table));
bad:
  json_decref(done), json_decref(kept);
  return NULL;
}

static json_t *m_pause(call *c) { return pause_resume(c, true); }
static json_t *m_resume(call *c) { return pause_resume(c, false); }

/* The new configuration is read here, off the loop, by the code SIGHUP runs
 * (svc_config_load_roots: the file, then the roots' S3 settings and
 * secrets); the loop applies it (lifecycle's reload, through
 * svc_state_reload_apply) and gives the reply its changes. */
static json_t *m_reload(call *c) {
  log_notice("reload requested by uid %u (pid %d)", (unsigned)c->peer.uid, (int)c->peer.pid);
  c->reload_rc = svc_config_load_roots(&c->reload_cfg, &c->reload_ov, &c->reload_err);
  c->post |= SVC_POST_RELOAD;
  return json_object(); /* replaced by svc_api_finish */
}

static json_t *m_metrics(call *c) {
  if (c->r.json)
    return json_pack("{s:s, s:o}", "content_type", "application/json", "families",
                     svc_metrics_json(c->view, c->store, c->pool));
  char *text = svc_metrics_text(c->view, c->store, c->pool);
  if (!text) return fail(c, RPC_INTERNAL_ERROR, "out of memory");
  json_t *o = json_pack("{s:s, s:s}", "content_type", "text/plain; version=0.0.4", "text", text);
  free(text);
  return o;
}

/* ------------------------------------------------------------ dispatch */

static json_t *(*const METHODS[])(call *c) = {
    [SVC_M_STATUS] = m_status,           [SVC_M_TABLES_LIST] = m_tables_list, [SVC_M_TABLES_GET] = m_tables_get,
    [SVC_M_JOBS_LIST] = m_jobs_list,     [SVC_M_JOBS_GET] = m_jobs_get,       [SVC_M_JOBS_CANCEL] = m_jobs_cancel,
    [SVC_M_JOB] = m_job,                 [SVC_M_PAUSE] = m_pause,             [SVC_M_RESUME] = m_resume,
    [SVC_M_RELOAD] = m_reload,           [SVC_M_METRICS] = m_metrics,
};

svc_call *svc_api_prepare(brid *d, const rpc_req *req, const svc_peer *peer, int *code, char *msg, size_t cap) {
  svc_call *c = calloc(1, sizeof *c);
  if (!c) {
    *code = RPC_INTERNAL_ERROR;
    snprintf(msg, cap, "out of memory");
    return NULL;
  }
  if ((*code = svc_request_check(req, &c->r, msg, cap)) != 0) {
    free(c);
    return NULL;
  }
  if (peer->readonly && !rpc_method_reads_only(req->method)) {
    snprintf(msg, cap, "%s changes brid's work: it needs the control socket (%s); this one (%s) is read-only",
             req->method, d->cfg.socket_path, d->cfg.readonly_socket);
    *code = RPC_DENIED;
    svc_api_free(c);
    return NULL;
  }
  /* the request's strings (params.table) live in its message */
  c->msg_ref = json_incref(req->msg);
  c->peer = *peer;
  c->store = rpc_method_reads_only(req->method) ? svc_state_reads(d) : d->store;
  c->pool = d->pool;
  c->reload_ov = d->ov;
  if (svc_api_refresh(d, c)) {
    *code = RPC_INTERNAL_ERROR;
    snprintf(msg, cap, "out of memory");
    svc_api_free(c);
    return NULL;
  }
  return c;
}

int svc_api_refresh(brid *d, svc_call *c) {
  svc_pool_collect(d->pool); /* a job seen to have ended shows its table's new state */
  svc_view_free(c->view);
  c->view = svc_view_take(d, c->r.method != SVC_M_STATUS); /* status counts, it lists no table */
  return c->view ? 0 : -1;
}

void svc_api_execute(svc_call *c) {
  json_decref(c->result);
  c->code = 0, c->msg[0] = 0, c->post &= ~SVC_POST_DISCOVER;
  c->result = METHODS[c->r.method](c);
  if (!c->result && !c->code) fail(c, RPC_INTERNAL_ERROR, "internal error");
}

json_t *svc_api_finish(brid *d, svc_call *c, int *code, char *msg, size_t cap) {
  if (c->post & SVC_POST_KICK) svc_sched_kick(d);
  if (c->post & SVC_POST_RELOAD) {
    json_t *changes = NULL;
    json_decref(c->result);
    c->result = NULL;
    if (svc_state_reload_apply(d, c->reload_rc, &c->reload_cfg, &c->reload_err, &changes))
      fail(c, RPC_FAILED, "%s", c->reload_err.msg);
    else
      c->result = json_pack("{s:b, s:o}", "reloaded", 1, "changes", changes ? changes : json_object());
  }
  json_t *res = c->result;
  c->result = NULL;
  if (!res) {
    *code = c->code ? c->code : RPC_INTERNAL_ERROR;
    snprintf(msg, cap, "%s", c->msg[0] ? c->msg : "internal error");
  }
  return res;
}

void svc_api_free(svc_call *c) {
  if (!c) return;
  svc_request_clear(&c->r);
  json_decref(c->msg_ref);
  json_decref(c->result);
  svc_view_free(c->view);
  free(c);
}
