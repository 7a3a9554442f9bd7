/* test_encoding_codecs.c: the raw codecs of lib/lance/encoding: FastLanes
 * pack/unpack for every T and W against an independent bit-by-bit reference,
 * the InlineBitpacking / OutOfLineBitpacking framings (including Lance's tail
 * rule), Rle, ByteStreamSplit, General (zstd/lz4 framing, legacy bare zstd,
 * size caps) and FSST, using the real bytes quoted in
 * docs/format/examples.md sections 2, 3, 4, 5, 6, 7, 8, 9 and 13. */
#include <lz4.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "lance/encoding/bitpack.h"
#include "lance/encoding/bss.h"
#include "lance/encoding/fsst.h"
#include "lance/encoding/general.h"
#include "lance/encoding/rle.h"
#include "testutil.h"
#include "util/bytes.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* ---- an independent FastLanes reference (docs/format/file.md 7.4), bit by bit ---- */
static const unsigned ORDER[8] = {0, 4, 2, 6, 1, 5, 3, 7};

/* Packs 1024 values (uint64 array) into bytes: value index(row, lane) puts its
 * W bits at stream bit row*W of lane `lane`, whose word k is P[LANES*k + lane]. */
static void ref_pack(unsigned t, unsigned w, const uint64_t *in, uint8_t *out) {
  unsigned lanes = 1024 / t;
  memset(out, 0, (size_t)w * 128);
  for (unsigned lane = 0; lane < lanes; lane++)
    for (unsigned row = 0; row < t; row++) {
      uint64_t v = in[ORDER[row / 8] * 16 + (row % 8) * 128 + lane];
      for (unsigned b = 0; b < w; b++) {
        if (!((v >> b) & 1)) continue;
        uint64_t sbit = (uint64_t)row * w + b;
        uint64_t word = lanes * (sbit / t) + lane;
        uint64_t bit = word * t + sbit % t;
        out[bit / 8] |= (uint8_t)(1u << (bit % 8));
      }
    }
}

static void store(unsigned t, void *arr, size_t i, uint64_t v) {
  switch (t) {
  case 8: ((uint8_t *)arr)[i] = (uint8_t)v; break;
  case 16: ((uint16_t *)arr)[i] = (uint16_t)v; break;
  case 32: ((uint32_t *)arr)[i] = (uint32_t)v; break;
  default: ((uint64_t *)arr)[i] = v;
  }
}
static uint64_t load(unsigned t, const void *arr, size_t i) {
  switch (t) {
  case 8: return ((const uint8_t *)arr)[i];
  case 16: return ((const uint16_t *)arr)[i];
  case 32: return ((const uint32_t *)arr)[i];
  default: return ((const uint64_t *)arr)[i];
  }
}

START_TEST(fastlanes_all_widths) {
  static const unsigned ts[] = {8, 16, 32, 64};
  uint64_t vals[1024], in[1024], out[1024], packed[1024];
  uint8_t ref[8192];
  for (int ti = 0; ti < 4; ti++) {
    unsigned t = ts[ti];
    for (unsigned w = 0; w <= t; w++) {
      uint64_t mask = w == 64 ? UINT64_MAX : (((uint64_t)1 << w) - 1);
      for (int i = 0; i < 1024; i++) {
        vals[i] = rnd() & mask;
        if (i % 97 == 0) vals[i] = mask; /* all ones hits every word boundary */
        store(t, in, (size_t)i, vals[i]);
      }
      bri_fastlanes_pack(t, w, in, packed);
      ref_pack(t, w, vals, ref);
      ck_assert_msg(memcmp(packed, ref, (size_t)w * 128) == 0, "pack T=%u W=%u differs from reference",
                    t, w);
      memset(out, 0xa5, sizeof out);
      bri_fastlanes_unpack(t, w, packed, out);
      for (int i = 0; i < 1024; i++)
        ck_assert_msg(load(t, out, (size_t)i) == vals[i], "T=%u W=%u value %d", t, w, i);
      ck_assert_uint_eq(bri_bitpack_width(t, in, 1024), w == 0 ? 0 : w);
    }
  }
}
END_TEST

/* Bits above W are dropped by pack (Lance packs masked values). */
START_TEST(fastlanes_masks_input) {
  uint32_t in[1024], out[1024], packed[1024];
  for (int i = 0; i < 1024; i++) in[i] = 0xfffffff0u | (uint32_t)(i & 15);
  bri_fastlanes_pack(32, 4, in, packed);
  bri_fastlanes_unpack(32, 4, packed, out);
  for (int i = 0; i < 1024; i++) ck_assert_uint_eq(out[i], (uint32_t)(i & 15));
}
END_TEST

/* docs/format/examples.md section 2: ids 1000..1999 as InlineBitpacking(64). */
START_TEST(inline_bitpack_worked_example_ids) {
  uint8_t in[1000 * 8], buf[9000], out[1000 * 8];
  for (int i = 0; i < 1000; i++) bri_put_le64(in + 8 * i, 1000 + (uint64_t)i);
  size_t len = bri_inline_bitpack_encode(64, in, 1000, buf);
  ck_assert_uint_eq(len, 1416); /* 8 + 11 * 128 */
  static const uint8_t head[] = {0x0b, 0, 0, 0, 0, 0, 0, 0, 0xe8, 0x43, 0x23, 0x3a, 0xd1, 0x8a, 0x5e, 0x34,
                                 0xe9, 0x4b, 0x63, 0x3a, 0xd3, 0x9a, 0xde, 0x34, 0xea, 0x53, 0xa3, 0x3a,
                                 0xd5, 0xaa, 0x5e, 0x35};
  ck_assert_mem_eq(buf, head, sizeof head);
  ck_assert_uint_eq(bri_le64(buf + 8 + 16 * 8), 0x514a254428ed1ba3ull); /* P[16] */
  bri_error err = {0};
  ck_assert_int_eq(bri_inline_bitpack_decode(64, buf, len, 1000, out, &err), 0);
  ck_assert_mem_eq(out, in, sizeof in);
  ck_assert_uint_eq(bri_le64(out + 8 * 128), 1128);
  ck_assert_uint_eq(bri_le64(out + 8 * 640), 1640);
}
END_TEST

/* docs/format/examples.md section 3: def levels of ids 1000..1999 (null when id % 3
 * == 0) as one InlineBitpacking(16) unit of width 1. */
START_TEST(inline_bitpack_worked_example_def) {
  uint8_t in[1000 * 2], buf[4096], out[1000 * 2];
  for (int i = 0; i < 1000; i++) bri_put_le16(in + 2 * i, (1000 + i) % 3 == 0);
  size_t len = bri_inline_bitpack_encode(16, in, 1000, buf);
  ck_assert_uint_eq(len, 130);
  static const uint8_t head[] = {0x01, 0x00, 0x92, 0x24, 0x24, 0x49, 0x49, 0x92, 0x92, 0x24};
  ck_assert_mem_eq(buf, head, sizeof head);
  bri_error err = {0};
  ck_assert_int_eq(bri_inline_bitpack_decode(16, buf, len, 1000, out, &err), 0);
  ck_assert_mem_eq(out, in, sizeof in);
}
END_TEST

START_TEST(inline_bitpack_errors) {
  uint8_t buf[16] = {70, 0, 0, 0, 0, 0, 0, 0}, out[8192];
  bri_error err = {0};
  ck_assert_int_eq(bri_inline_bitpack_decode(64, buf, 8, 10, out, &err), BRI_ECORRUPT);
  ck_assert_str_eq(err.msg, "InlineBitpacking: unit 0 at byte 0 has bit width 70, more than the "
                            "64-bit values it packs");
  buf[0] = 3; /* needs 384 packed bytes */
  ck_assert_int_eq(bri_inline_bitpack_decode(64, buf, 16, 10, out, &err), BRI_ECORRUPT);
  ck_assert_str_eq(err.msg, "InlineBitpacking: unit 0 (width 3) needs 384 packed bytes at byte 8 "
                            "but the buffer has 16 bytes");
  ck_assert_int_eq(bri_inline_bitpack_decode(64, buf, 4, 10, out, &err), BRI_ECORRUPT);
  ck_assert_int_eq(bri_inline_bitpack_decode(12, buf, 16, 10, out, &err), BRI_ECORRUPT);
  ck_assert_ptr_nonnull(strstr(err.msg, "12 bits is not 8, 16, 32 or 64"));
  /* W = 0: no packed bytes, all zeros; several units in sequence. */
  uint8_t z[4] = {0, 0, 0, 0};
  uint16_t vals[2048];
  memset(vals, 0xff, sizeof vals);
  ck_assert_int_eq(bri_inline_bitpack_decode(16, z, 4, 2048, (uint8_t *)vals, &err), 0);
  for (int i = 0; i < 2048; i++) ck_assert_uint_eq(vals[i], 0);
  ck_assert_int_eq(bri_inline_bitpack_decode(16, z, 3, 2048, (uint8_t *)vals, &err), BRI_ECORRUPT);
}
END_TEST

/* OutOfLineBitpacking: Lance's tail rule and both tail forms
 * (docs/format/examples.md section 4: 1052 levels at W = 1 -> 184 bytes, 311
 * levels -> one 128-byte unit). */
START_TEST(outofline_tail_rule) {
  uint16_t lv[5000], back[5000];
  uint8_t buf[20000];
  bri_error err = {0};
  for (int i = 0; i < 5000; i++) lv[i] = (uint16_t)(i % 2);
  ck_assert_uint_eq(bri_outofline_bitpack_encode(16, 1, (uint8_t *)lv, 1052, buf), 184);
  ck_assert_uint_eq(bri_outofline_bitpack_encode(16, 1, (uint8_t *)lv, 311, buf), 128);
  static const uint64_t ns[] = {0, 1, 311, 1023, 1024, 1025, 1052, 2048, 3000, 5000};
  static const unsigned ws[] = {0, 1, 2, 5, 9, 15, 16};
  for (size_t a = 0; a < sizeof ns / sizeof *ns; a++)
    for (size_t b = 0; b < sizeof ws / sizeof *ws; b++) {
      unsigned w = ws[b];
      for (uint64_t i = 0; i < ns[a]; i++) lv[i] = (uint16_t)(rnd() & ((1u << w) - 1));
      size_t len = bri_outofline_bitpack_encode(16, w, (uint8_t *)lv, ns[a], buf);
      ck_assert_uint_le(len, bri_outofline_bitpack_max_bytes(16, w, ns[a]));
      memset(back, 0xee, sizeof back);
      ck_assert_int_eq(bri_outofline_bitpack_decode(16, w, buf, len, ns[a], (uint8_t *)back, &err), 0);
      ck_assert_msg(memcmp(back, lv, ns[a] * 2) == 0, "n=%llu w=%u", (unsigned long long)ns[a], w);
    }
  /* Truncated: one byte short of the packed tail. */
  for (int i = 0; i < 311; i++) lv[i] = 1;
  size_t len = bri_outofline_bitpack_encode(16, 1, (uint8_t *)lv, 311, buf);
  ck_assert_int_eq(bri_outofline_bitpack_decode(16, 1, buf, len - 1, 311, (uint8_t *)back, &err),
                   BRI_ECORRUPT);
  ck_assert_str_eq(err.msg, "OutOfLineBitpacking: the 311-value tail needs 622 raw or 128 packed "
                            "bytes after byte 0 but 127 remain");
  ck_assert_int_eq(bri_outofline_bitpack_decode(16, 17, buf, len, 311, (uint8_t *)back, &err),
                   BRI_ECORRUPT);
  ck_assert_int_eq(bri_outofline_bitpack_decode(16, 2, buf, 100, 3000, (uint8_t *)back, &err),
                   BRI_ECORRUPT);
}
END_TEST

/* docs/format/examples.md section 5: Rle block format for rep levels. */
START_TEST(rle_block_worked_example) {
  static const uint8_t rep[] = {0x0a, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0,
                                1,    0, 3, 1, 3, 2, 3};
  uint16_t out[12];
  bri_error err = {0};
  ck_assert_int_eq(bri_rle_block_decode(16, rep, sizeof rep, 12, (uint8_t *)out, &err), 0);
  static const uint16_t want[] = {1, 1, 1, 0, 1, 1, 1, 0, 0, 1, 1, 1};
  ck_assert_mem_eq(out, want, sizeof want);
  /* section 7.10: 700 zeros then 324 ones */
  static const uint8_t def[] = {0x0a, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0,
                                0xff, 0xff, 0xbe, 0xff, 0x45};
  uint16_t d[1024];
  ck_assert_int_eq(bri_rle_block_decode(16, def, sizeof def, 1024, (uint8_t *)d, &err), 0);
  for (int i = 0; i < 1024; i++) ck_assert_uint_eq(d[i], i >= 700);
  /* section 13: 3000 levels of 1 in 12 runs (11 x 255 + 195) */
  uint8_t all[44] = {24};
  for (int i = 0; i < 12; i++) all[8 + 2 * i] = 1;
  memset(all + 32, 0xff, 11);
  all[43] = 0xc3;
  uint16_t *big = malloc(3000 * 2);
  ck_assert_int_eq(bri_rle_block_decode(16, all, 44, 3000, (uint8_t *)big, &err), 0);
  for (int i = 0; i < 3000; i++) ck_assert_uint_eq(big[i], 1);
  free(big);
  /* errors */
  ck_assert_int_eq(bri_rle_block_decode(16, rep, sizeof rep, 13, (uint8_t *)out, &err), BRI_ECORRUPT);
  ck_assert_str_eq(err.msg, "Rle: 5 runs hold 12 values but 13 are expected");
  ck_assert_int_eq(bri_rle_block_decode(16, rep, 7, 1, (uint8_t *)out, &err), BRI_ECORRUPT);
  uint8_t bad[10] = {0xff, 0, 0, 0, 0, 0, 0, 0, 1, 1};
  ck_assert_int_eq(bri_rle_block_decode(16, bad, 10, 1, (uint8_t *)out, &err), BRI_ECORRUPT);
  ck_assert_str_eq(err.msg, "Rle block: prefix claims 255 bytes of run values but only 2 follow");
  ck_assert_int_eq(bri_rle_decode(32, rep + 8, 8, rep + 18, 5, 1, (uint8_t *)out, &err), BRI_ECORRUPT);
  ck_assert_str_eq(err.msg, "Rle: 2 run values but 5 run lengths");
  ck_assert_int_eq(bri_rle_decode(32, rep + 8, 7, rep + 18, 5, 1, (uint8_t *)out, &err), BRI_ECORRUPT);
}
END_TEST

/* docs/format/examples.md section 6: the values i / 1000 in Rle mini-block form. */
START_TEST(rle_values_worked_example) {
  int32_t in[4096];
  for (int i = 0; i < 4096; i++) in[i] = i / 1000;
  ck_assert_uint_eq(bri_rle_count_runs(32, (uint8_t *)in, 4096), 17);
  uint8_t vals[17 * 4], lens[17];
  ck_assert_uint_eq(bri_rle_encode(32, (uint8_t *)in, 4096, vals, lens), 17);
  static const uint8_t want_lens[] = {255, 255, 255, 235, 255, 255, 255, 235, 255,
                                      255, 255, 235, 255, 255, 255, 235, 96};
  ck_assert_mem_eq(lens, want_lens, 17);
  static const int32_t want_vals[] = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4};
  ck_assert_mem_eq(vals, want_vals, sizeof want_vals);
  int32_t out[4096];
  bri_error err = {0};
  ck_assert_int_eq(bri_rle_decode(32, vals, sizeof vals, lens, 17, 4096, (uint8_t *)out, &err), 0);
  ck_assert_mem_eq(out, in, sizeof in);
  /* extra runs beyond the count are ignored, like Lance */
  ck_assert_int_eq(bri_rle_decode(32, vals, sizeof vals, lens, 17, 10, (uint8_t *)out, &err), 0);
  /* every width */
  uint64_t x[600], y[600];
  for (unsigned t = 8; t <= 64; t *= 2) {
    for (int i = 0; i < 600; i++) store(t, x, (size_t)i, (uint64_t)(i / 7) * 0x0101010101010101ull);
    uint8_t v[600 * 8], l[600];
    size_t runs = bri_rle_encode(t, (uint8_t *)x, 600, v, l);
    ck_assert_int_eq(bri_rle_decode(t, v, runs * t / 8, l, runs, 600, (uint8_t *)y, &err), 0);
    ck_assert_mem_eq(x, y, 600 * t / 8);
  }
}
END_TEST

/* docs/format/examples.md section 9: ByteStreamSplit of dictionary indices 0..1023. */
START_TEST(bss_streams) {
  uint8_t streams[4096], out[4096], back[4096];
  for (int i = 0; i < 1024; i++) {
    streams[i] = (uint8_t)i;
    streams[1024 + i] = (uint8_t)(i >> 8);
    streams[2048 + i] = 0;
    streams[3072 + i] = 0;
  }
  bri_bss_decode(4, streams, 1024, out);
  for (int i = 0; i < 1024; i++) ck_assert_uint_eq(bri_le32(out + 4 * i), (uint32_t)i);
  bri_bss_encode(4, out, 1024, back);
  ck_assert_mem_eq(back, streams, sizeof streams);
  uint64_t v[512], w[512];
  uint8_t s[4096];
  for (int i = 0; i < 512; i++) v[i] = rnd();
  bri_bss_encode(8, (uint8_t *)v, 512, s);
  bri_bss_decode(8, s, 512, (uint8_t *)w);
  ck_assert_mem_eq(v, w, sizeof v);
}
END_TEST

START_TEST(general_zstd) {
  uint8_t in[4096];
  for (int i = 0; i < 4096; i++) in[i] = (uint8_t)(i & 0x3f);
  uint8_t *c, *d;
  size_t clen, dlen;
  bri_error err = {0};
  ck_assert_int_eq(bri_general_compress(BRI_GENERAL_ZSTD, 3, in, sizeof in, &c, &clen, &err), 0);
  ck_assert_uint_eq(bri_le64(c), 4096); /* u64 prefix, then the frame magic */
  ck_assert_uint_eq(bri_le32(c + 8), 0xFD2FB528u);
  bri_general_decoder dec = {0};
  ck_assert_int_eq(bri_general_decompress(&dec, BRI_GENERAL_ZSTD, c, clen, 4096, &d, &dlen, &err), 0);
  ck_assert_uint_eq(dlen, 4096);
  ck_assert_mem_eq(d, in, 4096);
  free(d);
  /* the cap refuses before allocating */
  ck_assert_int_eq(bri_general_decompress(&dec, BRI_GENERAL_ZSTD, c, clen, 4095, &d, &dlen, &err),
                   BRI_ECORRUPT);
  ck_assert_str_eq(err.msg, "zstd: unit declares 4096 uncompressed bytes, more than the 4095 it may hold");
  /* a bomb: declares 1 TiB */
  bri_put_le64(c, (uint64_t)1 << 40);
  ck_assert_int_eq(bri_general_decompress(&dec, BRI_GENERAL_ZSTD, c, clen, (size_t)1 << 30, &d, &dlen, &err),
                   BRI_ECORRUPT);
  /* declares less than the frame holds */
  bri_put_le64(c, 100);
  ck_assert_int_eq(bri_general_decompress(&dec, BRI_GENERAL_ZSTD, c, clen, 1 << 20, &d, &dlen, &err),
                   BRI_ECORRUPT);
  ck_assert_ptr_nonnull(strstr(err.msg, "declaring 100 bytes does not decompress"));
  /* declares more than the frame holds */
  bri_put_le64(c, 5000);
  ck_assert_int_eq(bri_general_decompress(&dec, BRI_GENERAL_ZSTD, c, clen, 1 << 20, &d, &dlen, &err),
                   BRI_ECORRUPT);
  free(c);
  /* legacy: a bare zstd frame without the prefix */
  size_t bound = ZSTD_compressBound(sizeof in);
  uint8_t *bare = malloc(bound);
  size_t blen = ZSTD_compress(bare, bound, in, sizeof in, 1);
  ck_assert(!ZSTD_isError(blen));
  ck_assert_int_eq(bri_general_decompress(&dec, BRI_GENERAL_ZSTD, bare, blen, 4096, &d, &dlen, &err), 0);
  ck_assert_uint_eq(dlen, 4096);
  ck_assert_mem_eq(d, in, 4096);
  free(d);
  ck_assert_int_eq(bri_general_decompress(&dec, BRI_GENERAL_ZSTD, bare, blen, 1000, &d, &dlen, &err),
                   BRI_ECORRUPT);
  /* a streamed frame without a content size: the cap still holds */
  ZSTD_CCtx *cc = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, 0);
  uint8_t big[65536] = {0};
  size_t slen = ZSTD_compress2(cc, bare, bound, big, sizeof big);
  ZSTD_freeCCtx(cc);
  ck_assert(!ZSTD_isError(slen) && slen < bound);
  ck_assert_int_eq(bri_general_decompress(&dec, BRI_GENERAL_ZSTD, bare, slen, 1000, &d, &dlen, &err),
                   BRI_ECORRUPT);
  ck_assert_ptr_nonnull(strstr(err.msg, "expands past the 1000 bytes"));
  ck_assert_int_eq(bri_general_decompress(&dec, BRI_GENERAL_ZSTD, bare, slen, 65536, &d, &dlen, &err), 0);
  ck_assert_uint_eq(dlen, 65536);
  free(d);
  free(bare);
  /* empty unit, garbage, unknown scheme */
  ck_assert_int_eq(bri_general_decompress(&dec, BRI_GENERAL_ZSTD, in, 0, 10, &d, &dlen, &err), 0);
  ck_assert_uint_eq(dlen, 0);
  static const uint8_t junk[12] = {4, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4};
  ck_assert_int_eq(bri_general_decompress(&dec, BRI_GENERAL_ZSTD, junk, 12, 10, &d, &dlen, &err), BRI_ECORRUPT);
  ck_assert_int_eq(bri_general_decompress(&dec, 0, junk, 12, 10, &d, &dlen, &err), BRI_EUNSUPPORTED);
  bri_general_decoder_dispose(&dec);
}
END_TEST

/* docs/format/examples.md section 8: a 55-byte dictionary behind a u32 LZ4 prefix. */
START_TEST(general_lz4) {
  static const uint8_t dict[55] = {0x20, 0, 0, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 9, 0, 0, 0,
                                   0x0c, 0, 0, 0, 0x13, 0, 0, 0, 0x17, 0, 0, 0, 'g', 'r', 'e', 'e',
                                   'n', 'b', 'l', 'u', 'e', 'r', 'e', 'd', 'm', 'a', 'g', 'e', 'n',
                                   't', 'a', 'c', 'y', 'a', 'n'};
  uint8_t *c, *d;
  size_t clen, dlen;
  bri_error err = {0};
  ck_assert_int_eq(bri_general_compress(BRI_GENERAL_LZ4, 0, dict, 55, &c, &clen, &err), 0);
  static const uint8_t prefix[4] = {0x37, 0, 0, 0};
  ck_assert_mem_eq(c, prefix, 4);
  ck_assert_int_eq(bri_general_decompress(NULL, BRI_GENERAL_LZ4, c, clen, 55, &d, &dlen, &err), 0);
  ck_assert_uint_eq(dlen, 55);
  ck_assert_mem_eq(d, dict, 55);
  free(d);
  ck_assert_int_eq(bri_general_decompress(NULL, BRI_GENERAL_LZ4, c, clen, 54, &d, &dlen, &err), BRI_ECORRUPT);
  ck_assert_str_eq(err.msg, "lz4: unit declares 55 uncompressed bytes, more than the 54 it may hold");
  c[0] = 56; /* the block decodes to 55, not the declared 56 */
  ck_assert_int_eq(bri_general_decompress(NULL, BRI_GENERAL_LZ4, c, clen, 100, &d, &dlen, &err), BRI_ECORRUPT);
  ck_assert_int_eq(bri_general_decompress(NULL, BRI_GENERAL_LZ4, c, 3, 100, &d, &dlen, &err), BRI_ECORRUPT);
  free(c);
}
END_TEST

/* docs/format/examples.md section 7: an FSST string from the `s` column. */
static uint8_t *example_table(size_t *len) {
  uint8_t *t = calloc(1, 2312);
  static const uint8_t hdr[8] = {0xff, 0x00, 0x2c, 0x01, 0x54, 0x53, 0x53, 0x46};
  memcpy(t, hdr, 8);
  for (int i = 0; i < 255; i++) {
    t[8 + 8 * i] = (uint8_t)('A' + i % 26); /* filler symbols of length 1 */
    t[2048 + i] = 1;
  }
  struct { int code; const char *sym; } s[] = {
      {0x6f, "row1"}, {0xe4, "0"},     {0x18, "0 "},    {0xa2, "charlie "}, {0x7b, "kilo "},
      {0x79, "echo "}, {0x7d, "papa "}, {0x78, "golf "}, {0x7a, "mike "},     {0x02, "in"},
      {0x60, "dia"},  {0x00, "ro"},    {0x01, "nd"}};
  for (size_t i = 0; i < sizeof s / sizeof *s; i++) {
    memset(t + 8 + 8 * s[i].code, 0, 8);
    memcpy(t + 8 + 8 * s[i].code, s[i].sym, strlen(s[i].sym));
    t[2048 + s[i].code] = (uint8_t)strlen(s[i].sym);
  }
  *len = 2312;
  return t;
}

START_TEST(fsst_worked_example) {
  size_t tlen;
  uint8_t *tab = example_table(&tlen);
  bri_fsst_table t;
  bri_error err = {0};
  ck_assert_int_eq(bri_fsst_table_parse(tab, tlen, &t, &err), 0);
  ck_assert_uint_eq(t.n_symbols, 255);
  ck_assert(t.compressed);
  static const uint8_t in[] = {0x6f, 0xe4, 0xe4, 0x18, 0xa2, 0x7b, 0x79, 0x7d, 0x78, 0x7a, 0x78, 0x02, 0x60};
  const char *want = "row1000 charlie kilo echo papa golf mike golf india";
  uint64_t n;
  ck_assert_int_eq(bri_fsst_decoded_len(&t, in, sizeof in, &n, &err), 0);
  ck_assert_uint_eq(n, strlen(want));
  char out[128];
  size_t wrote;
  ck_assert_int_eq(bri_fsst_decode(&t, in, sizeof in, (uint8_t *)out, n, &wrote, &err), 0);
  ck_assert_uint_eq(wrote, n);
  ck_assert_mem_eq(out, want, n);
  /* escapes */
  static const uint8_t esc[] = {0xff, 'Z', 0x00, 0xff, 0xff};
  ck_assert_int_eq(bri_fsst_decode(&t, esc, 5, (uint8_t *)out, sizeof out, &wrote, &err), 0);
  ck_assert_uint_eq(wrote, 4);
  ck_assert_mem_eq(out, "Zro\xff", 4);
  ck_assert_int_eq(bri_fsst_decode(&t, esc, 4, (uint8_t *)out, sizeof out, &wrote, &err), BRI_ECORRUPT);
  ck_assert_str_eq(err.msg, "Fsst: string of 4 bytes ends with an escape");
  /* output bound */
  ck_assert_int_eq(bri_fsst_decode(&t, in, sizeof in, (uint8_t *)out, 10, &wrote, &err), BRI_ECORRUPT);
  /* a small table; a code beyond it */
  uint8_t small[8 + 3 * 9] = {3, 0, 0, 1, 0x54, 0x53, 0x53, 0x46, 'a', 0, 0, 0, 0, 0, 0, 0,
                              'b', 'c', 0, 0, 0, 0, 0, 0, 'd', 'e', 'f', 0, 0, 0, 0, 0, 1, 2, 3};
  ck_assert_int_eq(bri_fsst_table_parse(small, sizeof small, &t, &err), 0);
  static const uint8_t codes[] = {0, 1, 2, 0xff, '!', 3};
  ck_assert_int_eq(bri_fsst_decode(&t, codes, 5, (uint8_t *)out, sizeof out, &wrote, &err), 0);
  ck_assert_uint_eq(wrote, 7);
  ck_assert_mem_eq(out, "abcdef!", 7);
  ck_assert_int_eq(bri_fsst_decoded_len(&t, codes, 6, &n, &err), BRI_ECORRUPT);
  ck_assert_str_eq(err.msg, "Fsst: code 3 at byte 5 of a string names no symbol (table has 3)");
  ck_assert_int_eq(bri_fsst_decode(&t, codes, 6, (uint8_t *)out, sizeof out, &wrote, &err), BRI_ECORRUPT);
  /* bad tables */
  tab[2048 + 3] = 9;
  ck_assert_int_eq(bri_fsst_table_parse(tab, tlen, &t, &err), BRI_ECORRUPT);
  ck_assert_str_eq(err.msg, "Fsst: symbol 3 has length 9 at table byte 2051; lengths are 1..8");
  tab[2048 + 3] = 0;
  ck_assert_int_eq(bri_fsst_table_parse(tab, tlen, &t, &err), BRI_ECORRUPT);
  ck_assert_int_eq(bri_fsst_table_parse(tab, 2000, &t, &err), BRI_ECORRUPT);
  ck_assert_str_eq(err.msg, "Fsst: symbol table of 2000 bytes is too short for 255 symbols (2303 bytes)");
  tab[7] = 0x47;
  ck_assert_int_eq(bri_fsst_table_parse(tab, tlen, &t, &err), BRI_ECORRUPT);
  ck_assert_int_eq(bri_fsst_table_parse(tab, 5, &t, &err), BRI_ECORRUPT);
  free(tab);
  /* encoder_switch 0: raw strings (`00 00 00 00 54 53 53 46` + zeros) */
  uint8_t raw[2312] = {0, 0, 0, 0, 0x54, 0x53, 0x53, 0x46};
  ck_assert_int_eq(bri_fsst_table_parse(raw, sizeof raw, &t, &err), 0);
  ck_assert(!t.compressed);
  ck_assert_int_eq(bri_fsst_decode(&t, (const uint8_t *)"raw\xff", 4, (uint8_t *)out, 8, &wrote, &err), 0);
  ck_assert_uint_eq(wrote, 4);
  ck_assert_mem_eq(out, "raw\xff", 4);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("encoding_codecs");
  TCase *tc = tcase_create("codecs");
  tcase_add_test(tc, fastlanes_all_widths);
  tcase_add_test(tc, fastlanes_masks_input);
  tcase_add_test(tc, inline_bitpack_worked_example_ids);
  tcase_add_test(tc, inline_bitpack_worked_example_def);
  tcase_add_test(tc, inline_bitpack_errors);
  tcase_add_test(tc, outofline_tail_rule);
  tcase_add_test(tc, rle_block_worked_example);
  tcase_add_test(tc, rle_values_worked_example);
  tcase_add_test(tc, bss_streams);
  tcase_add_test(tc, general_zstd);
  tcase_add_test(tc, general_lz4);
  tcase_add_test(tc, fsst_worked_example);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(suite)
