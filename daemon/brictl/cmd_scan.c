/* cmd_scan.c: `brictl scan TABLE [--version N] [--key COL] [--no-blob-bytes]`:
 * row count and one SHA-256 per top-level column over every visible row
 * (lib/scan/scan.h), printed as JSON or as the oracle
 * tests/interop/lance_read.mjs prints its text form. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "bri/scan.h"
#include "cli.h"

static const cli_opt OPTS[] = {
    {.name = "version", .type = CLI_UINT, .value = "N", .min = 1, .help = "scan table version N",
     .def_note = "the latest"},
    {.name = "key", .type = CLI_STRING, .value = "COL", .flags = CLI_EMPTY_OK,
     .help = "hash the rows in the order of top-level column COL (\"\": scan order)",
     .def_note = "id when the table has it, else scan order"},
    {.name = "no-blob-bytes", .type = CLI_FLAG, .help = "hash Blob v2 columns' descriptors, not their payloads"},
    {0},
};

static void print_text(json_t *out) {
  printf("table %s\n", json_string_value(json_object_get(out, "table")));
  json_t *key = json_object_get(out, "key");
  printf("version %lld rows %lld countRows %lld fragments %lld key %s\n",
         (long long)json_integer_value(json_object_get(out, "version")),
         (long long)json_integer_value(json_object_get(out, "rows")),
         (long long)json_integer_value(json_object_get(out, "countRows")),
         (long long)json_integer_value(json_object_get(out, "fragments")),
         json_is_string(key) ? json_string_value(key) : "null");
  json_t *schema = json_object_get(out, "schema"), *v;
  size_t i;
  fputs("schema ", stdout);
  json_array_foreach(schema, i, v) printf("%s%s", i ? ", " : "", json_string_value(v));
  fputc('\n', stdout);
  const char *name;
  json_object_foreach(json_object_get(out, "columns"), name, v) {
    printf("col %s %s nulls=%lld sha256=%s", name, json_string_value(json_object_get(v, "type")),
           (long long)json_integer_value(json_object_get(v, "nulls")),
           json_string_value(json_object_get(v, "sha256")));
    json_t *kinds = json_object_get(v, "descriptorKinds");
    if (kinds) {
      char *k = json_dumps(kinds, JSON_COMPACT | JSON_PRESERVE_ORDER);
      printf(" kinds=%s payloadBytes=%s", k ? k : "{}",
             json_string_value(json_object_get(v, "payloadBytes")));
      free(k);
    }
    fputc('\n', stdout);
  }
}

static int cmd_scan(const cli_args *a) {
  bri_scan_options o = {.version = cli_uint(a, "version"), .key = cli_text(a, "key"),
                        .blob_bytes = !cli_flag(a, "no-blob-bytes")};
  /* every fragment's data files stay open during the scan: allow as many
   * descriptors as the hard limit does */
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  bri_error err = {0};
  json_t *out = NULL;
  int rc = bri_scan_table(a->pos[0], &o, &out, &err);
  if (!rc) {
    if (cli_flag(a, "json")) cli_print_json(out);
    else print_text(out);
    if (fflush(stdout) != 0 || ferror(stdout))
      rc = bri_error_set(&err, BRI_EIO, "writing the output failed");
  }
  json_decref(out);
  return rc ? cli_fail(&err) : CLI_OK;
}


const cli_cmd CMD_SCAN = {
    .name = "scan",
    .args = "TABLE",
    .summary = "row count and one SHA-256 per column, as LanceDB reads them",
    .about = "Reads every visible row of TABLE and prints the row count and one SHA-256 per "
             "top-level column (Blob v2 columns: over their payload bytes), in the shape of the "
             "LanceDB oracle tests/interop/lance_read.mjs, so that \"brid reads this table as Lance "
             "does\" is a comparison of two outputs.",
    .opts = OPTS,
    .flags = CLI_CMD_OFFLINE | CLI_CMD_JSON,
    .run = cmd_scan,
};
