/* azure_sign.c: Shared Key and service SAS signatures (see azure_sign.h).
 *
 * The canonical string is the verb, eleven standard header values (Content-
 * Length empty when zero, as versions from 2015-02-21 on want; Date empty
 * because x-ms-date is sent), the x-ms- headers lowercased and sorted, and
 * the canonicalized resource: "/ACCOUNT" + the path as sent, then each
 * query parameter as "\nname:value", names lowercased and sorted. */
#include "storage/azure_sign.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/strbuf.h"

void bri_azure_date(time_t t, char out[32]) {
  struct tm tm;
  gmtime_r(&t, &tm);
  static const char *const DAYS[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static const char *const MONTHS[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  snprintf(out, 32, "%s, %02d %s %04d %02d:%02d:%02d GMT", DAYS[tm.tm_wday], tm.tm_mday,
           MONTHS[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

static const char *header(const bri_azure_sign_request *r, const char *name) {
  for (size_t i = 0; i < r->n_headers; i++)
    if (!strcasecmp(r->headers[i].name, name)) return r->headers[i].value;
  return "";
}

static int cmp_pair(const void *a, const void *b) {
  return strcmp(((const bri_http_pair *)a)->name, ((const bri_http_pair *)b)->name);
}

/* pairs with lowercased names (malloc'd names), sorted; x_ms: only the
 * x-ms- ones. */
static bri_http_pair *lowered(const bri_http_pair *p, size_t n, bool x_ms, size_t *count) {
  bri_http_pair *out = calloc(n + 1, sizeof *out);
  *count = 0;
  if (!out) return NULL;
  for (size_t i = 0; i < n; i++) {
    if (x_ms && strncasecmp(p[i].name, "x-ms-", 5)) continue;
    char *l = strdup(p[i].name);
    if (!l) {
      for (size_t j = 0; j < *count; j++) free((char *)out[j].name);
      free(out);
      return NULL;
    }
    for (char *c = l; *c; c++) *c = (char)(*c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
    out[(*count)++] = (bri_http_pair){l, p[i].value};
  }
  qsort(out, *count, sizeof *out, cmp_pair);
  return out;
}

static void free_pairs(bri_http_pair *p, size_t n) {
  for (size_t i = 0; p && i < n; i++) free((char *)p[i].name);
  free(p);
}

char *bri_azure_string_to_sign(const bri_azure_sign_request *r, bri_error *err) {
  static const char *const STD[] = {"Content-Encoding", "Content-Language", NULL, "Content-MD5",
                                    "Content-Type", "Date", "If-Modified-Since", "If-Match",
                                    "If-None-Match", "If-Unmodified-Since", "Range"};
  bri_strbuf b = BRI_STRBUF_INIT;
  bri_strbuf_printf(&b, "%s\n", r->method);
  for (size_t i = 0; i < sizeof STD / sizeof STD[0]; i++) {
    if (!STD[i]) {
      if (r->content_length) bri_strbuf_printf(&b, "%llu", (unsigned long long)r->content_length);
    } else if (strcmp(STD[i], "Date")) {
      bri_strbuf_puts(&b, header(r, STD[i]));
    }
    bri_strbuf_puts(&b, "\n");
  }
  size_t nh, nq;
  bri_http_pair *h = lowered(r->headers, r->n_headers, true, &nh);
  bri_http_pair *q = lowered(r->query, r->n_query, false, &nq);
  for (size_t i = 0; h && i < nh; i++) {
    const char *v = h[i].value;
    while (*v == ' ') v++;
    bri_strbuf_printf(&b, "%s:%s\n", h[i].name, v);
  }
  bri_strbuf_printf(&b, "/%s%s", r->account, r->path);
  for (size_t i = 0; q && i < nq; i++) {
    /* one name given twice: its values joined by commas, in order */
    if (i && !strcmp(q[i].name, q[i - 1].name)) bri_strbuf_printf(&b, ",%s", q[i].value);
    else bri_strbuf_printf(&b, "\n%s:%s", q[i].name, q[i].value);
  }
  bool oom = b.oom || !h || !q;
  free_pairs(h, nh);
  free_pairs(q, nq);
  if (oom) {
    bri_strbuf_clear(&b);
    bri_error_set(err, BRI_ENOMEM, "out of memory");
    return NULL;
  }
  return bri_strbuf_take(&b);
}

/* base64(HMAC-SHA256(key, text)) into out (at least 45 bytes). */
static void hmac_b64(const unsigned char *key, size_t key_len, const char *text, char out[48]) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  HMAC(EVP_sha256(), key, (int)key_len, (const unsigned char *)text, strlen(text), md, &n);
  EVP_EncodeBlock((unsigned char *)out, md, (int)n);
}

int bri_azure_shared_key(const bri_azure_sign_request *r, const unsigned char *key, size_t key_len,
                         char **out, bri_error *err) {
  *out = NULL;
  char *sts = bri_azure_string_to_sign(r, err);
  if (!sts) return BRI_ENOMEM;
  char sig[48];
  hmac_b64(key, key_len, sts, sig);
  free(sts);
  bri_strbuf b = BRI_STRBUF_INIT;
  bri_strbuf_printf(&b, "SharedKey %s:%s", r->account, sig);
  if (b.oom) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  *out = bri_strbuf_take(&b);
  return 0;
}

char *bri_azure_blob_sas(const char *account, const unsigned char *key, size_t key_len,
                         const char *container, const char *blob, time_t expiry) {
  char se[32];
  struct tm tm;
  gmtime_r(&expiry, &tm);
  strftime(se, sizeof se, "%Y-%m-%dT%H:%M:%SZ", &tm);
  /* sp, st, se, canonicalized resource, si, sip, spr, sv, sr, snapshot time,
   * encryption scope, rscc, rscd, rsce, rscl, rsct: one line each */
  bri_strbuf s = BRI_STRBUF_INIT;
  bri_strbuf_printf(&s, "r\n\n%s\n/blob/%s/%s/%s\n\n\n\n%s\nb\n\n\n\n\n\n\n", se, account, container,
                    blob, BRI_AZURE_VERSION);
  if (s.oom) return NULL;
  char sig[48];
  hmac_b64(key, key_len, s.data, sig);
  bri_strbuf_clear(&s);
  char *esig = bri_uri_encode(sig, true), *ese = bri_uri_encode(se, true);
  bri_strbuf q = BRI_STRBUF_INIT;
  if (esig && ese) bri_strbuf_printf(&q, "sv=%s&sr=b&sp=r&se=%s&sig=%s", BRI_AZURE_VERSION, ese, esig);
  free(esig), free(ese);
  if (!esig || !ese || q.oom) {
    bri_strbuf_clear(&q);
    return NULL;
  }
  return bri_strbuf_take(&q);
}
