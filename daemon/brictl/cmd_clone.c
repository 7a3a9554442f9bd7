/* cmd_clone.c: `brictl clone SRC DST --shallow|--deep [--version N | --tag T]
 * [--json]`: clones one version of a table (lib/ops/clone.h). A shallow
 * clone references the source through a base path (no data is copied, the
 * source must stay); a deep clone copies every referenced byte and rewrites
 * the BRI so that it depends on nothing outside DST. */
#include <stdio.h>
#include <string.h>

#include "ops/clone.h"
#include "cli.h"

static const char USAGE[] =
    "brictl clone SRC DST --shallow|--deep [--version N | --tag T] [--json]";

int cmd_clone(int argc, char **argv) {
  bri_clone_options o = {0};
  const char *paths[2] = {NULL, NULL};
  int n_paths = 0, kinds = 0;
  bool as_json = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--json")) as_json = true;
    else if (!strcmp(a, "--shallow")) o.deep = false, kinds++;
    else if (!strcmp(a, "--deep")) o.deep = true, kinds++;
    else if (!strcmp(a, "--version")) {
      unsigned long long v;
      if (++i >= argc || !cli_parse_u64(argv[i], &v) || v == 0)
        return cli_usage_error("clone", USAGE, "--version needs a positive integer");
      o.version = v;
    } else if (!strcmp(a, "--tag")) {
      if (++i >= argc) return cli_usage_error("clone", USAGE, "--tag needs a tag name");
      o.tag = argv[i];
    } else if (a[0] == '-') {
      return cli_usage_error("clone", USAGE, "unknown option %s", a);
    } else if (n_paths == 2) {
      return cli_usage_error("clone", USAGE, "more than SRC and DST given");
    } else {
      paths[n_paths++] = a;
    }
  }
  if (n_paths != 2) return cli_usage_error("clone", USAGE, "SRC and DST are required");
  if (kinds != 1) return cli_usage_error("clone", USAGE, "say --shallow or --deep (one of them)");
  if (o.tag && o.version) return cli_usage_error("clone", USAGE, "--version and --tag exclude each other");
  bri_clone_report r;
  bri_error err;
  if (bri_clone_table(paths[0], paths[1], &o, &r, &err)) return cli_fail(&err);
  if (as_json) {
    json_t *j = json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f}", "source",
                          paths[0], "clone", paths[1], "kind", o.deep ? "deep" : "shallow",
                          "version", (json_int_t)r.version, "data_files", (json_int_t)r.data_files,
                          "deletion_files", (json_int_t)r.deletion_files, "index_dirs",
                          (json_int_t)r.index_dirs, "sidecars", (json_int_t)r.sidecars,
                          "bri_targets", (json_int_t)r.bri_targets, "files_copied",
                          (json_int_t)r.files_copied, "bytes_copied", (json_int_t)r.bytes_copied,
                          "seconds", r.seconds);
    if (!o.deep) json_object_set_new(j, "base_id", json_integer(r.base_id));
    cli_print_json(j);
    json_decref(j);
  } else if (o.deep) {
    printf("deep clone of %s version %llu in %s: %llu data files, %llu deletion files, %llu index "
           "dirs, %llu sidecars, %llu BRI targets; %llu files, %llu bytes copied; %.3f s\n",
           paths[0], (unsigned long long)r.version, paths[1], (unsigned long long)r.data_files,
           (unsigned long long)r.deletion_files, (unsigned long long)r.index_dirs,
           (unsigned long long)r.sidecars, (unsigned long long)r.bri_targets,
           (unsigned long long)r.files_copied, (unsigned long long)r.bytes_copied, r.seconds);
  } else {
    printf("shallow clone of %s version %llu in %s (base id %u): %llu data files referenced, "
           "nothing copied\n",
           paths[0], (unsigned long long)r.version, paths[1], r.base_id,
           (unsigned long long)r.data_files);
  }
  return CLI_OK;
}
