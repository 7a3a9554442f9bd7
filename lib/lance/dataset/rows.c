/* rows.c: finding one row of a table version (see rows.h).
 *
 * An offset is resolved with the manifest's counts (physical_rows minus
 * num_deleted_rows per fragment) to one fragment, and only that fragment's
 * reader is opened; an address names its fragment; a stable row id is
 * searched in every fragment's row id sequence (decoded one fragment at a
 * time: O(rows) work, no index, which is fine for a lookup from the CLI). */
#include "lance/dataset/rows.h"

#include <stdlib.h>

#include "lance/table/flags.h"

const char *bri_row_by_name(bri_row_by by) {
  return by == BRI_ROW_BY_OFFSET ? "row offset" : by == BRI_ROW_BY_ADDRESS ? "row address" : "row id";
}

void bri_row_at(const bri_manifest *m, size_t k, const bri_fragment_reader *rd, uint64_t i, bri_row *row) {
  row->fragment = m->pb->fragments[k];
  row->index = i;
  row->offset = bri_fragment_row_offsets(rd)[i];
  row->address = (uint64_t)row->fragment->id << 32 | row->offset;
}

/* The visible index of physical offset `offset` in rd (offsets ascend);
 * false when that row is deleted or beyond the fragment. */
static bool visible_index(const bri_fragment_reader *rd, uint32_t offset, uint64_t *index) {
  const uint32_t *offs = bri_fragment_row_offsets(rd);
  uint64_t lo = 0, hi = bri_fragment_num_rows(rd);
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (offs[mid] < offset) lo = mid + 1;
    else hi = mid;
  }
  *index = lo;
  return lo < bri_fragment_num_rows(rd) && offs[lo] == offset;
}

static int by_offset(const bri_table *t, const bri_manifest *m, uint64_t value, size_t *k, uint64_t *index,
                     bri_error *err) {
  const Lance__Table__Manifest *pb = m->pb;
  uint64_t before = 0;
  for (size_t i = 0; i < pb->n_fragments; i++) {
    uint64_t live = bri_fragment_live_rows(pb->fragments[i]);
    if (value < before + live) {
      *k = i;
      *index = value - before;
      return 0;
    }
    before += live;
  }
  return bri_error_set(err, BRI_ENOTFOUND, "%s: row offset %llu does not exist: version %llu has %llu rows (offsets 0..%llu)",
                       t->root, (unsigned long long)value, (unsigned long long)pb->version,
                       (unsigned long long)before, (unsigned long long)(before ? before - 1 : 0));
}

static int fragment_of(const bri_manifest *m, uint64_t id, size_t *k) {
  for (size_t i = 0; i < m->pb->n_fragments; i++)
    if (m->pb->fragments[i]->id == id) {
      *k = i;
      return 0;
    }
  return -1;
}

/* The fragment and physical offset of stable row id `value`. */
static int by_id(const bri_table *t, const bri_manifest *m, uint64_t value, size_t *k, uint32_t *offset,
                 bri_error *err) {
  const Lance__Table__Manifest *pb = m->pb;
  for (size_t i = 0; i < pb->n_fragments; i++) {
    uint64_t *ids;
    size_t n;
    int rc = bri_fragment_row_ids(t->root, pb->fragments[i], &ids, &n, err);
    if (rc) return rc;
    size_t p = 0;
    while (p < n && ids[p] != value) p++;
    free(ids);
    if (p < n) {
      *k = i;
      *offset = (uint32_t)p;
      return 0;
    }
  }
  return bri_error_set(err, BRI_ENOTFOUND, "%s: version %llu has no row with row id %llu", t->root,
                       (unsigned long long)pb->version, (unsigned long long)value);
}

int bri_row_find(const bri_table *t, const bri_manifest *m, bri_row_by by, uint64_t value, bri_row *row,
                 bri_fragment_reader **rd, bri_error *err) {
  *rd = NULL;
  const Lance__Table__Manifest *pb = m->pb;
  /* without stable row ids, a row id is the row address (as in Lance) */
  if (by == BRI_ROW_BY_ID && !(pb->reader_feature_flags & BRI_FLAG_STABLE_ROW_IDS)) by = BRI_ROW_BY_ADDRESS;
  size_t k = 0;
  uint64_t index = 0;
  uint32_t offset = 0;
  int rc = 0;
  if (by == BRI_ROW_BY_OFFSET) {
    rc = by_offset(t, m, value, &k, &index, err);
  } else if (by == BRI_ROW_BY_ADDRESS) {
    offset = (uint32_t)value;
    if (fragment_of(m, value >> 32, &k) != 0)
      rc = bri_error_set(err, BRI_ENOTFOUND,
                         "%s: row address %llu (fragment %llu, offset %u): version %llu has no fragment %llu (row "
                         "addresses change when a table is compacted; a row offset or a key does not)",
                         t->root, (unsigned long long)value, (unsigned long long)(value >> 32), offset,
                         (unsigned long long)pb->version, (unsigned long long)(value >> 32));
  } else {
    rc = by_id(t, m, value, &k, &offset, err);
  }
  if (!rc) rc = bri_fragment_open(t, m, pb->fragments[k], rd, err);
  if (rc) return rc;
  if (by == BRI_ROW_BY_OFFSET) {
    if (index >= bri_fragment_num_rows(*rd))
      rc = bri_error_set(err, BRI_ECORRUPT, "%s: fragment %llu holds %llu visible rows, its manifest entry says %llu",
                         t->root, (unsigned long long)pb->fragments[k]->id,
                         (unsigned long long)bri_fragment_num_rows(*rd),
                         (unsigned long long)bri_fragment_live_rows(pb->fragments[k]));
  } else if (!visible_index(*rd, offset, &index)) {
    bool deleted = offset < bri_fragment_physical_rows(*rd);
    rc = bri_error_set(err, BRI_ENOTFOUND, "%s: %s %llu (fragment %llu, offset %u) %s", t->root, bri_row_by_name(by),
                       (unsigned long long)value, (unsigned long long)pb->fragments[k]->id, offset,
                       deleted ? "is deleted" : "does not exist");
  }
  if (rc) {
    bri_fragment_close(*rd);
    *rd = NULL;
    return rc;
  }
  bri_row_at(m, k, *rd, index, row);
  return 0;
}
