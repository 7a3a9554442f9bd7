/* s3_client.c: S3 and Azure Blob requests over libcurl (see s3_client.h).
 *
 * Every call builds requests (s3_req) and runs them through one engine,
 * run_batch: a curl multi handle per call, at most max_in_flight easy
 * handles active, each request signed afresh for each attempt (the date is
 * part of the signature), finished attempts judged by judge(): done, retry
 * after a jittered backoff, or failed for good. Connections live in the
 * client's curl share handle, so calls and threads reuse them.
 *
 * Responses land in a sink: a caller's fixed buffer (ranged GETs: an answer
 * longer than asked stops the transfer) or a growing buffer (XML answers,
 * whole objects); error answers go to their own small buffer so that an
 * <Error> never lands in a caller's data. */
#include "storage/s3_client.h"

#include <ctype.h>
#include <curl/curl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "storage/azure_sign.h"
#include "storage/s3_sign.h"
#include "storage/xml.h"
#include "util/fsutil.h"
#include "util/strbuf.h"

#define MAX_QUERY 8
#define MAX_HEADERS 8
#define ERRBODY_MAX (1u << 20)
#define DELETE_BATCH 1000
/* idle connections kept to the endpoint without a max_active (a daemon's
 * read-ahead threads times their batches in flight, with room) */
#define KEPT_CONNECTIONS 256

struct bri_s3_client {
  bri_aws_config cfg;
  bri_azure_config *az; /* the Azure dialect (NULL: S3) */
  char *az_path;        /* Azure: the endpoint's path ("/ACCOUNT" path-style, else "") */
  bri_s3_options opt;
  char *scheme; /* "http" or "https" */
  char *host;   /* host[:port] of the endpoint */
  CURLSH *share;
  pthread_mutex_t locks[CURL_LOCK_DATA_LAST];
  _Atomic uint64_t seed;
  _Atomic int active; /* requests in flight on every thread (max_active) */
  pthread_mutex_t rate_lock;
  int64_t next_slot_ms; /* when the next request may start (max_rate) */
};

/* ---- one request ---- */

typedef enum { SINK_NONE, SINK_FIXED, SINK_GROW } sink_kind;
typedef enum { REQ_WAITING, REQ_ACTIVE, REQ_DONE } req_state;

typedef struct s3_req {
  bri_store_req op;
  bri_store_counts *tally; /* where its attempts are counted (may be NULL) */
  const char *method;
  char *bucket;
  char *key; /* NULL: a bucket-level request */
  char *qname[MAX_QUERY], *qval[MAX_QUERY];
  size_t n_query;
  char *hname[MAX_HEADERS], *hval[MAX_HEADERS];
  size_t n_headers;
  const uint8_t *body; /* request body (not owned) */
  size_t body_len;
  size_t body_sent;
  char payload_hash[BRI_SHA256_HEX_LEN + 1];
  /* response sink */
  sink_kind sink;
  uint8_t *fixed; /* SINK_FIXED: caller's buffer of cap bytes */
  size_t cap, got;
  bool overflow;
  bri_strbuf grow; /* SINK_GROW */
  bri_strbuf errbody;
  /* response */
  long status;
  char etag[80];
  bool have_range;
  uint64_t range_first, range_last, range_total;
  int64_t mtime;
  /* what a successful answer must look like */
  bool expect_range;  /* a 206 covering [want_off, want_off + cap) or up to the end */
  uint64_t want_off;
  bool exact_len;     /* the range must be exactly cap bytes */
  bool xml_on_200;    /* a 200 may carry an <Error> (copy, part copy, complete) */
  bool if_absent;     /* PUT with If-None-Match: *: a 412 means taken */
  bool broken;        /* building it ran out of memory (req_query, req_header) */
  uint64_t copied;    /* bytes S3 copies when this succeeds (metrics) */
  bri_s3_part *part_out;
  size_t suffix; /* a GET of the last suffix bytes */
  uint8_t **suffix_data; /* batched suffix GETs: where the outcome goes */
  size_t *suffix_len;
  uint64_t *suffix_size;
  int *suffix_rc;
  bri_s3_object *head_out; /* batched HEADs: where the outcome goes */
  int *head_rc;
  bri_s3_listing *list_out; /* batched listings: where the outcome goes */
  int *list_rc;
  bri_error *list_err;
  /* engine */
  req_state state;
  int attempts;
  int64_t due_ms;
  bool has_slot; /* holds a rate slot (max_rate) for its next attempt */
  bool active_slot; /* counted in the client's active requests (max_active) */
  CURL *easy;
  struct curl_slist *hdrs;
  int rc;
  bri_error err;
  char s3_code[64]; /* S3's <Code>, Azure's x-ms-error-code */
} s3_req;

struct bri_s3_batch {
  bri_s3_client *c;
  bri_store_counts *tally;
  s3_req **reqs;
  size_t n, cap;
};

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------ handles kept per thread
 *
 * A request's easy handle and a batch's multi handle come from a cache of
 * the thread's, kept between requests (made and freed per request, with
 * their buffers, they were a seventh of a compaction's CPU on S3: 560
 * requests, each on a read-ahead thread), and freed when the thread ends.
 * An easy handle goes back detached from its client's share, which can
 * then be freed whatever the cache holds. */
#define EASY_KEPT 4

typedef struct handle_cache {
  CURLM *multi;
  CURL *easy[EASY_KEPT];
  size_t n_easy;
} handle_cache;

static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

static void cache_free(void *p) {
  handle_cache *k = p;
  for (size_t i = 0; i < k->n_easy; i++) curl_easy_cleanup(k->easy[i]);
  if (k->multi) curl_multi_cleanup(k->multi);
  free(k);
}

static void cache_key_init(void) { pthread_key_create(&cache_key, cache_free); }

/* This thread's cache; NULL out of memory (handles are then made and freed
 * per use). */
static handle_cache *thread_cache(void) {
  pthread_once(&cache_once, cache_key_init);
  handle_cache *k = pthread_getspecific(cache_key);
  if (!k && (k = calloc(1, sizeof *k)) && pthread_setspecific(cache_key, k) != 0) {
    free(k);
    k = NULL;
  }
  return k;
}

static CURL *easy_take(void) {
  handle_cache *k = thread_cache();
  return k && k->n_easy ? k->easy[--k->n_easy] : curl_easy_init();
}

static void easy_give(CURL *e) {
  curl_easy_setopt(e, CURLOPT_SHARE, NULL);
  handle_cache *k = thread_cache();
  if (k && k->n_easy < EASY_KEPT) k->easy[k->n_easy++] = e;
  else curl_easy_cleanup(e);
}

/* A multi handle with no transfer in it (a nested batch makes its own). */
static CURLM *multi_take(void) {
  handle_cache *k = thread_cache();
  CURLM *m = k ? k->multi : NULL;
  if (m) k->multi = NULL;
  return m ? m : curl_multi_init();
}

static void multi_give(CURLM *m) {
  handle_cache *k = thread_cache();
  if (k && !k->multi) k->multi = m;
  else curl_multi_cleanup(m);
}

static void req_free(s3_req *r) {
  if (!r) return;
  free(r->bucket);
  free(r->key);
  for (size_t i = 0; i < r->n_query; i++) {
    free(r->qname[i]);
    free(r->qval[i]);
  }
  for (size_t i = 0; i < r->n_headers; i++) {
    free(r->hname[i]);
    free(r->hval[i]);
  }
  bri_strbuf_clear(&r->grow);
  bri_strbuf_clear(&r->errbody);
  if (r->easy) easy_give(r->easy);
  curl_slist_free_all(r->hdrs);
  free(r);
}

static s3_req *req_new(bri_store_req op, const char *method, const char *bucket, const char *key) {
  s3_req *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->op = op;
  r->method = method;
  r->bucket = strdup(bucket);
  r->key = key ? strdup(key) : NULL;
  memcpy(r->payload_hash, bri_sha256_empty_hex, sizeof r->payload_hash);
  if (!r->bucket || (key && !r->key)) {
    req_free(r);
    return NULL;
  }
  return r;
}

/* Adds a query parameter or a header (copies). A failure (no memory, a
 * NULL header value, too many) marks r broken: running it then fails with
 * BRI_ENOMEM, so builders need no check per addition. r may be NULL. */
static void req_query(s3_req *r, const char *name, const char *value) {
  if (!r) return;
  if (r->n_query == MAX_QUERY) {
    r->broken = true;
    return;
  }
  r->qname[r->n_query] = strdup(name);
  r->qval[r->n_query] = strdup(value ? value : "");
  if (!r->qname[r->n_query] || !r->qval[r->n_query++]) r->broken = true;
}

static void req_header(s3_req *r, const char *name, const char *value) {
  if (!r) return;
  if (!value || r->n_headers == MAX_HEADERS) {
    r->broken = true;
    return;
  }
  r->hname[r->n_headers] = strdup(name);
  r->hval[r->n_headers] = strdup(value);
  if (!r->hname[r->n_headers] || !r->hval[r->n_headers++]) r->broken = true;
}

static void req_body(s3_req *r, const void *data, size_t len) {
  if (!r) return;
  r->body = data;
  r->body_len = len;
  bri_sha256_hex(data ? data : "", len, r->payload_hash);
}

/* The URI scheme of the client's objects, for messages. */
#define SCHEME(c) ((c)->az ? "az" : "s3")

/* "GET s3://bucket/key" (az://container/blob) for messages. */
static void req_what(const bri_s3_client *c, const s3_req *r, char *out, size_t n) {
  snprintf(out, n, "%s %s://%s/%s", bri_store_req_name(r->op), SCHEME(c), r->bucket, r->key ? r->key : "");
}

/* ---- curl callbacks ---- */

static size_t on_write(char *p, size_t size, size_t nmemb, void *ud) {
  s3_req *r = ud;
  size_t n = size * nmemb;
  long status = 0;
  curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
  if (status >= 300 || status < 200) {
    if (r->errbody.len + n <= ERRBODY_MAX) bri_strbuf_add(&r->errbody, p, n);
    return n;
  }
  if (r->sink == SINK_FIXED) {
    if (n > r->cap - r->got) {
      r->overflow = true;
      return 0; /* stops the transfer: CURLE_WRITE_ERROR */
    }
    memcpy(r->fixed + r->got, p, n);
    r->got += n;
  } else if (r->sink == SINK_GROW) {
    bri_strbuf_add(&r->grow, p, n);
    if (r->grow.oom) return 0;
  }
  return n;
}

static size_t on_read(char *p, size_t size, size_t nmemb, void *ud) {
  s3_req *r = ud;
  size_t n = size * nmemb, left = r->body_len - r->body_sent;
  if (n > left) n = left;
  if (n) memcpy(p, r->body + r->body_sent, n);
  r->body_sent += n;
  return n;
}

/* curl rewinds the body itself when it resends on a reused connection that
 * turned out dead. */
static int on_seek(void *ud, curl_off_t off, int origin) {
  s3_req *r = ud;
  if (origin != SEEK_SET || off < 0 || (uint64_t)off > r->body_len) return CURL_SEEKFUNC_FAIL;
  r->body_sent = (size_t)off;
  return CURL_SEEKFUNC_OK;
}

static bool header_is(const char *line, size_t len, const char *name, const char **value) {
  size_t n = strlen(name);
  if (len <= n || strncasecmp(line, name, n) || line[n] != ':') return false;
  const char *v = line + n + 1;
  while (*v == ' ' || *v == '\t') v++;
  *value = v;
  return true;
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *ud) {
  s3_req *r = ud;
  size_t n = size * nmemb;
  char line[512];
  size_t len = n < sizeof line - 1 ? n : sizeof line - 1;
  memcpy(line, p, len);
  while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) len--;
  line[len] = '\0';
  const char *v;
  if (!strncmp(line, "HTTP/", 5)) { /* a new answer (after a 100 Continue, say) */
    r->etag[0] = '\0';
    r->have_range = false;
  } else if (header_is(line, len, "x-ms-error-code", &v)) { /* Azure; HEAD answers have no body */
    snprintf(r->s3_code, sizeof r->s3_code, "%s", v);
  } else if (header_is(line, len, "ETag", &v)) {
    snprintf(r->etag, sizeof r->etag, "%s", v);
  } else if (header_is(line, len, "Content-Range", &v)) {
    unsigned long long a, b, t;
    if (sscanf(v, "bytes %llu-%llu/%llu", &a, &b, &t) == 3) {
      r->have_range = true;
      r->range_first = a;
      r->range_last = b;
      r->range_total = t;
    }
  }
  return n;
}

/* ---- signing and starting one attempt ---- */

static void amz_date(char out[17]) {
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm);
}

/* host and raw path of r as the configured addressing style puts them. */
static void req_location(const bri_s3_client *c, const s3_req *r, bri_strbuf *host,
                         bri_strbuf *path) {
  if (c->cfg.virtual_hosted) {
    bri_strbuf_printf(host, "%s.%s", r->bucket, c->host);
    bri_strbuf_printf(path, "/%s", r->key ? r->key : "");
  } else {
    bri_strbuf_puts(host, c->host);
    bri_strbuf_printf(path, "/%s%s%s", r->bucket, r->key ? "/" : "", r->key ? r->key : "");
  }
}

/* Azure: the headers to send (x-ms-date and x-ms-version first), the URL
 * (the SAS token appended when there is no key) and the Shared Key
 * Authorization (NULL with a SAS). */
static int azure_prepare(bri_s3_client *c, s3_req *r, bri_http_pair *h, size_t *nh, char *date,
                         bri_strbuf *url, char **auth) {
  bri_azure_date(time(NULL), date);
  *nh = 0;
  h[(*nh)++] = (bri_http_pair){"x-ms-date", date};
  h[(*nh)++] = (bri_http_pair){"x-ms-version", BRI_AZURE_VERSION};
  for (size_t i = 0; i < r->n_headers; i++) h[(*nh)++] = (bri_http_pair){r->hname[i], r->hval[i]};
  bri_http_pair q[MAX_QUERY];
  for (size_t i = 0; i < r->n_query; i++) q[i] = (bri_http_pair){r->qname[i], r->qval[i]};
  bri_strbuf path = BRI_STRBUF_INIT;
  bri_strbuf_printf(&path, "%s/%s%s%s", c->az_path, r->bucket, r->key ? "/" : "", r->key ? r->key : "");
  char *epath = path.oom ? NULL : bri_uri_encode(path.data, false);
  char *query = bri_http_query(q, r->n_query);
  int rc = BRI_ENOMEM;
  if (epath && query) {
    const char *sas = c->az->key ? NULL : c->az->sas;
    bri_strbuf_printf(url, "%s://%s%s%s%s%s%s", c->scheme, c->host, epath, *query || sas ? "?" : "", query,
                      *query && sas ? "&" : "", sas ? sas : "");
    bri_azure_sign_request sr = {r->method, c->az->account, epath, q, r->n_query, h, *nh,
                                 strcmp(r->method, "PUT") && strcmp(r->method, "POST") ? 0 : r->body_len};
    rc = url->oom ? BRI_ENOMEM
         : c->az->key ? bri_azure_shared_key(&sr, c->az->key, c->az->key_len, auth, &r->err) : 0;
  }
  bri_strbuf_clear(&path);
  free(epath);
  free(query);
  return rc;
}

static int req_start(bri_s3_client *c, s3_req *r, CURLM *m) {
  int rc = BRI_ENOMEM;
  char date[32];
  bri_strbuf host = BRI_STRBUF_INIT, path = BRI_STRBUF_INIT, url = BRI_STRBUF_INIT;
  char *query = NULL, *epath = NULL, *auth = NULL;
  bri_http_pair q[MAX_QUERY], h[MAX_HEADERS + 4];
  size_t nh = 0;
  if (c->az) {
    if ((rc = azure_prepare(c, r, h, &nh, date, &url, &auth)) != 0) goto out;
    rc = BRI_ENOMEM;
    goto send;
  }
  amz_date(date);
  req_location(c, r, &host, &path);
  if (host.oom || path.oom) goto out;

  for (size_t i = 0; i < r->n_query; i++) q[i] = (bri_http_pair){r->qname[i], r->qval[i]};
  h[nh++] = (bri_http_pair){"host", host.data};
  h[nh++] = (bri_http_pair){"x-amz-date", date};
  h[nh++] = (bri_http_pair){"x-amz-content-sha256", r->payload_hash};
  if (c->cfg.session_token) h[nh++] = (bri_http_pair){"x-amz-security-token", c->cfg.session_token};
  for (size_t i = 0; i < r->n_headers; i++) h[nh++] = (bri_http_pair){r->hname[i], r->hval[i]};
  bri_sigv4_request sr = {r->method, path.data, q, r->n_query, h, nh, r->payload_hash, date,
                          c->cfg.region, "s3", c->cfg.access_key_id, c->cfg.secret_access_key};
  if ((rc = bri_sigv4_authorization(&sr, &auth, &r->err)) != 0) goto out;
  rc = BRI_ENOMEM;
  if (!(query = bri_http_query(q, r->n_query)) || !(epath = bri_uri_encode(path.data, false))) {
    goto out;
  }
  bri_strbuf_printf(&url, "%s://%s%s%s%s", c->scheme, host.data, epath, *query ? "?" : "", query);

send:
  curl_slist_free_all(r->hdrs);
  r->hdrs = NULL;
  bri_strbuf line = BRI_STRBUF_INIT;
  for (size_t i = 0; i < nh; i++) {
    bri_strbuf_printf(&line, "%s: %s", h[i].name, h[i].value);
    struct curl_slist *l = line.oom ? NULL : curl_slist_append(r->hdrs, line.data);
    bri_strbuf_clear(&line);
    if (!l) goto out;
    r->hdrs = l;
  }
  struct curl_slist *l;
  if (auth) { /* none with an Azure SAS: the token is in the URL */
    bri_strbuf_printf(&line, "Authorization: %s", auth);
    l = line.oom ? NULL : curl_slist_append(r->hdrs, line.data);
    bri_strbuf_clear(&line);
    if (!l) goto out;
    r->hdrs = l;
  }
  /* No "Expect: 100-continue" round trip; no form content type on POST. */
  if (!(l = curl_slist_append(r->hdrs, "Expect:"))) goto out;
  r->hdrs = l;
  if (!(l = curl_slist_append(r->hdrs, "Content-Type:"))) goto out;
  r->hdrs = l;
  if (url.oom) goto out;

  if (!r->easy && !(r->easy = easy_take())) goto out;
  CURL *e = r->easy;
  curl_easy_reset(e);
  curl_easy_setopt(e, CURLOPT_URL, url.data);
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, r->hdrs);
  curl_easy_setopt(e, CURLOPT_PRIVATE, r);
  curl_easy_setopt(e, CURLOPT_SHARE, c->share);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_PATH_AS_IS, 1L);
  curl_easy_setopt(e, CURLOPT_USERAGENT, "brid");
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, c->opt.connect_timeout_ms);
  curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME,
                   (c->opt.idle_timeout_ms + 999) / 1000 > 0 ? (c->opt.idle_timeout_ms + 999) / 1000 : 1L);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
  curl_easy_setopt(e, CURLOPT_FILETIME, 1L);
  if (!strcmp(r->method, "HEAD")) {
    curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
  } else if (!strcmp(r->method, "PUT")) {
    curl_easy_setopt(e, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(e, CURLOPT_READFUNCTION, on_read);
    curl_easy_setopt(e, CURLOPT_READDATA, r);
    curl_easy_setopt(e, CURLOPT_SEEKFUNCTION, on_seek);
    curl_easy_setopt(e, CURLOPT_SEEKDATA, r);
    curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE, (curl_off_t)r->body_len);
  } else if (!strcmp(r->method, "POST")) {
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body ? (const char *)r->body : "");
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
  } else if (strcmp(r->method, "GET")) {
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r->method);
  }
  /* a fresh attempt: nothing of the previous one remains */
  r->body_sent = 0;
  r->got = 0;
  r->overflow = false;
  bri_strbuf_clear(&r->grow);
  bri_strbuf_clear(&r->errbody);
  r->status = 0;
  r->etag[0] = '\0';
  r->have_range = false;
  r->s3_code[0] = '\0';
  r->attempts++;
  if (curl_multi_add_handle(m, e) != CURLM_OK) goto out;
  r->state = REQ_ACTIVE;
  rc = 0;
out:
  if (rc == BRI_ENOMEM) bri_error_set(&r->err, rc, "out of memory");
  bri_strbuf_clear(&host);
  bri_strbuf_clear(&path);
  bri_strbuf_clear(&url);
  free(query);
  free(epath);
  free(auth);
  return rc;
}

/* ---- judging one attempt ---- */

typedef enum { VERDICT_DONE, VERDICT_RETRY, VERDICT_FAIL } verdict;

static bool transient_curl(CURLcode cc) {
  switch (cc) {
  case CURLE_COULDNT_RESOLVE_HOST:
  case CURLE_COULDNT_CONNECT:
  case CURLE_OPERATION_TIMEDOUT:
  case CURLE_SEND_ERROR:
  case CURLE_RECV_ERROR:
  case CURLE_GOT_NOTHING:
  case CURLE_PARTIAL_FILE:
  case CURLE_HTTP2:
  case CURLE_HTTP2_STREAM:
  case CURLE_SSL_CONNECT_ERROR:
  case CURLE_WEIRD_SERVER_REPLY:
    return true;
  default:
    return false;
  }
}

static bool transient_code(const char *code) {
  static const char *const codes[] = {"InternalError", "SlowDown", "ServiceUnavailable",
                                      "RequestTimeout", "RequestTimeTooSkewed",
                                      /* Azure's */ "ServerBusy", "OperationTimedOut", NULL};
  for (int i = 0; codes[i]; i++) {
    if (!strcmp(code, codes[i])) return true;
  }
  return false;
}

/* Reads Code and Message of an <Error> document into r->s3_code and msg. */
static bool parse_error(const char *body, size_t len, s3_req *r, char *msg, size_t msg_n) {
  bri_xml_node *root = NULL;
  bri_error ignored;
  if (!len || bri_xml_parse(body, len, "error", &root, &ignored) != 0) return false;
  bool is_error = !strcmp(root->name, "Error");
  if (is_error) {
    const char *code = bri_xml_text(root, "Code"), *m = bri_xml_text(root, "Message");
    snprintf(r->s3_code, sizeof r->s3_code, "%s", code ? code : "");
    snprintf(msg, msg_n, "%s", m ? m : "");
  }
  bri_xml_free(root);
  return is_error;
}

static int status_class(long status) {
  if (status >= 200 && status < 600) return (int)(status / 100) - 1;
  return BRI_REQ_NO_ANSWER;
}

/* What a 2xx answer to a ranged GET must be: the asked range, or its head up
 * to the object's end. */
static verdict check_range(s3_req *r, char *why, size_t n) {
  if (r->status == 200) { /* no Range honoured: the whole object */
    if (r->want_off == 0 && !r->exact_len) return VERDICT_DONE;
    if (r->want_off == 0 && r->got == r->cap) return VERDICT_DONE;
    snprintf(why, n, "the server ignored the Range header (HTTP 200)");
    return VERDICT_FAIL;
  }
  if (!r->have_range) {
    snprintf(why, n, "a 206 answer without Content-Range");
    return VERDICT_FAIL;
  }
  uint64_t want_last = r->want_off + r->cap - 1;
  if (want_last >= r->range_total) want_last = r->range_total - 1;
  if (r->range_first != r->want_off || r->range_last != want_last) {
    snprintf(why, n, "asked bytes %llu-%llu, got %llu-%llu of %llu",
             (unsigned long long)r->want_off, (unsigned long long)(r->want_off + r->cap - 1),
             (unsigned long long)r->range_first, (unsigned long long)r->range_last,
             (unsigned long long)r->range_total);
    return VERDICT_FAIL;
  }
  if (r->got != r->range_last - r->range_first + 1) {
    snprintf(why, n, "body of %zu bytes for a range of %llu (cut short)", r->got,
             (unsigned long long)(r->range_last - r->range_first + 1));
    return VERDICT_RETRY;
  }
  if (r->exact_len && r->got != r->cap) {
    snprintf(why, n, "the object ends at %llu, before the %zu bytes asked at %llu",
             (unsigned long long)r->range_total, r->cap, (unsigned long long)r->want_off);
    return VERDICT_FAIL;
  }
  return VERDICT_DONE;
}

/* A conditional write that lost: S3 answers 412; Azure 409 BlobAlreadyExists. */
static int fail_code(const bri_s3_client *c, const s3_req *r) {
  if (r->status == 404) return BRI_ENOTFOUND;
  if ((r->status == 412 || (c->az && r->status == 409)) && r->if_absent) return BRI_ETAKEN;
  return BRI_EIO;
}

static verdict judge(bri_s3_client *c, s3_req *r, CURLcode cc) {
  char what[600], why[512] = "", msg[400] = "";
  req_what(c, r, what, sizeof what);
  curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &r->status);
  long ft = -1;
  curl_easy_getinfo(r->easy, CURLINFO_FILETIME, &ft);
  r->mtime = ft;
  int sc = cc == CURLE_OK ? status_class(r->status) : BRI_REQ_NO_ANSWER;
  bri_store_counts_request(r->tally, r->op, sc);
  verdict v;
  if (cc != CURLE_OK) {
    if (r->overflow) snprintf(why, sizeof why, "answer longer than the %zu bytes asked", r->cap);
    else snprintf(why, sizeof why, "%s", curl_easy_strerror(cc));
    v = !r->overflow && transient_curl(cc) ? VERDICT_RETRY : VERDICT_FAIL;
    if (v == VERDICT_FAIL) bri_error_set(&r->err, BRI_EIO, "%s: %s", what, why);
  } else if (r->status >= 200 && r->status < 300) {
    v = VERDICT_DONE;
    if (r->expect_range) v = check_range(r, why, sizeof why);
    if (v == VERDICT_DONE && r->xml_on_200 && parse_error(r->grow.data, r->grow.len, r, msg, sizeof msg)) {
      snprintf(why, sizeof why, "HTTP %ld %s: %s", r->status, r->s3_code, msg);
      v = transient_code(r->s3_code) ? VERDICT_RETRY : VERDICT_FAIL;
    }
    if (v == VERDICT_FAIL) bri_error_set(&r->err, BRI_EIO, "%s: %s", what, why);
  } else {
    parse_error(r->errbody.data, r->errbody.len, r, msg, sizeof msg);
    snprintf(why, sizeof why, "HTTP %ld%s%s%s%s", r->status, r->s3_code[0] ? " " : "", r->s3_code,
             msg[0] ? ": " : "", msg);
    bool transient = r->status >= 500 || r->status == 429 || r->status == 408 ||
                     (r->s3_code[0] && transient_code(r->s3_code));
    v = transient ? VERDICT_RETRY : VERDICT_FAIL;
    if (v == VERDICT_FAIL) bri_error_set(&r->err, fail_code(c, r), "%s: %s", what, why);
  }
  if (v == VERDICT_RETRY && r->attempts >= c->opt.max_attempts) {
    bri_error_set(&r->err, r->status >= 300 ? fail_code(c, r) : BRI_EIO, "%s: %s (after %d attempts)",
                  what, why, r->attempts);
    v = VERDICT_FAIL;
  }
  if (v == VERDICT_DONE) {
    r->rc = 0;
    bri_store_counts_add(r->tally, BRI_COUNT_COPIED_SERVER, r->copied);
  } else if (v == VERDICT_FAIL) {
    r->rc = r->err.code ? r->err.code : BRI_EIO;
  } else {
    bri_store_counts_add(r->tally, BRI_COUNT_RETRIES, 1);
  }
  curl_off_t up = 0, down = 0;
  curl_easy_getinfo(r->easy, CURLINFO_SIZE_UPLOAD_T, &up);
  curl_easy_getinfo(r->easy, CURLINFO_SIZE_DOWNLOAD_T, &down);
  bri_store_counts_add(r->tally, BRI_COUNT_WRITTEN, (uint64_t)up);
  bri_store_counts_add(r->tally, BRI_COUNT_READ, (uint64_t)down);
  return v;
}

/* Wait before retry n (1-based): half of min(cap, base * 2^(n-1)) plus a
 * random part of the other half, so that clients that failed together do
 * not retry together. */
static int64_t backoff_ms(bri_s3_client *c, int attempt) {
  int64_t w = c->opt.backoff_base_ms;
  for (int i = 1; i < attempt && w < c->opt.backoff_max_ms; i++) w *= 2;
  if (w > c->opt.backoff_max_ms) w = c->opt.backoff_max_ms;
  uint64_t x = atomic_fetch_add(&c->seed, 0x9E3779B97F4A7C15ull);
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return w / 2 + (int64_t)(x % (uint64_t)(w / 2 + 1));
}

/* ---- the engine ---- */

/* With max_rate set: the time from which a new request may start. Slots
 * are handed out one per 1/max_rate seconds to every caller of the client,
 * so a cleanup or a poll over thousands of keys keeps to its root's
 * request budget. */
static int64_t rate_slot(bri_s3_client *c, int64_t now) {
  if (c->opt.max_rate <= 0) return now;
  pthread_mutex_lock(&c->rate_lock);
  int64_t slot = c->next_slot_ms > now ? c->next_slot_ms : now;
  c->next_slot_ms = slot + (int64_t)(1000.0 / c->opt.max_rate);
  pthread_mutex_unlock(&c->rate_lock);
  return slot;
}

/* With max_active set: takes one of the client's places for a request in
 * flight (false when all are taken: by this thread's requests or other
 * threads', which end on their own, so waiting for one cannot deadlock). */
static bool take_active(bri_s3_client *c, s3_req *r) {
  if (c->opt.max_active <= 0) return true;
  if (atomic_fetch_add(&c->active, 1) >= c->opt.max_active) {
    atomic_fetch_sub(&c->active, 1);
    return false;
  }
  r->active_slot = true;
  return true;
}

static void give_active(bri_s3_client *c, s3_req *r) {
  if (r->active_slot) atomic_fetch_sub(&c->active, 1);
  r->active_slot = false;
}

static int run_batch(bri_s3_client *c, bri_store_counts *tally, s3_req **reqs, size_t n, bri_error *err) {
  CURLM *m = multi_take();
  if (!m) return bri_error_set(err, BRI_ENOMEM, "S3: cannot make a curl multi handle");
  /* the connections are the client's (its share's cache), but curl keeps
   * only as many idle ones as this multi handle allows (by default 4 per
   * request of the batch): a read-ahead thread's batch of one request would
   * close the others' connections, and 16 threads then open a connection
   * per request (400 fragments: 698 connects, 33 with this) */
  curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, (long)(c->opt.max_active > 0 ? c->opt.max_active : KEPT_CONNECTIONS));
  size_t done = 0;
  int active = 0;
  for (size_t i = 0; i < n; i++) {
    reqs[i]->state = REQ_WAITING;
    reqs[i]->due_ms = 0;
    reqs[i]->attempts = 0;
    reqs[i]->has_slot = false;
    reqs[i]->tally = tally;
  }
  while (done < n) {
    int64_t now = now_ms();
    bool full = false; /* the client's max_active places are all taken */
    for (size_t i = 0; i < n && active < c->opt.max_in_flight; i++) {
      s3_req *r = reqs[i];
      if (r->state != REQ_WAITING || r->due_ms > now) continue;
      if (!r->has_slot) { /* one slot per attempt, kept while it waits for it */
        r->has_slot = true;
        int64_t slot = rate_slot(c, now);
        if (slot > now) {
          r->due_ms = slot;
          continue;
        }
      }
      if (!take_active(c, r)) {
        full = true;
        break;
      }
      r->has_slot = false;
      if (req_start(c, r, m) != 0) {
        give_active(c, r);
        r->rc = r->err.code ? r->err.code : BRI_ENOMEM;
        r->state = REQ_DONE;
        done++;
      } else {
        active++;
      }
    }
    if (done == n) break;
    int running = 0;
    curl_multi_perform(m, &running);
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(m, &left))) {
      if (msg->msg != CURLMSG_DONE) continue;
      s3_req *r = NULL;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&r);
      CURLcode cc = msg->data.result;
      curl_multi_remove_handle(m, msg->easy_handle);
      active--;
      give_active(c, r);
      verdict v = judge(c, r, cc);
      if (v == VERDICT_RETRY) {
        r->state = REQ_WAITING;
        r->due_ms = now_ms() + backoff_ms(c, r->attempts);
      } else {
        r->state = REQ_DONE;
        done++;
      }
    }
    if (done == n) break;
    int64_t next_due = -1; /* the first retry due */
    for (size_t i = 0; i < n; i++) {
      if (reqs[i]->state == REQ_WAITING && (next_due < 0 || reqs[i]->due_ms < next_due)) {
        next_due = reqs[i]->due_ms;
      }
    }
    int timeout = full ? 2 : 1000; /* a place taken by another thread frees without a signal here */
    if (next_due >= 0) {
      int64_t wait = next_due - now_ms();
      if (wait < timeout) timeout = wait > 0 ? (int)wait : 0;
    }
    if (active) curl_multi_poll(m, NULL, 0, timeout, NULL);
    else if (timeout > 0) nanosleep(&(struct timespec){timeout / 1000, (timeout % 1000) * 1000000L}, NULL);
  }
  multi_give(m);
  for (size_t i = 0; i < n; i++) {
    if (reqs[i]->rc) {
      if (err) *err = reqs[i]->err;
      return reqs[i]->rc;
    }
  }
  return 0;
}

static int run_one(bri_s3_client *c, bri_store_counts *tally, s3_req *r, bri_error *err) {
  if (!r || r->broken) return bri_error_set(err, BRI_ENOMEM, "S3: out of memory");
  return run_batch(c, tally, &r, 1, err);
}

/* Runs r and parses its answer; what names it in errors. */
static int run_xml(bri_s3_client *c, bri_store_counts *tally, s3_req *r, const char *what,
                   bri_xml_node **root, bri_error *err) {
  *root = NULL;
  if (r) r->sink = SINK_GROW;
  int rc = run_one(c, tally, r, err);
  if (rc == 0) rc = bri_xml_parse(r->grow.data ? r->grow.data : "", r->grow.len, what, root, err);
  return rc;
}

/* ---- client ---- */

static void share_lock(CURL *h, curl_lock_data d, curl_lock_access a, void *ud) {
  (void)h;
  (void)a;
  pthread_mutex_lock(&((bri_s3_client *)ud)->locks[d]);
}

static void share_unlock(CURL *h, curl_lock_data d, void *ud) {
  (void)h;
  pthread_mutex_unlock(&((bri_s3_client *)ud)->locks[d]);
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

/* A client with opt's settings (defaults for zeros) and its share handle;
 * the caller fills the dialect's fields. */
static bri_s3_client *client_alloc(const bri_s3_options *opt, int max_attempts) {
  pthread_once(&curl_once, curl_init_once);
  bri_s3_client *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  if (opt) c->opt = *opt;
  if (c->opt.connect_timeout_ms <= 0) c->opt.connect_timeout_ms = 5000;
  if (c->opt.idle_timeout_ms <= 0) c->opt.idle_timeout_ms = 30000;
  if (c->opt.max_attempts <= 0) c->opt.max_attempts = max_attempts > 0 ? max_attempts : 8;
  if (c->opt.backoff_base_ms <= 0) c->opt.backoff_base_ms = 100;
  if (c->opt.backoff_max_ms <= 0) c->opt.backoff_max_ms = 5000;
  if (c->opt.max_in_flight <= 0) c->opt.max_in_flight = 16;
  c->seed = (uint64_t)now_ms() ^ (uint64_t)(uintptr_t)c;
  for (int i = 0; i < CURL_LOCK_DATA_LAST; i++) pthread_mutex_init(&c->locks[i], NULL);
  pthread_mutex_init(&c->rate_lock, NULL);
  c->share = curl_share_init();
  return c;
}

static void client_share(bri_s3_client *c) {
  curl_share_setopt(c->share, CURLSHOPT_LOCKFUNC, share_lock);
  curl_share_setopt(c->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
  curl_share_setopt(c->share, CURLSHOPT_USERDATA, c);
  curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
  curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
}

int bri_s3_client_new_azure(const bri_azure_config *cfg, const bri_s3_options *opt,
                            bri_s3_client **out, bri_error *err) {
  *out = NULL;
  bri_s3_client *c = client_alloc(opt, cfg->max_attempts);
  if (!c) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  const char *sep = strstr(cfg->endpoint, "://"), *slash = sep ? strchr(sep + 3, '/') : NULL;
  bool ok = (c->az = calloc(1, sizeof *c->az)) && sep;
  if (ok) {
    c->az->account = strdup(cfg->account);
    c->az->sas = dup_or_null(cfg->sas);
    c->az->key = cfg->key ? malloc(cfg->key_len ? cfg->key_len : 1) : NULL;
    if (c->az->key) memcpy(c->az->key, cfg->key, cfg->key_len), c->az->key_len = cfg->key_len;
    c->scheme = strndup(cfg->endpoint, (size_t)(sep - cfg->endpoint));
    c->host = slash ? strndup(sep + 3, (size_t)(slash - sep - 3)) : strdup(sep + 3);
    c->az_path = strdup(slash ? slash : "");
    ok = c->az->account && (!cfg->sas || c->az->sas) && (!cfg->key || c->az->key) && c->scheme &&
         c->host && c->az_path && c->share;
  }
  if (!ok) {
    bri_s3_client_free(c);
    return bri_error_set(err, sep ? BRI_ENOMEM : BRI_EINVAL, "Azure client: %s",
                         sep ? "out of memory" : "endpoint without a scheme");
  }
  client_share(c);
  *out = c;
  return 0;
}

void bri_s3_client_shape(const bri_s3_client *c, bri_s3_shape *out) {
  if (c->az) *out = (bri_s3_shape){1, (uint64_t)100 << 20, 50000, (uint64_t)256 << 20};
  else *out = (bri_s3_shape){BRI_S3_PART_MIN, BRI_S3_PART_MAX, 10000, BRI_S3_PART_MAX};
}

int bri_s3_client_new(const bri_aws_config *cfg, const bri_s3_options *opt, bri_s3_client **out,
                      bri_error *err) {
  *out = NULL;
  bri_s3_client *c = client_alloc(opt, cfg->max_attempts);
  if (!c) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  c->cfg.access_key_id = dup_or_null(cfg->access_key_id);
  c->cfg.secret_access_key = dup_or_null(cfg->secret_access_key);
  c->cfg.session_token = dup_or_null(cfg->session_token);
  c->cfg.region = dup_or_null(cfg->region);
  c->cfg.endpoint = dup_or_null(cfg->endpoint);
  c->cfg.credentials_from = dup_or_null(cfg->credentials_from);
  c->cfg.virtual_hosted = cfg->virtual_hosted;
  const char *sep = cfg->endpoint ? strstr(cfg->endpoint, "://") : NULL;
  if (sep) {
    c->scheme = strndup(cfg->endpoint, (size_t)(sep - cfg->endpoint));
    c->host = strdup(sep + 3);
  }
  if (!c->cfg.access_key_id || !c->cfg.secret_access_key || !c->cfg.region || !c->scheme ||
      !c->host || !c->share || (cfg->session_token && !c->cfg.session_token)) {
    bri_s3_client_free(c);
    return bri_error_set(err, sep || !cfg->endpoint ? BRI_ENOMEM : BRI_EINVAL,
                         "S3 client: %s", sep ? "out of memory" : "endpoint without a scheme");
  }
  client_share(c);
  *out = c;
  return 0;
}

void bri_s3_client_free(bri_s3_client *c) {
  if (!c) return;
  if (c->share) curl_share_cleanup(c->share);
  for (int i = 0; i < CURL_LOCK_DATA_LAST; i++) pthread_mutex_destroy(&c->locks[i]);
  pthread_mutex_destroy(&c->rate_lock);
  bri_aws_config_clear(&c->cfg);
  if (c->az) bri_azure_config_clear(c->az);
  free(c->az);
  free(c->az_path);
  free(c->scheme);
  free(c->host);
  free(c);
}

/* ---- URIs and small helpers ---- */

static bool bucket_ok(const char *b, size_t n) {
  if (n < 3 || n > 63 || !isalnum((unsigned char)b[0]) || !isalnum((unsigned char)b[n - 1])) {
    return false;
  }
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)b[i];
    if (!(islower(ch) || isdigit(ch) || ch == '.' || ch == '-')) return false;
  }
  return true;
}

int bri_s3_uri_parse(const char *uri, char **bucket, char **key, bri_error *err) {
  *bucket = *key = NULL;
  if (strncmp(uri, "s3://", 5)) return bri_error_set(err, BRI_EINVAL, "%s: not an s3:// URI", uri);
  const char *b = uri + 5, *slash = strchr(b, '/');
  size_t n = slash ? (size_t)(slash - b) : strlen(b);
  if (!bucket_ok(b, n)) {
    return bri_error_set(err, BRI_EINVAL,
                         "%s: bucket \"%.*s\" is not a valid S3 bucket name (3-63 characters "
                         "of a-z 0-9 . -)", uri, (int)(n > 80 ? 80 : n), b);
  }
  const char *k = slash ? slash + 1 : "";
  while (*k == '/') k++;
  *bucket = strndup(b, n);
  *key = strdup(k);
  if (!*bucket || !*key) {
    free(*bucket);
    free(*key);
    *bucket = *key = NULL;
    return bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  return 0;
}

void bri_s3_object_clear(bri_s3_object *o) {
  free(o->key);
  memset(o, 0, sizeof *o);
}

static char *copy_source(const char *bucket, const char *key) {
  bri_strbuf b = BRI_STRBUF_INIT;
  char *k = bri_uri_encode(key, false);
  if (k) bri_strbuf_printf(&b, "/%s/%s", bucket, k);
  free(k);
  return k ? bri_strbuf_take(&b) : NULL;
}

/* ---- single requests ---- */

int bri_s3_get(bri_s3_client *c, bri_store_counts *tally, const char *bucket, const char *key, uint8_t **data, size_t *len,
               bri_error *err) {
  *data = NULL;
  *len = 0;
  s3_req *r = req_new(BRI_REQ_GET, "GET", bucket, key);
  if (r) r->sink = SINK_GROW;
  int rc = run_one(c, tally, r, err);
  if (rc == 0) {
    *len = r->grow.len;
    *data = (uint8_t *)bri_strbuf_take(&r->grow);
    if (!*data) rc = bri_error_set(err, BRI_ENOMEM, "GET %s://%s/%s: out of memory", SCHEME(c), bucket, key);
  }
  req_free(r);
  return rc;
}

static s3_req *range_req(const char *bucket, const char *key, uint64_t off, size_t len, void *buf,
                         bool exact) {
  s3_req *r = req_new(BRI_REQ_GET, "GET", bucket, key);
  char range[64];
  snprintf(range, sizeof range, "bytes=%llu-%llu", (unsigned long long)off,
           (unsigned long long)(off + len - 1));
  req_header(r, "Range", range);
  if (!r) return NULL;
  r->sink = SINK_FIXED;
  r->fixed = buf;
  r->cap = len;
  r->expect_range = true;
  r->want_off = off;
  r->exact_len = exact;
  return r;
}

int bri_s3_get_range(bri_s3_client *c, bri_store_counts *tally, const char *bucket, const char *key, uint64_t off,
                     size_t len, void *buf, size_t *got, uint64_t *size, bri_error *err) {
  *got = 0;
  if (len == 0) return 0;
  s3_req *r = range_req(bucket, key, off, len, buf, false);
  int rc = run_one(c, tally, r, err);
  if (rc == 0) {
    *got = r->got;
    if (size) *size = r->status == 206 ? r->range_total : r->got;
  } else if (r && r->status == 416) { /* at or past the end */
    rc = 0;
    if (size) {
      bri_s3_object o = {0};
      rc = bri_s3_head(c, tally, bucket, key, &o, err);
      *size = o.size;
      bri_s3_object_clear(&o);
    }
  }
  req_free(r);
  return rc;
}

static s3_req *suffix_req(const char *bucket, const char *key, size_t n) {
  s3_req *r = req_new(BRI_REQ_GET, "GET", bucket, key);
  char range[40];
  snprintf(range, sizeof range, "bytes=-%zu", n);
  req_header(r, "Range", range);
  if (r) {
    r->sink = SINK_GROW;
    r->suffix = n;
  }
  return r;
}

/* The outcome of a suffix GET that ran with result rc. */
static int suffix_result(s3_req *r, int rc, uint8_t **data, size_t *len, uint64_t *size,
                         bri_error *err) {
  *data = NULL;
  *len = 0;
  *size = 0;
  if (rc == 0) {
    uint64_t total = r->status == 206 && r->have_range ? r->range_total : r->grow.len;
    uint64_t want = total < r->suffix ? total : r->suffix;
    if (r->grow.len != want) {
      return bri_error_set(err, BRI_EIO, "get s3://%s/%s: %zu bytes for the last %llu of %llu",
                           r->bucket, r->key, r->grow.len, (unsigned long long)want,
                           (unsigned long long)total);
    }
    *len = r->grow.len;
    *size = total;
    *data = (uint8_t *)bri_strbuf_take(&r->grow);
  } else if (r->status == 416) { /* an empty object has no last bytes */
    *data = malloc(1);
  } else {
    return rc;
  }
  return *data ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
}

/* Azure has no suffix ranges (Azurite answers 500): the last n bytes of
 * an object of total bytes (a HEAD or a first range said so), by a range. */
static int azure_tail(bri_s3_client *c, bri_store_counts *tally, const char *bucket, const char *key,
                      uint64_t total, size_t n, uint8_t **data, size_t *len, uint64_t *size, bri_error *err) {
  *data = NULL, *len = 0, *size = 0;
  size_t want = total < n ? (size_t)total : n, got = 0;
  uint8_t *buf = malloc(want ? want : 1);
  if (!buf) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  int rc = want ? bri_s3_get_range(c, tally, bucket, key, total - want, want, buf, &got, NULL, err) : 0;
  if (rc == 0 && got != want)
    rc = bri_error_set(err, BRI_EIO, "get az://%s/%s: %zu bytes for the last %zu of %llu (did it shrink?)",
                       bucket, key, got, want, (unsigned long long)total);
  if (rc) {
    free(buf);
    return rc;
  }
  *data = buf, *len = want, *size = total;
  return 0;
}

/* The first bytes of an object Azure's suffix read asks for (below). */
#define AZURE_PROBE ((size_t)64 << 10)

/* Azure's last n bytes without a HEAD: a range of the first AZURE_PROBE
 * bytes, whose answer (Content-Range) says the size. An object no longer
 * than that is then in hand whole (most of a table's files: manifests,
 * deletion files, small data files), a longer one costs its tail's range
 * (two requests, as a HEAD and a range would be); an empty one answers 416
 * and a HEAD says its size (bri_s3_get_range). */
static int azure_suffix(bri_s3_client *c, bri_store_counts *tally, const char *bucket, const char *key, size_t n,
                        uint8_t **data, size_t *len, uint64_t *size, bri_error *err) {
  *data = NULL, *len = 0, *size = 0;
  uint8_t *buf = malloc(AZURE_PROBE);
  if (!buf) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  size_t got = 0;
  uint64_t total = 0;
  int rc = bri_s3_get_range(c, tally, bucket, key, 0, AZURE_PROBE, buf, &got, &total, err);
  if (rc == 0 && total <= AZURE_PROBE) {
    if (got != total) {
      free(buf);
      return bri_error_set(err, BRI_EIO, "get az://%s/%s: %zu bytes of an object of %llu (did it change?)", bucket,
                           key, got, (unsigned long long)total);
    }
    size_t want = total < n ? (size_t)total : n;
    memmove(buf, buf + total - want, want);
    *data = buf, *len = want, *size = total;
    return 0;
  }
  free(buf);
  return rc ? rc : azure_tail(c, tally, bucket, key, total, n, data, len, size, err);
}

int bri_s3_get_suffix(bri_s3_client *c, bri_store_counts *tally, const char *bucket, const char *key, size_t n,
                      uint8_t **data, size_t *len, uint64_t *size, bri_error *err) {
  if (c->az) return azure_suffix(c, tally, bucket, key, n, data, len, size, err);
  s3_req *r = suffix_req(bucket, key, n);
  int rc = run_one(c, tally, r, err);
  if (r) rc = suffix_result(r, rc, data, len, size, err);
  req_free(r);
  return rc;
}

/* The object a HEAD that ran with result rc describes. */
static int head_result(s3_req *r, int rc, bri_s3_object *out, bri_error *err) {
  memset(out, 0, sizeof *out);
  if (rc) return rc;
  curl_off_t cl = 0;
  curl_easy_getinfo(r->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
  out->size = cl > 0 ? (uint64_t)cl : 0;
  out->mtime = r->mtime;
  snprintf(out->etag, sizeof out->etag, "%s", r->etag);
  if (!(out->key = strdup(r->key))) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  return 0;
}

int bri_s3_head(bri_s3_client *c, bri_store_counts *tally, const char *bucket, const char *key, bri_s3_object *out,
                bri_error *err) {
  memset(out, 0, sizeof *out);
  s3_req *r = req_new(BRI_REQ_HEAD, "HEAD", bucket, key);
  int rc = run_one(c, tally, r, err);
  if (r) rc = head_result(r, rc, out, err);
  req_free(r);
  return rc;
}

/* After a retried PUT-if-absent met 412: is the object there the one we
 * sent (our first attempt landed, its answer was lost)? */
static bool object_is(bri_s3_client *c, bri_store_counts *tally, const char *bucket, const char *key, const void *data,
                      size_t len) {
  uint8_t *have = NULL;
  size_t n = 0;
  bri_error ignored;
  bool same = bri_s3_get(c, tally, bucket, key, &have, &n, &ignored) == 0 && n == len &&
              (len == 0 || !memcmp(have, data, len));
  free(have);
  return same;
}

int bri_s3_put(bri_s3_client *c, bri_store_counts *tally, const char *bucket, const char *key, const void *data, size_t len,
               int flags, bri_error *err) {
  s3_req *r = req_new(BRI_REQ_PUT, "PUT", bucket, key);
  if (c->az) req_header(r, "x-ms-blob-type", "BlockBlob");
  if (flags & BRI_S3_PUT_IF_ABSENT) req_header(r, "If-None-Match", "*");
  req_body(r, data, len);
  if (r) r->if_absent = flags & BRI_S3_PUT_IF_ABSENT;
  int rc = run_one(c, tally, r, err);
  if (rc == BRI_ETAKEN) {
    /* Not only after our own retry: curl resends by itself on a reused
     * connection that died, so an attempt of ours may have landed twice. */
    if (object_is(c, tally, bucket, key, data, len)) {
      rc = 0;
    } else {
      rc = bri_error_set(err, BRI_ETAKEN, "put %s://%s/%s: taken (another writer made it first)",
                         SCHEME(c), bucket, key);
    }
  }
  req_free(r);
  return rc;
}

/* ---- listing ---- */

/* Undoes encoding-type=url: %XX, and '+' for a space. */
static char *url_decode(const char *s) {
  char *d = malloc(strlen(s) + 1), *o = d;
  if (!d) return NULL;
  for (; *s; s++) {
    if (*s == '%' && isxdigit((unsigned char)s[1]) && isxdigit((unsigned char)s[2])) {
      char h[3] = {s[1], s[2], 0};
      *o++ = (char)strtol(h, NULL, 16);
      s += 2;
    } else {
      *o++ = *s == '+' ? ' ' : *s;
    }
  }
  *o = '\0';
  return d;
}

/* "2026-12-01T14:36:00.000Z" -> seconds since the epoch. */
static int64_t parse_iso8601(const char *s) {
  struct tm tm;
  memset(&tm, 0, sizeof tm);
  if (!s || sscanf(s, "%d-%d-%dT%d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                   &tm.tm_min, &tm.tm_sec) != 6) {
    return -1;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return (int64_t)timegm(&tm);
}

void bri_s3_listing_clear(bri_s3_listing *l) {
  for (size_t i = 0; i < l->n_objects; i++) bri_s3_object_clear(&l->objects[i]);
  for (size_t i = 0; i < l->n_prefixes; i++) free(l->prefixes[i]);
  free(l->objects);
  free(l->prefixes);
  free(l->next_token);
  memset(l, 0, sizeof *l);
}

/* "Wed, 02 Dec 2026 06:27:43 GMT" (Azure's Last-Modified) -> seconds since
 * the epoch. */
static int64_t parse_rfc1123(const char *s) {
  struct tm tm;
  memset(&tm, 0, sizeof tm);
  if (!s || !strptime(s, "%a, %d %b %Y %H:%M:%S GMT", &tm)) return -1;
  return (int64_t)timegm(&tm);
}

/* Appends one entry of a listing page: a prefix (k taken), or an object
 * (k taken; its other fields zero, returned to be filled). */
static int add_prefix(bri_s3_listing *out, char *k, bri_error *err) {
  char **grown = realloc(out->prefixes, (out->n_prefixes + 1) * sizeof *grown);
  if (!grown) {
    free(k);
    return bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  out->prefixes = grown;
  out->prefixes[out->n_prefixes++] = k;
  return 0;
}

static bri_s3_object *add_object(bri_s3_listing *out, char *k, bri_error *err) {
  bri_s3_object *grown = realloc(out->objects, (out->n_objects + 1) * sizeof *grown);
  if (!grown) {
    free(k);
    bri_error_set(err, BRI_ENOMEM, "out of memory");
    return NULL;
  }
  out->objects = grown;
  bri_s3_object *o = &out->objects[out->n_objects++];
  memset(o, 0, sizeof *o);
  o->key = k;
  return o;
}

/* Where a listing page keeps what brid reads: S3's ListObjectsV2
 * <ListBucketResult> (Contents: Key, Size, ETag, LastModified;
 * CommonPrefixes: Prefix; IsTruncated and NextContinuationToken) and
 * Azure's List Blobs <EnumerationResults><Blobs> (Blob: Name, Properties:
 * Content-Length, Etag, Last-Modified; BlobPrefix: Name; a NextMarker that
 * is empty on the last page). */
typedef struct listing_shape {
  const char *root, *within; /* the document element; the entries' parent (NULL: the root) */
  const char *object, *object_key, *prefix, *prefix_key;
  const char *props; /* the child of an object holding the fields below (NULL: the object) */
  const char *size, *etag, *mtime;
  int64_t (*parse_time)(const char *);
  const char *truncated; /* "true" when more pages follow (NULL: a non-empty next token says so) */
  const char *next;
} listing_shape;

static const listing_shape S3_LISTING = {"ListBucketResult", NULL, "Contents", "Key", "CommonPrefixes",
                                         "Prefix", NULL, "Size", "ETag", "LastModified", parse_iso8601,
                                         "IsTruncated", "NextContinuationToken"};
static const listing_shape AZURE_LISTING = {"EnumerationResults", "Blobs", "Blob", "Name", "BlobPrefix",
                                            "Name", "Properties", "Content-Length", "Etag",
                                            "Last-Modified", parse_rfc1123, NULL, "NextMarker"};

static int parse_listing(const listing_shape *sh, const bri_xml_node *root, const char *what,
                         bri_s3_listing *out, bri_error *err) {
  if (strcmp(root->name, sh->root))
    return bri_error_set(err, BRI_ECORRUPT, "%s: answer <%s>, not <%s>", what, root->name, sh->root);
  const char *enc = bri_xml_text(root, "EncodingType");
  bool url = enc && !strcmp(enc, "url"); /* S3's encoding-type=url */
  const bri_xml_node *within = sh->within ? bri_xml_child(root, sh->within) : root;
  for (const bri_xml_node *n = within ? within->child : NULL; n; n = n->next) {
    bool object = !strcmp(n->name, sh->object), prefix = !strcmp(n->name, sh->prefix);
    if (!object && !prefix) continue;
    const char *raw = bri_xml_text(n, object ? sh->object_key : sh->prefix_key);
    if (!raw) return bri_error_set(err, BRI_ECORRUPT, "%s: an entry without its key", what);
    char *k = url ? url_decode(raw) : strdup(raw);
    if (!k) return bri_error_set(err, BRI_ENOMEM, "out of memory");
    if (prefix) {
      if (add_prefix(out, k, err)) return BRI_ENOMEM;
      continue;
    }
    bri_s3_object *o = add_object(out, k, err);
    if (!o) return BRI_ENOMEM;
    const bri_xml_node *p = sh->props ? bri_xml_child(n, sh->props) : n;
    const char *size = p ? bri_xml_text(p, sh->size) : NULL, *etag = p ? bri_xml_text(p, sh->etag) : NULL;
    o->size = size ? strtoull(size, NULL, 10) : 0;
    o->mtime = sh->parse_time(p ? bri_xml_text(p, sh->mtime) : NULL);
    snprintf(o->etag, sizeof o->etag, "%s", etag ? etag : "");
  }
  const char *next = bri_xml_text(root, sh->next);
  const char *trunc = sh->truncated ? bri_xml_text(root, sh->truncated) : NULL;
  out->truncated = sh->truncated ? trunc && !strcmp(trunc, "true") : next && *next;
  if (out->truncated) {
    if (!next || !*next)
      return bri_error_set(err, BRI_ECORRUPT, "%s: a truncated page without %s", what, sh->next);
    if (!(out->next_token = strdup(next))) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  return 0;
}

/* A ListObjectsV2 request of one page (Azure: List Blobs, which has no
 * start-after: a->start_after is refused there). */
static s3_req *list_req(const bri_s3_client *c, const char *bucket, const bri_s3_list_args *a) {
  s3_req *r = req_new(BRI_REQ_LIST, "GET", bucket, NULL);
  char maxk[24];
  snprintf(maxk, sizeof maxk, "%d", a->max_keys);
  if (c->az) {
    req_query(r, "restype", "container");
    req_query(r, "comp", "list");
    req_query(r, "prefix", a->prefix ? a->prefix : "");
    if (a->delimiter) req_query(r, "delimiter", a->delimiter);
    if (a->continuation_token) req_query(r, "marker", a->continuation_token);
    if (a->max_keys > 0) req_query(r, "maxresults", maxk);
    if (r && a->start_after) r->broken = true;
    if (r) r->sink = SINK_GROW;
    return r;
  }
  req_query(r, "list-type", "2");
  req_query(r, "encoding-type", "url");
  req_query(r, "prefix", a->prefix ? a->prefix : "");
  if (a->delimiter) req_query(r, "delimiter", a->delimiter);
  if (a->start_after) req_query(r, "start-after", a->start_after);
  if (a->continuation_token) req_query(r, "continuation-token", a->continuation_token);
  if (a->max_keys > 0) req_query(r, "max-keys", maxk);
  if (r) r->sink = SINK_GROW;
  return r;
}

/* The listing of a list_req that ran with result rc. */
static int list_result(const bri_s3_client *c, s3_req *r, int rc, bri_s3_listing *out, bri_error *err) {
  memset(out, 0, sizeof *out);
  const char *prefix = "";
  for (size_t i = 0; i < r->n_query; i++)
    if (!strcmp(r->qname[i], "prefix")) prefix = r->qval[i];
  char what[600];
  snprintf(what, sizeof what, "list %s://%s/%s", SCHEME(c), r->bucket, prefix);
  bri_xml_node *root = NULL;
  if (rc == 0) rc = bri_xml_parse(r->grow.data ? r->grow.data : "", r->grow.len, what, &root, err);
  if (rc == 0) rc = parse_listing(c->az ? &AZURE_LISTING : &S3_LISTING, root, what, out, err);
  bri_xml_free(root);
  if (rc) bri_s3_listing_clear(out);
  return rc;
}

int bri_s3_list_page(bri_s3_client *c, bri_store_counts *tally, const char *bucket,
                     const bri_s3_list_args *a, bri_s3_listing *out, bri_error *err) {
  memset(out, 0, sizeof *out);
  s3_req *r = list_req(c, bucket, a);
  int rc = run_one(c, tally, r, err);
  if (r) rc = list_result(c, r, rc, out, err);
  req_free(r);
  return rc;
}

int bri_s3_list_all(bri_s3_client *c, bri_store_counts *tally, const char *bucket, const bri_s3_list_args *a,
                    bri_s3_listing *out, bri_error *err) {
  memset(out, 0, sizeof *out);
  bri_s3_list_args page_args = *a;
  char *token = a->continuation_token ? strdup(a->continuation_token) : NULL;
  int rc = 0;
  for (;;) {
    page_args.continuation_token = token;
    bri_s3_listing page;
    if ((rc = bri_s3_list_page(c, tally, bucket, &page_args, &page, err)) != 0) break;
    bri_s3_object *objs = realloc(out->objects, (out->n_objects + page.n_objects + 1) * sizeof *objs);
    char **pre = realloc(out->prefixes, (out->n_prefixes + page.n_prefixes + 1) * sizeof *pre);
    if (objs) out->objects = objs;
    if (pre) out->prefixes = pre;
    if (!objs || !pre) {
      bri_s3_listing_clear(&page);
      rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
      break;
    }
    if (page.n_objects) memcpy(out->objects + out->n_objects, page.objects, page.n_objects * sizeof *objs);
    if (page.n_prefixes) memcpy(out->prefixes + out->n_prefixes, page.prefixes, page.n_prefixes * sizeof *pre);
    out->n_objects += page.n_objects;
    out->n_prefixes += page.n_prefixes;
    free(page.objects);
    free(page.prefixes);
    free(token);
    token = page.next_token;
    if (!page.truncated) break;
  }
  free(token);
  if (rc) bri_s3_listing_clear(out);
  return rc;
}

/* ---- deletes ---- */

static void md5_base64(const void *data, size_t len, char out[32]) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(data, len, md, &n, EVP_md5(), NULL);
  EVP_EncodeBlock((unsigned char *)out, md, (int)n);
}

static int delete_some(bri_s3_client *c, bri_store_counts *tally, const char *bucket, const char *const *keys, size_t n,
                       int *rcs, size_t *deleted, bri_error *err) {
  for (size_t i = 0; rcs && i < n; i++) rcs[i] = BRI_EIO; /* until S3 says otherwise */
  bri_strbuf body = BRI_STRBUF_INIT;
  bri_strbuf_puts(&body, "<Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Quiet>true</Quiet>");
  for (size_t i = 0; i < n; i++) {
    bri_strbuf_puts(&body, "<Object><Key>");
    bri_xml_escape(&body, keys[i]);
    bri_strbuf_puts(&body, "</Key></Object>");
  }
  bri_strbuf_puts(&body, "</Delete>");
  if (body.oom) {
    bri_strbuf_clear(&body);
    return bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  char md5[32];
  md5_base64(body.data, body.len, md5);
  s3_req *r = req_new(BRI_REQ_DELETE, "POST", bucket, NULL);
  req_query(r, "delete", "");
  req_header(r, "Content-MD5", md5);
  req_body(r, body.data, body.len);
  char what[400];
  snprintf(what, sizeof what, "delete in s3://%s", bucket);
  bri_xml_node *root;
  int rc = run_xml(c, tally, r, what, &root, err);
  if (rc == 0) {
    if (strcmp(root->name, "DeleteResult")) {
      rc = bri_error_set(err, BRI_ECORRUPT, "%s: answer <%s>, not <DeleteResult>", what, root->name);
    }
    size_t refused = 0;
    const bri_xml_node *first = rc ? NULL : bri_xml_child(root, "Error");
    for (size_t i = 0; rc == 0 && rcs && i < n; i++) rcs[i] = 0;
    for (const bri_xml_node *e = first; e; e = bri_xml_next_same(e)) {
      refused++;
      const char *k = bri_xml_text(e, "Key");
      for (size_t i = 0; k && rcs && i < n; i++) {
        if (!strcmp(keys[i], k)) rcs[i] = BRI_EIO;
      }
    }
    if (first) {
      const char *k = bri_xml_text(first, "Key"), *code = bri_xml_text(first, "Code"),
                 *msg = bri_xml_text(first, "Message");
      rc = bri_error_set(err, BRI_EIO, "delete s3://%s/%s: %s: %s (%zu of %zu keys refused)", bucket,
                         k ? k : "?", code ? code : "?", msg ? msg : "", refused, n);
    }
    if (rc == 0 || first) *deleted += n - refused;
    bri_xml_free(root);
  }
  req_free(r);
  bri_strbuf_clear(&body);
  return rc;
}

/* Azure with a SAS token alone: one Delete Blob per key, all in one batch
 * of requests (max_in_flight at a time; Blob Batch sub-requests carrying
 * a SAS were not tried on Azurite, docs/azure.md). A missing blob counts as
 * deleted. */
static int azure_delete_each(bri_s3_client *c, bri_store_counts *tally, const char *bucket, const char *const *keys,
                             size_t n, int *rcs, size_t *deleted, bri_error *err) {
  s3_req **reqs = calloc(n ? n : 1, sizeof *reqs);
  int rc = reqs ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
  for (size_t i = 0; rc == 0 && i < n; i++)
    if (!(reqs[i] = req_new(BRI_REQ_DELETE, "DELETE", bucket, keys[i])))
      rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (rc == 0) run_batch(c, tally, reqs, n, NULL);
  int first = rc;
  for (size_t i = 0; rc == 0 && i < n; i++) {
    int one = reqs[i]->rc == BRI_ENOTFOUND ? 0 : reqs[i]->rc;
    if (rcs) rcs[i] = one;
    if (!one) (*deleted)++;
    if (one && !first) {
      first = one;
      if (err) *err = reqs[i]->err;
    }
  }
  for (size_t i = 0; reqs && i < n; i++) req_free(reqs[i]);
  free(reqs);
  return first;
}

/* Sub-requests of one Blob Batch (the service's limit). */
#define AZURE_BATCH 256

/* The multipart body of a Blob Batch deleting keys[0..n): one Delete Blob
 * sub-request each, signed with Shared Key on its own (the path as the
 * service sees it, account included when path-style), Content-ID i. */
static int azure_batch_body(bri_s3_client *c, const char *bucket, const char *const *keys, size_t n,
                            const char *boundary, bri_strbuf *body, bri_error *err) {
  char date[32];
  bri_azure_date(time(NULL), date);
  bri_http_pair h[] = {{"x-ms-date", date}};
  for (size_t i = 0; i < n; i++) {
    bri_strbuf path = BRI_STRBUF_INIT;
    bri_strbuf_printf(&path, "%s/%s/%s", c->az_path, bucket, keys[i]);
    char *epath = path.oom ? NULL : bri_uri_encode(path.data, false), *auth = NULL;
    bri_strbuf_clear(&path);
    if (!epath) return bri_error_set(err, BRI_ENOMEM, "out of memory");
    bri_azure_sign_request sr = {"DELETE", c->az->account, epath, NULL, 0, h, 1, 0};
    int rc = bri_azure_shared_key(&sr, c->az->key, c->az->key_len, &auth, err);
    if (rc == 0)
      bri_strbuf_printf(body, "--%s\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n"
                        "Content-ID: %zu\r\n\r\nDELETE %s HTTP/1.1\r\nx-ms-date: %s\r\nAuthorization: %s\r\n"
                        "Content-Length: 0\r\n\r\n", boundary, i, epath, date, auth);
    free(epath), free(auth);
    if (rc) return rc;
  }
  bri_strbuf_printf(body, "--%s--\r\n", boundary);
  return body->oom ? bri_error_set(err, BRI_ENOMEM, "out of memory") : 0;
}

/* The answers of a Blob Batch of n sub-requests: each part's status line
 * and x-ms-error-code, by its Content-ID (status 0: no answer for it). */
static void azure_batch_answers(const char *text, size_t len, size_t n, long *status, char (*code)[64]) {
  size_t cur = SIZE_MAX;
  for (size_t at = 0; at < len;) {
    const char *line = text + at, *eol = memchr(line, '\n', len - at);
    size_t ll = eol ? (size_t)(eol - line) : len - at;
    at += ll + (eol != NULL);
    if (ll && line[ll - 1] == '\r') ll--;
    const char *v = NULL;
    if (ll > 2 && line[0] == '-' && line[1] == '-') {
      cur = SIZE_MAX; /* a new part */
    } else if (header_is(line, ll, "Content-ID", &v) && v <= line + ll) {
      char num[24];
      size_t vl = (size_t)(line + ll - v);
      snprintf(num, sizeof num, "%.*s", (int)(vl < sizeof num ? vl : sizeof num - 1), v);
      char *end;
      unsigned long id = strtoul(num, &end, 10);
      cur = end != num && id < n ? id : SIZE_MAX;
    } else if (cur != SIZE_MAX && ll > 12 && !strncmp(line, "HTTP/1.1 ", 9)) {
      status[cur] = strtol(line + 9, NULL, 10);
    } else if (cur != SIZE_MAX && header_is(line, ll, "x-ms-error-code", &v) && v <= line + ll) {
      size_t vl = (size_t)(line + ll - v);
      snprintf(code[cur], sizeof code[cur], "%.*s", (int)(vl < 63 ? vl : 63), v);
    }
  }
}

/* One Blob Batch deleting keys[0..n) (n <= AZURE_BATCH): a missing blob
 * counts as deleted; a sub-request refused is BRI_EIO naming the key, its
 * status and code, and the count refused. */
static int azure_delete_some(bri_s3_client *c, bri_store_counts *tally, const char *bucket, const char *const *keys,
                             size_t n, int *rcs, size_t *deleted, bri_error *err) {
  for (size_t i = 0; rcs && i < n; i++) rcs[i] = BRI_EIO; /* until the service says otherwise */
  char boundary[48], ct[96];
  snprintf(boundary, sizeof boundary, "batch_%016llx",
           (unsigned long long)(atomic_fetch_add(&c->seed, 0x9E3779B97F4A7C15ull) ^ (uint64_t)now_ms()));
  snprintf(ct, sizeof ct, "multipart/mixed; boundary=%s", boundary);
  bri_strbuf body = BRI_STRBUF_INIT;
  long *status = calloc(n, sizeof *status);
  char(*code)[64] = calloc(n, sizeof *code);
  int rc = status && code ? azure_batch_body(c, bucket, keys, n, boundary, &body, err)
                          : bri_error_set(err, BRI_ENOMEM, "out of memory");
  s3_req *r = rc ? NULL : req_new(BRI_REQ_DELETE, "POST", bucket, NULL);
  if (rc == 0) {
    req_query(r, "restype", "container");
    req_query(r, "comp", "batch");
    req_header(r, "Content-Type", ct);
    req_body(r, body.data, body.len);
    if (r) r->sink = SINK_GROW;
    rc = run_one(c, tally, r, err);
  }
  if (rc == 0) {
    azure_batch_answers(r->grow.data ? r->grow.data : "", r->grow.len, n, status, code);
    size_t refused = 0, bad = 0;
    for (size_t i = 0; i < n; i++) {
      int one = status[i] == 202 || status[i] == 404 ? 0 : BRI_EIO;
      if (rcs) rcs[i] = one;
      if (one && !refused++) bad = i;
    }
    *deleted += n - refused;
    if (refused)
      rc = bri_error_set(err, BRI_EIO, "delete az://%s/%s: %s (%zu of %zu blobs of a Blob Batch refused)", bucket,
                         keys[bad], status[bad] ? code[bad][0] ? code[bad] : "refused" : "no answer in the batch",
                         refused, n);
  }
  req_free(r);
  bri_strbuf_clear(&body);
  free(status), free(code);
  return rc;
}

/* The keys in requests of at most batch keys each, sent by some; every
 * batch is tried, the first failure returned. */
typedef int (*delete_batch_fn)(bri_s3_client *c, bri_store_counts *tally, const char *bucket,
                               const char *const *keys, size_t n, int *rcs, size_t *deleted, bri_error *err);

static int delete_in_batches(bri_s3_client *c, bri_store_counts *tally, const char *bucket, const char *const *keys,
                             size_t n, int *rcs, size_t *deleted, size_t batch, delete_batch_fn some,
                             bri_error *err) {
  int first = 0;
  for (size_t i = 0; i < n; i += batch) {
    size_t m = n - i < batch ? n - i : batch;
    bri_error e;
    int rc = some(c, tally, bucket, keys + i, m, rcs ? rcs + i : NULL, deleted, &e);
    if (rc && !first) {
      first = rc;
      if (err) *err = e;
    }
  }
  return first;
}

/* S3: DeleteObjects of DELETE_BATCH keys. Azure: Blob Batch, AZURE_BATCH
 * deletes a request, with Shared Key; with a SAS token alone, one Delete
 * Blob per key. */
int bri_s3_delete(bri_s3_client *c, bri_store_counts *tally, const char *bucket, const char *const *keys, size_t n,
                  int *rcs, size_t *deleted, bri_error *err) {
  *deleted = 0;
  if (c->az && !c->az->key) return azure_delete_each(c, tally, bucket, keys, n, rcs, deleted, err);
  if (c->az) return delete_in_batches(c, tally, bucket, keys, n, rcs, deleted, AZURE_BATCH, azure_delete_some, err);
  return delete_in_batches(c, tally, bucket, keys, n, rcs, deleted, DELETE_BATCH, delete_some, err);
}

/* ---- copies and multipart ---- */

/* Azure: the URL a copy reads its source from, readable by the service on
 * its own: with a service SAS of our key for that one blob (an hour), or
 * the configured SAS token. */
static char *azure_source(const bri_s3_client *c, const char *bucket, const char *key) {
  char *k = bri_uri_encode(key, false), *sas = NULL;
  if (k && c->az->key)
    sas = bri_azure_blob_sas(c->az->account, c->az->key, c->az->key_len, bucket, key, time(NULL) + 3600);
  bri_strbuf b = BRI_STRBUF_INIT;
  if (k && (sas || !c->az->key))
    bri_strbuf_printf(&b, "%s://%s%s/%s/%s?%s", c->scheme, c->host, c->az_path, bucket, k, sas ? sas : c->az->sas);
  bool ok = k && (sas || !c->az->key) && !b.oom;
  free(k), free(sas);
  if (!ok) bri_strbuf_clear(&b);
  return ok ? bri_strbuf_take(&b) : NULL;
}

int bri_s3_copy(bri_s3_client *c, bri_store_counts *tally, const char *src_bucket, const char *src_key,
                const char *bucket, const char *key, uint64_t size, bri_error *err) {
  s3_req *r = req_new(BRI_REQ_COPY, "PUT", bucket, key);
  char *src = c->az ? azure_source(c, src_bucket, src_key) : copy_source(src_bucket, src_key);
  if (c->az) { /* Copy Blob, synchronous: done when it answers (up to 256 MiB) */
    req_header(r, "x-ms-copy-source", src);
    req_header(r, "x-ms-requires-sync", "true");
  } else {
    req_header(r, "x-amz-copy-source", src);
  }
  if (r) {
    r->sink = SINK_GROW;
    r->xml_on_200 = !c->az;
    r->copied = size; /* CopyObject's answer does not say */
  }
  int rc = run_one(c, tally, r, err);
  if (rc == BRI_ENOTFOUND) {
    rc = bri_error_set(err, BRI_ENOTFOUND, "copy %s://%s/%s to %s://%s/%s: the source is missing",
                       SCHEME(c), src_bucket, src_key, SCHEME(c), bucket, key);
  }
  free(src);
  req_free(r);
  return rc;
}

int bri_s3_mpu_create(bri_s3_client *c, bri_store_counts *tally, const char *bucket, const char *key, char **upload_id,
                      bri_error *err) {
  *upload_id = NULL;
  if (c->az) { /* Azure: no request; the id names this writer's blocks */
    uint64_t x = atomic_fetch_add(&c->seed, 0x9E3779B97F4A7C15ull) ^ (uint64_t)now_ms();
    x ^= x >> 31, x *= 0xBF58476D1CE4E5B9ull, x ^= x >> 29;
    *upload_id = bri_strdupf("%016llx", (unsigned long long)x);
    return *upload_id ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  s3_req *r = req_new(BRI_REQ_MPU_CREATE, "POST", bucket, key);
  req_query(r, "uploads", "");
  char what[600];
  snprintf(what, sizeof what, "create_multipart s3://%s/%s", bucket, key);
  bri_xml_node *root;
  int rc = run_xml(c, tally, r, what, &root, err);
  const char *id = rc ? NULL : bri_xml_text(root, "UploadId");
  if (rc == 0 && (!id || !*id)) rc = bri_error_set(err, BRI_ECORRUPT, "%s: answer without UploadId", what);
  if (rc == 0 && !(*upload_id = strdup(id))) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  bri_xml_free(root);
  req_free(r);
  return rc;
}

/* The ETag S3 gives a completed multipart object: the MD5 of the parts'
 * binary MD5s, "-" and the part count. */
static void multipart_etag(const bri_s3_part *parts, size_t n, char out[80]) {
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  out[0] = '\0';
  if (!ctx) return;
  EVP_DigestInit_ex(ctx, EVP_md5(), NULL);
  for (size_t i = 0; i < n; i++) {
    const char *e = parts[i].etag;
    if (*e == '"') e++;
    unsigned char md[16];
    for (int j = 0; j < 16; j++) {
      unsigned int v = 0;
      if (sscanf(e + 2 * j, "%2x", &v) != 1) v = 0;
      md[j] = (unsigned char)v;
    }
    EVP_DigestUpdate(ctx, md, sizeof md);
  }
  unsigned char md[16];
  EVP_DigestFinal_ex(ctx, md, NULL);
  EVP_MD_CTX_free(ctx);
  int k = snprintf(out, 80, "\"");
  for (int j = 0; j < 16; j++) k += snprintf(out + k, 80 - (size_t)k, "%02x", md[j]);
  snprintf(out + k, 80 - (size_t)k, "-%zu\"", n);
}

/* Azure: Put Block List of the writer's blocks (each part's etag is its
 * block id). Sending the same list again commits the same blob, so a
 * retried attempt that had landed does no harm. */
static int azure_block_list(bri_s3_client *c, bri_store_counts *tally, const char *bucket, const char *key,
                            const bri_s3_part *parts, size_t n, bri_error *err) {
  bri_strbuf body = BRI_STRBUF_INIT;
  bri_strbuf_puts(&body, "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>");
  for (size_t i = 0; i < n; i++) bri_strbuf_printf(&body, "<Latest>%s</Latest>", parts[i].etag);
  bri_strbuf_puts(&body, "</BlockList>");
  s3_req *r = body.oom ? NULL : req_new(BRI_REQ_MPU_COMPLETE, "PUT", bucket, key);
  req_query(r, "comp", "blocklist");
  if (r) req_body(r, body.data, body.len);
  int rc = run_one(c, tally, r, err);
  req_free(r);
  bri_strbuf_clear(&body);
  return rc;
}

int bri_s3_mpu_complete(bri_s3_client *c, bri_store_counts *tally, const char *bucket, const char *key, const char *upload_id,
                        const bri_s3_part *parts, size_t n, bri_error *err) {
  if (c->az) return azure_block_list(c, tally, bucket, key, parts, n, err);
  bri_strbuf body = BRI_STRBUF_INIT;
  bri_strbuf_puts(&body, "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">");
  for (size_t i = 0; i < n; i++) {
    bri_strbuf_printf(&body, "<Part><PartNumber>%d</PartNumber><ETag>", parts[i].number);
    bri_xml_escape(&body, parts[i].etag);
    bri_strbuf_puts(&body, "</ETag></Part>");
  }
  bri_strbuf_puts(&body, "</CompleteMultipartUpload>");
  s3_req *r = body.oom ? NULL : req_new(BRI_REQ_MPU_COMPLETE, "POST", bucket, key);
  req_query(r, "uploadId", upload_id);
  if (r) {
    req_body(r, body.data, body.len);
    r->sink = SINK_GROW;
    r->xml_on_200 = true;
  }
  int rc = run_one(c, tally, r, err);
  if (rc == BRI_ENOTFOUND) {
    /* NoSuchUpload: an earlier attempt (ours, or curl's own resend) may
     * have completed it. */
    char want[80];
    multipart_etag(parts, n, want);
    bri_s3_object o;
    bri_error ignored;
    if (bri_s3_head(c, tally, bucket, key, &o, &ignored) == 0 && !strcmp(o.etag, want)) rc = 0;
    bri_s3_object_clear(&o);
  }
  req_free(r);
  bri_strbuf_clear(&body);
  return rc;
}

int bri_s3_mpu_abort(bri_s3_client *c, bri_store_counts *tally, const char *bucket, const char *key, const char *upload_id,
                     bri_error *err) {
  if (c->az) return 0; /* Azure drops uncommitted blocks by itself (after a week) */
  s3_req *r = req_new(BRI_REQ_MPU_ABORT, "DELETE", bucket, key);
  req_query(r, "uploadId", upload_id);
  int rc = run_one(c, tally, r, err);
  if (rc == BRI_ENOTFOUND) rc = 0; /* NoSuchUpload: already gone */
  req_free(r);
  return rc;
}

/* ---- batches ---- */

bri_s3_batch *bri_s3_batch_new(bri_s3_client *c, bri_store_counts *tally) {
  bri_s3_batch *b = calloc(1, sizeof *b);
  if (b) b->c = c, b->tally = tally;
  return b;
}

void bri_s3_batch_free(bri_s3_batch *b) {
  if (!b) return;
  for (size_t i = 0; i < b->n; i++) req_free(b->reqs[i]);
  free(b->reqs);
  free(b);
}

static int batch_add(bri_s3_batch *b, s3_req *r, bri_error *err) {
  if (!r || r->broken) {
    req_free(r);
    return bri_error_set(err, BRI_ENOMEM, "S3 batch: out of memory");
  }
  if (b->n == b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 16;
    s3_req **grown = realloc(b->reqs, cap * sizeof *grown);
    if (!grown) {
      req_free(r);
      return bri_error_set(err, BRI_ENOMEM, "S3 batch: out of memory");
    }
    b->reqs = grown;
    b->cap = cap;
  }
  b->reqs[b->n++] = r;
  return 0;
}

int bri_s3_batch_get_range(bri_s3_batch *b, const char *bucket, const char *key, uint64_t off,
                           size_t len, void *buf, bri_error *err) {
  if (len == 0) return 0;
  return batch_add(b, range_req(bucket, key, off, len, buf, true), err);
}

int bri_s3_batch_put(bri_s3_batch *b, const char *bucket, const char *key, const void *data,
                     size_t len, bri_error *err) {
  s3_req *r = req_new(BRI_REQ_PUT, "PUT", bucket, key);
  if (b->c->az) req_header(r, "x-ms-blob-type", "BlockBlob");
  if (r) req_body(r, data, len);
  return batch_add(b, r, err);
}

/* An UploadPart(Copy) request; Azure: Put Block (From URL), the block id
 * base64("<upload id>-<number>"), one length for every block of a blob as
 * Azure wants, kept as the part's etag for the block list. */
static s3_req *part_req(const bri_s3_client *c, bri_store_req op, const char *bucket, const char *key,
                        const char *upload_id, int number, bri_s3_part *part) {
  s3_req *r = req_new(op, "PUT", bucket, key);
  char num[16];
  snprintf(num, sizeof num, "%d", number);
  if (r) {
    r->part_out = part;
    part->number = number;
    part->etag[0] = '\0';
  }
  if (c->az) {
    char raw[48];
    int n = snprintf(raw, sizeof raw, "%.24s-%06d", upload_id, number);
    EVP_EncodeBlock((unsigned char *)part->etag, (const unsigned char *)raw, n);
    req_query(r, "comp", "block");
    req_query(r, "blockid", part->etag);
    return r;
  }
  req_query(r, "partNumber", num);
  req_query(r, "uploadId", upload_id);
  return r;
}

int bri_s3_batch_put_part(bri_s3_batch *b, const char *bucket, const char *key,
                          const char *upload_id, int number, const void *data, size_t len,
                          bri_s3_part *part, bri_error *err) {
  s3_req *r = part_req(b->c, BRI_REQ_MPU_PART, bucket, key, upload_id, number, part);
  if (r) req_body(r, data, len);
  return batch_add(b, r, err);
}

int bri_s3_batch_copy_part(bri_s3_batch *b, const char *bucket, const char *key,
                           const char *upload_id, int number, const char *src_bucket,
                           const char *src_key, uint64_t off, uint64_t len, bri_s3_part *part,
                           bri_error *err) {
  if (len == 0) return bri_error_set(err, BRI_EINVAL, "copy part %d: an empty range", number);
  s3_req *r = part_req(b->c, BRI_REQ_MPU_COPY, bucket, key, upload_id, number, part);
  bool az = b->c->az;
  char *src = az ? azure_source(b->c, src_bucket, src_key) : copy_source(src_bucket, src_key), range[64];
  snprintf(range, sizeof range, "bytes=%llu-%llu", (unsigned long long)off,
           (unsigned long long)(off + len - 1));
  req_header(r, az ? "x-ms-copy-source" : "x-amz-copy-source", src);
  req_header(r, az ? "x-ms-source-range" : "x-amz-copy-source-range", range);
  free(src);
  if (r) {
    r->sink = SINK_GROW;
    r->xml_on_200 = !az;
    r->copied = len;
  }
  return batch_add(b, r, err);
}

int bri_s3_batch_get_suffix(bri_s3_batch *b, const char *bucket, const char *key, size_t n,
                            uint8_t **data, size_t *len, uint64_t *size, int *rc, bri_error *err) {
  /* Azure: a HEAD now, the range after it (azure_tails) */
  s3_req *r = b->c->az ? req_new(BRI_REQ_HEAD, "HEAD", bucket, key) : suffix_req(bucket, key, n);
  if (r) r->suffix = n;
  if (r) {
    r->suffix_data = data;
    r->suffix_len = len;
    r->suffix_size = size;
    r->suffix_rc = rc;
  }
  *data = NULL;
  *rc = BRI_EIO;
  return batch_add(b, r, err);
}

int bri_s3_batch_head(bri_s3_batch *b, const char *bucket, const char *key, bri_s3_object *out,
                      int *rc, bri_error *err) {
  s3_req *r = req_new(BRI_REQ_HEAD, "HEAD", bucket, key);
  if (r) {
    r->head_out = out;
    r->head_rc = rc;
  }
  memset(out, 0, sizeof *out);
  *rc = BRI_EIO;
  return batch_add(b, r, err);
}

int bri_s3_batch_list(bri_s3_batch *b, const char *bucket, const bri_s3_list_args *a,
                      bri_s3_listing *out, int *rc, bri_error *why, bri_error *err) {
  s3_req *r = list_req(b->c, bucket, a);
  if (r) {
    r->list_out = out;
    r->list_rc = rc;
    r->list_err = why;
  }
  memset(out, 0, sizeof *out);
  *rc = BRI_EIO;
  return batch_add(b, r, err);
}

/* Azure's batched suffix GETs, whose HEADs have run: the ranges they ask,
 * together in one more round. */
static void azure_tails(bri_s3_batch *b) {
  s3_req **tails = calloc(b->n + 1, sizeof *tails);
  size_t k = 0;
  for (size_t i = 0; tails && i < b->n; i++) {
    s3_req *r = b->reqs[i];
    if (!r->suffix_rc || r->rc) {
      if (r->suffix_rc) *r->suffix_rc = r->rc;
      continue;
    }
    curl_off_t cl = 0;
    curl_easy_getinfo(r->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
    uint64_t total = cl > 0 ? (uint64_t)cl : 0;
    size_t want = total < r->suffix ? (size_t)total : r->suffix;
    uint8_t *buf = malloc(want ? want : 1);
    *r->suffix_data = buf, *r->suffix_len = want, *r->suffix_size = total;
    *r->suffix_rc = buf ? 0 : BRI_ENOMEM;
    if (!buf || !want) continue;
    s3_req *t = range_req(r->bucket, r->key, total - want, want, buf, true);
    if (!t || t->broken) {
      req_free(t);
      *r->suffix_rc = BRI_ENOMEM;
      continue;
    }
    t->suffix_rc = r->suffix_rc; /* where its outcome goes */
    tails[k++] = t;
  }
  if (k) run_batch(b->c, b->tally, tails, k, NULL);
  for (size_t i = 0; i < k; i++) {
    if (tails[i]->rc) *tails[i]->suffix_rc = tails[i]->rc;
    req_free(tails[i]);
  }
  free(tails);
}

int bri_s3_batch_run(bri_s3_batch *b, bri_error *err) {
  int rc = run_batch(b->c, b->tally, b->reqs, b->n, err);
  if (b->c->az) azure_tails(b);
  for (size_t i = 0; i < b->n; i++) {
    s3_req *r = b->reqs[i];
    bri_error e;
    if (r->suffix_rc && !b->c->az) *r->suffix_rc = suffix_result(r, r->rc, r->suffix_data, r->suffix_len, r->suffix_size, &e);
    if (r->head_rc) *r->head_rc = head_result(r, r->rc, r->head_out, &e);
    if (r->list_rc) {
      e = r->err;
      *r->list_rc = list_result(b->c, r, r->rc, r->list_out, &e);
      if (*r->list_rc && r->list_err) *r->list_err = e;
    }
  }
  for (size_t i = 0; rc == 0 && !b->c->az && i < b->n; i++) { /* Azure's block ids are set already */
    s3_req *r = b->reqs[i];
    if (!r->part_out) continue;
    const char *etag = r->etag;
    bri_xml_node *root = NULL;
    if (r->op == BRI_REQ_MPU_COPY) { /* the part's ETag is in the CopyPartResult body */
      bri_error ignored;
      if (bri_xml_parse(r->grow.data ? r->grow.data : "", r->grow.len, "copy part", &root, &ignored) == 0) {
        etag = bri_xml_text(root, "ETag");
      }
    }
    if (!etag || !*etag) {
      rc = bri_error_set(err, BRI_ECORRUPT, "%s s3://%s/%s part %d: answer without an ETag",
                         bri_store_req_name(r->op), r->bucket, r->key, r->part_out->number);
    } else {
      snprintf(r->part_out->etag, sizeof r->part_out->etag, "%s", etag);
    }
    bri_xml_free(root);
  }
  return rc;
}
