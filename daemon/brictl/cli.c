/* cli.c: shared helpers of brictl's commands (see cli.h). */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


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
