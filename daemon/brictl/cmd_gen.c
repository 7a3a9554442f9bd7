/* cmd_gen.c: `brictl gen TABLE [--fragments N] [--rows N] [--blob-sizes LIST]
 * [--seed N] [--start-id N] [--storage-version 2.1|2.2] [--stable-row-ids]
 * [--inline-threshold BYTES] [--dedicated-threshold BYTES] [--no-retry]`:
 * creates or appends to a table with brid's own writer (lib/gen). Exit 3
 * when --no-retry is given and another writer took the version first. The
 * defaults in the option table are lib/gen's (bri_gen_options_default). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bri/gen.h"
#include "cli.h"

static const cli_opt OPTS[] = {
    {.name = "fragments", .type = CLI_UINT, .value = "N", .min = 1, .def = "1", .help = "fragments to append"},
    {.name = "rows", .type = CLI_UINT, .value = "N", .min = 1, .def = "1000", .help = "rows per fragment"},
    {.name = "blob-sizes", .type = CLI_STRING, .value = "LIST",
     .help = "add a Blob v2 column \"blob\" whose payload sizes cycle through LIST: bytes with an optional "
             "K or M, or null (e.g. 0,1K,100K,5M,null)"},
    {.name = "seed", .type = CLI_UINT, .value = "N", .def = "42", .help = "seed of the generated values"},
    {.name = "start-id", .type = CLI_UINT, .value = "N", .help = "first value of the id column",
     .def_note = "one past the table's highest id, else 0"},
    {.name = "storage-version", .type = CLI_CHOICE, .choices = "2.1|2.2", .def = "2.2",
     .help = "Lance file format of a new table"},
    {.name = "stable-row-ids", .type = CLI_FLAG, .help = "create the table with stable row ids"},
    {.name = "inline-threshold", .type = CLI_UINT, .value = "BYTES", .def = "65536",
     .help = "blobs up to this size are stored inline in the data file"},
    {.name = "dedicated-threshold", .type = CLI_UINT, .value = "BYTES", .def = "4194304",
     .help = "blobs from this size on get a dedicated sidecar file; sizes between the thresholds are packed"},
    {.name = "no-retry", .type = CLI_FLAG,
     .help = "when another writer commits the version first, exit 3 instead of retrying"},
    {0},
};

static int cmd_gen(const cli_args *a) {
  bri_gen_options o;
  bri_gen_options_default(&o);
  const char *root = a->pos[0];
  bri_gen_blob *blobs = NULL;
  bri_error err;
  o.fragments = cli_uint(a, "fragments");
  o.rows = cli_uint(a, "rows");
  o.seed = cli_uint(a, "seed");
  if (cli_given(a, "start-id")) o.start_id = (int64_t)cli_uint(a, "start-id");
  o.minor = !strcmp(cli_text(a, "storage-version"), "2.1") ? 1 : 2;
  o.stable_row_ids = cli_flag(a, "stable-row-ids");
  o.inline_threshold = cli_uint(a, "inline-threshold");
  o.dedicated_threshold = cli_uint(a, "dedicated-threshold");
  o.retry = !cli_flag(a, "no-retry");
  if (cli_given(a, "blob-sizes")) {
    if (bri_gen_parse_blobs(cli_text(a, "blob-sizes"), &blobs, &o.n_blobs, &err))
      return cli_usage(a, "--blob-sizes: %s", err.msg);
    o.blobs = blobs;
  }
  if (o.inline_threshold >= o.dedicated_threshold) {
    free(blobs);
    return cli_usage(a, "--inline-threshold must be below --dedicated-threshold");
  }
  bri_gen_report r;
  int rc = bri_gen_run(root, &o, &r, &err);
  free(blobs);
  if (rc == BRI_ETAKEN) {
    fprintf(stderr, "brictl: conflict: %s\n", err.msg);
    return CLI_CONFLICT;
  }
  if (rc) return cli_fail(&err);
  if (cli_flag(a, "json")) {    json_t *j = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "table", root, "first_version",
                          (json_int_t)r.first_version, "last_version", (json_int_t)r.last_version, "rows",
                          (json_int_t)r.rows, "first_id", (json_int_t)r.first_id, "data_bytes",
                          (json_int_t)r.data_bytes, "sidecar_bytes", (json_int_t)r.sidecar_bytes,
                          "inline_bytes", (json_int_t)r.inline_bytes, "retries", (json_int_t)r.retries);
    cli_print_json(j);
    json_decref(j);
  } else {
    printf("%s: %llu rows (ids from %llu) in versions %llu..%llu: %llu data bytes, %llu sidecar bytes, %llu inline\n",
           root, (unsigned long long)r.rows, (unsigned long long)r.first_id,
           (unsigned long long)r.first_version, (unsigned long long)r.last_version,
           (unsigned long long)r.data_bytes, (unsigned long long)r.sidecar_bytes,
           (unsigned long long)r.inline_bytes);
  }
  return CLI_OK;
}

const cli_cmd CMD_GEN = {
    .name = "gen",
    .args = "TABLE",
    .summary = "create or append to a table with generated rows (ids, typed columns, blobs)",
    .about = "Creates TABLE, or appends to it, with brid's own writer: --fragments fragments of "
             "--rows rows each, with an id column, typed columns and optionally a Blob v2 column. "
             "For tests and demos; the values are a function of --seed and the id.",
    .opts = OPTS,
    .flags = CLI_CMD_OFFLINE | CLI_CMD_JSON,
    .run = cmd_gen,
};
