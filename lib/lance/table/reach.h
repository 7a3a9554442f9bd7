/* reach.h: which files one manifest references: the one walk that keeps
 * deletion safe. Cleanup (what no retained version reaches may go), brid's
 * crash recovery (a journaled output a version reaches must stay) and the
 * reliability checks (no orphan is left) all ask it, so that they cannot
 * disagree about what a version needs (docs/format/table.md 13, docs/format/bri.md 7).
 *
 * For every DataFragment: each data file, its own sidecar directory (whole:
 * the sidecars of a data file live in data_dir/{stem}/, docs/format/blob.md 2),
 * each sidecar its Blob Reuse Index names and the directory holding it
 * (which must not be removed while the file is needed), and the deletion
 * file; then the transaction file and every index directory. Paths are
 * full paths as bri_table resolves them (base paths included). */
#ifndef BRI_REACH_H
#define BRI_REACH_H

#include "lance/table/manifest.h"
#include "lance/table/table.h"
#include "util/error.h"

typedef enum bri_reach_kind {
  BRI_REACH_DATA,        /* a data file */
  BRI_REACH_SIDECAR_DIR, /* a data file's own sidecar directory, whole */
  BRI_REACH_BRI_SIDECAR, /* a sidecar a BRI names (exactly that file) */
  BRI_REACH_BRI_DIR,     /* the directory holding such a sidecar */
  BRI_REACH_DELETION,    /* a deletion file */
  BRI_REACH_TRANSACTION, /* the version's transaction file */
  BRI_REACH_INDEX_DIR,   /* an index directory, whole */
  BRI_REACH_MANAGED,     /* an object a Managed blob descriptor names (blob/managed.h,
                            which reads data files to find them: this walk does not) */
} bri_reach_kind;

const char *bri_reach_kind_name(bri_reach_kind k);

/* Called once per reference (a BRI_DIR once per BRI sidecar in it); a
 * non-zero return stops the walk and is returned (fill err). */
typedef int (*bri_reach_fn)(void *user, bri_reach_kind kind, const char *path, bri_error *err);

/* Walks the references of manifest bm of table t. A path that cannot be
 * resolved (a base id the manifest does not define, a malformed BRI) is
 * an error: a caller deciding what to delete must not go on without it. */
int bri_reach_manifest(const bri_table *t, const bri_manifest *bm, bri_reach_fn fn, void *user,
                       bri_error *err);

#endif
