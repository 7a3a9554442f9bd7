/* carry.c: deletions committed during a compaction, translated onto its new
 * fragments (see carry.h). Each group is walked once in row order: the read
 * version's deletion vector of an old fragment says which rows the
 * compaction copied, the latest one which of those are deleted now; copied
 * rows take consecutive positions across the group's new fragments. An old
 * fragment whose deletion file did not change costs no row walk. */
#include "compact/carry.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "lance/table/deletion.h"
#include "util/fsutil.h"
#include "util/pbcheck.h"

#define U(x) ((unsigned long long)(x))

/* The fragment's deleted offsets (sorted), none without a deletion file. */
static int load_deletions(bri_table *t, const Lance__Table__Manifest *m, const Lance__Table__DataFragment *f,
                          uint32_t **offs, size_t *n, bri_error *err) {
  *offs = NULL, *n = 0;
  if (!f->deletion_file) return 0;
  char *p;
  bri_store *st;
  int rc = bri_table_deletion_path(t, m, f, &p, err);
  if (rc) return rc;
  if (!(rc = bri_table_store_of(t, m, p, &st, err)))
    rc = bri_deletion_read(st, p, f->deletion_file->file_type, f->deletion_file->num_deleted_rows,
                           f->physical_rows, offs, n, err);
  free(p);
  return rc;
}

/* a and b are the same fragment but for their deletion files. */
static bool same_but_deletions(const Lance__Table__DataFragment *a, const Lance__Table__DataFragment *b) {
  Lance__Table__DataFragment x = *b; /* shallow: only read while packing */
  x.deletion_file = a->deletion_file;
  return bri_pb_equal(&a->base, &x.base);
}

static bool same_deletions(const Lance__Table__DataFragment *a, const Lance__Table__DataFragment *b) {
  if (!a->deletion_file || !b->deletion_file) return a->deletion_file == b->deletion_file;
  return bri_pb_equal(&a->deletion_file->base, &b->deletion_file->base);
}

/* Positions (within each new fragment) of the rows to delete. */
typedef struct targets {
  Lance__Table__DataFragment *const *frags;
  size_t n_frags, k;      /* k: the new fragment position `at` falls in */
  uint64_t at, start;     /* at: next group position; start: first position of frags[k] */
  uint32_t **offs;
  size_t *n;
} targets;

static int mark(targets *tg, bri_error *err) {
  while (tg->k < tg->n_frags && tg->at >= tg->start + tg->frags[tg->k]->physical_rows)
    tg->start += tg->frags[tg->k++]->physical_rows;
  if (tg->k == tg->n_frags) return BRI_EINVAL; /* the caller names the group */
  uint32_t *g = realloc(tg->offs[tg->k], (tg->n[tg->k] + 1) * sizeof *g);
  if (!g) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  tg->offs[tg->k] = g;
  g[tg->n[tg->k]++] = (uint32_t)(tg->at - tg->start);
  return 0;
}

/* Walks one old fragment: its rows live at read_version take the next
 * positions; those deleted since (every one when the fragment is gone) are
 * marked. */
static int walk_old(bri_table *t, const bri_manifest *base, const bri_manifest *latest, uint64_t id,
                    targets *tg, uint64_t *carried, bri_error *err) {
  const Lance__Table__DataFragment *was = bri_manifest_fragment(base, id), *now = bri_manifest_fragment(latest, id);
  if (!was) return bri_error_set(err, BRI_EINVAL, "fragment %llu is not in version %llu", U(id), U(base->pb->version));
  if (now && !same_but_deletions(was, now))
    return bri_error_set(err, BRI_ECONFLICT, "fragment %llu changed after version %llu (not only its deletions); "
                         "the compaction must be re-planned", U(id), U(base->pb->version));
  uint32_t *before = NULL, *after = NULL;
  size_t nb = 0, na = 0;
  int rc = load_deletions(t, base->pb, was, &before, &nb, err);
  if (!rc && now && same_deletions(was, now)) { /* untouched: its rows, none deleted */
    tg->at += was->physical_rows - nb;
    free(before);
    return 0;
  }
  if (!rc && now) rc = load_deletions(t, latest->pb, now, &after, &na, err);
  size_t b = 0, a = 0;
  for (uint64_t o = 0; !rc && o < was->physical_rows; o++) {
    while (a < na && after[a] < o) a++;
    bool gone = !now || (a < na && after[a] == o);
    if (b < nb && before[b] == o) { /* deleted before we read: not copied, must stay deleted */
      b++;
      if (!gone)
        rc = bri_error_set(err, BRI_ECONFLICT, "fragment %llu: row %llu, deleted at version %llu, is back in "
                           "version %llu; the compaction must be re-planned", U(id), U(o),
                           U(base->pb->version), U(latest->pb->version));
      continue;
    }
    if (gone) {
      if ((rc = mark(tg, err)) == BRI_EINVAL) break;
      ++*carried;
    }
    tg->at++;
  }
  free(before), free(after);
  return rc;
}

/* Gives f a deletion file holding offs[0..n) (sorted). */
static int write_deletions(bri_table *t, uint64_t latest_version, Lance__Table__DataFragment *f,
                           const uint32_t *offs, size_t n, bri_outputs *out, bri_error *err) {
  uint64_t id = 0;
  while (getrandom(&id, sizeof id, 0) != (ssize_t)sizeof id)
    if (errno != EINTR) return bri_error_errno(err, "getrandom for a deletion file id of", t->root);
  char *name = bri_deletion_file_name(f->id, latest_version, id, BRI_DELETION_BITMAP);
  char *dir = bri_path_join(t->root, "_deletions");
  char *path = name && dir ? bri_path_join(dir, name) : NULL;
  Lance__Table__DeletionFile *d = malloc(sizeof *d);
  int rc = path && d ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (!rc && (rc = bri_store_mkdir(t->store, dir, err)) == BRI_ETAKEN) rc = 0; /* Lance made it before */
  if (!rc) rc = bri_outputs_add(out, path, 0, err);
  if (!rc) rc = bri_deletion_write_bin(t->store, path, offs, n, err); /* durable, name included */
  if (!rc) {
    lance__table__deletion_file__init(d);
    d->has_file_type = 1, d->file_type = LANCE__TABLE__DELETION_FILE__DELETION_FILE_TYPE__BITMAP;
    d->has_read_version = 1, d->read_version = latest_version;
    d->has_id = 1, d->id = id;
    d->has_num_deleted_rows = 1, d->num_deleted_rows = n;
    f->deletion_file = d;
    d = NULL;
  }
  free(d), free(name), free(dir), free(path);
  return rc;
}

static int carry_group(bri_table *t, const bri_manifest *base, const bri_manifest *latest,
                       const bri_rewrite_group *g, bri_outputs *out, uint64_t *carried, bri_error *err) {
  uint64_t rows = 0;
  for (size_t k = 0; k < g->n_new; k++) rows += g->new_frags[k]->physical_rows;
  uint32_t **offs = calloc(g->n_new + 1, sizeof *offs);
  size_t *n = calloc(g->n_new + 1, sizeof *n);
  targets tg = {g->new_frags, g->n_new, 0, 0, 0, offs, n};
  int rc = offs && n ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
  for (size_t i = 0; !rc && i < g->n_old; i++) rc = walk_old(t, base, latest, g->old_ids[i], &tg, carried, err);
  if (rc == BRI_EINVAL || (!rc && tg.at != rows))
    rc = bri_error_set(err, BRI_EINVAL, "%s: the new fragments of the group that replaces fragment %llu hold %llu "
                       "rows, not the old fragments' live rows; deletions cannot be carried over",
                       t->root, U(g->n_old ? g->old_ids[0] : 0), U(rows));
  for (size_t k = 0; !rc && k < g->n_new; k++) {
    if (!n[k]) continue;
    if (n[k] >= g->new_frags[k]->physical_rows)
      rc = bri_error_set(err, BRI_ECONFLICT, "version %llu: every row this compaction copied into a new fragment "
                         "was deleted meanwhile; the compaction must be re-planned", U(latest->pb->version));
    else
      rc = write_deletions(t, latest->pb->version, g->new_frags[k], offs[k], n[k], out, err);
  }
  for (size_t k = 0; offs && k < g->n_new; k++) free(offs[k]);
  free(offs), free(n);
  return rc;
}

int bri_carry_deletions(bri_table *t, const bri_manifest *base, const bri_manifest *latest,
                        const bri_rewrite *rw, bri_outputs *out, uint64_t *carried, bri_error *err) {
  *carried = 0;
  int rc = 0;
  size_t mark_at = out->n;
  for (size_t g = 0; !rc && g < rw->n_groups; g++)
    rc = carry_group(t, base, latest, &rw->groups[g], out, carried, err);
  if (rc) {
    bri_carry_forget(rw);
    bri_outputs_roll_back_to(out, mark_at);
  }
  return rc;
}

void bri_carry_forget(const bri_rewrite *rw) {
  for (size_t g = 0; g < rw->n_groups; g++)
    for (size_t k = 0; k < rw->groups[g].n_new; k++) {
      Lance__Table__DataFragment *f = rw->groups[g].new_frags[k];
      if (f->deletion_file) lance__table__deletion_file__free_unpacked(f->deletion_file, NULL);
      f->deletion_file = NULL;
    }
}
