/* duration.h: human durations as brid's CLI, configuration and control
 * requests accept them: an integer followed by a unit s, m, h, d or w
 * ("90s", "2h", "7d"), or several such terms ("1h30m"). The unit is
 * required: "7" is refused (seven seconds or seven days?); only "0" may go
 * without one. */
#ifndef BRI_DURATION_H
#define BRI_DURATION_H

#include <stdint.h>

#include "util/error.h"

/* Parses s into seconds; what names the setting in the error message. */
int bri_duration_parse(const char *s, const char *what, int64_t *seconds, bri_error *err);

#endif
