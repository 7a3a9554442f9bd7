/* object_http.h: the HTTP engine object-store clients run on, and what a
 * dialect of one is (for the dialects, s3_client.c and azure_client.c, and
 * the client's front, object_client.c; the object store uses
 * object_client.h).
 *
 * The engine owns what every store's requests share: the client's
 * connections (a curl share handle, so calls and threads reuse them, and
 * the easy and multi handles each thread keeps between requests), running
 * requests together (at most max_in_flight of one call, max_active of the
 * whole client, max_rate started per second), each attempt signed afresh
 * by the dialect (a date is part of every signature), judging each
 * finished attempt (done, retry after a jittered backoff, or failed for
 * good) with the dialect's error mapping, and counting every attempt into
 * the caller's tally.
 *
 * A dialect is a struct of function pointers and constants (below): how it
 * signs an attempt, what its errors mean, how its listings, copies and
 * parts are shaped, and the operations it does its own way. Its client
 * embeds a bri_obj_client as its first member (struct s3_client {
 * bri_obj_client base; ... }) and is made by its constructor with
 * bri_http_client_init; bri_obj_client_free frees it through the
 * dialect's dispose. */
#ifndef BRI_OBJECT_HTTP_H
#define BRI_OBJECT_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/http_encode.h"
#include "storage/object_client.h"
#include "storage/xml.h"
#include "util/strbuf.h"

#define BRI_HTTP_MAX_QUERY 8
#define BRI_HTTP_MAX_HEADERS 8

typedef struct bri_http_req bri_http_req;
typedef struct bri_http_attempt bri_http_attempt;

/* A dialect's listing page. The request: a GET of the bucket with the
 * fixed parameters params (ended by a NULL name), then the parameters of
 * the arguments (bri_obj_list_args) by these names: the prefix (always
 * sent), the delimiter, start-after (NULL: the store has none, and a
 * listing asking for it is refused), the continuation token, the page size.
 * The answer: the document element; the entries' parent (NULL: the root);
 * an object entry and its key, a prefix entry and its key; the child of an
 * object holding its size, ETag and time (NULL: the object itself) and how
 * that time is written (strptime's format, UTC); the element saying the
 * keys are URL-encoded (NULL: never); "true" when more pages follow (NULL:
 * a non-empty next token says so); the next page's token. */
typedef struct bri_obj_listing_shape {
  const bri_http_pair *params;
  const char *prefix_param, *delimiter_param, *start_after_param, *token_param, *max_keys_param;
  const char *root, *within;
  const char *object, *object_key, *prefix, *prefix_key;
  const char *props;
  const char *size, *etag, *mtime;
  const char *time_format;
  const char *encoding;
  const char *truncated;
  const char *next;
} bri_obj_listing_shape;

/* A dialect's delete of keys[0..n) (see bri_obj_delete). */
typedef int (*bri_http_delete_fn)(bri_obj_client *c, bri_store_counts *tally, const char *bucket,
                                  const char *const *keys, size_t n, int *rcs, size_t *deleted, bri_error *err);

typedef struct bri_obj_dialect {
  const char *scheme; /* of its locations, for messages: "s3" */
  bri_obj_size_limits size_limits;

  /* ---- each attempt ---- */
  /* Writes r's URL (bri_http_attempt_url) and every header it sends,
   * Authorization included (bri_http_attempt_headers), signed now. */
  int (*sign)(const bri_obj_client *c, const bri_http_req *r, bri_http_attempt *a, bri_error *err);

  /* ---- the error mapping ---- */
  const char *code_header; /* the header that carries the error code (NULL: the <Error> body alone) */
  const char *const *transient_codes; /* error codes worth retrying, NULL-terminated */
  long taken_status; /* besides 412: the status a lost put-if-absent answers (0: none) */

  /* ---- shaping the requests object_client.c frames ---- */
  const bri_http_pair *put_header; /* a header every whole-object PUT carries (NULL: none) */
  const bri_obj_listing_shape *listing;
  /* the headers that make PUT r a server-side copy of src_bucket/src_key:
   * the whole object (range NULL), or range[1] bytes at offset range[0] as
   * a part */
  void (*copy_source)(const bri_obj_client *c, bri_http_req *r, const char *src_bucket, const char *src_key,
                      const uint64_t *range);
  /* the query that makes PUT r part number of upload_id; fills what names
   * the part when known before the answer */
  void (*part_query)(const bri_obj_client *c, bri_http_req *r, const char *upload_id, int number, bri_obj_part *part);
  /* a batched read of the last n bytes; its hook puts the outcome in the
   * request's suffix_* places */
  bri_http_req *(*suffix_req)(const bri_obj_client *c, const char *bucket, const char *key, size_t n);

  /* ---- operations of its own ---- */
  int (*get_suffix)(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *key, size_t n,
                    uint8_t **data, size_t *len, uint64_t *size, bri_error *err);
  bri_http_delete_fn delete_keys;
  int (*mpu_create)(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *key,
                    char **upload_id, bri_error *err);
  int (*mpu_complete)(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *key,
                      const char *upload_id, const bri_obj_part *parts, size_t n, bri_error *err);
  int (*mpu_abort)(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *key,
                   const char *upload_id, bri_error *err);

  /* frees what the dialect's client holds besides the base (not c itself) */
  void (*dispose)(bri_obj_client *c);
} bri_obj_dialect;

struct bri_obj_client {
  const bri_obj_dialect *dialect;
  bri_obj_options opt;        /* the defaults filled in */
  struct bri_http_pool *pool; /* the engine's: connections, limits, randomness */
};

/* Fills c's base: its dialect, opt with zero fields defaulted (tries:
 * max_attempts when opt has none, else 8), a pool of its own. */
int bri_http_client_init(bri_obj_client *c, const bri_obj_dialect *dialect, const bri_obj_options *opt,
                         int max_attempts, bri_error *err);
/* Releases the base's pool (bri_obj_client_free's last step). */
void bri_http_client_dispose(bri_obj_client *c);
/* A fresh pseudo-random number of the client's (ids, boundaries). */
uint64_t bri_http_client_random(bri_obj_client *c);

/* ---- one request ---- */

typedef enum { BRI_HTTP_SINK_NONE, BRI_HTTP_SINK_FIXED, BRI_HTTP_SINK_GROW } bri_http_sink;

/* After the round of a batch it ran in: puts r's outcome where its caller
 * wants it, may set r->next (a request for the batch's next round, whose
 * own hook reports it), and may fail the batch (nonzero, err set). */
typedef int (*bri_http_done)(bri_obj_client *c, bri_http_req *r, bri_error *err);

struct bri_http_req {
  bri_store_req op;
  const char *method;
  char *bucket;
  char *key; /* NULL: a bucket-level request */
  char *qname[BRI_HTTP_MAX_QUERY], *qval[BRI_HTTP_MAX_QUERY];
  size_t n_query;
  char *hname[BRI_HTTP_MAX_HEADERS], *hval[BRI_HTTP_MAX_HEADERS];
  size_t n_headers;
  const uint8_t *body; /* request body (not owned) */
  size_t body_len;
  /* where a successful answer's body goes */
  bri_http_sink sink;
  uint8_t *fixed; /* SINK_FIXED: the caller's buffer of cap bytes */
  size_t cap, got;
  bri_strbuf grow; /* SINK_GROW */
  /* the answer */
  long status;
  char etag[80];
  bool have_range;
  uint64_t range_first, range_last, range_total;
  int64_t mtime;
  char code[64]; /* the store's error code, from its <Error> or the dialect's code header */
  int rc;
  bri_error err;
  /* what a successful answer must look like */
  bool expect_range; /* a 206 covering [want_off, want_off + cap) or up to the end */
  uint64_t want_off;
  bool exact_len;    /* the range must be exactly cap bytes */
  bool error_in_200; /* a 200 may carry an <Error> */
  bool if_absent;    /* a PUT with If-None-Match: *: "taken" is BRI_ETAKEN */
  bool broken;       /* building it failed (no memory, too many parameters): running it fails */
  uint64_t copied;   /* bytes the server copies when this succeeds (counted) */
  /* a request of a batch: its hook, and the places of its outcome */
  bri_http_done done;
  bri_http_req *next;
  size_t suffix; /* a read of the last suffix bytes */
  uint8_t **suffix_data;
  size_t *suffix_len;
  uint64_t *suffix_size;
  int *suffix_rc;
  bri_obj_info *head_out;
  int *head_rc;
  bri_obj_listing *list_out;
  int *list_rc;
  bri_error *list_err;
  bri_obj_part *part_out;
  struct bri_http_state *engine; /* the engine's: attempts, handle (until freed) */
};

/* A request (NULL out of memory). */
bri_http_req *bri_http_req_new(bri_store_req op, const char *method, const char *bucket, const char *key);
void bri_http_req_free(bri_http_req *r);
/* Adds a query parameter or a header (copies). A failure (no memory, a
 * NULL header value, too many) marks r broken: running it then fails with
 * BRI_ENOMEM, so builders need no check per addition. r may be NULL. */
void bri_http_req_query(bri_http_req *r, const char *name, const char *value);
void bri_http_req_header(bri_http_req *r, const char *name, const char *value);
void bri_http_req_body(bri_http_req *r, const void *data, size_t len);
/* A GET of [off, off + len) into buf, exactly len bytes when exact (else
 * what the object has of them). */
bri_http_req *bri_http_range_req(const char *bucket, const char *key, uint64_t off, size_t len, void *buf,
                                 bool exact);
/* The Content-Length of r's answer (a HEAD's: the object's size). */
uint64_t bri_http_req_content_length(const bri_http_req *r);

/* ---- signing one attempt ---- */

/* The URL of the attempt, written by the dialect. */
bri_strbuf *bri_http_attempt_url(bri_http_attempt *a);
/* Sends h[0..n) in that order, then "Authorization: auth" (NULL: none). */
void bri_http_attempt_headers(bri_http_attempt *a, const bri_http_pair *h, size_t n, const char *auth);

/* ---- running ---- */

/* Runs reqs together (max_in_flight at a time, each with its retries);
 * fails with the first that failed for good, its error in err (may be
 * NULL). */
int bri_http_run_all(bri_obj_client *c, bri_store_counts *tally, bri_http_req **reqs, size_t n, bri_error *err);
/* One request (NULL or broken: BRI_ENOMEM). */
int bri_http_run(bri_obj_client *c, bri_store_counts *tally, bri_http_req *r, bri_error *err);
/* One request whose answer is an XML document, parsed into *root; what
 * names it in errors. */
int bri_http_run_xml(bri_obj_client *c, bri_store_counts *tally, bri_http_req *r, const char *what,
                     bri_xml_node **root, bri_error *err);

/* keys[0..n) deleted by calls of delete, at most group keys each: every
 * call is made, the first failure returned. */
int bri_http_delete_in_groups(bri_obj_client *c, bri_store_counts *tally, const char *bucket,
                              const char *const *keys, size_t n, int *rcs, size_t *deleted, size_t group,
                              bri_http_delete_fn delete, bri_error *err);

/* Whether the header line (len bytes, no CRLF) is name's; *value its value. */
bool bri_http_header_is(const char *line, size_t len, const char *name, const char **value);

#endif
