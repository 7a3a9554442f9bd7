/* managed.h: the objects a version's Managed blob descriptors name.
 *
 * A table whose blobs are Managed (Lance 14; docs/format/blob.md 8) keeps
 * payloads in objects that no data file owns by name: packs and dedicated
 * files under _blobs/, and the old sidecars data/<stem>/<bits>.blob that a
 * compaction adopted in place. Only the descriptors say which are in use,
 * so finding them means reading the blob columns of every data file a
 * version holds (the visible rows, as Lance's own cleanup reads them).
 * Cleanup keeps every object a retained version names this way; lance/
 * table/reach.h lists every other file, without reading data files.
 *
 * Versions share most fragments: a fragment (its data files and deletion
 * file) is read once per run, and what it names is remembered and handed
 * out again for every other version that holds it. */
#ifndef BRI_BLOB_MANAGED_H
#define BRI_BLOB_MANAGED_H

#include "blob/resolve.h"
#include "lance/table/manifest.h"
#include "lance/table/reach.h"
#include "lance/table/table.h"
#include "util/error.h"

/* Called with each Managed descriptor (kind 4 or 5) of a visible row of a
 * fragment and the absolute path of the object it names. */
typedef int (*bri_managed_fn)(void *ctx, const bri_blob_desc *d, const char *path, bri_error *err);

/* Calls fn for every Managed descriptor of fragment f's visible rows
 * (version bm of t). An unreadable data file or an invalid reference is
 * an error. */
int bri_managed_fragment(const bri_table *t, const bri_manifest *bm, const Lance__Table__DataFragment *f,
                         bri_managed_fn fn, void *ctx, bri_error *err);

typedef struct bri_managed_refs bri_managed_refs;

int bri_managed_refs_new(bri_managed_refs **out, bri_error *err);
void bri_managed_refs_free(bri_managed_refs *c);

/* Calls fn(user, BRI_REACH_MANAGED, path) once per object (absolute path)
 * that a Managed descriptor (kind 4 or 5) of a visible row of version bm of
 * t names, fragment by fragment; nothing for a version whose blobs are not
 * Managed (bri_manifest_blobs_managed). A data file that cannot be read, or
 * a descriptor that names no valid object, is an error: a caller deciding
 * what to delete must not go on without it. */
int bri_managed_reach(bri_managed_refs *c, const bri_table *t, const bri_manifest *bm, bri_reach_fn fn,
                      void *user, bri_error *err);

#endif
