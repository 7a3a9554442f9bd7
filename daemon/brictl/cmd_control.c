/* cmd_control.c: brictl's daemon control commands:
 *   brictl pause [TABLE] [--cancel-running]   no new job starts (every table
 *                                             without TABLE); --cancel-running
 *                                             also stops running jobs, which
 *                                             go back to the queue
 *   brictl resume [TABLE]
 *   brictl reload                             brid re-reads its configuration
 *   brictl metrics                            Prometheus text on stdout */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_client.h"

static const char PAUSE_USAGE[] = "brictl pause [TABLE] [--cancel-running] [--json] [--socket PATH]";
static const char RESUME_USAGE[] = "brictl resume [TABLE] [--json] [--socket PATH]";
static const char RELOAD_USAGE[] = "brictl reload [--json] [--socket PATH]";
static const char METRICS_USAGE[] = "brictl metrics [--json] [--socket PATH]";

static int pause_resume(int argc, char **argv, bool pause) {
  const char *cmd = pause ? "pause" : "resume", *usage = pause ? PAUSE_USAGE : RESUME_USAGE;
  cli_client c;
  cli_client_init(&c);
  const char *table = NULL;
  bool cancel = false;
  for (int i = 1; i < argc; i++) {
    int r = cli_client_opt(&c, cmd, usage, argc, argv, &i);
    if (r < 0) return CLI_USAGE;
    if (r) continue;
    if (pause && !strcmp(argv[i], "--cancel-running")) cancel = true;
    else if (argv[i][0] == '-') return cli_usage_error(cmd, usage, "unknown option %s", argv[i]);
    else if (table) return cli_usage_error(cmd, usage, "more than one TABLE given");
    else table = argv[i];
  }
  json_t *params = json_object();
  char path[4096];
  if (table) json_object_set_new(params, "table", json_string(cli_table_path(table, path, sizeof path)));
  if (cancel) json_object_set_new(params, "cancel_running", json_true());
  json_t *res;
  int x = cli_client_call(&c, cmd, params, &res);
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

int cmd_pause(int argc, char **argv) { return pause_resume(argc, argv, true); }
int cmd_resume(int argc, char **argv) { return pause_resume(argc, argv, false); }

static int simple(int argc, char **argv, const char *cmd, const char *usage, const char *method, json_t **res,
                  cli_client *c) {
  cli_client_init(c);
  for (int i = 1; i < argc; i++) {
    int r = cli_client_opt(c, cmd, usage, argc, argv, &i);
    if (r < 0) return CLI_USAGE;
    if (r == 0) return cli_usage_error(cmd, usage, "unknown argument %s", argv[i]);
  }
  return cli_client_call(c, method, NULL, res);
}

int cmd_reload(int argc, char **argv) {
  cli_client c;
  json_t *res;
  int x = simple(argc, argv, "reload", RELOAD_USAGE, "reload", &res, &c);
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

int cmd_metrics(int argc, char **argv) {
  cli_client c;
  json_t *res;
  int x = simple(argc, argv, "metrics", METRICS_USAGE, "metrics", &res, &c);
  if (x) return x;
  if (c.json) cli_print_json(res);
  else fputs(cli_str(res, "text"), stdout);
  json_decref(res);
  return CLI_OK;
}
