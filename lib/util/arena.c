/* arena.c: chunked bump allocation (see arena.h). Chunks are a singly
 * linked list, newest first; an allocation that does not fit the newest
 * chunk opens a new one (what is left of the old one is not used again:
 * less than a quarter of a chunk, since larger allocations get a chunk of
 * their own behind the one being filled). */
#include "util/arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>

enum { CHUNK_MAX = 1 << 20 };

struct bri_arena_chunk {
  bri_arena_chunk *next;
  size_t size, used;
  alignas(max_align_t) unsigned char data[];
};

static void *pb_alloc(void *user, size_t n) { return bri_arena_alloc(user, n); }
static void pb_free(void *user, void *p) { (void)user, (void)p; }

void bri_arena_init(bri_arena *a, size_t first) {
  a->head = NULL;
  a->first = first ? first : 4096;
  a->next_size = a->first;
  a->allocated = 0;
  a->pb.alloc = pb_alloc;
  a->pb.free = pb_free;
  a->pb.allocator_data = a;
}

static bri_arena_chunk *new_chunk(bri_arena *a, size_t size) {
  if (size > SIZE_MAX - sizeof(bri_arena_chunk)) return NULL;
  bri_arena_chunk *c = malloc(sizeof *c + size);
  if (!c) return NULL;
  c->size = size, c->used = 0, c->next = NULL;
  a->allocated += size;
  return c;
}

void *bri_arena_alloc(bri_arena *a, size_t n) {
  const size_t align = alignof(max_align_t);
  if (n > SIZE_MAX - align) return NULL;
  n = (n + align - 1) & ~(align - 1);
  bri_arena_chunk *c = a->head;
  if (c && c->size - c->used >= n) {
    void *p = c->data + c->used;
    c->used += n;
    return p;
  }
  if (c && n > a->next_size / 4) {
    /* a large allocation: a chunk of its own behind the one being filled */
    bri_arena_chunk *big = new_chunk(a, n);
    if (!big) return NULL;
    big->used = n;
    big->next = c->next;
    c->next = big;
    return big->data;
  }
  c = new_chunk(a, n > a->next_size ? n : a->next_size);
  if (!c) return NULL;
  if (a->next_size < CHUNK_MAX) a->next_size *= 2;
  c->next = a->head;
  a->head = c;
  c->used = n;
  return c->data;
}

void bri_arena_clear(bri_arena *a) {
  for (bri_arena_chunk *c = a->head, *next; c; c = next) {
    next = c->next;
    free(c);
  }
  bri_arena_init(a, a->first);
}

ProtobufCAllocator *bri_arena_pb(bri_arena *a) { return &a->pb; }
