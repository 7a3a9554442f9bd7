/* cmd_cleanup.c: `brictl cleanup TABLE [--older-than DURATION] [--retain N]
 * [--grace DURATION] [--max-deletes-per-sec R] [--dry-run] [--json]`: runs
 * version cleanup in-process (lib/cleanup) and reports counts and bytes per
 * kind of file. With --dry-run it lists what would go and deletes nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/cleanup.h"
#include "cli.h"
#include "util/duration.h"

static const char USAGE[] =
    "brictl cleanup TABLE [--older-than DURATION] [--retain N] [--grace DURATION] "
    "[--max-deletes-per-sec R] [--dry-run] [--json]";

typedef struct listing {
  json_t *files;
  bool print;
} listing;

static void on_file(void *user, bri_cleanup_kind kind, const char *path, uint64_t bytes) {
  listing *l = user;
  if (l->files)
    json_array_append_new(l->files, json_pack("{s:s, s:s, s:I}", "kind", bri_cleanup_kind_name(kind),
                                              "path", path, "bytes", (json_int_t)bytes));
  if (l->print) printf("%-12s %12llu  %s\n", bri_cleanup_kind_name(kind), (unsigned long long)bytes, path);
}

int cmd_cleanup(int argc, char **argv) {
  bri_cleanup_policy p;
  bri_cleanup_policy_default(&p);
  const char *root = NULL;
  bool as_json = false;
  bri_error err;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--json")) as_json = true;
    else if (!strcmp(a, "--dry-run")) p.dry_run = true;
    else if (!strcmp(a, "--older-than") || !strcmp(a, "--grace")) {
      if (++i >= argc) return cli_usage_error("cleanup", USAGE, "%s needs a duration", a);
      if (bri_duration_parse(argv[i], a, !strcmp(a, "--grace") ? &p.grace_sec : &p.older_than_sec, &err))
        return cli_usage_error("cleanup", USAGE, "%s", err.msg);
    } else if (!strcmp(a, "--retain")) {
      unsigned long long n;
      if (++i >= argc || !cli_parse_u64(argv[i], &n))
        return cli_usage_error("cleanup", USAGE, "--retain needs a number of versions");
      p.retain_versions = n;
    } else if (!strcmp(a, "--max-deletes-per-sec")) {
      char *end = NULL;
      if (++i < argc) p.max_deletes_per_sec = strtod(argv[i], &end);
      if (i >= argc || !end || *end || p.max_deletes_per_sec < 0)
        return cli_usage_error("cleanup", USAGE, "--max-deletes-per-sec needs a non-negative number");
    } else if (a[0] == '-') {
      return cli_usage_error("cleanup", USAGE, "unknown option %s", a);
    } else if (root) {
      return cli_usage_error("cleanup", USAGE, "more than one TABLE given");
    } else {
      root = a;
    }
  }
  if (!root) return cli_usage_error("cleanup", USAGE, "TABLE is required");
  listing l = {as_json ? json_array() : NULL, !as_json && p.dry_run};
  bri_cleanup_stats st;
  int rc = bri_cleanup_run(root, &p, on_file, &l, &st, &err);
  if (rc) {
    json_decref(l.files);
    return cli_fail(&err);
  }
  json_t *kinds = json_object();
  uint64_t files = 0, bytes = 0;
  for (int k = 0; k < BRI_CLEAN_KINDS; k++) {
    json_object_set_new(kinds, bri_cleanup_kind_name(k),
                        json_pack("{s:I, s:I}", "files", (json_int_t)st.files[k], "bytes",
                                  (json_int_t)st.bytes[k]));
    files += st.files[k], bytes += st.bytes[k];
  }
  if (as_json) {
    json_t *out = json_pack("{s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:o, s:o}", "table", root,
                            "dry_run", p.dry_run, "versions_retained",
                            (json_int_t)st.versions_retained, "files", (json_int_t)files, "bytes",
                            (json_int_t)bytes, "dirs_removed", (json_int_t)st.dirs_removed,
                            "kept_too_young", (json_int_t)st.kept_too_young, "by_kind", kinds,
                            "deleted", l.files);
    cli_print_json(out);
    json_decref(out);
    return CLI_OK;
  }
  printf("%s %llu files, %llu bytes (%llu versions retained, %llu unreferenced files too young)\n",
         p.dry_run ? "would delete" : "deleted", (unsigned long long)files, (unsigned long long)bytes,
         (unsigned long long)st.versions_retained, (unsigned long long)st.kept_too_young);
  for (int k = 0; k < BRI_CLEAN_KINDS; k++)
    if (st.files[k])
      printf("  %-12s %8llu files %14llu bytes\n", bri_cleanup_kind_name(k),
             (unsigned long long)st.files[k], (unsigned long long)st.bytes[k]);
  json_decref(kinds);
  return CLI_OK;
}
