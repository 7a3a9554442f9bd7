/* gen.h: synthetic Lance tables written by brid itself (brictl gen).
 *
 * Creates a table, or appends fragments to one, with deterministic values
 * (a function of seed and row id, so two runs with the same arguments write
 * the same values): id int64, label utf8, value int32 (nullable), score
 * double, flag bool, ts timestamp[us, UTC], tags list<int32> (nullable), and
 * with blob sizes a Blob v2 column whose values are placed Inline, Packed or
 * Dedicated by the same thresholds Lance 12 uses (64 KiB, 4 MiB; packs roll
 * at 1 GiB). Appending to an existing table fills its fields by name: it
 * can extend tables LanceDB created with the same column names (e.g. the
 * oracle's blobs table: id, label, blob). Each fragment is one Append
 * commit (the first one, for a new table, an Overwrite), exactly as
 * LanceDB's add() does. */
#ifndef BRI_GEN_H
#define BRI_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* One entry of the blob size cycle: a size in bytes, or a null blob. */
typedef struct bri_gen_blob {
  uint64_t size;
  bool null;
} bri_gen_blob;

typedef struct bri_gen_options {
  uint64_t fragments;        /* default 1 */
  uint64_t rows;             /* per fragment, default 1000 */
  uint64_t seed;             /* default 42 */
  int64_t start_id;          /* -1: after the largest id in the table */
  uint16_t minor;            /* new tables: storage 2.minor (default 2) */
  bool stable_row_ids;       /* new tables */
  bool retry;                /* on a lost version race, re-read and retry (default) */
  size_t n_blobs;            /* blob size cycle (new tables: adds the blob column) */
  const bri_gen_blob *blobs;
  uint64_t inline_threshold;    /* 65536 */
  uint64_t dedicated_threshold; /* 4194304 */
} bri_gen_options;

void bri_gen_options_default(bri_gen_options *o);

/* Parses "0,1K,100K,5M,null" into a blob size cycle (malloc'd). */
int bri_gen_parse_blobs(const char *s, bri_gen_blob **out, size_t *n, bri_error *err);

typedef struct bri_gen_report {
  uint64_t first_version, last_version;
  uint64_t rows, first_id;
  uint64_t data_bytes, sidecar_bytes, inline_bytes;
  uint64_t retries; /* version races lost and retried */
} bri_gen_report;

/* Writes the fragments. A lost version race without retry is BRI_ETAKEN
 * (nothing of that fragment stays behind). */
int bri_gen_run(const char *root, const bri_gen_options *o, bri_gen_report *rep, bri_error *err);

#endif
