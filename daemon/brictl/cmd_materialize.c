/* cmd_materialize.c: `brictl materialize TABLE [--dry-run] [--copy | --managed]`:
 * replaces every data file that carries a Blob Reuse Index by a
 * stock-readable one (lib/ops/materialize.h) and reports the commits,
 * files and bytes linked or copied. --copy never hard-links; --managed
 * switches the table to Managed blobs and names the same bytes from
 * Managed descriptors (nothing linked or copied); --dry-run counts what
 * would be placed and changes nothing. With --wait, --daemon or --socket,
 * brid runs it (cmd_submit.c). */
#include <stdio.h>
#include <string.h>

#include "bri/ops.h"
#include "cli.h"
#include "report.h"

static const cli_opt OPTS[] = {
    {.name = "dry-run", .type = CLI_FLAG, .param = "dry_run",
     .help = "count the files that would be linked or copied and change nothing"},
    {.name = "copy", .type = CLI_FLAG, .param = "no_links", .help = "copy every payload, never hard-link"},
    {.name = "managed", .type = CLI_FLAG, .param = "managed",
     .help = "switch the table to Lance 14's Managed blobs and turn every BRI reference into a Managed "
             "descriptor of the same bytes: nothing linked or copied; Lance 14 reads the table, Lance 12 and "
             "13 refuse it from then on"},
    CLI_SUBMIT_OPTS,
    {0},
};

static int materialize_offline(const cli_args *a) {
  bri_materialize_options o;
  bri_materialize_options_default(&o);
  const char *root = a->pos[0];
  bool as_json = cli_flag(a, "json");
  o.dry_run = cli_flag(a, "dry-run");
  o.no_links = cli_flag(a, "copy");
  o.managed = cli_flag(a, "managed");
  bri_materialize_report r;
  bri_error err;
  if (o.managed && o.no_links) return cli_usage(a, "--copy and --managed exclude each other");
  if (bri_materialize_table(root, &o, NULL, &r, &err)) return cli_fail(&err);
  json_t *j = bri_materialize_report_json(root, &o, &r);
  if (as_json) cli_print_json(j);
  else cli_print_report("materialize", j, "brictl", "");
  json_decref(j);
  return CLI_OK;
}

static int cmd_materialize(const cli_args *a) { return cli_table_job(a, !cli_flag(a, "dry-run"), materialize_offline); }

const cli_cmd CMD_MATERIALIZE = {
    .name = "materialize",
    .args = "TABLE",
    .summary = "make a BRI table readable by stock Lance (links, else copies)",
    .about = "Replaces every data file of TABLE that carries a Blob Reuse Index by one stock Lance reads: "
             "the reused sidecars are hard-linked next to the new data file (copied across filesystems, or "
             "always with --copy), and the BRI feature flag goes once no data file needs it. When brid's "
             "socket answers, brid does the work; with --offline, or when no brid answers, brictl does it "
             "itself under the table's lock.",
    .opts = OPTS,
    .flags = CLI_CMD_OFFLINE | CLI_CMD_DAEMON | CLI_CMD_JSON,
    .run = cmd_materialize,
};
