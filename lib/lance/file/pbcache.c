/* pbcache.c: the shared message cache (see pbcache.h). An open-addressing
 * hash table (64-bit FNV-1a of the bytes, mixed with the descriptor) over
 * entries that live, with their bytes and decoded messages, in one arena. */
#include "lance/file/pbcache.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/arena.h"
#include "util/pbcheck.h"

enum { SLOTS = 2 * BRI_PBCACHE_MAX }; /* power of two, at most half full */

typedef struct entry {
  uint64_t hash;
  const ProtobufCMessageDescriptor *desc;
  size_t len;
  const uint8_t *bytes;
  const ProtobufCMessage *msg;
} entry;

struct bri_pbcache {
  pthread_mutex_t lock;
  size_t n;
  bool full;
  entry *slots[SLOTS];
  bri_arena arena;
};

static uint64_t hash_of(const ProtobufCMessageDescriptor *desc, const uint8_t *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ULL ^ (uint64_t)(uintptr_t)desc;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) { /* eight bytes a step: layouts are short, schemas are not */
    uint64_t w;
    memcpy(&w, p + i, 8);
    h = (h ^ w) * 0x100000001b3ULL;
    h ^= h >> 29;
  }
  for (; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h ^ (h >> 32);
}

bri_pbcache *bri_pbcache_new(void) {
  bri_pbcache *c = calloc(1, sizeof *c);
  if (c && pthread_mutex_init(&c->lock, NULL) != 0) {
    free(c);
    return NULL;
  }
  if (c) bri_arena_init(&c->arena, 16384);
  return c;
}

void bri_pbcache_free(bri_pbcache *c) {
  if (!c) return;
  bri_arena_clear(&c->arena);
  pthread_mutex_destroy(&c->lock);
  free(c);
}

/* The slot of (desc, bytes): its entry, or the empty slot where it goes. */
static entry **find(bri_pbcache *c, uint64_t h, const ProtobufCMessageDescriptor *desc,
                    const uint8_t *bytes, size_t len) {
  for (size_t i = h & (SLOTS - 1);; i = (i + 1) & (SLOTS - 1)) {
    entry *e = c->slots[i];
    if (!e || (e->hash == h && e->desc == desc && e->len == len && !memcmp(e->bytes, bytes, len)))
      return &c->slots[i];
  }
}

const ProtobufCMessage *bri_pbcache_get(bri_pbcache *c, const ProtobufCMessageDescriptor *desc,
                                        const uint8_t *bytes, size_t len, const uint8_t **key) {
  if (!len) bytes = (const uint8_t *)""; /* an empty message: no NULL into memcmp */
  uint64_t h = hash_of(desc, bytes, len);
  pthread_mutex_lock(&c->lock);
  entry **slot = find(c, h, desc, bytes, len);
  entry *e = *slot;
  if (!e && !c->full) {
    /* decode into the arena; a failed or refused entry leaves its bytes
     * there (bounded: the cache stops taking entries at its budget) */
    ProtobufCMessage *m = NULL;
    e = bri_arena_alloc(&c->arena, sizeof *e);
    uint8_t *copy = e ? bri_arena_alloc(&c->arena, len) : NULL;
    if (copy) {
      if (len) memcpy(copy, bytes, len);
      if (bri_pb_unpack_in(bri_arena_pb(&c->arena), desc, copy, len, 0, "", "cached message", &m,
                           NULL) != 0)
        m = NULL;
    }
    if (m) {
      *e = (entry){h, desc, len, copy, m};
      *slot = e;
      c->full = ++c->n >= BRI_PBCACHE_MAX || c->arena.allocated >= BRI_PBCACHE_BYTES;
    } else {
      e = NULL;
      c->full |= c->arena.allocated >= BRI_PBCACHE_BYTES;
    }
  }
  pthread_mutex_unlock(&c->lock);
  if (!e) return NULL;
  if (key) *key = e->bytes;
  return e->msg;
}
