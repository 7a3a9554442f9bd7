/* materialize.h: turning a table that carries Blob Reuse Indexes back into
 * one that stock Lance reads (docs/format/bri.md 10).
 *
 * A DataFile's BRI may not change while its path stays the same (docs/format/bri.md
 * rule 9), so every DataFile that carries a BRI is replaced by a new one:
 * a byte-identical data file under a fresh Lance-style stem (hard link, or a
 * copy across filesystems; Inline descriptor positions stay valid because
 * the bytes are the same), and a sidecar directory of its own holding every
 * blob the file references under its local id: the BRI targets and the files
 * of the old file's own directory. The replacement is committed as a Lance
 * DataReplacement transaction (fragment ids, row ids and deletion files do
 * not change, so indices stay valid), one per distinct field list as Lance
 * requires, and the BRI flag bits disappear with the last BRI (bri_commit
 * derives them from content). Files this run created are removed again if
 * it fails; nothing that existed before is ever modified or deleted. No
 * directory it reads from or writes into may be a symbolic link (data/, the
 * old sidecar directory, a BRI source directory), and every sidecar must be
 * a regular file: a link could lead outside the table (BRI_ECORRUPT).
 * With managed (materialize --managed) the table is switched to Managed
 * blobs first (compact/optin.h: one UpdateConfig version), then each
 * DataFile that carries a BRI is replaced by a new data file of the same
 * rows whose Packed and Dedicated descriptors name the sidecars they
 * resolve to as Managed ones (kind 4, compact/managed.h), with the same
 * DataReplacement commits: no sidecar is linked or copied, no payload byte
 * read, and Lance 14 reads the result (Lance 12 and 13 refuse it by flag).
 * Failpoints: materialize.after_place, materialize.before_commit. */
#ifndef BRI_MATERIALIZE_H
#define BRI_MATERIALIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "compact/blobout.h"
#include "util/error.h"
#include "util/hooks.h"

typedef struct bri_materialize_options {
  bool dry_run;              /* count what would be linked or copied; create nothing */
  bool no_links;             /* always copy (never share inodes with the old files) */
  bool managed;              /* Managed descriptors instead of placed sidecars (above) */
  int max_attempts;          /* commit attempts per group (lost races, conflicts); 0: 20 */
} bri_materialize_options;

typedef struct bri_materialize_report {
  uint64_t read_version;     /* the version planned against first */
  uint64_t version;          /* the last version committed (0: none) */
  uint64_t commits;
  uint64_t data_files;       /* DataFiles replaced */
  uint64_t sidecars;         /* sidecar files placed in the new directories */
  uint64_t links, copies;    /* how files were placed */
  uint64_t bytes_linked, bytes_copied;
  uint64_t bri_files_left;   /* DataFiles with a BRI in the final version (0 on success) */
  uint64_t values_adopted;   /* managed: values that became Managed descriptors */
  uint64_t bytes_adopted;    /* their payload bytes, left where they are */
  bool managed_switch;       /* managed: the table was (a dry run: would be) switched */
  uint64_t managed_switch_version; /* the version that switched it (0: none committed) */
  double seconds;
} bri_materialize_report;

void bri_materialize_options_default(bri_materialize_options *o);

/* Materializes every BRI of the latest version of the table at root. A
 * table without BRI is left alone (report says 0 commits). o may be NULL
 * (defaults). hooks (util/hooks.h, may be NULL): journal, told every path
 * before it is created; cancelled, polled before each file is placed: true
 * stops with BRI_ECANCELLED, removing what the uncommitted round placed.
 * Errors:
 * BRI_ECONFLICT when concurrent writers kept changing the replaced
 * fragments (outputs removed), BRI_ECORRUPT when a BRI target is missing,
 * and the usual read/write errors. */
int bri_materialize_table(const char *root, const bri_materialize_options *o,
                          const bri_hooks *hooks, bri_materialize_report *rep, bri_error *err);

#endif
