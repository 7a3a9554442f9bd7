/* cmd_inspect.c: `brictl inspect TABLE [--version N] [--min-reader N]`:
 * the description of one table version (lib/ops/inspect.h) printed as JSON
 * (keys documented in docs/inspect.md) or as aligned text for people, both
 * from one document; with --min-reader, what that declaration of the
 * oldest Lance reading the table (brid.conf min_reader) makes brid do. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bri/ops.h"
#include "cli.h"

/* "Lance 12, 13 and 14" from the readers' names ("Lance 12.0.0 (...)"), or
 * "brid only" when no stock Lance reads it. */
static void print_readers(json_t *a) {
  size_t i, n = json_array_size(a);
  json_t *e;
  if (!n) {
    printf("brid only (every stock Lance refuses it by flag)");
    return;
  }
  printf("Lance");
  json_array_foreach(a, i, e) {
    int major = 0;
    sscanf(json_string_value(e), "Lance %d", &major);
    printf("%s %d", i == 0 ? "" : i + 1 == n ? " and" : ",", major);
  }
}

static const cli_opt OPTS[] = {
    {.name = "version", .type = CLI_UINT, .value = "N", .min = 1, .help = "describe table version N",
     .def_note = "the latest"},
    {.name = "min-reader", .type = CLI_UINT, .value = "N", .min = 1, .max = 1000,
     .help = "say what declaring N the oldest Lance that reads the table (brid.conf min_reader) makes a "
             "compaction do, and which readers it locks out",
     .def_note = "none"},
    {0},
};

static const char *str(json_t *o, const char *k) {
  const char *s = json_string_value(json_object_get(o, k));
  return s ? s : "-";
}
static long long num(json_t *o, const char *k) { return (long long)json_integer_value(json_object_get(o, k)); }

static void print_text(json_t *r) {
  json_t *v = json_object_get(r, "versions"), *w = json_object_get(r, "writer");
  json_t *list = json_object_get(v, "list");
  printf("table     %s\n", str(r, "table"));
  printf("versions  %lld (oldest %lld, latest %lld, naming %s)\n", num(v, "count"), num(v, "oldest"),
         num(v, "latest"), str(v, "naming"));
  size_t i;
  json_t *e;
  json_array_foreach(list, i, e) {
    json_t *err = json_object_get(e, "error");
    printf("  v%-6lld %s\n", num(e, "version"), err ? json_string_value(err) : str(e, "timestamp"));
  }
  printf("version   %lld at %s, written by %s %s, data format %s\n", num(r, "version"),
         str(r, "timestamp"), w ? str(w, "library") : "-", w ? str(w, "version") : "-",
         str(r, "data_format"));
  json_t *fl = json_object_get(r, "flags");
  char *rn = json_dumps(json_object_get(fl, "reader_names"), JSON_COMPACT);
  char *wn = json_dumps(json_object_get(fl, "writer_names"), JSON_COMPACT);
  printf("flags     reader %lld %s, writer %lld %s\n", num(fl, "reader"), rn, num(fl, "writer"), wn);
  free(rn), free(wn);
  json_t *c = json_object_get(r, "compatibility");
  char *feat = json_dumps(json_object_get(c, "features"), JSON_COMPACT);
  char *fv = json_dumps(json_object_get(c, "file_versions"), JSON_COMPACT);
  char *ik = json_dumps(json_object_get(c, "index_kinds"), JSON_COMPACT);
  printf("lance     features %s, file versions %s, index kinds %s\n", feat, fv, ik);
  free(feat), free(fv), free(ik);
  printf("readers   ");
  print_readers(json_object_get(c, "readers"));
  printf(" (tested: Lance 12.0.0, 13.0.0, 14.0.3)\n");
  static const char *ops[] = {"compact", "materialize", "clone", "cleanup", "verify"};
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    json_t *o = json_object_get(c, ops[k]);
    if (!json_is_true(json_object_get(o, "ok"))) {
      printf("  %-11s no: %s\n", ops[k], str(o, "reason"));
      continue;
    }
    printf("  %-11s yes", ops[k]);
    json_t *rd = json_object_get(o, "readers");
    if (rd) {
      printf("; then read by ");
      print_readers(rd);
    }
    json_t *rb = json_object_get(o, "readers_bri");
    if (rb && !json_equal(rb, rd)) {
      printf("; with --strategy bri by ");
      print_readers(rb);
    }
    json_t *mg = json_object_get(c, "compact_managed");
    if (!strcmp(ops[k], "compact") && json_is_true(json_object_get(mg, "switches"))) {
      printf("; with --strategy managed by ");
      print_readers(json_object_get(mg, "readers"));
      printf(" (locks out ");
      print_readers(json_object_get(mg, "locks_out"));
      printf(")");
    }
    printf("\n");
  }
  json_t *dc = json_object_get(r, "declared");
  if (dc) {
    printf("declared  min_reader %lld: ", num(dc, "min_reader"));
    if (!strcmp(str(dc, "compact_auto"), "managed")) {
      printf("compact (auto) switches the table to Managed blobs and locks out ");
      print_readers(json_object_get(dc, "locks_out"));
    } else {
      printf("compact (auto) keeps the table's readers");
    }
    printf("\n");
  }
  printf("\nschema\n  %4s %6s  %-24s %-28s %s\n", "id", "parent", "path", "type", "nullable");
  json_array_foreach(json_object_get(r, "schema"), i, e)
    printf("  %4lld %6lld  %-24s %-28s %s%s\n", num(e, "id"), num(e, "parent_id"), str(e, "path"),
           str(e, "type"), json_is_true(json_object_get(e, "nullable")) ? "yes" : "no",
           json_is_true(json_object_get(e, "blob_v2")) ? "  [blob v2]" : "");
  printf("\nfragments\n  %6s %10s %10s %10s  %-8s\n", "id", "rows", "physical", "deleted", "deletion");
  json_array_foreach(json_object_get(r, "fragments"), i, e) {
    json_t *d = json_object_get(e, "deletion_file");
    printf("  %6lld %10lld %10lld %10lld  %-8s\n", num(e, "id"), num(e, "rows"),
           num(e, "physical_rows"), num(e, "deleted_rows"), json_is_null(d) ? "-" : str(d, "type"));
    size_t k;
    json_t *f;
    json_array_foreach(json_object_get(e, "files"), k, f) {
      printf("         %s  v%s  %lld bytes", str(f, "path"), str(f, "file_version"), num(f, "size_bytes"));
      json_t *s = json_object_get(f, "sidecars");
      if (!json_is_null(s)) printf("  sidecars %lld files %lld bytes", num(s, "files"), num(s, "bytes"));
      json_t *b = json_object_get(f, "blob_reuse_index");
      if (!json_is_null(b)) printf("  BRI %zu sources", json_array_size(json_object_get(b, "sources")));
      printf("\n");
    }
  }
  json_t *t = json_object_get(r, "totals");
  printf("\ntotals    %lld fragments, %lld rows (%lld physical, %lld deleted), %lld data files "
         "%lld bytes, %lld sidecars %lld bytes\n",
         num(t, "fragments"), num(t, "rows"), num(t, "physical_rows"), num(t, "deleted_rows"),
         num(t, "data_files"), num(t, "data_bytes"), num(t, "sidecar_files"), num(t, "sidecar_bytes"));
  json_array_foreach(json_object_get(r, "indices"), i, e) {
    char *fields = json_dumps(json_object_get(e, "fields"), JSON_COMPACT);
    printf("index     %s on fields %s\n", str(e, "name"), fields ? fields : "[]");
    free(fields);
  }
  json_array_foreach(json_object_get(r, "tags"), i, e)
    printf("tag       %s -> version %lld\n", str(e, "name"), num(e, "version"));
  json_array_foreach(json_object_get(r, "branches"), i, e)
    printf("branch    %s from version %lld\n", str(e, "name"), num(e, "parent_version"));
}

static int cmd_inspect(const cli_args *a) {
  bri_error err;
  json_t *report = NULL;
  if (bri_inspect_table(a->pos[0], cli_uint(a, "version"), &report, &err)) return cli_fail(&err);
  if (cli_given(a, "min-reader"))
    json_object_set_new(report, "declared", bri_inspect_declared(report, (unsigned)cli_uint(a, "min-reader")));
  if (cli_flag(a, "json")) cli_print_json(report);
  else print_text(report);
  json_decref(report);
  return CLI_OK;
}

const cli_cmd CMD_INSPECT = {
    .name = "inspect",
    .args = "TABLE",
    .summary = "versions, flags, schema, fragments and sidecars of a table",
    .about = "Describes one version of TABLE: its versions, writer, feature flags, schema, "
             "fragments with their data files, deletion files, Blob v2 sidecars and Blob Reuse "
             "Index, indices, tags and branches. --json keys are documented in docs/inspect.md.",
    .opts = OPTS,
    .flags = CLI_CMD_OFFLINE | CLI_CMD_JSON,
    .run = cmd_inspect,
};

