/* cmd_cleanup.c: `brictl cleanup TABLE [--older-than DURATION] [--retain N]
 * [--grace DURATION] [--max-deletes-per-sec R] [--dry-run]`: runs version
 * cleanup in-process (lib/ops/cleanup) and reports counts and bytes per kind
 * of file. With --dry-run it lists what would go and deletes nothing. With
 * --wait, --daemon or --socket, brid runs it (cmd_submit.c). The defaults
 * are lib/ops's (bri_cleanup_policy_default). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bri/ops.h"
#include "bri/util.h"
#include "cli.h"
#include "report.h"

static const cli_opt OPTS[] = {
    {.name = "older-than", .type = CLI_DURATION, .value = "DURATION", .def = "7d", .param = "older_than",
     .def_note = "through brid, the table's policy",
     .help = "versions older than this go (the latest version, tagged versions and branch roots always stay)"},
    {.name = "retain", .type = CLI_UINT, .value = "N", .def = "0", .param = "retain_versions",
     .help = "keep the newest N versions whatever their age (0: no such rule)"},
    {.name = "grace", .type = CLI_DURATION, .value = "DURATION", .def = "7d", .param = "grace",
     .def_note = "through brid, the table's policy",
     .help = "an unreferenced file younger than this stays (a writer may be about to commit it)"},
    {.name = "max-deletes-per-sec", .type = CLI_NUMBER, .value = "R", .min = 0, .def = "0",
     .flags = CLI_OFFLINE_ONLY, .help = "pace the deletions (0: no limit)"},
    {.name = "dry-run", .type = CLI_FLAG, .param = "dry_run", .help = "list what would be deleted and delete nothing"},
    CLI_SUBMIT_OPTS,
    {0},
};

typedef struct listing {
  json_t *files;
  bool print;
} listing;

static void on_file(void *user, int kind, const char *path, uint64_t bytes) {
  listing *l = user;
  if (l->files)
    json_array_append_new(l->files, json_pack("{s:s, s:s, s:I}", "kind", bri_cleanup_kind_name(kind),
                                              "path", path, "bytes", (json_int_t)bytes));
  if (l->print) printf("%-12s %12llu  %s\n", bri_cleanup_kind_name(kind), (unsigned long long)bytes, path);
}

static int cleanup_offline(const cli_args *a) {
  bri_cleanup_policy p;
  bri_cleanup_policy_default(&p);
  const char *root = a->pos[0];
  bool as_json = cli_flag(a, "json");
  bri_error err;
  p.older_than_sec = cli_seconds(a, "older-than");
  p.grace_sec = cli_seconds(a, "grace");
  p.retain_versions = cli_uint(a, "retain");
  p.max_deletes_per_sec = cli_number(a, "max-deletes-per-sec");
  p.dry_run = cli_flag(a, "dry-run");
  listing l = {as_json ? json_array() : NULL, !as_json && p.dry_run};
  bri_cleanup_stats st;
  const bri_hooks hooks = {.deleted = on_file, .user = &l};
  int rc = bri_cleanup_run(root, &p, &hooks, &st, &err);
  if (rc) {
    json_decref(l.files);
    return cli_fail(&err);
  }
  json_t *rep = bri_cleanup_report_json(root, &p, &st);
  if (as_json) {
    json_object_set_new(rep, "deleted", l.files); /* the list: brictl's alone (brid does not keep it) */
    cli_print_json(rep);
  } else {
    cli_print_report("cleanup", rep, "brictl", "");
  }
  json_decref(rep);
  return CLI_OK;
}

static int cmd_cleanup(const cli_args *a) { return cli_table_job(a, !cli_flag(a, "dry-run"), cleanup_offline); }

const cli_cmd CMD_CLEANUP = {
    .name = "cleanup",
    .args = "TABLE",
    .summary = "delete what no retained version reaches (--dry-run lists it)",
    .about = "Deletes TABLE's old versions and every file (data, deletion, transaction, index, Blob v2 "
             "sidecar, BRI target) that no retained version still reaches. A version stays when it is "
             "newer than --older-than, among the newest --retain, the latest, tagged or a branch root. "
             "Durations need a unit: 90s, 30m, 12h, 7d, 2w (0 alone is allowed). When brid's socket "
             "answers, brid does the work; with --offline, or when no brid answers, brictl does it itself "
             "under the table's lock.",
    .opts = OPTS,
    .flags = CLI_CMD_OFFLINE | CLI_CMD_DAEMON | CLI_CMD_JSON,
    .run = cmd_cleanup,
};
