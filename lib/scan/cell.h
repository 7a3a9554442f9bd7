/* cell.h: one value of one row, streamed: the payload of a Blob v2 value
 * (the bytes LanceDB's Table.fetchBlobs returns for it) or the raw bytes of
 * a binary or string column (legacy blob v1 columns read as large_binary).
 *
 * The column is a top-level field or a dotted path through structs ("st.b");
 * a path through a list names many values per row and is refused. Only that
 * row of that top-level field is decoded (bri_fragment_read_rows), and a
 * payload is streamed in bounded chunks (blob/resolve.h), so a 1 GiB blob
 * costs 1 MiB of memory. */
#ifndef BRI_CELL_H
#define BRI_CELL_H

#include "blob/resolve.h"
#include "lance/dataset/rows.h"

/* Streams the value of column at row (found with lance/dataset/rows.h in
 * reader rd) to fn. Errors: BRI_ENOTFOUND for no such column or a null
 * value ("... is null"), BRI_EUNSUPPORTED for a column reached through a
 * list or that is neither Blob v2 nor binary, the reader's and resolver's
 * errors, and fn's own. */
int bri_cell_stream(const bri_table *t, const bri_manifest *m, bri_fragment_reader *rd, const bri_row *row,
                    const char *column, bri_blob_chunk_fn fn, void *ctx, bri_error *err);

#endif
