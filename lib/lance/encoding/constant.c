/* constant.c: the 2.1 AllNullLayout and the 2.2 ConstantLayout (one wire tag,
 * docs/format/file.md section 3.3).
 *
 * Buffers by count: with inline_value, none or (rep, def); without it, none
 * (all null, no levels), (scalar), (rep, def) (all null with levels) or
 * (scalar, rep, def). An empty rep/def buffer means that stream is absent;
 * a level buffer is raw u16 unless rep/def_compression names a block
 * encoding, then num_rep/def_values gives its count. Every visible valid item
 * equals the scalar; nulls and empties come from the levels.
 *
 * Design choice: an all-null page without levels has no def stream on disk,
 * but callers need to see its nulls, so the decoder synthesises def = 1 (the
 * innermost null) for every row, and rep = max_rep when the layers have
 * lists. */
#include <string.h>

#include "lance/encoding/decode.h"
#include "util/bytes.h"

static int decode_levels(bri_dec *d, const char *name, const bri_enc *enc, int has_count,
                         uint64_t count, const uint8_t *buf, uint64_t len, uint16_t **out,
                         uint64_t *n, bri_error *err) {
  *out = NULL;
  *n = 0;
  if (len == 0) return 0; /* absent */
  if (!enc) {
    if (len % 2)
      return bri_error_set(err, BRI_ECORRUPT, "raw %s buffer is %llu bytes, not whole u16s", name,
                           (unsigned long long)len);
    *n = len / 2;
    if (!(*out = bri_dec_alloc(d, len, name, err))) return err->code;
    memcpy(*out, buf, (size_t)len);
    return 0;
  }
  int rc = bri_enc_check_known(enc, err);
  if (rc) return rc;
  if (!has_count)
    return bri_error_set(err, BRI_ECORRUPT, "compressed %s have no value count", name);
  if (count > (uint64_t)1 << 40)
    return bri_error_set(err, BRI_ECORRUPT, "%s count %llu is impossible", name,
                         (unsigned long long)count);
  if (!(*out = bri_dec_alloc(d, count * 2 + 2, name, err))) return err->code;
  rc = bri_codec_block_elems(d, enc, buf, (size_t)len, count, 16, (uint8_t *)*out, 0, err);
  if (rc) return bri_error_wrap(err, "%s", name);
  *n = count;
  return 0;
}

/* The scalar value buffer: u32 count, u32 lengths[count], the Arrow buffers of
 * a one-element array. */
static int scalar_from_buffer(const uint8_t *p, uint64_t len, const bri_values *v,
                              const uint8_t **val, uint64_t *vlen, bri_error *err) {
  if (len < 4)
    return bri_error_set(err, BRI_ECORRUPT, "scalar buffer of %llu bytes has no buffer count",
                         (unsigned long long)len);
  uint32_t nb = bri_le32(p);
  if (nb > (len - 4) / 4)
    return bri_error_set(err, BRI_ECORRUPT,
                         "scalar buffer claims %u Arrow buffers but is %llu bytes", nb,
                         (unsigned long long)len);
  uint64_t pos = 4 + 4 * (uint64_t)nb, starts[4] = {0}, lens[4] = {0};
  if (nb > 4)
    return bri_error_set(err, BRI_EUNSUPPORTED, "scalar with %u Arrow buffers is not supported",
                         nb);
  for (uint32_t i = 0; i < nb; i++) {
    lens[i] = bri_le32(p + 4 + 4 * i);
    if (lens[i] > len - pos)
      return bri_error_set(err, BRI_ECORRUPT,
                           "scalar Arrow buffer %u: %llu bytes at byte %llu run past the %llu-byte "
                           "buffer",
                           i, (unsigned long long)lens[i], (unsigned long long)pos,
                           (unsigned long long)len);
    starts[i] = pos;
    pos += lens[i];
  }
  if (v->kind == BRI_LEAF_VARIABLE) {
    if (nb != 2 || (lens[0] != 8 && lens[0] != 16))
      return bri_error_set(err, BRI_ECORRUPT,
                           "variable-width scalar: expected 2 Arrow buffers (offsets of 8 or 16 "
                           "bytes, data), found %u",
                           nb);
    uint64_t a, b;
    if (lens[0] == 8) {
      a = bri_le32(p + starts[0]);
      b = bri_le32(p + starts[0] + 4);
    } else {
      a = bri_le64(p + starts[0]);
      b = bri_le64(p + starts[0] + 8);
    }
    if (a > b || b > lens[1])
      return bri_error_set(err, BRI_ECORRUPT,
                           "variable-width scalar offsets [%llu, %llu] outside its %llu data bytes",
                           (unsigned long long)a, (unsigned long long)b,
                           (unsigned long long)lens[1]);
    *val = p + starts[1] + a;
    *vlen = b - a;
    return 0;
  }
  if (v->kind == BRI_LEAF_FIXED) {
    uint64_t need = bri_values_fixed_bytes(v, 1);
    if (nb != 1 || lens[0] < need)
      return bri_error_set(err, BRI_ECORRUPT,
                           "fixed-width scalar: expected 1 Arrow buffer of %llu bytes, found %u",
                           (unsigned long long)need, nb);
    *val = p + starts[0];
    *vlen = need;
    return 0;
  }
  return bri_error_set(err, BRI_EUNSUPPORTED, "constant pages of packed structs are not supported");
}

/* Writes `count` copies of the sb-bit value at val into slots 0.. of data.
 * Bulk: the first copies are placed bit by bit, then whole bytes are
 * replicated by doubling memcpy (8 slots always span exactly sb bytes). */
static void fill_slots(uint8_t *data, uint64_t sb, const uint8_t *val, uint64_t count) {
  if (sb == 0) return;
  if (sb == 1) {
    bri_bits_fill(data, 0, count, val[0] & 1);
    return;
  }
  uint64_t unit_slots = sb % 8 == 0 ? 1 : 8;
  uint64_t first = count < unit_slots ? count : unit_slots;
  if (sb % 8 == 0)
    memcpy(data, val, (size_t)(sb / 8));
  else
    for (uint64_t i = 0; i < first; i++) bri_bits_copy(data, i * sb, val, 0, sb);
  if (count <= unit_slots) return;
  uint64_t total_bits = count * sb, total = total_bits / 8 + (total_bits % 8 != 0);
  uint64_t done = unit_slots * sb / 8;
  while (done < total) {
    uint64_t k = done < total - done ? done : total - done;
    memcpy(data + done, data, (size_t)k);
    done += k;
  }
  if (total_bits % 8) /* keep the bits past the last slot clear */
    data[total - 1] &= (uint8_t)((1u << (total_bits % 8)) - 1);
}

int bri_constant_decode(bri_layout_io *io, const Lance__Encodings21__ConstantLayout *cl,
                        bri_error *err) {
  const bri_page_input *in = io->in;
  bri_dec *d = io->dec;
  bri_leaf_page *out = io->out;
  bri_values *v = &out->values;
  int rc;
  size_t nb = in->n_buffers;
  int has_inline = cl->has_inline_value;
  int scalar_idx = -1, rep_idx = -1, def_idx = -1;
  if (has_inline) {
    if (nb == 2) {
      rep_idx = 0;
      def_idx = 1;
    } else if (nb != 0) {
      return bri_error_set(err, BRI_ECORRUPT,
                           "ConstantLayout with an inline value has %zu buffers; expected 0 or 2 "
                           "(rep, def)",
                           nb);
    }
  } else {
    switch (nb) {
    case 0: break;
    case 1: scalar_idx = 0; break;
    case 2: rep_idx = 0; def_idx = 1; break;
    case 3: scalar_idx = 0; rep_idx = 1; def_idx = 2; break;
    default:
      return bri_error_set(err, BRI_ECORRUPT,
                           "ConstantLayout has %zu buffers; expected at most 3 (scalar, rep, def)",
                           nb);
    }
  }
  const uint8_t *val = NULL;
  uint64_t vlen = 0;
  if (has_inline) {
    val = cl->inline_value.data;
    vlen = cl->inline_value.len;
    if (v->kind != BRI_LEAF_FIXED)
      return bri_error_set(err, BRI_ECORRUPT,
                           "ConstantLayout inline value of %llu bytes for a column that is not "
                           "fixed width",
                           (unsigned long long)vlen);
    uint64_t need = bri_values_fixed_bytes(v, 1);
    if (!(vlen == need || (v->bits == 1 && v->elems_per_slot == 1 && vlen == 1)))
      return bri_error_set(err, BRI_ECORRUPT,
                           "ConstantLayout inline value is %llu bytes; the column's values are "
                           "%llu",
                           (unsigned long long)vlen, (unsigned long long)need);
  } else if (scalar_idx >= 0) {
    rc = scalar_from_buffer(in->buffers[scalar_idx], in->buffer_sizes[scalar_idx], v, &val, &vlen,
                            err);
    if (rc) return bri_error_wrap(err, "scalar buffer");
  }
  uint64_t nrep = 0, ndef = 0;
  if (rep_idx >= 0) {
    rc = decode_levels(d, "repetition levels", cl->rep_compression, cl->has_num_rep_values,
                       cl->num_rep_values, in->buffers[rep_idx], in->buffer_sizes[rep_idx],
                       &out->rep, &nrep, err);
    if (rc) return rc;
    rc = decode_levels(d, "definition levels", cl->def_compression, cl->has_num_def_values,
                       cl->num_def_values, in->buffers[def_idx], in->buffer_sizes[def_idx],
                       &out->def, &ndef, err);
    if (rc) return rc;
  }
  if (out->rep && out->def && nrep != ndef)
    return bri_error_set(err, BRI_ECORRUPT, "%llu repetition levels but %llu definition levels",
                         (unsigned long long)nrep, (unsigned long long)ndef);
  if (out->rep || out->def) {
    out->n_levels = out->rep ? nrep : ndef;
  } else if (!val) {
    /* All null, no levels on disk: synthesise them (see the file comment). */
    if (out->max_def == 0)
      return bri_error_set(err, BRI_ECORRUPT,
                           "all-null page, but its layers allow no null (no nullable layer)");
    if (in->n_rows > d->budget / 4)
      return bri_error_set(err, BRI_ECORRUPT,
                           "all-null page of %llu rows exceeds the page decode limit",
                           (unsigned long long)in->n_rows);
    out->n_levels = in->n_rows;
    if (!(out->def = bri_dec_alloc(d, in->n_rows * 2 + 2, "definition levels", err)))
      return err->code;
    for (uint64_t i = 0; i < in->n_rows; i++) out->def[i] = 1;
    if (out->max_rep) {
      if (!(out->rep = bri_dec_alloc(d, in->n_rows * 2 + 2, "repetition levels", err)))
        return err->code;
      for (uint64_t i = 0; i < in->n_rows; i++) out->rep[i] = out->max_rep;
    }
  } else {
    out->n_levels = in->n_rows;
  }
  /* Every level costs at least one bit of output; refuse row counts the
   * page limit cannot pay for before looping over them. */
  if (out->n_levels / 8 > d->budget)
    return bri_error_set(err, BRI_ECORRUPT,
                         "constant page of %llu items exceeds the page decode limit",
                         (unsigned long long)out->n_levels);
  /* Slots: one per visible level; valid ones get the scalar. */
  uint64_t visible = out->n_levels;
  if (out->def) {
    visible = 0;
    for (uint64_t i = 0; i < out->n_levels; i++) visible += out->def[i] <= out->max_visible_def;
  }
  if (v->kind == BRI_LEAF_VARIABLE) {
    uint64_t valid = 0;
    for (uint64_t i = 0; i < out->n_levels; i++) valid += !out->def || out->def[i] == 0;
    if (valid && !val)
      return bri_error_set(err, BRI_ECORRUPT,
                           "page has %llu valid values but no constant value (inline or scalar "
                           "buffer)",
                           (unsigned long long)valid);
    uint64_t bytes;
    if (__builtin_mul_overflow(valid, vlen, &bytes))
      return bri_error_set(err, BRI_ECORRUPT, "constant values overflow");
    if ((rc = bri_values_reserve(d, v, visible, bytes, err))) return rc;
    for (uint64_t i = 0; i < out->n_levels; i++) {
      uint16_t dv = out->def ? out->def[i] : 0;
      if (dv > out->max_visible_def) continue;
      rc = dv ? bri_values_append_nulls(d, v, 1, err) : bri_values_append_var(d, v, val, vlen, err);
      if (rc) return rc;
    }
    return 0;
  }
  if (v->kind == BRI_LEAF_STRUCT && !val) { /* an all-null struct page */
    for (uint64_t i = 0; i < out->n_levels; i++)
      if (!out->def || out->def[i] == 0)
        return bri_error_set(err, BRI_ECORRUPT,
                             "level %llu is a valid value but the page has no constant value",
                             (unsigned long long)i);
    return bri_values_append_nulls(d, v, visible, err);
  }
  if (v->kind != BRI_LEAF_FIXED)
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "constant pages of packed structs are not supported");
  uint64_t valid = visible;
  if (out->def) {
    valid = 0;
    for (uint64_t i = 0; i < out->n_levels; i++) valid += out->def[i] == 0;
  }
  if (valid && !val)
    return bri_error_set(err, BRI_ECORRUPT,
                         "page has %llu valid values but no constant value (inline or scalar "
                         "buffer)",
                         (unsigned long long)valid);
  if ((rc = bri_values_reserve(d, v, visible, 0, err))) return rc;
  /* Fill every slot with the value; page.c zeroes the null ones afterwards. */
  if (val && visible) fill_slots(v->data, bri_values_slot_bits(v), val, visible);
  v->n = visible;
  return 0;
}
