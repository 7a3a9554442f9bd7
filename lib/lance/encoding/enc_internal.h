/* enc_internal.h: plumbing shared by the page encoders (enc_*.c); not public
 * (enc_page.h is).
 *
 * Owns three small things every encoder needs: a growable byte buffer, a
 * bump arena for the protobuf-c message tree of one page encoding (built
 * node by node, packed once, freed at once), constructors for the
 * CompressiveEncoding nodes Lance writers emit, the rep/def level codecs
 * (chosen once per page, applied per chunk, docs/format/file.md section 3.1), and
 * the per-page analysis that the layouts share.
 *
 * Design choice: protobuf messages are built with the generated protobuf-c
 * structs (field numbers cannot drift from proto/), setting has_* flags only
 * for non-zero values so that the bytes match what Lance's proto3 writer
 * emits. Encoders return 0, a negative BRI_E* code, or BRI_ENC_NOFIT (a
 * mini-block limit was hit; the caller tries FullZip). */
#ifndef BRI_ENCODING_ENC_INTERNAL_H
#define BRI_ENCODING_ENC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "encodings_v2_1.pb-c.h"
#include "lance/encoding/enc_page.h"
#include "util/error.h"

#define BRI_ENC_NOFIT 1

/* ---- growable buffer ------------------------------------------------------ */
typedef struct bri_ebuf {
  uint8_t *p;
  size_t len, cap;
} bri_ebuf;

int bri_ebuf_reserve(bri_ebuf *b, size_t more, bri_error *err);
int bri_ebuf_put(bri_ebuf *b, const void *src, size_t n, bri_error *err);
/* Appends `n` copies of byte. */
int bri_ebuf_fill(bri_ebuf *b, uint8_t byte, size_t n, bri_error *err);
/* Pads with `byte` up to a multiple of align, counted from byte `base`. */
int bri_ebuf_pad(bri_ebuf *b, size_t base, size_t align, uint8_t byte, bri_error *err);
int bri_ebuf_put_le(bri_ebuf *b, uint64_t v, unsigned bytes, bri_error *err);
void bri_ebuf_dispose(bri_ebuf *b);
/* Gives the bytes away (NULL when empty); b becomes empty. */
uint8_t *bri_ebuf_take(bri_ebuf *b);

/* ---- protobuf arena -------------------------------------------------------- */
typedef struct bri_pb_arena {
  void *head;
} bri_pb_arena;

/* Zeroed memory that lives until bri_pba_dispose; NULL when out of memory. */
void *bri_pba_alloc(bri_pb_arena *a, size_t n);
void bri_pba_dispose(bri_pb_arena *a);

typedef Lance__Encodings21__CompressiveEncoding bri_cenc;

/* Constructors; each returns NULL when out of memory or when an inner node is NULL. */
bri_cenc *bri_pbe_flat(bri_pb_arena *a, uint64_t bits);
bri_cenc *bri_pbe_variable(bri_pb_arena *a, uint64_t offset_bits);
bri_cenc *bri_pbe_inline_bp(bri_pb_arena *a, uint64_t bits);
bri_cenc *bri_pbe_outofline_bp(bri_pb_arena *a, uint64_t bits, uint64_t packed_bits);
bri_cenc *bri_pbe_general(bri_pb_arena *a, int scheme, int level, bri_cenc *inner);
bri_cenc *bri_pbe_fsl(bri_pb_arena *a, uint64_t dim, bool has_validity, bri_cenc *inner);
bri_cenc *bri_pbe_rle(bri_pb_arena *a, uint64_t bits);
Lance__Encodings21__RepDefLayer *bri_pbe_layers(bri_pb_arena *a, const uint8_t *layers, size_t n);

/* Packs a PageLayout into Any{/lance.encodings21.PageLayout} bytes (malloc'd). */
int bri_pbe_pack_page(const Lance__Encodings21__PageLayout *pl, uint8_t **out, size_t *len,
                      bri_error *err);

/* ---- levels ---------------------------------------------------------------- */
enum { BRI_LV_FLAT = 1, BRI_LV_INLINE_BP = 2, BRI_LV_OOL_BP = 3 };
typedef struct bri_level_codec {
  int kind;
  unsigned width; /* OutOfLineBitpacking: packed width */
} bri_level_codec;

/* Lance's block-compressor choice for a page's levels (docs/format/file.md 5):
 * bitpacking unless some 1024-level block is all zero or a single block
 * would not shrink; InlineBitpacking for <= 1024 levels, else
 * OutOfLineBitpacking with the page's widest width; else Flat(16). */
void bri_level_codec_choose(const uint16_t *lv, uint64_t n, bri_level_codec *c);
bri_cenc *bri_level_codec_pb(const bri_level_codec *c, bri_pb_arena *a);
/* Appends the block encoding of n levels. */
int bri_level_codec_encode(const bri_level_codec *c, const uint16_t *lv, uint64_t n,
                           bri_ebuf *out, bri_error *err);
/* 2.2 Rle block frame of n u16 levels: u64 values_bytes | u16 values | u8 lengths. */
int bri_level_rle_block(const uint16_t *lv, uint64_t n, bri_ebuf *out, bri_error *err);

/* ---- the page being encoded --------------------------------------------------- */
typedef struct bri_enc_page {
  const bri_enc_input *in;
  const bri_enc_options *opt;
  const uint16_t *rep, *def; /* NULL when absent or all zero (def) */
  uint16_t max_rep, max_def, max_visible_def; /* from the layers */
  uint16_t data_max_rep, data_max_def;        /* largest values present */
  uint64_t n_slots, n_levels;
  uint64_t n_null_slots;                      /* visible items with def > 0 */
  bri_pb_arena arena;
  /* dictionary pages (enc_dict.c): indices replace the values in the chunks */
  bri_ebuf dict_buf;
  bri_cenc *dict_enc;
  uint64_t dict_items;
  bri_values indices;
  uint8_t *indices_data;
} bri_enc_page;

/* Builds pg's dictionary, items buffer and indices from in->values. */
int bri_enc_dict_build(bri_enc_page *pg, bri_error *err);

/* Bytes of one value slot of a FIXED bri_values (bits % 8 == 0), FSL included. */
uint64_t bri_enc_slot_bytes(const bri_values *v);
/* Longest value in bytes (FIXED: the slot; VARIABLE: longest value; STRUCT: sum). */
uint64_t bri_enc_max_value_bytes(const bri_values *v);

int bri_enc_miniblock(bri_enc_page *pg, bri_encoded_page *out, bri_error *err);
int bri_enc_fullzip(bri_enc_page *pg, bri_encoded_page *out, bri_error *err);

/* Bit width of n T-bit little-endian words at p (length of their OR). */
unsigned bri_enc_bit_width(const uint8_t *p, unsigned t, uint64_t n);

/* Copies n bits from src (starting at bit src_bit) to dst starting at bit 0. */
void bri_enc_bits_extract(uint8_t *dst, const uint8_t *src, uint64_t src_bit, uint64_t n);

#endif
