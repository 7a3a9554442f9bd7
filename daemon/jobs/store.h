/* store.h: brid's job store, the only daemon state that survives a restart.
 *
 * One SQLite file (WAL mode), or one PostgreSQL database that several brids
 * share (docs/cluster.md; see bri_jobs_open), holds the watched tables, the
 * job queue, each job's attempts, each job's output journal and per-table
 * counters. SQLite's schema is versioned with PRAGMA user_version and identified with PRAGMA
 * application_id ("brid"); opening migrates an older file step by step
 * (the scripts of schema_sqlite.sql, built in) and refuses a newer one. The
 * schema names no kind of job: a kind is stored by its name, and the names
 * are rpc/rpc_kinds.h's. The store is split by concern:
 *   store.h    opening, options, kind and state names      (this file)
 *   tables.h   watched tables: root, paused flag, last seen version, errors
 *   queue.h    job state transitions: enqueue, claim, finish, retry, cancel
 *   history.h  read side: job lists, attempts, counts, metrics, pruning
 *   journal.h  each running job's output journal and commit intent
 *   recover.h  rolling back or finishing the jobs of a dead daemon
 *
 * Main design choice: one connection per process, shared by every thread and
 * serialized by a mutex held for the whole of each call (each call is one
 * short transaction, so contention is negligible next to the job work), and
 * one process per SQLite file: open takes an exclusive flock on
 * "<path>.lock", because two daemons on one store would each take the
 * other's running jobs for crashed ones and roll back files a live job is
 * about to commit. A PostgreSQL store takes no lock: its claim locks rows.
 *
 * Durability (SQLite; a PostgreSQL commit is durable when it returns):
 * synchronous=NORMAL (a commit survives a process crash, which
 * is what kill -9 tests; a power loss may undo the last commits), except the
 * two writes that must never be lost once the caller acts on them, whose
 * call returns only after an fdatasync of the WAL (made outside the store's
 * mutex, so that other calls do not wait behind it): a journal entry,
 * which must be on disk before the file it names is created, and a commit
 * intent, which must be on disk before the table commit it announces (the
 * sync covers every earlier WAL frame too, so the claim that preceded
 * a durable journal entry is durable with it). Every
 * other write that a power loss could undo is repaired by recovery (a lost
 * "succeeded" becomes a crashed job whose commit is found to have landed; a
 * lost journal removal is a second remove of a missing file).
 *
 * Times are milliseconds since the Unix epoch from the options' clock (the
 * real-time clock unless a test injects one); 0 means "not set". */
#ifndef BRI_JOBS_STORE_H
#define BRI_JOBS_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "bri/error.h"
#include "rpc/rpc_kinds.h" /* bri_job_kind: the kinds are described there */

#define BRI_JOBS_SCHEMA_VERSION 5 /* the last script of schema_sqlite.sql and schema_pg.sql */
#define BRI_JOBS_APPLICATION_ID 0x62726964 /* "brid" */

typedef struct bri_jobs_store bri_jobs_store;

typedef enum bri_job_state {
  BRI_JOB_QUEUED = 1,
  BRI_JOB_RUNNING = 2,
  BRI_JOB_SUCCEEDED = 3,
  BRI_JOB_FAILED = 4,
  BRI_JOB_CANCELLED = 5,
} bri_job_state;
#define BRI_JOB_NSTATES 5

/* A kind's or a state's name; "?" for a value outside the enum. */
const char *bri_job_kind_name(bri_job_kind k);
const char *bri_job_state_name(bri_job_state s);
/* Name to value; BRI_EINVAL (err names the accepted values) when unknown. */
int bri_job_kind_parse(const char *name, bri_job_kind *out, bri_error *err);
int bri_job_state_parse(const char *name, bri_job_state *out, bri_error *err);

typedef struct bri_jobs_options {
  int busy_timeout_ms;   /* SQLite busy timeout; default 5000 */
  int max_attempts;      /* attempts a new job gets before it fails; default 5 */
  int64_t retry_base_ms; /* first retry delay; default 30 s */
  int64_t retry_max_ms;  /* cap of the doubling delay; default 1 h */
  /* This brid's instance name, written on the jobs it claims and in the
   * instances table (NULL: the session id). */
  const char *instance;
  /* How long a claim holds its table without a renewal; default 30 s. */
  int64_t lease_ttl_ms;
  /* Clock in ms since the epoch; NULL = CLOCK_REALTIME. Tests inject one. */
  int64_t (*clock_ms)(void *user);
  void *clock_user;
  /* PostgreSQL: the password libpq sends, or NULL (then libpq's own
   * ~/.pgpass / PGPASSFILE or a trust/peer login); copied by open, never
   * printed. A password inside the path is refused. */
  const char *password;
  /* A read connection: opened beside the store this process already opened
   * on the same path (which created and migrated it), for the control
   * reads (status, jobs, metrics), so that they never wait behind a
   * worker's commit. No lock file, no migration, no recovery; every write
   * is refused by the database (SQLite: opened read-only; PostgreSQL:
   * read-only transactions). The schema must be this brid's. */
  int read_only;
} bri_jobs_options;

void bri_jobs_options_init(bri_jobs_options *o);

/* Opens (creating if missing) the store at path, with opt or the defaults
 * when opt is NULL.
 *
 * The backend: path is a PostgreSQL store when it starts with
 * "postgresql://" or "postgres://" (a libpq URI) or is a libpq conninfo
 * ("host=... dbname=...": it contains '=' before any '/'); otherwise it
 * is a SQLite file. A PostgreSQL store takes no lock (several brids share
 * one); it starts at schema version 4, versioned in the one-row table
 * brid_schema, and migrates under a transaction-scoped advisory lock. Its
 * refusals: a password in path (BRI_EINVAL: use opt->password or
 * ~/.pgpass), a database with tables but no brid_schema (BRI_EINVAL), a
 * newer version (BRI_EUNSUPPORTED), an unreachable server (BRI_EIO). Once
 * open, a lost connection fails the call that met it with BRI_EIO and is
 * retried by later calls (at most once a second, backing off to 30 s);
 * bri_jobs_health tells.
 *
 * SQLite: Refuses: a file another process holds open (BRI_EIO, the
 * lock file named), a file that is not SQLite or fails SQLite's quick check
 * (BRI_ECORRUPT), a SQLite file that is not a brid job store (BRI_EINVAL), a
 * schema version newer than BRI_JOBS_SCHEMA_VERSION (BRI_EUNSUPPORTED), a
 * filesystem where WAL mode cannot be enabled (BRI_EIO). Each open starts a
 * new session: jobs this store claims are owned by it, and a job left
 * running by an earlier session is a crashed one (see recover.h). */
int bri_jobs_open(const char *path, const bri_jobs_options *opt, bri_jobs_store **out,
                  bri_error *err);

/* Closes the connection (checkpointing the WAL) and releases the lock.
 * Jobs still running stay "running" in the file: to the next session they
 * are crashed jobs, which is what a close without finishing simulates. */
void bri_jobs_close(bri_jobs_store *s);

const char *bri_jobs_path(const bri_jobs_store *s);
/* "SQLite" or "PostgreSQL". */
const char *bri_jobs_backend(const bri_jobs_store *s);
/* 1 when the store is reachable, 0 when its last connection attempt or
 * call failed on the connection (PostgreSQL down or unreachable: the
 * daemon is degraded). last_error (cap bytes, may be 0) gets that failure's
 * message, "" when none. */
int bri_jobs_health(bri_jobs_store *s, char *last_error, size_t cap);
/* This open's session id (the owner written on the jobs it claims). */
const char *bri_jobs_session(const bri_jobs_store *s);
/* This brid's instance name (the options', else the session id). */
const char *bri_jobs_instance(const bri_jobs_store *s);
/* 1 when no other process can have this store open (SQLite's lock file):
 * a job running under another session is then interrupted for sure,
 * whatever its lease says; 0 for a store several brids share. */
int bri_jobs_exclusive(const bri_jobs_store *s);
/* The lease a claim takes, in ms (the options' lease_ttl_ms). */
int64_t bri_jobs_lease_ttl_ms(const bri_jobs_store *s);
/* Statements this store ran so far, transactions' begins and ends
 * included: its round trips to the database. Any thread. */
uint64_t bri_jobs_statements(bri_jobs_store *s);
/* The store's clock, ms since the epoch. */
int64_t bri_jobs_now(bri_jobs_store *s);

#endif
