/* cmd_verify.c: `brictl verify TABLE [--all-versions | --version N]
 * [--skip-blobs] [--max-problems N] [--json]`: checks that the table's
 * versions are whole (lib/ops/verify.h). Exit status: 0 when every check
 * holds, 1 with the list of problems (each naming a file and what is wrong),
 * 2 when the table cannot be opened at all (1 is also a usage error). */
#include <stdio.h>
#include <string.h>

#include "ops/verify.h"
#include "cli.h"

static const char USAGE[] =
    "brictl verify TABLE [--all-versions | --version N] [--skip-blobs] [--max-problems N] [--json]";

int cmd_verify(int argc, char **argv) {
  bri_verify_options o = {0};
  const char *root = NULL;
  bool as_json = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    unsigned long long n;
    if (!strcmp(a, "--json")) as_json = true;
    else if (!strcmp(a, "--all-versions")) o.all_versions = true;
    else if (!strcmp(a, "--skip-blobs")) o.skip_blobs = true;
    else if (!strcmp(a, "--version")) {
      if (++i >= argc || !cli_parse_u64(argv[i], &n) || n == 0)
        return cli_usage_error("verify", USAGE, "--version needs a positive integer");
      o.version = n;
    } else if (!strcmp(a, "--max-problems")) {
      if (++i >= argc || !cli_parse_u64(argv[i], &n) || n == 0)
        return cli_usage_error("verify", USAGE, "--max-problems needs a positive number");
      o.max_problems = (size_t)n;
    } else if (a[0] == '-') {
      return cli_usage_error("verify", USAGE, "unknown option %s", a);
    } else if (root) {
      return cli_usage_error("verify", USAGE, "more than one TABLE given");
    } else {
      root = a;
    }
  }
  if (!root) return cli_usage_error("verify", USAGE, "TABLE is required");
  if (o.all_versions && o.version)
    return cli_usage_error("verify", USAGE, "--all-versions and --version exclude each other");
  bri_verify_report r;
  bri_error err;
  if (bri_verify_table(root, &o, &r, &err)) {
    bri_verify_report_free(&r);
    return cli_fail(&err);
  }
  bool ok = r.problems_total == 0;
  if (as_json) {
    json_t *list = json_array();
    for (size_t i = 0; i < r.n_problems; i++)
      json_array_append_new(list, json_pack("{s:I, s:s, s:s}", "version", (json_int_t)r.problems[i].version,
                                            "file", r.problems[i].file, "problem", r.problems[i].what));
    json_t *j = json_pack("{s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}",
                          "table", root, "ok", ok, "versions_checked", (json_int_t)r.versions_checked,
                          "data_files", (json_int_t)r.data_files, "deletion_files",
                          (json_int_t)r.deletion_files, "transaction_files",
                          (json_int_t)r.transaction_files, "index_dirs", (json_int_t)r.index_dirs,
                          "bri_targets", (json_int_t)r.bri_targets, "fragments",
                          (json_int_t)r.fragments, "blobs", (json_int_t)r.blobs, "blobs_unchecked",
                          (json_int_t)r.blobs_unchecked, "problems_total", (json_int_t)r.problems_total,
                          "problems_listed", (json_int_t)r.n_problems, "problems", list);
    cli_print_json(j);
    json_decref(j);
  } else {
    printf("%s: %llu versions, %llu data files, %llu deletion files, %llu transaction files, %llu "
           "index dirs, %llu BRI targets, %llu blobs checked",
           root, (unsigned long long)r.versions_checked, (unsigned long long)r.data_files,
           (unsigned long long)r.deletion_files, (unsigned long long)r.transaction_files,
           (unsigned long long)r.index_dirs, (unsigned long long)r.bri_targets,
           (unsigned long long)r.blobs);
    if (r.blobs_unchecked) printf(" (%llu external blobs not checkable)", (unsigned long long)r.blobs_unchecked);
    printf("\n");
    if (ok) {
      printf("ok\n");
    } else {
      printf("%llu problems%s:\n", (unsigned long long)r.problems_total,
             r.problems_total > r.n_problems ? " (first ones listed)" : "");
      for (size_t i = 0; i < r.n_problems; i++)
        printf("  v%llu %s: %s\n", (unsigned long long)r.problems[i].version, r.problems[i].file,
               r.problems[i].what);
    }
  }
  bri_verify_report_free(&r);
  return ok ? CLI_OK : 1;
}
