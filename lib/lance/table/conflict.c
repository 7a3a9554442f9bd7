/* conflict.c: Lance's conflict rules for Rewrite and DataReplacement (see
 * conflict.h). One function per operation of ours, one case per operation of
 * theirs, in the order of Lance's check_rewrite_txn and
 * check_data_replacement_txn; the reasons are Lance's, quoted where it gives
 * one. Fragment sets are small (a compaction's groups, a materialize round),
 * so membership is a linear scan. */
#include "lance/table/conflict.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "lance/table/roaring_strict.h"
#include "util/pbcheck.h"

typedef struct ctx {
  const Lance__Table__Transaction *ours;
  const Lance__Table__Manifest *read;
  unsigned flags;
  uint64_t v;      /* their version */
  bri_error *err;
} ctx;

#define U(x) ((unsigned long long)(x))

/* ------------------------------------------------------------ ours */

static bool rewrites(const Lance__Table__Transaction__Rewrite *r, uint64_t id) {
  for (size_t i = 0; i < r->n_old_fragments; i++) /* the deprecated single group */
    if (r->old_fragments[i]->id == id) return true;
  for (size_t g = 0; g < r->n_groups; g++)
    for (size_t i = 0; i < r->groups[g]->n_old_fragments; i++)
      if (r->groups[g]->old_fragments[i]->id == id) return true;
  return false;
}

static const Lance__Table__Transaction__DataReplacementGroup *
replacement_of(const Lance__Table__Transaction__DataReplacement *d, uint64_t id) {
  for (size_t i = 0; i < d->n_replacements; i++)
    if (d->replacements[i]->fragment_id == id) return d->replacements[i];
  return NULL;
}

/* Does ours modify fragment id (rewrite it, or replace one of its files)? */
static bool modifies(const ctx *c, uint64_t id) {
  if (c->ours->operation_case == LANCE__TABLE__TRANSACTION__OPERATION_REWRITE) return rewrites(c->ours->rewrite, id);
  return replacement_of(c->ours->data_replacement, id) != NULL;
}

/* The first of ids[0..n) that ours modifies (*hit), or false. */
static bool modifies_any(const ctx *c, const uint64_t *ids, size_t n, uint64_t *hit) {
  for (size_t i = 0; i < n; i++)
    if (modifies(c, ids[i])) return *hit = ids[i], true;
  return false;
}

static bool modifies_any_frag(const ctx *c, Lance__Table__DataFragment *const *f, size_t n, uint64_t *hit) {
  for (size_t i = 0; i < n; i++)
    if (modifies(c, f[i]->id)) return *hit = f[i]->id, true;
  return false;
}

static bool rewrite_touches(const ctx *c, const Lance__Table__Transaction__Rewrite *r, uint64_t *hit) {
  if (modifies_any_frag(c, r->old_fragments, r->n_old_fragments, hit)) return true;
  for (size_t g = 0; g < r->n_groups; g++)
    if (modifies_any_frag(c, r->groups[g]->old_fragments, r->groups[g]->n_old_fragments, hit)) return true;
  return false;
}

static bool has_field(const int32_t *fields, size_t n, int32_t f) {
  for (size_t i = 0; i < n; i++)
    if (fields[i] == f) return true;
  return false;
}

/* Does a replacement of ours store one of fields[0..n)? (*hit: its fragment) */
static bool replaces_field(const ctx *c, const int32_t *fields, size_t n, uint64_t *hit) {
  const Lance__Table__Transaction__DataReplacement *d = c->ours->data_replacement;
  for (size_t i = 0; i < d->n_replacements; i++) {
    const Lance__Table__DataFile *nf = d->replacements[i]->new_file;
    for (size_t k = 0; nf && k < nf->n_fields; k++)
      if (nf->fields[k] >= 0 && has_field(fields, n, nf->fields[k])) return *hit = d->replacements[i]->fragment_id, true;
  }
  return false;
}

/* ------------------------------------------------------------ verdicts */

static int give_way(const ctx *c, const char *what, uint64_t hit, bool has_hit) {
  const char *doing = c->ours->operation_case == LANCE__TABLE__TRANSACTION__OPERATION_REWRITE
                          ? "which this compaction rewrites"
                          : "whose data file is being materialized";
  if (has_hit)
    return bri_error_set(c->err, BRI_ECONFLICT, "version %llu: %s touched fragment %llu, %s", U(c->v), what,
                         U(hit), doing);
  return bri_error_set(c->err, BRI_ECONFLICT, "version %llu: %s was committed meanwhile; the %s must be re-planned",
                       U(c->v), what,
                       c->ours->operation_case == LANCE__TABLE__TRANSACTION__OPERATION_REWRITE ? "compaction"
                                                                                              : "materialization");
}

static const Lance__Table__DataFragment *read_fragment(const ctx *c, uint64_t id) {
  for (size_t i = 0; c->read && i < c->read->n_fragments; i++)
    if (c->read->fragments[i]->id == id) return c->read->fragments[i];
  return NULL;
}

static bool same_files(const Lance__Table__DataFragment *a, const Lance__Table__DataFragment *b) {
  if (a->n_files != b->n_files) return false;
  for (size_t i = 0; i < a->n_files; i++)
    if (!bri_pb_equal(&a->files[i]->base, &b->files[i]->base)) return false;
  return true;
}

/* A Delete or Update (what) that touched fragments a Rewrite of ours
 * compacts. Lance gives way; brid carries the deletions over when they are
 * all that changed: "If data files, not just deletion files, are modified,
 * then we can't rebase" (Lance's check_delete_txn, for its own rebase). */
static int deletions_in_ours(const ctx *c, const char *what, Lance__Table__DataFragment *const *updated,
                             size_t n_updated, const uint64_t *removed, size_t n_removed, bool in_place) {
  uint64_t hit = 0;
  if (!modifies_any_frag(c, updated, n_updated, &hit) && !modifies_any(c, removed, n_removed, &hit)) return 0;
  if (!(c->flags & BRI_CONFLICT_CARRY_DELETIONS) ||
      c->ours->operation_case != LANCE__TABLE__TRANSACTION__OPERATION_REWRITE)
    return give_way(c, what, hit, true);
  if (in_place) return give_way(c, "an update that rewrote columns in place", hit, true);
  for (size_t i = 0; i < n_updated; i++) {
    if (!modifies(c, updated[i]->id)) continue;
    const Lance__Table__DataFragment *was = read_fragment(c, updated[i]->id);
    if (!was || !same_files(was, updated[i])) {
      char why[64];
      snprintf(why, sizeof why, "%s that changed data files", what);
      return give_way(c, why, updated[i]->id, true);
    }
  }
  return BRI_CONFLICT_CARRY;
}

static int create_index_vs_rewrite(const ctx *c, const Lance__Table__Transaction__CreateIndex *ci) {
  /* without a fragment reuse index Lance's Rewrite remaps indexes itself:
   * "Rewrite with remapping will conflict with index creation that touches
   * overlapping fragments"; an index without a bitmap is a conflict too */
  for (size_t i = 0; i < ci->n_new_indices; i++) {
    const Lance__Table__IndexMetadata *x = ci->new_indices[i];
    if (!x->has_fragment_bitmap) return give_way(c, "an index creation without a fragment bitmap", 0, false);
    roaring_bitmap_t *b;
    char file[64];
    snprintf(file, sizeof file, "the transaction of version %llu", U(c->v));
    int rc = bri_index_bitmap_read(x, file, &b, c->err);
    if (rc) return rc;
    const Lance__Table__Transaction__Rewrite *r = c->ours->rewrite;
    uint64_t hit = 0;
    bool found = false;
    for (size_t g = 0; g < r->n_groups && !found; g++)
      for (size_t k = 0; k < r->groups[g]->n_old_fragments && !found; k++) {
        uint64_t id = r->groups[g]->old_fragments[k]->id;
        if (id <= UINT32_MAX && roaring_bitmap_contains(b, (uint32_t)id)) hit = id, found = true;
      }
    roaring_bitmap_free(b);
    if (found) return give_way(c, "an index creation", hit, true);
  }
  return 0;
}

/* ------------------------------------------------------------ ours: Rewrite */

static int check_rewrite(const ctx *c, const Lance__Table__Transaction *o) {
  uint64_t hit = 0;
  switch (o->operation_case) {
  /* "Rewrite is only compatible with operations that don't touch existing
   * fragments or update fragments we don't touch" */
  case LANCE__TABLE__TRANSACTION__OPERATION_APPEND:
  case LANCE__TABLE__TRANSACTION__OPERATION_RESERVE_FRAGMENTS:
  case LANCE__TABLE__TRANSACTION__OPERATION_PROJECT:
  case LANCE__TABLE__TRANSACTION__OPERATION_CLONE:
  case LANCE__TABLE__TRANSACTION__OPERATION_UPDATE_CONFIG:
  case LANCE__TABLE__TRANSACTION__OPERATION_UPDATE_MEM_WAL_STATE:
  case LANCE__TABLE__TRANSACTION__OPERATION_UPDATE_BASES:
    return 0;
  case LANCE__TABLE__TRANSACTION__OPERATION_DELETE:
    return deletions_in_ours(c, "a delete", o->delete_->updated_fragments, o->delete_->n_updated_fragments,
                             o->delete_->deleted_fragment_ids, o->delete_->n_deleted_fragment_ids, false);
  case LANCE__TABLE__TRANSACTION__OPERATION_UPDATE: {
    const Lance__Table__Transaction__Update *u = o->update;
    bool in_place = u->has_update_mode &&
                    u->update_mode == LANCE__TABLE__TRANSACTION__UPDATE__UPDATE_MODE__REWRITE_COLUMNS;
    return deletions_in_ours(c, "an update", u->updated_fragments, u->n_updated_fragments,
                             u->removed_fragment_ids, u->n_removed_fragment_ids, in_place);
  }
  case LANCE__TABLE__TRANSACTION__OPERATION_REWRITE:
    return rewrite_touches(c, o->rewrite, &hit) ? give_way(c, "another compaction", hit, true) : 0;
  case LANCE__TABLE__TRANSACTION__OPERATION_DATA_REPLACEMENT:
    for (size_t i = 0; i < o->data_replacement->n_replacements; i++)
      if (modifies(c, o->data_replacement->replacements[i]->fragment_id))
        return give_way(c, "a data replacement", o->data_replacement->replacements[i]->fragment_id, true);
    return 0;
  case LANCE__TABLE__TRANSACTION__OPERATION_CREATE_INDEX:
    return create_index_vs_rewrite(c, o->create_index);
  case LANCE__TABLE__TRANSACTION__OPERATION_MERGE:
    return give_way(c, "a merge (schema change)", 0, false);
  case LANCE__TABLE__TRANSACTION__OPERATION_OVERWRITE:
    return give_way(c, "an overwrite", 0, false);
  case LANCE__TABLE__TRANSACTION__OPERATION_RESTORE:
    return give_way(c, "a restore", 0, false);
  default:
    return give_way(c, "an operation brid does not know", 0, false);
  }
}

/* ------------------------------------------------------------ ours: DataReplacement */

/* Lance: a Project or Merge that does not assert preserves_nullability may
 * tighten a field's nullability, which a concurrent value-writing operation
 * (a DataReplacement is one) could falsify. */
static int check_replacement(const ctx *c, const Lance__Table__Transaction *o) {
  uint64_t hit = 0;
  switch (o->operation_case) {
  case LANCE__TABLE__TRANSACTION__OPERATION_APPEND:
  case LANCE__TABLE__TRANSACTION__OPERATION_CLONE:
  case LANCE__TABLE__TRANSACTION__OPERATION_UPDATE_CONFIG:
  case LANCE__TABLE__TRANSACTION__OPERATION_RESERVE_FRAGMENTS:
  case LANCE__TABLE__TRANSACTION__OPERATION_UPDATE_BASES:
    return 0;
  case LANCE__TABLE__TRANSACTION__OPERATION_PROJECT: {
    const Lance__Table__Transaction__Project *p = o->project;
    if (!p->preserves_nullability) return give_way(c, "a projection that may change nullability", 0, false);
    /* "A project operation can drop fields. If the project dropped a field
     * this operation was replacing then we have a conflict." */
    const Lance__Table__Transaction__DataReplacement *d = c->ours->data_replacement;
    for (size_t i = 0; i < d->n_replacements; i++) {
      const Lance__Table__DataFile *nf = d->replacements[i]->new_file;
      for (size_t k = 0; nf && k < nf->n_fields; k++) {
        bool kept = nf->fields[k] < 0;
        for (size_t j = 0; j < p->n_schema && !kept; j++) kept = p->schema[j]->id == nf->fields[k];
        if (!kept) return give_way(c, "a projection that dropped a replaced field", d->replacements[i]->fragment_id, true);
      }
    }
    return 0;
  }
  case LANCE__TABLE__TRANSACTION__OPERATION_MERGE:
    /* "Merge rewrites the whole fragment list; always conflict" */
    return give_way(c, "a merge (schema change)", 0, false);
  case LANCE__TABLE__TRANSACTION__OPERATION_DELETE:
    /* "A delete only tombstones rows ... Conflict only if our target
     * fragment was removed outright." */
    return modifies_any(c, o->delete_->deleted_fragment_ids, o->delete_->n_deleted_fragment_ids, &hit)
               ? give_way(c, "a delete that removed a whole fragment", hit, true)
               : 0;
  case LANCE__TABLE__TRANSACTION__OPERATION_UPDATE: {
    const Lance__Table__Transaction__Update *u = o->update;
    if (modifies_any(c, u->removed_fragment_ids, u->n_removed_fragment_ids, &hit))
      return give_way(c, "an update that removed a whole fragment", hit, true);
    /* "A row-rewriting update moves the matched rows out to new_fragments our
     * positional file does not cover; a horizontal update may rewrite one of
     * our fields in place. Either makes the file stale." */
    bool moved_rows = u->n_new_fragments &&
                      !(u->has_update_mode &&
                        u->update_mode == LANCE__TABLE__TRANSACTION__UPDATE__UPDATE_MODE__REWRITE_COLUMNS);
    for (size_t i = 0; i < u->n_updated_fragments; i++) {
      const Lance__Table__Transaction__DataReplacementGroup *g =
          replacement_of(c->ours->data_replacement, u->updated_fragments[i]->id);
      if (!g) continue;
      bool field_rewritten = false;
      for (size_t k = 0; g->new_file && k < g->new_file->n_fields && !field_rewritten; k++)
        for (size_t j = 0; j < u->n_fields_modified && !field_rewritten; j++)
          field_rewritten = g->new_file->fields[k] >= 0 && (uint32_t)g->new_file->fields[k] == u->fields_modified[j];
      if (moved_rows || field_rewritten) return give_way(c, "an update", g->fragment_id, true);
    }
    return 0;
  }
  case LANCE__TABLE__TRANSACTION__OPERATION_CREATE_INDEX:
    /* "A data replacement only conflicts if it is updating a field the index depends on" */
    for (size_t i = 0; i < o->create_index->n_new_indices; i++) {
      const Lance__Table__IndexMetadata *x = o->create_index->new_indices[i];
      if (replaces_field(c, x->fields, x->n_fields, &hit)) return give_way(c, "an index creation on a replaced field", hit, true);
    }
    return 0;
  case LANCE__TABLE__TRANSACTION__OPERATION_REWRITE:
    return rewrite_touches(c, o->rewrite, &hit) ? give_way(c, "a compaction", hit, true) : 0;
  case LANCE__TABLE__TRANSACTION__OPERATION_DATA_REPLACEMENT:
    /* "These conflict if there is overlap in fragment id && fields." */
    for (size_t i = 0; i < o->data_replacement->n_replacements; i++) {
      const Lance__Table__Transaction__DataReplacementGroup *x = o->data_replacement->replacements[i];
      const Lance__Table__Transaction__DataReplacementGroup *g = replacement_of(c->ours->data_replacement, x->fragment_id);
      if (!g) continue;
      if (!x->new_file || !g->new_file) return give_way(c, "another data replacement", x->fragment_id, true);
      for (size_t k = 0; k < g->new_file->n_fields; k++)
        if (has_field(x->new_file->fields, x->new_file->n_fields, g->new_file->fields[k]))
          return give_way(c, "another data replacement", x->fragment_id, true);
    }
    return 0;
  case LANCE__TABLE__TRANSACTION__OPERATION_OVERWRITE:
    return give_way(c, "an overwrite", 0, false);
  case LANCE__TABLE__TRANSACTION__OPERATION_RESTORE:
    return give_way(c, "a restore", 0, false);
  case LANCE__TABLE__TRANSACTION__OPERATION_UPDATE_MEM_WAL_STATE:
    return give_way(c, "a MemWAL state update", 0, false);
  default:
    return give_way(c, "an operation brid does not know", 0, false);
  }
}

int bri_conflict_check(const Lance__Table__Transaction *ours, const Lance__Table__Manifest *read,
                       unsigned flags, const Lance__Table__Transaction *theirs, uint64_t their_version,
                       bri_error *err) {
  ctx c = {ours, read, flags, their_version, err};
  switch (ours->operation_case) {
  case LANCE__TABLE__TRANSACTION__OPERATION_REWRITE:
    return check_rewrite(&c, theirs);
  case LANCE__TABLE__TRANSACTION__OPERATION_DATA_REPLACEMENT:
    return check_replacement(&c, theirs);
  default:
    return bri_error_set(err, BRI_EINVAL, "conflict rules for operation %d are not brid's to apply",
                         (int)ours->operation_case);
  }
}
