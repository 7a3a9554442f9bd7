/* values.c: the page allocation budget and the bri_values slot containers
 * (see decode.h and page.h).
 *
 * Design choice: every byte a page decode allocates goes through bri_dec so
 * that one number (the page limit) bounds what hostile input can make us
 * allocate; containers grow geometrically but never past what the budget can
 * still pay for. FIXED data is zero-filled on growth, which is what makes
 * "null slots hold zeros" free for decoders that skip nulls. */
#include <stdlib.h>
#include <string.h>

#include "lance/encoding/decode.h"

/* ---- budget --------------------------------------------------------------- */

void bri_dec_init(bri_dec *d, uint64_t limit, uint16_t file_minor) {
  memset(d, 0, sizeof *d);
  d->budget = d->limit = limit;
  d->file_minor = file_minor;
}

void bri_dec_release_all(bri_dec *d) { bri_general_decoder_dispose(&d->gen); }

int bri_dec_charge(bri_dec *d, uint64_t bytes, const char *what, bri_error *err) {
  if (bytes > d->budget)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s needs %llu bytes, more than the %llu left of the %llu-byte "
                         "page decode limit",
                         what, (unsigned long long)bytes, (unsigned long long)d->budget,
                         (unsigned long long)d->limit);
  d->budget -= bytes;
  return 0;
}

void *bri_dec_alloc(bri_dec *d, uint64_t bytes, const char *what, bri_error *err) {
  if (bri_dec_charge(d, bytes, what, err)) return NULL;
  void *p = malloc(bytes ? (size_t)bytes : 1);
  if (!p) {
    d->budget += bytes;
    bri_error_set(err, BRI_ENOMEM, "%s: out of memory allocating %llu bytes", what,
                  (unsigned long long)bytes);
  }
  return p;
}

void *bri_dec_calloc(bri_dec *d, uint64_t bytes, const char *what, bri_error *err) {
  void *p = bri_dec_alloc(d, bytes, what, err);
  if (p) memset(p, 0, (size_t)bytes);
  return p;
}

void *bri_dec_realloc(bri_dec *d, void *p, uint64_t old_bytes, uint64_t new_bytes,
                      const char *what, bri_error *err) {
  if (new_bytes > old_bytes && bri_dec_charge(d, new_bytes - old_bytes, what, err)) return NULL;
  void *np = realloc(p, new_bytes ? (size_t)new_bytes : 1);
  if (!np) {
    if (new_bytes > old_bytes) d->budget += new_bytes - old_bytes;
    bri_error_set(err, BRI_ENOMEM, "%s: out of memory growing to %llu bytes", what,
                  (unsigned long long)new_bytes);
    return NULL;
  }
  if (new_bytes < old_bytes) d->budget += old_bytes - new_bytes;
  return np;
}

void bri_dec_free(bri_dec *d, void *p, uint64_t bytes) {
  if (!p) return;
  free(p);
  d->budget += bytes;
}

/* ---- bits ----------------------------------------------------------------- */

void bri_bits_copy(uint8_t *dst, uint64_t dst_bit, const uint8_t *src, uint64_t src_bit,
                   uint64_t n) {
  if (n == 0) return;
  if ((dst_bit & 7) == 0 && (src_bit & 7) == 0) {
    uint64_t bytes = n / 8;
    memcpy(dst + dst_bit / 8, src + src_bit / 8, (size_t)bytes);
    dst_bit += bytes * 8;
    src_bit += bytes * 8;
    n -= bytes * 8;
  }
  for (uint64_t i = 0; i < n; i++) {
    uint64_t s = src_bit + i, t = dst_bit + i;
    uint8_t m = (uint8_t)(1u << (t & 7));
    if ((src[s >> 3] >> (s & 7)) & 1)
      dst[t >> 3] |= m;
    else
      dst[t >> 3] &= (uint8_t)~m;
  }
}

void bri_bits_fill(uint8_t *dst, uint64_t dst_bit, uint64_t n, int value) {
  while (n && (dst_bit & 7)) {
    uint8_t m = (uint8_t)(1u << (dst_bit & 7));
    dst[dst_bit >> 3] = value ? (uint8_t)(dst[dst_bit >> 3] | m) : (uint8_t)(dst[dst_bit >> 3] & ~m);
    dst_bit++;
    n--;
  }
  memset(dst + dst_bit / 8, value ? 0xff : 0, (size_t)(n / 8));
  dst_bit += n / 8 * 8;
  for (uint64_t i = 0; i < n % 8; i++) {
    uint8_t m = (uint8_t)(1u << ((dst_bit + i) & 7));
    uint64_t b = (dst_bit + i) >> 3;
    dst[b] = value ? (uint8_t)(dst[b] | m) : (uint8_t)(dst[b] & ~m);
  }
}

/* ---- containers ----------------------------------------------------------- */

static const bri_leaf_type legacy_blob_children[2] = {
    {.kind = BRI_LEAF_FIXED, .bits = 64},
    {.kind = BRI_LEAF_FIXED, .bits = 64},
};

static const bri_leaf_type blob_v2_children[5] = {
    {.kind = BRI_LEAF_FIXED, .bits = 8},  {.kind = BRI_LEAF_FIXED, .bits = 64},
    {.kind = BRI_LEAF_FIXED, .bits = 64}, {.kind = BRI_LEAF_FIXED, .bits = 32},
    {.kind = BRI_LEAF_VARIABLE},
};
static const bri_leaf_type blob_v2_type = {
    .kind = BRI_LEAF_STRUCT, .n_children = 5, .children = blob_v2_children};

const bri_leaf_type *bri_leaf_type_blob_v2(void) { return &blob_v2_type; }

static int init_rec(bri_values *v, const bri_leaf_type *t, int depth, bri_error *err) {
  memset(v, 0, sizeof *v);
  if (!t) return bri_error_set(err, BRI_EINVAL, "leaf type is missing");
  switch (t->kind) {
  case BRI_LEAF_FIXED: {
    if (t->bits != 0 && t->bits != 1 && t->bits % 8)
      return bri_error_set(err, BRI_EINVAL,
                           "leaf type: %u bits per element; expected 0, 1 or a multiple of 8",
                           t->bits);
    if (t->bits > (1u << 24))
      return bri_error_set(err, BRI_EINVAL, "leaf type: %u bits per element is too wide", t->bits);
    if (t->n_dims > BRI_MAX_FSL_DEPTH)
      return bri_error_set(err, BRI_EINVAL, "leaf type: %u FSL dimensions; at most %d", t->n_dims,
                           BRI_MAX_FSL_DEPTH);
    v->kind = BRI_LEAF_FIXED;
    v->bits = t->bits;
    v->n_dims = t->n_dims;
    v->elems_per_slot = 1;
    for (uint32_t i = 0; i < t->n_dims; i++) {
      if (t->dims[i] == 0 || t->dims[i] > (1u << 24))
        return bri_error_set(err, BRI_EINVAL, "leaf type: FSL dimension %u is %u", i, t->dims[i]);
      v->dims[i] = t->dims[i];
      v->elems_per_slot *= t->dims[i];
      if (v->elems_per_slot > ((uint64_t)1 << 32))
        return bri_error_set(err, BRI_EINVAL, "leaf type: FSL dimensions multiply past 2^32");
    }
    return 0;
  }
  case BRI_LEAF_VARIABLE: v->kind = BRI_LEAF_VARIABLE; return 0;
  case BRI_LEAF_LEGACY_BLOB:
  case BRI_LEAF_STRUCT: {
    const bri_leaf_type *ch = t->children;
    size_t nc = t->n_children;
    if (t->kind == BRI_LEAF_LEGACY_BLOB) {
      ch = legacy_blob_children;
      nc = 2;
    }
    if (depth > 0)
      return bri_error_set(err, BRI_EINVAL, "leaf type: packed struct children must be "
                                            "fixed or variable, not nested structs");
    if (nc == 0 || nc > BRI_MAX_STRUCT_CHILDREN || !ch)
      return bri_error_set(err, BRI_EINVAL, "leaf type: packed struct with %zu children", nc);
    v->kind = BRI_LEAF_STRUCT;
    v->children = calloc(nc, sizeof *v->children);
    if (!v->children) return bri_error_set(err, BRI_ENOMEM, "out of memory");
    v->n_children = nc;
    for (size_t i = 0; i < nc; i++) {
      int rc = init_rec(&v->children[i], &ch[i], depth + 1, err);
      if (rc) return rc;
      if (v->children[i].kind == BRI_LEAF_FIXED && (v->children[i].bits % 8 || v->children[i].bits == 0))
        return bri_error_set(err, BRI_EINVAL,
                             "leaf type: packed struct child %zu has %u bits; expected a "
                             "positive multiple of 8",
                             i, v->children[i].bits);
    }
    return 0;
  }
  }
  return bri_error_set(err, BRI_EINVAL, "leaf type: unknown kind %d", (int)t->kind);
}

int bri_values_init(bri_values *v, const bri_leaf_type *t, bri_error *err) {
  int rc = init_rec(v, t, 0, err);
  if (rc) bri_values_dispose(v);
  return rc;
}

void bri_values_dispose(bri_values *v) {
  if (!v) return;
  free(v->data);
  free(v->offsets);
  for (int i = 0; i < BRI_MAX_FSL_DEPTH; i++) free(v->fsl_validity[i]);
  for (size_t i = 0; i < v->n_children; i++) bri_values_dispose(&v->children[i]);
  free(v->children);
  memset(v, 0, sizeof *v);
}

uint64_t bri_values_slot_bits(const bri_values *v) { return (uint64_t)v->bits * v->elems_per_slot; }

static uint64_t mul_sat(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return UINT64_MAX;
  return r;
}

uint64_t bri_values_fixed_bytes(const bri_values *v, uint64_t slots) {
  uint64_t bits = mul_sat(slots, bri_values_slot_bits(v));
  if (bits == UINT64_MAX) return UINT64_MAX;
  return bits / 8 + (bits % 8 != 0);
}

static uint64_t cum_dim(const bri_values *v, unsigned layer) {
  uint64_t c = 1;
  for (unsigned i = 0; i <= layer; i++) c *= v->dims[i];
  return c;
}

static uint64_t bitmap_bytes(uint64_t bits) { return bits / 8 + (bits % 8 != 0); }

/* New slot capacity: at least need, doubling when the budget allows. */
static uint64_t grow_to(const bri_dec *d, uint64_t cap, uint64_t need, uint64_t bytes_per) {
  uint64_t want = cap * 2 > need ? cap * 2 : need;
  if (want < 64) want = need > 64 ? need : 64;
  if (bytes_per && mul_sat(want - cap, bytes_per) > d->budget) want = need;
  return want;
}

static int reserve_fixed(bri_dec *d, bri_values *v, uint64_t need, bri_error *err) {
  if (need <= v->cap_slots && (v->data || bri_values_slot_bits(v) == 0)) return 0;
  uint64_t slot_bytes = bri_values_fixed_bytes(v, 1);
  uint64_t ncap = need <= v->cap_slots ? v->cap_slots : grow_to(d, v->cap_slots, need, slot_bytes);
  uint64_t old_b = v->data ? bri_values_fixed_bytes(v, v->cap_slots) : 0;
  uint64_t new_b = bri_values_fixed_bytes(v, ncap);
  if (new_b == UINT64_MAX)
    return bri_error_set(err, BRI_ECORRUPT, "%llu value slots overflow a 64-bit size",
                         (unsigned long long)ncap);
  uint8_t *nd = bri_dec_realloc(d, v->data, old_b, new_b, "value slots", err);
  if (!nd) return err ? err->code : BRI_ENOMEM;
  memset(nd + old_b, 0, (size_t)(new_b - old_b));
  v->data = nd;
  for (unsigned k = 0; k < v->n_dims; k++) {
    if (!v->fsl_validity[k]) continue;
    uint64_t ob = bitmap_bytes(v->cap_slots * cum_dim(v, k));
    uint64_t nb = bitmap_bytes(ncap * cum_dim(v, k));
    uint8_t *vb = bri_dec_realloc(d, v->fsl_validity[k], ob, nb, "FSL validity", err);
    if (!vb) return err ? err->code : BRI_ENOMEM;
    memset(vb + ob, 0xff, (size_t)(nb - ob));
    v->fsl_validity[k] = vb;
  }
  v->cap_slots = ncap;
  return 0;
}

int bri_values_fsl_validity(bri_dec *d, bri_values *v, unsigned layer, bri_error *err) {
  if (v->fsl_validity[layer]) return 0;
  uint64_t nb = bitmap_bytes(mul_sat(v->cap_slots, cum_dim(v, layer)));
  uint8_t *vb = bri_dec_alloc(d, nb, "FSL validity", err);
  if (!vb) return err ? err->code : BRI_ENOMEM;
  memset(vb, 0xff, (size_t)nb);
  v->fsl_validity[layer] = vb;
  return 0;
}

static int reserve_var(bri_dec *d, bri_values *v, uint64_t need_slots, uint64_t need_bytes,
                       bri_error *err) {
  if (need_slots > v->cap_slots || !v->offsets) {
    uint64_t ncap = need_slots <= v->cap_slots ? v->cap_slots
                                               : grow_to(d, v->cap_slots, need_slots, 8);
    uint64_t ob = v->offsets ? (v->cap_slots + 1) * 8 : 0;
    if (ncap > (UINT64_MAX / 8) - 1)
      return bri_error_set(err, BRI_ECORRUPT, "%llu value slots overflow a 64-bit size",
                           (unsigned long long)ncap);
    int64_t *no = bri_dec_realloc(d, v->offsets, ob, (ncap + 1) * 8, "value offsets", err);
    if (!no) return err ? err->code : BRI_ENOMEM;
    if (!v->offsets) no[0] = 0;
    v->offsets = no;
    v->cap_slots = ncap;
  }
  if (need_bytes > v->cap_data || !v->data) {
    uint64_t ncap = need_bytes <= v->cap_data ? v->cap_data : grow_to(d, v->cap_data, need_bytes, 1);
    uint8_t *nd = bri_dec_realloc(d, v->data, v->data ? v->cap_data : 0, ncap, "value bytes", err);
    if (!nd) return err ? err->code : BRI_ENOMEM;
    v->data = nd;
    v->cap_data = ncap;
  }
  return 0;
}

int bri_values_reserve(bri_dec *d, bri_values *v, uint64_t more, uint64_t more_bytes,
                       bri_error *err) {
  uint64_t need;
  if (__builtin_add_overflow(v->n, more, &need))
    return bri_error_set(err, BRI_ECORRUPT, "value slot count overflows");
  switch (v->kind) {
  case BRI_LEAF_FIXED: return reserve_fixed(d, v, need, err);
  case BRI_LEAF_VARIABLE: {
    uint64_t nb;
    if (__builtin_add_overflow(v->data_len, more_bytes, &nb))
      return bri_error_set(err, BRI_ECORRUPT, "value byte count overflows");
    return reserve_var(d, v, need, nb, err);
  }
  case BRI_LEAF_STRUCT:
    for (size_t i = 0; i < v->n_children; i++) {
      int rc = bri_values_reserve(d, &v->children[i], need - v->children[i].n, 0, err);
      if (rc) return rc;
    }
    return 0;
  default: return bri_error_set(err, BRI_EINVAL, "value container of unknown kind");
  }
}

int bri_values_append_var(bri_dec *d, bri_values *v, const uint8_t *p, uint64_t len,
                          bri_error *err) {
  int rc = bri_values_reserve(d, v, 1, len, err);
  if (rc) return rc;
  if (len) memcpy(v->data + v->data_len, p, (size_t)len);
  v->data_len += len;
  v->offsets[v->n + 1] = (int64_t)v->data_len;
  v->n++;
  return 0;
}

int bri_values_append_nulls(bri_dec *d, bri_values *v, uint64_t more, bri_error *err) {
  int rc = bri_values_reserve(d, v, more, 0, err);
  if (rc) return rc;
  switch (v->kind) {
  case BRI_LEAF_FIXED:
    if (v->bits == 1)
      bri_bits_fill(v->data, v->n * v->elems_per_slot, more * v->elems_per_slot, 0);
    else if (v->bits)
      memset(v->data + bri_values_fixed_bytes(v, v->n), 0, (size_t)bri_values_fixed_bytes(v, more));
    v->data_len = bri_values_fixed_bytes(v, v->n + more);
    break;
  case BRI_LEAF_VARIABLE:
    for (uint64_t i = 0; i < more; i++) v->offsets[v->n + 1 + i] = (int64_t)v->data_len;
    break;
  case BRI_LEAF_STRUCT:
    for (size_t i = 0; i < v->n_children; i++) {
      rc = bri_values_append_nulls(d, &v->children[i], more, err);
      if (rc) return rc;
    }
    break;
  default: break;
  }
  v->n += more;
  return 0;
}

int bri_values_append_from(bri_dec *d, bri_values *dst, const bri_values *src, uint64_t slot,
                           bri_error *err) {
  switch (dst->kind) {
  case BRI_LEAF_FIXED: {
    int rc = bri_values_reserve(d, dst, 1, 0, err);
    if (rc) return rc;
    uint64_t sb = bri_values_slot_bits(dst);
    if (sb % 8 == 0)
      memcpy(dst->data + dst->n * (sb / 8), src->data + slot * (sb / 8), (size_t)(sb / 8));
    else
      bri_bits_copy(dst->data, dst->n * sb, src->data, slot * sb, sb);
    for (unsigned k = 0; k < dst->n_dims; k++) {
      if (!src->fsl_validity[k]) continue;
      if ((rc = bri_values_fsl_validity(d, dst, k, err))) return rc;
      uint64_t c = cum_dim(dst, k);
      bri_bits_copy(dst->fsl_validity[k], dst->n * c, src->fsl_validity[k], slot * c, c);
    }
    dst->n++;
    dst->data_len = bri_values_fixed_bytes(dst, dst->n);
    return 0;
  }
  case BRI_LEAF_VARIABLE: {
    int64_t a = src->offsets[slot], b = src->offsets[slot + 1];
    return bri_values_append_var(d, dst, src->data + a, (uint64_t)(b - a), err);
  }
  case BRI_LEAF_STRUCT:
    for (size_t i = 0; i < dst->n_children; i++) {
      int rc = bri_values_append_from(d, &dst->children[i], &src->children[i], slot, err);
      if (rc) return rc;
    }
    dst->n++;
    return 0;
  default: return bri_error_set(err, BRI_EINVAL, "value container of unknown kind");
  }
}

void bri_values_zero_slot(bri_values *v, uint64_t i) {
  if (v->kind == BRI_LEAF_FIXED) {
    uint64_t sb = bri_values_slot_bits(v);
    if (sb % 8 == 0)
      memset(v->data + i * (sb / 8), 0, (size_t)(sb / 8));
    else
      bri_bits_fill(v->data, i * sb, sb, 0);
  } else if (v->kind == BRI_LEAF_STRUCT) {
    for (size_t c = 0; c < v->n_children; c++) bri_values_zero_slot(&v->children[c], i);
  }
}

int bri_values_clear_slots(bri_dec *d, bri_values *v, const uint8_t *is_null, bri_error *err) {
  if (v->kind == BRI_LEAF_STRUCT) {
    for (size_t c = 0; c < v->n_children; c++) {
      int rc = bri_values_clear_slots(d, &v->children[c], is_null, err);
      if (rc) return rc;
    }
    return 0;
  }
  if (v->kind == BRI_LEAF_FIXED) {
    for (uint64_t i = 0; i < v->n; i++)
      if (is_null[i]) bri_values_zero_slot(v, i);
    return 0;
  }
  int dirty = 0;
  for (uint64_t i = 0; i < v->n && !dirty; i++)
    dirty = is_null[i] && v->offsets[i + 1] != v->offsets[i];
  if (!dirty) return 0;
  int64_t w = 0, a = v->offsets[0];
  for (uint64_t i = 0; i < v->n; i++) {
    int64_t b = v->offsets[i + 1];
    if (!is_null[i]) {
      if (w != a) memmove(v->data + w, v->data + a, (size_t)(b - a));
      w += b - a;
    }
    v->offsets[i + 1] = w;
    a = b;
  }
  v->offsets[0] = 0;
  v->data_len = (uint64_t)w;
  (void)d;
  return 0;
}

uint64_t bri_values_get_uint(const bri_values *v, uint64_t slot, uint64_t elem) {
  if (v->kind != BRI_LEAF_FIXED || v->bits > 64) return 0;
  uint64_t e = slot * v->elems_per_slot + elem;
  if (v->bits == 1) return (uint64_t)bri_bit_get(v->data, e);
  uint64_t r = 0;
  memcpy(&r, v->data + e * (v->bits / 8), v->bits / 8);
  return r;
}
