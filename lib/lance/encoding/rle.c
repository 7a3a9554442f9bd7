/* rle.c: run-length decode and encode (see rle.h). Values are copied as raw
 * T-bit byte groups, so one code path serves every width. */
#include "lance/encoding/rle.h"

#include <string.h>

#include "util/bytes.h"

static int width_ok(unsigned t) { return t == 8 || t == 16 || t == 32 || t == 64; }

int bri_rle_decode(unsigned t, const uint8_t *values, size_t vlen, const uint8_t *lengths,
                   size_t llen, uint64_t n, uint8_t *out, bri_error *err) {
  if (!width_ok(t))
    return bri_error_set(err, BRI_ECORRUPT, "Rle: value width %u bits is not 8, 16, 32 or 64", t);
  const size_t tb = t / 8;
  if (vlen % tb)
    return bri_error_set(err, BRI_ECORRUPT,
                         "Rle: run values take %zu bytes, not a multiple of the %zu-byte value",
                         vlen, tb);
  size_t runs = vlen / tb;
  if (runs != llen)
    return bri_error_set(err, BRI_ECORRUPT, "Rle: %zu run values but %zu run lengths", runs,
                         llen);
  uint64_t done = 0;
  for (size_t r = 0; r < runs && done < n; r++) {
    uint64_t len = lengths[r];
    if (len > n - done) len = n - done;
    const uint8_t *v = values + r * tb;
    uint8_t *dst = out + done * tb;
    switch (tb) {
    case 1: memset(dst, v[0], (size_t)len); break;
    default:
      for (uint64_t i = 0; i < len; i++) memcpy(dst + i * tb, v, tb);
    }
    done += len;
  }
  if (done < n)
    return bri_error_set(err, BRI_ECORRUPT, "Rle: %zu runs hold %llu values but %llu are expected",
                         runs, (unsigned long long)done, (unsigned long long)n);
  return 0;
}

int bri_rle_block_decode(unsigned t, const uint8_t *buf, size_t len, uint64_t n, uint8_t *out,
                         bri_error *err) {
  if (len < 8)
    return bri_error_set(err, BRI_ECORRUPT,
                         "Rle block: %zu bytes, too short for the 8-byte values length", len);
  uint64_t vbytes = bri_le64(buf);
  if (vbytes > len - 8)
    return bri_error_set(err, BRI_ECORRUPT,
                         "Rle block: prefix claims %llu bytes of run values but only %zu follow",
                         (unsigned long long)vbytes, len - 8);
  return bri_rle_decode(t, buf + 8, (size_t)vbytes, buf + 8 + vbytes, len - 8 - (size_t)vbytes, n,
                        out, err);
}

size_t bri_rle_count_runs(unsigned t, const uint8_t *in, uint64_t n) {
  const size_t tb = t / 8;
  size_t runs = 0;
  uint64_t i = 0;
  while (i < n) {
    uint64_t j = i + 1;
    while (j < n && j - i < 255 && memcmp(in + j * tb, in + i * tb, tb) == 0) j++;
    runs++;
    i = j;
  }
  return runs;
}

size_t bri_rle_encode(unsigned t, const uint8_t *in, uint64_t n, uint8_t *values,
                      uint8_t *lengths) {
  const size_t tb = t / 8;
  size_t runs = 0;
  uint64_t i = 0;
  while (i < n) {
    uint64_t j = i + 1;
    while (j < n && j - i < 255 && memcmp(in + j * tb, in + i * tb, tb) == 0) j++;
    memcpy(values + runs * tb, in + i * tb, tb);
    lengths[runs] = (uint8_t)(j - i);
    runs++;
    i = j;
  }
  return runs;
}
