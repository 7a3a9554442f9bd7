/* arena.h: a bump allocator for metadata that lives and dies together.
 *
 * Decoding a data file's metadata or a manifest makes thousands of small
 * protobuf-c allocations that are all freed at once when the file or the
 * manifest is closed; malloc and free of each one cost more than decoding
 * (SCALE profile). An arena hands out memory from chunks it owns and frees
 * only the chunks. bri_arena_pb gives protobuf-c an allocator backed by the
 * arena: messages unpacked with it must never be freed one by one (their
 * free_unpacked with it does nothing), only with the arena. Chunks start
 * small and double up to a cap, so a tiny file costs one small chunk and a
 * large one O(log n) mallocs; one allocation larger than the cap gets a
 * chunk of its own. Not thread-safe: one owner at a time. */
#ifndef BRI_ARENA_H
#define BRI_ARENA_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>

typedef struct bri_arena_chunk bri_arena_chunk;

typedef struct bri_arena {
  bri_arena_chunk *head; /* the chunk being filled; older ones follow */
  size_t first;          /* size of the first chunk */
  size_t next_size;      /* size of the next chunk */
  size_t allocated;      /* bytes of all chunks, for memory accounting */
  ProtobufCAllocator pb; /* bri_arena_pb */
} bri_arena;

/* An empty arena (no memory until the first allocation). first: the size
 * of the first chunk (0: 4 KiB). */
void bri_arena_init(bri_arena *a, size_t first);
/* n bytes aligned for any type, or NULL out of memory. */
void *bri_arena_alloc(bri_arena *a, size_t n);
/* Frees every chunk; the arena is empty and usable again. */
void bri_arena_clear(bri_arena *a);
/* The protobuf-c allocator of this arena (valid while the arena lives). */
ProtobufCAllocator *bri_arena_pb(bri_arena *a);

#endif
