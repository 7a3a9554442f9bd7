/* report.c: brictl's one printer of a job's report (see report.h): a
 * function per kind, each reading the report's JSON. */
#include "report.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "bri/compact.h"
#include "cmd_client.h"

typedef struct printer {
  const char *indent;
  const char *runner;
} printer;

/* Starts a line: the indent, then fmt (which may end the line or not). */
static void say(const printer *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const printer *p, const char *fmt, ...) {
  fputs(p->indent, stdout);
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
}

static bool flag(const json_t *o, const char *key) { return json_is_true(json_object_get(o, key)); }

/* One line per reason a compaction's plan held fragments back
 * (compact/plan.h): how many, their bytes as the size rule counts them,
 * the first ids; nothing when it held none back. */
static void print_held(const printer *p, const json_t *plan) {
  static const bri_hold reasons[] = {BRI_HOLD_AT_TARGET, BRI_HOLD_LARGER, BRI_HOLD_INDEX};
  for (size_t r = 0; r < sizeof reasons / sizeof reasons[0]; r++) {
    const char *why = bri_hold_name(reasons[r]);
    size_t i, n = 0;
    long long bytes = 0;
    char ids[96] = "";
    json_t *h;
    json_array_foreach(json_object_get(plan, "held_back"), i, h) {
      const char *reason = json_string_value(json_object_get(h, "reason")); /* (an older brid's: ids) */
      if (!reason || strcmp(reason, why)) continue;
      bytes += cli_int(h, "size_bytes");
      size_t len = strlen(ids);
      if (n++ < 8) snprintf(ids + len, sizeof ids - len, "%s%lld", len ? " " : "", cli_int(h, "fragment"));
      else if (n == 9) snprintf(ids + len, sizeof ids - len, " ...");
    }
    if (n) say(p, "  held back (%s): %zu fragment%s, %lld bytes: %s\n", why, n, n == 1 ? "" : "s", bytes, ids);
  }
}

/* One line per index: how the compaction keeps it answering (compact/fri.h),
 * then the fragment reuse index version the commit appended, if any. */
static void print_indices(const printer *p, const json_t *plan) {
  size_t i;
  json_t *x;
  json_array_foreach(json_object_get(plan, "indices"), i, x) {
    const char *how = cli_str(x, "carried");
    long long held = cli_int(x, "holds");
    const char *text = !strcmp(how, "row_ids") ? "its bitmap follows the rows (stable row ids)"
                       : !strcmp(how, "dropped") ? "rewritten fragments leave its coverage and are scanned"
                       : !strcmp(how, "fragment_reuse_index") ? "carried by the fragment reuse index"
                                                              : "not carried (brid does not know its type)";
    say(p, "  index %s (%s): %s", cli_str(x, "name"), cli_str(x, "type"), text);
    if (held) printf("; %lld fragments it covers are left alone", held);
    printf("\n");
  }
  json_t *fri = json_object_get(json_object_get(plan, "index_update"), "fragment_reuse_index");
  if (fri)
    say(p, "  fragment reuse index: a version for %lld groups (dataset version %lld), %lld kept, %lld "
           "trimmed%s\n",
        cli_int(fri, "groups"), cli_int(fri, "dataset_version"), cli_int(fri, "versions"), cli_int(fri, "trimmed"),
        flag(fri, "external") ? ", details in _indices/" : "");
}

static void print_plan(const printer *p, const json_t *r, const json_t *plan) {
  say(p, "dry run at version %lld of %s (strategy %s): %lld bins, %lld of %lld fragments\n", cli_int(r, "read_version"),
      cli_str(r, "table"), cli_str(r, "strategy"), cli_int(r, "bins"), cli_int(r, "fragments_rewritten"),
      cli_int(r, "fragments_before"));
  size_t i;
  json_t *b;
  json_array_foreach(json_object_get(plan, "bins"), i, b) {
    json_t *pay = json_object_get(b, "payload");
    say(p, "  bin %zu: %zu fragments, %lld rows (%lld deleted), %lld data bytes, payload inline %lld packed %lld "
           "dedicated %lld%s\n",
        i, json_array_size(json_object_get(b, "fragments")), cli_int(b, "rows"), cli_int(b, "deleted_rows"),
        cli_int(b, "data_bytes"), cli_int(pay, "inline"), cli_int(pay, "packed"), cli_int(pay, "dedicated"),
        flag(pay, "repacks_low_utilization_packs") ? " (repacks)" : "");
  }
  print_held(p, plan);
  print_indices(p, plan);
  if (json_is_object(json_object_get(r, "managed_switch")))
    say(p, "  switches the table to Managed blobs first (Lance 12 and 13 refuse it from then on)\n");
}

static void print_compact(const printer *p, const json_t *r) {
  const char *table = cli_str(r, "table");
  const json_t *plan = json_object_get(r, "plan");
  long long version = cli_int(r, "version"), switched = cli_int(json_object_get(r, "managed_switch"), "version");
  if (flag(r, "dry_run")) {
    print_plan(p, r, plan);
  } else if (!version) {
    say(p, "nothing to compact in %s (version %lld, %lld fragments)\n", table, cli_int(r, "read_version"),
        cli_int(r, "fragments_before"));
    print_held(p, plan);
  } else if (version == switched) {
    say(p, "switched %s to Managed blobs: version %lld (nothing to compact; Lance 14 reads it, Lance 12 and 13 "
           "refuse it)\n", table, version);
  } else {
    if (switched)
      say(p, "switched %s to Managed blobs: version %lld (Lance 14 reads it, Lance 12 and 13 refuse it)\n", table,
          switched);
    say(p, "compacted %s: version %lld -> %lld: %lld -> %lld fragments, %lld rows (strategy %s)\n", table,
        cli_int(r, "read_version"), version, cli_int(r, "fragments_before"), cli_int(r, "fragments_after"),
        cli_int(r, "rows"), cli_str(r, "strategy_used"));
    say(p, "  wrote %lld bytes of data files, %lld bytes of payload (%lld inline); reused %lld payload bytes in "
           "place (%lld links); %.3f s\n",
        cli_int(r, "data_bytes_written"), cli_int(r, "payload_bytes_copied"), cli_int(r, "inline_bytes_copied"),
        cli_int(r, "payload_bytes_reused"), cli_int(r, "links"), json_real_value(json_object_get(r, "seconds")));
    if (cli_int(r, "managed_kept") || cli_int(r, "managed_adopted"))
      say(p, "  Managed blobs: %lld descriptors kept, %lld values adopted in place (%lld payload bytes, none "
             "read)\n", cli_int(r, "managed_kept"), cli_int(r, "managed_adopted"), cli_int(r, "payload_bytes_reused"));
    if (cli_int(r, "managed_repacked"))
      say(p, "  repacked %lld values of %lld packs below the repack threshold into new _blobs/ objects (%lld "
             "bytes)\n", cli_int(r, "managed_repacked"), cli_int(r, "packs_below_threshold"),
          cli_int(r, "payload_bytes_copied"));
    print_held(p, plan);
    if (cli_int(r, "deletions_carried"))
      say(p, "  carried %lld rows deleted meanwhile by other writers over to the new fragments\n",
          cli_int(r, "deletions_carried"));
    print_indices(p, plan);
  }
  const json_t *io = json_object_get(r, "storage");
  if (cli_int(io, "requests"))
    say(p, "  object store: %lld requests (%lld retried), %lld bytes in and %lld out through %s, %lld bytes "
           "copied by the server\n", cli_int(io, "requests"), cli_int(io, "retries"), cli_int(io, "bytes_read"),
        cli_int(io, "bytes_written"), p->runner, cli_int(io, "bytes_copied_server"));
}

static void print_cleanup(const printer *p, const json_t *r) {
  say(p, "%s %lld files, %lld bytes (%lld versions retained, %lld unreferenced files too young)\n",
      flag(r, "dry_run") ? "would delete" : "deleted", cli_int(r, "files"), cli_int(r, "bytes"),
      cli_int(r, "versions_retained"), cli_int(r, "kept_too_young"));
  const char *kind;
  json_t *k;
  json_object_foreach(json_object_get(r, "by_kind"), kind, k)
    if (cli_int(k, "files")) say(p, "  %-12s %8lld files %14lld bytes\n", kind, cli_int(k, "files"), cli_int(k, "bytes"));
}

static void print_materialize(const printer *p, const json_t *r) {
  const char *table = cli_str(r, "table");
  bool managed = flag(r, "managed");
  if (flag(r, "dry_run") && managed) {
    say(p, "would replace %lld data files with a BRI in %s (version %lld) by ones with Managed descriptors%s\n",
        cli_int(r, "data_files"), table, cli_int(r, "read_version"),
        json_is_object(json_object_get(r, "managed_switch")) ? ", after switching the table to Managed blobs" : "");
  } else if (flag(r, "dry_run")) {
    say(p, "would replace %lld data files with a BRI in %s (version %lld): %lld files linked (%lld bytes), %lld "
           "copied (%lld bytes)\n", cli_int(r, "data_files"), table, cli_int(r, "read_version"), cli_int(r, "links"),
        cli_int(r, "bytes_linked"), cli_int(r, "copies"), cli_int(r, "bytes_copied"));
  } else if (!cli_int(r, "commits")) {
    say(p, "nothing to materialize in %s (version %lld has no blob reuse index)\n", table, cli_int(r, "read_version"));
  } else {
    long long switched = cli_int(json_object_get(r, "managed_switch"), "version");
    if (managed && switched)
      say(p, "switched %s to Managed blobs: version %lld (Lance 14 reads it, Lance 12 and 13 refuse it)\n", table,
          switched);
    say(p, "materialized %s: version %lld -> %lld (%lld commits), %lld data files replaced; ", table,
        cli_int(r, "read_version"), cli_int(r, "version"), cli_int(r, "commits"), cli_int(r, "data_files"));
    if (managed)
      printf("%lld values became Managed descriptors (%lld payload bytes, none read or copied)",
             cli_int(r, "values_adopted"), cli_int(r, "bytes_adopted"));
    else
      printf("%lld files linked (%lld bytes), %lld copied (%lld bytes)", cli_int(r, "links"),
             cli_int(r, "bytes_linked"), cli_int(r, "copies"), cli_int(r, "bytes_copied"));
    printf("; %.3f s\n", json_real_value(json_object_get(r, "seconds")));
  }
}

static void print_verify(const printer *p, const json_t *r) {
  long long problems = cli_int(r, "problems_total");
  say(p, "%s: %lld versions, %lld data files, %lld deletion files, %lld transaction files, %lld index dirs, %lld BRI "
         "targets, %lld blobs checked", cli_str(r, "table"), cli_int(r, "versions_checked"), cli_int(r, "data_files"),
      cli_int(r, "deletion_files"), cli_int(r, "transaction_files"), cli_int(r, "index_dirs"),
      cli_int(r, "bri_targets"), cli_int(r, "blobs"));
  if (cli_int(r, "blobs_unchecked")) printf(" (%lld external blobs not checkable)", cli_int(r, "blobs_unchecked"));
  printf(": %lld problem(s)\n", problems);
  if (!problems) say(p, "ok\n");
  else say(p, "problems%s:\n", problems > cli_int(r, "problems_listed") ? " (the first ones listed)" : "");
  size_t i;
  json_t *x;
  json_array_foreach(json_object_get(r, "problems"), i, x)
    say(p, "  v%lld %s: %s\n", cli_int(x, "version"), cli_str(x, "file"), cli_str(x, "problem"));
}

void cli_print_report(const char *kind, const json_t *report, const char *runner, const char *indent) {
  const printer p = {indent, runner};
  if (!strcmp(kind, "compact")) print_compact(&p, report);
  else if (!strcmp(kind, "cleanup")) print_cleanup(&p, report);
  else if (!strcmp(kind, "materialize")) print_materialize(&p, report);
  else if (!strcmp(kind, "verify")) print_verify(&p, report);
}
