/* carry.h: carrying deletions committed during a compaction over to its new
 * fragments (REALTABLES 3).
 *
 * A compaction writes, for each group, the rows of its old fragments that
 * were live at read_version, in order (deleted rows dropped), into the
 * group's new fragments, filled one after another. While it ran, a Delete or
 * the delete half of an Update (RewriteRows: moved rows get a deletion vector
 * in place) may have deleted some of those rows; Lance would give way. Since
 * each old row's new position is known (old fragment order, rank among the
 * live rows, new fragments' physical_rows), those deletions are translated
 * onto the new fragments instead: one new deletion file per new fragment
 * that gets any, in Lance's format (lance/table/deletion.h: a Roaring bitmap,
 * _deletions/{fragment id}-{latest version}-{random id}.bin). Row id and
 * version sequences stay as they are: a Delete never changes them, and the
 * deletion vector is what hides a row under stable row ids too.
 *
 * Only deletions can be carried: an old fragment in the latest version must
 * have the data files it had at read_version and a deletion vector that
 * contains the old one, or be gone (every row deleted). The conflict rules
 * (lance/table/conflict.h) decided that no other change touched it; this
 * module checks the fragments themselves again, as a second line of defence.
 * A new fragment whose rows would all be deleted is not committed either
 * (Lance removes such fragments): the compaction gives way. */
#ifndef BRI_CARRY_H
#define BRI_CARRY_H

#include "compact/rewrite.h"
#include "lance/table/manifest.h"
#include "lance/table/table.h"
#include "util/error.h"
#include "storage/outputs.h"

/* For every group of rw: compares each old fragment in base (read_version)
 * and latest, translates the rows deleted since onto the group's new
 * fragments (which must already carry their ids) and gives each new fragment
 * that gets deletions a deletion file, named in its deletion_file (written
 * beneath t's root, each path recorded in out first). BRI_ECONFLICT when
 * something other than deletions changed an old fragment, or a new fragment
 * would lose every row; BRI_EINVAL when a group's new fragments do not hold
 * exactly its live rows. *carried counts the rows carried over. */
int bri_carry_deletions(bri_table *t, const bri_manifest *base, const bri_manifest *latest,
                        const bri_rewrite *rw, bri_outputs *out, uint64_t *carried, bri_error *err);

/* Takes the deletion files bri_carry_deletions named off rw's new fragments
 * (before another attempt, or when the commit failed). */
void bri_carry_forget(const bri_rewrite *rw);

#endif
