/* rewrite.c: Rewrite commits with conflict detection and rebase (see
 * rewrite.h). Beyond the transaction rules, every old fragment must still be
 * byte-identical in the version we rebase onto: a cheap second line of
 * defence against a winner whose transaction understated what it changed. */
#include "compact/rewrite.h"

#include <roaring/roaring.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lance/table/commit.h"
#include "lance/table/flags.h"
#include "util/fsutil.h"
#include "util/pbcheck.h"

static bool is_old(const bri_rewrite *rw, uint64_t id) {
  for (size_t g = 0; g < rw->n_groups; g++)
    for (size_t i = 0; i < rw->groups[g].n_old; i++)
      if (rw->groups[g].old_ids[i] == id) return true;
  return false;
}

static int frags_touch(const bri_rewrite *rw, Lance__Table__DataFragment *const *f, size_t n,
                       uint64_t *hit) {
  for (size_t i = 0; i < n; i++)
    if (is_old(rw, f[i]->id)) {
      *hit = f[i]->id;
      return 1;
    }
  return 0;
}

static int ids_touch(const bri_rewrite *rw, const uint64_t *ids, size_t n, uint64_t *hit) {
  for (size_t i = 0; i < n; i++)
    if (is_old(rw, ids[i])) {
      *hit = ids[i];
      return 1;
    }
  return 0;
}

int bri_rewrite_check_conflict(const bri_rewrite *rw, const Lance__Table__Transaction *o,
                               uint64_t v, bri_error *err) {
  uint64_t hit = 0;
  const char *what = NULL;
  switch (o->operation_case) {
  case LANCE__TABLE__TRANSACTION__OPERATION_APPEND:
  case LANCE__TABLE__TRANSACTION__OPERATION_RESERVE_FRAGMENTS:
  case LANCE__TABLE__TRANSACTION__OPERATION_PROJECT:
  case LANCE__TABLE__TRANSACTION__OPERATION_CLONE:
  case LANCE__TABLE__TRANSACTION__OPERATION_UPDATE_CONFIG:
  case LANCE__TABLE__TRANSACTION__OPERATION_UPDATE_MEM_WAL_STATE:
  case LANCE__TABLE__TRANSACTION__OPERATION_UPDATE_BASES:
    return 0;
  case LANCE__TABLE__TRANSACTION__OPERATION_DELETE:
    if (frags_touch(rw, o->delete_->updated_fragments, o->delete_->n_updated_fragments, &hit) ||
        ids_touch(rw, o->delete_->deleted_fragment_ids, o->delete_->n_deleted_fragment_ids, &hit))
      what = "a delete";
    break;
  case LANCE__TABLE__TRANSACTION__OPERATION_UPDATE:
    if (frags_touch(rw, o->update->updated_fragments, o->update->n_updated_fragments, &hit) ||
        ids_touch(rw, o->update->removed_fragment_ids, o->update->n_removed_fragment_ids, &hit))
      what = "an update";
    break;
  case LANCE__TABLE__TRANSACTION__OPERATION_REWRITE: {
    const Lance__Table__Transaction__Rewrite *r = o->rewrite;
    if (frags_touch(rw, r->old_fragments, r->n_old_fragments, &hit)) what = "another compaction";
    for (size_t g = 0; g < r->n_groups && !what; g++)
      if (frags_touch(rw, r->groups[g]->old_fragments, r->groups[g]->n_old_fragments, &hit))
        what = "another compaction";
    break;
  }
  case LANCE__TABLE__TRANSACTION__OPERATION_DATA_REPLACEMENT:
    for (size_t i = 0; i < o->data_replacement->n_replacements && !what; i++)
      if (is_old(rw, o->data_replacement->replacements[i]->fragment_id)) {
        hit = o->data_replacement->replacements[i]->fragment_id;
        what = "a data replacement";
      }
    break;
  case LANCE__TABLE__TRANSACTION__OPERATION_CREATE_INDEX:
    for (size_t i = 0; i < o->create_index->n_new_indices && !what; i++) {
      const Lance__Table__IndexMetadata *x = o->create_index->new_indices[i];
      if (!x->has_fragment_bitmap) {
        what = "an index creation without a fragment bitmap";
        break;
      }
      roaring_bitmap_t *b = roaring_bitmap_portable_deserialize_safe(
          (const char *)x->fragment_bitmap.data, x->fragment_bitmap.len);
      if (!b) {
        what = "an index creation with an unreadable fragment bitmap";
        break;
      }
      for (size_t g = 0; g < rw->n_groups && !what; g++)
        for (size_t k = 0; k < rw->groups[g].n_old && !what; k++)
          if (rw->groups[g].old_ids[k] <= UINT32_MAX &&
              roaring_bitmap_contains(b, (uint32_t)rw->groups[g].old_ids[k])) {
            hit = rw->groups[g].old_ids[k];
            what = "an index creation";
          }
      roaring_bitmap_free(b);
    }
    break;
  case LANCE__TABLE__TRANSACTION__OPERATION_MERGE:
    what = "a merge (schema change)";
    break;
  case LANCE__TABLE__TRANSACTION__OPERATION_OVERWRITE:
    what = "an overwrite";
    break;
  case LANCE__TABLE__TRANSACTION__OPERATION_RESTORE:
    what = "a restore";
    break;
  default:
    what = "an operation brid does not know";
    break;
  }
  if (!what) return 0;
  if (hit)
    return bri_error_set(err, BRI_ECONFLICT,
                         "version %llu: %s touched fragment %llu, which this compaction rewrites",
                         (unsigned long long)v, what, (unsigned long long)hit);
  return bri_error_set(err, BRI_ECONFLICT,
                       "version %llu: %s was committed meanwhile; the compaction must be re-planned",
                       (unsigned long long)v, what);
}

static const Lance__Table__DataFragment *find_frag(const Lance__Table__Manifest *m, uint64_t id) {
  for (size_t i = 0; i < m->n_fragments; i++)
    if (m->fragments[i]->id == id) return m->fragments[i];
  return NULL;
}

/* A bitmap replaced in a loaded IndexSection, to be put back before the
 * section is freed (protobuf-c frees what it allocated, not ours). */
typedef struct swapped_bitmap {
  Lance__Table__IndexMetadata *index;
  ProtobufCBinaryData original;
} swapped_bitmap;

/* Index bitmaps under stable row ids (spec/table.md section 11): a group's
 * old fragments are either all covered (then their ids are replaced by the
 * new ones) or none. Without stable row ids the planner never rewrites
 * covered fragments, and a covered old fragment here is a conflict. */
static int update_index_bitmaps(const bri_rewrite *rw, Lance__Table__IndexSection *sec, bool stable,
                                swapped_bitmap **swapped, size_t *n_swapped, bri_error *err) {
  for (size_t k = 0; sec && k < sec->n_indices; k++) {
    Lance__Table__IndexMetadata *x = sec->indices[k];
    if (!x->has_fragment_bitmap) continue;
    roaring_bitmap_t *b = roaring_bitmap_portable_deserialize_safe(
        (const char *)x->fragment_bitmap.data, x->fragment_bitmap.len);
    if (!b) return bri_error_set(err, BRI_ECORRUPT, "index %s: unreadable fragment bitmap", x->name);
    bool changed = false;
    for (size_t g = 0; g < rw->n_groups; g++) {
      size_t covered = 0;
      for (size_t i = 0; i < rw->groups[g].n_old; i++)
        covered += roaring_bitmap_contains(b, (uint32_t)rw->groups[g].old_ids[i]);
      if (!covered) continue;
      if (!stable || covered != rw->groups[g].n_old) {
        roaring_bitmap_free(b);
        return bri_error_set(err, BRI_ECONFLICT,
                             stable ? "index %s covers only some of the fragments of one group"
                                    : "index %s covers fragments this compaction merges, and the "
                                      "table has no stable row ids",
                             x->name);
      }
      for (size_t i = 0; i < rw->groups[g].n_old; i++)
        roaring_bitmap_remove(b, (uint32_t)rw->groups[g].old_ids[i]);
      for (size_t i = 0; i < rw->groups[g].n_new; i++)
        roaring_bitmap_add(b, (uint32_t)rw->groups[g].new_frags[i]->id);
      changed = true;
    }
    if (changed) {
      roaring_bitmap_run_optimize(b);
      size_t len = roaring_bitmap_portable_size_in_bytes(b);
      uint8_t *buf = malloc(len);
      swapped_bitmap *grown = realloc(*swapped, (*n_swapped + 1) * sizeof *grown);
      if (!buf || !grown) {
        free(buf);
        if (grown) *swapped = grown;
        roaring_bitmap_free(b);
        return bri_error_set(err, BRI_ENOMEM, "out of memory");
      }
      roaring_bitmap_portable_serialize(b, (char *)buf);
      *swapped = grown;
      grown[*n_swapped].index = x;
      grown[(*n_swapped)++].original = x->fragment_bitmap;
      x->fragment_bitmap.data = buf;
      x->fragment_bitmap.len = len;
    }
    roaring_bitmap_free(b);
  }
  return 0;
}

/* One attempt: rebase onto the latest version and try to commit it + 1. */
static int attempt(bri_table *t, const bri_rewrite *rw, const bri_manifest *base,
                   uint64_t *version, bri_error *err) {
  uint64_t latest = bri_table_latest_version(t);
  for (uint64_t v = rw->read_version + 1; v <= latest; v++) {
    Lance__Table__Transaction *txn;
    int rc = bri_table_load_transaction(t, v, &txn, err);
    if (!rc) rc = bri_rewrite_check_conflict(rw, txn, v, err);
    if (txn) lance__table__transaction__free_unpacked(txn, NULL);
    if (rc) return rc;
  }
  bri_manifest *m;
  int rc = bri_table_load(t, latest, &m, err);
  if (rc) return rc;
  Lance__Table__Manifest *pb = m->pb;
  size_t n_new_total = 0, n_old_total = 0;
  for (size_t g = 0; g < rw->n_groups; g++)
    n_new_total += rw->groups[g].n_new, n_old_total += rw->groups[g].n_old;
  Lance__Table__DataFragment **frags = calloc(pb->n_fragments + n_new_total + 1, sizeof *frags);
  Lance__Table__DataFragment **all_new = calloc(n_new_total + 1, sizeof *all_new);
  Lance__Table__Transaction__Rewrite__RewriteGroup *gs = calloc(rw->n_groups + 1, sizeof *gs);
  Lance__Table__Transaction__Rewrite__RewriteGroup **gps = calloc(rw->n_groups + 1, sizeof *gps);
  Lance__Table__DataFragment **olds = calloc(n_old_total + 1, sizeof *olds);
  swapped_bitmap *swapped = NULL;
  size_t n_swapped = 0, nf = 0, nn = 0, no = 0;
  Lance__Table__DataFragment **saved = pb->fragments;
  size_t saved_n = pb->n_fragments;
  if (!frags || !all_new || !gs || !gps || !olds) {
    rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    goto out;
  }
  /* old fragments: present and unchanged since the read version */
  for (size_t g = 0; g < rw->n_groups && !rc; g++)
    for (size_t i = 0; i < rw->groups[g].n_old && !rc; i++) {
      const Lance__Table__DataFragment *was = find_frag(base->pb, rw->groups[g].old_ids[i]);
      const Lance__Table__DataFragment *now = find_frag(pb, rw->groups[g].old_ids[i]);
      if (!was)
        rc = bri_error_set(err, BRI_EINVAL, "fragment %llu is not in version %llu",
                           (unsigned long long)rw->groups[g].old_ids[i],
                           (unsigned long long)rw->read_version);
      else if (!now || !bri_pb_equal(&was->base, &now->base))
        rc = bri_error_set(err, BRI_ECONFLICT,
                           "fragment %llu changed after version %llu; the compaction must be re-planned",
                           (unsigned long long)rw->groups[g].old_ids[i],
                           (unsigned long long)rw->read_version);
      else
        olds[no++] = (Lance__Table__DataFragment *)was;
    }
  if (rc) goto out;
  /* fresh ids above whatever the latest version used */
  for (size_t g = 0; g < rw->n_groups; g++)
    for (size_t i = 0; i < rw->groups[g].n_new; i++) {
      rw->groups[g].new_frags[i]->id = 0;
      all_new[nn++] = rw->groups[g].new_frags[i];
    }
  bri_manifest_assign_fragment_ids(pb, all_new, nn);
  /* the fragments we leave alone, then ours: bri_commit puts them in id
   * order, which is where Lance's build_manifest puts a Rewrite's output
   * (after every fragment it left alone: its ids are the highest) */
  for (size_t i = 0; i < saved_n; i++)
    if (!is_old(rw, saved[i]->id)) frags[nf++] = saved[i];
  for (size_t k = 0; k < nn; k++) frags[nf++] = all_new[k];
  pb->fragments = frags;
  pb->n_fragments = nf;
  bool stable = (pb->reader_feature_flags & BRI_FLAG_STABLE_ROW_IDS) != 0;
  if ((rc = update_index_bitmaps(rw, m->indices, stable, &swapped, &n_swapped, err)) != 0) goto out;
  /* the transaction: one Rewrite group per compaction group */
  Lance__Table__Transaction txn;
  Lance__Table__Transaction__Rewrite rewrite;
  lance__table__transaction__init(&txn);
  lance__table__transaction__rewrite__init(&rewrite);
  size_t o = 0;
  for (size_t g = 0; g < rw->n_groups; g++) {
    lance__table__transaction__rewrite__rewrite_group__init(&gs[g]);
    gs[g].old_fragments = olds + o;
    gs[g].n_old_fragments = rw->groups[g].n_old;
    o += rw->groups[g].n_old;
    gs[g].new_fragments = rw->groups[g].new_frags;
    gs[g].n_new_fragments = rw->groups[g].n_new;
    gps[g] = &gs[g];
  }
  rewrite.groups = gps;
  rewrite.n_groups = rw->n_groups;
  txn.read_version = rw->read_version;
  txn.has_read_version = 1;
  if (rw->txn_uuid && !(txn.uuid = strdup(rw->txn_uuid))) {
    rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    goto out;
  }
  txn.operation_case = LANCE__TABLE__TRANSACTION__OPERATION_REWRITE;
  txn.rewrite = &rewrite;
  rc = bri_commit(t, pb, &txn, m->indices, latest + 1, NULL, err);
  free(txn.uuid);
  if (!rc) *version = latest + 1;
out:
  pb->fragments = saved;
  pb->n_fragments = saved_n;
  for (size_t i = 0; i < n_swapped; i++) {
    free(swapped[i].index->fragment_bitmap.data);
    swapped[i].index->fragment_bitmap = swapped[i].original;
  }
  free(swapped);
  free(frags), free(all_new), free(gs), free(gps), free(olds);
  bri_manifest_free(m);
  return rc;
}

int bri_rewrite_commit(bri_table *t, const bri_rewrite *rw, int max_attempts, uint64_t *version,
                       bri_error *err) {
  bri_manifest *base;
  int rc = bri_table_load(t, rw->read_version, &base, err);
  if (rc) return rc;
  for (int a = 0; a < max_attempts; a++) {
    rc = attempt(t, rw, base, version, err);
    if (rc != BRI_ETAKEN) break;
    /* lost the race for the version name: refresh the list and rebase again */
    (void)bri_table_refresh(t, err);
  }
  bri_manifest_free(base);
  return rc;
}
