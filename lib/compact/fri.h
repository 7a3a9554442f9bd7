/* fri.h: how a compaction keeps every index of a table answering
 * (docs/format/table.md section 11).
 *
 * With stable row ids an index stores row ids, which survive a rewrite, so
 * only its fragment bitmap changes: Lance's rule swaps a group's old ids for
 * the new ones when the index covered the whole group (a partly covered
 * group is an error, which the planner prevents), except for the indices
 * whose results are row addresses (zone maps, bloom filters): Lance drops the
 * rewritten fragments from their coverage and scans them.
 *
 * Without stable row ids index entries are row addresses. brid records the
 * old->new address map as Lance does when it defers index remapping: one new
 * version of the Fragment Reuse Index (lance/table/frag_reuse.h) per
 * compaction commit, written whenever a rewritten fragment is covered by an
 * index (or by an earlier FRI version); index files and bitmaps stay as they
 * are, and Lance applies the map when it loads them. That holds only for index
 * types Lance remaps through the FRI and keeps remapping right when it
 * compacts the table itself later, checked against LanceDB 0.39 (Lance 12),
 * 0.40 (Lance 13) and pylance 14: BITMAP, LABEL_LIST and the vector indices
 * (IVF_FLAT, IVF_PQ, IVF_SQ, IVF_HNSW_*). BTREE and INVERTED (FTS) are read
 * right through the FRI by every Lance, but Lance 13 and 14 lose every row
 * of them in their own next compaction (fri.c). The fragments an index of any
 * other type covers are held back, as Lance's own planner holds back what it
 * cannot remap. Versions every index has caught up with are trimmed by
 * Lance's rule when brid appends one.
 *
 * One exception, found with LanceDB: an IVF_HNSW_* index keeps its graph
 * beside its vector storage, and Lance drops the rows the FRI maps to
 * "deleted" from the storage only, so queries then fail ("HNSW graph has N
 * nodes but its vector storage has M rows"). Fragments with deleted rows that
 * an HNSW index covers are therefore held back (Lance itself remaps HNSW
 * indices by rewriting them, which brid does not do). */
#ifndef BRI_FRI_H
#define BRI_FRI_H

#include <jansson.h>
#include <roaring/roaring.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compact/rewrite.h"
#include "lance/table/frag_reuse.h"
#include "lance/table/table.h"
#include "util/error.h"

typedef enum bri_carry {
  BRI_CARRY_ROW_IDS, /* stable row ids: the bitmap follows the rows */
  BRI_CARRY_DROPPED, /* stable row ids, address results: rewritten fragments leave its coverage */
  BRI_CARRY_FRI,     /* row addresses, remapped through the fragment reuse index */
  BRI_CARRY_HELD,    /* row addresses, type not carried: its fragments are not compacted */
} bri_carry;

typedef struct bri_index_view {
  const Lance__Table__IndexMetadata *x; /* into the manifest's index section */
  const char *type;                     /* from the details type ("BTree", "Vector", ...) */
  roaring_bitmap_t *cover;              /* coverage as Lance reads it (FRI applied);
                                           NULL: no bitmap, taken to cover everything */
  bri_carry carry;
  bool hnsw;                            /* an IVF_HNSW_* vector index (see below) */
} bri_index_view;

typedef struct bri_index_views {
  bool stable;                            /* the table has stable row ids */
  size_t n;
  bri_index_view *v;                      /* the user indices (system indices left out) */
  const Lance__Table__IndexMetadata *fri_entry; /* the FRI entry, or NULL */
  bri_fri_content *fri;                   /* its details */
  roaring_bitmap_t *fri_cover;            /* the FRI entry's own bitmap (empty without one) */
} bri_index_views;

/* The indices of manifest m as compaction sees them. A stable-row-id table
 * with an FRI (Lance never writes one) and an FRI brid cannot read are
 * errors naming the manifest. */
int bri_index_views_load(const bri_table *t, const bri_manifest *m, bri_index_views **out,
                         bri_error *err);
void bri_index_views_free(bri_index_views *iv);

/* True when index view v covers fragment id. */
bool bri_index_view_covers(const bri_index_view *v, uint64_t id);
/* True when v keeps fragment f from being compacted: v covers it and brid
 * cannot carry v (type not carried, or HNSW over deleted rows). */
bool bri_index_view_holds(const bri_index_view *v, const Lance__Table__DataFragment *f);

/* [{name, type, fields, carried: "row_ids"|"dropped"|"fragment_reuse_index"|"held_back",
 *   fragments: covered fragment count}] */
json_t *bri_index_views_to_json(const bri_index_views *iv, const bri_manifest *m);

/* What the manifest of a rewrite carries instead of the latest index
 * section: bitmaps recalculated (stable row ids) or a new FRI version. */
typedef struct bri_index_update {
  Lance__Table__IndexSection section; /* shallow: entries of the latest manifest or ours */
  Lance__Table__IndexMetadata **list;
  Lance__Table__IndexMetadata *copies; /* entries with a new bitmap (shallow copies) */
  uint8_t **bitmaps;                   /* their bitmap bytes */
  size_t n_copies;
  Lance__Table__IndexMetadata *fri;    /* the new FRI entry */
  bri_fri_content content;             /* its versions: kept ones (borrowed) + ours */
  bri_fri_version *version;            /* ours */
  char *external;                      /* details file this attempt wrote, if any */
  const bri_table *table;
  bri_index_views *views;
  json_t *report;                      /* {fri: {...}} or null */
} bri_index_update;

/* Builds the index section for rewriting rw's groups (planned on manifest
 * base, the read version) on top of manifest latest, whose version becomes
 * the FRI version's dataset_version. The planner grouped fragments by
 * coverage; coverage that changed since (a group now partly covered, or
 * covered by an index brid holds back) is BRI_ECONFLICT, so the caller plans
 * again. Groups going into the FRI must carry their changed row addresses
 * (bri_rewrite_group.changed_row_addrs); the old fragments' digests are
 * taken as read (base). */
int bri_index_update_build(const bri_table *t, const bri_manifest *base, const bri_manifest *latest,
                           const bri_rewrite *rw, bri_index_update **out, bri_error *err);
/* After a failed commit: removes the external details file, if any. */
void bri_index_update_abort(bri_index_update *u);
void bri_index_update_free(bri_index_update *u);

#endif
