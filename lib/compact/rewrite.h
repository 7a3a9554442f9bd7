/* rewrite.h: committing a compaction as a Lance Rewrite transaction.
 *
 * A compaction planned against read_version replaces groups of old
 * fragments by new ones. By the time it commits, other writers may have
 * committed versions after read_version. This module reads their
 * transactions and applies Lance's conflict rules (spec/table.md section 10)
 * for a Rewrite: appends and other operations that leave our fragments alone
 * are rebased over (the new manifest is built from the latest version);
 * anything that touched our old fragments, rewrote the table, or cannot be
 * analysed aborts the attempt with BRI_ECONFLICT so the caller re-plans
 * (and removes the files it wrote). A lost race for the next version name
 * is retried the same way. */
#ifndef BRI_REWRITE_H
#define BRI_REWRITE_H

#include <stddef.h>
#include <stdint.h>

#include "lance/table/table.h"
#include "util/error.h"

typedef struct bri_rewrite_group {
  size_t n_old;
  const uint64_t *old_ids;                 /* fragment ids at read_version, in order */
  size_t n_new;
  Lance__Table__DataFragment **new_frags;  /* id 0: assigned at commit */
} bri_rewrite_group;

typedef struct bri_rewrite {
  uint64_t read_version;
  const char *txn_uuid;   /* the transaction's uuid in every attempt (NULL: fresh) */
  size_t n_groups;
  const bri_rewrite_group *groups;
} bri_rewrite;

/* Checks one committed transaction against our rewrite: 0 when compatible,
 * BRI_ECONFLICT (err says which operation touched what) otherwise. */
int bri_rewrite_check_conflict(const bri_rewrite *rw, const Lance__Table__Transaction *other,
                               uint64_t other_version, bri_error *err);

/* Commits the rewrite, rebasing over compatible winners, retrying up to
 * max_attempts times when another writer takes the version we try. On
 * success *version is the committed version and the new fragments carry
 * their assigned ids. */
int bri_rewrite_commit(bri_table *t, const bri_rewrite *rw, int max_attempts, uint64_t *version,
                       bri_error *err);

#endif
