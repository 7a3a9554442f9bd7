/* foreign.h: fields brid does not know, in the messages it writes again.
 *
 * protobuf-c keeps the fields of a message that its descriptor lacks in
 * base.unknown_fields and packs them again, so a message brid copies (the
 * manifest it builds on, a fragment it leaves alone, an index whose bitmap
 * it replaces) carries a newer Lance's fields forward unchanged. A message
 * brid builds fresh (a compaction's output fragments, its transactions)
 * has none. These checks sit at
 * those places and refuse, naming the file, the message type and the field
 * number, where carrying would be impossible or wrong. The rule for each
 * message and the reasons are in docs/format/compatibility.md. */
#ifndef BRI_FOREIGN_H
#define BRI_FOREIGN_H

#include <stdint.h>

#include "table.pb-c.h"
#include "transaction.pb-c.h"
#include "util/error.h"

/* A manifest with no fragments but a length-delimited field brid does not
 * know may keep its fragments elsewhere (Lance's fragment tree): acting on
 * it as an empty table would compact nothing and clean up every data file.
 * BRI_EUNSUPPORTED, naming the field. */
int bri_foreign_check_tree(const Lance__Table__Manifest *m, const char *path, bri_error *err);

/* A fragment a compaction removes (its rows move into fresh fragments):
 * an unknown field of the DataFragment, of one of its DataFiles (but the
 * BRI and the upstream size hint, both field 8) or of its DeletionFile
 * would be lost with it. BRI_EUNSUPPORTED. */
int bri_foreign_check_removed(const Lance__Table__DataFragment *f, const char *path,
                              bri_error *err);

/* The fragment reuse index entry of idx, which a compaction replaces by a
 * fresh one: an unknown field of the IndexMetadata, of its details or of
 * their inline content (Lance's tagged transitions) would be dropped.
 * BRI_EUNSUPPORTED. */
int bri_foreign_check_fri(const Lance__Table__IndexSection *idx, const char *path, bri_error *err);

/* A clone gives every file a new base or a new copy, and cleanup deletes
 * what no retained version names: a length-delimited unknown field of the
 * Manifest, a DataFragment, a DataFile (but the BRI), a DeletionFile or an
 * IndexMetadata may name files that neither would see. BRI_EUNSUPPORTED,
 * the reason worded for the use. */
typedef enum bri_foreign_use { BRI_FOREIGN_CLONE, BRI_FOREIGN_CLEANUP } bri_foreign_use;
int bri_foreign_check_files(const Lance__Table__Manifest *m, const Lance__Table__IndexSection *idx,
                            bri_foreign_use use, const char *path, bri_error *err);

/* m is about to be laid out afresh (bri_commit): an unknown varint field of
 * the Manifest equal to the offset of the transaction or index section of
 * the file it was read from is a pointer into that file that the new
 * layout would leave stale (Lance 14 moved the transaction pointer to a
 * field brid does not know). BRI_EUNSUPPORTED. */
int bri_foreign_check_pointers(const Lance__Table__Manifest *m, const char *path, bri_error *err);

/* Another writer's transaction brid must judge before a rebase: an unknown
 * field of the Transaction itself may change what it did. BRI_EUNSUPPORTED. */
int bri_foreign_check_txn(const Lance__Table__Transaction *t, const char *path, bri_error *err);

#endif
