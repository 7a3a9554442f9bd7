/* manifest.h: reading one manifest file (one table version).
 *
 * A manifest file is [u32 len][IndexSection]? [u32 len][Transaction]?
 * [u32 len][Manifest] then a 16-byte tail [u64 manifest_pos][u16 0][u16 2]"LANC"
 * (docs/format/table.md section 2). bri_manifest_read checks the framing, decodes the
 * three messages, and validates what brid relies on (feature flags, paths,
 * base ids, fragment ids, the Blob Reuse Index). Any failure names the file,
 * the byte offset and what was expected, and nothing is returned. */
#ifndef BRI_MANIFEST_H
#define BRI_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/store.h"
#include "table.pb-c.h"
#include "transaction.pb-c.h"
#include "util/error.h"

typedef struct bri_fragment_ref {
  uint64_t id;
  const Lance__Table__DataFragment *f;
} bri_fragment_ref;

typedef struct bri_manifest {
  char *path;
  uint64_t file_size;
  uint64_t manifest_pos;                  /* offset of the Manifest's u32 length */
  Lance__Table__Manifest *pb;
  Lance__Table__Transaction *txn;         /* embedded transaction, or NULL */
  Lance__Table__IndexSection *indices;    /* index section, or NULL */
  bri_fragment_ref *by_id;                /* pb's fragments sorted by id (bri_manifest_fragment) */
  size_t n_by_id;
  unsigned opts;                          /* BRI_MANIFEST_* it was read with */
  char unsupported[1024];                 /* with ANY_FEATURES: why brid will not act on it, or "" */
} bri_manifest;

/* Read a version whose features brid does not implement (feature flags,
 * a fragment tree) instead of refusing it, recording why in unsupported:
 * for reports only (inspect), never for an operation. */
#define BRI_MANIFEST_ANY_FEATURES 1u

/* Parses a manifest held in memory; path is used in messages only. */
int bri_manifest_parse(const uint8_t *buf, size_t len, const char *path, bri_manifest **out,
                       bri_error *err);

/* The same, with BRI_MANIFEST_* options. */
int bri_manifest_parse_opts(const uint8_t *buf, size_t len, const char *path, unsigned opts,
                            bri_manifest **out, bri_error *err);

/* Reads and parses the manifest file at path. */
/* st NULL: path is a local file outside any table (storage/store.h). */
int bri_manifest_read(bri_store *st, const char *path, bri_manifest **out, bri_error *err);
int bri_manifest_read_opts(bri_store *st, const char *path, unsigned opts, bri_manifest **out,
                           bri_error *err);

void bri_manifest_free(bri_manifest *m);

/* The fragment of m with this id, or NULL: a binary search of the index
 * made when m was read (tables have thousands of fragments), else a scan.
 * The DataFragment messages must be the ones read (the fragments array may
 * be swapped for a while, its elements not freed). */
const Lance__Table__DataFragment *bri_manifest_fragment(const bri_manifest *m, uint64_t id);

/* Lays out a manifest file the way Lance does: [u32 len][IndexSection]
 * (if idx, at offset 0), [u32 len][Transaction] (if txn), [u32 len][Manifest],
 * tail. Sets m's index_section and both transaction pointers (fields 21 and
 * 23, for every Lance) to the offsets it used, clears version_aux_data and
 * drops m's unknown fields (fields.h: none may be carried into a new file,
 * where it could be a stale offset). The result is malloc'd. */
int bri_manifest_serialize(Lance__Table__Manifest *m, const Lance__Table__Transaction *txn,
                           const Lance__Table__IndexSection *idx, uint8_t **out, size_t *len,
                           bri_error *err);

/* The offset of the inline transaction: field 23 (Lance 14), else field 21
 * (Lance 12 and 13), as Lance 14 reads it. false when neither is set. */
bool bri_manifest_transaction_offset(const Lance__Table__Manifest *m, uint64_t *off);

/* Schema metadata key of the Managed blobs opt-in (Lance 14): "true" turns
 * the table's blob columns to Managed descriptors (kinds 4 and 5) and sets
 * flag managed_blobs in both words, for good. */
#define BRI_MANAGED_BLOBS_KEY "lance.blob.managed"

/* True when m's blobs are Managed: the opt-in says "true", or the (sticky)
 * flag is set. */
bool bri_manifest_blobs_managed(const Lance__Table__Manifest *m);

/* Largest manifest file brid reads (Lance manifests are KiB to a few MiB). */
#define BRI_MANIFEST_MAX_BYTES ((size_t)1 << 30)

/* Visible rows of a fragment: physical_rows minus deleted rows. */
uint64_t bri_fragment_live_rows(const Lance__Table__DataFragment *f);

/* The stable row ids of fragment f, one per physical row (its row id
 * sequence; row i of the sequence is physical offset i), malloc'd.
 * BRI_EUNSUPPORTED when the fragment keeps them in an external file or has
 * none; BRI_ECORRUPT when their number is not physical_rows. root names the
 * table in messages. */
int bri_fragment_row_ids(const char *root, const Lance__Table__DataFragment *f, uint64_t **ids, size_t *n,
                         bri_error *err);

#endif
