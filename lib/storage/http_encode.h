/* http_encode.h: the encodings every object store's requests share, on
 * OpenSSL: percent-encoding, the query string in canonical order (which a
 * signature covers and the URL carries alike, so the two cannot differ),
 * and SHA-256 in hex. */
#ifndef BRI_HTTP_ENCODE_H
#define BRI_HTTP_ENCODE_H

#include <stdbool.h>
#include <stddef.h>

/* A header or a query parameter, raw (not encoded). */
typedef struct bri_http_pair {
  const char *name;
  const char *value;
} bri_http_pair;

/* URI-encodes s: A-Z a-z 0-9 - _ . ~ kept, every other byte %XX (uppercase
 * hex); '/' kept unless encode_slash. malloc'd, NULL on OOM. */
char *bri_uri_encode(const char *s, bool encode_slash);

/* The query string in canonical order: each name and value encoded (slash
 * too), sorted by encoded name then value, joined "n=v&n=v" (a pair with a
 * NULL or empty value gives "n="). malloc'd ("" for none), NULL on OOM. */
char *bri_http_query(const bri_http_pair *query, size_t n);

/* Lowercase hex of the n bytes at p into out (2n + 1 bytes with the NUL). */
void bri_hex(const void *p, size_t n, char *out);

#define BRI_SHA256_HEX_LEN 64

/* SHA-256 of the empty string, hex. */
extern const char bri_sha256_empty_hex[BRI_SHA256_HEX_LEN + 1];

/* Lowercase hex SHA-256 of data into out (65 bytes with the NUL). */
void bri_sha256_hex(const void *data, size_t len, char out[BRI_SHA256_HEX_LEN + 1]);

#endif
