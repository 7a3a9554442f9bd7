/* frag_reuse.h: Lance's Fragment Reuse Index (FRI), the record of deferred
 * index remaps (docs/format/table.md section 11).
 *
 * Without stable row ids every index entry is a row address
 * (fragment_id << 32 | offset), which compaction changes. Instead of
 * rewriting each index, a compaction may append one "version" to the FRI: a
 * system index (IndexSection entry named "__lance_frag_reuse", no files of its
 * own unless its details outgrow the manifest) whose details list, per
 * rewrite group, the old fragments, the new fragments and the old row
 * addresses that survived (a 64-bit RoaringTreemap). Lance rebuilds the
 * old->new map from that at index load time: surviving rows in old-fragment
 * order and ascending offset, laid end to end over the new fragments; an old
 * address that did not survive is deleted; anything else passes through.
 * Lance also rewrites every index's fragment bitmap through the FRI when it
 * loads the index list (bri_fri_remap_bitmap).
 *
 * This module owns the format: the RoaringTreemap encoding, reading and
 * strictly validating existing FRI details (inline or in the external
 * details.binpb), and building the new FRI entry. Which indices may rely on
 * it is compaction's business (compact/fri.h). */
#ifndef BRI_FRAG_REUSE_H
#define BRI_FRAG_REUSE_H

#include <roaring/roaring.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lance/table/roaring_strict.h"
#include "lance/table/table.h"
#include "table.pb-c.h"
#include "util/error.h"

#define BRI_FRI_NAME "__lance_frag_reuse"
#define BRI_FRI_TYPE_URL "/lance.table.FragmentReuseIndexDetails"
#define BRI_FRI_DETAILS_FILE "details.binpb"
/* Lance stores the details outside the manifest above this many bytes. */
#define BRI_FRI_INLINE_MAX 204800
/* Largest external details file brid reads. */
#define BRI_FRI_MAX_BYTES ((size_t)1 << 30)

typedef Lance__Table__FragmentReuseIndexDetails__InlineContent bri_fri_content;
typedef Lance__Table__FragmentReuseIndexDetails__Version bri_fri_version;
typedef Lance__Table__FragmentReuseIndexDetails__Group bri_fri_group;
typedef Lance__Table__FragmentReuseIndexDetails__FragmentDigest bri_fri_digest;

/* ------------------------------------------------------------ RoaringTreemap */

/* Serializes a 64-bit set the way Rust's roaring RoaringTreemap does:
 * [u64 LE number of parts] then per part, ascending high key,
 * [u32 LE high][portable 32-bit Roaring]. parts must be strictly ascending by
 * high; empty parts are left out (RoaringTreemap never stores one). Containers
 * are run-optimized. *out is malloc'd. */
int bri_treemap_encode(const bri_treemap_part *parts, size_t n, uint8_t **out, size_t *len,
                       bri_error *err);

/* Reading one: bri_treemap_decode (roaring_strict.h). */

/* ------------------------------------------------------------------- details */

/* True when x is the FRI entry (by name; Lance also checks the details'
 * type, which bri_fri_load enforces). */
bool bri_fri_is(const Lance__Table__IndexMetadata *x);

/* The FRI entry of an index section, or NULL. */
const Lance__Table__IndexMetadata *bri_fri_find(const Lance__Table__IndexSection *sec);

/* Loads and validates the details of FRI entry x of manifest m (table t; the
 * external form is read from _indices/<uuid>/<path>). Checks every version
 * and group as Lance does when it builds its remap: index_version 0 (later
 * versions are a newer, tagged format: BRI_EUNSUPPORTED), details of the
 * FRI type, each group's treemap readable, its high keys among the group's
 * old fragments, offsets below their physical_rows, as many surviving rows
 * as the new fragments hold, no old fragment twice in one version, ids
 * below 2^32. Failures are BRI_ECORRUPT naming the manifest (or external
 * file), the version and the group. Free *out with bri_fri_content_free. */
int bri_fri_load(const bri_table *t, const bri_manifest *m, const Lance__Table__IndexMetadata *x,
                 bri_fri_content **out, bri_error *err);
void bri_fri_content_free(bri_fri_content *c);

/* The checks of bri_fri_load on content in memory; what names it in messages. */
int bri_fri_check(const bri_fri_content *c, const char *what, bri_error *err);

/* Lance's remap of an index's fragment bitmap through the FRI (applied every
 * time Lance loads the index list): per group of every version in order, if
 * the bitmap holds all old fragments they are replaced by the new ones; if it
 * holds only some, those are removed and nothing is added (Lance's
 * "straddling group" repair: those rows fall back to a scan). */
void bri_fri_remap_bitmap(const bri_fri_content *c, roaring_bitmap_t *b);

/* Lance's trim rule (cleanup_frag_reuse_index): a version may be dropped when
 * every non-system index of sec was built at or after the version's
 * dataset_version and covers none of its old fragments (an index without a
 * bitmap counts as caught up, as in Lance). */
bool bri_fri_version_caught_up(const bri_fri_version *v, const Lance__Table__IndexSection *sec);

/* Builds a new FRI entry holding the versions of c (not copied: *out refers
 * to c's bytes, which must outlive it; free *out with bri_fri_entry_free).
 * Lance's shape: fresh uuid, name, no fields, dataset_version, fragment
 * bitmap new_frags, details Any{BRI_FRI_TYPE_URL, inline content}, the
 * previous entry's index_version (0 without one), created_at now (ms). When
 * the content exceeds BRI_FRI_INLINE_MAX it goes to
 * {root}/_indices/<uuid>/details.binpb instead (a new object, durable), whose
 * path is returned in *external (malloc'd; NULL when inline) for the caller
 * to remove should its commit fail. */
int bri_fri_entry_build(const bri_table *t, const bri_fri_content *c,
                        const Lance__Table__IndexMetadata *previous, uint64_t dataset_version,
                        const roaring_bitmap_t *new_frags, Lance__Table__IndexMetadata **out,
                        char **external, bri_error *err);
void bri_fri_entry_free(Lance__Table__IndexMetadata *x);
/* Removes an external details file bri_fri_entry_build wrote, and its
 * directory (after a commit that did not happen). */
void bri_fri_external_remove(const bri_table *t, const char *file);

#endif
