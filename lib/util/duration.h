/* duration.h: human durations as brid's CLI, configuration and control
 * requests accept them: an integer followed by a unit s, m, h, d or w
 * ("90s", "2h", "7d"), or several such terms ("1h30m"). The unit is
 * required: "7" is refused (seven seconds or seven days?); only "0" may go
 * without one. Also the wall clock every time stamp of brid's is read from. */
#ifndef BRI_DURATION_H
#define BRI_DURATION_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* Parses s into seconds; what names the setting in the error message. */
int bri_duration_parse(const char *s, const char *what, int64_t *seconds, bri_error *err);

/* Writes seconds the way a person writes it in the configuration: the
 * fewest terms of d, h, m, s ("7d", "14d", "1h30m", 90 -> "1m30s", "0s"),
 * which bri_duration_parse reads back to the same value. */
void bri_duration_format(int64_t seconds, char *out, size_t cap);

/* Wall-clock milliseconds since the Unix epoch (CLOCK_REALTIME). */
int64_t bri_now_ms(void);
/* Milliseconds of CLOCK_BOOTTIME: never steps, and goes on while the
 * process is stopped or the machine suspended (what a lease must count). */
int64_t bri_mono_ms(void);

#endif
