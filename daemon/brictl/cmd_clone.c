/* cmd_clone.c: `brictl clone SRC DST --shallow|--deep [--version N | --tag T]`: clones one version of a table (lib/ops/clone.h). A shallow
 * clone references the source through a base path (no data is copied, the
 * source must stay); a deep clone copies every referenced byte and rewrites
 * the BRI so that it depends on nothing outside DST. */
#include <stdio.h>
#include <string.h>

#include "bri/ops.h"
#include "cli.h"

static const cli_opt OPTS[] = {
    {.name = "shallow", .type = CLI_FLAG, .excludes = "deep",
     .help = "reference the source's files through a base path (nothing copied; the source must stay)"},
    {.name = "deep", .type = CLI_FLAG, .help = "copy every referenced byte; the clone depends on nothing outside DST"},
    {.name = "version", .type = CLI_UINT, .value = "N", .min = 1, .excludes = "tag", .help = "clone version N",
     .def_note = "the latest"},
    {.name = "tag", .type = CLI_STRING, .value = "TAG", .help = "clone the version tagged TAG"},
    {0},
};

static int cmd_clone(const cli_args *a) {
  bri_clone_options o = {0};
  const char *paths[2] = {a->pos[0], a->pos[1]};
  bool as_json = cli_flag(a, "json");
  if (!cli_flag(a, "shallow") && !cli_flag(a, "deep")) return cli_usage(a, "say --shallow or --deep");
  o.deep = cli_flag(a, "deep");
  o.version = cli_uint(a, "version");
  o.tag = cli_text(a, "tag");
  bri_clone_report r;
  bri_error err;
  if (bri_clone_table(paths[0], paths[1], &o, NULL, &r, &err)) return cli_fail(&err);
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

const cli_cmd CMD_CLONE = {
    .name = "clone",
    .args = "SRC DST",
    .summary = "clone a table: --shallow (references the source) or --deep (copies)",
    .about = "Clones one version of table SRC into the new table DST. A shallow clone references "
             "SRC's files through a base path, as Lance's shallow_clone does (nothing is copied, SRC "
             "must stay); a deep clone copies every referenced byte and rewrites the Blob Reuse Index "
             "so that DST depends on nothing outside it.",
    .opts = OPTS,
    .flags = CLI_CMD_OFFLINE | CLI_CMD_JSON,
    .run = cmd_clone,
};
