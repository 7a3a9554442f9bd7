/* bitpack.h: FastLanes bit packing, and Lance's two framings of it.
 *
 * Owns the FastLanes 1024-value transposed layout (docs/format/file.md section 7.4)
 * for word sizes T = 8, 16, 32 and 64 bits, in both directions, plus the two
 * buffer framings Lance builds on it: InlineBitpacking (each 1024-value unit
 * is prefixed by its bit width W stored as one T-bit word) and
 * OutOfLineBitpacking (W is in the encoding; the tail after the last whole
 * unit is either one zero-padded unit or raw T-bit words, section 7.5).
 *
 * Design choice: the kernels work on whole 1024-value units held in native
 * T-bit arrays (the library requires a little-endian host, so file bytes and
 * native words coincide); the framing functions copy the packed words out of
 * the (possibly unaligned) file bytes before unpacking, and never read past
 * the lengths they are given. */
#ifndef BRI_ENCODING_BITPACK_H
#define BRI_ENCODING_BITPACK_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

#define BRI_FASTLANES_N 1024

/* Unpacks one unit: `packed` holds W * 1024 / T words of T bits, `out` receives
 * 1024 values (an array of uint8_t/uint16_t/uint32_t/uint64_t matching t).
 * Requires t in {8,16,32,64} and w <= t (callers check; asserted). W = 0
 * gives 1024 zeros and reads nothing. */
void bri_fastlanes_unpack(unsigned t, unsigned w, const void *packed, void *out);

/* Packs 1024 values (`in`, native T-bit array) into W * 1024 / T words
 * (`packed`); only the low W bits of each value are kept. */
void bri_fastlanes_pack(unsigned t, unsigned w, const void *in, void *packed);

/* Smallest W that holds every one of the n T-bit values of `in`. */
unsigned bri_bitpack_width(unsigned t, const void *in, size_t n);

/* Bytes of one packed unit: W * 128. */
static inline size_t bri_fastlanes_unit_bytes(unsigned w) { return (size_t)w * 128; }

/* InlineBitpacking decode: `buf` holds ceil(n / 1024) units, each a T-bit
 * little-endian W followed by W * 128 packed bytes. Writes n T-bit values to
 * `out` (n * t / 8 bytes, any alignment). Errors: W > T, or a unit that runs
 * past `len` (message says which unit and how many bytes were expected). */
int bri_inline_bitpack_decode(unsigned t, const uint8_t *buf, size_t len, uint64_t n,
                              uint8_t *out, bri_error *err);

/* Bytes bri_inline_bitpack_encode writes for n values of width t (upper bound:
 * every unit at W = T). */
size_t bri_inline_bitpack_max_bytes(unsigned t, uint64_t n);

/* InlineBitpacking encode, the way Lance writes it: each 1024-value unit (the
 * last one zero-padded) with its own minimal W. Returns the bytes written. */
size_t bri_inline_bitpack_encode(unsigned t, const uint8_t *in, uint64_t n, uint8_t *out);

/* OutOfLineBitpacking decode with the packed width w known from the encoding:
 * floor(n / 1024) whole units, then the tail, which is raw T-bit words iff the
 * buffer is exactly full_units * W * 128 + tail * T / 8 bytes long, else one
 * zero-padded unit. */
int bri_outofline_bitpack_decode(unsigned t, unsigned w, const uint8_t *buf, size_t len,
                                 uint64_t n, uint8_t *out, bri_error *err);

/* Upper bound of bri_outofline_bitpack_encode's output. */
size_t bri_outofline_bitpack_max_bytes(unsigned t, unsigned w, uint64_t n);

/* OutOfLineBitpacking encode with Lance's tail rule: a tail of r values is packed
 * into one zero-padded unit iff W * (1024 - r) < (T - W) * r, else stored raw. */
size_t bri_outofline_bitpack_encode(unsigned t, unsigned w, const uint8_t *in, uint64_t n,
                                    uint8_t *out);

#endif
