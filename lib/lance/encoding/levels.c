/* levels.c: repetition/definition bookkeeping shared by every page layout
 * (docs/format/file.md section 2): what the layers allow (max_rep, max_def,
 * max_visible_def), validation of decoded level streams against them, and
 * the canonical zeroing of null value slots.
 *
 * Rule enforced here: a level above the layers' maximum is corruption, and a
 * page with repetition must start a new top-level row at its first level. */
#include <stdlib.h>
#include <string.h>

#include "lance/encoding/decode.h"

static int layer_def(uint8_t l) {
  switch (l) {
  case BRI_LAYER_ALL_VALID_ITEM:
  case BRI_LAYER_ALL_VALID_LIST: return 0;
  case BRI_LAYER_NULLABLE_ITEM:
  case BRI_LAYER_NULLABLE_LIST:
  case BRI_LAYER_EMPTYABLE_LIST: return 1;
  case BRI_LAYER_NULL_AND_EMPTY_LIST: return 2;
  default: return -1;
  }
}

static int layer_is_list(uint8_t l) {
  return l == BRI_LAYER_ALL_VALID_LIST || l == BRI_LAYER_NULLABLE_LIST ||
         l == BRI_LAYER_EMPTYABLE_LIST || l == BRI_LAYER_NULL_AND_EMPTY_LIST;
}

int bri_layers_analyze(const uint8_t *layers, size_t n, uint16_t *max_rep, uint16_t *max_def,
                       uint16_t *max_visible_def, bri_error *err) {
  if (n == 0) return bri_error_set(err, BRI_ECORRUPT, "page has no rep/def layers");
  if (n > BRI_MAX_LAYERS)
    return bri_error_set(err, BRI_ECORRUPT, "page has %zu rep/def layers; at most %d supported", n,
                         BRI_MAX_LAYERS);
  unsigned rep = 0, def = 0, vis = 0;
  int seen_list = 0;
  for (size_t i = 0; i < n; i++) {
    int dl = layer_def(layers[i]);
    if (dl < 0)
      return bri_error_set(err, BRI_ECORRUPT, "layer %zu has unknown RepDefLayer value %u", i,
                           layers[i]);
    if (layer_is_list(layers[i])) {
      rep++;
      seen_list = 1;
    }
    def += (unsigned)dl;
    if (!seen_list) vis += (unsigned)dl;
  }
  *max_rep = (uint16_t)rep;
  *max_def = (uint16_t)def;
  *max_visible_def = (uint16_t)vis;
  return 0;
}

int bri_levels_check(const uint16_t *rep, const uint16_t *def, uint64_t n, uint16_t max_rep,
                     uint16_t max_def, uint16_t max_visible_def, uint64_t *visible,
                     uint64_t *rows, bri_error *err) {
  uint64_t vis = 0, nrows = 0;
  if (!rep && !def) { /* every level is a valid top-level value */
    *visible = *rows = n;
    return 0;
  }
  for (uint64_t i = 0; i < n; i++) {
    if (rep) {
      if (rep[i] > max_rep)
        return bri_error_set(err, BRI_ECORRUPT,
                             "level %llu has repetition %u, above the layers' maximum %u",
                             (unsigned long long)i, rep[i], max_rep);
      if (rep[i] == max_rep) nrows++;
      else if (i == 0)
        return bri_error_set(err, BRI_ECORRUPT,
                             "level 0 has repetition %u; a page must start a new row (%u)",
                             rep[0], max_rep);
    } else {
      nrows++;
    }
    if (def) {
      if (def[i] > max_def)
        return bri_error_set(err, BRI_ECORRUPT,
                             "level %llu has definition %u, above the layers' maximum %u",
                             (unsigned long long)i, def[i], max_def);
      if (def[i] <= max_visible_def) vis++;
    } else {
      vis++;
    }
  }
  *visible = vis;
  *rows = nrows;
  return 0;
}

int bri_page_zero_nulls(bri_dec *d, bri_leaf_page *p, bri_error *err) {
  if (!p->def || p->max_visible_def == 0 || p->values.n == 0) return 0;
  uint64_t ns = p->values.n;
  uint8_t *is_null = bri_dec_alloc(d, ns, "null slot map", err);
  if (!is_null) return err->code;
  uint64_t k = 0;
  int any = 0;
  for (uint64_t i = 0; i < p->n_levels && k < ns; i++) {
    uint16_t dv = p->def[i];
    if (dv <= p->max_visible_def) {
      is_null[k] = dv != 0;
      any |= dv != 0;
      k++;
    }
  }
  int rc = any ? bri_values_clear_slots(d, &p->values, is_null, err) : 0;
  bri_dec_free(d, is_null, ns);
  return rc;
}
