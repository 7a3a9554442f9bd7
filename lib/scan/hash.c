/* hash.c: canonical value encoding and column SHA-256 (see hash.h).
 *
 * The ArrowSchema is compiled into a tree of hnode; framing a row walks that
 * tree over the ArrowArray. Leaves frame themselves directly; a nested value
 * is measured (clen) and then emitted, which costs one extra walk per level
 * of nesting but never a copy. Bytes go through a 256 KiB buffer into one
 * EVP SHA-256 context; large runs (blob chunks) bypass the buffer. */
#include "scan/hash.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lance/file/arrow_build.h"
#include "util/bytes.h"
#include "util/fsutil.h"

#define SINK_BYTES ((size_t)256 << 10)
#define MAX_DEPTH 64

typedef enum {
  N_NULL, N_BOOL, N_INT, N_FLOAT, N_DECIMAL, N_VAR, N_FIXED,
  N_LIST, N_FSL, N_STRUCT, N_BLOB, N_DICT,
} nkind;

/* How a Blob v2 field is hashed (hash.h): top-level column, payload bytes
 * (reached through structs only), or kind+size (inside a list, or payloads
 * not wanted). */
enum { BM_TOP, BM_PAYLOAD, BM_KINDSIZE };
/* Descriptor children of a Blob v2 struct, found by name. */
enum { D_KIND, D_POS, D_SIZE, D_ID, D_URI, D_N };
static const char *const DESC_NAMES[D_N] = {"kind", "position", "size", "blob_id", "blob_uri"};
static const char *const DESC_FORMATS[D_N] = {"C", "L", "L", "I", "u"};

typedef struct hnode {
  nkind k;
  int width;        /* bytes: ints, floats, decimals, offsets (var, list) */
  bool is_signed;   /* N_INT, N_DICT index */
  int64_t fixed;    /* N_FIXED byte width, N_FSL list size */
  struct hnode **ch;
  size_t n_ch;
  struct hnode *dict; /* N_DICT: the value type */
  char *path;         /* dotted path, for messages and blob sources */
  int bmode;          /* N_BLOB */
  int desc[D_N];      /* N_BLOB: child index of each descriptor field */
  int uri_width;      /* N_BLOB: offsets of blob_uri, 4 ("u") or 8 ("U") */
  int64_t n_desc;     /* N_BLOB: children of the descriptor struct */
} hnode;

struct bri_column_hasher {
  hnode *root;
  char *sig;            /* type signature, for check_schema */
  bool blob_bytes;
  bool finished;
  EVP_MD_CTX *md;
  uint8_t *buf;
  size_t pos;
  /* arrays whose structure was checked: an open-addressing pointer set, so
   * that rows taken in key order from many arrays cost one probe each */
  const struct ArrowArray **checked;
  size_t checked_cap, checked_n;
  bri_column_hash res;
  char **paths;         /* struct-only blob paths below the top (hashed by payload) */
  size_t n_paths;
  uint64_t streamed;    /* bytes of the payload being streamed */
};

/* ------------------------------------------------------------ metadata */

static bool is_blob_v2(const struct ArrowSchema *s) {
  int32_t n;
  const char *v = bri_arrow_metadata_get(s->metadata, "ARROW:extension:name", &n);
  return v && n == 13 && !memcmp(v, "lance.blob.v2", 13) && !strcmp(s->format, "+s");
}

/* ------------------------------------------------------------ compile */

static void node_free(hnode *n) {
  if (!n) return;
  for (size_t i = 0; i < n->n_ch; i++) node_free(n->ch[i]);
  free(n->ch);
  node_free(n->dict);
  free(n->path);
  free(n);
}

/* Integer formats of the C data interface: c C s S i I l L. */
static bool int_format(const char *f, int *width, bool *is_signed) {
  static const char L[] = "cCsSiIlL";
  if (!f[0] || f[1]) return false;
  const char *p = strchr(L, f[0]);
  if (!p) return false;
  int k = (int)(p - L);
  *width = 1 << (k / 2);
  *is_signed = (k % 2) == 0;
  return true;
}

/* Parses a positive decimal integer after prefix (e.g. "w:16"). */
static bool fmt_num(const char *f, const char *prefix, int64_t *v) {
  size_t n = strlen(prefix);
  if (strncmp(f, prefix, n)) return false;
  const char *p = f + n;
  if (*p < '0' || *p > '9') return false;
  int64_t x = 0;
  for (; *p >= '0' && *p <= '9'; p++) {
    if (x > (INT64_MAX - 9) / 10) return false;
    x = x * 10 + (*p - '0');
  }
  if (*p || x <= 0) return false;
  *v = x;
  return true;
}

typedef struct cctx {
  bri_column_hasher *h;
  bri_error *err;
} cctx;

static int compile(cctx *c, const struct ArrowSchema *s, char *path, bool under_list, int depth,
                   hnode **out);

static int compile_children(cctx *c, const struct ArrowSchema *s, hnode *n, bool list_child,
                            bool under_list, int depth) {
  if (s->n_children < 0 || (s->n_children > 0 && !s->children))
    return bri_error_set(c->err, BRI_EINVAL, "%s: schema has a bad child list", n->path);
  n->ch = calloc(s->n_children ? (size_t)s->n_children : 1, sizeof *n->ch);
  if (!n->ch) return bri_error_set(c->err, BRI_ENOMEM, "out of memory");
  for (int64_t i = 0; i < s->n_children; i++) {
    const struct ArrowSchema *cs = s->children[i];
    if (!cs || !cs->format)
      return bri_error_set(c->err, BRI_EINVAL, "%s: child %lld has no schema", n->path,
                           (long long)i);
    char *cp = list_child ? bri_strdupf("%s[]", n->path)
                          : bri_strdupf("%s.%s", n->path, cs->name ? cs->name : "");
    if (!cp) return bri_error_set(c->err, BRI_ENOMEM, "out of memory");
    n->n_ch = (size_t)i + 1;
    int rc = compile(c, cs, cp, under_list, depth + 1, &n->ch[i]);
    if (rc) return rc;
  }
  return 0;
}

static int compile_blob(cctx *c, const struct ArrowSchema *s, hnode *n, bool under_list,
                        int depth) {
  n->k = N_BLOB;
  n->bmode = depth == 0 ? BM_TOP : (under_list || !c->h->blob_bytes) ? BM_KINDSIZE : BM_PAYLOAD;
  for (int d = 0; d < D_N; d++) n->desc[d] = -1;
  n->n_desc = s->n_children;
  for (int64_t i = 0; i < s->n_children; i++) {
    const struct ArrowSchema *cs = s->children ? s->children[i] : NULL;
    if (!cs || !cs->name || !cs->format) continue;
    for (int d = 0; d < D_N; d++) {
      if (strcmp(cs->name, DESC_NAMES[d])) continue;
      bool ok = !strcmp(cs->format, DESC_FORMATS[d]) || (d == D_URI && !strcmp(cs->format, "U"));
      if (!ok)
        return bri_error_set(c->err, BRI_EINVAL,
                             "%s: blob descriptor field %s has Arrow format \"%s\", expected "
                             "\"%s\"",
                             n->path, cs->name, cs->format, DESC_FORMATS[d]);
      n->desc[d] = (int)i;
      if (d == D_URI) n->uri_width = cs->format[0] == 'U' ? 8 : 4;
    }
  }
  for (int d = 0; d < D_N; d++)
    if (n->desc[d] < 0)
      return bri_error_set(c->err, BRI_EINVAL,
                           "%s: Blob v2 field is not a descriptor struct (no \"%s\" child)",
                           n->path, DESC_NAMES[d]);
  if (n->bmode == BM_PAYLOAD) {
    char **grown = realloc(c->h->paths, (c->h->n_paths + 1) * sizeof *grown);
    char *p = strdup(n->path);
    if (!grown || !p) {
      free(p);
      if (grown) c->h->paths = grown;
      return bri_error_set(c->err, BRI_ENOMEM, "out of memory");
    }
    c->h->paths = grown;
    c->h->paths[c->h->n_paths++] = p;
  }
  return 0;
}

/* path is taken over by the node. */
static int compile(cctx *c, const struct ArrowSchema *s, char *path, bool under_list, int depth,
                   hnode **out) {
  hnode *n = calloc(1, sizeof *n);
  if (!n) {
    free(path);
    return bri_error_set(c->err, BRI_ENOMEM, "out of memory");
  }
  *out = n;
  n->path = path;
  if (depth > MAX_DEPTH)
    return bri_error_set(c->err, BRI_EUNSUPPORTED, "%s: nested deeper than %d levels", path,
                         MAX_DEPTH);
  const char *f = s->format;
  if (s->dictionary) {
    n->k = N_DICT;
    if (!int_format(f, &n->width, &n->is_signed))
      return bri_error_set(c->err, BRI_EINVAL, "%s: dictionary index format \"%s\" is not an "
                           "integer", path, f);
    char *dp = strdup(path);
    if (!dp) return bri_error_set(c->err, BRI_ENOMEM, "out of memory");
    return compile(c, s->dictionary, dp, under_list, depth + 1, &n->dict);
  }
  if (is_blob_v2(s)) return compile_blob(c, s, n, under_list, depth);
  int64_t v;
  if (!strcmp(f, "n")) {
    n->k = N_NULL;
  } else if (!strcmp(f, "b")) {
    n->k = N_BOOL;
  } else if (int_format(f, &n->width, &n->is_signed)) {
    n->k = N_INT;
  } else if (!strcmp(f, "e") || !strcmp(f, "f") || !strcmp(f, "g")) {
    n->k = N_FLOAT;
    n->width = f[0] == 'e' ? 2 : f[0] == 'f' ? 4 : 8;
  } else if (!strcmp(f, "tdD") || !strcmp(f, "tts") || !strcmp(f, "ttm")) {
    n->k = N_INT, n->width = 4, n->is_signed = true; /* date32, time32 */
  } else if (!strcmp(f, "tdm") || !strcmp(f, "ttu") || !strcmp(f, "ttn") ||
             (!strncmp(f, "ts", 2) && f[2] && strchr("smun", f[2]) && f[3] == ':') ||
             (!strncmp(f, "tD", 2) && f[2] && strchr("smun", f[2]) && !f[3])) {
    n->k = N_INT, n->width = 8, n->is_signed = true; /* date64, time64, timestamp, duration */
  } else if (!strncmp(f, "d:", 2)) {
    const char *comma = strchr(f + 2, ',');
    const char *w = comma ? strchr(comma + 1, ',') : NULL;
    int bits = w ? atoi(w + 1) : 128;
    if (!comma || (bits != 32 && bits != 64 && bits != 128 && bits != 256))
      return bri_error_set(c->err, BRI_EUNSUPPORTED, "%s: decimal format \"%s\"", path, f);
    n->k = N_DECIMAL, n->width = bits / 8;
  } else if (!strcmp(f, "u") || !strcmp(f, "z")) {
    n->k = N_VAR, n->width = 4;
  } else if (!strcmp(f, "U") || !strcmp(f, "Z")) {
    n->k = N_VAR, n->width = 8;
  } else if (fmt_num(f, "w:", &v)) {
    n->k = N_FIXED, n->fixed = v;
  } else if (!strcmp(f, "+l") || !strcmp(f, "+L") || !strcmp(f, "+m")) {
    n->k = N_LIST, n->width = f[1] == 'L' ? 8 : 4;
    if (s->n_children != 1)
      return bri_error_set(c->err, BRI_EINVAL, "%s: list schema has %lld children", path,
                           (long long)s->n_children);
    return compile_children(c, s, n, true, true, depth);
  } else if (fmt_num(f, "+w:", &v)) {
    n->k = N_FSL, n->fixed = v;
    if (s->n_children != 1)
      return bri_error_set(c->err, BRI_EINVAL, "%s: fixed-size list schema has %lld children",
                           path, (long long)s->n_children);
    return compile_children(c, s, n, true, true, depth);
  } else if (!strcmp(f, "+s")) {
    n->k = N_STRUCT;
    return compile_children(c, s, n, false, under_list, depth);
  } else {
    return bri_error_set(c->err, BRI_EUNSUPPORTED,
                         "%s: no canonical encoding for Arrow format \"%s\"", path, f);
  }
  return 0;
}

/* A string naming the type tree (formats, blob marks, dictionaries). */
static int signature(const struct ArrowSchema *s, int depth, char **out) {
  *out = NULL;
  if (depth > MAX_DEPTH) return BRI_EUNSUPPORTED;
  char *acc = bri_strdupf("%s%s", s->format ? s->format : "?", is_blob_v2(s) ? "#blob" : "");
  if (!acc) return BRI_ENOMEM;
  if (s->dictionary) {
    char *d;
    int rc = signature(s->dictionary, depth + 1, &d);
    if (rc) {
      free(acc);
      return rc;
    }
    char *x = bri_strdupf("%s{%s}", acc, d);
    free(acc), free(d);
    if (!(acc = x)) return BRI_ENOMEM;
  }
  for (int64_t i = 0; i < s->n_children; i++) {
    char *d;
    int rc = s->children && s->children[i] ? signature(s->children[i], depth + 1, &d) : BRI_EINVAL;
    if (rc) {
      free(acc);
      return rc;
    }
    char *x = bri_strdupf("%s%s%s:%s", acc, i ? "," : "(",
                          s->children[i]->name ? s->children[i]->name : "", d);
    free(acc), free(d);
    if (!(acc = x)) return BRI_ENOMEM;
  }
  if (s->n_children > 0) {
    char *x = bri_strdupf("%s)", acc);
    free(acc);
    if (!(acc = x)) return BRI_ENOMEM;
  }
  *out = acc;
  return 0;
}

void bri_column_hasher_free(bri_column_hasher *h) {
  if (!h) return;
  node_free(h->root);
  free(h->sig);
  if (h->md) EVP_MD_CTX_free(h->md);
  free(h->buf);
  free(h->checked);
  for (size_t i = 0; i < h->n_paths; i++) free(h->paths[i]);
  free(h->paths);
  free(h);
}

int bri_column_hasher_new(const struct ArrowSchema *schema, bool blob_bytes,
                          bri_column_hasher **out, bri_error *err) {
  *out = NULL;
  if (!schema || !schema->format)
    return bri_error_set(err, BRI_EINVAL, "column hasher: no schema");
  bri_column_hasher *h = calloc(1, sizeof *h);
  if (!h) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  h->blob_bytes = blob_bytes;
  h->buf = malloc(SINK_BYTES);
  h->md = EVP_MD_CTX_new();
  int rc = 0;
  if (!h->buf || !h->md) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  else if (EVP_DigestInit_ex(h->md, EVP_sha256(), NULL) != 1)
    rc = bri_error_set(err, BRI_EIO, "OpenSSL: cannot initialize SHA-256");
  if (!rc) {
    cctx c = {h, err};
    char *p = strdup(schema->name ? schema->name : "");
    rc = p ? compile(&c, schema, p, false, 0, &h->root)
           : bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  if (!rc && (rc = signature(schema, 0, &h->sig)))
    rc = bri_error_set(err, rc, "column %s: %s", h->root->path,
                       rc == BRI_ENOMEM ? "out of memory" : "schema too deep or malformed");
  if (rc) {
    bri_column_hasher_free(h);
    return rc;
  }
  h->res.blob = h->root->k == N_BLOB;
  h->res.nested_blobs = false;
  /* nested_blobs: some Blob v2 field below the top (oracle's hasNestedBlob) */
  if (!h->res.blob) {
    hnode *stack[MAX_DEPTH * 4 + 8];
    size_t sp = 0;
    stack[sp++] = h->root;
    while (sp && !h->res.nested_blobs) {
      hnode *n = stack[--sp];
      if (n != h->root && n->k == N_BLOB) h->res.nested_blobs = true;
      for (size_t i = 0; i < n->n_ch && sp < sizeof stack / sizeof stack[0]; i++)
        stack[sp++] = n->ch[i];
    }
  }
  *out = h;
  return 0;
}

int bri_column_hasher_check_schema(const bri_column_hasher *h, const struct ArrowSchema *schema,
                                   bri_error *err) {
  char *s;
  int rc = signature(schema, 0, &s);
  if (rc)
    return bri_error_set(err, rc, "column %s: %s", h->root->path,
                         rc == BRI_ENOMEM ? "out of memory" : "schema too deep or malformed");
  int same = !strcmp(s, h->sig);
  free(s);
  if (!same)
    return bri_error_set(err, BRI_EINVAL, "column %s: arrays disagree on the type (%s first)",
                         h->root->path, h->sig);
  return 0;
}

/* ------------------------------------------------------------ array checks */

static inline uint64_t offset_at(const void *buf, int width, int64_t j) {
  if (width == 4) {
    int32_t v;
    memcpy(&v, (const uint8_t *)buf + 4 * j, 4);
    return (uint64_t)(int64_t)v;
  }
  int64_t v;
  memcpy(&v, (const uint8_t *)buf + 8 * j, 8);
  return (uint64_t)v;
}

static int n_buffers_of(const hnode *n) {
  switch (n->k) {
  case N_NULL: return 0;
  case N_VAR: return 3;
  case N_STRUCT: case N_BLOB: case N_FSL: return 1;
  default: return 2;
  }
}

/* Structure of a against n, once per array: counts, buffers present, and
 * list offsets ascending inside the child (the C interface carries no buffer
 * lengths, so offsets are the one thing that can be checked). */
static int check_array(const hnode *n, const struct ArrowArray *a, int depth, bri_error *err) {
  if (!a || depth > MAX_DEPTH)
    return bri_error_set(err, BRI_EINVAL, "%s: missing array", n->path);
  if (a->length < 0 || a->offset < 0 || a->length > INT64_MAX - a->offset)
    return bri_error_set(err, BRI_EINVAL, "%s: bad array length %lld / offset %lld", n->path,
                         (long long)a->length, (long long)a->offset);
  int nb = n_buffers_of(n);
  if (a->n_buffers < nb || (nb > 0 && !a->buffers))
    return bri_error_set(err, BRI_EINVAL, "%s: array has %lld buffers, expected %d", n->path,
                         (long long)a->n_buffers, nb);
  int64_t end = a->offset + a->length;
  for (int b = 1; b < nb; b++)
    if (!a->buffers[b] && a->length > 0 && !(n->k == N_VAR && b == 2))
      return bri_error_set(err, BRI_EINVAL, "%s: array buffer %d is NULL", n->path, b);
  if (n->k == N_DICT) {
    if (!a->dictionary) return bri_error_set(err, BRI_EINVAL, "%s: no dictionary array", n->path);
    return check_array(n->dict, a->dictionary, depth + 1, err);
  }
  int64_t want_ch = n->k == N_BLOB ? n->n_desc : (int64_t)n->n_ch;
  if ((n->k == N_LIST || n->k == N_FSL || n->k == N_STRUCT || n->k == N_BLOB) &&
      (a->n_children != want_ch || (want_ch && !a->children)))
    return bri_error_set(err, BRI_EINVAL, "%s: array has %lld children, expected %lld", n->path,
                         (long long)a->n_children, (long long)want_ch);
  if (n->k == N_VAR || n->k == N_LIST) {
    if (a->length == 0) goto kids;
    uint64_t prev = offset_at(a->buffers[1], n->width, a->offset);
    for (int64_t j = a->offset + 1; j <= end; j++) {
      uint64_t o = offset_at(a->buffers[1], n->width, j);
      if (o < prev || o > INT64_MAX)
        return bri_error_set(err, BRI_EINVAL, "%s: offsets decrease at %lld", n->path,
                             (long long)j);
      prev = o;
    }
    if (n->k == N_VAR && prev > 0 && !a->buffers[2])
      return bri_error_set(err, BRI_EINVAL, "%s: array buffer 2 is NULL", n->path);
    if (n->k == N_LIST) {
      const struct ArrowArray *c = a->children[0];
      if (!c || prev > (uint64_t)c->length)
        return bri_error_set(err, BRI_EINVAL, "%s: list offsets reach %llu, child has %lld",
                             n->path, (unsigned long long)prev, c ? (long long)c->length : 0LL);
    }
  }
  if (n->k == N_FSL) {
    const struct ArrowArray *c = a->children[0];
    if (!c || (end > 0 && (end > INT64_MAX / n->fixed || end * n->fixed > c->length)))
      return bri_error_set(err, BRI_EINVAL, "%s: fixed-size list child too short", n->path);
  }
  if (n->k == N_STRUCT || n->k == N_BLOB) {
    for (int64_t i = 0; i < want_ch; i++) {
      const struct ArrowArray *c = a->children[i];
      if (!c || c->length < end)
        return bri_error_set(err, BRI_EINVAL, "%s: struct child %lld shorter than the struct",
                             n->path, (long long)i);
    }
  }
kids:
  if (n->k == N_BLOB) {
    for (int d = 0; d < D_N; d++) {
      const struct ArrowArray *c = a->children[n->desc[d]];
      int want = d == D_URI ? 3 : 2;
      if (c->n_buffers < want || !c->buffers || (c->length > 0 && !c->buffers[1]))
        return bri_error_set(err, BRI_EINVAL, "%s: descriptor field %s has bad buffers", n->path,
                             DESC_NAMES[d]);
      if (c->offset < 0) return bri_error_set(err, BRI_EINVAL, "%s: bad offset", n->path);
    }
    return 0;
  }
  for (size_t i = 0; i < n->n_ch; i++) {
    int rc = check_array(n->ch[i], a->children[i], depth + 1, err);
    if (rc) return rc;
  }
  return 0;
}

/* ------------------------------------------------------------ sink */

static int flush(bri_column_hasher *h, bri_error *err) {
  if (h->pos && EVP_DigestUpdate(h->md, h->buf, h->pos) != 1)
    return bri_error_set(err, BRI_EIO, "OpenSSL: SHA-256 update failed");
  h->pos = 0;
  return 0;
}

static inline int put(bri_column_hasher *h, const void *p, size_t n, bri_error *err) {
  if (n <= SINK_BYTES - h->pos) {
    memcpy(h->buf + h->pos, p, n);
    h->pos += n;
    return 0;
  }
  int rc = flush(h, err);
  if (rc) return rc;
  if (n >= SINK_BYTES / 2) {
    if (EVP_DigestUpdate(h->md, p, n) != 1)
      return bri_error_set(err, BRI_EIO, "OpenSSL: SHA-256 update failed");
    return 0;
  }
  memcpy(h->buf, p, n);
  h->pos = n;
  return 0;
}

static inline int put_head(bri_column_hasher *h, uint64_t len, bri_error *err) {
  uint8_t b[9];
  b[0] = 1;
  bri_put_le64(b + 1, len);
  return put(h, b, 9, err);
}

static inline int put_null(bri_column_hasher *h, bri_error *err) {
  static const uint8_t z = 0;
  return put(h, &z, 1, err);
}

/* ------------------------------------------------------------ values */

/* Decimal text of an integer, right-aligned in buf[24]; returns its start. */
static char *u64_text(uint64_t v, char *end) {
  char *p = end;
  do {
    *--p = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  return p;
}

static char *int_text(const hnode *n, const void *values, int64_t j, char buf[24]) {
  const uint8_t *b = (const uint8_t *)values + (size_t)j * (size_t)n->width;
  uint64_t u = 0;
  int64_t s = 0;
  switch (n->width) {
  case 1: if (n->is_signed) s = (int8_t)b[0]; else u = b[0]; break;
  case 2: { uint16_t x; memcpy(&x, b, 2); if (n->is_signed) s = (int16_t)x; else u = x; break; }
  case 4: { uint32_t x; memcpy(&x, b, 4); if (n->is_signed) s = (int32_t)x; else u = x; break; }
  default: { uint64_t x; memcpy(&x, b, 8); if (n->is_signed) s = (int64_t)x; else u = x; break; }
  }
  char *end = buf + 24;
  if (!n->is_signed) return u64_text(u, end);
  if (s >= 0) return u64_text((uint64_t)s, end);
  char *p = u64_text((uint64_t)0 - (uint64_t)s, end);
  *--p = '-';
  return p;
}

static int64_t dict_index(const hnode *n, const struct ArrowArray *a, int64_t i) {
  const uint8_t *b = (const uint8_t *)a->buffers[1] + (size_t)(a->offset + i) * (size_t)n->width;
  switch (n->width) {
  case 1: return n->is_signed ? (int64_t)(int8_t)b[0] : (int64_t)b[0];
  case 2: { uint16_t x; memcpy(&x, b, 2); return n->is_signed ? (int64_t)(int16_t)x : (int64_t)x; }
  case 4: { uint32_t x; memcpy(&x, b, 4); return n->is_signed ? (int64_t)(int32_t)x : (int64_t)x; }
  default: { uint64_t x; memcpy(&x, b, 8); return (!n->is_signed && x > INT64_MAX) ? -1 : (int64_t)x; }
  }
}

typedef struct blob_val {
  bool valid;
  bri_blob_desc d;
} blob_val;

static void read_desc(const hnode *n, const struct ArrowArray *a, int64_t i, blob_val *v) {
  memset(v, 0, sizeof *v);
  if (!bri_arrow_valid(a, i)) return;
  int64_t j = a->offset + i; /* index in the children's logical space */
  const struct ArrowArray *k = a->children[n->desc[D_KIND]];
  if (!bri_arrow_valid(k, j)) return; /* a null kind is a null blob (docs/format/blob.md 2) */
  v->valid = true;
  const struct ArrowArray *p = a->children[n->desc[D_POS]], *s = a->children[n->desc[D_SIZE]],
                          *id = a->children[n->desc[D_ID]], *u = a->children[n->desc[D_URI]];
  v->d.kind = ((const uint8_t *)k->buffers[1])[k->offset + j];
  memcpy(&v->d.position, (const uint8_t *)p->buffers[1] + 8 * (p->offset + j), 8);
  memcpy(&v->d.size, (const uint8_t *)s->buffers[1] + 8 * (s->offset + j), 8);
  memcpy(&v->d.blob_id, (const uint8_t *)id->buffers[1] + 4 * (id->offset + j), 4);
  if (bri_arrow_valid(u, j)) {
    uint64_t lo = offset_at(u->buffers[1], n->uri_width, u->offset + j);
    uint64_t hi = offset_at(u->buffers[1], n->uri_width, u->offset + j + 1);
    if (hi > lo && u->buffers[2]) {
      v->d.uri = (const char *)u->buffers[2] + lo;
      v->d.uri_len = (size_t)(hi - lo);
    }
  }
}

static int payload_length(const hnode *n, const bri_blob_desc *d, const bri_blob_source *src,
                          int64_t *len, bri_error *err) {
  if (!src || !src->length)
    return bri_error_set(err, BRI_EINVAL, "%s: Blob v2 payloads are hashed but no blob source was given",
                         n->path);
  uint64_t l;
  int rc = src->length(src->ctx, n->path, d, &l, err);
  if (rc) return rc;
  if (l > (uint64_t)INT64_MAX - 9)
    return bri_error_set(err, BRI_EINVAL, "%s: blob payload of %llu bytes", n->path,
                         (unsigned long long)l);
  *len = (int64_t)l;
  return 0;
}

/* Adds 1 or 9 + cl to *total without overflow. */
static int add_frame_len(const hnode *n, int64_t cl, int64_t *total, bri_error *err) {
  int64_t f = cl < 0 ? 1 : cl + 9;
  if (cl > INT64_MAX - 9 || *total > INT64_MAX - f)
    return bri_error_set(err, BRI_EINVAL, "%s: canonical value too large", n->path);
  *total += f;
  return 0;
}

/* Child index range of list-like row i. */
static void list_range(const hnode *n, const struct ArrowArray *a, int64_t i, int64_t *lo,
                       int64_t *hi) {
  if (n->k == N_FSL) {
    *lo = (a->offset + i) * n->fixed;
    *hi = *lo + n->fixed;
  } else {
    *lo = (int64_t)offset_at(a->buffers[1], n->width, a->offset + i);
    *hi = (int64_t)offset_at(a->buffers[1], n->width, a->offset + i + 1);
  }
}

/* Canonical width of a fixed-width leaf (floats, decimals, fixed binary,
 * bool), 0 for anything else: lists of these are measured by counting. */
static int64_t fixed_width(const hnode *n) {
  switch (n->k) {
  case N_FLOAT: case N_DECIMAL: return n->width;
  case N_FIXED: return n->fixed;
  case N_BOOL: return 1;
  default: return 0;
  }
}

/* Length of the canonical bytes of row i (-1 = null). */
static int clen(const hnode *n, const struct ArrowArray *a, int64_t i, const bri_blob_source *src,
                int64_t *len, bri_error *err) {
  *len = -1;
  if (n->k == N_NULL) return 0;
  if (n->k == N_BLOB) {
    blob_val v;
    read_desc(n, a, i, &v);
    if (!v.valid) return 0;
    if (n->bmode == BM_KINDSIZE) {
      *len = 9;
      return 0;
    }
    return payload_length(n, &v.d, src, len, err);
  }
  if (!bri_arrow_valid(a, i)) return 0;
  char buf[24];
  int64_t lo, hi, total = 0, cl;
  int rc;
  switch (n->k) {
  case N_DICT: {
    int64_t k = dict_index(n, a, i);
    if (k < 0 || k >= a->dictionary->length)
      return bri_error_set(err, BRI_EINVAL, "%s: dictionary index %lld outside [0, %lld)",
                           n->path, (long long)k, (long long)a->dictionary->length);
    return clen(n->dict, a->dictionary, k, src, len, err);
  }
  case N_BOOL: *len = 1; return 0;
  case N_INT: *len = (int64_t)(buf + 24 - int_text(n, a->buffers[1], a->offset + i, buf)); return 0;
  case N_FLOAT: case N_DECIMAL: *len = n->width; return 0;
  case N_FIXED: *len = n->fixed; return 0;
  case N_VAR:
    *len = (int64_t)(offset_at(a->buffers[1], n->width, a->offset + i + 1) -
                     offset_at(a->buffers[1], n->width, a->offset + i));
    return 0;
  case N_LIST: case N_FSL:
    list_range(n, a, i, &lo, &hi);
    if (fixed_width(n->ch[0]) && a->children[0]->null_count == 0) {
      int64_t w = fixed_width(n->ch[0]) + 9;
      if (hi - lo > INT64_MAX / w)
        return bri_error_set(err, BRI_EINVAL, "%s: canonical value too large", n->path);
      *len = (hi - lo) * w;
      return 0;
    }
    for (int64_t j = lo; j < hi; j++) {
      if ((rc = clen(n->ch[0], a->children[0], j, src, &cl, err)) ||
          (rc = add_frame_len(n, cl, &total, err)))
        return rc;
    }
    *len = total;
    return 0;
  case N_STRUCT:
    for (size_t c = 0; c < n->n_ch; c++) {
      if ((rc = clen(n->ch[c], a->children[c], a->offset + i, src, &cl, err)) ||
          (rc = add_frame_len(n, cl, &total, err)))
        return rc;
    }
    *len = total;
    return 0;
  default:
    return bri_error_set(err, BRI_EINVAL, "%s: internal: unexpected node", n->path);
  }
}

typedef struct stream_ctx {
  bri_column_hasher *h;
  uint64_t expect, got;
  const char *path;
} stream_ctx;

static int stream_chunk(void *ctx, const uint8_t *data, size_t len, bri_error *err) {
  stream_ctx *s = ctx;
  if (len > s->expect - s->got)
    return bri_error_set(err, BRI_EINVAL, "%s: blob source gave more than the %llu bytes it announced",
                         s->path, (unsigned long long)s->expect);
  s->got += len;
  return put(s->h, data, len, err);
}

static int stream_payload(bri_column_hasher *h, const hnode *n, const bri_blob_desc *d,
                          uint64_t len, const bri_blob_source *src, bri_error *err) {
  stream_ctx s = {h, len, 0, n->path};
  if (!src || !src->stream)
    return bri_error_set(err, BRI_EINVAL, "%s: no blob source", n->path);
  int rc = src->stream(src->ctx, n->path, d, stream_chunk, &s, err);
  if (rc) return rc;
  if (s.got != len)
    return bri_error_set(err, BRI_EINVAL, "%s: blob source gave %llu bytes, announced %llu",
                         n->path, (unsigned long long)s.got, (unsigned long long)len);
  return 0;
}

static int frame(bri_column_hasher *h, const hnode *n, const struct ArrowArray *a, int64_t i,
                 const bri_blob_source *src, bool *was_null, bri_error *err);

/* Emits the canonical bytes of non-null row i whose length clen gave as len. */
static int emit(bri_column_hasher *h, const hnode *n, const struct ArrowArray *a, int64_t i,
                int64_t len, const bri_blob_source *src, bri_error *err) {
  char buf[24];
  uint8_t b;
  int64_t lo, hi;
  bool nul;
  int rc;
  switch (n->k) {
  case N_BLOB: {
    blob_val v;
    read_desc(n, a, i, &v);
    if (n->bmode == BM_KINDSIZE) {
      uint8_t ks[9];
      ks[0] = v.d.kind;
      bri_put_le64(ks + 1, v.d.size);
      return put(h, ks, 9, err);
    }
    return stream_payload(h, n, &v.d, (uint64_t)len, src, err);
  }
  case N_DICT:
    return emit(h, n->dict, a->dictionary, dict_index(n, a, i), len, src, err);
  case N_BOOL: {
    int64_t j = a->offset + i;
    b = (((const uint8_t *)a->buffers[1])[j >> 3] >> (j & 7)) & 1;
    return put(h, &b, 1, err);
  }
  case N_INT: {
    char *p = int_text(n, a->buffers[1], a->offset + i, buf);
    return put(h, p, (size_t)(buf + 24 - p), err);
  }
  case N_FLOAT: case N_DECIMAL:
    return put(h, (const uint8_t *)a->buffers[1] + (size_t)(a->offset + i) * (size_t)n->width,
               (size_t)n->width, err);
  case N_FIXED:
    return put(h, (const uint8_t *)a->buffers[1] + (size_t)(a->offset + i) * (size_t)n->fixed,
               (size_t)n->fixed, err);
  case N_VAR:
    if (len == 0) return 0;
    return put(h, (const uint8_t *)a->buffers[2] + offset_at(a->buffers[1], n->width, a->offset + i),
               (size_t)len, err);
  case N_LIST: case N_FSL:
    list_range(n, a, i, &lo, &hi);
    for (int64_t j = lo; j < hi; j++)
      if ((rc = frame(h, n->ch[0], a->children[0], j, src, &nul, err))) return rc;
    return 0;
  case N_STRUCT:
    for (size_t c = 0; c < n->n_ch; c++)
      if ((rc = frame(h, n->ch[c], a->children[c], a->offset + i, src, &nul, err))) return rc;
    return 0;
  default:
    return bri_error_set(err, BRI_EINVAL, "%s: internal: unexpected node", n->path);
  }
}

/* Frames a non-null leaf value straight into the buffer (the common case:
 * one bounds check, no measuring pass). */
static int frame_leaf(bri_column_hasher *h, const hnode *n, const struct ArrowArray *a, int64_t i,
                      bri_error *err) {
  char tb[24];
  uint8_t bit;
  const uint8_t *p;
  size_t len;
  int64_t j = a->offset + i;
  switch (n->k) {
  case N_INT: {
    char *t = int_text(n, a->buffers[1], j, tb);
    p = (const uint8_t *)t, len = (size_t)(tb + 24 - t);
    break;
  }
  case N_FLOAT: case N_DECIMAL:
    p = (const uint8_t *)a->buffers[1] + (size_t)j * (size_t)n->width, len = (size_t)n->width;
    break;
  case N_FIXED:
    p = (const uint8_t *)a->buffers[1] + (size_t)j * (size_t)n->fixed, len = (size_t)n->fixed;
    break;
  case N_VAR: {
    uint64_t lo = offset_at(a->buffers[1], n->width, j);
    len = (size_t)(offset_at(a->buffers[1], n->width, j + 1) - lo);
    /* the data buffer may be absent when every value is empty */
    p = len ? (const uint8_t *)a->buffers[2] + lo : (const uint8_t *)"";
    break;
  }
  default: /* N_BOOL */
    bit = (((const uint8_t *)a->buffers[1])[j >> 3] >> (j & 7)) & 1;
    p = &bit, len = 1;
    break;
  }
  if (len <= 256 && SINK_BYTES - h->pos >= 9 + len) {
    uint8_t *w = h->buf + h->pos;
    w[0] = 1;
    bri_put_le64(w + 1, len);
    memcpy(w + 9, p, len);
    h->pos += 9 + len;
    return 0;
  }
  int rc = put_head(h, len, err);
  return rc ? rc : put(h, p, len, err);
}

static int frame(bri_column_hasher *h, const hnode *n, const struct ArrowArray *a, int64_t i,
                 const bri_blob_source *src, bool *was_null, bri_error *err) {
  if (n->k == N_BOOL || n->k == N_INT || n->k == N_FLOAT || n->k == N_DECIMAL ||
      n->k == N_VAR || n->k == N_FIXED) {
    *was_null = !bri_arrow_valid(a, i);
    return *was_null ? put_null(h, err) : frame_leaf(h, n, a, i, err);
  }
  int64_t len;
  int rc = clen(n, a, i, src, &len, err);
  if (rc) return rc;
  *was_null = len < 0;
  if (len < 0) return put_null(h, err);
  if ((rc = put_head(h, (uint64_t)len, err))) return rc;
  return emit(h, n, a, i, len, src, err);
}

/* ------------------------------------------------------------ rows */

static void count_kind(bri_column_hash *r, int kind) {
  size_t k;
  for (k = 0; k < r->n_kinds; k++)
    if (r->kinds[k] == kind) break;
  if (k == r->n_kinds) {
    r->kinds[k] = kind;
    r->kind_counts[k] = 0;
    r->n_kinds++;
  }
  r->kind_counts[k]++;
}

static int add_row(bri_column_hasher *h, const struct ArrowArray *a, int64_t i,
                   const bri_blob_source *src, bri_error *err) {
  const hnode *n = h->root;
  bool was_null;
  int rc = 0;
  if (n->k == N_BLOB) { /* top-level Blob v2: payload bytes, plus the descriptor summary */
    blob_val v;
    read_desc(n, a, i, &v);
    if (!v.valid) {
      count_kind(&h->res, -1);
      h->res.nulls++;
      if (h->blob_bytes) rc = put_null(h, err);
    } else {
      count_kind(&h->res, v.d.kind);
      h->res.payload_bytes += v.d.size;
      if (h->blob_bytes) {
        int64_t len;
        if (!(rc = payload_length(n, &v.d, src, &len, err)) &&
            !(rc = put_head(h, (uint64_t)len, err)))
          rc = stream_payload(h, n, &v.d, (uint64_t)len, src, err);
      }
    }
  } else {
    rc = frame(h, n, a, i, src, &was_null, err);
    if (!rc && was_null) h->res.nulls++;
  }
  if (!rc) h->res.rows++;
  return rc;
}

static size_t ptr_slot(const void *p, size_t cap) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x & (cap - 1);
}

static bool was_checked(const bri_column_hasher *h, const struct ArrowArray *a) {
  if (!h->checked_cap) return false;
  for (size_t i = ptr_slot(a, h->checked_cap);; i = (i + 1) & (h->checked_cap - 1)) {
    if (h->checked[i] == a) return true;
    if (!h->checked[i]) return false;
  }
}

static int remember(bri_column_hasher *h, const struct ArrowArray *a, bri_error *err) {
  if (2 * (h->checked_n + 1) > h->checked_cap) {
    size_t cap = h->checked_cap ? 2 * h->checked_cap : 16;
    const struct ArrowArray **t = calloc(cap, sizeof *t);
    if (!t) return bri_error_set(err, BRI_ENOMEM, "out of memory");
    for (size_t i = 0; i < h->checked_cap; i++) {
      if (!h->checked[i]) continue;
      size_t j = ptr_slot(h->checked[i], cap);
      while (t[j]) j = (j + 1) & (cap - 1);
      t[j] = h->checked[i];
    }
    free(h->checked);
    h->checked = t;
    h->checked_cap = cap;
  }
  size_t j = ptr_slot(a, h->checked_cap);
  while (h->checked[j]) j = (j + 1) & (h->checked_cap - 1);
  h->checked[j] = a;
  h->checked_n++;
  return 0;
}

int bri_column_hasher_check_array(bri_column_hasher *h, const struct ArrowArray *a,
                                  bri_error *err) {
  if (was_checked(h, a)) return 0;
  int rc = check_array(h->root, a, 0, err);
  return rc ? rc : remember(h, a, err);
}

static int prepare(bri_column_hasher *h, const struct ArrowArray *a, int64_t start, int64_t count,
                   bri_error *err) {
  if (h->finished) return bri_error_set(err, BRI_EINVAL, "column %s: hash already finished",
                                        h->root->path);
  int rc = bri_column_hasher_check_array(h, a, err);
  if (rc) return rc;
  if (start < 0 || count < 0 || start > a->length || count > a->length - start)
    return bri_error_set(err, BRI_EINVAL, "column %s: rows [%lld, +%lld) outside an array of %lld",
                         h->root->path, (long long)start, (long long)count, (long long)a->length);
  return 0;
}

int bri_column_hasher_add(bri_column_hasher *h, const struct ArrowArray *a, int64_t row,
                          const bri_blob_source *src, bri_error *err) {
  int rc = prepare(h, a, row, 1, err);
  return rc ? rc : add_row(h, a, row, src, err);
}

int bri_column_hasher_add_range(bri_column_hasher *h, const struct ArrowArray *a, int64_t start,
                                int64_t count, const bri_blob_source *src, bri_error *err) {
  int rc = prepare(h, a, start, count, err);
  for (int64_t i = 0; !rc && i < count; i++) rc = add_row(h, a, start + i, src, err);
  return rc;
}

int bri_column_hasher_finish(bri_column_hasher *h, bri_column_hash *out, bri_error *err) {
  if (!h->finished) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    int rc = flush(h, err);
    if (rc) return rc;
    if (EVP_DigestFinal_ex(h->md, md, &mdlen) != 1 || mdlen != 32)
      return bri_error_set(err, BRI_EIO, "OpenSSL: SHA-256 final failed");
    if (h->res.blob && !h->blob_bytes) {
      snprintf(h->res.sha256, sizeof h->res.sha256, "skipped");
    } else {
      for (unsigned k = 0; k < 32; k++) snprintf(h->res.sha256 + 2 * k, 3, "%02x", md[k]);
    }
    h->res.n_nested_paths = h->n_paths;
    h->res.nested_paths = (const char *const *)h->paths;
    h->finished = true;
  }
  *out = h->res;
  return 0;
}
