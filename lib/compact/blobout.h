/* blobout.h: where the blob payloads of one compaction output file go.
 *
 * Every Packed or Dedicated descriptor copied into a new data file gets a
 * new local blob id from one allocator per output file (shared by all its
 * blob columns, docs/format/bri.md 5). What backs that id depends on the
 * strategy (docs/architecture.md):
 *   bri   the id is recorded in the output's Blob Reuse Index, pointing at
 *         the terminal sidecar the source resolved to (never at another
 *         BRI'd id: no chains); equal terminals share one id. Packs below
 *         the utilization threshold are repacked instead (copy below).
 *         Stock Lance refuses the result (feature flag bit 40).
 *   link  the terminal sidecar is hard-linked into the output's own sidecar
 *         directory under the new id; stock Lance reads the result. A
 *         filesystem that cannot link is an error.
 *   copy  the payload is copied: Dedicated sidecars whole, Packed ranges
 *         appended to new packs (rolled at 1 GiB) at new positions.
 *   auto  link, and copy from the first link the filesystem refuses (no
 *         hard links, another filesystem, fs.protected_hardlinks on a file
 *         brid may not write): stock Lance reads the result either way.
 *         execute.h turns auto into bri for a table that already carries a
 *         BRI, before any output is opened.
 *   managed  not this module's: Managed descriptors (compact/managed.h),
 *         once the table is switched (compact/optin.h); stock Lance 14
 *         reads the result, Lance 12 and 13 refuse it by flag.
 * Every file and directory it creates is handed to the journal callback
 * first, so that a crashed or failed job can remove exactly its own output. */
#ifndef BRI_BLOBOUT_H
#define BRI_BLOBOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "blob/resolve.h"
#include "blob/sizes.h"
#include "lance/table/table.h"
#include "table.pb-c.h"
#include "util/error.h"
#include "storage/outputs.h"
#include "util/strset.h"

typedef enum bri_strategy {
  BRI_STRATEGY_BRI = 0,
  BRI_STRATEGY_LINK,
  BRI_STRATEGY_COPY,
  BRI_STRATEGY_AUTO,
  BRI_STRATEGY_MANAGED, /* switches a table to Managed blobs (compact/optin.h); what every
                           strategy does on a Managed table (compact/managed.h) */
} bri_strategy;

const char *bri_strategy_name(bri_strategy s);
/* "auto", "bri", "link", "copy" or "managed"; anything else is BRI_EINVAL. */
int bri_strategy_parse(const char *s, bri_strategy *out, bri_error *err);

typedef struct bri_blob_out bri_blob_out;

typedef struct bri_blob_out_stats {
  uint64_t reused_bytes;   /* payload left in place (BRI or hard link): the reused files' sizes */
  uint64_t copied_bytes;   /* payload written (copy, repack): the bytes the copies moved */
  uint64_t links;          /* hard links made */
  uint64_t sidecars;       /* sidecar files created */
  bool links_refused;      /* auto: the filesystem refused a link; copies from then on */
} bri_blob_out_stats;

/* t: the table (and m the manifest the sources come from); own_dir: the
 * output data file's sidecar directory ({root}/data/{stem}); it is created
 * (and recorded in outs, as a tree) only when something must live there,
 * with no sync of data/: the caller finishes the data file, which syncs
 * data/, after the last rewrite and before committing. Sources are
 * read, copied and linked through the store that reaches them (the
 * table's, or their base's), never following a symbolic link. repack: paths
 * of packs to repack under the bri strategy (may be NULL). sizes: the
 * sources' sizes (shared with the survey; every value is checked against
 * them, blob/sizes.h). */
int bri_blob_out_open(const bri_table *t, const Lance__Table__Manifest *m, const char *own_dir,
                      bri_strategy s, const bri_strset *repack, bri_sidecar_sizes *sizes,
                      bri_outputs *outs, bri_blob_out **out, bri_error *err);

/* Rewrites one descriptor of kind Packed (1) or Dedicated (2) that source
 * resolver r holds: *blob_id becomes the output-local id, *position the
 * position in the output's pack when the range was copied. A sidecar that
 * is missing or does not hold the value (checked before it is reused,
 * linked or copied, and again against the bytes a link or copy found) is
 * refused: BRI_ECORRUPT naming the table, where->fragment, where->row, the
 * sidecar, the bytes expected and the bytes there. */
int bri_blob_out_rewrite(bri_blob_out *o, bri_blob_resolver *r, uint8_t kind, uint32_t *blob_id,
                         uint64_t *position, uint64_t size, const bri_value_ref *where,
                         bri_error *err);

/* Closes packs (fsynced), fsyncs the sidecar directory, and stores the BRI
 * (if any entry) on df. */
int bri_blob_out_finish(bri_blob_out *o, Lance__Table__DataFile *df, bri_error *err);
const bri_blob_out_stats *bri_blob_out_stats_of(const bri_blob_out *o);
void bri_blob_out_close(bri_blob_out *o);

#endif
