/* writer.h: writing a Lance 2.1/2.2 data file.
 *
 * A writer owns one new .lance file from its first byte to its footer
 * (docs/format/file.md section 1): page buffers, each written at the current
 * position and padded with 0x48 to a multiple of 64; global buffer 0 (the
 * FileDescriptor: schema + row count); one ColumnMetadata per column whose
 * pages carry Any{/lance.encodings21.PageLayout} encodings and whose column
 * encoding is Any{/lance.encodings.ColumnEncoding, values}; the CMO and GBO
 * tables; the 40-byte footer. The file is created through the storage
 * interface (never overwriting) and removed again when anything fails or
 * when the writer is freed before bri_file_writer_finish succeeded.
 *
 * Rows arrive per column: as Arrow batches (bri_file_writer_append, one
 * ArrowArray per top-level field, shapes as in reader.h), as already decoded
 * pages (bri_file_writer_append_leaf, levels + value slots as in page.h), or
 * as verbatim copies of another file's pages (pagecopy.h). Each column
 * buffers its rows and cuts a page when the buffered values and levels reach
 * the page target (default 8 MiB), so memory stays bounded by about one page
 * per column plus one batch slice. Pages never split a top-level row.
 *
 * Schema: the Field list (pre-order, table field ids) of the fields this file
 * stores, as the manifest has them. Columns follow docs/format/file.md section 1.3:
 * one per leaf (fixed-size lists are leaves), none for structs and lists, one
 * per Blob v2 field. A Blob v2 field is written to global buffer 0 the way
 * Lance 12 writes it: a struct with lance-encoding:blob/packed metadata
 * followed by its five descriptor fields (kind, position, size, blob_id,
 * blob_uri) with id -1 and parent -1; its logical children are not stored.
 * finish() reports what DataFile.fields / column_indices must say: the ids
 * of the fields that own a column, in pre-order, and 0..n-1. */
#ifndef BRI_WRITER_H
#define BRI_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "file.pb-c.h"
#include "lance/encoding/page.h"
#include "storage/store.h"
#include "util/arrow_c.h"
#include "util/error.h"

#define BRI_WRITER_DEFAULT_PAGE_BYTES ((uint64_t)8 << 20)

typedef struct bri_file_writer bri_file_writer;

typedef struct bri_file_writer_options {
  uint64_t page_target_bytes; /* 0 = BRI_WRITER_DEFAULT_PAGE_BYTES */
  bool auto_zstd;             /* General(zstd) on mini-block chunks where it pays
                                 (Lance only does this when a field asks) */
} bri_file_writer_options;

/* Supplies the payload of one Inline Blob v2 value. The writer calls it for
 * each valid descriptor with kind 0 (Inline) and size > 0 while buffering the
 * column, writes the bytes as a 64-byte aligned out-of-line buffer before
 * the page that will hold the descriptor, and stores the buffer's offset as
 * the descriptor's position (docs/format/blob.md section 2). `index` is the
 * descriptor's index in the array handed to the writer (Arrow: the logical
 * index in the descriptor struct array; append_leaf: the value slot), and
 * `position` the position the descriptor had (e.g. in the source file of a
 * compaction). Fill dst with exactly `size` bytes; return 0 or a negative
 * BRI_E* code with err filled. Empty Inline values (size 0) get the current
 * file offset as position, as Lance writes them. */
typedef int (*bri_blob_payload_fn)(void *ctx, size_t column, uint64_t index, uint64_t position,
                                   uint64_t size, uint8_t *dst, bri_error *err);

/* Largest Inline payload the writer stages in memory (Lance inlines values of
 * at most 64 KiB by default; larger thresholds are allowed up to this). */
#define BRI_WRITER_MAX_INLINE ((uint64_t)256 << 20)

typedef struct bri_file_result {
  uint64_t file_size;
  uint64_t num_rows;
  uint16_t major, minor; /* the footer version, also DataFile.file_*_version */
  size_t n_columns;
  int32_t *fields;         /* DataFile.fields: column-owning field ids, pre-order */
  int32_t *column_indices; /* DataFile.column_indices: 0 .. n_columns-1 */
} bri_file_result;

/* Creates path in store st (bri_store_create: never overwriting; st NULL: a
 * local path) for file version 2.minor (minor 1 or 2) with the given
 * schema. opt may be NULL. Errors: BRI_EUNSUPPORTED for a type the writer
 * cannot store (legacy blob v1 columns, packed structs of fixed-width
 * children, unknown logical types; the message names the field), BRI_EINVAL
 * for a malformed field list, BRI_ETAKEN when the file exists, BRI_EIO when
 * it cannot be created. */
int bri_file_writer_open(bri_store *st, const char *path, uint16_t minor,
                         Lance__File__Field *const *fields, size_t n_fields,
                         const bri_file_writer_options *opt, bri_file_writer **out,
                         bri_error *err);

/* Appends one batch: arrays[i] is top-level field i (in schema order), all
 * with the same length. Arrow shapes as reader.h documents them (lists with
 * int32 offsets for list/map, int64 for large_list; utf8/binary int32
 * offsets, large_* int64; fixed_size_list children; Blob v2 fields as the
 * descriptor struct {kind u8, position u64, size u64, blob_id u32,
 * blob_uri utf8}); dictionary-typed fields must arrive decoded to their
 * value type. fn supplies Inline Blob v2 payloads (may be NULL when no
 * Inline value is present). The arrays are only read during the call. */
int bri_file_writer_append(bri_file_writer *w, const struct ArrowArray *const *arrays,
                           size_t n_arrays, bri_blob_payload_fn fn, void *ctx, bri_error *err);

/* Appends the rows of one decoded page (page.h) to column `column`: its
 * layers must have the column's shape (same number of layers, list layers
 * at the same places). Columns filled this way must end up with as many
 * rows as the others. fn as above (descriptor slots of a Blob v2 column). */
int bri_file_writer_append_leaf(bri_file_writer *w, size_t column, const bri_leaf_page *page,
                                bri_blob_payload_fn fn, void *ctx, bri_error *err);

/* Cuts the pages of everything buffered, writes global buffer 0, the column
 * metadata, the offset tables and the footer, fsyncs, closes. Every column
 * must hold the same number of rows. On failure the file is removed. */
int bri_file_writer_finish(bri_file_writer *w, bri_file_result *res, bri_error *err);

/* Releases the writer; removes the file unless finish succeeded. */
void bri_file_writer_free(bri_file_writer *w);
void bri_file_result_dispose(bri_file_result *r);

const char *bri_file_writer_path(const bri_file_writer *w);
uint16_t bri_file_writer_minor(const bri_file_writer *w);
size_t bri_file_writer_num_columns(const bri_file_writer *w);
/* The leaf type of a column (to decode pages meant for it with bri_page_decode). */
const bri_leaf_type *bri_file_writer_column_type(const bri_file_writer *w, size_t column);
/* Field id and dotted path of the field that owns a column. */
int32_t bri_file_writer_column_field(const bri_file_writer *w, size_t column);
const char *bri_file_writer_column_path(const bri_file_writer *w, size_t column);
/* Whether a column stores a Blob v2 field. */
bool bri_file_writer_column_is_blob(const bri_file_writer *w, size_t column);
/* Rows in a column so far (written pages + buffered). */
uint64_t bri_file_writer_column_rows(const bri_file_writer *w, size_t column);
/* Bytes written to the file so far. */
uint64_t bri_file_writer_bytes(const bri_file_writer *w);

#endif
