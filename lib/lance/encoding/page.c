/* page.c: the public page decoder (see page.h): reads a page's buffers,
 * dispatches on its PageLayout, and checks what every layout must satisfy
 * afterwards.
 *
 * Checks shared by all layouts (docs/format/file.md section 2): levels within the
 * layers' maxima, the page starting a new row, the number of top-level rows
 * equal to Page.length, and the number of visible items equal to the number
 * of value slots decoded. Then null slots are zeroed so that equal logical
 * data gives equal bytes. Every failure is prefixed with the page's name
 * ("<file>: page P of column C"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lance/encoding/decode.h"

#define LAYOUT(x) LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_##x

void bri_leaf_page_dispose(bri_leaf_page *page) {
  if (!page) return;
  free(page->rep);
  free(page->def);
  bri_values_dispose(&page->values);
  memset(page, 0, sizeof *page);
}

static int copy_layers(const Lance__Encodings21__RepDefLayer *layers, size_t n, bri_leaf_page *out,
                       bri_error *err) {
  if (n > BRI_MAX_LAYERS)
    return bri_error_set(err, BRI_ECORRUPT, "page has %zu rep/def layers; at most %d supported", n,
                         BRI_MAX_LAYERS);
  for (size_t i = 0; i < n; i++) {
    int l = (int)layers[i];
    out->layers[i] = l < 0 || l > 255 ? 0 : (uint8_t)l;
  }
  out->n_layers = n;
  return bri_layers_analyze(out->layers, n, &out->max_rep, &out->max_def, &out->max_visible_def,
                            err);
}

int bri_page_decode_layout(bri_dec *d, const bri_page_input *in, const bri_leaf_type *type,
                           const Lance__Encodings21__PageLayout *layout, int depth,
                           bri_leaf_page *out, bri_error *err);

int bri_page_decode_layout(bri_dec *d, const bri_page_input *in, const bri_leaf_type *type,
                           const Lance__Encodings21__PageLayout *layout, int depth,
                           bri_leaf_page *out, bri_error *err) {
  int rc;
  memset(out, 0, sizeof *out);
  out->n_rows = in->n_rows;
  if (!layout) return bri_error_set(err, BRI_ECORRUPT, "page has no layout");
  if ((rc = bri_values_init(&out->values, type, err))) return rc;
  bri_layout_io io = {in, type, d, out};
  switch (layout->layout_case) {
  case LAYOUT(MINI_BLOCK_LAYOUT): {
    const Lance__Encodings21__MiniBlockLayout *mb = layout->mini_block_layout;
    out->layout = BRI_PAGE_MINIBLOCK;
    if (!mb) return bri_error_set(err, BRI_ECORRUPT, "MiniBlockLayout is empty");
    if ((rc = copy_layers(mb->layers, mb->n_layers, out, err))) return rc;
    if (type->kind == BRI_LEAF_LEGACY_BLOB && depth == 0)
      return bri_error_set(err, BRI_ECORRUPT, "legacy blob column page is not a BlobLayout");
    rc = bri_miniblock_decode(&io, mb, err);
    break;
  }
  case LAYOUT(CONSTANT_LAYOUT): {
    const Lance__Encodings21__ConstantLayout *cl = layout->constant_layout;
    out->layout = BRI_PAGE_CONSTANT;
    if (!cl) return bri_error_set(err, BRI_ECORRUPT, "ConstantLayout is empty");
    if ((rc = copy_layers(cl->layers, cl->n_layers, out, err))) return rc;
    rc = bri_constant_decode(&io, cl, err);
    break;
  }
  case LAYOUT(FULL_ZIP_LAYOUT): {
    const Lance__Encodings21__FullZipLayout *fz = layout->full_zip_layout;
    out->layout = BRI_PAGE_FULLZIP;
    if (!fz) return bri_error_set(err, BRI_ECORRUPT, "FullZipLayout is empty");
    if ((rc = copy_layers(fz->layers, fz->n_layers, out, err))) return rc;
    if (type->kind == BRI_LEAF_LEGACY_BLOB && depth == 0)
      return bri_error_set(err, BRI_ECORRUPT, "legacy blob column page is not a BlobLayout");
    rc = bri_fullzip_decode(&io, fz, err);
    break;
  }
  case LAYOUT(BLOB_LAYOUT): {
    const Lance__Encodings21__BlobLayout *bl = layout->blob_layout;
    out->layout = BRI_PAGE_BLOB;
    if (!bl) return bri_error_set(err, BRI_ECORRUPT, "BlobLayout is empty");
    if (depth > 0) return bri_error_set(err, BRI_ECORRUPT, "BlobLayout nested in a BlobLayout");
    if ((rc = copy_layers(bl->layers, bl->n_layers, out, err))) return rc;
    rc = bri_bloblayout_decode(&io, bl, err);
    break;
  }
  case LAYOUT(SPARSE_LAYOUT):
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "SparseLayout belongs to Lance file format 2.3, which is not supported");
  default: return bri_error_set(err, BRI_ECORRUPT, "PageLayout has no layout set");
  }
  if (rc) return rc;

  /* Shared post-conditions. */
  bri_values *v = &out->values;
  uint64_t visible, rows;
  rc = bri_levels_check(out->rep, out->def, out->n_levels, out->max_rep, out->max_def,
                        out->max_visible_def, &visible, &rows, err);
  if (rc) return rc;
  if (visible != v->n)
    return bri_error_set(err, BRI_ECORRUPT,
                         "levels make %llu value slots but %llu values were decoded",
                         (unsigned long long)visible, (unsigned long long)v->n);
  if (rows != in->n_rows)
    return bri_error_set(err, BRI_ECORRUPT, "page holds %llu rows but its length says %llu",
                         (unsigned long long)rows, (unsigned long long)in->n_rows);
  if ((rc = bri_values_reserve(d, v, 0, 0, err))) return rc; /* offsets[0] exists */
  if (v->kind == BRI_LEAF_FIXED) v->data_len = bri_values_fixed_bytes(v, v->n);
  for (size_t c = 0; c < v->n_children; c++) {
    bri_values *ch = &v->children[c];
    if (ch->kind == BRI_LEAF_FIXED) ch->data_len = bri_values_fixed_bytes(ch, ch->n);
    if (ch->n != v->n)
      return bri_error_set(err, BRI_ECORRUPT, "struct child %zu has %llu values, the struct %llu",
                           c, (unsigned long long)ch->n, (unsigned long long)v->n);
  }
  return bri_page_zero_nulls(d, out, err);
}

int bri_page_decode_buffers(const bri_page_input *in, const bri_leaf_type *type,
                            const bri_page_limits *limits, bri_leaf_page *out, bri_error *err) {
  memset(out, 0, sizeof *out);
  const char *where = in && in->where ? in->where : "page";
  if (!in || !type) return bri_error_set(err, BRI_EINVAL, "%s: no page input or leaf type", where);
  for (size_t i = 0; i < in->n_buffers; i++)
    if (!in->buffers[i] && in->buffer_sizes[i])
      return bri_error_set(err, BRI_EINVAL, "%s: buffer %zu is missing", where, i);
  bri_dec d;
  uint64_t limit = limits && limits->max_output_bytes ? limits->max_output_bytes
                                                      : BRI_PAGE_DEFAULT_MAX_OUTPUT;
  bri_dec_init(&d, limit, in->file_minor);
  int rc = bri_page_decode_layout(&d, in, type, in->layout, 0, out, err);
  bri_dec_release_all(&d);
  if (rc) {
    bri_leaf_page_dispose(out);
    return bri_error_wrap(err, "%s", where);
  }
  return 0;
}
