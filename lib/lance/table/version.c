/* version.c: manifest naming schemes and version listing (see version.h).
 * Numbers are parsed strictly (digits only, no sign, no overflow) so that a
 * stray file can never be mistaken for a version. */
#include "lance/table/version.h"

#include <stdlib.h>
#include <string.h>

#include "util/fsutil.h"

static const char SUFFIX[] = ".manifest";

static int parse_u64(const char *s, size_t n, uint64_t *out) {
  if (n == 0 || n > 20) return 0;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return 0;
    uint64_t d = (uint64_t)(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return 0;
    v = v * 10 + d;
  }
  *out = v;
  return 1;
}

int bri_version_parse_name(const char *name, uint64_t *version, bri_naming *scheme) {
  size_t len = strlen(name), sl = sizeof SUFFIX - 1;
  if (name[0] == 'd' || len <= sl || strcmp(name + len - sl, SUFFIX) != 0) return 0;
  uint64_t n;
  if (!parse_u64(name, len - sl, &n)) return 0;
  if (len == 20 + sl) { /* V2: 20 digits, inverted */
    if (n == UINT64_MAX) return 0;
    *version = UINT64_MAX - n;
    *scheme = BRI_NAMING_V2;
  } else {
    if (len - sl > 1 && name[0] == '0') return 0; /* V1 names carry no padding */
    *version = n;
    *scheme = BRI_NAMING_V1;
  }
  return *version > 0;
}

char *bri_version_file_name(uint64_t v, bri_naming scheme) {
  if (scheme == BRI_NAMING_V1) return bri_strdupf("%llu%s", (unsigned long long)v, SUFFIX);
  return bri_strdupf("%020llu%s", (unsigned long long)(UINT64_MAX - v), SUFFIX);
}

static int cmp_version(const void *a, const void *b) {
  uint64_t x = ((const bri_version_entry *)a)->version, y = ((const bri_version_entry *)b)->version;
  return x < y ? -1 : x > y;
}

int bri_versions_list(bri_store *st, const char *versions_dir, bri_version_entry **out,
                      size_t *count, bri_naming *scheme, bri_error *err) {
  *out = NULL;
  *count = 0;
  *scheme = BRI_NAMING_V2;
  bri_store_entry *e;
  size_t n;
  int rc = bri_store_list(st, versions_dir, 0, &e, &n, err);
  if (rc) return rc;
  bri_version_entry *v = calloc(n ? n : 1, sizeof *v);
  if (!v) {
    bri_store_entries_free(e, n);
    return bri_error_set(err, BRI_ENOMEM, "%s: out of memory", versions_dir);
  }
  size_t k = 0;
  int seen = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t ver;
    bri_naming s;
    if (!bri_version_parse_name(e[i].name, &ver, &s)) continue;
    if (seen && s != *scheme) {
      rc = bri_error_set(err, BRI_ECORRUPT,
                         "%s: found both V1 (N.manifest) and V2 (20-digit) manifest names; "
                         "Lance refuses such a table too",
                         versions_dir);
      break;
    }
    *scheme = s;
    seen = 1;
    v[k].version = ver;
    v[k].file = e[i].name;
    e[i].name = NULL;
    k++;
  }
  bri_store_entries_free(e, n);
  if (!rc) {
    qsort(v, k, sizeof *v, cmp_version);
    for (size_t i = 1; i < k; i++)
      if (v[i].version == v[i - 1].version) {
        rc = bri_error_set(err, BRI_ECORRUPT, "%s: version %llu appears twice (%s and %s)",
                           versions_dir, (unsigned long long)v[i].version, v[i - 1].file,
                           v[i].file);
        break;
      }
  }
  if (rc) {
    bri_versions_free(v, k);
    return rc;
  }
  *out = v;
  *count = k;
  return 0;
}

void bri_versions_free(bri_version_entry *v, size_t count) {
  if (!v) return;
  for (size_t i = 0; i < count; i++) free(v[i].file);
  free(v);
}
