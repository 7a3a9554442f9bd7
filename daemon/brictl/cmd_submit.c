/* cmd_submit.c: the daemon variants of brictl's table jobs:
 *   brictl compact TABLE (--wait | --socket PATH | --daemon) [--strategy S]
 *                  [--dry-run] [--target-rows N]
 *   brictl cleanup TABLE (...) [--older-than D] [--retain N] [--grace D] [--dry-run]
 *   brictl materialize TABLE (...) [--dry-run] [--no-links]
 *   brictl verify TABLE (...) [--all-versions] [--skip-blobs]
 * common: [--json] [--timeout SECONDS] [--quiet]
 * The job is queued in brid (ahead of automatic ones); with --wait brictl
 * follows it until it ends, showing its progress on stderr, and exits 4 if
 * it failed or was cancelled. Without --socket/--wait/--daemon these
 * commands run offline in brictl itself (cmd_compact.c, cmd_cleanup.c...);
 * brictl.c sends them here when cli_submit_wanted says so.
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
#include "util/duration.h"

static const char *const KINDS[] = {"compact", "cleanup", "materialize", "verify"};

static const char *usage_of(const char *cmd) {
  if (!strcmp(cmd, "compact"))
    return "brictl compact TABLE (--wait | --socket PATH | --daemon) [--strategy bri|link|copy] [--dry-run] "
           "[--target-rows N] [--json] [--quiet] [--timeout SECONDS]";
  if (!strcmp(cmd, "cleanup"))
    return "brictl cleanup TABLE (--wait | --socket PATH | --daemon) [--older-than DURATION] [--retain N] "
           "[--grace DURATION] [--dry-run] [--json] [--quiet] [--timeout SECONDS]";
  if (!strcmp(cmd, "materialize"))
    return "brictl materialize TABLE (--wait | --socket PATH | --daemon) [--dry-run] [--no-links] [--json] "
           "[--quiet] [--timeout SECONDS]";
  return "brictl verify TABLE (--wait | --socket PATH | --daemon) [--all-versions] [--skip-blobs] [--json] "
         "[--quiet] [--timeout SECONDS]";
}

bool cli_submit_wanted(int argc, char **argv) {
  bool kind = false;
  for (size_t k = 0; k < sizeof KINDS / sizeof KINDS[0]; k++) kind |= argc > 0 && !strcmp(argv[0], KINDS[k]);
  if (!kind) return false;
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--wait") || !strcmp(argv[i], "--daemon") || !strcmp(argv[i], "--socket") ||
        !strncmp(argv[i], "--socket=", 9))
      return true;
  return false;
}

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
    int x = *rc ? cli_client_call_on(*rc, "jobs.get", json_pack("{s:I}", "id", (json_int_t)id), &j) : CLI_UNREACHABLE_EXIT;
    if (x == CLI_UNREACHABLE_EXIT) {
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

static void summary(const json_t *j) {
  const json_t *r = json_object_get(j, "result");
  const char *kind = cli_str(j, "kind"), *st = cli_str(j, "state");
  printf("job %lld (%s %s): %s\n", cli_int(j, "id"), kind, cli_str(j, "table"), st);
  if (json_is_string(json_object_get(j, "error"))) printf("  error: %s\n", cli_str(j, "error"));
  if (!json_is_object(r)) return;
  char w[32], u[32];
  if (!strcmp(kind, "compact")) {
    cli_fmt_bytes((uint64_t)(cli_int(r, "data_bytes_written") + cli_int(r, "payload_bytes_copied")), w, sizeof w);
    cli_fmt_bytes((uint64_t)cli_int(r, "payload_bytes_reused"), u, sizeof u);
    if (cli_int(r, "version"))
      printf("  version %lld -> %lld: %lld -> %lld fragments, %lld rows; %s written, %s of blob payload reused\n",
             cli_int(r, "read_version"), cli_int(r, "version"), cli_int(r, "fragments_before"),
             cli_int(r, "fragments_after"), cli_int(r, "rows"), w, u);
    else
      printf("  %s at version %lld (%lld fragments, %lld bin(s) planned)\n",
             json_is_true(json_object_get(r, "dry_run")) ? "dry run" : "nothing to compact", cli_int(r, "read_version"),
             cli_int(r, "fragments_before"), cli_int(r, "bins"));
  } else if (!strcmp(kind, "cleanup")) {
    cli_fmt_bytes((uint64_t)cli_int(r, "bytes"), w, sizeof w);
    printf("  %s %lld files (%s); %lld versions retained\n", json_is_true(json_object_get(r, "dry_run")) ? "would delete" : "deleted",
           cli_int(r, "files"), w, cli_int(r, "versions_retained"));
  } else if (!strcmp(kind, "verify")) {
    printf("  %lld version(s), %lld data files, %lld blobs checked: %lld problem(s)\n", cli_int(r, "versions_checked"),
           cli_int(r, "data_files"), cli_int(r, "blobs"), cli_int(r, "problems_total"));
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(r, "problems"), i, p) {
      if (i >= 20) break;
      printf("    %s: %s\n", cli_str(p, "file"), cli_str(p, "what"));
    }
  } else {
    printf("  %lld data file(s) replaced, %lld links, %lld copies\n", cli_int(r, "data_files"), cli_int(r, "links"),
           cli_int(r, "copies"));
  }
}

int cmd_submit(int argc, char **argv) {
  const char *cmd = argv[0], *usage = usage_of(cmd);
  cli_client c;
  cli_client_init(&c);
  bool wait = false, quiet = false;
  const char *table = NULL;
  json_t *p = json_object();
  bri_error err;
  for (int i = 1; i < argc; i++) {
    int r = cli_client_opt(&c, cmd, usage, argc, argv, &i);
    if (r < 0) goto usage;
    if (r) continue;
    const char *a = argv[i];
    bool compact = !strcmp(cmd, "compact"), cleanup = !strcmp(cmd, "cleanup");
    bool mat = !strcmp(cmd, "materialize"), ver = !strcmp(cmd, "verify");
    if (!strcmp(a, "--wait")) wait = true;
    else if (!strcmp(a, "--daemon")) continue;
    else if (!strcmp(a, "--quiet")) quiet = true;
    else if (!strcmp(a, "--dry-run") && !ver) json_object_set_new(p, "dry_run", json_true());
    else if (compact && !strcmp(a, "--strategy")) {
      if (++i >= argc) {
        cli_usage_error(cmd, usage, "--strategy takes bri, link or copy");
        goto usage;
      }
      json_object_set_new(p, "strategy", json_string(argv[i]));
    } else if (compact && !strcmp(a, "--target-rows")) {
      unsigned long long n;
      if (++i >= argc || !cli_parse_u64(argv[i], &n) || n == 0) {
        cli_usage_error(cmd, usage, "--target-rows needs a positive number");
        goto usage;
      }
      json_object_set_new(p, "target_rows_per_fragment", json_integer((json_int_t)n));
    } else if (cleanup && (!strcmp(a, "--older-than") || !strcmp(a, "--grace"))) {
      int64_t s;
      if (++i >= argc || bri_duration_parse(argv[i], a, &s, &err)) {
        cli_usage_error(cmd, usage, "%s needs a duration (e.g. 7d, 12h)", a);
        goto usage;
      }
      json_object_set_new(p, !strcmp(a, "--grace") ? "grace" : "older_than", json_integer(s));
    } else if (cleanup && !strcmp(a, "--retain")) {
      unsigned long long n;
      if (++i >= argc || !cli_parse_u64(argv[i], &n)) {
        cli_usage_error(cmd, usage, "--retain needs a number of versions");
        goto usage;
      }
      json_object_set_new(p, "retain_versions", json_integer((json_int_t)n));
    } else if (mat && !strcmp(a, "--no-links")) {
      json_object_set_new(p, "no_links", json_true());
    } else if (ver && !strcmp(a, "--all-versions")) {
      json_object_set_new(p, "all_versions", json_true());
    } else if (ver && !strcmp(a, "--skip-blobs")) {
      json_object_set_new(p, "skip_blobs", json_true());
    } else if (a[0] == '-') {
      cli_usage_error(cmd, usage, "unknown option %s (with the daemon)", a);
      goto usage;
    } else if (table) {
      cli_usage_error(cmd, usage, "more than one TABLE given");
      goto usage;
    } else {
      table = a;
    }
  }
  if (!table) {
    cli_usage_error(cmd, usage, "TABLE is required");
    goto usage;
  }
  char path[4096];
  json_object_set_new(p, "table", json_string(cli_table_path(table, path, sizeof path)));
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
  x = !strcmp(cli_str(job, "state"), "succeeded") ? CLI_OK : CLI_JOB_FAILED_EXIT;
  json_decref(job);
  return x;
usage:
  json_decref(p);
  return CLI_USAGE;
}
