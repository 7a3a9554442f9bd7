/* walk.h: visiting the Blob v2 values of decoded rows, wherever they sit
 * in the schema (a top-level blob field, or one inside structs, lists and
 * fixed-size lists), and of a whole fragment's visible rows.
 *
 * verify checks every value this way; materialize and deep clone use it to
 * check the values a new version references against the sidecars they
 * placed (blob/sizes.h). */
#ifndef BRI_BLOB_WALK_H
#define BRI_BLOB_WALK_H

#include <stdbool.h>
#include <stdint.h>

#include "blob/resolve.h"
#include "blob/sizes.h"
#include "lance/dataset/reader.h"
#include "lance/file/arrow_build.h"
#include "util/error.h"

/* Per manifest field index: whether a Blob v2 field is at or below it
 * (calloc'd, n_fields + 1 entries; NULL when out of memory). */
bool *bri_blob_fields(const Lance__Table__Manifest *m);

/* Called with one Blob v2 struct value: element i of a (schema s), of
 * manifest field index fi. A nonzero return stops the walk. */
typedef int (*bri_blob_value_fn)(void *ctx, long fi, const struct ArrowSchema *s,
                                 const struct ArrowArray *a, int64_t i);

/* Visits logical element i of a (schema s, manifest field index fi; -1 or
 * a field without blobs below it: nothing). Nulls are skipped. Returns
 * fn's first nonzero result, else 0. */
int bri_blob_walk(const Lance__Table__Manifest *m, const bool *has_blob, const struct ArrowSchema *s,
                  const struct ArrowArray *a, int64_t i, long fi, bri_blob_value_fn fn, void *ctx);

/* Called with each non-null Blob v2 value of a visible row: its field
 * (manifest index fi), the data file that stores it, its descriptor, and
 * its row offset within the fragment. */
typedef int (*bri_blob_desc_fn)(void *ctx, long fi, const Lance__Table__DataFile *df,
                                const bri_blob_desc *d, uint64_t row, bri_error *err);

/* Reads the blob fields of fragment f (of version bm of t) and calls fn on
 * every non-null Blob v2 value of its visible rows, in row order per
 * top-level field. Stops at the first error (fn's, or a read's). */
int bri_blob_walk_fragment(const bri_table *t, const bri_manifest *bm,
                           const Lance__Table__DataFragment *f, bri_blob_desc_fn fn, void *ctx,
                           bri_error *err);

/* Checks every Packed or Dedicated value of fragment f's visible rows
 * (stored in data file only, or in any of f's data files when only is
 * NULL) against the sidecar it resolves to in version bm (BRI included),
 * through sizes (blob/sizes.h): the first value whose sidecar is missing or
 * does not hold it is refused, BRI_ECORRUPT naming t's root, f, the row,
 * the sidecar and the bytes expected and there. */
int bri_blob_check_fragment(const bri_table *t, const bri_manifest *bm,
                            const Lance__Table__DataFragment *f, const Lance__Table__DataFile *only,
                            bri_sidecar_sizes *sizes, bri_error *err);

#endif
