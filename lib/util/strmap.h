/* strmap.h: a string-keyed hash map with two u64 values per key, for the
 * dedupe tables of compaction (terminal sidecar -> new local id, copied
 * range -> new position). Open addressing, grows at 70% load; keys are
 * copied. */
#ifndef BRI_STRMAP_H
#define BRI_STRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct bri_strmap_entry {
  char *key;
  uint64_t a, b;
} bri_strmap_entry;

typedef struct bri_strmap {
  bri_strmap_entry *slots;
  size_t cap, n;
} bri_strmap;

/* The entry of key, or NULL. */
bri_strmap_entry *bri_strmap_get(const bri_strmap *m, const char *key);
/* Inserts key (must be absent) with values a, b; NULL on out of memory. */
bri_strmap_entry *bri_strmap_put(bri_strmap *m, const char *key, uint64_t a, uint64_t b);
void bri_strmap_dispose(bri_strmap *m);

#endif
