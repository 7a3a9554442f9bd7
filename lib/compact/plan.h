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
 * brid adds: fragments flagged by the caller because they reference a
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

typedef struct bri_compact_options {
  uint64_t target_rows_per_fragment;      /* lance.compaction.target_rows_per_fragment */
  bool materialize_deletions;             /* lance.compaction.materialize_deletions */
  double materialize_deletions_threshold; /* lance.compaction.materialize_deletions_threshold */
  double repack_threshold;                /* pack utilization below which packs are repacked */
  uint64_t max_source_fragments;          /* per job; 0 = no limit */
  uint64_t max_source_rows;
  uint64_t max_source_bytes;              /* data file bytes, blob payload excluded */
} bri_compact_options;

/* Lance's defaults: 1 Mi rows, materialize deletions above 10%, repack
 * below 30% utilization, no budgets. */
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
} bri_plan_bin;

typedef struct bri_plan {
  uint64_t read_version;
  size_t n_bins;
  bri_plan_bin *bins;
  size_t n_skipped_indexed;      /* candidates held back: an index brid cannot carry covers them */
  uint64_t *skipped_indexed_ids;
  bri_index_views *views;        /* the table's indices as the plan saw them */
  bool budget_exhausted;         /* some bins were left for a later job */
} bri_plan;

/* Plans over m's fragments (of table t, where an external fragment reuse
 * index is read from; t may be NULL when m has none). repack_wanted (may be
 * NULL) has one flag per fragment of m, in manifest order: true when the
 * fragment references a pack below the repack threshold. An unreadable
 * fragment reuse index or index bitmap is an error naming the manifest. */
int bri_compact_plan(const bri_table *t, const bri_manifest *m, const bri_compact_options *o,
                     const bool *repack_wanted, bri_plan **out, bri_error *err);
void bri_plan_free(bri_plan *p);

/* The plan as JSON: {read_version, bins: [{fragments: [ids], rows, ...}],
 * indices: [how each is carried (bri_index_views_to_json)], held_back: [ids],
 * budget_exhausted}. */
json_t *bri_plan_to_json(const bri_plan *p, const bri_manifest *m);

#endif
