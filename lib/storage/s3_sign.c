/* s3_sign.c: AWS Signature Version 4 (see s3_sign.h).
 *
 * The four steps of the published algorithm, each a function: canonical
 * request (method, encoded path, sorted query, sorted lowercase headers with
 * trimmed values, signed header list, payload hash), string to sign (the
 * algorithm, the date, the scope, the SHA-256 of the canonical request),
 * signing key (HMAC chain "AWS4"+secret -> date -> region -> service ->
 * "aws4_request"), signature (HMAC of the string to sign). Deriving the key
 * costs four HMACs per request; not cached, as that is noise beside a TLS or
 * HTTP round trip. */
#include "storage/s3_sign.h"

#include <ctype.h>
#include <openssl/hmac.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

typedef struct canon_header {
  char *name;  /* lowercase */
  char *value; /* trimmed, inner runs of spaces folded to one */
} canon_header;

static int cmp_header(const void *a, const void *b) {
  return strcmp(((const canon_header *)a)->name, ((const canon_header *)b)->name);
}

static char *lower(const char *s) {
  char *d = strdup(s);
  for (char *p = d; p && *p; p++) *p = (char)tolower((unsigned char)*p);
  return d;
}

/* SigV4 "Trimall": no leading or trailing space, sequential spaces as one. */
static char *trimall(const char *s) {
  char *d = malloc(strlen(s) + 1), *o = d;
  if (!d) return NULL;
  while (*s == ' ' || *s == '\t') s++;
  for (; *s; s++) {
    if (*s == ' ' || *s == '\t') {
      if (o > d && o[-1] != ' ') *o++ = ' ';
    } else {
      *o++ = *s;
    }
  }
  while (o > d && o[-1] == ' ') o--;
  *o = '\0';
  return d;
}

/* Canonical request into b; signed header list into *signed_out. */
static int canonical(const bri_sigv4_request *r, bri_strbuf *b, char **signed_out,
                     bri_error *err) {
  int rc = BRI_ENOMEM;
  size_t n = r->n_headers;
  canon_header *h = calloc(n ? n : 1, sizeof *h);
  char *query = bri_http_query(r->query, r->n_query);
  char *path = bri_uri_encode(r->path, false);
  bri_strbuf sh = BRI_STRBUF_INIT;
  if (!h || !query || !path) goto out;
  for (size_t i = 0; i < n; i++) {
    h[i].name = lower(r->headers[i].name);
    h[i].value = trimall(r->headers[i].value);
    if (!h[i].name || !h[i].value) goto out;
  }
  qsort(h, n, sizeof *h, cmp_header);
  for (size_t i = 1; i < n; i++) {
    if (!strcmp(h[i].name, h[i - 1].name)) {
      rc = bri_error_set(err, BRI_EINVAL, "signing: header %s given twice", h[i].name);
      goto out;
    }
  }
  bri_strbuf_printf(b, "%s\n%s\n%s\n", r->method, path, query);
  for (size_t i = 0; i < n; i++) {
    bri_strbuf_printf(b, "%s:%s\n", h[i].name, h[i].value);
    if (i) bri_strbuf_putc(&sh, ';');
    bri_strbuf_puts(&sh, h[i].name);
  }
  bri_strbuf_printf(b, "\n%s\n%s", sh.data ? sh.data : "", r->payload_hash);
  *signed_out = bri_strbuf_take(&sh);
  if (b->oom || !*signed_out) goto out;
  rc = 0;
out:
  if (rc == BRI_ENOMEM) bri_error_set(err, rc, "signing: out of memory");
  for (size_t i = 0; h && i < n; i++) {
    free(h[i].name);
    free(h[i].value);
  }
  free(h);
  free(query);
  free(path);
  bri_strbuf_clear(&sh);
  return rc;
}

char *bri_sigv4_canonical(const bri_sigv4_request *r, bri_error *err) {
  bri_strbuf b = BRI_STRBUF_INIT;
  char *signed_headers = NULL;
  if (canonical(r, &b, &signed_headers, err) != 0) {
    bri_strbuf_clear(&b);
    return NULL;
  }
  free(signed_headers);
  return bri_strbuf_take(&b);
}

static void hmac(const void *key, size_t key_len, const char *msg, unsigned char out[32]) {
  unsigned int len = 32;
  HMAC(EVP_sha256(), key, (int)key_len, (const unsigned char *)msg, strlen(msg), out, &len);
}

int bri_sigv4_authorization(const bri_sigv4_request *r, char **out, bri_error *err) {
  *out = NULL;
  if (!r->amz_date || strlen(r->amz_date) != 16 || r->amz_date[8] != 'T') {
    return bri_error_set(err, BRI_EINVAL, "signing: date %s is not YYYYMMDDTHHMMSSZ",
                         r->amz_date ? r->amz_date : "(none)");
  }
  char day[9];
  memcpy(day, r->amz_date, 8);
  day[8] = '\0';
  bri_strbuf creq = BRI_STRBUF_INIT;
  char *signed_headers = NULL;
  int rc = canonical(r, &creq, &signed_headers, err);
  if (rc != 0) return rc;
  char creq_hash[BRI_SHA256_HEX_LEN + 1];
  bri_sha256_hex(creq.data, creq.len, creq_hash);
  bri_strbuf_clear(&creq);

  bri_strbuf sts = BRI_STRBUF_INIT;
  bri_strbuf_printf(&sts, "AWS4-HMAC-SHA256\n%s\n%s/%s/%s/aws4_request\n%s", r->amz_date, day,
                    r->region, r->service, creq_hash);
  bri_strbuf key0 = BRI_STRBUF_INIT;
  bri_strbuf_printf(&key0, "AWS4%s", r->secret_key);
  if (sts.oom || key0.oom) {
    rc = bri_error_set(err, BRI_ENOMEM, "signing: out of memory");
    goto out;
  }
  unsigned char k[32], sig[32];
  hmac(key0.data, key0.len, day, k);
  hmac(k, 32, r->region, k);
  hmac(k, 32, r->service, k);
  hmac(k, 32, "aws4_request", k);
  hmac(k, 32, sts.data, sig);
  char sig_hex[65];
  bri_hex(sig, 32, sig_hex);
  OPENSSL_cleanse(k, sizeof k);
  bri_strbuf a = BRI_STRBUF_INIT;
  bri_strbuf_printf(&a,
                    "AWS4-HMAC-SHA256 Credential=%s/%s/%s/%s/aws4_request, SignedHeaders=%s, "
                    "Signature=%s",
                    r->access_key, day, r->region, r->service, signed_headers, sig_hex);
  *out = bri_strbuf_take(&a);
  if (!*out) rc = bri_error_set(err, BRI_ENOMEM, "signing: out of memory");
out:
  if (key0.data) OPENSSL_cleanse(key0.data, key0.len);
  bri_strbuf_clear(&key0);
  bri_strbuf_clear(&sts);
  free(signed_headers);
  return rc;
}
