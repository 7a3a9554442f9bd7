/* sqlite.c: the SQLite backend of the job store, its driver: the lock file
 * (one process per store), the connection, identity and version checks, WAL,
 * the migrations of schema_sqlite.sql, and the statement interface the rest
 * of daemon/jobs speaks (internal.h), each failure a bri_error naming the
 * file, the step and the SQL.
 *
 * Migrations are the scripts of schema_sqlite.sql, built in, walked by the
 * shared runner (migrate.c): script N takes user_version N - 1 to N and
 * runs in one transaction together with the user_version bump, so a crash
 * mid-migration leaves the previous version intact. A file whose user_version is newer than the last script is
 * refused untouched. */
#include "jobs/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "bri/util.h"

/* The schema: migration scripts, one per version (schema_sqlite.sql). */
#include "jobs/schema_sqlite.sql.h"

/* The tables a store must have, each from the schema version that made it. */
static const struct {
  const char *name;
  int since;
} REQUIRED_TABLES[] = {{"tables", 1},    {"jobs", 1},      {"job_attempts", 1},
                       {"job_outputs", 1}, {"job_stats", 1}, {"instances", 4}};

/* A statement: the driver header, then SQLite's; cached ones live in the
 * connection's cache and are lent out, never freed, by sq_prepare. */
typedef struct sqlite_stmt {
  jobs_stmt base;
  sqlite3_stmt *st;
  int cached; /* an entry of the statement cache */
  int in_use; /* cached: lent out by sq_prepare, not yet given back */
} sqlite_stmt;

/* The statement cache: every statement the queue's code prepares is kept,
 * prepared, keyed by its SQL text, and lent out again by the next prepare
 * of the same text (reset, bindings cleared), so that a job's dozen
 * statements are parsed once per connection rather than once per job. The
 * SQL texts are the literals of daemon/jobs plus a few dozen variants built
 * from filters; past CACHE_SLOTS / 2 distinct texts the rest are prepared
 * and finalized each time, as before. A statement already lent out (a
 * query nested in another's rows) is prepared afresh. */
#define CACHE_SLOTS 128

/* The driver's connection state (s->conn). */
typedef struct sqlite_conn {
  sqlite3 *db;
  int lock_fd;
  int wal_fd; /* the WAL, opened by us for sq_make_durable (-1: none) */
  int last_rc; /* extended code of the last failure sq_sqlerr saw */
  size_t n_cached;
  sqlite_stmt cache[CACHE_SLOTS]; /* open addressing on the SQL's hash */
} sqlite_conn;

static sqlite_conn *conn(bri_jobs_store *s) { return s->conn; }

struct sqlite3 *jobs_sqlite_db(bri_jobs_store *s) {
  return s->drv == &jobs_sqlite_driver && s->conn ? conn(s)->db : NULL;
}

static int map_sqlite(int rc) {
  switch (rc & 0xff) {
  case SQLITE_CORRUPT:
  case SQLITE_NOTADB: return BRI_ECORRUPT;
  case SQLITE_NOMEM: return BRI_ENOMEM;
  case SQLITE_CONSTRAINT: return BRI_EINVAL;
  default: return BRI_EIO;
  }
}

static int sq_sqlerr(bri_jobs_store *s, const char *sql, const char *step, bri_error *err) {
  int rc = sqlite3_extended_errcode(conn(s)->db);
  conn(s)->last_rc = rc;
  char abbr[72];
  jobs_abbreviate_sql(sql, abbr, sizeof abbr);
  return bri_error_set(err, map_sqlite(rc), "%s: %s (%s): %s (SQLite error %d)", s->path, step,
                       abbr, sqlite3_errmsg(conn(s)->db), rc);
}

static sqlite3_stmt *native(jobs_stmt *st) { return ((sqlite_stmt *)st)->st; }

static int prepare(bri_jobs_store *s, const char *sql, sqlite3_stmt **st, const char *step,
                   bri_error *err) {
  *st = NULL;
  if (sqlite3_prepare_v2(conn(s)->db, sql, -1, st, NULL) != SQLITE_OK) {
    sqlite3_finalize(*st);
    *st = NULL;
    return sq_sqlerr(s, sql, step, err);
  }
  return 0;
}

static int step_native(bri_jobs_store *s, sqlite3_stmt *st, const char *step, bri_error *err) {
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) return 1;
  if (rc == SQLITE_DONE) return 0;
  return sq_sqlerr(s, sqlite3_sql(st), step, err);
}

/* FNV-1a of the SQL text. */
static size_t sql_hash(const char *sql) {
  uint64_t h = 1469598103934665603ull;
  for (const unsigned char *p = (const unsigned char *)sql; *p; p++) h = (h ^ *p) * 1099511628211ull;
  return (size_t)h;
}

/* The cache slot holding sql, or the empty slot where it would go (its
 * st NULL); NULL when the cache is full and sql is not in it. */
static sqlite_stmt *cache_slot(sqlite_conn *c, const char *sql) {
  for (size_t i = 0, h = sql_hash(sql); i < CACHE_SLOTS; i++) {
    sqlite_stmt *e = &c->cache[(h + i) % CACHE_SLOTS];
    if (!e->st) return c->n_cached < CACHE_SLOTS / 2 ? e : NULL;
    if (strcmp(sqlite3_sql(e->st), sql) == 0) return e;
  }
  return NULL;
}

static int sq_prepare(bri_jobs_store *s, const char *sql, jobs_stmt **st, const char *step,
                      bri_error *err) {
  *st = NULL;
  sqlite_conn *c = conn(s);
  sqlite_stmt *e = cache_slot(c, sql);
  if (e && !e->st) {
    if (sqlite3_prepare_v3(c->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &e->st, NULL) != SQLITE_OK) {
      sqlite3_finalize(e->st);
      e->st = NULL;
      return sq_sqlerr(s, sql, step, err);
    }
    e->base.drv = &jobs_sqlite_driver;
    e->cached = 1;
    c->n_cached++;
  }
  if (e && !e->in_use) {
    e->in_use = 1;
    *st = &e->base;
    return 0;
  }
  sqlite_stmt *w = malloc(sizeof *w);
  if (!w) return bri_error_set(err, BRI_ENOMEM, "%s: %s: out of memory", s->path, step);
  int rc = prepare(s, sql, &w->st, step, err);
  if (rc) {
    free(w);
    return rc;
  }
  w->base.drv = &jobs_sqlite_driver;
  w->cached = w->in_use = 0;
  *st = &w->base;
  return 0;
}

static int sq_step(bri_jobs_store *s, jobs_stmt *st, const char *step, bri_error *err) {
  return step_native(s, native(st), step, err);
}

static int sq_bind_i64(jobs_stmt *st, int i, int64_t v) {
  return sqlite3_bind_int64(native(st), i, v) == SQLITE_OK ? 0 : BRI_EIO;
}

static int sq_bind_text(jobs_stmt *st, int i, const char *text) {
  return sqlite3_bind_text(native(st), i, text, -1, SQLITE_TRANSIENT) == SQLITE_OK ? 0 : BRI_EIO;
}

static int sq_bind_count(jobs_stmt *st) { return sqlite3_bind_parameter_count(native(st)); }

static const char *sq_sql(jobs_stmt *st) { return sqlite3_sql(native(st)); }

static void sq_finalize(jobs_stmt *st) {
  sqlite_stmt *w = (sqlite_stmt *)st;
  if (w->cached) { /* back into the cache, ready for the next prepare */
    sqlite3_reset(w->st);
    sqlite3_clear_bindings(w->st);
    w->in_use = 0;
    return;
  }
  sqlite3_finalize(w->st);
  free(w);
}

static int64_t sq_col_i64(jobs_stmt *st, int col) { return sqlite3_column_int64(native(st), col); }

static int sq_col_null(jobs_stmt *st, int col) {
  return sqlite3_column_type(native(st), col) == SQLITE_NULL;
}

static const char *sq_col_str(jobs_stmt *st, int col) {
  return (const char *)sqlite3_column_text(native(st), col);
}

static int64_t sq_changes(bri_jobs_store *s) { return sqlite3_changes(conn(s)->db); }

static int sq_exec(bri_jobs_store *s, const char *sql, const char *step, bri_error *err) {
  if (sqlite3_exec(conn(s)->db, sql, NULL, NULL, NULL) != SQLITE_OK)
    return sq_sqlerr(s, sql, step, err);
  return 0;
}

/* Runs one statement without rows through the statement cache (the
 * transaction statements every job runs). */
static int exec_cached(bri_jobs_store *s, const char *sql, const char *step, bri_error *err) {
  jobs_stmt *st;
  int rc = sq_prepare(s, sql, &st, step, err);
  while (!rc && (rc = sq_step(s, st, step, err)) == 1) {
  }
  if (st) sq_finalize(st);
  return rc;
}

static int sq_begin(bri_jobs_store *s, const char *step, bri_error *err) {
  return exec_cached(s, "BEGIN IMMEDIATE", step, err);
}

static void sq_rollback(bri_jobs_store *s) {
  if (!sqlite3_get_autocommit(conn(s)->db)) {
    bri_error ignored;
    exec_cached(s, "ROLLBACK", "rolling back", &ignored);
  }
}

static int sq_commit(bri_jobs_store *s, const char *step, bri_error *err) {
  int rc = exec_cached(s, "COMMIT", step, err);
  if (rc) sq_rollback(s);
  return rc;
}

/* Every commit runs at synchronous=NORMAL: its frames are written to the
 * WAL, not synced. Making them durable is an fdatasync of the WAL, which
 * this driver does through a descriptor of its own, outside the store's
 * mutex: two workers' syncs overlap, and nobody's statements wait behind
 * them (with synchronous=FULL the sync ran inside COMMIT, under the
 * mutex). It syncs every frame written so far, the earlier commits' too. A
 * checkpoint that already moved frames into the database file synced the
 * WAL before and the database after (NORMAL's checkpoints do), and the WAL
 * is only rewritten from its start after such a checkpoint, so frames the
 * sync no longer finds in the WAL are durable in the database. */
static int sq_make_durable(bri_jobs_store *s, bri_error *err) {
  if (fdatasync(conn(s)->wal_fd) == 0) return 0;
  int e = errno;
  return bri_error_set(err, BRI_EIO, "%s-wal: fdatasync: %s", s->path, strerror(e));
}

/* A local file: reachable once open. */
static int sq_health(bri_jobs_store *s, char *last_error, size_t cap) {
  (void)s;
  if (cap) last_error[0] = '\0';
  return 1;
}

static int sq_conflict(bri_jobs_store *s) {
  (void)s;
  return 0;
}

/* Runs a single-value PRAGMA or query returning an integer. */
static int query_int(bri_jobs_store *s, const char *sql, const char *step, int64_t *out,
                     bri_error *err) {
  sqlite3_stmt *st;
  int rc = prepare(s, sql, &st, step, err);
  if (rc) return rc;
  rc = step_native(s, st, step, err);
  if (rc == 1) {
    *out = sqlite3_column_int64(st, 0);
    rc = 0;
  } else if (rc == 0) {
    rc = bri_error_set(err, BRI_EIO, "%s: %s (%s): no result", s->path, step, sql);
  }
  sqlite3_finalize(st);
  return rc;
}

static int take_lock(bri_jobs_store *s, bri_error *err) {
  char *lp = bri_strdupf("%s.lock", s->path);
  if (!lp) return bri_error_set(err, BRI_ENOMEM, "%s: out of memory", s->path);
  int rc = 0;
  conn(s)->lock_fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC, 0600); /* storage: not a table file */
  if (conn(s)->lock_fd < 0) {
    rc = bri_error_errno(err, "creating the job store lock file", lp);
  } else if (flock(conn(s)->lock_fd, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    rc = bri_error_set(err, BRI_EIO,
                       "%s: the job store is in use by another process (lock file %s: %s); "
                       "one brid per job store",
                       s->path, lp, strerror(e));
  }
  free(lp);
  return rc;
}

/* Rewrites a corruption error met while reading the header or the schema
 * into what the user must know: not SQLite at all, or damaged SQLite. */
static int header_failure(bri_jobs_store *s, const char *what, bri_error *err) {
  const char *why = sqlite3_errstr(conn(s)->last_rc);
  if ((conn(s)->last_rc & 0xff) == SQLITE_NOTADB)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: not a job store: SQLite says \"%s\" %s (expected a SQLite "
                         "database written by brid)",
                         s->path, why, what);
  return bri_error_set(err, BRI_ECORRUPT,
                       "%s: damaged job store: SQLite says \"%s\" %s (restore a backup or move "
                       "the file away to start with an empty store)",
                       s->path, why, what);
}

/* Identity and version checks before anything is written. */
static int check_identity(bri_jobs_store *s, int64_t *user_version, bri_error *err) {
  int64_t app, uv, n_objects;
  int rc = query_int(s, "PRAGMA application_id", "reading the database header", &app, err);
  if (rc == BRI_ECORRUPT) return header_failure(s, "reading the header", err);
  if (rc) return rc;
  rc = query_int(s, "PRAGMA user_version", "reading the schema version", &uv, err);
  if (rc == BRI_ECORRUPT) return header_failure(s, "reading the header", err);
  if (rc) return rc;
  rc = query_int(s, "SELECT count(*) FROM sqlite_master", "listing the schema", &n_objects, err);
  if (rc == BRI_ECORRUPT) return header_failure(s, "reading the schema", err);
  if (rc) return rc;
  if (app != 0 && app != BRI_JOBS_APPLICATION_ID)
    return bri_error_set(err, BRI_EINVAL,
                         "%s: not a brid job store: SQLite application_id is 0x%08llx, "
                         "expected 0x%08x (\"brid\")",
                         s->path, (unsigned long long)(uint32_t)app, BRI_JOBS_APPLICATION_ID);
  if (app == 0 && n_objects > 0)
    return bri_error_set(err, BRI_EINVAL,
                         "%s: not a brid job store: a SQLite database with %lld schema objects "
                         "but no brid application_id",
                         s->path, (long long)n_objects);
  if (uv > BRI_JOBS_SCHEMA_VERSION)
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "%s: job store schema version %lld is newer than this brid supports "
                         "(%d): it was written by a newer brid; run that version or move the "
                         "file away",
                         s->path, (long long)uv, BRI_JOBS_SCHEMA_VERSION);
  if (uv < 0)
    return bri_error_set(err, BRI_ECORRUPT, "%s: job store schema version %lld is negative",
                         s->path, (long long)uv);
  if (app == BRI_JOBS_APPLICATION_ID && uv == 0)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: brid job store with schema version 0 (an interrupted creation "
                         "would have left no application_id)",
                         s->path);
  *user_version = uv;
  return 0;
}

static int set_pragmas(bri_jobs_store *s, bri_error *err) {
  sqlite3_stmt *st;
  int rc = prepare(s, "PRAGMA journal_mode = WAL", &st, "enabling WAL mode", err);
  if (rc) return rc;
  rc = step_native(s, st, "enabling WAL mode", err);
  if (rc == 1) {
    const char *mode = (const char *)sqlite3_column_text(st, 0);
    rc = mode && strcmp(mode, "wal") == 0
             ? 0
             : bri_error_set(err, BRI_EIO,
                             "%s: enabling WAL mode: SQLite kept journal mode '%s' (WAL needs "
                             "shared memory and a local filesystem)",
                             s->path, mode ? mode : "?");
  } else if (rc == 0) {
    rc = bri_error_set(err, BRI_EIO, "%s: enabling WAL mode: no result", s->path);
  }
  sqlite3_finalize(st);
  if (rc) return rc;
  if ((rc = sq_exec(s, "PRAGMA synchronous = NORMAL", "setting the sync level", err))) return rc;
  return sq_exec(s, "PRAGMA foreign_keys = ON", "enabling foreign keys", err);
}

static int quick_check(bri_jobs_store *s, int64_t version, bri_error *err) {
  sqlite3_stmt *st;
  int rc = prepare(s, "PRAGMA quick_check(1)", &st, "checking the database", err);
  if (rc) return rc;
  rc = step_native(s, st, "checking the database", err);
  if (rc == 1) {
    const char *r = (const char *)sqlite3_column_text(st, 0);
    if (r && strcmp(r, "ok") == 0) {
      rc = 0;
    } else {
      char report[400];
      snprintf(report, sizeof report, "%s", r ? r : "?");
      for (char *p = report; *p; p++)
        if (*p == '\n') *p = ' ';
      rc = bri_error_set(err, BRI_ECORRUPT,
                         "%s: damaged job store: SQLite quick_check reports: %s (restore a "
                         "backup or move the file away to start with an empty store)",
                         s->path, report);
    }
  } else if (rc == 0) {
    rc = bri_error_set(err, BRI_EIO, "%s: checking the database: no result", s->path);
  } else if (rc == BRI_ECORRUPT) {
    rc = header_failure(s, "checking the database", err);
  }
  sqlite3_finalize(st);
  if (rc) return rc;
  for (size_t i = 0; i < sizeof REQUIRED_TABLES / sizeof REQUIRED_TABLES[0]; i++) {
    if (REQUIRED_TABLES[i].since > version) continue;
    rc = prepare(s, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", &st,
                      "checking the schema", err);
    if (rc) return rc;
    sqlite3_bind_text(st, 1, REQUIRED_TABLES[i].name, -1, SQLITE_STATIC);
    rc = step_native(s, st, "checking the schema", err);
    sqlite3_finalize(st);
    if (rc < 0) return rc;
    if (rc == 0)
      return bri_error_set(err, BRI_ECORRUPT, "%s: damaged job store: table '%s' is missing",
                           s->path, REQUIRED_TABLES[i].name);
  }
  return 0;
}

/* Fails when a foreign key of the store points nowhere (a migration that
 * rebuilt a table must leave every reference intact). */
static int check_foreign_keys(bri_jobs_store *s, const char *step, bri_error *err) {
  sqlite3_stmt *st;
  int rc = prepare(s, "PRAGMA foreign_key_check", &st, step, err);
  if (rc) return rc;
  rc = step_native(s, st, step, err);
  if (rc == 1)
    rc = bri_error_set(err, BRI_ECORRUPT, "%s: %s: a row of table %s references a missing row",
                       s->path, step, (const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  return rc;
}

static const jobs_schema SCHEMA = {SCHEMA_SQLITE, "schema_sqlite.sql", 1};

/* One migration script in a transaction of its own with the user_version
 * bump, foreign keys checked before the commit. */
static int migration_step(bri_jobs_store *s, const char *script, int64_t version,
                          const char *step, bri_error *err) {
  char bump[64];
  snprintf(bump, sizeof bump, "PRAGMA user_version = %lld", (long long)version);
  int rc = sq_begin(s, step, err);
  if (!rc) rc = sq_exec(s, script, step, err);
  if (!rc) rc = check_foreign_keys(s, step, err);
  if (!rc) rc = sq_exec(s, bump, step, err);
  if (!rc) rc = sq_commit(s, step, err);
  if (rc) sq_rollback(s);
  return rc;
}

/* Migrates from user_version from to BRI_JOBS_SCHEMA_VERSION (jobs_migrate)
 * with foreign keys off (a script may rebuild a table others reference). */
static int migrate(bri_jobs_store *s, int64_t from, bri_error *err) {
  if (from >= BRI_JOBS_SCHEMA_VERSION) return jobs_migrate(s, &SCHEMA, from, migration_step, err);
  int rc = sq_exec(s, "PRAGMA foreign_keys = OFF", "preparing the migration", err);
  if (!rc) rc = jobs_migrate(s, &SCHEMA, from, migration_step, err);
  bri_error e2;
  int rc2 = sq_exec(s, "PRAGMA foreign_keys = ON", "enabling foreign keys", rc ? &e2 : err);
  return rc ? rc : rc2;
}

/* Opens the WAL for sq_make_durable. It exists while the connection is
 * open in WAL mode (the migrations wrote to it; SQLite removes it only when
 * the last connection closes). */
static int open_wal(bri_jobs_store *s, bri_error *err) {
  char *wal = bri_strdupf("%s-wal", s->path);
  if (!wal) return bri_error_set(err, BRI_ENOMEM, "%s: out of memory", s->path);
  conn(s)->wal_fd = open(wal, O_RDONLY | O_CLOEXEC); /* storage: not a table file */
  int rc = conn(s)->wal_fd < 0 ? bri_error_errno(err, "opening the job store's WAL", wal) : 0;
  free(wal);
  return rc;
}

/* A read connection (bri_jobs_options.read_only) of a store this process
 * holds open: its schema must be this brid's. */
static int check_reader(bri_jobs_store *s, int64_t uv, bri_error *err) {
  if (uv == BRI_JOBS_SCHEMA_VERSION) return 0;
  return bri_error_set(err, BRI_EINVAL,
                       "%s: a read connection needs the store at schema version %d, found %lld "
                       "(open the store itself first)",
                       s->path, BRI_JOBS_SCHEMA_VERSION, (long long)uv);
}

static int sq_open(bri_jobs_store *s, bri_error *err) {
  sqlite_conn *c = calloc(1, sizeof *c);
  if (!c) return bri_error_set(err, BRI_ENOMEM, "%s: out of memory", s->path);
  c->lock_fd = c->wal_fd = -1;
  s->conn = c;
  int ro = s->opt.read_only;
  int rc = ro ? 0 : take_lock(s, err);
  if (rc) return rc;
  /* FULLMUTEX although our own mutex serializes every call: belt and braces
   * for the read-only sqlite3_* calls made while reading rows. */
  int orc = sqlite3_open_v2(s->path, &c->db,
                            (ro ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
                                SQLITE_OPEN_FULLMUTEX,
                            NULL);
  if (orc != SQLITE_OK)
    return bri_error_set(err, map_sqlite(orc), "%s: opening the job store: %s", s->path,
                         c->db ? sqlite3_errmsg(c->db) : sqlite3_errstr(orc));
  sqlite3_extended_result_codes(c->db, 1);
  sqlite3_busy_timeout(c->db, s->opt.busy_timeout_ms > 0 ? s->opt.busy_timeout_ms : 0);

  int64_t uv = 0;
  if ((rc = check_identity(s, &uv, err))) return rc;
  if (ro) return check_reader(s, uv, err); /* WAL is the file's mode already */
  if ((rc = set_pragmas(s, err))) return rc;
  if (uv > 0 && (rc = quick_check(s, uv, err))) return rc;
  if ((rc = migrate(s, uv, err))) return rc;
  return open_wal(s, err);
}

static void sq_close(bri_jobs_store *s) {
  sqlite_conn *c = s->conn;
  if (!c) return;
  if (c->wal_fd >= 0) close(c->wal_fd);
  for (size_t i = 0; i < CACHE_SLOTS; i++) sqlite3_finalize(c->cache[i].st);
  if (c->db) sqlite3_close_v2(c->db);
  if (c->lock_fd >= 0) close(c->lock_fd); /* releases the flock */
  free(c);
  s->conn = NULL;
}

const jobs_driver jobs_sqlite_driver = {
    .name = "SQLite",
    .exclusive = 1,
    .open = sq_open,
    .close = sq_close,
    .sqlerr = sq_sqlerr,
    .prepare = sq_prepare,
    .bind_i64 = sq_bind_i64,
    .bind_text = sq_bind_text,
    .bind_count = sq_bind_count,
    .sql = sq_sql,
    .step = sq_step,
    .finalize = sq_finalize,
    .col_i64 = sq_col_i64,
    .col_null = sq_col_null,
    .col_str = sq_col_str,
    .changes = sq_changes,
    .exec = sq_exec,
    .begin = sq_begin,
    .commit = sq_commit,
    .rollback = sq_rollback,
    .make_durable = sq_make_durable,
    .health = sq_health,
    .conflict = sq_conflict,
    .request_expr = "json_remove(coalesce(%s, '{}'), '$.trigger')",
    .claim_lock = "",
    .row_lock = "",
};
