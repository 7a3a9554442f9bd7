/* cleanup.h: removing what no retained version of a table can reach.
 *
 * Retention (who is kept): the latest version always, versions newer than
 * older_than, the last N versions, tagged versions and branch roots.
 * Reachability (what they keep): their manifests, data files, deletion
 * files, transaction files and index directories; each retained data file's
 * own sidecar directory as a whole; and, for the Blob Reuse Index, the exact
 * sidecar files a retained BRI names, so a directory that is a BRI source is
 * cleaned file by file (docs/format/bri.md 7). Rules copied from Lance's cleanup
 * (docs/format/table.md section 13): a file no retained version references is
 * deleted only if an old manifest referenced it or it is older than the
 * grace period, and never if it is newer than the oldest retained manifest
 * (a concurrent writer may be staging it). Nothing outside the table root is
 * ever deleted, symbolic links are never followed (a table directory that is
 * one, e.g. data/, stops the run before the first delete), and any retained
 * manifest that cannot be read stops the run before the first delete (fail
 * closed). Old manifests are deleted before the files only they reached, so
 * that an interrupted run leaves every version still listed whole.
 * Failpoints: cleanup.before_manifests, cleanup.before_files,
 * cleanup.before_delete, cleanup.after_delete (util/failpoint.h). */
#ifndef BRI_CLEANUP_H
#define BRI_CLEANUP_H

#include <stdbool.h>
#include <stdint.h>

#include "storage/store.h"
#include "util/error.h"
#include "util/hooks.h"

typedef struct bri_cleanup_policy {
  int64_t older_than_sec;      /* keep versions newer than this (default 7 days) */
  uint64_t retain_versions;    /* also keep the newest N versions (0: no such rule) */
  int64_t grace_sec;           /* unreferenced, unverified files younger than this stay (7 days) */
  double max_deletes_per_sec;  /* 0: unlimited */
  bool dry_run;                /* report what would go, delete nothing */
  int64_t now;                 /* seconds since the epoch; 0: the clock */
} bri_cleanup_policy;

void bri_cleanup_policy_default(bri_cleanup_policy *p);

typedef enum bri_cleanup_kind {
  BRI_CLEAN_MANIFEST,
  BRI_CLEAN_DATA,
  BRI_CLEAN_SIDECAR,
  BRI_CLEAN_DELETION,
  BRI_CLEAN_TRANSACTION,
  BRI_CLEAN_INDEX,
  BRI_CLEAN_STAGING,
  BRI_CLEAN_MANAGED, /* _blobs/ objects of Managed blobs (blob/managed.h) */
  BRI_CLEAN_KINDS
} bri_cleanup_kind;

const char *bri_cleanup_kind_name(bri_cleanup_kind k);

typedef struct bri_cleanup_stats {
  uint64_t files[BRI_CLEAN_KINDS];
  uint64_t bytes[BRI_CLEAN_KINDS];
  uint64_t dirs_removed;          /* emptied sidecar and index directories */
  uint64_t versions_retained;
  uint64_t kept_too_young;        /* unreferenced files left for a later run */
  bri_store_stats storage;        /* the table's store traffic during the run (requests by kind) */
} bri_cleanup_stats;

/* Cleans the table at root by policy p. hooks (util/hooks.h, may be NULL):
 * deleted, once per file deleted (or that would be, in a dry run), with its
 * bri_cleanup_kind; cancelled, polled before each deletion (each batch of
 * up to 1000 files on an object store): true stops the run with
 * BRI_ECANCELLED; what is deleted by then stays deleted, and every version
 * still listed is whole (manifests go first, their files after).
 * stats->storage: the table's store traffic (object stores: requests by
 * kind; a cleanup deleting n files on S3 makes about n / 1000 deletes). */
int bri_cleanup_run(const char *root, const bri_cleanup_policy *p, const bri_hooks *hooks,
                    bri_cleanup_stats *stats, bri_error *err);

#endif
