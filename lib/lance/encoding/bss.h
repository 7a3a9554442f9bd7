/* bss.h: ByteStreamSplit (docs/format/file.md section 7.11).
 *
 * n values of B bytes are stored as B byte streams: stream j holds byte j of
 * every value, so value i byte j is at in[j * n + i]. Lance uses it for 32-
 * and 64-bit values, usually under a General (zstd) wrapper; the functions
 * accept any B from 1 to 8. */
#ifndef BRI_ENCODING_BSS_H
#define BRI_ENCODING_BSS_H

#include <stddef.h>
#include <stdint.h>

/* in: n * bytes_per_value bytes of streams; out: n values back to back. */
void bri_bss_decode(size_t bytes_per_value, const uint8_t *in, uint64_t n, uint8_t *out);
void bri_bss_encode(size_t bytes_per_value, const uint8_t *in, uint64_t n, uint8_t *out);

#endif
