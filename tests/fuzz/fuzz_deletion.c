/* fuzz_deletion.c: libFuzzer harness for the deletion file readers.
 *
 * Every input is parsed both as an Arrow IPC deletion file and as a portable
 * Roaring bitmap, with the manifest count unknown (0) and a fragment of 2^22
 * rows (which bounds what a valid file can make the reader allocate). A
 * success must return strictly increasing offsets below the row count, and
 * must survive a round trip through the .bin encoder. Seeds:
 * tests/fuzz/corpus/deletion (real Lance 12 .arrow/.bin files, CRoaring runs). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lance/table/deletion.h"

enum { ROWS = 1 << 22 };

static void check(const uint8_t *data, size_t size, int type) {
  uint32_t *v = NULL;
  size_t n = 0;
  bri_error err;
  if (bri_deletion_parse(data, size, "fuzz.del", type, 0, ROWS, &v, &n, &err) != 0) {
    if (v || n || !strstr(err.msg, "fuzz.del")) abort();
    return;
  }
  for (size_t i = 0; i < n; i++)
    if (v[i] >= ROWS || (i && v[i] <= v[i - 1])) abort();
  if (n) {
    uint8_t *enc;
    size_t len;
    if (bri_deletion_encode_bin(v, n, &enc, &len, &err) != 0) abort();
    uint32_t *back;
    size_t bn;
    if (bri_deletion_parse(enc, len, "re.bin", BRI_DELETION_BITMAP, n, ROWS, &back, &bn, &err) != 0)
      abort();
    if (bn != n || memcmp(back, v, n * sizeof *v) != 0) abort();
    free(back);
    free(enc);
  }
  free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  check(data, size, BRI_DELETION_ARROW);
  check(data, size, BRI_DELETION_BITMAP);
  return 0;
}
