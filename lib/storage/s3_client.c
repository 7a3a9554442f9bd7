/* s3_client.c: the S3 dialect (see s3_client.h): signing each attempt,
 * ListObjectsV2, suffix GETs, DeleteObjects, CopyObject and UploadPartCopy
 * sources, multipart uploads, and S3's errors; what every dialect shares
 * runs in object_http.c and object_client.c. */
#include "storage/s3_client.h"

#include <ctype.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "storage/object_http.h"
#include "storage/s3_sign.h"

#define DELETE_BATCH 1000

typedef struct s3_client {
  bri_obj_client base;
  bri_aws_config cfg;
  char *scheme; /* "http" or "https" */
  char *host;   /* host[:port] of the endpoint */
} s3_client;

static const s3_client *s3_of(const bri_obj_client *c) { return (const s3_client *)c; }

/* ---- signing one attempt ---- */

static void amz_date(char out[17]) {
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm);
}

/* host and raw path of r as the configured addressing style puts them. */
static void req_location(const s3_client *c, const bri_http_req *r, bri_strbuf *host, bri_strbuf *path) {
  if (c->cfg.virtual_hosted) {
    bri_strbuf_printf(host, "%s.%s", r->bucket, c->host);
    bri_strbuf_printf(path, "/%s", r->key ? r->key : "");
  } else {
    bri_strbuf_puts(host, c->host);
    bri_strbuf_printf(path, "/%s%s%s", r->bucket, r->key ? "/" : "", r->key ? r->key : "");
  }
}

/* The URL, and every header signed with SigV4: host, x-amz-date, the
 * payload's SHA-256, the session token if any, the request's own. */
static int s3_sign(const bri_obj_client *base, const bri_http_req *r, bri_http_attempt *a, bri_error *err) {
  const s3_client *c = s3_of(base);
  int rc = BRI_ENOMEM;
  char date[17], payload_hash[BRI_SHA256_HEX_LEN + 1];
  bri_strbuf host = BRI_STRBUF_INIT, path = BRI_STRBUF_INIT;
  char *query = NULL, *epath = NULL, *auth = NULL;
  bri_http_pair q[BRI_HTTP_MAX_QUERY], h[BRI_HTTP_MAX_HEADERS + 4];
  size_t nh = 0;
  amz_date(date);
  if (r->body_len) bri_sha256_hex(r->body, r->body_len, payload_hash);
  else memcpy(payload_hash, bri_sha256_empty_hex, sizeof payload_hash);
  req_location(c, r, &host, &path);
  if (host.oom || path.oom) goto out;

  for (size_t i = 0; i < r->n_query; i++) q[i] = (bri_http_pair){r->qname[i], r->qval[i]};
  h[nh++] = (bri_http_pair){"host", host.data};
  h[nh++] = (bri_http_pair){"x-amz-date", date};
  h[nh++] = (bri_http_pair){"x-amz-content-sha256", payload_hash};
  if (c->cfg.session_token) h[nh++] = (bri_http_pair){"x-amz-security-token", c->cfg.session_token};
  for (size_t i = 0; i < r->n_headers; i++) h[nh++] = (bri_http_pair){r->hname[i], r->hval[i]};
  bri_sigv4_request sr = {r->method,         path.data, q, r->n_query, h, nh, payload_hash, date,
                          c->cfg.region,     "s3",      c->cfg.access_key_id, c->cfg.secret_access_key};
  if ((rc = bri_sigv4_authorization(&sr, &auth, err)) != 0) goto out;
  rc = BRI_ENOMEM;
  if (!(query = bri_http_query(q, r->n_query)) || !(epath = bri_uri_encode(path.data, false))) goto out;
  bri_strbuf_printf(bri_http_attempt_url(a), "%s://%s%s%s%s", c->scheme, host.data, epath, *query ? "?" : "",
                    query);
  bri_http_attempt_headers(a, h, nh, auth);
  rc = 0;
out:
  bri_strbuf_clear(&host);
  bri_strbuf_clear(&path);
  free(query);
  free(epath);
  free(auth);
  return rc;
}

/* ---- listing ---- */

/* ListObjectsV2 (keys URL-encoded) and its <ListBucketResult>: Contents
 * (Key, Size, ETag, LastModified as "2026-12-01T14:36:00.000Z"),
 * CommonPrefixes (Prefix), EncodingType, IsTruncated and
 * NextContinuationToken. */
static const bri_obj_listing_shape S3_LISTING = {
    .params = (const bri_http_pair[]){{"list-type", "2"}, {"encoding-type", "url"}, {NULL, NULL}},
    .prefix_param = "prefix",
    .delimiter_param = "delimiter",
    .start_after_param = "start-after",
    .token_param = "continuation-token",
    .max_keys_param = "max-keys",
    .root = "ListBucketResult",
    .object = "Contents",
    .object_key = "Key",
    .prefix = "CommonPrefixes",
    .prefix_key = "Prefix",
    .size = "Size",
    .etag = "ETag",
    .mtime = "LastModified",
    .time_format = "%Y-%m-%dT%H:%M:%S",
    .encoding = "EncodingType",
    .truncated = "IsTruncated",
    .next = "NextContinuationToken",
};

/* ---- reading the last bytes ---- */

static int suffix_done(bri_obj_client *c, bri_http_req *r, bri_error *err);

static bri_http_req *s3_suffix_req(const bri_obj_client *c, const char *bucket, const char *key, size_t n) {
  (void)c;
  bri_http_req *r = bri_http_req_new(BRI_REQ_GET, "GET", bucket, key);
  char range[40];
  snprintf(range, sizeof range, "bytes=-%zu", n);
  bri_http_req_header(r, "Range", range);
  if (r) {
    r->sink = BRI_HTTP_SINK_GROW;
    r->suffix = n;
    r->done = suffix_done;
  }
  return r;
}

/* The outcome of a suffix GET that ran with result rc. */
static int suffix_result(bri_http_req *r, int rc, uint8_t **data, size_t *len, uint64_t *size, bri_error *err) {
  *data = NULL;
  *len = 0;
  *size = 0;
  if (rc == 0) {
    uint64_t total = r->status == 206 && r->have_range ? r->range_total : r->grow.len;
    uint64_t want = total < r->suffix ? total : r->suffix;
    if (r->grow.len != want) {
      return bri_error_set(err, BRI_EIO, "get s3://%s/%s: %zu bytes for the last %llu of %llu", r->bucket, r->key,
                           r->grow.len, (unsigned long long)want, (unsigned long long)total);
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

/* A batched suffix GET's outcome, to its caller's places. */
static int suffix_done(bri_obj_client *c, bri_http_req *r, bri_error *err) {
  (void)c;
  (void)err;
  bri_error e;
  *r->suffix_rc = suffix_result(r, r->rc, r->suffix_data, r->suffix_len, r->suffix_size, &e);
  return 0;
}

static int s3_get_suffix(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *key, size_t n,
                         uint8_t **data, size_t *len, uint64_t *size, bri_error *err) {
  bri_http_req *r = s3_suffix_req(c, bucket, key, n);
  int rc = bri_http_run(c, tally, r, err);
  if (r) rc = suffix_result(r, rc, data, len, size, err);
  bri_http_req_free(r);
  return rc;
}

/* ---- deletes ---- */

static void md5_base64(const void *data, size_t len, char out[32]) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(data, len, md, &n, EVP_md5(), NULL);
  EVP_EncodeBlock((unsigned char *)out, md, (int)n);
}

/* One DeleteObjects of keys[0..n) (n <= DELETE_BATCH), quiet: the answer
 * lists the keys refused. */
static int delete_some(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *const *keys,
                       size_t n, int *rcs, size_t *deleted, bri_error *err) {
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
  bri_http_req *r = bri_http_req_new(BRI_REQ_DELETE, "POST", bucket, NULL);
  bri_http_req_query(r, "delete", "");
  bri_http_req_header(r, "Content-MD5", md5);
  bri_http_req_body(r, body.data, body.len);
  char what[400];
  snprintf(what, sizeof what, "delete in s3://%s", bucket);
  bri_xml_node *root;
  int rc = bri_http_run_xml(c, tally, r, what, &root, err);
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
      rc = bri_error_set(err, BRI_EIO, "delete s3://%s/%s: %s: %s (%zu of %zu keys refused)", bucket, k ? k : "?",
                         code ? code : "?", msg ? msg : "", refused, n);
    }
    if (rc == 0 || first) *deleted += n - refused;
    bri_xml_free(root);
  }
  bri_http_req_free(r);
  bri_strbuf_clear(&body);
  return rc;
}

static int s3_delete_keys(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *const *keys,
                          size_t n, int *rcs, size_t *deleted, bri_error *err) {
  return bri_http_delete_in_groups(c, tally, bucket, keys, n, rcs, deleted, DELETE_BATCH, delete_some, err);
}

/* ---- copies and multipart ---- */

/* x-amz-copy-source: /BUCKET/KEY, the key encoded. */
static char *copy_source(const char *bucket, const char *key) {
  bri_strbuf b = BRI_STRBUF_INIT;
  char *k = bri_uri_encode(key, false);
  if (k) bri_strbuf_printf(&b, "/%s/%s", bucket, k);
  free(k);
  return k ? bri_strbuf_take(&b) : NULL;
}

/* CopyObject, or UploadPartCopy of a range; either may answer 200 with an
 * <Error>. */
static void s3_copy_source(const bri_obj_client *c, bri_http_req *r, const char *src_bucket, const char *src_key,
                           const uint64_t *range) {
  (void)c;
  char *src = copy_source(src_bucket, src_key);
  bri_http_req_header(r, "x-amz-copy-source", src);
  free(src);
  if (range) {
    char bytes[64];
    snprintf(bytes, sizeof bytes, "bytes=%llu-%llu", (unsigned long long)range[0],
             (unsigned long long)(range[0] + range[1] - 1));
    bri_http_req_header(r, "x-amz-copy-source-range", bytes);
  }
  r->error_in_200 = true;
}

static int s3_mpu_create(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *key,
                         char **upload_id, bri_error *err) {
  bri_http_req *r = bri_http_req_new(BRI_REQ_MPU_CREATE, "POST", bucket, key);
  bri_http_req_query(r, "uploads", "");
  char what[600];
  snprintf(what, sizeof what, "create_multipart s3://%s/%s", bucket, key);
  bri_xml_node *root;
  int rc = bri_http_run_xml(c, tally, r, what, &root, err);
  const char *id = rc ? NULL : bri_xml_text(root, "UploadId");
  if (rc == 0 && (!id || !*id)) rc = bri_error_set(err, BRI_ECORRUPT, "%s: answer without UploadId", what);
  if (rc == 0 && !(*upload_id = strdup(id))) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  bri_xml_free(root);
  bri_http_req_free(r);
  return rc;
}

/* A part's ETag, from its answer: the ETag header of UploadPart, the
 * CopyPartResult body of UploadPartCopy. */
static int part_done(bri_obj_client *c, bri_http_req *r, bri_error *err) {
  (void)c;
  if (r->rc) return 0;
  const char *etag = r->etag;
  bri_xml_node *root = NULL;
  if (r->op == BRI_REQ_MPU_COPY) {
    bri_error ignored;
    if (bri_xml_parse(r->grow.data ? r->grow.data : "", r->grow.len, "copy part", &root, &ignored) == 0) {
      etag = bri_xml_text(root, "ETag");
    }
  }
  int rc = 0;
  if (!etag || !*etag) {
    rc = bri_error_set(err, BRI_ECORRUPT, "%s s3://%s/%s part %d: answer without an ETag", bri_store_req_name(r->op),
                       r->bucket, r->key, r->part_out->number);
  } else {
    snprintf(r->part_out->etag, sizeof r->part_out->etag, "%s", etag);
  }
  bri_xml_free(root);
  return rc;
}

static void s3_part_query(const bri_obj_client *c, bri_http_req *r, const char *upload_id, int number,
                          bri_obj_part *part) {
  (void)c;
  (void)part; /* named by the ETag of the answer */
  char num[16];
  snprintf(num, sizeof num, "%d", number);
  bri_http_req_query(r, "partNumber", num);
  bri_http_req_query(r, "uploadId", upload_id);
  r->done = part_done;
}

/* The ETag S3 gives a completed multipart object: the MD5 of the parts'
 * binary MD5s, "-" and the part count. */
static void multipart_etag(const bri_obj_part *parts, size_t n, char out[80]) {
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

static int s3_mpu_complete(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *key,
                           const char *upload_id, const bri_obj_part *parts, size_t n, bri_error *err) {
  bri_strbuf body = BRI_STRBUF_INIT;
  bri_strbuf_puts(&body, "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">");
  for (size_t i = 0; i < n; i++) {
    bri_strbuf_printf(&body, "<Part><PartNumber>%d</PartNumber><ETag>", parts[i].number);
    bri_xml_escape(&body, parts[i].etag);
    bri_strbuf_puts(&body, "</ETag></Part>");
  }
  bri_strbuf_puts(&body, "</CompleteMultipartUpload>");
  bri_http_req *r = body.oom ? NULL : bri_http_req_new(BRI_REQ_MPU_COMPLETE, "POST", bucket, key);
  bri_http_req_query(r, "uploadId", upload_id);
  if (r) {
    bri_http_req_body(r, body.data, body.len);
    r->sink = BRI_HTTP_SINK_GROW;
    r->error_in_200 = true;
  }
  int rc = bri_http_run(c, tally, r, err);
  if (rc == BRI_ENOTFOUND) {
    /* NoSuchUpload: an earlier attempt (ours, or curl's own resend) may
     * have completed it. */
    char want[80];
    multipart_etag(parts, n, want);
    bri_obj_info o;
    bri_error ignored;
    if (bri_obj_head(c, tally, bucket, key, &o, &ignored) == 0 && !strcmp(o.etag, want)) rc = 0;
    bri_obj_info_clear(&o);
  }
  bri_http_req_free(r);
  bri_strbuf_clear(&body);
  return rc;
}

static int s3_mpu_abort(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *key,
                        const char *upload_id, bri_error *err) {
  bri_http_req *r = bri_http_req_new(BRI_REQ_MPU_ABORT, "DELETE", bucket, key);
  bri_http_req_query(r, "uploadId", upload_id);
  int rc = bri_http_run(c, tally, r, err);
  if (rc == BRI_ENOTFOUND) rc = 0; /* NoSuchUpload: already gone */
  bri_http_req_free(r);
  return rc;
}

/* ---- the client ---- */

static void s3_dispose(bri_obj_client *base) {
  s3_client *c = (s3_client *)base;
  bri_aws_config_clear(&c->cfg);
  free(c->scheme);
  free(c->host);
}

static const char *const S3_TRANSIENT[] = {"InternalError", "SlowDown", "ServiceUnavailable", "RequestTimeout",
                                           "RequestTimeTooSkewed", NULL};

static const bri_obj_dialect S3_DIALECT = {
    .scheme = "s3",
    .size_limits = {BRI_S3_PART_MIN, BRI_S3_PART_MAX, 10000, BRI_S3_PART_MAX},
    .sign = s3_sign,
    .transient_codes = S3_TRANSIENT,
    .listing = &S3_LISTING,
    .copy_source = s3_copy_source,
    .part_query = s3_part_query,
    .suffix_req = s3_suffix_req,
    .get_suffix = s3_get_suffix,
    .delete_keys = s3_delete_keys,
    .mpu_create = s3_mpu_create,
    .mpu_complete = s3_mpu_complete,
    .mpu_abort = s3_mpu_abort,
    .dispose = s3_dispose,
};

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

int bri_s3_client_new(const bri_aws_config *cfg, const bri_obj_options *opt, bri_obj_client **out,
                      bri_error *err) {
  *out = NULL;
  s3_client *c = calloc(1, sizeof *c);
  if (!c) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  int rc = bri_http_client_init(&c->base, &S3_DIALECT, opt, cfg->max_attempts, err);
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
  if (rc == 0 && (!c->cfg.access_key_id || !c->cfg.secret_access_key || !c->cfg.region || !c->scheme ||
                  !c->host || (cfg->session_token && !c->cfg.session_token))) {
    rc = bri_error_set(err, sep || !cfg->endpoint ? BRI_ENOMEM : BRI_EINVAL, "S3 client: %s",
                       sep ? "out of memory" : "endpoint without a scheme");
  }
  if (rc) {
    bri_obj_client_free(&c->base);
    return rc;
  }
  *out = &c->base;
  return 0;
}

/* ---- locations ---- */

static bool bucket_ok(const char *b, size_t n) {
  if (n < 3 || n > 63 || !isalnum((unsigned char)b[0]) || !isalnum((unsigned char)b[n - 1])) return false;
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
                         "of a-z 0-9 . -)",
                         uri, (int)(n > 80 ? 80 : n), b);
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
