/* rewrite.h: committing a compaction as a Lance Rewrite transaction.
 *
 * A compaction planned against read_version replaces groups of old
 * fragments by new ones. By the time it commits, other writers may have
 * committed versions after read_version. This module reads their
 * transactions and applies Lance's conflict rules for a Rewrite
 * (lance/table/conflict.h): appends and other operations that leave our
 * fragments alone are rebased over (the new manifest is built from the
 * latest version); deletions in our old fragments are carried over onto the
 * new ones when the caller allows it (compact/carry.h); anything else that
 * touched our old fragments, rewrote the table, or cannot be analysed aborts
 * the attempt with BRI_ECONFLICT so the caller re-plans (and removes the
 * files it wrote). A lost race for the next version name is retried the
 * same way. The new manifest's index section is built by compact/fri.h
 * on each attempt, from the latest version: bitmaps recalculated (stable
 * row ids) or a fragment reuse index version appended. */
#ifndef BRI_REWRITE_H
#define BRI_REWRITE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lance/table/table.h"
#include "util/error.h"
#include "storage/outputs.h"

typedef struct bri_rewrite_group {
  size_t n_old;
  const uint64_t *old_ids;                 /* fragment ids at read_version, in order */
  size_t n_new;
  Lance__Table__DataFragment **new_frags;  /* id 0: assigned at commit */
  /* The old row addresses the new fragments hold, in order, as a serialized
   * RoaringTreemap (lance/table/frag_reuse.h); needed without stable row ids
   * when an index covers the group (the fragment reuse index records it). */
  const uint8_t *changed_row_addrs;
  size_t changed_len;
} bri_rewrite_group;

typedef struct bri_rewrite {
  uint64_t read_version;
  const bri_manifest *base; /* the manifest of read_version as the caller read it (not
                               changed here); NULL: read again */
  const char *txn_uuid;   /* the transaction's uuid in every attempt (NULL: fresh) */
  size_t n_groups;
  const bri_rewrite_group *groups;
  /* Deletions committed meanwhile in the old fragments may be carried over
   * (compact/carry.h): each group's new fragments must then hold the old
   * fragments' rows live at read_version, in order. */
  bool carry_deletions;
  bri_outputs *out;       /* where those deletion files are recorded (journaled) before
                             they are created; NULL: a private record */
  uint64_t carried;       /* out: rows whose deletion was carried over */
  json_t **index_report;  /* if set: what the committed attempt did to the indices (compact/fri.h) */
} bri_rewrite;

/* Commits the rewrite, rebasing over compatible winners, retrying up to
 * max_attempts times when another writer takes the version we try. On
 * success *version is the committed version and the new fragments carry
 * their assigned ids. */
int bri_rewrite_commit(bri_table *t, bri_rewrite *rw, int max_attempts, uint64_t *version,
                       bri_error *err);

#endif
