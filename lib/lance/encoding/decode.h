/* decode.h: internal plumbing shared by the page decoders of lib/lance/encoding
 * (not part of the public API; page.h is).
 *
 * Owns the per-page decode state (bri_dec: the allocation budget that caps
 * what hostile input can make us allocate, and reusable codec state), the
 * growable value-slot containers (bri_values appends), bit copies, and the
 * CompressiveEncoding interpreter for the two buffer contexts that the page
 * layouts share: mini-block (one chunk's value buffers) and block (one whole
 * buffer: levels, dictionaries, constant-page levels). The per-value context
 * (FullZip) lives in fullzip.c because only it zips values with levels.
 *
 * Design choice: encodings are interpreted directly from the protobuf-c
 * message tree at decode time (no intermediate plan); every node checks that
 * the element width it produces matches what the column needs, so a tree that
 * does not fit the column is an error, not a misread. */
#ifndef BRI_ENCODING_DECODE_H
#define BRI_ENCODING_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "encodings_v2_1.pb-c.h"
#include "lance/encoding/general.h"
#include "lance/encoding/page.h"
#include "util/error.h"

typedef Lance__Encodings21__CompressiveEncoding bri_enc;

typedef struct bri_dec {
  uint64_t budget; /* bytes this page may still allocate */
  uint64_t limit;  /* the page's total cap, for messages */
  uint16_t file_minor;
  bri_general_decoder gen;
} bri_dec;

typedef struct bri_slice {
  const uint8_t *p;
  size_t len;
} bri_slice;

/* ---- allocation under the page budget ---------------------------------- */
void bri_dec_init(bri_dec *d, uint64_t limit, uint16_t file_minor);
void bri_dec_release_all(bri_dec *d); /* codec state, not outputs */
/* malloc(bytes) charged to the budget; BRI_ENOMEM / BRI_ECORRUPT (over the
 * cap: "needs N bytes, more than the M-byte page limit") on failure. */
void *bri_dec_alloc(bri_dec *d, uint64_t bytes, const char *what, bri_error *err);
void *bri_dec_calloc(bri_dec *d, uint64_t bytes, const char *what, bri_error *err);
/* realloc charged for the growth only. */
void *bri_dec_realloc(bri_dec *d, void *p, uint64_t old_bytes, uint64_t new_bytes,
                      const char *what, bri_error *err);
/* free and credit back `bytes` (use for scratch, not for outputs). */
void bri_dec_free(bri_dec *d, void *p, uint64_t bytes);
/* Charge without allocating (for memory another library allocates). */
int bri_dec_charge(bri_dec *d, uint64_t bytes, const char *what, bri_error *err);

/* ---- bits ---------------------------------------------------------------- */
void bri_bits_copy(uint8_t *dst, uint64_t dst_bit, const uint8_t *src, uint64_t src_bit,
                   uint64_t n);
void bri_bits_fill(uint8_t *dst, uint64_t dst_bit, uint64_t n, int value);
static inline int bri_bit_get(const uint8_t *p, uint64_t i) { return (p[i >> 3] >> (i & 7)) & 1; }

/* ---- value slots ---------------------------------------------------------- */
/* Shapes v (empty, no slots) for the leaf type; LEGACY_BLOB becomes the
 * {position u64, size u64} struct. Validates the type (BRI_EINVAL). */
int bri_values_init(bri_values *v, const bri_leaf_type *t, bri_error *err);
/* Bytes of `slots` FIXED slots (bits == 1 rounds up). Overflow => UINT64_MAX. */
uint64_t bri_values_fixed_bytes(const bri_values *v, uint64_t slots);
uint64_t bri_values_slot_bits(const bri_values *v);
/* Room for `more` additional slots (and, VARIABLE, more_bytes more data
 * bytes) beyond v->n; FIXED data is zeroed as it grows. STRUCT reserves every
 * FIXED child; VARIABLE children of a struct are reserved by their writer. */
int bri_values_reserve(bri_dec *d, bri_values *v, uint64_t more, uint64_t more_bytes,
                       bri_error *err);
/* Make fsl_validity[layer] exist (all valid so far) for the current capacity. */
int bri_values_fsl_validity(bri_dec *d, bri_values *v, unsigned layer, bri_error *err);
/* Appends one variable value (v VARIABLE). Reserves as needed. */
int bri_values_append_var(bri_dec *d, bri_values *v, const uint8_t *p, uint64_t len,
                          bri_error *err);
/* Appends `more` fixed slots of zeros (nulls) to a FIXED/STRUCT container, or
 * empty values to a VARIABLE one. */
int bri_values_append_nulls(bri_dec *d, bri_values *v, uint64_t more, bri_error *err);
/* Copies slot `src_slot` of src (same shape) to the end of dst. */
int bri_values_append_from(bri_dec *d, bri_values *dst, const bri_values *src, uint64_t src_slot,
                           bri_error *err);
/* Zeroes (FIXED) / empties (VARIABLE) slot i in place; VARIABLE compaction is
 * done by bri_values_compact_nulls. */
void bri_values_zero_slot(bri_values *v, uint64_t i);
/* For VARIABLE (and struct children): rewrites data so that every slot with
 * is_null[i] has length 0. */
int bri_values_clear_slots(bri_dec *d, bri_values *v, const uint8_t *is_null, bri_error *err);

/* ---- CompressiveEncoding interpreter ------------------------------------- */
/* "Flat", "InlineBitpacking", ... for messages. */
const char *bri_enc_name(const bri_enc *e);
/* Number of chunk buffers `e` consumes in a mini-block chunk. */
int bri_enc_mb_buffers(const bri_enc *e, size_t *count, bri_error *err);
/* Width in bits of the fixed values `e` produces (dictionary indices). */
int bri_enc_fixed_bits(const bri_enc *e, uint64_t *bits, bri_error *err);

/* Mini-block: decodes n slots of one chunk (buffers bufs[0..nbufs)) and
 * appends them to v. */
int bri_codec_mb_decode(bri_dec *d, const bri_enc *e, const bri_slice *bufs, size_t nbufs,
                        uint64_t n, bri_values *v, bri_error *err);
/* Mini-block, fixed-width elements straight into memory: n elements of ew
 * bits starting at bit dst_bit of dst (dictionary indices). */
int bri_codec_mb_elems(bri_dec *d, const bri_enc *e, const bri_slice *bufs, size_t nbufs,
                       size_t *used, uint64_t n, uint64_t ew, uint8_t *dst, uint64_t dst_bit,
                       bri_error *err);
/* Block: n elements of ew bits into dst (levels: ew = 16). */
int bri_codec_block_elems(bri_dec *d, const bri_enc *e, const uint8_t *buf, size_t len,
                          uint64_t n, uint64_t ew, uint8_t *dst, uint64_t dst_bit,
                          bri_error *err);
/* Block: n values appended to v (dictionary items; FIXED or VARIABLE). */
int bri_codec_block_values(bri_dec *d, const bri_enc *e, const uint8_t *buf, size_t len,
                           uint64_t n, bri_values *v, bri_error *err);
/* Refuses 2.3-only encodings by name (Range, Delta) and unset trees. */
int bri_enc_check_known(const bri_enc *e, bri_error *err);

/* ---- levels --------------------------------------------------------------- */
/* Checks rep <= max_rep and def <= max_def for n levels; counts visible items
 * and new rows. Either array may be NULL. Names the first bad index. */
int bri_levels_check(const uint16_t *rep, const uint16_t *def, uint64_t n, uint16_t max_rep,
                     uint16_t max_def, uint16_t max_visible_def, uint64_t *visible,
                     uint64_t *rows, bri_error *err);

/* ---- layouts (one file each) --------------------------------------------- */
typedef struct bri_layout_io {
  const bri_page_input *in;
  const bri_leaf_type *type;
  bri_dec *dec;
  bri_leaf_page *out; /* layers/max_* already filled by page.c */
} bri_layout_io;

int bri_miniblock_decode(bri_layout_io *io, const Lance__Encodings21__MiniBlockLayout *mb,
                         bri_error *err);
int bri_fullzip_decode(bri_layout_io *io, const Lance__Encodings21__FullZipLayout *fz,
                       bri_error *err);
int bri_constant_decode(bri_layout_io *io, const Lance__Encodings21__ConstantLayout *cl,
                        bri_error *err);
int bri_bloblayout_decode(bri_layout_io *io, const Lance__Encodings21__BlobLayout *bl,
                          bri_error *err);
/* Shared tail of every layout: zero the slots of null values (def in
 * 1..max_visible_def) so that nulls are canonical. */
int bri_page_zero_nulls(bri_dec *d, bri_leaf_page *p, bri_error *err);

#endif
