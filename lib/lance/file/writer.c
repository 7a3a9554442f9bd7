/* writer.c: the data file container on the write side, and page cutting
 * (writer.h; docs/format/file.md section 1).
 *
 * Owns the new file (a storage writer) and its byte position, the 64-byte alignment and
 * 0x48 padding of every buffer, the per-column page lists, the flush that
 * turns a column's buffered rows into one page (renumbering raw level codes
 * into Lance def values from the layers present in that page, then
 * lance/encoding/enc_page.h), and the metadata tail written by finish:
 * global buffer 0, ColumnMetadata per column, CMO and GBO tables, footer.
 *
 * Design choice: writes go through one 4 MiB staging buffer (large page
 * buffers bypass it) so that many small pages do not cost one call each;
 * the position is tracked in user space and every recorded offset is the
 * position before the write. Any failure marks the writer failed and
 * removes the partial file at once; nothing half-written survives. */
#include "lance/file/writer.h"

#include <stdlib.h>
#include <string.h>

#include "file2.pb-c.h"
#include "google/protobuf/any.pb-c.h"
#include "lance/encoding/enc_page.h"
#include "lance/file/datafile.h"
#include "lance/file/writer_internal.h"
#include "util/failpoint.h"

#define WBUF_CAP ((size_t)4 << 20)
#define PAD_BYTE 0x48
#define ALIGN 64

/* ---- raw output ----------------------------------------------------------- */

static int write_all(bri_file_writer *w, const uint8_t *p, size_t n, bri_error *err) {
  int rc = n ? bri_failpoint("writer.write", err) : 0;
  if (rc) {
    bri_error_wrap(err, "writing %s", w->path);
    return rc;
  }
  return n ? bri_swriter_append(w->out, p, n, err) : 0;
}

static int wflush(bri_file_writer *w, bri_error *err) {
  int rc = write_all(w, w->wbuf, w->wbuf_len, err);
  w->wbuf_len = 0;
  return rc;
}

static int put_bytes(bri_file_writer *w, const void *src, size_t n, bri_error *err) {
  const uint8_t *p = src;
  int rc;
  if (w->failed) return bri_error_set(err, BRI_EINVAL, "%s: the writer failed earlier", w->path);
  if (n >= WBUF_CAP) {
    if ((rc = wflush(w, err))) return rc;
    if ((rc = write_all(w, p, n, err))) return rc;
  } else {
    if (w->wbuf_len + n > w->wbuf_cap && (rc = wflush(w, err))) return rc;
    memcpy(w->wbuf + w->wbuf_len, p, n);
    w->wbuf_len += n;
  }
  w->pos += n;
  return 0;
}

int bri_writer_fail(bri_file_writer *w, int rc) {
  if (!w->failed && !w->finished) {
    w->failed = true;
    if (w->out) bri_swriter_abort(w->out);
    else bri_store_delete(w->st, w->path, NULL); /* finished, then failed after */
    w->out = NULL;
  }
  return rc;
}

int bri_writer_put_raw(bri_file_writer *w, const void *p, size_t len, bri_error *err) {
  return len ? put_bytes(w, p, len, err) : 0;
}

int bri_writer_pad(bri_file_writer *w, bri_error *err) {
  uint8_t pad[ALIGN];
  memset(pad, PAD_BYTE, sizeof pad);
  return w->pos % ALIGN ? put_bytes(w, pad, ALIGN - w->pos % ALIGN, err) : 0;
}

int bri_writer_put_buffer(bri_file_writer *w, const void *p, uint64_t len, uint64_t *offset,
                          bri_error *err) {
  *offset = w->pos;
  int rc = bri_writer_put_raw(w, p, (size_t)len, err);
  return rc ? rc : bri_writer_pad(w, err);
}

/* ---- pages ------------------------------------------------------------------- */

int bri_writer_add_page(bri_file_writer *w, wcol *c, uint64_t rows, uint64_t priority,
                        const uint64_t *offsets, const uint64_t *sizes, size_t n_buffers,
                        uint8_t *encoding, size_t encoding_len, bri_error *err) {
  if (n_buffers > BRI_ENC_MAX_BUFFERS) {
    free(encoding);
    return bri_error_set(err, BRI_EUNSUPPORTED, "%s: a page with %zu buffers (at most %d)",
                         w->path, n_buffers, BRI_ENC_MAX_BUFFERS);
  }
  if (c->n_pages == c->cap_pages) {
    size_t cap = c->cap_pages ? c->cap_pages * 2 : 8;
    wpage *p = realloc(c->pages, cap * sizeof *p);
    if (!p) {
      free(encoding);
      return bri_error_set(err, BRI_ENOMEM, "file writer: out of memory");
    }
    c->pages = p;
    c->cap_pages = cap;
  }
  wpage *p = &c->pages[c->n_pages++];
  memset(p, 0, sizeof *p);
  for (size_t i = 0; i < n_buffers; i++) {
    p->offsets[i] = offsets[i];
    p->sizes[i] = sizes[i];
  }
  p->n_buffers = n_buffers;
  p->rows = rows;
  p->priority = priority;
  p->encoding = encoding;
  p->encoding_len = encoding_len;
  c->rows_written += rows;
  return 0;
}

uint64_t bri_writer_buffered_bytes(const wcol *c) {
  const wvals *v = &c->vals;
  uint64_t b = v->data_len + v->n * (v->kind == BRI_LEAF_VARIABLE ? 8 : 0);
  for (size_t i = 0; i < v->n_children; i++) {
    const wvals *ch = &v->children[i];
    b += ch->data_len + (ch->kind == BRI_LEAF_VARIABLE ? ch->n * 8 : 0);
  }
  return b + c->levels * ((c->max_rep ? 2 : 0) + (c->raw ? 2 : 0));
}

static void view_of(const wvals *src, bri_values *v) {
  memset(v, 0, sizeof *v);
  v->kind = src->kind;
  v->n = src->n;
  v->bits = src->bits;
  v->n_dims = src->n_dims;
  for (uint32_t k = 0; k < src->n_dims; k++) {
    v->dims[k] = src->dims[k];
    v->fsl_validity[k] = src->fslv[k];
  }
  v->elems_per_slot = src->elems ? src->elems : 1;
  v->data = src->data;
  v->data_len = src->data_len;
  v->offsets = src->offsets;
}

int bri_writer_flush_column(bri_file_writer *w, wcol *c, bri_error *err) {
  if (c->rows == 0) return 0;
  uint8_t layers[BRI_MAX_LAYERS];
  uint16_t defnum[2 * BRI_MAX_LAYERS + 2] = {0};
  uint16_t next = 1;
  for (size_t L = 0; L < c->n_layers; L++) {
    bool hn = c->seen[2 * L + 1], he = c->seen[2 * L + 2];
    if (c->is_list[L]) {
      layers[L] = hn && he ? BRI_LAYER_NULL_AND_EMPTY_LIST
                  : hn     ? BRI_LAYER_NULLABLE_LIST
                  : he     ? BRI_LAYER_EMPTYABLE_LIST
                           : BRI_LAYER_ALL_VALID_LIST;
      if (hn) defnum[2 * L + 1] = next++;
      if (he) defnum[2 * L + 2] = next++;
    } else {
      layers[L] = hn ? BRI_LAYER_NULLABLE_ITEM : BRI_LAYER_ALL_VALID_ITEM;
      if (hn) defnum[2 * L + 1] = next++;
    }
  }
  const uint16_t *def = NULL;
  if (next > 1 && c->raw) {
    for (uint64_t i = 0; i < c->levels; i++) c->raw[i] = defnum[c->raw[i]];
    def = c->raw;
  }
  bri_values view, kids[5];
  view_of(&c->vals, &view);
  if (c->vals.n_children) {
    for (size_t i = 0; i < c->vals.n_children && i < 5; i++) view_of(&c->vals.children[i], &kids[i]);
    view.n_children = c->vals.n_children;
    view.children = kids;
  }
  bri_enc_input in = {
      .n_rows = c->rows,
      .n_levels = c->levels,
      .rep = c->max_rep ? c->rep : NULL,
      .def = def,
      .n_layers = c->n_layers,
      .layers = layers,
      .values = &view,
  };
  bri_enc_options o = {
      .file_minor = w->minor,
      .offset_bits = c->offset_bits,
      .general_scheme = c->general_scheme,
      .general_level = c->general_level,
      .auto_zstd = w->opt.auto_zstd,
      .dict_key_bits = c->dict_key_bits,
  };
  bri_encoded_page ep;
  int rc = bri_page_encode(&in, &o, &ep, err);
  if (rc) {
    bri_error_wrap(err, "%s: column %zu (%s), rows %llu..%llu", w->path, (size_t)(c - w->cols),
                   c->path, (unsigned long long)c->rows_written,
                   (unsigned long long)(c->rows_written + c->rows));
    return bri_writer_fail(w, rc);
  }
  uint64_t offs[BRI_ENC_MAX_BUFFERS];
  for (size_t i = 0; i < ep.n_buffers && !rc; i++)
    rc = bri_writer_put_buffer(w, ep.buffers[i], ep.sizes[i], &offs[i], err);
  if (!rc) {
    rc = bri_writer_add_page(w, c, c->rows, c->rows_written, offs, ep.sizes, ep.n_buffers,
                             ep.encoding, ep.encoding_len, err);
    ep.encoding = NULL;
  }
  bri_encoded_page_dispose(&ep);
  if (rc) return bri_writer_fail(w, rc);
  c->rows = 0;
  c->levels = 0;
  memset(c->seen, 0, sizeof c->seen);
  free(c->raw);
  c->raw = NULL;
  bri_wvals_reset(&c->vals);
  if (c->vals.kind == BRI_LEAF_VARIABLE) c->vals.offsets[0] = 0;
  for (size_t i = 0; i < c->vals.n_children; i++)
    if (c->vals.children[i].kind == BRI_LEAF_VARIABLE) c->vals.children[i].offsets[0] = 0;
  return 0;
}

/* ---- open ------------------------------------------------------------------------ */

int bri_file_writer_open(bri_store *st, const char *path, uint16_t minor,
                         Lance__File__Field *const *fields, size_t n_fields,
                         const bri_file_writer_options *opt, bri_file_writer **out,
                         bri_error *err) {
  *out = NULL;
  if (!path || (!fields && n_fields))
    return bri_error_set(err, BRI_EINVAL, "file writer: missing path or fields");
  if (minor != 1 && minor != 2)
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "%s: file version 2.%u cannot be written (2.1 and 2.2 can)", path, minor);
  bri_file_writer *w = calloc(1, sizeof *w);
  if (!w) return bri_error_set(err, BRI_ENOMEM, "file writer: out of memory");
  w->st = st;
  w->minor = minor;
  if (opt) w->opt = *opt;
  if (!w->opt.page_target_bytes) w->opt.page_target_bytes = BRI_WRITER_DEFAULT_PAGE_BYTES;
  w->path = strdup(path);
  w->wbuf = malloc(WBUF_CAP);
  w->wbuf_cap = WBUF_CAP;
  int rc;
  if (!w->path || !w->wbuf) {
    rc = bri_error_set(err, BRI_ENOMEM, "file writer: out of memory");
    goto fail;
  }
  if ((rc = bri_writer_schema_build(w, fields, n_fields, err))) {
    bri_error_wrap(err, "%s", path);
    goto fail;
  }
  static const bri_store_steps steps = {.written = "writer.before_fsync"};
  if ((rc = bri_store_create(st, path, &steps, &w->out, err)) != 0) goto fail;
  *out = w;
  return 0;
fail:
  w->finished = true; /* nothing of ours on disk */
  bri_file_writer_free(w);
  return rc;
}

int bri_file_writer_append(bri_file_writer *w, const struct ArrowArray *const *arrays,
                           size_t n_arrays, bri_blob_payload_fn fn, void *ctx, bri_error *err) {
  if (w->failed || w->finished)
    return bri_error_set(err, BRI_EINVAL, "%s: the writer is %s", w->path,
                         w->failed ? "failed" : "finished");
  int rc = bri_shred_batch(w, arrays, n_arrays, fn, ctx, err);
  if (rc) {
    if (!w->failed) bri_error_wrap(err, "%s", w->path);
    return bri_writer_fail(w, rc);
  }
  return 0;
}

int bri_file_writer_append_leaf(bri_file_writer *w, size_t column, const bri_leaf_page *page,
                                bri_blob_payload_fn fn, void *ctx, bri_error *err) {
  if (w->failed || w->finished)
    return bri_error_set(err, BRI_EINVAL, "%s: the writer is %s", w->path,
                         w->failed ? "failed" : "finished");
  if (column >= w->n_cols)
    return bri_error_set(err, BRI_EINVAL, "%s: column %zu of %zu", w->path, column, w->n_cols);
  int rc = bri_shred_leaf_page(w, &w->cols[column], page, fn, ctx, err);
  if (rc) {
    if (!w->failed) bri_error_wrap(err, "%s", w->path);
    return bri_writer_fail(w, rc);
  }
  return 0;
}

/* ---- finish ------------------------------------------------------------------------ */

static int pack_any(const char *url, const uint8_t *val, size_t len, uint8_t **out, size_t *olen) {
  Google__Protobuf__Any any = GOOGLE__PROTOBUF__ANY__INIT;
  any.type_url = (char *)url;
  any.has_value = 1;
  any.value.data = (uint8_t *)val;
  any.value.len = len;
  *olen = google__protobuf__any__get_packed_size(&any);
  *out = malloc(*olen);
  if (!*out) return -1;
  google__protobuf__any__pack(&any, *out);
  return 0;
}

static int put_message(bri_file_writer *w, const ProtobufCMessage *m, uint64_t *pos,
                       uint64_t *size, bri_error *err) {
  size_t n = protobuf_c_message_get_packed_size(m);
  uint8_t *b = malloc(n ? n : 1);
  if (!b) return bri_error_set(err, BRI_ENOMEM, "file writer: out of memory");
  protobuf_c_message_pack(m, b);
  *pos = w->pos;
  *size = n;
  int rc = put_bytes(w, b, n, err);
  free(b);
  return rc;
}

/* ---- ColumnMetadata on the wire, written directly: a bin of thousands of
 * copied pages made protobuf-c build and walk a message per page. The bytes
 * are what protobuf-c packs for the same message (test_writer compares). */

static size_t varint_len(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) v >>= 7, n++;
  return n;
}

static uint8_t *put_varint(uint8_t *p, uint64_t v) {
  while (v >= 0x80) *p++ = (uint8_t)(v | 0x80), v >>= 7;
  *p++ = (uint8_t)v;
  return p;
}

/* Length-delimited field `id` (id < 16) with a payload of n bytes: its
 * key and length. */
static size_t ld_head_len(size_t n) { return 1 + varint_len(n); }
static uint8_t *put_ld_head(uint8_t *p, unsigned id, size_t n) {
  *p++ = (uint8_t)(id << 3 | 2);
  return put_varint(p, n);
}

/* Encoding{direct: DirectEncoding{encoding: any}} as the payload of a field. */
static size_t direct_len(size_t any_len) {
  size_t d = ld_head_len(any_len) + any_len; /* DirectEncoding.encoding = 1 */
  return ld_head_len(d) + d;                 /* Encoding.direct = 2 */
}
static uint8_t *put_direct(uint8_t *p, const uint8_t *any, size_t any_len) {
  p = put_ld_head(p, 2, ld_head_len(any_len) + any_len);
  p = put_ld_head(p, 1, any_len);
  memcpy(p, any, any_len);
  return p + any_len;
}

static size_t packed_len(const uint64_t *v, size_t n) {
  size_t len = 0;
  for (size_t i = 0; i < n; i++) len += varint_len(v[i]);
  return len;
}

/* Page {buffer_offsets = 1 [packed], buffer_sizes = 2 [packed], length = 3,
 * encoding = 4, priority = 5 (when not 0)}: its payload length. */
static size_t page_len(const wpage *p, size_t *off_len, size_t *size_len) {
  *off_len = packed_len(p->offsets, p->n_buffers);
  *size_len = packed_len(p->sizes, p->n_buffers);
  size_t dl = direct_len(p->encoding_len);
  size_t n = 1 + varint_len(p->rows) + ld_head_len(dl) + dl;
  if (p->n_buffers) n += ld_head_len(*off_len) + *off_len + ld_head_len(*size_len) + *size_len;
  if (p->priority) n += 1 + varint_len(p->priority);
  return n;
}

static uint8_t *put_page(uint8_t *q, const wpage *p) {
  size_t off_len, size_len, n = page_len(p, &off_len, &size_len);
  q = put_ld_head(q, 2, n); /* ColumnMetadata.pages = 2 */
  if (p->n_buffers) {
    q = put_ld_head(q, 1, off_len);
    for (size_t i = 0; i < p->n_buffers; i++) q = put_varint(q, p->offsets[i]);
    q = put_ld_head(q, 2, size_len);
    for (size_t i = 0; i < p->n_buffers; i++) q = put_varint(q, p->sizes[i]);
  }
  *q++ = 3 << 3;
  q = put_varint(q, p->rows);
  q = put_ld_head(q, 4, direct_len(p->encoding_len));
  q = put_direct(q, p->encoding, p->encoding_len);
  if (p->priority) {
    *q++ = 5 << 3;
    q = put_varint(q, p->priority);
  }
  return q;
}

static int write_column_meta(bri_file_writer *w, const wcol *c, const uint8_t *col_any,
                             size_t col_any_len, uint64_t *pos, uint64_t *size, bri_error *err) {
  size_t n = ld_head_len(direct_len(col_any_len)) + direct_len(col_any_len); /* encoding = 1 */
  for (size_t i = 0; i < c->n_pages; i++) {
    size_t ol, sl, pl = page_len(&c->pages[i], &ol, &sl);
    n += ld_head_len(pl) + pl;
  }
  uint8_t *b = malloc(n), *q = b;
  if (!b) return bri_error_set(err, BRI_ENOMEM, "file writer: out of memory");
  q = put_ld_head(q, 1, direct_len(col_any_len));
  q = put_direct(q, col_any, col_any_len);
  for (size_t i = 0; i < c->n_pages; i++) q = put_page(q, &c->pages[i]);
  *pos = w->pos;
  *size = n;
  int rc = (size_t)(q - b) == n ? put_bytes(w, b, n, err)
                                : bri_error_set(err, BRI_EIO, "%s: column metadata of %zu bytes came "
                                                "out as %zu", w->path, n, (size_t)(q - b));
  free(b);
  return rc;
}

int bri_file_writer_finish(bri_file_writer *w, bri_file_result *res, bri_error *err) {
  memset(res, 0, sizeof *res);
  if (w->failed || w->finished)
    return bri_error_set(err, BRI_EINVAL, "%s: the writer is %s", w->path,
                         w->failed ? "failed" : "finished");
  int rc;
  for (size_t i = 0; i < w->n_cols; i++)
    if ((rc = bri_writer_flush_column(w, &w->cols[i], err))) return bri_writer_fail(w, rc);
  uint64_t rows = w->cols[0].rows_written;
  for (size_t i = 1; i < w->n_cols; i++)
    if (w->cols[i].rows_written != rows)
      return bri_writer_fail(
          w, bri_error_set(err, BRI_EINVAL,
                           "%s: column %zu (%s) has %llu rows but column 0 (%s) has %llu",
                           w->path, i, w->cols[i].path,
                           (unsigned long long)w->cols[i].rows_written, w->cols[0].path,
                           (unsigned long long)rows));
  /* global buffer 0 starts 64-aligned: every buffer before it was padded */
  Lance__File__Schema schema = LANCE__FILE__SCHEMA__INIT;
  schema.n_fields = w->n_gb0;
  schema.fields = w->gb0;
  Lance__File__FileDescriptor fd = LANCE__FILE__FILE_DESCRIPTOR__INIT;
  fd.schema = &schema;
  fd.has_length = 1;
  fd.length = rows;
  uint64_t gb0_pos = 0, gb0_size = 0;
  if ((rc = put_message(w, &fd.base, &gb0_pos, &gb0_size, err))) return bri_writer_fail(w, rc);
  uint8_t *col_any = NULL;
  size_t col_any_len = 0;
  static const uint8_t values_empty[2] = {0x0a, 0x00}; /* ColumnEncoding{values: Empty} */
  if (pack_any(BRI_COLUMN_ENCODING_TYPE_URL, values_empty, 2, &col_any, &col_any_len))
    return bri_writer_fail(w, bri_error_set(err, BRI_ENOMEM, "file writer: out of memory"));
  uint64_t meta_start = w->pos;
  uint64_t *cmo = calloc(w->n_cols * 2, sizeof *cmo);
  if (!cmo) {
    free(col_any);
    return bri_writer_fail(w, bri_error_set(err, BRI_ENOMEM, "file writer: out of memory"));
  }
  for (size_t i = 0; i < w->n_cols && !rc; i++)
    rc = write_column_meta(w, &w->cols[i], col_any, col_any_len, &cmo[2 * i], &cmo[2 * i + 1], err);
  free(col_any);
  uint64_t cmo_start = w->pos;
  if (!rc) rc = put_bytes(w, cmo, w->n_cols * 16, err); /* little-endian host */
  free(cmo);
  uint64_t gbo_start = w->pos;
  uint64_t gbo[2] = {gb0_pos, gb0_size};
  if (!rc) rc = put_bytes(w, gbo, 16, err);
  uint8_t footer[40];
  memcpy(footer, &meta_start, 8);
  memcpy(footer + 8, &cmo_start, 8);
  memcpy(footer + 16, &gbo_start, 8);
  uint32_t ngb = 1, ncols = (uint32_t)w->n_cols;
  uint16_t major = 2, minor = w->minor;
  memcpy(footer + 24, &ngb, 4);
  memcpy(footer + 28, &ncols, 4);
  memcpy(footer + 32, &major, 2);
  memcpy(footer + 34, &minor, 2);
  memcpy(footer + 36, "LANC", 4);
  if (!rc) rc = put_bytes(w, footer, 40, err);
  if (!rc) rc = wflush(w, err);
  if (rc) return bri_writer_fail(w, rc);
  /* complete and durable (writer.before_fsync is passed in there); a failure
   * removes the file */
  bri_swriter *sw = w->out;
  w->out = NULL;
  if ((rc = bri_swriter_finish(sw, err)) != 0) {
    w->failed = true;
    return rc;
  }
  if ((rc = bri_failpoint("writer.after_finish", err)) != 0) {
    bri_error_wrap(err, "%s", w->path);
    return bri_writer_fail(w, rc);
  }
  w->finished = true;
  res->file_size = w->pos;
  res->num_rows = rows;
  res->major = 2;
  res->minor = w->minor;
  res->n_columns = w->n_cols;
  res->fields = malloc(w->n_cols * sizeof *res->fields);
  res->column_indices = malloc(w->n_cols * sizeof *res->column_indices);
  if (!res->fields || !res->column_indices) {
    bri_file_result_dispose(res);
    return bri_error_set(err, BRI_ENOMEM, "file writer: out of memory (the file %s is complete)",
                         w->path);
  }
  for (size_t i = 0; i < w->n_cols; i++) {
    res->fields[i] = w->cols[i].field_id;
    res->column_indices[i] = (int32_t)i;
  }
  return 0;
}

void bri_file_result_dispose(bri_file_result *r) {
  if (!r) return;
  free(r->fields);
  free(r->column_indices);
  memset(r, 0, sizeof *r);
}

void bri_file_writer_free(bri_file_writer *w) {
  if (!w) return;
  if (!w->finished) bri_writer_fail(w, 0);
  for (size_t i = 0; i < w->n_cols; i++) {
    wcol *c = &w->cols[i];
    for (size_t p = 0; p < c->n_pages; p++) free(c->pages[p].encoding);
    free(c->pages);
    free(c->rep);
    free(c->raw);
    free(c->logical_type);
    free(c->path);
    bri_wvals_dispose(&c->vals);
  }
  free(w->cols);
  bri_writer_schema_dispose(w);
  bri_pagecopy_forget(w);
  free(w->scratch);
  free(w->wbuf);
  free(w->path);
  free(w);
}

/* ---- accessors ---------------------------------------------------------------------- */

const char *bri_file_writer_path(const bri_file_writer *w) { return w->path; }
uint16_t bri_file_writer_minor(const bri_file_writer *w) { return w->minor; }
size_t bri_file_writer_num_columns(const bri_file_writer *w) { return w->n_cols; }
const bri_leaf_type *bri_file_writer_column_type(const bri_file_writer *w, size_t column) {
  return column < w->n_cols ? &w->cols[column].type : NULL;
}
int32_t bri_file_writer_column_field(const bri_file_writer *w, size_t column) {
  return column < w->n_cols ? w->cols[column].field_id : -1;
}
const char *bri_file_writer_column_path(const bri_file_writer *w, size_t column) {
  return column < w->n_cols ? w->cols[column].path : NULL;
}
bool bri_file_writer_column_is_blob(const bri_file_writer *w, size_t column) {
  return column < w->n_cols && w->cols[column].blob_v2;
}
uint64_t bri_file_writer_column_rows(const bri_file_writer *w, size_t column) {
  return column < w->n_cols ? w->cols[column].rows_written + w->cols[column].rows : 0;
}
uint64_t bri_file_writer_bytes(const bri_file_writer *w) { return w->pos; }
