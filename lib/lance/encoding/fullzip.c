/* fullzip.c: the FullZip page layout and the per-value compression context
 * (docs/format/file.md sections 3.2, 7.9 and 7.13).
 *
 * Buffer 0 zips every item as [control word][value]: the control word
 * (0, 1, 2 or 4 bytes) is `rep << bits_def | def`; a visible item of a fixed
 * width page is followed by bits_per_value / 8 bytes (null values too), a
 * visible valid item of a variable width page by a bits_per_offset-bit length
 * and that many (per-value compressed) bytes. Buffer 1, the row index, is not
 * needed for a full scan and is ignored.
 *
 * Design choice: one sequential walk with a bounds check before every read;
 * the number of items a page claims is checked against what its bytes can
 * hold before any level array is allocated. Fixed-width values with FSL
 * validity are unzipped (validity bytes per layer, then data) into the slot's
 * bitmaps as they are met. */
#include <stdlib.h>
#include <string.h>

#include "lance/encoding/decode.h"
#include "lance/encoding/fsst.h"
#include "util/bytes.h"

#define CASE(x) LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION_##x

/* ---- fixed-width values ------------------------------------------------- */

typedef struct fixed_plan {
  unsigned n_valid;           /* FSL layers with validity, outer first */
  unsigned layer[BRI_MAX_FSL_DEPTH];
  uint64_t cum[BRI_MAX_FSL_DEPTH];
  uint64_t vbytes[BRI_MAX_FSL_DEPTH];
  uint64_t data_bytes;        /* the slot's value bytes */
  const uint8_t *const_val;   /* Constant: the value to repeat */
  size_t const_len;
  uint64_t zipped_bytes;      /* bytes per visible item in buffer 0 */
} fixed_plan;

static int plan_fixed(const bri_enc *e, const bri_values *v, uint64_t bits_per_value,
                      fixed_plan *pl, bri_error *err) {
  memset(pl, 0, sizeof *pl);
  if (bits_per_value % 8)
    return bri_error_set(err, BRI_ECORRUPT,
                         "FullZip bits_per_value %llu is not a whole number of bytes",
                         (unsigned long long)bits_per_value);
  if (v->kind != BRI_LEAF_FIXED)
    return bri_error_set(err, BRI_ECORRUPT,
                         "FullZip page is fixed width (bits_per_value %llu) but the column is not",
                         (unsigned long long)bits_per_value);
  uint64_t slot_bits = bri_values_slot_bits(v);
  if (slot_bits % 8)
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "FullZip of %llu-bit values (not whole bytes) is not supported",
                         (unsigned long long)slot_bits);
  pl->data_bytes = slot_bits / 8;
  pl->zipped_bytes = bits_per_value / 8;
  unsigned depth = 0;
  uint64_t cum = 1, extra = 0;
  while (e->compression_case == CASE(FIXED_SIZE_LIST)) {
    const Lance__Encodings21__FixedSizeList *f = e->fixed_size_list;
    if (depth >= v->n_dims || f->items_per_value != v->dims[depth])
      return bri_error_set(err, BRI_ECORRUPT,
                           "FixedSizeList layer %u (%llu items) does not match the column's FSL "
                           "dimensions",
                           depth + 1, (unsigned long long)f->items_per_value);
    cum *= v->dims[depth];
    if (f->has_validity) {
      pl->layer[pl->n_valid] = depth;
      pl->cum[pl->n_valid] = cum;
      pl->vbytes[pl->n_valid] = (cum + 7) / 8;
      extra += (cum + 7) / 8;
      pl->n_valid++;
    }
    if (!f->values)
      return bri_error_set(err, BRI_ECORRUPT, "FixedSizeList has no values encoding");
    e = f->values;
    depth++;
  }
  if (e->compression_case == CASE(FLAT)) {
    /* Flat's width is the innermost item's width below the FSL layers seen. */
    uint64_t rem = 1;
    for (unsigned i = depth; i < v->n_dims; i++) rem *= v->dims[i];
    if (e->flat->bits_per_value != (uint64_t)v->bits * rem)
      return bri_error_set(err, BRI_ECORRUPT,
                           "Flat produces %llu-bit values; the column needs %llu bits",
                           (unsigned long long)e->flat->bits_per_value,
                           (unsigned long long)((uint64_t)v->bits * rem));
    if (e->flat->data)
      return bri_error_set(err, BRI_EUNSUPPORTED,
                           "Flat with buffer compression in a FullZip page is not supported");
  } else if (e->compression_case == CASE(CONSTANT)) {
    if (!e->constant->has_value || e->constant->value.len != pl->data_bytes || pl->n_valid)
      return bri_error_set(err, BRI_ECORRUPT,
                           "FullZip Constant value of %zu bytes does not fit %llu-byte values",
                           e->constant->has_value ? e->constant->value.len : 0,
                           (unsigned long long)pl->data_bytes);
    pl->const_val = e->constant->value.data;
    pl->const_len = e->constant->value.len;
    extra = 0;
    pl->data_bytes = 0; /* nothing zipped but the declared width */
  } else {
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "%s cannot encode the fixed-width values of a FullZip page",
                         bri_enc_name(e));
  }
  if (!pl->const_val && extra + pl->data_bytes != pl->zipped_bytes)
    return bri_error_set(err, BRI_ECORRUPT,
                         "FullZip bits_per_value %llu, but %s values take %llu bits (%llu "
                         "validity + %llu data bytes)",
                         (unsigned long long)bits_per_value, bri_enc_name(e),
                         (unsigned long long)((extra + pl->data_bytes) * 8),
                         (unsigned long long)extra, (unsigned long long)pl->data_bytes);
  return 0;
}

/* One visible fixed item: zipped bytes at p (pl->zipped_bytes) -> slot v->n. */
static int put_fixed(bri_dec *d, const fixed_plan *pl, const uint8_t *p, bri_values *v,
                     bri_error *err) {
  uint64_t slot = v->n;
  if (pl->const_val) {
    memcpy(v->data + slot * pl->const_len, pl->const_val, pl->const_len);
  } else {
    for (unsigned i = 0; i < pl->n_valid; i++) {
      unsigned k = pl->layer[i];
      int rc = bri_values_fsl_validity(d, v, k, err);
      if (rc) return rc;
      bri_bits_copy(v->fsl_validity[k], slot * pl->cum[i], p, 0, pl->cum[i]);
      p += pl->vbytes[i];
    }
    memcpy(v->data + slot * pl->data_bytes, p, (size_t)pl->data_bytes);
  }
  v->n++;
  return 0;
}

/* ---- variable-width values ------------------------------------------------ */

static int scheme_ok(const Lance__Encodings21__BufferCompression *c, bri_error *err) {
  if (!c || ((int)c->scheme != BRI_GENERAL_LZ4 && (int)c->scheme != BRI_GENERAL_ZSTD))
    return bri_error_set(err, BRI_EUNSUPPORTED, "General per-value compression scheme %d; "
                                                "expected lz4 (1) or zstd (2)",
                         c ? (int)c->scheme : 0);
  return 0;
}

typedef struct var_codec {
  const bri_enc *e;
  bri_fsst_table *fsst; /* when e is Fsst */
} var_codec;

static int var_codec_init(const bri_enc *e, var_codec *vc, bri_fsst_table *tab, bri_error *err) {
  vc->e = e;
  vc->fsst = NULL;
  switch (e->compression_case) {
  case CASE(VARIABLE):
    if (e->variable->values)
      return bri_error_set(err, BRI_EUNSUPPORTED,
                           "Variable with a values BufferCompression is not supported");
    return 0;
  case CASE(FSST): {
    int rc = bri_fsst_table_parse(e->fsst->symbol_table.data, e->fsst->symbol_table.len, tab, err);
    if (rc) return rc;
    vc->fsst = tab;
    return 0;
  }
  case CASE(GENERAL): return scheme_ok(e->general->compression, err);
  default:
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "%s cannot encode the variable-width values of a FullZip page",
                         bri_enc_name(e));
  }
}

/* Appends one value stored as `len` (per-value compressed) bytes at p. */
static int put_var(bri_dec *d, const var_codec *vc, const uint8_t *p, uint64_t len, bri_values *v,
                   bri_error *err) {
  int rc;
  if (vc->fsst) {
    uint64_t out_len;
    if ((rc = bri_fsst_decoded_len(vc->fsst, p, (size_t)len, &out_len, err))) return rc;
    if ((rc = bri_values_reserve(d, v, 1, out_len, err))) return rc;
    size_t wrote;
    rc = bri_fsst_decode(vc->fsst, p, (size_t)len, v->data + v->data_len, (size_t)out_len, &wrote,
                         err);
    if (rc) return rc;
    v->data_len += wrote;
    v->offsets[v->n + 1] = (int64_t)v->data_len;
    v->n++;
    return 0;
  }
  if (vc->e->compression_case == CASE(GENERAL)) {
    uint8_t *tmp;
    size_t tlen;
    rc = bri_general_decompress(&d->gen, (int)vc->e->general->compression->scheme, p, (size_t)len,
                                (size_t)(d->budget > SIZE_MAX ? SIZE_MAX : d->budget), &tmp, &tlen,
                                err);
    if (rc) return rc;
    rc = bri_values_append_var(d, v, tmp, tlen, err);
    free(tmp);
    return rc;
  }
  return bri_values_append_var(d, v, p, len, err);
}

/* ---- VariablePackedStruct rows (Blob v2 descriptors) ------------------------ */

typedef struct vps_plan {
  size_t n;
  const Lance__Encodings21__VariablePackedStruct__FieldEncoding *const *f;
  var_codec vc[BRI_MAX_STRUCT_CHILDREN];
  bri_fsst_table *tabs; /* lazily allocated when a field uses Fsst */
} vps_plan;

static int plan_vps(bri_dec *d, const bri_enc *e, const bri_values *v, vps_plan *pl,
                    bri_error *err) {
  const Lance__Encodings21__VariablePackedStruct *vps = e->variable_packed_struct;
  pl->n = vps->n_fields;
  pl->f = (const Lance__Encodings21__VariablePackedStruct__FieldEncoding *const *)vps->fields;
  pl->tabs = NULL;
  if (v->kind != BRI_LEAF_STRUCT)
    return bri_error_set(err, BRI_ECORRUPT,
                         "FullZip page holds a VariablePackedStruct but the column is not a "
                         "packed struct");
  if (v->n_children != vps->n_fields)
    return bri_error_set(err, BRI_ECORRUPT,
                         "VariablePackedStruct has %zu fields; the column's struct has %zu",
                         vps->n_fields, v->n_children);
  for (size_t i = 0; i < pl->n; i++) {
    const Lance__Encodings21__VariablePackedStruct__FieldEncoding *f = pl->f[i];
    const bri_values *ch = &v->children[i];
    if (f->layout_case == LANCE__ENCODINGS21__VARIABLE_PACKED_STRUCT__FIELD_ENCODING__LAYOUT_BITS_PER_VALUE) {
      if (ch->kind != BRI_LEAF_FIXED || f->bits_per_value != bri_values_slot_bits(ch))
        return bri_error_set(err, BRI_ECORRUPT,
                             "VariablePackedStruct field %zu is %llu-bit fixed width; the column's "
                             "field is not",
                             i, (unsigned long long)f->bits_per_value);
      if (f->value->compression_case != CASE(FLAT) ||
          f->value->flat->bits_per_value != f->bits_per_value || f->value->flat->data)
        return bri_error_set(err, BRI_EUNSUPPORTED,
                             "VariablePackedStruct field %zu: fixed fields encoded as %s are not "
                             "supported (only Flat)",
                             i, bri_enc_name(f->value));
    } else if (f->layout_case ==
               LANCE__ENCODINGS21__VARIABLE_PACKED_STRUCT__FIELD_ENCODING__LAYOUT_BITS_PER_LENGTH) {
      if (ch->kind != BRI_LEAF_VARIABLE)
        return bri_error_set(err, BRI_ECORRUPT,
                             "VariablePackedStruct field %zu is variable width; the column's "
                             "field is not",
                             i);
      if (f->bits_per_length != 32 && f->bits_per_length != 64)
        return bri_error_set(err, BRI_ECORRUPT,
                             "VariablePackedStruct field %zu has %llu-bit lengths; expected 32 "
                             "or 64",
                             i, (unsigned long long)f->bits_per_length);
      bri_fsst_table *tab = NULL;
      if (f->value->compression_case == CASE(FSST)) {
        if (!pl->tabs &&
            !(pl->tabs = bri_dec_alloc(d, sizeof(bri_fsst_table) * pl->n, "Fsst tables", err)))
          return err->code;
        tab = &pl->tabs[i];
      }
      int rc = var_codec_init(f->value, &pl->vc[i], tab, err);
      if (rc) return bri_error_wrap(err, "VariablePackedStruct field %zu", i);
    } else {
      return bri_error_set(err, BRI_ECORRUPT, "VariablePackedStruct field %zu has no layout", i);
    }
  }
  return 0;
}

static int put_vps_row(bri_dec *d, const vps_plan *pl, const uint8_t *p, uint64_t len,
                       bri_values *v, bri_error *err) {
  uint64_t pos = 0;
  int rc;
  for (size_t i = 0; i < pl->n; i++) {
    const Lance__Encodings21__VariablePackedStruct__FieldEncoding *f = pl->f[i];
    bri_values *ch = &v->children[i];
    if (f->layout_case == LANCE__ENCODINGS21__VARIABLE_PACKED_STRUCT__FIELD_ENCODING__LAYOUT_BITS_PER_VALUE) {
      uint64_t b = f->bits_per_value / 8;
      if (b > len - pos)
        return bri_error_set(err, BRI_ECORRUPT,
                             "field %zu needs %llu bytes at row byte %llu but the row has %llu",
                             i, (unsigned long long)b, (unsigned long long)pos,
                             (unsigned long long)len);
      if ((rc = bri_values_reserve(d, ch, 1, 0, err))) return rc;
      memcpy(ch->data + ch->n * b, p + pos, (size_t)b);
      ch->n++;
      pos += b;
    } else {
      uint64_t lw = f->bits_per_length / 8;
      if (lw > len - pos)
        return bri_error_set(err, BRI_ECORRUPT,
                             "field %zu: its %llu-byte length at row byte %llu is past the %llu-"
                             "byte row",
                             i, (unsigned long long)lw, (unsigned long long)pos,
                             (unsigned long long)len);
      uint64_t l = lw == 4 ? bri_le32(p + pos) : bri_le64(p + pos);
      pos += lw;
      if (l > len - pos)
        return bri_error_set(err, BRI_ECORRUPT,
                             "field %zu claims %llu bytes at row byte %llu but the row has %llu",
                             i, (unsigned long long)l, (unsigned long long)pos,
                             (unsigned long long)len);
      if ((rc = put_var(d, &pl->vc[i], p + pos, l, ch, err)))
        return bri_error_wrap(err, "field %zu", i);
      pos += l;
    }
  }
  if (pos != len)
    return bri_error_set(err, BRI_ECORRUPT, "row is %llu bytes but its fields end at byte %llu",
                         (unsigned long long)len, (unsigned long long)pos);
  v->n++;
  return 0;
}

/* ---- the page --------------------------------------------------------------- */

int bri_fullzip_decode(bri_layout_io *io, const Lance__Encodings21__FullZipLayout *fz,
                       bri_error *err) {
  const bri_page_input *in = io->in;
  bri_dec *d = io->dec;
  bri_leaf_page *out = io->out;
  bri_values *v = &out->values;
  int rc;
  if (!fz->value_compression)
    return bri_error_set(err, BRI_ECORRUPT, "FullZipLayout has no value_compression");
  if ((rc = bri_enc_check_known(fz->value_compression, err))) return rc;
  if (in->n_buffers < 1)
    return bri_error_set(err, BRI_ECORRUPT, "FullZipLayout page has no data buffer");
  const uint8_t *buf = in->buffers[0];
  uint64_t len = in->buffer_sizes[0];
  unsigned br = fz->bits_rep, bd = fz->bits_def;
  if (br > 16 || bd > 16)
    return bri_error_set(err, BRI_ECORRUPT,
                         "FullZip control word has %u repetition and %u definition bits; at most "
                         "16 each",
                         br, bd);
  unsigned cw = br + bd == 0 ? 0 : br + bd <= 8 ? 1 : br + bd <= 16 ? 2 : 4;
  uint64_t num_items = fz->num_items, num_visible = fz->num_visible_items;
  int fixed = fz->details_case == LANCE__ENCODINGS21__FULL_ZIP_LAYOUT__DETAILS_BITS_PER_VALUE;
  if (!fixed && fz->details_case != LANCE__ENCODINGS21__FULL_ZIP_LAYOUT__DETAILS_BITS_PER_OFFSET)
    return bri_error_set(err, BRI_ECORRUPT,
                         "FullZipLayout sets neither bits_per_value nor bits_per_offset");
  fixed_plan fp;
  vps_plan vp;
  var_codec vc;
  bri_fsst_table tab;
  memset(&vp, 0, sizeof vp);
  uint64_t ow = 0, min_item;
  int is_vps = 0;
  if (fixed) {
    if ((rc = plan_fixed(fz->value_compression, v, fz->bits_per_value, &fp, err))) return rc;
    min_item = cw ? cw : fp.zipped_bytes;
    if (num_visible && fp.zipped_bytes && num_visible > len / fp.zipped_bytes)
      return bri_error_set(err, BRI_ECORRUPT,
                           "%llu visible items of %llu bytes do not fit the %llu-byte buffer",
                           (unsigned long long)num_visible, (unsigned long long)fp.zipped_bytes,
                           (unsigned long long)len);
  } else {
    if (fz->bits_per_offset != 32 && fz->bits_per_offset != 64)
      return bri_error_set(err, BRI_ECORRUPT, "FullZip bits_per_offset %u; expected 32 or 64",
                           fz->bits_per_offset);
    ow = fz->bits_per_offset / 8;
    if (fz->value_compression->compression_case == CASE(VARIABLE_PACKED_STRUCT)) {
      is_vps = 1;
      if ((rc = plan_vps(d, fz->value_compression, v, &vp, err))) goto done;
    } else {
      if (v->kind != BRI_LEAF_VARIABLE)
        return bri_error_set(err, BRI_ECORRUPT,
                             "FullZip page is variable width (%s) but the column is not",
                             bri_enc_name(fz->value_compression));
      if ((rc = var_codec_init(fz->value_compression, &vc, &tab, err))) return rc;
    }
    min_item = cw ? cw : ow;
  }
  if (min_item == 0)
    return bri_error_set(err, BRI_ECORRUPT, "FullZip items of 0 bytes (bits_per_value 0, no "
                                            "control word)");
  if (num_items > len / min_item)
    return bri_error_set(err, BRI_ECORRUPT,
                         "FullZip page claims %llu items but its %llu bytes hold at most %llu",
                         (unsigned long long)num_items, (unsigned long long)len,
                         (unsigned long long)(len / min_item));
  if (num_visible > num_items)
    return bri_error_set(err, BRI_ECORRUPT, "FullZip page claims %llu visible of %llu items",
                         (unsigned long long)num_visible, (unsigned long long)num_items);
  if (br && !(out->rep = bri_dec_alloc(d, num_items * 2 + 2, "repetition levels", err))) {
    rc = err->code;
    goto done;
  }
  if (bd && !(out->def = bri_dec_alloc(d, num_items * 2 + 2, "definition levels", err))) {
    rc = err->code;
    goto done;
  }
  if ((rc = bri_values_reserve(d, v, num_visible, 0, err))) goto done;
  out->n_levels = num_items;

  const uint16_t defmask = (uint16_t)((1u << bd) - 1);
  uint64_t pos = 0, seen_visible = 0;
  for (uint64_t i = 0; i < num_items; i++) {
    uint32_t word = 0;
    if (cw) {
      if (cw > len - pos) {
        rc = bri_error_set(err, BRI_ECORRUPT,
                           "item %llu: control word at byte %llu is past the %llu-byte buffer",
                           (unsigned long long)i, (unsigned long long)pos,
                           (unsigned long long)len);
        goto done;
      }
      word = cw == 1 ? buf[pos] : cw == 2 ? bri_le16(buf + pos) : bri_le32(buf + pos);
      pos += cw;
    }
    uint16_t def = (uint16_t)(word & defmask);
    uint32_t rep = bd ? word >> bd : word;
    if (rep > out->max_rep) {
      rc = bri_error_set(err, BRI_ECORRUPT,
                         "item %llu (byte %llu) has repetition %u, above the layers' maximum %u",
                         (unsigned long long)i, (unsigned long long)(pos - cw), rep, out->max_rep);
      goto done;
    }
    if (out->rep) out->rep[i] = (uint16_t)rep;
    if (out->def) out->def[i] = def;
    if (def > out->max_visible_def) continue; /* invisible: ctrl word only */
    if (++seen_visible > num_visible) {
      rc = bri_error_set(err, BRI_ECORRUPT, "FullZip page has more than the %llu visible items it "
                                            "claims",
                         (unsigned long long)num_visible);
      goto done;
    }
    if (fixed) {
      if (fp.zipped_bytes > len - pos) {
        rc = bri_error_set(err, BRI_ECORRUPT,
                           "item %llu: %llu value bytes at byte %llu run past the %llu-byte "
                           "buffer",
                           (unsigned long long)i, (unsigned long long)fp.zipped_bytes,
                           (unsigned long long)pos, (unsigned long long)len);
        goto done;
      }
      if ((rc = put_fixed(d, &fp, buf + pos, v, err))) goto done;
      pos += fp.zipped_bytes;
      continue;
    }
    if (def != 0) { /* null value: ctrl word only */
      if ((rc = bri_values_append_nulls(d, v, 1, err))) goto done;
      continue;
    }
    if (ow > len - pos) {
      rc = bri_error_set(err, BRI_ECORRUPT,
                         "item %llu: length at byte %llu is past the %llu-byte buffer",
                         (unsigned long long)i, (unsigned long long)pos, (unsigned long long)len);
      goto done;
    }
    uint64_t l = ow == 4 ? bri_le32(buf + pos) : bri_le64(buf + pos);
    pos += ow;
    if (l > len - pos) {
      rc = bri_error_set(err, BRI_ECORRUPT,
                         "item %llu claims %llu bytes at byte %llu but only %llu remain",
                         (unsigned long long)i, (unsigned long long)l, (unsigned long long)pos,
                         (unsigned long long)(len - pos));
      goto done;
    }
    rc = is_vps ? put_vps_row(d, &vp, buf + pos, l, v, err) : put_var(d, &vc, buf + pos, l, v, err);
    if (rc) {
      bri_error_wrap(err, "item %llu (byte %llu)", (unsigned long long)i, (unsigned long long)pos);
      goto done;
    }
    pos += l;
  }
  if (seen_visible != num_visible) {
    rc = bri_error_set(err, BRI_ECORRUPT, "FullZip page claims %llu visible items but has %llu",
                       (unsigned long long)num_visible, (unsigned long long)seen_visible);
    goto done;
  }
  if (pos != len) {
    rc = bri_error_set(err, BRI_ECORRUPT,
                       "FullZip data buffer is %llu bytes but its %llu items end at byte %llu",
                       (unsigned long long)len, (unsigned long long)num_items,
                       (unsigned long long)pos);
    goto done;
  }
  rc = 0;
done:
  if (vp.tabs) bri_dec_free(d, vp.tabs, sizeof(bri_fsst_table) * vp.n);
  return rc;
}
