/* cmd_materialize.c: `brictl materialize TABLE [--dry-run] [--copy] [--json]`:
 * replaces every data file that carries a Blob Reuse Index by a
 * stock-readable one (lib/ops/materialize.h) and reports the commits,
 * files and bytes linked or copied. --copy never hard-links; --dry-run
 * counts what would be placed and changes nothing. */
#include <stdio.h>
#include <string.h>

#include "ops/materialize.h"
#include "cli.h"

static const char USAGE[] = "brictl materialize TABLE [--dry-run] [--copy] [--json]";

int cmd_materialize(int argc, char **argv) {
  bri_materialize_options o;
  bri_materialize_options_default(&o);
  const char *root = NULL;
  bool as_json = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--json")) as_json = true;
    else if (!strcmp(a, "--dry-run")) o.dry_run = true;
    else if (!strcmp(a, "--copy")) o.no_links = true;
    else if (a[0] == '-') return cli_usage_error("materialize", USAGE, "unknown option %s", a);
    else if (root) return cli_usage_error("materialize", USAGE, "more than one TABLE given");
    else root = a;
  }
  if (!root) return cli_usage_error("materialize", USAGE, "TABLE is required");
  bri_materialize_report r;
  bri_error err;
  if (bri_materialize_table(root, &o, &r, &err)) return cli_fail(&err);
  if (as_json) {
    json_t *j = json_pack("{s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f}", "table", root,
                          "dry_run", o.dry_run, "read_version", (json_int_t)r.read_version,
                          "version", (json_int_t)r.version, "commits", (json_int_t)r.commits,
                          "data_files", (json_int_t)r.data_files, "links", (json_int_t)r.links,
                          "copies", (json_int_t)r.copies, "bytes_linked", (json_int_t)r.bytes_linked,
                          "bytes_copied", (json_int_t)r.bytes_copied, "bri_files_left",
                          (json_int_t)r.bri_files_left, "seconds", r.seconds);
    cli_print_json(j);
    json_decref(j);
  } else if (o.dry_run) {
    printf("would replace %llu data files with a BRI in %s (version %llu): %llu files linked "
           "(%llu bytes), %llu copied (%llu bytes)\n",
           (unsigned long long)r.data_files, root, (unsigned long long)r.read_version,
           (unsigned long long)r.links, (unsigned long long)r.bytes_linked,
           (unsigned long long)r.copies, (unsigned long long)r.bytes_copied);
  } else if (!r.commits) {
    printf("nothing to materialize in %s (version %llu has no blob reuse index)\n", root,
           (unsigned long long)r.read_version);
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
