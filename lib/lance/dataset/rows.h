/* rows.h: finding one row of a table version by the three names Lance gives
 * a row:
 *
 *   offset   its position in the version's row order: fragments in manifest
 *            order, rows in physical order, deleted rows skipped. What
 *            Lance's Dataset::take and a query's offset count. Compaction
 *            keeps the order, so an offset still names the same row after
 *            it; a deletion before the row shifts it.
 *   address  fragment id << 32 | physical offset in the fragment (LanceDB's
 *            _rowaddr, and its _rowid when the table has no stable row
 *            ids). Every compaction moves rows to new fragments, so an
 *            address read before one names nothing after it.
 *   row id   the stable row id of a table created with stable row ids
 *            (LanceDB's _rowid there): the fragment's row id sequence maps
 *            physical offset -> id; it survives compaction.
 *
 * Finding a row opens its fragment's reader (lance/dataset/reader.h), which
 * the caller goes on to read the row with. */
#ifndef BRI_ROWS_H
#define BRI_ROWS_H

#include <stdint.h>

#include "lance/dataset/reader.h"

typedef enum bri_row_by { BRI_ROW_BY_OFFSET, BRI_ROW_BY_ADDRESS, BRI_ROW_BY_ID } bri_row_by;

typedef struct bri_row {
  const Lance__Table__DataFragment *fragment;
  uint64_t index;   /* among the fragment's visible rows (the reader's row order) */
  uint32_t offset;  /* physical offset in the fragment */
  uint64_t address; /* fragment id << 32 | offset */
} bri_row;

/* "row offset", "row address", "row id": for messages. */
const char *bri_row_by_name(bri_row_by by);

/* Finds the row named value (by). On success *row and *rd (the fragment's
 * reader; close it with bri_fragment_close) are set. A row that is not
 * there is BRI_ENOTFOUND with a message that says why: beyond the last
 * row, deleted, no such fragment (an address from before a compaction), no
 * such stable id. BRI_EUNSUPPORTED for row ids stored in external files. */
int bri_row_find(const bri_table *t, const bri_manifest *m, bri_row_by by, uint64_t value, bri_row *row,
                 bri_fragment_reader **rd, bri_error *err);

/* The visible row of fragment index k at index i, as a bri_row (for callers
 * that found the row by reading it, e.g. a key lookup). */
void bri_row_at(const bri_manifest *m, size_t k, const bri_fragment_reader *rd, uint64_t i, bri_row *row);

#endif
