/* svc_api.h: the methods of the control socket.
 *
 *   status                      daemon state, workers, queue, running jobs
 *   tables.list    {all?}       every watched table with its state (all: also
 *                               tables of the store that are no longer watched)
 *   tables.get     {table}      one table: state, policy, recent jobs
 *   jobs.list      {table?, state?, kind?, limit?, before?}
 *   jobs.get       {id}         one job: attempts, journal, progress
 *   jobs.cancel    {id}
 *   compact        {table, strategy?, dry_run?, target_rows_per_fragment?}
 *   cleanup        {table, older_than?, retain_versions?, grace?, dry_run?}
 *   materialize    {table, dry_run?, no_links?}
 *   verify         {table, all_versions?, skip_blobs?}
 *   pause          {table?, cancel_running?}    (no table: every table)
 *   resume         {table?}
 *   reload                      re-read the configuration file
 *   metrics                     {"text": Prometheus exposition}
 * A table is named by its path (any spelling that resolves to the watched
 * root); times are milliseconds since the epoch; sizes are bytes.
 *
 * Main design choice: every parameter (unknown names included) is checked
 * before a handler acts (svc_request.h, a pure function of the request, so
 * it is fuzzed alone), and a call returns either a result or one error with
 * a JSON-RPC code and a message naming the parameter and what was expected,
 * so a caller's typo never runs a default. */
#ifndef BRI_SVC_API_H
#define BRI_SVC_API_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "rpc/rpc_proto.h"
#include "svc_daemon.h"

typedef struct svc_peer {
  uid_t uid;
  gid_t gid;
  pid_t pid;
  bool readonly; /* came through the read-only socket: rpc_method_reads_only methods only */
} svc_peer;

/* Runs req. Returns the result (owned by the caller), or NULL with *code
 * and msg set. */
json_t *svc_api_call(brid *d, const rpc_req *req, const svc_peer *peer, int *code, char *msg, size_t cap);

/* Job as the API shows it (full: attempts, journal). */
json_t *svc_api_job_json(brid *d, const bri_jobs_job *j, int full);

#endif
