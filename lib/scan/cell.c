/* cell.c: one value of one row, streamed (see cell.h).
 *
 * The top-level field above the column is read for that one row; the walk
 * down the struct path checks validity at every level (a null struct makes
 * the value null); a Blob v2 value is resolved through the data file that
 * stores the field, so a BRI or a shallow clone's base path is followed as
 * every other reader follows it. */
#include "scan/cell.h"

#include <stdlib.h>
#include <string.h>

#include "lance/core/schema.h"

/* The manifest field at dotted path (each step a child by name). */
static long find_path(const Lance__Table__Manifest *m, const char *path) {
  for (size_t i = 0; i < m->n_fields; i++) {
    char *p = bri_field_path(m->fields, m->n_fields, i);
    int same = p && !strcmp(p, path);
    free(p);
    if (same) return (long)i;
  }
  return -1;
}

/* The top-level field above field fi, reached through structs only. */
static int top_of(const bri_table *t, const Lance__Table__Manifest *m, long fi, const char *column, long *top,
                  bri_error *err) {
  for (long i = fi;;) {
    *top = i;
    if (m->fields[i]->parent_id == -1) return 0;
    long p = bri_field_index(m->fields, m->n_fields, m->fields[i]->parent_id);
    if (p < 0 || !m->fields[p]->logical_type || strcmp(m->fields[p]->logical_type, "struct") ||
        bri_field_is_blob_v2(m->fields[p]))
      return bri_error_set(err, BRI_EUNSUPPORTED,
                           "%s: column %s is not reached through structs only (lists hold many values per row)",
                           t->root, column);
    i = p;
  }
}

/* Walks from the top-level array down the dotted path to the column's array
 * and element; *null when a struct on the way is null. */
static int descend(const bri_table *t, const char *column, const char *top_name, const struct ArrowArray **a,
                   const struct ArrowSchema **s, int64_t *row, bool *null, bri_error *err) {
  const char *rest = column + strlen(top_name);
  while (*rest == '.') {
    const char *name = rest + 1, *dot = strchr(name, '.');
    size_t n = dot ? (size_t)(dot - name) : strlen(name);
    if (!bri_arrow_valid(*a, *row)) *null = true;
    int64_t k;
    for (k = 0; k < (*s)->n_children; k++)
      if ((*s)->children[k]->name && strlen((*s)->children[k]->name) == n && !strncmp((*s)->children[k]->name, name, n))
        break;
    if (k == (*s)->n_children)
      return bri_error_set(err, BRI_ECORRUPT, "%s: the reader returned no child %.*s for %s", t->root, (int)n, name,
                           column);
    *row += (*a)->offset;
    *a = (*a)->children[k];
    *s = (*s)->children[k];
    rest = name + n;
  }
  return 0;
}

int bri_cell_stream(const bri_table *t, const bri_manifest *mf, bri_fragment_reader *rd, const bri_row *row,
                    const char *column, bri_blob_chunk_fn fn, void *ctx, bri_error *err) {
  const Lance__Table__Manifest *m = mf->pb;
  long fi = find_path(m, column), top = -1;
  if (fi < 0)
    return bri_error_set(err, BRI_ENOTFOUND, "%s: version %llu has no column %s", t->root,
                         (unsigned long long)m->version, column);
  int rc = top_of(t, m, fi, column, &top, err);
  if (rc) return rc;
  struct ArrowArray arr = {0};
  struct ArrowSchema sch = {0};
  bri_blob_resolver *res = NULL;
  rc = bri_fragment_read_rows(rd, m->fields[top]->id, row->index, 1, &arr, &sch, err);
  const struct ArrowArray *a = &arr;
  const struct ArrowSchema *s = &sch;
  int64_t at = 0;
  bool null = false;
  if (!rc) rc = descend(t, column, m->fields[top]->name, &a, &s, &at, &null, err);
  if (!rc && !null && bri_field_is_blob_v2(m->fields[fi])) {
    bri_blob_desc d;
    rc = bri_blob_desc_get(s, a, at, &d, &null, err);
    if (!rc && !null) {
      const Lance__Table__DataFile *df = bri_fragment_field_datafile(rd, m->fields[fi]->id);
      rc = df ? bri_blob_resolver_open(t, m, df, &res, err)
              : bri_error_set(err, BRI_ECORRUPT, "%s: fragment %llu stores no data for %s", t->root,
                              (unsigned long long)row->fragment->id, column);
      if (!rc) rc = bri_blob_stream(res, &d, fn, ctx, err);
    }
  } else if (!rc && !null) {
    const uint8_t *data;
    size_t len;
    if (!bri_arrow_bytes(s->format, a, at, &data, &len)) /* offsets are there for null elements too */
      rc = bri_error_set(err, BRI_EUNSUPPORTED, "%s: column %s is neither a Blob v2 nor a binary column", t->root,
                         column);
    else if (!bri_arrow_valid(a, at))
      null = true;
    else if (len)
      rc = fn(ctx, data, len, err);
  }
  if (!rc && null)
    rc = bri_error_set(err, BRI_ENOTFOUND, "%s: column %s is null at row address %llu (fragment %llu, offset %u)",
                       t->root, column, (unsigned long long)row->address, (unsigned long long)row->fragment->id,
                       row->offset);
  if (arr.release) arr.release(&arr);
  if (sch.release) sch.release(&sch);
  bri_blob_resolver_close(res);
  return rc;
}
