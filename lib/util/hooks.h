/* hooks.h: how libbri's long operations (compaction, cleanup, materialize,
 * clone) talk back to their caller while they run: one struct for all of
 * them, passed as `const bri_hooks *hooks` (NULL: no hooks), every member
 * optional. The library never calls into the daemon any other way: brid's
 * worker journals outputs in its job store, reports progress and asks for
 * cancellation through these, and the CLI lists deleted files.
 *
 * Calls come from the thread running the operation, synchronously; a hook
 * must not call back into the same operation. */
#ifndef BRI_HOOKS_H
#define BRI_HOOKS_H

#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"

/* What a journaled path is (bri_hooks.journal's flags). */
enum {
  /* A directory the operation creates and fills alone (a new data file's
   * sidecar directory): what it creates beneath is not journaled one by
   * one, and a crashed operation's directory is removed with everything
   * in it. */
  BRI_JOURNAL_TREE = 1,
  /* Reserved ahead: the operation creates nothing before its next journal
   * entry without this flag, or its commit intent, has returned, and that
   * one makes this entry durable with it (a journal is written in order).
   * So one durable write covers every output of a compaction. */
  BRI_JOURNAL_RESERVED = 2,
};

typedef struct bri_hooks {
  /* Told every path (file or directory) before the operation creates it,
   * so that a crashed process can be cleaned up after a restart; non-zero
   * aborts the operation (err filled), which then removes what it made.
   * flags (BRI_JOURNAL_*) say what the path is and how soon its entry must
   * be durable. */
  int (*journal)(void *user, const char *path, unsigned flags, bri_error *err);
  /* Progress: compaction reports rows done of rows planned and bytes written
   * so far, after each batch. */
  void (*progress)(void *user, uint64_t done, uint64_t total, uint64_t bytes_written);
  /* Polled at safe points (compaction between batches, cleanup before each
   * deletion, materialize before each file placed): true stops the
   * operation with BRI_ECANCELLED; uncommitted outputs are removed. */
  bool (*cancelled)(void *user);
  /* Compaction: told the uuid its Rewrite's transaction will carry and the
   * version it read, once, before it creates its first output (every
   * commit attempt reuses the uuid), so that a process that dies after the
   * commit landed can find out that it did. The record is durable when
   * the call returns, and with it every BRI_JOURNAL_RESERVED entry before
   * it. Non-zero aborts. */
  int (*commit_intent)(void *user, const char *txn_uuid, uint64_t read_version, bri_error *err);
  /* Cleanup: a file deleted (or, in a dry run, that would be); kind is a
   * bri_cleanup_kind. */
  void (*deleted)(void *user, int kind, const char *path, uint64_t bytes);
  /* Asked before each step that cannot be taken back (cleanup: a batch of
   * deletes; compaction: each commit attempt) whether the caller still may
   * act on the table (brid: whether its job still holds its lease);
   * non-zero stops the run with that error before the step. */
  int (*confirm)(void *user, bri_error *err);
  void *user;
} bri_hooks;

/* Whether hooks (may be NULL) ask to stop. */
static inline bool bri_hooks_cancelled(const bri_hooks *hooks) {
  return hooks && hooks->cancelled && hooks->cancelled(hooks->user);
}

#endif
