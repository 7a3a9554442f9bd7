/* plan.h: choosing which fragments a compaction merges.
 *
 * The rules are Lance's (plan_compaction in Lance's optimize.rs), so that
 * brid compacts what Lance would: walk fragments in manifest order; a
 * fragment is a candidate when its deleted share exceeds the threshold
 * (it compacts even alone) or when it has fewer physical rows than the target
 * (it compacts only with neighbours); consecutive candidates covered by the
 * same set of indices (as Lance reads them, through the fragment reuse index;
 * compact/fri.h) form a bin; a bin of one neighbour-only fragment is
 * dropped; bins are split so each holds about the target row count.
 *
 * brid adds a size rule, by bytes, as Delta's OPTIMIZE (maxFileSize) and
 * Iceberg's rewrite_data_files (target-file-size-bytes) plan: a fragment's
 * size is what rewriting it writes (compact/fragsize.h: its data bytes,
 * plus under copy the payload it would copy). A fragment at or above
 * target_fragment_bytes is no neighbour candidate ("at target size"); only
 * its deletions (or a low pack) make it one. Below the target, fragments
 * merge among themselves up to it, size-tiered: walking a run of
 * candidates from its newest end, an older fragment joins the newer ones
 * only when it is at most half again as large as they are together, or
 * smaller than the tier floor (target / BRI_PLAN_TIER_FLOOR_DIV); a larger
 * one is held back
 * ("larger than the newer fragments") and starts the next group. Each byte
 * is then rewritten about log2(target / floor) times on its way to the
 * target, instead of once per compaction (a growing fragment that every
 * small append re-merges: the bytes copied grow with the square of the
 * table, and bench/amplification.sh measures what the rule saves). Bins are
 * split at the target rows or the target bytes, whichever comes first.
 *
 * Also brid's: fragments flagged by the caller because they reference a
 * low-utilization blob pack become candidates (docs/format/bri.md 6); fragments
 * an index covers that brid cannot carry (compact/fri.h) are held back and
 * listed, as Lance's planner holds back what it cannot remap; a bin that
 * goes into the fragment reuse index has ascending ids (it maps rows in
 * old-fragment order); and
 * per-job budgets cap source fragments, rows and bytes. */
#ifndef BRI_PLAN_H
#define BRI_PLAN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compact/fri.h"
#include "lance/table/manifest.h"
#include "util/error.h"

/* The default target size of a fragment: 1 GiB, Delta OPTIMIZE's
 * maxFileSize (Iceberg's target-file-size-bytes is 512 MiB). Under copy a
 * fragment counts its payload, so a media table's fragments are left alone
 * once about 1 GiB big: a compaction then rewrites what is new, not the
 * table (docs/man/brid.conf.5 says why this size). */
#define BRI_TARGET_FRAGMENT_BYTES (1ULL << 30)
/* The tier floor is target / this (16 MiB by default): fragments smaller
 * than it always merge (rewriting them costs little); above it the size
 * tiers apply (plan.h above). */
#define BRI_PLAN_TIER_FLOOR_DIV 64

typedef struct bri_compact_options {
  uint64_t target_rows_per_fragment;      /* lance.compaction.target_rows_per_fragment */
  uint64_t target_fragment_bytes;         /* the size rule's target (brid's; Lance has no such key) */
  bool materialize_deletions;             /* lance.compaction.materialize_deletions */
  double materialize_deletions_threshold; /* lance.compaction.materialize_deletions_threshold */
  double repack_threshold;                /* pack utilization below which packs are repacked */
  uint64_t max_source_fragments;          /* per job; 0 = no limit */
  uint64_t max_source_rows;
  uint64_t max_source_bytes;              /* data file bytes, blob payload excluded */
} bri_compact_options;

/* Lance's defaults: 1 Mi rows, materialize deletions above 10%, repack
 * below 30% utilization, no budgets; and brid's target of
 * BRI_TARGET_FRAGMENT_BYTES. */
void bri_compact_options_default(bri_compact_options *o);

/* Overrides o with the table's lance.compaction.* config keys. A malformed
 * value is an error naming the key and the manifest. */
int bri_compact_options_from_config(const bri_manifest *m, bri_compact_options *o,
                                    bri_error *err);

typedef struct bri_plan_bin {
  size_t first;        /* index of the first fragment in the manifest's list */
  size_t count;        /* consecutive fragments */
  uint64_t rows;       /* visible rows */
  uint64_t physical_rows;
  uint64_t deleted_rows;
  uint64_t bytes;      /* data file bytes */
  uint64_t size;       /* bytes as the size rule counts them (bri_plan_hints) */
} bri_plan_bin;

/* Why a fragment that could merge is left as it is. */
typedef enum bri_hold {
  BRI_HOLD_INDEX,     /* an index brid cannot carry covers it */
  BRI_HOLD_AT_TARGET, /* its size reached target_fragment_bytes */
  BRI_HOLD_LARGER,    /* larger than the newer fragments it would merge with (size tiers) */
} bri_hold;

typedef struct bri_plan_held {
  uint64_t id;
  bri_hold why;
  uint64_t size; /* as the size rule counts it */
} bri_plan_held;

/* What the planner knows of the fragments beyond the manifest; each array
 * has one entry per fragment, in manifest order, and may be NULL. */
typedef struct bri_plan_hints {
  const bool *repack_wanted;     /* it references a pack below the repack threshold */
  const uint64_t *payload_bytes; /* the payload a compaction would copy (fragsize.h); NULL: none counts */
} bri_plan_hints;

typedef struct bri_plan {
  uint64_t read_version;
  size_t n_bins;
  bri_plan_bin *bins;
  size_t n_held;                 /* fragments held back, in manifest order */
  bri_plan_held *held;
  uint64_t target_fragment_bytes; /* the size rule's, as planned */
  bool counts_payload;           /* sizes include payload (hints->payload_bytes given) */
  bri_index_views *views;        /* the table's indices as the plan saw them */
  bool budget_exhausted;         /* some bins were left for a later job */
} bri_plan;

/* Plans over m's fragments (of table t, where an external fragment reuse
 * index is read from; t may be NULL when m has none), with hints h (may be
 * NULL: none). An unreadable fragment reuse index or index bitmap is an
 * error naming the manifest. */
int bri_compact_plan(const bri_table *t, const bri_manifest *m, const bri_compact_options *o,
                     const bri_plan_hints *h, bri_plan **out, bri_error *err);
void bri_plan_free(bri_plan *p);

/* "an index brid cannot carry covers it", "at target size", "larger than
 * the newer fragments". */
const char *bri_hold_name(bri_hold why);

/* The plan as JSON: {read_version, target_fragment_bytes, size_counts_payload,
 * bins: [{fragments: [ids], rows, ..., size_bytes}], indices: [how each is
 * carried (bri_index_views_to_json)], held_back: [{fragment, reason,
 * size_bytes}], budget_exhausted}. */
json_t *bri_plan_to_json(const bri_plan *p, const bri_manifest *m);

#endif
