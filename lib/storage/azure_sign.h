/* azure_sign.h: Azure Storage request authorization, on OpenSSL: Shared
 * Key (an HMAC-SHA256 with the account key over the request's canonical
 * string) and service SAS tokens for a source blob (what Put Block From
 * URL and a synchronous Copy Blob need to read their source), written to
 * Microsoft's "Authorize with Shared Key" and "Create a service SAS"
 * (docs/azure.md says which parts brid uses). */
#ifndef BRI_AZURE_SIGN_H
#define BRI_AZURE_SIGN_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "storage/http_encode.h"
#include "util/error.h"

/* The service version every request names (x-ms-version). */
#define BRI_AZURE_VERSION "2021-08-06"

typedef struct bri_azure_sign_request {
  const char *method;
  const char *account;
  const char *path; /* the request's path as sent (encoded), account included when path-style */
  const bri_http_pair *query; /* raw (decoded) names and values */
  size_t n_query;
  const bri_http_pair *headers; /* every header sent (x-ms-date, x-ms-version included) */
  size_t n_headers;
  uint64_t content_length; /* of the body (0: the field stays empty) */
} bri_azure_sign_request;

/* The string to sign (for tests and for debugging a rejection). */
char *bri_azure_string_to_sign(const bri_azure_sign_request *r, bri_error *err);

/* The Authorization header value: "SharedKey ACCOUNT:SIGNATURE". */
int bri_azure_shared_key(const bri_azure_sign_request *r, const unsigned char *key, size_t key_len,
                         char **out, bri_error *err);

/* A service SAS query string (sv, sr=b, sp=r, se, sig; no leading '?')
 * granting read of /CONTAINER/BLOB until expiry. */
char *bri_azure_blob_sas(const char *account, const unsigned char *key, size_t key_len,
                         const char *container, const char *blob, time_t expiry);

/* "Wed, 02 Dec 2026 06:27:43 GMT" (x-ms-date) of t. */
void bri_azure_date(time_t t, char out[32]);

#endif
