/* svc_view.h: a copy of the loop's state for work done on another thread.
 *
 * The loop thread owns the table registry, the counters and the running
 * configuration (svc_state.h); it never waits on a disk, so whatever reads
 * the job store (a control request, the metrics, a sweep's schedule) runs on
 * libuv's thread pool. What that work also needs of the loop's state it
 * reads from a view: a copy taken on the loop (memory only, microseconds
 * for a thousand tables), used on the pool's thread, freed there. A view is
 * a moment's state, which is all a reply can show anyway.
 *
 * Main design choice: copies instead of a lock around the registry, so the
 * loop never waits for a thread either, and no work can see a table half
 * updated. */
#ifndef BRI_SVC_VIEW_H
#define BRI_SVC_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bri/util.h"
#include "brid/1_leaves/svc_config.h"
#include "brid/2_state/svc_state.h"

typedef struct svc_table_view {
  char *root;
  int64_t id;
  bool present, watching, polled, paused_by_config;
  bool root_unreachable; /* its root cannot be listed now (svc_roots.c publishes it) */
  bool has_latest, loaded, has_work;
  uint64_t latest_version, fragments;
  char *check_error; /* NULL when the last check read the table */
  bool check_unsupported; /* check_error is a refusal (brid will not act on the table) */
  int64_t last_check_ms, cleanup_enqueued_ms;
  svc_policy policy;
} svc_table_view;

/* An S3 root's polls (svc_poll.c). */
typedef struct svc_poll_view {
  char *root;
  uint64_t polls, failures;
} svc_poll_view;

/* A configured root's reachability (svc_roots.c publishes it). */
typedef struct svc_root_view {
  char *root;
  bool known, up; /* known: listed, or failed to be, at least once */
  int64_t last_ok_ms, last_error_ms, down_since_ms;
  uint64_t failures; /* consecutive */
  char *last_error;
} svc_root_view;

typedef struct svc_view {
  svc_table_view *tables; /* every registered table, or (a summary) the present ones whose check failed */
  size_t n_tables;
  int64_t *present_ids;   /* the ids of the present tables, in registration order */
  size_t n_present;
  bri_strmap by_root; /* root -> index (a) */
  char **roots;       /* the configured roots */
  size_t n_roots;
  svc_root_view *root_states; /* the configured roots' reachability, in their order */
  size_t n_root_states;
  svc_poll_view *polls; /* the configured S3 roots' polls */
  size_t n_polls;
  char *config_file, *socket_path, *readonly_socket, *state_path;
  char *http_address; /* the HTTP listener's bound address, or NULL (svc_http.h) */
  bool draining;
  int64_t draining_ms, started_ms, last_reload_ms;
  char *last_reload_error;
  size_t checks_inflight, checks_waiting, connections, inotify_watches;
  size_t sweep_only;   /* present local tables without a watch: found by the sweep alone */
  char *watch_error;   /* why the last table watch failed, while none has succeeded since; or NULL */
  bool discovering;    /* a discovery walk of the roots is in flight */
  int64_t discovered_ms, first_sweep_ms; /* svc_state.h; 0 = not yet */
  size_t n_unchecked;
  svc_store_health store; /* whether the job store answers (svc_lease.c publishes it) */
  uint64_t store_statements; /* statements the job store ran, its read connection's included */
  uint64_t n_triggers[3]; /* by svc_trigger */
  uint64_t n_fs_events, n_checks, n_requests, n_request_errors, n_peers_refused,
      n_connections_refused, n_sweeps, n_check_errors;
} svc_view;

/* On the loop thread: a copy of d's state (NULL when out of memory):
 * every table when every_table, else a summary (the status method's: with
 * 100,000 tables a full copy costs the loop milliseconds per call) whose
 * tables are the present ones with a check error, the others counted
 * (present_ids, inotify_watches, sweep_only). */
svc_view *svc_view_take(brid *d, bool every_table);
/* Any thread. */
void svc_view_free(svc_view *v);
/* The table registered under its canonical root, or NULL. */
const svc_table_view *svc_view_table(const svc_view *v, const char *root);
/* Whether path (canonical) lies inside a configured root. */
bool svc_view_under_root(const svc_view *v, const char *path);

#endif
