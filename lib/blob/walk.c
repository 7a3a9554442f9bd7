/* walk.c: Blob v2 values below a field, and of a fragment (see walk.h).
 *
 * The recursion follows the Arrow layout of the decoded field: structs by
 * child name (matched to the manifest's child fields), lists and large
 * lists by their offsets, fixed-size lists by their width. Depth is capped
 * (64) so that a hostile schema cannot exhaust the stack. */
#include "blob/walk.h"

#include <stdlib.h>
#include <string.h>

#include "lance/core/schema.h"

bool *bri_blob_fields(const Lance__Table__Manifest *m) {
  bool *has_blob = calloc(m->n_fields + 1, sizeof *has_blob);
  for (size_t i = 0; has_blob && i < m->n_fields; i++) {
    if (!bri_field_is_blob_v2(m->fields[i])) continue;
    long j = (long)i;
    for (int hops = 0; j >= 0 && hops < 64; hops++) {
      has_blob[j] = true;
      j = m->fields[j]->parent_id < 0 ? -1 : bri_field_index(m->fields, m->n_fields, m->fields[j]->parent_id);
    }
  }
  return has_blob;
}

static long child_field(const Lance__Table__Manifest *m, long fi, const char *name) {
  int32_t id = m->fields[fi]->id;
  for (size_t j = 0; j < m->n_fields; j++)
    if (m->fields[j]->parent_id == id && m->fields[j]->name && name && !strcmp(m->fields[j]->name, name))
      return (long)j;
  return -1;
}

typedef struct walker {
  const Lance__Table__Manifest *m;
  const bool *has_blob;
  bri_blob_value_fn fn;
  void *ctx;
} walker;

static int walk(const walker *w, const struct ArrowSchema *s, const struct ArrowArray *a, int64_t i,
                long fi, int depth) {
  if (fi < 0 || !w->has_blob[fi] || i < 0 || i >= a->length || depth > 64 || !bri_arrow_valid(a, i)) return 0;
  const char *fmt = s->format ? s->format : "";
  if (bri_field_is_blob_v2(w->m->fields[fi]) && !strcmp(fmt, "+s")) return w->fn(w->ctx, fi, s, a, i);
  int64_t j = a->offset + i;
  int rc = 0;
  if (!strcmp(fmt, "+s")) {
    for (int64_t k = 0; !rc && k < s->n_children && k < a->n_children; k++)
      rc = walk(w, s->children[k], a->children[k], j, child_field(w->m, fi, s->children[k]->name), depth + 1);
  } else if ((!strcmp(fmt, "+l") || !strcmp(fmt, "+m") || !strcmp(fmt, "+L")) && s->n_children == 1 &&
             a->n_children == 1 && a->n_buffers >= 2 && a->buffers[1]) {
    int64_t lo, hi;
    if (fmt[1] == 'L') {
      lo = ((const int64_t *)a->buffers[1])[j];
      hi = ((const int64_t *)a->buffers[1])[j + 1];
    } else {
      lo = ((const int32_t *)a->buffers[1])[j];
      hi = ((const int32_t *)a->buffers[1])[j + 1];
    }
    long cf = child_field(w->m, fi, s->children[0]->name);
    for (int64_t k = lo; !rc && k < hi && k < a->children[0]->length; k++)
      rc = walk(w, s->children[0], a->children[0], k, cf, depth + 1);
  } else if (!strncmp(fmt, "+w:", 3) && s->n_children == 1 && a->n_children == 1) {
    int64_t n = atoll(fmt + 3);
    long cf = child_field(w->m, fi, s->children[0]->name);
    for (int64_t k = j * n; !rc && n > 0 && k < (j + 1) * n && k < a->children[0]->length; k++)
      rc = walk(w, s->children[0], a->children[0], k, cf, depth + 1);
  }
  return rc;
}

int bri_blob_walk(const Lance__Table__Manifest *m, const bool *has_blob, const struct ArrowSchema *s,
                  const struct ArrowArray *a, int64_t i, long fi, bri_blob_value_fn fn, void *ctx) {
  walker w = {m, has_blob, fn, ctx};
  return walk(&w, s, a, i, fi, 0);
}

/* One fragment's walk: the callback's context. */
typedef struct frag_walk {
  const Lance__Table__Manifest *m;
  bri_fragment_reader *rd;
  bri_blob_desc_fn fn;
  void *ctx;
  uint64_t row;
  bri_error *err;
  int rc;
} frag_walk;

static int visit(void *ctx, long fi, const struct ArrowSchema *s, const struct ArrowArray *a, int64_t i) {
  frag_walk *fw = ctx;
  bri_blob_desc d;
  bool is_null;
  fw->rc = bri_blob_desc_get(s, a, i, &d, &is_null, fw->err);
  if (!fw->rc && !is_null) {
    const Lance__Table__DataFile *df = bri_fragment_field_datafile(fw->rd, fw->m->fields[fi]->id);
    fw->rc = df ? fw->fn(fw->ctx, fi, df, &d, fw->row, fw->err)
                : bri_error_set(fw->err, BRI_ECORRUPT, "blob field %s has a value but no data file",
                                fw->m->fields[fi]->name);
  }
  return fw->rc;
}

int bri_blob_walk_fragment(const bri_table *t, const bri_manifest *bm,
                           const Lance__Table__DataFragment *f, bri_blob_desc_fn fn, void *ctx,
                           bri_error *err) {
  const Lance__Table__Manifest *m = bm->pb;
  bool *has_blob = bri_blob_fields(m);
  int32_t *tops = calloc(m->n_fields + 1, sizeof *tops);
  size_t n_tops = 0;
  if (!has_blob || !tops) {
    free(has_blob), free(tops);
    return bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  for (size_t fi = 0; fi < m->n_fields; fi++)
    if (m->fields[fi]->parent_id == -1 && has_blob[fi]) tops[n_tops++] = m->fields[fi]->id;
  frag_walk fw = {.m = m, .fn = fn, .ctx = ctx, .err = err};
  int rc = n_tops ? bri_fragment_open_fields(t, bm, f, tops, n_tops, &fw.rd, err) : 0;
  for (size_t k = 0; !rc && k < n_tops; k++) {
    struct ArrowArray a;
    struct ArrowSchema s;
    if ((rc = bri_fragment_read_field(fw.rd, tops[k], &a, &s, err)) != 0) break;
    const uint32_t *offs = bri_fragment_row_offsets(fw.rd);
    long fi = (long)bri_field_index(m->fields, m->n_fields, tops[k]);
    for (int64_t i = 0; !rc && i < a.length; i++) {
      fw.row = offs ? offs[i] : (uint64_t)i;
      rc = bri_blob_walk(m, has_blob, &s, &a, i, fi, visit, &fw);
    }
    bri_arrow_array_release(&a);
    bri_arrow_schema_release(&s);
  }
  if (fw.rd) bri_fragment_close(fw.rd);
  free(has_blob), free(tops);
  return rc;
}

/* One fragment's check (bri_blob_check_fragment). */
typedef struct check {
  const bri_table *t;
  const bri_manifest *bm;
  const Lance__Table__DataFragment *f;
  const Lance__Table__DataFile *only;
  bri_sidecar_sizes *sizes;
  bri_blob_resolver **res; /* per data file of f, opened on demand */
} check;

static int check_value(void *ctx, long fi, const Lance__Table__DataFile *df, const bri_blob_desc *d,
                       uint64_t row, bri_error *err) {
  (void)fi;
  check *c = ctx;
  if ((c->only && df != c->only) || (d->kind != BRI_BLOB_PACKED && d->kind != BRI_BLOB_DEDICATED)) return 0;
  size_t k = 0;
  while (k < c->f->n_files && c->f->files[k] != df) k++;
  if (k == c->f->n_files) return bri_error_set(err, BRI_ECORRUPT, "%s: fragment %llu: a blob value's "
                                               "data file is not the fragment's", c->t->root,
                                               (unsigned long long)c->f->id);
  int rc = c->res[k] ? 0 : bri_blob_resolver_open(c->t, c->bm->pb, df, &c->res[k], err);
  char *path = NULL;
  bri_store *st;
  if (!rc) rc = bri_blob_sidecar_path(c->res[k], d->blob_id, &path, err);
  if (!rc) rc = bri_table_store_of(c->t, c->bm->pb, path, &st, err);
  bri_value_ref where = {c->t->root, c->f->id, row};
  if (!rc) rc = bri_sidecar_check(c->sizes, st, path, d->kind, d->position, d->size, &where, NULL, err);
  free(path);
  return rc;
}

int bri_blob_check_fragment(const bri_table *t, const bri_manifest *bm,
                            const Lance__Table__DataFragment *f, const Lance__Table__DataFile *only,
                            bri_sidecar_sizes *sizes, bri_error *err) {
  check c = {t, bm, f, only, sizes, calloc(f->n_files + 1, sizeof *c.res)};
  int rc = c.res ? bri_blob_walk_fragment(t, bm, f, check_value, &c, err)
                 : bri_error_set(err, BRI_ENOMEM, "out of memory");
  for (size_t k = 0; c.res && k < f->n_files; k++) bri_blob_resolver_close(c.res[k]);
  free(c.res);
  return rc;
}
