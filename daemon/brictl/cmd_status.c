/* cmd_status.c: `brictl status`: what brid is
 * doing: its state and uptime, its job store and the instances sharing it,
 * its roots' reachability (cli_print_roots, which brictl tables prints
 * too), tables watched, workers busy, jobs by state, and each running job
 * with its progress. */
#include <stdio.h>
#include <string.h>

#include "cmd_client.h"
#include "bri/util.h"

void cli_print_roots(const json_t *roots) {
  size_t i;
  json_t *r;
  if (json_array_size(roots)) printf("roots:\n");
  json_array_foreach(roots, i, r) {
    char when[64];
    const char *st = cli_str(r, "state");
    if (!strcmp(st, "unreachable")) {
      json_t *e = json_object_get(r, "last_error");
      cli_fmt_time(json_object_get(r, "unreachable_since"), when, sizeof when);
      printf("  %s: UNREACHABLE since %s (%lld failed listing(s)): %s\n", cli_str(r, "root"), when,
             cli_int(r, "consecutive_failures"), cli_str(e, "message"));
    } else if (!strcmp(st, "reachable")) {
      cli_fmt_time(json_object_get(r, "last_success_at"), when, sizeof when);
      printf("  %s: reachable, last listed %s\n", cli_str(r, "root"), when);
    } else {
      printf("  %s: not listed yet\n", cli_str(r, "root"));
    }
  }
}

static void print_store(const json_t *st, const json_t *instances) {
  char when[64];
  if (json_is_true(json_object_get(st, "up"))) {
    printf("store:   %s %s, instance %s\n", cli_str(st, "backend"), cli_str(st, "location"), cli_str(st, "instance"));
  } else {
    cli_fmt_time(json_object_get(st, "down_since"), when, sizeof when);
    printf("store:   %s %s: UNREACHABLE since %s (%lld failed heartbeat(s)): %s\n", cli_str(st, "backend"),
           cli_str(st, "location"), when, cli_int(st, "consecutive_failures"), cli_str(st, "error"));
  }
  if (json_array_size(instances) < 2) return; /* one brid: its own line says it */
  size_t i;
  json_t *in;
  printf("instances:\n");
  json_array_foreach(instances, i, in) {
    char age[32];
    cli_fmt_duration(cli_int(in, "heartbeat_age_ms"), age, sizeof age);
    printf("  %-24s %-8s %s pid %lld, last heartbeat %s ago%s\n", cli_str(in, "name"), cli_str(in, "state"),
           cli_str(in, "host"), cli_int(in, "pid"), age, json_is_true(json_object_get(in, "this")) ? " (this one)" : "");
  }
}

static int cmd_status(const cli_args *a) {
  cli_client c;
  cli_client_init(&c, a);
  json_t *s;
  int x = cli_client_call(&c, "status", NULL, &s);
  if (x) return x;
  if (c.json) {
    cli_print_json(s);
    json_decref(s);
    return CLI_OK;
  }
  /* "running for" the uptime; "draining for" the time since the drain began */
  char up[32], since[48];
  json_t *drain = json_object_get(s, "draining_since");
  if (json_is_integer(drain))
    cli_fmt_duration(bri_now_ms() - json_integer_value(drain), up, sizeof up);
  else
    cli_fmt_duration(cli_int(s, "uptime_seconds") * 1000, up, sizeof up);
  cli_fmt_time(json_object_get(s, "started_at"), since, sizeof since);
  json_t *cfg = json_object_get(s, "config");
  printf("brid %s (pid %lld) %s for %s (started %s); config %s\n", cli_str(s, "version"), cli_int(s, "pid"),
         cli_str(s, "state"), up, since, json_is_string(cfg) ? json_string_value(cfg) : "(built-in defaults)");
  size_t k;
  json_t *u;
  json_array_foreach(json_object_get(s, "unreadable_tables"), k, u)
    printf("unreadable: %s: %s\n", cli_str(u, "table"), cli_str(u, "error"));
  json_array_foreach(json_object_get(s, "unsupported_tables"), k, u)
    printf("unsupported: %s: %s\n", cli_str(u, "table"), cli_str(u, "error"));
  print_store(json_object_get(s, "store_status"), json_object_get(s, "instances"));
  cli_print_roots(json_object_get(s, "roots"));
  json_t *t = json_object_get(s, "tables"), *w = json_object_get(s, "workers"), *j = json_object_get(s, "jobs");
  printf("tables:  %lld watched (%lld paused, %lld inotify watches)\n", cli_int(t, "watched"), cli_int(t, "paused"),
         cli_int(t, "inotify_watches"));
  if (cli_int(t, "sweep_only"))
    printf("         %lld not watched, found by the sweep only: %s\n", cli_int(t, "sweep_only"),
           cli_str(t, "watch_error"));
  json_t *disc = json_object_get(s, "discovery");
  if (json_is_object(disc) && !json_is_true(json_object_get(disc, "first_sweep_done")))
    printf("start-up: %s; %lld table(s) not checked yet\n",
           json_is_integer(json_object_get(disc, "startup_done_at")) ? "discovery done" : "discovering",
           cli_int(disc, "unchecked_tables"));
  printf("workers: %lld of %lld busy\n", cli_int(w, "busy"), cli_int(w, "total"));
  printf("jobs:    %lld queued, %lld running, %lld succeeded, %lld failed, %lld cancelled\n", cli_int(j, "queued"),
         cli_int(j, "running"), cli_int(j, "succeeded"), cli_int(j, "failed"), cli_int(j, "cancelled"));
  json_t *lr = json_object_get(s, "last_reload");
  if (json_is_string(json_object_get(lr, "error"))) printf("last reload FAILED: %s\n", cli_str(lr, "error"));
  json_t *run = json_object_get(s, "running");
  size_t i;
  json_t *r;
  if (json_array_size(run)) printf("running:\n");
  json_array_foreach(run, i, r) {
    char pr[160], dur[32];
    json_t *p = json_object_get(r, "progress");
    cli_fmt_progress(p, pr, sizeof pr);
    cli_fmt_duration(cli_int(p, "updated_at") - cli_int(p, "started_at"), dur, sizeof dur);
    printf("  job %-6lld %-11s %s: %s, %s%s\n", cli_int(r, "job"), cli_str(r, "kind"), cli_str(r, "table"), pr, dur,
           json_is_true(json_object_get(r, "cancelling")) ? " (stopping)" : "");
  }
  json_decref(s);
  return CLI_OK;
}

const cli_cmd CMD_STATUS = {
    .name = "status",
    .args = "",
    .summary = "brid's state, workers, queue and running jobs",
    .about = "Shows what brid is doing: its state (running; degraded when a table it watches cannot be "
             "read, a root cannot be listed or the job store cannot be reached, each such table and root named; draining while it stops) "
             "and for how long, each root's reachability, the tables it watches, busy workers, jobs by "
             "state, and each running job with its progress.",
    .flags = CLI_CMD_DAEMON | CLI_CMD_JSON,
    .run = cmd_status,
};
