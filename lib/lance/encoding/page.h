/* page.h: decoding one page of one leaf column of a Lance 2.1/2.2 data file.
 *
 * Owns the public contract between the page decoders (MiniBlock, FullZip,
 * Constant/AllNull, legacy Blob; docs/format/file.md sections 2-3) and whoever turns
 * pages into arrays: what the caller must say about the column
 * (bri_leaf_type), and what a decoded page looks like (bri_leaf_page): the
 * repetition/definition level streams exactly as Lance defines them, and the
 * value slots in an Arrow-like layout.
 *
 * Design choice: the decoder does not assemble nesting. It returns the levels
 * and the flat value slots (one slot per *visible* item, docs/format/file.md section
 * 2), which is enough to rebuild any Arrow array and is also what a writer
 * needs to re-encode. Dictionaries are expanded, FSL dimensions are flattened
 * into the slot, and every null slot holds zero bytes (fixed width) or an
 * empty value (variable width), so equal logical values give equal bytes.
 *
 * ---------------------------------------------------------------------------
 * Reading a bri_leaf_page
 *
 *   levels:  n_levels entries. rep[i] (NULL when the page has no repetition)
 *            and def[i] (NULL when it has no definition). Without either,
 *            n_levels == n_slots == n_rows and every item is a valid value.
 *   layers:  layers[0 .. n_layers) innermost first, values of
 *            enum bri_repdef_layer (= Lance's RepDefLayer).
 *   max_rep: number of list layers. rep[i] == max_rep starts a new top-level
 *            row; 0 < rep[i] < max_rep starts a list at that depth (depth 1 =
 *            innermost list) inside the current row; 0 continues the
 *            innermost list. Without rep, every level is a new row.
 *   def:     0 = valid at every layer. Each layer with nulls/empties takes the
 *            next def value(s) counting from the innermost layer outward:
 *            NULLABLE_ITEM, NULLABLE_LIST and EMPTYABLE_LIST take one,
 *            NULL_AND_EMPTY_LIST takes two (null first, then empty).
 *            max_def = the largest def value the layers allow.
 *   visible: an item is visible (owns a value slot) iff def <= max_visible_def;
 *            max_visible_def = sum of the def values of the layers below the
 *            first list layer (= max_def when there is no list layer).
 *            A visible item with def > 0 is a null value (its slot is zeroed);
 *            def > max_visible_def is a null/empty list or a null struct
 *            above a list: no slot.
 *   slots:   value slot k belongs to the k-th visible level, in order.
 *
 * Value slots (bri_values), by kind:
 *   BRI_LEAF_FIXED:    `data` holds n_slots * elems_per_slot elements of `bits`
 *                      bits each (elems_per_slot = product of dims, 1 without
 *                      FSL). bits == 1 (boolean): bit-packed LSB first, Arrow
 *                      order; otherwise bits is a multiple of 8 and elements are
 *                      back to back, little-endian as in Arrow. bits == 0 (the
 *                      Arrow null type) has no data.
 *                      FSL validity: for FSL layer k (0 = outermost),
 *                      fsl_validity[k] is NULL when the page stores no
 *                      validity for that layer (all valid), else a bitmap
 *                      (LSB first, 1 = valid; it may still be all ones) of
 *                      n_slots * (dims[0] * ... * dims[k]) bits: the validity of
 *                      the items of that FSL layer. A null row's own nullness
 *                      is in def, not here.
 *   BRI_LEAF_VARIABLE: offsets[0 .. n_slots] (int64, offsets[0] == 0,
 *                      non-decreasing) into `data` (data_len bytes) - the
 *                      layout of an Arrow large_binary/large_utf8 array.
 *   BRI_LEAF_STRUCT:   a packed struct (legacy PackedStruct, Blob v2
 *                      descriptor): n_children child bri_values, each FIXED or
 *                      VARIABLE with n_slots slots. For the Blob v2 descriptor
 *                      (bri_leaf_type_blob_v2) the children are kind u8,
 *                      position u64, size u64, blob_id u32, uri (variable).
 *   A legacy blob column (BRI_LEAF_LEGACY_BLOB, BlobLayout) decodes to
 *   BRI_LEAF_STRUCT with children position u64 and size u64: the payload of
 *   a valid non-empty slot is the `size` bytes at absolute file offset
 *   `position` (read them with bri_datafile_read). Null/empty items are
 *   expressed by the levels, which are rebuilt from the descriptors.
 * --------------------------------------------------------------------------- */
#ifndef BRI_ENCODING_PAGE_H
#define BRI_ENCODING_PAGE_H

#include <stddef.h>
#include <stdint.h>

#include "encodings_v2_1.pb-c.h"
#include "util/error.h"

#define BRI_MAX_FSL_DEPTH 4

/* The Any type URLs Lance 2.1+ writes (docs/format/file.md section 1.1). */
#define BRI_PAGE_LAYOUT_TYPE_URL "/lance.encodings21.PageLayout"
#define BRI_COLUMN_ENCODING_TYPE_URL "/lance.encodings.ColumnEncoding"
#define BRI_MAX_LAYERS 64
#define BRI_MAX_STRUCT_CHILDREN 256

/* Lance's RepDefLayer values. */
enum bri_repdef_layer {
  BRI_LAYER_ALL_VALID_ITEM = 1,
  BRI_LAYER_ALL_VALID_LIST = 2,
  BRI_LAYER_NULLABLE_ITEM = 3,
  BRI_LAYER_NULLABLE_LIST = 4,
  BRI_LAYER_EMPTYABLE_LIST = 5,
  BRI_LAYER_NULL_AND_EMPTY_LIST = 6,
};

typedef enum bri_leaf_kind {
  BRI_LEAF_FIXED = 1,
  BRI_LEAF_VARIABLE = 2,
  BRI_LEAF_STRUCT = 3,
  BRI_LEAF_LEGACY_BLOB = 4, /* input only; the page decodes to BRI_LEAF_STRUCT */
} bri_leaf_kind;

/* What the caller knows about the leaf column from the schema.
 *   FIXED:    bits per element: 0 (Arrow null), 1 (bool), 8 (int8/uint8),
 *             16 (int16, float16), 32 (int32, float32, date32, time32,
 *             decimal32), 64 (int64, float64, date64, time64, timestamp,
 *             duration, decimal64), 128 (decimal128, interval month-day-nano),
 *             256 (decimal256), 8*k (fixed_size_binary(k)). For
 *             fixed_size_list<...<T, dN>..., d1> set dims = {d1, ..., dN}
 *             (outermost first) and bits = T's width.
 *   VARIABLE: utf8, binary, large_utf8, large_binary (no other fields).
 *   STRUCT:   a packed struct column: children (each FIXED without dims, or
 *             VARIABLE), in field order.
 *   LEGACY_BLOB: large_binary with field metadata lance-encoding:blob. */
typedef struct bri_leaf_type {
  bri_leaf_kind kind;
  uint32_t bits;
  uint32_t n_dims;
  uint32_t dims[BRI_MAX_FSL_DEPTH];
  size_t n_children;
  const struct bri_leaf_type *children;
} bri_leaf_type;

/* The Blob v2 descriptor struct {kind u8, position u64, size u64, blob_id u32,
 * blob_uri utf8} (docs/format/blob.md section 2). */
const bri_leaf_type *bri_leaf_type_blob_v2(void);

typedef struct bri_values {
  bri_leaf_kind kind; /* FIXED, VARIABLE or STRUCT */
  uint64_t n;         /* value slots */
  /* FIXED */
  uint32_t bits;
  uint32_t n_dims;
  uint32_t dims[BRI_MAX_FSL_DEPTH];
  uint64_t elems_per_slot;
  uint8_t *fsl_validity[BRI_MAX_FSL_DEPTH];
  /* FIXED and VARIABLE */
  uint8_t *data;
  uint64_t data_len; /* bytes used in data */
  /* VARIABLE */
  int64_t *offsets; /* n + 1 entries */
  /* STRUCT */
  size_t n_children;
  struct bri_values *children;
  /* internal: allocated capacity (bytes of data, slots of offsets/validity) */
  uint64_t cap_data, cap_slots;
} bri_values;

typedef enum bri_page_layout_kind {
  BRI_PAGE_MINIBLOCK = 1,
  BRI_PAGE_CONSTANT = 2, /* 2.1 AllNullLayout and 2.2 ConstantLayout */
  BRI_PAGE_FULLZIP = 3,
  BRI_PAGE_BLOB = 4,
} bri_page_layout_kind;

typedef struct bri_leaf_page {
  bri_page_layout_kind layout;
  uint64_t n_rows;
  uint64_t n_levels;
  uint16_t *rep; /* NULL when the page has no repetition */
  uint16_t *def; /* NULL when the page has no definition */
  size_t n_layers;
  uint8_t layers[BRI_MAX_LAYERS]; /* enum bri_repdef_layer, innermost first */
  uint16_t max_rep, max_def, max_visible_def;
  bri_values values; /* values.n = number of value slots */
} bri_leaf_page;

/* Limits against hostile input. max_output_bytes caps everything the decoder
 * allocates for one page (levels, slots, scratch); 0 means the default
 * (BRI_PAGE_DEFAULT_MAX_OUTPUT). */
#define BRI_PAGE_DEFAULT_MAX_OUTPUT ((uint64_t)4 << 30)
typedef struct bri_page_limits {
  uint64_t max_output_bytes;
} bri_page_limits;

/* A page given directly as its layout and buffers (the fuzz harness, tests and
 * re-encoders use this; bri_page_decode reads the buffers and calls it).
 * `where` names the page in error messages, e.g. "x.lance: page 3 of column
 * 2". file_minor is the file version's minor number (1 or 2). */
typedef struct bri_page_input {
  const char *where;
  uint16_t file_minor;
  uint64_t n_rows;
  const Lance__Encodings21__PageLayout *layout;
  size_t n_buffers;
  const uint8_t *const *buffers;
  const uint64_t *buffer_sizes;
} bri_page_input;

int bri_page_decode_buffers(const bri_page_input *in, const bri_leaf_type *type,
                            const bri_page_limits *limits, bri_leaf_page *out, bri_error *err);

void bri_leaf_page_dispose(bri_leaf_page *page);
void bri_values_dispose(bri_values *v);

/* Layer bookkeeping (docs/format/file.md section 2): fills max_rep, max_def and
 * max_visible_def for layers[0..n) (innermost first). Unknown layer values are
 * BRI_ECORRUPT. */
int bri_layers_analyze(const uint8_t *layers, size_t n, uint16_t *max_rep, uint16_t *max_def,
                       uint16_t *max_visible_def, bri_error *err);

/* Reads value slot i of a FIXED bri_values as an unsigned little-endian
 * integer (bits <= 64; element e of the slot for FSL). For tests and callers
 * that hash ints. */
uint64_t bri_values_get_uint(const bri_values *v, uint64_t slot, uint64_t elem);

#endif
