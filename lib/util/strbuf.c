/* strbuf.c: growable byte string with a sticky allocation failure (see
 * strbuf.h). Capacity doubles, so n appends cost O(total length). */
#include "util/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for n more bytes plus the terminating NUL. */
static bool reserve(bri_strbuf *b, size_t n) {
  if (b->oom) return false;
  if (n >= (size_t)-1 / 2 - b->len) {
    b->oom = true;
    return false;
  }
  size_t need = b->len + n + 1;
  if (need <= b->cap) return true;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < need) cap *= 2;
  char *grown = realloc(b->data, cap);
  if (!grown) {
    b->oom = true;
    return false;
  }
  b->data = grown;
  b->cap = cap;
  return true;
}

void bri_strbuf_add(bri_strbuf *b, const void *p, size_t n) {
  if (!reserve(b, n)) return;
  if (n) memcpy(b->data + b->len, p, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void bri_strbuf_puts(bri_strbuf *b, const char *s) { bri_strbuf_add(b, s, strlen(s)); }

void bri_strbuf_putc(bri_strbuf *b, char c) { bri_strbuf_add(b, &c, 1); }

void bri_strbuf_printf(bri_strbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) {
    b->oom = true;
    return;
  }
  if (!reserve(b, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

char *bri_strbuf_take(bri_strbuf *b) {
  if (b->oom) {
    bri_strbuf_clear(b);
    return NULL;
  }
  char *s = b->data ? b->data : strdup("");
  b->data = NULL;
  b->len = b->cap = 0;
  return s;
}

void bri_strbuf_clear(bri_strbuf *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
  b->oom = false;
}
