/* rpc_kinds.h: the kinds of job (compact, cleanup, materialize, verify),
 * each described once, for everyone who names them: brid's control
 * methods and workers (brid/svc_request.c, brid/svc_kinds.c), brictl's
 * options and help (brictl/cmd_jobs.c) and the job store (jobs/), which
 * keeps a kind as its name and knows no list of its own.
 *
 * Main design choice: one X-macro line per kind, BRI_JOB_KINDS, from which
 * come the enum, the descriptor table and the "a|b|c" choice list that
 * static option tables need; a new kind is one line here plus what it runs
 * (an entry of brid/svc_kinds.c). A kind's id is its enum value, used only
 * in memory; the store writes the name, so ids may be renumbered but names
 * are forever (a store holds the names of every kind that ever ran). */
#ifndef BRI_RPC_KINDS_H
#define BRI_RPC_KINDS_H

#include <stdbool.h>
#include <stddef.h>

/* What a job's success stamps on its table in the store: nothing, its last
 * compaction time or its last cleanup time. */
typedef enum bri_job_stamp {
  BRI_STAMP_NONE = 0,
  BRI_STAMP_COMPACTION,
  BRI_STAMP_CLEANUP,
} bri_job_stamp;

/* X(ID, name, params, priority, read_only, stamp):
 *   name       the control method, the stored kind and brictl's command
 *   params     what a request may give besides "table", space separated
 *   priority   a request's priority (automatic and scheduled jobs have
 *              their own, brid/svc_sched.h; higher runs first)
 *   read_only  never writes or removes a table file, whatever its params
 *   stamp      what its success records on the table */
#define BRI_JOB_KINDS(X)                                                                      \
  X(COMPACT, "compact", "strategy dry_run target_rows_per_fragment target_fragment_bytes", 10, false, \
    BRI_STAMP_COMPACTION)                                                                     \
  X(CLEANUP, "cleanup", "older_than retain_versions grace dry_run", 10, false,                \
    BRI_STAMP_CLEANUP)                                                                        \
  X(MATERIALIZE, "materialize", "dry_run no_links managed", 10, false, BRI_STAMP_NONE)                \
  X(VERIFY, "verify", "all_versions skip_blobs", 10, true, BRI_STAMP_NONE)

typedef enum bri_job_kind {
  BRI_JOB_KIND_NONE = 0, /* a filter's "any kind" */
#define RPC_KIND_ENUM(id, ...) BRI_JOB_##id,
  BRI_JOB_KINDS(RPC_KIND_ENUM)
#undef RPC_KIND_ENUM
  BRI_JOB_KIND_END
} bri_job_kind;
#define BRI_JOB_NKINDS (BRI_JOB_KIND_END - 1)

typedef struct rpc_kind {
  bri_job_kind kind;
  const char *name;
  const char *params;
  int priority;
  bool read_only;
  bri_job_stamp stamp;
} rpc_kind;

/* "compact|cleanup|materialize|verify", for a static option table. */
#define RPC_KIND_BAR_(id, name, ...) "|" name
#define RPC_KIND_CHOICES (BRI_JOB_KINDS(RPC_KIND_BAR_) + 1)

/* The descriptor of kind k, or of the kind named name; NULL when none. */
const rpc_kind *rpc_kind_of(bri_job_kind k);
const rpc_kind *rpc_kind_named(const char *name);
/* The i-th kind (0 <= i < BRI_JOB_NKINDS), for listing them. */
const rpc_kind *rpc_kind_at(size_t i);
/* "compact, cleanup, materialize or verify", for messages (static). */
const char *rpc_kind_list(void);

#endif
