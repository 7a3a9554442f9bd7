/* blobout.c: output-side blob handling of a compaction (see blobout.h).
 * Dedupe keys are strings: the terminal sidecar's path for whole objects
 * (copied ranges are the packer's, packer.h); the BRI groups its entries by
 * (base, blob_dir) when the file is finished. Every source sidecar is read,
 * copied or linked through the store that reaches it (the table's, or its
 * base's: bri_table_store_of), and every output file is made through the
 * table's store, so that no link, even one swapped in mid-job, leads a
 * read, link or write outside the table (storage/store.h), and so that a
 * copy on an object store stays on the server. */
#include "compact/blobout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bri.pb-c.h"
#include "lance/table/bri.h"
#include "lance/table/commit.h"
#include "lance/table/rowids.h"
#include "lance/table/sidecar.h"
#include "compact/packer.h"
#include "util/bytes.h"
#include "util/failpoint.h"
#include "util/fsutil.h"
#include "util/strmap.h"

typedef struct bri_entry {
  uint32_t local, phys;
  bool has_base;
  uint32_t base_id;
  char *blob_dir;
} bri_entry;

struct bri_blob_out {
  const bri_table *t; /* sources resolve through its stores */
  const Lance__Table__Manifest *m;
  char *own_dir;      /* below the table root */
  bool dir_made;
  bri_strategy s;
  const bri_strset *repack;
  bri_sidecar_sizes *sizes; /* every source checked against what it holds */
  bri_outputs *outs;
  uint32_t next_id;
  bri_strmap objects; /* terminal path -> local id (a) */
  bri_entry *entries;
  size_t n_entries, cap_entries;
  bri_packer *packer; /* copied and repacked ranges (packer.h), made on first use */
  bri_blob_out_stats stats;
};

static const char *const STRATEGY_NAMES[] = {"bri", "link", "copy", "auto", "managed"};

const char *bri_strategy_name(bri_strategy s) {
  return (unsigned)s < sizeof STRATEGY_NAMES / sizeof STRATEGY_NAMES[0] ? STRATEGY_NAMES[s] : "?";
}

int bri_strategy_parse(const char *s, bri_strategy *out, bri_error *err) {
  for (size_t i = 0; i < sizeof STRATEGY_NAMES / sizeof STRATEGY_NAMES[0]; i++)
    if (!strcmp(s, STRATEGY_NAMES[i])) {
      *out = (bri_strategy)i;
      return 0;
    }
  return bri_error_set(err, BRI_EINVAL, "unknown strategy \"%s\" (auto, bri, link, copy or managed)", s);
}

int bri_blob_out_open(const bri_table *t, const Lance__Table__Manifest *m, const char *own_dir,
                      bri_strategy s, const bri_strset *repack, bri_sidecar_sizes *sizes,
                      bri_outputs *outs, bri_blob_out **out, bri_error *err) {
  *out = NULL;
  if (!bri_store_key(t->store, own_dir))
    return bri_error_set(err, BRI_EINVAL, "%s: not inside the table %s", own_dir, t->root);
  bri_blob_out *o = calloc(1, sizeof *o);
  if (!o || !(o->own_dir = strdup(own_dir))) {
    free(o);
    return bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  o->t = t, o->m = m;
  o->s = s, o->repack = repack, o->sizes = sizes, o->outs = outs;
  o->next_id = 1;
  *out = o;
  return 0;
}

/* Records an output created in the tree (rolled back with the run's). */
static int record(bri_blob_out *o, const char *path, bri_error *err) {
  return bri_outputs_add(o->outs, path, 0, err);
}

/* The data file's own directory, a tree (util/hooks.h): the sidecars
 * linked, copied or packed into it need no journal entries of their own.
 * (A compaction reserves it before writing: then it is recorded already.)
 * Its name becomes durable when the data file beside it is finished, which
 * syncs data/ after this (bri_blob_out_open's contract). */
static int ensure_dir(bri_blob_out *o, bri_error *err) {
  if (o->dir_made) return 0;
  int rc = bri_outputs_add(o->outs, o->own_dir, BRI_JOURNAL_TREE, err);
  if (!rc) rc = bri_store_mkdir_unsynced(o->t->store, o->own_dir, err);
  if (!rc) o->dir_made = true;
  return rc;
}

/* The store that reaches a source sidecar (the table's or its base's). */
static int source_store(bri_blob_out *o, const char *src, bri_store **st, bri_error *err) {
  return bri_table_store_of(o->t, o->m, src, st, err);
}

static int new_id(bri_blob_out *o, uint32_t *id, bri_error *err) {
  if (o->next_id == 0) return bri_error_set(err, BRI_EUNSUPPORTED, "%s: more than 2^32-1 blob ids in one data file", o->own_dir);
  *id = o->next_id++;
  return 0;
}

static char *sidecar(const bri_blob_out *o, uint32_t id) {
  char name[BRI_BLOB_NAME_LEN];
  bri_blob_file_name(id, name);
  return bri_path_join(o->own_dir, name);
}

/* The packer's next pack: a sidecar of the output's own directory under a
 * new local id (the directory, a tree, covers it in the journal). */
static int next_pack(void *ctx, char **path, uint64_t *id, bri_error *err) {
  bri_blob_out *o = ctx;
  uint32_t local = 0;
  int rc = ensure_dir(o, err);
  if (!rc) rc = new_id(o, &local, err);
  if (!rc && !(*path = sidecar(o, local))) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (!rc && (rc = record(o, *path, err)) != 0) {
    free(*path);
    *path = NULL;
  }
  *id = local;
  return rc;
}

/* Appends a range of a source pack to the output's current pack. */
static int copy_packed(bri_blob_out *o, const char *src, uint64_t pos, uint64_t size,
                       uint32_t *blob_id, uint64_t *position, bri_error *err) {
  bri_store *st;
  uint64_t id, grown;
  /* on an object store the server copies runs of the sources: no payload through brid */
  bool runs = !(bri_store_caps(o->t->store) & BRI_STORE_CAP_LOCAL);
  int rc = o->packer ? 0 : bri_packer_new(o->t->store, runs, next_pack, o, &o->packer, err);
  if (!rc) rc = source_store(o, src, &st, err);
  if (!rc) rc = bri_packer_copy(o->packer, st, src, pos, size, &id, position, &grown, err);
  if (!rc) *blob_id = (uint32_t)id, o->stats.copied_bytes += grown;
  return rc;
}

/* Returned by reuse_object when auto's link of a pack was refused: the
 * caller copies the range instead (not the whole pack). */
#define LINK_REFUSED 1

/* A whole object: linked or copied under a new id, or recorded in the BRI.
 * size: the object's size as the store reported it (the reuse is counted
 * in the file's bytes, once); packed: a Packed pack. *moved: the bytes the
 * link or copy found in the source (size when nothing moved). */
static int reuse_object(bri_blob_out *o, const bri_blob_terminal *term, const char *src,
                        uint64_t size, bool copy, bool packed, uint32_t *blob_id, uint64_t *moved,
                        bri_error *err) {
  bri_strmap_entry *e = bri_strmap_get(&o->objects, src);
  *moved = size;
  if (e) {
    *blob_id = (uint32_t)e->a;
    return 0;
  }
  uint32_t id = 0;
  int rc = new_id(o, &id, err);
  if (rc) return rc;
  if (o->s == BRI_STRATEGY_BRI && !copy) {
    if (o->n_entries == o->cap_entries) {
      size_t cap = o->cap_entries ? o->cap_entries * 2 : 64;
      bri_entry *g = realloc(o->entries, cap * sizeof *g);
      if (!g) return bri_error_set(err, BRI_ENOMEM, "out of memory");
      o->entries = g, o->cap_entries = cap;
    }
    bri_entry *n = &o->entries[o->n_entries];
    *n = (bri_entry){id, term->physical_id, term->has_base, term->base_id, strdup(term->blob_dir)};
    if (!n->blob_dir) return bri_error_set(err, BRI_ENOMEM, "out of memory");
    o->n_entries++;
    o->stats.reused_bytes += size;
  } else {
    char *dst = NULL;
    bri_store *st = NULL;
    if (!(rc = ensure_dir(o, err)) && (dst = sidecar(o, id)) && !(rc = record(o, dst, err)) &&
        !(rc = source_store(o, src, &st, err))) {
      uint64_t bytes;
      if (!copy) {
        /* the link names the file that was opened beneath the source's
         * root: never a link's target, never a file swapped in meanwhile */
        rc = bri_store_link(st, src, o->t->store, dst, &bytes, err);
        if (rc == BRI_EUNSUPPORTED && o->s == BRI_STRATEGY_AUTO) {
          /* auto: copies from now on (nothing was created under dst) */
          o->stats.links_refused = true;
          rc = 0, copy = true;
          if (packed) {
            o->next_id--; /* the id just taken, unused */
            free(dst);
            return LINK_REFUSED;
          }
        } else if (rc == BRI_EUNSUPPORTED) {
          char why[sizeof err->msg];
          snprintf(why, sizeof why, "%s", err->msg);
          rc = bri_error_set(err, BRI_EUNSUPPORTED, "cannot hard-link %s into %s: %s (use the auto, "
                             "bri or copy strategy)", src, o->own_dir, why);
        }
        if (!rc && !copy) {
          *moved = bytes;
          o->stats.links++, o->stats.reused_bytes += bytes;
          rc = bri_failpoint("blobout.after_link", err);
        }
      }
      if (!rc && copy) {
        /* a Dedicated sidecar whole: on an object store a server-side copy */
        if (!(rc = bri_failpoint("blobout.before_copy", err)))
          rc = bri_store_copy(st, src, o->t->store, dst, 0, NULL, &bytes, err);
        if (rc) bri_error_wrap(err, "copying into %s", dst);
        if (!rc) {
          *moved = bytes;
          o->stats.copied_bytes += bytes, o->stats.sidecars++;
          rc = bri_failpoint("blobout.after_copy", err);
        }
      }
    }
    if (!dst && !rc) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    free(dst);
  }
  if (!rc && !bri_strmap_put(&o->objects, src, id, 0)) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (!rc) *blob_id = id;
  return rc;
}

int bri_blob_out_rewrite(bri_blob_out *o, bri_blob_resolver *r, uint8_t kind, uint32_t *blob_id,
                         uint64_t *position, uint64_t size, const bri_value_ref *where,
                         bri_error *err) {
  bri_blob_terminal term;
  bri_blob_terminal_of(r, *blob_id, &term);
  char name[BRI_BLOB_NAME_LEN];
  bri_blob_file_name(term.physical_id, name);
  char *src = bri_path_join(term.dir, name);
  if (!src) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  bri_store *st;
  uint64_t have = 0, moved = 0, pos = *position;
  /* a damaged source is refused before anything of it is reused, linked
   * or copied (blob/sizes.h): the sidecar exists and holds the value */
  int rc = source_store(o, src, &st, err);
  if (!rc) rc = bri_sidecar_check(o->sizes, st, src, kind, pos, size, where, &have, err);
  bool copy = o->s == BRI_STRATEGY_COPY || (o->s == BRI_STRATEGY_AUTO && o->stats.links_refused);
  if (rc) {
    /* refused */
  } else if (kind == 1) { /* Packed */
    bool repack = copy || (o->s == BRI_STRATEGY_BRI && o->repack && bri_strset_has(o->repack, src));
    if (!repack) {
      /* the whole pack is reused, counted once in its file's bytes */
      rc = reuse_object(o, &term, src, have, false, true, blob_id, &moved, err);
      if (rc == LINK_REFUSED) repack = true;
    }
    if (repack) rc = copy_packed(o, src, pos, size, blob_id, position, err);
    else if (!rc) rc = bri_sidecar_refuse(src, kind, pos, size, where, moved, false, err);
  } else {
    rc = reuse_object(o, &term, src, have, copy, false, blob_id, &moved, err);
    /* the bytes the link or copy found: the file may have changed since */
    if (!rc) rc = bri_sidecar_refuse(src, kind, pos, size, where, moved, false, err);
  }
  free(src);
  return rc;
}

static bool same_source(const bri_entry *x, const bri_entry *y) {
  return x->has_base == y->has_base && x->base_id == y->base_id && !strcmp(x->blob_dir, y->blob_dir);
}

static int cmp_entry(const void *a, const void *b) {
  const bri_entry *x = a, *y = b;
  if (x->has_base != y->has_base) return x->has_base - y->has_base;
  if (x->base_id != y->base_id) return x->base_id < y->base_id ? -1 : 1;
  int c = strcmp(x->blob_dir, y->blob_dir);
  if (c) return c;
  return x->local < y->local ? -1 : x->local > y->local;
}

/* Builds the BRI: one source per (base, blob_dir), local ids increasing. */
static int store_bri(bri_blob_out *o, Lance__Table__DataFile *df, bri_error *err) {
  if (!o->n_entries) return bri_datafile_set_bri(df, NULL, err);
  qsort(o->entries, o->n_entries, sizeof *o->entries, cmp_entry);
  size_t n_src = 0;
  for (size_t i = 0; i < o->n_entries; i++)
    if (i == 0 || !same_source(&o->entries[i], &o->entries[i - 1])) n_src++;
  Lance__Table__BlobReuseSource *src = calloc(n_src, sizeof *src), **sp = calloc(n_src, sizeof *sp);
  uint8_t **locs = calloc(n_src, sizeof *locs), **phys = calloc(n_src, sizeof *phys);
  size_t *loc_len = calloc(n_src, sizeof *loc_len);
  Lance__Table__RowIdSequence **seqs = calloc(n_src, sizeof *seqs);
  Lance__Table__EncodedU64Array *arrs = calloc(n_src, sizeof *arrs);
  Lance__Table__EncodedU64Array__U64Array *a64 = calloc(n_src, sizeof *a64);
  uint64_t *tmp = malloc(o->n_entries * sizeof *tmp);
  int rc = src && sp && locs && phys && loc_len && seqs && arrs && a64 && tmp ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
  size_t start = 0, k = 0;
  for (size_t i = 1; !rc && i <= o->n_entries; i++) {
    bri_entry *a = &o->entries[start];
    if (i < o->n_entries && same_source(a, &o->entries[i])) continue;
    size_t n = i - start;
    for (size_t j = 0; j < n; j++) tmp[j] = o->entries[start + j].local;
    if ((rc = bri_u64seq_pack(tmp, n, &locs[k], &loc_len[k], err)) != 0) break;
    if ((rc = bri_u64seq_unpack(locs[k], loc_len[k], &seqs[k], err)) != 0) break;
    phys[k] = malloc(8 * n);
    if (!phys[k]) { rc = bri_error_set(err, BRI_ENOMEM, "out of memory"); break; }
    for (size_t j = 0; j < n; j++) bri_put_le64(phys[k] + 8 * j, o->entries[start + j].phys);
    lance__table__encoded_u64_array__init(&arrs[k]);
    lance__table__encoded_u64_array__u64_array__init(&a64[k]);
    a64[k].has_values = 1, a64[k].values.data = phys[k], a64[k].values.len = 8 * n;
    arrs[k].array_case = LANCE__TABLE__ENCODED_U64_ARRAY__ARRAY_U64_ARRAY, arrs[k].u64_array = &a64[k];
    lance__table__blob_reuse_source__init(&src[k]);
    src[k].has_base_id = a->has_base, src[k].base_id = a->base_id;
    src[k].blob_dir = a->blob_dir;
    src[k].local_ids = seqs[k];
    src[k].physical_ids = &arrs[k];
    sp[k] = &src[k];
    k++;
    start = i;
  }
  if (!rc) {
    Lance__Table__BlobReuseIndex b;
    lance__table__blob_reuse_index__init(&b);
    b.sources = sp, b.n_sources = k;
    rc = bri_datafile_set_bri(df, &b, err);
  }
  for (size_t i = 0; i < n_src; i++) {
    if (locs) free(locs[i]);
    if (phys) free(phys[i]);
    if (seqs && seqs[i]) lance__table__row_id_sequence__free_unpacked(seqs[i], NULL);
  }
  free(src), free(sp), free(locs), free(phys), free(loc_len), free(seqs), free(arrs), free(a64), free(tmp);
  return rc;
}

int bri_blob_out_finish(bri_blob_out *o, Lance__Table__DataFile *df, bri_error *err) {
  int rc = bri_packer_finish(o->packer, err);
  o->stats.sidecars += bri_packer_packs(o->packer);
  if (!rc && o->dir_made) rc = bri_store_sync(o->t->store, o->own_dir, err);
  if (!rc) rc = store_bri(o, df, err);
  return rc;
}

const bri_blob_out_stats *bri_blob_out_stats_of(const bri_blob_out *o) { return &o->stats; }

void bri_blob_out_close(bri_blob_out *o) {
  if (!o) return;
  bri_packer_free(o->packer); /* a pack not finished is journaled: the rollback removes it */
  for (size_t i = 0; i < o->n_entries; i++) free(o->entries[i].blob_dir);
  free(o->entries);
  bri_strmap_dispose(&o->objects);
  free(o->own_dir);
  free(o);
}
