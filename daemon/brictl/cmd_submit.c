/* cmd_submit.c: where brictl's table jobs (compact, cleanup, materialize,
 * verify) run, and their daemon path (cli.h says which path when).
 *
 * Through brid: the options of the command that brid takes (cli_opt.param)
 * become the method's params, and the job is queued in brid (ahead of
 * automatic ones); brictl follows it until it ends (--wait, or when brid
 * was chosen because its socket answered), showing its progress on
 * stderr, and exits 4 if it failed or was cancelled, 5 if verify found
 * problems. Offline, brictl runs the command's own function
 * (cmd_compact.c, ...) under the table lock when the job writes.
 *
 * The choice is made once, before anything runs: a socket that answers
 * means brid runs, and an answer of "not allowed" is an error rather than
 * a reason to work offline behind brid's back (--offline is the way to do
 * that, and the table lock keeps the two apart).
 *
 * Waiting polls jobs.get twice a second on one connection (a job's progress
 * is a few numbers; polling keeps the protocol request/response only), and
 * rides out a daemon restart: the job is in the store, so brictl reconnects
 * for up to a minute and goes on following it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd_client.h"
#include "report.h"
#include "bri/ops.h"

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static bool terminal(const char *state) {
  return !strcmp(state, "succeeded") || !strcmp(state, "failed") || !strcmp(state, "cancelled");
}

/* Follows job id until it ends; *job gets its final state. */
static int wait_job(const cli_client *c, rpc_client **rc, long long id, bool quiet, json_t **job) {
  bool tty = isatty(STDERR_FILENO);
  char last[256] = "";
  int lost_ms = 0;
  *job = NULL;
  for (;;) {
    json_t *j = NULL;
    int x = *rc ? cli_client_call_on(*rc, "jobs.get", json_pack("{s:I}", "id", (json_int_t)id), &j) : CLI_UNREACHABLE;
    if (x == CLI_UNREACHABLE) {
      /* brid restarting? the job survives in its store */
      rpc_client_close(*rc);
      *rc = NULL;
      if (lost_ms >= 60000) return x;
      sleep_ms(1000);
      lost_ms += 1000;
      bri_error err;
      if (rpc_client_connect(c->socket, c->timeout_ms, rc, &err) != 0) *rc = NULL;
      continue;
    }
    if (x) return x;
    lost_ms = 0;
    const char *st = cli_str(j, "state");
    if (terminal(st)) {
      if (tty && !quiet && last[0]) fputs("\r\033[K", stderr);
      *job = j;
      return 0;
    }
    char line[256], pr[200];
    if (!strcmp(st, "running")) {
      cli_fmt_progress(json_object_get(j, "progress"), pr, sizeof pr);
      snprintf(line, sizeof line, "job %lld: %s", id, pr);
    } else if (cli_int(j, "attempts")) {
      char when[64];
      cli_fmt_time(json_object_get(j, "not_before"), when, sizeof when);
      snprintf(line, sizeof line, "job %lld: %s for a retry after attempt %lld (%s); not before %s", id, st,
               cli_int(j, "attempts"), cli_str(j, "error"), when);
    } else {
      snprintf(line, sizeof line, "job %lld: %s", id, st);
    }
    if (!quiet && strcmp(line, last) != 0) {
      if (tty) fprintf(stderr, "\r\033[K%s", line);
      else if (strncmp(line, last, 24) != 0 || !strcmp(st, "queued")) fprintf(stderr, "%s\n", line);
      snprintf(last, sizeof last, "%s", line);
    }
    json_decref(j);
    sleep_ms(500);
  }
}

/* The job's end: its state, its error, its report (report.h). */
static void summary(const json_t *j) {
  const json_t *r = json_object_get(j, "result");
  printf("job %lld (%s %s): %s\n", cli_int(j, "id"), cli_str(j, "kind"), cli_str(j, "table"), cli_str(j, "state"));
  if (json_is_string(json_object_get(j, "error"))) printf("  error: %s\n", cli_str(j, "error"));
  if (json_is_object(r)) cli_print_report(cli_str(j, "kind"), r, "brid", "  ");
}

static int submit(const cli_args *a, bool wait) {
  const char *cmd = a->cmd->name;
  cli_client c;
  cli_client_init(&c, a);
  bool quiet = cli_flag(a, "quiet");
  json_t *p = cli_params(a);
  char path[4096];
  json_object_set_new(p, "table", json_string(cli_table_path(a->pos[0], path, sizeof path)));
  rpc_client *rc = NULL;
  int x = cli_client_open(&c, &rc);
  if (x) {
    json_decref(p);
    return x;
  }
  json_t *sub;
  x = cli_client_call_on(rc, cmd, p, &sub);
  if (x) {
    rpc_client_close(rc);
    return x;
  }
  long long id = cli_int(sub, "job");
  if (!c.json && json_is_string(json_object_get(sub, "note"))) fprintf(stderr, "brictl: note: %s\n", cli_str(sub, "note"));
  size_t k;
  json_t *other;
  if (!c.json && !quiet)
    json_array_foreach(json_object_get(sub, "also_queued"), k, other) {
      char *ps = json_dumps(json_object_get(other, "params"), JSON_COMPACT | JSON_ENCODE_ANY);
      fprintf(stderr, "brictl: note: %s job %lld with other options (%s) is queued for this table too; "
                      "only identical requests are merged\n", cmd, cli_int(other, "job"), ps ? ps : "?");
      free(ps);
    }
  if (!wait) {
    if (c.json) cli_print_json(sub);
    else printf("%s job %lld for %s (%s)\n", json_is_true(json_object_get(sub, "duplicate")) ? "already queued as" : "queued",
                id, cli_str(sub, "table"), cli_str(sub, "state"));
    json_decref(sub);
    rpc_client_close(rc);
    return CLI_OK;
  }
  if (!quiet && !c.json)
    fprintf(stderr, "%s job %lld for %s\n", json_is_true(json_object_get(sub, "duplicate")) ? "following the queued" : "queued",
            id, cli_str(sub, "table"));
  json_decref(sub);
  json_t *job = NULL;
  x = wait_job(&c, &rc, id, quiet || c.json, &job);
  rpc_client_close(rc);
  if (x) return x;
  if (c.json) cli_print_json(job);
  else summary(job);
  /* a verify that found problems ends failed in brid; its exit code is
   * verify's own, as offline */
  x = cli_int(json_object_get(job, "result"), "problems_total") ? CLI_PROBLEMS
      : strcmp(cli_str(job, "state"), "succeeded")              ? CLI_JOB_FAILED
                                                                : CLI_OK;
  json_decref(job);
  return x;
}

/* brictl itself, under the table lock when the job writes. */
static int run_offline(const cli_args *a, bool writes, int (*offline)(const cli_args *a)) {
  if (!writes) return offline(a);
  char who[160];
  snprintf(who, sizeof who, "brictl pid %d, uid %u (%s, offline)", (int)getpid(), (unsigned)getuid(), a->cmd->name);
  bri_table_lock *lock = NULL;
  bri_error err;
  int rc = bri_table_lock_take(a->pos[0], who, &lock, &err);
  if (rc == BRI_ETAKEN) {
    fprintf(stderr, "brictl: %s; try again when it is done\n", err.msg);
    return CLI_ERROR;
  }
  if (rc && rc != BRI_EUNSUPPORTED) return cli_fail(&err); /* a store without locks: nothing to take */
  int x = offline(a);
  bri_table_lock_release(lock);
  return x;
}

/* Whether an offline-only option was given: brid cannot do what it asks. */
static const char *offline_only_given(const cli_args *a) {
  for (size_t i = 0; a->cmd->opts && a->cmd->opts[i].name; i++)
    if (a->v[i].given && (a->cmd->opts[i].flags & CLI_OFFLINE_ONLY) && strcmp(a->cmd->opts[i].name, "offline"))
      return a->cmd->opts[i].name;
  return NULL;
}

int cli_table_job(const cli_args *a, bool writes, int (*offline)(const cli_args *a)) {
  if (cli_flag(a, "offline")) return run_offline(a, writes, offline);
  if (cli_wants_daemon(a)) return submit(a, cli_flag(a, "wait"));
  /* no choice made: brid when its socket answers */
  cli_client c;
  cli_client_init(&c, a);
  rpc_client *rc = NULL;
  bri_error err;
  int r = rpc_client_connect(c.socket, c.timeout_ms, &rc, &err);
  rpc_client_close(rc);
  if (r == BRI_ENOTFOUND) return run_offline(a, writes, offline);
  if (r) {
    fprintf(stderr, "brictl: %s\nbrictl: brid runs but this user may not ask it; --offline works without it "
                    "(the table lock keeps the two apart)\n", err.msg);
    return CLI_UNREACHABLE;
  }
  const char *only = offline_only_given(a);
  if (only)
    return cli_usage(a, "--%s works only offline, and brid answers on %s: add --offline", only, c.socket);
  return submit(a, true);
}
