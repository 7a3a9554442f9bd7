/* object_http.c: requests to object stores over libcurl (see object_http.h).
 *
 * Every call runs its requests through one engine, bri_http_run_all: a curl
 * multi handle per call, at most max_in_flight easy handles active, each
 * request signed afresh by its dialect for each attempt, finished attempts
 * judged by judge(): done, retry after a jittered backoff, or failed for
 * good. Connections live in the client's curl share handle, so calls and
 * threads reuse them.
 *
 * Responses land in a sink: a caller's fixed buffer (ranged GETs: an answer
 * longer than asked stops the transfer) or a growing buffer (XML answers,
 * whole objects); error answers go to their own small buffer so that an
 * <Error> never lands in a caller's data. */
#include "storage/object_http.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ERRBODY_MAX (1u << 20)
/* idle connections kept to the endpoint without a max_active (a daemon's
 * read-ahead threads times their batches in flight, with room) */
#define KEPT_CONNECTIONS 256

/* What the client's requests share: connections, and the places of its
 * limits. */
typedef struct bri_http_pool bri_http_pool;
struct bri_http_pool {
  CURLSH *share;
  pthread_mutex_t locks[CURL_LOCK_DATA_LAST];
  _Atomic uint64_t seed;
  _Atomic int active; /* requests in flight on every thread (max_active) */
  pthread_mutex_t rate_lock;
  int64_t next_slot_ms; /* when the next request may start (max_rate) */
};

typedef enum { REQ_WAITING, REQ_ACTIVE, REQ_DONE } req_state;

/* A request's state in the engine. */
typedef struct bri_http_state http_state;
struct bri_http_state {
  bri_store_counts *tally; /* where its attempts are counted (may be NULL) */
  const char *code_header; /* its dialect's (on_header reads it) */
  size_t body_sent;
  bool overflow; /* the answer was longer than the fixed sink */
  bri_strbuf errbody;
  req_state state;
  int attempts;
  int64_t due_ms;
  bool has_slot;    /* holds a rate slot (max_rate) for its next attempt */
  bool active_slot; /* counted in the client's active requests (max_active) */
  CURL *easy;
  struct curl_slist *hdrs;
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

/* ------------------------------------------------------------ one request */

void bri_http_req_free(bri_http_req *r) {
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
  if (r->engine) {
    bri_strbuf_clear(&r->engine->errbody);
    if (r->engine->easy) easy_give(r->engine->easy);
    curl_slist_free_all(r->engine->hdrs);
    free(r->engine);
  }
  free(r);
}

bri_http_req *bri_http_req_new(bri_store_req op, const char *method, const char *bucket, const char *key) {
  bri_http_req *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->op = op;
  r->method = method;
  r->bucket = strdup(bucket);
  r->key = key ? strdup(key) : NULL;
  r->engine = calloc(1, sizeof *r->engine);
  if (!r->bucket || (key && !r->key) || !r->engine) {
    bri_http_req_free(r);
    return NULL;
  }
  return r;
}

void bri_http_req_query(bri_http_req *r, const char *name, const char *value) {
  if (!r) return;
  if (r->n_query == BRI_HTTP_MAX_QUERY) {
    r->broken = true;
    return;
  }
  r->qname[r->n_query] = strdup(name);
  r->qval[r->n_query] = strdup(value ? value : "");
  if (!r->qname[r->n_query] || !r->qval[r->n_query++]) r->broken = true;
}

void bri_http_req_header(bri_http_req *r, const char *name, const char *value) {
  if (!r) return;
  if (!value || r->n_headers == BRI_HTTP_MAX_HEADERS) {
    r->broken = true;
    return;
  }
  r->hname[r->n_headers] = strdup(name);
  r->hval[r->n_headers] = strdup(value);
  if (!r->hname[r->n_headers] || !r->hval[r->n_headers++]) r->broken = true;
}

void bri_http_req_body(bri_http_req *r, const void *data, size_t len) {
  if (!r) return;
  r->body = data;
  r->body_len = len;
}

bri_http_req *bri_http_range_req(const char *bucket, const char *key, uint64_t off, size_t len, void *buf,
                                 bool exact) {
  bri_http_req *r = bri_http_req_new(BRI_REQ_GET, "GET", bucket, key);
  char range[64];
  snprintf(range, sizeof range, "bytes=%llu-%llu", (unsigned long long)off, (unsigned long long)(off + len - 1));
  bri_http_req_header(r, "Range", range);
  if (!r) return NULL;
  r->sink = BRI_HTTP_SINK_FIXED;
  r->fixed = buf;
  r->cap = len;
  r->expect_range = true;
  r->want_off = off;
  r->exact_len = exact;
  return r;
}

uint64_t bri_http_req_content_length(const bri_http_req *r) {
  curl_off_t cl = 0;
  if (r->engine->easy) curl_easy_getinfo(r->engine->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
  return cl > 0 ? (uint64_t)cl : 0;
}

/* "GET s3://bucket/key" of r, for messages. */
static void req_what(const bri_obj_client *c, const bri_http_req *r, char *out, size_t n) {
  snprintf(out, n, "%s %s://%s/%s", bri_store_req_name(r->op), c->dialect->scheme, r->bucket, r->key ? r->key : "");
}

/* ---- curl callbacks ---- */

static size_t on_write(char *p, size_t size, size_t nmemb, void *ud) {
  bri_http_req *r = ud;
  size_t n = size * nmemb;
  long status = 0;
  curl_easy_getinfo(r->engine->easy, CURLINFO_RESPONSE_CODE, &status);
  if (status >= 300 || status < 200) {
    if (r->engine->errbody.len + n <= ERRBODY_MAX) bri_strbuf_add(&r->engine->errbody, p, n);
    return n;
  }
  if (r->sink == BRI_HTTP_SINK_FIXED) {
    if (n > r->cap - r->got) {
      r->engine->overflow = true;
      return 0; /* stops the transfer: CURLE_WRITE_ERROR */
    }
    memcpy(r->fixed + r->got, p, n);
    r->got += n;
  } else if (r->sink == BRI_HTTP_SINK_GROW) {
    bri_strbuf_add(&r->grow, p, n);
    if (r->grow.oom) return 0;
  }
  return n;
}

static size_t on_read(char *p, size_t size, size_t nmemb, void *ud) {
  bri_http_req *r = ud;
  size_t n = size * nmemb, left = r->body_len - r->engine->body_sent;
  if (n > left) n = left;
  if (n) memcpy(p, r->body + r->engine->body_sent, n);
  r->engine->body_sent += n;
  return n;
}

/* curl rewinds the body itself when it resends on a reused connection that
 * turned out dead. */
static int on_seek(void *ud, curl_off_t off, int origin) {
  bri_http_req *r = ud;
  if (origin != SEEK_SET || off < 0 || (uint64_t)off > r->body_len) return CURL_SEEKFUNC_FAIL;
  r->engine->body_sent = (size_t)off;
  return CURL_SEEKFUNC_OK;
}

bool bri_http_header_is(const char *line, size_t len, const char *name, const char **value) {
  size_t n = strlen(name);
  if (len <= n || strncasecmp(line, name, n) || line[n] != ':') return false;
  const char *v = line + n + 1;
  while (*v == ' ' || *v == '\t') v++;
  *value = v;
  return true;
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *ud) {
  bri_http_req *r = ud;
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
  } else if (r->engine->code_header && bri_http_header_is(line, len, r->engine->code_header, &v)) {
    snprintf(r->code, sizeof r->code, "%s", v); /* HEAD answers have no body to carry it */
  } else if (bri_http_header_is(line, len, "ETag", &v)) {
    snprintf(r->etag, sizeof r->etag, "%s", v);
  } else if (bri_http_header_is(line, len, "Content-Range", &v)) {
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

/* ---- starting one attempt ---- */

struct bri_http_attempt {
  bri_strbuf url;
  struct curl_slist *hdrs;
  bool oom;
};

bri_strbuf *bri_http_attempt_url(bri_http_attempt *a) { return &a->url; }

static void attempt_line(bri_http_attempt *a, const char *line) {
  struct curl_slist *l = line ? curl_slist_append(a->hdrs, line) : NULL;
  if (l) a->hdrs = l;
  else a->oom = true;
}

static void attempt_header(bri_http_attempt *a, const char *name, const char *value) {
  bri_strbuf line = BRI_STRBUF_INIT;
  bri_strbuf_printf(&line, "%s: %s", name, value);
  attempt_line(a, line.oom ? NULL : line.data);
  bri_strbuf_clear(&line);
}

void bri_http_attempt_headers(bri_http_attempt *a, const bri_http_pair *h, size_t n, const char *auth) {
  for (size_t i = 0; i < n; i++) attempt_header(a, h[i].name, h[i].value);
  if (auth) attempt_header(a, "Authorization", auth);
}

static int req_start(bri_obj_client *c, bri_http_req *r, CURLM *m) {
  http_state *st = r->engine;
  bri_http_attempt a = {BRI_STRBUF_INIT, NULL, false};
  int rc = c->dialect->sign(c, r, &a, &r->err);
  if (rc) goto out;
  rc = BRI_ENOMEM;
  /* No "Expect: 100-continue" round trip; no form content type on POST. */
  attempt_line(&a, "Expect:");
  attempt_line(&a, "Content-Type:");
  if (a.oom || a.url.oom) goto out;
  curl_slist_free_all(st->hdrs);
  st->hdrs = a.hdrs;
  a.hdrs = NULL;

  if (!st->easy && !(st->easy = easy_take())) goto out;
  CURL *e = st->easy;
  curl_easy_reset(e);
  curl_easy_setopt(e, CURLOPT_URL, a.url.data);
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, st->hdrs);
  curl_easy_setopt(e, CURLOPT_PRIVATE, r);
  curl_easy_setopt(e, CURLOPT_SHARE, c->pool->share);
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
  st->code_header = c->dialect->code_header;
  st->body_sent = 0;
  r->got = 0;
  st->overflow = false;
  bri_strbuf_clear(&r->grow);
  bri_strbuf_clear(&st->errbody);
  r->status = 0;
  r->etag[0] = '\0';
  r->have_range = false;
  r->code[0] = '\0';
  st->attempts++;
  if (curl_multi_add_handle(m, e) != CURLM_OK) goto out;
  st->state = REQ_ACTIVE;
  rc = 0;
out:
  if (rc == BRI_ENOMEM) bri_error_set(&r->err, rc, "out of memory");
  bri_strbuf_clear(&a.url);
  curl_slist_free_all(a.hdrs);
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

static bool transient_code(const bri_obj_client *c, const char *code) {
  for (const char *const *t = c->dialect->transient_codes; *t; t++) {
    if (!strcmp(code, *t)) return true;
  }
  return false;
}

/* Reads Code and Message of an <Error> document into r->code and msg. */
static bool parse_error(const char *body, size_t len, bri_http_req *r, char *msg, size_t msg_n) {
  bri_xml_node *root = NULL;
  bri_error ignored;
  if (!len || bri_xml_parse(body, len, "error", &root, &ignored) != 0) return false;
  bool is_error = !strcmp(root->name, "Error");
  if (is_error) {
    const char *code = bri_xml_text(root, "Code"), *m = bri_xml_text(root, "Message");
    snprintf(r->code, sizeof r->code, "%s", code ? code : "");
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
static verdict check_range(bri_http_req *r, char *why, size_t n) {
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
    snprintf(why, n, "asked bytes %llu-%llu, got %llu-%llu of %llu", (unsigned long long)r->want_off,
             (unsigned long long)(r->want_off + r->cap - 1), (unsigned long long)r->range_first,
             (unsigned long long)r->range_last, (unsigned long long)r->range_total);
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

/* A conditional write that lost: 412, or the dialect's own status. */
static int fail_code(const bri_obj_client *c, const bri_http_req *r) {
  if (r->status == 404) return BRI_ENOTFOUND;
  bool taken = r->status == 412 || (c->dialect->taken_status && r->status == c->dialect->taken_status);
  if (taken && r->if_absent) return BRI_ETAKEN;
  return BRI_EIO;
}

static verdict judge(bri_obj_client *c, bri_http_req *r, CURLcode cc) {
  http_state *st = r->engine;
  char what[600], why[512] = "", msg[400] = "";
  req_what(c, r, what, sizeof what);
  curl_easy_getinfo(st->easy, CURLINFO_RESPONSE_CODE, &r->status);
  long ft = -1;
  curl_easy_getinfo(st->easy, CURLINFO_FILETIME, &ft);
  r->mtime = ft;
  int sc = cc == CURLE_OK ? status_class(r->status) : BRI_REQ_NO_ANSWER;
  bri_store_counts_request(st->tally, r->op, sc);
  verdict v;
  if (cc != CURLE_OK) {
    if (st->overflow) snprintf(why, sizeof why, "answer longer than the %zu bytes asked", r->cap);
    else snprintf(why, sizeof why, "%s", curl_easy_strerror(cc));
    v = !st->overflow && transient_curl(cc) ? VERDICT_RETRY : VERDICT_FAIL;
    if (v == VERDICT_FAIL) bri_error_set(&r->err, BRI_EIO, "%s: %s", what, why);
  } else if (r->status >= 200 && r->status < 300) {
    v = VERDICT_DONE;
    if (r->expect_range) v = check_range(r, why, sizeof why);
    if (v == VERDICT_DONE && r->error_in_200 && parse_error(r->grow.data, r->grow.len, r, msg, sizeof msg)) {
      snprintf(why, sizeof why, "HTTP %ld %s: %s", r->status, r->code, msg);
      v = transient_code(c, r->code) ? VERDICT_RETRY : VERDICT_FAIL;
    }
    if (v == VERDICT_FAIL) bri_error_set(&r->err, BRI_EIO, "%s: %s", what, why);
  } else {
    parse_error(st->errbody.data, st->errbody.len, r, msg, sizeof msg);
    snprintf(why, sizeof why, "HTTP %ld%s%s%s%s", r->status, r->code[0] ? " " : "", r->code, msg[0] ? ": " : "",
             msg);
    bool transient = r->status >= 500 || r->status == 429 || r->status == 408 ||
                     (r->code[0] && transient_code(c, r->code));
    v = transient ? VERDICT_RETRY : VERDICT_FAIL;
    if (v == VERDICT_FAIL) bri_error_set(&r->err, fail_code(c, r), "%s: %s", what, why);
  }
  if (v == VERDICT_RETRY && st->attempts >= c->opt.max_attempts) {
    bri_error_set(&r->err, r->status >= 300 ? fail_code(c, r) : BRI_EIO, "%s: %s (after %d attempts)", what, why,
                  st->attempts);
    v = VERDICT_FAIL;
  }
  if (v == VERDICT_DONE) {
    r->rc = 0;
    bri_store_counts_add(st->tally, BRI_COUNT_COPIED_SERVER, r->copied);
  } else if (v == VERDICT_FAIL) {
    r->rc = r->err.code ? r->err.code : BRI_EIO;
  } else {
    bri_store_counts_add(st->tally, BRI_COUNT_RETRIES, 1);
  }
  curl_off_t up = 0, down = 0;
  curl_easy_getinfo(st->easy, CURLINFO_SIZE_UPLOAD_T, &up);
  curl_easy_getinfo(st->easy, CURLINFO_SIZE_DOWNLOAD_T, &down);
  bri_store_counts_add(st->tally, BRI_COUNT_WRITTEN, (uint64_t)up);
  bri_store_counts_add(st->tally, BRI_COUNT_READ, (uint64_t)down);
  return v;
}

uint64_t bri_http_client_random(bri_obj_client *c) {
  uint64_t x = atomic_fetch_add(&c->pool->seed, 0x9E3779B97F4A7C15ull);
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return x;
}

/* Wait before retry n (1-based): half of min(cap, base * 2^(n-1)) plus a
 * random part of the other half, so that clients that failed together do
 * not retry together. */
static int64_t backoff_ms(bri_obj_client *c, int attempt) {
  int64_t w = c->opt.backoff_base_ms;
  for (int i = 1; i < attempt && w < c->opt.backoff_max_ms; i++) w *= 2;
  if (w > c->opt.backoff_max_ms) w = c->opt.backoff_max_ms;
  return w / 2 + (int64_t)(bri_http_client_random(c) % (uint64_t)(w / 2 + 1));
}

/* ---- the engine ---- */

/* With max_rate set: the time from which a new request may start. Slots
 * are handed out one per 1/max_rate seconds to every caller of the client,
 * so a cleanup or a poll over thousands of keys keeps to its root's
 * request budget. */
static int64_t rate_slot(bri_obj_client *c, int64_t now) {
  if (c->opt.max_rate <= 0) return now;
  bri_http_pool *p = c->pool;
  pthread_mutex_lock(&p->rate_lock);
  int64_t slot = p->next_slot_ms > now ? p->next_slot_ms : now;
  p->next_slot_ms = slot + (int64_t)(1000.0 / c->opt.max_rate);
  pthread_mutex_unlock(&p->rate_lock);
  return slot;
}

/* With max_active set: takes one of the client's places for a request in
 * flight (false when all are taken: by this thread's requests or other
 * threads', which end on their own, so waiting for one cannot deadlock). */
static bool take_active(bri_obj_client *c, bri_http_req *r) {
  if (c->opt.max_active <= 0) return true;
  if (atomic_fetch_add(&c->pool->active, 1) >= c->opt.max_active) {
    atomic_fetch_sub(&c->pool->active, 1);
    return false;
  }
  r->engine->active_slot = true;
  return true;
}

static void give_active(bri_obj_client *c, bri_http_req *r) {
  if (r->engine->active_slot) atomic_fetch_sub(&c->pool->active, 1);
  r->engine->active_slot = false;
}

int bri_http_run_all(bri_obj_client *c, bri_store_counts *tally, bri_http_req **reqs, size_t n, bri_error *err) {
  CURLM *m = multi_take();
  if (!m) return bri_error_set(err, BRI_ENOMEM, "cannot make a curl multi handle");
  /* the connections are the client's (its share's cache), but curl keeps
   * only as many idle ones as this multi handle allows (by default 4 per
   * request of the batch): a read-ahead thread's batch of one request would
   * close the others' connections, and 16 threads then open a connection
   * per request (400 fragments: 698 connects, 33 with this) */
  curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, (long)(c->opt.max_active > 0 ? c->opt.max_active : KEPT_CONNECTIONS));
  size_t done = 0;
  int active = 0;
  for (size_t i = 0; i < n; i++) {
    http_state *st = reqs[i]->engine;
    st->state = REQ_WAITING;
    st->due_ms = 0;
    st->attempts = 0;
    st->has_slot = false;
    st->tally = tally;
  }
  while (done < n) {
    int64_t now = now_ms();
    bool full = false; /* the client's max_active places are all taken */
    for (size_t i = 0; i < n && active < c->opt.max_in_flight; i++) {
      bri_http_req *r = reqs[i];
      http_state *st = r->engine;
      if (st->state != REQ_WAITING || st->due_ms > now) continue;
      if (!st->has_slot) { /* one slot per attempt, kept while it waits for it */
        st->has_slot = true;
        int64_t slot = rate_slot(c, now);
        if (slot > now) {
          st->due_ms = slot;
          continue;
        }
      }
      if (!take_active(c, r)) {
        full = true;
        break;
      }
      st->has_slot = false;
      if (req_start(c, r, m) != 0) {
        give_active(c, r);
        r->rc = r->err.code ? r->err.code : BRI_ENOMEM;
        st->state = REQ_DONE;
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
      bri_http_req *r = NULL;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&r);
      CURLcode cc = msg->data.result;
      curl_multi_remove_handle(m, msg->easy_handle);
      active--;
      give_active(c, r);
      verdict v = judge(c, r, cc);
      if (v == VERDICT_RETRY) {
        r->engine->state = REQ_WAITING;
        r->engine->due_ms = now_ms() + backoff_ms(c, r->engine->attempts);
      } else {
        r->engine->state = REQ_DONE;
        done++;
      }
    }
    if (done == n) break;
    int64_t next_due = -1; /* the first retry due */
    for (size_t i = 0; i < n; i++) {
      http_state *st = reqs[i]->engine;
      if (st->state == REQ_WAITING && (next_due < 0 || st->due_ms < next_due)) next_due = st->due_ms;
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

int bri_http_run(bri_obj_client *c, bri_store_counts *tally, bri_http_req *r, bri_error *err) {
  if (!r || r->broken) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  return bri_http_run_all(c, tally, &r, 1, err);
}

int bri_http_run_xml(bri_obj_client *c, bri_store_counts *tally, bri_http_req *r, const char *what,
                     bri_xml_node **root, bri_error *err) {
  *root = NULL;
  if (r) r->sink = BRI_HTTP_SINK_GROW;
  int rc = bri_http_run(c, tally, r, err);
  if (rc == 0) rc = bri_xml_parse(r->grow.data ? r->grow.data : "", r->grow.len, what, root, err);
  return rc;
}

int bri_http_delete_in_groups(bri_obj_client *c, bri_store_counts *tally, const char *bucket,
                              const char *const *keys, size_t n, int *rcs, size_t *deleted, size_t group,
                              bri_http_delete_fn delete, bri_error *err) {
  int first = 0;
  for (size_t i = 0; i < n; i += group) {
    size_t m = n - i < group ? n - i : group;
    bri_error e;
    int rc = delete(c, tally, bucket, keys + i, m, rcs ? rcs + i : NULL, deleted, &e);
    if (rc && !first) {
      first = rc;
      if (err) *err = e;
    }
  }
  return first;
}

/* ------------------------------------------------------------ the client */

static void share_lock(CURL *h, curl_lock_data d, curl_lock_access a, void *ud) {
  (void)h;
  (void)a;
  pthread_mutex_lock(&((bri_http_pool *)ud)->locks[d]);
}

static void share_unlock(CURL *h, curl_lock_data d, void *ud) {
  (void)h;
  pthread_mutex_unlock(&((bri_http_pool *)ud)->locks[d]);
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

int bri_http_client_init(bri_obj_client *c, const bri_obj_dialect *dialect, const bri_obj_options *opt,
                         int max_attempts, bri_error *err) {
  pthread_once(&curl_once, curl_init_once);
  c->dialect = dialect;
  if (opt) c->opt = *opt;
  if (c->opt.connect_timeout_ms <= 0) c->opt.connect_timeout_ms = 5000;
  if (c->opt.idle_timeout_ms <= 0) c->opt.idle_timeout_ms = 30000;
  if (c->opt.max_attempts <= 0) c->opt.max_attempts = max_attempts > 0 ? max_attempts : 8;
  if (c->opt.backoff_base_ms <= 0) c->opt.backoff_base_ms = 100;
  if (c->opt.backoff_max_ms <= 0) c->opt.backoff_max_ms = 5000;
  if (c->opt.max_in_flight <= 0) c->opt.max_in_flight = 16;
  bri_http_pool *p = c->pool = calloc(1, sizeof *p);
  if (!p) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  p->seed = (uint64_t)now_ms() ^ (uint64_t)(uintptr_t)c;
  for (int i = 0; i < CURL_LOCK_DATA_LAST; i++) pthread_mutex_init(&p->locks[i], NULL);
  pthread_mutex_init(&p->rate_lock, NULL);
  if (!(p->share = curl_share_init())) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  curl_share_setopt(p->share, CURLSHOPT_LOCKFUNC, share_lock);
  curl_share_setopt(p->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
  curl_share_setopt(p->share, CURLSHOPT_USERDATA, p);
  curl_share_setopt(p->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
  curl_share_setopt(p->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
  return 0;
}

void bri_http_client_dispose(bri_obj_client *c) {
  bri_http_pool *p = c->pool;
  if (!p) return;
  if (p->share) curl_share_cleanup(p->share);
  for (int i = 0; i < CURL_LOCK_DATA_LAST; i++) pthread_mutex_destroy(&p->locks[i]);
  pthread_mutex_destroy(&p->rate_lock);
  free(p);
  c->pool = NULL;
}
