/* http_encode.c: percent-encoding, canonical query strings and SHA-256 hex
 * (see http_encode.h). */
#include "storage/http_encode.h"

#include <ctype.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

const char bri_sha256_empty_hex[BRI_SHA256_HEX_LEN + 1] =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

void bri_hex(const void *p, size_t n, char *out) {
  static const char digits[] = "0123456789abcdef";
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = digits[b[i] >> 4];
    out[2 * i + 1] = digits[b[i] & 15];
  }
  out[2 * n] = '\0';
}

void bri_sha256_hex(const void *data, size_t len, char out[BRI_SHA256_HEX_LEN + 1]) {
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256(data, len, md);
  bri_hex(md, sizeof md, out);
}

static bool unreserved(unsigned char c) {
  return isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~';
}

char *bri_uri_encode(const char *s, bool encode_slash) {
  static const char digits[] = "0123456789ABCDEF";
  bri_strbuf b = BRI_STRBUF_INIT;
  bri_strbuf_puts(&b, "");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (unreserved(*p) || (*p == '/' && !encode_slash)) {
      bri_strbuf_putc(&b, (char)*p);
    } else {
      char e[3] = {'%', digits[*p >> 4], digits[*p & 15]};
      bri_strbuf_add(&b, e, 3);
    }
  }
  return bri_strbuf_take(&b);
}

typedef struct enc_pair {
  char *name;
  char *value;
} enc_pair;

static int cmp_pair(const void *a, const void *b) {
  const enc_pair *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c ? c : strcmp(x->value, y->value);
}

char *bri_http_query(const bri_http_pair *query, size_t n) {
  if (!n) return strdup("");
  enc_pair *pairs = calloc(n, sizeof *pairs);
  char *out = NULL;
  if (!pairs) return NULL;
  for (size_t i = 0; i < n; i++) {
    pairs[i].name = bri_uri_encode(query[i].name, true);
    pairs[i].value = bri_uri_encode(query[i].value ? query[i].value : "", true);
    if (!pairs[i].name || !pairs[i].value) goto out;
  }
  qsort(pairs, n, sizeof *pairs, cmp_pair);
  bri_strbuf b = BRI_STRBUF_INIT;
  for (size_t i = 0; i < n; i++) {
    if (i) bri_strbuf_putc(&b, '&');
    bri_strbuf_printf(&b, "%s=%s", pairs[i].name, pairs[i].value);
  }
  out = bri_strbuf_take(&b);
out:
  for (size_t i = 0; i < n; i++) {
    free(pairs[i].name);
    free(pairs[i].value);
  }
  free(pairs);
  return out;
}
