/* cmd_jobs.c: the job commands of brictl:
 *   brictl jobs [--table T] [--state S[,S]] [--kind K] [--limit N] [--json]
 *   brictl job ID [--json]        one job: attempts, journal, progress, result
 *   brictl cancel ID [--json]     cancel a queued job, or stop a running one
 *                                 at its next safe point */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_client.h"

static const char JOBS_USAGE[] =
    "brictl jobs [--table TABLE] [--state STATE[,STATE]] [--kind KIND] [--limit N] [--json] [--socket PATH]";
static const char JOB_USAGE[] = "brictl job ID [--json] [--socket PATH]";
static const char CANCEL_USAGE[] = "brictl cancel ID [--json] [--socket PATH]";

static void job_line(const json_t *j) {
  char when[64], dur[32], w[32], r[32];
  cli_fmt_time(json_object_get(j, "created_at"), when, sizeof when);
  long long st = cli_int(j, "started_at"), fin = cli_int(j, "finished_at");
  if (st && fin) cli_fmt_duration(fin - st, dur, sizeof dur);
  else snprintf(dur, sizeof dur, "-");
  cli_fmt_bytes((uint64_t)cli_int(j, "bytes_written"), w, sizeof w);
  cli_fmt_bytes((uint64_t)cli_int(j, "bytes_reused"), r, sizeof r);
  printf("%-6lld %-11s %-10s %-19s %8s %10s %10s  %s\n", cli_int(j, "id"), cli_str(j, "kind"), cli_str(j, "state"), when,
         dur, w, r, cli_str(j, "table"));
  if (json_is_string(json_object_get(j, "error"))) printf("       error: %s\n", cli_str(j, "error"));
  json_t *p = json_object_get(j, "progress");
  if (p) {
    char pr[160];
    cli_fmt_progress(p, pr, sizeof pr);
    printf("       %s\n", pr);
  }
}

int cmd_jobs(int argc, char **argv) {
  cli_client c;
  cli_client_init(&c);
  json_t *params = json_object();
  char path[4096];
  for (int i = 1; i < argc; i++) {
    int r = cli_client_opt(&c, "jobs", JOBS_USAGE, argc, argv, &i);
    if (r < 0) goto usage;
    if (r) continue;
    const char *a = argv[i];
    if (i + 1 >= argc && (!strcmp(a, "--table") || !strcmp(a, "--state") || !strcmp(a, "--kind") || !strcmp(a, "--limit"))) {
      cli_usage_error("jobs", JOBS_USAGE, "%s needs a value", a);
      goto usage;
    }
    if (!strcmp(a, "--table")) {
      json_object_set_new(params, "table", json_string(cli_table_path(argv[++i], path, sizeof path)));
    } else if (!strcmp(a, "--state")) {
      json_t *states = json_array();
      char *s = strdup(argv[++i]), *save = NULL;
      for (char *t = strtok_r(s, ",", &save); t; t = strtok_r(NULL, ",", &save)) json_array_append_new(states, json_string(t));
      free(s);
      json_object_set_new(params, "state", states);
    } else if (!strcmp(a, "--kind")) {
      json_object_set_new(params, "kind", json_string(argv[++i]));
    } else if (!strcmp(a, "--limit")) {
      unsigned long long n;
      if (!cli_parse_u64(argv[++i], &n) || n == 0) {
        cli_usage_error("jobs", JOBS_USAGE, "--limit needs a positive number");
        goto usage;
      }
      json_object_set_new(params, "limit", json_integer((json_int_t)n));
    } else {
      cli_usage_error("jobs", JOBS_USAGE, "unknown argument %s", a);
      goto usage;
    }
  }
  json_t *res;
  int x = cli_client_call(&c, "jobs.list", params, &res);
  if (x) return x;
  if (c.json) {
    cli_print_json(res);
  } else {
    printf("%-6s %-11s %-10s %-19s %8s %10s %10s  %s\n", "ID", "KIND", "STATE", "CREATED", "TOOK", "WRITTEN", "REUSED",
           "TABLE");
    size_t i;
    json_t *j;
    json_array_foreach(json_object_get(res, "jobs"), i, j) job_line(j);
  }
  json_decref(res);
  return CLI_OK;
usage:
  json_decref(params);
  return CLI_USAGE;
}

static int parse_id(int argc, char **argv, const char *cmd, const char *usage, cli_client *c, long long *id) {
  *id = 0;
  for (int i = 1; i < argc; i++) {
    int r = cli_client_opt(c, cmd, usage, argc, argv, &i);
    if (r < 0) return CLI_USAGE;
    if (r) continue;
    unsigned long long n;
    if (argv[i][0] == '-' || *id) return cli_usage_error(cmd, usage, "unexpected argument %s", argv[i]);
    if (!cli_parse_u64(argv[i], &n) || n == 0) return cli_usage_error(cmd, usage, "ID must be a job number, got %s", argv[i]);
    *id = (long long)n;
  }
  if (!*id) return cli_usage_error(cmd, usage, "ID is required");
  return 0;
}

/* brictl job|cancel ID: parses the flags and ID, then calls method with it. */
static int call_on_job(int argc, char **argv, const char *cmd, const char *usage, const char *method,
                       cli_client *c, long long *id, json_t **res) {
  cli_client_init(c);
  int u = parse_id(argc, argv, cmd, usage, c, id);
  if (u) return u;
  return cli_client_call(c, method, json_pack("{s:I}", "id", (json_int_t)*id), res);
}

/* Prints one job in detail (shared with cmd_submit.c's --wait). */
void cli_print_job(const json_t *j) {
  char buf[64], w[32], r[32];
  printf("job %lld: %s %s\n", cli_int(j, "id"), cli_str(j, "kind"), cli_str(j, "table"));
  printf("  state:      %s%s\n", cli_str(j, "state"), json_is_true(json_object_get(j, "cancel_requested")) ? " (cancel requested)" : "");
  printf("  attempts:   %lld of %lld\n", cli_int(j, "attempts"), cli_int(j, "max_attempts"));
  cli_fmt_time(json_object_get(j, "created_at"), buf, sizeof buf);
  printf("  created:    %s\n", buf);
  cli_fmt_time(json_object_get(j, "started_at"), buf, sizeof buf);
  printf("  started:    %s\n", buf);
  cli_fmt_time(json_object_get(j, "finished_at"), buf, sizeof buf);
  printf("  finished:   %s\n", buf);
  if (!strcmp(cli_str(j, "state"), "queued")) {
    cli_fmt_time(json_object_get(j, "not_before"), buf, sizeof buf);
    printf("  not before: %s\n", buf);
  }
  cli_fmt_bytes((uint64_t)cli_int(j, "bytes_written"), w, sizeof w);
  cli_fmt_bytes((uint64_t)cli_int(j, "bytes_reused"), r, sizeof r);
  printf("  bytes:      %s written, %s reused\n", w, r);
  if (json_is_string(json_object_get(j, "error"))) printf("  error:      %s\n", cli_str(j, "error"));
  json_t *p = json_object_get(j, "progress");
  if (p) {
    char pr[160];
    cli_fmt_progress(p, pr, sizeof pr);
    printf("  progress:   %s\n", pr);
  }
  json_t *res = json_object_get(j, "result");
  if (json_is_object(res)) {
    printf("  result:\n");
    const char *k;
    json_t *v;
    json_object_foreach(res, k, v) {
      if (json_is_object(v) || json_is_array(v)) continue; /* plan, by_kind...: see --json */
      char *s = json_dumps(v, JSON_ENCODE_ANY);
      printf("    %-24s %s\n", k, s ? s : "?");
      free(s);
    }
  }
  size_t i;
  json_t *a;
  json_t *att = json_object_get(j, "attempt_log");
  if (json_array_size(att)) printf("  attempts:\n");
  json_array_foreach(att, i, a) {
    cli_fmt_time(json_object_get(a, "started_at"), buf, sizeof buf);
    printf("    #%lld %s %s%s%s\n", cli_int(a, "attempt"), buf, cli_str(a, "outcome"),
           json_is_string(json_object_get(a, "error")) ? ": " : "", json_is_string(json_object_get(a, "error")) ? cli_str(a, "error") : "");
  }
  json_t *jr = json_object_get(j, "journal");
  if (json_array_size(jr)) printf("  journaled outputs:\n");
  json_array_foreach(jr, i, a) printf("    %-8s %s\n", cli_str(a, "kind"), cli_str(a, "path"));
}

int cmd_job(int argc, char **argv) {
  cli_client c;
  long long id;
  json_t *res;
  int x = call_on_job(argc, argv, "job", JOB_USAGE, "jobs.get", &c, &id, &res);
  if (x) return x;
  if (c.json) cli_print_json(res);
  else cli_print_job(res);
  json_decref(res);
  return CLI_OK;
}

int cmd_cancel(int argc, char **argv) {
  cli_client c;
  long long id;
  json_t *res;
  int x = call_on_job(argc, argv, "cancel", CANCEL_USAGE, "jobs.cancel", &c, &id, &res);
  if (x) return x;
  if (c.json) cli_print_json(res);
  else if (!strcmp(cli_str(res, "state"), "running"))
    printf("job %lld: cancel requested; it stops at its next safe point\n", id);
  else
    printf("job %lld: %s\n", id, cli_str(res, "state"));
  json_decref(res);
  return CLI_OK;
}
