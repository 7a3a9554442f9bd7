/* writer_internal.h: the data structures the file writer's modules share
 * (writer.c: container and pages; writer_schema.c: schema -> columns;
 * writer_shred.c: Arrow -> levels and value slots; pagecopy.c). Not public:
 * writer.h and pagecopy.h are.
 *
 * Design choice: each column buffers the rows appended to it as the level
 * streams and value slots of page.h, except that definition levels are kept
 * as "raw codes" that name the layer (and null or empty) instead of Lance's
 * def numbers. Lance numbers def values from the layers that actually have
 * nulls or empties in the page (docs/format/file.md section 2: layers reflect the
 * data of the page), which is only known when the page is cut; the codes are
 * renumbered once at flush. Raw code 0 = valid, 2L+1 = null at layer L,
 * 2L+2 = empty list at layer L (layer 0 = innermost). */
#ifndef BRI_WRITER_INTERNAL_H
#define BRI_WRITER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "file.pb-c.h"
#include "file2.pb-c.h"
#include "lance/encoding/enc_page.h"
#include "lance/encoding/page.h"
#include "lance/file/writer.h"
#include "storage/store.h"

enum { WSTEP_STRUCT = 1, WSTEP_LIST = 2 };

typedef struct wstep {
  uint8_t kind;        /* WSTEP_STRUCT or WSTEP_LIST */
  uint8_t offset_bits; /* LIST: 32 (list, map) or 64 (large_list) */
  uint8_t layer;       /* this node's layer index (0 = innermost) */
  uint16_t depth;      /* LIST: Lance list depth (innermost list = 1) */
  uint32_t child;      /* STRUCT: which child leads to the column */
} wstep;

/* Value slots being buffered (the shape of bri_values, owned here). */
typedef struct wvals {
  bri_leaf_kind kind;
  uint32_t bits, n_dims, dims[BRI_MAX_FSL_DEPTH];
  uint64_t elems;      /* elements per slot (product of dims) */
  uint64_t cum[BRI_MAX_FSL_DEPTH];
  uint64_t n;          /* slots */
  uint8_t *data;       /* FIXED: n * elems * bits bits; VARIABLE: bytes */
  uint64_t data_len, data_cap; /* bytes */
  int64_t *offsets;    /* VARIABLE: n + 1 */
  uint64_t off_cap;
  uint8_t *fslv[BRI_MAX_FSL_DEPTH]; /* NULL = all valid so far */
  uint64_t fslv_cap[BRI_MAX_FSL_DEPTH]; /* bytes */
  size_t n_children;
  struct wvals *children;
} wvals;

typedef struct wpage {
  uint64_t offsets[BRI_ENC_MAX_BUFFERS], sizes[BRI_ENC_MAX_BUFFERS];
  size_t n_buffers;
  uint64_t rows, priority;
  uint8_t *encoding; /* the page's Any bytes */
  size_t encoding_len;
} wpage;

typedef struct wcol {
  /* what the column stores */
  size_t top;          /* index of its top-level field */
  int32_t field_id;
  size_t field_index;  /* index in the writer's input field list */
  size_t n_steps;
  wstep steps[BRI_MAX_LAYERS];
  size_t n_layers;
  uint8_t is_list[BRI_MAX_LAYERS];
  size_t first_list;   /* lowest list layer index, n_layers if none */
  uint16_t max_rep;
  bri_leaf_type type;
  bri_leaf_type child_types[5];
  uint32_t offset_bits;
  uint32_t dict_key_bits; /* dictionary field: its key width, else 0 */
  bool blob_v2;
  int general_scheme, general_level;
  char *logical_type;  /* leaf logical type (for page copy checks) */
  char *path;          /* dotted field path, for messages */
  /* buffered rows */
  uint64_t rows, levels, level_cap;
  uint16_t *rep;       /* max_rep > 0 */
  uint16_t *raw;       /* NULL = every level valid so far */
  uint8_t seen[2 * BRI_MAX_LAYERS + 2];
  wvals vals;
  /* written */
  wpage *pages;
  size_t n_pages, cap_pages;
  uint64_t rows_written;
} wcol;

struct bri_file_writer {
  char *path;
  bri_store *st;    /* where the file is made (NULL: a local path, store.h) */
  bri_swriter *out; /* the new file; NULL once finished or failed */
  uint16_t minor;
  bri_file_writer_options opt;
  bool failed, finished;
  uint64_t pos;            /* bytes written (including what is in wbuf) */
  uint8_t *wbuf;
  size_t wbuf_len, wbuf_cap;
  /* schema */
  Lance__File__Field **gb0;     /* fields as written to global buffer 0 */
  size_t n_gb0;
  size_t n_top;
  size_t n_cols;
  wcol *cols;
  uint8_t *scratch;             /* blob payload staging */
  size_t scratch_cap;
  struct bri_pagecopy_src *src; /* pagecopy.c: the source schema checked last */
};

/* writer_schema.c */
int bri_writer_schema_build(bri_file_writer *w, Lance__File__Field *const *fields, size_t n,
                            bri_error *err);
void bri_writer_schema_dispose(bri_file_writer *w);

/* pagecopy.c: frees what page copy remembers about its sources. */
void bri_pagecopy_forget(bri_file_writer *w);

/* writer.c */
/* Writes len bytes at the current position, then pads to 64 with 0x48;
 * *offset receives where they start. */
int bri_writer_put_buffer(bri_file_writer *w, const void *p, uint64_t len, uint64_t *offset,
                          bri_error *err);
/* Unpadded bytes at the current position, and padding to the next multiple of 64. */
int bri_writer_put_raw(bri_file_writer *w, const void *p, size_t len, bri_error *err);
int bri_writer_pad(bri_file_writer *w, bri_error *err);
/* Records an already encoded page (takes ownership of encoding) for column c. */
int bri_writer_add_page(bri_file_writer *w, wcol *c, uint64_t rows, uint64_t priority,
                        const uint64_t *offsets, const uint64_t *sizes, size_t n_buffers,
                        uint8_t *encoding, size_t encoding_len, bri_error *err);
int bri_writer_flush_column(bri_file_writer *w, wcol *c, bri_error *err);
/* Marks the writer failed and removes the partial file. Returns rc. */
int bri_writer_fail(bri_file_writer *w, int rc);
/* Buffered bytes of a column (values + levels). */
uint64_t bri_writer_buffered_bytes(const wcol *c);

/* writer_shred.c: value and level accumulation */
int bri_wvals_init(wvals *v, const bri_leaf_type *t, bri_error *err);
void bri_wvals_dispose(wvals *v);
void bri_wvals_reset(wvals *v);
int bri_wcol_levels(wcol *c, uint64_t n, bri_error *err); /* room for n more levels */
int bri_shred_batch(bri_file_writer *w, const struct ArrowArray *const *arrays, size_t n,
                    bri_blob_payload_fn fn, void *ctx, bri_error *err);
int bri_shred_leaf_page(bri_file_writer *w, wcol *c, const bri_leaf_page *pg,
                        bri_blob_payload_fn fn, void *ctx, bri_error *err);

#endif
