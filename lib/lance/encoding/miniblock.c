/* miniblock.c: the MiniBlock page layout (docs/format/file.md section 3.1).
 *
 * Buffers: [0] chunk metadata words (u16 in 2.1, u32 with has_large_chunk),
 * [1] the chunks back to back, [2] the dictionary when there is one, then the
 * repetition index (ignored: a full scan does not need it). Each chunk is
 * `u16 num_levels, [u16 rep_size], [u16 def_size], value buffer sizes (u16 or
 * u32)`, padded to 8, then rep, def and each value buffer, each padded to 8.
 *
 * Design choice: chunks are decoded in order straight into the page's output
 * arrays (levels appended, values appended), so no per-chunk allocation is
 * kept; dictionary pages decode indices into one scratch array and expand
 * them at the end, when the def levels tell which slots are null (a null
 * slot's index is never looked up: nulls come from def, never from the
 * dictionary's null entry). */
#include <string.h>

#include "lance/encoding/decode.h"
#include "util/bytes.h"

#define MAX_NUM_BUFFERS 64

typedef struct level_buf {
  uint16_t *p;
  uint64_t n, cap;
} level_buf;

static int levels_grow(bri_dec *d, level_buf *b, uint64_t more, bri_error *err) {
  if (b->n + more <= b->cap && b->p) return 0;
  uint64_t ncap = b->cap * 2 > b->n + more ? b->cap * 2 : b->n + more;
  if (ncap < 256) ncap = 256;
  if ((ncap - b->cap) * 2 > d->budget) ncap = b->n + more;
  uint16_t *np = bri_dec_realloc(d, b->p, b->cap * 2, ncap * 2, "levels", err);
  if (!np) return err->code;
  b->p = np;
  b->cap = ncap;
  return 0;
}

static size_t pad8(size_t x) { return (x + 7) & ~(size_t)7; }

typedef struct chunk_ctx {
  const Lance__Encodings21__MiniBlockLayout *mb;
  bri_dec *d;
  size_t size_width; /* bytes of each value buffer size: 2 or 4 */
  size_t num_buffers;
  level_buf rep, def;
  int have_rep, have_def;
  /* dictionary indices */
  uint8_t *idx;
  uint64_t idx_bits;
  uint64_t values_done;
} chunk_ctx;

static int decode_chunk(chunk_ctx *c, const uint8_t *p, size_t size, uint64_t nvals,
                        bri_values *out, bri_error *err) {
  bri_cursor cur = bri_cursor_make(p, size);
  const uint8_t *h = bri_cursor_take(&cur, 2);
  if (!h) return bri_error_set(err, BRI_ECORRUPT, "chunk header is truncated");
  uint16_t num_levels = bri_le16(h);
  size_t rep_size = 0, def_size = 0;
  if (c->have_rep) {
    if (!(h = bri_cursor_take(&cur, 2)))
      return bri_error_set(err, BRI_ECORRUPT, "chunk header is truncated (rep size)");
    rep_size = bri_le16(h);
  }
  if (c->have_def) {
    if (!(h = bri_cursor_take(&cur, 2)))
      return bri_error_set(err, BRI_ECORRUPT, "chunk header is truncated (def size)");
    def_size = bri_le16(h);
  }
  size_t sizes[MAX_NUM_BUFFERS];
  for (size_t i = 0; i < c->num_buffers; i++) {
    if (!(h = bri_cursor_take(&cur, c->size_width)))
      return bri_error_set(err, BRI_ECORRUPT, "chunk header is truncated (size of buffer %zu)",
                           i);
    sizes[i] = c->size_width == 2 ? bri_le16(h) : bri_le32(h);
  }
  /* Sections: each starts at a multiple of 8 from the chunk start. */
  size_t pos = pad8(cur.pos);
  bri_slice rep = {0}, def = {0}, bufs[MAX_NUM_BUFFERS];
  const char *names[2] = {"repetition levels", "definition levels"};
  size_t lens[2] = {rep_size, def_size};
  bri_slice *dst[2] = {&rep, &def};
  int present[2] = {c->have_rep, c->have_def};
  for (int s = 0; s < 2; s++) {
    if (!present[s]) continue;
    if (pos > size || lens[s] > size - pos)
      return bri_error_set(err, BRI_ECORRUPT,
                           "%s: %zu bytes at chunk byte %zu run past the %zu-byte chunk",
                           names[s], lens[s], pos, size);
    dst[s]->p = p + pos;
    dst[s]->len = lens[s];
    pos = pad8(pos + lens[s]);
  }
  for (size_t i = 0; i < c->num_buffers; i++) {
    if (pos > size || sizes[i] > size - pos)
      return bri_error_set(err, BRI_ECORRUPT,
                           "value buffer %zu: %zu bytes at chunk byte %zu run past the %zu-byte "
                           "chunk",
                           i, sizes[i], pos, size);
    bufs[i].p = p + pos;
    bufs[i].len = sizes[i];
    pos = pad8(pos + sizes[i]);
  }
  int rc;
  /* Levels: both streams have num_levels entries (docs/format/file.md 3.1). */
  if (c->have_rep || c->have_def) {
    level_buf *lb[2] = {&c->rep, &c->def};
    const bri_enc *enc[2] = {c->mb->rep_compression, c->mb->def_compression};
    for (int s = 0; s < 2; s++) {
      if (!present[s]) continue;
      if ((rc = levels_grow(c->d, lb[s], num_levels, err))) return rc;
      rc = bri_codec_block_elems(c->d, enc[s], dst[s]->p, dst[s]->len, num_levels, 16,
                                 (uint8_t *)(lb[s]->p + lb[s]->n), 0, err);
      if (rc) return bri_error_wrap(err, "%s", names[s]);
      lb[s]->n += num_levels;
    }
  }
  /* Values. */
  if (c->idx) {
    size_t used;
    rc = bri_codec_mb_elems(c->d, c->mb->value_compression, bufs, c->num_buffers, &used, nvals,
                            c->idx_bits, c->idx, c->values_done * c->idx_bits, err);
  } else {
    rc = bri_codec_mb_decode(c->d, c->mb->value_compression, bufs, c->num_buffers, nvals, out,
                             err);
  }
  if (rc) return bri_error_wrap(err, "values");
  c->values_done += nvals;
  return 0;
}

static uint64_t read_index(const uint8_t *p, uint64_t bits, uint64_t i) {
  switch (bits) {
  case 8: return p[i];
  case 16: return bri_le16(p + 2 * i);
  case 32: return bri_le32(p + 4 * i);
  default: return bri_le64(p + 8 * i);
  }
}

static int dict_lookup(bri_dec *d, const uint8_t *idx, uint64_t idx_bits, uint64_t slot,
                       const bri_values *dict, bri_values *out, bri_error *err) {
  uint64_t k = read_index(idx, idx_bits, slot);
  if (k >= dict->n)
    return bri_error_set(err, BRI_ECORRUPT,
                         "value slot %llu holds dictionary index %llu but the dictionary has "
                         "%llu items",
                         (unsigned long long)slot, (unsigned long long)k,
                         (unsigned long long)dict->n);
  return bri_values_append_from(d, out, dict, k, err);
}

/* Expands dictionary indices into out; null slots (visible def > 0) stay null
 * without looking at their index. */
static int expand_dictionary(bri_dec *d, const bri_leaf_page *page, const uint8_t *idx,
                             uint64_t idx_bits, uint64_t n_slots, const bri_values *dict,
                             bri_values *out, bri_error *err) {
  int rc;
  if (!page->def) {
    for (uint64_t slot = 0; slot < n_slots; slot++)
      if ((rc = dict_lookup(d, idx, idx_bits, slot, dict, out, err))) return rc;
    return 0;
  }
  uint64_t slot = 0;
  for (uint64_t i = 0; i < page->n_levels && slot < n_slots; i++) {
    uint16_t dv = page->def[i];
    if (dv > page->max_visible_def) continue;
    rc = dv ? bri_values_append_nulls(d, out, 1, err)
            : dict_lookup(d, idx, idx_bits, slot, dict, out, err);
    if (rc) return rc;
    slot++;
  }
  return 0;
}

int bri_miniblock_decode(bri_layout_io *io, const Lance__Encodings21__MiniBlockLayout *mb,
                         bri_error *err) {
  const bri_page_input *in = io->in;
  bri_dec *d = io->dec;
  bri_leaf_page *out = io->out;
  int rc;
  if (!mb->value_compression)
    return bri_error_set(err, BRI_ECORRUPT, "MiniBlockLayout has no value_compression");
  const bri_enc *trees[4] = {mb->value_compression, mb->rep_compression, mb->def_compression,
                             mb->dictionary};
  for (int i = 0; i < 4; i++)
    if (trees[i] && (rc = bri_enc_check_known(trees[i], err))) return rc;
  size_t want_bufs;
  if ((rc = bri_enc_mb_buffers(mb->value_compression, &want_bufs, err))) return rc;
  uint64_t nb = mb->has_num_buffers ? mb->num_buffers : 0;
  if (nb != want_bufs)
    return bri_error_set(err, BRI_ECORRUPT,
                         "MiniBlockLayout says %llu value buffers per chunk but %s uses %zu",
                         (unsigned long long)nb, bri_enc_name(mb->value_compression), want_bufs);
  if (nb > MAX_NUM_BUFFERS)
    return bri_error_set(err, BRI_ECORRUPT, "MiniBlockLayout has %llu value buffers per chunk",
                         (unsigned long long)nb);
  size_t need_page_bufs = 2 + (mb->dictionary ? 1 : 0);
  if (in->n_buffers < need_page_bufs)
    return bri_error_set(err, BRI_ECORRUPT, "MiniBlockLayout page has %zu buffers; expected %zu%s",
                         in->n_buffers, need_page_bufs,
                         mb->dictionary ? " (metadata, chunks, dictionary)" : " (metadata, chunks)");
  const uint8_t *meta = in->buffers[0], *chunks = in->buffers[1];
  uint64_t meta_len = in->buffer_sizes[0], chunks_len = in->buffer_sizes[1];
  size_t ww = mb->has_large_chunk ? 4 : 2;
  if (meta_len % ww)
    return bri_error_set(err, BRI_ECORRUPT,
                         "chunk metadata is %llu bytes, not a whole number of %zu-byte words",
                         (unsigned long long)meta_len, ww);
  uint64_t n_chunks = meta_len / ww;
  uint64_t num_items = mb->has_num_items ? mb->num_items : 0;

  chunk_ctx c;
  memset(&c, 0, sizeof c);
  c.mb = mb;
  c.d = d;
  c.size_width = ww;
  c.num_buffers = (size_t)nb;
  c.have_rep = mb->rep_compression != NULL;
  c.have_def = mb->def_compression != NULL;

  bri_values dict;
  memset(&dict, 0, sizeof dict);
  uint64_t idx_bytes = 0;
  if (mb->dictionary) {
    if ((rc = bri_enc_fixed_bits(mb->value_compression, &c.idx_bits, err))) return rc;
    if (c.idx_bits != 8 && c.idx_bits != 16 && c.idx_bits != 32 && c.idx_bits != 64)
      return bri_error_set(err, BRI_ECORRUPT,
                           "dictionary indices are %llu bits; expected 8, 16, 32 or 64",
                           (unsigned long long)c.idx_bits);
    if ((rc = bri_values_init(&dict, io->type, err))) return rc;
    uint64_t nd = mb->has_num_dictionary_items ? mb->num_dictionary_items : 0;
    rc = bri_codec_block_values(d, mb->dictionary, in->buffers[2], in->buffer_sizes[2], nd, &dict,
                                err);
    if (rc) {
      bri_error_wrap(err, "dictionary of %llu items", (unsigned long long)nd);
      goto done;
    }
    if (num_items > UINT64_MAX / 8) {
      rc = bri_error_set(err, BRI_ECORRUPT, "num_items %llu is impossible",
                         (unsigned long long)num_items);
      goto done;
    }
    idx_bytes = num_items * (c.idx_bits / 8);
    c.idx = bri_dec_alloc(d, idx_bytes, "dictionary indices", err);
    if (!c.idx) {
      rc = err->code;
      goto done;
    }
  }

  uint64_t off = 0, done_vals = 0;
  for (uint64_t k = 0; k < n_chunks; k++) {
    uint32_t word = ww == 2 ? bri_le16(meta + k * 2) : bri_le32(meta + k * 4);
    uint64_t size = ((uint64_t)(word >> 4) + 1) * 8;
    unsigned lg = word & 0xF;
    uint64_t left = num_items - done_vals, nvals;
    if (k + 1 < n_chunks) {
      nvals = (uint64_t)1 << lg;
      if (nvals > left) {
        rc = bri_error_set(err, BRI_ECORRUPT,
                           "chunk %llu claims %llu values but only %llu of the page's %llu remain",
                           (unsigned long long)k, (unsigned long long)nvals,
                           (unsigned long long)left, (unsigned long long)num_items);
        goto done;
      }
    } else {
      nvals = left;
      if (lg != 0 && ((uint64_t)1 << lg) != left) {
        rc = bri_error_set(err, BRI_ECORRUPT,
                           "last chunk %llu claims %llu values but %llu remain",
                           (unsigned long long)k, (unsigned long long)1 << lg,
                           (unsigned long long)left);
        goto done;
      }
    }
    if (!bri_range_ok(off, size, chunks_len)) {
      rc = bri_error_set(err, BRI_ECORRUPT,
                         "chunk %llu: %llu bytes at byte %llu run past the %llu-byte chunk buffer",
                         (unsigned long long)k, (unsigned long long)size, (unsigned long long)off,
                         (unsigned long long)chunks_len);
      goto done;
    }
    rc = decode_chunk(&c, chunks + off, (size_t)size, nvals, &out->values, err);
    if (rc) {
      bri_error_wrap(err, "chunk %llu (chunk buffer byte %llu, %llu values)", (unsigned long long)k,
                     (unsigned long long)off, (unsigned long long)nvals);
      goto done;
    }
    off += size;
    done_vals += nvals;
  }
  if (done_vals != num_items) {
    rc = bri_error_set(err, BRI_ECORRUPT, "%llu chunks hold %llu values but num_items is %llu",
                       (unsigned long long)n_chunks, (unsigned long long)done_vals,
                       (unsigned long long)num_items);
    goto done;
  }

  /* Levels -> page. */
  if (c.have_rep || c.have_def) {
    if (c.have_rep && c.have_def && c.rep.n != c.def.n) {
      rc = bri_error_set(err, BRI_ECORRUPT, "%llu repetition levels but %llu definition levels",
                         (unsigned long long)c.rep.n, (unsigned long long)c.def.n);
      goto done;
    }
    out->n_levels = c.have_rep ? c.rep.n : c.def.n;
    out->rep = c.rep.p;
    out->def = c.def.p;
    c.rep.p = c.def.p = NULL;
    if (out->n_levels == 0) { /* keep the arrays non-NULL: the page has the streams */
      if (c.have_rep && !out->rep && !(out->rep = bri_dec_alloc(d, 2, "levels", err))) {
        rc = err->code;
        goto done;
      }
      if (c.have_def && !out->def && !(out->def = bri_dec_alloc(d, 2, "levels", err))) {
        rc = err->code;
        goto done;
      }
    }
  } else {
    out->n_levels = num_items;
  }

  if (c.idx) {
    /* Slots come from levels, so validate those first (page.c checks again). */
    uint64_t vis, rows;
    rc = bri_levels_check(out->rep, out->def, out->n_levels, out->max_rep, out->max_def,
                          out->max_visible_def, &vis, &rows, err);
    if (rc) goto done;
    if (vis != num_items) {
      rc = bri_error_set(err, BRI_ECORRUPT,
                         "levels make %llu value slots but the page holds %llu values",
                         (unsigned long long)vis, (unsigned long long)num_items);
      goto done;
    }
    rc = expand_dictionary(d, out, c.idx, c.idx_bits, num_items, &dict, &out->values, err);
    if (rc) goto done;
  }
  rc = 0;
done:
  bri_dec_free(d, c.rep.p, c.rep.cap * 2);
  bri_dec_free(d, c.def.p, c.def.cap * 2);
  bri_dec_free(d, c.idx, idx_bytes);
  bri_values_dispose(&dict);
  return rc;
}
