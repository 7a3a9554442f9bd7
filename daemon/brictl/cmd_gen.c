/* cmd_gen.c: `brictl gen TABLE [--fragments N] [--rows R] [--blob-sizes LIST]
 * [--seed S] [--start-id N] [--storage-version 2.1|2.2] [--stable-row-ids]
 * [--inline-threshold B] [--dedicated-threshold B] [--no-retry] [--json]`:
 * creates or appends to a table with brid's own writer (lib/gen). Exit 3
 * when --no-retry is given and another writer took the version first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gen/gen.h"

static const char USAGE[] =
    "brictl gen TABLE [--fragments N] [--rows R] [--blob-sizes LIST] [--seed S] [--start-id N] "
    "[--storage-version 2.1|2.2] [--stable-row-ids] [--inline-threshold B] "
    "[--dedicated-threshold B] [--no-retry] [--json]";

int cmd_gen(int argc, char **argv) {
  bri_gen_options o;
  bri_gen_options_default(&o);
  const char *root = NULL;
  bool as_json = false;
  bri_gen_blob *blobs = NULL;
  bri_error err;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    unsigned long long n;
    uint64_t *num = !strcmp(a, "--fragments") ? &o.fragments
                    : !strcmp(a, "--rows") ? &o.rows
                    : !strcmp(a, "--seed") ? &o.seed
                    : !strcmp(a, "--inline-threshold") ? &o.inline_threshold
                    : !strcmp(a, "--dedicated-threshold") ? &o.dedicated_threshold : NULL;
    if (num || !strcmp(a, "--start-id")) {
      if (++i >= argc || !cli_parse_u64(argv[i], &n)) {
        free(blobs);
        return cli_usage_error("gen", USAGE, "%s needs a non-negative number", a);
      }
      if (num) *num = n;
      else o.start_id = (int64_t)n;
    } else if (!strcmp(a, "--blob-sizes")) {
      free(blobs);
      blobs = NULL;
      if (++i >= argc || bri_gen_parse_blobs(argv[i], &blobs, &o.n_blobs, &err))
        return cli_usage_error("gen", USAGE, "%s", i < argc ? err.msg : "--blob-sizes needs a list");
      o.blobs = blobs;
    } else if (!strcmp(a, "--storage-version")) {
      if (++i >= argc || (strcmp(argv[i], "2.1") && strcmp(argv[i], "2.2"))) {
        free(blobs);
        return cli_usage_error("gen", USAGE, "--storage-version takes 2.1 or 2.2");
      }
      o.minor = argv[i][2] == '1' ? 1 : 2;
    } else if (!strcmp(a, "--stable-row-ids")) o.stable_row_ids = true;
    else if (!strcmp(a, "--no-retry")) o.retry = false;
    else if (!strcmp(a, "--json")) as_json = true;
    else if (a[0] == '-' || root) {
      free(blobs);
      return cli_usage_error("gen", USAGE, a[0] == '-' ? "unknown option %s" : "more than one TABLE given (%s)", a);
    } else root = a;
  }
  if (!root) {
    free(blobs);
    return cli_usage_error("gen", USAGE, "TABLE is required");
  }
  if (o.rows == 0 || o.inline_threshold >= o.dedicated_threshold) {
    free(blobs);
    return cli_usage_error("gen", USAGE, "--rows must be positive and the inline threshold below the dedicated one");
  }
  bri_gen_report r;
  int rc = bri_gen_run(root, &o, &r, &err);
  free(blobs);
  if (rc == BRI_ETAKEN) {
    fprintf(stderr, "brictl: conflict: %s\n", err.msg);
    return 3;
  }
  if (rc) return cli_fail(&err);
  if (as_json) {
    json_t *j = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "table", root, "first_version",
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
