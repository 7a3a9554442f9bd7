/* arrow_build.c: growable buffers, lazy bitmaps and Arrow C Data Interface
 * export (see arrow_build.h). Growth doubles capacity so that appending n
 * items costs O(n) overall; every size computation is checked for overflow
 * and a failed allocation is BRI_ENOMEM, leaving the buffer as it was. */
#include "lance/file/arrow_build.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "util/bytes.h"

/* Largest single buffer we ever try to allocate: far above anything real,
 * low enough that size arithmetic (bits <-> bytes, doubling) never wraps. */
#define GROW_MAX ((uint64_t)1 << 60)

/* ---- bytes ---------------------------------------------------------------- */
int bri_growbuf_reserve(bri_growbuf *b, uint64_t more, bri_error *err) {
  uint64_t need;
  if (!bri_add_ok(b->len, more, &need) || need > GROW_MAX)
    return bri_error_set(err, BRI_ENOMEM, "buffer of %llu + %llu bytes is too large",
                         (unsigned long long)b->len, (unsigned long long)more);
  if (need <= b->cap) return 0;
  uint64_t cap = b->cap ? b->cap : 64;
  while (cap < need) cap *= 2;
  if (cap > SIZE_MAX) return bri_error_set(err, BRI_ENOMEM, "buffer of %llu bytes does not fit in memory", (unsigned long long)cap);
  uint8_t *p = realloc(b->p, (size_t)cap);
  if (!p)
    return bri_error_set(err, BRI_ENOMEM, "out of memory growing a buffer to %llu bytes",
                         (unsigned long long)cap);
  b->p = p;
  b->cap = cap;
  return 0;
}

int bri_growbuf_append(bri_growbuf *b, const void *src, uint64_t n, bri_error *err) {
  if (!n) return 0;
  int rc = bri_growbuf_reserve(b, n, err);
  if (rc) return rc;
  memcpy(b->p + b->len, src, (size_t)n);
  b->len += n;
  return 0;
}

int bri_growbuf_append_zeros(bri_growbuf *b, uint64_t n, bri_error *err) {
  if (!n) return 0;
  int rc = bri_growbuf_reserve(b, n, err);
  if (rc) return rc;
  memset(b->p + b->len, 0, (size_t)n);
  b->len += n;
  return 0;
}

void bri_growbuf_dispose(bri_growbuf *b) {
  free(b->p);
  b->p = NULL;
  b->len = b->cap = 0;
}

int bri_growbuf_take(bri_growbuf *b, void **out, bri_error *err) {
  if (!b->p) {
    int rc = bri_growbuf_reserve(b, 1, err);
    if (rc) return rc;
  }
  *out = b->p;
  b->p = NULL;
  b->len = b->cap = 0;
  return 0;
}

/* ---- bits ----------------------------------------------------------------- */
void bri_bits_move(uint8_t *dst, uint64_t d, const uint8_t *src, uint64_t s, uint64_t n) {
  if (!n) return;
  if (((d | s) & 7) == 0) {
    /* Both byte aligned: whole bytes, then the tail bit by bit. */
    uint64_t whole = n >> 3;
    memcpy(dst + (d >> 3), src + (s >> 3), (size_t)whole);
    d += whole << 3;
    s += whole << 3;
    n &= 7;
  }
  if ((d & 7) == 0 && n >= 8) {
    /* Destination aligned: assemble each output byte from two source bytes. */
    unsigned sh = (unsigned)(s & 7);
    while (n >= 8) {
      const uint8_t *q = src + (s >> 3);
      uint8_t v = (uint8_t)(q[0] >> sh);
      if (sh) v |= (uint8_t)(q[1] << (8 - sh));
      dst[d >> 3] = v;
      d += 8;
      s += 8;
      n -= 8;
    }
  }
  for (uint64_t i = 0; i < n; i++) {
    int bit = (src[(s + i) >> 3] >> ((s + i) & 7)) & 1;
    uint8_t m = (uint8_t)(1u << ((d + i) & 7));
    if (bit)
      dst[(d + i) >> 3] |= m;
    else
      dst[(d + i) >> 3] &= (uint8_t)~m;
  }
}

static uint64_t popcount_range(const uint8_t *p, uint64_t s, uint64_t n) {
  uint64_t c = 0;
  while (n && (s & 7)) {
    c += (p[s >> 3] >> (s & 7)) & 1;
    s++;
    n--;
  }
  const uint8_t *q = p + (s >> 3);
  uint64_t bytes = n >> 3;
  for (uint64_t i = 0; i < bytes; i++) c += (uint64_t)__builtin_popcount(q[i]);
  s += bytes << 3;
  n &= 7;
  for (uint64_t i = 0; i < n; i++) c += (p[(s + i) >> 3] >> ((s + i) & 7)) & 1;
  return c;
}

/* Grows the storage to hold `need` bits; a lazy bitmap that has no storage
 * yet gets its first `len` bits set to 1. */
static int bitbuf_grow(bri_bitbuf *b, uint64_t need, bri_error *err) {
  if (need > GROW_MAX)
    return bri_error_set(err, BRI_ENOMEM, "bitmap of %llu bits is too large",
                         (unsigned long long)need);
  if (b->p && need <= b->cap) return 0;
  uint64_t cap = b->cap ? b->cap : 512;
  while (cap < need) cap *= 2;
  uint64_t old_bytes = b->cap >> 3, bytes = cap >> 3;
  uint8_t *p = realloc(b->p, (size_t)bytes);
  if (!p)
    return bri_error_set(err, BRI_ENOMEM, "out of memory growing a bitmap to %llu bits",
                         (unsigned long long)cap);
  if (!b->p) {
    /* First materialization: every bit so far was 1. */
    memset(p, 0, (size_t)bytes);
    memset(p, 0xff, (size_t)(b->len >> 3));
    for (uint64_t i = b->len & ~(uint64_t)7; i < b->len; i++) p[i >> 3] |= (uint8_t)(1u << (i & 7));
  } else {
    memset(p + old_bytes, 0, (size_t)(bytes - old_bytes));
  }
  b->p = p;
  b->cap = cap;
  return 0;
}

int bri_bitbuf_reserve(bri_bitbuf *b, uint64_t more, bri_error *err) {
  uint64_t need;
  if (!bri_add_ok(b->len, more, &need))
    return bri_error_set(err, BRI_ENOMEM, "bitmap of %llu + %llu bits is too large",
                         (unsigned long long)b->len, (unsigned long long)more);
  if (!b->p && !b->dense) return need > GROW_MAX ? bitbuf_grow(b, need, err) : 0;
  return bitbuf_grow(b, need, err);
}

int bri_bitbuf_materialize(bri_bitbuf *b, uint64_t more, bri_error *err) {
  uint64_t need;
  if (!bri_add_ok(b->len, more, &need))
    return bri_error_set(err, BRI_ENOMEM, "bitmap of %llu + %llu bits is too large",
                         (unsigned long long)b->len, (unsigned long long)more);
  return bitbuf_grow(b, need ? need : 1, err);
}

int bri_bitbuf_push_slow(bri_bitbuf *b, int bit, bri_error *err) {
  int rc = bitbuf_grow(b, b->len + 1, err);
  if (rc) return rc;
  if (bit)
    b->p[b->len >> 3] |= (uint8_t)(1u << (b->len & 7));
  else
    b->zeros++;
  b->len++;
  return 0;
}

int bri_bitbuf_append_run(bri_bitbuf *b, int bit, uint64_t n, bri_error *err) {
  if (!n) return 0;
  uint64_t need;
  if (!bri_add_ok(b->len, n, &need))
    return bri_error_set(err, BRI_ENOMEM, "bitmap too large");
  if (!b->p && !b->dense && bit) {
    if (need > GROW_MAX) return bitbuf_grow(b, need, err);
    b->len = need;
    return 0;
  }
  int rc = bitbuf_grow(b, need, err);
  if (rc) return rc;
  if (bit) {
    uint64_t i = b->len;
    while (i < need && (i & 7)) {
      b->p[i >> 3] |= (uint8_t)(1u << (i & 7));
      i++;
    }
    if (i < need) {
      uint64_t whole = (need - i) >> 3;
      memset(b->p + (i >> 3), 0xff, (size_t)whole);
      i += whole << 3;
    }
    for (; i < need; i++) b->p[i >> 3] |= (uint8_t)(1u << (i & 7));
  } else {
    b->zeros += n; /* storage is zero-filled past len */
  }
  b->len = need;
  return 0;
}

int bri_bitbuf_append_bits(bri_bitbuf *b, const uint8_t *src, uint64_t src_bit, uint64_t n,
                           bri_error *err) {
  if (!n) return 0;
  uint64_t ones = popcount_range(src, src_bit, n);
  if (!b->p && !b->dense && ones == n) {
    b->len += n;
    return 0;
  }
  int rc = bitbuf_grow(b, b->len + n, err);
  if (rc) return rc;
  bri_bits_move(b->p, b->len, src, src_bit, n);
  b->zeros += n - ones;
  b->len += n;
  return 0;
}

bool bri_bitbuf_equal(const bri_bitbuf *a, const bri_bitbuf *b) {
  if (a->len != b->len || a->zeros != b->zeros) return false;
  /* zeros is exact, so a side without storage (all ones) equals the other
   * whenever the zero counts agree. */
  if (!a->p || !b->p) return true;
  uint64_t whole = a->len >> 3;
  if (memcmp(a->p, b->p, (size_t)whole)) return false;
  for (uint64_t i = whole << 3; i < a->len; i++)
    if (((a->p[i >> 3] ^ b->p[i >> 3]) >> (i & 7)) & 1) return false;
  return true;
}

void bri_bitbuf_dispose(bri_bitbuf *b) {
  free(b->p);
  b->p = NULL;
  b->len = b->cap = b->zeros = 0;
}

int bri_bitbuf_take(bri_bitbuf *b, void **out, bri_error *err) {
  *out = NULL;
  if (!b->p && !b->dense) {
    b->len = b->zeros = 0;
    return 0;
  }
  if (!b->p) {
    int rc = bitbuf_grow(b, b->len ? b->len : 1, err);
    if (rc) return rc;
  }
  *out = b->p;
  b->p = NULL;
  b->len = b->cap = b->zeros = 0;
  return 0;
}

/* ---- export --------------------------------------------------------------- */
typedef struct array_private {
  int64_t n_buffers;
  void **buffers;
  int64_t n_children;
  struct ArrowArray *child_storage;
  struct ArrowArray **child_ptrs;
} array_private;

static void array_release(struct ArrowArray *a) {
  if (!a || !a->release) return;
  array_private *pv = a->private_data;
  if (pv) {
    for (int64_t i = 0; i < pv->n_children; i++)
      if (pv->child_storage[i].release) pv->child_storage[i].release(&pv->child_storage[i]);
    for (int64_t i = 0; i < pv->n_buffers; i++) free(pv->buffers[i]);
    free(pv->buffers);
    free(pv->child_storage);
    free(pv->child_ptrs);
    free(pv);
  }
  a->release = NULL;
  a->private_data = NULL;
}

void bri_arrow_array_release(struct ArrowArray *a) {
  if (a && a->release) a->release(a);
}

void bri_arrow_schema_release(struct ArrowSchema *s) {
  if (s && s->release) s->release(s);
}

int bri_arrow_array_make(struct ArrowArray *out, int64_t length, int64_t null_count,
                         int64_t n_buffers, void **buffers, int64_t n_children,
                         struct ArrowArray *children, bri_error *err) {
  memset(out, 0, sizeof(*out));
  array_private *pv = calloc(1, sizeof(*pv));
  if (pv) {
    pv->buffers = calloc((size_t)(n_buffers ? n_buffers : 1), sizeof(void *));
    pv->child_storage = calloc((size_t)(n_children ? n_children : 1), sizeof(struct ArrowArray));
    pv->child_ptrs = calloc((size_t)(n_children ? n_children : 1), sizeof(struct ArrowArray *));
  }
  if (!pv || !pv->buffers || !pv->child_storage || !pv->child_ptrs) {
    if (pv) {
      free(pv->buffers);
      free(pv->child_storage);
      free(pv->child_ptrs);
      free(pv);
    }
    for (int64_t i = 0; i < n_buffers; i++) free(buffers[i]);
    for (int64_t i = 0; i < n_children; i++) bri_arrow_array_release(&children[i]);
    return bri_error_set(err, BRI_ENOMEM, "out of memory exporting an Arrow array");
  }
  pv->n_buffers = n_buffers;
  for (int64_t i = 0; i < n_buffers; i++) pv->buffers[i] = buffers[i];
  pv->n_children = n_children;
  for (int64_t i = 0; i < n_children; i++) {
    pv->child_storage[i] = children[i];
    children[i].release = NULL; /* moved */
    pv->child_ptrs[i] = &pv->child_storage[i];
  }
  out->length = length;
  out->null_count = null_count;
  out->offset = 0;
  out->n_buffers = n_buffers;
  out->n_children = n_children;
  out->buffers = (const void **)pv->buffers;
  out->children = n_children ? pv->child_ptrs : NULL;
  out->dictionary = NULL;
  out->release = array_release;
  out->private_data = pv;
  return 0;
}

typedef struct schema_private {
  char *format, *name, *metadata;
  int64_t n_children;
  struct ArrowSchema *child_storage;
  struct ArrowSchema **child_ptrs;
} schema_private;

static void schema_release(struct ArrowSchema *s) {
  if (!s || !s->release) return;
  schema_private *pv = s->private_data;
  if (pv) {
    for (int64_t i = 0; i < pv->n_children; i++)
      if (pv->child_storage[i].release) pv->child_storage[i].release(&pv->child_storage[i]);
    free(pv->format);
    free(pv->name);
    free(pv->metadata);
    free(pv->child_storage);
    free(pv->child_ptrs);
    free(pv);
  }
  s->release = NULL;
  s->private_data = NULL;
}

int bri_arrow_schema_make(struct ArrowSchema *out, const char *format, const char *name,
                          const char *metadata, size_t metadata_len, int64_t flags,
                          int64_t n_children, struct ArrowSchema *children, bri_error *err) {
  memset(out, 0, sizeof(*out));
  schema_private *pv = calloc(1, sizeof(*pv));
  bool ok = pv != NULL;
  if (ok) {
    pv->format = strdup(format);
    pv->name = strdup(name ? name : "");
    if (metadata) {
      pv->metadata = malloc(metadata_len ? metadata_len : 1);
      if (pv->metadata) memcpy(pv->metadata, metadata, metadata_len);
    }
    pv->child_storage = calloc((size_t)(n_children ? n_children : 1), sizeof(struct ArrowSchema));
    pv->child_ptrs = calloc((size_t)(n_children ? n_children : 1), sizeof(struct ArrowSchema *));
    ok = pv->format && pv->name && (!metadata || pv->metadata) && pv->child_storage &&
         pv->child_ptrs;
  }
  if (!ok) {
    if (pv) {
      free(pv->format);
      free(pv->name);
      free(pv->metadata);
      free(pv->child_storage);
      free(pv->child_ptrs);
      free(pv);
    }
    for (int64_t i = 0; i < n_children; i++) bri_arrow_schema_release(&children[i]);
    return bri_error_set(err, BRI_ENOMEM, "out of memory exporting an Arrow schema");
  }
  pv->n_children = n_children;
  for (int64_t i = 0; i < n_children; i++) {
    pv->child_storage[i] = children[i];
    children[i].release = NULL;
    pv->child_ptrs[i] = &pv->child_storage[i];
  }
  out->format = pv->format;
  out->name = pv->name;
  out->metadata = pv->metadata;
  out->flags = flags;
  out->n_children = n_children;
  out->children = n_children ? pv->child_ptrs : NULL;
  out->dictionary = NULL;
  out->release = schema_release;
  out->private_data = pv;
  return 0;
}

int bri_arrow_metadata_encode(size_t n, const char *const *keys, const uint8_t *const *values,
                              const size_t *value_lens, char **out, size_t *out_len,
                              bri_error *err) {
  *out = NULL;
  *out_len = 0;
  if (n > INT32_MAX) return bri_error_set(err, BRI_EINVAL, "too many metadata entries");
  uint64_t total = 4;
  for (size_t i = 0; i < n; i++) {
    size_t kl = strlen(keys[i]);
    if (kl > INT32_MAX || value_lens[i] > INT32_MAX)
      return bri_error_set(err, BRI_EINVAL, "metadata entry too long");
    total += 8 + (uint64_t)kl + value_lens[i];
  }
  if (total > INT32_MAX) return bri_error_set(err, BRI_EINVAL, "metadata too long");
  uint8_t *p = malloc((size_t)total);
  if (!p) return bri_error_set(err, BRI_ENOMEM, "out of memory encoding metadata");
  size_t pos = 0;
  bri_put_le32(p, (uint32_t)n);
  pos = 4;
  for (size_t i = 0; i < n; i++) {
    size_t kl = strlen(keys[i]);
    bri_put_le32(p + pos, (uint32_t)kl);
    memcpy(p + pos + 4, keys[i], kl);
    pos += 4 + kl;
    bri_put_le32(p + pos, (uint32_t)value_lens[i]);
    if (value_lens[i]) memcpy(p + pos + 4, values[i], value_lens[i]);
    pos += 4 + value_lens[i];
  }
  *out = (char *)p;
  *out_len = pos;
  return 0;
}

const char *bri_arrow_metadata_get(const char *metadata, const char *key, int32_t *len) {
  if (!metadata) return NULL;
  const uint8_t *p = (const uint8_t *)metadata;
  int32_t n = (int32_t)bri_le32(p);
  size_t pos = 4, kl = strlen(key);
  for (int32_t i = 0; i < n; i++) {
    int32_t klen = (int32_t)bri_le32(p + pos);
    const char *k = (const char *)p + pos + 4;
    pos += 4 + (size_t)klen;
    int32_t vlen = (int32_t)bri_le32(p + pos);
    const char *v = (const char *)p + pos + 4;
    pos += 4 + (size_t)vlen;
    if ((size_t)klen == kl && !memcmp(k, key, kl)) {
      if (len) *len = vlen;
      return v;
    }
  }
  return NULL;
}
