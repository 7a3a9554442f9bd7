/* enc_page.c: one page in, one page encoding and its buffers out
 * (enc_page.h).
 *
 * Owns the input checks (levels within the layers, one value slot per
 * visible level, rows = levels that start a row), the layout choice Lance 12
 * makes (docs/format/file.md section 5) and the all-null layouts: AllNullLayout in
 * 2.1 and ConstantLayout without a scalar in 2.2, with no buffers when the
 * only layer is a nullable item ("simple" all-null), else with the levels:
 * raw u16 in 2.1, Rle block frames with their counts in 2.2 (what Lance 12
 * writes for all-null list pages). MiniBlock and FullZip live in
 * enc_miniblock.c and enc_fullzip.c. */
#include <stdlib.h>
#include <string.h>

#include "lance/encoding/enc_internal.h"

#define MINIBLOCK_MAX_VALUE_BYTES 256 /* Lance: is_narrow = max_len < 256 */

void bri_encoded_page_dispose(bri_encoded_page *p) {
  if (!p) return;
  free(p->encoding);
  for (size_t i = 0; i < BRI_ENC_MAX_BUFFERS; i++) free(p->buffers[i]);
  memset(p, 0, sizeof *p);
}

uint64_t bri_encoded_page_bytes(const bri_encoded_page *p) {
  uint64_t s = 0;
  for (size_t i = 0; i < p->n_buffers; i++) s += p->sizes[i];
  return s;
}

static int check_values(const bri_values *v, int depth, bri_error *err) {
  if (depth > 1) return bri_error_set(err, BRI_EINVAL, "page encoder: nested packed structs");
  switch (v->kind) {
  case BRI_LEAF_FIXED:
    if (v->n_dims > BRI_MAX_FSL_DEPTH)
      return bri_error_set(err, BRI_EINVAL, "page encoder: %u FSL dimensions (at most %d)",
                           v->n_dims, BRI_MAX_FSL_DEPTH);
    if (v->n && v->bits && !v->data)
      return bri_error_set(err, BRI_EINVAL, "page encoder: %llu fixed slots without data",
                           (unsigned long long)v->n);
    return 0;
  case BRI_LEAF_VARIABLE:
    if (!v->offsets) return bri_error_set(err, BRI_EINVAL, "page encoder: variable slots without offsets");
    for (uint64_t i = 0; i < v->n; i++)
      if (v->offsets[i + 1] < v->offsets[i] || v->offsets[i] < 0)
        return bri_error_set(err, BRI_EINVAL,
                             "page encoder: offsets of slot %llu go from %lld to %lld",
                             (unsigned long long)i, (long long)v->offsets[i],
                             (long long)v->offsets[i + 1]);
    return 0;
  case BRI_LEAF_STRUCT:
    if (!v->n_children || v->n_children > BRI_MAX_STRUCT_CHILDREN)
      return bri_error_set(err, BRI_EINVAL, "page encoder: packed struct with %zu children",
                           v->n_children);
    for (size_t c = 0; c < v->n_children; c++) {
      if (v->children[c].n != v->n)
        return bri_error_set(err, BRI_EINVAL,
                             "page encoder: packed struct child %zu has %llu slots, the struct %llu",
                             c, (unsigned long long)v->children[c].n, (unsigned long long)v->n);
      if (v->children[c].kind == BRI_LEAF_STRUCT)
        return bri_error_set(err, BRI_EINVAL, "page encoder: nested packed structs");
      int rc = check_values(&v->children[c], depth + 1, err);
      if (rc) return rc;
    }
    return 0;
  default:
    return bri_error_set(err, BRI_EINVAL, "page encoder: unknown value kind %d", (int)v->kind);
  }
}

/* Checks the levels against the layers and fills the page analysis. */
static int analyze(bri_enc_page *pg, bri_error *err) {
  const bri_enc_input *in = pg->in;
  int rc = bri_layers_analyze(in->layers, in->n_layers, &pg->max_rep, &pg->max_def,
                              &pg->max_visible_def, err);
  if (rc) return bri_error_wrap(err, "page encoder");
  if (in->n_layers == 0)
    return bri_error_set(err, BRI_EINVAL, "page encoder: a page needs at least one layer");
  if ((in->rep != NULL) != (pg->max_rep > 0))
    return bri_error_set(err, BRI_EINVAL,
                         "page encoder: the layers have %u list layer(s) but repetition levels "
                         "are %s",
                         pg->max_rep, in->rep ? "given" : "missing");
  if (in->def && pg->max_def == 0)
    return bri_error_set(err, BRI_EINVAL,
                         "page encoder: definition levels given but no layer can be null or empty");
  pg->n_levels = in->n_levels;
  pg->n_slots = in->values->n;
  uint64_t rows = 0, visible = 0, nulls = 0;
  uint16_t mr = 0, md = 0;
  for (uint64_t i = 0; i < in->n_levels; i++) {
    uint16_t r = in->rep ? in->rep[i] : 0, d = in->def ? in->def[i] : 0;
    if (r > pg->max_rep)
      return bri_error_set(err, BRI_EINVAL, "page encoder: level %llu has rep %u > max %u",
                           (unsigned long long)i, r, pg->max_rep);
    if (d > pg->max_def)
      return bri_error_set(err, BRI_EINVAL, "page encoder: level %llu has def %u > max %u",
                           (unsigned long long)i, d, pg->max_def);
    if (i == 0 && in->rep && r != pg->max_rep)
      return bri_error_set(err, BRI_EINVAL,
                           "page encoder: the first level has rep %u, not the row start %u", r,
                           pg->max_rep);
    if (r > mr) mr = r;
    if (d > md) md = d;
    if (!in->rep || r == pg->max_rep) rows++;
    if (d <= pg->max_visible_def) {
      visible++;
      if (d) nulls++;
    }
  }
  if (!in->rep && !in->def && in->n_levels != pg->n_slots)
    return bri_error_set(err, BRI_EINVAL,
                         "page encoder: without levels the page needs one slot per level "
                         "(%llu levels, %llu slots)",
                         (unsigned long long)in->n_levels, (unsigned long long)pg->n_slots);
  if (rows != in->n_rows)
    return bri_error_set(err, BRI_EINVAL, "page encoder: the levels hold %llu rows, not %llu",
                         (unsigned long long)rows, (unsigned long long)in->n_rows);
  if (visible != pg->n_slots)
    return bri_error_set(err, BRI_EINVAL,
                         "page encoder: %llu visible levels but %llu value slots",
                         (unsigned long long)visible, (unsigned long long)pg->n_slots);
  pg->data_max_rep = mr;
  pg->data_max_def = md;
  pg->n_null_slots = nulls;
  pg->rep = in->rep;
  pg->def = md ? in->def : NULL; /* an all-zero def stream is no def stream */
  return check_values(in->values, 0, err);
}

static int all_null(bri_enc_page *pg, bri_encoded_page *out, bri_error *err) {
  const bri_enc_input *in = pg->in;
  bri_pb_arena *a = &pg->arena;
  Lance__Encodings21__ConstantLayout *cl = bri_pba_alloc(a, sizeof *cl);
  Lance__Encodings21__PageLayout *pl = bri_pba_alloc(a, sizeof *pl);
  if (!cl || !pl) return bri_error_set(err, BRI_ENOMEM, "page encoder: out of memory");
  lance__encodings21__constant_layout__init(cl);
  lance__encodings21__page_layout__init(pl);
  cl->n_layers = in->n_layers;
  cl->layers = bri_pbe_layers(a, in->layers, in->n_layers);
  if (!cl->layers) return bri_error_set(err, BRI_ENOMEM, "page encoder: out of memory");
  pl->layout_case = LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_CONSTANT_LAYOUT;
  pl->constant_layout = cl;
  /* Lance "simple validity": one nullable item layer and no repetition. */
  bool simple = in->n_layers == 1 && !pg->rep;
  int rc = 0;
  bri_ebuf rep = {0}, def = {0};
  if (!simple) {
    if (pg->opt->file_minor >= 2) {
      if (pg->rep) {
        if ((rc = bri_level_rle_block(pg->rep, pg->n_levels, &rep, err))) goto out;
        cl->rep_compression = bri_pbe_rle(a, 16);
        cl->has_num_rep_values = 1;
        cl->num_rep_values = pg->n_levels;
      }
      if (pg->def) {
        if ((rc = bri_level_rle_block(pg->def, pg->n_levels, &def, err))) goto out;
        cl->def_compression = bri_pbe_rle(a, 16);
        cl->has_num_def_values = 1;
        cl->num_def_values = pg->n_levels;
      }
      if ((pg->rep && !cl->rep_compression) || (pg->def && !cl->def_compression)) {
        rc = bri_error_set(err, BRI_ENOMEM, "page encoder: out of memory");
        goto out;
      }
    } else {
      if (pg->rep && (rc = bri_ebuf_put(&rep, pg->rep, (size_t)pg->n_levels * 2, err))) goto out;
      if (pg->def && (rc = bri_ebuf_put(&def, pg->def, (size_t)pg->n_levels * 2, err))) goto out;
    }
  }
  if ((rc = bri_pbe_pack_page(pl, &out->encoding, &out->encoding_len, err))) goto out;
  if (!simple) {
    out->n_buffers = 2;
    out->sizes[0] = rep.len;
    out->buffers[0] = bri_ebuf_take(&rep);
    out->sizes[1] = def.len;
    out->buffers[1] = bri_ebuf_take(&def);
  }
  out->layout = "constant";
out:
  bri_ebuf_dispose(&rep);
  bri_ebuf_dispose(&def);
  return rc;
}

int bri_page_encode(const bri_enc_input *in, const bri_enc_options *opt, bri_encoded_page *out,
                    bri_error *err) {
  memset(out, 0, sizeof *out);
  if (!in || !opt || !in->values || (!in->layers && in->n_layers))
    return bri_error_set(err, BRI_EINVAL, "page encoder: missing input");
  if (opt->file_minor != 1 && opt->file_minor != 2)
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "page encoder: file version 2.%u (2.1 and 2.2 are written)",
                         opt->file_minor);
  if (in->n_rows == 0) return bri_error_set(err, BRI_EINVAL, "page encoder: a page needs rows");
  bri_enc_options o = *opt;
  if (o.offset_bits == 0) o.offset_bits = 32;
  if (o.offset_bits != 32 && o.offset_bits != 64)
    return bri_error_set(err, BRI_EINVAL, "page encoder: offsets of %u bits (32 or 64)",
                         o.offset_bits);
  bri_enc_page pg = {.in = in, .opt = &o};
  int rc = analyze(&pg, err);
  if (rc) goto out;
  const bri_values *v = in->values;
  if (pg.n_slots == pg.n_null_slots) {
    rc = all_null(&pg, out, err);
  } else if (o.dict_key_bits) {
    if (o.dict_key_bits != 8 && o.dict_key_bits != 16 && o.dict_key_bits != 32 &&
        o.dict_key_bits != 64) {
      rc = bri_error_set(err, BRI_EINVAL, "page encoder: %u-bit dictionary keys",
                         o.dict_key_bits);
    } else if (v->kind == BRI_LEAF_STRUCT) {
      rc = bri_error_set(err, BRI_EUNSUPPORTED, "page encoder: dictionary of packed structs");
    } else if (!(rc = bri_enc_dict_build(&pg, err))) {
      rc = bri_enc_miniblock(&pg, out, err);
      if (rc == BRI_ENC_NOFIT)
        rc = bri_error_set(err, BRI_EUNSUPPORTED,
                           "page encoder: dictionary page does not fit mini-block chunks");
    }
  } else {
    bool narrow = bri_enc_max_value_bytes(v) < MINIBLOCK_MAX_VALUE_BYTES;
    bool has_var_child = false;
    if (v->kind == BRI_LEAF_STRUCT)
      for (size_t c = 0; c < v->n_children; c++)
        has_var_child |= v->children[c].kind == BRI_LEAF_VARIABLE;
    if (v->kind == BRI_LEAF_STRUCT && !has_var_child) {
      rc = bri_error_set(err, BRI_EUNSUPPORTED,
                         "page encoder: packed structs of fixed-width children (PackedStruct) "
                         "are not written");
    } else if (narrow && !has_var_child && !o.force_fullzip) {
      rc = bri_enc_miniblock(&pg, out, err);
      if (rc == BRI_ENC_NOFIT) {
        bri_encoded_page_dispose(out);
        rc = bri_enc_fullzip(&pg, out, err);
      }
    } else {
      rc = bri_enc_fullzip(&pg, out, err);
    }
  }
out:
  bri_pba_dispose(&pg.arena);
  bri_ebuf_dispose(&pg.dict_buf);
  free(pg.indices_data);
  if (rc) bri_encoded_page_dispose(out);
  return rc;
}
