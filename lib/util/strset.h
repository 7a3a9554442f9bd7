/* strset.h: a set of strings built once, then queried: append everything,
 * freeze (sort + dedupe), then look up with binary search. Enough for the
 * path sets of cleanup and verify, without a hash table to get wrong. */
#ifndef BRI_STRSET_H
#define BRI_STRSET_H

#include <stdbool.h>
#include <stddef.h>

typedef struct bri_strset {
  char **items;
  size_t n, cap;
  bool frozen;
} bri_strset;

/* Takes ownership of s (malloc'd). Returns false on out of memory (s freed). */
bool bri_strset_add_owned(bri_strset *set, char *s);
bool bri_strset_add(bri_strset *set, const char *s);
void bri_strset_freeze(bri_strset *set);
bool bri_strset_has(const bri_strset *set, const char *s);
void bri_strset_dispose(bri_strset *set);

#endif
