/* azure_client.c: the Azure Blob Storage dialect (see azure_client.h):
 * signing each attempt, List Blobs, reads of the last bytes, Blob Batch
 * deletes, Copy Blob and Put Block From URL sources, block uploads, and
 * Azure's errors; what every dialect shares runs in object_http.c and
 * object_client.c. */
#include "storage/azure_client.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "storage/azure_sign.h"
#include "storage/object_http.h"
#include "util/fsutil.h"

/* Sub-requests of one Blob Batch (the service's limit). */
#define AZURE_BATCH 256
/* The first bytes of an object a read of its last bytes asks for
 * (azure_get_suffix). */
#define AZURE_PROBE ((size_t)64 << 10)

typedef struct azure_client {
  bri_obj_client base;
  bri_azure_config cfg; /* account, key or SAS (the endpoint is below) */
  char *scheme;         /* "http" or "https" */
  char *host;           /* host[:port] of the endpoint */
  char *path;           /* the endpoint's path ("/ACCOUNT" path-style, else "") */
} azure_client;

static const azure_client *azure_of(const bri_obj_client *c) { return (const azure_client *)c; }

/* ---- signing one attempt ---- */

/* The URL (the SAS token appended when there is no key) and the headers:
 * x-ms-date and x-ms-version first, the request's own, the Shared Key
 * Authorization (none with a SAS). */
static int azure_sign(const bri_obj_client *base, const bri_http_req *r, bri_http_attempt *a, bri_error *err) {
  const azure_client *c = azure_of(base);
  char date[32];
  bri_azure_date(time(NULL), date);
  bri_http_pair h[BRI_HTTP_MAX_HEADERS + 2], q[BRI_HTTP_MAX_QUERY];
  size_t nh = 0;
  h[nh++] = (bri_http_pair){"x-ms-date", date};
  h[nh++] = (bri_http_pair){"x-ms-version", BRI_AZURE_VERSION};
  for (size_t i = 0; i < r->n_headers; i++) h[nh++] = (bri_http_pair){r->hname[i], r->hval[i]};
  for (size_t i = 0; i < r->n_query; i++) q[i] = (bri_http_pair){r->qname[i], r->qval[i]};
  bri_strbuf path = BRI_STRBUF_INIT;
  bri_strbuf_printf(&path, "%s/%s%s%s", c->path, r->bucket, r->key ? "/" : "", r->key ? r->key : "");
  char *epath = path.oom ? NULL : bri_uri_encode(path.data, false);
  char *query = bri_http_query(q, r->n_query), *auth = NULL;
  int rc = BRI_ENOMEM;
  if (epath && query) {
    const char *sas = c->cfg.key ? NULL : c->cfg.sas;
    bri_strbuf_printf(bri_http_attempt_url(a), "%s://%s%s%s%s%s%s", c->scheme, c->host, epath,
                      *query || sas ? "?" : "", query, *query && sas ? "&" : "", sas ? sas : "");
    bri_azure_sign_request sr = {r->method, c->cfg.account, epath, q, r->n_query, h, nh,
                                 strcmp(r->method, "PUT") && strcmp(r->method, "POST") ? 0 : r->body_len};
    rc = c->cfg.key ? bri_azure_shared_key(&sr, c->cfg.key, c->cfg.key_len, &auth, err) : 0;
  }
  if (rc == 0) bri_http_attempt_headers(a, h, nh, auth);
  bri_strbuf_clear(&path);
  free(epath);
  free(query);
  free(auth);
  return rc;
}

/* ---- listing ---- */

/* List Blobs (no start-after) and its <EnumerationResults><Blobs>: Blob
 * (Name, Properties: Content-Length, Etag, Last-Modified as "Wed, 02 Dec
 * 2026 06:27:43 GMT"), BlobPrefix (Name), and a NextMarker that is empty on
 * the last page. */
static const bri_obj_listing_shape AZURE_LISTING = {
    .params = (const bri_http_pair[]){{"restype", "container"}, {"comp", "list"}, {NULL, NULL}},
    .prefix_param = "prefix",
    .delimiter_param = "delimiter",
    .token_param = "marker",
    .max_keys_param = "maxresults",
    .root = "EnumerationResults",
    .within = "Blobs",
    .object = "Blob",
    .object_key = "Name",
    .prefix = "BlobPrefix",
    .prefix_key = "Name",
    .props = "Properties",
    .size = "Content-Length",
    .etag = "Etag",
    .mtime = "Last-Modified",
    .time_format = "%a, %d %b %Y %H:%M:%S GMT",
    .next = "NextMarker",
};

/* ---- reading the last bytes ---- */

/* The last n bytes of an object of total bytes (a HEAD or a first range
 * said so), by a range. */
static int azure_tail(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *key,
                      uint64_t total, size_t n, uint8_t **data, size_t *len, uint64_t *size, bri_error *err) {
  *data = NULL, *len = 0, *size = 0;
  size_t want = total < n ? (size_t)total : n, got = 0;
  uint8_t *buf = malloc(want ? want : 1);
  if (!buf) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  int rc = want ? bri_obj_get_range(c, tally, bucket, key, total - want, want, buf, &got, NULL, err) : 0;
  if (rc == 0 && got != want)
    rc = bri_error_set(err, BRI_EIO, "get az://%s/%s: %zu bytes for the last %zu of %llu (did it shrink?)", bucket,
                       key, got, want, (unsigned long long)total);
  if (rc) {
    free(buf);
    return rc;
  }
  *data = buf, *len = want, *size = total;
  return 0;
}

/* The last n bytes without a HEAD: a range of the first AZURE_PROBE bytes,
 * whose answer (Content-Range) says the size. An object no longer than
 * that is then in hand whole (most of a table's files: manifests, deletion
 * files, small data files), a longer one costs its tail's range (two
 * requests, as a HEAD and a range would be); an empty one answers 416 and
 * a HEAD says its size (bri_obj_get_range). */
static int azure_get_suffix(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *key,
                            size_t n, uint8_t **data, size_t *len, uint64_t *size, bri_error *err) {
  *data = NULL, *len = 0, *size = 0;
  uint8_t *buf = malloc(AZURE_PROBE);
  if (!buf) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  size_t got = 0;
  uint64_t total = 0;
  int rc = bri_obj_get_range(c, tally, bucket, key, 0, AZURE_PROBE, buf, &got, &total, err);
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

/* A batched tail's range: its failure to the read's place. */
static int tail_done(bri_obj_client *c, bri_http_req *r, bri_error *err) {
  (void)c;
  (void)err;
  if (r->rc) *r->suffix_rc = r->rc;
  return 0;
}

/* A batched read's HEAD: the size it gives, and the range of the last
 * bytes it asks for in the batch's next round. */
static int suffix_head_done(bri_obj_client *c, bri_http_req *r, bri_error *err) {
  (void)c;
  (void)err;
  if (r->rc) {
    *r->suffix_rc = r->rc;
    return 0;
  }
  uint64_t total = bri_http_req_content_length(r);
  size_t want = total < r->suffix ? (size_t)total : r->suffix;
  uint8_t *buf = malloc(want ? want : 1);
  *r->suffix_data = buf, *r->suffix_len = want, *r->suffix_size = total;
  *r->suffix_rc = buf ? 0 : BRI_ENOMEM;
  if (!buf || !want) return 0;
  bri_http_req *t = bri_http_range_req(r->bucket, r->key, total - want, want, buf, true);
  if (!t || t->broken) {
    bri_http_req_free(t);
    *r->suffix_rc = BRI_ENOMEM;
    return 0;
  }
  t->done = tail_done;
  t->suffix_rc = r->suffix_rc;
  r->next = t;
  return 0;
}

/* Batched, the last bytes are a HEAD now and a range in the next round. */
static bri_http_req *azure_suffix_req(const bri_obj_client *c, const char *bucket, const char *key, size_t n) {
  (void)c;
  (void)n; /* the range is the HEAD's hook's */
  bri_http_req *r = bri_http_req_new(BRI_REQ_HEAD, "HEAD", bucket, key);
  if (r) r->done = suffix_head_done;
  return r;
}

/* ---- deletes ---- */

/* With a SAS token alone: one Delete Blob per key, all in one batch of
 * requests (max_in_flight at a time; Blob Batch sub-requests carrying a
 * SAS were not tried on Azurite, docs/azure.md). A missing blob counts as
 * deleted. */
static int azure_delete_each(bri_obj_client *c, bri_store_counts *tally, const char *bucket,
                             const char *const *keys, size_t n, int *rcs, size_t *deleted, bri_error *err) {
  bri_http_req **reqs = calloc(n ? n : 1, sizeof *reqs);
  int rc = reqs ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
  for (size_t i = 0; rc == 0 && i < n; i++)
    if (!(reqs[i] = bri_http_req_new(BRI_REQ_DELETE, "DELETE", bucket, keys[i])))
      rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (rc == 0) bri_http_run_all(c, tally, reqs, n, NULL);
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
  for (size_t i = 0; reqs && i < n; i++) bri_http_req_free(reqs[i]);
  free(reqs);
  return first;
}

/* The multipart body of a Blob Batch deleting keys[0..n): one Delete Blob
 * sub-request each, signed with Shared Key on its own (the path as the
 * service sees it, account included when path-style), Content-ID i. */
static int batch_body(const azure_client *c, const char *bucket, const char *const *keys, size_t n,
                      const char *boundary, bri_strbuf *body, bri_error *err) {
  char date[32];
  bri_azure_date(time(NULL), date);
  bri_http_pair h[] = {{"x-ms-date", date}};
  for (size_t i = 0; i < n; i++) {
    bri_strbuf path = BRI_STRBUF_INIT;
    bri_strbuf_printf(&path, "%s/%s/%s", c->path, bucket, keys[i]);
    char *epath = path.oom ? NULL : bri_uri_encode(path.data, false), *auth = NULL;
    bri_strbuf_clear(&path);
    if (!epath) return bri_error_set(err, BRI_ENOMEM, "out of memory");
    bri_azure_sign_request sr = {"DELETE", c->cfg.account, epath, NULL, 0, h, 1, 0};
    int rc = bri_azure_shared_key(&sr, c->cfg.key, c->cfg.key_len, &auth, err);
    if (rc == 0)
      bri_strbuf_printf(body,
                        "--%s\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n"
                        "Content-ID: %zu\r\n\r\nDELETE %s HTTP/1.1\r\nx-ms-date: %s\r\nAuthorization: %s\r\n"
                        "Content-Length: 0\r\n\r\n",
                        boundary, i, epath, date, auth);
    free(epath), free(auth);
    if (rc) return rc;
  }
  bri_strbuf_printf(body, "--%s--\r\n", boundary);
  return body->oom ? bri_error_set(err, BRI_ENOMEM, "out of memory") : 0;
}

/* The answers of a Blob Batch of n sub-requests: each part's status line
 * and x-ms-error-code, by its Content-ID (status 0: no answer for it). */
static void batch_answers(const char *text, size_t len, size_t n, long *status, char (*code)[64]) {
  size_t cur = SIZE_MAX;
  for (size_t at = 0; at < len;) {
    const char *line = text + at, *eol = memchr(line, '\n', len - at);
    size_t ll = eol ? (size_t)(eol - line) : len - at;
    at += ll + (eol != NULL);
    if (ll && line[ll - 1] == '\r') ll--;
    const char *v = NULL;
    if (ll > 2 && line[0] == '-' && line[1] == '-') {
      cur = SIZE_MAX; /* a new part */
    } else if (bri_http_header_is(line, ll, "Content-ID", &v) && v <= line + ll) {
      char num[24];
      size_t vl = (size_t)(line + ll - v);
      snprintf(num, sizeof num, "%.*s", (int)(vl < sizeof num ? vl : sizeof num - 1), v);
      char *end;
      unsigned long id = strtoul(num, &end, 10);
      cur = end != num && id < n ? id : SIZE_MAX;
    } else if (cur != SIZE_MAX && ll > 12 && !strncmp(line, "HTTP/1.1 ", 9)) {
      status[cur] = strtol(line + 9, NULL, 10);
    } else if (cur != SIZE_MAX && bri_http_header_is(line, ll, "x-ms-error-code", &v) && v <= line + ll) {
      size_t vl = (size_t)(line + ll - v);
      snprintf(code[cur], sizeof code[cur], "%.*s", (int)(vl < 63 ? vl : 63), v);
    }
  }
}

/* One Blob Batch deleting keys[0..n) (n <= AZURE_BATCH): a missing blob
 * counts as deleted; a sub-request refused is BRI_EIO naming the key, its
 * status and code, and the count refused. */
static int delete_batch(bri_obj_client *base, bri_store_counts *tally, const char *bucket, const char *const *keys,
                        size_t n, int *rcs, size_t *deleted, bri_error *err) {
  const azure_client *c = azure_of(base);
  for (size_t i = 0; rcs && i < n; i++) rcs[i] = BRI_EIO; /* until the service says otherwise */
  char boundary[48], ct[96];
  snprintf(boundary, sizeof boundary, "batch_%016llx", (unsigned long long)bri_http_client_random(base));
  snprintf(ct, sizeof ct, "multipart/mixed; boundary=%s", boundary);
  bri_strbuf body = BRI_STRBUF_INIT;
  long *status = calloc(n, sizeof *status);
  char(*code)[64] = calloc(n, sizeof *code);
  int rc = status && code ? batch_body(c, bucket, keys, n, boundary, &body, err)
                          : bri_error_set(err, BRI_ENOMEM, "out of memory");
  bri_http_req *r = rc ? NULL : bri_http_req_new(BRI_REQ_DELETE, "POST", bucket, NULL);
  if (rc == 0) {
    bri_http_req_query(r, "restype", "container");
    bri_http_req_query(r, "comp", "batch");
    bri_http_req_header(r, "Content-Type", ct);
    bri_http_req_body(r, body.data, body.len);
    if (r) r->sink = BRI_HTTP_SINK_GROW;
    rc = bri_http_run(base, tally, r, err);
  }
  if (rc == 0) {
    batch_answers(r->grow.data ? r->grow.data : "", r->grow.len, n, status, code);
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
  bri_http_req_free(r);
  bri_strbuf_clear(&body);
  free(status), free(code);
  return rc;
}

/* Blob Batches of AZURE_BATCH deletes, signed with Shared Key; with a SAS
 * token alone, one Delete Blob per key. */
static int azure_delete_keys(bri_obj_client *c, bri_store_counts *tally, const char *bucket,
                             const char *const *keys, size_t n, int *rcs, size_t *deleted, bri_error *err) {
  if (!azure_of(c)->cfg.key) return azure_delete_each(c, tally, bucket, keys, n, rcs, deleted, err);
  return bri_http_delete_in_groups(c, tally, bucket, keys, n, rcs, deleted, AZURE_BATCH, delete_batch, err);
}

/* ---- copies and blocks ---- */

/* The URL a copy reads its source from, readable by the service on its
 * own: with a service SAS of our key for that one blob (an hour), or the
 * configured SAS token. */
static char *source_url(const azure_client *c, const char *bucket, const char *key) {
  char *k = bri_uri_encode(key, false), *sas = NULL;
  if (k && c->cfg.key) sas = bri_azure_blob_sas(c->cfg.account, c->cfg.key, c->cfg.key_len, bucket, key, time(NULL) + 3600);
  bri_strbuf b = BRI_STRBUF_INIT;
  if (k && (sas || !c->cfg.key))
    bri_strbuf_printf(&b, "%s://%s%s/%s/%s?%s", c->scheme, c->host, c->path, bucket, k, sas ? sas : c->cfg.sas);
  bool ok = k && (sas || !c->cfg.key) && !b.oom;
  free(k), free(sas);
  if (!ok) bri_strbuf_clear(&b);
  return ok ? bri_strbuf_take(&b) : NULL;
}

/* Copy Blob, synchronous: done when it answers (up to 256 MiB); or Put
 * Block From URL of a range (any size up to 100 MiB). */
static void azure_copy_source(const bri_obj_client *c, bri_http_req *r, const char *src_bucket,
                              const char *src_key, const uint64_t *range) {
  char *src = source_url(azure_of(c), src_bucket, src_key);
  bri_http_req_header(r, "x-ms-copy-source", src);
  free(src);
  if (range) {
    char bytes[64];
    snprintf(bytes, sizeof bytes, "bytes=%llu-%llu", (unsigned long long)range[0],
             (unsigned long long)(range[0] + range[1] - 1));
    bri_http_req_header(r, "x-ms-source-range", bytes);
  } else {
    bri_http_req_header(r, "x-ms-requires-sync", "true");
  }
}

/* Put Block (From URL): the block id base64("<upload id>-<number>"), one
 * length for every block of a blob as Azure wants, kept as the part's etag
 * for the block list. */
static void azure_part_query(const bri_obj_client *c, bri_http_req *r, const char *upload_id, int number,
                             bri_obj_part *part) {
  (void)c;
  char raw[48];
  int n = snprintf(raw, sizeof raw, "%.24s-%06d", upload_id, number);
  EVP_EncodeBlock((unsigned char *)part->etag, (const unsigned char *)raw, n);
  bri_http_req_query(r, "comp", "block");
  bri_http_req_query(r, "blockid", part->etag);
}

/* No request: the id names this writer's blocks. */
static int azure_mpu_create(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *key,
                            char **upload_id, bri_error *err) {
  (void)tally, (void)bucket, (void)key;
  *upload_id = bri_strdupf("%016llx", (unsigned long long)bri_http_client_random(c));
  return *upload_id ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
}

/* Put Block List of the writer's blocks (each part's etag is its block
 * id). Sending the same list again commits the same blob, so a retried
 * attempt that had landed does no harm. */
static int azure_mpu_complete(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *key,
                              const char *upload_id, const bri_obj_part *parts, size_t n, bri_error *err) {
  (void)upload_id;
  bri_strbuf body = BRI_STRBUF_INIT;
  bri_strbuf_puts(&body, "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>");
  for (size_t i = 0; i < n; i++) bri_strbuf_printf(&body, "<Latest>%s</Latest>", parts[i].etag);
  bri_strbuf_puts(&body, "</BlockList>");
  bri_http_req *r = body.oom ? NULL : bri_http_req_new(BRI_REQ_MPU_COMPLETE, "PUT", bucket, key);
  bri_http_req_query(r, "comp", "blocklist");
  bri_http_req_body(r, body.data, body.len);
  int rc = bri_http_run(c, tally, r, err);
  bri_http_req_free(r);
  bri_strbuf_clear(&body);
  return rc;
}

/* The service drops uncommitted blocks by itself (after a week). */
static int azure_mpu_abort(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *key,
                           const char *upload_id, bri_error *err) {
  (void)c, (void)tally, (void)bucket, (void)key, (void)upload_id, (void)err;
  return 0;
}

/* ---- the client ---- */

static void azure_dispose(bri_obj_client *base) {
  azure_client *c = (azure_client *)base;
  bri_azure_config_clear(&c->cfg);
  free(c->scheme);
  free(c->host);
  free(c->path);
}

static const char *const AZURE_TRANSIENT[] = {"ServerBusy", "OperationTimedOut", "InternalError", NULL};

static const bri_http_pair BLOCK_BLOB = {"x-ms-blob-type", "BlockBlob"};

static const bri_obj_dialect AZURE_DIALECT = {
    .scheme = "az",
    .size_limits = {1, (uint64_t)100 << 20, 50000, (uint64_t)256 << 20},
    .sign = azure_sign,
    .code_header = "x-ms-error-code",
    .transient_codes = AZURE_TRANSIENT,
    .taken_status = 409,
    .put_header = &BLOCK_BLOB,
    .listing = &AZURE_LISTING,
    .copy_source = azure_copy_source,
    .part_query = azure_part_query,
    .suffix_req = azure_suffix_req,
    .get_suffix = azure_get_suffix,
    .delete_keys = azure_delete_keys,
    .mpu_create = azure_mpu_create,
    .mpu_complete = azure_mpu_complete,
    .mpu_abort = azure_mpu_abort,
    .dispose = azure_dispose,
};

int bri_azure_client_new(const bri_azure_config *cfg, const bri_obj_options *opt, bri_obj_client **out,
                         bri_error *err) {
  *out = NULL;
  azure_client *c = calloc(1, sizeof *c);
  if (!c) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  int rc = bri_http_client_init(&c->base, &AZURE_DIALECT, opt, cfg->max_attempts, err);
  const char *sep = strstr(cfg->endpoint, "://"), *slash = sep ? strchr(sep + 3, '/') : NULL;
  if (rc == 0 && sep) {
    c->cfg.account = strdup(cfg->account);
    c->cfg.sas = cfg->sas ? strdup(cfg->sas) : NULL;
    c->cfg.key = cfg->key ? malloc(cfg->key_len ? cfg->key_len : 1) : NULL;
    if (c->cfg.key) memcpy(c->cfg.key, cfg->key, cfg->key_len), c->cfg.key_len = cfg->key_len;
    c->scheme = strndup(cfg->endpoint, (size_t)(sep - cfg->endpoint));
    c->host = slash ? strndup(sep + 3, (size_t)(slash - sep - 3)) : strdup(sep + 3);
    c->path = strdup(slash ? slash : "");
  }
  if (rc == 0 && (!c->cfg.account || (cfg->sas && !c->cfg.sas) || (cfg->key && !c->cfg.key) || !c->scheme ||
                  !c->host || !c->path)) {
    rc = bri_error_set(err, sep ? BRI_ENOMEM : BRI_EINVAL, "Azure client: %s",
                       sep ? "out of memory" : "endpoint without a scheme");
  }
  if (rc) {
    bri_obj_client_free(&c->base);
    return rc;
  }
  *out = &c->base;
  return 0;
}
