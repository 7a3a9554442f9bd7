/* report.h: the JSON form of each operation's report: a compaction, a
 * cleanup, a materialization, a verification. brictl prints these objects
 * for --json when it runs an operation itself, and brid stores the same
 * objects as the result of the job that ran it, so one operation reads the
 * same whichever program ran it.
 *
 * Conventions (the API documentation repeats them): sizes are bytes,
 * versions and counts integers, "seconds" the wall time the operation took;
 * a setting the operation ran with is echoed as the configuration writes
 * it (durations "7d", "1h30m"). Every object starts with "table" (the root
 * as given). */
#ifndef BRI_OPS_REPORT_H
#define BRI_OPS_REPORT_H

#include <jansson.h>

#include "compact/execute.h"
#include "ops/cleanup.h"
#include "ops/materialize.h"
#include "ops/verify.h"

/* {table, strategy (requested), strategy_used (bri, link, copy or managed),
 * dry_run, read_version, version (0: nothing committed), fragments_before/_after,
 * bins, fragments_rewritten, fragments_page_copied, rows, deletions_carried,
 * data_bytes_written, payload_bytes_copied, inline_bytes_copied,
 * payload_bytes_reused, links, managed_kept, managed_adopted, managed_repacked,
 * packs_below_threshold, managed_switch (null, or {version}: the switch to
 * Managed blobs, version 0 in a dry run), seconds, storage, plan} */
json_t *bri_compact_report_json(const char *root, const bri_compact_request *q, const bri_compact_report *r);

/* {table, dry_run, older_than, retain_versions, grace, versions_retained,
 * files, bytes, dirs_removed, kept_too_young, by_kind: {kind: {files, bytes}}} */
json_t *bri_cleanup_report_json(const char *root, const bri_cleanup_policy *p, const bri_cleanup_stats *st);

/* {table, dry_run, no_links, managed, read_version, version, commits,
 * data_files, sidecars, links, copies, bytes_linked, bytes_copied,
 * bri_files_left, values_adopted, bytes_adopted, managed_switch (null, or
 * {version}: 0 in a dry run), seconds} */
json_t *bri_materialize_report_json(const char *root, const bri_materialize_options *o,
                                    const bri_materialize_report *r);

/* {table, ok, all_versions, version (0: the latest), skip_blobs,
 * versions_checked, data_files, deletion_files, transaction_files,
 * index_dirs, bri_targets, fragments, blobs, blobs_unchecked,
 * problems_total, problems_listed, problems: [{version, file, problem}]} */
json_t *bri_verify_report_json(const char *root, const bri_verify_options *o, const bri_verify_report *r);

#endif
