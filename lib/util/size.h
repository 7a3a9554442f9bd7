/* size.h: byte counts as brid's configuration, its control requests and
 * brictl take them: a decimal integer, optionally followed by K, M, G or T
 * (powers of 1024) and then optionally B or iB ("65536", "1G", "256MiB").
 * No sign, blanks or fractions; a count past 2^64 - 1 is an error, never
 * clamped. One parser for every place that reads a size. */
#ifndef BRI_SIZE_H
#define BRI_SIZE_H

#include <stdint.h>

#include "util/error.h"

/* Parses s into *bytes; what names the setting in the error message. */
int bri_size_parse(const char *s, const char *what, uint64_t *bytes, bri_error *err);

#endif
