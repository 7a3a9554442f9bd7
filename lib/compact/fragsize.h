/* fragsize.h: how big a fragment is to a compaction, for the planner's size
 * rule (plan.h).
 *
 * What rewriting a fragment costs is what it writes: its data files always,
 * and, when the strategy copies blob payload (copy, or auto where the store
 * has no hard links), the Packed and Dedicated payload too (Inline payload
 * is inside the data file). bri and link leave payload where it is, so a
 * fragment's size is its data bytes there; under copy it is its data bytes
 * plus its payload bytes. Delta's OPTIMIZE (maxFileSize) and Iceberg's
 * rewrite_data_files (target-file-size-bytes) plan by the bytes a rewrite
 * moves in the same way.
 *
 * The payload is measured from the store's listing of each data file's
 * sidecar directory ({stem}/, where Lance puts the file's packs and
 * dedicated blobs), through the sidecar size cache (blob/sizes.h, which the
 * compaction's damage checks then reuse: nothing is asked twice), scaled
 * by the fragment's live share (copy moves only what live rows reference).
 * On an object store the caller primes the cache with the listing of the
 * table's whole data/ first (BRI_SIDECAR_PRIME_ALL: a page of 1,000 names
 * costs no more than one fragment's directory).
 * Not from the descriptors: reading them costs a read of every fragment,
 * while on an object store one listing of data/ serves the whole table. A
 * data file that carries a BRI has its payload in other files' directories
 * and counts only what its own holds (its repacked packs): a BRI table
 * compacts with bri, where payload does not count. */
#ifndef BRI_FRAGSIZE_H
#define BRI_FRAGSIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "blob/sizes.h"
#include "compact/blobout.h"
#include "compact/plan.h"
#include "lance/table/table.h"
#include "util/error.h"

/* Whether a compaction of m (a version of t) with strategy s, for readers
 * min_reader declares (bri_compact_request.min_reader), counts blob payload
 * in a fragment's size: copy; auto where it resolves to copy (no BRI in m,
 * no switch to Managed blobs, a store without hard links); never on a
 * Managed table. */
bool bri_compact_counts_payload(bri_strategy s, unsigned min_reader, const bri_table *t,
                                const Lance__Table__Manifest *m);

/* Fills payload[i] (one per fragment of m, in manifest order) with the
 * payload bytes a copy of fragment i would write, as above; 0 for a
 * fragment whose data bytes or rows alone reach o's targets (its size
 * does not matter to the planner then). sizes: the run's cache. A listing
 * that fails is an error naming the directory. */
int bri_fragment_payloads(const bri_table *t, const bri_manifest *m, const bri_compact_options *o,
                          bri_sidecar_sizes *sizes, uint64_t *payload, bri_error *err);

/* The data bytes of f: its data files' sizes as the manifest records them. */
uint64_t bri_fragment_data_bytes(const Lance__Table__DataFragment *f);

#endif
