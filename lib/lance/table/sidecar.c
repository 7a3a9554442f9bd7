/* sidecar.c: sidecar and data file naming (see sidecar.h). Bit reversal spreads
 * consecutive ids across the name's leading digits, which object stores
 * like; on a local disk it is only a naming rule to follow exactly. */
#include "lance/table/sidecar.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/fsutil.h"
#include "util/random.h"

static uint32_t reverse_bits(uint32_t v) {
  uint32_t r = 0;
  for (int i = 0; i < 32; i++) r |= ((v >> i) & 1u) << (31 - i);
  return r;
}

void bri_blob_file_name(uint32_t id, char out[BRI_BLOB_NAME_LEN]) {
  uint32_t r = reverse_bits(id);
  for (int i = 0; i < 32; i++) out[i] = (char)('0' + ((r >> (31 - i)) & 1u));
  memcpy(out + 32, ".blob", 6);
}

int bri_blob_file_id(const char *name, uint32_t *id) {
  if (strlen(name) != 37 || strcmp(name + 32, ".blob") != 0) return 0;
  uint32_t r = 0;
  for (int i = 0; i < 32; i++) {
    if (name[i] != '0' && name[i] != '1') return 0;
    r = r << 1 | (uint32_t)(name[i] - '0');
  }
  *id = reverse_bits(r);
  return 1;
}

char *bri_datafile_stem(const char *datafile_path) {
  const char *base = strrchr(datafile_path, '/');
  base = base ? base + 1 : datafile_path;
  size_t n = strlen(base);
  if (n > 6 && strcmp(base + n - 6, ".lance") == 0) n -= 6;
  return bri_strdupf("%.*s", (int)n, base);
}

void bri_new_datafile_stem(char out[BRI_STEM_LEN]) {
  uint8_t b[16];
  bri_random_bytes(b, sizeof b);
  int p = 0;
  for (int i = 0; i < 3; i++)
    for (int bit = 7; bit >= 0; bit--) out[p++] = (char)('0' + ((b[i] >> bit) & 1));
  for (int i = 3; i < 16; i++) p += snprintf(out + p, (size_t)(BRI_STEM_LEN - p), "%02x", b[i]);
  out[p] = 0;
}
