/* cmd_compact.c: `brictl compact TABLE [--strategy auto|bri|link|copy|managed] [--dry-run]
 * [--target-rows N] [--target-bytes SIZE] [--repack-threshold F]`: compacts a table in-process
 * (lib/compact) and reports fragments before and after, rows, bytes written
 * and reused, and the time taken. --dry-run prints the plan: bins, rows, and
 * the payload bytes each would reuse, copy or repack. With --wait, --daemon
 * or --socket, brid runs it (cmd_submit.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bri/compact.h"
#include "bri/ops.h"
#include "cli.h"

static const cli_opt OPTS[] = {
    {.name = "strategy", .type = CLI_CHOICE, .choices = "auto|bri|link|copy|managed", .param = "strategy",
     .help = "how blob payloads are kept: auto links where the filesystem allows, else copies (a table "
             "with a Blob Reuse Index stays bri), link hard-links the sidecars, copy copies them, bri records a "
             "Blob Reuse Index (no payload byte written; stock Lance refuses the table until materialize), "
             "managed switches the table to Lance 14's Managed blobs and adopts the sidecars in place (no "
             "payload byte written; Lance 14 reads the table, Lance 12 and 13 refuse it from then on)",
     .def_note = "auto; through brid, the table's policy"},
    {.name = "dry-run", .type = CLI_FLAG, .param = "dry_run", .help = "print the plan and change nothing"},
    {.name = "target-rows", .type = CLI_UINT, .value = "N", .min = 1, .def = "1048576",
     .param = "target_rows_per_fragment",
     .help = "fragments with fewer rows are merged with their neighbours (the table's "
             "lance.compaction.target_rows_per_fragment wins)"},
    {.name = "target-bytes", .type = CLI_SIZE, .value = "SIZE", .min = 1, .param = "target_fragment_bytes",
     .help = "fragments this size or larger are left alone unless rows were deleted: their data files, plus "
             "under copy the payload it would copy; smaller ones merge up to it (256M, 1G)",
     .def_note = "1G; through brid, the table's policy"},
    {.name = "repack-threshold", .type = CLI_NUMBER, .value = "F", .min = 0, .max = 1, .def = "0.3",
     .flags = CLI_OFFLINE_ONLY,
     .help = "blob packs whose live share is below F are copied compactly instead of reused"},
    CLI_SUBMIT_OPTS,
    {0},
};

/* One line per index: how the compaction keeps it answering (compact/fri.h),
 * then the fragment reuse index version the commit appended, if any. */
static void print_indices(json_t *plan) {
  size_t i;
  json_t *x;
  json_array_foreach(json_object_get(plan, "indices"), i, x) {
    const char *how = json_string_value(json_object_get(x, "carried"));
    long long held = (long long)json_integer_value(json_object_get(x, "holds"));
    const char *text = !strcmp(how, "row_ids") ? "its bitmap follows the rows (stable row ids)"
                       : !strcmp(how, "dropped") ? "rewritten fragments leave its coverage and are scanned"
                       : !strcmp(how, "fragment_reuse_index") ? "carried by the fragment reuse index"
                                                              : "not carried (brid does not know its type)";
    printf("  index %s (%s): %s", json_string_value(json_object_get(x, "name")),
           json_string_value(json_object_get(x, "type")), text);
    if (held) printf("; %lld fragments it covers are left alone", held);
    printf("\n");
  }
  json_t *fri = json_object_get(json_object_get(plan, "index_update"), "fragment_reuse_index");
  if (fri)
    printf("  fragment reuse index: a version for %lld groups (dataset version %lld), %lld kept, %lld "
           "trimmed%s\n",
           (long long)json_integer_value(json_object_get(fri, "groups")),
           (long long)json_integer_value(json_object_get(fri, "dataset_version")),
           (long long)json_integer_value(json_object_get(fri, "versions")),
           (long long)json_integer_value(json_object_get(fri, "trimmed")),
           json_is_true(json_object_get(fri, "external")) ? ", details in _indices/" : "");
}

static int compact_offline(const cli_args *a) {
  bri_compact_request q;
  bri_compact_request_default(&q);
  const char *root = a->pos[0];
  bool as_json = cli_flag(a, "json");
  bri_error err;
  if (cli_given(a, "strategy") && bri_strategy_parse(cli_text(a, "strategy"), &q.strategy, &err))
    return cli_usage(a, "%s", err.msg);
  q.dry_run = cli_flag(a, "dry-run");
  q.options.target_rows_per_fragment = cli_uint(a, "target-rows");
  if (cli_given(a, "target-bytes")) q.options.target_fragment_bytes = cli_uint(a, "target-bytes");
  q.options.repack_threshold = cli_number(a, "repack-threshold");
  bri_compact_report r;
  int rc = bri_compact_table(root, &q, NULL, &r, &err);
  if (rc) {
    json_decref(r.plan);
    return cli_fail(&err);
  }
  if (as_json) {
    json_t *j = bri_compact_report_json(root, &q, &r);
    cli_print_json(j);
    json_decref(j);
  } else if (q.dry_run) {
    printf("plan for %s at version %llu (strategy %s): %llu bins, %llu of %llu fragments\n", root,
           (unsigned long long)r.read_version, bri_strategy_name(q.strategy),
           (unsigned long long)r.bins, (unsigned long long)r.fragments_rewritten,
           (unsigned long long)r.fragments_before);
    size_t i;
    json_t *b;
    json_array_foreach(json_object_get(r.plan, "bins"), i, b) {
      json_t *p = json_object_get(b, "payload");
      printf("  bin %zu: %zu fragments, %lld rows (%lld deleted), %lld data bytes, payload inline %lld packed %lld dedicated %lld%s\n",
             i, json_array_size(json_object_get(b, "fragments")),
             (long long)json_integer_value(json_object_get(b, "rows")),
             (long long)json_integer_value(json_object_get(b, "deleted_rows")),
             (long long)json_integer_value(json_object_get(b, "data_bytes")),
             (long long)json_integer_value(json_object_get(p, "inline")),
             (long long)json_integer_value(json_object_get(p, "packed")),
             (long long)json_integer_value(json_object_get(p, "dedicated")),
             json_is_true(json_object_get(p, "repacks_low_utilization_packs")) ? " (repacks)" : "");
    }
    cli_print_held(r.plan);
    print_indices(r.plan);
    if (r.managed_switch)
      printf("  switches the table to Managed blobs first (Lance 12 and 13 refuse it from then on)\n");
  } else if (r.version == 0) {
    printf("nothing to compact in %s (version %llu, %llu fragments)\n", root,
           (unsigned long long)r.read_version, (unsigned long long)r.fragments_before);
    cli_print_held(r.plan);
  } else if (r.version == r.managed_switch_version) {
    printf("switched %s to Managed blobs: version %llu (nothing to compact; Lance 14 reads it, Lance 12 "
           "and 13 refuse it)\n", root, (unsigned long long)r.version);
  } else {
    json_t *j = bri_compact_report_json(root, &q, &r);
    if (r.managed_switch_version)
      printf("switched %s to Managed blobs: version %llu (Lance 14 reads it, Lance 12 and 13 refuse it)\n",
             root, (unsigned long long)r.managed_switch_version);
    printf("compacted %s: version %llu -> %llu, fragments %llu -> %llu, %llu rows (strategy %s)\n", root,
           (unsigned long long)r.read_version, (unsigned long long)r.version,
           (unsigned long long)r.fragments_before, (unsigned long long)r.fragments_after,
           (unsigned long long)r.rows, json_string_value(json_object_get(j, "strategy_used")));
    json_decref(j);
    printf("  wrote %llu bytes of data files, %llu bytes of payload (%llu inline); reused %llu "
           "payload bytes in place (%llu links); %.3f s\n",
           (unsigned long long)r.data_bytes_written, (unsigned long long)r.payload_bytes_copied,
           (unsigned long long)r.inline_bytes_copied, (unsigned long long)r.payload_bytes_reused,
           (unsigned long long)r.links, r.seconds);
    if (r.managed_kept || r.managed_adopted)
      printf("  Managed blobs: %llu descriptors kept, %llu values adopted in place (%llu payload bytes, "
             "none read)\n",
             (unsigned long long)r.managed_kept, (unsigned long long)r.managed_adopted,
             (unsigned long long)r.payload_bytes_reused);
    if (r.managed_repacked)
      printf("  repacked %llu values of %llu packs below the repack threshold into new _blobs/ objects "
             "(%llu bytes)\n",
             (unsigned long long)r.managed_repacked, (unsigned long long)r.packs_below_threshold,
             (unsigned long long)r.payload_bytes_copied);
    cli_print_held(r.plan);
    if (r.deletions_carried)
      printf("  carried %llu rows deleted meanwhile by other writers over to the new fragments\n",
             (unsigned long long)r.deletions_carried);
    print_indices(r.plan);
  }
  if (!as_json && r.storage.requests) {
    printf("  object store: %llu requests (%llu retried), %llu bytes in and %llu out through brictl, "
           "%llu bytes copied by the server\n",
           (unsigned long long)r.storage.requests, (unsigned long long)r.storage.retries,
           (unsigned long long)r.storage.bytes_read, (unsigned long long)r.storage.bytes_written,
           (unsigned long long)r.storage.bytes_copied_server);
  }
  json_decref(r.plan);
  return CLI_OK;
}

static int cmd_compact(const cli_args *a) { return cli_table_job(a, !cli_flag(a, "dry-run"), compact_offline); }

const cli_cmd CMD_COMPACT = {
    .name = "compact",
    .args = "TABLE",
    .summary = "merge small fragments, keeping blob payloads in place (--dry-run plans)",
    .about = "Merges TABLE's small fragments by Lance's rules (adjacent fragments below --target-rows, "
             "fragments with many deleted rows) and commits one Rewrite version. Pages are copied "
             "verbatim where possible; Blob v2 payloads stay where they are (--strategy). When brid's "
             "socket answers, brid does the work and brictl follows it; with --offline, or when no brid "
             "answers, brictl does it itself under the table's lock.",
    .opts = OPTS,
    .flags = CLI_CMD_OFFLINE | CLI_CMD_DAEMON | CLI_CMD_JSON,
    .run = cmd_compact,
};
