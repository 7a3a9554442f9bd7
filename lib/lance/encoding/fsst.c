/* fsst.c: FSST symbol table parsing and string decoding (see fsst.h).
 *
 * Decoding is a byte-at-a-time loop with explicit bounds on both sides; the
 * hot path (a code that is a symbol) copies a fixed 8 bytes when the output
 * has room for them and trims, which avoids a per-symbol variable memcpy. */
#include "lance/encoding/fsst.h"

#include <string.h>

#include "util/bytes.h"

#define FSST_ESCAPE 255

int bri_fsst_table_parse(const uint8_t *buf, size_t len, bri_fsst_table *t, bri_error *err) {
  memset(t, 0, sizeof *t);
  if (len < 8)
    return bri_error_set(err, BRI_ECORRUPT,
                         "Fsst: symbol table is %zu bytes, shorter than its 8-byte header", len);
  if (memcmp(buf + 4, "TSSF", 4) != 0)
    return bri_error_set(err, BRI_ECORRUPT,
                         "Fsst: symbol table header %02x %02x %02x %02x lacks the FSST magic "
                         "\"TSSF\" in bytes 4..7",
                         buf[4], buf[5], buf[6], buf[7]);
  t->n_symbols = buf[0];
  t->compressed = (buf[3] & 1) != 0;
  size_t need = 8 + (size_t)t->n_symbols * 9;
  if (len < need)
    return bri_error_set(err, BRI_ECORRUPT,
                         "Fsst: symbol table of %zu bytes is too short for %u symbols (%zu bytes)",
                         len, t->n_symbols, need);
  for (unsigned i = 0; i < t->n_symbols; i++) memcpy(t->symbols[i], buf + 8 + 8 * (size_t)i, 8);
  const uint8_t *lens = buf + 8 + 8 * (size_t)t->n_symbols;
  for (unsigned i = 0; i < t->n_symbols; i++) {
    if (lens[i] < 1 || lens[i] > 8)
      return bri_error_set(err, BRI_ECORRUPT,
                           "Fsst: symbol %u has length %u at table byte %zu; lengths are 1..8", i,
                           lens[i], (size_t)(lens - buf) + i);
    t->lens[i] = lens[i];
  }
  return 0;
}

static int bad_code(unsigned code, size_t pos, unsigned n, bri_error *err) {
  return bri_error_set(err, BRI_ECORRUPT,
                       "Fsst: code %u at byte %zu of a string names no symbol (table has %u)",
                       code, pos, n);
}

int bri_fsst_decoded_len(const bri_fsst_table *t, const uint8_t *in, size_t len, uint64_t *out_len,
                         bri_error *err) {
  if (!t->compressed) {
    *out_len = len;
    return 0;
  }
  uint64_t total = 0;
  for (size_t i = 0; i < len; i++) {
    unsigned c = in[i];
    if (c == FSST_ESCAPE) {
      if (++i >= len)
        return bri_error_set(err, BRI_ECORRUPT, "Fsst: string of %zu bytes ends with an escape",
                             len);
      total += 1;
    } else if (c < t->n_symbols) {
      total += t->lens[c];
    } else {
      return bad_code(c, i, t->n_symbols, err);
    }
  }
  *out_len = total;
  return 0;
}

int bri_fsst_decode(const bri_fsst_table *t, const uint8_t *in, size_t len, uint8_t *out,
                    size_t cap, size_t *written, bri_error *err) {
  if (!t->compressed) {
    if (len > cap)
      return bri_error_set(err, BRI_ECORRUPT, "Fsst: %zu raw bytes do not fit %zu", len, cap);
    if (len) memcpy(out, in, len);
    *written = len;
    return 0;
  }
  size_t o = 0;
  for (size_t i = 0; i < len; i++) {
    unsigned c = in[i];
    if (c == FSST_ESCAPE) {
      if (++i >= len)
        return bri_error_set(err, BRI_ECORRUPT, "Fsst: string of %zu bytes ends with an escape",
                             len);
      if (o >= cap) goto full;
      out[o++] = in[i];
    } else if (c < t->n_symbols) {
      size_t l = t->lens[c];
      if (cap - o >= 8) {
        memcpy(out + o, t->symbols[c], 8);
      } else if (cap - o >= l) {
        memcpy(out + o, t->symbols[c], l);
      } else {
        goto full;
      }
      o += l;
    } else {
      return bad_code(c, i, t->n_symbols, err);
    }
  }
  *written = o;
  return 0;
full:
  return bri_error_set(err, BRI_ECORRUPT, "Fsst: decoded string exceeds the %zu bytes expected",
                       cap);
}
