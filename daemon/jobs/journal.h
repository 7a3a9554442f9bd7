/* journal.h: the output journal of a running job, and its commit intent.
 *
 * Contract for a worker (the rule that makes a crash recoverable):
 *   1. bri_jobs_journal_add(path) BEFORE creating the file at path (a data
 *      file, a deletion file, a hard link, a staging or transaction file...).
 *      The entry is durable (the WAL fdatasynced) when the call returns, so no
 *      file of the job can exist on disk without its entry. A "tree"
 *      entry is a directory the job creates and fills alone: it covers
 *      everything the job creates in it.
 *   2. bri_jobs_set_commit_intent(uuid) BEFORE committing the table version
 *      whose transaction carries that uuid (the same uuid on every commit
 *      retry of the attempt), also durable. A compaction records it before
 *      its first output, with the outputs it reserves (its data files and
 *      their sidecar trees) in the same transaction: one durable write.
 *   3. After the commit landed: finish the job succeeded (queue.h), which
 *      clears its journal in the same transaction. After a failure: remove
 *      the files that no committed version references,
 *      bri_jobs_journal_remove (or clear), then finish or retry.
 * Only the job's own outputs are journaled: never a file it reuses.
 * Paths are opaque text to the store (brid journals absolute paths); the
 * kind is a short free-form label ("data", "deletion", "link", "txn"...)
 * handed back to recovery. Journaling a path twice keeps one entry. */
#ifndef BRI_JOBS_JOURNAL_H
#define BRI_JOBS_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "jobs/store.h"

typedef struct bri_jobs_output {
  int64_t seq;  /* journal order: recovery removes in reverse */
  char *path;
  char *kind;
  int attempt;  /* the attempt that journaled it */
  int64_t created_at;
} bri_jobs_output;

/* Journals path for job_id, which must be running under this session.
 * Durable on return. */
int bri_jobs_journal_add(bri_jobs_store *s, int64_t job_id, const char *path, const char *kind,
                         bri_error *err);

/* The journal of a job, in journal order (*out NULL when empty). */
int bri_jobs_journal_list(bri_jobs_store *s, int64_t job_id, bri_jobs_output **out, size_t *n,
                          bri_error *err);
void bri_jobs_journal_free(bri_jobs_output *o, size_t n);

/* Drops one entry (the file was removed, or is now referenced by a
 * committed version); a missing entry is not an error. */
int bri_jobs_journal_remove(bri_jobs_store *s, int64_t job_id, const char *path,
                            bri_error *err);

/* Drops every entry of the job. */
int bri_jobs_journal_clear(bri_jobs_store *s, int64_t job_id, bri_error *err);

/* An output journaled with the commit intent. */
typedef struct bri_jobs_reserved {
  const char *path, *kind;
} bri_jobs_reserved;

/* Records that the running job will commit a transaction with this uuid
 * on top of read_version, and journals outputs[0..n_outputs) with it, in
 * one transaction. Durable on return. Recovery hands the uuid and version
 * to the commit_landed callback to learn whether the commit happened. */
int bri_jobs_set_commit_intent(bri_jobs_store *s, int64_t job_id, const char *txn_uuid,
                               uint64_t read_version, const bri_jobs_reserved *outputs, size_t n_outputs,
                               bri_error *err);

#endif
