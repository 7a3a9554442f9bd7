/* arrow_c.h: the Arrow C Data Interface structs (an ABI fixed by the Arrow
 * specification, "The Arrow C data interface"). Decoded columns leave libbri
 * in this layout so that any Arrow implementation can import them without
 * copies. Defined here, guarded by the spec's own macro, because brid links
 * no Arrow library; below them, the two reads every consumer needs (is
 * element i valid, the bytes of a binary or string element). */
#ifndef BRI_ARROW_C_H
#define BRI_ARROW_C_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
  const char *format;
  const char *name;
  const char *metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema **children;
  struct ArrowSchema *dictionary;
  void (*release)(struct ArrowSchema *);
  void *private_data;
};

struct ArrowArray {
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void **buffers;
  struct ArrowArray **children;
  struct ArrowArray *dictionary;
  void (*release)(struct ArrowArray *);
  void *private_data;
};

#endif /* ARROW_C_DATA_INTERFACE */

/* Whether element i of a (relative to its offset) is valid, by the
 * specification's rules: a null_count of 0 means no nulls (the bitmap need
 * not be read, and may be absent); otherwise the validity bitmap (buffer 0)
 * decides, LSB first, at bit offset + i; an array without one has no nulls
 * unless its null_count says so, which only the null type ("n", no buffers,
 * every element null) does. null_count -1 (not computed) reads the bitmap. */
static inline bool bri_arrow_valid(const struct ArrowArray *a, int64_t i) {
  if (a->null_count == 0) return true;
  const uint8_t *v = a->n_buffers > 0 && a->buffers ? (const uint8_t *)a->buffers[0] : NULL;
  if (!v) return a->null_count < 0;
  int64_t j = a->offset + i;
  return (v[j >> 3] >> (j & 7)) & 1;
}

/* The bytes of element i of a binary or string array ("z", "u": 32-bit
 * offsets; "Z", "U": 64-bit); false for any other format. */
static inline bool bri_arrow_bytes(const char *format, const struct ArrowArray *a, int64_t i,
                                   const uint8_t **data, size_t *len) {
  bool large = !strcmp(format, "Z") || !strcmp(format, "U");
  if (!large && strcmp(format, "z") && strcmp(format, "u")) return false;
  int64_t j = a->offset + i, lo, hi;
  if (large) {
    memcpy(&lo, (const uint8_t *)a->buffers[1] + 8 * j, 8);
    memcpy(&hi, (const uint8_t *)a->buffers[1] + 8 * (j + 1), 8);
  } else {
    int32_t x, y;
    memcpy(&x, (const uint8_t *)a->buffers[1] + 4 * j, 4);
    memcpy(&y, (const uint8_t *)a->buffers[1] + 4 * (j + 1), 4);
    lo = x, hi = y;
  }
  *data = (const uint8_t *)a->buffers[2] + lo;
  *len = hi > lo ? (size_t)(hi - lo) : 0;
  return true;
}

#endif
