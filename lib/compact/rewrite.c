/* rewrite.c: Rewrite commits with conflict detection and rebase (see
 * rewrite.h). Each attempt builds the Rewrite transaction first and checks
 * it against every winner with Lance's rules (lance/table/conflict.c). Beyond
 * the transaction rules, every old fragment must still be byte-identical in
 * the version we rebase onto, or differ only by deletions that carry.c then
 * carries over: a second line of defence against a winner whose transaction
 * understated what it changed. */
#include "compact/rewrite.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "compact/carry.h"
#include "compact/fri.h"
#include "lance/table/commit.h"
#include "lance/table/conflict.h"
#include "lance/table/fields.h"
#include "util/bytes.h"
#include "util/fsutil.h"
#include "util/pbcheck.h"

/* The old fragment ids of every group, sorted: membership in O(log n),
 * since a compaction may rewrite thousands of fragments. */
typedef struct old_set {
  uint64_t *ids;
  size_t n;
} old_set;

static int old_set_make(const bri_rewrite *rw, old_set *s, bri_error *err) {
  s->n = 0;
  for (size_t g = 0; g < rw->n_groups; g++) s->n += rw->groups[g].n_old;
  if (!(s->ids = malloc((s->n + 1) * sizeof *s->ids))) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  size_t k = 0;
  for (size_t g = 0; g < rw->n_groups; g++)
    for (size_t i = 0; i < rw->groups[g].n_old; i++) s->ids[k++] = rw->groups[g].old_ids[i];
  qsort(s->ids, s->n, sizeof *s->ids, bri_cmp_u64);
  return 0;
}

static bool is_old(const old_set *s, uint64_t id) {
  return bsearch(&id, s->ids, s->n, sizeof id, bri_cmp_u64) != NULL;
}

/* The Rewrite transaction of rw: one group per compaction group, the old
 * fragments as they were at read_version (olds holds them), the new ones
 * as they will be committed. */
typedef struct rewrite_txn {
  Lance__Table__Transaction txn;
  Lance__Table__Transaction__Rewrite rewrite;
  Lance__Table__Transaction__Rewrite__RewriteGroup *gs, **gps;
  Lance__Table__DataFragment **olds;
} rewrite_txn;

static int build_txn(const bri_rewrite *rw, const bri_manifest *base, rewrite_txn *x, bri_error *err) {
  size_t n_old = 0;
  for (size_t g = 0; g < rw->n_groups; g++) n_old += rw->groups[g].n_old;
  memset(x, 0, sizeof *x);
  x->gs = calloc(rw->n_groups + 1, sizeof *x->gs);
  x->gps = calloc(rw->n_groups + 1, sizeof *x->gps);
  x->olds = calloc(n_old + 1, sizeof *x->olds);
  if (!x->gs || !x->gps || !x->olds) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  lance__table__transaction__init(&x->txn);
  lance__table__transaction__rewrite__init(&x->rewrite);
  size_t o = 0;
  for (size_t g = 0; g < rw->n_groups; g++) {
    lance__table__transaction__rewrite__rewrite_group__init(&x->gs[g]);
    x->gs[g].old_fragments = x->olds + o;
    for (size_t i = 0; i < rw->groups[g].n_old; i++) {
      const Lance__Table__DataFragment *was = bri_manifest_fragment(base, rw->groups[g].old_ids[i]);
      if (!was)
        return bri_error_set(err, BRI_EINVAL, "fragment %llu is not in version %llu",
                             (unsigned long long)rw->groups[g].old_ids[i], (unsigned long long)rw->read_version);
      x->olds[o++] = (Lance__Table__DataFragment *)was;
    }
    x->gs[g].n_old_fragments = rw->groups[g].n_old;
    x->gs[g].new_fragments = rw->groups[g].new_frags;
    x->gs[g].n_new_fragments = rw->groups[g].n_new;
    x->gps[g] = &x->gs[g];
  }
  x->rewrite.groups = x->gps;
  x->rewrite.n_groups = rw->n_groups;
  x->txn.read_version = rw->read_version;
  x->txn.has_read_version = 1;
  x->txn.operation_case = LANCE__TABLE__TRANSACTION__OPERATION_REWRITE;
  x->txn.rewrite = &x->rewrite;
  if (rw->txn_uuid && !(x->txn.uuid = strdup(rw->txn_uuid))) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  return 0;
}

static void free_txn(rewrite_txn *x) {
  free(x->txn.uuid);
  free(x->gs), free(x->gps), free(x->olds);
}

/* What the attempts learned about the versions committed since
 * read_version: a version's verdict never changes, so each is checked once
 * however many attempts lose the race for the next version name. */
typedef struct winners {
  uint64_t checked; /* versions up to here passed Lance's rules */
  bool carry;       /* some of them deleted rows in our old fragments */
} winners;

/* Lance's rules (conflict.h) for the versions after w->checked up to latest. */
static int check_winners(bri_table *t, const bri_rewrite *rw, const bri_manifest *base,
                         const Lance__Table__Transaction *ours, uint64_t latest, winners *w, bri_error *err) {
  for (uint64_t v = w->checked + 1; v <= latest; v++) {
    Lance__Table__Transaction *theirs;
    int rc = bri_table_load_transaction(t, v, &theirs, err);
    if (!rc) rc = bri_fields_check_txn(theirs, t->root, err);
    if (!rc)
      rc = bri_conflict_check(ours, base->pb, rw->carry_deletions ? BRI_CONFLICT_CARRY_DELETIONS : 0, theirs, v, err);
    if (theirs) lance__table__transaction__free_unpacked(theirs, NULL);
    if (rc == BRI_CONFLICT_CARRY) w->carry = true;
    else if (rc) return rc;
    w->checked = v;
  }
  return 0;
}

/* Without deletions to carry, every old fragment is still there, byte for
 * byte: a second line of defence against a winner whose transaction
 * understated what it changed (carry.c checks its own case). */
static int olds_unchanged(const bri_rewrite *rw, const bri_manifest *base, const bri_manifest *now,
                          bri_error *err) {
  for (size_t g = 0; g < rw->n_groups; g++)
    for (size_t i = 0; i < rw->groups[g].n_old; i++) {
      const Lance__Table__DataFragment *was = bri_manifest_fragment(base, rw->groups[g].old_ids[i]);
      const Lance__Table__DataFragment *is = bri_manifest_fragment(now, rw->groups[g].old_ids[i]);
      if (!is || !bri_pb_equal(&was->base, &is->base))
        return bri_error_set(err, BRI_ECONFLICT, "fragment %llu changed after version %llu; the compaction must be "
                             "re-planned", (unsigned long long)rw->groups[g].old_ids[i],
                             (unsigned long long)rw->read_version);
    }
  return 0;
}

/* One attempt: rebase onto the latest version and try to commit it + 1. */
static int attempt(bri_table *t, bri_rewrite *rw, const bri_manifest *base, const old_set *olds,
                   bri_outputs *out, winners *w, uint64_t *version, bri_error *err) {
  uint64_t latest = bri_table_latest_version(t);
  rewrite_txn x;
  bri_manifest *m = NULL;
  int rc = build_txn(rw, base, &x, err);
  if (!rc) rc = check_winners(t, rw, base, &x.txn, latest, w, err);
  bool carry = w->carry;
  if (!rc) rc = bri_table_load(t, latest, &m, err);
  if (rc) {
    free_txn(&x);
    return rc;
  }
  Lance__Table__Manifest *pb = m->pb;
  size_t n_new_total = 0;
  for (size_t g = 0; g < rw->n_groups; g++) n_new_total += rw->groups[g].n_new;
  Lance__Table__DataFragment **frags = calloc(pb->n_fragments + n_new_total + 1, sizeof *frags);
  Lance__Table__DataFragment **all_new = calloc(n_new_total + 1, sizeof *all_new);
  bri_index_update *iu = NULL;
  size_t nf = 0, nn = 0, mark = out->n;
  Lance__Table__DataFragment **saved = pb->fragments;
  size_t saved_n = pb->n_fragments;
  if (!frags || !all_new) {
    rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    goto out;
  }
  /* (nothing committed since read_version: the fragments are the ones read) */
  if (!carry && latest != rw->read_version && (rc = olds_unchanged(rw, base, m, err)) != 0) goto out;
  /* fresh ids above whatever the latest version used */
  for (size_t g = 0; g < rw->n_groups; g++)
    for (size_t i = 0; i < rw->groups[g].n_new; i++) {
      rw->groups[g].new_frags[i]->id = 0;
      all_new[nn++] = rw->groups[g].new_frags[i];
    }
  bri_manifest_assign_fragment_ids(pb, all_new, nn);
  if (carry && (rc = bri_carry_deletions(t, base, m, rw, out, &rw->carried, err)) != 0) goto out;
  /* indices, judged on the latest fragment list, before it changes */
  if ((rc = bri_index_update_build(t, base, m, rw, &iu, err)) != 0) goto out;
  /* the fragments we leave alone, then ours: bri_commit puts them in id
   * order, which is where Lance's build_manifest puts a Rewrite's output
   * (after every fragment it left alone: its ids are the highest) */
  for (size_t i = 0; i < saved_n && !rc; i++)
    if (!is_old(olds, saved[i]->id)) frags[nf++] = saved[i];
    else rc = bri_fields_check_removed(saved[i], m->path, err); /* fields.h */
  if (rc) goto out;
  for (size_t k = 0; k < nn; k++) frags[nf++] = all_new[k];
  pb->fragments = frags;
  pb->n_fragments = nf;
  rc = bri_commit(t, pb, &x.txn, &iu->section, latest + 1, NULL, err);
  if (!rc) {
    *version = latest + 1;
    if (rw->index_report) {
      json_decref(*rw->index_report);
      *rw->index_report = json_incref(iu->report);
    }
  } else {
    bri_index_update_abort(iu);
  }
out:
  if (rc && carry) { /* the next attempt carries again, onto its own ids */
    bri_carry_forget(rw);
    bri_outputs_roll_back_to(out, mark);
    rw->carried = 0;
  }
  pb->fragments = saved;
  pb->n_fragments = saved_n;
  bri_index_update_free(iu);
  free(frags), free(all_new);
  free_txn(&x);
  bri_manifest_free(m);
  return rc;
}

int bri_rewrite_commit(bri_table *t, bri_rewrite *rw, int max_attempts, uint64_t *version,
                       bri_error *err) {
  bri_manifest *loaded = NULL;
  const bri_manifest *base = rw->base;
  old_set olds = {0};
  int rc = base ? 0 : bri_table_load(t, rw->read_version, &loaded, err);
  if (!base) base = loaded;
  if (!rc) rc = old_set_make(rw, &olds, err);
  if (rc) {
    bri_manifest_free(loaded);
    return rc;
  }
  bri_outputs own = {.store = t->store};
  bri_outputs *out = rw->out ? rw->out : &own;
  rw->carried = 0;
  winners w = {rw->read_version, false};
  for (int a = 0; a < max_attempts; a++) {
    rc = attempt(t, rw, base, &olds, out, &w, version, err);
    if (rc != BRI_ETAKEN) break;
    /* lost the race for the version name: refresh the list and rebase again */
    (void)bri_table_refresh(t, err);
  }
  bri_outputs_dispose(&own); /* committed (or rolled back by the attempt): the files stay */
  free(olds.ids);
  bri_manifest_free(loaded);
  return rc;
}
