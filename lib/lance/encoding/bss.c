/* bss.c: ByteStreamSplit transposition in both directions (see bss.h). The
 * loops run stream-outer so that reads (decode) or writes (encode) of each
 * stream are sequential. */
#include "lance/encoding/bss.h"

void bri_bss_decode(size_t bytes_per_value, const uint8_t *in, uint64_t n, uint8_t *out) {
  for (size_t j = 0; j < bytes_per_value; j++) {
    const uint8_t *stream = in + j * n;
    for (uint64_t i = 0; i < n; i++) out[i * bytes_per_value + j] = stream[i];
  }
}

void bri_bss_encode(size_t bytes_per_value, const uint8_t *in, uint64_t n, uint8_t *out) {
  for (size_t j = 0; j < bytes_per_value; j++) {
    uint8_t *stream = out + j * n;
    for (uint64_t i = 0; i < n; i++) stream[i] = in[i * bytes_per_value + j];
  }
}
