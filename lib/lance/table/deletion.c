/* deletion.c: reading and writing Lance deletion files (see deletion.h).
 *
 * Both readers are hand-written and trust nothing: the Arrow IPC reader
 * walks only the flatbuffer fields it needs (Footer, Schema, Field, Int,
 * Block, Message, RecordBatch, FieldNode, Buffer, BodyCompression), checking
 * every vtable, offset and vector length against the bytes that hold it; the
 * Roaring image goes through the strict decoder every on-disk bitmap passes
 * (roaring_strict.h). Nothing is allocated for a count before the count is
 * checked against the manifest numbers, so a small hostile file cannot
 * request a large buffer.
 *
 * Arrow values come unsorted (Lance writes them from a hash set); they are
 * sorted with an LSD radix sort (bulk, no per-value allocation) and checked
 * for duplicates. */
#include "lance/table/deletion.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "lance/table/roaring_strict.h"
#include "util/bytes.h"
#include "util/fsutil.h"

static unsigned long long ull(uint64_t v) { return (unsigned long long)v; }

/* ------------------------------------------------------------ common checks */

/* The count a file declares, checked against the manifest before anything
 * is allocated for it. */
static int check_count(const char *path, const char *what, uint64_t n, uint64_t num_deleted_rows,
                       uint64_t physical_rows, bri_error *err) {
  if (num_deleted_rows && n != num_deleted_rows)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: %s holds %llu deleted rows, the manifest records %llu", path, what,
                         ull(n), ull(num_deleted_rows));
  if (n > physical_rows)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: %s holds %llu deleted rows, more than the fragment's %llu physical "
                         "rows",
                         path, what, ull(n), ull(physical_rows));
  return 0;
}

static void insertion_sort(uint32_t *v, size_t n) {
  for (size_t i = 1; i < n; i++) {
    uint32_t x = v[i];
    size_t j = i;
    for (; j > 0 && v[j - 1] > x; j--) v[j] = v[j - 1];
    v[j] = x;
  }
}

/* LSD radix sort on bytes; passes where every value has the same byte are
 * skipped (row offsets below 2^24 need at most three). */
static int sort_u32(uint32_t *v, size_t n) {
  if (n < 64) {
    insertion_sort(v, n);
    return 0;
  }
  uint32_t *tmp = malloc(n * sizeof *tmp);
  if (!tmp) return BRI_ENOMEM;
  uint32_t *src = v, *dst = tmp;
  for (int shift = 0; shift < 32; shift += 8) {
    size_t cnt[256] = {0};
    for (size_t i = 0; i < n; i++) cnt[(src[i] >> shift) & 0xff]++;
    if (cnt[(src[0] >> shift) & 0xff] == n) continue;
    size_t sum = 0;
    for (int b = 0; b < 256; b++) {
      size_t c = cnt[b];
      cnt[b] = sum;
      sum += c;
    }
    for (size_t i = 0; i < n; i++) dst[cnt[(src[i] >> shift) & 0xff]++] = src[i];
    uint32_t *t = src;
    src = dst;
    dst = t;
  }
  if (src != v) memcpy(v, src, n * sizeof *v);
  free(tmp);
  return 0;
}

/* ------------------------------------------------------------ flatbuffers */

/* A flatbuffer inside the file: b[0..len) starts at file offset base. */
typedef struct fbuf {
  const uint8_t *b;
  size_t len;
  uint64_t base;
  const char *path;
  const char *name; /* "Arrow footer", "record batch message" */
  bri_error *err;
} fbuf;

typedef struct fbt {
  const fbuf *f;
  size_t pos;     /* table start */
  size_t vt;      /* vtable start */
  uint16_t vt_len;
  uint16_t t_len;
} fbt;

static int fb_bad(const fbuf *f, size_t at, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fb_bad(const fbuf *f, size_t at, const char *what, const char *fmt, ...) {
  char detail[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  return bri_error_set(f->err, BRI_ECORRUPT, "%s: %s at offset %llu: %s: %s", f->path, f->name,
                       ull(f->base + at), what, detail);
}

static int fb_table(const fbuf *f, size_t pos, const char *what, fbt *t) {
  if (pos > f->len || f->len - pos < 4)
    return fb_bad(f, pos, what, "table runs past the end of the %zu-byte buffer", f->len);
  int64_t vt = (int64_t)pos - (int32_t)bri_le32(f->b + pos);
  if (vt < 0 || (uint64_t)vt > f->len || f->len - (size_t)vt < 4)
    return fb_bad(f, pos, what, "vtable at %lld is outside the %zu-byte buffer", (long long)vt,
                  f->len);
  t->f = f;
  t->pos = pos;
  t->vt = (size_t)vt;
  t->vt_len = bri_le16(f->b + t->vt);
  t->t_len = bri_le16(f->b + t->vt + 2);
  if (t->vt_len < 4 || t->vt_len > f->len - t->vt)
    return fb_bad(f, t->vt, what, "vtable length %u does not fit (%zu bytes left)", t->vt_len,
                  f->len - t->vt);
  if (t->t_len < 4 || t->t_len > f->len - pos)
    return fb_bad(f, pos, what, "table length %u does not fit (%zu bytes left)", t->t_len,
                  f->len - pos);
  return 0;
}

/* Position of field idx (width bytes) in the buffer, or 0 when absent. */
static int fb_field(const fbt *t, int idx, size_t width, const char *what, size_t *at) {
  *at = 0;
  size_t slot = 4 + 2 * (size_t)idx;
  if (slot + 2 > t->vt_len) return 0;
  uint16_t off = bri_le16(t->f->b + t->vt + slot);
  if (off == 0) return 0;
  if (off < 4 || off + width > t->t_len)
    return fb_bad(t->f, t->pos, what, "field at +%u (%zu bytes) is outside its %u-byte table", off,
                  width, t->t_len);
  *at = t->pos + off;
  return 0;
}

static int fb_int(const fbt *t, int idx, size_t width, int64_t def, const char *what,
                  int64_t *out) {
  size_t at;
  int rc = fb_field(t, idx, width, what, &at);
  if (rc) return rc;
  if (!at) {
    *out = def;
    return 0;
  }
  const uint8_t *p = t->f->b + at;
  switch (width) {
  case 1: *out = (int8_t)p[0]; break;
  case 2: *out = (int16_t)bri_le16(p); break;
  case 4: *out = (int32_t)bri_le32(p); break;
  default: *out = (int64_t)bri_le64(p); break;
  }
  return 0;
}

/* Follows the uoffset in field idx; *target is 0 when the field is absent.
 * The target must leave room for at least 4 bytes (a table or a length). */
static int fb_ref(const fbt *t, int idx, const char *what, size_t *target) {
  size_t at;
  *target = 0;
  int rc = fb_field(t, idx, 4, what, &at);
  if (rc || !at) return rc;
  uint64_t u = bri_le32(t->f->b + at);
  if (u == 0 || u > t->f->len - at || t->f->len - at - u < 4)
    return fb_bad(t->f, at, what, "offset %llu points outside the %zu-byte buffer", ull(u),
                  t->f->len);
  *target = at + (size_t)u;
  return 0;
}

static int fb_subtable(const fbt *t, int idx, const char *what, bool *present, fbt *sub) {
  size_t target;
  int rc = fb_ref(t, idx, what, &target);
  *present = !rc && target;
  if (rc || !target) return rc;
  return fb_table(t->f, target, what, sub);
}

/* A vector of n elements of elem bytes each; n = 0 when absent. */
static int fb_vector(const fbt *t, int idx, size_t elem, const char *what, size_t *start,
                     size_t *n) {
  size_t target;
  *start = 0;
  *n = 0;
  int rc = fb_ref(t, idx, what, &target);
  if (rc || !target) return rc;
  uint64_t count = bri_le32(t->f->b + target);
  size_t room = t->f->len - target - 4;
  if (count > room / elem)
    return fb_bad(t->f, target, what, "vector claims %llu entries of %zu bytes, only %zu bytes follow",
                  ull(count), elem, room);
  *start = target + 4;
  *n = (size_t)count;
  return 0;
}

/* Element i of a vector of tables. */
static int fb_vector_table(const fbuf *f, size_t start, size_t i, const char *what, fbt *sub) {
  size_t at = start + 4 * i;
  uint64_t u = bri_le32(f->b + at);
  if (u == 0 || u > f->len - at)
    return fb_bad(f, at, what, "offset %llu points outside the %zu-byte buffer", ull(u), f->len);
  return fb_table(f, at + (size_t)u, what, sub);
}

/* ------------------------------------------------------------ .arrow */

enum {
  ARROW_MAGIC_LEN = 6,
  ARROW_TYPE_INT = 2,          /* Type union: Int */
  ARROW_HEADER_RECORD_BATCH = 3,
  ARROW_CODEC_LZ4_FRAME = 0,
  ARROW_CODEC_ZSTD = 1,
  ARROW_MIN_VERSION = 3,       /* MetadataVersion V4 */
  ARROW_MAX_VERSION = 4,       /* V5, what arrow-rs writes */
  ARROW_PAD = 64,              /* slack allowed after a buffer's logical length */
};

/* Schema must be exactly Lance's {row_id: UInt32, not null} (Lance compares
 * the whole schema and refuses anything else). */
static int arrow_check_schema(const fbt *footer, bri_error *err) {
  const fbuf *f = footer->f;
  bool present;
  fbt schema, field, type;
  int rc = fb_subtable(footer, 1, "schema", &present, &schema);
  if (rc) return rc;
  if (!present) return fb_bad(f, footer->pos, "footer", "no schema");
  size_t start, n;
  rc = fb_vector(&schema, 1, 4, "schema fields", &start, &n);
  if (rc) return rc;
  if (n != 1)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: Arrow schema at offset %llu has %zu fields, expected exactly one "
                         "(row_id: uint32)",
                         f->path, ull(f->base + schema.pos), n);
  rc = fb_vector_table(f, start, 0, "schema field 0", &field);
  if (rc) return rc;
  size_t name_at, name_len;
  rc = fb_vector(&field, 0, 1, "field name", &name_at, &name_len);
  if (rc) return rc;
  if (name_len != 6 || memcmp(f->b + name_at, "row_id", 6) != 0)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: Arrow schema field at offset %llu is named \"%.*s\", expected "
                         "\"row_id\"",
                         f->path, ull(f->base + field.pos), (int)(name_len > 64 ? 64 : name_len),
                         name_len ? (const char *)f->b + name_at : "");
  int64_t nullable, type_type, bits, is_signed;
  if ((rc = fb_int(&field, 1, 1, 0, "field nullable", &nullable)) ||
      (rc = fb_int(&field, 2, 1, 0, "field type", &type_type)))
    return rc;
  if (nullable)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: Arrow field row_id at offset %llu is nullable, expected not null",
                         f->path, ull(f->base + field.pos));
  if (type_type != ARROW_TYPE_INT)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: Arrow field row_id at offset %llu has type id %lld, expected Int "
                         "(uint32)",
                         f->path, ull(f->base + field.pos), (long long)type_type);
  rc = fb_subtable(&field, 3, "field type", &present, &type);
  if (rc) return rc;
  if (!present) return fb_bad(f, field.pos, "field row_id", "no Int type table");
  if ((rc = fb_int(&type, 0, 4, 0, "Int bitWidth", &bits)) ||
      (rc = fb_int(&type, 1, 1, 0, "Int is_signed", &is_signed)))
    return rc;
  if (bits != 32 || is_signed)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: Arrow field row_id at offset %llu is a %s %lld-bit integer, "
                         "expected uint32",
                         f->path, ull(f->base + type.pos), is_signed ? "signed" : "unsigned",
                         (long long)bits);
  size_t cstart, cn;
  rc = fb_vector(&field, 5, 4, "field children", &cstart, &cn);
  if (rc) return rc;
  bool dict;
  fbt d;
  if ((rc = fb_subtable(&field, 4, "field dictionary", &dict, &d))) return rc;
  if (cn || dict)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: Arrow field row_id at offset %llu has children or a dictionary, "
                         "expected a plain uint32",
                         f->path, ull(f->base + field.pos));
  return 0;
}

typedef struct arrow_ctx {
  const char *path;
  const uint8_t *body;
  uint64_t body_len;
  uint64_t body_off; /* file offset of the body */
  bool zstd;
  bri_error *err;
} arrow_ctx;

/* Decodes buffer i of the record batch. With compression each non-empty
 * buffer is [i64 uncompressed length][zstd frame], or [-1][raw bytes]. The
 * decoded length must lie in [min, min + ARROW_PAD). *data points into the
 * file or into *owned (caller frees). */
static int arrow_buffer(const arrow_ctx *c, int i, uint64_t off, uint64_t len, uint64_t min,
                        const uint8_t **data, uint64_t *data_len, uint8_t **owned) {
  *owned = NULL;
  *data = NULL;
  *data_len = 0;
  if (!bri_range_ok(off, len, c->body_len))
    return bri_error_set(c->err, BRI_ECORRUPT,
                         "%s: record batch buffer %d [%llu, +%llu) is outside the %llu-byte body "
                         "at offset %llu",
                         c->path, i, ull(off), ull(len), ull(c->body_len), ull(c->body_off));
  uint64_t at = c->body_off + off;
  const uint8_t *p = c->body + off;
  if (len == 0) {
    if (min)
      return bri_error_set(c->err, BRI_ECORRUPT,
                           "%s: record batch buffer %d at offset %llu is empty, expected %llu "
                           "bytes",
                           c->path, i, ull(at), ull(min));
    return 0;
  }
  uint64_t n = len;
  int64_t ulen = -1;
  if (c->zstd) {
    if (len < 8)
      return bri_error_set(c->err, BRI_ECORRUPT,
                           "%s: compressed buffer %d at offset %llu is %llu bytes, shorter than "
                           "its 8-byte length prefix",
                           c->path, i, ull(at), ull(len));
    ulen = (int64_t)bri_le64(p);
    p += 8;
    n -= 8;
    if (ulen < -1)
      return bri_error_set(c->err, BRI_ECORRUPT,
                           "%s: compressed buffer %d at offset %llu has uncompressed length %lld",
                           c->path, i, ull(at), (long long)ulen);
  }
  uint64_t have = ulen == -1 ? n : (uint64_t)ulen;
  if (have < min || have - min >= ARROW_PAD)
    return bri_error_set(c->err, BRI_ECORRUPT,
                         "%s: record batch buffer %d at offset %llu holds %llu bytes, expected "
                         "%llu",
                         c->path, i, ull(at), ull(have), ull(min));
  if (ulen == -1) {
    *data = p;
    *data_len = n;
    return 0;
  }
  uint8_t *dst = malloc(have ? (size_t)have : 1);
  if (!dst)
    return bri_error_set(c->err, BRI_ENOMEM, "%s: out of memory for %llu bytes", c->path,
                         ull(have));
  size_t got = ZSTD_decompress(dst, (size_t)have, p, (size_t)n);
  if (ZSTD_isError(got) || got != have) {
    free(dst);
    return bri_error_set(c->err, BRI_ECORRUPT,
                         "%s: compressed buffer %d at offset %llu: zstd %s (expected %llu bytes)",
                         c->path, i, ull(at),
                         ZSTD_isError(got) ? ZSTD_getErrorName(got) : "gave a different length",
                         ull(have));
  }
  *owned = dst;
  *data = dst;
  *data_len = have;
  return 0;
}

static int parse_arrow(const uint8_t *buf, size_t len, const char *path, uint64_t num_deleted_rows,
                       uint64_t physical_rows, uint32_t **offsets, size_t *count, bri_error *err) {
  if (len < 2 * 8 + 4 + ARROW_MAGIC_LEN || memcmp(buf, "ARROW1", ARROW_MAGIC_LEN) != 0 ||
      memcmp(buf + len - ARROW_MAGIC_LEN, "ARROW1", ARROW_MAGIC_LEN) != 0)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: expected an Arrow IPC file (\"ARROW1\" at offset 0 and at the end), "
                         "%zu bytes do not match",
                         path, len);
  /* Tail: [footer flatbuffer][i32 footer length]["ARROW1"]. */
  size_t tail = len - ARROW_MAGIC_LEN - 4;
  int32_t flen = (int32_t)bri_le32(buf + tail);
  if (flen < 8 || (size_t)flen > tail - 8)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: offset %zu: Arrow footer length %d does not fit in the file "
                         "(at most %zu bytes before it)",
                         path, tail, flen, tail - 8);
  size_t fstart = tail - (size_t)flen;
  fbuf f = {buf + fstart, (size_t)flen, fstart, path, "Arrow footer", err};
  fbt footer;
  int rc;
  uint64_t root = bri_le32(f.b); /* flen >= 8 */
  if (root == 0 || root > f.len - 4)
    return fb_bad(&f, 0, "root", "offset %llu is outside the %zu-byte buffer", ull(root), f.len);
  if ((rc = fb_table(&f, (size_t)root, "footer table", &footer))) return rc;
  int64_t version;
  if ((rc = fb_int(&footer, 0, 2, 0, "version", &version))) return rc;
  if (version < ARROW_MIN_VERSION || version > ARROW_MAX_VERSION)
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "%s: Arrow footer at offset %zu has metadata version %lld, expected V4 "
                         "or V5 (3 or 4)",
                         path, fstart, (long long)version);
  if ((rc = arrow_check_schema(&footer, err))) return rc;
  size_t vstart, nd, nb;
  if ((rc = fb_vector(&footer, 2, 24, "dictionaries", &vstart, &nd))) return rc;
  if (nd)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: Arrow footer at offset %zu lists %zu dictionary blocks, expected none",
                         path, fstart, nd);
  if ((rc = fb_vector(&footer, 3, 24, "record batches", &vstart, &nb))) return rc;
  if (nb != 1)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: Arrow footer at offset %zu lists %zu record batches, expected exactly "
                         "one",
                         path, fstart, nb);

  /* Block {i64 offset, i32 metaDataLength, pad, i64 bodyLength}. */
  const uint8_t *blk = f.b + vstart;
  int64_t boff = (int64_t)bri_le64(blk), blen = (int64_t)bri_le64(blk + 16);
  int32_t mlen = (int32_t)bri_le32(blk + 8);
  if (boff < 8 || mlen < 8 || blen < 0 || (uint64_t)boff > fstart ||
      (uint64_t)mlen > fstart - (uint64_t)boff ||
      (uint64_t)blen > fstart - (uint64_t)boff - (uint64_t)mlen)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: Arrow record batch block (offset %lld, metadata %d bytes, body %lld "
                         "bytes) is not inside the data before the footer at %zu",
                         path, (long long)boff, mlen, (long long)blen, fstart);
  /* Message framing: [0xFFFFFFFF continuation][i32 length][flatbuffer], or
   * the pre-1.0 [i32 length][flatbuffer]. */
  size_t mpos = (size_t)boff, mend = (size_t)boff + (size_t)mlen;
  size_t fb_at = mpos + 4;
  uint32_t first = bri_le32(buf + mpos);
  uint32_t msize = first;
  if (first == 0xFFFFFFFFu) {
    msize = bri_le32(buf + mpos + 4);
    fb_at = mpos + 8;
  }
  if (msize < 8 || msize > mend - fb_at)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: offset %zu: record batch message length %u does not fit in its "
                         "%d-byte metadata block",
                         path, mpos, msize, mlen);
  fbuf m = {buf + fb_at, msize, fb_at, path, "record batch message", err};
  uint64_t mroot = bri_le32(m.b);
  fbt msg, rb, comp;
  if (mroot == 0 || mroot > m.len - 4)
    return fb_bad(&m, 0, "root", "offset %llu is outside the %zu-byte buffer", ull(mroot), m.len);
  if ((rc = fb_table(&m, (size_t)mroot, "message", &msg))) return rc;
  int64_t htype, mbody;
  if ((rc = fb_int(&msg, 1, 1, 0, "header type", &htype)) ||
      (rc = fb_int(&msg, 3, 8, 0, "body length", &mbody)))
    return rc;
  if (htype != ARROW_HEADER_RECORD_BATCH)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: message at offset %zu has header type %lld, expected a record "
                         "batch (3)",
                         path, mpos, (long long)htype);
  if (mbody != blen)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: message at offset %zu says its body is %lld bytes, the footer block "
                         "says %lld",
                         path, mpos, (long long)mbody, (long long)blen);
  bool present;
  if ((rc = fb_subtable(&msg, 2, "record batch", &present, &rb))) return rc;
  if (!present) return fb_bad(&m, msg.pos, "message", "no record batch header");
  int64_t rows;
  if ((rc = fb_int(&rb, 0, 8, 0, "length", &rows))) return rc;
  if (rows < 0)
    return bri_error_set(err, BRI_ECORRUPT, "%s: record batch at offset %zu has %lld rows", path,
                         mpos, (long long)rows);
  if ((rc = check_count(path, "the Arrow record batch", (uint64_t)rows, num_deleted_rows,
                        physical_rows, err)))
    return rc;
  size_t nstart, nn, bstart, bn;
  if ((rc = fb_vector(&rb, 1, 16, "field nodes", &nstart, &nn)) ||
      (rc = fb_vector(&rb, 2, 16, "buffers", &bstart, &bn)))
    return rc;
  if (nn != 1 || bn != 2)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: record batch at offset %zu has %zu field nodes and %zu buffers, "
                         "expected 1 and 2 (validity, values)",
                         path, mpos, nn, bn);
  int64_t node_len = (int64_t)bri_le64(m.b + nstart), nulls = (int64_t)bri_le64(m.b + nstart + 8);
  if (node_len != rows || nulls != 0)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: record batch at offset %zu: column row_id has %lld values and %lld "
                         "nulls, expected %lld values and no nulls",
                         path, mpos, (long long)node_len, (long long)nulls, (long long)rows);
  arrow_ctx c = {path, buf + mend, (uint64_t)blen, mend, false, err};
  if ((rc = fb_subtable(&rb, 3, "body compression", &present, &comp))) return rc;
  if (present) {
    int64_t codec, method;
    if ((rc = fb_int(&comp, 0, 1, ARROW_CODEC_LZ4_FRAME, "codec", &codec)) ||
        (rc = fb_int(&comp, 1, 1, 0, "method", &method)))
      return rc;
    if (method != 0)
      return bri_error_set(err, BRI_EUNSUPPORTED,
                           "%s: record batch at offset %zu uses compression method %lld, only "
                           "BUFFER (0) is supported",
                           path, mpos, (long long)method);
    if (codec != ARROW_CODEC_ZSTD)
      return bri_error_set(err, BRI_EUNSUPPORTED,
                           "%s: record batch at offset %zu uses compression codec %lld, only ZSTD "
                           "(1) is supported (Lance writes ZSTD)",
                           path, mpos, (long long)codec);
    c.zstd = true;
  }
  uint64_t n = (uint64_t)rows;
  const uint8_t *b = m.b + bstart;
  const uint8_t *valid, *vals;
  uint64_t valid_len, vals_len;
  uint8_t *own_valid = NULL, *own_vals = NULL;
  /* Validity: Lance writes an all-ones bitmap even with no nulls; accept an
   * empty one too, and check every bit of a present one. */
  uint64_t vlen = bri_le64(b + 8);
  rc = arrow_buffer(&c, 0, bri_le64(b), vlen, vlen ? (n + 7) / 8 : 0, &valid, &valid_len,
                    &own_valid);
  if (rc) return rc;
  for (uint64_t i = 0; valid_len && i < n; i++)
    if (!(valid[i >> 3] >> (i & 7) & 1)) {
      free(own_valid);
      return bri_error_set(err, BRI_ECORRUPT,
                           "%s: record batch validity bitmap marks value %llu null, deletion "
                           "files hold no nulls",
                           path, ull(i));
    }
  free(own_valid);
  rc = arrow_buffer(&c, 1, bri_le64(b + 16), bri_le64(b + 24), 4 * n, &vals, &vals_len, &own_vals);
  if (rc) return rc;

  uint32_t *out = n ? malloc((size_t)n * sizeof *out) : NULL;
  if (n && !out) {
    free(own_vals);
    return bri_error_set(err, BRI_ENOMEM, "%s: out of memory for %llu offsets", path, ull(n));
  }
  for (uint64_t i = 0; i < n; i++) out[i] = bri_le32(vals + 4 * i);
  free(own_vals);
  if (sort_u32(out, (size_t)n)) {
    free(out);
    return bri_error_set(err, BRI_ENOMEM, "%s: out of memory sorting %llu offsets", path, ull(n));
  }
  for (uint64_t i = 0; i < n; i++) {
    if (i && out[i] == out[i - 1]) {
      rc = bri_error_set(err, BRI_ECORRUPT, "%s: row offset %u is listed twice", path, out[i]);
      break;
    }
    if (out[i] >= physical_rows) {
      rc = bri_error_set(err, BRI_ECORRUPT,
                         "%s: row offset %u is not below the fragment's %llu physical rows", path,
                         out[i], ull(physical_rows));
      break;
    }
  }
  if (rc) {
    free(out);
    return rc;
  }
  *offsets = out;
  *count = (size_t)n;
  return 0;
}

/* ------------------------------------------------------------ .bin (Roaring) */

/* The strict decoder checks the image; the counts are checked against the
 * manifest before anything is allocated for the values. */
static int parse_roaring(const uint8_t *buf, size_t len, const char *path,
                         uint64_t num_deleted_rows, uint64_t physical_rows, uint32_t **offsets,
                         size_t *count, bri_error *err) {
  bri_roaring_info info;
  int rc = bri_roaring_check(buf, len, path, false, &info, err);
  if (!rc) rc = check_count(path, "the Roaring bitmap", info.cardinality, num_deleted_rows,
                            physical_rows, err);
  if (rc) return rc;
  if (info.cardinality && info.max >= physical_rows)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: the Roaring container of key %u holds row offset %u, not below the "
                         "fragment's %llu physical rows",
                         path, info.max >> 16, info.max, ull(physical_rows));
  if (!info.cardinality) return 0;
  uint32_t *out = malloc((size_t)info.cardinality * sizeof *out);
  if (!out)
    return bri_error_set(err, BRI_ENOMEM, "%s: out of memory for %llu offsets", path,
                         ull(info.cardinality));
  bri_roaring_to_array(buf, &info, out);
  *offsets = out;
  *count = (size_t)info.cardinality;
  return 0;
}

/* ------------------------------------------------------------ public */

int bri_deletion_parse(const uint8_t *buf, size_t len, const char *path, int file_type,
                       uint64_t num_deleted_rows, uint64_t physical_rows, uint32_t **offsets,
                       size_t *count, bri_error *err) {
  *offsets = NULL;
  *count = 0;
  if (!path) path = "(memory)";
  if (!buf && len) return bri_error_set(err, BRI_EINVAL, "%s: no bytes", path);
  static const uint8_t empty[1];
  if (!buf) buf = empty;
  switch (file_type) {
  case BRI_DELETION_ARROW:
    return parse_arrow(buf, len, path, num_deleted_rows, physical_rows, offsets, count, err);
  case BRI_DELETION_BITMAP:
    return parse_roaring(buf, len, path, num_deleted_rows, physical_rows, offsets, count, err);
  default:
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "%s: deletion file type %d, expected 0 (arrow) or 1 (bitmap)", path,
                         file_type);
  }
}

int bri_deletion_read(bri_store *st, const char *path, int file_type, uint64_t num_deleted_rows,
                      uint64_t physical_rows, uint32_t **offsets, size_t *count, bri_error *err) {
  *offsets = NULL;
  *count = 0;
  uint8_t *buf;
  size_t len;
  int rc = bri_store_read(st, path, BRI_DELETION_MAX_BYTES, &buf, &len, err);
  if (rc) return rc;
  rc = bri_deletion_parse(buf, len, path, file_type, num_deleted_rows, physical_rows, offsets,
                          count, err);
  free(buf);
  return rc;
}

int bri_deletion_encode_bin(const uint32_t *v, size_t n, uint8_t **out, size_t *out_len,
                            bri_error *err) {
  *out = NULL;
  *out_len = 0;
  if (n == 0)
    return bri_error_set(err, BRI_EINVAL, "no deleted rows: Lance writes no deletion file then");
  for (size_t i = 1; i < n; i++)
    if (v[i] <= v[i - 1])
      return bri_error_set(err, BRI_EINVAL,
                           "deleted row offsets must be strictly increasing: offset %zu is %u "
                           "after %u",
                           i, v[i], v[i - 1]);
  /* Pass 1: containers and size. */
  size_t nc = 0, size = 8;
  for (size_t i = 0; i < n;) {
    uint32_t key = v[i] >> 16;
    size_t j = i;
    while (j < n && v[j] >> 16 == key) j++;
    size_t card = j - i;
    size += 8 + (card <= BRI_ROARING_ARRAY_MAX ? 2 * card : BRI_ROARING_BITMAP_BYTES);
    nc++;
    i = j;
  }
  uint8_t *b = calloc(1, size);
  if (!b) return bri_error_set(err, BRI_ENOMEM, "out of memory for a %zu-byte bitmap", size);
  bri_put_le32(b, BRI_ROARING_COOKIE_NO_RUNS);
  bri_put_le32(b + 4, (uint32_t)nc);
  size_t desc = 8, offs = 8 + 4 * nc, pos = 8 + 8 * nc, c = 0;
  for (size_t i = 0; i < n; c++) {
    uint32_t key = v[i] >> 16;
    size_t j = i;
    while (j < n && v[j] >> 16 == key) j++;
    size_t card = j - i;
    bri_put_le16(b + desc + 4 * c, (uint16_t)key);
    bri_put_le16(b + desc + 4 * c + 2, (uint16_t)(card - 1));
    bri_put_le32(b + offs + 4 * c, (uint32_t)pos);
    if (card <= BRI_ROARING_ARRAY_MAX) {
      for (size_t t = i; t < j; t++, pos += 2) bri_put_le16(b + pos, (uint16_t)v[t]);
    } else {
      for (size_t t = i; t < j; t++) b[pos + (v[t] & 0xFFFF) / 8] |= (uint8_t)(1u << (v[t] & 7));
      pos += BRI_ROARING_BITMAP_BYTES;
    }
    i = j;
  }
  *out = b;
  *out_len = size;
  return 0;
}

int bri_deletion_write_bin(bri_store *st, const char *path, const uint32_t *sorted_offsets,
                           size_t n, bri_error *err) {
  uint8_t *b;
  size_t len;
  int rc = bri_deletion_encode_bin(sorted_offsets, n, &b, &len, err);
  if (rc) return bri_error_wrap(err, "%s", path);
  bri_error e = {0};
  rc = bri_store_put_new(st, path, b, len, NULL, &e);
  free(b);
  if (rc == BRI_ETAKEN)
    return bri_error_set(err, rc, "%s: already exists; deletion files are never overwritten", path);
  if (!rc && e.code) /* written, its directory not synced: nothing names it yet */
    rc = e.code, bri_store_delete(st, path, NULL);
  if (rc && err) *err = e;
  return rc;
}

char *bri_deletion_file_name(uint64_t fragment_id, uint64_t read_version, uint64_t id,
                             int file_type) {
  return bri_strdupf("%" PRIu64 "-%" PRIu64 "-%" PRIu64 ".%s", fragment_id, read_version, id,
                     file_type == BRI_DELETION_BITMAP ? "bin" : "arrow");
}
