/* bloblayout.c: the legacy BlobLayout ("blob v1", docs/format/file.md section 3.4).
 *
 * The page's inner layout (normally MiniBlock over PackedStruct([64, 64]))
 * holds one {position u64, size u64} descriptor per item, with no levels of
 * its own; nulls are folded into the descriptors: size 0 and position != 0
 * means def = position >> 16, rep = position & 0xFFFF. Payloads live at
 * absolute file offsets outside any page, so this decoder returns the
 * descriptors (the caller reads payloads with bri_datafile_read).
 *
 * Design choice: like Lance, valid items get rep 0, which only makes sense
 * without lists; a BlobLayout whose layers contain a list is refused. */
#include <string.h>

#include "lance/encoding/decode.h"

/* Decodes a nested page layout into out (defined in page.c). */
int bri_page_decode_layout(bri_dec *d, const bri_page_input *in, const bri_leaf_type *type,
                           const Lance__Encodings21__PageLayout *layout, int depth,
                           bri_leaf_page *out, bri_error *err);

int bri_bloblayout_decode(bri_layout_io *io, const Lance__Encodings21__BlobLayout *bl,
                          bri_error *err) {
  bri_leaf_page *out = io->out;
  bri_dec *d = io->dec;
  int rc;
  if (io->type->kind != BRI_LEAF_LEGACY_BLOB)
    return bri_error_set(err, BRI_EINVAL,
                         "page is a legacy BlobLayout; decode it with a BRI_LEAF_LEGACY_BLOB type");
  if (out->max_rep)
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "legacy BlobLayout inside a list is not supported (Lance keeps no "
                         "repetition for its valid items)");
  if (!bl->inner_layout)
    return bri_error_set(err, BRI_ECORRUPT, "BlobLayout has no inner layout");
  bri_leaf_page inner;
  memset(&inner, 0, sizeof inner);
  rc = bri_page_decode_layout(d, io->in, io->type, bl->inner_layout, 1, &inner, err);
  if (rc) {
    bri_leaf_page_dispose(&inner);
    return bri_error_wrap(err, "BlobLayout inner layout");
  }
  if (inner.rep || inner.def) {
    bri_leaf_page_dispose(&inner);
    return bri_error_set(err, BRI_ECORRUPT,
                         "BlobLayout inner layout has its own rep/def levels; expected none");
  }
  uint64_t n = inner.values.n;
  const bri_values *pos = &inner.values.children[0], *size = &inner.values.children[1];
  if (out->max_def &&
      !(out->def = bri_dec_alloc(d, n * 2 + 2, "definition levels", err))) {
    bri_leaf_page_dispose(&inner);
    return err->code;
  }
  for (uint64_t i = 0; i < n; i++) {
    uint64_t p = bri_values_get_uint(pos, i, 0), s = bri_values_get_uint(size, i, 0);
    uint16_t def = 0;
    if (s == 0 && p != 0) {
      def = (uint16_t)(p >> 16);
      if ((p & 0xFFFF) != 0 || (p >> 32) != 0 || def == 0) {
        bri_leaf_page_dispose(&inner);
        return bri_error_set(err, BRI_ECORRUPT,
                             "blob descriptor %llu marks a null with position 0x%llx; expected "
                             "def << 16 with rep 0",
                             (unsigned long long)i, (unsigned long long)p);
      }
    }
    if (out->def) out->def[i] = def;
    else if (def) {
      bri_leaf_page_dispose(&inner);
      return bri_error_set(err, BRI_ECORRUPT,
                           "blob descriptor %llu marks a null but the layers allow none",
                           (unsigned long long)i);
    }
  }
  out->n_levels = n;
  /* Invisible items (def above max_visible_def) have no slot: drop theirs. */
  if (out->def && out->max_visible_def < out->max_def) {
    bri_values kept;
    if ((rc = bri_values_init(&kept, io->type, err))) goto fail;
    for (uint64_t i = 0; i < n; i++) {
      if (out->def[i] > out->max_visible_def) continue;
      if ((rc = bri_values_append_from(d, &kept, &inner.values, i, err))) {
        bri_values_dispose(&kept);
        goto fail;
      }
    }
    bri_values_dispose(&out->values);
    out->values = kept;
  } else {
    bri_values_dispose(&out->values);
    out->values = inner.values;
    memset(&inner.values, 0, sizeof inner.values);
  }
  bri_leaf_page_dispose(&inner);
  return 0;
fail:
  bri_leaf_page_dispose(&inner);
  return rc;
}
