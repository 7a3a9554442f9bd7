/* cmd_tables.c: `brictl tables [TABLE] [--all]`: the tables brid
 * watches, one line each (version, fragments, state, last compaction,
 * bytes written and reused, last error); with TABLE, that table in detail
 * with its effective policy and recent jobs. --all includes tables brid
 * knows from its store but no longer watches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_client.h"

static const cli_opt OPTS[] = {
    {.name = "all", .type = CLI_FLAG, .help = "also the tables brid knows from its store but no longer watches",
     .param = "all"},
    {0},
};

/* brid's word for the table's state (svc_api.c), with the job's id or the
 * number of queued jobs where there is one. */
static void state_of(const json_t *t, char *out, size_t cap) {
  const char *st = cli_str(t, "state");
  if (!strcmp(st, "running")) snprintf(out, cap, "job %lld", cli_int(t, "running_job"));
  else if (!strcmp(st, "queued")) snprintf(out, cap, "%lld queued", cli_int(t, "queued_jobs"));
  else snprintf(out, cap, "%s", st);
}

static void detail(const json_t *t) {
  char buf[64], w[32], r[32], st[32];
  state_of(t, st, sizeof st);
  printf("table:            %s (id %lld)\n", cli_str(t, "root"), cli_int(t, "id"));
  printf("state:            %s%s%s\n", st, json_is_true(json_object_get(t, "paused_by_config")) ? " (paused by the configuration)" : "",
         json_is_true(json_object_get(t, "watching"))  ? ", watched"
         : json_is_true(json_object_get(t, "polled")) ? ", polled (S3)"
                                                       : ", not watched (sweep only)");
  if (!strcmp(cli_str(t, "state"), "pending"))
    printf("                  the latest version has work and no job is queued%s\n",
           json_is_false(json_object_get(t, "auto_compact")) ? " (auto_compact = no: brictl compact TABLE)" : "");
  json_t *v = json_object_get(t, "latest_version");
  if (json_is_integer(v) && json_is_integer(json_object_get(t, "fragments")))
    printf("version:          %lld, %lld fragments%s\n", cli_int(t, "latest_version"), cli_int(t, "fragments"),
           json_is_true(json_object_get(t, "has_work")) ? ", has work" : "");
  else if (json_is_integer(v))
    printf("version:          %lld (not read yet)\n", cli_int(t, "latest_version"));
  cli_fmt_time(json_object_get(t, "last_compaction_at"), buf, sizeof buf);
  printf("last compaction:  %s\n", buf);
  cli_fmt_time(json_object_get(t, "last_cleanup_at"), buf, sizeof buf);
  printf("last cleanup:     %s\n", buf);
  cli_fmt_bytes((uint64_t)cli_int(t, "bytes_written"), w, sizeof w);
  cli_fmt_bytes((uint64_t)cli_int(t, "bytes_reused"), r, sizeof r);
  printf("bytes:            %s written, %s reused\n", w, r);
  if (json_is_string(json_object_get(t, "check_error")))
    printf("%s%s\n", strcmp(cli_str(t, "state"), "unsupported") ? "cannot plan:      " : "unsupported:      ",
           cli_str(t, "check_error"));
  if (json_is_string(json_object_get(t, "last_error"))) {
    cli_fmt_time(json_object_get(t, "last_error_at"), buf, sizeof buf);
    printf("last error:       %s (%s)\n", cli_str(t, "last_error"), buf);
  }
  json_t *p = json_object_get(t, "policy");
  if (p) {
    printf("policy:\n");
    const char *k;
    json_t *x;
    json_object_foreach(p, k, x) {
      char *s = json_dumps(x, JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
      printf("  %-32s %s\n", k, s ? s : "?");
      free(s);
    }
  }
  json_t *jobs = json_object_get(t, "recent_jobs");
  size_t i;
  json_t *j;
  if (json_array_size(jobs)) printf("recent jobs:\n");
  json_array_foreach(jobs, i, j) {
    cli_fmt_time(json_object_get(j, "created_at"), buf, sizeof buf);
    printf("  %-6lld %-11s %-10s %s%s%s\n", cli_int(j, "id"), cli_str(j, "kind"), cli_str(j, "state"), buf,
           json_is_string(json_object_get(j, "error")) ? "  " : "",
           json_is_string(json_object_get(j, "error")) ? cli_str(j, "error") : "");
  }
}

static int cmd_tables(const cli_args *a) {
  cli_client c;
  cli_client_init(&c, a);
  const char *table = a->n_pos ? a->pos[0] : NULL;
  bool all = cli_flag(a, "all");
  char path[4096];
  json_t *res;
  int x = table ? cli_client_call(&c, "tables.get", json_pack("{s:s}", "table", cli_table_path(table, path, sizeof path)), &res)
                : cli_client_call(&c, "tables.list", all ? json_pack("{s:b}", "all", 1) : NULL, &res);
  if (x) return x;
  if (c.json) {
    cli_print_json(res);
  } else if (table) {
    detail(res);
  } else {
    json_t *ts = json_object_get(res, "tables");
    printf("%-4s %-9s %-6s %-11s %-25s %10s %10s  %s\n", "ID", "VERSION", "FRAGS", "STATE", "LAST COMPACTION", "WRITTEN",
           "REUSED", "TABLE");
    size_t i;
    json_t *t;
    json_array_foreach(ts, i, t) {
      char st[32], when[64], w[32], r[32], ver[24], fr[24];
      state_of(t, st, sizeof st);
      cli_fmt_time(json_object_get(t, "last_compaction_at"), when, sizeof when);
      cli_fmt_bytes((uint64_t)cli_int(t, "bytes_written"), w, sizeof w);
      cli_fmt_bytes((uint64_t)cli_int(t, "bytes_reused"), r, sizeof r);
      if (json_is_integer(json_object_get(t, "latest_version"))) snprintf(ver, sizeof ver, "%lld", cli_int(t, "latest_version"));
      else snprintf(ver, sizeof ver, "-");
      if (json_is_integer(json_object_get(t, "fragments"))) snprintf(fr, sizeof fr, "%lld", cli_int(t, "fragments"));
      else snprintf(fr, sizeof fr, "-");
      printf("%-4lld %-9s %-6s %-11s %-25s %10s %10s  %s\n", cli_int(t, "id"), ver, fr, st, when, w, r, cli_str(t, "root"));
      if (!strcmp(cli_str(t, "state"), "unsupported"))
        printf("     unsupported: %s\n", cli_str(t, "check_error"));
      if (json_is_string(json_object_get(t, "last_error")))
        printf("     last error: %s\n", cli_str(t, "last_error"));
    }
    if (!json_array_size(ts)) printf("(no tables: is a root configured, and does it hold directories with _versions/?)\n");
    cli_print_roots(json_object_get(res, "roots"));
  }
  json_decref(res);
  return CLI_OK;
}

const cli_cmd CMD_TABLES = {
    .name = "tables",
    .args = "[TABLE]",
    .summary = "the tables brid watches, or one TABLE with its policy and recent jobs",
    .about = "Lists the tables brid watches, one line each: version, fragments, state, last "
             "compaction, bytes written and reused, last error. With TABLE: that table in detail, "
             "with its effective policy and its recent jobs.",
    .opts = OPTS,
    .flags = CLI_CMD_DAEMON | CLI_CMD_JSON,
    .run = cmd_tables,
};
