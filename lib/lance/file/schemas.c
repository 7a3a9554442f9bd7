/* schemas.c: the shared schema cache (see schemas.h). A small array
 * searched by a 64-bit FNV-1a hash of the bytes, then by the bytes: a table
 * has a handful of schemas, so nothing cleverer pays. Each entry owns an
 * arena holding its bytes and the decoded message. */
#include "lance/file/schemas.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/arena.h"
#include "util/pbcheck.h"

typedef struct entry {
  uint64_t hash;
  size_t len;
  const uint8_t *bytes;
  const Lance__File__Schema *schema;
  bri_arena arena;
} entry;

struct bri_schemas {
  pthread_mutex_t lock;
  size_t n;
  entry *e[BRI_SCHEMAS_MAX];
};

static uint64_t fnv1a(const uint8_t *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

bri_schemas *bri_schemas_new(void) {
  bri_schemas *c = calloc(1, sizeof *c);
  if (c && pthread_mutex_init(&c->lock, NULL) != 0) {
    free(c);
    return NULL;
  }
  return c;
}

void bri_schemas_free(bri_schemas *c) {
  if (!c) return;
  for (size_t i = 0; i < c->n; i++) {
    bri_arena_clear(&c->e[i]->arena);
    free(c->e[i]);
  }
  pthread_mutex_destroy(&c->lock);
  free(c);
}

static const entry *find(const bri_schemas *c, uint64_t h, const uint8_t *bytes, size_t len) {
  for (size_t i = 0; i < c->n; i++)
    if (c->e[i]->hash == h && c->e[i]->len == len && !memcmp(c->e[i]->bytes, bytes, len))
      return c->e[i];
  return NULL;
}

const Lance__File__Schema *bri_schemas_get(bri_schemas *c, const uint8_t *bytes, size_t len,
                                           const uint8_t **key) {
  uint64_t h = fnv1a(bytes, len);
  pthread_mutex_lock(&c->lock);
  const entry *hit = find(c, h, bytes, len);
  bool full = c->n == BRI_SCHEMAS_MAX;
  pthread_mutex_unlock(&c->lock);
  if (!hit && full) return NULL;
  if (!hit) {
    /* decode outside the lock; two threads may both decode a new schema,
     * the first to insert wins and the other's copy is dropped */
    entry *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    bri_arena_init(&e->arena, len < 1024 ? 4096 : len * 4);
    uint8_t *copy = bri_arena_alloc(&e->arena, len);
    ProtobufCMessage *m = NULL;
    if (copy) {
      memcpy(copy, bytes, len);
      if (bri_pb_unpack_in(bri_arena_pb(&e->arena), &lance__file__schema__descriptor, copy, len, 0,
                           "", "schema", &m, NULL) != 0)
        m = NULL;
    }
    if (!m) {
      bri_arena_clear(&e->arena);
      free(e);
      return NULL;
    }
    e->hash = h, e->len = len, e->bytes = copy, e->schema = (const Lance__File__Schema *)m;
    pthread_mutex_lock(&c->lock);
    hit = find(c, h, bytes, len);
    if (!hit && c->n < BRI_SCHEMAS_MAX) hit = c->e[c->n++] = e;
    pthread_mutex_unlock(&c->lock);
    if (hit != e) {
      bri_arena_clear(&e->arena);
      free(e);
      if (!hit) return NULL;
    }
  }
  if (key) *key = hit->bytes;
  return hit->schema;
}
