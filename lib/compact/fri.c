/* fri.c: indices through a compaction (see fri.h). Coverage is always taken
 * as Lance reads it, through the existing FRI (an index built before an
 * earlier compaction still names the old fragment ids in its stored bitmap),
 * so that the planner groups and the commit checks what Lance will see. */
#include "compact/fri.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lance/table/flags.h"
#include "lance/table/roaring_strict.h"

static unsigned long long ull(uint64_t v) { return (unsigned long long)v; }

/* Index types Lance remaps through the FRI when it loads them, and keeps
 * answering for once a later Lance compaction rewrites the fragments again
 * (checked with LanceDB 0.39 = Lance 12, LanceDB 0.40 = Lance 13 and pylance
 * 14: tests/interop/test_compact_indexed.sh, test_lance_matrix.sh); vector
 * indices only with the quantizers checked there (see below). Not BTREE
 * and INVERTED (FTS): Lance 13 and 14 read them right through the FRI, but
 * their own next compaction of such a table (optimize(), compact_files())
 * remaps those indices without it and they then find no row at all (with
 * Lance alone too: compact_files(defer_index_remap=True), then
 * compact_files(); docs/indexes.md). */
static const char *const FRI_TYPES[] = {"Bitmap", "LabelList", "Vector"};
/* Index types whose results are row addresses (Lance's results_are_row_addrs). */
static const char *const ADDRESS_TYPES[] = {"ZoneMap", "BloomFilter"};

static bool in(const char *s, const char *const *set, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(s, set[i])) return true;
  return false;
}

static bool is_system(const Lance__Table__IndexMetadata *x) {
  return bri_fri_is(x) || (x->name && !strcmp(x->name, "__lance_mem_wal"));
}

/* "/lance.table.BTreeIndexDetails" -> "BTree" (static storage per call site
 * is avoided: the result points into a small table of known names, or "?"). */
static const char *index_type(const Lance__Table__IndexMetadata *x, char *buf, size_t cap) {
  const char *u = x->index_details && x->index_details->type_url ? x->index_details->type_url : "";
  const char *dot = strrchr(u, '.'), *slash = strrchr(u, '/');
  const char *name = dot && (!slash || dot > slash) ? dot + 1 : slash ? slash + 1 : u;
  size_t len = strlen(name);
  const char *suffix = "IndexDetails";
  if (len > strlen(suffix) && !strcmp(name + len - strlen(suffix), suffix)) len -= strlen(suffix);
  if (!len) return "?";
  snprintf(buf, cap, "%.*s", (int)len, name);
  return buf;
}

void bri_index_views_free(bri_index_views *iv) {
  if (!iv) return;
  for (size_t i = 0; i < iv->n; i++) {
    if (iv->v[i].cover) roaring_bitmap_free(iv->v[i].cover);
    free((char *)iv->v[i].type);
  }
  free(iv->v);
  bri_fri_content_free(iv->fri);
  if (iv->fri_cover) roaring_bitmap_free(iv->fri_cover);
  free(iv);
}

int bri_index_views_load(const bri_table *t, const bri_manifest *m, bri_index_views **out,
                         bri_error *err) {
  *out = NULL;
  const Lance__Table__IndexSection *sec = m->indices;
  bri_index_views *iv = calloc(1, sizeof *iv);
  if (!iv || !(iv->v = calloc(sec && sec->n_indices ? sec->n_indices : 1, sizeof *iv->v))) {
    free(iv);
    return bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  iv->stable = (m->pb->reader_feature_flags & BRI_FLAG_STABLE_ROW_IDS) != 0;
  int rc = 0;
  iv->fri_entry = bri_fri_find(sec);
  if (iv->fri_entry && iv->stable)
    rc = bri_error_set(err, BRI_EUNSUPPORTED,
                       "%s: the table has stable row ids and a fragment reuse index, which Lance "
                       "never writes together; brid leaves it alone",
                       m->path);
  if (!rc && iv->fri_entry) rc = bri_fri_load(t, m, iv->fri_entry, &iv->fri, err);
  if (!rc && iv->fri_entry && iv->fri_entry->has_fragment_bitmap)
    rc = bri_index_bitmap_read(iv->fri_entry, m->path, &iv->fri_cover, err);
  if (!rc && !iv->fri_cover && !(iv->fri_cover = roaring_bitmap_create()))
    rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  for (size_t k = 0; !rc && sec && k < sec->n_indices; k++) {
    const Lance__Table__IndexMetadata *x = sec->indices[k];
    if (is_system(x)) continue;
    bri_index_view *v = &iv->v[iv->n++];
    char buf[64];
    v->x = x;
    if (!(v->type = strdup(index_type(x, buf, sizeof buf)))) {
      rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
      break;
    }
    if (x->has_fragment_bitmap) {
      if ((rc = bri_index_bitmap_read(x, m->path, &v->cover, err)) != 0) break;
      bri_fri_remap_bitmap(iv->fri, v->cover);
    }
    bool carried = in(v->type, FRI_TYPES, sizeof FRI_TYPES / sizeof *FRI_TYPES);
    if (!strcmp(v->type, "Vector")) {
      Lance__Table__VectorIndexDetailsKind *vk = lance__table__vector_index_details_kind__unpack(
          NULL, x->index_details->value.len, x->index_details->value.data);
      /* unreadable details: take the careful reading */
      v->hnsw = !vk || vk->has_hnsw_index_config;
      /* the quantizers checked with LanceDB: PQ, SQ, none (IVF_RQ and
       * anything newer are held back) */
      carried = vk && (vk->has_pq || vk->has_sq || vk->has_flat);
      if (vk) lance__table__vector_index_details_kind__free_unpacked(vk, NULL);
    }
    if (iv->stable)
      v->carry = in(v->type, ADDRESS_TYPES, 2) ? BRI_CARRY_DROPPED : BRI_CARRY_ROW_IDS;
    else
      v->carry = carried ? BRI_CARRY_FRI : BRI_CARRY_HELD;
  }
  if (rc) {
    bri_index_views_free(iv);
    return rc;
  }
  *out = iv;
  return 0;
}

bool bri_index_view_covers(const bri_index_view *v, uint64_t id) {
  return !v->cover || (id <= UINT32_MAX && roaring_bitmap_contains(v->cover, (uint32_t)id));
}

static const char *carry_name(bri_carry c) {
  switch (c) {
  case BRI_CARRY_ROW_IDS: return "row_ids";
  case BRI_CARRY_DROPPED: return "dropped";
  case BRI_CARRY_FRI: return "fragment_reuse_index";
  default: return "held_back";
  }
}

json_t *bri_index_views_to_json(const bri_index_views *iv, const bri_manifest *m) {
  json_t *a = json_array();
  for (size_t i = 0; iv && i < iv->n; i++) {
    const bri_index_view *v = &iv->v[i];
    size_t covered = 0, held = 0;
    for (size_t f = 0; f < m->pb->n_fragments; f++) {
      covered += bri_index_view_covers(v, m->pb->fragments[f]->id);
      held += bri_index_view_holds(v, m->pb->fragments[f]);
    }
    json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:b, s:I, s:I}", "name",
                                       v->x->name ? v->x->name : "", "type", v->type, "carried",
                                       carry_name(v->carry), "hnsw", v->hnsw, "fragments",
                                       (json_int_t)covered, "holds", (json_int_t)held));
  }
  return a;
}

/* ------------------------------------------------------------------ commit */

void bri_index_update_free(bri_index_update *u) {
  if (!u) return;
  for (size_t i = 0; i < u->n_copies; i++) free(u->bitmaps[i]);
  free(u->bitmaps), free(u->copies), free(u->list);
  bri_fri_entry_free(u->fri);
  if (u->version) {
    for (size_t g = 0; g < u->version->n_groups; g++) {
      bri_fri_group *gr = u->version->groups[g];
      for (size_t i = 0; i < gr->n_old_fragments + gr->n_new_fragments; i++)
        free(i < gr->n_old_fragments ? gr->old_fragments[i]
                                     : gr->new_fragments[i - gr->n_old_fragments]);
      free(gr->old_fragments), free(gr->new_fragments), free(gr);
    }
    free(u->version->groups);
    free(u->version);
  }
  free(u->content.versions);
  free(u->external);
  bri_index_views_free(u->views);
  json_decref(u->report);
  free(u);
}

void bri_index_update_abort(bri_index_update *u) {
  if (u && u->external) bri_fri_external_remove(u->table, u->external);
}

/* A shallow copy of x whose bitmap is b (serialized; b is consumed). */
static int replace_bitmap(bri_index_update *u, size_t pos, roaring_bitmap_t *b, bri_error *err) {
  roaring_bitmap_run_optimize(b);
  size_t len = roaring_bitmap_portable_size_in_bytes(b);
  uint8_t *buf = malloc(len);
  if (!buf) {
    roaring_bitmap_free(b);
    return bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  roaring_bitmap_portable_serialize(b, (char *)buf);
  roaring_bitmap_free(b);
  Lance__Table__IndexMetadata *c = &u->copies[u->n_copies];
  *c = *u->list[pos];
  c->fragment_bitmap.data = buf;
  c->fragment_bitmap.len = len;
  c->has_fragment_bitmap = 1;
  u->bitmaps[u->n_copies++] = buf;
  u->list[pos] = c;
  return 0;
}

static bri_fri_digest *digest(uint64_t id, uint64_t rows, uint64_t deleted) {
  bri_fri_digest *d = malloc(sizeof *d);
  if (!d) return NULL;
  lance__table__fragment_reuse_index_details__fragment_digest__init(d);
  d->has_id = 1, d->id = id;
  d->has_physical_rows = rows != 0, d->physical_rows = rows;
  d->has_num_deleted_rows = deleted != 0, d->num_deleted_rows = deleted;
  return d;
}

/* Our FRI version: one group per rewrite group, in order. */
static int build_version(bri_index_update *u, const bri_manifest *base, const bri_manifest *latest,
                         const bri_rewrite *rw, bri_error *err) {
  bri_fri_version *v = calloc(1, sizeof *v);
  if (!v) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  u->version = v;
  lance__table__fragment_reuse_index_details__version__init(v);
  v->has_dataset_version = 1;
  v->dataset_version = latest->pb->version;
  if (!(v->groups = calloc(rw->n_groups + 1, sizeof *v->groups)))
    return bri_error_set(err, BRI_ENOMEM, "out of memory");
  for (size_t g = 0; g < rw->n_groups; g++) {
    const bri_rewrite_group *rg = &rw->groups[g];
    if (!rg->changed_row_addrs) /* planned when no index covered it (compact/plan.h) */
      return bri_error_set(err, BRI_ECONFLICT,
                           "%s: an index now covers fragments that were compacted without a "
                           "fragment reuse index in mind; the compaction must be re-planned",
                           latest->path);
    bri_fri_group *gr = calloc(1, sizeof *gr);
    if (!gr) return bri_error_set(err, BRI_ENOMEM, "out of memory");
    v->groups[v->n_groups++] = gr;
    lance__table__fragment_reuse_index_details__group__init(gr);
    gr->has_changed_row_addrs = 1;
    gr->changed_row_addrs.data = (uint8_t *)rg->changed_row_addrs;
    gr->changed_row_addrs.len = rg->changed_len;
    gr->old_fragments = calloc(rg->n_old + 1, sizeof *gr->old_fragments);
    gr->new_fragments = calloc(rg->n_new + 1, sizeof *gr->new_fragments);
    if (!gr->old_fragments || !gr->new_fragments)
      return bri_error_set(err, BRI_ENOMEM, "out of memory");
    for (size_t i = 0; i < rg->n_old; i++) {
      /* as read: deletions carried from later versions map to the new fragments */
      const Lance__Table__DataFragment *f = bri_manifest_fragment(base, rg->old_ids[i]);
      if (!f)
        return bri_error_set(err, BRI_EINVAL, "fragment %llu is not in version %llu",
                             ull(rg->old_ids[i]), ull(base->pb->version));
      uint64_t del = f->deletion_file ? f->deletion_file->num_deleted_rows : 0;
      if (!(gr->old_fragments[gr->n_old_fragments++] = digest(f->id, f->physical_rows, del)))
        return bri_error_set(err, BRI_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < rg->n_new; i++)
      if (!(gr->new_fragments[gr->n_new_fragments++] =
                digest(rg->new_frags[i]->id, rg->new_frags[i]->physical_rows, 0)))
        return bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  return 0;
}

/* Appends our version to the kept ones, builds the new FRI entry. */
static int build_fri(bri_index_update *u, const bri_table *t, const bri_manifest *base,
                     const bri_manifest *latest, const bri_rewrite *rw, bri_error *err) {
  int rc = build_version(u, base, latest, rw, err);
  if (rc) return rc;
  const bri_fri_content *old = u->views->fri;
  size_t n_old = old ? old->n_versions : 0, trimmed = 0;
  lance__table__fragment_reuse_index_details__inline_content__init(&u->content);
  if (!(u->content.versions = calloc(n_old + 1, sizeof *u->content.versions)))
    return bri_error_set(err, BRI_ENOMEM, "out of memory");
  for (size_t i = 0; i < n_old; i++) {
    /* Lance's trim rule, judged on the stored index section */
    if (bri_fri_version_caught_up(old->versions[i], latest->indices)) trimmed++;
    else u->content.versions[u->content.n_versions++] = old->versions[i];
  }
  u->content.versions[u->content.n_versions++] = u->version;
  /* what we write must be what Lance can read */
  if ((rc = bri_fri_check(&u->content, "new fragment reuse index", err)) != 0)
    return bri_error_wrap(err, "%s", latest->path);
  roaring_bitmap_t *news = roaring_bitmap_create();
  if (!news) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  for (size_t g = 0; g < rw->n_groups; g++)
    for (size_t i = 0; i < rw->groups[g].n_new; i++)
      roaring_bitmap_add(news, (uint32_t)rw->groups[g].new_frags[i]->id);
  rc = bri_fri_entry_build(t, &u->content, u->views->fri_entry, latest->pb->version, news, &u->fri,
                           &u->external, err);
  roaring_bitmap_free(news);
  if (rc) return rc;
  u->report = json_pack("{s:{s:I, s:I, s:I, s:I, s:b}}", "fragment_reuse_index", "dataset_version",
                        (json_int_t)latest->pb->version, "groups", (json_int_t)rw->n_groups,
                        "versions", (json_int_t)u->content.n_versions, "trimmed",
                        (json_int_t)trimmed, "external", u->external != NULL);
  return 0;
}

/* True when f may have rows that index x holds and that are deleted now: a
 * deletion file written at read version r holds deletions committed at r + 1
 * or earlier, which an index built from version r + 1 or later never saw. */
static bool deleted_since(const Lance__Table__DataFragment *f, const Lance__Table__IndexMetadata *x) {
  const Lance__Table__DeletionFile *d = f->deletion_file;
  return d && d->num_deleted_rows && d->read_version >= x->dataset_version;
}

/* True when the group drops rows that index x may hold. */
static bool group_drops_rows(const bri_manifest *m, const bri_rewrite_group *rg,
                             const Lance__Table__IndexMetadata *x) {
  for (size_t j = 0; j < rg->n_old; j++) {
    const Lance__Table__DataFragment *f = bri_manifest_fragment(m, rg->old_ids[j]);
    if (f && deleted_since(f, x)) return true;
  }
  return false;
}

bool bri_index_view_holds(const bri_index_view *v, const Lance__Table__DataFragment *f) {
  if (!bri_index_view_covers(v, f->id)) return false;
  if (v->carry == BRI_CARRY_HELD) return true;
  return v->carry == BRI_CARRY_FRI && v->hnsw && deleted_since(f, v->x);
}

int bri_index_update_build(const bri_table *t, const bri_manifest *base, const bri_manifest *latest,
                           const bri_rewrite *rw, bri_index_update **out, bri_error *err) {
  *out = NULL;
  const Lance__Table__IndexSection *sec = latest->indices;
  size_t n_idx = sec ? sec->n_indices : 0;
  bri_index_update *u = calloc(1, sizeof *u);
  if (!u) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  lance__table__index_section__init(&u->section);
  u->table = t;
  u->list = calloc(n_idx + 1, sizeof *u->list);
  u->copies = calloc(n_idx + 1, sizeof *u->copies);
  u->bitmaps = calloc(n_idx + 1, sizeof *u->bitmaps);
  int rc = u->list && u->copies && u->bitmaps ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (!rc) rc = bri_index_views_load(t, latest, &u->views, err);
  const bri_index_views *iv = u->views;
  size_t n_list = 0;
  for (size_t k = 0; !rc && k < n_idx; k++)
    if (!bri_fri_is(sec->indices[k])) u->list[n_list++] = sec->indices[k];
  bool need_fri = false;
  for (size_t i = 0; !rc && iv && i < iv->n; i++) {
    const bri_index_view *v = &iv->v[i];
    size_t pos = 0;
    while (u->list[pos] != v->x) pos++;
    roaring_bitmap_t *b = NULL;
    for (size_t g = 0; !rc && g < rw->n_groups; g++) {
      const bri_rewrite_group *rg = &rw->groups[g];
      size_t covered = 0;
      for (size_t j = 0; j < rg->n_old; j++) covered += bri_index_view_covers(v, rg->old_ids[j]);
      if (!covered) continue;
      if (covered != rg->n_old)
        rc = bri_error_set(err, BRI_ECONFLICT,
                           "%s: index %s now covers only some of the fragments compacted into "
                           "one; the compaction must be re-planned",
                           latest->path, v->x->name);
      else if (v->carry == BRI_CARRY_HELD)
        rc = bri_error_set(err, BRI_ECONFLICT,
                           "%s: index %s (type %s, which brid does not carry) now covers fragment "
                           "%llu; the compaction must be re-planned",
                           latest->path, v->x->name, v->type, ull(rg->old_ids[0]));
      /* the rows the compaction drops are those deleted as read (base);
       * deletions carried from later versions map to the new fragments */
      else if (v->carry == BRI_CARRY_FRI && v->hnsw && group_drops_rows(base, rg, v->x))
        rc = bri_error_set(err, BRI_ECONFLICT,
                           "%s: HNSW index %s now covers fragment %llu, some of whose rows it "
                           "holds were deleted; the compaction must be re-planned",
                           latest->path, v->x->name, ull(rg->old_ids[0]));
      else if (v->carry == BRI_CARRY_FRI)
        need_fri = true;
      else if (v->cover) { /* stable row ids: Lance's recalculate / drop */
        if (!b && !(b = roaring_bitmap_copy(v->cover)))
          rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
        for (size_t j = 0; b && j < rg->n_old; j++) roaring_bitmap_remove(b, (uint32_t)rg->old_ids[j]);
        for (size_t j = 0; b && v->carry == BRI_CARRY_ROW_IDS && j < rg->n_new; j++)
          roaring_bitmap_add(b, (uint32_t)rg->new_frags[j]->id);
      }
    }
    if (b && !rc) rc = replace_bitmap(u, pos, b, err);
    else if (b) roaring_bitmap_free(b);
  }
  /* old fragments produced by an earlier deferred compaction keep the chain going */
  for (size_t g = 0; !rc && iv && !iv->stable && g < rw->n_groups; g++)
    for (size_t j = 0; j < rw->groups[g].n_old; j++)
      need_fri |= rw->groups[g].old_ids[j] <= UINT32_MAX &&
                  roaring_bitmap_contains(iv->fri_cover, (uint32_t)rw->groups[g].old_ids[j]);
  if (!rc && need_fri) {
    rc = build_fri(u, t, base, latest, rw, err);
    if (!rc) u->list[n_list++] = u->fri;
  } else if (!rc && iv && iv->fri_entry) {
    u->list[n_list++] = (Lance__Table__IndexMetadata *)iv->fri_entry; /* unchanged */
  }
  if (rc) {
    bri_index_update_abort(u);
    bri_index_update_free(u);
    return rc;
  }
  u->section.indices = u->list;
  u->section.n_indices = n_list;
  *out = u;
  return 0;
}
