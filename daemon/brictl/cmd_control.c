/* cmd_control.c: brictl's daemon control commands:
 *   brictl pause [TABLE] [--cancel-running]   no new job starts (every table
 *                                             without TABLE); --cancel-running
 *                                             also stops running jobs, which
 *                                             go back to the queue
 *   brictl resume [TABLE]
 *   brictl reload                             brid re-reads its configuration
 *   brictl metrics                            Prometheus text on stdout (--json:
 *                                             the same families as JSON) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_client.h"

static const cli_opt PAUSE_OPTS[] = {
    {.name = "cancel-running", .type = CLI_FLAG,
     .help = "also stop the running jobs at their next safe point; they go back to the queue",
     .param = "cancel_running"},
    {0},
};

static int pause_resume(const cli_args *a, bool pause) {
  cli_client c;
  cli_client_init(&c, a);
  json_t *params = cli_params(a);
  char path[4096];
  if (a->n_pos) json_object_set_new(params, "table", json_string(cli_table_path(a->pos[0], path, sizeof path)));
  json_t *res;
  int x = cli_client_call(&c, a->cmd->name, params, &res);
  if (x) return x;
  if (c.json) {
    cli_print_json(res);
  } else {
    json_t *done = json_object_get(res, pause ? "paused" : "resumed");
    printf("%s %zu table(s)\n", pause ? "paused" : "resumed", json_array_size(done));
    size_t i;
    json_t *v;
    json_array_foreach(done, i, v) printf("  %s\n", json_string_value(v));
    json_array_foreach(json_object_get(res, "requeued_jobs"), i, v)
      printf("job %lld: stopping; it goes back to the queue\n", (long long)json_integer_value(v));
    json_array_foreach(json_object_get(res, "kept_paused"), i, v)
      printf("kept paused by the configuration: %s\n", json_string_value(v));
  }
  json_decref(res);
  return CLI_OK;
}

static int cmd_pause(const cli_args *a) { return pause_resume(a, true); }
static int cmd_resume(const cli_args *a) { return pause_resume(a, false); }

static int cmd_reload(const cli_args *a) {
  cli_client c;
  json_t *res;
  cli_client_init(&c, a);
  int x = cli_client_call(&c, "reload", NULL, &res);
  if (x) return x;
  if (c.json) {
    cli_print_json(res);
  } else {
    json_t *ch = json_object_get(res, "changes");
    if (!json_object_size(ch)) {
      printf("configuration reloaded (no change)\n");
    } else {
      char *s = json_dumps(ch, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
      printf("configuration reloaded; changes:\n%s\n", s ? s : "");
      free(s);
    }
  }
  json_decref(res);
  return CLI_OK;
}

static int cmd_metrics(const cli_args *a) {
  cli_client c;
  json_t *res;
  cli_client_init(&c, a);
  int x = cli_client_call(&c, "metrics", c.json ? json_pack("{s:s}", "format", "json") : NULL, &res);
  if (x) return x;
  if (c.json) cli_print_json(res);
  else fputs(cli_str(res, "text"), stdout);
  json_decref(res);
  return CLI_OK;
}

const cli_cmd CMD_PAUSE = {
    .name = "pause",
    .args = "[TABLE]",
    .summary = "brid starts no new job for TABLE (or for every table)",
    .about = "brid starts no new job for TABLE, or for every table without TABLE; queued jobs wait "
             "until `brictl resume`. Running jobs go on unless --cancel-running.",
    .opts = PAUSE_OPTS,
    .flags = CLI_CMD_DAEMON | CLI_CMD_JSON,
    .run = cmd_pause,
};

const cli_cmd CMD_RESUME = {
    .name = "resume",
    .args = "[TABLE]",
    .summary = "undo pause for TABLE (or for every table)",
    .about = "Undoes `brictl pause` for TABLE, or for every table without TABLE. A table paused by "
             "the configuration (paused = yes) stays paused.",
    .flags = CLI_CMD_DAEMON | CLI_CMD_JSON,
    .run = cmd_resume,
};

const cli_cmd CMD_RELOAD = {
    .name = "reload",
    .args = "",
    .summary = "brid re-reads its configuration file",
    .about = "brid re-reads its configuration file (as on SIGHUP) and prints what changed. A file "
             "with an error is refused and brid keeps its configuration.",
    .flags = CLI_CMD_DAEMON | CLI_CMD_JSON,
    .run = cmd_reload,
};

const cli_cmd CMD_METRICS = {
    .name = "metrics",
    .args = "",
    .summary = "brid's metrics in the Prometheus text format",
    .about = "Prints brid's metrics in the Prometheus text exposition format (docs/metrics.md lists "
             "them).",
    .flags = CLI_CMD_DAEMON | CLI_CMD_JSON,
    .run = cmd_metrics,
};
