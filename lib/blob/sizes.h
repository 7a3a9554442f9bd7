/* sizes.h: the sizes of sidecar files as the store reports them, asked
 * once per file (or directory), and the check that a value a new version
 * references lies within its sidecar.
 *
 * Every operation that reuses, links or copies a sidecar into a new version
 * (compaction under every strategy, materialize, deep clone) refuses a
 * damaged source before it commits: a sidecar that is missing, or shorter
 * than a value referenced in it (docs/reliability.md, "Damaged sources").
 * The sizes come from where they are cheapest: locally one stat per
 * sidecar; on object stores the listing of the sidecar's directory (one
 * LIST per directory, sizes included), not a HEAD per object. Compaction's
 * survey measures pack utilization through the same cache, so a pack is
 * asked for once per run whatever asks. Thread-safe (the survey's
 * read-ahead workers share it). */
#ifndef BRI_BLOB_SIZES_H
#define BRI_BLOB_SIZES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/store.h"
#include "util/error.h"

typedef struct bri_sidecar_sizes bri_sidecar_sizes;

int bri_sidecar_sizes_new(bri_sidecar_sizes **out, bri_error *err);
void bri_sidecar_sizes_free(bri_sidecar_sizes *s);

/* *size of the regular file at path, reached through st. Missing (or not a
 * regular file): BRI_ENOTFOUND, "<path>: no such sidecar". */
int bri_sidecar_sizes_get(bri_sidecar_sizes *s, bri_store *st, const char *path, uint64_t *size,
                          bri_error *err);

/* Object stores: lists everything below directory dir at once
 * (bri_store_list_tree, at most max_pages pages) and enters every file, so
 * that a sidecar there needs no listing of its own directory (a table's
 * data/: one listing for every fragment's sidecar directory). A tree too
 * large, a local store or a listing that fails primes nothing (0: each
 * directory is then listed when asked); BRI_ENOMEM otherwise. max_pages:
 * BRI_SIDECAR_PRIME_PAGES where a few directories may be asked (a
 * compaction's checks of its bins' sidecars), BRI_SIDECAR_PRIME_ALL where
 * every fragment's directory is (compact/fragsize.h: a page of names never
 * costs more than the listing of a directory of its own per fragment). */
#define BRI_SIDECAR_PRIME_PAGES 8
#define BRI_SIDECAR_PRIME_ALL SIZE_MAX
int bri_sidecar_sizes_prime(bri_sidecar_sizes *s, bri_store *st, const char *dir, size_t max_pages,
                            bri_error *err);
/* The same listing on a thread of its own, so that the caller's requests
 * go out meanwhile: a size asked below dir before it ends waits for it
 * (and a listing that fails then leaves each directory to be listed when
 * asked). Without a thread (or while another listing runs) it primes
 * before returning. st must outlive s: bri_sidecar_sizes_free joins the
 * thread. */
int bri_sidecar_sizes_prime_start(bri_sidecar_sizes *s, bri_store *st, const char *dir, size_t max_pages,
                                  bri_error *err);

/* *bytes: the total size of the files directly in directory dir (a data
 * file's sidecar directory: its packs and dedicated blobs), from the
 * listing of dir (one per directory, on every store), or of a primed tree
 * above it; 0 when dir is missing. The files are entered as by
 * bri_sidecar_sizes_get, so a later check of one asks nothing. */
int bri_sidecar_sizes_dir_bytes(bri_sidecar_sizes *s, bri_store *st, const char *dir, uint64_t *bytes,
                                bri_error *err);

/* After a copy or link of path moved `bytes`: BRI_ECORRUPT when the cache
 * knows path with another size (it changed between the check and the
 * copy), else 0 (also when path was never checked: nothing is asked). */
int bri_sidecar_sizes_copied(bri_sidecar_sizes *s, const char *path, uint64_t bytes, bri_error *err);

/* Where a value is referenced, for the refusal's message. */
typedef struct bri_value_ref {
  const char *table; /* the table's root */
  uint64_t fragment; /* the fragment id */
  uint64_t row;      /* the row offset within the fragment, or BRI_VALUE_ROW_UNKNOWN */
} bri_value_ref;
#define BRI_VALUE_ROW_UNKNOWN UINT64_MAX /* a value of a nested field: its row is not named */

/* Checks that the sidecar at path (reached through st) holds the value
 * (kind, position, size) referenced at where: kind 1 (Packed) the range
 * [position, position + size), kind 2 (Dedicated) exactly size bytes, read
 * from 0 (docs/format/blob.md 3); *actual (may be NULL): its
 * size. A refusal is BRI_ECORRUPT naming the table, fragment, row,
 * sidecar, the bytes expected and the bytes there (0: missing). */
int bri_sidecar_check(bri_sidecar_sizes *s, bri_store *st, const char *path, uint8_t kind,
                      uint64_t position, uint64_t size, const bri_value_ref *where,
                      uint64_t *actual, bri_error *err);

/* The same refusal for a size learnt otherwise (the bytes a copy or link
 * moved): 0 when actual fits the value, else BRI_ECORRUPT. */
int bri_sidecar_refuse(const char *path, uint8_t kind, uint64_t position, uint64_t size,
                       const bri_value_ref *where, uint64_t actual, bool missing, bri_error *err);

#endif
