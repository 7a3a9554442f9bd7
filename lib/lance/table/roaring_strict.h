/* roaring_strict.h: the one strict decoder of Roaring bitmaps read from disk.
 *
 * Lance stores three kinds of Roaring image (layouts: RoaringFormatSpec):
 *   - deletion files (.bin): a 32-bit portable bitmap, cookie 12346;
 *   - IndexMetadata.fragment_bitmap: a 32-bit portable bitmap, cookie 12346
 *     or 12347 (with run containers), as Rust's roaring writes it;
 *   - the fragment reuse index's changed_row_addrs: a 64-bit RoaringTreemap
 *     ([u64 LE part count] then per part [u32 LE high key][32-bit portable]).
 * The CRoaring brid links (Debian's 0.2.66) checks only that containers fit
 * in the bytes: it trusts declared cardinalities, array order and run bounds,
 * so a hostile image corrupts its state. Every image from disk therefore
 * passes bri_roaring_check first; only then does CRoaring (or the deletion
 * reader's own expansion) see it.
 *
 * Rejected, each BRI_ECORRUPT with a message naming `what` (the file and the
 * field) and the offset: truncation anywhere, an unknown cookie, more than
 * 65536 containers, keys not strictly increasing (out of order or twice),
 * declared offsets other than where each container starts, array containers
 * not strictly increasing or larger than 4096 values, bitmap containers
 * whose popcount is not the declared cardinality, run containers with no
 * run, runs past 65535, overlapping or unsorted runs or a sum other than the
 * declared cardinality, and trailing bytes (unless the caller reads a prefix).
 * Checking allocates nothing and is linear in the bytes. */
#ifndef BRI_ROARING_STRICT_H
#define BRI_ROARING_STRICT_H

#include <roaring/roaring.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "table.pb-c.h"
#include "util/error.h"

/* The portable format's numbers (writers use them too). */
enum {
  BRI_ROARING_COOKIE_NO_RUNS = 12346, /* u32 count follows, offsets always present */
  BRI_ROARING_COOKIE_RUNS = 12347,    /* low 16 bits; count-1 in the high 16; run flags */
  BRI_ROARING_ARRAY_MAX = 4096,       /* larger non-run containers are bitmaps */
  BRI_ROARING_BITMAP_BYTES = 8192,
};

/* What a well-formed 32-bit image holds. */
typedef struct bri_roaring_info {
  size_t len;           /* bytes the image takes */
  uint64_t cardinality; /* values it holds */
  uint32_t max;         /* its largest value (0 when empty) */
  bool runs;            /* cookie 12347: a run-flag bitset follows the cookie */
} bri_roaring_info;

/* Checks the 32-bit portable image at the start of buf. prefix: bytes may
 * follow it (info->len says where it ends); otherwise it must fill len. */
int bri_roaring_check(const uint8_t *buf, size_t len, const char *what, bool prefix,
                      bri_roaring_info *info, bri_error *err);

/* The values of an image bri_roaring_check accepted (buf and info as it saw
 * them), ascending, into out (info->cardinality slots). */
void bri_roaring_to_array(const uint8_t *buf, const bri_roaring_info *info, uint32_t *out);

/* bri_roaring_check of the whole buffer, then CRoaring's reading of it.
 * *out is the caller's (roaring_bitmap_free). */
int bri_roaring_read(const uint8_t *buf, size_t len, const char *what, roaring_bitmap_t **out,
                     bri_error *err);

/* IndexMetadata.fragment_bitmap of x (an index listed in file, a manifest
 * or a transaction) through bri_roaring_read; messages name the file, the
 * index and the field (file NULL: a caller that names the file itself). */
int bri_index_bitmap_read(const Lance__Table__IndexMetadata *x, const char *file,
                          roaring_bitmap_t **out, bri_error *err);

/* One 32-bit bitmap of a treemap: the values whose high 32 bits are `high`. */
typedef struct bri_treemap_part {
  uint32_t high;
  roaring_bitmap_t *low;
} bri_treemap_part;

/* Reads a serialized RoaringTreemap: part count bounded by the bytes, high
 * keys strictly ascending, every part a non-empty image bri_roaring_check
 * accepts, no trailing bytes. Free *parts with bri_treemap_free. */
int bri_treemap_decode(const uint8_t *buf, size_t len, const char *what,
                       bri_treemap_part **parts, size_t *n, bri_error *err);
void bri_treemap_free(bri_treemap_part *parts, size_t n);

#endif
