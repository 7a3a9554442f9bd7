/* clone.h: cloning one version of a table into a new table root.
 *
 * Shallow (docs/format/bri.md 9, mirroring Lance's Manifest::shallow_clone):
 * the clone's only version has the source's version number and content;
 * the source root is added to base_paths as a dataset-root base (id = the
 * highest existing base id + 1, or 0), and every DataFile, deletion file and
 * index without a base_id gets that id, so they keep resolving into the
 * source. A BRI is copied unchanged: its sources without base_id inherit the
 * DataFile's new base and still resolve into the source; no byte is copied.
 * The transaction is a Lance Clone{is_shallow: true}.
 *
 * Deep: every data file, deletion file and index directory, every data
 * file's own sidecar directory, and each distinct BRI target is copied into
 * the clone; each distinct (effective base, blob_dir) of the BRI gets a
 * directory of its own in the clone's data/, and the BRI is rewritten to
 * those directories without base_id, so the clone depends on nothing
 * outside its root (External blobs excepted: they are references by
 * design). base_paths are kept, for External descriptors that name them.
 *
 * The destination must not exist or be an empty directory; on failure
 * everything the clone created is removed. A deep clone copies regular files
 * only and refuses a source directory it would read that is a symbolic link
 * (data/, _deletions/, _indices/, a sidecar or BRI source directory): a link
 * could lead outside the source table. */
#ifndef BRI_CLONE_H
#define BRI_CLONE_H

#include <stdbool.h>
#include <stdint.h>

#include "compact/blobout.h"
#include "lance/table/table.h"
#include "util/error.h"
#include "util/hooks.h"

typedef struct bri_clone_options {
  bool deep;
  uint64_t version;          /* 0: latest (ignored when tag is set) */
  const char *tag;           /* clone the version this tag names (recorded as ref_name) */
} bri_clone_options;

typedef struct bri_clone_report {
  uint64_t version;          /* the source version, which is also the clone's */
  uint32_t base_id;          /* shallow: the base id the source got */
  uint64_t data_files, deletion_files, index_dirs;
  uint64_t sidecars;         /* deep: own sidecar files copied */
  uint64_t bri_targets;      /* deep: BRI target files copied */
  uint64_t files_copied, bytes_copied;
  double seconds;
} bri_clone_report;

/* Clones a version of src into dst (absent, or an empty directory). o may
 * be NULL (shallow, latest). hooks (util/hooks.h, may be NULL): journal,
 * told every path before it is created. */
int bri_clone_table(const char *src, const char *dst, const bri_clone_options *o,
                    const bri_hooks *hooks, bri_clone_report *rep, bri_error *err);


#endif
