/* key.h: key columns, the way the LanceDB oracle (tests/interop/
 * lance_read.mjs) orders rows by them and the way `brictl cat --key
 * COL=VALUE` finds a row by one.
 *
 * A key is a top-level column of integers (and dates, times, timestamps,
 * durations: their stored integers), floats or strings; other types cannot
 * be keys. Order is JavaScript's <, which the oracle sorts with: numbers by
 * value with null as 0, strings by UTF-16 code units (not UTF-8 bytes: a
 * character above U+FFFF sorts before one in U+E000..U+FFFF) with nulls
 * first; NaN last. Ties keep scan order (Array.prototype.sort is stable). */
#ifndef BRI_KEY_H
#define BRI_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lance/dataset/rows.h"
#include "util/arrow_c.h"
#include "util/error.h"

typedef enum bri_key_kind { BRI_KEY_INT, BRI_KEY_UINT, BRI_KEY_FLOAT, BRI_KEY_STR } bri_key_kind;

typedef struct bri_key_type {
  bri_key_kind kind;
  int width; /* bytes per value (strings: 4 or 8, the offset width) */
} bri_key_type;

typedef struct bri_key {
  bool is_null;
  union {
    int64_t i;
    uint64_t u;
    double d;
    struct {
      const uint8_t *p; /* borrowed from the array, or from the parsed text */
      uint64_t n;
    } s;
  } v;
} bri_key;

/* The key type of Arrow format f; false when rows cannot be ordered by it. */
bool bri_key_type_of(const char *format, bri_key_type *t);

/* Element i of array a (of type t). */
void bri_key_get(const struct ArrowArray *a, int64_t i, bri_key_type t, bri_key *out);

/* JavaScript's order of two keys of one kind: < 0, 0, > 0. */
int bri_key_cmp(bri_key_kind kind, const bri_key *a, const bri_key *b);

/* Parses text as a key of type t: a decimal integer within the type's
 * range, a decimal number, or the string itself (borrowed). */
int bri_key_parse(const char *text, bri_key_type t, bri_key *out, bri_error *err);

/* The one visible row of version m whose top-level column `column` equals
 * value (parsed for the column's type; null never equals). On success *row
 * and *rd (its fragment's reader, to close) are set. BRI_ENOTFOUND when no
 * row has it, BRI_EINVAL when several do (the message names the first
 * ones by row offset). */
int bri_key_find(const bri_table *t, const bri_manifest *m, const char *column, const char *value, bri_row *row,
                 bri_fragment_reader **rd, bri_error *err);

#endif
