/* cmd_compact.c: `brictl compact TABLE [--strategy auto|bri|link|copy|managed] [--dry-run]
 * [--target-rows N] [--target-bytes SIZE] [--repack-threshold F]`: compacts a table in-process
 * (lib/compact) and reports fragments before and after, rows, bytes written
 * and reused, and the time taken. --dry-run prints the plan: bins, rows, and
 * the payload bytes each would reuse, copy or repack. With --wait, --daemon
 * or --socket, brid runs it (cmd_submit.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bri/compact.h"
#include "bri/ops.h"
#include "cli.h"
#include "report.h"

static const cli_opt OPTS[] = {
    {.name = "strategy", .type = CLI_CHOICE, .choices = "auto|bri|link|copy|managed", .param = "strategy",
     .help = "how blob payloads are kept: auto links where the filesystem allows, else copies (a table "
             "with a Blob Reuse Index stays bri), link hard-links the sidecars, copy copies them, bri records a "
             "Blob Reuse Index (no payload byte written; stock Lance refuses the table until materialize), "
             "managed switches the table to Lance 14's Managed blobs and adopts the sidecars in place (no "
             "payload byte written; Lance 14 reads the table, Lance 12 and 13 refuse it from then on)",
     .def_note = "auto; through brid, the table's policy"},
    {.name = "dry-run", .type = CLI_FLAG, .param = "dry_run", .help = "print the plan and change nothing"},
    {.name = "target-rows", .type = CLI_UINT, .value = "N", .min = 1, .def = "1048576",
     .param = "target_rows_per_fragment",
     .help = "fragments with fewer rows are merged with their neighbours (the table's "
             "lance.compaction.target_rows_per_fragment wins)"},
    {.name = "target-bytes", .type = CLI_SIZE, .value = "SIZE", .min = 1, .param = "target_fragment_bytes",
     .help = "fragments this size or larger are left alone unless rows were deleted: their data files, plus "
             "under copy the payload it would copy; smaller ones merge up to it (256M, 1G)",
     .def_note = "1G; through brid, the table's policy"},
    {.name = "repack-threshold", .type = CLI_NUMBER, .value = "F", .min = 0, .max = 1, .def = "0.3",
     .flags = CLI_OFFLINE_ONLY,
     .help = "blob packs whose live share is below F are copied compactly instead of reused"},
    CLI_SUBMIT_OPTS,
    {0},
};

static int compact_offline(const cli_args *a) {
  bri_compact_request q;
  bri_compact_request_default(&q);
  const char *root = a->pos[0];
  bool as_json = cli_flag(a, "json");
  bri_error err;
  if (cli_given(a, "strategy") && bri_strategy_parse(cli_text(a, "strategy"), &q.strategy, &err))
    return cli_usage(a, "%s", err.msg);
  q.dry_run = cli_flag(a, "dry-run");
  q.options.target_rows_per_fragment = cli_uint(a, "target-rows");
  if (cli_given(a, "target-bytes")) q.options.target_fragment_bytes = cli_uint(a, "target-bytes");
  q.options.repack_threshold = cli_number(a, "repack-threshold");
  bri_compact_report r;
  int rc = bri_compact_table(root, &q, NULL, &r, &err);
  if (rc) {
    json_decref(r.plan);
    return cli_fail(&err);
  }
  json_t *j = bri_compact_report_json(root, &q, &r);
  if (as_json) cli_print_json(j);
  else cli_print_report("compact", j, "brictl", "");
  json_decref(j);
  json_decref(r.plan);
  return CLI_OK;
}

static int cmd_compact(const cli_args *a) { return cli_table_job(a, !cli_flag(a, "dry-run"), compact_offline); }

const cli_cmd CMD_COMPACT = {
    .name = "compact",
    .args = "TABLE",
    .summary = "merge small fragments, keeping blob payloads in place (--dry-run plans)",
    .about = "Merges TABLE's small fragments by Lance's rules (adjacent fragments below --target-rows, "
             "fragments with many deleted rows) and commits one Rewrite version. Pages are copied "
             "verbatim where possible; Blob v2 payloads stay where they are (--strategy). When brid's "
             "socket answers, brid does the work and brictl follows it; with --offline, or when no brid "
             "answers, brictl does it itself under the table's lock.",
    .opts = OPTS,
    .flags = CLI_CMD_OFFLINE | CLI_CMD_DAEMON | CLI_CMD_JSON,
    .run = cmd_compact,
};
