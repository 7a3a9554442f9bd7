/* outputs.c: created-file records and their rollback (see outputs.h). */
#include "storage/outputs.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/failpoint.h"

/* The recorded tree that holds path, or is path (*same): newest first, as
 * an operation fills the tree it made last. */
static bool under_tree(const bri_outputs *o, const char *path, bool *same) {
  size_t n = strlen(path);
  for (size_t k = o->n_trees; k-- > 0;) {
    const char *t = o->paths[o->trees[k]];
    size_t tn = strlen(t);
    if (n >= tn && !memcmp(path, t, tn) && (path[tn] == '/' || path[tn] == '\0')) {
      *same = path[tn] == '\0';
      return true;
    }
  }
  return false;
}

int bri_outputs_add(bri_outputs *o, const char *path, unsigned flags, bri_error *err) {
  bool same = false, covered = under_tree(o, path, &same);
  if (same) return 0;
  if (o->n == o->cap) {
    size_t cap = o->cap ? o->cap * 2 : 32;
    char **g = realloc(o->paths, cap * sizeof *g);
    if (!g) return bri_error_set(err, BRI_ENOMEM, "out of memory");
    o->paths = g, o->cap = cap;
  }
  if ((flags & BRI_JOURNAL_TREE) && o->n_trees == o->cap_trees) {
    size_t cap = o->cap_trees ? o->cap_trees * 2 : 8;
    size_t *g = realloc(o->trees, cap * sizeof *g);
    if (!g) return bri_error_set(err, BRI_ENOMEM, "out of memory");
    o->trees = g, o->cap_trees = cap;
  }
  if (!(o->paths[o->n] = strdup(path))) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (flags & BRI_JOURNAL_TREE) o->trees[o->n_trees++] = o->n;
  o->n++;
  int rc = !covered && o->hooks && o->hooks->journal ? o->hooks->journal(o->hooks->user, path, flags, err) : 0;
  return rc ? rc : bri_failpoint("outputs.after_record", err);
}

void bri_outputs_roll_back_to(bri_outputs *o, size_t mark) {
  for (size_t i = o->n; i-- > mark;) {
    const char *key = o->store ? bri_store_key(o->store, o->paths[i]) : NULL;
    bri_store_delete(key && *key ? o->store : NULL, o->paths[i], NULL);
    free(o->paths[i]);
  }
  if (mark < o->n) o->n = mark;
  while (o->n_trees && o->trees[o->n_trees - 1] >= o->n) o->n_trees--;
}

void bri_outputs_roll_back(bri_outputs *o) { bri_outputs_roll_back_to(o, 0); }

void bri_outputs_clear(bri_outputs *o) {
  for (size_t i = 0; i < o->n; i++) free(o->paths[i]);
  o->n = 0;
  o->n_trees = 0;
}

void bri_outputs_dispose(bri_outputs *o) {
  bri_outputs_clear(o);
  free(o->paths);
  free(o->trees);
  o->paths = NULL;
  o->trees = NULL;
  o->cap = o->cap_trees = 0;
}
