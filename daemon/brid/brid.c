/* brid.c: the daemon's entry point: flags, start-up, signals, reload, drain
 * and shutdown. Everything else lives in the svc_* modules (svc_daemon.h
 * lists them).
 *
 * Start-up order is chosen so that nothing runs on a half-known state:
 * configuration (exit 78, EX_CONFIG, when it is wrong, so systemd does not
 * restart in a loop), job store (its lock keeps a second daemon out),
 * recovery of a previous crash (before any worker can claim a job), control
 * socket, discovery, workers, and only then READY=1. Shutdown is a drain:
 * SIGTERM stops new work at once, running jobs get drain_timeout to finish,
 * then are asked to stop at their next safe point (they go back to the
 * queue), and if a job still does not stop, brid exits anyway and the next
 * start's recovery rolls it back. A second SIGTERM skips the wait. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "svc_config.h"
#include "svc_control.h"
#include "svc_daemon.h"
#include "svc_log.h"
#include "svc_notify.h"
#include "svc_recover.h"
#include "svc_sched.h"
#include "svc_watch.h"
#include "svc_worker.h"
#include "util/duration.h"
#include "util/failpoint.h"

#define EXIT_CONFIG 78 /* EX_CONFIG: sysexits.h */
#define HARD_STOP_MS 15000

int64_t brid_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: brid [--config FILE] [--root DIR]... [--socket PATH] [--state PATH]\n"
          "            [--workers N] [--debounce DURATION] [--log-level LEVEL] [--check-config]\n"
          "\n"
          "brid watches the Lance tables under each root, compacts them without copying their\n"
          "blob payloads, cleans up old versions, and answers brictl on a Unix socket.\n"
          "\n"
          "  --config FILE      INI configuration (keys: config/brid.conf.example); without it,\n"
          "                     built-in defaults and the flags below\n"
          "  --root DIR         a directory holding tables (repeatable; replaces the file's roots)\n"
          "  --socket PATH      control socket [/run/brid/brid.sock]\n"
          "  --state PATH       SQLite job store [" SVC_DEFAULT_STATE "]\n"
          "  --workers N        worker threads [2]\n"
          "  --debounce DUR     quiet time after a commit before planning, e.g. 30s [30s]\n"
          "  --log-level LEVEL  error, warning, notice, info or debug [info]\n"
          "  --check-config     validate the configuration, print it as JSON, and exit\n"
          "  --version          print the version and exit\n"
          "\n"
          "Signals: SIGHUP reloads the configuration; SIGTERM drains (running jobs get\n"
          "drain_timeout) and exits; a second SIGTERM stops running jobs at once.\n"
          "Exit status: 0 stopped cleanly, 1 failed, 78 invalid configuration.\n");
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
  svc_pool_stop(d->pool);
  svc_control_close(d->ctl);
  svc_watch_close(d);
  uv_close((uv_handle_t *)&d->sched_timer, close_cb);
  uv_close((uv_handle_t *)&d->cleanup_timer, close_cb);
  uv_close((uv_handle_t *)&d->drain_timer, close_cb);
  uv_close((uv_handle_t *)&d->watchdog_timer, close_cb);
  uv_close((uv_handle_t *)&d->sig_term, close_cb);
  uv_close((uv_handle_t *)&d->sig_int, close_cb);
  uv_close((uv_handle_t *)&d->sig_hup, close_cb);
}

void brid_worker_idle(brid *d) {
  if (!d->draining || d->handles_closed) return;
  if (svc_pool_idle(d->pool) < svc_pool_size(d->pool) || d->checks_inflight) return;
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

void brid_shutdown(brid *d) {
  if (d->handles_closed) return;
  if (d->draining) {
    if (!d->drain_cancelled) stop_running(d, "second stop signal");
    return;
  }
  d->draining = true;
  svc_notify_stopping();
  int busy = svc_pool_size(d->pool) - svc_pool_idle(d->pool);
  log_notice("stopping: %d job(s) running%s", busy, busy ? "; waiting for them (drain_timeout)" : "");
  svc_watch_stop(d);
  svc_sched_stop(d);
  uv_timer_start(&d->drain_timer, on_drain_deadline, (uint64_t)d->cfg.drain_sec * 1000, 0);
  brid_worker_idle(d);
}

static void on_signal(uv_signal_t *h, int sig) {
  brid *d = h->data;
  if (sig == SIGHUP) {
    bri_error err;
    brid_reload(d, NULL, &err);
    return;
  }
  log_notice("received %s", sig == SIGTERM ? "SIGTERM" : "SIGINT");
  brid_shutdown(d);
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

int brid_reload(brid *d, json_t **changes, bri_error *err) {
  if (changes) *changes = NULL;
  svc_notify_reloading();
  svc_config nc;
  int rc = svc_config_load(&nc, &d->ov, err);
  d->last_reload_ms = brid_now_ms();
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
  if (oc->max_attempts != nc.max_attempts || oc->retry_base_sec != nc.retry_base_sec ||
      oc->retry_max_sec != nc.retry_max_sec)
    json_array_append_new(restart, json_string("max_attempts/retry_base/retry_max"));
  SWAP(nc.socket_path, oc->socket_path);
  SWAP(nc.state_path, oc->state_path);
  SWAP(nc.socket_group, oc->socket_group);
  nc.socket_gid = oc->socket_gid;
  nc.workers = oc->workers;
  nc.socket_mode = oc->socket_mode;
  nc.max_attempts = oc->max_attempts, nc.retry_base_sec = oc->retry_base_sec, nc.retry_max_sec = oc->retry_max_sec;
  json_t *oroots = json_array(), *nroots = json_array();
  for (size_t i = 0; i < oc->n_roots; i++) json_array_append_new(oroots, json_string(oc->roots[i]));
  for (size_t i = 0; i < nc.n_roots; i++) json_array_append_new(nroots, json_string(nc.roots[i]));
  if (!json_equal(oroots, nroots)) json_object_set(ch, "roots", nroots);
  json_decref(oroots), json_decref(nroots);
  if (oc->debounce_sec != nc.debounce_sec) json_object_set_new(ch, "debounce", json_integer(nc.debounce_sec));
  if (oc->sweep_sec != nc.sweep_sec) json_object_set_new(ch, "sweep_interval", json_integer(nc.sweep_sec));
  if (oc->log_level != nc.log_level) json_object_set_new(ch, "log_level", json_string(svc_log_level_name(nc.log_level)));
  json_t *op = svc_policy_to_json(&oc->defaults), *np = svc_policy_to_json(&nc.defaults);
  if (!json_equal(op, np)) json_object_set(ch, "defaults", np);
  json_decref(op), json_decref(np);
  if (oc->n_sections != nc.n_sections) json_object_set_new(ch, "table_sections", json_integer((json_int_t)nc.n_sections));
  if (json_array_size(restart)) json_object_set(ch, "restart_needed", restart);
  json_decref(restart);
  SWAP(*oc, nc);
  svc_config_free(&nc);
  svc_log_set_level(d->cfg.log_level);
  svc_watch_apply_config(d);
  svc_sched_cleanup_tick(d);
  svc_sched_kick(d);
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

/* ---------------------------------------------------------------- main */

/* Frees what main allocated before the configuration existed. */
static int early_exit(brid *d, int code) {
  free((void *)d->ov.roots);
  free(d);
  return code;
}

/* A failpoint about to crash or stop brid says so in brid's log first. */
static void log_failpoint(const char *name, const char *action, long pass) {
  log_warn("failpoint %s: %s (pass %ld)", name, action, pass);
}

/* BRI_FAILPOINTS (util/failpoint.h), read before any thread exists: a test
 * armed this daemon on purpose, so a malformed value stops start-up and an
 * armed one is logged, never silent. */
static int arm_failpoints(bri_error *err) {
  int rc = bri_failpoint_init(err);
  if (rc) return rc;
  bri_failpoint_set_notify(log_failpoint);
  const char *spec = getenv("BRI_FAILPOINTS");
  if (spec && *spec) log_warn("failpoints armed (BRI_FAILPOINTS=%s): this daemon is under test", spec);
  return 0;
}

static int check_config(const svc_config *c) {
  int warnings = 0;
  for (size_t i = 0; i < c->n_roots; i++) {
    struct stat st;
    if (stat(c->roots[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
      fprintf(stderr, "brid: warning: root %s is not a directory (yet): brid looks again at each sweep\n", c->roots[i]);
      warnings++;
    }
  }
  for (size_t i = 0; i < c->n_sections; i++)
    if (!c->sections[i].is_glob && !c->sections[i].canonical) {
      fprintf(stderr, "brid: warning: [table %s]: no such table (yet)\n", c->sections[i].pattern);
      warnings++;
    }
  json_t *j = svc_config_to_json(c);
  json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  fputc('\n', stdout);
  json_decref(j);
  fprintf(stderr, "brid: configuration OK%s%s%s\n", c->file ? " (" : " (built-in defaults and flags", c->file ? c->file : "",
          ")");
  (void)warnings;
  return 0;
}

int main(int argc, char **argv) {
  static const struct option opts[] = {
      {"config", required_argument, 0, 'c'},  {"root", required_argument, 0, 'r'},
      {"socket", required_argument, 0, 's'},  {"state", required_argument, 0, 'S'},
      {"workers", required_argument, 0, 'w'}, {"debounce", required_argument, 0, 'd'},
      {"log-level", required_argument, 0, 'l'}, {"check-config", no_argument, 0, 'C'},
      {"help", no_argument, 0, 'h'},          {"version", no_argument, 0, 'V'},
      {0, 0, 0, 0},
  };
  brid *d = calloc(1, sizeof *d);
  const char **roots = calloc((size_t)argc + 1, sizeof *roots);
  if (!d || !roots) {
    fprintf(stderr, "brid: out of memory\n");
    return 1;
  }
  d->ov.roots = roots;
  d->ov.debounce_sec = -1;
  bool check = false;
  bri_error err;
  int o;
  while ((o = getopt_long(argc, argv, "c:r:s:S:w:d:l:ChV", opts, NULL)) != -1) {
    switch (o) {
    case 'c': d->ov.config_file = optarg; break;
    case 'r': roots[d->ov.n_roots++] = optarg; break;
    case 's': d->ov.socket_path = optarg; break;
    case 'S': d->ov.state_path = optarg; break;
    case 'w': {
      char *end;
      long n = strtol(optarg, &end, 10);
      if (*end || n < 1 || n > 64) {
        fprintf(stderr, "brid: --workers takes a number from 1 to 64\n");
        return early_exit(d, EXIT_CONFIG);
      }
      d->ov.workers = (int)n;
      break;
    }
    case 'd': {
      int64_t s;
      if (bri_duration_parse(optarg, "--debounce", &s, &err) || s < 0 || s > 86400) {
        fprintf(stderr, "brid: --debounce takes a duration such as 30s or 2m\n");
        return early_exit(d, EXIT_CONFIG);
      }
      d->ov.debounce_sec = s;
      break;
    }
    case 'l': d->ov.log_level = optarg; break;
    case 'C': check = true; break;
    case 'h': usage(stdout); return early_exit(d, 0);
    case 'V': printf("brid %s\n", BRID_VERSION); return early_exit(d, 0);
    default: usage(stderr); return early_exit(d, EXIT_CONFIG);
    }
  }
  if (optind < argc) {
    fprintf(stderr, "brid: unexpected argument \"%s\"\n", argv[optind]);
    usage(stderr);
    return early_exit(d, EXIT_CONFIG);
  }
  for (size_t i = 0; i < d->ov.n_roots; i++)
    if (roots[i][0] != '/') {
      /* roots are compared as canonical paths; a relative one would
       * silently change meaning with the working directory */
      static char abs[64][PATH_MAX];
      if (i >= 64 || !realpath(roots[i], abs[i])) {
        fprintf(stderr, "brid: --root %s: %s\n", roots[i], i >= 64 ? "too many roots" : strerror(errno));
        return early_exit(d, EXIT_CONFIG);
      }
      roots[i] = abs[i];
    }
  if (svc_config_load(&d->cfg, &d->ov, &err)) {
    fprintf(stderr, "brid: %s\n", err.msg);
    return early_exit(d, EXIT_CONFIG);
  }
  if (check) {
    int rc = check_config(&d->cfg);
    svc_config_free(&d->cfg);
    free(roots), free(d);
    return rc;
  }
  signal(SIGPIPE, SIG_IGN);
  svc_log_set_level(d->cfg.log_level);
  if (arm_failpoints(&err)) {
    fprintf(stderr, "brid: %s\n", err.msg);
    svc_config_free(&d->cfg);
    return early_exit(d, EXIT_CONFIG);
  }
  d->started_ms = brid_now_ms();
  int exit_code = 1;

  bri_jobs_options jo;
  bri_jobs_options_init(&jo);
  jo.max_attempts = d->cfg.max_attempts;
  jo.retry_base_ms = d->cfg.retry_base_sec * 1000;
  jo.retry_max_ms = d->cfg.retry_max_sec * 1000;
  if (bri_jobs_open(d->cfg.state_path, &jo, &d->store, &err)) {
    log_err("cannot open the job store: %s", err.msg);
    goto out_config;
  }
  bri_jobs_recovery_report rep = {0};
  if (svc_recover_startup(d->store, &rep, &err))
    log_err("recovery left %zu job(s) as they were: %s", rep.stuck, err.msg);
  if (rep.interrupted || rep.leftovers)
    log_notice("recovery: %zu interrupted job(s): %zu requeued, %zu finished (their commit had landed), %zu failed, "
               "%zu cancelled; %zu file(s) removed, %zu kept; %zu job(s) with leftover outputs",
               rep.interrupted, rep.requeued, rep.succeeded, rep.failed, rep.cancelled, rep.files_removed,
               rep.files_kept, rep.leftovers);

  uv_loop_init(&d->loop);
  if (svc_control_open(d, &d->ctl, &err)) {
    log_err("%s", err.msg);
    goto out_loop;
  }
  svc_sched_init(d);
  uv_timer_init(&d->loop, &d->drain_timer);
  uv_timer_init(&d->loop, &d->watchdog_timer);
  d->drain_timer.data = d;
  if (svc_watch_start(d, &err)) {
    log_err("%s", err.msg);
    goto out_loop;
  }
  if (svc_pool_start(d, d->cfg.workers, &d->pool, &err)) {
    log_err("%s", err.msg);
    goto out_loop;
  }
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
  svc_sched_kick(d);
  svc_sched_cleanup_tick(d);
  svc_notify_ready();
  svc_status_update(d, true);
  log_notice("brid %s ready: %zu table(s) under %zu root(s), %d worker(s), socket %s, store %s", BRID_VERSION,
             d->n_tables, d->cfg.n_roots, d->cfg.workers, d->cfg.socket_path, d->cfg.state_path);
  uv_run(&d->loop, UV_RUN_DEFAULT);
  exit_code = d->exit_code;

out_loop:
  if (!d->handles_closed) {
    /* start-up failed after the loop existed: close what was opened */
    if (d->pool) svc_pool_stop(d->pool);
    svc_control_close(d->ctl);
    uv_walk(&d->loop, close_walk, NULL);
    uv_run(&d->loop, UV_RUN_DEFAULT);
  }
  if (uv_loop_close(&d->loop) == UV_EBUSY) {
    uv_run(&d->loop, UV_RUN_DEFAULT);
    uv_loop_close(&d->loop);
  }
  svc_pool_free(d->pool);
  svc_control_free(d->ctl);
  svc_watch_free(d);
  bri_jobs_close(d->store);
out_config:
  svc_config_free(&d->cfg);
  free(d->last_reload_error);
  free(roots);
  free(d);
  return exit_code;
}
