/* strbuf.h: a growable byte string for building request text (URLs, XML
 * bodies, canonical requests).
 *
 * Appends never fail loudly: after an allocation failure the buffer is marked
 * oom and later appends do nothing, so a builder makes all its appends and
 * checks once at the end (bri_strbuf_take returns NULL). The bytes are always
 * NUL-terminated once anything was appended, so text users read data as a C
 * string. */
#ifndef BRI_STRBUF_H
#define BRI_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct bri_strbuf {
  char *data; /* NUL-terminated, or NULL while empty */
  size_t len;
  size_t cap;
  bool oom; /* an append could not allocate; data is incomplete */
} bri_strbuf;

#define BRI_STRBUF_INIT {NULL, 0, 0, false}

void bri_strbuf_add(bri_strbuf *b, const void *p, size_t n);
void bri_strbuf_puts(bri_strbuf *b, const char *s);
void bri_strbuf_putc(bri_strbuf *b, char c);
void bri_strbuf_printf(bri_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Hands the text to the caller (malloc'd; "" when nothing was appended) and
 * empties b; NULL (and b freed) when an append failed. */
char *bri_strbuf_take(bri_strbuf *b);

/* Frees the bytes and empties b. */
void bri_strbuf_clear(bri_strbuf *b);

#endif
