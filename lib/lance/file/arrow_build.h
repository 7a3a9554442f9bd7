/* arrow_build.h: growable buffers and Arrow C Data Interface export, for the
 * fragment reader (reader.c) and anyone else in libbri that hands out Arrow
 * arrays.
 *
 * Owns three things: a growable byte buffer (bri_growbuf), a growable bitmap
 * (bri_bitbuf) that can stay unallocated while every bit is 1 - so that
 * columns without nulls never pay for a validity bitmap -, and the
 * construction of exported ArrowArray / ArrowSchema structs whose release
 * callbacks free everything they own (util/arrow_c.h).
 *
 * Design choice: an exported array owns plain malloc'd buffers and its
 * children by value (one allocation per array, not per value); a struct is
 * moved by copying it and clearing the source's release, as the Arrow
 * specification allows. Every growth is checked against overflow and fails
 * with BRI_ENOMEM, never aborts. */
#ifndef BRI_ARROW_BUILD_H
#define BRI_ARROW_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/arrow_c.h"
#include "util/error.h"

/* ---- bytes ---------------------------------------------------------------- */
typedef struct bri_growbuf {
  uint8_t *p;
  uint64_t len; /* bytes used */
  uint64_t cap; /* bytes allocated */
} bri_growbuf;

/* Makes room for `more` bytes past len (amortized doubling). */
int bri_growbuf_reserve(bri_growbuf *b, uint64_t more, bri_error *err);
int bri_growbuf_append(bri_growbuf *b, const void *src, uint64_t n, bri_error *err);
/* Appends n zero bytes. */
int bri_growbuf_append_zeros(bri_growbuf *b, uint64_t n, bri_error *err);
void bri_growbuf_dispose(bri_growbuf *b);
/* Hands the bytes to the caller (at least one byte allocated, never NULL
 * on success) and resets b. */
int bri_growbuf_take(bri_growbuf *b, void **out, bri_error *err);

/* ---- bits ----------------------------------------------------------------- */
/* Bits LSB first (Arrow order). A `lazy` bitmap keeps p == NULL while every
 * appended bit is 1 (a validity bitmap without nulls); a dense one (boolean
 * values) always materializes. Bits past len inside the allocation are 0. */
typedef struct bri_bitbuf {
  uint8_t *p;
  uint64_t len;   /* bits */
  uint64_t cap;   /* bits allocated (multiple of 8) */
  uint64_t zeros; /* number of 0 bits */
  bool dense;
} bri_bitbuf;

/* Makes room for `more` bits (no-op for a lazy bitmap without zeros). */
int bri_bitbuf_reserve(bri_bitbuf *b, uint64_t more, bri_error *err);
/* Makes the bitmap hold storage (a lazy one turns its bits so far into
 * explicit ones) with room for `more` bits past len. */
int bri_bitbuf_materialize(bri_bitbuf *b, uint64_t more, bri_error *err);
/* Appends n copies of bit. */
int bri_bitbuf_append_run(bri_bitbuf *b, int bit, uint64_t n, bri_error *err);
/* Appends bits [src_bit, src_bit + n) of src. */
int bri_bitbuf_append_bits(bri_bitbuf *b, const uint8_t *src, uint64_t src_bit, uint64_t n,
                           bri_error *err);
/* Single-bit append after bri_bitbuf_reserve guaranteed room (hot loops). A
 * 0 bit on a lazy bitmap that has no storage yet still allocates, so it can
 * fail. */
int bri_bitbuf_push_slow(bri_bitbuf *b, int bit, bri_error *err);
static inline int bri_bitbuf_push(bri_bitbuf *b, int bit, bri_error *err) {
  if (b->p && b->len < b->cap) {
    if (bit)
      b->p[b->len >> 3] |= (uint8_t)(1u << (b->len & 7));
    else
      b->zeros++;
    b->len++;
    return 0;
  }
  if (!b->p && !b->dense && bit) {
    b->len++;
    return 0;
  }
  return bri_bitbuf_push_slow(b, bit, err);
}
static inline int bri_bitbuf_get(const bri_bitbuf *b, uint64_t i) {
  return b->p ? (b->p[i >> 3] >> (i & 7)) & 1 : 1;
}
/* Same length and same bits. */
bool bri_bitbuf_equal(const bri_bitbuf *a, const bri_bitbuf *b);
void bri_bitbuf_dispose(bri_bitbuf *b);
/* Hands out the bitmap: NULL when lazy without zeros (all valid), else a
 * buffer of ceil(len/8) bytes (at least 1). Resets b. */
int bri_bitbuf_take(bri_bitbuf *b, void **out, bri_error *err);

/* Copies n bits from src (starting at bit s) to dst (starting at bit d);
 * bits of dst outside the range are kept. */
void bri_bits_move(uint8_t *dst, uint64_t d, const uint8_t *src, uint64_t s, uint64_t n);

/* ---- export --------------------------------------------------------------- */
/* Fills *out with an exported array that owns `buffers` (n_buffers malloc'd
 * pointers, NULL allowed; the pointer array itself is copied) and the
 * `children` structs (moved: their release is cleared in the caller's copy).
 * On failure everything passed in is released/freed and *out is released. */
int bri_arrow_array_make(struct ArrowArray *out, int64_t length, int64_t null_count,
                         int64_t n_buffers, void **buffers, int64_t n_children,
                         struct ArrowArray *children, bri_error *err);

/* Fills *out with an exported schema; format, name and metadata (the Arrow
 * binary metadata encoding, metadata_len bytes, may be NULL) are copied;
 * children are moved as above. */
int bri_arrow_schema_make(struct ArrowSchema *out, const char *format, const char *name,
                          const char *metadata, size_t metadata_len, int64_t flags,
                          int64_t n_children, struct ArrowSchema *children, bri_error *err);

/* Arrow metadata encoding (int32 count, then int32 key length, key, int32
 * value length, value, little endian) of n key/value pairs. *out is
 * malloc'd. */
int bri_arrow_metadata_encode(size_t n, const char *const *keys, const uint8_t *const *values,
                              const size_t *value_lens, char **out, size_t *out_len,
                              bri_error *err);
/* Looks a key up in encoded metadata (NULL = none): value and length, or
 * NULL. For tests and callers that inspect what the reader hands out. */
const char *bri_arrow_metadata_get(const char *metadata, const char *key, int32_t *len);

/* Releases a struct if it has a release callback (no-op otherwise). */
void bri_arrow_array_release(struct ArrowArray *a);
void bri_arrow_schema_release(struct ArrowSchema *s);

#endif
