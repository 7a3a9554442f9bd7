/* svc_kinds.h: how brid runs each kind of job (compact, cleanup,
 * materialize, verify), one entry each: how a request's parameters become
 * the library's options, whether the job writes, and how a worker runs it.
 *
 * Main design choice: what a kind is (its name, the parameters a request
 * may give, its priority, whether it only reads) is its descriptor in
 * rpc/rpc_kinds.h, shared with brictl and the job store; what brid does
 * with it is one entry here, so a new kind is a descriptor line and an
 * entry: the control socket's method of that name (svc_request.c,
 * svc_api.c) and the worker (svc_worker.c) both go through them. A kind's parameters are read by one
 * function, parse, used twice: when a request arrives (with the built-in
 * policy, to refuse bad values before anything is queued, and to write the
 * job's stored parameters in one normal form) and when the worker runs the
 * job (with the table's policy). The report a job stores is the library's
 * (lib/ops/report.h), the same object brictl prints when it runs the
 * operation itself. */
#ifndef BRI_SVC_KINDS_H
#define BRI_SVC_KINDS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "bri/compact.h"
#include "bri/ops.h"
#include "jobs/jobs.h"
#include "svc_config.h"

/* Priorities of the jobs brid queues itself; a request of a kind has its
 * descriptor's (rpc/rpc_kinds.h), above these, so it goes first. */
enum { SVC_PRIO_AUTO = 0, SVC_PRIO_SCHEDULED = 1 };

/* The options of one job, by kind. */
typedef union svc_opts {
  bri_compact_request compact;
  bri_cleanup_policy cleanup;
  bri_materialize_options materialize;
  bri_verify_options verify;
} svc_opts;

/* The job a kind's run function runs, on a worker thread (svc_worker.c
 * fills it). */
typedef struct svc_job {
  const char *root;
  int64_t id;
  /* the library's hooks (util/hooks.h): journal (durable before the file),
   * progress, cancelled (on request or for shutdown), commit_intent
   * (durable before the commit); hooks.user is also the user pointer of
   * the callbacks below */
  bri_hooks hooks;
  /* "planning", "writing", ... (a static string), shown by status */
  void (*phase)(void *user, const char *phase);
  /* a commit landed: the table's state (version, fragments, work left) is
   * read again now, so that it shows before the job is seen to end */
  void (*committed)(void *user);
  /* items done (files of a cleanup), for the progress line */
  void (*count)(void *user, uint64_t items);
  /* ends the job succeeded with result (consumed) and its byte counts;
   * its journal is cleared (the outputs belong to a committed version) */
  void (*succeed)(void *user, json_t *result, uint64_t written, uint64_t reused);
  /* ends the job failed with msg, and result when there is one (consumed) */
  void (*fail)(void *user, json_t *result, const char *msg);
  /* an attempt that returned rc: its outputs are rolled back, then a
   * cancellation for shutdown and transient errors go back to the queue, a
   * cancellation on request ends the job cancelled, anything else fails it */
  void (*unsucceeded)(void *user, int rc, const bri_error *err);
} svc_job;

typedef struct svc_kind {
  bri_job_kind kind; /* its descriptor: rpc_kind_of(kind) */
  /* whether a job with these options writes or removes table files (not
   * a dry run): it then runs under the table lock (ops/lock.h); NULL for
   * a kind whose descriptor says read_only (never asked) */
  bool (*writes)(const svc_opts *o);
  /* Reads params (a request's, or a stored job's; NULL: none) over pol
   * into *o. With norm, also sets there each parameter given, in the form
   * the job is stored with (durations in seconds). Returns 0, or -1 with
   * msg naming the parameter and what was expected ("params.X must be ..."). */
  int (*parse)(const json_t *params, const svc_policy *pol, svc_opts *o, json_t *norm, char *msg, size_t cap);
  /* Runs the job on a worker thread and ends it (succeed, fail or
   * unsucceeded). */
  void (*run)(const svc_job *j, svc_opts *o);
} svc_kind;

/* Tables compacting jobs switched to Managed blobs since brid started (the
 * workers count them; /metrics shows brid_managed_switches_total). */
uint64_t svc_kinds_managed_switches(void);

/* The entry of kind k, or of the kind named name; NULL when there is none. */
const svc_kind *svc_kind_of(bri_job_kind k);
const svc_kind *svc_kind_named(const char *name);

#endif
