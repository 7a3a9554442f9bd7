/* duration.h: human durations as brid's CLI and configuration accept them:
 * an integer followed by an optional unit s, m, h, d or w ("90s", "2h",
 * "7d"; no unit means seconds), or several such terms ("1h30m"). */
#ifndef BRI_DURATION_H
#define BRI_DURATION_H

#include <stdint.h>

#include "util/error.h"

/* Parses s into seconds; what names the setting in the error message. */
int bri_duration_parse(const char *s, const char *what, int64_t *seconds, bri_error *err);

#endif
