/* duration.c: duration parsing (see duration.h). Overflow, a missing or
 * unknown unit are errors, never silently guessed or clamped. */
#include "util/duration.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int bri_duration_parse(const char *s, const char *what, int64_t *seconds, bri_error *err) {
  const char *p = s;
  int64_t total = 0;
  if (!s || !*s) return bri_error_set(err, BRI_EINVAL, "%s: empty duration", what);
  while (*p) {
    if (!isdigit((unsigned char)*p))
      return bri_error_set(err, BRI_EINVAL, "%s: \"%s\" is not a duration (e.g. 90s, 30m, 2h, 7d)",
                           what, s);
    int64_t v = 0;
    while (isdigit((unsigned char)*p)) {
      if (v > (INT64_MAX - 9) / 10) goto overflow;
      v = v * 10 + (*p++ - '0');
    }
    int64_t mul = 1;
    switch (*p) {
    case 's': mul = 1, p++; break;
    case 'm': mul = 60, p++; break;
    case 'h': mul = 3600, p++; break;
    case 'd': mul = 86400, p++; break;
    case 'w': mul = 604800, p++; break;
    case '\0':
      /* a bare number is refused: "--older-than 7" meant seconds and
       * deleted a week of versions' worth of history (OPS 9); 0 is 0 in
       * every unit */
      if (v != 0 || p != s + strspn(s, "0"))
        return bri_error_set(err, BRI_EINVAL, "%s: \"%s\" has no unit: write %llds, %lldm, %lldh, %lldd or %lldw",
                             what, s, (long long)v, (long long)v, (long long)v, (long long)v, (long long)v);
      break;
    default:
      return bri_error_set(err, BRI_EINVAL, "%s: unknown unit '%c' in \"%s\" (use s, m, h, d, w)",
                           what, *p, s);
    }
    if (v > INT64_MAX / mul || total > INT64_MAX - v * mul) goto overflow;
    total += v * mul;
  }
  *seconds = total;
  return 0;
overflow:
  return bri_error_set(err, BRI_EINVAL, "%s: duration \"%s\" is too large", what, s);
}

void bri_duration_format(int64_t seconds, char *out, size_t cap) {
  static const struct {
    char unit;
    int64_t sec;
  } U[] = {{'d', 86400}, {'h', 3600}, {'m', 60}, {'s', 1}}; /* days, not weeks: "14d" */
  size_t n = 0;
  if (cap) out[0] = 0;
  if (seconds <= 0) {
    snprintf(out, cap, "%llds", (long long)(seconds < 0 ? seconds : 0));
    return;
  }
  for (size_t i = 0; i < sizeof U / sizeof U[0] && seconds > 0; i++) {
    int64_t v = seconds / U[i].sec;
    if (!v) continue;
    seconds -= v * U[i].sec;
    if (n < cap) n += (size_t)snprintf(out + n, cap - n, "%lld%c", (long long)v, U[i].unit);
  }
}

static int64_t clock_ms(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t bri_now_ms(void) { return clock_ms(CLOCK_REALTIME); }

int64_t bri_mono_ms(void) { return clock_ms(CLOCK_BOOTTIME); }
