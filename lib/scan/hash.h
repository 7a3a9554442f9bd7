/* hash.h: the canonical per-value encoding and per-column SHA-256 that brid
 * and the LanceDB oracle (tests/interop/lance_read.mjs, which is
 * the first oracle's read_table.mjs plus map/null types) both compute, so
 * that "brid read the same table as Lance" is one string comparison.
 *
 * frame(null) = 0x00; frame(v) = 0x01 + u64le(len(v)) + v, where v is, by
 * Arrow type: integers, dates, times, timestamps and durations: the decimal
 * string of the stored integer; floats: the IEEE bytes (2/4/8, LE); bool: one
 * byte 0/1; decimals: the stored LE bytes; strings and binaries: the raw
 * bytes; list / large list / fixed-size list / map: the framed children
 * concatenated; struct: the framed children in field order; dictionary: the
 * value it selects; Arrow null: null. Blob v2 fields (a "+s" descriptor
 * struct whose ArrowSchema metadata says ARROW:extension:name=lance.blob.v2):
 * at top level or reached through structs only, the payload bytes; inside a
 * list (at any depth), kind (u8) + size (u64 LE). A column's hash is SHA-256
 * over frame(value) of every row, in the order the rows are added.
 *
 * Design: the ArrowSchema is compiled once into a small type tree; rows are
 * then framed straight into a 256 KiB buffer in front of the digest, with no
 * per-value allocation. A frame needs its length before its bytes, so a
 * nested value is measured first and emitted second; blob payloads are
 * measured from their descriptors and streamed through a caller callback, so
 * a 1 GiB payload is never held in memory. */
#ifndef BRI_HASH_H
#define BRI_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blob/resolve.h"
#include "util/arrow_c.h"
#include "util/error.h"

/* Where payload bytes come from. path is the blob field's dotted path from
 * the column ("blob", "st.b"), so a caller can pick the data file. */
typedef struct bri_blob_source {
  /* Payload length of d. */
  int (*length)(void *ctx, const char *path, const bri_blob_desc *d, uint64_t *len,
                bri_error *err);
  /* Feeds exactly that many bytes to fn(fn_ctx, ...). */
  int (*stream)(void *ctx, const char *path, const bri_blob_desc *d, bri_blob_chunk_fn fn,
                void *fn_ctx, bri_error *err);
  void *ctx;
} bri_blob_source;

typedef struct bri_column_hasher bri_column_hasher;

/* What a column hash reports (the oracle's JSON members). */
typedef struct bri_column_hash {
  char sha256[65];        /* lowercase hex, or "skipped" (top-level blob, no bytes) */
  uint64_t rows, nulls;   /* nulls: rows whose top-level value is null */
  bool blob;              /* top-level Blob v2 column */
  /* top-level Blob v2 only: descriptor kinds in order of first appearance
   * (kind -1 = null), with counts, and the sum of descriptor sizes */
  size_t n_kinds;
  int kinds[257];
  uint64_t kind_counts[257];
  uint64_t payload_bytes;
  /* columns with a Blob v2 field below the top: the struct-only paths whose
   * payloads were hashed (borrowed from the hasher) */
  bool nested_blobs;
  size_t n_nested_paths;
  const char *const *nested_paths;
} bri_column_hash;

/* Compiles a column's type (schema->name is the column name). blob_bytes
 * false: top-level blob columns are not hashed ("skipped") and blobs under
 * structs are hashed as kind+size, like the oracle's --no-blob-bytes.
 * Unsupported Arrow types (intervals, unions, views): BRI_EUNSUPPORTED. */
int bri_column_hasher_new(const struct ArrowSchema *schema, bool blob_bytes,
                          bri_column_hasher **out, bri_error *err);
void bri_column_hasher_free(bri_column_hasher *h);

/* BRI_EINVAL unless schema has the same type tree as the one compiled (used
 * when a column arrives in several arrays, e.g. one per fragment). */
int bri_column_hasher_check_schema(const bri_column_hasher *h, const struct ArrowSchema *schema,
                                   bri_error *err);

/* Checks the structure of a against the compiled schema (buffer and child
 * counts, list offsets inside their children) and remembers it as checked.
 * add/add_range do this by themselves the first time they see an array;
 * an array counts as checked (by address) for the hasher's lifetime, so an
 * array must stay alive while the hasher is in use. */
int bri_column_hasher_check_array(bri_column_hasher *h, const struct ArrowArray *a,
                                  bri_error *err);

/* Frames row `row` of array a into the hash. a must follow the compiled
 * schema. src may be NULL when the column has no blob whose payload is
 * hashed. */
int bri_column_hasher_add(bri_column_hasher *h, const struct ArrowArray *a, int64_t row,
                          const bri_blob_source *src, bri_error *err);
/* Rows [start, start+count) of a. */
int bri_column_hasher_add_range(bri_column_hasher *h, const struct ArrowArray *a, int64_t start,
                                int64_t count, const bri_blob_source *src, bri_error *err);

/* Finalizes the digest and fills out (valid until the hasher is freed).
 * Adding after finishing is BRI_EINVAL. */
int bri_column_hasher_finish(bri_column_hasher *h, bri_column_hash *out, bri_error *err);

#endif
