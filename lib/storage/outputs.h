/* outputs.h: the files and directories an operation created, so that a
 * failed or aborted operation removes exactly those, newest first (files
 * before the directories that hold them), and never anything it did not
 * create (docs/format/bri.md 8). Each path is also handed to an optional
 * journal callback before the caller creates it: the daemon persists it, so
 * that a crashed process can be cleaned up after a restart. */
#ifndef BRI_OUTPUTS_H
#define BRI_OUTPUTS_H

#include <stddef.h>

#include "storage/store.h"
#include "util/hooks.h"
#include "util/error.h"

typedef struct bri_outputs {
  char **paths;
  size_t n, cap;
  size_t *trees; /* indices in paths of the BRI_JOURNAL_TREE directories */
  size_t n_trees, cap_trees;
  const bri_hooks *hooks; /* its journal hears of each path (may be NULL) */
  bri_store *store; /* where the paths are (borrowed): removed through it, so
                       that no link on the way is followed and a directory
                       swapped for a link after the files were made cannot
                       redirect a removal; a path outside it (a clone's own
                       root) is removed as a local path */
} bri_outputs;

/* Records path (call it before creating the file or directory) and
 * journals it with flags (BRI_JOURNAL_*, util/hooks.h). A path inside a
 * directory recorded as a tree is recorded without a journal entry of its
 * own (its tree's entry covers it); the tree itself again is not recorded
 * twice. */
int bri_outputs_add(bri_outputs *o, const char *path, unsigned flags, bri_error *err);
/* Removes every recorded path, newest first, and forgets them. */
void bri_outputs_roll_back(bri_outputs *o);
/* The same for the paths recorded after the first `mark` (an earlier o->n):
 * one step of an operation undone, the ones before it kept. */
void bri_outputs_roll_back_to(bri_outputs *o, size_t mark);
/* Forgets the recorded paths (they are now part of a committed version). */
void bri_outputs_clear(bri_outputs *o);
void bri_outputs_dispose(bri_outputs *o);

#endif
