/* commit.h: publishing a new table version.
 *
 * A commit writes the transaction file (not synced: the manifest embeds the
 * transaction), then the manifest under the table's naming scheme with
 * put-if-absent (bri_store_put_new: locally a staging file in _versions/
 * named .tmp_*, which Lance's cleanup also reclaims, fsynced and published
 * with link(2); on S3 a PUT with If-None-Match: *), which fails when
 * another writer already took that version: a conflict, never an overwrite
 * (docs/format/table.md section 4). On an object store
 * latest_version_hint.json is then replaced; a local table's is left to
 * Lance, which does not read it there (docs/format/table.md section 3).
 *
 * Building the manifest content (which fragments, which transaction) is the
 * caller's job; this module only stamps what every commit must carry:
 * version, timestamp, writer_version, transaction file name and uuid,
 * max_fragment_id, and feature flags derived from the content; puts the
 * fragments in id order as Lance does; and refuses (BRI_EINVAL, nothing
 * written) a manifest that breaks one of Lance's invariants (rules.h). */
#ifndef BRI_COMMIT_H
#define BRI_COMMIT_H

#include <stdint.h>

#include "lance/table/table.h"
#include "table.pb-c.h"
#include "transaction.pb-c.h"
#include "util/error.h"

#define BRI_WRITER_LIBRARY "brid"
#define BRI_WRITER_VERSION "0.1.0"

/* Gives every fragment whose id is 0 and that is listed in new_frags a fresh
 * id above max_fragment_id (the manifest's, or the highest existing id), and
 * raises max_fragment_id accordingly. */
void bri_manifest_assign_fragment_ids(Lance__Table__Manifest *m,
                                      Lance__Table__DataFragment *const *new_frags, size_t n);

/* Re-derives the feature flags Lance derives from content (deletion files,
 * stable row ids, table config, base paths, the Managed blobs opt-in,
 * non_reusable_field_ids with field 24) and the BRI bit, keeping
 * disable_transaction_file as it was and carrying the sticky bits
 * (flags.h: the paired ones in both words, non_reusable_field_ids in the
 * writer word). */
void bri_manifest_derive_flags(Lance__Table__Manifest *m);

/* Commits m as version `version` of table t. txn->read_version must be set;
 * txn->uuid is filled if empty. On success version is in t's version list
 * (added, not listed again: another writer's later commits are not) and
 * *txn_path (when txn_path is non-NULL) names the transaction file.
 * Any failure before the link (BRI_ETAKEN: that version exists already;
 * I/O errors) removes the transaction and staging files again (*txn_path
 * NULL): a failed commit leaves nothing behind but what a crash would, and
 * cleanup reclaims that. Once the link succeeded the version is published
 * and bri_commit returns 0 even when the directory fsync that follows fails:
 * callers roll back their outputs on error, which would delete files a
 * visible version references. That failure is left in err as a warning
 * (err->code BRI_EIO, the message says the version may not survive a power
 * loss); err->code is otherwise not touched on success.
 * The transaction file is written without an fsync: the manifest embeds
 * the same transaction, durably (docs/format/table.md 4).
 * Failpoints (util/failpoint.h): commit.txn_written,
 * commit.after_txn_written, commit.before_manifest_fsync,
 * commit.after_manifest_fsync, commit.before_link, commit.after_link. */
int bri_commit(bri_table *t, Lance__Table__Manifest *m, Lance__Table__Transaction *txn,
               const Lance__Table__IndexSection *idx, uint64_t version, char **txn_path,
               bri_error *err);

#endif
