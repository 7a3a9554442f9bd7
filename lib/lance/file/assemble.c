/* assemble.c: repetition/definition levels -> Arrow validity and offsets
 * (see assemble.h; level semantics in docs/format/file.md section 2 and the header
 * comment of lance/encoding/page.h).
 *
 * Per page, the layers are mapped onto the path once: each def value names
 * the node that is null (or the empty list) and how far that nullness
 * reaches down (a null struct gives its children null entries; a null or
 * empty list gives its child nothing), and each rep value names the node
 * where the level starts appending. The level loop is then a few array
 * lookups and bit pushes per level and node. */
#include "lance/file/assemble.h"

#include <stdlib.h>
#include <string.h>

#include "util/bytes.h"

/* ---- value slots ---------------------------------------------------------- */
int bri_vbuild_init(bri_vbuild *vb, const bri_leaf_type *t, bri_error *err) {
  memset(vb, 0, sizeof(*vb));
  switch (t->kind) {
  case BRI_LEAF_FIXED:
    if (t->n_dims > BRI_MAX_FSL_DEPTH || (t->bits > 1 && t->bits % 8))
      return bri_error_set(err, BRI_EINVAL, "bad fixed-width leaf type (%u bits, %u dims)",
                           t->bits, t->n_dims);
    vb->kind = BRI_LEAF_FIXED;
    vb->bits = t->bits;
    vb->n_dims = t->n_dims;
    vb->elems = 1;
    for (uint32_t k = 0; k < t->n_dims; k++) {
      if (!t->dims[k] || vb->elems > UINT32_MAX / t->dims[k])
        return bri_error_set(err, BRI_EINVAL, "bad fixed-size-list dimension %u", t->dims[k]);
      vb->dims[k] = t->dims[k];
      vb->elems *= t->dims[k];
    }
    vb->bitdata.dense = true;
    return 0;
  case BRI_LEAF_VARIABLE:
  case BRI_LEAF_LEGACY_BLOB:
    vb->kind = BRI_LEAF_VARIABLE;
    vb->legacy_blob = t->kind == BRI_LEAF_LEGACY_BLOB;
    return bri_growbuf_append_zeros(&vb->offsets, 8, err);
  case BRI_LEAF_STRUCT:
    if (!t->n_children || t->n_children > BRI_MAX_STRUCT_CHILDREN)
      return bri_error_set(err, BRI_EINVAL, "packed struct with %zu children", t->n_children);
    vb->kind = BRI_LEAF_STRUCT;
    vb->children = calloc(t->n_children, sizeof(*vb->children));
    if (!vb->children) return bri_error_set(err, BRI_ENOMEM, "out of memory");
    vb->n_children = t->n_children;
    for (size_t i = 0; i < t->n_children; i++) {
      if (t->children[i].kind != BRI_LEAF_FIXED && t->children[i].kind != BRI_LEAF_VARIABLE)
        return bri_error_set(err, BRI_EINVAL, "packed struct child %zu is not fixed or variable", i);
      int rc = bri_vbuild_init(&vb->children[i], &t->children[i], err);
      if (rc) return rc;
    }
    return 0;
  }
  return bri_error_set(err, BRI_EINVAL, "unknown leaf kind %d", (int)t->kind);
}

void bri_vbuild_dispose(bri_vbuild *vb) {
  bri_growbuf_dispose(&vb->data);
  bri_bitbuf_dispose(&vb->bitdata);
  for (int k = 0; k < BRI_MAX_FSL_DEPTH; k++) bri_bitbuf_dispose(&vb->fslv[k]);
  bri_growbuf_dispose(&vb->offsets);
  if (vb->children) {
    for (size_t i = 0; i < vb->n_children; i++) bri_vbuild_dispose(&vb->children[i]);
    free(vb->children);
  }
  memset(vb, 0, sizeof(*vb));
}

static int64_t last_offset(const bri_vbuild *vb) {
  int64_t v;
  memcpy(&v, vb->offsets.p + vb->offsets.len - 8, 8);
  return v;
}

int bri_vbuild_append_zero(bri_vbuild *vb, uint64_t n, bri_error *err) {
  int rc = 0;
  if (!n) return 0;
  switch (vb->kind) {
  case BRI_LEAF_FIXED: {
    uint64_t elems = n * vb->elems;
    if (vb->bits == 1)
      rc = bri_bitbuf_append_run(&vb->bitdata, 0, elems, err);
    else if (vb->bits)
      rc = bri_growbuf_append_zeros(&vb->data, elems * (vb->bits / 8), err);
    uint64_t per = 1;
    for (uint32_t k = 0; !rc && k < vb->n_dims; k++) {
      per *= vb->dims[k];
      rc = bri_bitbuf_append_run(&vb->fslv[k], 1, n * per, err);
    }
    break;
  }
  case BRI_LEAF_VARIABLE: {
    int64_t last = last_offset(vb);
    rc = bri_growbuf_reserve(&vb->offsets, n * 8, err);
    for (uint64_t i = 0; !rc && i < n; i++) {
      memcpy(vb->offsets.p + vb->offsets.len, &last, 8);
      vb->offsets.len += 8;
    }
    break;
  }
  case BRI_LEAF_STRUCT:
    for (size_t i = 0; !rc && i < vb->n_children; i++)
      rc = bri_vbuild_append_zero(&vb->children[i], n, err);
    break;
  default:
    break;
  }
  if (!rc) vb->n += n;
  return rc;
}

/* Checks that a page's slots have the shape the builder expects, and that
 * every buffer holds what its slot count says. */
static int check_shape(const bri_vbuild *vb, const bri_values *v, uint64_t n, const char *where,
                       bri_error *err) {
  if (v->n != n)
    return bri_error_set(err, BRI_ECORRUPT, "%s: a child of the packed struct has %llu slots, expected %llu",
                         where, (unsigned long long)v->n, (unsigned long long)n);
  if (vb->legacy_blob) {
    if (v->kind != BRI_LEAF_STRUCT || v->n_children != 2)
      return bri_error_set(err, BRI_ECORRUPT, "%s: legacy blob page did not decode to {position, size}", where);
    for (size_t i = 0; i < 2; i++) {
      const bri_values *c = &v->children[i];
      if (c->kind != BRI_LEAF_FIXED || c->bits != 64 || c->n != n || c->n_dims ||
          (n && (!c->data || c->data_len / 8 < n)))
        return bri_error_set(err, BRI_ECORRUPT, "%s: legacy blob descriptor field %zu is not %llu u64 values",
                             where, i, (unsigned long long)n);
    }
    return 0;
  }
  if (v->kind != vb->kind)
    return bri_error_set(err, BRI_ECORRUPT, "%s: page decoded to value kind %d, expected %d", where,
                         (int)v->kind, (int)vb->kind);
  switch (vb->kind) {
  case BRI_LEAF_FIXED: {
    if (v->bits != vb->bits || v->n_dims != vb->n_dims)
      return bri_error_set(err, BRI_ECORRUPT, "%s: page decoded to %u-bit values with %u FSL dims, expected %u bits, %u dims",
                           where, v->bits, v->n_dims, vb->bits, vb->n_dims);
    for (uint32_t k = 0; k < vb->n_dims; k++)
      if (v->dims[k] != vb->dims[k])
        return bri_error_set(err, BRI_ECORRUPT, "%s: FSL dimension %u is %u, expected %u", where, k,
                             v->dims[k], vb->dims[k]);
    uint64_t elems = n * vb->elems; /* n <= slots of a page, elems <= 2^32: fits */
    uint64_t need = vb->bits == 1 ? (elems + 7) / 8 : elems * (vb->bits / 8);
    if (need && (!v->data || v->data_len < need))
      return bri_error_set(err, BRI_ECORRUPT, "%s: %llu value bytes for %llu slots, expected %llu", where,
                           (unsigned long long)v->data_len, (unsigned long long)n,
                           (unsigned long long)need);
    return 0;
  }
  case BRI_LEAF_VARIABLE: {
    if (!v->offsets) {
      if (n) return bri_error_set(err, BRI_ECORRUPT, "%s: variable-width page without offsets", where);
      return 0;
    }
    if (v->offsets[0] < 0 || v->offsets[n] < v->offsets[0] || (uint64_t)v->offsets[n] > v->data_len)
      return bri_error_set(err, BRI_ECORRUPT, "%s: value offsets end at %lld, past the %llu value bytes", where,
                           (long long)v->offsets[n], (unsigned long long)v->data_len);
    return 0;
  }
  case BRI_LEAF_STRUCT:
    if (v->n_children != vb->n_children)
      return bri_error_set(err, BRI_ECORRUPT, "%s: packed struct page has %zu fields, expected %zu", where,
                           v->n_children, vb->n_children);
    for (size_t i = 0; i < vb->n_children; i++) {
      int rc = check_shape(&vb->children[i], &v->children[i], n, where, err);
      if (rc) return rc;
    }
    return 0;
  default:
    return bri_error_set(err, BRI_ECORRUPT, "%s: unknown value kind", where);
  }
}

/* Appends slots [lo, hi) of v (shape checked). */
static int vb_append(bri_vbuild *vb, bri_datafile *df, const bri_values *v, uint64_t lo,
                     uint64_t hi, const char *where, bri_error *err) {
  uint64_t n = hi - lo;
  int rc = 0;
  if (!n) return 0;
  if (vb->legacy_blob) {
    /* Legacy blob (docs/format/file.md 3.4): each slot is {position, size} of a
     * payload stored elsewhere in the data file. */
    const uint8_t *pos = v->children[0].data, *size = v->children[1].data;
    uint64_t file_size = df ? bri_datafile_size(df) : 0;
    rc = bri_growbuf_reserve(&vb->offsets, n * 8, err);
    for (uint64_t j = lo; !rc && j < hi; j++) {
      uint64_t p = bri_le64(pos + 8 * j), s = bri_le64(size + 8 * j);
      if (s) {
        if (!df || !bri_range_ok(p, s, file_size))
          return bri_error_set(err, BRI_ECORRUPT, "%s: legacy blob slot %llu points at [%llu, +%llu), outside the %llu-byte file",
                               where, (unsigned long long)j, (unsigned long long)p,
                               (unsigned long long)s, (unsigned long long)file_size);
        rc = bri_growbuf_reserve(&vb->data, s, err);
        if (!rc) rc = bri_datafile_read_into(df, p, s, vb->data.p + vb->data.len, err);
        if (rc) return rc;
        vb->data.len += s;
      }
      if (vb->data.len > INT64_MAX) return bri_error_set(err, BRI_ENOMEM, "%s: blob payloads too large", where);
      int64_t end = (int64_t)vb->data.len;
      memcpy(vb->offsets.p + vb->offsets.len, &end, 8);
      vb->offsets.len += 8;
    }
    if (!rc) vb->n += n;
    return rc;
  }
  switch (vb->kind) {
  case BRI_LEAF_FIXED: {
    uint64_t elems = n * vb->elems;
    if (vb->bits == 1)
      rc = bri_bitbuf_append_bits(&vb->bitdata, v->data, lo * vb->elems, elems, err);
    else if (vb->bits)
      rc = bri_growbuf_append(&vb->data, v->data + lo * vb->elems * (vb->bits / 8),
                              elems * (vb->bits / 8), err);
    uint64_t per = 1;
    for (uint32_t k = 0; !rc && k < vb->n_dims; k++) {
      per *= vb->dims[k];
      if (v->fsl_validity[k])
        rc = bri_bitbuf_append_bits(&vb->fslv[k], v->fsl_validity[k], lo * per, n * per, err);
      else
        rc = bri_bitbuf_append_run(&vb->fslv[k], 1, n * per, err);
    }
    break;
  }
  case BRI_LEAF_VARIABLE: {
    int64_t a = v->offsets[lo], b = v->offsets[hi];
    if (a < 0 || b < a || (uint64_t)b > v->data_len)
      return bri_error_set(err, BRI_ECORRUPT, "%s: value offsets [%lld, %lld) outside %llu bytes", where,
                           (long long)a, (long long)b, (unsigned long long)v->data_len);
    int64_t base = last_offset(vb);
    if (base > INT64_MAX - (b - a)) return bri_error_set(err, BRI_ENOMEM, "%s: values too large", where);
    rc = bri_growbuf_append(&vb->data, v->data + a, (uint64_t)(b - a), err);
    if (!rc) rc = bri_growbuf_reserve(&vb->offsets, n * 8, err);
    if (rc) return rc;
    int64_t prev = a;
    int64_t *out = (int64_t *)(void *)(vb->offsets.p + vb->offsets.len);
    for (uint64_t j = lo + 1; j <= hi; j++) {
      int64_t o = v->offsets[j];
      /* Offsets must not decrease: a consumer reads value i as [o[i], o[i+1]). */
      if (o < prev || o > b)
        return bri_error_set(err, BRI_ECORRUPT, "%s: value offset %llu (%lld) is out of order", where,
                             (unsigned long long)j, (long long)o);
      prev = o;
      *out++ = base + (o - a);
    }
    vb->offsets.len += n * 8;
    break;
  }
  case BRI_LEAF_STRUCT:
    for (size_t i = 0; !rc && i < vb->n_children; i++)
      rc = vb_append(&vb->children[i], df, &v->children[i], lo, hi, where, err);
    break;
  default:
    break;
  }
  if (!rc) vb->n += n;
  return rc;
}

/* ---- levels --------------------------------------------------------------- */
static bool is_list_layer(uint8_t l) {
  return l == BRI_LAYER_ALL_VALID_LIST || l == BRI_LAYER_NULLABLE_LIST ||
         l == BRI_LAYER_EMPTYABLE_LIST || l == BRI_LAYER_NULL_AND_EMPTY_LIST;
}

int bri_asm_init(bri_asm *a, const int *kinds, size_t depth, const bri_leaf_type *leaf,
                 bri_error *err) {
  memset(a, 0, sizeof(*a));
  if (!depth || depth > BRI_MAX_LAYERS)
    return bri_error_set(err, BRI_EINVAL, "field path of %zu levels (1..%d supported)", depth,
                         BRI_MAX_LAYERS);
  for (size_t k = 0; k < depth; k++) {
    bool leaf_pos = k + 1 == depth;
    if ((kinds[k] == BRI_ASM_LEAF) != leaf_pos ||
        (kinds[k] != BRI_ASM_STRUCT && kinds[k] != BRI_ASM_LIST && kinds[k] != BRI_ASM_LEAF))
      return bri_error_set(err, BRI_EINVAL, "bad node kind %d at depth %zu", kinds[k], k);
    a->node[k].kind = kinds[k];
  }
  a->depth = depth;
  a->row_hi = UINT64_MAX;
  return bri_vbuild_init(&a->values, leaf, err);
}

void bri_asm_dispose(bri_asm *a) {
  for (size_t k = 0; k < BRI_MAX_LAYERS; k++) {
    bri_bitbuf_dispose(&a->node[k].validity);
    bri_growbuf_dispose(&a->node[k].offsets);
  }
  bri_vbuild_dispose(&a->values);
  a->depth = 0;
}

void bri_asm_skip_rows(bri_asm *a, uint64_t n) { a->row += n; }

static bool row_deleted(bri_asm *a, uint64_t row) {
  while (a->del_pos < a->n_del && a->del[a->del_pos] < row) a->del_pos++;
  return a->del_pos < a->n_del && a->del[a->del_pos] == row;
}

/* True when every row of [first, first + n) is wanted. */
static bool all_wanted(bri_asm *a, uint64_t first, uint64_t n) {
  if (first < a->row_lo || n > a->row_hi - first || first >= a->row_hi) return false;
  size_t p = a->del_pos;
  while (p < a->n_del && a->del[p] < first) p++;
  return p == a->n_del || a->del[p] >= first + n;
}

/* One entry at node k: bit = validity; lists record where the entry starts. */
static inline int node_push(bri_asm *a, size_t k, int bit, bri_error *err) {
  bri_asm_node *nd = &a->node[k];
  if (nd->kind == BRI_ASM_LIST) {
    int64_t start = (int64_t)a->node[k + 1].length;
    memcpy(nd->offsets.p + nd->offsets.len, &start, 8);
    nd->offsets.len += 8;
  }
  nd->length++;
  return bri_bitbuf_push(&nd->validity, bit, err);
}

/* Validity of a flat column from its def levels (0 = valid, 1 = null),
 * eight bits at a time. */
static int append_def_validity(bri_asm_node *nd, const uint16_t *def, uint64_t n, unsigned max_def,
                               const char *where, bri_error *err) {
  nd->length += n;
  if (!def) return bri_bitbuf_append_run(&nd->validity, 1, n, err);
  uint64_t nulls = 0;
  for (uint64_t i = 0; i < n; i++) {
    if (def[i] > max_def)
      return bri_error_set(err, BRI_ECORRUPT, "%s: level %llu has def %u (max %u)", where,
                           (unsigned long long)i, def[i], max_def);
    nulls += def[i] != 0;
  }
  bri_bitbuf *b = &nd->validity;
  if (!nulls) return bri_bitbuf_append_run(b, 1, n, err);
  /* Materialized storage for n more bits, then whole bytes once aligned. */
  uint64_t zeros = b->zeros + nulls;
  int rc = bri_bitbuf_materialize(b, n, err);
  if (rc) return rc;
  uint64_t i = 0;
  for (; i < n && (b->len & 7); i++)
    if ((rc = bri_bitbuf_push(b, def[i] == 0, err))) return rc;
  uint8_t *out = b->p + (b->len >> 3);
  uint64_t whole = (n - i) >> 3;
  for (uint64_t w = 0; w < whole; w++, i += 8) {
    const uint16_t *q = def + i;
    out[w] = (uint8_t)((q[0] == 0) | (q[1] == 0) << 1 | (q[2] == 0) << 2 | (q[3] == 0) << 3 |
                       (q[4] == 0) << 4 | (q[5] == 0) << 5 | (q[6] == 0) << 6 | (q[7] == 0) << 7);
  }
  b->len += whole << 3;
  for (; i < n; i++)
    if ((rc = bri_bitbuf_push(b, def[i] == 0, err))) return rc;
  b->zeros = zeros;
  return 0;
}

int bri_asm_page(bri_asm *a, const bri_leaf_page *pg, const char *where, bri_error *err) {
  const size_t depth = a->depth, d = depth - 1;
  const uint8_t *layers = pg->layers;
  size_t nl = pg->n_layers;
  int rc;

  /* Layers (innermost first) against the path (outermost first). */
  if (nl > BRI_MAX_LAYERS)
    return bri_error_set(err, BRI_ECORRUPT, "%s: %zu rep/def layers", where, nl);
  if (nl == depth + 1 && a->extra_inner_ok && layers[0] == BRI_LAYER_ALL_VALID_ITEM) {
    layers++;
    nl--;
  }
  if (nl != depth)
    return bri_error_set(err, BRI_ECORRUPT, "%s: page has %zu rep/def layers but the field's path from the top-level field has %zu levels",
                         where, nl, depth);
  unsigned n_lists = 0;
  for (size_t j = 0; j < nl; j++) {
    size_t k = d - j;
    if (layers[j] < BRI_LAYER_ALL_VALID_ITEM || layers[j] > BRI_LAYER_NULL_AND_EMPTY_LIST)
      return bri_error_set(err, BRI_ECORRUPT, "%s: unknown rep/def layer %u", where, layers[j]);
    if (is_list_layer(layers[j]) != (a->node[k].kind == BRI_ASM_LIST))
      return bri_error_set(err, BRI_ECORRUPT, "%s: layer %zu is a %s layer but level %zu of the field is %s",
                           where, j, is_list_layer(layers[j]) ? "list" : "item", k,
                           a->node[k].kind == BRI_ASM_LIST ? "a list" : "not a list");
    if (is_list_layer(layers[j])) n_lists++;
  }

  /* Def values (docs/format/file.md 2): 0 = valid everywhere; counting from the
   * innermost layer, nullable layers take one value, NULL_AND_EMPTY_LIST
   * two (null, then empty). null_at[v] = node that is null/empty (depth =
   * none), stop_at[v] = first node below it that gets no entry. */
  uint16_t null_at[2 * BRI_MAX_LAYERS + 1], stop_at[2 * BRI_MAX_LAYERS + 1];
  bool empty[2 * BRI_MAX_LAYERS + 1], visible[2 * BRI_MAX_LAYERS + 1];
  unsigned max_def = 0;
  null_at[0] = (uint16_t)depth;
  empty[0] = false;
  for (size_t j = 0; j < nl; j++) {
    uint16_t k = (uint16_t)(d - j);
    switch (layers[j]) {
    case BRI_LAYER_NULLABLE_ITEM:
    case BRI_LAYER_NULLABLE_LIST:
      max_def++, null_at[max_def] = k, empty[max_def] = false;
      break;
    case BRI_LAYER_EMPTYABLE_LIST:
      max_def++, null_at[max_def] = k, empty[max_def] = true;
      break;
    case BRI_LAYER_NULL_AND_EMPTY_LIST:
      max_def++, null_at[max_def] = k, empty[max_def] = false;
      max_def++, null_at[max_def] = k, empty[max_def] = true;
      break;
    default:
      break;
    }
  }
  for (unsigned v = 0; v <= max_def; v++) {
    size_t e = null_at[v], s = e + 1;
    if (e == depth) {
      s = depth + 1;
    } else {
      /* A null struct hands null entries down until a list (whose null or
       * empty entry holds no children). */
      while (s <= d && a->node[s - 1].kind == BRI_ASM_STRUCT) s++;
    }
    stop_at[v] = (uint16_t)s;
    visible[v] = s > d;
  }
  if (pg->rep && pg->max_rep != n_lists)
    return bri_error_set(err, BRI_ECORRUPT, "%s: page says max_rep %u; its layers have %u lists", where,
                         pg->max_rep, n_lists);
  if (pg->def) {
    if (pg->max_def != max_def)
      return bri_error_set(err, BRI_ECORRUPT, "%s: page says max_def %u; its layers give %u", where,
                           pg->max_def, max_def);
    for (unsigned v = 0; v <= max_def; v++)
      if (visible[v] != (v <= pg->max_visible_def))
        return bri_error_set(err, BRI_ECORRUPT, "%s: def %u is %s by the layers but max_visible_def is %u",
                             where, v, visible[v] ? "visible" : "invisible", pg->max_visible_def);
  }

  /* Rep values: R = list count starts a row; r < R appends an item to the
   * (R - r)-th list counted from the top, i.e. starts at the node below it. */
  uint16_t rep_start[BRI_MAX_LAYERS + 1];
  {
    unsigned q = 0;
    for (size_t k = 0; k < depth; k++)
      if (a->node[k].kind == BRI_ASM_LIST) {
        q++;
        rep_start[n_lists - q] = (uint16_t)(k + 1);
      }
    rep_start[n_lists] = 0;
  }

  const uint64_t n_levels = pg->n_levels, n_slots = pg->values.n;
  const uint16_t *rep = pg->rep, *def = pg->def;
  if (!rep && !def && (n_levels != pg->n_rows || n_slots != n_levels))
    return bri_error_set(err, BRI_ECORRUPT, "%s: page without levels has %llu levels, %llu slots for %llu rows",
                         where, (unsigned long long)n_levels, (unsigned long long)n_slots,
                         (unsigned long long)pg->n_rows);
  if (n_lists && !rep && n_levels != pg->n_rows)
    return bri_error_set(err, BRI_ECORRUPT, "%s: list page without repetition has %llu levels for %llu rows",
                         where, (unsigned long long)n_levels, (unsigned long long)pg->n_rows);
  rc = check_shape(&a->values, &pg->values, n_slots, where, err);
  if (rc) return rc;

  /* Room for one entry per level at every node. */
  for (size_t k = 0; k < depth; k++) {
    rc = bri_bitbuf_reserve(&a->node[k].validity, n_levels, err);
    if (!rc && a->node[k].kind == BRI_ASM_LIST)
      rc = bri_growbuf_reserve(&a->node[k].offsets, n_levels * 8, err);
    if (rc) return rc;
  }

  const uint64_t first_row = a->row;
  const bool keep_all = all_wanted(a, first_row, pg->n_rows);
  if (depth == 1 && keep_all) {
    /* Flat column, every row kept: one level per row and slot. */
    if (n_levels != pg->n_rows || n_slots != n_levels)
      return bri_error_set(err, BRI_ECORRUPT, "%s: flat page has %llu levels and %llu slots for %llu rows", where,
                           (unsigned long long)n_levels, (unsigned long long)n_slots,
                           (unsigned long long)pg->n_rows);
    if ((rc = append_def_validity(&a->node[0], def, n_levels, max_def, where, err))) return rc;
    if ((rc = vb_append(&a->values, a->df, &pg->values, 0, n_slots, where, err))) return rc;
    a->row = first_row + n_levels;
    return 0;
  }
  bool keep = false;
  uint64_t rows = 0, slot = 0, run_lo = 0, run_hi = 0;
  for (uint64_t i = 0; i < n_levels; i++) {
    unsigned r = rep ? rep[i] : n_lists;
    unsigned v = def ? def[i] : 0;
    if (r > n_lists || v > max_def)
      return bri_error_set(err, BRI_ECORRUPT, "%s: level %llu has rep %u, def %u (max %u, %u)", where,
                           (unsigned long long)i, r, v, n_lists, max_def);
    size_t start;
    if (r == n_lists) {
      if (rows == pg->n_rows)
        return bri_error_set(err, BRI_ECORRUPT, "%s: levels hold more than the page's %llu rows", where,
                             (unsigned long long)pg->n_rows);
      uint64_t row = first_row + rows++;
      keep = keep_all || (row >= a->row_lo && row < a->row_hi && !row_deleted(a, row));
      start = 0;
    } else {
      if (!i)
        return bri_error_set(err, BRI_ECORRUPT, "%s: first level (rep %u) does not start a row", where, r);
      start = rep_start[r];
    }
    size_t e = null_at[v];
    if (e < start)
      return bri_error_set(err, BRI_ECORRUPT, "%s: level %llu continues a list below a null or empty level (rep %u, def %u)",
                           where, (unsigned long long)i, r, v);
    if (keep) {
      for (size_t k = start; k < e; k++)
        if ((rc = node_push(a, k, 1, err))) return rc;
      if (e < depth) {
        if ((rc = node_push(a, e, empty[v], err))) return rc;
        for (size_t k = e + 1; k < stop_at[v]; k++)
          if ((rc = node_push(a, k, 0, err))) return rc;
      }
    }
    if (visible[v]) {
      if (slot == n_slots)
        return bri_error_set(err, BRI_ECORRUPT, "%s: levels need more than the page's %llu value slots", where,
                             (unsigned long long)n_slots);
      if (keep && !keep_all) {
        if (slot != run_hi) {
          if ((rc = vb_append(&a->values, a->df, &pg->values, run_lo, run_hi, where, err))) return rc;
          run_lo = slot;
        }
        run_hi = slot + 1;
      }
      slot++;
    }
  }
  if (rows != pg->n_rows || slot != n_slots)
    return bri_error_set(err, BRI_ECORRUPT, "%s: levels hold %llu rows and %llu value slots; the page has %llu rows, %llu slots",
                         where, (unsigned long long)rows, (unsigned long long)slot,
                         (unsigned long long)pg->n_rows, (unsigned long long)n_slots);
  if (keep_all) {
    run_lo = 0;
    run_hi = n_slots;
  }
  if ((rc = vb_append(&a->values, a->df, &pg->values, run_lo, run_hi, where, err))) return rc;
  a->row = first_row + rows;
  return 0;
}

int bri_asm_finish(bri_asm *a, bri_error *err) {
  for (size_t k = 0; k + 1 < a->depth; k++) {
    bri_asm_node *nd = &a->node[k];
    if (nd->kind != BRI_ASM_LIST) continue;
    int64_t end = (int64_t)a->node[k + 1].length;
    int rc = bri_growbuf_append(&nd->offsets, &end, 8, err);
    if (rc) return rc;
  }
  return 0;
}
