/* s3_sign.h: AWS Signature Version 4 for S3 requests, on OpenSSL.
 *
 * A signer of our own rather than curl's CURLOPT_AWS_SIGV4: curl 7.88 sorts
 * the signed headers by the whole "name:value" line, so x-amz-copy-source
 * next to x-amz-copy-source-range (UploadPartCopy of a range) gets a signature
 * S3 rejects, and it wants the query pre-sorted and the payload hash set by
 * hand. Here the caller lists every header it will send (host and
 * x-amz-date included); all of them are signed, sorted by lowercase name.
 *
 * The canonical query is built by bri_http_query (storage/http_encode.h)
 * from raw name/value pairs, and the client sends that same string in its
 * URL, so what is signed and what is sent cannot differ. Paths are encoded
 * once (S3 does not double encode), '/' kept. */
#ifndef BRI_S3_SIGN_H
#define BRI_S3_SIGN_H

#include <stdbool.h>
#include <stddef.h>

#include "storage/http_encode.h"
#include "util/error.h"

typedef struct bri_sigv4_request {
  const char *method;
  const char *path; /* the raw path ("/bucket/a b.txt"); encoded here */
  const bri_http_pair *query; /* raw names and values, any order */
  size_t n_query;
  const bri_http_pair *headers; /* every header sent, host and x-amz-date included */
  size_t n_headers;
  const char *payload_hash; /* hex SHA-256 of the body, or "UNSIGNED-PAYLOAD" */
  const char *amz_date;     /* "YYYYMMDDTHHMMSSZ", UTC: also the x-amz-date header */
  const char *region;
  const char *service; /* "s3" */
  const char *access_key;
  const char *secret_key;
} bri_sigv4_request;

/* The canonical request text (for tests and for debugging a rejection). */
char *bri_sigv4_canonical(const bri_sigv4_request *r, bri_error *err);

/* The Authorization header value: "AWS4-HMAC-SHA256 Credential=AK/DATE/
 * REGION/SERVICE/aws4_request, SignedHeaders=a;b, Signature=HEX". malloc'd
 * into *out. */
int bri_sigv4_authorization(const bri_sigv4_request *r, char **out, bri_error *err);

#endif
