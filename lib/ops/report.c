/* report.c: operation reports as JSON (see report.h). Each function is the
 * only place its fields are named, so brictl's --json and brid's job
 * results cannot drift apart. */
#include "ops/report.h"

#include "util/duration.h"

/* A duration setting as the configuration writes it. */
static json_t *duration(int64_t seconds) {
  char buf[48];
  bri_duration_format(seconds, buf, sizeof buf);
  return json_string(buf);
}

/* What auto ran as: bri for a table that carried a BRI, else link, or copy
 * once the filesystem refused a link. */
static const char *strategy_used(const bri_compact_report *r) {
  if (r->strategy != BRI_STRATEGY_AUTO) return bri_strategy_name(r->strategy);
  return r->links_refused ? "copy" : "link";
}

/* The requests of a storage block by kind ("get": n, ...; kinds never
 * made left out), every answer class together. */
static json_t *requests_by_kind(const bri_store_stats *io) {
  json_t *o = json_object();
  for (int k = 0; k < BRI_REQ_KINDS; k++) {
    uint64_t n = 0;
    for (int c = 0; c < BRI_REQ_CLASSES; c++) n += io->by_kind[k][c];
    if (n) json_object_set_new(o, bri_store_req_name(k), json_integer((json_int_t)n));
  }
  return o;
}

/* A report's storage block: what went over the wire to the table's stores. */
static json_t *storage(const bri_store_stats *io) {
  return json_pack("{s:I, s:o, s:I, s:I, s:I, s:I}", "requests", (json_int_t)io->requests, "requests_by_kind",
                   requests_by_kind(io), "retries", (json_int_t)io->retries, "bytes_read",
                   (json_int_t)io->bytes_read, "bytes_written", (json_int_t)io->bytes_written,
                   "bytes_copied_server", (json_int_t)io->bytes_copied_server);
}

json_t *bri_compact_report_json(const char *root, const bri_compact_request *q, const bri_compact_report *r) {
  json_t *sw = r->managed_switch ? json_pack("{s:I}", "version", (json_int_t)r->managed_switch_version) : json_null();
  return json_pack("{s:s, s:s, s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
                   "s:I, s:I, s:I, s:I, s:o, s:f, s:o, s:O}",
                   "table", root, "strategy", bri_strategy_name(q->strategy), "strategy_used", strategy_used(r),
                   "dry_run", q->dry_run, "read_version", (json_int_t)r->read_version, "version",
                   (json_int_t)r->version, "fragments_before", (json_int_t)r->fragments_before, "fragments_after",
                   (json_int_t)r->fragments_after, "bins", (json_int_t)r->bins, "fragments_rewritten",
                   (json_int_t)r->fragments_rewritten, "fragments_page_copied", (json_int_t)r->fragments_page_copied,
                   "rows", (json_int_t)r->rows, "deletions_carried", (json_int_t)r->deletions_carried,
                   "data_bytes_written", (json_int_t)r->data_bytes_written,
                   "payload_bytes_copied", (json_int_t)r->payload_bytes_copied, "inline_bytes_copied",
                   (json_int_t)r->inline_bytes_copied, "payload_bytes_reused", (json_int_t)r->payload_bytes_reused,
                   "links", (json_int_t)r->links, "managed_kept", (json_int_t)r->managed_kept, "managed_adopted",
                   (json_int_t)r->managed_adopted, "managed_repacked", (json_int_t)r->managed_repacked,
                   "packs_below_threshold", (json_int_t)r->packs_below_threshold,
                   "managed_switch", sw, "seconds", r->seconds, "storage", storage(&r->storage), "plan", r->plan ? r->plan : json_null());
}

json_t *bri_cleanup_report_json(const char *root, const bri_cleanup_policy *p, const bri_cleanup_stats *st) {
  json_t *kinds = json_object();
  uint64_t files = 0, bytes = 0;
  for (int k = 0; k < BRI_CLEAN_KINDS; k++) {
    json_object_set_new(kinds, bri_cleanup_kind_name(k),
                        json_pack("{s:I, s:I}", "files", (json_int_t)st->files[k], "bytes", (json_int_t)st->bytes[k]));
    files += st->files[k], bytes += st->bytes[k];
  }
  return json_pack("{s:s, s:b, s:o, s:I, s:o, s:I, s:I, s:I, s:I, s:I, s:o, s:o}", "table", root, "dry_run",
                   p->dry_run, "older_than", duration(p->older_than_sec), "retain_versions",
                   (json_int_t)p->retain_versions, "grace", duration(p->grace_sec), "versions_retained",
                   (json_int_t)st->versions_retained, "files", (json_int_t)files, "bytes", (json_int_t)bytes,
                   "dirs_removed", (json_int_t)st->dirs_removed, "kept_too_young", (json_int_t)st->kept_too_young,
                   "by_kind", kinds, "storage", storage(&st->storage));
}

json_t *bri_materialize_report_json(const char *root, const bri_materialize_options *o,
                                    const bri_materialize_report *r) {
  json_t *sw = r->managed_switch ? json_pack("{s:I}", "version", (json_int_t)r->managed_switch_version) : json_null();
  return json_pack("{s:s, s:b, s:b, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:f}", "table",
                   root, "dry_run", o->dry_run, "no_links", o->no_links, "managed", o->managed, "read_version",
                   (json_int_t)r->read_version, "version",
                   (json_int_t)r->version, "commits", (json_int_t)r->commits, "data_files", (json_int_t)r->data_files,
                   "sidecars", (json_int_t)r->sidecars, "links", (json_int_t)r->links, "copies",
                   (json_int_t)r->copies, "bytes_linked", (json_int_t)r->bytes_linked, "bytes_copied",
                   (json_int_t)r->bytes_copied, "bri_files_left", (json_int_t)r->bri_files_left, "values_adopted",
                   (json_int_t)r->values_adopted, "bytes_adopted", (json_int_t)r->bytes_adopted, "managed_switch", sw,
                   "seconds", r->seconds);
}

json_t *bri_verify_report_json(const char *root, const bri_verify_options *o, const bri_verify_report *r) {
  json_t *list = json_array();
  for (size_t i = 0; i < r->n_problems; i++)
    json_array_append_new(list, json_pack("{s:I, s:s, s:s, s:s?}", "version", (json_int_t)r->problems[i].version,
                                          "file", r->problems[i].file ? r->problems[i].file : "", "problem",
                                          r->problems[i].what ? r->problems[i].what : "", "rule",
                                          r->problems[i].rule));
  return json_pack("{s:s, s:b, s:b, s:I, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}", "table",
                   root, "ok", r->problems_total == 0, "all_versions", o->all_versions, "version",
                   (json_int_t)o->version, "skip_blobs", o->skip_blobs, "versions_checked",
                   (json_int_t)r->versions_checked, "data_files", (json_int_t)r->data_files, "deletion_files",
                   (json_int_t)r->deletion_files, "transaction_files", (json_int_t)r->transaction_files, "index_dirs",
                   (json_int_t)r->index_dirs, "bri_targets", (json_int_t)r->bri_targets, "fragments",
                   (json_int_t)r->fragments, "blobs", (json_int_t)r->blobs, "blobs_unchecked",
                   (json_int_t)r->blobs_unchecked, "problems_total", (json_int_t)r->problems_total,
                   "problems_listed", (json_int_t)r->n_problems, "problems", list);
}
