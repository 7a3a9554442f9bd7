/* flags.h: Lance table feature flags, and the one bit brid adds.
 *
 * A manifest carries reader and writer flag words; a client must refuse a
 * table that sets a bit it does not understand. Lance 14.0.2 names bits 0 to
 * 17 (docs/format/compatibility.md lists them with what brid does with each);
 * brid reads and writes the ones it keeps correct and refuses the rest by
 * name. Some bits are paired (Lance refuses a manifest that sets one in a
 * single word as corrupt) and some are sticky (every later version keeps
 * them): both sets are Lance 14's, defined here once.
 * BRI_FLAG_BLOB_REUSE_INDEX is the only place the BRI bit is defined: bit 40
 * is far above Lance's sequential assignments, and every Lance release
 * refuses it, so stock Lance never misreads a BRI table (docs/format/bri.md 10). */
#ifndef BRI_FLAGS_H
#define BRI_FLAGS_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

#define BRI_FLAG_DELETION_FILES ((uint64_t)1 << 0)
#define BRI_FLAG_STABLE_ROW_IDS ((uint64_t)1 << 1)
#define BRI_FLAG_USE_V2_FORMAT_DEPRECATED ((uint64_t)1 << 2)
#define BRI_FLAG_TABLE_CONFIG ((uint64_t)1 << 3)
#define BRI_FLAG_BASE_PATHS ((uint64_t)1 << 4)
#define BRI_FLAG_DISABLE_TRANSACTION_FILE ((uint64_t)1 << 5)
#define BRI_FLAG_DATA_OVERLAY_FILES ((uint64_t)1 << 6)
#define BRI_FLAG_COVERED_INDEX_METADATA ((uint64_t)1 << 7)
#define BRI_FLAG_MIXED_DATA_FILE_VERSIONS ((uint64_t)1 << 8)
#define BRI_FLAG_FRAG_REUSE_WITH_STABLE_ROW_IDS ((uint64_t)1 << 9)
#define BRI_FLAG_FRAGMENT_REUSE_INDEX ((uint64_t)1 << 10)
#define BRI_FLAG_SPILLED_ROW_LINEAGE ((uint64_t)1 << 11)
#define BRI_FLAG_FRAGMENT_TREE ((uint64_t)1 << 12)
#define BRI_FLAG_INDEPENDENT_COVERING_FIELDS ((uint64_t)1 << 13)
#define BRI_FLAG_MANAGED_BLOBS ((uint64_t)1 << 14)
#define BRI_FLAG_NON_REUSABLE_FIELD_IDS ((uint64_t)1 << 15)
#define BRI_FLAG_ZONE_WRITE_SEEDS ((uint64_t)1 << 16)
#define BRI_FLAG_OBJECT_METADATA ((uint64_t)1 << 17)
#define BRI_FLAG_BLOB_REUSE_INDEX ((uint64_t)1 << 40)

/* Bits brid reads and writes correctly. non_reusable_field_ids is a writer
 * bit only (a reader bit 15 is corrupt, bri_flags_check). */
#define BRI_FLAGS_SUPPORTED                                                               \
  (BRI_FLAG_DELETION_FILES | BRI_FLAG_STABLE_ROW_IDS | BRI_FLAG_USE_V2_FORMAT_DEPRECATED | \
   BRI_FLAG_TABLE_CONFIG | BRI_FLAG_BASE_PATHS | BRI_FLAG_DISABLE_TRANSACTION_FILE |       \
   BRI_FLAG_MIXED_DATA_FILE_VERSIONS | BRI_FLAG_MANAGED_BLOBS |                            \
   BRI_FLAG_NON_REUSABLE_FIELD_IDS | BRI_FLAG_BLOB_REUSE_INDEX)

/* Paired bits (Lance 14's STICKY_PAIRED_FLAGS): each is set in both words or
 * in neither; a manifest that sets one in a single word is corrupt. */
#define BRI_FLAGS_PAIRED                                                              \
  (BRI_FLAG_MIXED_DATA_FILE_VERSIONS | BRI_FLAG_FRAGMENT_REUSE_INDEX |                \
   BRI_FLAG_MANAGED_BLOBS | BRI_FLAG_ZONE_WRITE_SEEDS)

/* Sticky bits: once set they stay set on every version a writer derives.
 * The paired ones in both words, non_reusable_field_ids in the writer word. */
#define BRI_FLAGS_STICKY_READER BRI_FLAGS_PAIRED
#define BRI_FLAGS_STICKY_WRITER (BRI_FLAGS_PAIRED | BRI_FLAG_NON_REUSABLE_FIELD_IDS)

/* Bits that only ever appear in the writer word. */
#define BRI_FLAGS_WRITER_ONLY (BRI_FLAG_NON_REUSABLE_FIELD_IDS | BRI_FLAG_OBJECT_METADATA)

/* Name of a single bit ("deletion_files", ...); NULL for a bit nobody named. */
const char *bri_flag_name(uint64_t bit);

/* Refuses (BRI_ECORRUPT) a paired bit set in one word only, or a writer-only
 * bit in the reader word, then (BRI_EUNSUPPORTED) any bit outside
 * BRI_FLAGS_SUPPORTED, naming it: "manifest X: reader feature flag 64
 * (unstable_data_overlay_files) is not supported by brid". */
int bri_flags_check(uint64_t reader, uint64_t writer, const char *path, bri_error *err);

/* Writes the names of the set bits, comma-separated, into buf. */
void bri_flags_describe(uint64_t flags, char *buf, size_t len);

#endif
