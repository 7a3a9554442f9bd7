/* ini.h: libbri's one INI reader, for two syntaxes: the AWS CLI's
 * (~/.aws/config and ~/.aws/credentials, read whole into a list of
 * entries) and brid.conf's (brid.conf(5), handed entry by entry to the
 * daemon's configuration).
 *
 * Both: "[section]", "key = value" (blanks around both trimmed), blank
 * lines, comment lines whose first non-blank character is # or ;. A line
 * that is none of these (or of what its syntax adds) stops the parse with
 * its number.
 *
 * BRI_INI_AWS adds one level of nesting: a "key =" with no value opens a
 * block whose indented "sub = value" lines read as "key.sub" (the "s3 ="
 * block of an AWS profile). A section's name is trimmed and ends at its
 * first ].
 *
 * BRI_INI_CONF is the syntax brid.conf always had (inih's): "key: value"
 * too; " ;" (a blank, then ;) in a key = value line starts a comment that
 * ends the value; an indented line after a key continues it: one more
 * value of that key, the whole line; a UTF-8 byte order mark is skipped. A section's name runs, untrimmed, to
 * the last ] of its line (a table path may hold one) and a line whose first
 * non-blank character is [ and that holds a ] is a header even when
 * indented. */
#ifndef BRI_INI_H
#define BRI_INI_H

#include <stddef.h>

#include "util/error.h"

typedef enum bri_ini_syntax { BRI_INI_AWS, BRI_INI_CONF } bri_ini_syntax;

typedef struct bri_ini_entry {
  char *section; /* "" before the first header */
  char *key;
  char *value;
  int line;         /* from 1 */
  int section_line; /* the line of its section's header; 0 before the first */
} bri_ini_entry;

/* Called with each entry in file order (valid during the call only); a
 * nonzero return stops the parse and is returned by bri_ini_parse. */
typedef int (*bri_ini_entry_fn)(void *arg, const bri_ini_entry *e, bri_error *err);

/* Parses the len bytes of text (a NUL ends it sooner), called name in
 * messages, calling on_entry for each entry. A line the syntax refuses
 * stops the parse: BRI_EINVAL, "<name> line <n>: <what is wrong>", and
 * *bad_line = n (bad_line may be NULL; 0 when no line was refused). */
int bri_ini_parse(const char *text, size_t len, bri_ini_syntax syntax, const char *name,
                  bri_ini_entry_fn on_entry, void *arg, int *bad_line, bri_error *err);

typedef struct bri_ini {
  char *path; /* NULL when the file does not exist */
  bri_ini_entry *entries;
  size_t n;
} bri_ini;

/* Reads the file at path (BRI_INI_AWS) into out; a missing file is an
 * empty one. Errors name the file (and the line, for a line it cannot
 * read). */
int bri_ini_read(const char *path, bri_ini *out, bri_error *err);
/* The value of key in section (the first one given), or NULL. */
const char *bri_ini_get(const bri_ini *ini, const char *section, const char *key);
void bri_ini_clear(bri_ini *ini);

#endif
