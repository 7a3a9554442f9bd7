/* general.h: Lance's General compression units (zstd and lz4, docs/format/file.md
 * section 7.8).
 *
 * A unit is `u64 LE uncompressed_len | zstd frame(s)` or
 * `u32 LE uncompressed_len | raw LZ4 block`. Readers must also accept a bare
 * zstd stream without the prefix (older writers): a unit that starts with the
 * zstd magic and whose frame header's reserved bit (byte 4 & 0x10) is clear.
 *
 * Design choice: decompression never produces more than the unit declares, and
 * refuses before allocating when the declared size is above the caller's cap
 * (a zstd bomb costs at most the cap). A bare legacy stream has no declared
 * size: it is decoded in steps and stops at the cap. */
#ifndef BRI_ENCODING_GENERAL_H
#define BRI_ENCODING_GENERAL_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* Values of lance.encodings21.CompressionScheme. */
enum { BRI_GENERAL_LZ4 = 1, BRI_GENERAL_ZSTD = 2 };

/* Reusable decompression state (a zstd context), so that per-value units do
 * not set one up each time. Zero-initialise; release with
 * bri_general_decoder_dispose. */
typedef struct bri_general_decoder {
  void *zstd;
} bri_general_decoder;
void bri_general_decoder_dispose(bri_general_decoder *dec);

/* Decompresses one unit into a malloc'd buffer (*out, *out_len; *out may be
 * NULL when the length is 0). dec may be NULL. More than max_out bytes is an
 * error (BRI_ECORRUPT, naming the declared size and the cap). */
int bri_general_decompress(bri_general_decoder *dec, int scheme, const uint8_t *in, size_t len,
                           size_t max_out, uint8_t **out, size_t *out_len, bri_error *err);

/* Compresses one unit with Lance's framing (zstd at `level`, lz4 ignores it). */
int bri_general_compress(int scheme, int level, const uint8_t *in, size_t len, uint8_t **out,
                         size_t *out_len, bri_error *err);

/* "zstd", "lz4" or "unknown". */
const char *bri_general_scheme_name(int scheme);

#endif
