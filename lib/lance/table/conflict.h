/* conflict.h: Lance's conflict rules for the transactions brid commits.
 *
 * A commit planned on read_version finds other versions committed since. For
 * each of them, Lance's resolver (conflict_resolver.rs, check_txn) decides
 * from the two transactions whether ours can still be committed on top, or
 * must give way (retry from a fresh plan). brid commits two operations, and
 * this module is the one place their rules live:
 *   Rewrite          (compaction): compatible with what leaves its old
 *                    fragments alone; a Delete or Update that touched them
 *                    gives way, as in Lance, unless the caller can carry the
 *                    deletions over (BRI_CONFLICT_CARRY_DELETIONS);
 *   DataReplacement  (materialize): Lance 12's rules by fragment and field.
 * The rules are Lance 12's (the 2026 resolver: DataOverlay, Update.update_mode,
 * preserves_nullability); where the two operations answer differently (an
 * UpdateMemWalState is compatible with a Rewrite, incompatible with a
 * DataReplacement) that is Lance's table, not a drift. Operations brid does
 * not know (a DataOverlay, anything newer) always conflict: nothing is
 * committed over what nobody analysed.
 *
 * Carrying deletions (REALTABLES 3) is brid's extension: Lance gives way to a
 * concurrent Delete or Update of a compacted fragment and optimize() starts
 * over. A Rewrite may instead commit with those deletions translated onto
 * its new fragments, when they are the only change: the touched fragments'
 * data files are what ours read (no RewriteColumns update, no replaced
 * file), only their deletion vectors grew or they were removed whole. */
#ifndef BRI_CONFLICT_H
#define BRI_CONFLICT_H

#include <stdint.h>

#include "table.pb-c.h"
#include "transaction.pb-c.h"
#include "util/error.h"

/* Flags of bri_conflict_check. */
#define BRI_CONFLICT_CARRY_DELETIONS 1u /* ours is a Rewrite that can carry deletions over */

/* bri_conflict_check's answer when ours can commit once the deletions the
 * other transaction made in our old fragments are carried over. */
#define BRI_CONFLICT_CARRY 1

/* Checks ours (a Rewrite or DataReplacement, as it would be committed; its
 * read_version is `read`'s version) against theirs, committed as version
 * their_version since. read is the manifest ours was planned on (the touched
 * fragments' data files are compared with it). Returns 0 when compatible,
 * BRI_CONFLICT_CARRY (only with BRI_CONFLICT_CARRY_DELETIONS) when
 * compatible once deletions are carried, and BRI_ECONFLICT with a message
 * naming the version, what it did and the fragment it touched otherwise. */
int bri_conflict_check(const Lance__Table__Transaction *ours, const Lance__Table__Manifest *read,
                       unsigned flags, const Lance__Table__Transaction *theirs,
                       uint64_t their_version, bri_error *err);

#endif
