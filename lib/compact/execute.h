/* execute.h: running a compaction of one table, from plan to commit.
 *
 * bri_compact_table plans (plan.h; for blob tables after measuring pack
 * utilization from the descriptors of every fragment), writes one new data
 * file per bin (rows of the bin's fragments, deleted rows dropped; every
 * Blob v2 field rewritten by strategy, blobout.h; Inline payloads copied;
 * stable row ids and row version sequences carried), and commits all bins
 * as one Rewrite (rewrite.h). Memory stays bounded by a batch of rows and
 * one page per column, never by table or blob size. If anything fails, or
 * the commit loses to a conflicting writer, every file the attempt created
 * is removed (and only those: sources are never touched). */
#ifndef BRI_EXECUTE_H
#define BRI_EXECUTE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "compact/blobout.h"
#include "compact/plan.h"
#include "storage/outputs.h"
#include "storage/store.h"
#include "util/hooks.h"
#include "util/error.h"

typedef struct bri_compact_request {
  bri_compact_options options; /* the table's lance.compaction.* keys override these */
  bri_strategy strategy;       /* default auto (blobout.h): bri for a table that carries a BRI, else link or
                                  copy; managed switches a table to Managed blobs first (optin.h) */
  bool dry_run;
  unsigned min_reader;         /* the oldest Lance (major version) the operator declared reads the
                                  table, 0: none; from BRI_MANAGED_MIN_READER on, auto switches a
                                  table with Blob v2 fields to Managed blobs (optin.h) */
  int max_commit_attempts;     /* commit attempts lost to other writers' versions; 0: 100 */
  uint64_t batch_rows;         /* rows decoded at a time; 0: 16384 */
  size_t read_ahead;           /* fragments (and packs) opened ahead of use, that many at once
                                  (util/readahead.h); 0: BRI_COMPACT_READ_AHEAD_LOCAL on local
                                  disks (none for fewer than _LOCAL_MIN items), _REMOTE on
                                  object stores */
} bri_compact_request;

/* Reads in flight by default: on a local disk enough to use the other cores
 * for decoding, on an object store enough to hide its latency per request
 * (a fragment costs a GET or two of ~20 ms on S3: 400 fragments through a
 * proxy adding 20 ms, 1.30 s at 16, 0.81 s at 32, 0.59 s at 64). Memory:
 * up to BRI_READAHEAD_WINDOW x this fragments open, each with at most
 * 256 KiB of its data file's tail (storage/object_store.c). */
#define BRI_COMPACT_READ_AHEAD_LOCAL 8
#define BRI_COMPACT_READ_AHEAD_REMOTE 64 /* util/readahead.h's BRI_READAHEAD_MAX */
/* On a local disk fewer items than this are read in the consumer's thread
 * (unless read_ahead asks otherwise): from the page cache a fragment's
 * metadata takes microseconds, less than handing it between threads (a
 * fleet of 4-fragment tables compacted by 16 workers: 3.8 -> 2.7 ms of CPU
 * a table without the hand-offs). */
#define BRI_COMPACT_READ_AHEAD_LOCAL_MIN 32

void bri_compact_request_default(bri_compact_request *r);

typedef struct bri_compact_report {
  bri_strategy strategy;          /* what ran: managed for a Managed table, auto resolved to bri for
                                     a BRI table, else as requested */
  bool links_refused;             /* auto: the filesystem refused a link, payload was copied from then on */
  uint64_t read_version, version; /* read_version: what the compaction planned on (after a switch,
                                     the switch's version); version: the last one this run committed
                                     (the switch's when no bin was written; 0: nothing) */
  uint64_t fragments_before, fragments_after, bins, fragments_rewritten;
  uint64_t fragments_page_copied; /* sources appended by page copy (no re-encode) */
  uint64_t rows;
  uint64_t deletions_carried;     /* rows deleted meanwhile, carried onto the new fragments */
  uint64_t data_bytes_written;    /* new .lance files */
  uint64_t payload_bytes_copied;  /* sidecar payload written (copy, repack) */
  uint64_t inline_bytes_copied;   /* Inline payload copied into new data files */
  uint64_t payload_bytes_reused;  /* Packed/Dedicated payload left in place (adopted ones included) */
  uint64_t managed_kept;          /* Managed descriptors carried (compact/managed.h) */
  uint64_t managed_adopted;       /* Packed/Dedicated values adopted as Managed descriptors */
  uint64_t managed_repacked;      /* values of packs below the repack threshold copied into new
                                     _blobs/ objects (their bytes: payload_bytes_copied) */
  bool managed_switch;            /* strategy managed switched the table to Managed blobs (a dry
                                     run: would switch it; compact/optin.h) */
  uint64_t managed_switch_version; /* the version that switched it (0: none committed) */
  uint64_t links;
  uint64_t packs_below_threshold;
  double seconds;
  bri_store_stats storage;        /* object-store traffic of this compaction: bytes through
                                     brid apart from bytes the server copied */
  json_t *plan;                   /* the plan and its byte estimates (caller frees) */
} bri_compact_report;

/* Writes a copy of the one data file of fragment f (version m of table t)
 * as data/<stem>.lance, every physical row (deleted ones too: the fragment
 * keeps its row addresses and its deletion file), its columns page-copied
 * where they can be, its Blob v2 descriptors as a Managed compaction writes
 * them (managed.h: Packed and Dedicated values adopted in place, through
 * the sizes checked, no payload byte read). The file is recorded in outs
 * before it is created; *out is its DataFile; rep (compaction counts)
 * accumulates what it wrote. A fragment whose data files do not hold every
 * field of the table in one file of the table's version is refused
 * (BRI_EUNSUPPORTED). For materialize --managed (ops/materialize.h). */
int bri_compact_refile_managed(bri_table *t, const bri_manifest *m, const Lance__Table__DataFragment *f,
                               const char *stem, bri_sidecar_sizes *sizes, bri_outputs *outs,
                               Lance__Table__DataFile **out, bri_compact_report *rep, bri_error *err);

/* Compacts the table at root. hooks (util/hooks.h, may be NULL): journal,
 * progress (rows), cancelled (between batches), commit_intent. Error codes:
 * BRI_ECONFLICT when a concurrent writer touched the planned fragments
 * (nothing was committed, outputs were removed; plan again), BRI_ECANCELLED
 * when the hook asked (outputs removed), and the usual read/write errors. */
int bri_compact_table(const char *root, const bri_compact_request *req, const bri_hooks *hooks,
                      bri_compact_report *rep, bri_error *err);

#endif
