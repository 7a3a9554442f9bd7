/* enc_miniblock.c: the MiniBlock page layout, write side (docs/format/file.md
 * sections 3.1, 5, 6, 7.1, 7.2, 7.4, 7.8, 7.9).
 *
 * Three passes over one page: (1) cut the value slots into chunks the way
 * Lance's compressors do (Flat: powers of two up to ~8 KiB and 4096 values;
 * InlineBitpacking: 1024 values; FixedSizeList: whole rows; Variable: powers
 * of two up to 4 KiB of offsets + bytes) and encode each chunk's value
 * buffers; (2) optionally replace buffer 0 of every chunk by its General
 * (zstd/lz4) unit when the total shrinks; (3) give each chunk its levels
 * (a chunk ends at its last visible value; invisible levels after it go to
 * the next chunk) encoded with the page's level codec, write the chunk
 * header, sections padded to 8 bytes, the chunk metadata word (u16 in 2.1,
 * u32 in 2.2 with has_large_chunk) and, with repetition, the repetition
 * index (rows finished, leftover levels) per chunk.
 *
 * Hard limits of the chunk format (u16 level count and level sizes; in 2.1
 * u16 buffer sizes and 32 KiB chunks) are checked per chunk; hitting one
 * returns BRI_ENC_NOFIT so that the page is written as FullZip instead. */
#include <stdlib.h>
#include <string.h>

#include "lance/encoding/bitpack.h"
#include "lance/encoding/enc_internal.h"
#include "lance/encoding/general.h"

#define MB_MAX_BUFFERS (BRI_MAX_FSL_DEPTH + 1)
#define MB_MAX_BYTES (8 * 1024 - 6) /* Lance MAX_MINIBLOCK_BYTES */
#define MB_MAX_VALUES 4096
#define MB_AIM_VARIABLE 4096        /* Lance AIM_MINICHUNK_SIZE */
#define MB_GENERAL_MIN 4096         /* Lance MIN_BUFFER_SIZE_FOR_COMPRESSION */
#define MB_FILL 0xFE                /* chunk padding byte Lance writes */
#define MB_VAR_FILL 0x48            /* Variable chunk padding byte Lance writes */

typedef struct mb_chunk {
  uint64_t n;   /* value slots */
  uint8_t log;  /* 0 for the last chunk */
  uint64_t sizes[MB_MAX_BUFFERS];
} mb_chunk;

typedef struct mb_values {
  size_t nb;                 /* value buffers per chunk */
  bri_ebuf buf[MB_MAX_BUFFERS]; /* per buffer index, every chunk's part back to back */
  const uint8_t *view[MB_MAX_BUFFERS]; /* instead of buf: the input bytes as they are */
  mb_chunk *chunks;
  size_t n_chunks, cap_chunks;
  bri_cenc *enc;
} mb_values;

static int add_chunk(mb_values *mv, uint64_t n, uint8_t log, bri_error *err) {
  if (mv->n_chunks == mv->cap_chunks) {
    size_t cap = mv->cap_chunks ? mv->cap_chunks * 2 : 64;
    mb_chunk *c = realloc(mv->chunks, cap * sizeof *c);
    if (!c) return bri_error_set(err, BRI_ENOMEM, "page encoder: out of memory (chunks)");
    mv->chunks = c;
    mv->cap_chunks = cap;
  }
  mb_chunk *c = &mv->chunks[mv->n_chunks++];
  memset(c, 0, sizeof *c);
  c->n = n;
  c->log = log;
  return 0;
}

static void mv_dispose(mb_values *mv) {
  for (size_t i = 0; i < MB_MAX_BUFFERS; i++) bri_ebuf_dispose(&mv->buf[i]);
  free(mv->chunks);
}

static unsigned ilog2(uint64_t v) {
  unsigned l = 0;
  while (v > 1) {
    v >>= 1;
    l++;
  }
  return l;
}

/* Lance ValueEncoder::find_log_vals_per_chunk: start at 2 values (8 for
 * sub-byte words) and double while the chunk stays under the limits. */
static uint64_t flat_vals_per_chunk(uint64_t bytes_per_word, uint64_t vals_per_word) {
  uint64_t size = 2 * bytes_per_word, num = vals_per_word == 1 ? 2 : 8;
  while (2 * size < MB_MAX_BYTES && 2 * num <= MB_MAX_VALUES) {
    size *= 2;
    num *= 2;
  }
  return num;
}

/* Cuts n values into chunks of `per` (a power of two) plus a last chunk. */
static int fixed_chunks(mb_values *mv, uint64_t n, uint64_t per, bri_error *err) {
  int rc;
  uint64_t done = 0;
  while (n - done > per) {
    if ((rc = add_chunk(mv, per, (uint8_t)ilog2(per), err))) return rc;
    done += per;
  }
  /* Lance makes a full last chunk a regular chunk and then stops; either way
   * the last chunk carries log 0. */
  return add_chunk(mv, n - done, 0, err);
}

static int plan_flat(bri_enc_page *pg, mb_values *mv, bri_error *err) {
  const bri_values *v = pg->dict_enc ? &pg->indices : pg->in->values;
  uint64_t n = v->n;
  int rc;
  mv->nb = 1;
  if (v->bits % 8 == 0) {
    uint64_t bpv = v->bits / 8;
    if ((rc = fixed_chunks(mv, n, flat_vals_per_chunk(bpv, 1), err))) return rc;
    mv->view[0] = v->data; /* Flat chunks are slices of the values: no copy */
    for (size_t c = 0; c < mv->n_chunks; c++) mv->chunks[c].sizes[0] = mv->chunks[c].n * bpv;
  } else { /* booleans: bit-packed, chunks of whole bytes */
    if ((rc = fixed_chunks(mv, n, flat_vals_per_chunk(v->bits, 8), err))) return rc;
    mv->view[0] = v->data;
    for (size_t c = 0; c < mv->n_chunks; c++)
      mv->chunks[c].sizes[0] = (mv->chunks[c].n * v->bits + 7) / 8;
  }
  mv->enc = bri_pbe_flat(&pg->arena, v->bits);
  return mv->enc ? 0 : bri_error_set(err, BRI_ENOMEM, "page encoder: out of memory");
}

/* Bytes InlineBitpacking needs for n T-bit values (each unit its own width). */
static uint64_t bitpack_bytes(const uint8_t *data, unsigned t, uint64_t n) {
  uint64_t total = 0, tb = t / 8;
  for (uint64_t s = 0; s < n; s += BRI_FASTLANES_N) {
    uint64_t cnt = n - s < BRI_FASTLANES_N ? n - s : BRI_FASTLANES_N;
    total += tb + (uint64_t)bri_enc_bit_width(data + s * tb, t, cnt) * 128;
  }
  return total;
}

/* InlineBitpacking (spec 7.4): one 1024-value unit per chunk, the last one
 * zero-padded: a T-bit width word, then the FastLanes-packed words. */
static int plan_bitpack(bri_enc_page *pg, mb_values *mv, bri_error *err) {
  const bri_values *v = pg->dict_enc ? &pg->indices : pg->in->values;
  unsigned t = v->bits;
  uint64_t tb = t / 8, n = v->n;
  uint64_t vals[BRI_FASTLANES_N], packed[BRI_FASTLANES_N];
  int rc;
  mv->nb = 1;
  if ((rc = fixed_chunks(mv, n, BRI_FASTLANES_N, err))) return rc;
  if ((rc = bri_ebuf_reserve(&mv->buf[0], (size_t)bitpack_bytes(v->data, t, n), err))) return rc;
  uint64_t s = 0;
  for (size_t c = 0; c < mv->n_chunks; c++) {
    bri_ebuf *b = &mv->buf[0];
    uint64_t cnt = mv->chunks[c].n;
    unsigned w = bri_enc_bit_width(v->data + s * tb, t, cnt);
    memset(vals, 0, sizeof vals);
    memcpy(vals, v->data + s * tb, (size_t)(cnt * tb));
    uint64_t wv = w;
    memcpy(b->p + b->len, &wv, (size_t)tb); /* little-endian host */
    bri_fastlanes_pack(t, w, vals, packed);
    memcpy(b->p + b->len + tb, packed, (size_t)w * 128);
    b->len += tb + (size_t)w * 128;
    mv->chunks[c].sizes[0] = tb + (uint64_t)w * 128;
    s += cnt;
  }
  mv->enc = bri_pbe_inline_bp(&pg->arena, t);
  return mv->enc ? 0 : bri_error_set(err, BRI_ENOMEM, "page encoder: out of memory");
}

/* FixedSizeList (spec 7.9): per chunk, one validity bitmap per FSL layer that
 * has one (outer first; the chunk's rows x cumulative dimension bits), then
 * the flattened values. Chunks hold whole rows. */
static int plan_fsl(bri_enc_page *pg, mb_values *mv, bri_error *err) {
  const bri_values *v = pg->dict_enc ? &pg->indices : pg->in->values;
  uint64_t n = v->n, cum = 1, val_bytes_est = 0;
  uint64_t cum_dim[BRI_MAX_FSL_DEPTH];
  int rc;
  size_t nvb = 0;
  for (uint32_t k = 0; k < v->n_dims; k++) {
    cum *= v->dims[k];
    cum_dim[k] = cum;
    if (v->fsl_validity[k]) {
      val_bytes_est += (cum + 7) / 8;
      nvb++;
    }
  }
  uint64_t cum_bits = v->bits * cum;
  uint64_t bytes_per_word, vals_per_word;
  if (cum_bits % 8 == 0) {
    bytes_per_word = cum_bits / 8;
    vals_per_word = 1;
  } else {
    bytes_per_word = cum_bits;
    vals_per_word = 8;
  }
  uint64_t est = val_bytes_est * vals_per_word + bytes_per_word;
  if (2 * est >= MB_MAX_BYTES) return BRI_ENC_NOFIT;
  if ((rc = fixed_chunks(mv, n, flat_vals_per_chunk(est, vals_per_word), err))) return rc;
  mv->nb = nvb + 1;
  uint64_t row = 0;
  for (size_t c = 0; c < mv->n_chunks; c++) {
    uint64_t rows = mv->chunks[c].n;
    size_t bi = 0;
    for (uint32_t k = 0; k < v->n_dims; k++) {
      if (!v->fsl_validity[k]) continue;
      uint64_t nbits = rows * cum_dim[k], nbytes = (nbits + 7) / 8;
      bri_ebuf *b = &mv->buf[bi];
      if ((rc = bri_ebuf_reserve(b, (size_t)nbytes, err))) return rc;
      bri_enc_bits_extract(b->p + b->len, v->fsl_validity[k], row * cum_dim[k], nbits);
      b->len += nbytes;
      mv->chunks[c].sizes[bi] = nbytes;
      bi++;
    }
    uint64_t start_bit = row * cum_bits, nbits = rows * cum_bits, nbytes = (nbits + 7) / 8;
    bri_ebuf *b = &mv->buf[nvb];
    if ((rc = bri_ebuf_reserve(b, (size_t)nbytes, err))) return rc;
    bri_enc_bits_extract(b->p + b->len, v->data, start_bit, nbits);
    b->len += nbytes;
    mv->chunks[c].sizes[nvb] = nbytes;
    row += rows;
  }
  bri_cenc *e = bri_pbe_flat(&pg->arena, v->bits);
  for (uint32_t k = v->n_dims; k-- > 0;)
    e = bri_pbe_fsl(&pg->arena, v->dims[k], v->fsl_validity[k] != NULL, e);
  mv->enc = e;
  return e ? 0 : bri_error_set(err, BRI_ENOMEM, "page encoder: out of memory");
}

/* Variable (spec 7.2): powers of two while offsets + bytes <= 4 KiB, the
 * rest in the last chunk when it fits; offsets relative to the chunk buffer,
 * padded to the offset width with 0x48. */
static int plan_variable(bri_enc_page *pg, mb_values *mv, bri_error *err) {
  const bri_values *v = pg->dict_enc ? &pg->indices : pg->in->values;
  const int64_t *off = v->offsets;
  uint64_t n = v->n, w = pg->opt->offset_bits / 8;
  int rc;
  mv->nb = 1;
  uint64_t s = 0;
  while (s < n) {
    uint64_t cnt = 1;
    for (;;) {
      uint64_t next = cnt * 2;
      if (s + next >= n) {
        uint64_t rest = n - s;
        uint64_t size = (uint64_t)(off[n] - off[s]) + (rest + 1) * w;
        if (size <= MB_AIM_VARIABLE) cnt = rest;
        break;
      }
      uint64_t size = (uint64_t)(off[s + next] - off[s]) + (next + 1) * w;
      if (size > MB_AIM_VARIABLE) break;
      cnt = next;
    }
    bool last = s + cnt == n;
    if ((rc = add_chunk(mv, cnt, last ? 0 : (uint8_t)ilog2(cnt), err))) return rc;
    bri_ebuf *b = &mv->buf[0];
    size_t base = b->len;
    uint64_t first = (cnt + 1) * w;
    for (uint64_t i = 0; i <= cnt; i++)
      if ((rc = bri_ebuf_put_le(b, first + (uint64_t)(off[s + i] - off[s]), (unsigned)w, err)))
        return rc;
    if ((rc = bri_ebuf_put(b, v->data + off[s], (size_t)(off[s + cnt] - off[s]), err))) return rc;
    if ((rc = bri_ebuf_pad(b, base, (size_t)w, MB_VAR_FILL, err))) return rc;
    mv->chunks[mv->n_chunks - 1].sizes[0] = b->len - base;
    s += cnt;
  }
  mv->enc = bri_pbe_variable(&pg->arena, pg->opt->offset_bits);
  return mv->enc ? 0 : bri_error_set(err, BRI_ENOMEM, "page encoder: out of memory");
}

/* General wrapper (spec 7.8): buffer 0 of each chunk becomes one unit; kept
 * only if buffer 0 holds at least 4 KiB and the units are smaller in total. */
static int maybe_general(bri_enc_page *pg, mb_values *mv, int scheme, int level, bri_error *err) {
  bri_ebuf *b0 = &mv->buf[0];
  const uint8_t *src = mv->view[0] ? mv->view[0] : b0->p;
  uint64_t total = 0;
  for (size_t c = 0; c < mv->n_chunks; c++) total += mv->chunks[c].sizes[0];
  if (total < MB_GENERAL_MIN) return 0;
  bri_ebuf out = {0};
  uint64_t *sizes = malloc(mv->n_chunks * sizeof *sizes);
  if (!sizes) return bri_error_set(err, BRI_ENOMEM, "page encoder: out of memory");
  size_t pos = 0;
  int rc = 0;
  for (size_t c = 0; c < mv->n_chunks; c++) {
    uint8_t *z = NULL;
    size_t zl = 0;
    size_t len = (size_t)mv->chunks[c].sizes[0];
    if ((rc = bri_general_compress(scheme, level, src + pos, len, &z, &zl, err))) goto out;
    rc = bri_ebuf_put(&out, z, zl, err);
    free(z);
    if (rc) goto out;
    sizes[c] = zl;
    pos += len;
    if (out.len >= total) goto out; /* does not pay */
  }
  for (size_t c = 0; c < mv->n_chunks; c++) mv->chunks[c].sizes[0] = sizes[c];
  bri_ebuf_dispose(b0);
  *b0 = out;
  mv->view[0] = NULL;
  out = (bri_ebuf){0};
  mv->enc = bri_pbe_general(&pg->arena, scheme, level, mv->enc);
  if (!mv->enc) rc = bri_error_set(err, BRI_ENOMEM, "page encoder: out of memory");
out:
  bri_ebuf_dispose(&out);
  free(sizes);
  return rc;
}

/* Repetition index entry of one chunk (spec 3.1, Lance compress_levels). */
static void rep_index_entry(const uint16_t *r, uint64_t n, uint16_t max_rep, bool first, bool last,
                            uint64_t *idx, size_t c) {
  uint64_t rows = 0;
  for (uint64_t i = 1; i < n; i++) rows += r[i] == max_rep;
  uint64_t leftover = 0;
  if (!last) {
    leftover = n;
    for (uint64_t i = n; i-- > 0;)
      if (r[i] == max_rep) {
        leftover = n - i;
        break;
      }
  }
  if (!first && n > 0 && r[0] == max_rep && idx[2 * c - 1] != 0) {
    idx[2 * c - 2] += 1;
    idx[2 * c - 1] = 0;
  }
  if (last) rows += 1;
  idx[2 * c] = rows;
  idx[2 * c + 1] = leftover;
}

int bri_enc_miniblock(bri_enc_page *pg, bri_encoded_page *out, bri_error *err) {
  const bri_values *v = pg->dict_enc ? &pg->indices : pg->in->values;
  const bool v22 = pg->opt->file_minor >= 2;
  mb_values mv = {0};
  bri_ebuf data = {0}, meta = {0}, lvbuf = {0};
  uint64_t *rep_idx = NULL;
  int rc = 0;

  switch (v->kind) {
  case BRI_LEAF_FIXED:
    if (v->n_dims > 0)
      rc = plan_fsl(pg, &mv, err);
    else if ((v->bits == 8 || v->bits == 16 || v->bits == 32 || v->bits == 64) &&
             bitpack_bytes(v->data, v->bits, v->n) < v->n * (v->bits / 8))
      rc = plan_bitpack(pg, &mv, err);
    else
      rc = plan_flat(pg, &mv, err);
    break;
  case BRI_LEAF_VARIABLE:
    rc = plan_variable(pg, &mv, err);
    break;
  default:
    rc = BRI_ENC_NOFIT;
  }
  if (rc) goto out;

  if (pg->opt->general_scheme)
    rc = maybe_general(pg, &mv, pg->opt->general_scheme, pg->opt->general_level, err);
  else if (pg->opt->auto_zstd)
    rc = maybe_general(pg, &mv, BRI_GENERAL_ZSTD, 0, err);
  if (rc) goto out;

  bri_level_codec rep_c = {0}, def_c = {0};
  if (pg->rep) bri_level_codec_choose(pg->rep, pg->n_levels, &rep_c);
  if (pg->def) bri_level_codec_choose(pg->def, pg->n_levels, &def_c);
  if (pg->rep) {
    rep_idx = calloc(mv.n_chunks * 2, sizeof *rep_idx);
    if (!rep_idx) {
      rc = bri_error_set(err, BRI_ENOMEM, "page encoder: out of memory");
      goto out;
    }
  }

  const unsigned size_w = v22 ? 4 : 2;
  uint64_t lv = 0;
  size_t boff[MB_MAX_BUFFERS] = {0};
  for (size_t c = 0; c < mv.n_chunks; c++) {
    mb_chunk *ch = &mv.chunks[c];
    const bool last = c + 1 == mv.n_chunks;
    uint64_t l0 = lv, l1 = lv;
    if (pg->rep || pg->def) {
      if (last) {
        l1 = pg->n_levels;
      } else {
        uint64_t need = ch->n;
        while (need > 0 && l1 < pg->n_levels) {
          if (!pg->def || pg->def[l1] <= pg->max_visible_def) need--;
          l1++;
        }
      }
      if (l1 - l0 > 0xFFFF) {
        rc = BRI_ENC_NOFIT;
        goto out;
      }
    }
    lv = l1;
    size_t start = data.len;
    size_t rep_len = 0, def_len = 0;
    lvbuf.len = 0;
    if (pg->rep) {
      if ((rc = bri_level_codec_encode(&rep_c, pg->rep + l0, l1 - l0, &lvbuf, err))) goto out;
      rep_len = lvbuf.len;
      rep_index_entry(pg->rep + l0, l1 - l0, pg->max_rep, c == 0, last, rep_idx, c);
    }
    if (pg->def) {
      if ((rc = bri_level_codec_encode(&def_c, pg->def + l0, l1 - l0, &lvbuf, err))) goto out;
      def_len = lvbuf.len - rep_len;
    }
    if (rep_len > 0xFFFF || def_len > 0xFFFF) {
      rc = BRI_ENC_NOFIT;
      goto out;
    }
    for (size_t b = 0; b < mv.nb; b++)
      if (!v22 && ch->sizes[b] > 0xFFFF) {
        rc = BRI_ENC_NOFIT;
        goto out;
      }
    if ((rc = bri_ebuf_put_le(&data, (pg->rep || pg->def) ? l1 - l0 : 0, 2, err))) goto out;
    if (pg->rep && (rc = bri_ebuf_put_le(&data, rep_len, 2, err))) goto out;
    if (pg->def && (rc = bri_ebuf_put_le(&data, def_len, 2, err))) goto out;
    for (size_t b = 0; b < mv.nb; b++)
      if ((rc = bri_ebuf_put_le(&data, ch->sizes[b], size_w, err))) goto out;
    if ((rc = bri_ebuf_pad(&data, start, 8, MB_FILL, err))) goto out;
    if (pg->rep) {
      if ((rc = bri_ebuf_put(&data, lvbuf.p, rep_len, err))) goto out;
      if ((rc = bri_ebuf_pad(&data, start, 8, MB_FILL, err))) goto out;
    }
    if (pg->def) {
      if ((rc = bri_ebuf_put(&data, lvbuf.p + rep_len, def_len, err))) goto out;
      if ((rc = bri_ebuf_pad(&data, start, 8, MB_FILL, err))) goto out;
    }
    for (size_t b = 0; b < mv.nb; b++) {
      const uint8_t *src = mv.view[b] ? mv.view[b] : mv.buf[b].p;
      if ((rc = bri_ebuf_put(&data, src + boff[b], (size_t)ch->sizes[b], err))) goto out;
      boff[b] += (size_t)ch->sizes[b];
      if ((rc = bri_ebuf_pad(&data, start, 8, MB_FILL, err))) goto out;
    }
    uint64_t chunk_bytes = data.len - start;
    if (!v22 && chunk_bytes > 32 * 1024) {
      rc = BRI_ENC_NOFIT;
      goto out;
    }
    if (chunk_bytes / 8 - 1 >= ((uint64_t)1 << 28)) {
      rc = BRI_ENC_NOFIT;
      goto out;
    }
    uint64_t word = ((chunk_bytes / 8 - 1) << 4) | ch->log;
    if ((rc = bri_ebuf_put_le(&meta, word, size_w, err))) goto out;
  }

  /* Layout message. */
  Lance__Encodings21__MiniBlockLayout *mb = bri_pba_alloc(&pg->arena, sizeof *mb);
  Lance__Encodings21__PageLayout *pl = bri_pba_alloc(&pg->arena, sizeof *pl);
  if (!mb || !pl) {
    rc = bri_error_set(err, BRI_ENOMEM, "page encoder: out of memory");
    goto out;
  }
  lance__encodings21__mini_block_layout__init(mb);
  lance__encodings21__page_layout__init(pl);
  if (pg->rep) mb->rep_compression = bri_level_codec_pb(&rep_c, &pg->arena);
  if (pg->def) mb->def_compression = bri_level_codec_pb(&def_c, &pg->arena);
  mb->value_compression = mv.enc;
  mb->n_layers = pg->in->n_layers;
  mb->layers = bri_pbe_layers(&pg->arena, pg->in->layers, pg->in->n_layers);
  mb->has_num_buffers = 1;
  mb->num_buffers = mv.nb;
  if (pg->rep) {
    mb->has_repetition_index_depth = 1;
    mb->repetition_index_depth = 1;
  }
  mb->has_num_items = 1;
  mb->num_items = v->n;
  if (pg->dict_enc) {
    mb->dictionary = pg->dict_enc;
    mb->has_num_dictionary_items = 1;
    mb->num_dictionary_items = pg->dict_items;
  }
  if (v22) {
    mb->has_has_large_chunk = 1;
    mb->has_large_chunk = 1;
  }
  if ((pg->rep && !mb->rep_compression) || (pg->def && !mb->def_compression) || !mb->layers) {
    rc = bri_error_set(err, BRI_ENOMEM, "page encoder: out of memory");
    goto out;
  }
  pl->layout_case = LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_MINI_BLOCK_LAYOUT;
  pl->mini_block_layout = mb;
  if ((rc = bri_pbe_pack_page(pl, &out->encoding, &out->encoding_len, err))) goto out;

  out->sizes[0] = meta.len;
  out->buffers[0] = bri_ebuf_take(&meta);
  out->sizes[1] = data.len;
  out->buffers[1] = bri_ebuf_take(&data);
  out->n_buffers = 2;
  if (pg->dict_enc) {
    out->sizes[2] = pg->dict_buf.len;
    out->buffers[2] = bri_ebuf_take(&pg->dict_buf);
    out->n_buffers = 3;
  }
  if (pg->rep) {
    out->sizes[out->n_buffers] = mv.n_chunks * 16;
    out->buffers[out->n_buffers] = (uint8_t *)rep_idx; /* little-endian host (bitpack.h) */
    rep_idx = NULL;
    out->n_buffers++;
  }
  out->layout = "mini_block";
out:
  mv_dispose(&mv);
  bri_ebuf_dispose(&data);
  bri_ebuf_dispose(&meta);
  bri_ebuf_dispose(&lvbuf);
  free(rep_idx);
  return rc;
}
