/* writer_shred.c: rows in, levels and value slots out (the write half of
 * docs/format/file.md section 2).
 *
 * Owns the column buffers of the writer (writer_internal.h): growing level
 * streams and value slots, and the two ways rows reach them. From Arrow
 * (bri_shred_batch), every column walks its own path of struct and list
 * steps down from its top-level array: a null struct or list, or an empty
 * list, becomes one level naming that layer (visible, with a zeroed slot,
 * only when no list lies below it); a list continues its child's range with
 * rep = its depth - 1; the leaf adds one level per element and copies value
 * slots in bulk (nulls zeroed, so equal values give equal bytes). From a
 * decoded page (bri_shred_leaf_page), Lance def numbers are mapped back to
 * layer codes through the page's own layers and the slots are copied.
 *
 * Design choice: a batch is shredded in row slices whose size adapts to the
 * bytes each column has buffered, and a column cuts a page as soon as it
 * reaches the page target, so one huge batch never needs more than about one
 * page of buffer per column. Arrow arrays are checked (buffer and child
 * counts, offsets inside their child) before they are read. */
#include <stdlib.h>
#include <string.h>

#include "lance/file/writer_internal.h"

/* ---- growth --------------------------------------------------------------- */

static int grow(void **p, uint64_t *cap, uint64_t need, size_t elem, bri_error *err) {
  if (need <= *cap) return 0;
  uint64_t nc = *cap ? *cap : 64;
  while (nc < need) nc *= 2;
  if (nc > SIZE_MAX / elem)
    return bri_error_set(err, BRI_ENOMEM, "file writer: buffer of %llu elements is too large",
                         (unsigned long long)nc);
  void *q = realloc(*p, (size_t)(nc * elem));
  if (!q) return bri_error_set(err, BRI_ENOMEM, "file writer: out of memory (%llu bytes)",
                               (unsigned long long)(nc * elem));
  *p = q;
  *cap = nc;
  return 0;
}

static void copy_bits(uint8_t *dst, uint64_t db, const uint8_t *src, uint64_t sb, uint64_t n) {
  if (n == 0) return;
  if (db % 8 == 0 && sb % 8 == 0) {
    memcpy(dst + db / 8, src + sb / 8, (size_t)(n / 8));
    for (uint64_t i = n / 8 * 8; i < n; i++) {
      uint64_t d = db + i, s = sb + i;
      if ((src[s >> 3] >> (s & 7)) & 1) dst[d >> 3] |= (uint8_t)(1u << (d & 7));
      else dst[d >> 3] &= (uint8_t)~(1u << (d & 7));
    }
    return;
  }
  for (uint64_t i = 0; i < n; i++) {
    uint64_t d = db + i, s = sb + i;
    if ((src[s >> 3] >> (s & 7)) & 1) dst[d >> 3] |= (uint8_t)(1u << (d & 7));
    else dst[d >> 3] &= (uint8_t)~(1u << (d & 7));
  }
}

static void set_bits(uint8_t *dst, uint64_t db, uint64_t n, int v) {
  for (uint64_t i = 0; i < n; i++) {
    uint64_t d = db + i;
    if (v) dst[d >> 3] |= (uint8_t)(1u << (d & 7));
    else dst[d >> 3] &= (uint8_t)~(1u << (d & 7));
  }
}

static inline bool bit_at(const uint8_t *p, uint64_t i) { return (p[i >> 3] >> (i & 7)) & 1; }

/* ---- value slots ------------------------------------------------------------ */

int bri_wvals_init(wvals *v, const bri_leaf_type *t, bri_error *err) {
  memset(v, 0, sizeof *v);
  v->kind = t->kind;
  switch (t->kind) {
  case BRI_LEAF_FIXED:
    v->bits = t->bits;
    v->n_dims = t->n_dims;
    v->elems = 1;
    for (uint32_t k = 0; k < t->n_dims; k++) {
      if (!t->dims[k] || v->elems > UINT32_MAX / t->dims[k])
        return bri_error_set(err, BRI_EINVAL, "file writer: fixed-size list dimension %u",
                             t->dims[k]);
      v->dims[k] = t->dims[k];
      v->elems *= t->dims[k];
      v->cum[k] = v->elems;
    }
    return 0;
  case BRI_LEAF_VARIABLE: {
    int rc = grow((void **)&v->offsets, &v->off_cap, 1, 8, err);
    if (!rc) v->offsets[0] = 0;
    return rc;
  }
  case BRI_LEAF_STRUCT:
    v->children = calloc(t->n_children, sizeof *v->children);
    if (!v->children) return bri_error_set(err, BRI_ENOMEM, "file writer: out of memory");
    v->n_children = t->n_children;
    for (size_t i = 0; i < t->n_children; i++) {
      int rc = bri_wvals_init(&v->children[i], &t->children[i], err);
      if (rc) return rc;
    }
    return 0;
  default:
    return bri_error_set(err, BRI_EINVAL, "file writer: leaf kind %d", (int)t->kind);
  }
}

void bri_wvals_dispose(wvals *v) {
  free(v->data);
  free(v->offsets);
  for (int k = 0; k < BRI_MAX_FSL_DEPTH; k++) free(v->fslv[k]);
  for (size_t i = 0; i < v->n_children; i++) bri_wvals_dispose(&v->children[i]);
  free(v->children);
  memset(v, 0, sizeof *v);
}

void bri_wvals_reset(wvals *v) {
  v->n = 0;
  v->data_len = 0;
  for (int k = 0; k < BRI_MAX_FSL_DEPTH; k++) {
    free(v->fslv[k]);
    v->fslv[k] = NULL;
    v->fslv_cap[k] = 0;
  }
  for (size_t i = 0; i < v->n_children; i++) bri_wvals_reset(&v->children[i]);
}

static uint64_t slot_bits(const wvals *v) { return v->bits * v->elems; }

/* Room for `more` FIXED slots (data zero-extended) or VARIABLE offsets. */
static int vals_reserve(wvals *v, uint64_t more, bri_error *err) {
  int rc;
  if (v->kind == BRI_LEAF_FIXED) {
    uint64_t need = ((v->n + more) * slot_bits(v) + 7) / 8;
    uint64_t old = v->data_cap;
    if ((rc = grow((void **)&v->data, &v->data_cap, need, 1, err))) return rc;
    if (v->data_cap > old) memset(v->data + old, 0, (size_t)(v->data_cap - old));
    for (uint32_t k = 0; k < v->n_dims; k++) {
      if (!v->fslv[k]) continue;
      uint64_t nb = ((v->n + more) * v->cum[k] + 7) / 8;
      uint64_t o = v->fslv_cap[k];
      if ((rc = grow((void **)&v->fslv[k], &v->fslv_cap[k], nb, 1, err))) return rc;
      if (v->fslv_cap[k] > o) memset(v->fslv[k] + o, 0xFF, (size_t)(v->fslv_cap[k] - o));
    }
    return 0;
  }
  if (v->kind == BRI_LEAF_VARIABLE) return grow((void **)&v->offsets, &v->off_cap, v->n + more + 1, 8, err);
  for (size_t i = 0; i < v->n_children; i++)
    if ((rc = vals_reserve(&v->children[i], more, err))) return rc;
  return 0;
}

/* FSL layer k's validity bitmap exists (all valid so far). */
static int fslv_make(wvals *v, uint32_t k, uint64_t more, bri_error *err) {
  if (v->fslv[k]) return 0;
  uint64_t nb = ((v->n + more) * v->cum[k] + 7) / 8;
  uint64_t cap = 0;
  int rc = grow((void **)&v->fslv[k], &cap, nb ? nb : 1, 1, err);
  if (rc) return rc;
  memset(v->fslv[k], 0xFF, (size_t)cap);
  v->fslv_cap[k] = cap;
  return 0;
}

/* Appends `more` null slots: zero bytes / empty values. */
static int vals_nulls(wvals *v, uint64_t more, bri_error *err) {
  int rc = vals_reserve(v, more, err);
  if (rc) return rc;
  if (v->kind == BRI_LEAF_FIXED) {
    uint64_t sb = slot_bits(v);
    if (sb % 8 == 0) memset(v->data + v->n * sb / 8, 0, (size_t)(more * sb / 8));
    else set_bits(v->data, v->n * sb, more * sb, 0);
    v->n += more;
    v->data_len = (v->n * sb + 7) / 8;
  } else if (v->kind == BRI_LEAF_VARIABLE) {
    for (uint64_t i = 0; i < more; i++) v->offsets[v->n + 1 + i] = (int64_t)v->data_len;
    v->n += more;
  } else {
    for (size_t i = 0; i < v->n_children; i++)
      if ((rc = vals_nulls(&v->children[i], more, err))) return rc;
    v->n += more;
  }
  return 0;
}

static int var_append(wvals *v, const uint8_t *p, uint64_t len, bri_error *err) {
  int rc = vals_reserve(v, 1, err);
  if (!rc) rc = grow((void **)&v->data, &v->data_cap, v->data_len + len, 1, err);
  if (rc) return rc;
  if (len) memcpy(v->data + v->data_len, p, (size_t)len);
  v->data_len += len;
  v->offsets[++v->n] = (int64_t)v->data_len;
  return 0;
}

/* ---- levels ------------------------------------------------------------------- */

int bri_wcol_levels(wcol *c, uint64_t n, bri_error *err) {
  uint64_t need = c->levels + n;
  if (need <= c->level_cap) return 0;
  uint64_t nc = c->level_cap ? c->level_cap : 1024;
  while (nc < need) nc *= 2;
  if (c->max_rep) {
    uint16_t *r = realloc(c->rep, (size_t)nc * 2);
    if (!r) return bri_error_set(err, BRI_ENOMEM, "file writer: out of memory (levels)");
    c->rep = r;
  }
  if (c->raw) {
    uint16_t *r = realloc(c->raw, (size_t)nc * 2);
    if (!r) return bri_error_set(err, BRI_ENOMEM, "file writer: out of memory (levels)");
    c->raw = r;
  }
  c->level_cap = nc;
  return 0;
}

static int raw_make(wcol *c, bri_error *err) {
  if (c->raw) return 0;
  c->raw = calloc(c->level_cap ? c->level_cap : 1, 2);
  return c->raw ? 0 : bri_error_set(err, BRI_ENOMEM, "file writer: out of memory (levels)");
}

/* One level (room reserved by the caller). */
static int put_level(wcol *c, uint16_t rep, uint16_t code, bri_error *err) {
  if (c->max_rep) c->rep[c->levels] = rep;
  if (code) {
    int rc = raw_make(c, err);
    if (rc) return rc;
    c->seen[code] = 1;
  }
  if (c->raw) c->raw[c->levels] = code;
  c->levels++;
  return 0;
}

/* ---- shredding Arrow --------------------------------------------------------- */

typedef struct shred {
  bri_file_writer *w;
  wcol *c;
  size_t col;
  bri_blob_payload_fn fn;
  void *ctx;
} shred;

static inline bool arr_has_nulls(const struct ArrowArray *a) {
  return a->null_count != 0 && a->n_buffers > 0 && a->buffers[0];
}

static int bad_array(const shred *s, const char *what, bri_error *err) {
  return bri_error_set(err, BRI_EINVAL, "file writer: column %zu (%s): %s", s->col, s->c->path,
                       what);
}

static int list_bounds(const struct ArrowArray *a, uint8_t ob, uint64_t i, uint64_t *lo,
                       uint64_t *hi) {
  uint64_t k = (uint64_t)a->offset + i;
  if (ob == 64) {
    const int64_t *o = a->buffers[1];
    if (o[k] < 0 || o[k + 1] < o[k]) return -1;
    *lo = (uint64_t)o[k];
    *hi = (uint64_t)o[k + 1];
  } else {
    const int32_t *o = a->buffers[1];
    if (o[k] < 0 || o[k + 1] < o[k]) return -1;
    *lo = (uint64_t)o[k];
    *hi = (uint64_t)o[k + 1];
  }
  return 0;
}

/* Checks the array shapes along the column's path once per batch. */
static int check_path(const shred *s, const struct ArrowArray *a, bri_error *err) {
  const wcol *c = s->c;
  for (size_t d = 0; d < c->n_steps; d++) {
    if (!a || a->length < 0 || a->offset < 0) return bad_array(s, "missing or negative-length array", err);
    if (c->steps[d].kind == WSTEP_STRUCT) {
      if (a->n_children <= (int64_t)c->steps[d].child || !a->children)
        return bad_array(s, "struct array has too few children", err);
      a = a->children[c->steps[d].child];
    } else {
      if (a->n_buffers < 2 || !a->buffers || (a->length > 0 && !a->buffers[1]) ||
          a->n_children != 1 || !a->children)
        return bad_array(s, "list array needs 2 buffers and 1 child", err);
      a = a->children[0];
    }
  }
  if (!a || a->length < 0 || a->offset < 0) return bad_array(s, "missing leaf array", err);
  if (a->dictionary)
    return bad_array(s, "a dictionary-encoded Arrow array (decode it to its value type first)",
                     err);
  const wvals *v = &c->vals;
  if (c->blob_v2) {
    if (a->n_children != 5 || !a->children)
      return bad_array(s, "Blob v2 descriptor struct needs 5 children", err);
    for (int i = 0; i < 5; i++) {
      const struct ArrowArray *ch = a->children[i];
      int need = i == 4 ? 3 : 2;
      if (!ch || ch->n_buffers < need || !ch->buffers || ch->length < a->offset + a->length ||
          (ch->length > 0 && !ch->buffers[1]))
        return bad_array(s, "Blob v2 descriptor child is malformed", err);
    }
    return 0;
  }
  if (v->kind == BRI_LEAF_VARIABLE) {
    if (a->n_buffers < 3 || !a->buffers || (a->length > 0 && !a->buffers[1]))
      return bad_array(s, "variable-width array needs 3 buffers", err);
    return 0;
  }
  if (v->bits == 0) return 0; /* Arrow null type */
  for (uint32_t k = 0; k < v->n_dims; k++) {
    if (a->n_children != 1 || !a->children || !a->children[0])
      return bad_array(s, "fixed-size list array needs 1 child", err);
    if (a->children[0]->length < (a->offset + a->length) * (int64_t)v->dims[k])
      return bad_array(s, "fixed-size list child is shorter than the list", err);
    a = a->children[0];
  }
  if (a->n_buffers < 2 || !a->buffers || (a->length > 0 && !a->buffers[1]))
    return bad_array(s, "fixed-width array needs 2 buffers", err);
  return 0;
}

/* A null (code 2L+1) or empty (2L+2) at layer L; visible nulls get a slot. */
static int emit_special(shred *s, unsigned layer, bool empty, uint16_t rep, bri_error *err) {
  wcol *c = s->c;
  int rc = bri_wcol_levels(c, 1, err);
  if (!rc) rc = put_level(c, rep, (uint16_t)(2 * layer + (empty ? 2 : 1)), err);
  if (!rc && !empty && layer < c->first_list) rc = vals_nulls(&c->vals, 1, err);
  return rc;
}

/* Inline payload of one descriptor: written now, position returned. */
static int blob_payload(shred *s, uint64_t index, uint64_t pos_in, uint64_t size, uint64_t *pos_out,
                        bri_error *err) {
  bri_file_writer *w = s->w;
  if (size == 0) {
    *pos_out = w->pos;
    return 0;
  }
  if (!s->fn)
    return bri_error_set(err, BRI_EINVAL,
                         "file writer: column %zu (%s): Inline blob %llu (%llu bytes) but no "
                         "payload callback",
                         s->col, s->c->path, (unsigned long long)index, (unsigned long long)size);
  if (size > BRI_WRITER_MAX_INLINE)
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "file writer: column %zu (%s): Inline blob %llu has %llu bytes, more "
                         "than the %llu the writer stages",
                         s->col, s->c->path, (unsigned long long)index, (unsigned long long)size,
                         (unsigned long long)BRI_WRITER_MAX_INLINE);
  if (w->scratch_cap < size) {
    uint8_t *p = realloc(w->scratch, (size_t)size);
    if (!p) return bri_error_set(err, BRI_ENOMEM, "file writer: out of memory (blob payload)");
    w->scratch = p;
    w->scratch_cap = (size_t)size;
  }
  int rc = s->fn(s->ctx, s->col, index, pos_in, size, w->scratch, err);
  if (rc) return rc;
  return bri_writer_put_buffer(w, w->scratch, size, pos_out, err);
}

/* One descriptor slot (valid or null) appended from its fields. */
static int blob_slot(shred *s, bool valid, uint8_t kind, uint64_t pos, uint64_t size,
                     uint32_t id, const uint8_t *uri, uint64_t uri_len, uint64_t index,
                     bri_error *err) {
  wvals *v = &s->c->vals;
  int rc;
  if (!valid) return vals_nulls(v, 1, err);
  if (kind == 0 && (rc = blob_payload(s, index, pos, size, &pos, err))) return rc;
  if ((rc = vals_reserve(v, 1, err))) return rc;
  v->children[0].data[v->children[0].n] = kind;
  memcpy(v->children[1].data + v->children[1].n * 8, &pos, 8);
  memcpy(v->children[2].data + v->children[2].n * 8, &size, 8);
  memcpy(v->children[3].data + v->children[3].n * 4, &id, 4);
  for (int i = 0; i < 4; i++) {
    v->children[i].n++;
    v->children[i].data_len = v->children[i].n * v->children[i].bits / 8;
  }
  if ((rc = var_append(&v->children[4], uri, uri_len, err))) return rc;
  v->n++;
  return 0;
}

static int leaf_blob(shred *s, const struct ArrowArray *a, uint64_t i0, uint64_t i1,
                     bri_error *err) {
  const struct ArrowArray *const *ch = (const struct ArrowArray *const *)a->children;
  for (uint64_t i = i0; i < i1; i++) {
    uint64_t k = (uint64_t)a->offset + i;
    bool valid = bri_arrow_valid(a, (int64_t)i);
    uint8_t kind = 0;
    uint64_t pos = 0, size = 0;
    uint32_t id = 0;
    const uint8_t *uri = NULL;
    uint64_t ulen = 0;
    if (valid) {
      kind = ((const uint8_t *)ch[0]->buffers[1])[ch[0]->offset + k];
      pos = ((const uint64_t *)ch[1]->buffers[1])[ch[1]->offset + k];
      size = ((const uint64_t *)ch[2]->buffers[1])[ch[2]->offset + k];
      id = ((const uint32_t *)ch[3]->buffers[1])[ch[3]->offset + k];
      const int32_t *uo = ch[4]->buffers[1];
      int64_t j = ch[4]->offset + (int64_t)k;
      if (uo[j] < 0 || uo[j + 1] < uo[j]) return bad_array(s, "blob_uri offsets decrease", err);
      ulen = (uint64_t)(uo[j + 1] - uo[j]);
      if (ulen) {
        if (!ch[4]->buffers[2]) return bad_array(s, "blob_uri has no data buffer", err);
        uri = (const uint8_t *)ch[4]->buffers[2] + uo[j];
      }
      if (kind > 5) /* 0-3 Lance 12's kinds, 4 and 5 Lance 14's Managed ones */
        return bri_error_set(err, BRI_EINVAL,
                             "file writer: column %zu (%s): descriptor %llu has kind %u (0..5 "
                             "expected)",
                             s->col, s->c->path, (unsigned long long)i, kind);
    }
    int rc = blob_slot(s, valid, kind, pos, size, id, uri, ulen, i, err);
    if (rc) return rc;
  }
  return 0;
}

/* Copies slots [i0, i1) of a fixed-width (FSL) leaf array. */
static int leaf_fixed(shred *s, const struct ArrowArray *a, uint64_t i0, uint64_t i1,
                      bri_error *err) {
  wvals *v = &s->c->vals;
  uint64_t n = i1 - i0;
  int rc = vals_reserve(v, n, err);
  if (rc) return rc;
  if (v->bits == 0) { /* Arrow null type: no data */
    v->n += n;
    return 0;
  }
  /* walk down the FSL arrays: logical range at each nesting */
  const struct ArrowArray *cur = a;
  uint64_t lo = (uint64_t)a->offset + i0; /* physical index range in cur */
  uint64_t cnt = n;
  for (uint32_t k = 0; k < v->n_dims; k++) {
    const struct ArrowArray *child = cur->children[0];
    uint64_t clo = lo * v->dims[k], ccnt = cnt * v->dims[k];
    uint64_t phys = (uint64_t)child->offset + clo;
    if (arr_has_nulls(child)) {
      if ((rc = fslv_make(v, k, n, err))) return rc;
      copy_bits(v->fslv[k], v->n * v->cum[k], child->buffers[0], phys, ccnt);
    } else if (v->fslv[k]) {
      set_bits(v->fslv[k], v->n * v->cum[k], ccnt, 1);
    }
    cur = child;
    lo = phys;
    cnt = ccnt;
  }
  uint64_t sb = slot_bits(v); /* bits per slot */
  const uint8_t *src = cur->buffers[1];
  if (v->bits % 8 == 0) {
    uint64_t eb = v->bits / 8;
    memcpy(v->data + v->n * (sb / 8), src + lo * eb, (size_t)(cnt * eb));
    /* zero null items of the innermost values (FSL) for canonical bytes */
    if (v->n_dims && arr_has_nulls(cur))
      for (uint64_t j = 0; j < cnt; j++)
        if (!bit_at(cur->buffers[0], lo + j)) memset(v->data + v->n * (sb / 8) + j * eb, 0, (size_t)eb);
  } else {
    copy_bits(v->data, v->n * sb, src, lo * v->bits, cnt * v->bits);
  }
  /* zero the slots of null rows */
  if (arr_has_nulls(a))
    for (uint64_t j = 0; j < n; j++)
      if (!bri_arrow_valid(a, (int64_t)(i0 + j))) {
        if (sb % 8 == 0) memset(v->data + (v->n + j) * (sb / 8), 0, (size_t)(sb / 8));
        else set_bits(v->data, (v->n + j) * sb, sb, 0);
      }
  v->n += n;
  v->data_len = (v->n * sb + 7) / 8;
  return 0;
}

static int leaf_variable(shred *s, const struct ArrowArray *a, uint64_t i0, uint64_t i1,
                         bri_error *err) {
  wvals *v = &s->c->vals;
  uint64_t n = i1 - i0, k0 = (uint64_t)a->offset + i0;
  int rc = vals_reserve(v, n, err);
  if (rc) return rc;
  const uint8_t *data = a->buffers[2];
  int64_t lo, hi;
  bool wide = s->c->offset_bits == 64;
#define OFF(k) (wide ? ((const int64_t *)a->buffers[1])[k] : (int64_t)((const int32_t *)a->buffers[1])[k])
  lo = OFF(k0);
  hi = OFF(k0 + n);
  if (lo < 0 || hi < lo) return bad_array(s, "string/binary offsets decrease", err);
  if (!arr_has_nulls(a)) {
    if ((rc = grow((void **)&v->data, &v->data_cap, v->data_len + (uint64_t)(hi - lo), 1, err)))
      return rc;
    if (hi > lo) {
      if (!data) return bad_array(s, "string/binary array has no data buffer", err);
      memcpy(v->data + v->data_len, data + lo, (size_t)(hi - lo));
    }
    int64_t prev = lo;
    for (uint64_t j = 0; j < n; j++) {
      int64_t o = OFF(k0 + j + 1);
      if (o < prev) return bad_array(s, "string/binary offsets decrease", err);
      prev = o;
      v->offsets[v->n + 1 + j] = (int64_t)v->data_len + (o - lo);
    }
    v->data_len += (uint64_t)(hi - lo);
    v->n += n;
    return 0;
  }
  for (uint64_t j = 0; j < n; j++) {
    int64_t a0 = OFF(k0 + j), a1 = OFF(k0 + j + 1);
    if (a0 < 0 || a1 < a0) return bad_array(s, "string/binary offsets decrease", err);
    if (!bri_arrow_valid(a, (int64_t)(i0 + j))) a1 = a0;
    if (a1 > a0 && !data) return bad_array(s, "string/binary array has no data buffer", err);
    if ((rc = var_append(v, a1 > a0 ? data + a0 : NULL, (uint64_t)(a1 - a0), err))) return rc;
  }
#undef OFF
  return 0;
}

/* Leaf levels for elements [i0, i1): code 1 for nulls. */
static int leaf_levels(shred *s, const struct ArrowArray *a, uint64_t i0, uint64_t i1,
                       uint16_t rep_first, uint16_t rep_rest, bool null_type, bri_error *err) {
  wcol *c = s->c;
  uint64_t n = i1 - i0;
  int rc = bri_wcol_levels(c, n, err);
  if (rc) return rc;
  if (c->max_rep && n) {
    c->rep[c->levels] = rep_first;
    for (uint64_t j = 1; j < n; j++) c->rep[c->levels + j] = rep_rest;
  }
  if (null_type || arr_has_nulls(a)) {
    if ((rc = raw_make(c, err))) return rc;
    bool any = false;
    for (uint64_t j = 0; j < n; j++) {
      bool valid = !null_type && bri_arrow_valid(a, (int64_t)(i0 + j));
      c->raw[c->levels + j] = valid ? 0 : 1;
      any |= !valid;
    }
    if (any) c->seen[1] = 1;
  } else if (c->raw) {
    memset(c->raw + c->levels, 0, (size_t)n * 2);
  }
  c->levels += n;
  return 0;
}

static int visit(shred *s, size_t d, const struct ArrowArray *a, uint64_t i0, uint64_t i1,
                 uint16_t rep_first, uint16_t rep_rest, bri_error *err) {
  wcol *c = s->c;
  int rc;
  if (i1 > (uint64_t)a->length) return bad_array(s, "index beyond the array length", err);
  if (d == c->n_steps) {
    if (c->blob_v2) {
      if ((rc = leaf_levels(s, a, i0, i1, rep_first, rep_rest, false, err))) return rc;
      return leaf_blob(s, a, i0, i1, err);
    }
    bool null_type = c->vals.kind == BRI_LEAF_FIXED && c->vals.bits == 0;
    if ((rc = leaf_levels(s, a, i0, i1, rep_first, rep_rest, null_type, err))) return rc;
    if (c->vals.kind == BRI_LEAF_VARIABLE) return leaf_variable(s, a, i0, i1, err);
    return leaf_fixed(s, a, i0, i1, err);
  }
  const wstep *st = &c->steps[d];
  if (st->kind == WSTEP_STRUCT) {
    const struct ArrowArray *ch = a->children[st->child];
    uint64_t base = (uint64_t)a->offset;
    if (ch->length < (int64_t)(base + i1)) return bad_array(s, "struct child is shorter than the struct", err);
    if (!arr_has_nulls(a)) return visit(s, d + 1, ch, base + i0, base + i1, rep_first, rep_rest, err);
    uint64_t i = i0;
    while (i < i1) {
      uint16_t r = i == i0 ? rep_first : rep_rest;
      if (!bri_arrow_valid(a, (int64_t)i)) {
        if ((rc = emit_special(s, st->layer, false, r, err))) return rc;
        i++;
        continue;
      }
      uint64_t j = i + 1;
      while (j < i1 && bri_arrow_valid(a, (int64_t)j)) j++;
      if ((rc = visit(s, d + 1, ch, base + i, base + j, r, rep_rest, err))) return rc;
      i = j;
    }
    return 0;
  }
  /* list */
  const struct ArrowArray *ch = a->children[0];
  bool nulls = arr_has_nulls(a);
  for (uint64_t i = i0; i < i1; i++) {
    uint16_t r = i == i0 ? rep_first : rep_rest;
    if (nulls && !bri_arrow_valid(a, (int64_t)i)) {
      if ((rc = emit_special(s, st->layer, false, r, err))) return rc;
      continue;
    }
    uint64_t lo, hi;
    if (list_bounds(a, st->offset_bits, i, &lo, &hi) || hi > (uint64_t)ch->length)
      return bad_array(s, "list offsets decrease or run past the child", err);
    if (lo == hi) {
      if ((rc = emit_special(s, st->layer, true, r, err))) return rc;
      continue;
    }
    if ((rc = visit(s, d + 1, ch, lo, hi, r, (uint16_t)(st->depth - 1), err))) return rc;
  }
  return 0;
}

int bri_shred_batch(bri_file_writer *w, const struct ArrowArray *const *arrays, size_t n,
                    bri_blob_payload_fn fn, void *ctx, bri_error *err) {
  if (n != w->n_top)
    return bri_error_set(err, BRI_EINVAL, "file writer: batch has %zu arrays for %zu fields", n,
                         w->n_top);
  int64_t len = -1;
  for (size_t i = 0; i < n; i++) {
    if (!arrays[i] || arrays[i]->length < 0)
      return bri_error_set(err, BRI_EINVAL, "file writer: array %zu is missing", i);
    if (len >= 0 && arrays[i]->length != len)
      return bri_error_set(err, BRI_EINVAL,
                           "file writer: array %zu has %lld rows, array 0 has %lld", i,
                           (long long)arrays[i]->length, (long long)len);
    len = arrays[i]->length;
  }
  if (len <= 0) return 0;
  uint64_t target = w->opt.page_target_bytes;
  for (size_t ci = 0; ci < w->n_cols; ci++) {
    wcol *c = &w->cols[ci];
    shred s = {.w = w, .c = c, .col = ci, .fn = fn, .ctx = ctx};
    const struct ArrowArray *a = arrays[c->top];
    int rc = check_path(&s, a, err);
    if (rc) return rc;
    uint64_t r = 0, slice = 4096;
    while (r < (uint64_t)len) {
      uint64_t e = r + slice < (uint64_t)len ? r + slice : (uint64_t)len;
      uint64_t before = bri_writer_buffered_bytes(c);
      if ((rc = visit(&s, 0, a, r, e, c->max_rep, c->max_rep, err))) return rc;
      c->rows += e - r;
      uint64_t now = bri_writer_buffered_bytes(c);
      uint64_t per_row = (now - before) / (e - r) + 1;
      if (now >= target) {
        if ((rc = bri_writer_flush_column(w, c, err))) return rc;
        now = 0;
      }
      uint64_t room = target - now;
      slice = room / per_row;
      if (slice < 1) slice = 1;
      if (slice > 65536) slice = 65536;
      r = e;
    }
  }
  return 0;
}

/* ---- decoded pages -------------------------------------------------------------- */

static int append_values(shred *s, wvals *v, const bri_values *src, bool blob, bri_error *err) {
  uint64_t n = src->n;
  int rc;
  if (src->kind != v->kind)
    return bri_error_set(err, BRI_EINVAL, "file writer: column %zu (%s): page values are of kind %d, the column's %d",
                         s->col, s->c->path, (int)src->kind, (int)v->kind);
  if (blob) {
    if (src->n_children != 5)
      return bri_error_set(err, BRI_EINVAL, "file writer: column %zu (%s): descriptor page with %zu children",
                           s->col, s->c->path, src->n_children);
    const bri_values *ch = src->children;
    for (uint64_t k = 0; k < n; k++) {
      uint8_t kind = ch[0].data[k];
      uint64_t pos, size;
      uint32_t id;
      memcpy(&pos, ch[1].data + k * 8, 8);
      memcpy(&size, ch[2].data + k * 8, 8);
      memcpy(&id, ch[3].data + k * 4, 4);
      /* a null descriptor is all zero (page.h); keep it as a slot of zeros */
      uint64_t ulen = (uint64_t)(ch[4].offsets[k + 1] - ch[4].offsets[k]);
      if ((rc = blob_slot(s, true, kind, pos, size, id, ulen ? ch[4].data + ch[4].offsets[k] : NULL,
                          ulen, k, err)))
        return rc;
    }
    return 0;
  }
  switch (v->kind) {
  case BRI_LEAF_FIXED: {
    if (src->bits != v->bits || src->n_dims != v->n_dims ||
        memcmp(src->dims, v->dims, v->n_dims * sizeof v->dims[0]))
      return bri_error_set(err, BRI_EINVAL,
                           "file writer: column %zu (%s): page values of %u bits / %u dims do "
                           "not match the column",
                           s->col, s->c->path, src->bits, src->n_dims);
    if ((rc = vals_reserve(v, n, err))) return rc;
    uint64_t sb = slot_bits(v);
    if (sb) copy_bits(v->data, v->n * sb, src->data, 0, n * sb);
    for (uint32_t k = 0; k < v->n_dims; k++) {
      if (src->fsl_validity[k]) {
        if ((rc = fslv_make(v, k, n, err))) return rc;
        copy_bits(v->fslv[k], v->n * v->cum[k], src->fsl_validity[k], 0, n * v->cum[k]);
      } else if (v->fslv[k]) {
        set_bits(v->fslv[k], v->n * v->cum[k], n * v->cum[k], 1);
      }
    }
    v->n += n;
    v->data_len = (v->n * sb + 7) / 8;
    return 0;
  }
  case BRI_LEAF_VARIABLE: {
    if ((rc = vals_reserve(v, n, err))) return rc;
    int64_t lo = src->offsets[0], hi = src->offsets[n];
    if ((rc = grow((void **)&v->data, &v->data_cap, v->data_len + (uint64_t)(hi - lo), 1, err)))
      return rc;
    if (hi > lo) memcpy(v->data + v->data_len, src->data + lo, (size_t)(hi - lo));
    for (uint64_t k = 0; k < n; k++)
      v->offsets[v->n + 1 + k] = (int64_t)v->data_len + (src->offsets[k + 1] - lo);
    v->data_len += (uint64_t)(hi - lo);
    v->n += n;
    return 0;
  }
  default:
    return bri_error_set(err, BRI_EUNSUPPORTED, "file writer: column %zu (%s): packed struct pages",
                         s->col, s->c->path);
  }
}

int bri_shred_leaf_page(bri_file_writer *w, wcol *c, const bri_leaf_page *pg,
                        bri_blob_payload_fn fn, void *ctx, bri_error *err) {
  shred s = {.w = w, .c = c, .col = (size_t)(c - w->cols), .fn = fn, .ctx = ctx};
  if (pg->n_layers != c->n_layers)
    return bri_error_set(err, BRI_EINVAL,
                         "file writer: column %zu (%s) has %zu layers, the page %zu", s.col,
                         c->path, c->n_layers, pg->n_layers);
  /* def value -> raw code, through the page's own layers */
  uint16_t map[2 * BRI_MAX_LAYERS + 2];
  size_t nmap = 1;
  map[0] = 0;
  for (size_t L = 0; L < pg->n_layers; L++) {
    uint8_t t = pg->layers[L];
    bool list = t == BRI_LAYER_ALL_VALID_LIST || t == BRI_LAYER_NULLABLE_LIST ||
                t == BRI_LAYER_EMPTYABLE_LIST || t == BRI_LAYER_NULL_AND_EMPTY_LIST;
    if (list != (c->is_list[L] != 0))
      return bri_error_set(err, BRI_EINVAL,
                           "file writer: column %zu (%s): page layer %zu is %s a list layer, the "
                           "column's is%s",
                           s.col, c->path, L, list ? "" : "not", c->is_list[L] ? "" : " not");
    if (t == BRI_LAYER_NULLABLE_ITEM || t == BRI_LAYER_NULLABLE_LIST ||
        t == BRI_LAYER_NULL_AND_EMPTY_LIST)
      map[nmap++] = (uint16_t)(2 * L + 1);
    if (t == BRI_LAYER_EMPTYABLE_LIST || t == BRI_LAYER_NULL_AND_EMPTY_LIST)
      map[nmap++] = (uint16_t)(2 * L + 2);
  }
  if ((pg->rep != NULL) != (c->max_rep > 0) || pg->max_rep != c->max_rep)
    return bri_error_set(err, BRI_EINVAL,
                         "file writer: column %zu (%s): page has %u list levels, the column %u",
                         s.col, c->path, pg->max_rep, c->max_rep);
  uint64_t nl = (pg->rep || pg->def) ? pg->n_levels : pg->values.n;
  int rc = bri_wcol_levels(c, nl, err);
  if (rc) return rc;
  if (pg->rep) memcpy(c->rep + c->levels, pg->rep, (size_t)nl * 2);
  if (pg->def) {
    if ((rc = raw_make(c, err))) return rc;
    for (uint64_t i = 0; i < nl; i++) {
      uint16_t d = pg->def[i];
      if (d >= nmap)
        return bri_error_set(err, BRI_EINVAL,
                             "file writer: column %zu (%s): page level %llu has def %u, more than "
                             "its layers allow",
                             s.col, c->path, (unsigned long long)i, d);
      c->raw[c->levels + i] = map[d];
      c->seen[map[d]] = 1;
    }
  } else if (c->raw) {
    memset(c->raw + c->levels, 0, (size_t)nl * 2);
  }
  c->levels += nl;
  if ((rc = append_values(&s, &c->vals, &pg->values, c->blob_v2, err))) return rc;
  /* descriptors of null blobs are zero and have kind 0 = Inline with size 0:
   * blob_slot gave them the current offset as position; harmless (null). */
  c->rows += pg->n_rows;
  if (bri_writer_buffered_bytes(c) >= w->opt.page_target_bytes)
    return bri_writer_flush_column(w, c, err);
  return 0;
}
