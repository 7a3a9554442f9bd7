/* cmd_jobs.c: the job commands of brictl:
 *   brictl jobs [--table T] [--state S[,S]] [--kind K] [--limit N]
 *   brictl job ID          one job: attempts, journal, progress, result
 *   brictl cancel ID       cancel a queued job, or stop a running one at
 *                          its next safe point */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_client.h"
#include "report.h"
#include "rpc/rpc_kinds.h"

static const cli_opt JOBS_OPTS[] = {
    {.name = "table", .type = CLI_STRING, .value = "TABLE", .help = "only the jobs of this table", .param = "table"},
    {.name = "state", .type = CLI_STRING, .value = "STATE[,STATE]",
     .help = "only jobs in these states: queued, running, succeeded, failed, cancelled"},
    {.name = "kind", .type = CLI_CHOICE, .choices = RPC_KIND_CHOICES, .help = "only jobs of this kind",
     .param = "kind"},
    {.name = "limit", .type = CLI_UINT, .value = "N", .min = 1, .max = 10000, .help = "at most N jobs, newest first",
     .def_note = "100", .param = "limit"},
    {0},
};

static void job_line(const json_t *j) {
  char when[64], dur[32], w[32], r[32];
  cli_fmt_time(json_object_get(j, "created_at"), when, sizeof when);
  long long st = cli_int(j, "started_at"), fin = cli_int(j, "finished_at");
  if (st && fin) cli_fmt_duration(fin - st, dur, sizeof dur);
  else snprintf(dur, sizeof dur, "-");
  cli_fmt_bytes((uint64_t)cli_int(j, "bytes_written"), w, sizeof w);
  cli_fmt_bytes((uint64_t)cli_int(j, "bytes_reused"), r, sizeof r);
  json_t *in = json_object_get(j, "instance");
  printf("%-6lld %-11s %-10s %-25s %8s %10s %10s  %-20s %s\n", cli_int(j, "id"), cli_str(j, "kind"), cli_str(j, "state"),
         when, dur, w, r, json_is_string(in) ? json_string_value(in) : "-", cli_str(j, "table"));
  if (json_is_string(json_object_get(j, "error"))) printf("       error: %s\n", cli_str(j, "error"));
  json_t *p = json_object_get(j, "progress");
  if (p) {
    char pr[160];
    cli_fmt_progress(p, pr, sizeof pr);
    printf("       %s\n", pr);
  }
}

static int cmd_jobs(const cli_args *a) {
  cli_client c;
  cli_client_init(&c, a);
  json_t *params = cli_params(a);
  if (cli_given(a, "state")) { /* brid takes a list */
    json_t *states = json_array();
    char *s = strdup(cli_text(a, "state")), *save = NULL;
    for (char *t = strtok_r(s, ",", &save); t; t = strtok_r(NULL, ",", &save)) json_array_append_new(states, json_string(t));
    free(s);
    json_object_set_new(params, "state", states);
  }
  json_t *res;
  int x = cli_client_call(&c, "jobs.list", params, &res);
  if (x) return x;
  if (c.json) {
    cli_print_json(res);
  } else {
    printf("%-6s %-11s %-10s %-25s %8s %10s %10s  %-20s %s\n", "ID", "KIND", "STATE", "CREATED", "TOOK", "WRITTEN",
           "REUSED", "INSTANCE", "TABLE");
    size_t i;
    json_t *j;
    json_array_foreach(json_object_get(res, "jobs"), i, j) job_line(j);
  }
  json_decref(res);
  return CLI_OK;
}

/* brictl job|cancel ID: calls method with the job's ID. */
static int call_on_job(const cli_args *a, const char *method, cli_client *c, long long *id, json_t **res) {
  unsigned long long n;
  cli_client_init(c, a);
  if (!cli_parse_u64(a->pos[0], &n) || n == 0)
    return cli_usage(a, "ID needs a job number (1 or more), got \"%s\"", a->pos[0]);
  *id = (long long)n;
  return cli_client_call(c, method, json_pack("{s:I}", "id", (json_int_t)*id), res);
}

/* Prints one job in detail (shared with cmd_submit.c's --wait). */
void cli_print_job(const json_t *j) {
  char buf[64], w[32], r[32];
  printf("job %lld: %s %s\n", cli_int(j, "id"), cli_str(j, "kind"), cli_str(j, "table"));
  printf("  state:      %s%s\n", cli_str(j, "state"), json_is_true(json_object_get(j, "cancel_requested")) ? " (cancel requested)" : "");
  printf("  attempts:   %lld of %lld\n", cli_int(j, "attempts"), cli_int(j, "max_attempts"));
  if (json_is_string(json_object_get(j, "instance"))) printf("  instance:   %s\n", cli_str(j, "instance"));
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
    cli_print_report(cli_str(j, "kind"), res, "brid", "    ");
  }
  size_t i;
  json_t *a;
  json_t *att = json_object_get(j, "attempt_log");
  if (json_array_size(att)) printf("  attempts:\n");
  json_array_foreach(att, i, a) {
    cli_fmt_time(json_object_get(a, "started_at"), buf, sizeof buf);
    json_t *in = json_object_get(a, "instance");
    printf("    #%lld %s on %s: %s%s%s\n", cli_int(a, "attempt"), buf, json_is_string(in) ? json_string_value(in) : "?",
           cli_str(a, "outcome"), json_is_string(json_object_get(a, "error")) ? ": " : "",
           json_is_string(json_object_get(a, "error")) ? cli_str(a, "error") : "");
  }
  /* a running copy journals one entry per file it writes: counted by
   * kind here, every path in --json */
  json_t *jr = json_object_get(j, "journal"), *kinds = json_object();
  json_array_foreach(jr, i, a) {
    json_t *n = json_object_get(kinds, cli_str(a, "kind"));
    json_object_set_new(kinds, cli_str(a, "kind"), json_integer(n ? json_integer_value(n) + 1 : 1));
  }
  if (json_array_size(jr)) {
    printf("  journaled:  %zu output(s) (", json_array_size(jr));
    const char *k;
    json_t *n;
    bool first = true;
    json_object_foreach(kinds, k, n) {
      printf("%s%lld %s", first ? "" : ", ", (long long)json_integer_value(n), k);
      first = false;
    }
    printf("); brictl job %lld --json lists them\n", cli_int(j, "id"));
  }
  json_decref(kinds);
}

static int cmd_job(const cli_args *a) {
  cli_client c;
  long long id;
  json_t *res;
  int x = call_on_job(a, "jobs.get", &c, &id, &res);
  if (x) return x;
  if (c.json) cli_print_json(res);
  else cli_print_job(res);
  json_decref(res);
  return CLI_OK;
}

static int cmd_cancel(const cli_args *a) {
  cli_client c;
  long long id;
  json_t *res;
  int x = call_on_job(a, "jobs.cancel", &c, &id, &res);
  if (x) return x;
  if (c.json) cli_print_json(res);
  else if (!strcmp(cli_str(res, "state"), "running"))
    printf("job %lld: cancel requested; it stops at its next safe point\n", id);
  else
    printf("job %lld: %s\n", id, cli_str(res, "state"));
  json_decref(res);
  return CLI_OK;
}

const cli_cmd CMD_JOBS = {
    .name = "jobs",
    .args = "",
    .summary = "brid's jobs, newest first (--table, --state, --kind, --limit)",
    .about = "Lists brid's jobs, newest first: id, kind, state, when it was created, how long it "
             "took, bytes written and reused, the table, and the error or progress.",
    .opts = JOBS_OPTS,
    .flags = CLI_CMD_DAEMON | CLI_CMD_JSON,
    .run = cmd_jobs,
};

const cli_cmd CMD_JOB = {
    .name = "job",
    .args = "ID",
    .summary = "one job of brid with its attempts, outputs and progress",
    .about = "Shows job ID in detail: state, attempts, times, bytes, progress, result, the log of "
             "its attempts and the outputs it journaled.",
    .flags = CLI_CMD_DAEMON | CLI_CMD_JSON,
    .run = cmd_job,
};

const cli_cmd CMD_CANCEL = {
    .name = "cancel",
    .args = "ID",
    .summary = "cancel job ID in brid (a running one stops at its next safe point)",
    .about = "Cancels job ID: a queued job is dropped; a running one stops at its next safe point "
             "and its outputs are rolled back. A finished job cannot be cancelled (an error).",
    .flags = CLI_CMD_DAEMON | CLI_CMD_JSON,
    .run = cmd_cancel,
};
