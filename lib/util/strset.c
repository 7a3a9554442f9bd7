/* strset.c: sorted-array string set (see strset.h). */
#include "util/strset.h"

#include <stdlib.h>
#include <string.h>

bool bri_strset_add_owned(bri_strset *set, char *s) {
  if (!s) return false;
  if (set->n == set->cap) {
    size_t cap = set->cap ? set->cap * 2 : 64;
    char **grown = realloc(set->items, cap * sizeof *grown);
    if (!grown) {
      free(s);
      return false;
    }
    set->items = grown;
    set->cap = cap;
  }
  set->items[set->n++] = s;
  set->frozen = false;
  return true;
}

bool bri_strset_add(bri_strset *set, const char *s) { return bri_strset_add_owned(set, strdup(s)); }

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

void bri_strset_freeze(bri_strset *set) {
  if (set->n) qsort(set->items, set->n, sizeof *set->items, cmp);
  size_t k = 0;
  for (size_t i = 0; i < set->n; i++) {
    if (k && !strcmp(set->items[k - 1], set->items[i])) free(set->items[i]);
    else set->items[k++] = set->items[i];
  }
  set->n = k;
  set->frozen = true;
}

bool bri_strset_has(const bri_strset *set, const char *s) {
  if (!set->n) return false;
  return bsearch(&s, set->items, set->n, sizeof *set->items, cmp) != NULL;
}

void bri_strset_dispose(bri_strset *set) {
  for (size_t i = 0; i < set->n; i++) free(set->items[i]);
  free(set->items);
  memset(set, 0, sizeof *set);
}
