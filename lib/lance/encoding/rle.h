/* rle.h: Lance's run-length encoding (CompressiveEncoding Rle, docs/format/file.md
 * section 7.10).
 *
 * A run is a T-bit value (T in 8, 16, 32, 64) and a u8 length; runs longer
 * than 255 are split into several runs of the same value. In a mini-block
 * chunk the values and the lengths are two separate chunk buffers; in block
 * context (2.2 levels and dictionaries) one buffer holds
 * `u64 LE values_bytes | values | lengths`. Decoding expands runs until the
 * expected count is reached (extra runs are ignored, as Lance does) and fails
 * if the runs end early. */
#ifndef BRI_ENCODING_RLE_H
#define BRI_ENCODING_RLE_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* Expands the runs of `values` (vlen bytes, T-bit words) and `lengths` (llen
 * u8) into n T-bit values at `out` (n * t / 8 bytes). */
int bri_rle_decode(unsigned t, const uint8_t *values, size_t vlen, const uint8_t *lengths,
                   size_t llen, uint64_t n, uint8_t *out, bri_error *err);

/* The block form: splits `buf` at its u64 prefix and calls bri_rle_decode. */
int bri_rle_block_decode(unsigned t, const uint8_t *buf, size_t len, uint64_t n, uint8_t *out,
                         bri_error *err);

/* Number of runs (after splitting at 255) that n T-bit values need. */
size_t bri_rle_count_runs(unsigned t, const uint8_t *in, uint64_t n);

/* Writes the runs of n T-bit values: run values to `values` (runs * t / 8
 * bytes) and lengths to `lengths` (runs bytes); returns the run count. */
size_t bri_rle_encode(unsigned t, const uint8_t *in, uint64_t n, uint8_t *values,
                      uint8_t *lengths);

#endif
