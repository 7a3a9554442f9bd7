/* svc_request.h: a control request's method and parameters, checked
 * without the daemon (the methods are listed in svc_api.h).
 *
 * Main design choice: checking is a pure function of the request (no table
 * lookup, no job store, no loop), so everything a peer's line decides
 * before a method acts can be tested and fuzzed alone. svc_api.c checks
 * first and only then acts: a request that passes may still fail there
 * (no such table, no such job, the store's errors). Unknown parameters are
 * refused, so a caller's typo never runs a default. */
#ifndef BRI_SVC_REQUEST_H
#define BRI_SVC_REQUEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jobs/jobs.h"
#include "rpc/rpc_proto.h"

typedef enum svc_method {
  SVC_M_STATUS,
  SVC_M_TABLES_LIST,
  SVC_M_TABLES_GET,
  SVC_M_JOBS_LIST,
  SVC_M_JOBS_GET,
  SVC_M_JOBS_CANCEL,
  SVC_M_JOB, /* compact, cleanup, materialize, verify: a job of that kind (svc_kinds.h) */
  SVC_M_PAUSE,
  SVC_M_RESUME,
  SVC_M_RELOAD,
  SVC_M_METRICS,
} svc_method;

/* A checked request. */
typedef struct svc_request {
  svc_method method;
  const char *table;      /* params.table, an absolute path (borrowed from the request); NULL when absent */
  bool all;               /* tables.list: params.all */
  bool json;              /* metrics: params.format is "json" */
  bool cancel_running;    /* pause: params.cancel_running */
  int64_t id;             /* jobs.get, jobs.cancel: params.id (>= 1) */
  bri_jobs_filter filter; /* jobs.list: states, kind, limit, before (table_id is left 0) */
  bri_job_kind kind;      /* SVC_M_JOB: the kind of job */
  json_t *job_params;     /* SVC_M_JOB: the params the job is queued with (owned) */
} svc_request;

/* Checks req into *out. Returns 0, or a JSON-RPC code (RPC_METHOD_NOT_FOUND,
 * RPC_INVALID_PARAMS, RPC_INTERNAL_ERROR) with msg naming the parameter and
 * what was expected; *out then holds nothing to clear. */
int svc_request_check(const rpc_req *req, svc_request *out, char *msg, size_t cap);
void svc_request_clear(svc_request *r);

#endif
