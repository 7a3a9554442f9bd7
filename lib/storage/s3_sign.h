/* s3_sign.h: AWS Signature Version 4 for S3 requests, on OpenSSL.
 *
 * A signer of our own rather than curl's CURLOPT_AWS_SIGV4: curl 7.88 sorts
 * the signed headers by the whole "name:value" line, so x-amz-copy-source
 * next to x-amz-copy-source-range (UploadPartCopy of a range) gets a signature
 * S3 rejects, and it wants the query pre-sorted and the payload hash set by
 * hand. Here the caller lists every header it will send (host and
 * x-amz-date included); all of them are signed, sorted by lowercase name.
 *
 * The canonical query is built by bri_sigv4_query from raw name/value pairs,
 * and the client sends that same string in its URL, so what is signed and
 * what is sent cannot differ. Paths are encoded once (S3 does not double
 * encode), '/' kept. */
#ifndef BRI_S3_SIGN_H
#define BRI_S3_SIGN_H

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

#define BRI_SHA256_HEX_LEN 64

/* SHA-256 of the empty string, hex: the payload hash of a bodiless request. */
extern const char bri_sha256_empty_hex[BRI_SHA256_HEX_LEN + 1];

/* Lowercase hex SHA-256 of data into out (65 bytes with the NUL). */
void bri_sha256_hex(const void *data, size_t len, char out[BRI_SHA256_HEX_LEN + 1]);

typedef struct bri_sigv4_pair {
  const char *name;
  const char *value;
} bri_sigv4_pair;

typedef struct bri_sigv4_request {
  const char *method;
  const char *path; /* the raw path ("/bucket/a b.txt"); encoded here */
  const bri_sigv4_pair *query; /* raw names and values, any order */
  size_t n_query;
  const bri_sigv4_pair *headers; /* every header sent, host and x-amz-date included */
  size_t n_headers;
  const char *payload_hash; /* hex SHA-256 of the body, or "UNSIGNED-PAYLOAD" */
  const char *amz_date;     /* "YYYYMMDDTHHMMSSZ", UTC: also the x-amz-date header */
  const char *region;
  const char *service; /* "s3" */
  const char *access_key;
  const char *secret_key;
} bri_sigv4_request;

/* URI-encodes s as SigV4 wants: A-Z a-z 0-9 - _ . ~ kept, every other byte
 * %XX (uppercase hex); '/' kept unless encode_slash. malloc'd, NULL on OOM. */
char *bri_uri_encode(const char *s, bool encode_slash);

/* The canonical query string: each name and value encoded (slash too),
 * sorted by encoded name then value, joined "n=v&n=v" (a pair with a NULL or
 * empty value gives "n="). malloc'd ("" for none), NULL on OOM. */
char *bri_sigv4_query(const bri_sigv4_pair *query, size_t n);

/* The canonical request text (for tests and for debugging a rejection). */
char *bri_sigv4_canonical(const bri_sigv4_request *r, bri_error *err);

/* The Authorization header value: "AWS4-HMAC-SHA256 Credential=AK/DATE/
 * REGION/SERVICE/aws4_request, SignedHeaders=a;b, Signature=HEX". malloc'd
 * into *out. */
int bri_sigv4_authorization(const bri_sigv4_request *r, char **out, bri_error *err);

#endif
