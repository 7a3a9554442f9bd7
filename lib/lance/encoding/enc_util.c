/* enc_util.c: the growable buffer, the protobuf arena and the
 * CompressiveEncoding constructors of the page encoders (enc_internal.h).
 *
 * The arena is a chain of malloc'd blocks; a page encoding allocates a few
 * dozen small messages, so blocks of 4 KiB with an oversize escape are plenty
 * and the whole tree is released with one walk. */
#include <stdlib.h>
#include <string.h>

#include "google/protobuf/any.pb-c.h"
#include "lance/encoding/enc_internal.h"

/* ---- buffer ---------------------------------------------------------------- */

int bri_ebuf_reserve(bri_ebuf *b, size_t more, bri_error *err) {
  if (b->cap - b->len >= more) return 0;
  if (more > SIZE_MAX / 2 - b->len)
    return bri_error_set(err, BRI_ENOMEM, "page encoder: buffer of %zu + %zu bytes is too large",
                         b->len, more);
  size_t cap = b->cap ? b->cap : 256;
  while (cap - b->len < more) cap *= 2;
  uint8_t *p = realloc(b->p, cap);
  if (!p) return bri_error_set(err, BRI_ENOMEM, "page encoder: out of memory (%zu bytes)", cap);
  b->p = p;
  b->cap = cap;
  return 0;
}

int bri_ebuf_put(bri_ebuf *b, const void *src, size_t n, bri_error *err) {
  if (!n) return 0;
  int rc = bri_ebuf_reserve(b, n, err);
  if (rc) return rc;
  memcpy(b->p + b->len, src, n);
  b->len += n;
  return 0;
}

int bri_ebuf_fill(bri_ebuf *b, uint8_t byte, size_t n, bri_error *err) {
  if (!n) return 0;
  int rc = bri_ebuf_reserve(b, n, err);
  if (rc) return rc;
  memset(b->p + b->len, byte, n);
  b->len += n;
  return 0;
}

int bri_ebuf_pad(bri_ebuf *b, size_t base, size_t align, uint8_t byte, bri_error *err) {
  size_t used = (b->len - base) % align;
  return used ? bri_ebuf_fill(b, byte, align - used, err) : 0;
}

int bri_ebuf_put_le(bri_ebuf *b, uint64_t v, unsigned bytes, bri_error *err) {
  uint8_t tmp[8];
  for (unsigned i = 0; i < bytes; i++) tmp[i] = (uint8_t)(v >> (8 * i));
  return bri_ebuf_put(b, tmp, bytes, err);
}

void bri_ebuf_dispose(bri_ebuf *b) {
  free(b->p);
  b->p = NULL;
  b->len = b->cap = 0;
}

uint8_t *bri_ebuf_take(bri_ebuf *b) {
  uint8_t *p = b->len ? b->p : NULL;
  if (!p) free(b->p);
  b->p = NULL;
  b->len = b->cap = 0;
  return p;
}

/* ---- arena ------------------------------------------------------------------- */

typedef struct pba_block {
  struct pba_block *next;
  size_t used, size;
  max_align_t data[];
} pba_block;

#define PBA_BLOCK 4096

void *bri_pba_alloc(bri_pb_arena *a, size_t n) {
  n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
  pba_block *b = a->head;
  if (!b || b->size - b->used < n) {
    size_t size = n > PBA_BLOCK ? n : PBA_BLOCK;
    b = calloc(1, sizeof *b + size);
    if (!b) return NULL;
    b->size = size;
    b->next = a->head;
    a->head = b;
  }
  void *p = (uint8_t *)b->data + b->used;
  b->used += n;
  return p;
}

void bri_pba_dispose(bri_pb_arena *a) {
  for (pba_block *b = a->head, *n; b; b = n) {
    n = b->next;
    free(b);
  }
  a->head = NULL;
}

/* ---- CompressiveEncoding constructors ----------------------------------------- */

#define NEW(a, T, init)             \
  T *m = bri_pba_alloc((a), sizeof(T)); \
  if (!m) return NULL;              \
  init(m)

static bri_cenc *wrap(bri_pb_arena *a, int which, void *inner) {
  if (!inner) return NULL;
  NEW(a, bri_cenc, lance__encodings21__compressive_encoding__init);
  m->compression_case = (Lance__Encodings21__CompressiveEncoding__CompressionCase)which;
  /* every member of the union is a pointer */
  m->flat = inner;
  return m;
}

bri_cenc *bri_pbe_flat(bri_pb_arena *a, uint64_t bits) {
  NEW(a, Lance__Encodings21__Flat, lance__encodings21__flat__init);
  if (bits) {
    m->has_bits_per_value = 1;
    m->bits_per_value = bits;
  }
  return wrap(a, LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION_FLAT, m);
}

bri_cenc *bri_pbe_variable(bri_pb_arena *a, uint64_t offset_bits) {
  bri_cenc *off = bri_pbe_flat(a, offset_bits);
  if (!off) return NULL;
  NEW(a, Lance__Encodings21__Variable, lance__encodings21__variable__init);
  m->offsets = off;
  return wrap(a, LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION_VARIABLE, m);
}

bri_cenc *bri_pbe_inline_bp(bri_pb_arena *a, uint64_t bits) {
  NEW(a, Lance__Encodings21__InlineBitpacking, lance__encodings21__inline_bitpacking__init);
  m->has_uncompressed_bits_per_value = 1;
  m->uncompressed_bits_per_value = bits;
  return wrap(a, LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION_INLINE_BITPACKING, m);
}

bri_cenc *bri_pbe_outofline_bp(bri_pb_arena *a, uint64_t bits, uint64_t packed_bits) {
  bri_cenc *vals = bri_pbe_flat(a, packed_bits);
  if (!vals) return NULL;
  NEW(a, Lance__Encodings21__OutOfLineBitpacking, lance__encodings21__out_of_line_bitpacking__init);
  m->has_uncompressed_bits_per_value = 1;
  m->uncompressed_bits_per_value = bits;
  m->values = vals;
  return wrap(a, LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION_OUT_OF_LINE_BITPACKING, m);
}

bri_cenc *bri_pbe_general(bri_pb_arena *a, int scheme, int level, bri_cenc *inner) {
  if (!inner) return NULL;
  Lance__Encodings21__BufferCompression *bc = bri_pba_alloc(a, sizeof *bc);
  if (!bc) return NULL;
  lance__encodings21__buffer_compression__init(bc);
  bc->has_scheme = 1;
  bc->scheme = (Lance__Encodings21__CompressionScheme)scheme;
  if (level) {
    bc->has_level = 1;
    bc->level = level;
  }
  NEW(a, Lance__Encodings21__General, lance__encodings21__general__init);
  m->compression = bc;
  m->values = inner;
  return wrap(a, LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION_GENERAL, m);
}

bri_cenc *bri_pbe_fsl(bri_pb_arena *a, uint64_t dim, bool has_validity, bri_cenc *inner) {
  if (!inner) return NULL;
  NEW(a, Lance__Encodings21__FixedSizeList, lance__encodings21__fixed_size_list__init);
  m->has_items_per_value = 1;
  m->items_per_value = dim;
  if (has_validity) {
    m->has_has_validity = 1;
    m->has_validity = 1;
  }
  m->values = inner;
  return wrap(a, LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION_FIXED_SIZE_LIST, m);
}

bri_cenc *bri_pbe_rle(bri_pb_arena *a, uint64_t bits) {
  bri_cenc *vals = bri_pbe_flat(a, bits), *lens = bri_pbe_flat(a, 8);
  if (!vals || !lens) return NULL;
  NEW(a, Lance__Encodings21__Rle, lance__encodings21__rle__init);
  m->values = vals;
  m->run_lengths = lens;
  return wrap(a, LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION_RLE, m);
}

Lance__Encodings21__RepDefLayer *bri_pbe_layers(bri_pb_arena *a, const uint8_t *layers, size_t n) {
  Lance__Encodings21__RepDefLayer *l = bri_pba_alloc(a, (n ? n : 1) * sizeof *l);
  if (!l) return NULL;
  for (size_t i = 0; i < n; i++) l[i] = (Lance__Encodings21__RepDefLayer)layers[i];
  return l;
}

int bri_pbe_pack_page(const Lance__Encodings21__PageLayout *pl, uint8_t **out, size_t *len,
                      bri_error *err) {
  size_t inner = lance__encodings21__page_layout__get_packed_size(pl);
  uint8_t *ib = malloc(inner ? inner : 1);
  if (!ib) return bri_error_set(err, BRI_ENOMEM, "page encoder: out of memory");
  lance__encodings21__page_layout__pack(pl, ib);
  Google__Protobuf__Any any = GOOGLE__PROTOBUF__ANY__INIT;
  any.type_url = (char *)BRI_PAGE_LAYOUT_TYPE_URL;
  any.has_value = 1;
  any.value.data = ib;
  any.value.len = inner;
  size_t total = google__protobuf__any__get_packed_size(&any);
  uint8_t *ob = malloc(total);
  if (!ob) {
    free(ib);
    return bri_error_set(err, BRI_ENOMEM, "page encoder: out of memory");
  }
  google__protobuf__any__pack(&any, ob);
  free(ib);
  *out = ob;
  *len = total;
  return 0;
}

/* ---- bits ---------------------------------------------------------------------- */

void bri_enc_bits_extract(uint8_t *dst, const uint8_t *src, uint64_t src_bit, uint64_t n) {
  uint64_t nbytes = (n + 7) / 8;
  if (src_bit % 8 == 0) {
    memcpy(dst, src + src_bit / 8, (size_t)nbytes);
  } else {
    unsigned s = (unsigned)(src_bit % 8);
    const uint8_t *p = src + src_bit / 8;
    uint64_t src_last = (src_bit + n - 1) / 8 - src_bit / 8; /* last readable byte index */
    for (uint64_t i = 0; i < nbytes; i++) {
      unsigned v = p[i] >> s;
      if (i + 1 <= src_last) v |= (unsigned)p[i + 1] << (8 - s);
      dst[i] = (uint8_t)v;
    }
  }
  if (n % 8) dst[nbytes - 1] &= (uint8_t)((1u << (n % 8)) - 1);
}

/* ---- bit widths ---------------------------------------------------------------- */

/* Bit width of the n T-bit values at p: the length of their OR (the values
 * are unsigned words; a negative signed value takes the full width). */
unsigned bri_enc_bit_width(const uint8_t *p, unsigned t, uint64_t n) {
  uint64_t acc = 0;
  switch (t) {
  case 8:
    for (uint64_t i = 0; i < n; i++) acc |= p[i];
    break;
  case 16:
    for (uint64_t i = 0; i < n; i++) {
      uint16_t v;
      memcpy(&v, p + 2 * i, 2);
      acc |= v;
    }
    break;
  case 32:
    for (uint64_t i = 0; i < n; i++) {
      uint32_t v;
      memcpy(&v, p + 4 * i, 4);
      acc |= v;
    }
    break;
  default:
    for (uint64_t i = 0; i < n; i++) {
      uint64_t v;
      memcpy(&v, p + 8 * i, 8);
      acc |= v;
    }
  }
  return acc ? 64 - (unsigned)__builtin_clzll(acc) : 0;
}

/* ---- value sizes ----------------------------------------------------------------- */

uint64_t bri_enc_slot_bytes(const bri_values *v) {
  uint64_t e = v->elems_per_slot ? v->elems_per_slot : 1;
  return e * v->bits / 8;
}

uint64_t bri_enc_max_value_bytes(const bri_values *v) {
  switch (v->kind) {
  case BRI_LEAF_FIXED: {
    uint64_t e = v->elems_per_slot ? v->elems_per_slot : 1;
    return (e * v->bits + 7) / 8;
  }
  case BRI_LEAF_VARIABLE: {
    uint64_t m = 0;
    for (uint64_t i = 0; i < v->n; i++) {
      uint64_t l = (uint64_t)(v->offsets[i + 1] - v->offsets[i]);
      if (l > m) m = l;
    }
    return m;
  }
  case BRI_LEAF_STRUCT: {
    uint64_t s = 0;
    for (size_t c = 0; c < v->n_children; c++) s += bri_enc_max_value_bytes(&v->children[c]);
    return s;
  }
  default:
    return 0;
  }
}
