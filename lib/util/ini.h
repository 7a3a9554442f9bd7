/* ini.h: INI files as the AWS CLI writes them (~/.aws/config and
 * ~/.aws/credentials), read whole (they are small) into a list of entries.
 *
 * The syntax: "[section]", "key = value" (blanks around both trimmed),
 * blank lines, comment lines whose first non-blank character is # or ;,
 * and one level of nesting: a "key =" with no value opens a block whose
 * indented "sub = value" lines read as "key.sub" (the "s3 =" block of an
 * AWS profile). A line that is none of these is refused with its number.
 * Section names are kept to their first 255 bytes. */
#ifndef BRI_INI_H
#define BRI_INI_H

#include <stddef.h>

#include "util/error.h"

typedef struct bri_ini_entry {
  char *section;
  char *key;
  char *value;
} bri_ini_entry;

typedef struct bri_ini {
  char *path; /* NULL when the file does not exist */
  bri_ini_entry *entries;
  size_t n;
} bri_ini;

/* Reads the file at path into out; a missing file is an empty one. Errors
 * name the file (and the line, for a line it cannot read). */
int bri_ini_read(const char *path, bri_ini *out, bri_error *err);
/* The value of key in section (the first one given), or NULL. */
const char *bri_ini_get(const bri_ini *ini, const char *section, const char *key);
void bri_ini_clear(bri_ini *ini);

#endif
