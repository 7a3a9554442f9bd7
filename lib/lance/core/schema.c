/* schema.c: schema helpers (see schema.h). Lookups are linear: schemas have
 * tens of fields, and callers that loop build their own index. */
#include "lance/core/schema.h"

#include <stdlib.h>
#include <string.h>

#include "util/fsutil.h"

char *bri_field_metadata(const Lance__File__Field *f, const char *key) {
  for (size_t i = 0; i < f->n_metadata; i++)
    if (f->metadata[i]->key && !strcmp(f->metadata[i]->key, key))
      return bri_strdupf("%.*s", (int)f->metadata[i]->value.len,
                         (const char *)f->metadata[i]->value.data);
  return NULL;
}

bool bri_field_is_blob_v2(const Lance__File__Field *f) {
  if (f->extension_name && !strcmp(f->extension_name, BRI_BLOB_V2_EXTENSION)) return true;
  char *ext = bri_field_metadata(f, "ARROW:extension:name");
  bool yes = ext && !strcmp(ext, BRI_BLOB_V2_EXTENSION);
  free(ext);
  return yes;
}

long bri_field_index(Lance__File__Field *const *fields, size_t n, int id) {
  for (size_t i = 0; i < n; i++)
    if (fields[i]->id == id) return (long)i;
  return -1;
}

char *bri_field_path(Lance__File__Field *const *fields, size_t n, size_t i) {
  char *path = strdup(fields[i]->name ? fields[i]->name : "");
  int parent = fields[i]->parent_id;
  for (size_t depth = 0; path && parent >= 0 && depth < n; depth++) {
    long p = bri_field_index(fields, n, parent);
    if (p < 0) break;
    char *longer = bri_strdupf("%s.%s", fields[p]->name ? fields[p]->name : "", path);
    free(path);
    path = longer;
    parent = fields[p]->parent_id;
  }
  return path;
}
