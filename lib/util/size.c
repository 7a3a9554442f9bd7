/* size.c: byte counts with binary units (see size.h). */
#include "util/size.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <strings.h>

int bri_size_parse(const char *s, const char *what, uint64_t *bytes, bri_error *err) {
  char *end = NULL;
  unsigned long long v = 0;
  int shift = -1;
  if (s && isdigit((unsigned char)*s)) {
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno) end = NULL;
  }
  if (end) {
    switch (toupper((unsigned char)*end)) {
    case 0: shift = 0; break;
    case 'K': shift = 10; break;
    case 'M': shift = 20; break;
    case 'G': shift = 30; break;
    case 'T': shift = 40; break;
    }
    if (shift > 0) {
      end++;
      if (!strcasecmp(end, "B") || !strcasecmp(end, "iB")) end += *end == 'B' || *end == 'b' ? 1 : 2;
    }
  }
  if (shift < 0 || *end || (shift && v > (UINT64_MAX >> shift)))
    return bri_error_set(err, BRI_EINVAL, "%s: \"%s\" is not a size (bytes, or a number with K, M, G or T)",
                         what, s ? s : "");
  *bytes = (uint64_t)v << shift;
  return 0;
}
