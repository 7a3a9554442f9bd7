/* cli.c: shared helpers of brictl's commands (see cli.h). */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bri/compact.h"

int cli_fail(const bri_error *err) {
  fprintf(stderr, "brictl: %s\n", err->msg[0] ? err->msg : bri_error_name(err->code));
  return CLI_ERROR;
}

bool cli_parse_u64(const char *s, unsigned long long *out) {
  if (!s || *s < '0' || *s > '9') return false;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end) return false;
  *out = v;
  return true;
}

void cli_print_json(json_t *v) {
  /* 15 significant digits: a configured 0.1 prints as 0.1, not 0.10000000000000001 */
  json_dumpf(v, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
  fputc('\n', stdout);
}

void cli_print_held(const json_t *plan) {
  static const bri_hold reasons[] = {BRI_HOLD_AT_TARGET, BRI_HOLD_LARGER, BRI_HOLD_INDEX};
  for (size_t r = 0; r < sizeof reasons / sizeof reasons[0]; r++) {
    const char *why = bri_hold_name(reasons[r]);
    size_t i, n = 0;
    long long bytes = 0;
    char ids[96] = "";
    json_t *h;
    json_array_foreach(json_object_get(plan, "held_back"), i, h) {
      const char *reason = json_string_value(json_object_get(h, "reason")); /* (an older brid's: ids) */
      if (!reason || strcmp(reason, why)) continue;
      bytes += (long long)json_integer_value(json_object_get(h, "size_bytes"));
      size_t len = strlen(ids);
      if (n++ < 8) snprintf(ids + len, sizeof ids - len, "%s%lld", len ? " " : "",
                            (long long)json_integer_value(json_object_get(h, "fragment")));
      else if (n == 9) snprintf(ids + len, sizeof ids - len, " ...");
    }
    if (n) printf("  held back (%s): %zu fragment%s, %lld bytes: %s\n", why, n, n == 1 ? "" : "s", bytes, ids);
  }
}
