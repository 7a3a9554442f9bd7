/* flags.h: Lance table feature flags, and the one bit brid adds.
 *
 * A manifest carries reader and writer flag words; a client must refuse a
 * table that sets a bit it does not understand. brid understands the stable
 * Lance bits and its own Blob Reuse Index bit, and refuses the rest by name.
 * BRI_FLAG_BLOB_REUSE_INDEX is the only place the BRI bit is defined: bit 40
 * is far above Lance's sequential assignments (512 and 2048 are contested
 * upstream, see docs/format/table.md section 14), and every Lance release refuses
 * it, so stock Lance never misreads a BRI table (docs/format/bri.md 10). */
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
#define BRI_FLAG_MIXED_DATA_FILE_VERSIONS ((uint64_t)1 << 8)
#define BRI_FLAG_FRAGMENT_TREE ((uint64_t)1 << 12)
#define BRI_FLAG_MANAGED_BLOBS ((uint64_t)1 << 14)
#define BRI_FLAG_BLOB_REUSE_INDEX ((uint64_t)1 << 40)

/* Bits brid reads and writes correctly. */
#define BRI_FLAGS_SUPPORTED                                                               \
  (BRI_FLAG_DELETION_FILES | BRI_FLAG_STABLE_ROW_IDS | BRI_FLAG_USE_V2_FORMAT_DEPRECATED | \
   BRI_FLAG_TABLE_CONFIG | BRI_FLAG_BASE_PATHS | BRI_FLAG_DISABLE_TRANSACTION_FILE |       \
   BRI_FLAG_MIXED_DATA_FILE_VERSIONS | BRI_FLAG_BLOB_REUSE_INDEX)

/* Paired bits: Lance after 12.0.0 requires each to be set in both words or
 * in neither, and refuses a manifest that sets one in a single word. */
#define BRI_FLAGS_PAIRED (BRI_FLAG_MIXED_DATA_FILE_VERSIONS | BRI_FLAG_MANAGED_BLOBS)

/* Sticky bits brid implements: once set they stay set on every version a
 * writer derives (docs/format/compatibility.md). */
#define BRI_FLAGS_STICKY BRI_FLAG_MIXED_DATA_FILE_VERSIONS

/* Name of a single bit ("deletion_files", ...); NULL for a bit nobody named. */
const char *bri_flag_name(uint64_t bit);

/* Refuses (BRI_ECORRUPT) a paired bit set in one word only, then
 * (BRI_EUNSUPPORTED) any bit outside BRI_FLAGS_SUPPORTED, naming it:
 * "manifest X: reader feature flag 64 (unstable_data_overlay_files) is not
 * supported by brid". */
int bri_flags_check(uint64_t reader, uint64_t writer, const char *path, bri_error *err);

/* Writes the names of the set bits, comma-separated, into buf. */
void bri_flags_describe(uint64_t flags, char *buf, size_t len);

#endif
