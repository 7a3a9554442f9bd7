-- schema_sqlite.sql: the SQLite job store's schema, as the migrations that
-- build it (daemon/jobs/store.c runs them; the build embeds this file).
-- "-- version N:" starts the script that takes a store from version N - 1
-- to N (PRAGMA user_version); each runs in one transaction with the bump,
-- foreign keys off and checked before the commit. A script, once released,
-- is never edited: a change is a new version.

-- version 1: times are ms since the epoch; versions and byte counts are
-- INTEGER (int64: Lance versions and sizes never reach 2^63). The two
-- partial unique indexes are the queue's invariants; CHECKs pin the enums
-- and tie owner to "running" and finished_at to the terminal states. The
-- application_id is "brid" (BRI_JOBS_APPLICATION_ID).
CREATE TABLE tables (
  id INTEGER PRIMARY KEY,
  root TEXT NOT NULL UNIQUE CHECK (length(root) > 0),
  paused INTEGER NOT NULL DEFAULT 0 CHECK (paused IN (0, 1)),
  last_seen_version INTEGER CHECK (last_seen_version >= 0),
  last_error TEXT,
  last_error_at INTEGER,
  last_compaction_at INTEGER,
  last_cleanup_at INTEGER,
  created_at INTEGER NOT NULL
);
CREATE TABLE jobs (
  id INTEGER PRIMARY KEY AUTOINCREMENT, -- ids are never reused after pruning
  table_id INTEGER NOT NULL REFERENCES tables(id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('compact', 'cleanup', 'materialize', 'verify')),
  state TEXT NOT NULL
    CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
  priority INTEGER NOT NULL DEFAULT 0,
  attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  max_attempts INTEGER NOT NULL CHECK (max_attempts >= 1),
  cancel_requested INTEGER NOT NULL DEFAULT 0 CHECK (cancel_requested IN (0, 1)),
  not_before INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  started_at INTEGER,
  finished_at INTEGER,
  owner TEXT,
  params TEXT,
  result TEXT,
  error TEXT,
  commit_uuid TEXT,
  commit_read_version INTEGER,
  bytes_written INTEGER NOT NULL DEFAULT 0,
  bytes_reused INTEGER NOT NULL DEFAULT 0,
  CHECK ((state = 'running') = (owner IS NOT NULL)),
  CHECK ((state IN ('succeeded', 'failed', 'cancelled')) = (finished_at IS NOT NULL))
);
CREATE UNIQUE INDEX jobs_one_running_per_table ON jobs(table_id)
  WHERE state = 'running';
CREATE UNIQUE INDEX jobs_one_queued_per_kind ON jobs(table_id, kind)
  WHERE state = 'queued';
CREATE INDEX jobs_queue ON jobs(priority DESC, not_before, id) WHERE state = 'queued';
CREATE INDEX jobs_by_table ON jobs(table_id, id);
CREATE INDEX jobs_by_finish ON jobs(finished_at) WHERE finished_at IS NOT NULL;
CREATE TABLE job_attempts (
  job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  attempt INTEGER NOT NULL CHECK (attempt >= 1),
  owner TEXT NOT NULL,
  started_at INTEGER NOT NULL,
  finished_at INTEGER,
  outcome TEXT
    CHECK (outcome IN ('succeeded', 'failed', 'cancelled', 'retried', 'crashed')),
  error TEXT,
  PRIMARY KEY (job_id, attempt)
) WITHOUT ROWID;
CREATE TABLE job_outputs (
  seq INTEGER PRIMARY KEY,
  job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  path TEXT NOT NULL CHECK (length(path) > 0),
  kind TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  UNIQUE (job_id, path)
);
CREATE TABLE job_stats (
  table_id INTEGER NOT NULL REFERENCES tables(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,
  succeeded INTEGER NOT NULL DEFAULT 0,
  failed INTEGER NOT NULL DEFAULT 0,
  cancelled INTEGER NOT NULL DEFAULT 0,
  retried INTEGER NOT NULL DEFAULT 0,
  crashed INTEGER NOT NULL DEFAULT 0,
  run_ms INTEGER NOT NULL DEFAULT 0,
  bytes_written INTEGER NOT NULL DEFAULT 0,
  bytes_reused INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (table_id, kind)
) WITHOUT ROWID;
PRAGMA application_id = 1651665252;

-- version 2: a queued job is unique per request, not per kind. Two queued
-- jobs of one kind for a table are fine when they ask for different things
-- (a dry run and a real cleanup); identical requests are one job. "The
-- request" is the job's params without "trigger" (what asked for it), in
-- the canonical text enqueue stores (keys sorted, compact), which
-- json_remove keeps canonical. A version 1 store holds at most one queued
-- job per kind, so the new index cannot fail on it.
DROP INDEX jobs_one_queued_per_kind;
CREATE UNIQUE INDEX jobs_one_queued_per_request ON jobs(table_id, kind,
  json_remove(coalesce(params, '{}'), '$.trigger')) WHERE state = 'queued';

-- version 3: the kinds of job are the program's (daemon/rpc/rpc_kinds.h),
-- not the schema's: a new kind must not need a new schema, and stores
-- shared by brids of two versions hold kinds one of them does not know.
-- SQLite cannot drop a CHECK, so jobs is rebuilt (SQLite's documented
-- way: a new table, the rows copied, the old one dropped, the new one
-- renamed; the tables that reference jobs(id) then reference it). The
-- AUTOINCREMENT counter moves with the rows: ids stay never reused.
CREATE TABLE jobs_v3 (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  table_id INTEGER NOT NULL REFERENCES tables(id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (length(kind) > 0),
  state TEXT NOT NULL
    CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
  priority INTEGER NOT NULL DEFAULT 0,
  attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  max_attempts INTEGER NOT NULL CHECK (max_attempts >= 1),
  cancel_requested INTEGER NOT NULL DEFAULT 0 CHECK (cancel_requested IN (0, 1)),
  not_before INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  started_at INTEGER,
  finished_at INTEGER,
  owner TEXT,
  params TEXT,
  result TEXT,
  error TEXT,
  commit_uuid TEXT,
  commit_read_version INTEGER,
  bytes_written INTEGER NOT NULL DEFAULT 0,
  bytes_reused INTEGER NOT NULL DEFAULT 0,
  CHECK ((state = 'running') = (owner IS NOT NULL)),
  CHECK ((state IN ('succeeded', 'failed', 'cancelled')) = (finished_at IS NOT NULL))
);
INSERT INTO jobs_v3 SELECT * FROM jobs;
DELETE FROM sqlite_sequence WHERE name = 'jobs_v3';
UPDATE sqlite_sequence SET name = 'jobs_v3' WHERE name = 'jobs';
DROP TABLE jobs;
ALTER TABLE jobs_v3 RENAME TO jobs;
CREATE UNIQUE INDEX jobs_one_running_per_table ON jobs(table_id)
  WHERE state = 'running';
CREATE UNIQUE INDEX jobs_one_queued_per_request ON jobs(table_id, kind,
  json_remove(coalesce(params, '{}'), '$.trigger')) WHERE state = 'queued';
CREATE INDEX jobs_queue ON jobs(priority DESC, not_before, id) WHERE state = 'queued';
CREATE INDEX jobs_by_table ON jobs(table_id, id);
CREATE INDEX jobs_by_finish ON jobs(finished_at) WHERE finished_at IS NOT NULL;

-- version 4: several brids on one store (docs/cluster.md). An instance is a
-- running brid: it registers under its name, heartbeats, and marks itself
-- stopped on a clean exit. locality says where its pid means something (the
-- machine's boot id and the pid namespace): a brid starting there may see
-- that pid gone and recover the dead instance's jobs at once. A running job holds its table's lease until
-- lease_expires_at; its owner (the session that claimed it) renews the
-- lease while the job runs, and any instance may recover the job once the
-- lease has expired. instance names the brid that claimed a job (kept after
-- the job ends, for the history), as on each attempt.
CREATE TABLE instances (
  name TEXT PRIMARY KEY CHECK (length(name) > 0),
  session TEXT NOT NULL,
  host TEXT NOT NULL,
  pid INTEGER NOT NULL,
  locality TEXT NOT NULL,
  version TEXT NOT NULL,
  started_at INTEGER NOT NULL,
  heartbeat_at INTEGER NOT NULL,
  stopped_at INTEGER
);
ALTER TABLE jobs ADD COLUMN lease_expires_at INTEGER;
ALTER TABLE jobs ADD COLUMN instance TEXT;
ALTER TABLE job_attempts ADD COLUMN instance TEXT;
UPDATE jobs SET lease_expires_at = 0 WHERE state = 'running';

-- version 5: the scheduler asks after every claim when the next queued job
-- falls due (bri_jobs_next_due); with thousands of due jobs queued at once
-- (a sweep of many small tables) that query walked them all. This index
-- answers it from the first queued job past the claim's time.
CREATE INDEX jobs_due ON jobs(not_before) WHERE state = 'queued';
