/* svc_daemon.c: the daemon's life after its configuration is loaded, the
 * top layer (svc_state.h): start-up, the signals, reload, the drain and
 * shutdown. brid.c holds only main (flags and the configuration). No
 * module calls into this file: it installs the hooks (ready, fatal, idle,
 * reload) through which the layers below tell it something, and drives the
 * modules through one table, MODULES, in start-up order (nginx's
 * ngx_module_t), naming none of them elsewhere.
 *
 * Start-up order is chosen so that nothing runs on a half-known state: job
 * store (its lock keeps a second daemon out), recovery of a previous crash
 * (before any worker can claim a job), control socket, HTTP listener (if
 * metrics_listen; it answers from snapshots the loop renders once it runs),
 * discovery (off the loop: the socket answers while it walks), workers,
 * and READY=1 once the discovery of the local roots has ended. Shutdown is a drain: SIGTERM stops new work at
 * once, running jobs get drain_timeout to finish, then are asked to stop at
 * their next safe point (they go back to the queue), and if a job still
 * does not stop, brid exits anyway and the next start's recovery rolls it
 * back. A second SIGTERM skips the wait. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bri/util.h"
#include "brid/1_leaves/svc_config.h"
#include "brid/1_leaves/svc_log.h"
#include "brid/1_leaves/svc_notify.h"
#include "brid/3_exec/svc_worker.h"
#include "brid/4_sources/svc_lease.h"
#include "brid/4_sources/svc_poll.h"
#include "brid/4_sources/svc_roots.h"
#include "brid/4_sources/svc_watch.h"
#include "brid/5_sched/svc_sched.h"
#include "brid/6_iface/svc_control.h"
#include "brid/6_iface/svc_http.h"
#include "svc_daemon.h"

#define HARD_STOP_MS 15000

/* The modules, in start-up order (they close and free in the reverse
 * order). Nothing runs on a half-known state: the control socket first
 * (it answers while the discovery walks), the HTTP listener (if
 * metrics_listen; it answers from snapshots the loop renders once it
 * runs), the roots' states, the watches and their first discovery (off the
 * loop), the polls of the object-store roots, the scheduler (a reload
 * re-evaluates the cleanup schedule after the watches updated the
 * policies), the workers, the heartbeat thread. Their prepare hooks run
 * in the same order before the loop exists: the roots handed to libbri
 * before the lease's recovery opens a table under one. */
static const brid_module *const MODULES[] = {&svc_control_module, &svc_http_module,  &svc_roots_module,
                                             &svc_watch_module,   &svc_poll_module,  &svc_sched_module,
                                             &svc_worker_module,  &svc_lease_module};
#define N_MODULES (sizeof MODULES / sizeof MODULES[0])

/* Closes the first n modules, the last first. */
static void close_modules(brid *d, size_t n) {
  while (n--)
    if (MODULES[n]->close) MODULES[n]->close(d);
}

/* ----------------------------------------------------------- shutdown */

static void close_cb(uv_handle_t *h) { (void)h; }

static void close_walk(uv_handle_t *h, void *arg) {
  (void)arg;
  if (!uv_is_closing(h)) uv_close(h, close_cb);
}

static void on_drain_deadline(uv_timer_t *h);

static void finish_shutdown(brid *d) {
  if (d->handles_closed) return;
  d->handles_closed = true;
  log_notice("stopped: no job is running");
  close_modules(d, N_MODULES);
  uv_close((uv_handle_t *)&d->drain_timer, close_cb);
  uv_close((uv_handle_t *)&d->watchdog_timer, close_cb);
  uv_close((uv_handle_t *)&d->sig_term, close_cb);
  uv_close((uv_handle_t *)&d->sig_int, close_cb);
  uv_close((uv_handle_t *)&d->sig_hup, close_cb);
}

/* The busy count fell to zero (svc_state.h): a draining daemon is done. */
static void on_idle(brid *d) {
  if (!d->draining || d->handles_closed) return;
  finish_shutdown(d);
}

/* Asks the running jobs to stop at their next safe point (they go back to
 * the queue), and gives them HARD_STOP_MS to do so. */
static void stop_running(brid *d, const char *why) {
  d->drain_cancelled = true;
  log_warn("drain: %s; asking %d running job(s) to stop (they go back to the queue)", why,
           svc_pool_size(d->pool) - svc_pool_idle(d->pool));
  svc_pool_cancel_all(d->pool, true);
  uv_timer_stop(&d->drain_timer);
  uv_timer_start(&d->drain_timer, on_drain_deadline, HARD_STOP_MS, 0);
}

static void on_drain_deadline(uv_timer_t *h) {
  brid *d = h->data;
  int busy = svc_pool_size(d->pool) - svc_pool_idle(d->pool);
  if (!d->drain_cancelled) {
    char why[96];
    snprintf(why, sizeof why, "%d job(s) still running after %llds", busy, (long long)d->cfg.drain_sec);
    stop_running(d, why);
    return;
  }
  /* A job that ignores cancellation (a verify has no safe point) or is
   * stuck in I/O: leave it running in the store; the next start-up's
   * recovery rolls it back or finds its commit. */
  log_err("drain: %d job(s) did not stop within %ds more; exiting without them", busy, HARD_STOP_MS / 1000);
  _exit(1);
}

/* Starts the drain (SIGTERM): no new jobs, running ones get drain_timeout
 * to finish, then the loop ends. */
static void shutdown_daemon(brid *d) {
  if (d->handles_closed) return;
  if (d->draining) {
    if (!d->drain_cancelled) stop_running(d, "second stop signal");
    return;
  }
  d->draining = true;
  d->draining_ms = bri_now_ms();
  svc_notify_stopping();
  int busy = svc_pool_size(d->pool) - svc_pool_idle(d->pool);
  log_notice("stopping: %d job(s) running%s", busy, busy ? "; waiting for them (drain_timeout)" : "");
  for (size_t i = 0; i < N_MODULES; i++)
    if (MODULES[i]->drain) MODULES[i]->drain(d);
  uv_timer_start(&d->drain_timer, on_drain_deadline, (uint64_t)d->cfg.drain_sec * 1000, 0);
  if (!d->in_flight) on_idle(d);
}

/* A worker found the job store failing (svc_state.h's fatal hook). */
static void on_fatal(brid *d) { shutdown_daemon(d); }

static void reload(brid *d);

static void on_signal(uv_signal_t *h, int sig) {
  brid *d = h->data;
  if (sig == SIGHUP) {
    reload(d);
    return;
  }
  log_notice("received %s", sig == SIGTERM ? "SIGTERM" : "SIGINT");
  shutdown_daemon(d);
}

static void on_watchdog(uv_timer_t *h) {
  (void)h;
  svc_notify_watchdog();
}

/* -------------------------------------------------------------- reload */

#define SWAP(a, b)                                                                                                   \
  do {                                                                                                               \
    __typeof__(a) tmp_ = (a);                                                                                        \
    (a) = (b);                                                                                                       \
    (b) = tmp_;                                                                                                      \
  } while (0)

static bool str_differs(const char *a, const char *b) { return (a == NULL) != (b == NULL) || (a && strcmp(a, b)); }

/* Applies a configuration read off the loop (rc its result, err its error;
 * SIGHUP and the reload method, through svc_state_reload_apply). */
static int reload_apply(brid *d, int rc, svc_config *loaded, const bri_error *err, json_t **changes) {
  if (changes) *changes = NULL;
  svc_notify_reloading();
  svc_config nc = *loaded;
  memset(loaded, 0, sizeof *loaded); /* taken */
  d->last_reload_ms = bri_now_ms();
  free(d->last_reload_error);
  d->last_reload_error = NULL;
  if (rc) {
    d->last_reload_error = strdup(err->msg);
    log_err("reload failed, keeping the running configuration: %s", err->msg);
    svc_notify_ready();
    return rc;
  }
  json_t *ch = json_object(), *restart = json_array();
  svc_config *oc = &d->cfg;
  /* settings bound to what is already open keep their running value */
  if (str_differs(oc->socket_path, nc.socket_path)) json_array_append_new(restart, json_string("socket"));
  if (str_differs(oc->state_path, nc.state_path)) json_array_append_new(restart, json_string("state"));
  if (oc->workers != nc.workers) json_array_append_new(restart, json_string("workers"));
  if (oc->socket_mode != nc.socket_mode) json_array_append_new(restart, json_string("socket_mode"));
  if (str_differs(oc->socket_group, nc.socket_group)) json_array_append_new(restart, json_string("socket_group"));
  if (str_differs(oc->readonly_socket, nc.readonly_socket)) json_array_append_new(restart, json_string("readonly_socket"));
  if (str_differs(oc->readonly_group, nc.readonly_group)) json_array_append_new(restart, json_string("readonly_group"));
  if (str_differs(oc->metrics_listen, nc.metrics_listen)) json_array_append_new(restart, json_string("metrics_listen"));
  if (oc->max_attempts != nc.max_attempts || oc->retry_base_sec != nc.retry_base_sec ||
      oc->retry_max_sec != nc.retry_max_sec)
    json_array_append_new(restart, json_string("max_attempts/retry_base/retry_max"));
  if (str_differs(oc->instance_name, nc.instance_name) || oc->lease_ttl_sec != nc.lease_ttl_sec)
    json_array_append_new(restart, json_string("instance_name/lease_ttl"));
  SWAP(nc.socket_path, oc->socket_path);
  SWAP(nc.state_path, oc->state_path);
  SWAP(nc.socket_group, oc->socket_group);
  nc.socket_gid = oc->socket_gid;
  SWAP(nc.readonly_socket, oc->readonly_socket);
  SWAP(nc.readonly_group, oc->readonly_group);
  nc.readonly_gid = oc->readonly_gid;
  SWAP(nc.metrics_listen, oc->metrics_listen);
  nc.metrics_addr = oc->metrics_addr;
  nc.metrics_addrlen = oc->metrics_addrlen;
  nc.workers = oc->workers;
  nc.socket_mode = oc->socket_mode;
  nc.max_attempts = oc->max_attempts, nc.retry_base_sec = oc->retry_base_sec, nc.retry_max_sec = oc->retry_max_sec;
  SWAP(nc.instance_name, oc->instance_name);
  nc.lease_ttl_sec = oc->lease_ttl_sec;
  json_t *oroots = json_array(), *nroots = json_array();
  for (size_t i = 0; i < oc->n_roots; i++) json_array_append_new(oroots, json_string(oc->roots[i]));
  for (size_t i = 0; i < nc.n_roots; i++) json_array_append_new(nroots, json_string(nc.roots[i]));
  if (!json_equal(oroots, nroots)) json_object_set(ch, "roots", nroots);
  json_decref(oroots), json_decref(nroots);
  char dbuf[48];
  if (oc->debounce_sec != nc.debounce_sec) {
    bri_duration_format(nc.debounce_sec, dbuf, sizeof dbuf);
    json_object_set_new(ch, "debounce", json_string(dbuf));
  }
  if (oc->sweep_sec != nc.sweep_sec) {
    bri_duration_format(nc.sweep_sec, dbuf, sizeof dbuf);
    json_object_set_new(ch, "sweep_interval", json_string(dbuf));
  }
  if (oc->log_level != nc.log_level) json_object_set_new(ch, "log_level", json_string(svc_log_level_name(nc.log_level)));
  json_t *op = svc_policy_to_json(&oc->defaults), *np = svc_policy_to_json(&nc.defaults);
  if (!json_equal(op, np)) json_object_set(ch, "defaults", np);
  json_decref(op), json_decref(np);
  if (oc->n_sections != nc.n_sections) json_object_set_new(ch, "table_sections", json_integer((json_int_t)nc.n_sections));
  if (json_array_size(restart)) json_object_set(ch, "restart_needed", restart);
  json_decref(restart);
  SWAP(*oc, nc);
  svc_config_dispose(&nc);
  svc_log_set_level(d->cfg.log_level);
  for (size_t i = 0; i < N_MODULES; i++)
    if (MODULES[i]->apply_config) MODULES[i]->apply_config(d);
  svc_notify_ready();
  char *s = json_dumps(ch, JSON_COMPACT);
  log_notice("configuration reloaded%s%s", json_object_size(ch) ? ": " : " (no change)", json_object_size(ch) && s ? s : "");
  free(s);
  if (json_object_get(ch, "restart_needed"))
    log_warn("some changed settings take effect at the next restart (see restart_needed)");
  if (changes) *changes = ch;
  else json_decref(ch);
  return 0;
}

/* SIGHUP: the file is read off the loop (svc_config_load_roots, as the
 * reload method does), applied on it. */
typedef struct reload_req {
  uv_work_t req;
  brid *d;
  svc_overrides ov;
  svc_config cfg;
  int rc;
  bri_error err;
} reload_req;

static void reload_work(uv_work_t *req) {
  reload_req *r = req->data;
  r->rc = svc_config_load_roots(&r->cfg, &r->ov, &r->err);
}

static void reload_done(uv_work_t *req, int status) {
  reload_req *r = req->data;
  if (status) r->rc = bri_error_set(&r->err, BRI_EIO, "reload: %s", uv_strerror(status));
  if (!r->d->handles_closed) reload_apply(r->d, r->rc, &r->cfg, &r->err, NULL);
  else if (!r->rc) svc_config_dispose(&r->cfg);
  free(r);
}

static void reload(brid *d) {
  reload_req *r = calloc(1, sizeof *r);
  if (!r) {
    log_err("reload: out of memory");
    return;
  }
  r->req.data = r;
  r->d = d;
  r->ov = d->ov;
  int e = uv_queue_work(&d->loop, &r->req, reload_work, reload_done);
  if (e) reload_done(&r->req, e);
}


/* ------------------------------------------------------------- start-up */

/* The start-up discovery has registered and watched every local table
 * (svc_state.h's ready hook): READY=1, and the "ready" log line. */
static void on_ready(brid *d) {
  if (d->draining || d->handles_closed) return;
  svc_state_tables_changed(d); /* the cleanup schedule of the tables it found */
  svc_notify_ready();
  svc_state_status_changed(d, true);
  log_notice("brid %s ready: %zu table(s) under %zu root(s), %d worker(s), socket %s, store %s (discovery took %.1f s)",
             BRID_VERSION, d->n_tables, d->cfg.n_roots, d->cfg.workers, d->cfg.socket_path, d->cfg.state_path,
             (double)(bri_now_ms() - d->started_ms) / 1000);
}

int svc_daemon_run(brid *d) {
  d->started_ms = bri_now_ms();
  int exit_code = 1;
  size_t started = 0; /* modules to close should start-up fail */
  bri_error err;

  bri_jobs_options jo;
  bri_jobs_options_init(&jo);
  jo.max_attempts = d->cfg.max_attempts;
  jo.retry_base_ms = d->cfg.retry_base_sec * 1000;
  jo.retry_max_ms = d->cfg.retry_max_sec * 1000;
  jo.lease_ttl_ms = d->cfg.lease_ttl_sec * 1000;
  char host[200] = "?", instance[256];
  gethostname(host, sizeof host - 1);
  snprintf(instance, sizeof instance, "%s:%d", host, (int)getpid());
  jo.instance = d->cfg.instance_name ? d->cfg.instance_name : instance;
  jo.password = d->cfg.store_password;
  if (bri_jobs_open(d->cfg.state_path, &jo, &d->store, &err)) {
    log_err("cannot open the job store: %s", err.msg);
    return exit_code;
  }
  /* before the loop, in start-up order: the roots handed to libbri, the
   * instance registered and what a previous run left recovered */
  for (size_t i = 0; i < N_MODULES; i++) {
    if (MODULES[i]->prepare && MODULES[i]->prepare(d, &err)) {
      log_err("%s", err.msg);
      bri_jobs_close(d->store);
      d->store = NULL;
      return exit_code;
    }
  }
  jo.read_only = 1;
  if (bri_jobs_open(d->cfg.state_path, &jo, &d->reader, &err))
    log_warn("control reads share the job store's connection: cannot open a read connection: %s", err.msg);

  uv_loop_init(&d->loop);
  d->hooks.ready = on_ready;
  d->hooks.fatal = on_fatal;
  d->hooks.idle = on_idle;
  d->hooks.reload_apply = reload_apply;
  uv_timer_init(&d->loop, &d->drain_timer);
  uv_timer_init(&d->loop, &d->watchdog_timer);
  d->drain_timer.data = d;
  for (size_t i = 0; i < N_MODULES; i++) {
    if (MODULES[i]->start && MODULES[i]->start(d, &err)) {
      log_err("%s", err.msg);
      started = i + 1; /* a module that failed undoes its start in its close */
      goto out_loop;
    }
  }
  started = N_MODULES;
  uv_signal_init(&d->loop, &d->sig_term);
  uv_signal_init(&d->loop, &d->sig_int);
  uv_signal_init(&d->loop, &d->sig_hup);
  d->sig_term.data = d->sig_int.data = d->sig_hup.data = d;
  uv_signal_start(&d->sig_term, on_signal, SIGTERM);
  uv_signal_start(&d->sig_int, on_signal, SIGINT);
  uv_signal_start(&d->sig_hup, on_signal, SIGHUP);
  d->watchdog_usec = svc_notify_watchdog_usec();
  if (d->watchdog_usec) {
    uint64_t every = d->watchdog_usec / 2000;
    uv_timer_start(&d->watchdog_timer, on_watchdog, every ? every : 1, every ? every : 1);
  }
  svc_state_work_queued(d); /* jobs queued before the restart run while the discovery walks */
  log_notice("brid %s starting: socket %s answers; discovering the tables under %zu root(s)", BRID_VERSION,
             d->cfg.socket_path, d->cfg.n_roots);
  uv_run(&d->loop, UV_RUN_DEFAULT);
  exit_code = d->exit_code;

out_loop:
  if (!d->handles_closed) {
    /* start-up failed after the loop existed: close what was opened (a
     * discovery in flight ends without registering anything) */
    d->handles_closed = true;
    close_modules(d, started); /* before the walk closes their async handles */
    uv_walk(&d->loop, close_walk, NULL);
    uv_run(&d->loop, UV_RUN_DEFAULT);
  }
  if (uv_loop_close(&d->loop) == UV_EBUSY) {
    uv_run(&d->loop, UV_RUN_DEFAULT);
    uv_loop_close(&d->loop);
  }
  for (size_t i = N_MODULES; i--;)
    if (MODULES[i]->dispose) MODULES[i]->dispose(d);
  bri_jobs_close(d->reader);
  bri_jobs_close(d->store);
  return exit_code;
}
