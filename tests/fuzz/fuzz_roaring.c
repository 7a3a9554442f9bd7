/* fuzz_roaring.c: libFuzzer harness for the strict Roaring decoder
 * (lib/lance/table/roaring_strict.c), checked against CRoaring.
 *
 * Every input is read as a 32-bit portable image and as a RoaringTreemap.
 * A refusal must name the bytes. Whatever the strict decoder accepts,
 * CRoaring must read to the same values (the strict walk's own expansion,
 * its cardinality and maximum agree), and CRoaring's re-serialization must
 * be accepted again with the same values; a 12346 image, and a 12347 image
 * whose run flags are exact, must come back byte for byte (the format leaves
 * CRoaring no choice there). A treemap that decodes must re-encode
 * (bri_treemap_encode) and decode to equal bitmaps. Seeds:
 * tests/fuzz/corpus/roaring (deletion files, Lance index fragment bitmaps,
 * CRoaring images with arrays, bitmaps and runs, treemaps). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lance/table/frag_reuse.h"
#include "lance/table/roaring_strict.h"
#include "util/bytes.h"

static void bad(const char *what) {
  fprintf(stderr, "fuzz_roaring: %s\n", what);
  abort();
}

/* Run flags of a 12347 image name exactly its run containers: at least one
 * set, none past the container count. */
static bool exact_run_flags(const uint8_t *data) {
  uint32_t cookie = bri_le32(data);
  size_t n = (size_t)(cookie >> 16) + 1, any = 0;
  for (size_t i = 0; i < (n + 7) / 8 * 8; i++)
    if (data[4 + i / 8] >> (i % 8) & 1) {
      if (i >= n) return false;
      any++;
    }
  return any > 0;
}

static void one_bitmap(const uint8_t *data, size_t size) {
  bri_roaring_info info;
  bri_error err;
  if (bri_roaring_check(data, size, "fuzz.roaring", false, &info, &err) != 0) {
    if (!strstr(err.msg, "fuzz.roaring")) bad("a refusal does not name the bytes");
    return;
  }
  if (info.len != size) bad("a whole image's length is not the input's");
  uint32_t *v = malloc((info.cardinality ? info.cardinality : 1) * sizeof *v);
  if (!v) bad("out of memory");
  bri_roaring_to_array(data, &info, v);
  for (uint64_t i = 1; i < info.cardinality; i++)
    if (v[i] <= v[i - 1]) bad("values not strictly increasing");
  if (info.cardinality && v[info.cardinality - 1] != info.max) bad("max is not the last value");
  roaring_bitmap_t *r;
  if (bri_roaring_read(data, size, "fuzz.roaring", &r, &err) != 0) bad(err.msg);
  if (roaring_bitmap_get_cardinality(r) != info.cardinality) bad("CRoaring's cardinality differs");
  uint32_t *w = malloc((info.cardinality ? info.cardinality : 1) * sizeof *w);
  if (!w) bad("out of memory");
  roaring_bitmap_to_uint32_array(r, w);
  if (memcmp(v, w, info.cardinality * sizeof *v)) bad("CRoaring's values differ");
  size_t len = roaring_bitmap_portable_size_in_bytes(r);
  uint8_t *out = malloc(len);
  if (!out) bad("out of memory");
  if (roaring_bitmap_portable_serialize(r, (char *)out) != len) bad("CRoaring's size is not what it writes");
  bool same_form = bri_le32(data) == BRI_ROARING_COOKIE_NO_RUNS || exact_run_flags(data);
  if (same_form && (len != size || memcmp(out, data, size))) bad("CRoaring writes other bytes back");
  bri_roaring_info again;
  if (bri_roaring_check(out, len, "re", false, &again, &err) != 0) bad(err.msg);
  if (again.cardinality != info.cardinality || again.max != info.max) bad("the re-serialization differs");
  bri_roaring_to_array(out, &again, w);
  if (memcmp(v, w, info.cardinality * sizeof *v)) bad("the re-serialization's values differ");
  free(out);
  free(w);
  free(v);
  roaring_bitmap_free(r);
}

static void one_treemap(const uint8_t *data, size_t size) {
  bri_treemap_part *p, *q;
  size_t n, m;
  bri_error err;
  if (bri_treemap_decode(data, size, "fuzz.treemap", &p, &n, &err) != 0) {
    if (!strstr(err.msg, "fuzz.treemap")) bad("a treemap refusal does not name the bytes");
    return;
  }
  uint8_t *out;
  size_t len;
  if (bri_treemap_encode(p, n, &out, &len, &err) != 0) bad(err.msg);
  if (bri_treemap_decode(out, len, "re", &q, &m, &err) != 0) bad(err.msg);
  if (m != n) bad("the re-encoded treemap has another part count");
  for (size_t i = 0; i < n; i++)
    if (p[i].high != q[i].high || !roaring_bitmap_equals(p[i].low, q[i].low))
      bad("the re-encoded treemap differs");
  bri_treemap_free(q, m);
  bri_treemap_free(p, n);
  free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  one_bitmap(data, size);
  one_treemap(data, size);
  return 0;
}
