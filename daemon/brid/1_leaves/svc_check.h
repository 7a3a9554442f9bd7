/* svc_check.h: the planner check, on any thread: how brid asks whether a
 * table needs compacting (svc_check_probe) and what the store records of
 * the answer (svc_check_settle). A leaf: it knows a table's root, a policy
 * and the job store, never brid's state, so that the watches' checks
 * (svc_watch.c) and a worker's check after its own commit (svc_worker.c)
 * are one code.
 *
 * Main design choice: a check first compares the latest version name with
 * the last version seen (a directory listing, no manifest read), so a sweep
 * over a thousand idle tables costs a thousand readdirs and nothing more. */
#ifndef BRI_SVC_CHECK_H
#define BRI_SVC_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "bri/error.h"
#include "jobs/jobs.h"
#include "svc_config.h"

/* What asks the planner, and what it queues a compaction for. */
typedef enum svc_trigger {
  SVC_TRIGGER_QUIET, /* the debounce or max_delay ran out, a sweep, a policy change: any bins */
  SVC_TRIGGER_COUNT, /* a commit: bins once max_new_fragments new small fragments wait */
  SVC_TRIGGER_AFTER, /* right after brid's own commit: only bins a job's budget left */
} svc_trigger;

/* How a check asks. */
typedef struct svc_probe {
  svc_trigger trigger;
  bool force;         /* plan even when the latest version is the one seen */
  bool has_seen;
  uint64_t seen;      /* the version seen last (a check with nothing newer reads no manifest) */
  uint64_t new_after; /* COUNT: fragments with a larger id are new */
} svc_probe;

/* What a planner check found. */
typedef struct svc_check {
  int rc;          /* 0, or why the table could not be read (err) */
  bri_error err;
  svc_trigger trigger;
  bool empty;      /* no version yet (an empty _versions/) */
  bool loaded;     /* the latest manifest was read: fragments are known */
  bool planned;    /* ... and planned: bins are known (a COUNT check below its count plans nothing) */
  uint64_t latest, fragments, bins;
  uint64_t new_small;       /* COUNT: new fragments below the targets by their data files and rows */
  uint64_t max_fragment_id; /* the highest fragment id the latest version has used */
  bool budget_exhausted;
  /* svc_check_settle */
  bool seen_recorded; /* the store now says latest is seen */
  bool queued;        /* a compaction was queued: job */
  bool waiting;       /* a compaction is queued for the table (this check's, or an
                         identical one queued before, maybe by another instance) */
  int64_t job;
} svc_check;

/* A planner check of the table at root with policy pol, on any thread
 * (libuv's pool, a worker): the latest version, and unless it is seen
 * and not how->force, its fragments and the bins the planner would
 * compact (sizes as pol's strategy counts them, compact/fragsize.h). A
 * COUNT check counts the new small fragments first and plans only when
 * they reach pol->max_new_fragments. */
void svc_check_probe(const char *root, const svc_policy *pol, const svc_probe *how, svc_check *out);
/* The store's part of a check, on the same thread as the probe: queues a
 * compaction when the check planned bins its trigger asks for,
 * auto_compact (false while draining) and the last compaction at this
 * version did not find nothing to commit; else records the version as
 * seen when it planned (a compaction records the version it leaves when
 * it ends). */
void svc_check_settle(bri_jobs_store *store, int64_t table_id, const char *root, bool auto_compact, bool has_seen,
                      uint64_t seen, svc_check *c);
#endif
