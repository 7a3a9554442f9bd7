/* svc_config.h: brid's configuration: built-in defaults, an optional INI
 * file (util/ini.h), command-line overrides, and the per-table policy.
 *
 * Main design choice: one table of keys (name, section, type, where it is
 * stored) drives parsing, validation, the --check-config dump and the
 * documentation check in the tests, so a key cannot be parsed but left
 * undocumented or vice versa. Sections:
 *   [daemon]          process settings (roots, socket, state, workers, timers)
 *   [defaults]        the policy every table starts from
 *   [table PATH]      policy overrides for one table (PATH absolute or an
 *                     object-store URI; a path with * ? [ is an fnmatch(3)
 *                     pattern over table roots); sections apply in file
 *                     order, later ones win
 *   [root URI]        settings of one object-store root (s3://, az://):
 *                     poll_interval, request limits, and the settings
 *                     its backend takes (bri_store_setting_names: S3's
 *                     endpoint, region, credentials; Azure's account,
 *                     endpoint, key or SAS...), a secret read from a file
 *                     (NAME_file) or a systemd credential
 *                     (NAME_credential), never written in brid.conf
 * Keys before any section belong to [daemon]. Unknown sections and keys are
 * errors (a typo must not silently fall back to a default). The
 * configuration is immutable once loaded: a reload builds a new one and
 * swaps it in whole. */
#ifndef BRI_SVC_CONFIG_H
#define BRI_SVC_CONFIG_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "bri/compact.h"
#include "bri/error.h"
#include "bri/ops.h"

/* What brid does with one table. */
typedef struct svc_policy {
  bri_strategy strategy;       /* blob reuse strategy of compactions */
  bool auto_compact;           /* enqueue compactions when the planner finds work */
  bool paused;                 /* no job of this table is started */
  int64_t debounce_sec;        /* -1: the daemon's debounce */
  int64_t max_delay_sec;       /* commits are checked at the latest this long after the first (0: no limit) */
  uint64_t max_new_fragments;  /* a compaction once this many new small fragments wait (0: no count trigger) */
  bri_compact_options compact; /* planner thresholds and per-job budgets */
  uint64_t batch_rows;         /* rows decoded per batch (0: the library's) */
  int min_reader;              /* the oldest Lance (major version) reading the table, as the
                                  operator declares it; 0: not declared. From 14 on, auto
                                  switches plain Blob v2 tables to Managed blobs */
  int64_t cleanup_interval_sec; /* 0: no scheduled cleanup */
  bri_cleanup_policy cleanup;  /* retention of scheduled cleanups */
} svc_policy;

typedef struct svc_table_section {
  char *pattern;   /* as written */
  char *canonical; /* a plain path's or URI's bri_store_location; NULL for a glob */
  bool is_glob;
  uint64_t set;    /* bit i: policy key i is set in this section */
  svc_policy p;
  size_t header; /* the line of its header in the file */
} svc_table_section;

/* One setting of a root's store, by its backend's name
 * (bri_store_setting_names): a plain one as written, a secret read at load
 * from the file or systemd credential the configuration names. */
typedef struct svc_root_setting {
  char *name;
  char *value;            /* a secret's text once read (never shown) */
  char *file, *credential; /* secrets: NAME_file or NAME_credential */
} svc_root_setting;

/* Settings of one object-store root ([root URI]; roots without a section
 * take the defaults: the environment's endpoint and credentials, as the
 * store's own tools take them). */
typedef struct svc_root {
  char *uri; /* the root's canonical name (bri_store_location) */
  size_t header; /* the line of its header in the file */
  svc_root_setting *settings; /* the backend's settings, in file order */
  size_t n_settings;
  int64_t poll_interval_sec;      /* a LIST of each table's _versions/ this often */
  double max_requests_per_second; /* 0: no limit */
  int max_requests_in_flight;
} svc_root;

typedef struct svc_config {
  char *file; /* the INI file read, or NULL (built-in defaults only) */
  char **roots;
  size_t n_roots;
  char *socket_path;
  unsigned socket_mode;
  char *socket_group; /* NULL: only brid's user (and root) may connect */
  gid_t socket_gid;   /* resolved from socket_group */
  char *readonly_socket; /* the read-only socket (default: rpc_readonly_socket of socket_path) */
  char *readonly_group;  /* NULL: any local user may use the read-only socket */
  gid_t readonly_gid;
  /* the job store brid opens: a SQLite file (state) or a PostgreSQL URI or
   * conninfo (store, docs/cluster.md), whichever was given */
  char *state_path;
  char *store_uri; /* store = URI as given; NULL when the store is a file */
  /* the PostgreSQL password: a file, or a systemd credential's name; read
   * at load into store_password (NULL: ~/.pgpass or no password) */
  char *store_password_file, *store_password_credential, *store_password;
  int workers;
  int64_t debounce_sec, sweep_sec, drain_sec;
  int discovery_depth;
  uint64_t max_request_bytes;
  int max_connections;
  int64_t request_timeout_sec; /* a started request line must be complete, a queued reply taken, within it */
  int64_t idle_timeout_sec;    /* a connection without a request for this long is closed */
  char *metrics_listen; /* "127.0.0.1:9851", "[::1]:0" (normalized); NULL: no HTTP listener */
  struct sockaddr_storage metrics_addr; /* metrics_listen parsed */
  socklen_t metrics_addrlen;
  int log_level;
  int max_attempts;
  int64_t retry_base_sec, retry_max_sec;
  int64_t history_max_age_sec;
  uint64_t history_max_rows;
  char *instance_name;   /* NULL: "HOST:PID" (docs/cluster.md) */
  int64_t lease_ttl_sec; /* a job's lease on its table without a heartbeat */
  svc_policy defaults;
  svc_table_section *sections;
  size_t n_sections;
  svc_root *root_settings;
  size_t n_root_settings;
} svc_config;

/* Command-line settings; they win over the file's. */
typedef struct svc_overrides {
  const char *config_file;
  const char **roots;
  size_t n_roots;
  const char *socket_path, *state_path, *store_uri, *log_level;
  const char *metrics_listen; /* ADDR:PORT or "off"; NULL: not given */
  int workers;          /* 0: not given */
  int64_t debounce_sec; /* -1: not given */
} svc_overrides;

#define SVC_DEFAULT_STATE "/var/lib/brid/jobs.db"
/* The default worker count: SVC_WORKERS_PER_CPU per CPU brid may run on
 * (its affinity mask), within [SVC_WORKERS_MIN, SVC_WORKERS_MAX]. A job
 * of a small table spends most of its time waiting for fsync (about 5 a
 * job, 0.7-1.2 ms each, against 2 ms of CPU), so four jobs per CPU keep
 * the CPUs busy; larger jobs wait on reads and copies the same way. The
 * cap bounds the I/O brid adds to a machine it shares (brid.conf(5)). */
#define SVC_WORKERS_PER_CPU 4
#define SVC_WORKERS_MIN 2
#define SVC_WORKERS_MAX 32
int svc_default_workers(void);

/* The triggers' defaults (svc_watch.h; brid.conf(5) says why): a table
 * whose writer never pauses for the debounce is checked at least every 5
 * minutes, and compacted once 32 new small fragments wait. */
#define SVC_DEFAULT_MAX_DELAY (5 * 60)
#define SVC_DEFAULT_MAX_NEW_FRAGMENTS 32

/* The built-in policy ([defaults] with no key set). */
void svc_policy_default(svc_policy *p);

/* Built-in defaults (no file). */
void svc_config_init(svc_config *c);
void svc_config_dispose(svc_config *c);

/* Builds a configuration: defaults, then ov->config_file if set, then the
 * overrides, then validation (group names resolved, ranges checked, at
 * least one root). On failure *c is left freed and err says which file,
 * line and key, and what was expected. */
int svc_config_load(svc_config *c, const svc_overrides *ov, bri_error *err);
/* The same with the file's len bytes given (text NULL: no file);
 * ov->config_file only names it. svc_config_load reads the file and calls
 * this, so a fuzzer feeding bytes here takes brid's one parsing path. */
int svc_config_load_text(svc_config *c, const svc_overrides *ov, const char *text, size_t len, bri_error *err);

/* What the store of a root or table location can do (BRI_STORE_CAP_*:
 * LOCAL files watched with INOTIFY, or an object store found changed by
 * POLL...), as libbri says; 0 for a location no backend takes. */
unsigned svc_location_caps(const char *location);
/* How brid names a location (malloc'd): an object store's canonical URI
 * (bri_store_location: "az://c/p" for every Azure form), a local path as
 * given (its real path is resolved where it is used: it may not exist
 * yet). NULL with err set for an invalid one. */
char *svc_location_name(const char *location, bri_error *err);
/* Whether path lies in root (both canonical; root itself included). */
bool svc_root_contains(const char *root, const char *path);
/* The settings of an object-store root: its [root] section, or the defaults. */
const svc_root *svc_config_root(const svc_config *c, const char *uri);

/* Hands the settings r of the object-store root to libbri
 * (bri_store_configure_root; check_only: only checks them). */
int svc_root_configure(const char *root, const svc_root *r, bool check_only, bri_error *err);

/* Hands c's roots to libbri: every root counts its storage traffic (the
 * metrics), and every object-store root gets its settings (its [root]
 * section's, bri_store_configure_root: endpoint, credentials,
 * limits; a client of its own). Any thread: touches no table, only
 * resolves local roots' real paths. Call before anything opens a table
 * under a root, and again for a reloaded configuration. */
int svc_config_register_roots(const svc_config *c, bri_error *err);
/* svc_config_load, then svc_config_register_roots: the configuration a
 * reload applies (SIGHUP and the reload method), read off the loop. On
 * error *c is left empty. */
int svc_config_load_roots(svc_config *c, const svc_overrides *ov, bri_error *err);

/* The policy of the table at root (canonical path). */
void svc_config_policy_for(const svc_config *c, const char *root, svc_policy *out);

json_t *svc_policy_to_json(const svc_policy *p);
/* Every setting, for --check-config and the status call. */
json_t *svc_config_to_json(const svc_config *c);

/* Key names of the documented keys ("daemon.socket", "policy.strategy"...),
 * NULL-terminated: the tests check config/brid.conf.example against it. */
const char *const *svc_config_key_names(void);

#endif
