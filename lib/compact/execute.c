/* execute.c: compaction of one table (see execute.h).
 *
 * Three stages. Survey: for blob tables, read every fragment's descriptors
 * to measure each Packed sidecar's utilization (union of the visible byte
 * ranges that resolve to it / its size, docs/format/bri.md 6) and the bytes each
 * bin would reuse, copy or repack. Write: per bin, decode rows in batches
 * (the fragment reader drops deleted rows), rewrite Blob v2 descriptors in
 * the decoded arrays, append them to a new data file. Commit: one Rewrite
 * group per bin; on any failure remove exactly the files this run created,
 * newest first, which the journal callback also learned before each
 * creation (so a crashed process can be cleaned up by its daemon). */
#include "compact/execute.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "blob/resolve.h"
#include "lance/table/bri.h"
#include "lance/table/sidecar.h"
#include "compact/managed.h"
#include "compact/fragsize.h"
#include "compact/optin.h"
#include "compact/rewrite.h"
#include "lance/encoding/page.h"
#include "lance/file/arrow_build.h"
#include "lance/file/pagecopy.h"
#include "lance/dataset/reader.h"
#include "lance/file/writer.h"
#include "lance/table/commit.h"
#include "lance/table/fields.h"
#include "lance/table/flags.h"
#include "lance/table/frag_reuse.h"
#include "lance/table/rowids.h"
#include "lance/core/schema.h"
#include "util/failpoint.h"
#include "util/random.h"
#include "util/readahead.h"
#include "util/fsutil.h"
#include "util/strmap.h"

void bri_compact_request_default(bri_compact_request *r) {
  memset(r, 0, sizeof *r);
  bri_compact_options_default(&r->options);
  r->strategy = BRI_STRATEGY_AUTO;
}

/* ------------------------------------------------------------------ run state */

typedef struct run {
  const bri_compact_request *req;
  const bri_hooks *hooks;
  bri_compact_report *rep;
  bri_error *err;
  bri_table *t;
  bri_manifest *m;
  bri_outputs out; /* every path this run created */
  bri_strset repack; /* absolute paths of packs to repack */
  uint64_t rows_total, rows_done;
  int32_t *blob_tops;    /* top-level fields holding Blob v2 fields (the survey reads them) */
  size_t n_blob_tops;
  const size_t *order;   /* the bins' fragments in writing order (manifest indices) */
  bri_readahead *opened; /* opens them ahead of write_bin (open_fragment) */
  size_t read_ahead;     /* reads in flight (bri_compact_request.read_ahead resolved) */
  bool local_default;    /* read_ahead is a local disk's default: none for few items (execute.h) */
  const struct survey *survey; /* whose packs stat_pack measures */
  bri_sidecar_sizes *sizes; /* sidecar sizes: the survey's and the damage checks' (blob/sizes.h) */
  bool *repack_wanted;   /* per fragment: it references a pack below the threshold */
  uint64_t *payload;     /* per fragment: the payload a copy writes (fragsize.h); NULL: not counted */
  bool stream;           /* the survey rides along with the writing (can_stream) */
  bool managed;          /* the table's blobs are Managed (compact/managed.h) */
  struct frag_survey **fs; /* per fragment (manifest order): what the survey found */
  const size_t *survey_idx; /* the fragments survey_fragment reads */
} run;


static bool cancelled(run *r) { return bri_hooks_cancelled(r->hooks); }

/* bri_readahead_start with the run's depth (none for few items on a local
 * disk by default). */
static int read_ahead(run *r, size_t n, bri_readahead_fn fn, bri_readahead_drop_fn drop,
                      bri_readahead **out) {
  size_t depth = r->local_default && n < BRI_COMPACT_READ_AHEAD_LOCAL_MIN ? 0 : r->read_ahead;
  return bri_readahead_start(n, depth, fn, drop, r, out, r->err);
}

/* ------------------------------------------------------- descriptor walking */

/* Children of manifest field index fi, in schema order. */
static size_t children_of(const Lance__Table__Manifest *m, size_t fi, size_t *out, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < m->n_fields && n < cap; i++)
    if (m->fields[i]->parent_id == m->fields[fi]->id) out[n++] = i;
  return n;
}

/* i: the value's index in the array walked (its row within the batch);
 * uri/uri_len: a Managed descriptor's blob_uri (NULL, 0 for other kinds). */
typedef int (*desc_fn)(void *ctx, int32_t field_id, uint64_t i, uint8_t *kind, uint64_t *position,
                       uint64_t *size, uint32_t *blob_id, const char *uri, size_t uri_len, bri_error *err);

/* Buffer pointers of a descriptor struct's children, found by name. */
typedef struct desc_cols {
  struct ArrowArray *c[4]; /* kind, position, size, blob_id */
} desc_cols;

static int desc_columns(const struct ArrowSchema *s, struct ArrowArray *a, desc_cols *d, bri_error *err) {
  static const char *names[4] = {"kind", "position", "size", "blob_id"};
  memset(d, 0, sizeof *d);
  for (int64_t k = 0; k < s->n_children && k < a->n_children; k++)
    for (int f = 0; f < 4; f++)
      if (s->children[k]->name && !strcmp(s->children[k]->name, names[f])) d->c[f] = a->children[k];
  for (int f = 0; f < 4; f++)
    if (!d->c[f] || d->c[f]->n_buffers < 2 || !d->c[f]->buffers[1] || d->c[f]->length < a->offset + a->length)
      return bri_error_set(err, BRI_EINVAL, "%s: not a Blob v2 descriptor (no %s)", s->name ? s->name : "?", names[f]);
  return 0;
}

/* Calls fn on every non-null descriptor of the Blob v2 fields below manifest
 * field fi (whose decoded array is s/a); fn may change the values, and mo
 * (may be NULL) the blob_uri of each descriptor array afterwards. */
static int walk_blobs(const Lance__Table__Manifest *m, size_t fi, const struct ArrowSchema *s,
                      struct ArrowArray *a, desc_fn fn, void *ctx, bri_managed_out *mo, bri_error *err) {
  const Lance__File__Field *f = m->fields[fi];
  if (bri_field_is_blob_v2(f)) {
    desc_cols d;
    int rc = desc_columns(s, a, &d, err);
    for (int64_t i = 0; !rc && i < a->length; i++) {
      int64_t j = a->offset + i;
      if (!bri_arrow_valid(a, i) || !bri_arrow_valid(d.c[0], j)) continue;
      uint8_t *kind = (uint8_t *)d.c[0]->buffers[1] + d.c[0]->offset + j;
      uint64_t *pos = (uint64_t *)d.c[1]->buffers[1] + d.c[1]->offset + j;
      uint64_t *size = (uint64_t *)d.c[2]->buffers[1] + d.c[2]->offset + j;
      uint32_t *id = (uint32_t *)d.c[3]->buffers[1] + d.c[3]->offset + j;
      bri_blob_desc bd = {0};
      bool null;
      if (*kind == BRI_BLOB_MANAGED || *kind == BRI_BLOB_MANAGED_BASE) rc = bri_blob_desc_get(s, a, i, &bd, &null, err);
      if (!rc) rc = fn(ctx, f->id, (uint64_t)i, kind, pos, size, id, bd.uri, bd.uri_len, err);
    }
    return !rc && mo ? bri_managed_apply_arrow(mo, s, a, err) : rc;
  }
  size_t kids[256];
  size_t n = children_of(m, fi, kids, 256);
  if (!n || (int64_t)n != s->n_children || s->n_children != a->n_children) return 0;
  for (size_t k = 0; k < n; k++) {
    int rc = walk_blobs(m, kids[k], s->children[k], a->children[k], fn, ctx, mo, err);
    if (rc) return rc;
  }
  return 0;
}

static bool subtree_has_blob(const Lance__Table__Manifest *m, size_t fi) {
  if (bri_field_is_blob_v2(m->fields[fi])) return true;
  size_t kids[256];
  size_t n = children_of(m, fi, kids, 256);
  for (size_t k = 0; k < n; k++)
    if (subtree_has_blob(m, kids[k])) return true;
  return false;
}

/* Resolvers of the data files holding blob fields of one fragment. */
typedef struct resolvers {
  bri_strmap by_field; /* "field id" -> index */
  bri_blob_resolver **r;
  size_t n;
} resolvers;

static int resolver_for(run *r, resolvers *rs, bri_fragment_reader *fr, int32_t field_id,
                        bri_blob_resolver **out, bri_error *err) {
  char key[16];
  snprintf(key, sizeof key, "%d", field_id);
  bri_strmap_entry *e = bri_strmap_get(&rs->by_field, key);
  if (e) {
    *out = rs->r[e->a];
    return 0;
  }
  const Lance__Table__DataFile *df = bri_fragment_field_datafile(fr, field_id);
  if (!df) return bri_error_set(err, BRI_ECORRUPT, "%s: blob field %d has a value but no data file", r->t->root, field_id);
  bri_blob_resolver **g = realloc(rs->r, (rs->n + 1) * sizeof *g);
  if (!g) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  rs->r = g;
  int rc = bri_blob_resolver_open(r->t, r->m->pb, df, &rs->r[rs->n], err);
  if (rc) return rc;
  if (!bri_strmap_put(&rs->by_field, key, rs->n, 0)) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  *out = rs->r[rs->n++];
  return 0;
}

static void resolvers_close(resolvers *rs) {
  for (size_t i = 0; i < rs->n; i++) bri_blob_resolver_close(rs->r[i]);
  free(rs->r);
  bri_strmap_dispose(&rs->by_field);
  memset(rs, 0, sizeof *rs);
}

/* ------------------------------------------------------------------- survey */

/* dead: a value of a deleted row, which tells where the pack's values lie
 * but not what is live (Managed packs, survey_desc) */
typedef struct range { uint64_t lo, hi; bool dead; } range;
typedef struct pack_ranges {
  range *v;
  size_t n, cap;
  /* a reference through a BRI (the pack is another data file's), or from a
   * fragment with deletions: values of the pack may be referenced by no
   * visible row, so its size is not known from the descriptors */
  bool partial;
} pack_ranges;

/* A pack's size the survey did not ask the store for (size_needed). */
#define SIZE_UNMEASURED UINT64_MAX

/* What the survey knows of one pack: the bytes the live ranges cover, the
 * bytes all the ranges cover and where the last one ends (pack_use_of),
 * whether a value can be hidden from them, and the pack's size (or
 * SIZE_UNMEASURED). */
typedef struct pack_use {
  uint64_t used, covered, end, size;
  bool partial;
} pack_use;

/* What the survey learns from one fragment, made on a read-ahead worker:
 * payload bytes by kind, and every Packed range with the pack it lies in
 * (paths[path]: each pack the fragment references, once). */
typedef struct frag_survey {
  uint64_t bytes[4]; /* inline, packed, dedicated, external */
  char **paths;
  pack_use *use; /* per path, in stream mode (measure_paths): of the fragment's own ranges */
  size_t n_paths;
  struct pack_ref { size_t path; range r; bool partial; } *refs;
  size_t n_refs, cap_refs;
} frag_survey;

static void frag_survey_free(frag_survey *fs) {
  if (!fs) return;
  for (size_t k = 0; k < fs->n_paths; k++) free(fs->paths[k]);
  free(fs->paths), free(fs->use), free(fs->refs), free(fs);
}

/* Decoded pages of a blob column of a fragment, decoded ahead
 * (open_fragment) for its survey and its writing. */
typedef struct pre_col {
  const bri_datafile *df;
  size_t col, n_pages;
  bri_leaf_page *pages;
} pre_col;

/* The walk over one fragment's descriptors (survey_fragment). */
typedef struct survey_walk {
  run *r;
  bri_fragment_reader *fr;
  resolvers rs;
  frag_survey *fs;
  const pre_col *pre; /* blob pages decoded already (open_fragment) */
  size_t n_pre;
  bool deletions; /* the fragment hides rows of its data files */
  bool sees_dead; /* the deleted rows' descriptors are walked too (dead) */
  bool dead;      /* the descriptor at hand is a deleted row's */
  const Lance__Table__DataFile *own_df; /* the data file whose sidecar directory own_dir is */
  char *own_dir;
} survey_walk;

/* The object a Managed value of the run's own root lies in (kind 4 in a
 * data file without a base; any other is another table's, never repacked):
 * *path, or NULL. */
static int managed_object(bri_blob_resolver *res, const Lance__Table__DataFile *df, uint8_t kind,
                          uint64_t position, uint64_t size, const char *uri, size_t uri_len, char **path,
                          bri_error *err) {
  *path = NULL;
  if (kind != BRI_BLOB_MANAGED || df->has_base_id || !size) return 0;
  bri_blob_desc d = {kind, position, size, 0, uri, uri_len};
  return bri_blob_managed_path(res, &d, path, err);
}

/* Records a Packed value's range in its pack, and under a Managed
 * compaction (which repacks Managed packs too) a Managed value's in its
 * object, the deleted rows' as dead ranges where the walk sees them: a
 * Managed pack holds the values of one write, so the ranges of a
 * fragment's rows, live and dead, that fill [0, end) tell its size (a pack
 * that holds more, or is shared with another fragment, then looks fuller
 * than it is and is left alone: never a wrong repack). */
static int survey_desc(void *ctx, int32_t field_id, uint64_t row, uint8_t *kind, uint64_t *position,
                       uint64_t *size, uint32_t *blob_id, const char *uri, size_t uri_len, bri_error *err) {
  (void)row;
  survey_walk *w = ctx;
  frag_survey *fs = w->fs;
  if (!w->dead && *kind <= 3) fs->bytes[*kind] += *size;
  bool managed = w->r->managed && *kind == BRI_BLOB_MANAGED;
  if ((*kind != BRI_BLOB_PACKED || w->dead) && !managed) return 0;
  bri_blob_resolver *res;
  int rc = resolver_for(w->r, &w->rs, w->fr, field_id, &res, err);
  if (rc) return rc;
  const Lance__Table__DataFile *df = bri_fragment_field_datafile(w->fr, field_id);
  char *path = NULL;
  bri_blob_terminal term;
  if (managed) {
    if ((rc = managed_object(res, df, *kind, *position, *size, uri, uri_len, &path, err)) != 0 || !path)
      return rc;
  } else {
    bri_blob_terminal_of(res, *blob_id, &term);
    char name[BRI_BLOB_NAME_LEN];
    bri_blob_file_name(term.physical_id, name);
    if (!(path = bri_path_join(term.dir, name))) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  size_t p = fs->n_paths; /* the latest first: consecutive refs mostly share a pack */
  while (p > 0 && strcmp(fs->paths[p - 1], path)) p--;
  if (p) {
    free(path);
    p--;
  } else {
    char **g = realloc(fs->paths, (fs->n_paths + 1) * sizeof *g);
    if (!g) {
      free(path);
      return bri_error_set(err, BRI_ENOMEM, "out of memory");
    }
    fs->paths = g;
    p = fs->n_paths;
    fs->paths[fs->n_paths++] = path;
  }
  if (!managed && df != w->own_df) {
    free(w->own_dir);
    w->own_dir = NULL;
    w->own_df = df;
    if ((rc = bri_table_sidecar_dir(w->r->t, w->r->m->pb, df, &w->own_dir, err)) != 0) return rc;
  }
  if (fs->n_refs == fs->cap_refs) {
    size_t cap = fs->cap_refs ? fs->cap_refs * 2 : 16;
    struct pack_ref *g = realloc(fs->refs, cap * sizeof *g);
    if (!g) return bri_error_set(err, BRI_ENOMEM, "out of memory");
    fs->refs = g, fs->cap_refs = cap;
  }
  bool partial = managed ? w->deletions && !w->sees_dead : w->deletions || strcmp(term.dir, w->own_dir);
  fs->refs[fs->n_refs++] = (struct pack_ref){p, {*position, *position + *size, w->dead}, partial};
  return 0;
}

/* Slot i's blob_uri in a decoded descriptor page (NULL, 0: none). */
static const char *page_uri(const bri_values *v, uint64_t i, size_t *len) {
  *len = 0;
  if (v->n_children < 5 || v->children[4].kind != BRI_LEAF_VARIABLE || !v->children[4].offsets) return NULL;
  const bri_values *u = &v->children[4];
  *len = (size_t)(u->offsets[i + 1] - u->offsets[i]);
  return (const char *)u->data + u->offsets[i];
}

/* The descriptors of a top-level Blob v2 field, straight from its column's
 * pages (no Arrow arrays): rows the fragment deleted are skipped (walked as
 * dead under a Managed compaction, survey_desc), and a null blob's slot
 * holds zeros (kind Inline, size 0), which counts nothing. 1 when the field
 * is not one plain column: the caller reads it whole. */
static int survey_column(survey_walk *w, int32_t field_id, bri_error *err) {
  bri_datafile *df;
  size_t col;
  bri_leaf_type type;
  bri_error why;
  int rc = bri_fragment_leaf_column(w->fr, field_id, &df, &col, &type, &why);
  if (rc == BRI_ENOTFOUND) return 0; /* stored nowhere: every value is null */
  if (rc == BRI_EINVAL) return 1;
  if (rc) return bri_error_set(err, rc, "%s", why.msg);
  const bri_column *c = bri_datafile_column(df, col);
  const uint32_t *visible = bri_fragment_row_offsets(w->fr);
  uint64_t n_visible = bri_fragment_num_rows(w->fr), k = 0, row = 0;
  const pre_col *pre = NULL; /* pages open_fragment decoded already */
  for (size_t j = 0; j < w->n_pre && !pre; j++)
    if (w->pre[j].df == df && w->pre[j].col == col) pre = &w->pre[j];
  w->sees_dead = w->r->managed;
  for (size_t p = 0; !rc && p < c->n_pages && (k < n_visible || w->sees_dead); p++) {
    bri_leaf_page lp, *page = pre ? &pre->pages[p] : &lp;
    if (!pre) rc = bri_page_decode(df, col, p, &type, &lp, err);
    const bri_values *v = &page->values;
    if (!rc && (v->kind != BRI_LEAF_STRUCT || v->n_children < 4 || v->n != c->pages[p].n_rows))
      rc = bri_error_set(err, BRI_ECORRUPT, "%s: page %zu of column %zu: no Blob v2 descriptors",
                         bri_datafile_path(df), p, col);
    for (uint64_t i = 0; !rc && i < v->n && (k < n_visible || w->sees_dead); i++, row++) {
      w->dead = k >= n_visible || visible[k] != row;
      if (w->dead && !w->sees_dead) continue; /* deleted */
      if (!w->dead) k++;
      size_t len;
      const char *uri = page_uri(v, i, &len);
      rc = survey_desc(w, field_id, row, (uint8_t *)v->children[0].data + i,
                       (uint64_t *)v->children[1].data + i, (uint64_t *)v->children[2].data + i,
                       (uint32_t *)v->children[3].data + i, uri, len, err);
    }
    w->dead = false;
    if (!pre) bri_leaf_page_dispose(&lp);
  }
  return rc;
}

static int measure_paths(run *r, frag_survey *fs, bri_error *err);

/* Reads the descriptors of the blob fields through reader fr (any thread:
 * uses only the run's table and manifest, fr, and err); stream mode also
 * measures the packs. */
static int survey_reader(run *r, bri_fragment_reader *fr, const pre_col *pre, size_t n_pre,
                         frag_survey **out, bri_error *err) {
  const Lance__Table__Manifest *m = r->m->pb;
  survey_walk w = {.r = r, .fr = fr, .fs = calloc(1, sizeof(frag_survey)), .pre = pre, .n_pre = n_pre,
                   .deletions = bri_fragment_num_rows(fr) != bri_fragment_physical_rows(fr)};
  *out = NULL;
  if (!w.fs) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  int rc = 0;
  for (size_t k = 0; !rc && k < r->n_blob_tops; k++) {
    if ((rc = survey_column(&w, r->blob_tops[k], err)) <= 0) continue; /* done, or failed */
    struct ArrowArray a;
    struct ArrowSchema sc;
    rc = bri_fragment_read_field(w.fr, r->blob_tops[k], &a, &sc, err);
    if (rc) break;
    w.sees_dead = false; /* the visible rows only */
    rc = walk_blobs(m, (size_t)bri_field_index(m->fields, m->n_fields, r->blob_tops[k]), &sc, &a,
                    survey_desc, &w, NULL, err);
    a.release(&a);
    sc.release(&sc);
  }
  resolvers_close(&w.rs);
  free(w.own_dir);
  if (!rc && r->stream) rc = measure_paths(r, w.fs, err);
  if (rc) {
    frag_survey_free(w.fs);
    return rc;
  }
  *out = w.fs;
  return 0;
}

/* Reads the descriptors of fragment survey_idx[i] (a read-ahead worker). */
static int survey_fragment(void *ctx, size_t i, void **out, bri_error *err) {
  run *r = ctx;
  bri_fragment_reader *fr;
  frag_survey *fs = NULL;
  /* only the blob fields' columns are decoded: the rest waits for write_bin */
  int rc = bri_fragment_open_fields(r->t, r->m, r->m->pb->fragments[r->survey_idx[i]], r->blob_tops,
                                    r->n_blob_tops, &fr, err);
  if (!rc) rc = survey_reader(r, fr, NULL, 0, &fs, err);
  bri_fragment_close(fr);
  *out = fs;
  return rc;
}

static void survey_drop(void *ctx, void *item) {
  (void)ctx;
  frag_survey_free(item);
}

/* Every pack the survey saw: its path, the ranges that resolve to it, and
 * the fragments that reference it. */
typedef struct survey {
  bri_strmap by_path;  /* pack path -> index */
  size_t n_packs;
  char **paths;
  pack_ranges *ranges;
  size_t **frag_packs; /* per fragment: indices of the packs it references */
  size_t *n_frag_packs;
  size_t *measure, n_measure; /* the packs whose sizes stat_pack asks for */
} survey;

/* Adds one fragment's findings (the consumer's side: no lock needed). */
static int survey_merge(survey *s, size_t frag, const frag_survey *fs, uint64_t (*bytes)[4],
                        bri_error *err) {
  for (int k = 0; k < 4; k++) bytes[frag][k] = fs->bytes[k];
  size_t last_path = SIZE_MAX, last_pack = 0;
  for (size_t j = 0; j < fs->n_refs; j++) {
    const struct pack_ref *ref = &fs->refs[j];
    if (ref->path != last_path) {
      const char *path = fs->paths[ref->path];
      bri_strmap_entry *e = bri_strmap_get(&s->by_path, path);
      if (!e) {
        pack_ranges *g = realloc(s->ranges, (s->n_packs + 1) * sizeof *g);
        char **pp = realloc(s->paths, (s->n_packs + 1) * sizeof *pp);
        if (g) s->ranges = g;
        if (pp) s->paths = pp;
        if (!g || !pp || !(pp[s->n_packs] = strdup(path)) ||
            !(e = bri_strmap_put(&s->by_path, path, s->n_packs, 0))) {
          if (pp) free(pp[s->n_packs]);
          return bri_error_set(err, BRI_ENOMEM, "out of memory");
        }
        memset(&s->ranges[s->n_packs++], 0, sizeof *s->ranges);
      }
      last_path = ref->path, last_pack = e->a;
      size_t *fp = s->frag_packs[frag], n = s->n_frag_packs[frag];
      if (!n || fp[n - 1] != last_pack) {
        size_t *g = realloc(fp, (n + 1) * sizeof *g);
        if (!g) return bri_error_set(err, BRI_ENOMEM, "out of memory");
        g[n] = last_pack;
        s->frag_packs[frag] = g;
        s->n_frag_packs[frag] = n + 1;
      }
    }
    pack_ranges *pr = &s->ranges[last_pack];
    if (pr->n == pr->cap) {
      size_t cap = pr->cap ? pr->cap * 2 : 16;
      range *g = realloc(pr->v, cap * sizeof *g);
      if (!g) return bri_error_set(err, BRI_ENOMEM, "out of memory");
      pr->v = g, pr->cap = cap;
    }
    pr->v[pr->n++] = ref->r;
    pr->partial |= ref->partial;
  }
  return 0;
}

static int cmp_range(const void *a, const void *b) {
  const range *x = a, *y = b;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The bytes the ranges cover (the live ones only, or all); *end: where
 * the last one ends. */
static uint64_t union_bytes(pack_ranges *pr, bool live_only, uint64_t *end) {
  qsort(pr->v, pr->n, sizeof *pr->v, cmp_range);
  uint64_t total = 0, lo = 0, hi = 0;
  bool first = true;
  for (size_t i = 0; i < pr->n; i++) {
    if (live_only && pr->v[i].dead) continue;
    if (first || pr->v[i].lo > hi) {
      first = false;
      total += hi - lo;
      lo = pr->v[i].lo, hi = pr->v[i].hi;
    } else if (pr->v[i].hi > hi) {
      hi = pr->v[i].hi;
    }
  }
  *end = hi;
  return total + (hi - lo);
}

/* Whether the run repacks packs below the repack threshold: bri, and a
 * Managed compaction (its Managed packs and the Packed ones it would adopt). */
static bool repacks(const run *r) {
  return r->req->strategy == BRI_STRATEGY_BRI || r->req->strategy == BRI_STRATEGY_MANAGED;
}

/* Whether the survey must ask the store for a pack's size: a request per
 * pack on an object store, three system calls locally (at thousands of
 * fragments, a third of a compaction's). Not when the descriptors tell:
 * the ranges (live, and dead where seen: survey_desc) fill [0, end) and no
 * value of the pack can be hidden from them (a pack of the data file's own,
 * every row visible: a pack holds exactly its values, docs/format/blob.md
 * 3), so the size is end. On an object store not either when the size
 * decides nothing: strategies that do not repack never repack by
 * utilization (the size is only reported, as unknown), and ranges that
 * cover less than the threshold of [0, end) are below it whatever the size
 * (size >= end). */
static bool size_needed(const run *r, const bri_store *st, const pack_use *u) {
  if (!u->partial && u->covered == u->end) return false;
  if (bri_store_caps(st) & BRI_STORE_CAP_LOCAL) return true;
  if (!repacks(r)) return false;
  return !(u->end && (double)u->used < r->req->options.repack_threshold * (double)u->end);
}

/* A pack's utilization: its live bytes over its size (when not measured,
 * size_needed: its end for a pack known whole, else a bound from the end).
 * *size: the size when known (measured, or end for a pack known whole),
 * else 0. */
static double pack_utilization(const pack_use *u, uint64_t *size) {
  bool whole = !u->partial && u->covered == u->end;
  *size = u->size != SIZE_UNMEASURED ? u->size : whole ? u->end : 0;
  if (*size) return (double)u->used / (double)*size;
  return u->size != SIZE_UNMEASURED || whole || !u->end ? 1.0 : (double)u->used / (double)u->end;
}

/* What ranges pr tell of their pack (its size not measured yet; pr sorted). */
static void pack_use_of(pack_ranges *pr, pack_use *u) {
  u->used = union_bytes(pr, true, &u->end);
  u->covered = union_bytes(pr, false, &u->end);
  u->partial = pr->partial;
  u->size = SIZE_UNMEASURED;
}

/* The ranges of the fragment surveyed as fs that lie in its pack paths[k]. */
static int path_ranges(const frag_survey *fs, size_t k, pack_ranges *pr, bri_error *err) {
  *pr = (pack_ranges){0};
  for (size_t j = 0; j < fs->n_refs; j++) {
    if (fs->refs[j].path != k) continue;
    if (pr->n == pr->cap) {
      range *g = realloc(pr->v, (pr->cap = pr->cap ? 2 * pr->cap : 8) * sizeof *g);
      if (!g) {
        free(pr->v);
        return bri_error_set(err, BRI_ENOMEM, "out of memory");
      }
      pr->v = g;
    }
    pr->v[pr->n++] = fs->refs[j].r;
    pr->partial |= fs->refs[j].partial;
  }
  return 0;
}

/* The size of a pack, through the run's cache (the writing checks every
 * value against the same sizes, blob/sizes.h). A missing pack measures 0
 * (utilization 1: never repacked); a value in it is refused when written. */
static int pack_size(run *r, bri_store *st, const char *path, uint64_t *size, bri_error *err) {
  int rc = bri_sidecar_sizes_get(r->sizes, st, path, size, err);
  if (rc == BRI_ENOTFOUND) rc = 0, *size = 0;
  return rc;
}

/* What a fragment holds of each pack it references (stream mode: they are
 * its own, no other fragment's), and their sizes where size_needed asks. */
static int measure_paths(run *r, frag_survey *fs, bri_error *err) {
  if (!(fs->use = calloc(fs->n_paths + 1, sizeof *fs->use)))
    return bri_error_set(err, BRI_ENOMEM, "out of memory");
  for (size_t k = 0; k < fs->n_paths; k++) {
    pack_use *u = &fs->use[k];
    bri_store *st;
    pack_ranges pr;
    int rc = path_ranges(fs, k, &pr, err);
    if (rc) return rc;
    pack_use_of(&pr, u);
    free(pr.v);
    rc = bri_table_store_of(r->t, r->m->pb, fs->paths[k], &st, err);
    if (!rc && size_needed(r, st, u)) rc = pack_size(r, st, fs->paths[k], &u->size, err);
    if (rc) return bri_error_wrap(err, "measuring pack utilization");
  }
  return 0;
}

/* The size of pack i of the survey (a read-ahead worker: one stat locally;
 * on an object store its directory's listing, once per directory). */
static int stat_pack(void *ctx, size_t i, void **out, bri_error *err) {
  run *r = ctx;
  const char *path = r->survey->paths[r->survey->measure[i]];
  bri_store *st;
  uint64_t *size = malloc(sizeof *size);
  int rc = size ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (!rc) rc = bri_table_store_of(r->t, r->m->pb, path, &st, err);
  if (!rc) rc = pack_size(r, st, path, size, err);
  if (rc) {
    free(size);
    return bri_error_wrap(err, "measuring pack utilization");
  }
  *out = size;
  return 0;
}

static void drop_pack_stat(void *ctx, void *item) {
  (void)ctx;
  free(item);
}

/* Surveys fragments idx[0..n) (manifest indices), read_ahead at a time,
 * into r->fs. */
static int survey_fragments(run *r, const size_t *idx, size_t n) {
  bri_readahead *ra = NULL;
  r->survey_idx = idx;
  int rc = read_ahead(r, n, survey_fragment, survey_drop, &ra);
  for (size_t k = 0; !rc && k < n; k++) {
    void *fs;
    rc = bri_readahead_take(ra, &fs, r->err);
    if (!rc) r->fs[idx[k]] = fs;
  }
  bri_readahead_stop(ra);
  return rc;
}

/* Whether a pack of the fragment surveyed as fs (stream mode: its own) is
 * below the repack threshold; adds those to low (when not NULL). */
static bool fragment_low_packs(run *r, const frag_survey *fs, bri_strset *low) {
  bool any = false;
  if (!repacks(r) || !fs) return false;
  for (size_t k = 0; k < fs->n_paths; k++) {
    uint64_t size;
    if (pack_utilization(&fs->use[k], &size) < r->req->options.repack_threshold) {
      any = true;
      if (low) (void)bri_strset_add(low, fs->paths[k]);
    }
  }
  return any;
}

/* Merges what the survey found (r->fs, in manifest order): the pack list
 * of the plan, per-fragment byte counts, and, outside stream mode, repack
 * (packs below the threshold) and repack_wanted per fragment (the packs
 * are measured here then; stream mode measured each with its fragment). */
static int survey_finish(run *r, bool *repack_wanted, uint64_t (*bytes)[4], json_t *plan_packs) {
  const Lance__Table__Manifest *m = r->m->pb;
  survey s = {0};
  s.frag_packs = calloc(m->n_fragments + 1, sizeof *s.frag_packs);
  s.n_frag_packs = calloc(m->n_fragments + 1, sizeof *s.n_frag_packs);
  int rc = s.frag_packs && s.n_frag_packs ? 0 : bri_error_set(r->err, BRI_ENOMEM, "out of memory");
  for (size_t i = 0; !rc && i < m->n_fragments; i++)
    if (r->fs[i]) rc = survey_merge(&s, i, r->fs[i], bytes, r->err);
  bool *low = calloc(s.n_packs + 1, sizeof *low);
  pack_use *use = calloc(s.n_packs + 1, sizeof *use);
  s.measure = calloc(s.n_packs + 1, sizeof *s.measure);
  if (!rc && (!low || !use || !s.measure)) rc = bri_error_set(r->err, BRI_ENOMEM, "out of memory");
  /* stream mode: each pack is one fragment's own, measured with it */
  for (size_t i = 0; !rc && r->stream && i < m->n_fragments; i++)
    for (size_t k = 0; r->fs[i] && k < r->fs[i]->n_paths; k++)
      use[bri_strmap_get(&s.by_path, r->fs[i]->paths[k])->a] = r->fs[i]->use[k];
  for (size_t p = 0; !rc && !r->stream && p < s.n_packs; p++) {
    bri_store *st;
    pack_use_of(&s.ranges[p], &use[p]);
    if ((rc = bri_table_store_of(r->t, m, s.paths[p], &st, r->err)) != 0) break;
    if (size_needed(r, st, &use[p])) s.measure[s.n_measure++] = p;
  }
  bri_readahead *ra = NULL;
  r->survey = &s;
  if (!rc && !r->stream) rc = read_ahead(r, s.n_measure, stat_pack, drop_pack_stat, &ra);
  for (size_t p = 0, next = 0; !rc && p < s.n_packs; p++) {
    uint64_t size;
    if (!r->stream && next < s.n_measure && s.measure[next] == p) {
      void *got;
      if ((rc = bri_readahead_take(ra, &got, r->err)) != 0) break;
      use[p].size = *(uint64_t *)got;
      free(got);
      next++;
    }
    double util = pack_utilization(&use[p], &size);
    bool known = size || use[p].size != SIZE_UNMEASURED;
    low[p] = util < r->req->options.repack_threshold && repacks(r);
    if (low[p]) {
      r->rep->packs_below_threshold++;
      if (!r->stream && !bri_strset_add(&r->repack, s.paths[p]))
        rc = bri_error_set(r->err, BRI_ENOMEM, "out of memory");
    }
    /* (built key by key: json_pack parses its format for each of thousands of packs) */
    json_t *o = json_object();
    json_object_set_new_nocheck(o, "path", json_string_nocheck(s.paths[p]));
    json_object_set_new_nocheck(o, "bytes", known ? json_integer((json_int_t)size) : json_null());
    json_object_set_new_nocheck(o, "live_bytes", json_integer((json_int_t)use[p].used));
    json_object_set_new_nocheck(o, "utilization", known ? json_real(util) : json_null());
    json_object_set_new_nocheck(o, "repack", json_boolean(low[p]));
    json_array_append_new(plan_packs, o);
  }
  bri_readahead_stop(ra);
  /* one pass over the fragments' pack lists, not one per low pack */
  for (size_t i = 0; !rc && i < m->n_fragments; i++)
    for (size_t k = 0; k < s.n_frag_packs[i]; k++) repack_wanted[i] |= low[s.frag_packs[i][k]];
  free(low), free(use), free(s.measure);
  if (!r->stream) bri_strset_freeze(&r->repack);
  for (size_t p = 0; p < s.n_packs; p++) free(s.ranges[p].v), free(s.paths[p]);
  for (size_t i = 0; s.frag_packs && i < m->n_fragments; i++) free(s.frag_packs[i]);
  free(s.ranges), free(s.paths), free(s.frag_packs), free(s.n_frag_packs);
  bri_strmap_dispose(&s.by_path);
  return rc;
}

/* ---------------------------------------------------------------- writing */

typedef struct bin_ctx {
  run *r;
  bri_fragment_reader *fr;
  resolvers rs;
  pre_col *pre; /* decoded ahead (open_fragment), or NULL */
  size_t n_pre;
  bri_blob_out *out;         /* where Packed/Dedicated payloads go, by strategy; or */
  bri_managed_out *managed;  /* a Managed table's descriptors */
  bri_file_writer *w;
  uint64_t inline_bytes;
  /* where the values being rewritten sit, for a refusal's message: the
   * fragment, and value i's row offset (row_of[row_base + i] when the rows
   * are the reader's visible ones, else row_base + i) while i is one of the
   * n_rows rows at hand; a value of a nested (list) field has an index past
   * them, and no row is named for it */
  uint64_t frag_id, row_base, n_rows;
  const uint32_t *row_of;
} bin_ctx;

static int rewrite_desc(void *ctx, int32_t field_id, uint64_t i, uint8_t *kind, uint64_t *position,
                        uint64_t *size, uint32_t *blob_id, const char *uri, size_t uri_len, bri_error *err) {
  bin_ctx *b = ctx;
  if (b->managed ? *kind == 0 || *kind == 3 : *kind != 1 && *kind != 2)
    return 0; /* Inline: the writer copies; External: unchanged */
  bri_blob_resolver *res;
  bri_value_ref where = {b->r->t->root, b->frag_id, BRI_VALUE_ROW_UNKNOWN};
  if (i < b->n_rows) where.row = b->row_of ? b->row_of[b->row_base + i] : b->row_base + i;
  int rc = resolver_for(b->r, &b->rs, b->fr, field_id, &res, err);
  if (!rc && b->managed)
    return bri_managed_rewrite(b->managed, res, bri_fragment_field_datafile(b->fr, field_id), i, kind, position,
                               *size, blob_id, uri, uri_len, &where, err);
  return rc ? rc : bri_blob_out_rewrite(b->out, res, *kind, blob_id, position, *size, &where, err);
}

/* The writer asks for the bytes of an Inline value: they sit at `position`
 * of the source data file that stores the blob column. */
static int inline_payload(void *ctx, size_t column, uint64_t index, uint64_t position,
                          uint64_t size, uint8_t *dst, bri_error *err) {
  (void)index;
  bin_ctx *b = ctx;
  int32_t fid = bri_file_writer_column_field(b->w, column);
  bri_datafile *df = bri_fragment_field_file(b->fr, fid);
  if (!df) return bri_error_set(err, BRI_ECORRUPT, "%s: inline blob of field %d has no data file", b->r->t->root, fid);
  b->inline_bytes += size;
  return bri_datafile_read_into(df, position, size, dst, err);
}

/* Row ids (and row version sequences) of the visible rows of a fragment,
 * appended to ids / created / updated (which may stay unused). */
typedef struct u64vec { uint64_t *v; size_t n, cap; } u64vec;

static int vec_push(u64vec *v, uint64_t x) {
  if (v->n == v->cap) {
    size_t cap = v->cap ? v->cap * 2 : 1024;
    uint64_t *g = realloc(v->v, cap * sizeof *g);
    if (!g) return -1;
    v->v = g, v->cap = cap;
  }
  v->v[v->n++] = x;
  return 0;
}

static int carry_row_meta(run *r, const Lance__Table__DataFragment *f, bri_fragment_reader *fr,
                          bool stable, u64vec *ids, u64vec *created, u64vec *updated) {
  bri_error *err = r->err;
  uint64_t nrows = bri_fragment_num_rows(fr), phys = bri_fragment_physical_rows(fr);
  const uint32_t *off = bri_fragment_row_offsets(fr);
  uint64_t *all = NULL, *cv = NULL, *uv = NULL;
  size_t n = 0;
  int rc = 0;
  if (stable) {
    rc = bri_fragment_row_ids(r->t->root, f, &all, &n, err);
    if (!rc && n != phys)
      rc = bri_error_set(err, BRI_ECORRUPT, "%s: fragment %llu has %zu row ids for %llu rows", r->t->root,
                         (unsigned long long)f->id, n, (unsigned long long)phys);
  }
  if (!rc && f->created_at_version_sequence_case == LANCE__TABLE__DATA_FRAGMENT__CREATED_AT_VERSION_SEQUENCE_INLINE_CREATED_AT_VERSIONS)
    rc = bri_versions_unpack(f->inline_created_at_versions.data, f->inline_created_at_versions.len, phys, &cv, err);
  if (!rc && f->last_updated_at_version_sequence_case == LANCE__TABLE__DATA_FRAGMENT__LAST_UPDATED_AT_VERSION_SEQUENCE_INLINE_LAST_UPDATED_AT_VERSIONS)
    rc = bri_versions_unpack(f->inline_last_updated_at_versions.data, f->inline_last_updated_at_versions.len, phys, &uv, err);
  for (uint64_t i = 0; !rc && i < nrows; i++) {
    uint32_t o = off[i];
    /* docs/format/table.md 12: a missing created_at is version 1, a missing last_updated its created_at */
    uint64_t c = cv ? cv[o] : 1, u = uv ? uv[o] : c;
    if ((stable && vec_push(ids, all[o])) || vec_push(created, c) || vec_push(updated, u))
      rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  free(all), free(cv), free(uv);
  return rc;
}

/* Progress report and cancellation point after rows were appended. The
 * bytes are everything written so far: the finished bins' data files and
 * copied payload, and the current bin's. */
static int after_rows(run *r, bin_ctx *b, uint64_t rows) {
  r->rows_done += rows;
  if (r->hooks && r->hooks->progress) {
    uint64_t bytes = r->rep->data_bytes_written + r->rep->payload_bytes_copied + bri_file_writer_bytes(b->w);
    if (b->out) bytes += bri_blob_out_stats_of(b->out)->copied_bytes;
    if (b->managed) bytes += bri_managed_out_stats(b->managed)->repacked_bytes;
    r->hooks->progress(r->hooks->user, r->rows_done, r->rows_total, bytes);
  }
  if (cancelled(r)) return bri_error_set(r->err, BRI_ECANCELLED, "%s: compaction cancelled", r->t->root);
  return bri_failpoint("compact.after_rows", r->err);
}

/* Appends the visible rows of the open fragment, decoded in batches: every
 * top-level field read as Arrow, Blob v2 descriptors rewritten, appended. */
static int append_decoded(run *r, bin_ctx *b, const size_t *top, size_t n_top,
                          struct ArrowArray *arrays, struct ArrowSchema *schemas,
                          const struct ArrowArray **aptr, uint64_t batch) {
  const Lance__Table__Manifest *m = r->m->pb;
  bri_error *err = r->err;
  uint64_t rows = bri_fragment_num_rows(b->fr);
  int rc = 0;
  for (uint64_t start = 0; !rc && start < rows; start += batch) {
    uint64_t count = rows - start < batch ? rows - start : batch;
    size_t got = 0;
    for (; got < n_top && !rc; got++) {
      rc = bri_fragment_read_rows(b->fr, m->fields[top[got]]->id, start, count, &arrays[got], &schemas[got], err);
      if (rc) break;
      aptr[got] = &arrays[got];
      b->row_base = start, b->n_rows = count, b->row_of = bri_fragment_row_offsets(b->fr);
      rc = walk_blobs(m, top[got], &schemas[got], &arrays[got], rewrite_desc, b, b->managed, err);
      if (rc) {
        got++;
        break;
      }
    }
    if (!rc) rc = bri_file_writer_append(b->w, aptr, n_top, inline_payload, b, err);
    for (size_t i = 0; i < got && i < n_top; i++) {
      bri_arrow_array_release(&arrays[i]);
      bri_arrow_schema_release(&schemas[i]);
    }
    if (!rc) rc = after_rows(r, b, count);
  }
  return rc;
}

/* Whether fragment f is stored in one data file of the output's version
 * whose columns are the output's columns. */
static bool same_columns(bin_ctx *b, const Lance__Table__DataFragment *f, uint16_t minor) {
  if (f->n_files != 1) return false;
  const Lance__Table__DataFile *df = f->files[0];
  size_t n = bri_file_writer_num_columns(b->w);
  if (df->file_major_version != 2 || df->file_minor_version != minor || df->n_fields != n ||
      df->n_column_indices != n)
    return false;
  for (size_t c = 0; c < n; c++)
    if (df->fields[c] != bri_file_writer_column_field(b->w, c) || df->column_indices[c] != (int32_t)c)
      return false;
  return true;
}

/* Page copy applies to such a fragment without deletions (docs/format/file.md
 * section 9); the bin's other fragments may still be decoded. */
static bool copyable(bin_ctx *b, const Lance__Table__DataFragment *f, uint16_t minor) {
  return !(f->deletion_file && f->deletion_file->num_deleted_rows) && same_columns(b, f, minor);
}

/* Rewrites the Blob v2 descriptors of a decoded page in place (slots of
 * null blobs hold zeros, kind 0, which needs no rewrite). */
static int rewrite_page_descriptors(bin_ctx *b, int32_t field_id, bri_leaf_page *lp, bri_error *err) {
  bri_values *v = &lp->values;
  if (v->kind != BRI_LEAF_STRUCT || v->n_children < 4)
    return bri_error_set(err, BRI_ECORRUPT, "%s: blob field %d decoded to no descriptor", b->r->t->root, field_id);
  uint8_t *kind = v->children[0].data;
  uint64_t *pos = (uint64_t *)v->children[1].data, *size = (uint64_t *)v->children[2].data;
  uint32_t *id = (uint32_t *)v->children[3].data;
  int rc = 0;
  for (uint64_t i = 0; !rc && i < v->n; i++) {
    size_t len;
    const char *uri = page_uri(v, i, &len);
    rc = rewrite_desc(b, field_id, i, &kind[i], &pos[i], &size[i], &id[i], uri, len, err);
  }
  return !rc && b->managed ? bri_managed_apply_values(b->managed, v, err) : rc;
}

/* Pages of fewer rows than this (on average in a column) are not copied
 * verbatim but re-encoded, so that the writer gathers them into pages of
 * its target size: a bin of many small appends copied page by page comes
 * out as thousands of tiny pages, which LanceDB scans several times slower
 * than one re-encoded file. */
#define COPY_MIN_PAGE_ROWS 1024

static bool pages_worth_copying(const bri_column *col) {
  return !col->n_pages || col->n_rows / col->n_pages >= COPY_MIN_PAGE_ROWS;
}

/* Appends the open fragment column by column: pages copied verbatim where
 * pagecopy allows (Lance's own encodings kept) and they are not tiny, else
 * decoded and re-encoded (always for Blob v2 columns, whose descriptors
 * change). */
static int append_copied(run *r, bin_ctx *b, const Lance__Table__DataFragment *f, uint16_t minor) {
  (void)minor;
  bri_error *err = r->err;
  size_t n = bri_file_writer_num_columns(b->w);
  int rc = 0;
  for (size_t c = 0; !rc && c < n; c++) {
    int32_t fid = bri_file_writer_column_field(b->w, c);
    bri_datafile *src = bri_fragment_field_file(b->fr, fid);
    if (!src) return bri_error_set(err, BRI_ECORRUPT, "%s: fragment %llu stores no column for field %d",
                                   r->t->root, (unsigned long long)f->id, fid);
    bool blob = bri_file_writer_column_is_blob(b->w, c);
    const bri_column *col = bri_datafile_column(src, c);
    bri_error why;
    if (!blob && col && pages_worth_copying(col) && bri_pagecopy_check(b->w, c, src, c, &why) == 0) {
      rc = bri_file_writer_copy_column(b->w, c, src, c, err);
      continue;
    }
    pre_col *pre = NULL;
    for (size_t k = 0; blob && k < b->n_pre && !pre; k++)
      if (b->pre[k].df == src && b->pre[k].col == c) pre = &b->pre[k];
    b->row_of = NULL, b->row_base = 0; /* no deletions: page rows are the fragment's */
    for (size_t p = 0; !rc && col && p < col->n_pages; b->row_base += col->pages[p].n_rows, p++) {
      bri_leaf_page lp;
      b->n_rows = col->pages[p].n_rows;
      if (pre) lp = pre->pages[p], memset(&pre->pages[p], 0, sizeof lp); /* taken */
      else rc = bri_page_decode(src, c, p, bri_file_writer_column_type(b->w, c), &lp, err);
      if (!rc && blob) rc = rewrite_page_descriptors(b, fid, &lp, err);
      if (!rc) rc = bri_file_writer_append_leaf(b->w, c, &lp, inline_payload, b, err);
      bri_leaf_page_dispose(&lp);
    }
  }
  return rc ? rc : after_rows(r, b, f->physical_rows);
}

/* A fragment opened ahead of write_bin: its reader, the resolvers of its
 * blob fields and, when small, its blob columns' pages decoded: most of a
 * small fragment's work, done on a read-ahead thread beside the writer. */
typedef struct opened {
  bri_fragment_reader *fr;
  resolvers rs;
  pre_col *pre;
  size_t n_pre;
  struct frag_survey *fs; /* stream mode: its survey, made here */
} opened;

/* Blob pages decoded ahead hold at most this many buffer bytes per
 * fragment (a window of opened fragments stays small). */
#define PREDECODE_MAX ((uint64_t)256 << 10)

static void pre_free(pre_col *pre, size_t n) {
  for (size_t k = 0; k < n; k++) {
    for (size_t p = 0; p < pre[k].n_pages; p++) bri_leaf_page_dispose(&pre[k].pages[p]);
    free(pre[k].pages);
  }
  free(pre);
}

static void close_fragment(void *ctx, void *item) {
  (void)ctx;
  opened *o = item;
  if (!o) return;
  bri_fragment_close(o->fr);
  resolvers_close(&o->rs);
  pre_free(o->pre, o->n_pre);
  frag_survey_free(o->fs);
  free(o);
}

/* Decodes the small top-level blob columns of a fragment page copy will
 * take whole (no deletions, one data file), and opens their resolvers. */
static int prepare_blobs(run *r, opened *o, const Lance__Table__DataFragment *f, bri_error *err) {
  if ((f->deletion_file && f->deletion_file->num_deleted_rows) || f->n_files != 1 || !r->n_blob_tops)
    return 0;
  if (!(o->pre = calloc(r->n_blob_tops, sizeof *o->pre))) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  int rc = 0;
  for (size_t k = 0; !rc && k < r->n_blob_tops; k++) {
    bri_datafile *df;
    size_t col;
    bri_leaf_type type;
    bri_error why;
    if (bri_fragment_leaf_column(o->fr, r->blob_tops[k], &df, &col, &type, &why) != 0) continue;
    const bri_column *c = bri_datafile_column(df, col);
    uint64_t bytes = 0;
    for (size_t p = 0; p < c->n_pages; p++)
      for (size_t q = 0; q < c->pages[p].n_buffers; q++) bytes += c->pages[p].buffer_sizes[q];
    if (bytes > PREDECODE_MAX) continue; /* write_bin decodes it, page by page */
    pre_col *pc = &o->pre[o->n_pre];
    if (!(pc->pages = calloc(c->n_pages + 1, sizeof *pc->pages))) return bri_error_set(err, BRI_ENOMEM, "out of memory");
    pc->df = df, pc->col = col;
    o->n_pre++;
    for (; !rc && pc->n_pages < c->n_pages; pc->n_pages++)
      rc = bri_page_decode(df, col, pc->n_pages, &type, &pc->pages[pc->n_pages], err);
    bri_blob_resolver *res;
    if (!rc) rc = resolver_for(r, &o->rs, o->fr, r->blob_tops[k], &res, err);
  }
  return rc;
}

/* Opens fragment order[i] (a read-ahead worker). */
static int open_fragment(void *ctx, size_t i, void **out, bri_error *err) {
  run *r = ctx;
  const Lance__Table__DataFragment *f = r->m->pb->fragments[r->order[i]];
  opened *o = calloc(1, sizeof *o);
  int rc = o ? bri_fragment_open(r->t, r->m, f, &o->fr, err) : bri_error_set(err, BRI_ENOMEM, "out of memory");
  size_t n_gb;
  const char *gb = rc ? NULL : bri_fragment_extra_buffers(o->fr, &n_gb);
  if (gb) /* the output gets only the schema buffer: refuse rather than drop (docs/format/compatibility.md) */
    rc = bri_error_set(err, BRI_EUNSUPPORTED, "%s: %zu global buffers; brid writes only the schema "
                       "buffer and will not drop the others a newer Lance wrote", gb, n_gb);
  if (!rc) rc = prepare_blobs(r, o, f, err);
  /* (r->fs[k] of another fragment may be written meanwhile; this one's was
   * set before writing began, by the upfront survey, or never) */
  if (!rc && r->stream && !r->fs[r->order[i]]) rc = survey_reader(r, o->fr, o->pre, o->n_pre, &o->fs, err);
  if (rc) {
    close_fragment(r, o);
    o = NULL;
  }
  *out = o;
  return rc;
}

/* The surviving rows of the open fragment as one part of the bin's changed
 * row addresses (compact/fri.h): the offsets the reader delivered, in order. */
static int note_rows(bri_fragment_reader *fr, const Lance__Table__DataFragment *f,
                     bri_treemap_part *part, bri_error *err) {
  part->high = (uint32_t)f->id;
  part->low = roaring_bitmap_of_ptr(bri_fragment_num_rows(fr), bri_fragment_row_offsets(fr));
  return part->low ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
}

/* The output's file version: the table's data storage version. */
static int output_minor(run *r, uint16_t *minor) {
  const Lance__Table__Manifest *m = r->m->pb;
  *minor = 2;
  if (m->data_format && m->data_format->version && !strcmp(m->data_format->version, "2.1")) *minor = 1;
  else if (m->data_format && m->data_format->version && strcmp(m->data_format->version, "2.2"))
    return bri_error_set(r->err, BRI_EUNSUPPORTED, "%s: data storage version %s is not supported (2.1 and 2.2 "
                         "are)", r->t->root, m->data_format->version);
  return 0;
}

/* The DataFile of an output written as data/<stem>.lance (res: what the
 * writer reported; its field lists are taken). */
static Lance__Table__DataFile *output_datafile(bri_file_result *res, const char *stem) {
  Lance__Table__DataFile *df = calloc(1, sizeof *df);
  if (!df) return NULL;
  lance__table__data_file__init(df);
  if (!(df->path = bri_strdupf("%s.lance", stem))) {
    free(df);
    return NULL;
  }
  df->fields = res->fields, df->n_fields = res->n_columns, res->fields = NULL;
  df->column_indices = res->column_indices, df->n_column_indices = res->n_columns, res->column_indices = NULL;
  df->has_file_major_version = df->has_file_minor_version = df->has_file_size_bytes = 1;
  df->file_major_version = res->major, df->file_minor_version = res->minor;
  df->file_size_bytes = res->file_size;
  return df;
}

/* A Managed output's counts into the run's report. */
static void count_managed(run *r, const bri_managed_out *mo) {
  const bri_managed_stats *st = bri_managed_out_stats(mo);
  r->rep->managed_kept += st->kept;
  r->rep->managed_adopted += st->adopted;
  r->rep->payload_bytes_reused += st->adopted_bytes;
  r->rep->managed_repacked += st->repacked;
  r->rep->payload_bytes_copied += st->repacked_bytes;
}

/* Writes one bin into a new data file; fills *frag (id 0) and, without
 * stable row ids, *changed (the serialized changed row addresses). */
static int write_bin(run *r, const bri_plan_bin *bin, const char *stem, Lance__Table__DataFragment **frag,
                     bool *any_versions, uint8_t **changed, size_t *changed_len) {
  const Lance__Table__Manifest *m = r->m->pb;
  bri_error *err = r->err;
  char *path = bri_strdupf("%s/data/%s.lance", r->t->root, stem);
  char *own_dir = bri_strdupf("%s/data/%s", r->t->root, stem);
  bin_ctx b = {.r = r};
  bool stable = (m->reader_feature_flags & BRI_FLAG_STABLE_ROW_IDS) != 0;
  u64vec ids = {0}, created = {0}, updated = {0};
  bri_file_result res = {0};
  bri_treemap_part *parts = stable ? NULL : calloc(bin->count + 1, sizeof *parts);
  size_t n_parts = 0;
  size_t n_top = 0;
  size_t *top = calloc(m->n_fields + 1, sizeof *top);
  struct ArrowArray *arrays = calloc(m->n_fields + 1, sizeof *arrays);
  struct ArrowSchema *schemas = calloc(m->n_fields + 1, sizeof *schemas);
  const struct ArrowArray **aptr = calloc(m->n_fields + 1, sizeof *aptr);
  int rc = path && own_dir && top && arrays && schemas && aptr && (stable || parts)
               ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
  for (size_t i = 0; i < m->n_fields; i++)
    if (m->fields[i]->parent_id == -1) top[n_top++] = i;
  uint16_t minor;
  if (!rc) rc = output_minor(r, &minor);
  if (!rc) rc = bri_file_writer_open(r->t->store, path, minor, m->fields, m->n_fields, NULL, &b.w, err);
  if (!rc && r->managed) rc = bri_managed_out_new(r->t, m, r->sizes, &r->repack, &r->out, &b.managed, err);
  else if (!rc) rc = bri_blob_out_open(r->t, m, own_dir, r->req->strategy, &r->repack, r->sizes, &r->out, &b.out, err);
  uint64_t batch = r->req->batch_rows ? r->req->batch_rows : 16384;
  for (size_t k = 0; !rc && k < bin->count; k++) {
    const Lance__Table__DataFragment *f = m->fragments[bin->first + k];
    void *item;
    if ((rc = bri_readahead_take(r->opened, &item, err)) != 0) break;
    opened *o = item;
    b.fr = o->fr, b.rs = o->rs, b.pre = o->pre, b.n_pre = o->n_pre, b.frag_id = f->id;
    size_t fi = bin->first + k;
    if (o->fs) r->fs[fi] = o->fs;
    free(o);
    if (r->stream) {
      /* this fragment's packs are its own: their repack decision is made
       * here, from its survey alone, before its descriptors are rewritten */
      bri_strset_dispose(&r->repack);
      r->repack_wanted[fi] = fragment_low_packs(r, r->fs[fi], &r->repack);
      bri_strset_freeze(&r->repack);
    }
    if (copyable(&b, f, minor)) {
      rc = append_copied(r, &b, f, minor);
      r->rep->fragments_page_copied++;
    } else {
      rc = append_decoded(r, &b, top, n_top, arrays, schemas, aptr, batch);
    }
    if (!rc) rc = carry_row_meta(r, f, b.fr, stable, &ids, &created, &updated);
    if (parts && (f->id > UINT32_MAX || (n_parts && f->id <= parts[n_parts - 1].high))) {
      /* ids that do not ascend: no fragment reuse index for this bin (the
       * planner only makes such bins where no index needs one) */
      bri_treemap_free(parts, n_parts);
      parts = NULL, n_parts = 0;
    }
    if (!rc && parts && bri_fragment_num_rows(b.fr))
      rc = note_rows(b.fr, f, &parts[n_parts++], err);
    bri_fragment_close(b.fr);
    b.fr = NULL;
    resolvers_close(&b.rs);
    pre_free(b.pre, b.n_pre);
    b.pre = NULL, b.n_pre = 0;
  }
  /* durable with data/ synced: the sidecar directory's name too (blobout.h) */
  if (!rc) rc = bri_file_writer_finish(b.w, &res, err);
  if (!rc && parts) rc = bri_treemap_encode(parts, n_parts, changed, changed_len, err);
  bri_treemap_free(parts, n_parts);
  Lance__Table__DataFragment *nf = NULL;
  Lance__Table__DataFile *df = NULL;
  if (!rc) {
    nf = calloc(1, sizeof *nf);
    df = output_datafile(&res, stem);
    Lance__Table__DataFile **files = calloc(1, sizeof *files);
    if (!nf || !df || !files) {
      free(nf), free(files);
      if (df) lance__table__data_file__free_unpacked(df, NULL);
      nf = NULL;
      rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    } else {
      lance__table__data_fragment__init(nf);
      files[0] = df;
      nf->files = files, nf->n_files = 1;
      nf->has_id = 1, nf->id = 0;
      nf->has_physical_rows = 1, nf->physical_rows = res.num_rows;
      r->rep->data_bytes_written += res.file_size;
      r->rep->rows += res.num_rows;
      if (b.out) rc = bri_blob_out_finish(b.out, df, err);
      else if (b.managed) rc = bri_managed_out_finish(b.managed, err);
    }
  }
  if (!rc && stable) {
    nf->row_id_sequence_case = LANCE__TABLE__DATA_FRAGMENT__ROW_ID_SEQUENCE_INLINE_ROW_IDS;
    rc = bri_u64seq_pack(ids.v, ids.n, &nf->inline_row_ids.data, &nf->inline_row_ids.len, err);
  }
  bool versions = false;
  for (size_t k = 0; k < bin->count; k++) {
    const Lance__Table__DataFragment *f = m->fragments[bin->first + k];
    versions |= f->created_at_version_sequence_case != LANCE__TABLE__DATA_FRAGMENT__CREATED_AT_VERSION_SEQUENCE__NOT_SET ||
                f->last_updated_at_version_sequence_case != LANCE__TABLE__DATA_FRAGMENT__LAST_UPDATED_AT_VERSION_SEQUENCE__NOT_SET;
  }
  if (!rc && versions) {
    nf->created_at_version_sequence_case = LANCE__TABLE__DATA_FRAGMENT__CREATED_AT_VERSION_SEQUENCE_INLINE_CREATED_AT_VERSIONS;
    nf->last_updated_at_version_sequence_case = LANCE__TABLE__DATA_FRAGMENT__LAST_UPDATED_AT_VERSION_SEQUENCE_INLINE_LAST_UPDATED_AT_VERSIONS;
    rc = bri_versions_pack(created.v, created.n, &nf->inline_created_at_versions.data, &nf->inline_created_at_versions.len, err);
    if (!rc) rc = bri_versions_pack(updated.v, updated.n, &nf->inline_last_updated_at_versions.data, &nf->inline_last_updated_at_versions.len, err);
    *any_versions = true;
  }
  if (b.out) {
    const bri_blob_out_stats *st = bri_blob_out_stats_of(b.out);
    r->rep->payload_bytes_copied += st->copied_bytes;
    r->rep->payload_bytes_reused += st->reused_bytes;
    r->rep->links += st->links;
    r->rep->links_refused |= st->links_refused;
  }
  if (b.managed) count_managed(r, b.managed);
  r->rep->inline_bytes_copied += b.inline_bytes;
  if (rc && nf) {
    lance__table__data_fragment__free_unpacked(nf, NULL);
    nf = NULL;
  }
  *frag = nf;
  if (b.fr) bri_fragment_close(b.fr);
  resolvers_close(&b.rs);
  pre_free(b.pre, b.n_pre);
  bri_blob_out_close(b.out);
  bri_managed_out_free(b.managed);
  bri_file_writer_free(b.w);
  bri_file_result_dispose(&res);
  free(ids.v), free(created.v), free(updated.v);
  free(path), free(own_dir), free(top), free(arrays), free(schemas), free(aptr);
  return rc;
}

/* ------------------------------------------------------ one data file, Managed */

int bri_compact_refile_managed(bri_table *t, const bri_manifest *m, const Lance__Table__DataFragment *f,
                               const char *stem, bri_sidecar_sizes *sizes, bri_outputs *outs,
                               Lance__Table__DataFile **out, bri_compact_report *rep, bri_error *err) {
  *out = NULL;
  bri_compact_request q;
  bri_compact_request_default(&q);
  q.strategy = BRI_STRATEGY_MANAGED;
  /* (a run that only reads m: no plan, no commit) */
  run r = {.req = &q, .hooks = outs->hooks, .rep = rep, .err = err, .t = t, .m = (bri_manifest *)m, .sizes = sizes,
           .managed = true};
  bin_ctx b = {.r = &r, .frag_id = f->id};
  bri_file_result res = {0};
  char *path = bri_strdupf("%s/data/%s.lance", t->root, stem);
  uint16_t minor;
  int rc = path ? output_minor(&r, &minor) : bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (!rc) rc = bri_outputs_add(outs, path, 0, err);
  if (!rc) rc = bri_file_writer_open(t->store, path, minor, m->pb->fields, m->pb->n_fields, NULL, &b.w, err);
  if (!rc) rc = bri_managed_out_new(t, m->pb, sizes, NULL, outs, &b.managed, err);
  if (!rc) rc = bri_fragment_open(t, m, f, &b.fr, err);
  /* every physical row, page by page: the fragment keeps its deletion file */
  if (!rc && !same_columns(&b, f, minor))
    rc = bri_error_set(err, BRI_EUNSUPPORTED, "%s: fragment %llu: its data files do not hold every field of "
                       "the table in one file of version 2.%u; brid rewrites only such a file in place",
                       t->root, (unsigned long long)f->id, minor);
  if (!rc) rc = append_copied(&r, &b, f, minor);
  if (!rc) rc = bri_file_writer_finish(b.w, &res, err);
  if (!rc) rc = bri_managed_out_finish(b.managed, err);
  if (!rc && !(*out = output_datafile(&res, stem))) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (!rc) {
    rep->data_bytes_written += res.file_size;
    rep->inline_bytes_copied += b.inline_bytes;
    count_managed(&r, b.managed);
  }
  bri_fragment_close(b.fr);
  resolvers_close(&b.rs);
  bri_managed_out_free(b.managed);
  bri_file_writer_free(b.w);
  bri_file_result_dispose(&res);
  free(path);
  return rc;
}

/* -------------------------------------------------------------- the table */

static json_t *bins_estimate(const bri_manifest *bm, const bri_plan *p, uint64_t (*bytes)[4],
                             const bool *repack_wanted) {
  json_t *plan = bri_plan_to_json(p, bm);
  json_t *bins = json_object_get(plan, "bins");
  uint64_t tot[4] = {0};
  for (size_t k = 0; k < p->n_bins; k++) {
    uint64_t s[4] = {0};
    bool repack = false;
    for (size_t i = p->bins[k].first; i < p->bins[k].first + p->bins[k].count; i++) {
      for (int j = 0; j < 4; j++) s[j] += bytes[i][j];
      repack |= repack_wanted[i];
    }
    json_object_set_new(json_array_get(bins, k), "payload",
                        json_pack("{s:I, s:I, s:I, s:I, s:b}", "inline", (json_int_t)s[0], "packed",
                                  (json_int_t)s[1], "dedicated", (json_int_t)s[2], "external",
                                  (json_int_t)s[3], "repacks_low_utilization_packs", repack));
    for (int j = 0; j < 4; j++) tot[j] += s[j];
  }
  json_object_set_new(plan, "payload_bytes",
                      json_pack("{s:I, s:I, s:I, s:I}", "inline", (json_int_t)tot[0], "packed",
                                (json_int_t)tot[1], "dedicated", (json_int_t)tot[2], "external",
                                (json_int_t)tot[3]));
  return plan;
}

/* Whether the survey can ride along with the writing (each fragment's
 * descriptors read once, with the rest of the fragment): when every pack is
 * its data file's own, so that a fragment alone decides whether its packs
 * are repacked (no BRI in the table: a BRI lets files share packs), and the
 * plan cannot depend on the fragments it writes (no budgets: a budget
 * keeps whole bins in order, which flags elsewhere could reorder). A dry
 * run surveys before it plans (bri) or after (the bins' fragments) for its
 * report. */
static bool can_stream(const run *r, const bri_compact_request *q) {
  const bri_compact_options *o = &q->options;
  return !q->dry_run && !bri_manifest_has_bri(r->m->pb) && !o->max_source_fragments &&
         !o->max_source_rows && !o->max_source_bytes;
}

/* The survey and the plan. Outside stream mode every fragment is surveyed
 * first under bri (packs shared through a BRI are measured before
 * planning). Otherwise the plan is made without flags; under bri the
 * fragments none of its bins holds are surveyed (a low pack can make them
 * candidates and grow a bin, docs/format/bri.md 6) and the plan made again
 * when one is flagged; the bins' fragments are surveyed while they are
 * written (stream mode) or before (a dry run). Both give the same plan: a
 * flag only matters for a fragment that no bin holds without it. Under
 * copy the sizes come first (fragsize.h). */
/* Fragments from which one listing of data/ is worth its pages (sizes.h). */
#define PRIME_MIN_FRAGMENTS 8

static int survey_and_plan(run *r, const bri_compact_request *q, bool *repack_wanted,
                           uint64_t (*bytes)[4], json_t *packs, bri_plan **plan) {
  const Lance__Table__Manifest *m = r->m->pb;
  bool blobs = false;
  for (size_t i = 0; i < m->n_fields; i++) blobs |= bri_field_is_blob_v2(m->fields[i]);
  if (!blobs) return bri_compact_plan(r->t, r->m, &q->options, NULL, plan, r->err);
  bri_plan_hints flags = {.repack_wanted = repack_wanted}, none = {0};
  /* an object store: the sizes of every fragment's sidecars from one
   * listing of data/ rather than one listing per fragment's directory,
   * listed while the fragments' data files are read; whole when the size
   * rule asks every fragment's payload (fragsize.h) */
  bool payload = bri_compact_counts_payload(q->strategy, q->min_reader, r->t, m);
  if (!(bri_store_caps(r->t->store) & BRI_STORE_CAP_LOCAL) && m->n_fragments >= PRIME_MIN_FRAGMENTS) {
    char *data = bri_path_join(bri_store_uri(r->t->store), "data");
    int prc = data ? bri_sidecar_sizes_prime_start(r->sizes, r->t->store, data,
                                                   payload ? BRI_SIDECAR_PRIME_ALL : BRI_SIDECAR_PRIME_PAGES, r->err)
                   : bri_error_set(r->err, BRI_ENOMEM, "out of memory");
    free(data);
    if (prc) return prc;
  }
  r->blob_tops = calloc(m->n_fields + 1, sizeof *r->blob_tops);
  r->fs = calloc(m->n_fragments + 1, sizeof *r->fs);
  size_t *idx = calloc(m->n_fragments + 1, sizeof *idx), n = 0;
  int rc = r->blob_tops && r->fs && idx ? 0 : bri_error_set(r->err, BRI_ENOMEM, "out of memory");
  /* the size rule counts what a copy writes (fragsize.h) */
  if (!rc && payload) {
    if (!(r->payload = calloc(m->n_fragments + 1, sizeof *r->payload)))
      rc = bri_error_set(r->err, BRI_ENOMEM, "out of memory");
    if (!rc) rc = bri_fragment_payloads(r->t, r->m, &q->options, r->sizes, r->payload, r->err);
  }
  flags.payload_bytes = none.payload_bytes = r->payload;
  for (size_t fi = 0; !rc && fi < m->n_fields; fi++)
    if (m->fields[fi]->parent_id == -1 && subtree_has_blob(m, fi)) r->blob_tops[r->n_blob_tops++] = m->fields[fi]->id;
  r->stream = !rc && can_stream(r, q);
  bool repack = repacks(r);
  if (!rc && !r->stream && repack) {
    for (size_t i = 0; i < m->n_fragments; i++) idx[n++] = i;
    rc = survey_fragments(r, idx, n);
    if (!rc) rc = survey_finish(r, repack_wanted, bytes, packs);
    if (!rc) rc = bri_compact_plan(r->t, r->m, &q->options, &flags, plan, r->err);
    free(idx);
    return rc;
  }
  if (!rc) rc = bri_compact_plan(r->t, r->m, &q->options, &none, plan, r->err);
  bool *in_bin = rc ? NULL : calloc(m->n_fragments + 1, sizeof *in_bin);
  if (!rc && !in_bin) rc = bri_error_set(r->err, BRI_ENOMEM, "out of memory");
  for (size_t k = 0; !rc && k < (*plan)->n_bins; k++)
    for (size_t i = 0; i < (*plan)->bins[k].count; i++) in_bin[(*plan)->bins[k].first + i] = true;
  /* only bri and managed compactions repack: under link and copy no pack flags a
   * fragment, so only the bins' fragments are surveyed (the others, at
   * target size, are the table's bulk): now outside stream mode (a dry
   * run's report), while they are written in it */
  for (size_t i = 0; !rc && i < m->n_fragments; i++)
    if (repack ? !in_bin[i] : !r->stream && in_bin[i]) idx[n++] = i;
  if (!rc) rc = survey_fragments(r, idx, n);
  if (!rc && !r->stream) rc = survey_finish(r, repack_wanted, bytes, packs);
  bool flagged = false;
  for (size_t k = 0; !rc && repack && k < n; k++) flagged |= repack_wanted[idx[k]] = fragment_low_packs(r, r->fs[idx[k]], NULL);
  if (!rc && flagged) {
    bri_plan_free(*plan);
    *plan = NULL;
    rc = bri_compact_plan(r->t, r->m, &q->options, &flags, plan, r->err);
  }
  free(in_bin), free(idx);
  return rc;
}

/* The plan's report (rep->plan): bins, payload bytes per bin, packs. In
 * stream mode the survey is merged here, once every fragment was read. */
static void plan_report(run *r, const bri_compact_request *q, const bri_plan *plan, bool *repack_wanted,
                        uint64_t (*bytes)[4], json_t **packs) {
  if (r->stream && survey_finish(r, repack_wanted, bytes, *packs) != 0) {
    /* (a failure here loses the report's pack list, not the compaction) */
    json_array_clear(*packs);
  }
  r->rep->plan = bins_estimate(r->m, plan, bytes, repack_wanted);
  json_object_set_new(r->rep->plan, "packs", *packs);
  json_object_set_new(r->rep->plan, "strategy", json_string(bri_strategy_name(q->strategy)));
  *packs = NULL;
}

/* Reserves every bin's outputs before the first is created: its data file
 * and, in a table with blob columns, the sidecar directory beside it (a
 * tree: the sidecars made in it are covered). The entries ride on the
 * commit intent that follows (util/hooks.h: BRI_JOURNAL_RESERVED), so a
 * compaction makes one durable journal write, whatever its bins and
 * sidecars; without an intent hook each entry is durable by itself. */
static int reserve_outputs(run *r, size_t n_bins, char (*stems)[BRI_STEM_LEN], const char *uuid) {
  const bri_hooks *h = r->hooks;
  unsigned reserved = h && h->commit_intent ? BRI_JOURNAL_RESERVED : 0;
  int rc = 0;
  for (size_t k = 0; !rc && k < n_bins; k++) {
    bri_new_datafile_stem(stems[k]);
    char *path = bri_strdupf("%s/data/%s.lance", r->t->root, stems[k]);
    char *own_dir = bri_strdupf("%s/data/%s", r->t->root, stems[k]);
    rc = path && own_dir ? bri_outputs_add(&r->out, path, reserved, r->err)
                         : bri_error_set(r->err, BRI_ENOMEM, "out of memory");
    if (!rc && r->n_blob_tops) rc = bri_outputs_add(&r->out, own_dir, BRI_JOURNAL_TREE | reserved, r->err);
    free(path), free(own_dir);
  }
  if (!rc && reserved) rc = h->commit_intent(h->user, uuid, r->m->pb->version, r->err);
  return rc;
}

/* Strategy managed on a table not Managed yet: the switch (optin.h) is
 * committed first, and the compaction plans on the version it made; a dry
 * run only says that it would switch. A table that carries a BRI is
 * refused: its references become Managed descriptors by materialize
 * (ops/materialize.h), all of them, not only those a compaction rewrites. */
static int switch_to_managed(run *r, const bri_compact_request *q) {
  if (!bri_managed_optin_applies(r->m->pb)) return 0;
  if (bri_manifest_has_bri(r->m->pb))
    return bri_error_set(r->err, BRI_EUNSUPPORTED, "%s: the table carries a Blob Reuse Index; brictl "
                         "materialize --managed turns its references into Managed descriptors", r->t->root);
  int rc = bri_managed_optin_check(r->t->root, r->m, r->err);
  r->rep->managed_switch = true;
  if (!rc && !q->dry_run)
    rc = bri_managed_optin(r->t, &r->m, r->hooks, 0, &r->rep->managed_switch_version, r->err);
  return rc;
}

int bri_compact_table(const char *root, const bri_compact_request *req,
                      const bri_hooks *hooks, bri_compact_report *rep, bri_error *err) {
  memset(rep, 0, sizeof *rep);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  run r = {.req = req, .hooks = hooks, .rep = rep, .err = err};
  r.out.hooks = hooks;
  bri_plan *plan = NULL;
  bool *repack_wanted = NULL;
  uint64_t (*bytes)[4] = NULL;
  Lance__Table__DataFragment **news = NULL;
  bri_rewrite_group *groups = NULL;
  uint64_t *old_ids = NULL;
  uint8_t **changed = NULL;
  size_t *order = NULL;
  char (*stems)[BRI_STEM_LEN] = NULL;
  json_t *packs = NULL;
  int rc = bri_sidecar_sizes_new(&r.sizes, err);
  if (!rc) rc = bri_table_open(root, &r.t, err);
  if (!rc) r.out.store = r.t->store; /* output paths are built from its uri */
  if (!rc) rc = bri_table_load(r.t, 0, &r.m, err);
  if (rc) goto out;
  const Lance__Table__Manifest *m = r.m->pb;
  /* reads of fragments and packs overlap, bounded (no whole-table prefetch:
   * memory stays with the reads in flight, whatever the table's size) */
  r.local_default = !req->read_ahead && (bri_store_caps(r.t->store) & BRI_STORE_CAP_LOCAL);
  r.read_ahead = req->read_ahead ? req->read_ahead
                 : r.local_default ? BRI_COMPACT_READ_AHEAD_LOCAL : BRI_COMPACT_READ_AHEAD_REMOTE;
  bri_compact_request q = *req;
  if ((rc = bri_compact_options_from_config(r.m, &q.options, err)) != 0) goto out;
  /* auto never turns a table stock Lance reads into one it refuses, and
   * keeps a table that already carries a BRI on bri (blobout.h) */
  if (q.strategy == BRI_STRATEGY_AUTO && bri_manifest_has_bri(m)) q.strategy = BRI_STRATEGY_BRI;
  /* every reader is Lance 14 or newer, as the operator declared: auto
   * switches a plain Blob v2 table to Managed blobs, on every store */
  if (q.strategy == BRI_STRATEGY_AUTO && req->min_reader >= BRI_MANAGED_MIN_READER &&
      bri_managed_optin_applies(m) && bri_managed_optin_check(root, r.m, NULL) == 0)
    q.strategy = BRI_STRATEGY_MANAGED;
  if (q.strategy == BRI_STRATEGY_MANAGED && (rc = switch_to_managed(&r, &q)) != 0) goto out;
  m = r.m->pb;
  /* a Managed table is compacted as Lance 14 does it, whatever was asked:
   * descriptors kept, old sidecars adopted, no payload read (managed.h) */
  if ((r.managed = bri_manifest_blobs_managed(m) || q.strategy == BRI_STRATEGY_MANAGED))
    q.strategy = BRI_STRATEGY_MANAGED;
  rep->strategy = q.strategy;
  r.req = &q;
  rep->read_version = m->version;
  rep->fragments_before = rep->fragments_after = m->n_fragments;
  repack_wanted = calloc(m->n_fragments + 1, sizeof *repack_wanted);
  bytes = calloc(m->n_fragments + 1, sizeof *bytes);
  packs = json_array();
  if (!repack_wanted || !bytes || !packs) {
    rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    goto out;
  }
  r.repack_wanted = repack_wanted;
  if ((rc = survey_and_plan(&r, &q, repack_wanted, bytes, packs, &plan)) != 0) goto out;
  if (!r.stream) plan_report(&r, &q, plan, repack_wanted, bytes, &packs);
  rep->bins = plan->n_bins;
  for (size_t k = 0; k < plan->n_bins; k++) {
    rep->fragments_rewritten += plan->bins[k].count;
    r.rows_total += plan->bins[k].rows;
  }
  /* fields a newer Lance put in what this removes or rebuilds (fields.h) */
  for (size_t k = 0; k < plan->n_bins && !rc; k++)
    for (size_t i = 0; i < plan->bins[k].count && !rc; i++)
      rc = bri_fields_check_removed(m->fragments[plan->bins[k].first + i], r.m->path, err);
  if (!rc && plan->n_bins && r.m->indices) rc = bri_fields_check_fri(bri_fri_find(r.m->indices), r.m->path, err);
  if (rc) goto out;
  if (req->dry_run || plan->n_bins == 0) goto report;
  news = calloc(plan->n_bins, sizeof *news);
  groups = calloc(plan->n_bins, sizeof *groups);
  old_ids = calloc(rep->fragments_rewritten + 1, sizeof *old_ids);
  changed = calloc(plan->n_bins, sizeof *changed);
  order = calloc(rep->fragments_rewritten + 1, sizeof *order);
  if (!news || !groups || !old_ids || !changed || !order) {
    rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    goto out;
  }
  for (size_t k = 0, o = 0; k < plan->n_bins; k++)
    for (size_t i = 0; i < plan->bins[k].count; i++) order[o++] = plan->bins[k].first + i;
  r.order = order;
  char uuid[37];
  bri_uuid_v4(uuid);
  if (!(stems = calloc(plan->n_bins, sizeof *stems))) {
    rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    goto out;
  }
  /* (neither creates a file: nothing to roll back when they fail) */
  if ((rc = reserve_outputs(&r, plan->n_bins, stems, uuid)) != 0) goto out;
  /* a shallow clone has no data/ of its own until its first rewrite */
  char *data_dir = bri_path_join(r.t->root, "data");
  rc = data_dir ? bri_store_mkdir(r.t->store, data_dir, err) : bri_error_set(err, BRI_ENOMEM, "out of memory");
  free(data_dir);
  if (rc == BRI_ETAKEN) rc = 0;
  if (rc) goto out;
  rc = read_ahead(&r, rep->fragments_rewritten, open_fragment, close_fragment, &r.opened);
  if (rc) goto out;
  bool any_versions = false;
  size_t o = 0;
  for (size_t k = 0; !rc && k < plan->n_bins; k++) {
    rc = write_bin(&r, &plan->bins[k], stems[k], &news[k], &any_versions, &changed[k], &groups[k].changed_len);
    groups[k].changed_row_addrs = changed[k];
    if (!rc) rc = bri_failpoint("compact.after_bin", err);
    groups[k].old_ids = old_ids + o;
    groups[k].n_old = plan->bins[k].count;
    for (size_t i = 0; i < plan->bins[k].count; i++) old_ids[o++] = m->fragments[plan->bins[k].first + i]->id;
    groups[k].new_frags = &news[k];
    groups[k].n_new = 1;
  }
  bri_readahead_stop(r.opened); /* before the commit: no reader of the old version stays open */
  r.opened = NULL;
  /* stream mode: every fragment was surveyed, the plan's report is whole */
  if (r.stream) plan_report(&r, &q, plan, repack_wanted, bytes, &packs);
  if (!rc) rc = bri_failpoint("compact.before_commit", err);
  if (!rc && hooks && hooks->confirm) rc = hooks->confirm(hooks->user, err);
  if (!rc) {
    /* each bin's new fragment holds its old fragments' live rows in order:
     * deletions committed meanwhile can be carried over (carry.h) */
    json_t *indices = NULL;
    bri_rewrite rw = {.read_version = m->version, .base = r.m, .txn_uuid = uuid, .n_groups = plan->n_bins, .groups = groups,
                      .carry_deletions = true, .out = &r.out, .index_report = &indices};
    /* Lance retries a commit 20 times; a lost race costs brid a little more
     * (a durable, fsynced commit) and giving up costs a whole rewrite, and
     * a busy writer commits every few milliseconds: 100 (each attempt only
     * checks the versions the previous ones did not see) */
    rc = bri_rewrite_commit(r.t, &rw, req->max_commit_attempts ? req->max_commit_attempts : 100, &rep->version, err);
    rep->deletions_carried = rw.carried;
    if (indices) json_object_set_new(rep->plan, "index_update", indices);
  }
  if (!rc) {
    /* the outputs belong to the committed version now: never roll them back */
    bri_outputs_clear(&r.out);
    rep->fragments_after = m->n_fragments - rep->fragments_rewritten + plan->n_bins;
    (void)bri_failpoint("compact.after_commit", NULL);
  } else {
    bri_outputs_roll_back(&r.out);
  }
report:
  if (!rep->version) rep->version = rep->managed_switch_version; /* the switch alone */
  if (plan && !rep->plan) plan_report(&r, &q, plan, repack_wanted, bytes, &packs);
out:
  json_decref(packs);
  bri_readahead_stop(r.opened); /* every read-ahead thread has ended from here on */
  clock_gettime(CLOCK_MONOTONIC, &t1);
  rep->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  bri_table_store_stats(r.t, &rep->storage);
  for (size_t k = 0; news && plan && k < plan->n_bins; k++)
    if (news[k]) lance__table__data_fragment__free_unpacked(news[k], NULL);
  for (size_t k = 0; changed && k < plan->n_bins; k++) free(changed[k]);
  for (size_t i = 0; r.fs && r.m && i < r.m->pb->n_fragments; i++) frag_survey_free(r.fs[i]);
  free(r.fs);
  free(r.blob_tops);
  free(r.payload);
  free(changed), free(news), free(groups), free(old_ids), free(order), free(stems), free(repack_wanted), free(bytes);
  bri_plan_free(plan);
  bri_outputs_dispose(&r.out);
  bri_strset_dispose(&r.repack);
  bri_sidecar_sizes_free(r.sizes);
  bri_manifest_free(r.m);
  bri_table_close(r.t);
  return rc;
}
