/* codec.c: the CompressiveEncoding interpreter for mini-block chunks and
 * block buffers (docs/format/file.md sections 4 and 7; see decode.h).
 *
 * Two entry families: *_elems decode n fixed-width elements of a known width
 * straight into memory (levels, dictionary indices, the innermost values of a
 * fixed-width column), and the values-level functions append to a bri_values
 * and handle the structure above elements (FixedSizeList validity, variable
 * width, packed structs). General wrappers decompress their first buffer into
 * scratch that is credited back to the page budget when the node is done.
 *
 * Width rule: a node must produce exactly the element width the column needs
 * (e.g. InlineBitpacking(32) for an int32 leaf); anything else is reported as
 * a mismatch naming both widths. */
#include <stdlib.h>
#include <string.h>

#include "lance/encoding/bitpack.h"
#include "lance/encoding/bss.h"
#include "lance/encoding/decode.h"
#include "lance/encoding/fsst.h"
#include "lance/encoding/rle.h"
#include "util/bytes.h"

#define CASE(x) LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION_##x
#define MAX_ENC_DEPTH 24
#define MAX_CHUNK_BUFFERS 64

const char *bri_enc_name(const bri_enc *e) {
  if (!e) return "(missing encoding)";
  switch (e->compression_case) {
  case CASE(FLAT): return "Flat";
  case CASE(VARIABLE): return "Variable";
  case CASE(CONSTANT): return "Constant";
  case CASE(OUT_OF_LINE_BITPACKING): return "OutOfLineBitpacking";
  case CASE(INLINE_BITPACKING): return "InlineBitpacking";
  case CASE(FSST): return "Fsst";
  case CASE(DICTIONARY): return "Dictionary";
  case CASE(RLE): return "Rle";
  case CASE(BYTE_STREAM_SPLIT): return "ByteStreamSplit";
  case CASE(GENERAL): return "General";
  case CASE(FIXED_SIZE_LIST): return "FixedSizeList";
  case CASE(PACKED_STRUCT): return "PackedStruct";
  case CASE(VARIABLE_PACKED_STRUCT): return "VariablePackedStruct";
  case CASE(RANGE): return "Range";
  case CASE(DELTA): return "Delta";
  default: return "(empty encoding)";
  }
}

/* Child slots of each node, for the structural walk. */
static size_t enc_children(const bri_enc *e, const bri_enc **out) {
  size_t n = 0;
  switch (e->compression_case) {
  case CASE(VARIABLE):
    if (e->variable && e->variable->offsets) out[n++] = e->variable->offsets;
    break;
  case CASE(OUT_OF_LINE_BITPACKING):
    if (e->out_of_line_bitpacking && e->out_of_line_bitpacking->values)
      out[n++] = e->out_of_line_bitpacking->values;
    break;
  case CASE(FSST):
    if (e->fsst && e->fsst->values) out[n++] = e->fsst->values;
    break;
  case CASE(DICTIONARY):
    if (e->dictionary && e->dictionary->indices) out[n++] = e->dictionary->indices;
    if (e->dictionary && e->dictionary->items) out[n++] = e->dictionary->items;
    break;
  case CASE(RLE):
    if (e->rle && e->rle->values) out[n++] = e->rle->values;
    if (e->rle && e->rle->run_lengths) out[n++] = e->rle->run_lengths;
    break;
  case CASE(BYTE_STREAM_SPLIT):
    if (e->byte_stream_split && e->byte_stream_split->values) out[n++] = e->byte_stream_split->values;
    break;
  case CASE(GENERAL):
    if (e->general && e->general->values) out[n++] = e->general->values;
    break;
  case CASE(FIXED_SIZE_LIST):
    if (e->fixed_size_list && e->fixed_size_list->values) out[n++] = e->fixed_size_list->values;
    break;
  case CASE(PACKED_STRUCT):
    if (e->packed_struct && e->packed_struct->values) out[n++] = e->packed_struct->values;
    break;
  case CASE(DELTA):
    if (e->delta && e->delta->deltas) out[n++] = e->delta->deltas;
    break;
  default: break;
  }
  return n;
}

static int check_rec(const bri_enc *e, int depth, bri_error *err) {
  if (depth > MAX_ENC_DEPTH)
    return bri_error_set(err, BRI_ECORRUPT, "encoding tree is nested more than %d deep",
                         MAX_ENC_DEPTH);
  switch (e->compression_case) {
  case CASE(RANGE):
  case CASE(DELTA):
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "%s encoding belongs to Lance file format 2.3, which is not supported",
                         bri_enc_name(e));
  case CASE(FLAT):
  case CASE(VARIABLE):
  case CASE(CONSTANT):
  case CASE(OUT_OF_LINE_BITPACKING):
  case CASE(INLINE_BITPACKING):
  case CASE(FSST):
  case CASE(DICTIONARY):
  case CASE(RLE):
  case CASE(BYTE_STREAM_SPLIT):
  case CASE(GENERAL):
  case CASE(FIXED_SIZE_LIST):
  case CASE(PACKED_STRUCT):
  case CASE(VARIABLE_PACKED_STRUCT): break;
  default:
    return bri_error_set(err, BRI_ECORRUPT, "encoding tree has a node with no compression set");
  }
  if (!e->flat) /* every case above holds a submessage pointer in the union */
    return bri_error_set(err, BRI_ECORRUPT, "%s node has no body", bri_enc_name(e));
  if (e->compression_case == CASE(VARIABLE_PACKED_STRUCT)) {
    const Lance__Encodings21__VariablePackedStruct *vps = e->variable_packed_struct;
    for (size_t i = 0; i < vps->n_fields; i++) {
      if (!vps->fields[i] || !vps->fields[i]->value)
        return bri_error_set(err, BRI_ECORRUPT,
                             "VariablePackedStruct field %zu has no value encoding", i);
      int rc = check_rec(vps->fields[i]->value, depth + 1, err);
      if (rc) return rc;
    }
    return 0;
  }
  const bri_enc *kids[2];
  size_t nk = enc_children(e, kids);
  for (size_t i = 0; i < nk; i++) {
    int rc = check_rec(kids[i], depth + 1, err);
    if (rc) return rc;
  }
  return 0;
}

int bri_enc_check_known(const bri_enc *e, bri_error *err) {
  if (!e) return bri_error_set(err, BRI_ECORRUPT, "encoding is missing");
  return check_rec(e, 0, err);
}

static int need_child(const bri_enc *child, const char *parent, const char *what,
                      bri_error *err) {
  if (!child)
    return bri_error_set(err, BRI_ECORRUPT, "%s has no %s encoding", parent, what);
  return 0;
}

/* Width of a Flat child (Rle values, ByteStreamSplit values, bitpacked width). */
static int flat_bits(const bri_enc *child, const char *parent, const char *what, uint64_t *bits,
                     bri_error *err) {
  int rc = need_child(child, parent, what, err);
  if (rc) return rc;
  if (child->compression_case != CASE(FLAT))
    return bri_error_set(err, BRI_ECORRUPT, "%s %s must be Flat, found %s", parent, what,
                         bri_enc_name(child));
  *bits = child->flat->bits_per_value;
  return 0;
}

int bri_enc_mb_buffers(const bri_enc *e, size_t *count, bri_error *err) {
  size_t inner = 0;
  int rc;
  switch (e->compression_case) {
  case CASE(FLAT):
  case CASE(INLINE_BITPACKING):
  case CASE(VARIABLE):
  case CASE(BYTE_STREAM_SPLIT):
  case CASE(PACKED_STRUCT): *count = 1; return 0;
  case CASE(RLE): *count = 2; return 0;
  case CASE(CONSTANT): *count = 0; return 0;
  case CASE(FSST):
    if ((rc = need_child(e->fsst->values, "Fsst", "values", err))) return rc;
    return bri_enc_mb_buffers(e->fsst->values, count, err);
  case CASE(GENERAL):
    if ((rc = need_child(e->general->values, "General", "values", err))) return rc;
    if ((rc = bri_enc_mb_buffers(e->general->values, &inner, err))) return rc;
    if (inner == 0)
      return bri_error_set(err, BRI_ECORRUPT, "General wraps %s, which has no buffer to compress",
                           bri_enc_name(e->general->values));
    *count = inner;
    return 0;
  case CASE(FIXED_SIZE_LIST):
    if ((rc = need_child(e->fixed_size_list->values, "FixedSizeList", "values", err))) return rc;
    if ((rc = bri_enc_mb_buffers(e->fixed_size_list->values, &inner, err))) return rc;
    *count = inner + (e->fixed_size_list->has_validity ? 1 : 0);
    return 0;
  default:
    return bri_error_set(err, BRI_EUNSUPPORTED, "%s cannot encode mini-block values",
                         bri_enc_name(e));
  }
}

int bri_enc_fixed_bits(const bri_enc *e, uint64_t *bits, bri_error *err) {
  int rc;
  switch (e->compression_case) {
  case CASE(FLAT): *bits = e->flat->bits_per_value; return 0;
  case CASE(INLINE_BITPACKING): *bits = e->inline_bitpacking->uncompressed_bits_per_value; return 0;
  case CASE(OUT_OF_LINE_BITPACKING):
    *bits = e->out_of_line_bitpacking->uncompressed_bits_per_value;
    return 0;
  case CASE(RLE): return flat_bits(e->rle->values, "Rle", "values", bits, err);
  case CASE(BYTE_STREAM_SPLIT):
    return flat_bits(e->byte_stream_split->values, "ByteStreamSplit", "values", bits, err);
  case CASE(GENERAL):
    if ((rc = need_child(e->general->values, "General", "values", err))) return rc;
    return bri_enc_fixed_bits(e->general->values, bits, err);
  default:
    return bri_error_set(err, BRI_ECORRUPT, "%s does not produce fixed-width values",
                         bri_enc_name(e));
  }
}

/* ---- helpers ---------------------------------------------------------------- */

static uint64_t bits_to_bytes(uint64_t n, uint64_t bits, int *overflow) {
  uint64_t t;
  if (__builtin_mul_overflow(n, bits, &t)) {
    *overflow = 1;
    return 0;
  }
  return t / 8 + (t % 8 != 0);
}

/* Upper bound of what a General unit may decompress to when it holds n
 * elements of ew bits (plus bitpacking headers and padding to 1024). */
static uint64_t general_cap(const bri_dec *d, uint64_t n, uint64_t ew) {
  uint64_t units = n / 1024 + 1, per = ew / 8 + 2, cap;
  if (__builtin_mul_overflow(units * 1024, per, &cap) || cap > d->budget) return d->budget;
  return cap + 8192 > d->budget ? d->budget : cap + 8192;
}

static int scheme_of(const Lance__Encodings21__BufferCompression *c, const char *what,
                     bri_error *err) {
  if (!c) return bri_error_set(err, BRI_ECORRUPT, "%s has no compression scheme", what);
  int s = (int)c->scheme;
  if (s != BRI_GENERAL_LZ4 && s != BRI_GENERAL_ZSTD)
    return bri_error_set(err, BRI_EUNSUPPORTED, "%s names compression scheme %d; expected lz4 "
                                                "(1) or zstd (2)",
                         what, s);
  return s;
}

/* Decompresses one unit into budgeted scratch; free with bri_dec_free(d, p, len). */
static int unit_decompress(bri_dec *d, const Lance__Encodings21__BufferCompression *c,
                           const char *what, const uint8_t *in, size_t len, uint64_t cap,
                           uint8_t **out, size_t *out_len, bri_error *err) {
  int s = scheme_of(c, what, err);
  if (s < 0) return s;
  size_t max_out = cap > SIZE_MAX ? SIZE_MAX : (size_t)cap;
  int rc = bri_general_decompress(&d->gen, s, in, len, max_out, out, out_len, err);
  if (rc) return bri_error_wrap(err, "%s", what);
  if ((rc = bri_dec_charge(d, *out_len, what, err))) {
    free(*out);
    *out = NULL;
    return rc;
  }
  return 0;
}

static void fill_const(const uint8_t *val, size_t vlen, uint64_t n, uint64_t ew, uint8_t *dst,
                       uint64_t dst_bit) {
  if (ew == 1) {
    bri_bits_fill(dst, dst_bit, n, val[0] & 1);
    return;
  }
  if (vlen == 0) return;
  uint8_t *p = dst + dst_bit / 8;
  for (uint64_t i = 0; i < n; i++) memcpy(p + i * vlen, val, vlen);
}

static int const_value(const bri_enc *e, uint64_t ew, const uint8_t **val, size_t *vlen,
                       bri_error *err) {
  const Lance__Encodings21__Constant *c = e->constant;
  if (!c->has_value)
    return bri_error_set(err, BRI_ECORRUPT, "Constant encoding has no value");
  size_t l = c->value.len;
  if (!((ew == 1 && l == 1) || (ew % 8 == 0 && l * 8 == ew)))
    return bri_error_set(err, BRI_ECORRUPT,
                         "Constant value is %zu bytes; the column needs %llu-bit values", l,
                         (unsigned long long)ew);
  *val = c->value.data;
  *vlen = l;
  return 0;
}

static int width_mismatch(const char *what, uint64_t have, uint64_t want, bri_error *err) {
  return bri_error_set(err, BRI_ECORRUPT, "%s produces %llu-bit values; the column needs %llu bits",
                       what, (unsigned long long)have, (unsigned long long)want);
}

/* Flat copy shared by both contexts. */
static int flat_copy(bri_dec *d, const Lance__Encodings21__Flat *f, const uint8_t *buf, size_t len,
                     uint64_t n, uint64_t ew, uint8_t *dst, uint64_t dst_bit, bri_error *err) {
  if (f->bits_per_value != ew) return width_mismatch("Flat", f->bits_per_value, ew, err);
  int of = 0;
  uint64_t need = bits_to_bytes(n, ew, &of);
  if (of) return bri_error_set(err, BRI_ECORRUPT, "Flat: %llu values overflow", (unsigned long long)n);
  uint8_t *tmp = NULL;
  size_t tlen = 0;
  if (f->data) {
    int rc = unit_decompress(d, f->data, "Flat data", buf, len, need, &tmp, &tlen, err);
    if (rc) return rc;
    buf = tmp;
    len = tlen;
  }
  int rc = 0;
  if (len < need) {
    rc = bri_error_set(err, BRI_ECORRUPT,
                       "Flat: %llu values of %llu bits need %llu bytes but the buffer has %zu",
                       (unsigned long long)n, (unsigned long long)ew, (unsigned long long)need,
                       len);
  } else if (ew % 8 == 0 && dst_bit % 8 == 0) {
    if (need) memcpy(dst + dst_bit / 8, buf, (size_t)need);
  } else {
    bri_bits_copy(dst, dst_bit, buf, 0, n * ew);
  }
  bri_dec_free(d, tmp, tlen);
  return rc;
}

static int byte_aligned(uint64_t ew, uint64_t dst_bit, const char *what, bri_error *err) {
  if (ew % 8 || dst_bit % 8)
    return bri_error_set(err, BRI_EUNSUPPORTED, "%s of %llu-bit values is not supported", what,
                         (unsigned long long)ew);
  return 0;
}

/* ---- mini-block, elements ------------------------------------------------- */

/* Fixed-width elements, n of ew bits into dst at bit dst_bit, from a
 * mini-block chunk's buffers (block false: each compression takes its
 * buffers from bufs, *used says how many) or from one block buffer (block
 * true: bufs[0] only, Rle holds its runs and values together). The one
 * switch over compressions for both contexts (docs/format/file.md 7). */
static int fixed_elems(bri_dec *d, const bri_enc *e, const bri_slice *bufs, size_t nbufs, bool block,
                       size_t *used, uint64_t n, uint64_t ew, uint8_t *dst, uint64_t dst_bit,
                       bri_error *err) {
  int rc;
  uint64_t t;
  *used = 0;
  const uint8_t *p = bufs[0].p;
  size_t len = bufs[0].len;
  switch (e->compression_case) {
  case CASE(FLAT):
    *used = 1;
    return flat_copy(d, e->flat, p, len, n, ew, dst, dst_bit, err);
  case CASE(INLINE_BITPACKING): {
    t = e->inline_bitpacking->uncompressed_bits_per_value;
    if (t != ew) return width_mismatch("InlineBitpacking", t, ew, err);
    if ((rc = byte_aligned(ew, dst_bit, "InlineBitpacking", err))) return rc;
    *used = 1;
    uint8_t *tmp = NULL;
    size_t tlen = 0;
    if (e->inline_bitpacking->values) {
      rc = unit_decompress(d, e->inline_bitpacking->values, "InlineBitpacking values", p, len,
                           general_cap(d, n, ew), &tmp, &tlen, err);
      if (rc) return rc;
      p = tmp;
      len = tlen;
    }
    rc = bri_inline_bitpack_decode((unsigned)t, p, len, n, dst + dst_bit / 8, err);
    bri_dec_free(d, tmp, tlen);
    return rc;
  }
  case CASE(OUT_OF_LINE_BITPACKING): {
    if (!block) break; /* not a mini-block compression */
    uint64_t w;
    t = e->out_of_line_bitpacking->uncompressed_bits_per_value;
    if ((rc = flat_bits(e->out_of_line_bitpacking->values, "OutOfLineBitpacking", "values", &w,
                        err)))
      return rc;
    if (t != ew) return width_mismatch("OutOfLineBitpacking", t, ew, err);
    if ((rc = byte_aligned(ew, dst_bit, "OutOfLineBitpacking", err))) return rc;
    if (w > t)
      return bri_error_set(err, BRI_ECORRUPT,
                           "OutOfLineBitpacking packs to %llu bits, more than the %llu-bit values",
                           (unsigned long long)w, (unsigned long long)t);
    *used = 1;
    return bri_outofline_bitpack_decode((unsigned)t, (unsigned)w, p, len, n, dst + dst_bit / 8,
                                        err);
  }
  case CASE(RLE): {
    uint64_t rl;
    if ((rc = flat_bits(e->rle->values, "Rle", "values", &t, err))) return rc;
    if ((rc = flat_bits(e->rle->run_lengths, "Rle", "run_lengths", &rl, err))) return rc;
    if (rl != 8)
      return bri_error_set(err, BRI_ECORRUPT, "Rle run lengths are %llu bits; expected 8",
                           (unsigned long long)rl);
    if (t != ew) return width_mismatch("Rle", t, ew, err);
    if ((rc = byte_aligned(ew, dst_bit, "Rle", err))) return rc;
    if (block) {
      *used = 1;
      return bri_rle_block_decode((unsigned)t, p, len, n, dst + dst_bit / 8, err);
    }
    *used = 2;
    return bri_rle_decode((unsigned)t, p, len, bufs[1].p, bufs[1].len, n, dst + dst_bit / 8, err);
  }
  case CASE(BYTE_STREAM_SPLIT): {
    if ((rc = flat_bits(e->byte_stream_split->values, "ByteStreamSplit", "values", &t, err)))
      return rc;
    if (t != ew) return width_mismatch("ByteStreamSplit", t, ew, err);
    if ((rc = byte_aligned(ew, dst_bit, "ByteStreamSplit", err))) return rc;
    if (t > 64)
      return bri_error_set(err, BRI_EUNSUPPORTED, "ByteStreamSplit of %llu-bit values",
                           (unsigned long long)t);
    if (n > len / (t / 8))
      return bri_error_set(err, BRI_ECORRUPT,
                           "ByteStreamSplit: %llu values of %llu bits do not fit %zu bytes",
                           (unsigned long long)n, (unsigned long long)t, len);
    *used = 1;
    bri_bss_decode((size_t)(t / 8), p, n, dst + dst_bit / 8);
    return 0;
  }
  case CASE(CONSTANT): {
    const uint8_t *val = NULL;
    size_t vlen = 0;
    if ((rc = const_value(e, ew, &val, &vlen, err))) return rc;
    fill_const(val, vlen, n, ew, dst, dst_bit);
    return 0;
  }
  case CASE(GENERAL): {
    if ((rc = need_child(e->general->values, "General", "values", err))) return rc;
    uint8_t *tmp;
    size_t tlen;
    rc = unit_decompress(d, e->general->compression, "General", p, len, general_cap(d, n, ew), &tmp,
                         &tlen, err);
    if (rc) return rc;
    /* the inner compression reads the decompressed first buffer, the rest as they are */
    bri_slice sub[MAX_CHUNK_BUFFERS];
    size_t ns = nbufs < MAX_CHUNK_BUFFERS ? nbufs : MAX_CHUNK_BUFFERS;
    memcpy(sub, bufs, ns * sizeof *sub);
    sub[0].p = tmp;
    sub[0].len = tlen;
    rc = fixed_elems(d, e->general->values, sub, ns, block, used, n, ew, dst, dst_bit, err);
    bri_dec_free(d, tmp, tlen);
    return rc;
  }
  default:
    break;
  }
  return bri_error_set(err, BRI_EUNSUPPORTED,
                       block ? "%s cannot encode a fixed-width block buffer"
                             : "%s cannot encode fixed-width values in a mini-block chunk",
                       bri_enc_name(e));
}

int bri_codec_mb_elems(bri_dec *d, const bri_enc *e, const bri_slice *bufs, size_t nbufs,
                       size_t *used, uint64_t n, uint64_t ew, uint8_t *dst, uint64_t dst_bit,
                       bri_error *err) {
  *used = 0;
  size_t want = 0;
  int rc = bri_enc_mb_buffers(e, &want, err);
  if (rc) return rc;
  if (want > nbufs)
    return bri_error_set(err, BRI_ECORRUPT, "%s needs %zu chunk buffers but %zu remain",
                         bri_enc_name(e), want, nbufs);
  return fixed_elems(d, e, bufs, nbufs, false, used, n, ew, dst, dst_bit, err);
}

/* ---- mini-block, values --------------------------------------------------- */

static uint64_t dims_product(const bri_values *v, unsigned from, unsigned to) {
  uint64_t p = 1;
  for (unsigned i = from; i < to; i++) p *= v->dims[i];
  return p;
}

static int general_then(bri_dec *d, const bri_enc *e, const bri_slice *bufs, size_t nbufs,
                        uint64_t cap, bri_slice *sub, uint8_t **tmp, size_t *tlen,
                        bri_error *err) {
  if (nbufs < 1)
    return bri_error_set(err, BRI_ECORRUPT, "General needs a chunk buffer but none remain");
  int rc = unit_decompress(d, e->general->compression, "General", bufs[0].p, bufs[0].len, cap, tmp,
                           tlen, err);
  if (rc) return rc;
  memcpy(sub, bufs, nbufs * sizeof *sub);
  sub[0].p = *tmp;
  sub[0].len = *tlen;
  return 0;
}

static int mb_fixed(bri_dec *d, const bri_enc *e, const bri_slice *bufs, size_t nbufs,
                    size_t *used, uint64_t n, unsigned depth, bri_values *v, bri_error *err) {
  int rc;
  *used = 0;
  if (e->compression_case == CASE(GENERAL) && e->general->values &&
      e->general->values->compression_case == CASE(FIXED_SIZE_LIST)) {
    bri_slice sub[MAX_CHUNK_BUFFERS];
    uint8_t *tmp;
    size_t tlen;
    uint64_t elems = n * v->elems_per_slot;
    size_t ns = nbufs < MAX_CHUNK_BUFFERS ? nbufs : MAX_CHUNK_BUFFERS;
    rc = general_then(d, e, bufs, ns, general_cap(d, elems, v->bits ? v->bits : 8), sub, &tmp,
                      &tlen, err);
    if (rc) return rc;
    rc = mb_fixed(d, e->general->values, sub, ns, used, n, depth, v, err);
    bri_dec_free(d, tmp, tlen);
    return rc;
  }
  if (e->compression_case == CASE(FIXED_SIZE_LIST)) {
    const Lance__Encodings21__FixedSizeList *f = e->fixed_size_list;
    if (depth >= v->n_dims)
      return bri_error_set(err, BRI_ECORRUPT,
                           "FixedSizeList layer %u, but the column has %u FSL dimension(s)",
                           depth + 1, v->n_dims);
    if (f->items_per_value != v->dims[depth])
      return bri_error_set(err, BRI_ECORRUPT,
                           "FixedSizeList layer %u has %llu items per value; the column's "
                           "dimension is %u",
                           depth + 1, (unsigned long long)f->items_per_value, v->dims[depth]);
    if ((rc = need_child(f->values, "FixedSizeList", "values", err))) return rc;
    size_t k = 0;
    if (f->has_validity) {
      if (nbufs < 1)
        return bri_error_set(err, BRI_ECORRUPT, "FixedSizeList validity buffer is missing");
      uint64_t cum = dims_product(v, 0, depth + 1), bits = n * cum;
      uint64_t need = bits / 8 + (bits % 8 != 0);
      if (bufs[0].len < need)
        return bri_error_set(err, BRI_ECORRUPT,
                             "FixedSizeList validity: %llu items need %llu bytes but the buffer "
                             "has %zu",
                             (unsigned long long)bits, (unsigned long long)need, bufs[0].len);
      if ((rc = bri_values_fsl_validity(d, v, depth, err))) return rc;
      bri_bits_copy(v->fsl_validity[depth], v->n * cum, bufs[0].p, 0, bits);
      k = 1;
    }
    size_t u2 = 0;
    rc = mb_fixed(d, f->values, bufs + k, nbufs - k, &u2, n, depth + 1, v, err);
    *used = k + u2;
    return rc;
  }
  uint64_t inner_n = n * dims_product(v, 0, depth);
  uint64_t ew = (uint64_t)v->bits * dims_product(v, depth, v->n_dims);
  return bri_codec_mb_elems(d, e, bufs, nbufs, used, inner_n, ew, v->data,
                            v->n * bri_values_slot_bits(v), err);
}

/* Variable mini-block chunk: (n+1) offsets absolute in the buffer, then bytes. */
static int var_chunk(bri_dec *d, const bri_enc *e, const bri_slice *b, uint64_t n, bri_values *v,
                     bri_error *err) {
  const Lance__Encodings21__Variable *var = e->variable;
  uint64_t w;
  int rc = flat_bits(var->offsets, "Variable", "offsets", &w, err);
  if (rc) return rc;
  if (w != 32 && w != 64)
    return bri_error_set(err, BRI_ECORRUPT, "Variable offsets are %llu bits; expected 32 or 64",
                         (unsigned long long)w);
  if (var->values)
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "Variable with a values BufferCompression is not supported");
  size_t wb = (size_t)(w / 8);
  if (n + 1 > b->len / wb)
    return bri_error_set(err, BRI_ECORRUPT,
                         "Variable: %llu values need %llu bytes of offsets but the chunk buffer "
                         "has %zu",
                         (unsigned long long)n, (unsigned long long)((n + 1) * wb), b->len);
  const uint8_t *o = b->p;
  uint64_t first = wb == 4 ? bri_le32(o) : bri_le64(o), prev = first;
  for (uint64_t i = 1; i <= n; i++) {
    uint64_t x = wb == 4 ? bri_le32(o + i * 4) : bri_le64(o + i * 8);
    if (x < prev)
      return bri_error_set(err, BRI_ECORRUPT, "Variable: offset %llu (%llu) is below offset %llu "
                                              "(%llu)",
                           (unsigned long long)i, (unsigned long long)x,
                           (unsigned long long)(i - 1), (unsigned long long)prev);
    prev = x;
  }
  if (prev > b->len)
    return bri_error_set(err, BRI_ECORRUPT,
                         "Variable: last offset %llu is past the %zu-byte chunk buffer",
                         (unsigned long long)prev, b->len);
  if ((rc = bri_values_reserve(d, v, n, prev - first, err))) return rc;
  memcpy(v->data + v->data_len, b->p + first, (size_t)(prev - first));
  int64_t base = (int64_t)v->data_len - (int64_t)first;
  for (uint64_t i = 1; i <= n; i++) {
    uint64_t x = wb == 4 ? bri_le32(o + i * 4) : bri_le64(o + i * 8);
    v->offsets[v->n + i] = base + (int64_t)x;
  }
  v->data_len += prev - first;
  v->n += n;
  return 0;
}

static void scratch_dispose(bri_dec *d, bri_values *s) {
  uint64_t bytes = (s->offsets ? (s->cap_slots + 1) * 8 : 0) + (s->data ? s->cap_data : 0);
  bri_values_dispose(s);
  d->budget += bytes;
}

static int fsst_values(bri_dec *d, const bri_fsst_table *tab, const bri_values *src, bri_values *v,
                       bri_error *err) {
  uint64_t total = 0;
  int rc;
  for (uint64_t i = 0; i < src->n; i++) {
    uint64_t l;
    rc = bri_fsst_decoded_len(tab, src->data + src->offsets[i],
                              (size_t)(src->offsets[i + 1] - src->offsets[i]), &l, err);
    if (rc) return bri_error_wrap(err, "value %llu", (unsigned long long)i);
    total += l;
  }
  if ((rc = bri_values_reserve(d, v, src->n, total, err))) return rc;
  for (uint64_t i = 0; i < src->n; i++) {
    size_t wrote;
    rc = bri_fsst_decode(tab, src->data + src->offsets[i],
                         (size_t)(src->offsets[i + 1] - src->offsets[i]), v->data + v->data_len,
                         (size_t)(v->cap_data - v->data_len), &wrote, err);
    if (rc) return rc;
    v->data_len += wrote;
    v->offsets[v->n + 1] = (int64_t)v->data_len;
    v->n++;
  }
  return 0;
}

static int mb_var(bri_dec *d, const bri_enc *e, const bri_slice *bufs, size_t nbufs, uint64_t n,
                  bri_values *v, bri_error *err) {
  int rc;
  switch (e->compression_case) {
  case CASE(VARIABLE):
    if (nbufs < 1) return bri_error_set(err, BRI_ECORRUPT, "Variable chunk buffer is missing");
    return var_chunk(d, e, &bufs[0], n, v, err);
  case CASE(FSST): {
    bri_fsst_table tab;
    if ((rc = need_child(e->fsst->values, "Fsst", "values", err))) return rc;
    if ((rc = bri_fsst_table_parse(e->fsst->symbol_table.data, e->fsst->symbol_table.len, &tab,
                                   err)))
      return rc;
    bri_values tmp;
    bri_leaf_type vt = {.kind = BRI_LEAF_VARIABLE};
    if ((rc = bri_values_init(&tmp, &vt, err))) return rc;
    rc = mb_var(d, e->fsst->values, bufs, nbufs, n, &tmp, err);
    if (!rc) rc = fsst_values(d, &tab, &tmp, v, err);
    scratch_dispose(d, &tmp);
    return rc;
  }
  case CASE(GENERAL): {
    if ((rc = need_child(e->general->values, "General", "values", err))) return rc;
    bri_slice sub[MAX_CHUNK_BUFFERS];
    uint8_t *tmp;
    size_t tlen;
    size_t ns = nbufs < MAX_CHUNK_BUFFERS ? nbufs : MAX_CHUNK_BUFFERS;
    if ((rc = general_then(d, e, bufs, ns, d->budget, sub, &tmp, &tlen, err))) return rc;
    rc = mb_var(d, e->general->values, sub, ns, n, v, err);
    bri_dec_free(d, tmp, tlen);
    return rc;
  }
  default:
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s cannot encode the variable-width values of a mini-block chunk",
                         bri_enc_name(e));
  }
}

/* Row-major fixed-width struct rows -> children. */
static int unzip_rows(bri_dec *d, const uint8_t *rows, uint64_t n, bri_values *v, bri_error *err) {
  int rc = bri_values_reserve(d, v, n, 0, err);
  if (rc) return rc;
  uint64_t row_bytes = 0;
  for (size_t c = 0; c < v->n_children; c++) row_bytes += v->children[c].bits / 8;
  uint64_t off = 0;
  for (size_t c = 0; c < v->n_children; c++) {
    bri_values *ch = &v->children[c];
    size_t cb = ch->bits / 8;
    uint8_t *dst = ch->data + ch->n * cb;
    for (uint64_t i = 0; i < n; i++) memcpy(dst + i * cb, rows + i * row_bytes + off, cb);
    ch->n += n;
    off += cb;
  }
  v->n += n;
  return 0;
}

static int mb_struct(bri_dec *d, const bri_enc *e, const bri_slice *bufs, size_t nbufs,
                     uint64_t n, bri_values *v, bri_error *err) {
  int rc;
  if (e->compression_case == CASE(GENERAL) && e->general->values) {
    bri_slice sub[MAX_CHUNK_BUFFERS];
    uint8_t *tmp;
    size_t tlen;
    size_t ns = nbufs < MAX_CHUNK_BUFFERS ? nbufs : MAX_CHUNK_BUFFERS;
    if ((rc = general_then(d, e, bufs, ns, d->budget, sub, &tmp, &tlen, err))) return rc;
    rc = mb_struct(d, e->general->values, sub, ns, n, v, err);
    bri_dec_free(d, tmp, tlen);
    return rc;
  }
  if (e->compression_case != CASE(PACKED_STRUCT))
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s cannot encode packed struct values in a mini-block chunk",
                         bri_enc_name(e));
  const Lance__Encodings21__PackedStruct *ps = e->packed_struct;
  if (ps->n_bits_per_value != v->n_children)
    return bri_error_set(err, BRI_ECORRUPT,
                         "PackedStruct has %zu fields; the column's struct has %zu",
                         ps->n_bits_per_value, v->n_children);
  uint64_t sum = 0;
  for (size_t c = 0; c < v->n_children; c++) {
    const bri_values *ch = &v->children[c];
    if (ch->kind != BRI_LEAF_FIXED || ps->bits_per_value[c] != bri_values_slot_bits(ch))
      return bri_error_set(err, BRI_ECORRUPT,
                           "PackedStruct field %zu has %llu bits; the column's field needs %llu",
                           c, (unsigned long long)ps->bits_per_value[c],
                           (unsigned long long)(ch->kind == BRI_LEAF_FIXED
                                                    ? bri_values_slot_bits(ch)
                                                    : 0));
    sum += ps->bits_per_value[c];
  }
  if ((rc = need_child(ps->values, "PackedStruct", "values", err))) return rc;
  int of = 0;
  uint64_t bytes = bits_to_bytes(n, sum, &of);
  if (of) return bri_error_set(err, BRI_ECORRUPT, "PackedStruct: size overflows");
  uint8_t *rows = bri_dec_alloc(d, bytes, "PackedStruct rows", err);
  if (!rows) return err->code;
  size_t used;
  rc = bri_codec_mb_elems(d, ps->values, bufs, nbufs, &used, n, sum, rows, 0, err);
  if (!rc) rc = unzip_rows(d, rows, n, v, err);
  bri_dec_free(d, rows, bytes);
  return rc;
}

int bri_codec_mb_decode(bri_dec *d, const bri_enc *e, const bri_slice *bufs, size_t nbufs,
                        uint64_t n, bri_values *v, bri_error *err) {
  int rc;
  switch (v->kind) {
  case BRI_LEAF_FIXED: {
    if ((rc = bri_values_reserve(d, v, n, 0, err))) return rc;
    size_t used;
    if ((rc = mb_fixed(d, e, bufs, nbufs, &used, n, 0, v, err))) return rc;
    v->n += n;
    return 0;
  }
  case BRI_LEAF_VARIABLE: return mb_var(d, e, bufs, nbufs, n, v, err);
  case BRI_LEAF_STRUCT: return mb_struct(d, e, bufs, nbufs, n, v, err);
  default: return bri_error_set(err, BRI_EINVAL, "value container of unknown kind");
  }
}

/* ---- block context -------------------------------------------------------- */

int bri_codec_block_elems(bri_dec *d, const bri_enc *e, const uint8_t *buf, size_t len,
                          uint64_t n, uint64_t ew, uint8_t *dst, uint64_t dst_bit,
                          bri_error *err) {
  const bri_slice one = {buf, len};
  size_t used;
  return fixed_elems(d, e, &one, 1, true, &used, n, ew, dst, dst_bit, err);
}

/* Variable block format (docs/format/file.md 7.2), both the current and the legacy
 * header. */
static int var_block(bri_dec *d, const uint8_t *buf, size_t len, uint64_t n, bri_values *v,
                     bri_error *err) {
  if (len < 4)
    return bri_error_set(err, BRI_ECORRUPT, "Variable block of %zu bytes has no header", len);
  uint64_t w, start;
  size_t ostart;
  if (buf[1] | buf[2] | buf[3]) { /* legacy: u8 bits, count, bytes_start */
    w = buf[0];
    ostart = w == 32 ? 9 : 17;
    if (w != 32 && w != 64)
      return bri_error_set(err, BRI_ECORRUPT, "Variable block (legacy header): %llu-bit offsets",
                           (unsigned long long)w);
    if (len < ostart)
      return bri_error_set(err, BRI_ECORRUPT, "Variable block of %zu bytes has no header", len);
    start = w == 32 ? bri_le32(buf + 5) : bri_le64(buf + 9);
  } else {
    w = bri_le32(buf);
    if (w != 32 && w != 64)
      return bri_error_set(err, BRI_ECORRUPT,
                           "Variable block header says %llu-bit offsets; expected 32 or 64",
                           (unsigned long long)w);
    ostart = w == 32 ? 8 : 16;
    if (len < ostart)
      return bri_error_set(err, BRI_ECORRUPT, "Variable block of %zu bytes has no header", len);
    start = w == 32 ? bri_le32(buf + 4) : bri_le64(buf + 8);
  }
  size_t wb = (size_t)(w / 8);
  if (start < ostart || start > len || (start - ostart) % wb)
    return bri_error_set(err, BRI_ECORRUPT,
                         "Variable block: bytes start at %llu, outside [%zu, %zu] or not on an "
                         "offset boundary",
                         (unsigned long long)start, ostart, len);
  uint64_t count = (start - ostart) / wb;
  if (count != n + 1)
    return bri_error_set(err, BRI_ECORRUPT,
                         "Variable block holds %llu offsets; %llu values need %llu",
                         (unsigned long long)count, (unsigned long long)n,
                         (unsigned long long)(n + 1));
  const uint8_t *o = buf + ostart;
  uint64_t dlen = len - start, first = wb == 4 ? bri_le32(o) : bri_le64(o), prev = first;
  for (uint64_t i = 1; i <= n; i++) {
    uint64_t x = wb == 4 ? bri_le32(o + i * 4) : bri_le64(o + i * 8);
    if (x < prev || x > dlen)
      return bri_error_set(err, BRI_ECORRUPT,
                           "Variable block: offset %llu (%llu) is below the previous one or past "
                           "the %llu data bytes",
                           (unsigned long long)i, (unsigned long long)x,
                           (unsigned long long)dlen);
    prev = x;
  }
  if (first > dlen)
    return bri_error_set(err, BRI_ECORRUPT, "Variable block: first offset %llu is past the data",
                         (unsigned long long)first);
  int rc = bri_values_reserve(d, v, n, prev - first, err);
  if (rc) return rc;
  memcpy(v->data + v->data_len, buf + start + first, (size_t)(prev - first));
  int64_t base = (int64_t)v->data_len - (int64_t)first;
  for (uint64_t i = 1; i <= n; i++)
    v->offsets[v->n + i] = base + (int64_t)(wb == 4 ? bri_le32(o + i * 4) : bri_le64(o + i * 8));
  v->data_len += prev - first;
  v->n += n;
  return 0;
}

int bri_codec_block_values(bri_dec *d, const bri_enc *e, const uint8_t *buf, size_t len,
                           uint64_t n, bri_values *v, bri_error *err) {
  int rc;
  if (v->kind == BRI_LEAF_FIXED) {
    if ((rc = bri_values_reserve(d, v, n, 0, err))) return rc;
    const bri_enc *x = e;
    unsigned k = 0;
    /* A FixedSizeList without validity in block context is its flattened values. */
    for (; x->compression_case == CASE(FIXED_SIZE_LIST); k++) {
      const Lance__Encodings21__FixedSizeList *f = x->fixed_size_list;
      if (f->has_validity)
        return bri_error_set(err, BRI_EUNSUPPORTED,
                             "FixedSizeList with validity in a block buffer is not supported");
      if (k >= v->n_dims || f->items_per_value != v->dims[k])
        return bri_error_set(err, BRI_ECORRUPT,
                             "FixedSizeList layer %u does not match the column's dimensions", k + 1);
      if ((rc = need_child(f->values, "FixedSizeList", "values", err))) return rc;
      x = f->values;
    }
    uint64_t ew = (uint64_t)v->bits * dims_product(v, k, v->n_dims);
    uint64_t elems = n * dims_product(v, 0, k);
    rc = bri_codec_block_elems(d, x, buf, len, elems, ew, v->data, v->n * bri_values_slot_bits(v),
                               err);
    if (rc) return rc;
    v->n += n;
    return 0;
  }
  if (v->kind == BRI_LEAF_VARIABLE) {
    switch (e->compression_case) {
    case CASE(VARIABLE):
      if (e->variable->values)
        return bri_error_set(err, BRI_EUNSUPPORTED,
                             "Variable with a values BufferCompression is not supported");
      return var_block(d, buf, len, n, v, err);
    case CASE(GENERAL): {
      if ((rc = need_child(e->general->values, "General", "values", err))) return rc;
      uint8_t *tmp;
      size_t tlen;
      rc = unit_decompress(d, e->general->compression, "General", buf, len, d->budget, &tmp, &tlen,
                           err);
      if (rc) return rc;
      rc = bri_codec_block_values(d, e->general->values, tmp, tlen, n, v, err);
      bri_dec_free(d, tmp, tlen);
      return rc;
    }
    default:
      return bri_error_set(err, BRI_ECORRUPT, "%s cannot encode a variable-width block buffer",
                           bri_enc_name(e));
    }
  }
  return bri_error_set(err, BRI_EUNSUPPORTED, "block buffers of packed structs are not supported");
}
