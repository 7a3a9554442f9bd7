/* packer.h: assembling new pack objects from ranges of existing ones, the
 * only place a compaction copies Packed payload bytes (the copy strategy
 * and repacks of low-utilization packs, docs/format/bri.md 6; Managed packs
 * repacked into new _blobs/ objects, docs/format/blob.md 8).
 *
 * Ranges are appended to the current pack, which rolls at 1 GiB as Lance's
 * do; the same source range asked twice is copied once. On an object store
 * a range is copied by the server (UploadPartCopy, Put Block From URL) when
 * it can be a part of its own; a part below S3's 5 MiB minimum can only be
 * the last one, and the store reads smaller ranges through brid
 * (bri_swriter_append_copy). In runs mode (an object store where no payload
 * should pass through brid) a new source pack starts a new output pack, and
 * the dead bytes between two live ranges of one source (rows deleted) are
 * copied along, up to 4 MiB: each output pack is then one run of its
 * source, copied by the server. No descriptor points at the dead bytes; a
 * later repack drops them. Without runs only the live ranges are copied
 * (what reclaiming dead space needs).
 *
 * Where each pack goes is the caller's: a callback names it (and records
 * it in the caller's outputs, so that a failed or crashed run removes it)
 * before the packer creates it. Failpoints: blobout.before_copy (before
 * each range), blobout.after_pack (a pack closed). */
#ifndef BRI_COMPACT_PACKER_H
#define BRI_COMPACT_PACKER_H

#include <stdbool.h>
#include <stdint.h>

#include "storage/store.h"
#include "util/error.h"

typedef struct bri_packer bri_packer;

/* Names the next pack: *path (malloc'd), created through the packer's
 * store once this returns 0, and *id, the caller's name for it, handed back
 * with each range placed in it. */
typedef int (*bri_packer_next_fn)(void *ctx, char **path, uint64_t *id, bri_error *err);

/* A packer writing packs through dst (borrowed; it must outlive the
 * packer); runs: runs mode (above). */
int bri_packer_new(bri_store *dst, bool runs, bri_packer_next_fn next, void *ctx, bri_packer **out,
                   bri_error *err);

/* Copies [pos, pos + size) of src (an object of store st) into the current
 * pack: *id names the pack, *at the range's position in it. *grown: the
 * bytes the packs grew by (the range, and dead bytes copied along; 0 for a
 * range copied before). */
int bri_packer_copy(bri_packer *p, bri_store *st, const char *src, uint64_t pos, uint64_t size, uint64_t *id,
                    uint64_t *at, uint64_t *grown, bri_error *err);

/* Closes the current pack (durable, as bri_swriter_finish makes it). */
int bri_packer_finish(bri_packer *p, bri_error *err);

/* Packs created so far. */
uint64_t bri_packer_packs(const bri_packer *p);

/* Frees p; a pack not finished is abandoned (its caller's outputs remove it). */
void bri_packer_free(bri_packer *p);

#endif
