/* fuzz_rowids.c: libFuzzer harness for Lance's u64 sequences (rowids.h):
 * RowIdSequence (stable row ids, and the id lists of a BRI),
 * EncodedU64Array, and RowDatasetVersionSequence. The first byte picks a
 * mode; decoding must never crash, hang or allocate more than the caller
 * allowed, and what decodes must survive a re-encoding unchanged:
 *   0  RowIdSequence bytes: count, decode (bounded; unbounded when the byte
 *      count of the values would wrap, which must be refused, not
 *      overflowed), then pack the values and decode them again
 *   1  RowDatasetVersionSequence bytes against a row count taken from the
 *      input (sometimes one whose byte size overflows): unpack, pack, unpack
 *   2  the input as little-endian u64 values: pack as a RowIdSequence, decode
 *   3  the input as u64 versions: pack as a version sequence, unpack
 *   4  EncodedU64Array bytes: count and decode */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lance/table/rowids.h"
#include "util/bytes.h"

#define MAX_VALUES ((uint64_t)1 << 20)

static void same_or_die(const uint64_t *a, const uint64_t *b, size_t n) {
  if (memcmp(a, b, n * sizeof *a) != 0) abort();
}

static void seq_roundtrip(const uint64_t *v, size_t n) {
  uint8_t *buf;
  size_t len;
  bri_error err;
  if (bri_u64seq_pack(v, n, &buf, &len, &err) != 0) return;
  Lance__Table__RowIdSequence *seq;
  if (bri_u64seq_unpack(buf, len, &seq, &err) != 0) abort(); /* our own bytes */
  uint64_t *w;
  size_t m;
  if (bri_u64seq_decode(seq, n, &w, &m, &err) != 0 || m != n) abort();
  same_or_die(v, w, n);
  free(w);
  lance__table__row_id_sequence__free_unpacked(seq, NULL);
  free(buf);
}

static void versions_roundtrip(const uint64_t *v, size_t n) {
  uint8_t *buf;
  size_t len;
  bri_error err;
  if (bri_versions_pack(v, n, &buf, &len, &err) != 0) return;
  uint64_t *w;
  if (bri_versions_unpack(buf, len, n, &w, &err) != 0) abort();
  same_or_die(v, w, n);
  free(w);
  free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  uint8_t mode = data[0] % 5;
  data++, size--;
  bri_error err;
  switch (mode) {
  case 0: {
    Lance__Table__RowIdSequence *seq;
    if (bri_u64seq_unpack(data, size, &seq, &err) != 0) break;
    uint64_t count, *v;
    size_t n;
    if (bri_u64seq_count(seq, &count, &err) == 0) {
      /* so many values that their byte count wraps: an unbounded decode
       * must refuse them, not allocate the wrapped size */
      uint64_t max = count > SIZE_MAX / 8 ? UINT64_MAX : MAX_VALUES;
      if (bri_u64seq_decode(seq, max, &v, &n, &err) == 0) {
        if (n != count || n > MAX_VALUES) abort();
        seq_roundtrip(v, n);
        free(v);
      }
    } else if (bri_u64seq_decode(seq, MAX_VALUES, &v, &n, &err) == 0) {
      abort(); /* what cannot be counted cannot decode */
    }
    lance__table__row_id_sequence__free_unpacked(seq, NULL);
    break;
  }
  case 1: {
    if (size < 3) break;
    uint64_t n_rows = bri_le16(data);
    if (data[2] & 1) n_rows = ((uint64_t)1 << 61) + bri_le16(data); /* bytes overflow size_t */
    uint64_t *v;
    if (bri_versions_unpack(data + 3, size - 3, n_rows, &v, &err) == 0) {
      if (n_rows > MAX_VALUES) abort();
      versions_roundtrip(v, n_rows);
      free(v);
    }
    break;
  }
  case 2:
  case 3: {
    size_t n = size / 8;
    if (n > 4096) n = 4096;
    uint64_t *v = malloc((n ? n : 1) * sizeof *v);
    if (!v) break;
    for (size_t i = 0; i < n; i++) v[i] = bri_le64(data + 8 * i);
    if (mode == 2) seq_roundtrip(v, n);
    else versions_roundtrip(v, n);
    free(v);
    break;
  }
  case 4: {
    Lance__Table__EncodedU64Array *a = lance__table__encoded_u64_array__unpack(NULL, size, data);
    if (!a) break;
    uint64_t count, *v;
    size_t n;
    if (bri_u64array_count(a, &count, &err) == 0 && bri_u64array_decode(a, MAX_VALUES, &v, &n, &err) == 0) {
      if (n != count) abort();
      free(v);
    }
    lance__table__encoded_u64_array__free_unpacked(a, NULL);
    break;
  }
  }
  return 0;
}
