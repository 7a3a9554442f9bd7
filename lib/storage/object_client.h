/* object_client.h: a client of an object store over HTTP, whatever store it
 * speaks to: the operations the object store (object_store.c) and the tests
 * ask for, by bucket and key, and the words they share (objects, listing
 * pages, multipart parts).
 *
 * A client speaks one dialect (object_http.h, bri_obj_dialect: a struct of
 * function pointers, as libgit2's odb backends are): S3's (s3_client.h,
 * bri_s3_client_new) or Azure Blob Storage's (azure_client.h,
 * bri_azure_client_new). Calls that are plain HTTP (a range, a HEAD, a
 * whole-object GET or PUT, with If-None-Match: * for put-if-absent) are
 * made here the same way for every dialect; listings, copies and multipart
 * parts are framed here and shaped by the dialect; suffix reads, deletes
 * and the multipart upload's start and end are the dialect's own. Every
 * request runs on the engine the dialects share (object_http.c):
 * connections, retries, rate and in-flight limits, counting.
 *
 * One client per endpoint and credentials; every operation names its bucket
 * and key, so one client serves every table and root on that endpoint. The
 * client is thread-safe: each call runs its own curl multi handle, and
 * connections are shared between calls and threads.
 *
 * Many requests in flight: a bri_obj_batch queues requests (ranged GETs,
 * part uploads, part copies, ...) and runs them together, at most
 * max_in_flight at a time (and at most max_active on the whole client, all
 * threads together); a single call is a batch of one.
 *
 * Counting: every call takes a tally (storage/backend.h bri_store_counts,
 * NULL for none), the counters of the store it works for: each attempt by
 * kind and answer class, retries, body bytes each way, bytes the server
 * copied. The client keeps no counters of its own.
 *
 * Retries: a request is retried, with jittered exponential backoff, on
 * transport failures (timeouts, refused or reset connections, bodies cut
 * short), HTTP 5xx, 408, 429, and the error codes the dialect names
 * transient (also on a 200 that carries an <Error>, where the dialect says
 * one may). Requests that are not idempotent are settled by looking, since
 * any attempt may have landed (curl itself resends once on a reused
 * connection found dead): a PUT-if-absent that meets "taken" reads the
 * object back and counts as done when the bytes are ours (the dialects
 * settle their multipart completions likewise).
 *
 * Errors name the operation, SCHEME://bucket/key, the HTTP status and the
 * store's error code and message ("PUT s3://b/k: HTTP 403
 * SignatureDoesNotMatch: ..."); codes: BRI_ENOTFOUND for 404, BRI_ETAKEN
 * for a put-if-absent that lost, BRI_EIO for everything else that failed. */
#ifndef BRI_OBJECT_CLIENT_H
#define BRI_OBJECT_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/backend.h"
#include "util/error.h"

typedef struct bri_obj_client bri_obj_client;

typedef struct bri_obj_options {
  long connect_timeout_ms; /* [5000] */
  long idle_timeout_ms;    /* a request with no byte moving this long fails [30000] */
  int max_attempts;        /* tries per request, first included [the configuration's, else 8] */
  long backoff_base_ms;    /* first retry waits up to this [100] */
  long backoff_max_ms;     /* cap of one wait [5000] */
  int max_in_flight;       /* requests of one batch in flight [16] */
  int max_active;          /* requests in flight at once, all threads; 0: no limit */
  double max_rate;         /* requests started per second, all threads; 0: no limit */
} bri_obj_options;

/* What the client's store allows of multipart writes and copies. */
typedef struct bri_obj_size_limits {
  uint64_t part_min; /* every part but the last */
  uint64_t part_max; /* one part, and one part copy */
  size_t max_parts;
  uint64_t copy_max; /* one whole-object copy */
} bri_obj_size_limits;

void bri_obj_client_size_limits(const bri_obj_client *c, bri_obj_size_limits *out);
/* Frees c and what it holds (its dialect's configuration, its connections). */
void bri_obj_client_free(bri_obj_client *c);

/* An object as HEAD or a listing describes it. */
typedef struct bri_obj_info {
  char *key;
  uint64_t size;
  int64_t mtime; /* seconds since the epoch, UTC */
  char etag[80]; /* as sent, quotes included */
} bri_obj_info;

void bri_obj_info_clear(bri_obj_info *o);

/* ---- single requests ---- */

/* The whole object, malloc'd into *data (*len bytes). */
int bri_obj_get(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *key, uint8_t **data,
                size_t *len, bri_error *err);
/* Bytes [off, off + len) into buf. *got is len, or fewer when the object
 * ends first (the Content-Range total says so; anything else short is an
 * error). *size, when not NULL, receives the object's size. Offset at or past
 * the end: 0 bytes, no error. */
int bri_obj_get_range(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *key,
                      uint64_t off, size_t len, void *buf, size_t *got, uint64_t *size, bri_error *err);
/* The last n bytes (all of a smaller object), malloc'd; *size receives the
 * object's size. */
int bri_obj_get_suffix(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *key, size_t n,
                       uint8_t **data, size_t *len, uint64_t *size, bri_error *err);
/* Size, mtime, ETag; BRI_ENOTFOUND when there is no such object. */
int bri_obj_head(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *key,
                 bri_obj_info *out, bri_error *err);

enum { BRI_OBJ_PUT_IF_ABSENT = 1 };
/* Stores len bytes. With BRI_OBJ_PUT_IF_ABSENT (If-None-Match: *), an
 * existing object is left alone and BRI_ETAKEN returned ("taken"). */
int bri_obj_put(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *key, const void *data,
                size_t len, int flags, bri_error *err);

/* One listing page. */
typedef struct bri_obj_list_args {
  const char *prefix;
  const char *delimiter;          /* NULL: no grouping */
  const char *start_after;        /* NULL: from the start (a dialect may have none: then refused) */
  const char *continuation_token; /* from the previous page */
  int max_keys;                   /* 0: the server's default (1000) */
} bri_obj_list_args;

typedef struct bri_obj_listing {
  bri_obj_info *objects;
  size_t n_objects;
  char **prefixes; /* common prefixes, with the delimiter */
  size_t n_prefixes;
  char *next_token; /* NULL on the last page */
  bool truncated;
} bri_obj_listing;

int bri_obj_list_page(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const bri_obj_list_args *a,
                      bri_obj_listing *out, bri_error *err);
/* Every page, merged (a->continuation_token and max_keys are the first
 * page's). */
int bri_obj_list_all(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const bri_obj_list_args *a,
                     bri_obj_listing *out, bri_error *err);
void bri_obj_listing_clear(bri_obj_listing *l);

/* Deletes keys[0..n) in as few requests as the dialect can (a missing key
 * counts as deleted). *deleted counts the keys the store confirmed; rcs
 * (may be NULL) gets 0 or BRI_EIO per key. All requests are tried; the
 * error names the first key refused and its code, or the first request that
 * failed (its keys' rcs BRI_EIO: they may or may not be gone). */
int bri_obj_delete(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *const *keys, size_t n,
                   int *rcs, size_t *deleted, bri_error *err);

/* A server-side copy of a whole object (up to the shape's copy_max) of size
 * bytes (as the caller knows it: counted as copied by the server). */
int bri_obj_copy(bri_obj_client *c, bri_store_counts *tally, const char *src_bucket, const char *src_key,
                 const char *bucket, const char *key, uint64_t size, bri_error *err);

/* Multipart uploads: create, parts (uploaded or copied server-side from a
 * range of another object), complete, abort. Parts are numbered from 1;
 * every part but the last must be at least the shape's part_min bytes. */
typedef struct bri_obj_part {
  int number;
  char etag[80]; /* what complete names the part by */
} bri_obj_part;

int bri_obj_mpu_create(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *key,
                       char **upload_id, bri_error *err);
int bri_obj_mpu_complete(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *key,
                         const char *upload_id, const bri_obj_part *parts, size_t n, bri_error *err);
int bri_obj_mpu_abort(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *key,
                      const char *upload_id, bri_error *err);

/* ---- batches: many requests in flight ---- */

typedef struct bri_obj_batch bri_obj_batch;

bri_obj_batch *bri_obj_batch_new(bri_obj_client *c, bri_store_counts *tally);
void bri_obj_batch_free(bri_obj_batch *b);

/* Queue a ranged GET of exactly len bytes into buf (a shorter answer fails). */
int bri_obj_batch_get_range(bri_obj_batch *b, const char *bucket, const char *key, uint64_t off, size_t len,
                            void *buf, bri_error *err);
/* Queue a read of the last n bytes (as bri_obj_get_suffix). Its own outcome
 * goes to *rc (0, or the code of its failure), the bytes to *data
 * (malloc'd), *len and the object's size to *size; it does not fail the
 * batch's other requests, though bri_obj_batch_run still reports it. */
int bri_obj_batch_get_suffix(bri_obj_batch *b, const char *bucket, const char *key, size_t n, uint8_t **data,
                             size_t *len, uint64_t *size, int *rc, bri_error *err);
/* Queue a HEAD: *out filled and *rc 0, or *rc the code of its failure
 * (BRI_ENOTFOUND when missing); other requests go on regardless. */
int bri_obj_batch_head(bri_obj_batch *b, const char *bucket, const char *key, bri_obj_info *out, int *rc,
                       bri_error *err);
/* Queue one listing page (as bri_obj_list_page): its own outcome goes to
 * *rc (and its error to *why, which may be NULL), the listing to *out
 * (cleared by the caller); like a batched HEAD, it does not fail the other
 * requests. */
int bri_obj_batch_list(bri_obj_batch *b, const char *bucket, const bri_obj_list_args *a, bri_obj_listing *out,
                       int *rc, bri_error *why, bri_error *err);
/* Queue a PUT of a whole object (data must stay valid until the batch has
 * run). */
int bri_obj_batch_put(bri_obj_batch *b, const char *bucket, const char *key, const void *data, size_t len,
                      bri_error *err);
/* Queue the upload of part number of len bytes from data (which must stay
 * valid until the batch has run); what names the part is written to *part. */
int bri_obj_batch_put_part(bri_obj_batch *b, const char *bucket, const char *key, const char *upload_id,
                           int number, const void *data, size_t len, bri_obj_part *part, bri_error *err);
/* Queue part number as a server-side copy of src [off, off + len). */
int bri_obj_batch_copy_part(bri_obj_batch *b, const char *bucket, const char *key, const char *upload_id,
                            int number, const char *src_bucket, const char *src_key, uint64_t off, uint64_t len,
                            bri_obj_part *part, bri_error *err);
/* Runs every queued request, max_in_flight at a time, each with its retries.
 * Fails with the first request that failed for good (the others still run
 * to their end, so that no request outlives the call). */
int bri_obj_batch_run(bri_obj_batch *b, bri_error *err);

#endif
