/* object_client.c: an object-store client's operations (see
 * object_client.h): the plain HTTP ones, the listing, copy and part
 * requests framed here and shaped by the client's dialect, a listing
 * page's XML read by the dialect's listing shape, and batches; the rest
 * handed to the dialect. */
#include "storage/object_client.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "storage/object_http.h"

void bri_obj_client_size_limits(const bri_obj_client *c, bri_obj_size_limits *out) { *out = c->dialect->size_limits; }

void bri_obj_client_free(bri_obj_client *c) {
  if (!c) return;
  c->dialect->dispose(c);
  bri_http_client_dispose(c);
  free(c);
}

void bri_obj_info_clear(bri_obj_info *o) {
  free(o->key);
  memset(o, 0, sizeof *o);
}

/* ---- single requests ---- */

int bri_obj_get(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *key, uint8_t **data,
                size_t *len, bri_error *err) {
  *data = NULL;
  *len = 0;
  bri_http_req *r = bri_http_req_new(BRI_REQ_GET, "GET", bucket, key);
  if (r) r->sink = BRI_HTTP_SINK_GROW;
  int rc = bri_http_run(c, tally, r, err);
  if (rc == 0) {
    *len = r->grow.len;
    *data = (uint8_t *)bri_strbuf_take(&r->grow);
    if (!*data)
      rc = bri_error_set(err, BRI_ENOMEM, "GET %s://%s/%s: out of memory", c->dialect->scheme, bucket, key);
  }
  bri_http_req_free(r);
  return rc;
}

int bri_obj_get_range(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *key,
                      uint64_t off, size_t len, void *buf, size_t *got, uint64_t *size, bri_error *err) {
  *got = 0;
  if (len == 0) return 0;
  bri_http_req *r = bri_http_range_req(bucket, key, off, len, buf, false);
  int rc = bri_http_run(c, tally, r, err);
  if (rc == 0) {
    *got = r->got;
    if (size) *size = r->status == 206 ? r->range_total : r->got;
  } else if (r && r->status == 416) { /* at or past the end */
    rc = 0;
    if (size) {
      bri_obj_info o = {0};
      rc = bri_obj_head(c, tally, bucket, key, &o, err);
      *size = o.size;
      bri_obj_info_clear(&o);
    }
  }
  bri_http_req_free(r);
  return rc;
}

int bri_obj_get_suffix(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *key, size_t n,
                       uint8_t **data, size_t *len, uint64_t *size, bri_error *err) {
  return c->dialect->get_suffix(c, tally, bucket, key, n, data, len, size, err);
}

/* The object a HEAD that ran with result rc describes. */
static int head_result(bri_http_req *r, int rc, bri_obj_info *out, bri_error *err) {
  memset(out, 0, sizeof *out);
  if (rc) return rc;
  out->size = bri_http_req_content_length(r);
  out->mtime = r->mtime;
  snprintf(out->etag, sizeof out->etag, "%s", r->etag);
  if (!(out->key = strdup(r->key))) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  return 0;
}

int bri_obj_head(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *key,
                 bri_obj_info *out, bri_error *err) {
  memset(out, 0, sizeof *out);
  bri_http_req *r = bri_http_req_new(BRI_REQ_HEAD, "HEAD", bucket, key);
  int rc = bri_http_run(c, tally, r, err);
  if (r) rc = head_result(r, rc, out, err);
  bri_http_req_free(r);
  return rc;
}

/* A PUT of a whole object, with the header the dialect wants on one. */
static bri_http_req *put_req(const bri_obj_client *c, const char *bucket, const char *key) {
  bri_http_req *r = bri_http_req_new(BRI_REQ_PUT, "PUT", bucket, key);
  const bri_http_pair *h = c->dialect->put_header;
  if (h) bri_http_req_header(r, h->name, h->value);
  return r;
}

/* After a retried PUT-if-absent met "taken": is the object there the one
 * we sent (our first attempt landed, its answer was lost)? */
static bool object_is(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *key,
                      const void *data, size_t len) {
  uint8_t *have = NULL;
  size_t n = 0;
  bri_error ignored;
  bool same = bri_obj_get(c, tally, bucket, key, &have, &n, &ignored) == 0 && n == len &&
              (len == 0 || !memcmp(have, data, len));
  free(have);
  return same;
}

int bri_obj_put(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *key, const void *data,
                size_t len, int flags, bri_error *err) {
  bri_http_req *r = put_req(c, bucket, key);
  if (flags & BRI_OBJ_PUT_IF_ABSENT) bri_http_req_header(r, "If-None-Match", "*");
  bri_http_req_body(r, data, len);
  if (r) r->if_absent = flags & BRI_OBJ_PUT_IF_ABSENT;
  int rc = bri_http_run(c, tally, r, err);
  if (rc == BRI_ETAKEN) {
    /* Not only after our own retry: curl resends by itself on a reused
     * connection that died, so an attempt of ours may have landed twice. */
    if (object_is(c, tally, bucket, key, data, len)) {
      rc = 0;
    } else {
      rc = bri_error_set(err, BRI_ETAKEN, "put %s://%s/%s: taken (another writer made it first)",
                         c->dialect->scheme, bucket, key);
    }
  }
  bri_http_req_free(r);
  return rc;
}

/* ---- listing ---- */

/* Undoes URL encoding of keys: %XX, and '+' for a space. */
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

void bri_obj_listing_clear(bri_obj_listing *l) {
  for (size_t i = 0; i < l->n_objects; i++) bri_obj_info_clear(&l->objects[i]);
  for (size_t i = 0; i < l->n_prefixes; i++) free(l->prefixes[i]);
  free(l->objects);
  free(l->prefixes);
  free(l->next_token);
  memset(l, 0, sizeof *l);
}

/* Appends one entry of a listing page: a prefix (k taken), or an object
 * (k taken; its other fields zero, returned to be filled). */
static int add_prefix(bri_obj_listing *out, char *k, bri_error *err) {
  char **grown = realloc(out->prefixes, (out->n_prefixes + 1) * sizeof *grown);
  if (!grown) {
    free(k);
    return bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  out->prefixes = grown;
  out->prefixes[out->n_prefixes++] = k;
  return 0;
}

static bri_obj_info *add_object(bri_obj_listing *out, char *k, bri_error *err) {
  bri_obj_info *grown = realloc(out->objects, (out->n_objects + 1) * sizeof *grown);
  if (!grown) {
    free(k);
    bri_error_set(err, BRI_ENOMEM, "out of memory");
    return NULL;
  }
  out->objects = grown;
  bri_obj_info *o = &out->objects[out->n_objects++];
  memset(o, 0, sizeof *o);
  o->key = k;
  return o;
}

/* A listing's time, in format and UTC, as seconds since the epoch (-1: not
 * one). */
static int64_t parse_time(const char *format, const char *s) {
  struct tm tm;
  memset(&tm, 0, sizeof tm);
  if (!s || !strptime(s, format, &tm)) return -1;
  return (int64_t)timegm(&tm);
}

static int parse_listing(const bri_obj_listing_shape *sh, const bri_xml_node *root, const char *what,
                         bri_obj_listing *out, bri_error *err) {
  if (strcmp(root->name, sh->root))
    return bri_error_set(err, BRI_ECORRUPT, "%s: answer <%s>, not <%s>", what, root->name, sh->root);
  const char *enc = sh->encoding ? bri_xml_text(root, sh->encoding) : NULL;
  bool url = enc && !strcmp(enc, "url");
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
    bri_obj_info *o = add_object(out, k, err);
    if (!o) return BRI_ENOMEM;
    const bri_xml_node *p = sh->props ? bri_xml_child(n, sh->props) : n;
    const char *size = p ? bri_xml_text(p, sh->size) : NULL, *etag = p ? bri_xml_text(p, sh->etag) : NULL;
    o->size = size ? strtoull(size, NULL, 10) : 0;
    o->mtime = parse_time(sh->time_format, p ? bri_xml_text(p, sh->mtime) : NULL);
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

/* A request of one listing page, in the dialect's parameters. */
static bri_http_req *list_req(const bri_obj_client *c, const char *bucket, const bri_obj_list_args *a) {
  const bri_obj_listing_shape *sh = c->dialect->listing;
  bri_http_req *r = bri_http_req_new(BRI_REQ_LIST, "GET", bucket, NULL);
  if (!r) return NULL;
  r->sink = BRI_HTTP_SINK_GROW;
  for (const bri_http_pair *p = sh->params; p->name; p++) bri_http_req_query(r, p->name, p->value);
  bri_http_req_query(r, sh->prefix_param, a->prefix ? a->prefix : "");
  if (a->delimiter) bri_http_req_query(r, sh->delimiter_param, a->delimiter);
  if (a->start_after && !sh->start_after_param) r->broken = true;
  else if (a->start_after) bri_http_req_query(r, sh->start_after_param, a->start_after);
  if (a->continuation_token) bri_http_req_query(r, sh->token_param, a->continuation_token);
  char max_keys[24];
  snprintf(max_keys, sizeof max_keys, "%d", a->max_keys);
  if (a->max_keys > 0) bri_http_req_query(r, sh->max_keys_param, max_keys);
  return r;
}

/* The listing of a list_req that ran with result rc. */
static int list_result(const bri_obj_client *c, bri_http_req *r, int rc, bri_obj_listing *out, bri_error *err) {
  memset(out, 0, sizeof *out);
  const char *prefix = "";
  for (size_t i = 0; i < r->n_query; i++)
    if (!strcmp(r->qname[i], "prefix")) prefix = r->qval[i];
  char what[600];
  snprintf(what, sizeof what, "list %s://%s/%s", c->dialect->scheme, r->bucket, prefix);
  bri_xml_node *root = NULL;
  if (rc == 0) rc = bri_xml_parse(r->grow.data ? r->grow.data : "", r->grow.len, what, &root, err);
  if (rc == 0) rc = parse_listing(c->dialect->listing, root, what, out, err);
  bri_xml_free(root);
  if (rc) bri_obj_listing_clear(out);
  return rc;
}

int bri_obj_list_page(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const bri_obj_list_args *a,
                      bri_obj_listing *out, bri_error *err) {
  memset(out, 0, sizeof *out);
  bri_http_req *r = list_req(c, bucket, a);
  int rc = bri_http_run(c, tally, r, err);
  if (r) rc = list_result(c, r, rc, out, err);
  bri_http_req_free(r);
  return rc;
}

int bri_obj_list_all(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const bri_obj_list_args *a,
                     bri_obj_listing *out, bri_error *err) {
  memset(out, 0, sizeof *out);
  bri_obj_list_args page_args = *a;
  char *token = a->continuation_token ? strdup(a->continuation_token) : NULL;
  int rc = 0;
  for (;;) {
    page_args.continuation_token = token;
    bri_obj_listing page;
    if ((rc = bri_obj_list_page(c, tally, bucket, &page_args, &page, err)) != 0) break;
    bri_obj_info *objs = realloc(out->objects, (out->n_objects + page.n_objects + 1) * sizeof *objs);
    char **pre = realloc(out->prefixes, (out->n_prefixes + page.n_prefixes + 1) * sizeof *pre);
    if (objs) out->objects = objs;
    if (pre) out->prefixes = pre;
    if (!objs || !pre) {
      bri_obj_listing_clear(&page);
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
  if (rc) bri_obj_listing_clear(out);
  return rc;
}

/* ---- deletes, copies, multipart ---- */

int bri_obj_delete(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *const *keys, size_t n,
                   int *rcs, size_t *deleted, bri_error *err) {
  *deleted = 0;
  return c->dialect->delete_keys(c, tally, bucket, keys, n, rcs, deleted, err);
}

/* A PUT made a server-side copy of src by the dialect's headers: of the
 * whole object (range NULL), or of a range as a part. */
static bri_http_req *copy_req(const bri_obj_client *c, bri_store_req op, const char *bucket, const char *key,
                              const char *src_bucket, const char *src_key, const uint64_t *range) {
  bri_http_req *r = bri_http_req_new(op, "PUT", bucket, key);
  if (r) {
    r->sink = BRI_HTTP_SINK_GROW;
    c->dialect->copy_source(c, r, src_bucket, src_key, range);
  }
  return r;
}

int bri_obj_copy(bri_obj_client *c, bri_store_counts *tally, const char *src_bucket, const char *src_key,
                 const char *bucket, const char *key, uint64_t size, bri_error *err) {
  bri_http_req *r = copy_req(c, BRI_REQ_COPY, bucket, key, src_bucket, src_key, NULL);
  if (r) r->copied = size; /* the answer does not say */
  int rc = bri_http_run(c, tally, r, err);
  if (rc == BRI_ENOTFOUND) {
    rc = bri_error_set(err, BRI_ENOTFOUND, "copy %s://%s/%s to %s://%s/%s: the source is missing",
                       c->dialect->scheme, src_bucket, src_key, c->dialect->scheme, bucket, key);
  }
  bri_http_req_free(r);
  return rc;
}

int bri_obj_mpu_create(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *key,
                       char **upload_id, bri_error *err) {
  *upload_id = NULL;
  return c->dialect->mpu_create(c, tally, bucket, key, upload_id, err);
}

int bri_obj_mpu_complete(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *key,
                         const char *upload_id, const bri_obj_part *parts, size_t n, bri_error *err) {
  return c->dialect->mpu_complete(c, tally, bucket, key, upload_id, parts, n, err);
}

int bri_obj_mpu_abort(bri_obj_client *c, bri_store_counts *tally, const char *bucket, const char *key,
                      const char *upload_id, bri_error *err) {
  return c->dialect->mpu_abort(c, tally, bucket, key, upload_id, err);
}

/* ---- batches ---- */

struct bri_obj_batch {
  bri_obj_client *c;
  bri_store_counts *tally;
  bri_http_req **reqs;
  size_t n, cap;
};

bri_obj_batch *bri_obj_batch_new(bri_obj_client *c, bri_store_counts *tally) {
  bri_obj_batch *b = calloc(1, sizeof *b);
  if (b) b->c = c, b->tally = tally;
  return b;
}

void bri_obj_batch_free(bri_obj_batch *b) {
  if (!b) return;
  for (size_t i = 0; i < b->n; i++) bri_http_req_free(b->reqs[i]);
  free(b->reqs);
  free(b);
}

static int batch_add(bri_obj_batch *b, bri_http_req *r, bri_error *err) {
  if (!r || r->broken) {
    bri_http_req_free(r);
    return bri_error_set(err, BRI_ENOMEM, "batch: out of memory");
  }
  if (b->n == b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 16;
    bri_http_req **grown = realloc(b->reqs, cap * sizeof *grown);
    if (!grown) {
      bri_http_req_free(r);
      return bri_error_set(err, BRI_ENOMEM, "batch: out of memory");
    }
    b->reqs = grown;
    b->cap = cap;
  }
  b->reqs[b->n++] = r;
  return 0;
}

int bri_obj_batch_get_range(bri_obj_batch *b, const char *bucket, const char *key, uint64_t off, size_t len,
                            void *buf, bri_error *err) {
  if (len == 0) return 0;
  return batch_add(b, bri_http_range_req(bucket, key, off, len, buf, true), err);
}

int bri_obj_batch_put(bri_obj_batch *b, const char *bucket, const char *key, const void *data, size_t len,
                      bri_error *err) {
  bri_http_req *r = put_req(b->c, bucket, key);
  bri_http_req_body(r, data, len);
  return batch_add(b, r, err);
}

/* A part's PUT, in the dialect's query. */
static bri_http_req *part_req(const bri_obj_client *c, bri_http_req *r, const char *upload_id, int number,
                              bri_obj_part *part) {
  if (!r) return NULL;
  r->part_out = part;
  part->number = number;
  part->etag[0] = '\0';
  c->dialect->part_query(c, r, upload_id, number, part);
  return r;
}

int bri_obj_batch_put_part(bri_obj_batch *b, const char *bucket, const char *key, const char *upload_id,
                           int number, const void *data, size_t len, bri_obj_part *part, bri_error *err) {
  bri_http_req *r = part_req(b->c, bri_http_req_new(BRI_REQ_MPU_PART, "PUT", bucket, key), upload_id, number, part);
  bri_http_req_body(r, data, len);
  return batch_add(b, r, err);
}

int bri_obj_batch_copy_part(bri_obj_batch *b, const char *bucket, const char *key, const char *upload_id,
                            int number, const char *src_bucket, const char *src_key, uint64_t off, uint64_t len,
                            bri_obj_part *part, bri_error *err) {
  if (len == 0) return bri_error_set(err, BRI_EINVAL, "copy part %d: an empty range", number);
  const uint64_t range[2] = {off, len};
  bri_http_req *r = copy_req(b->c, BRI_REQ_MPU_COPY, bucket, key, src_bucket, src_key, range);
  if (r) r->copied = len;
  return batch_add(b, part_req(b->c, r, upload_id, number, part), err);
}

int bri_obj_batch_get_suffix(bri_obj_batch *b, const char *bucket, const char *key, size_t n, uint8_t **data,
                             size_t *len, uint64_t *size, int *rc, bri_error *err) {
  bri_http_req *r = b->c->dialect->suffix_req(b->c, bucket, key, n);
  if (r) {
    r->suffix = n;
    r->suffix_data = data;
    r->suffix_len = len;
    r->suffix_size = size;
    r->suffix_rc = rc;
  }
  *data = NULL;
  *rc = BRI_EIO;
  return batch_add(b, r, err);
}

static int head_done(bri_obj_client *c, bri_http_req *r, bri_error *err) {
  (void)c;
  (void)err;
  bri_error e;
  *r->head_rc = head_result(r, r->rc, r->head_out, &e);
  return 0;
}

int bri_obj_batch_head(bri_obj_batch *b, const char *bucket, const char *key, bri_obj_info *out, int *rc,
                       bri_error *err) {
  bri_http_req *r = bri_http_req_new(BRI_REQ_HEAD, "HEAD", bucket, key);
  if (r) {
    r->done = head_done;
    r->head_out = out;
    r->head_rc = rc;
  }
  memset(out, 0, sizeof *out);
  *rc = BRI_EIO;
  return batch_add(b, r, err);
}

static int list_done(bri_obj_client *c, bri_http_req *r, bri_error *err) {
  (void)err;
  bri_error e = r->err;
  *r->list_rc = list_result(c, r, r->rc, r->list_out, &e);
  if (*r->list_rc && r->list_err) *r->list_err = e;
  return 0;
}

int bri_obj_batch_list(bri_obj_batch *b, const char *bucket, const bri_obj_list_args *a, bri_obj_listing *out,
                       int *rc, bri_error *why, bri_error *err) {
  bri_http_req *r = list_req(b->c, bucket, a);
  if (r) {
    r->done = list_done;
    r->list_out = out;
    r->list_rc = rc;
    r->list_err = why;
  }
  memset(out, 0, sizeof *out);
  *rc = BRI_EIO;
  return batch_add(b, r, err);
}

/* Runs reqs[0..n) and their hooks, then, as the next round, the requests
 * the hooks asked for, till none is asked. The first round's result (and
 * its hooks') is the batch's; later rounds (err NULL) report only through
 * their own hooks. */
static int run_rounds(bri_obj_batch *b, bri_http_req **reqs, size_t n, bri_error *err) {
  bri_http_req **next = calloc(n + 1, sizeof *next);
  if (!next) return bri_error_set(err, BRI_ENOMEM, "batch: out of memory");
  int rc = bri_http_run_all(b->c, b->tally, reqs, n, err);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    bri_http_req *r = reqs[i];
    bri_error e;
    int h = r->done ? r->done(b->c, r, &e) : 0;
    if (h && rc == 0) {
      rc = h;
      if (err) *err = e;
    }
    if (r->next) next[k++] = r->next;
    r->next = NULL;
  }
  if (k) run_rounds(b, next, k, NULL);
  for (size_t i = 0; i < k; i++) bri_http_req_free(next[i]);
  free(next);
  return rc;
}

int bri_obj_batch_run(bri_obj_batch *b, bri_error *err) { return run_rounds(b, b->reqs, b->n, err); }
