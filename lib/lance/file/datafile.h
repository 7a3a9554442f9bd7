/* datafile.h: the Lance v2 data file container, read side.
 *
 * Owns everything between the file bytes and a page: the 40-byte footer,
 * the global buffer and column metadata offset tables, the FileDescriptor
 * (schema and row count) in global buffer 0, and each column's pages with
 * their buffer locations and decoded PageLayout. It does not decode values
 * (lib/lance/encoding does). Only file versions 2.1 and 2.2 are accepted;
 * 2.0, 2.3 and legacy files are refused with a message naming the version
 * (docs/format/file.md section 1).
 *
 * Metadata (the footer, both offset tables, every ColumnMetadata and global
 * buffer 0) is read and validated once at open, so that a successful open
 * guarantees: every table lies inside the file in footer order, every page
 * and column buffer lies inside the data region before the column metadata
 * (page buffers 64-byte aligned), every page carries a decodable PageLayout
 * behind the exact Any type URL, and every column's pages add up to the
 * file's row count. Page buffers are read on demand with bri_datafile_read,
 * which checks every range against the file size again. */
#ifndef BRI_DATAFILE_H
#define BRI_DATAFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "encodings_v2_1.pb-c.h"
#include "file.pb-c.h"
#include "file2.pb-c.h"
#include "lance/encoding/page.h"
#include "lance/file/pbcache.h"
#include "storage/store.h"
#include "util/error.h"

/* The 40 footer bytes, decoded (docs/format/file.md section 1). */
typedef struct bri_datafile_footer {
  uint64_t column_meta_start; /* first byte of ColumnMetadata 0 = end of the data region */
  uint64_t cmo_table_start;   /* column metadata offset table: num_columns x {u64 pos, u64 size} */
  uint64_t gbo_table_start;   /* global buffer offset table: num_global_buffers x {pos, size} */
  uint32_t num_global_buffers;
  uint32_t num_columns;
  uint16_t major, minor;      /* footer version: (2,1) or (2,2) once opened */
} bri_datafile_footer;

typedef struct bri_page {
  uint64_t n_rows;       /* Page.length: top-level rows in this page */
  uint64_t priority;     /* Page.priority: file row number of its first row (not checked) */
  size_t n_buffers;
  const uint64_t *buffer_offsets; /* absolute file offsets, each range checked at open */
  const uint64_t *buffer_sizes;
  Lance__Encodings21__PageLayout *layout; /* decoded from the page's Any, never NULL */
  const uint8_t *encoding_bytes;          /* the page's DirectEncoding bytes (an Any), verbatim */
  size_t encoding_len;
  uint64_t metadata_offset;               /* file offset of the column's ColumnMetadata (messages) */
} bri_page;

typedef struct bri_column {
  size_t n_pages;
  bri_page *pages;
  uint64_t n_rows;       /* sum of page rows; equals the file's row count */
  uint64_t metadata_offset; /* where this column's ColumnMetadata starts in the file */
  uint64_t metadata_size;
  size_t n_buffers;      /* column-level buffers (2.0-style statistics), each range checked */
  const uint64_t *buffer_offsets, *buffer_sizes;
  bool parsed;           /* decoded and checked (opts may leave columns out) */
  bool foreign;          /* its ColumnMetadata or a Page has fields brid does not know:
                            read, never copied (docs/format/compatibility.md) */
} bri_column;

typedef struct bri_datafile bri_datafile;

/* Opens and validates the container at path in store st (NULL: a local
 * path, storage/store.h). */
int bri_datafile_open(bri_store *st, const char *path, bri_datafile **out, bri_error *err);
/* How much of a file to decode, and with what help. */
typedef struct bri_datafile_opts {
  bri_pbcache *cache;      /* take the file's Schema and page layouts from here
                              (pbcache.h: decoded once per distinct bytes, shared;
                              the cache must outlive the file); NULL: decode them */
  const uint32_t *columns; /* decode and check the metadata of these columns only
                              (indices; others, and indices past the file's, are
                              ignored): bri_datafile_column and _column_metadata
                              are NULL for the rest; NULL: every column */
  size_t n_columns;
} bri_datafile_opts;

/* bri_datafile_open with opts (NULL: as bri_datafile_open). */
int bri_datafile_open_in(bri_store *st, const char *path, const bri_datafile_opts *opts,
                         bri_datafile **out, bri_error *err);

/* The same over a file image held in memory (tests, fuzzing, files already
 * read). buf is borrowed: it must stay valid and unchanged until close. path
 * is used in messages only. */
int bri_datafile_open_mem(const uint8_t *buf, size_t len, const char *path,
                          bri_datafile **out, bri_error *err);
int bri_datafile_open_mem_in(const uint8_t *buf, size_t len, const char *path,
                             const bri_datafile_opts *opts, bri_datafile **out, bri_error *err);

void bri_datafile_close(bri_datafile *df);

const char *bri_datafile_path(const bri_datafile *df);
uint64_t bri_datafile_size(const bri_datafile *df);
void bri_datafile_version(const bri_datafile *df, uint16_t *major, uint16_t *minor);
const bri_datafile_footer *bri_datafile_footer_of(const bri_datafile *df);
uint64_t bri_datafile_num_rows(const bri_datafile *df);
/* The file schema (global buffer 0). Fields are in pre-order. */
const Lance__File__FileDescriptor *bri_datafile_descriptor(const bri_datafile *df);
/* The schema's bytes as stored in global buffer 0 (*len of them), or NULL
 * when they cannot be told apart (the field occurs more than once). Two
 * files with the same bytes have the same schema. */
const uint8_t *bri_datafile_schema_bytes(const bri_datafile *df, size_t *len);
size_t bri_datafile_num_columns(const bri_datafile *df);
/* Column index, or NULL past the last column or when opts left it out. */
const bri_column *bri_datafile_column(const bri_datafile *df, size_t index);
/* The ColumnMetadata message of a column, decoded by protobuf-c on first
 * use (open reads the columns Lance writes without it); NULL past the last
 * column or for a column opts left out. */
const Lance__File__V2__ColumnMetadata *bri_datafile_column_metadata(bri_datafile *df, size_t index);
/* Global buffer i (0 = FileDescriptor): position and size, each range checked at open. */
size_t bri_datafile_num_global_buffers(const bri_datafile *df);
void bri_datafile_global_buffer(const bri_datafile *df, size_t i, uint64_t *pos, uint64_t *size);

/* Reads [offset, offset+size) into a malloc'd buffer; a range outside the file is
 * BRI_ECORRUPT (ranges usually come from the file itself). */
int bri_datafile_read(bri_datafile *df, uint64_t offset, uint64_t size, uint8_t **out,
                      bri_error *err);
/* The same into a caller's buffer of at least size bytes. */
int bri_datafile_read_into(bri_datafile *df, uint64_t offset, uint64_t size, void *buf,
                           bri_error *err);

/* "mini_block", "constant", "full_zip", "blob", "sparse" or "unset". */
const char *bri_datafile_layout_name(const Lance__Encodings21__PageLayout *layout);

/* Largest metadata region (column metadata + tables + footer, or global
 * buffer 0) brid reads at open. Real files need KiB to a few MiB. */
#define BRI_DATAFILE_MAX_METADATA ((uint64_t)1 << 30)

/* Decodes page `page_index` of column `column`. On success the caller owns
 * *out and releases it with bri_leaf_page_dispose; on failure *out is empty (safe
 * to free) and err names the file, column, page, chunk where known, and what
 * was expected. */
int bri_page_decode(bri_datafile *df, size_t column, size_t page_index,
                    const bri_leaf_type *type, bri_leaf_page *out, bri_error *err);

#endif
