/* managed.h: what a compaction does with the blob descriptors of a table
 * whose blobs are Managed (Lance 14: schema metadata lance.blob.managed =
 * "true", flag managed_blobs; docs/format/blob.md 8).
 *
 * As Lance 14's own compaction does it, no payload byte is read or written:
 *   - a Managed descriptor (kind 4 or 5) is kept as it is; only its base
 *     becomes explicit when the output file's base differs from the source
 *     file's (kind 4 in a file of base b becomes kind 5 with blob_id b);
 *   - a Packed or Dedicated value written before the table turned Managed
 *     (kinds 1 and 2) is adopted in place: it becomes a Managed descriptor
 *     naming the sidecar it is in, relative to that sidecar's base root
 *     ("data/<stem>/<bits>.blob", Dedicated at position 0), after a check
 *     that the sidecar holds it (blob/sizes.h);
 *   - Inline and External values are left to the writer, unchanged.
 * Every strategy behaves so on a Managed table: the compaction report says
 * "managed". The one exception, brid's and not Lance's: a pack whose live
 * share is below the repack threshold (the survey's repack set: a Managed
 * object of the table's own root, or a Packed sidecar that would be
 * adopted) has the live ranges of the values at hand copied into a new
 * _blobs/<uuid>.blob object (packer.h: the live ranges only; on an object
 * store by the server where a range can be a part of its own, else read
 * through brid) and their descriptors point there, kind 4; once no retained version
 * names the old pack, cleanup deletes it (Lance keeps a Managed pack whole
 * while any row names any range of it). These are the only payload bytes
 * a Managed compaction writes. Each new object is recorded in the run's
 * outputs before it is created (a failed or crashed run removes it).
 * A blob_uri is variable-width, so new uris are collected per descriptor
 * array and written into its blob_uri child afterwards. */
#ifndef BRI_COMPACT_MANAGED_H
#define BRI_COMPACT_MANAGED_H

#include <stdint.h>

#include "blob/resolve.h"
#include "blob/sizes.h"
#include "lance/encoding/page.h"
#include "lance/table/table.h"
#include "storage/outputs.h"
#include "util/arrow_c.h"
#include "util/error.h"
#include "util/strset.h"

typedef struct bri_managed_out bri_managed_out;

typedef struct bri_managed_stats {
  uint64_t kept;          /* Managed descriptors carried */
  uint64_t adopted;       /* Packed or Dedicated values adopted in place */
  uint64_t adopted_bytes; /* their payload bytes, left where they are */
  uint64_t repacked;      /* values copied out of packs below the repack threshold */
  uint64_t repacked_bytes; /* the bytes the new packs grew by (packer.h) */
  uint64_t packs;         /* new _blobs/ objects */
} bri_managed_stats;

/* The descriptors of one output file: t and m as the sources read them,
 * sizes the run's sidecar sizes, repack the absolute paths of the packs to
 * repack (may be NULL), outs where new objects are recorded. The output
 * file is in the table's own data directory (no base). */
int bri_managed_out_new(const bri_table *t, const Lance__Table__Manifest *m, bri_sidecar_sizes *sizes,
                        const bri_strset *repack, bri_outputs *outs, bri_managed_out **out, bri_error *err);
void bri_managed_out_free(bri_managed_out *o);
const bri_managed_stats *bri_managed_out_stats(const bri_managed_out *o);

/* Rewrites descriptor i of the array at hand, which source resolver r
 * (of data file src) holds (uri/uri_len: its blob_uri); where names it in
 * a refusal. */
int bri_managed_rewrite(bri_managed_out *o, bri_blob_resolver *r, const Lance__Table__DataFile *src,
                        uint64_t i, uint8_t *kind, uint64_t *position, uint64_t size, uint32_t *blob_id,
                        const char *uri, size_t uri_len, const bri_value_ref *where, bri_error *err);

/* Closes the last new pack and makes the new objects' names durable
 * (_blobs/ synced): before the commit. */
int bri_managed_out_finish(bri_managed_out *o, bri_error *err);

/* Writes the adoptions since the last call into the blob_uri child of a
 * decoded descriptor array (Arrow: struct s/a; page: values v), then
 * forgets them. */
int bri_managed_apply_arrow(bri_managed_out *o, const struct ArrowSchema *s, struct ArrowArray *a,
                            bri_error *err);
int bri_managed_apply_values(bri_managed_out *o, bri_values *v, bri_error *err);

#endif
