/* managed.c: Managed blob descriptors through a compaction (see managed.h).
 *
 * The descriptor's fixed-width fields are rewritten in place, as the other
 * strategies do; an adoption or a repack also needs a new blob_uri, which
 * is kept aside (value index -> path) until the descriptor array has been
 * walked and then written into a fresh blob_uri child, the other values
 * copied over. Repacked values go through one packer per output file
 * (packer.h), whose packs are _blobs/<uuid>.blob objects as Lance 14 names
 * its own. */
#include "compact/managed.h"

#include <stdlib.h>
#include <string.h>

#include "compact/packer.h"
#include "lance/file/arrow_build.h"
#include "lance/table/sidecar.h"
#include "util/fsutil.h"
#include "util/random.h"

#define BLOBS_DIR "_blobs" /* where Lance 14 writes Managed objects, below a base root */

typedef struct uri_edit {
  uint64_t i;
  char *uri;
} uri_edit;

struct bri_managed_out {
  const bri_table *t;
  const Lance__Table__Manifest *m;
  bri_sidecar_sizes *sizes;
  const bri_strset *repack; /* packs to repack (absolute paths), or NULL */
  bri_outputs *outs;
  bri_packer *packer;       /* made on the first repacked value */
  char **packs;             /* per pack id: its blob_uri, "_blobs/<uuid>.blob" */
  size_t n_packs;
  bool dir_made;            /* _blobs/ exists (made or found) */
  uri_edit *edits;
  size_t n_edits, cap_edits;
  bri_managed_stats stats;
};

int bri_managed_out_new(const bri_table *t, const Lance__Table__Manifest *m, bri_sidecar_sizes *sizes,
                        const bri_strset *repack, bri_outputs *outs, bri_managed_out **out, bri_error *err) {
  *out = calloc(1, sizeof **out);
  if (!*out) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  (*out)->t = t, (*out)->m = m, (*out)->sizes = sizes, (*out)->repack = repack, (*out)->outs = outs;
  return 0;
}

static void drop_edits(bri_managed_out *o) {
  for (size_t k = 0; k < o->n_edits; k++) free(o->edits[k].uri);
  o->n_edits = 0;
}

/* Value i of the array at hand gets blob_uri uri (taken, freed on failure). */
static int add_edit(bri_managed_out *o, uint64_t i, char *uri, bri_error *err) {
  if (o->n_edits == o->cap_edits) {
    size_t cap = o->cap_edits ? 2 * o->cap_edits : 64;
    uri_edit *g = realloc(o->edits, cap * sizeof *g);
    if (!g) {
      free(uri);
      return bri_error_set(err, BRI_ENOMEM, "out of memory");
    }
    o->edits = g, o->cap_edits = cap;
  }
  o->edits[o->n_edits++] = (uri_edit){i, uri};
  return 0;
}

void bri_managed_out_free(bri_managed_out *o) {
  if (!o) return;
  drop_edits(o);
  bri_packer_free(o->packer); /* a pack not finished is recorded: the rollback removes it */
  for (size_t k = 0; k < o->n_packs; k++) free(o->packs[k]);
  free(o->packs);
  free(o->edits);
  free(o);
}

/* The packer's next pack: a new _blobs/<uuid>.blob below the table's root
 * (the output file's base), recorded before the packer creates it. */
static int next_pack(void *ctx, char **path, uint64_t *id, bri_error *err) {
  bri_managed_out *o = ctx;
  char uuid[37], *dir = bri_path_join(o->t->root, BLOBS_DIR);
  bri_uuid_v4(uuid);
  char *rel = bri_strdupf(BLOBS_DIR "/%s.blob", uuid);
  char **g = realloc(o->packs, (o->n_packs + 1) * sizeof *g);
  if (g) o->packs = g;
  *path = dir && rel ? bri_path_join(o->t->root, rel) : NULL;
  int rc = g && *path ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
  /* (a table switched from plain blobs has no _blobs/ yet: Lance makes it
   * as brid does, and leaves it; an empty one is no output to roll back) */
  if (!rc && !o->dir_made && (rc = bri_store_mkdir(o->t->store, dir, err)) == BRI_ETAKEN) rc = 0;
  if (!rc) o->dir_made = true;
  if (!rc) rc = bri_outputs_add(o->outs, *path, 0, err);
  if (rc) {
    free(*path), free(rel);
    *path = NULL;
  } else {
    *id = o->n_packs;
    o->packs[o->n_packs++] = rel;
  }
  free(dir);
  return rc;
}

/* Copies a value of the pack at abs (below the repack threshold) into the
 * current new pack, and points its descriptor there. */
static int repack_value(bri_managed_out *o, const char *abs, uint64_t i, uint8_t *kind, uint64_t *position,
                        uint64_t size, uint32_t *blob_id, const bri_value_ref *where, bri_error *err) {
  bri_store *st;
  uint64_t id, at, grown;
  int rc = bri_table_store_of(o->t, o->m, abs, &st, err);
  /* never a copy of bytes that are not there (blob/sizes.h) */
  if (!rc) rc = bri_sidecar_check(o->sizes, st, abs, BRI_BLOB_PACKED, *position, size, where, NULL, err);
  /* the live ranges only, whatever the store: dead bytes copied along
   * would be kept another round (packer.h) */
  if (!rc && !o->packer) rc = bri_packer_new(o->t->store, false, next_pack, o, &o->packer, err);
  if (!rc) rc = bri_packer_copy(o->packer, st, abs, *position, size, &id, &at, &grown, err);
  char *uri = rc ? NULL : strdup(o->packs[id]);
  if (!rc && !uri) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (!rc) rc = add_edit(o, i, uri, err);
  if (rc) return rc;
  *kind = BRI_BLOB_MANAGED, *position = at, *blob_id = 0;
  o->stats.repacked++;
  o->stats.repacked_bytes += grown;
  return 0;
}

int bri_managed_out_finish(bri_managed_out *o, bri_error *err) {
  int rc = bri_packer_finish(o->packer, err);
  o->stats.packs = bri_packer_packs(o->packer);
  char *dir = o->stats.packs ? bri_path_join(o->t->root, BLOBS_DIR) : NULL;
  if (!rc && o->stats.packs) rc = dir ? bri_store_sync(o->t->store, dir, err) : bri_error_set(err, BRI_ENOMEM, "out of memory");
  free(dir);
  return rc;
}

const bri_managed_stats *bri_managed_out_stats(const bri_managed_out *o) { return &o->stats; }

/* The path of the sidecar a Packed or Dedicated value lies in, relative to
 * the root of its base (docs/format/blob.md 8: what an adopted descriptor
 * names), and that base. */
static int adopted_path(bri_managed_out *o, bri_blob_resolver *r, uint32_t id, char **rel, char **abs,
                        bri_blob_terminal *term, bri_error *err) {
  *rel = *abs = NULL;
  bri_blob_terminal_of(r, id, term);
  char name[BRI_BLOB_NAME_LEN], *root;
  bri_blob_file_name(term->physical_id, name);
  int rc = bri_table_base_root(o->t, o->m, term->has_base, term->base_id, &root, err);
  if (rc) return rc;
  size_t n = strlen(root);
  if (strncmp(term->dir, root, n) || term->dir[n] != '/')
    rc = bri_error_set(err, BRI_ECORRUPT, "%s: sidecar directory %s is not below its base %s", o->t->root,
                       term->dir, root);
  else if (!(*rel = bri_strdupf("%s/%s", term->dir + n + 1, name)) || !(*abs = bri_path_join(term->dir, name)))
    rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  free(root);
  if (rc) free(*rel), *rel = NULL;
  return rc;
}

int bri_managed_rewrite(bri_managed_out *o, bri_blob_resolver *r, const Lance__Table__DataFile *src,
                        uint64_t i, uint8_t *kind, uint64_t *position, uint64_t size, uint32_t *blob_id,
                        const char *uri, size_t uri_len, const bri_value_ref *where, bri_error *err) {
  switch (*kind) {
  case BRI_BLOB_MANAGED:
    if (o->repack && !src->has_base_id && size) { /* an object of the table's own (managed.h) */
      char *abs;
      bri_blob_desc d = {*kind, *position, size, *blob_id, uri, uri_len};
      int rc = bri_blob_managed_path(r, &d, &abs, err);
      if (!rc && bri_strset_has(o->repack, abs)) rc = repack_value(o, abs, i, kind, position, size, blob_id, where, err);
      else if (!rc) o->stats.kept++;
      free(abs);
      return rc;
    }
    /* relative to the source file's base: explicit once the file moves to
     * the table's own data directory */
    if (src->has_base_id) *kind = BRI_BLOB_MANAGED_BASE, *blob_id = src->base_id;
    o->stats.kept++;
    return 0;
  case BRI_BLOB_MANAGED_BASE:
    o->stats.kept++;
    return 0;
  case BRI_BLOB_PACKED:
  case BRI_BLOB_DEDICATED:
    break;
  default:
    return 0; /* Inline: the writer copies it; External: unchanged */
  }
  char *rel, *abs;
  bri_blob_terminal term;
  bri_store *st;
  int rc = adopted_path(o, r, *blob_id, &rel, &abs, &term, err);
  if (!rc && *kind == BRI_BLOB_PACKED && o->repack && bri_strset_has(o->repack, abs)) {
    rc = repack_value(o, abs, i, kind, position, size, blob_id, where, err);
    free(abs), free(rel);
    return rc;
  }
  /* never a reference to bytes that are not there (blob/sizes.h) */
  if (!rc) rc = bri_table_store_of(o->t, o->m, abs, &st, err);
  if (!rc) rc = bri_sidecar_check(o->sizes, st, abs, *kind, *position, size, where, NULL, err);
  free(abs);
  if (!rc) rc = add_edit(o, i, rel, err);
  if (rc) return rc;
  if (*kind == BRI_BLOB_DEDICATED) *position = 0; /* the whole sidecar is the value */
  *kind = term.has_base ? BRI_BLOB_MANAGED_BASE : BRI_BLOB_MANAGED;
  *blob_id = term.has_base ? term.base_id : 0;
  o->stats.adopted++;
  o->stats.adopted_bytes += size;
  return 0;
}

static int cmp_edit(const void *a, const void *b) {
  uint64_t x = ((const uri_edit *)a)->i, y = ((const uri_edit *)b)->i;
  return x < y ? -1 : x > y;
}

/* n strings laid end to end, and where each ends. */
typedef struct strings {
  bri_growbuf data;
  uint64_t *ends; /* n entries */
} strings;

/* Lays out the n slots of a blob_uri child: slot k is an edit's path (edits
 * sorted by value index; value i is slot i + base) or old string k. */
static int build(bri_managed_out *o, uint64_t n, uint64_t base,
                 const uint8_t *(*old)(const void *ctx, uint64_t k, uint64_t *len), const void *ctx,
                 strings *out, bri_error *err) {
  memset(out, 0, sizeof *out);
  qsort(o->edits, o->n_edits, sizeof *o->edits, cmp_edit);
  if (!(out->ends = malloc((n ? n : 1) * sizeof *out->ends))) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  size_t e = 0;
  int rc = 0;
  for (uint64_t k = 0; k < n && !rc; k++) {
    while (e < o->n_edits && o->edits[e].i + base < k) e++;
    if (e < o->n_edits && o->edits[e].i + base == k) {
      rc = bri_growbuf_append(&out->data, o->edits[e].uri, strlen(o->edits[e].uri), err);
    } else {
      uint64_t len;
      const uint8_t *p = old(ctx, k, &len);
      if (len) rc = bri_growbuf_append(&out->data, p, len, err);
    }
    out->ends[k] = out->data.len;
  }
  if (rc) free(out->ends), bri_growbuf_dispose(&out->data);
  return rc;
}

typedef struct arrow_src {
  const struct ArrowArray *c;
} arrow_src;

static const uint8_t *arrow_old(const void *ctx, uint64_t k, uint64_t *len) {
  const struct ArrowArray *c = ((const arrow_src *)ctx)->c;
  const int32_t *off = c->buffers[1];
  int64_t j = c->offset + (int64_t)k;
  if (!bri_arrow_valid(c, (int64_t)k) || off[j + 1] <= off[j] || !c->buffers[2]) {
    *len = 0;
    return NULL;
  }
  *len = (uint64_t)(off[j + 1] - off[j]);
  return (const uint8_t *)c->buffers[2] + off[j];
}

int bri_managed_apply_arrow(bri_managed_out *o, const struct ArrowSchema *s, struct ArrowArray *a,
                            bri_error *err) {
  if (!o->n_edits) return 0;
  int64_t k = 0;
  while (k < s->n_children && (!s->children[k]->name || strcmp(s->children[k]->name, "blob_uri"))) k++;
  if (k == s->n_children || k >= a->n_children || strcmp(s->children[k]->format, "u"))
    return bri_error_set(err, BRI_EINVAL, "%s: a Blob v2 descriptor without a utf8 blob_uri", s->name ? s->name : "?");
  struct ArrowArray *c = a->children[k];
  uint64_t n = (uint64_t)c->length;
  arrow_src src = {c};
  strings st;
  int rc = build(o, n, (uint64_t)a->offset, arrow_old, &src, &st, err);
  if (rc) return rc;
  if (st.data.len > INT32_MAX) rc = bri_error_set(err, BRI_EUNSUPPORTED, "blob_uri values past 2 GiB in one batch");
  int32_t *off = rc ? NULL : malloc((n + 1) * sizeof *off);
  uint8_t *valid = rc ? NULL : calloc(n / 8 + 1, 1);
  void *data = NULL;
  if (!rc && (!off || !valid)) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  int64_t nulls = 0;
  size_t e = 0;
  for (uint64_t i = 0; !rc && i < n; i++) {
    off[i + 1] = (int32_t)st.ends[i];
    while (e < o->n_edits && o->edits[e].i + (uint64_t)a->offset < i) e++;
    bool edited = e < o->n_edits && o->edits[e].i + (uint64_t)a->offset == i;
    if (edited || bri_arrow_valid(c, (int64_t)i)) valid[i / 8] |= (uint8_t)(1u << (i % 8));
    else nulls++;
  }
  if (!rc) {
    off[0] = 0;
    rc = bri_growbuf_take(&st.data, &data, err);
  }
  free(st.ends);
  bri_growbuf_dispose(&st.data);
  if (rc) {
    free(off), free(valid);
    return rc;
  }
  struct ArrowArray fresh;
  void *bufs[3] = {valid, off, data};
  if ((rc = bri_arrow_array_make(&fresh, (int64_t)n, nulls, 3, bufs, 0, NULL, err)) != 0) return rc;
  bri_arrow_array_release(c);
  *c = fresh; /* moved: the parent's release now frees it */
  drop_edits(o);
  return 0;
}

static const uint8_t *values_old(const void *ctx, uint64_t k, uint64_t *len) {
  const bri_values *u = ctx;
  *len = (uint64_t)(u->offsets[k + 1] - u->offsets[k]);
  return u->data + u->offsets[k];
}

int bri_managed_apply_values(bri_managed_out *o, bri_values *v, bri_error *err) {
  if (!o->n_edits) return 0;
  if (v->n_children < 5 || v->children[4].kind != BRI_LEAF_VARIABLE || !v->children[4].offsets)
    return bri_error_set(err, BRI_EINVAL, "a Blob v2 descriptor page without a blob_uri");
  bri_values *u = &v->children[4];
  strings st;
  int rc = build(o, u->n, 0, values_old, u, &st, err);
  int64_t *off = rc ? NULL : malloc((u->n + 1) * sizeof *off);
  void *data = NULL;
  if (!rc && !off) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (!rc) rc = bri_growbuf_take(&st.data, &data, err);
  if (!rc) {
    off[0] = 0;
    for (uint64_t k = 0; k < u->n; k++) off[k + 1] = (int64_t)st.ends[k];
    free(u->data), free(u->offsets);
    u->data = data, u->offsets = off;
    u->data_len = u->cap_data = (uint64_t)off[u->n];
    u->cap_slots = u->n + 1;
  } else {
    free(off), free(data);
  }
  free(st.ends);
  bri_growbuf_dispose(&st.data);
  if (!rc) drop_edits(o);
  return rc;
}
