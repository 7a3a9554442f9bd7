/* brid.c: the daemon's entry point, and only that: flags, the
 * configuration (exit 78, EX_CONFIG, when it is wrong, so systemd does not
 * restart in a loop), --check-config, the failpoints of a daemon under
 * test; then svc_daemon_run (svc_daemon.c) runs the daemon. No svc_*
 * module calls into this file. */
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

#include "bri/util.h"
#include "brid/1_leaves/svc_config.h"
#include "brid/1_leaves/svc_log.h"
#include "brid/7_life/svc_daemon.h"

#define EXIT_CONFIG 78 /* EX_CONFIG: sysexits.h */

static void usage(FILE *f) {
  fprintf(f,
          "usage: brid [--config FILE] [--root DIR]... [--socket PATH]\n"
          "            [--state PATH | --store URI] [--workers N] [--debounce DURATION] [--log-level LEVEL]\n"
          "            [--metrics-listen ADDR:PORT|off] [--check-config]\n"
          "\n"
          "brid watches the Lance tables under each root, compacts them without copying their\n"
          "blob payloads, cleans up old versions, and answers brictl on a Unix socket.\n"
          "\n"
          "  --config FILE      INI configuration (keys: config/brid.conf.example); without it,\n"
          "                     built-in defaults and the flags below\n"
          "  --root DIR         a directory holding tables, or s3://BUCKET/PREFIX, az://CONTAINER/PREFIX (repeatable;\n"
          "                     replaces the file's roots)\n"
          "  --socket PATH      control socket [/run/brid/brid.sock]\n"
          "  --state PATH       SQLite job store [" SVC_DEFAULT_STATE "]\n"
          "  --store URI        PostgreSQL job store instead, a libpq URI or conninfo,\n"
          "                     e.g. postgresql://brid@db.example/brid?sslmode=verify-full\n"
          "                     (no password in it: store_password_file, docs/cluster.md)\n"
          "  --workers N        worker threads [4 per CPU, 2 to 32]\n"
          "  --debounce DUR     quiet time after a commit before planning, e.g. 30s [30s]\n"
          "  --log-level LEVEL  error, warning, notice, info or debug [info]\n"
          "  --metrics-listen ADDR:PORT\n"
          "                     serve /metrics, /healthz and /readyz over HTTP there, e.g.\n"
          "                     127.0.0.1:9851 or [::1]:9851 (port 0: any free port, logged);\n"
          "                     off: no HTTP [off, or metrics_listen of the file]\n"
          "  --check-config     validate the configuration, print it as JSON, and exit\n"
          "  --version          print the version and exit\n"
          "\n"
          "Signals: SIGHUP reloads the configuration; SIGTERM drains (running jobs get\n"
          "drain_timeout) and exits; a second SIGTERM stops running jobs at once.\n"
          "Exit status: 0 stopped cleanly, 1 failed, 78 invalid configuration.\n");
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
    if (!(svc_location_caps(c->roots[i]) & BRI_STORE_CAP_LOCAL)) continue; /* nothing asked of the network here */
    if (stat(c->roots[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
      fprintf(stderr, "brid: warning: root %s is not a directory (yet): brid looks again at each sweep\n", c->roots[i]);
      warnings++;
    }
  }
  for (size_t i = 0; i < c->n_sections; i++) {
    struct stat st;
    const char *table = c->sections[i].pattern;
    if (!c->sections[i].is_glob && (svc_location_caps(table) & BRI_STORE_CAP_LOCAL) && stat(table, &st) != 0) {
      fprintf(stderr, "brid: warning: [table %s]: no such table (yet)\n", c->sections[i].pattern);
      warnings++;
    }
  }
  json_t *j = svc_config_to_json(c);
  json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
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
      {"store", required_argument, 0, 'P'},
      {"workers", required_argument, 0, 'w'}, {"debounce", required_argument, 0, 'd'},
      {"log-level", required_argument, 0, 'l'}, {"check-config", no_argument, 0, 'C'},
      {"metrics-listen", required_argument, 0, 'm'},
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
  while ((o = getopt_long(argc, argv, "c:r:s:S:P:w:d:l:m:ChV", opts, NULL)) != -1) {
    switch (o) {
    case 'c': d->ov.config_file = optarg; break;
    case 'r': roots[d->ov.n_roots++] = optarg; break;
    case 's': d->ov.socket_path = optarg; break;
    case 'S': d->ov.state_path = optarg; break;
    case 'P': d->ov.store_uri = optarg; break;
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
    case 'm': d->ov.metrics_listen = optarg; break;
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
    if (roots[i][0] != '/' && (svc_location_caps(roots[i]) & BRI_STORE_CAP_LOCAL)) {
      /* roots are compared as canonical names; a relative one would
       * silently change meaning with the working directory */
      static char abs[64][PATH_MAX];
      char *name = NULL;
      if (i >= 64 || bri_store_location(roots[i], &name, &err)) {
        fprintf(stderr, "brid: --root %s: %s\n", roots[i], i >= 64 ? "too many roots" : err.msg);
        return early_exit(d, EXIT_CONFIG);
      }
      snprintf(abs[i], sizeof abs[i], "%s", name);
      free(name);
      roots[i] = abs[i];
    }
  if (svc_config_load(&d->cfg, &d->ov, &err)) {
    fprintf(stderr, "brid: %s\n", err.msg);
    return early_exit(d, EXIT_CONFIG);
  }
  if (check) {
    int rc = check_config(&d->cfg);
    svc_config_dispose(&d->cfg);
    free(roots), free(d);
    return rc;
  }
  signal(SIGPIPE, SIG_IGN);
  svc_log_set_level(d->cfg.log_level);
  if (arm_failpoints(&err)) {
    fprintf(stderr, "brid: %s\n", err.msg);
    svc_config_dispose(&d->cfg);
    return early_exit(d, EXIT_CONFIG);
  }
  int exit_code = svc_daemon_run(d);
  svc_config_dispose(&d->cfg);
  free(d->last_reload_error);
  free(roots);
  free(d);
  return exit_code;
}
