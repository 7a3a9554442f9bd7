/* svc_state.h: the state brid's modules share, owned by the loop thread,
 * and the few ways a lower layer tells a higher one something.
 *
 * Main design choice (libuv's): the loop thread owns every handle (the
 * control socket, the fs watches, the timers, the signal handlers) and all
 * of this structure except what svc_worker.h says; worker threads run
 * library calls and talk back only through uv_async_send. The loop never
 * waits on a disk: every job store call (SQLite, which may wait on an
 * fsync another thread's durable write holds), directory walk and file
 * read runs on libuv's thread pool, with a copy of the state it needs
 * (svc_view.h), and comes back to the loop in its done callback; only
 * start-up (before READY) and shutdown touch the disk on this thread. The
 * job store is thread-safe on its own.
 *
 * brid's modules are layers, lowest first, each calling only the layers
 * below it (docs/architecture.md, checked by scripts/check-layers.sh):
 * the leaves (configuration, log, notify, kinds, request checks, the
 * planner check), this state, execution (the worker pool), the sources of
 * work (roots, poll, watch, lease), scheduling, the interfaces (view,
 * metrics, api, control, http) and lifecycle. Where a lower layer must
 * tell a higher one something (work queued, status changed, ready, fatal,
 * idle), it calls a hook here that the higher layer installed (as libuv's
 * loop asks no subsystem: the drain waits on one busy count), and
 * lifecycle starts and stops the modules through one table of
 * brid_module (as nginx drives its modules through ngx_module_t).
 * Failpoints (crash and fault injection for the tests) are libbri's
 * (util/failpoint.h), armed through BRI_FAILPOINTS for brid as for brictl. */
#ifndef BRI_SVC_STATE_H
#define BRI_SVC_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "bri/util.h"
#include "brid/1_leaves/svc_check.h"
#include "brid/1_leaves/svc_config.h"
#include "jobs/jobs.h"

#define BRID_VERSION BRI_VERSION /* the Makefile's VERSION */

typedef struct brid brid;
typedef struct svc_pool svc_pool;
typedef struct svc_control svc_control;
typedef struct svc_http svc_http;
typedef struct svc_lease svc_lease;

/* One watched table. Never freed while the daemon runs (a table that
 * disappears is only marked absent and unwatched), so callbacks and
 * in-flight checks can hold a pointer to it. */
typedef struct brid_table {
  brid *d;
  char *root;       /* canonical (bri_store_location) */
  int64_t id;       /* job store id */
  svc_policy policy;
  bool present;     /* found by the latest discovery */
  bool found;       /* during a discovery: passed by this walk */
  bool watching;    /* ev started */
  uv_fs_event_t ev; /* on root/_versions */
  uv_timer_t debounce;
  /* planner checks (svc_watch.c): one runs at a time; a request meanwhile
   * is kept (again) and made when it ends, a QUIET one if any was asked
   * (quiet), else a COUNT one */
  bool check_running, check_again, check_again_force, check_again_quiet;
  bool check_waiting, check_waiting_force, check_waiting_quiet; /* in d's queue of checks waiting for a slot */
  struct brid_table *check_next;           /* the next one in that queue */
  bool has_latest;
  uint64_t latest_version;
  bool loaded; /* fragments and has_work are known (a manifest was read) */
  uint64_t fragments;
  bool has_work;
  bool has_seen;
  uint64_t seen_version; /* mirrors the store's last seen version */
  int64_t last_check_ms, last_event_ms;
  int64_t pending_ms;    /* the first commit since the last QUIET check began (0: none): max_delay */
  uint64_t new_after;    /* fragments with a larger id are new to the COUNT trigger (0 until planned) */
  bool job_running;      /* a worker runs a job of it (its commits are brid's own) */
  bool busy;             /* polled: seen moving, looked at every SVC_BUSY_POLL_MS (svc_poll.c) */
  int64_t busy_moved_ms; /* ... until SVC_BUSY_IDLE_MS after it was last seen moving */
  uint64_t job_event_version; /* the newest version a commit event named while it ran */
  char *check_error;
  bool check_unsupported; /* check_error is a refusal: a table brid will not act on (BRI_EUNSUPPORTED) */
  /* tables under an S3 root: polled, not watched (svc_poll.c) */
  bool s3;
  bool has_polled;
  uint64_t polled_version; /* the latest version the last poll saw */
  /* scheduling (svc_sched.c) */
  int64_t cleanup_enqueued_ms;
  bool paused_by_config;
  bool checked; /* a planner check of it ended (or it went away) since it was registered */
  /* its root is known to be unreachable: svc_roots.c keeps it when a root's
   * state changes, svc_watch.c sets it when it registers the table */
  bool root_unreachable;
} brid_table;

/* A directory under a root that is not a table, watched so that tables
 * created below it are found without waiting for the sweep. */
typedef struct brid_dirwatch {
  brid *d;
  char *path;
  bool present;  /* passed by the latest discovery */
  bool watching; /* ev started */
  uv_fs_event_t ev;
} brid_dirwatch;

/* The poll timer of an S3 root (svc_poll.c). Never freed while the
 * daemon runs (a root removed by a reload is only stopped). */
typedef struct brid_poll {
  brid *d;
  char *root;
  uv_timer_t timer;
  bool configured; /* a root of the running configuration */
  bool running;    /* a poll (a discovery of this root) is in flight */
  uint64_t n_polls, n_failures;
} brid_poll;

/* Whether a configured root can be reached (svc_roots.c). Never freed while
 * the daemon runs (a root removed by a reload is only no longer
 * configured). */
typedef struct brid_root {
  char *uri;   /* as configured */
  char *canon; /* its canonical form when last listed (local: its real path), or NULL */
  bool configured;
  bool known; /* listed, or failed to be, at least once */
  bool up;
  int64_t last_ok_ms, last_error_ms, down_since_ms, reminded_ms;
  uint64_t failures; /* consecutive failed listings */
  char *last_error;  /* of the last failed listing */
  brid *d;
  uv_timer_t retry; /* a local root while unreachable: listed again every SVC_ROOT_RETRY_MS */
  bool retrying;    /* such a listing is in flight */
} brid_root;

/* Whether the job store answers, as the heartbeats found (svc_lease.c
 * publishes it after each one). */
typedef struct svc_store_health {
  bool up;                 /* the last heartbeat went through */
  int64_t last_ok_ms;      /* wall clock of the last one that did, 0 if none */
  int64_t down_since_ms;   /* while down: the first failure */
  uint64_t failures;       /* consecutive failed heartbeats */
  char last_error[sizeof(((bri_error *)0)->msg)]; /* of the last failure, "" if none */
} svc_store_health;

/* How a lower layer tells a higher one something: each hook is installed
 * by the module that owns the reaction (named beside it) when it starts,
 * and called through svc_state_* below; one not installed (yet) does
 * nothing. */
typedef void (*svc_discovered_fn)(void *user, int rc, const bri_error *err);
typedef struct brid_hooks {
  void (*work_queued)(brid *d);                /* jobs may wait for a worker: claim (svc_sched.c) */
  void (*status_changed)(brid *d, bool force); /* STATUS= may be stale (svc_sched.c) */
  void (*tables_changed)(brid *d);             /* tables or policies changed: the cleanup schedule (svc_sched.c) */
  void (*swept)(brid *d);                      /* a sweep ran: the cleanup schedule, history pruning (svc_sched.c) */
  void (*table_checked)(brid_table *t, const svc_check *c); /* a check ended off the loop (svc_watch.c) */
  void (*job_ended)(brid_table *t);            /* a worker finished a job of t (svc_watch.c) */
  /* list one root now, done(user, ...) when listed (a poll, a root's retry; svc_watch.c) */
  void (*discover_root)(brid *d, const char *root, svc_discovered_fn done, void *user);
  void (*count_check)(brid_table *t);          /* a busy polled table: a COUNT check (svc_watch.c) */
  void (*ready)(brid *d);                      /* the start-up discovery ended (svc_daemon.c) */
  void (*fatal)(brid *d);                      /* brid cannot go on: drain and exit 1 (svc_daemon.c) */
  void (*idle)(brid *d);                       /* the busy count fell to zero (svc_daemon.c) */
  /* the reload method's configuration, read off the loop, applied on it (svc_daemon.c) */
  int (*reload_apply)(brid *d, int rc, svc_config *loaded, const bri_error *err, json_t **changes);
} brid_hooks;

struct brid {
  uv_loop_t loop;
  svc_config cfg;
  svc_overrides ov;
  bri_jobs_store *store;
  /* a read connection to the same store for the control reads (status,
   * jobs, tables, metrics: rpc_method_reads_only), so that they do not
   * wait behind a worker's commit; NULL when it could not be opened (then
   * those read through store) */
  bri_jobs_store *reader;

  brid_table **tables;
  size_t n_tables, cap_tables;
  bri_strmap by_root; /* root -> index in tables (value a) */
  brid_dirwatch **dirs;
  size_t n_dirs, cap_dirs;
  bri_strmap dir_index;
  bool discovering, discover_again; /* svc_watch.c: one discovery at a time */
  struct svc_discovery *streaming;  /* that discovery: the loop registers its tables batch by batch */
  uv_async_t discovery_async;       /* its walk has a batch for the loop */
  int64_t discovered_ms;            /* the start-up discovery of the local roots ended (wall clock) */
  int64_t first_sweep_ms;           /* and every table it found was checked once */
  size_t n_unchecked;               /* registered tables with no check ended yet */
  bool watch_failing;               /* a table watch failed (logged once until one succeeds) */
  char watch_error[160];            /* why the last one failed */
  brid_poll **polls;                /* svc_poll.c: S3 roots */
  size_t n_polls, polls_inflight;
  brid_table **busy;                /* svc_poll.c: polled tables seen moving */
  size_t n_busy, cap_busy;
  uv_timer_t busy_timer;            /* looks at them between the root's polls */
  bool busy_timer_init;
  brid_root **root_states;          /* svc_roots.c: every root's reachability, the configured ones first
                                     * in the configuration's order */
  size_t n_root_states;
  bool claiming, kick_again;        /* svc_sched.c: one claim at a time */
  bool ticking, tick_again;         /* svc_sched.c: one cleanup tick at a time */
  bool status_running, status_again; /* svc_sched.c: a STATUS= count in flight, a forced one after it */
  struct disc_waiter *discover_waiting;

  uv_timer_t sweep_timer, rescan_timer, cleanup_timer, sched_timer, watchdog_timer, drain_timer;
  uv_signal_t sig_term, sig_int, sig_hup;
  svc_pool *pool;
  svc_lease *lease; /* the heartbeat thread (svc_lease.h) */
  svc_store_health store_health; /* the job store's, as the last heartbeat found (svc_lease.c publishes it) */
  svc_control *ctl;
  svc_http *http; /* NULL: metrics_listen off */
  size_t connections; /* control connections open (svc_control.c publishes it) */
  char *http_address; /* the HTTP listener's bound address, or NULL (svc_http.c publishes it) */
  size_t in_flight;   /* work the drain waits for (svc_state_busy_begin) */
  brid_hooks hooks;   /* what the layers above installed (svc_state.h) */

  int64_t started_ms; /* wall clock, ms */
  bool draining;      /* SIGTERM received: no new job starts */
  int64_t draining_ms;  /* wall clock when the drain began */
  bool drain_cancelled; /* the drain deadline passed and running jobs were asked to stop */
  bool handles_closed;
  int exit_code;
  size_t checks_inflight;
  brid_table *checks_head, *checks_tail; /* checks waiting for one of SVC_CHECKS_MAX slots (svc_watch.c) */
  size_t checks_waiting;
  int64_t last_reload_ms;
  char *last_reload_error;
  uint64_t watchdog_usec;

  /* counters for metrics */
  uint64_t n_triggers[3]; /* compactions queued by checks, by svc_trigger (svc_watch.h) */
  uint64_t n_fs_events, n_checks, n_requests, n_request_errors, n_peers_refused,
      n_connections_refused, n_sweeps, n_check_errors;
};

/* A module as lifecycle drives it (svc_daemon.c's table, in start-up
 * order; it closes and frees in the reverse order). Any hook may be NULL. */
typedef struct brid_module {
  const char *name;
  int (*prepare)(brid *d, bri_error *err); /* before the loop exists, the job store open: may refuse to start */
  int (*start)(brid *d, bri_error *err); /* start-up; installs the module's hooks */
  void (*apply_config)(brid *d);         /* a reload's configuration is in d->cfg */
  void (*drain)(brid *d);                /* the drain began: no new work */
  void (*close)(brid *d);                /* the loop ends: threads joined, handles closed */
  void (*dispose)(brid *d);              /* after the loop: the module's memory */
} brid_module;

/* The registered table whose canonical root is root, or NULL. */
brid_table *svc_state_table(const brid *d, const char *root);

/* The connection the control reads go through: the read connection, or the
 * store's own when that could not be opened. */
bri_jobs_store *svc_state_reads(const brid *d);

/* The drain's one count: work in flight (a running job, a planner check, a
 * claim, a discovery, a poll). Each begin is paired with one end; the end
 * that brings the count to zero calls the idle hook. */
void svc_state_busy_begin(brid *d);
void svc_state_busy_end(brid *d);

/* The hooks, called where the event happens. */
void svc_state_work_queued(brid *d);
void svc_state_status_changed(brid *d, bool force);
void svc_state_tables_changed(brid *d);
void svc_state_swept(brid *d);
void svc_state_table_checked(brid_table *t, const svc_check *c);
void svc_state_job_ended(brid_table *t);
void svc_state_discover_root(brid *d, const char *root, svc_discovered_fn done, void *user);
void svc_state_count_check(brid_table *t);
void svc_state_ready(brid *d);
void svc_state_fatal(brid *d);
/* A configuration read off the loop (rc its result, err its error) is
 * applied: on error the running configuration stays and the error is
 * recorded for status. *loaded is taken. *changes (may be NULL) describes
 * what changed. */
int svc_state_reload_apply(brid *d, int rc, svc_config *loaded, const bri_error *err, json_t **changes);

#endif
