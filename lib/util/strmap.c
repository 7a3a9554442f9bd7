/* strmap.c: open-addressing string map (see strmap.h). FNV-1a hashing,
 * linear probing, no deletion (compaction tables only grow). */
#include "util/strmap.h"

#include <stdlib.h>
#include <string.h>

static uint64_t fnv1a(const char *s) {
  uint64_t h = 1469598103934665603ULL;
  for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ULL;
  return h;
}

bri_strmap_entry *bri_strmap_get(const bri_strmap *m, const char *key) {
  if (!m->cap) return NULL;
  for (size_t i = fnv1a(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
    if (!m->slots[i].key) return NULL;
    if (!strcmp(m->slots[i].key, key)) return &m->slots[i];
  }
}

static bool grow(bri_strmap *m) {
  size_t cap = m->cap ? m->cap * 2 : 64;
  bri_strmap_entry *s = calloc(cap, sizeof *s);
  if (!s) return false;
  for (size_t k = 0; k < m->cap; k++) {
    if (!m->slots[k].key) continue;
    size_t i = fnv1a(m->slots[k].key) & (cap - 1);
    while (s[i].key) i = (i + 1) & (cap - 1);
    s[i] = m->slots[k];
  }
  free(m->slots);
  m->slots = s;
  m->cap = cap;
  return true;
}

bri_strmap_entry *bri_strmap_put(bri_strmap *m, const char *key, uint64_t a, uint64_t b) {
  if ((m->n + 1) * 10 > m->cap * 7 && !grow(m)) return NULL;
  char *k = strdup(key);
  if (!k) return NULL;
  size_t i = fnv1a(key) & (m->cap - 1);
  while (m->slots[i].key) i = (i + 1) & (m->cap - 1);
  m->slots[i] = (bri_strmap_entry){k, a, b};
  m->n++;
  return &m->slots[i];
}

void bri_strmap_dispose(bri_strmap *m) {
  for (size_t i = 0; i < m->cap; i++) free(m->slots[i].key);
  free(m->slots);
  memset(m, 0, sizeof *m);
}
