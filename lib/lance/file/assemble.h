/* assemble.h: rebuilding nested Arrow structure from the repetition and
 * definition levels of one leaf column (docs/format/file.md section 2).
 *
 * Owns the step between decoded pages (lance/encoding/page.h: levels, layers
 * and flat value slots) and arrays: for every node on the path from a
 * top-level field down to the leaf column (structs, lists, the leaf) it
 * builds that node's Arrow validity bitmap and, for lists, its offsets, and
 * it copies the value slots of the rows that are kept. Pages are fed one at a
 * time and concatenated; a row filter (a physical row range and a sorted
 * list of deleted rows) drops whole top-level rows while levels are walked,
 * so deleted rows never reach the output and nothing is compacted afterwards.
 *
 * Design choice: one pass per leaf column, independent of the other leaves.
 * Each node on the path gets its own builder in every pass; the caller
 * (reader.c) keeps the first pass's struct/list builders and checks that the
 * passes of sibling leaves rebuild identical ones (a struct's validity
 * appears in the def levels of each of its children). Value slots are copied
 * in runs of consecutive kept slots (one memcpy per run), never per value. */
#ifndef BRI_ASSEMBLE_H
#define BRI_ASSEMBLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lance/encoding/page.h"
#include "lance/file/arrow_build.h"
#include "lance/file/datafile.h"
#include "util/error.h"

/* Node kinds on a leaf's path. A map is a LIST (of its entries struct). */
enum { BRI_ASM_STRUCT = 1, BRI_ASM_LIST = 2, BRI_ASM_LEAF = 3 };

/* Value slots of a leaf, accumulated over pages: the shape of bri_values.
 *   FIXED:    data = n * elems elements of `bits` bits (bits == 1: `bitdata`);
 *             fslv[k] = validity of the items of FSL layer k (lazy bitmaps).
 *   VARIABLE: offsets = n + 1 int64 entries into data.
 *   STRUCT:   children, n slots each.
 * A legacy blob leaf (BRI_LEAF_LEGACY_BLOB) is VARIABLE here: its payloads
 * are read from the data file while slots are copied. */
typedef struct bri_vbuild {
  bri_leaf_kind kind;
  bool legacy_blob;
  uint32_t bits;
  uint32_t n_dims;
  uint32_t dims[BRI_MAX_FSL_DEPTH];
  uint64_t elems; /* elements per slot (product of dims) */
  uint64_t n;     /* slots */
  bri_growbuf data;
  bri_bitbuf bitdata;
  bri_bitbuf fslv[BRI_MAX_FSL_DEPTH];
  bri_growbuf offsets;
  size_t n_children;
  struct bri_vbuild *children;
} bri_vbuild;

int bri_vbuild_init(bri_vbuild *vb, const bri_leaf_type *t, bri_error *err);
void bri_vbuild_dispose(bri_vbuild *vb);
/* Appends n slots of zeros / empty values (fields no data file stores). */
int bri_vbuild_append_zero(bri_vbuild *vb, uint64_t n, bri_error *err);

/* The builder of one node of the path. */
typedef struct bri_asm_node {
  int kind;            /* BRI_ASM_* */
  uint64_t length;     /* entries */
  bri_bitbuf validity; /* lazy: stays unallocated without nulls */
  bri_growbuf offsets; /* LIST: int64 start of each entry; after finish length + 1 */
} bri_asm_node;

typedef struct bri_asm {
  size_t depth; /* nodes on the path, >= 1; node depth-1 is the leaf */
  bri_asm_node node[BRI_MAX_LAYERS];
  bri_vbuild values;
  /* Row filter: physical rows [row_lo, row_hi) minus del[0..n_del). */
  uint64_t row_lo, row_hi;
  const uint32_t *del;
  size_t n_del;
  size_t del_pos;
  uint64_t row; /* physical rows consumed so far */
  /* A packed-struct leaf whose pages may carry one extra innermost
   * ALL_VALID_ITEM layer (Blob v2 descriptors written by Lance 8). */
  bool extra_inner_ok;
  bri_datafile *df; /* legacy blob payloads are read from here */
} bri_asm;

/* kinds[0..depth): the path from the top-level field (0) to the leaf. */
int bri_asm_init(bri_asm *a, const int *kinds, size_t depth, const bri_leaf_type *leaf,
                 bri_error *err);
/* Consumes one decoded page; `where` names it in messages. */
int bri_asm_page(bri_asm *a, const bri_leaf_page *pg, const char *where, bri_error *err);
/* Skips n rows that are not wanted (a page outside the row range). */
void bri_asm_skip_rows(bri_asm *a, uint64_t n);
/* Closes the list offsets (length + 1 entries each). */
int bri_asm_finish(bri_asm *a, bri_error *err);
void bri_asm_dispose(bri_asm *a);

#endif
