/* deletion.h: Lance deletion files (docs/format/table.md section 8).
 *
 * A fragment's deletion file lists the physical row offsets (0-based, within
 * the fragment) that are deleted. Lance writes two formats:
 *   .arrow  (DeletionFile.file_type 0, ARROW_ARRAY): an Arrow IPC file with
 *           one record batch of one non-nullable uint32 column "row_id",
 *           buffers ZSTD-compressed, values unsorted;
 *   .bin    (file_type 1, BITMAP): a 32-bit Roaring bitmap in the portable
 *           serialization (cookies 12346 and 12347).
 * Both are parsed by hand with strict bounds checks (no Arrow or flatbuffers
 * library; Roaring images by roaring_strict.h, never by CRoaring), and every
 * reader returns the same thing:
 * a sorted array of unique offsets, each checked against the fragment's
 * physical row count and the count the manifest recorded.
 *
 * The writer produces .bin files only (portable Roaring, cookie 12346, array
 * and bitmap containers, as Lance 12 writes them), never overwriting a file. */
#ifndef BRI_DELETION_H
#define BRI_DELETION_H

#include <stddef.h>
#include <stdint.h>

#include "storage/store.h"
#include "util/error.h"

enum {
  BRI_DELETION_ARROW = 0,  /* DeletionFile.file_type ARROW_ARRAY, ".arrow" */
  BRI_DELETION_BITMAP = 1, /* DeletionFile.file_type BITMAP, ".bin" */
};

/* Largest deletion file brid reads. A bitmap over 2^32 rows is ~512 MiB. */
#define BRI_DELETION_MAX_BYTES ((size_t)1 << 30)

/* Parses a deletion file image. path is used in messages only.
 *   num_deleted_rows: DeletionFile.num_deleted_rows from the manifest; the
 *     file must hold exactly that many offsets. 0 means "not recorded" (Lance
 *     treats 0 as unknown) and skips the check.
 *   physical_rows: DataFragment.physical_rows; every offset must be below it.
 * On success *offsets is a malloc'd array of *count strictly increasing
 * offsets (NULL when *count is 0); the caller frees it. Duplicates, offsets
 * >= physical_rows, a count that disagrees with num_deleted_rows and any
 * malformed byte (including an Arrow schema other than Lance's
 * {row_id: uint32 not null}) are BRI_ECORRUPT naming the file; valid Arrow
 * that Lance never writes (LZ4 bodies, metadata versions before V4) is
 * BRI_EUNSUPPORTED. */
int bri_deletion_parse(const uint8_t *buf, size_t len, const char *path, int file_type,
                       uint64_t num_deleted_rows, uint64_t physical_rows, uint32_t **offsets,
                       size_t *count, bri_error *err);

/* Reads and parses the deletion file at path (same contract). */
int bri_deletion_read(bri_store *st, const char *path, int file_type, uint64_t num_deleted_rows,
                      uint64_t physical_rows, uint32_t **offsets, size_t *count, bri_error *err);

/* Serializes n strictly increasing offsets (n >= 1) as a portable Roaring
 * bitmap with cookie 12346 (array containers up to 4096 values, bitmap
 * containers above). *out is malloc'd. Unsorted or duplicate input: BRI_EINVAL. */
int bri_deletion_encode_bin(const uint32_t *sorted_offsets, size_t n, uint8_t **out,
                            size_t *out_len, bri_error *err);

/* Writes bri_deletion_encode_bin's bytes to a new file at path in store st
 * (put-if-absent: an existing file is BRI_ETAKEN and is left untouched),
 * durably; any failure leaves no file. */
int bri_deletion_write_bin(bri_store *st, const char *path, const uint32_t *sorted_offsets,
                           size_t n, bri_error *err);

/* "{fragment_id}-{read_version}-{id}.arrow|bin" (docs/format/table.md 5.5), malloc'd. */
char *bri_deletion_file_name(uint64_t fragment_id, uint64_t read_version, uint64_t id,
                             int file_type);

#endif
