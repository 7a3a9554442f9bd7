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
  if (as_json) {
    json_t *j = bri_materialize_report_json(root, &o, &r);
    cli_print_json(j);
    json_decref(j);
  } else if (o.dry_run && o.managed) {
    printf("would replace %llu data files with a BRI in %s (version %llu) by ones with Managed descriptors%s\n",
           (unsigned long long)r.data_files, root, (unsigned long long)r.read_version,
           r.managed_switch ? ", after switching the table to Managed blobs" : "");
  } else if (o.dry_run) {
    printf("would replace %llu data files with a BRI in %s (version %llu): %llu files linked "
           "(%llu bytes), %llu copied (%llu bytes)\n",
           (unsigned long long)r.data_files, root, (unsigned long long)r.read_version,
           (unsigned long long)r.links, (unsigned long long)r.bytes_linked,
           (unsigned long long)r.copies, (unsigned long long)r.bytes_copied);
  } else if (!r.commits) {
    printf("nothing to materialize in %s (version %llu has no blob reuse index)\n", root,
           (unsigned long long)r.read_version);
  } else if (o.managed) {
    if (r.managed_switch_version)
      printf("switched %s to Managed blobs: version %llu (Lance 14 reads it, Lance 12 and 13 refuse it)\n", root,
             (unsigned long long)r.managed_switch_version);
    printf("materialized %s: version %llu -> %llu (%llu commits), %llu data files replaced; %llu values "
           "became Managed descriptors (%llu payload bytes, none read or copied); %.3f s\n",
           root, (unsigned long long)r.read_version, (unsigned long long)r.version,
           (unsigned long long)r.commits, (unsigned long long)r.data_files,
           (unsigned long long)r.values_adopted, (unsigned long long)r.bytes_adopted, r.seconds);
  } else {
    printf("materialized %s: version %llu -> %llu (%llu commits), %llu data files replaced; "
           "%llu files linked (%llu bytes), %llu copied (%llu bytes); %.3f s\n",
           root, (unsigned long long)r.read_version, (unsigned long long)r.version,
           (unsigned long long)r.commits, (unsigned long long)r.data_files,
           (unsigned long long)r.links, (unsigned long long)r.bytes_linked,
           (unsigned long long)r.copies, (unsigned long long)r.bytes_copied, r.seconds);
  }
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
