/* bytes.h: little-endian loads and stores, a bounds-checked reader, and the
 * order of uint64_t values.
 *
 * Lance's on-disk integers are little-endian. Parsers never index a buffer
 * directly with an offset they read from disk: they go through bri_cursor,
 * whose every take checks the remaining length first. */
#ifndef BRI_BYTES_H
#define BRI_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t bri_le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t bri_le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t bri_le64(const uint8_t *p) {
  return (uint64_t)bri_le32(p) | (uint64_t)bri_le32(p + 4) << 32;
}
static inline void bri_put_le16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void bri_put_le32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline void bri_put_le64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* The order of uint64_t values, for qsort and bsearch. */
static inline int bri_cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* A read-only window over bytes. pos never exceeds len. */
typedef struct bri_cursor {
  const uint8_t *data;
  size_t len;
  size_t pos;
} bri_cursor;

static inline bri_cursor bri_cursor_make(const uint8_t *data, size_t len) {
  bri_cursor c = {data, len, 0};
  return c;
}
static inline size_t bri_cursor_left(const bri_cursor *c) { return c->len - c->pos; }
/* Returns a pointer to the next n bytes and advances, or NULL if fewer remain. */
static inline const uint8_t *bri_cursor_take(bri_cursor *c, size_t n) {
  if (n > c->len - c->pos) return NULL;
  const uint8_t *p = c->data + c->pos;
  c->pos += n;
  return p;
}

/* a + b without wrap-around: false when it would overflow. */
static inline bool bri_add_ok(uint64_t a, uint64_t b, uint64_t *out) {
  if (a > UINT64_MAX - b) return false;
  *out = a + b;
  return true;
}
/* [off, off+len) lies inside [0, total). */
static inline bool bri_range_ok(uint64_t off, uint64_t len, uint64_t total) {
  return off <= total && len <= total - off;
}

#endif
