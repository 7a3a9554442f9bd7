/* pagecopy.h: appending another data file's pages to a writer verbatim.
 *
 * Page-level compaction (docs/format/file.md section 9): a column's pages are
 * copied buffer for buffer into the output (each buffer 64-byte aligned and
 * padded), with their PageLayout bytes unchanged; only the buffer offsets and
 * the page priorities (+ rows the output column already holds) are new. This
 * is exact because MiniBlock, FullZip and Constant/AllNull pages only hold
 * page-relative positions. It is refused, with the reason, when the file
 * versions differ, when the two files do not have the same columns (count,
 * field ids, logical types, nesting), when a page holds absolute file
 * offsets (legacy BlobLayout pages, Blob v2 descriptor pages: their Inline
 * payloads live outside the pages and must be re-encoded instead), or when
 * the source column has column-level buffers (2.0-style statistics). */
#ifndef BRI_PAGECOPY_H
#define BRI_PAGECOPY_H

#include <stddef.h>

#include "lance/file/datafile.h"
#include "lance/file/writer.h"
#include "util/error.h"

/* 0 when every page of src_column of src can be copied into column `column`
 * of w; otherwise BRI_EUNSUPPORTED (or BRI_EINVAL for a bad column index)
 * with a message that says why. Reads no page buffer. w remembers the
 * source's columns for the next file with the same schema bytes. */
int bri_pagecopy_check(bri_file_writer *w, size_t column, bri_datafile *src, size_t src_column,
                       bri_error *err);

/* Checks as above, flushes the rows column `column` has buffered, then
 * appends every page of src_column. Buffers are streamed through a bounded
 * staging buffer (no page is held in memory whole). A failure after the
 * first byte was written fails the writer (and removes its file). */
int bri_file_writer_copy_column(bri_file_writer *w, size_t column, bri_datafile *src,
                                size_t src_column, bri_error *err);

#endif
