/* pg.c: the PostgreSQL backend of the job store, its driver (libpq): the
 * connection (password from the options, never from the path), the
 * identity and version checks, the migrations of schema_pg.sql under an
 * advisory lock, reconnection with back-off after a lost connection, and
 * its half of the statement interface (internal.h, struct jobs_driver),
 * each failure a bri_error naming the store, the step, the SQL and the
 * SQLSTATE.
 *
 * Statements: the shared SQL's parameters (? and ?N) become $N at prepare
 * (string literals and quoted names skipped); a statement runs at its
 * first step, integers typed int8 and texts text, and its rows are then
 * read from the result. Each SQL text (with its parameters' types) is
 * prepared on the server once per connection and run by name after that
 * (PG_PREPARED_MAX of them; more run unprepared); a reconnect starts over. Transactions are READ COMMITTED;
 * the driver's snippets lock what a transaction reads and then updates.
 *
 * Versions: the one-row table brid_schema(application, version); a new
 * database starts at the first script of schema_pg.sql (version 4), and
 * each later script takes version N - 1 to N (the shared runner, migrate.c,
 * walks them). Checks and migrations run in
 * one transaction holding pg_advisory_xact_lock(BRI_JOBS_APPLICATION_ID),
 * so brids starting together migrate once. */
#include "jobs/internal.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bri/util.h"

/* The schema: migration scripts, one per version (schema_pg.sql). */
#include "jobs/schema_pg.sql.h"

#define PG_FIRST_VERSION 4 /* the first script of schema_pg.sql */
#define PG_INT8OID 20
#define PG_TEXTOID 25
#define PG_RETRY_FIRST_MS 1000
#define PG_RETRY_MAX_MS 30000
#define PG_PREPARED_MAX 256

static const char *const REQUIRED_TABLES[] = {"tables",    "jobs",      "job_attempts",
                                              "job_outputs", "job_stats", "instances"};

typedef struct pg_conn {
  PGconn *pg;
  int up;                 /* the connection works as far as we know */
  int64_t retry_at_ms;    /* monotonic time of the next reconnect attempt */
  int64_t retry_delay_ms; /* doubles per failed attempt up to PG_RETRY_MAX_MS */
  int64_t changes;        /* rows of the last command */
  char sqlstate[6];       /* of the last failure, "" when none */
  char last_error[512];   /* message of the last failure */
  char conn_error[512];   /* message of the last connection failure, "" once up */
  char *prepared[PG_PREPARED_MAX]; /* statement "brid_<i>": its types, '\n', its SQL */
  size_t n_prepared;
} pg_conn;

typedef struct pg_stmt {
  jobs_stmt base;
  bri_jobs_store *s;
  char *sql;      /* as given, for messages */
  char *native;   /* with $N parameters */
  int nparams;
  char **values;  /* nparams texts (NULL = SQL NULL) */
  unsigned *types;
  PGresult *res;
  int row;        /* current row; -1 before the first step */
} pg_stmt;

static pg_conn *conn(bri_jobs_store *s) { return s->conn; }

static int64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int map_sqlstate(const char *st) {
  if (!st || !*st) return BRI_EIO;
  if (strncmp(st, "23", 2) == 0) return BRI_EINVAL;
  if (strcmp(st, "XX001") == 0 || strcmp(st, "XX002") == 0) return BRI_ECORRUPT;
  if (strcmp(st, "53200") == 0) return BRI_ENOMEM;
  return BRI_EIO; /* 08xxx and 57Pxx (connection, shutdown) included */
}

/* One line of libpq's message (it ends in newlines, sometimes has DETAIL). */
static void copy_message(char *dst, size_t cap, const char *msg) {
  snprintf(dst, cap, "%s", msg && *msg ? msg : "unknown error");
  for (char *p = dst; *p; p++)
    if (*p == '\n') *p = ' ';
  size_t n = strlen(dst);
  while (n > 0 && dst[n - 1] == ' ') dst[--n] = '\0';
}

/* Records the failure of res (or of the connection when res is NULL or has
 * no SQLSTATE) and marks the connection down when it is gone. */
static void record_failure(bri_jobs_store *s, PGresult *res) {
  pg_conn *c = conn(s);
  const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
  snprintf(c->sqlstate, sizeof c->sqlstate, "%s", state ? state : "");
  /* the server's primary message ("duplicate key value violates ..."),
   * else libpq's (a lost connection) */
  const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
  if (!msg || !*msg) msg = res ? PQresultErrorMessage(res) : NULL;
  copy_message(c->last_error, sizeof c->last_error, msg && *msg ? msg : PQerrorMessage(c->pg));
  if (PQstatus(c->pg) != CONNECTION_OK || strncmp(c->sqlstate, "08", 2) == 0 ||
      strncmp(c->sqlstate, "57P", 3) == 0) {
    c->up = 0;
    snprintf(c->conn_error, sizeof c->conn_error, "%s", c->last_error);
    c->retry_at_ms = mono_ms() + PG_RETRY_FIRST_MS;
    c->retry_delay_ms = PG_RETRY_FIRST_MS;
  }
}

static int pg_sqlerr(bri_jobs_store *s, const char *sql, const char *step, bri_error *err) {
  pg_conn *c = conn(s);
  char abbr[72];
  jobs_abbreviate_sql(sql, abbr, sizeof abbr);
  int code = c->up ? map_sqlstate(c->sqlstate) : BRI_EIO;
  if (!c->up)
    return bri_error_set(err, code,
                         "%s: %s (%s): the PostgreSQL connection is lost: %s (brid reconnects "
                         "at the next call)",
                         s->path, step, abbr, c->last_error);
  return bri_error_set(err, code, "%s: %s (%s): %s (SQLSTATE %s)", s->path, step, abbr,
                       c->last_error, c->sqlstate[0] ? c->sqlstate : "none");
}

static void forget_prepared(pg_conn *c) {
  for (size_t i = 0; i < c->n_prepared; i++) free(c->prepared[i]);
  c->n_prepared = 0;
}

/* Connects (first open) or reconnects, at most once per back-off delay. */
static int connect_now(bri_jobs_store *s, bri_error *err) {
  pg_conn *c = conn(s);
  if (c->pg && c->up) return 0;
  int64_t now = mono_ms();
  if (c->pg && now < c->retry_at_ms)
    return bri_error_set(err, BRI_EIO,
                         "%s: the PostgreSQL store is unreachable: %s (next reconnect attempt in "
                         "%lld ms)",
                         s->path, c->conn_error, (long long)(c->retry_at_ms - now));
  if (c->pg) {
    forget_prepared(c); /* the server's prepared statements went with the session */
    PQreset(c->pg);
  } else {
    /* defaults the store's own settings override (they come after, in the
     * expanded dbname): a server that does not answer must not hold the
     * store's mutex for TCP's minutes; the password last, never from it */
    const char *keys[] = {"connect_timeout", "keepalives_idle", "keepalives_interval",
                          "keepalives_count", "tcp_user_timeout", "application_name",
                          "dbname", s->password ? "password" : NULL, NULL};
    const char *vals[] = {"10", "30", "10", "3", "30000", "brid", s->path, s->password, NULL};
    c->pg = PQconnectdbParams(keys, vals, 1);
    if (!c->pg) return bri_error_set(err, BRI_ENOMEM, "%s: connecting: out of memory", s->path);
  }
  if (PQstatus(c->pg) != CONNECTION_OK) {
    copy_message(c->conn_error, sizeof c->conn_error, PQerrorMessage(c->pg));
    snprintf(c->last_error, sizeof c->last_error, "%s", c->conn_error);
    c->up = 0;
    c->retry_delay_ms = c->retry_delay_ms ? c->retry_delay_ms * 2 : PG_RETRY_FIRST_MS;
    if (c->retry_delay_ms > PG_RETRY_MAX_MS) c->retry_delay_ms = PG_RETRY_MAX_MS;
    c->retry_at_ms = now + c->retry_delay_ms;
    return bri_error_set(err, BRI_EIO, "%s: connecting to the PostgreSQL store: %s", s->path,
                         c->conn_error);
  }
  c->up = 1;
  c->retry_delay_ms = 0;
  c->conn_error[0] = '\0';
  /* a read connection (bri_jobs_options.read_only): the server refuses its
   * writes, in every session a reconnect opens too */
  if (s->opt.read_only) {
    PGresult *r = PQexec(c->pg, "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY");
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    if (!ok) copy_message(c->conn_error, sizeof c->conn_error, PQerrorMessage(c->pg));
    PQclear(r);
    if (!ok) {
      c->up = 0;
      c->retry_at_ms = now + PG_RETRY_FIRST_MS;
      return bri_error_set(err, BRI_EIO, "%s: making the read connection read-only: %s", s->path,
                           c->conn_error);
    }
  }
  return 0;
}

/* Runs a command without parameters; *res (the caller clears it) when its
 * status is ok, else the failure recorded and err filled. */
static int run(bri_jobs_store *s, const char *sql, ExecStatusType ok, const char *step, PGresult **res,
               bri_error *err) {
  *res = NULL;
  int rc = connect_now(s, err);
  if (rc) return rc;
  PGresult *r = PQexec(conn(s)->pg, sql);
  if (PQresultStatus(r) == ok) {
    *res = r;
    return 0;
  }
  record_failure(s, r);
  PQclear(r);
  return pg_sqlerr(s, sql, step, err);
}

static int pg_exec(bri_jobs_store *s, const char *sql, const char *step, bri_error *err) {
  PGresult *res;
  int rc = run(s, sql, PGRES_COMMAND_OK, step, &res, err);
  if (rc) return rc;
  const char *n = PQcmdTuples(res);
  conn(s)->changes = n && *n ? strtoll(n, NULL, 10) : 0;
  PQclear(res);
  return 0;
}

/* The SQL with ? and ?N turned into $N; *nparams the highest number. */
static char *to_native(const char *sql, int *nparams) {
  /* one input character becomes at most 7 ("?" -> "$999999") */
  size_t cap = strlen(sql) * 7 + 16, n = 0;
  char *out = malloc(cap);
  if (!out) return NULL;
  int next = 0, max = 0;
  for (const char *p = sql; *p;) {
    if (*p == '\'' || *p == '"') { /* a literal or quoted name, doubled quotes inside */
      char q = *p;
      out[n++] = *p++;
      while (*p) {
        if (*p == q && p[1] == q) {
          out[n++] = *p++;
          out[n++] = *p++;
        } else if (*p == q) {
          break;
        } else {
          out[n++] = *p++;
        }
      }
      if (*p) out[n++] = *p++;
      continue;
    }
    if (*p != '?') {
      out[n++] = *p++;
      continue;
    }
    p++;
    int num;
    if (*p >= '0' && *p <= '9') {
      num = 0;
      while (*p >= '0' && *p <= '9' && num < 100000) num = num * 10 + (*p++ - '0');
      next = num;
    } else {
      num = ++next;
    }
    if (num > max) max = num;
    n += (size_t)snprintf(out + n, cap - n, "$%d", num);
  }
  out[n] = '\0';
  *nparams = max;
  return out;
}

static void stmt_reset(pg_stmt *st) {
  PQclear(st->res);
  st->res = NULL;
  st->row = -1;
}

static void pg_finalize(jobs_stmt *base) {
  pg_stmt *st = (pg_stmt *)base;
  stmt_reset(st);
  for (int i = 0; i < st->nparams; i++) free(st->values[i]);
  free(st->values);
  free(st->types);
  free(st->native);
  free(st->sql);
  free(st);
}

static int pg_prepare(bri_jobs_store *s, const char *sql, jobs_stmt **out, const char *step,
                      bri_error *err) {
  *out = NULL;
  pg_stmt *st = calloc(1, sizeof *st);
  if (st) {
    st->base.drv = &jobs_pg_driver;
    st->s = s;
    st->row = -1;
    st->sql = strdup(sql);
    st->native = to_native(sql, &st->nparams);
  }
  if (st && st->native && st->nparams > 0) {
    st->values = calloc((size_t)st->nparams, sizeof *st->values);
    st->types = calloc((size_t)st->nparams, sizeof *st->types);
  }
  if (!st || !st->sql || !st->native || (st->nparams > 0 && (!st->values || !st->types))) {
    if (st) pg_finalize(&st->base);
    return bri_error_set(err, BRI_ENOMEM, "%s: %s: out of memory", s->path, step);
  }
  for (int i = 0; i < st->nparams; i++) st->types[i] = PG_TEXTOID;
  *out = &st->base;
  return 0;
}

static int bind(pg_stmt *st, int i, char *value, unsigned type) {
  if (i < 1 || i > st->nparams) {
    free(value);
    snprintf(conn(st->s)->last_error, sizeof conn(st->s)->last_error,
             "no parameter %d (the statement takes %d)", i, st->nparams);
    conn(st->s)->sqlstate[0] = '\0';
    return BRI_EIO;
  }
  stmt_reset(st);
  free(st->values[i - 1]);
  st->values[i - 1] = value;
  st->types[i - 1] = type;
  return 0;
}

static int pg_bind_i64(jobs_stmt *base, int i, int64_t v) {
  char *t = bri_strdupf("%lld", (long long)v);
  if (!t) return BRI_EIO;
  return bind((pg_stmt *)base, i, t, PG_INT8OID);
}

static int pg_bind_text(jobs_stmt *base, int i, const char *text) {
  char *t = NULL;
  if (text && !(t = strdup(text))) return BRI_EIO;
  return bind((pg_stmt *)base, i, t, PG_TEXTOID);
}

static int pg_bind_count(jobs_stmt *base) { return ((pg_stmt *)base)->nparams; }

static const char *pg_sql(jobs_stmt *base) { return ((pg_stmt *)base)->sql; }

/* Runs st by the name of its prepared statement, preparing it first when it
 * is new to this connection; unnamed when the cache is full or out of
 * memory. A failed prepare's result is returned as the failure. */
static PGresult *execute(pg_conn *c, pg_stmt *st) {
  const char *const *values = (const char *const *)st->values;
  size_t tlen = (size_t)st->nparams;
  char *key = malloc(tlen + 1 + strlen(st->native) + 1);
  if (!key)
    return PQexecParams(c->pg, st->native, st->nparams, st->types, values, NULL, NULL, 0);
  for (size_t i = 0; i < tlen; i++) key[i] = st->types[i] == PG_INT8OID ? 'i' : 't';
  key[tlen] = '\n';
  strcpy(key + tlen + 1, st->native);
  size_t i = 0;
  while (i < c->n_prepared && strcmp(c->prepared[i], key) != 0) i++;
  char name[32];
  snprintf(name, sizeof name, "brid_%zu", i);
  if (i == c->n_prepared) {
    if (i == PG_PREPARED_MAX) {
      free(key);
      return PQexecParams(c->pg, st->native, st->nparams, st->types, values, NULL, NULL, 0);
    }
    PGresult *p = PQprepare(c->pg, name, st->native, st->nparams, st->types);
    if (PQresultStatus(p) != PGRES_COMMAND_OK) {
      free(key);
      return p;
    }
    PQclear(p);
    c->prepared[c->n_prepared++] = key;
  } else {
    free(key);
  }
  return PQexecPrepared(c->pg, name, st->nparams, values, NULL, NULL, 0);
}

static int pg_step(bri_jobs_store *s, jobs_stmt *base, const char *step, bri_error *err) {
  pg_stmt *st = (pg_stmt *)base;
  if (!st->res) {
    int rc = connect_now(s, err);
    if (rc) return rc;
    PGresult *res = execute(conn(s), st);
    ExecStatusType rs = PQresultStatus(res);
    if (rs != PGRES_TUPLES_OK && rs != PGRES_COMMAND_OK && s->opt.read_only &&
        PQstatus(conn(s)->pg) != CONNECTION_OK) {
      /* a read connection lost its server (a restart): a read is safe to
       * run again, so reconnect at once rather than fail this one call */
      PQclear(res);
      conn(s)->up = 0;
      conn(s)->retry_at_ms = 0;
      if ((rc = connect_now(s, err))) return rc;
      res = execute(conn(s), st);
      rs = PQresultStatus(res);
    }
    if (rs != PGRES_TUPLES_OK && rs != PGRES_COMMAND_OK) {
      record_failure(s, res);
      PQclear(res);
      return pg_sqlerr(s, st->sql, step, err);
    }
    const char *n = PQcmdTuples(res);
    conn(s)->changes = n && *n ? strtoll(n, NULL, 10) : 0;
    st->res = res;
    st->row = -1;
  }
  if (st->row + 1 < PQntuples(st->res)) {
    st->row++;
    return 1;
  }
  st->row = PQntuples(st->res);
  return 0;
}

static int valid_cell(pg_stmt *st, int col) {
  return st->res && st->row >= 0 && st->row < PQntuples(st->res) && col >= 0 &&
         col < PQnfields(st->res);
}

static int pg_col_null(jobs_stmt *base, int col) {
  pg_stmt *st = (pg_stmt *)base;
  return !valid_cell(st, col) || PQgetisnull(st->res, st->row, col);
}

static const char *pg_col_str(jobs_stmt *base, int col) {
  pg_stmt *st = (pg_stmt *)base;
  if (pg_col_null(base, col)) return NULL;
  return PQgetvalue(st->res, st->row, col);
}

static int64_t pg_col_i64(jobs_stmt *base, int col) {
  const char *t = pg_col_str(base, col);
  if (!t) return 0;
  if (strcmp(t, "t") == 0) return 1; /* a boolean */
  return strtoll(t, NULL, 10);
}

static int64_t pg_changes(bri_jobs_store *s) { return conn(s)->changes; }

static int pg_begin(bri_jobs_store *s, const char *step, bri_error *err) {
  conn(s)->sqlstate[0] = '\0'; /* pg_conflict speaks of this transaction only */
  return pg_exec(s, "BEGIN", step, err);
}

static void pg_rollback(bri_jobs_store *s) {
  pg_conn *c = conn(s);
  if (c->pg && c->up && PQtransactionStatus(c->pg) != PQTRANS_IDLE) PQclear(PQexec(c->pg, "ROLLBACK"));
}

static int pg_commit(bri_jobs_store *s, const char *step, bri_error *err) {
  PGresult *res;
  int rc = run(s, "COMMIT", PGRES_COMMAND_OK, step, &res, err);
  if (rc) {
    pg_rollback(s);
    return rc;
  }
  /* COMMIT of a failed transaction answers ROLLBACK, not an error */
  int rolled_back = strcmp(PQcmdStatus(res), "ROLLBACK") == 0;
  PQclear(res);
  if (rolled_back)
    return bri_error_set(err, BRI_EIO, "%s: %s (COMMIT): the transaction had failed and was rolled back",
                         s->path, step);
  return 0;
}

/* Commits are durable at COMMIT on PostgreSQL (synchronous_commit). */
static int pg_make_durable(bri_jobs_store *s, bri_error *err) {
  (void)s, (void)err;
  return 0;
}

static int pg_health(bri_jobs_store *s, char *last_error, size_t cap) {
  pg_conn *c = conn(s);
  if (cap) snprintf(last_error, cap, "%s", c->conn_error);
  return c->up;
}

static int pg_conflict(bri_jobs_store *s) {
  return strcmp(conn(s)->sqlstate, "23505") == 0 || strcmp(conn(s)->sqlstate, "40001") == 0;
}

/* Refuses a password inside the path: it would show in messages, process
 * lists and configuration files. */
static int refuse_inline_password(bri_jobs_store *s, bri_error *err) {
  char *perr = NULL;
  PQconninfoOption *opts = PQconninfoParse(s->path, &perr);
  if (!opts) {
    char msg[256];
    copy_message(msg, sizeof msg, perr);
    PQfreemem(perr);
    /* never echo the string: it may hold a password libpq could not parse */
    return bri_error_set(err, BRI_EINVAL,
                         "PostgreSQL job store: the connection string does not parse: %s", msg);
  }
  int has = 0;
  for (PQconninfoOption *o = opts; o->keyword; o++)
    if (strcmp(o->keyword, "password") == 0 && o->val && *o->val) has = 1;
  PQconninfoFree(opts);
  if (has)
    return bri_error_set(err, BRI_EINVAL,
                         "PostgreSQL job store: the connection string holds a password; give it "
                         "with store_password_file = PATH or store_password_credential = NAME "
                         "(brid.conf), or in ~/.pgpass (PGPASSFILE)");
  return 0;
}

static int query_int(bri_jobs_store *s, const char *sql, const char *step, int64_t *out,
                     int *found, bri_error *err) {
  PGresult *res;
  int rc = run(s, sql, PGRES_TUPLES_OK, step, &res, err);
  if (rc) return rc;
  *found = PQntuples(res) > 0 && !PQgetisnull(res, 0, 0);
  *out = *found ? strtoll(PQgetvalue(res, 0, 0), NULL, 10) : 0;
  PQclear(res);
  return 0;
}

static const jobs_schema SCHEMA = {SCHEMA_PG, "schema_pg.sql", PG_FIRST_VERSION};

/* One migration script and the version bump, inside the transaction
 * pg_open holds. */
static int migration_step(bri_jobs_store *s, const char *script, int64_t version,
                          const char *step, bri_error *err) {
  char bump[96];
  snprintf(bump, sizeof bump, "UPDATE brid_schema SET version = %lld", (long long)version);
  int rc = pg_exec(s, script, step, err);
  if (!rc) rc = pg_exec(s, bump, step, err);
  return rc;
}

/* Inside the open transaction, under the advisory lock: checks identity and
 * version and migrates. */
static int check_and_migrate(bri_jobs_store *s, bri_error *err) {
  int64_t v = 0, n = 0, has_schema = 0;
  int found = 0, rc;
  const char *step = "reading the schema version";
  if ((rc = query_int(s, "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = "
                         "current_schema() AND tablename = 'brid_schema'",
                      step, &has_schema, &found, err)))
    return rc;
  if (has_schema) {
    if ((rc = query_int(s, "SELECT version FROM brid_schema WHERE application = 'brid'", step, &v,
                        &found, err)))
      return rc;
    if (!found)
      return bri_error_set(err, BRI_EINVAL,
                           "%s: not a brid job store: table brid_schema has no 'brid' row", s->path);
  } else {
    if ((rc = query_int(s, "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = "
                           "current_schema()",
                        "listing the schema", &n, &found, err)))
      return rc;
    if (n > 0)
      return bri_error_set(err, BRI_EINVAL,
                           "%s: not a brid job store: the database has %lld tables in its "
                           "schema but no brid_schema table (give brid an empty database of "
                           "its own)",
                           s->path, (long long)n);
  }
  if (v > BRI_JOBS_SCHEMA_VERSION)
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "%s: job store schema version %lld is newer than this brid supports "
                         "(%d): it was written by a newer brid; run that version",
                         s->path, (long long)v, BRI_JOBS_SCHEMA_VERSION);
  if (has_schema && v < PG_FIRST_VERSION)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: damaged job store: schema version %lld (PostgreSQL stores start at "
                         "%d)",
                         s->path, (long long)v, PG_FIRST_VERSION);
  if ((rc = jobs_migrate(s, &SCHEMA, v, migration_step, err))) return rc;
  for (size_t i = 0; i < sizeof REQUIRED_TABLES / sizeof REQUIRED_TABLES[0]; i++) {
    char sql[200];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema() "
             "AND tablename = '%s'",
             REQUIRED_TABLES[i]);
    if ((rc = query_int(s, sql, "checking the schema", &n, &found, err))) return rc;
    if (n == 0)
      return bri_error_set(err, BRI_ECORRUPT, "%s: damaged job store: table '%s' is missing",
                           s->path, REQUIRED_TABLES[i]);
  }
  return 0;
}

/* Notices (a NOTICE of the server, a WARNING outside a failure) are not
 * for brid's stderr: failures come back as errors. */
static void ignore_notice(void *arg, const char *message) {
  (void)arg, (void)message;
}

static int pg_open(bri_jobs_store *s, bri_error *err) {
  int rc = refuse_inline_password(s, err);
  if (rc) return rc;
  pg_conn *c = calloc(1, sizeof *c);
  if (!c) return bri_error_set(err, BRI_ENOMEM, "%s: out of memory", s->path);
  s->conn = c;
  if ((rc = connect_now(s, err))) return rc;
  PQsetNoticeProcessor(c->pg, ignore_notice, NULL);
  char lock[96];
  snprintf(lock, sizeof lock, "SELECT pg_advisory_xact_lock(%d)", BRI_JOBS_APPLICATION_ID);
  PGresult *res = NULL;
  rc = pg_begin(s, "opening the job store", err);
  if (!rc) rc = run(s, lock, PGRES_TUPLES_OK, "locking the schema", &res, err);
  PQclear(res);
  if (!rc) rc = check_and_migrate(s, err);
  if (!rc) rc = pg_commit(s, "opening the job store", err);
  if (rc) pg_rollback(s);
  return rc;
}

static void pg_close(bri_jobs_store *s) {
  pg_conn *c = s->conn;
  if (!c) return;
  if (c->pg) PQfinish(c->pg);
  forget_prepared(c);
  free(c);
  s->conn = NULL;
}

const jobs_driver jobs_pg_driver = {
    .name = "PostgreSQL",
    .open = pg_open,
    .close = pg_close,
    .sqlerr = pg_sqlerr,
    .prepare = pg_prepare,
    .bind_i64 = pg_bind_i64,
    .bind_text = pg_bind_text,
    .bind_count = pg_bind_count,
    .sql = pg_sql,
    .step = pg_step,
    .finalize = pg_finalize,
    .col_i64 = pg_col_i64,
    .col_null = pg_col_null,
    .col_str = pg_col_str,
    .changes = pg_changes,
    .exec = pg_exec,
    .begin = pg_begin,
    .commit = pg_commit,
    .rollback = pg_rollback,
    .make_durable = pg_make_durable,
    .health = pg_health,
    .conflict = pg_conflict,
    .request_expr = "(coalesce(%s, '{}')::jsonb - 'trigger')",
    .claim_lock = " FOR UPDATE OF j SKIP LOCKED",
    .row_lock = " FOR UPDATE OF j",
};
