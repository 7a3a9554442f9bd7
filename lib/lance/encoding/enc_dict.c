/* enc_dict.c: dictionary pages for Arrow dictionary fields (docs/format/file.md
 * section 3.1, "Dictionary").
 *
 * Lance decodes a page of a dictionary-typed field only from a MiniBlock page
 * with a dictionary, so such fields are always written that way: the distinct
 * values of the page become the dictionary items in first-appearance order
 * (a null slot holds the empty / zero value and simply maps to that item;
 * readers take nulls from the def levels), the slots become indices of the
 * field's key width (8/16/32/64 bits, mini-block compressed like any fixed
 * width values), and the items are one block-context buffer: Variable
 * (`u32 32 | u32 bytes_start | offsets | bytes`, or the 64-bit form) or Flat.
 *
 * Design choice: one open-addressing hash table of slot numbers (the first
 * slot holding each value), so building the dictionary costs one hash and
 * usually one compare per slot and no per-value allocation. */
#include <stdlib.h>
#include <string.h>

#include "lance/encoding/enc_internal.h"

static uint64_t hash_bytes(const uint8_t *p, uint64_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
  while (n >= 8) {
    uint64_t v;
    memcpy(&v, p, 8);
    h = (h ^ v) * 0xFF51AFD7ED558CCDull;
    h ^= h >> 32;
    p += 8;
    n -= 8;
  }
  uint64_t v = 0;
  memcpy(&v, p, (size_t)n);
  h = (h ^ v) * 0xC4CEB9FE1A85EC53ull;
  return h ^ (h >> 29);
}

static const uint8_t *slot_at(const bri_values *v, uint64_t k, uint64_t *len) {
  if (v->kind == BRI_LEAF_VARIABLE) {
    *len = (uint64_t)(v->offsets[k + 1] - v->offsets[k]);
    return v->data + v->offsets[k];
  }
  *len = bri_enc_slot_bytes(v);
  return v->data + k * *len;
}

int bri_enc_dict_build(bri_enc_page *pg, bri_error *err) {
  const bri_values *v = pg->in->values;
  const unsigned kb = pg->opt->dict_key_bits;
  const uint64_t n = v->n;
  if (v->kind == BRI_LEAF_FIXED && (v->bits % 8 || v->n_dims))
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "page encoder: dictionary of %u-bit values with %u dimensions", v->bits,
                         v->n_dims);
  uint64_t max_items = kb >= 64 ? UINT64_MAX : ((uint64_t)1 << (kb - 1)); /* signed keys */
  uint64_t cap = 64;
  while (cap < 2 * n + 2) cap *= 2;
  uint64_t *table = malloc(cap * sizeof *table); /* slot + 1, 0 = empty */
  uint64_t *first = malloc((n ? n : 1) * sizeof *first);
  uint8_t *idx = malloc((size_t)((n ? n : 1) * (kb / 8)));
  int rc = 0;
  if (!table || !first || !idx) {
    rc = bri_error_set(err, BRI_ENOMEM, "page encoder: out of memory (dictionary)");
    goto out;
  }
  memset(table, 0, cap * sizeof *table);
  uint64_t items = 0;
  uint64_t *item_of = malloc((n ? n : 1) * sizeof *item_of); /* first slot -> item number */
  if (!item_of) {
    rc = bri_error_set(err, BRI_ENOMEM, "page encoder: out of memory (dictionary)");
    goto out;
  }
  for (uint64_t k = 0; k < n; k++) {
    uint64_t len;
    const uint8_t *p = slot_at(v, k, &len);
    uint64_t h = hash_bytes(p, len) & (cap - 1), item = 0;
    for (;;) {
      uint64_t e = table[h];
      if (!e) {
        if (items == max_items) {
          free(item_of);
          rc = bri_error_set(err, BRI_EUNSUPPORTED,
                             "page encoder: more than %llu distinct values for %u-bit dictionary "
                             "keys",
                             (unsigned long long)max_items, kb);
          goto out;
        }
        table[h] = k + 1;
        first[items] = k;
        item_of[k] = items;
        item = items++;
        break;
      }
      uint64_t l2;
      const uint8_t *q = slot_at(v, e - 1, &l2);
      if (l2 == len && (len == 0 || memcmp(p, q, (size_t)len) == 0)) {
        item = item_of[e - 1];
        break;
      }
      h = (h + 1) & (cap - 1);
    }
    uint64_t iv = item;
    memcpy(idx + k * (kb / 8), &iv, kb / 8); /* little-endian host */
  }
  free(item_of);
  /* the items, block format */
  bri_ebuf *d = &pg->dict_buf;
  if (v->kind == BRI_LEAF_VARIABLE) {
    unsigned ob = pg->opt->offset_bits / 8;
    uint64_t total = 0;
    for (uint64_t i = 0; i < items; i++) {
      uint64_t len;
      slot_at(v, first[i], &len);
      total += len;
    }
    uint64_t start = 2 * ob + (items + 1) * ob;
    if ((rc = bri_ebuf_reserve(d, (size_t)(start + total), err))) goto out;
    bri_ebuf_put_le(d, ob * 8, ob, err);
    bri_ebuf_put_le(d, start, ob, err);
    uint64_t off = 0;
    bri_ebuf_put_le(d, 0, ob, err);
    for (uint64_t i = 0; i < items; i++) {
      uint64_t len;
      slot_at(v, first[i], &len);
      off += len;
      bri_ebuf_put_le(d, off, ob, err);
    }
    for (uint64_t i = 0; i < items; i++) {
      uint64_t len;
      const uint8_t *p = slot_at(v, first[i], &len);
      bri_ebuf_put(d, p, (size_t)len, err);
    }
    pg->dict_enc = bri_pbe_variable(&pg->arena, pg->opt->offset_bits);
  } else {
    uint64_t sb = bri_enc_slot_bytes(v);
    if ((rc = bri_ebuf_reserve(d, (size_t)(items * sb), err))) goto out;
    for (uint64_t i = 0; i < items; i++) bri_ebuf_put(d, v->data + first[i] * sb, (size_t)sb, err);
    pg->dict_enc = bri_pbe_flat(&pg->arena, v->bits);
  }
  if (!pg->dict_enc) {
    rc = bri_error_set(err, BRI_ENOMEM, "page encoder: out of memory");
    goto out;
  }
  pg->dict_items = items;
  memset(&pg->indices, 0, sizeof pg->indices);
  pg->indices.kind = BRI_LEAF_FIXED;
  pg->indices.n = n;
  pg->indices.bits = kb;
  pg->indices.elems_per_slot = 1;
  pg->indices.data = idx;
  pg->indices.data_len = n * (kb / 8);
  pg->indices_data = idx;
  idx = NULL;
out:
  free(table);
  free(first);
  free(idx);
  return rc;
}
