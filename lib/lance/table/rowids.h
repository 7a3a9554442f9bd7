/* rowids.h: Lance's compressed u64 sequences (rowids.proto).
 *
 * RowIdSequence holds stable row ids of a fragment, and brid reuses the same
 * messages in the Blob Reuse Index for its id lists. Decoding is bounded:
 * the caller says how many values it is prepared to accept, and segments are
 * counted before anything is allocated, so that a hostile Range [0, 2^64)
 * costs nothing. */
#ifndef BRI_ROWIDS_H
#define BRI_ROWIDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rowids.pb-c.h"
#include "util/error.h"

/* Number of values in a sequence; error when a segment is malformed
 * (start > end, bitmap shorter than its range, holes unsorted or outside). */
int bri_u64seq_count(const Lance__Table__RowIdSequence *seq, uint64_t *count, bri_error *err);

/* Materializes a sequence (malloc'd array) if it has at most max values. */
int bri_u64seq_decode(const Lance__Table__RowIdSequence *seq, uint64_t max, uint64_t **vals,
                      size_t *n, bri_error *err);

/* Largest value of a sequence without materializing its ranges; *any is
 * false for an empty sequence. */
int bri_u64seq_max(const Lance__Table__RowIdSequence *seq, uint64_t *max, bool *any, bri_error *err);

/* Count and materialize one EncodedU64Array. */
int bri_u64array_count(const Lance__Table__EncodedU64Array *a, uint64_t *count, bri_error *err);
int bri_u64array_decode(const Lance__Table__EncodedU64Array *a, uint64_t max, uint64_t **vals,
                        size_t *n, bri_error *err);

/* Unpacks a serialized RowIdSequence (DataFragment.inline_row_ids). */
int bri_u64seq_unpack(const uint8_t *buf, size_t len, Lance__Table__RowIdSequence **out,
                      bri_error *err);

/* Serializes values as a RowIdSequence: each run of consecutive values
 * becomes a Range segment; when runs are short on average the values go
 * into one array segment instead (sorted_array when increasing). */
int bri_u64seq_pack(const uint64_t *v, size_t n, uint8_t **out, size_t *len, bri_error *err);

/* Expands a serialized RowDatasetVersionSequence into one version per row;
 * the runs must cover exactly n_rows rows. */
int bri_versions_unpack(const uint8_t *buf, size_t len, uint64_t n_rows, uint64_t **versions,
                        bri_error *err);

/* Checks a serialized RowDatasetVersionSequence covers exactly n_rows rows
 * without expanding it; *max_version is the highest version it names. */
int bri_versions_check(const uint8_t *buf, size_t len, uint64_t n_rows, uint64_t *max_version,
                       bri_error *err);

/* Serializes per-row versions as runs of equal versions, each spanning a
 * Range of row positions. */
int bri_versions_pack(const uint64_t *v, size_t n, uint8_t **out, size_t *len, bri_error *err);

#endif
