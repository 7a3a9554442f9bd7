/* cmd_verify.c: `brictl verify TABLE [--all-versions | --version N]
 * [--skip-blobs] [--max-problems N]`: checks that the table's versions are
 * whole (lib/ops/verify.h). Exit status: 0 when every check holds,
 * CLI_PROBLEMS (5) with the list of problems (each naming a file and what
 * is wrong), 2 when the table cannot be opened at all. With --wait,
 * --daemon or --socket, brid runs it (cmd_submit.c). */
#include <stdio.h>
#include <string.h>

#include "bri/ops.h"
#include "cli.h"
#include "report.h"

static const cli_opt OPTS[] = {
    {.name = "all-versions", .type = CLI_FLAG, .param = "all_versions", .help = "check every version, not only the latest"},
    {.name = "version", .type = CLI_UINT, .value = "N", .min = 1, .excludes = "all-versions",
     .flags = CLI_OFFLINE_ONLY, .help = "check version N", .def_note = "the latest"},
    {.name = "skip-blobs", .type = CLI_FLAG, .param = "skip_blobs",
     .help = "do not resolve every Blob v2 descriptor to its bytes"},
    {.name = "max-problems", .type = CLI_UINT, .value = "N", .min = 1, .flags = CLI_OFFLINE_ONLY,
     .help = "list at most N problems (all are counted)", .def = "1000"},
    CLI_SUBMIT_OPTS,
    {0},
};

static int verify_offline(const cli_args *a) {
  bri_verify_options o = {0};
  const char *root = a->pos[0];
  bool as_json = cli_flag(a, "json");
  o.all_versions = cli_flag(a, "all-versions");
  o.skip_blobs = cli_flag(a, "skip-blobs");
  o.version = cli_uint(a, "version");
  o.max_problems = (size_t)cli_uint(a, "max-problems");
  bri_verify_report r;
  bri_error err;
  if (bri_verify_table(root, &o, &r, &err)) {
    bri_verify_report_dispose(&r);
    return cli_fail(&err);
  }
  bool ok = r.problems_total == 0;
  json_t *j = bri_verify_report_json(root, &o, &r);
  if (as_json) cli_print_json(j);
  else cli_print_report("verify", j, "brictl", "");
  json_decref(j);
  bri_verify_report_dispose(&r);
  return ok ? CLI_OK : CLI_PROBLEMS;
}

static int cmd_verify(const cli_args *a) { return cli_table_job(a, false, verify_offline); }

const cli_cmd CMD_VERIFY = {
    .name = "verify",
    .args = "TABLE",
    .summary = "check that every referenced file, blob and BRI target is there, and Lance's invariants",
    .about = "Checks that TABLE's latest version (or --version N, or every version) is whole: every "
             "data, deletion and transaction file and index directory it references exists, every "
             "Blob v2 descriptor resolves to its bytes, every BRI target is there, and the manifest "
             "keeps the invariants Lance's own commits keep (fragments in id order, ids below "
             "max_fragment_id, row counts, deletion files, row ids, index bitmaps: docs/rules.md). "
             "Exits 5 when it finds problems, each listed with the file and what is wrong (and the "
             "rule it breaks). When brid's socket answers, brid does the work; with --offline, or when no "
             "brid answers, brictl does it itself.",
    .opts = OPTS,
    .flags = CLI_CMD_OFFLINE | CLI_CMD_DAEMON | CLI_CMD_JSON,
    .run = cmd_verify,
};
