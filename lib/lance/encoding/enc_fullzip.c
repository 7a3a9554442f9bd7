/* enc_fullzip.c: the FullZip page layout, write side (docs/format/file.md section
 * 3.2, 7.9, 7.13; Lance serialize_full_zip_fixed / _variable).
 *
 * Every level becomes one zipped item: its control word ((rep << bits_def) |
 * def, 0/1/2/4 bytes by the bit widths of the largest rep and def present),
 * then, if the item is visible, its value: fixed width => the slot's bytes
 * (FSL validity bytes of each layer first, as Lance zips them), null slots
 * included; variable width => only for valid items, a 32/64-bit length and
 * the bytes. Buffer 1, the repetition index, holds the byte offset of every
 * row start plus the total length, in the smallest of 1/2/4/8 bytes that
 * holds Lance's upper bound of the zipped size; fixed-width pages without
 * repetition have none.
 *
 * Value compressions: Flat / FixedSizeList for fixed width, Variable, per-
 * value General(zstd) for values over 32 KiB (Lance's default), and
 * VariablePackedStruct for packed structs with a variable child (Blob v2
 * descriptors, 2.2 only). */
#include <stdlib.h>
#include <string.h>

#include "lance/encoding/enc_internal.h"
#include "lance/encoding/general.h"

#define FZ_PER_VALUE_GENERAL_MIN_LEN (32 * 1024) /* Lance: max_len > 32 KiB */
#define FZ_PER_VALUE_GENERAL_MIN_TOTAL (32 * 1024) /* FSST_LEAST_INPUT_SIZE */

static unsigned bit_len(uint32_t v) {
  unsigned b = 0;
  while (v) {
    b++;
    v >>= 1;
  }
  return b;
}

static unsigned width_for(uint64_t max) {
  if (max == 0) return 0;
  if (max <= 0xFF) return 1;
  if (max <= 0xFFFF) return 2;
  if (max <= 0xFFFFFFFFu) return 4;
  return 8;
}

typedef struct fz_state {
  bri_enc_page *pg;
  unsigned bits_rep, bits_def, ctrl_w;
  bri_ebuf zip;
  bri_ebuf ri; /* repetition index entries, u64 until packed */
  uint64_t n_ri;
} fz_state;

static int ri_add(fz_state *s, uint64_t v, bri_error *err) {
  s->n_ri++;
  return bri_ebuf_put(&s->ri, &v, 8, err);
}

/* Writes item i's control word; says whether it starts a row, is visible, valid. */
static int put_ctrl(fz_state *s, uint64_t i, bool *new_row, bool *visible, bool *valid,
                    bri_error *err) {
  const bri_enc_page *pg = s->pg;
  uint32_t r = pg->rep ? pg->rep[i] : 0, d = pg->def ? pg->def[i] : 0;
  *new_row = !pg->rep || r == pg->data_max_rep;
  *visible = d <= pg->max_visible_def;
  *valid = d == 0;
  if (!s->ctrl_w) return 0;
  uint32_t w = (r << s->bits_def) | d;
  return bri_ebuf_put_le(&s->zip, w, s->ctrl_w, err);
}

static int pack_ri(fz_state *s, uint64_t bound, bri_encoded_page *out, bri_error *err) {
  unsigned w = width_for(bound);
  if (w == 0) return 0;
  bri_ebuf b = {0};
  int rc = bri_ebuf_reserve(&b, (size_t)(s->n_ri * w), err);
  if (rc) return rc;
  const uint64_t *e = (const uint64_t *)(void *)s->ri.p;
  for (uint64_t k = 0; k < s->n_ri; k++) {
    uint64_t v;
    memcpy(&v, e + k, 8);
    bri_ebuf_put_le(&b, v, w, err); /* reserved above: cannot fail */
  }
  out->sizes[1] = b.len;
  out->buffers[1] = bri_ebuf_take(&b);
  out->n_buffers = 2;
  return 0;
}

/* Fixed width: bytes_per_value = FSL validity bytes + slot bytes. */
static int zip_fixed(fz_state *s, uint64_t *bytes_per_value, bri_error *err) {
  const bri_enc_page *pg = s->pg;
  const bri_values *v = pg->in->values;
  uint64_t cum[BRI_MAX_FSL_DEPTH], c = 1, vbytes = 0;
  for (uint32_t k = 0; k < v->n_dims; k++) {
    c *= v->dims[k];
    cum[k] = c;
    if (v->fsl_validity[k]) vbytes += (c + 7) / 8;
  }
  uint64_t slot = bri_enc_slot_bytes(v);
  *bytes_per_value = vbytes + slot;
  int rc = bri_ebuf_reserve(&s->zip, (size_t)(pg->n_levels * s->ctrl_w + v->n * *bytes_per_value),
                            err);
  if (rc) return rc;
  uint64_t k_slot = 0;
  for (uint64_t i = 0; i < pg->n_levels; i++) {
    bool row, vis, valid;
    uint64_t at = s->zip.len;
    if ((rc = put_ctrl(s, i, &row, &vis, &valid, err))) return rc;
    if (row && pg->rep && (rc = ri_add(s, at, err))) return rc;
    if (!vis) continue;
    for (uint32_t k = 0; k < v->n_dims; k++) {
      if (!v->fsl_validity[k]) continue;
      uint64_t nb = (cum[k] + 7) / 8;
      if ((rc = bri_ebuf_reserve(&s->zip, (size_t)nb, err))) return rc;
      bri_enc_bits_extract(s->zip.p + s->zip.len, v->fsl_validity[k], k_slot * cum[k], cum[k]);
      s->zip.len += nb;
    }
    if ((rc = bri_ebuf_put(&s->zip, v->data + k_slot * slot, (size_t)slot, err))) return rc;
    k_slot++;
  }
  if (pg->rep && (rc = ri_add(s, s->zip.len, err))) return rc;
  return 0;
}

/* The bytes of value slot k of a variable-width container. */
static const uint8_t *var_at(const bri_values *v, uint64_t k, uint64_t *len) {
  *len = (uint64_t)(v->offsets[k + 1] - v->offsets[k]);
  return v->data + v->offsets[k];
}

/* Variable width; per-value General when `scheme`. Returns the zipped size bound. */
static int zip_variable(fz_state *s, unsigned ob, int scheme, int level, uint64_t *bound,
                        bri_error *err) {
  const bri_enc_page *pg = s->pg;
  const bri_values *v = pg->in->values;
  uint64_t total = 0;
  int rc;
  for (uint64_t i = 0, k = 0; i < pg->n_levels; i++) {
    bool row, vis, valid;
    uint64_t at = s->zip.len;
    if ((rc = put_ctrl(s, i, &row, &vis, &valid, err))) return rc;
    if (row && (rc = ri_add(s, at, err))) return rc;
    if (!vis) continue;
    uint64_t len;
    const uint8_t *p = var_at(v, k++, &len);
    if (!valid) continue;
    if (scheme) {
      uint8_t *z = NULL;
      size_t zl = 0;
      if ((rc = bri_general_compress(scheme, level, p, (size_t)len, &z, &zl, err))) return rc;
      total += zl;
      rc = bri_ebuf_put_le(&s->zip, zl, ob, err);
      if (!rc) rc = bri_ebuf_put(&s->zip, z, zl, err);
      free(z);
      if (rc) return rc;
    } else {
      total += len;
      if ((rc = bri_ebuf_put_le(&s->zip, len, ob, err))) return rc;
      if ((rc = bri_ebuf_put(&s->zip, p, (size_t)len, err))) return rc;
    }
  }
  if ((rc = ri_add(s, s->zip.len, err))) return rc;
  if (!scheme) total = (uint64_t)(v->n ? v->offsets[v->n] - v->offsets[0] : 0);
  *bound = total + (uint64_t)s->ctrl_w * pg->n_levels + (uint64_t)ob * v->n;
  return 0;
}

/* Row bytes of a packed struct (spec 7.13): fixed children raw, variable
 * children u32/u64 length + bytes, in field order. */
static uint64_t vps_row_len(const bri_values *v, uint64_t k, unsigned lb) {
  uint64_t n = 0;
  for (size_t c = 0; c < v->n_children; c++) {
    const bri_values *ch = &v->children[c];
    if (ch->kind == BRI_LEAF_FIXED)
      n += bri_enc_slot_bytes(ch);
    else
      n += lb + (uint64_t)(ch->offsets[k + 1] - ch->offsets[k]);
  }
  return n;
}

static int zip_vps(fz_state *s, unsigned lb, unsigned ob, uint64_t *bound, bri_error *err) {
  const bri_enc_page *pg = s->pg;
  const bri_values *v = pg->in->values;
  uint64_t rows_total = 0;
  int rc;
  for (uint64_t k = 0; k < v->n; k++) rows_total += vps_row_len(v, k, lb);
  for (uint64_t i = 0, k = 0; i < pg->n_levels; i++) {
    bool row, vis, valid;
    uint64_t at = s->zip.len;
    if ((rc = put_ctrl(s, i, &row, &vis, &valid, err))) return rc;
    if (row && (rc = ri_add(s, at, err))) return rc;
    if (!vis) continue;
    uint64_t kk = k++;
    if (!valid) continue;
    if ((rc = bri_ebuf_put_le(&s->zip, vps_row_len(v, kk, lb), ob, err))) return rc;
    for (size_t c = 0; c < v->n_children; c++) {
      const bri_values *ch = &v->children[c];
      if (ch->kind == BRI_LEAF_FIXED) {
        uint64_t sb = bri_enc_slot_bytes(ch);
        rc = bri_ebuf_put(&s->zip, ch->data + kk * sb, (size_t)sb, err);
      } else {
        uint64_t len;
        const uint8_t *p = var_at(ch, kk, &len);
        rc = bri_ebuf_put_le(&s->zip, len, lb, err);
        if (!rc) rc = bri_ebuf_put(&s->zip, p, (size_t)len, err);
      }
      if (rc) return rc;
    }
  }
  if ((rc = ri_add(s, s->zip.len, err))) return rc;
  *bound = rows_total + (uint64_t)s->ctrl_w * pg->n_levels + (uint64_t)ob * v->n;
  return 0;
}

int bri_enc_fullzip(bri_enc_page *pg, bri_encoded_page *out, bri_error *err) {
  const bri_values *v = pg->in->values;
  fz_state s = {.pg = pg};
  bri_pb_arena *a = &pg->arena;
  int rc = 0;
  s.bits_rep = pg->rep ? bit_len(pg->data_max_rep) : 0;
  s.bits_def = pg->def ? bit_len(pg->data_max_def) : 0;
  unsigned tot = s.bits_rep + s.bits_def;
  s.ctrl_w = tot == 0 ? 0 : tot <= 8 ? 1 : tot <= 16 ? 2 : 4;

  Lance__Encodings21__FullZipLayout *fz = bri_pba_alloc(a, sizeof *fz);
  Lance__Encodings21__PageLayout *pl = bri_pba_alloc(a, sizeof *pl);
  if (!fz || !pl) return bri_error_set(err, BRI_ENOMEM, "page encoder: out of memory");
  lance__encodings21__full_zip_layout__init(fz);
  lance__encodings21__page_layout__init(pl);

  uint64_t bound = 0;
  bool variable = false;
  if (v->kind == BRI_LEAF_FIXED) {
    uint64_t elems = v->elems_per_slot ? v->elems_per_slot : 1;
    if ((v->bits * elems) % 8 != 0 || v->bits == 0) {
      rc = bri_error_set(err, BRI_EUNSUPPORTED,
                         "page encoder: a FullZip page of %u-bit values (%llu per slot) is not "
                         "byte aligned",
                         v->bits, (unsigned long long)elems);
      goto out;
    }
    uint64_t bpv;
    if ((rc = zip_fixed(&s, &bpv, err))) goto out;
    bri_cenc *e = bri_pbe_flat(a, v->bits);
    for (uint32_t k = v->n_dims; k-- > 0;)
      e = bri_pbe_fsl(a, v->dims[k], v->fsl_validity[k] != NULL, e);
    fz->value_compression = e;
    fz->details_case = LANCE__ENCODINGS21__FULL_ZIP_LAYOUT__DETAILS_BITS_PER_VALUE;
    fz->bits_per_value = (uint32_t)(bpv * 8);
    bound = pg->rep ? s.zip.len : 0;
  } else if (v->kind == BRI_LEAF_VARIABLE) {
    variable = true;
    unsigned ob = pg->opt->offset_bits / 8;
    uint64_t maxlen = 0, total = 0;
    for (uint64_t k = 0; k < v->n; k++) {
      uint64_t l = (uint64_t)(v->offsets[k + 1] - v->offsets[k]);
      if (l > maxlen) maxlen = l;
      total += l;
    }
    int scheme = 0;
    if ((maxlen > FZ_PER_VALUE_GENERAL_MIN_LEN ||
         (pg->opt->general_scheme && pg->opt->general_scheme != 0)) &&
        total >= FZ_PER_VALUE_GENERAL_MIN_TOTAL)
      scheme = pg->opt->general_scheme ? pg->opt->general_scheme : BRI_GENERAL_ZSTD;
    if ((rc = zip_variable(&s, ob, scheme, pg->opt->general_level, &bound, err))) goto out;
    bri_cenc *e = bri_pbe_variable(a, pg->opt->offset_bits);
    if (scheme) e = bri_pbe_general(a, scheme, pg->opt->general_level, e);
    fz->value_compression = e;
    fz->details_case = LANCE__ENCODINGS21__FULL_ZIP_LAYOUT__DETAILS_BITS_PER_OFFSET;
    fz->bits_per_offset = pg->opt->offset_bits;
  } else if (v->kind == BRI_LEAF_STRUCT) {
    variable = true;
    if (pg->opt->file_minor < 2) {
      rc = bri_error_set(err, BRI_EUNSUPPORTED,
                         "page encoder: a packed struct with a variable-width child needs file "
                         "version 2.2 (VariablePackedStruct)");
      goto out;
    }
    unsigned lb = pg->opt->offset_bits / 8;
    /* Lance: 32-bit row lengths unless the rows exceed u32 in total */
    uint64_t rows_total = 0;
    for (uint64_t k = 0; k < v->n; k++) rows_total += vps_row_len(v, k, lb);
    unsigned ob = rows_total <= 0xFFFFFFFFu ? 4 : 8;
    if ((rc = zip_vps(&s, lb, ob, &bound, err))) goto out;
    Lance__Encodings21__VariablePackedStruct *vps = bri_pba_alloc(a, sizeof *vps);
    Lance__Encodings21__VariablePackedStruct__FieldEncoding **fields =
        bri_pba_alloc(a, (v->n_children ? v->n_children : 1) * sizeof *fields);
    if (!vps || !fields) {
      rc = bri_error_set(err, BRI_ENOMEM, "page encoder: out of memory");
      goto out;
    }
    lance__encodings21__variable_packed_struct__init(vps);
    for (size_t c = 0; c < v->n_children; c++) {
      const bri_values *ch = &v->children[c];
      Lance__Encodings21__VariablePackedStruct__FieldEncoding *fe = bri_pba_alloc(a, sizeof *fe);
      if (!fe) {
        rc = bri_error_set(err, BRI_ENOMEM, "page encoder: out of memory");
        goto out;
      }
      lance__encodings21__variable_packed_struct__field_encoding__init(fe);
      if (ch->kind == BRI_LEAF_FIXED) {
        fe->value = bri_pbe_flat(a, ch->bits);
        fe->layout_case = LANCE__ENCODINGS21__VARIABLE_PACKED_STRUCT__FIELD_ENCODING__LAYOUT_BITS_PER_VALUE;
        fe->bits_per_value = bri_enc_slot_bytes(ch) * 8;
      } else {
        fe->value = bri_pbe_variable(a, pg->opt->offset_bits);
        fe->layout_case = LANCE__ENCODINGS21__VARIABLE_PACKED_STRUCT__FIELD_ENCODING__LAYOUT_BITS_PER_LENGTH;
        fe->bits_per_length = pg->opt->offset_bits;
      }
      fields[c] = fe;
    }
    vps->n_fields = v->n_children;
    vps->fields = fields;
    bri_cenc *e = bri_pba_alloc(a, sizeof *e);
    if (!e) {
      rc = bri_error_set(err, BRI_ENOMEM, "page encoder: out of memory");
      goto out;
    }
    lance__encodings21__compressive_encoding__init(e);
    e->compression_case = LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION_VARIABLE_PACKED_STRUCT;
    e->variable_packed_struct = vps;
    fz->value_compression = e;
    fz->details_case = LANCE__ENCODINGS21__FULL_ZIP_LAYOUT__DETAILS_BITS_PER_OFFSET;
    fz->bits_per_offset = ob * 8;
  } else {
    rc = bri_error_set(err, BRI_EINVAL, "page encoder: unknown value kind %d", (int)v->kind);
    goto out;
  }
  if (!fz->value_compression) {
    rc = bri_error_set(err, BRI_ENOMEM, "page encoder: out of memory");
    goto out;
  }
  if (pg->n_levels > 0xFFFFFFFFu) {
    rc = bri_error_set(err, BRI_EUNSUPPORTED,
                       "page encoder: %llu items do not fit FullZip's u32 item count",
                       (unsigned long long)pg->n_levels);
    goto out;
  }
  if (s.bits_rep) {
    fz->has_bits_rep = 1;
    fz->bits_rep = s.bits_rep;
  }
  if (s.bits_def) {
    fz->has_bits_def = 1;
    fz->bits_def = s.bits_def;
  }
  fz->has_num_items = 1;
  fz->num_items = (uint32_t)(pg->rep ? pg->n_levels : v->n);
  fz->has_num_visible_items = 1;
  fz->num_visible_items = (uint32_t)v->n;
  fz->n_layers = pg->in->n_layers;
  fz->layers = bri_pbe_layers(a, pg->in->layers, pg->in->n_layers);
  if (!fz->layers) {
    rc = bri_error_set(err, BRI_ENOMEM, "page encoder: out of memory");
    goto out;
  }
  pl->layout_case = LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_FULL_ZIP_LAYOUT;
  pl->full_zip_layout = fz;
  if ((rc = bri_pbe_pack_page(pl, &out->encoding, &out->encoding_len, err))) goto out;
  out->sizes[0] = s.zip.len;
  out->buffers[0] = bri_ebuf_take(&s.zip);
  out->n_buffers = 1;
  if ((variable || pg->rep) && (rc = pack_ri(&s, bound, out, err))) goto out;
  out->layout = "full_zip";
out:
  bri_ebuf_dispose(&s.zip);
  bri_ebuf_dispose(&s.ri);
  return rc;
}
