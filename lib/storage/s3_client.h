/* s3_client.h: an S3 client on libcurl with our own SigV4 signer, which
 * also speaks Azure Blob Storage (bri_s3_client_new_azure): the same
 * engine (batches, limits, retries, counting) and the same operations in
 * Azure's shapes, so that one store (s3_store.c) serves both. In the Azure
 * dialect a bucket is a container, and: PUT is Put Blob (a 409
 * BlobAlreadyExists on If-None-Match: * is "taken"), HEAD is Get Blob
 * Properties, a listing is List Blobs, a delete one Delete Blob per key,
 * a copy a synchronous Copy Blob, a multipart upload blocks: create makes
 * an id and sends nothing, parts are Put Block, part copies Put Block From
 * URL with x-ms-source-range, complete is Put Block List, abort sends
 * nothing; a suffix GET is a HEAD and a range (Azure has no suffix
 * ranges). Requests are signed with Shared Key (storage/azure_sign.h) or
 * carry the SAS token; a copy's source URL carries a service SAS of the
 * account key (or the SAS token), as the service reads it on its own.
 * Azure's 503 ServerBusy and 500 OperationTimedOut are retried as S3's
 * SlowDown is; errors name az://container/blob, the HTTP status and
 * x-ms-error-code.
 *
 * One client per endpoint and credentials (bri_aws_config); every operation
 * names its bucket and key, so one client serves every table and root on
 * that endpoint. The client is thread-safe: each call runs its own curl
 * multi handle, and connections are shared between calls and threads
 * through a curl share handle (keep-alive reuse, one DNS cache).
 *
 * Many requests in flight: a bri_s3_batch queues requests (ranged GETs,
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
 * short), HTTP 5xx, 429, 503 SlowDown and 400 RequestTimeout, and on a 200
 * that carries an <Error> (CopyObject, UploadPartCopy and
 * CompleteMultipartUpload may answer so). Requests that are not idempotent
 * are settled by looking, since any attempt may have landed (curl itself
 * resends once on a reused connection found dead): a PUT-if-absent that
 * meets 412 reads the object back and counts as done when the bytes are
 * ours; a CompleteMultipartUpload that meets NoSuchUpload checks the
 * object's ETag against the one its parts give.
 *
 * Errors name the operation, s3://bucket/key, the HTTP status and the S3
 * error code and message ("PUT s3://b/k: HTTP 403 SignatureDoesNotMatch:
 * ..."); codes: BRI_ENOTFOUND for 404 / NoSuchKey, BRI_ETAKEN for 412 on a
 * PUT-if-absent, BRI_EIO for everything else that failed. */
#ifndef BRI_S3_CLIENT_H
#define BRI_S3_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/aws_config.h"
#include "storage/azure_config.h"
#include "storage/backend.h"
#include "util/error.h"

typedef struct bri_s3_client bri_s3_client;

typedef struct bri_s3_options {
  long connect_timeout_ms; /* [5000] */
  long idle_timeout_ms;    /* a request with no byte moving this long fails [30000] */
  int max_attempts;        /* tries per request, first included [cfg's, else 8] */
  long backoff_base_ms;    /* first retry waits up to this [100] */
  long backoff_max_ms;     /* cap of one wait [5000] */
  int max_in_flight;       /* requests of one batch in flight [16] */
  int max_active;          /* requests in flight at once, all threads; 0: no limit */
  double max_rate;         /* requests started per second, all threads; 0: no limit */
} bri_s3_options;

/* Zero fields of opt take the defaults above; opt may be NULL. */
int bri_s3_client_new(const bri_aws_config *cfg, const bri_s3_options *opt,
                      bri_s3_client **out, bri_error *err);
/* The same, speaking Azure Blob Storage to cfg's endpoint (copied). */
int bri_s3_client_new_azure(const bri_azure_config *cfg, const bri_s3_options *opt,
                            bri_s3_client **out, bri_error *err);

/* What the client's service allows of multipart writes and copies. */
typedef struct bri_s3_shape {
  uint64_t part_min;  /* every part but the last (S3: 5 MiB; Azure: 1 byte) */
  uint64_t part_max;  /* one part, and one part copy (S3: 5 GiB; Azure: 100 MiB) */
  size_t max_parts;   /* S3: 10000; Azure: 50000 blocks */
  uint64_t copy_max;  /* one whole-object copy (S3 CopyObject: 5 GiB; Azure's
                         synchronous Copy Blob: 256 MiB) */
} bri_s3_shape;
void bri_s3_client_shape(const bri_s3_client *c, bri_s3_shape *out);
void bri_s3_client_free(bri_s3_client *c);

/* s3://BUCKET[/KEY]: bucket and key (key "" when none; no leading slash,
 * trailing slashes kept) as malloc'd strings. Refuses bucket names S3 does
 * not allow (3-63 of a-z 0-9 . -, starting and ending alphanumeric). */
int bri_s3_uri_parse(const char *uri, char **bucket, char **key, bri_error *err);

/* An object as HEAD or a listing describes it. */
typedef struct bri_s3_object {
  char *key;
  uint64_t size;
  int64_t mtime; /* seconds since the epoch, UTC */
  char etag[80]; /* as sent, quotes included */
} bri_s3_object;

void bri_s3_object_clear(bri_s3_object *o);

/* ---- single requests ---- */

/* The whole object, malloc'd into *data (*len bytes). */
int bri_s3_get(bri_s3_client *c, bri_store_counts *tally, const char *bucket, const char *key, uint8_t **data,
               size_t *len, bri_error *err);
/* Bytes [off, off + len) into buf. *got is len, or fewer when the object
 * ends first (the Content-Range total says so; anything else short is an
 * error). *size, when not NULL, receives the object's size. Offset at or past
 * the end: 0 bytes, no error. */
int bri_s3_get_range(bri_s3_client *c, bri_store_counts *tally, const char *bucket, const char *key, uint64_t off,
                     size_t len, void *buf, size_t *got, uint64_t *size, bri_error *err);
/* The last n bytes (Range: bytes=-n; all of a smaller object), malloc'd;
 * *size receives the object's size. */
int bri_s3_get_suffix(bri_s3_client *c, bri_store_counts *tally, const char *bucket, const char *key, size_t n,
                      uint8_t **data, size_t *len, uint64_t *size, bri_error *err);
/* Size, mtime, ETag; BRI_ENOTFOUND when there is no such object. */
int bri_s3_head(bri_s3_client *c, bri_store_counts *tally, const char *bucket, const char *key, bri_s3_object *out,
                bri_error *err);

enum { BRI_S3_PUT_IF_ABSENT = 1 };
/* Stores len bytes. With BRI_S3_PUT_IF_ABSENT (If-None-Match: *), an
 * existing object is left alone and BRI_ETAKEN returned ("taken"). */
int bri_s3_put(bri_s3_client *c, bri_store_counts *tally, const char *bucket, const char *key, const void *data,
               size_t len, int flags, bri_error *err);

/* One ListObjectsV2 page. */
typedef struct bri_s3_list_args {
  const char *prefix;
  const char *delimiter;          /* NULL: no grouping */
  const char *start_after;        /* NULL: from the start */
  const char *continuation_token; /* from the previous page */
  int max_keys;                   /* 0: the server's default (1000) */
} bri_s3_list_args;

typedef struct bri_s3_listing {
  bri_s3_object *objects;
  size_t n_objects;
  char **prefixes; /* CommonPrefixes, with the delimiter */
  size_t n_prefixes;
  char *next_token; /* NULL on the last page */
  bool truncated;
} bri_s3_listing;

int bri_s3_list_page(bri_s3_client *c, bri_store_counts *tally, const char *bucket, const bri_s3_list_args *a,
                     bri_s3_listing *out, bri_error *err);
/* Every page, merged (a->continuation_token and max_keys are the first
 * page's). */
int bri_s3_list_all(bri_s3_client *c, bri_store_counts *tally, const char *bucket, const bri_s3_list_args *a,
                    bri_s3_listing *out, bri_error *err);
void bri_s3_listing_clear(bri_s3_listing *l);

/* DeleteObjects in requests of up to 1000 keys (a missing key counts as
 * deleted, as S3 says). *deleted counts the keys S3 confirmed; rcs (may be
 * NULL) gets 0 or BRI_EIO per key. All requests are tried; the error names
 * the first key S3 refused and its code, or the first request that failed
 * (its keys' rcs BRI_EIO: they may or may not be gone). */
int bri_s3_delete(bri_s3_client *c, bri_store_counts *tally, const char *bucket, const char *const *keys, size_t n,
                  int *rcs, size_t *deleted, bri_error *err);

/* CopyObject: a server-side copy of a whole object (up to 5 GiB) of size
 * bytes (as the caller knows it: counted as copied by the server). */
int bri_s3_copy(bri_s3_client *c, bri_store_counts *tally, const char *src_bucket,
                const char *src_key, const char *bucket, const char *key, uint64_t size,
                bri_error *err);

/* Multipart uploads: create, parts (uploaded or copied server-side from a
 * range of another object), complete, abort. Parts are numbered from 1;
 * every part but the last must be at least BRI_S3_PART_MIN bytes. */
#define BRI_S3_PART_MIN (5u << 20)
#define BRI_S3_PART_MAX ((uint64_t)5 << 30)

typedef struct bri_s3_part {
  int number;
  char etag[80];
} bri_s3_part;

int bri_s3_mpu_create(bri_s3_client *c, bri_store_counts *tally, const char *bucket, const char *key, char **upload_id,
                      bri_error *err);
int bri_s3_mpu_complete(bri_s3_client *c, bri_store_counts *tally, const char *bucket, const char *key,
                        const char *upload_id, const bri_s3_part *parts, size_t n,
                        bri_error *err);
int bri_s3_mpu_abort(bri_s3_client *c, bri_store_counts *tally, const char *bucket, const char *key,
                     const char *upload_id, bri_error *err);

/* ---- batches: many requests in flight ---- */

typedef struct bri_s3_batch bri_s3_batch;

bri_s3_batch *bri_s3_batch_new(bri_s3_client *c, bri_store_counts *tally);
void bri_s3_batch_free(bri_s3_batch *b);

/* Queue a ranged GET of exactly len bytes into buf (a shorter answer fails). */
int bri_s3_batch_get_range(bri_s3_batch *b, const char *bucket, const char *key, uint64_t off,
                           size_t len, void *buf, bri_error *err);
/* Queue a GET of the last n bytes (as bri_s3_get_suffix). Its own outcome
 * goes to *rc (0, or the code of its failure), the bytes to *data
 * (malloc'd), *len and the object's size to *size; it does not fail the
 * batch's other requests, though bri_s3_batch_run still reports it. */
int bri_s3_batch_get_suffix(bri_s3_batch *b, const char *bucket, const char *key, size_t n,
                            uint8_t **data, size_t *len, uint64_t *size, int *rc, bri_error *err);
/* Queue a HEAD: *out filled and *rc 0, or *rc the code of its failure
 * (BRI_ENOTFOUND when missing); other requests go on regardless. */
int bri_s3_batch_head(bri_s3_batch *b, const char *bucket, const char *key, bri_s3_object *out,
                      int *rc, bri_error *err);
/* Queue one ListObjectsV2 page (as bri_s3_list_page): its own outcome goes
 * to *rc (and its error to *why, which may be NULL), the listing to *out
 * (cleared by the caller); like a batched HEAD, it does not fail the other
 * requests. */
int bri_s3_batch_list(bri_s3_batch *b, const char *bucket, const bri_s3_list_args *a,
                      bri_s3_listing *out, int *rc, bri_error *why, bri_error *err);
/* Queue a PUT of a whole object (data must stay valid until the batch has
 * run). */
int bri_s3_batch_put(bri_s3_batch *b, const char *bucket, const char *key, const void *data,
                     size_t len, bri_error *err);
/* Queue an UploadPart of len bytes from data (which must stay valid until the
 * batch has run); the part's ETag is written to *part. */
int bri_s3_batch_put_part(bri_s3_batch *b, const char *bucket, const char *key,
                          const char *upload_id, int number, const void *data, size_t len,
                          bri_s3_part *part, bri_error *err);
/* Queue an UploadPartCopy of src [off, off + len) (x-amz-copy-source-range). */
int bri_s3_batch_copy_part(bri_s3_batch *b, const char *bucket, const char *key,
                           const char *upload_id, int number, const char *src_bucket,
                           const char *src_key, uint64_t off, uint64_t len, bri_s3_part *part,
                           bri_error *err);
/* Runs every queued request, max_in_flight at a time, each with its retries.
 * Fails with the first request that failed for good (the others still run
 * to their end, so that no request outlives the call). */
int bri_s3_batch_run(bri_s3_batch *b, bri_error *err);

#endif
