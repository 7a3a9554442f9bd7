/* enc_levels.c: block encodings of repetition/definition levels.
 *
 * Owns the choice Lance's DefaultCompressionStrategy makes for a page's u16
 * levels (one codec per page, applied to every chunk, docs/format/file.md sections
 * 3.1 and 5) and the three formats it produces: Flat(16) raw words,
 * InlineBitpacking(16) (one width-prefixed FastLanes unit) and
 * OutOfLineBitpacking(16 -> W) (units without headers and Lance's tail rule),
 * plus the Rle block frame that 2.2 all-null pages use for their levels.
 * The FastLanes kernels are lib/lance/encoding/bitpack.h's. */
#include <string.h>

#include "lance/encoding/bitpack.h"
#include "lance/encoding/enc_internal.h"
#include "lance/encoding/rle.h"

void bri_level_codec_choose(const uint16_t *lv, uint64_t n, bri_level_codec *c) {
  unsigned maxw = 0;
  bool has_zero_block = false;
  uint64_t blocks = (n + BRI_FASTLANES_N - 1) / BRI_FASTLANES_N;
  for (uint64_t b = 0; b < blocks; b++) {
    uint64_t start = b * BRI_FASTLANES_N;
    uint64_t cnt = n - start < BRI_FASTLANES_N ? n - start : BRI_FASTLANES_N;
    unsigned w = bri_enc_bit_width((const uint8_t *)(lv + start), 16, cnt);
    if (w == 0) has_zero_block = true;
    if (w > maxw) maxw = w;
  }
  /* Lance: a single block whose packed unit is not smaller than the raw
   * levels is "too small" to pack. */
  bool too_small = blocks == 1 && (uint64_t)BRI_FASTLANES_N * maxw / 8 >= n * 2;
  if (blocks == 0 || has_zero_block || too_small) {
    c->kind = BRI_LV_FLAT;
    c->width = 16;
  } else if (n <= BRI_FASTLANES_N) {
    c->kind = BRI_LV_INLINE_BP;
    c->width = maxw;
  } else {
    c->kind = BRI_LV_OOL_BP;
    c->width = maxw;
  }
}

bri_cenc *bri_level_codec_pb(const bri_level_codec *c, bri_pb_arena *a) {
  switch (c->kind) {
  case BRI_LV_INLINE_BP:
    return bri_pbe_inline_bp(a, 16);
  case BRI_LV_OOL_BP:
    return bri_pbe_outofline_bp(a, 16, c->width);
  default:
    return bri_pbe_flat(a, 16);
  }
}

int bri_level_codec_encode(const bri_level_codec *c, const uint16_t *lv, uint64_t n,
                           bri_ebuf *out, bri_error *err) {
  int rc;
  switch (c->kind) {
  case BRI_LV_INLINE_BP: { /* one width-prefixed unit per 1024 levels */
    uint16_t vals[BRI_FASTLANES_N], packed[BRI_FASTLANES_N];
    for (uint64_t s = 0; s < n; s += BRI_FASTLANES_N) {
      uint64_t cnt = n - s < BRI_FASTLANES_N ? n - s : BRI_FASTLANES_N;
      unsigned w = bri_enc_bit_width((const uint8_t *)(lv + s), 16, cnt);
      memset(vals, 0, sizeof vals);
      memcpy(vals, lv + s, (size_t)cnt * 2);
      bri_fastlanes_pack(16, w, vals, packed);
      if ((rc = bri_ebuf_put_le(out, w, 2, err)) || (rc = bri_ebuf_put(out, packed, (size_t)w * 128, err)))
        return rc;
    }
    return 0;
  }
  case BRI_LV_OOL_BP:
    if ((rc = bri_ebuf_reserve(out, bri_outofline_bitpack_max_bytes(16, c->width, n), err)))
      return rc;
    out->len += bri_outofline_bitpack_encode(16, c->width, (const uint8_t *)lv, n, out->p + out->len);
    return 0;
  default:
    return bri_ebuf_put(out, lv, (size_t)n * 2, err);
  }
}

int bri_level_rle_block(const uint16_t *lv, uint64_t n, bri_ebuf *out, bri_error *err) {
  size_t runs = bri_rle_count_runs(16, (const uint8_t *)lv, n);
  size_t base = out->len;
  int rc = bri_ebuf_reserve(out, 8 + runs * 3, err);
  if (rc) return rc;
  uint8_t *p = out->p + base;
  uint64_t vbytes = (uint64_t)runs * 2;
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(vbytes >> (8 * i));
  size_t got = bri_rle_encode(16, (const uint8_t *)lv, n, p + 8, p + 8 + runs * 2);
  (void)got;
  out->len = base + 8 + runs * 3;
  return 0;
}
