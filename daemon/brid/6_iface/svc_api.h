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
 *   metrics        {format?}    {"text": Prometheus exposition}, or with
 *                               format "json" {"families": [...]} (svc_metrics.h)
 * A table is named by its path (any spelling that resolves to the watched
 * root); times are milliseconds since the epoch; sizes are bytes.
 *
 * Main design choice: every parameter (unknown names included) is checked
 * before a handler acts (svc_request.h, a pure function of the request, so
 * it is fuzzed alone), and a call returns either a result or one error with
 * a JSON-RPC code and a message naming the parameter and what was expected,
 * so a caller's typo never runs a default. Methods run on libuv's thread
 * pool, never on the loop: they read the job store, which may wait on a
 * disk, and a view of the loop's state (svc_view.h). */
#ifndef BRI_SVC_API_H
#define BRI_SVC_API_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "brid/1_leaves/svc_request.h"
#include "brid/2_state/svc_state.h"
#include "rpc/rpc_proto.h"
#include "svc_view.h"

typedef struct svc_peer {
  uid_t uid;
  gid_t gid;
  pid_t pid;
  bool readonly; /* came through the read-only socket: rpc_method_reads_only methods only */
} svc_peer;

/* What only the loop may do once a method has run. */
enum {
  SVC_POST_KICK = 1 << 0,     /* jobs were queued or tables resumed: the scheduler looks */
  SVC_POST_DISCOVER = 1 << 1, /* the table named is not registered yet: discover, then run again */
  SVC_POST_RELOAD = 1 << 2,   /* apply the configuration the method loaded */
};

/* One request from check to reply: prepared on the loop, executed on
 * libuv's thread pool, finished on the loop (svc_control.c drives it). */
typedef struct svc_call {
  svc_request r;     /* the checked params */
  json_t *msg_ref;   /* the request's message, which r borrows from */
  svc_peer peer;
  svc_view *view;    /* the loop's state when the call was (re)prepared */
  bri_jobs_store *store;
  svc_pool *pool;
  bool discovered;   /* it ran once already and a discovery followed */
  /* outputs */
  json_t *result;
  int code;
  char msg[1024];
  unsigned post;     /* SVC_POST_* */
  svc_overrides reload_ov; /* reload: the command line's settings */
  svc_config reload_cfg;   /* reload: loaded by the method, applied by finish */
  int reload_rc;
  bri_error reload_err;
} svc_call;

/* On the loop: checks req (svc_request) and the peer's access level, and
 * takes a view. NULL with *code and msg set when the request is refused. */
svc_call *svc_api_prepare(brid *d, const rpc_req *req, const svc_peer *peer, int *code, char *msg, size_t cap);
/* On the loop: a new view before running again (after a discovery); -1
 * out of memory. */
int svc_api_refresh(brid *d, svc_call *c);
/* On any thread: runs the method (result or code/msg, post actions). */
void svc_api_execute(svc_call *c);
/* On the loop: the post actions (always, even when nobody waits for the
 * reply any more), then the result to send (owned by the caller), or NULL
 * with *code and msg set. */
json_t *svc_api_finish(brid *d, svc_call *c, int *code, char *msg, size_t cap);
void svc_api_free(svc_call *c);

/* Job as the API shows it (full: attempts, journal); any thread. */
json_t *svc_api_job_json(bri_jobs_store *store, svc_pool *pool, const bri_jobs_job *j, int full);

#endif
