/* outputs.c: created-file records and their rollback (see outputs.h). */
#include "storage/outputs.h"

#include <stdlib.h>
#include <string.h>

#include "util/failpoint.h"

int bri_outputs_add(bri_outputs *o, const char *path, bri_error *err) {
  if (o->n == o->cap) {
    size_t cap = o->cap ? o->cap * 2 : 32;
    char **g = realloc(o->paths, cap * sizeof *g);
    if (!g) return bri_error_set(err, BRI_ENOMEM, "out of memory");
    o->paths = g, o->cap = cap;
  }
  if (!(o->paths[o->n] = strdup(path))) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  o->n++;
  int rc = o->hooks && o->hooks->journal ? o->hooks->journal(o->hooks->user, path, err) : 0;
  return rc ? rc : bri_failpoint("outputs.after_record", err);
}

void bri_outputs_roll_back_to(bri_outputs *o, size_t mark) {
  for (size_t i = o->n; i-- > mark;) {
    const char *key = o->store ? bri_store_key(o->store, o->paths[i]) : NULL;
    bri_store_delete(key && *key ? o->store : NULL, o->paths[i], NULL);
    free(o->paths[i]);
  }
  if (mark < o->n) o->n = mark;
}

void bri_outputs_roll_back(bri_outputs *o) { bri_outputs_roll_back_to(o, 0); }

void bri_outputs_clear(bri_outputs *o) {
  for (size_t i = 0; i < o->n; i++) free(o->paths[i]);
  o->n = 0;
}

void bri_outputs_free(bri_outputs *o) {
  bri_outputs_clear(o);
  free(o->paths);
  o->paths = NULL;
  o->cap = 0;
}
