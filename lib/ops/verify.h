/* verify.h: checking that a table's retained versions are whole.
 *
 * For each version checked (the latest by default, or every manifest in
 * _versions/): the manifest parses and passes brid's validation (framing,
 * feature flags, paths, BRI rules of docs/format/bri.md 3); every file it
 * references exists — data files with their recorded file_size_bytes,
 * deletion files, the transaction file, index directories, and every
 * sidecar a BRI names; and every Blob v2 descriptor of every visible row
 * resolves to an existing byte range (descriptors are read with the
 * fragment reader and checked with bri_blob_locate's rules: sizes only, no
 * payload is read). With all versions, the BRI of a DataFile that a version
 * keeps from its predecessor must be unchanged (rule 9, immutability).
 *
 * Every version checked must also keep the invariants Lance's own commits
 * keep (lance/table/rules.h: fragment order and ids, max_fragment_id,
 * physical rows and deletion counts, storage version, row id and version
 * sequences, index bitmaps, feature flags, the transaction applied), plus
 * the ones that need other files: each deletion file holds exactly the
 * offsets its fragment records ("deletion-file"), each data file holds
 * physical_rows rows ("data-file-rows"), and with stable row ids no live row
 * id appears twice ("row-ids-unique"). With all versions, the high-water
 * marks never go down between consecutive versions. A broken rule is a
 * problem whose `rule` names it.
 *
 * Problems are collected, not fatal: the report keeps the first
 * max_problems (each naming a file and what is wrong) and counts the rest.
 * Work is shared across versions: a file, directory or fragment already
 * checked is not checked again. */
#ifndef BRI_VERIFY_H
#define BRI_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

typedef struct bri_verify_options {
  bool all_versions;     /* every manifest instead of one version */
  uint64_t version;      /* the one version to check; 0: the latest */
  bool skip_blobs;       /* do not read blob descriptors */
  size_t max_problems;   /* problems kept in the report; 0: 1000 */
} bri_verify_options;

typedef struct bri_verify_problem {
  uint64_t version;      /* the version that references the file (0: none in particular) */
  char *file;            /* what is missing or wrong */
  char *what;            /* why, with offsets and expectations where known */
  const char *rule;      /* the invariant broken (rules.h names, static), or NULL */
} bri_verify_problem;

typedef struct bri_verify_report {
  uint64_t versions_checked;   /* manifests that parsed */
  uint64_t data_files, deletion_files, transaction_files, index_dirs, bri_targets;
  uint64_t fragments;          /* fragments whose descriptors were read */
  uint64_t blobs;              /* non-null Blob v2 values resolved */
  uint64_t blobs_unchecked;    /* External values behind a URI brid cannot open */
  uint64_t problems_total;     /* may exceed n_problems */
  size_t n_problems;
  bri_verify_problem *problems;
} bri_verify_report;

/* Verifies the table at root. Returns 0 when the checks ran (the table is
 * whole iff rep->problems_total == 0) and a negative code when the table
 * cannot be opened at all (or memory ran out). rep is always safe to free. */
int bri_verify_table(const char *root, const bri_verify_options *o, bri_verify_report *rep,
                     bri_error *err);
void bri_verify_report_dispose(bri_verify_report *rep);

#endif
