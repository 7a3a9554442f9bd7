/* svc_worker.c: the worker threads and the jobs they run (see svc_worker.h).
 *
 * One mutex guards the whole pool (worker states, the job each holds, the
 * progress slots): it is taken for microseconds at job hand-over, at each
 * progress report and by status reads, never across a library call. Each
 * worker waits on its own condition variable so a hand-over wakes exactly
 * the chosen thread. The job store is called from worker threads directly
 * (it serializes its own calls). */
#include "svc_worker.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "bri/ops.h"
#include "bri/util.h"
#include "brid/1_leaves/svc_kinds.h"
#include "brid/1_leaves/svc_log.h"
#include "svc_recover.h"

typedef enum { W_IDLE, W_ASSIGNED, W_RUNNING, W_DONE } wstate;

typedef struct svc_worker svc_worker;

struct svc_worker {
  struct svc_pool *pool;
  int index;
  pthread_t thread;
  bool started;
  pthread_cond_t cv;
  wstate state;        /* under pool->mu */
  bri_jobs_job job;    /* valid from ASSIGNED to the loop's collection of DONE */
  svc_policy policy;
  svc_progress prog;   /* under pool->mu */
  atomic_int cancel;   /* 0, CANCEL_USER, CANCEL_SHUTDOWN or CANCEL_LEASE */
  /* CLOCK_MONOTONIC ms until which the job's lease is known to hold (with a
   * third of lease_ttl to spare): set at hand-over, moved on by each
   * heartbeat that renewed it (svc_lease.c). Past it the job stops. */
  atomic_llong lease_ok_mono;
  int64_t woke_ms;     /* under pool->mu: when progress last woke the loop */
  /* the worker's own: outputs reserved for the commit intent to journal */
  bri_jobs_reserved *reserved;
  size_t n_reserved, cap_reserved;
  /* the worker's own: the table after the job's commit, until its end
   * records the version seen */
  svc_check committed;
  bool has_committed;
  svc_check post;      /* under pool->mu: the table after the job's commit */
  char *post_root;     /* under pool->mu: its table, set while post waits to be collected */
};

enum { CANCEL_USER = 1, CANCEL_SHUTDOWN = 2, CANCEL_LEASE = 3 };

struct svc_pool {
  brid *d;
  bri_jobs_store *store;
  pthread_mutex_t mu;
  bool stop; /* under mu */
  int n;
  svc_worker *w;
  uv_async_t async;
  bool async_open;
  atomic_bool store_failed; /* a job's end could not be recorded */
};

/* ------------------------------------------------------ progress (worker) */

/* Status and the API read progress under the pool's mutex whenever they
 * are asked; the loop is woken by it only for the STATUS line, which it
 * refreshes once a second at most: so at most once a second per worker
 * (a fleet of small tables runs jobs of a few milliseconds, and a wake-up
 * per phase cost more than the rest of the loop's work on them). Called
 * under the pool's mutex; true when the caller is to wake the loop. */
#define PROGRESS_WAKE_MS 1000

static bool progress_wakes(svc_worker *w) {
  if (w->prog.updated_ms - w->woke_ms < PROGRESS_WAKE_MS) return false;
  w->woke_ms = w->prog.updated_ms;
  return true;
}

static void set_phase(svc_worker *w, const char *phase) {
  pthread_mutex_lock(&w->pool->mu);
  w->prog.phase = phase;
  w->prog.updated_ms = bri_now_ms();
  bool wake = progress_wakes(w);
  pthread_mutex_unlock(&w->pool->mu);
  if (wake) uv_async_send(&w->pool->async);
}

static void on_progress(void *user, uint64_t rows_done, uint64_t rows_total, uint64_t bytes) {
  svc_worker *w = user;
  pthread_mutex_lock(&w->pool->mu);
  w->prog.rows_done = rows_done;
  w->prog.rows_total = rows_total;
  w->prog.bytes_written = bytes;
  w->prog.phase = "writing";
  w->prog.updated_ms = bri_now_ms();
  if (!w->prog.writing_ms) w->prog.writing_ms = w->prog.updated_ms;
  bool wake = progress_wakes(w);
  pthread_mutex_unlock(&w->pool->mu);
  if (wake) uv_async_send(&w->pool->async);
}

static bool on_cancelled(void *user) {
  svc_worker *w = user;
  int expected = 0;
  if (bri_mono_ms() > atomic_load(&w->lease_ok_mono))
    atomic_compare_exchange_strong(&w->cancel, &expected, CANCEL_LEASE);
  return atomic_load(&w->cancel) != 0;
}

/* Before a step that cannot be taken back (a commit, a batch of deletes):
 * the job's lease holds, in the store. */
static int on_confirm(void *user, bri_error *err) {
  svc_worker *w = user;
  return bri_jobs_lease_confirm(w->pool->store, w->job.id, "go on with", err);
}

static void drop_reserved(svc_worker *w) {
  for (size_t i = 0; i < w->n_reserved; i++) free((char *)w->reserved[i].path);
  w->n_reserved = 0;
}

/* The commit intent (daemon/jobs/journal.h): durable before the job's first
 * output, so that recovery can tell a commit that landed from one that did
 * not; the outputs reserved before it are journaled in its transaction. */
static int on_commit_intent(void *user, const char *txn_uuid, uint64_t read_version, bri_error *err) {
  svc_worker *w = user;
  int rc = bri_jobs_set_commit_intent(w->pool->store, w->job.id, txn_uuid, read_version, w->reserved,
                                      w->n_reserved, err);
  drop_reserved(w);
  return rc;
}

/* Keeps a reserved output for the commit intent (util/hooks.h: nothing is
 * created before the intent is recorded). */
static int reserve(svc_worker *w, const char *path, const char *kind, bri_error *err) {
  if (w->n_reserved == w->cap_reserved) {
    size_t cap = w->cap_reserved ? 2 * w->cap_reserved : 8;
    bri_jobs_reserved *g = realloc(w->reserved, cap * sizeof *g);
    if (!g) return bri_error_set(err, BRI_ENOMEM, "out of memory");
    w->reserved = g, w->cap_reserved = cap;
  }
  char *p = strdup(path);
  if (!p) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  w->reserved[w->n_reserved++] = (bri_jobs_reserved){p, kind};
  return 0;
}

/* The journal contract (daemon/jobs/journal.h): durable before the file;
 * a reserved output with the commit intent that follows. */
static int on_journal(void *user, const char *path, unsigned flags, bri_error *err) {
  svc_worker *w = user;
  size_t n = strlen(path);
  const char *kind = flags & BRI_JOURNAL_TREE                   ? "tree"
                     : n > 6 && !strcmp(path + n - 6, ".lance") ? "data"
                                                                : "sidecar";
  if (flags & BRI_JOURNAL_RESERVED) return reserve(w, path, kind, err);
  return bri_jobs_journal_add(w->pool->store, w->job.id, path, kind, err);
}

/* ------------------------------------------------------------- endings */

/* A job's end is written to the store with a few tries (a busy or briefly
 * failing disk). If it still cannot be written, the job stays "running" in
 * the store until its lease expires. On a store only this brid opens
 * (SQLite) that means a failing disk: the pool raises store_failed and the
 * loop stops brid (exit status 1), so that the service manager restarts it
 * and recovery settles the job, crash-only style. On a shared store
 * (PostgreSQL) an outage is expected to pass: the job is left to the
 * recovery of whichever instance sees its lease expire, this one included.
 * A job that is no longer this session's (BRI_ELEASE: its lease expired and
 * another instance recovered it) is simply let go. */
#define RECORD_TRIES 5

static bool recorded(svc_worker *w, int rc, int try, const char *what, const bri_error *err) {
  if (!rc) return true;
  if (rc == BRI_ELEASE) {
    log_notice("job %lld (%s %s): not recording %s: %s", (long long)w->job.id, bri_job_kind_name(w->job.kind),
               w->job.root, what, err->msg);
    return true;
  }
  if (try + 1 < RECORD_TRIES) {
    log_warn("job %lld (%s %s): cannot record %s (try %d of %d): %s", (long long)w->job.id,
             bri_job_kind_name(w->job.kind), w->job.root, what, try + 1, RECORD_TRIES, err->msg);
    struct timespec ts = {0, 100000000L << try};
    while (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    nanosleep(&ts, NULL);
    return false;
  }
  if (!bri_jobs_exclusive(w->pool->store)) {
    log_err("job %lld (%s %s): cannot record %s: %s; the job is recovered once its lease expires",
            (long long)w->job.id, bri_job_kind_name(w->job.kind), w->job.root, what, err->msg);
    return true;
  }
  log_err("job %lld (%s %s): cannot record %s: %s; stopping brid (its restart settles the job)",
          (long long)w->job.id, bri_job_kind_name(w->job.kind), w->job.root, what, err->msg);
  atomic_store(&w->pool->store_failed, true);
  return true;
}

/* Records the job's end; a succeeded job's with the table's version after
 * its commit (w->committed), when it has one. True when it was recorded. */
static bool finish(svc_worker *w, bri_job_state st, json_t *result, const char *error,
                   uint64_t written, uint64_t reused) {
  bri_jobs_store *s = w->pool->store;
  char *res = result ? json_dumps(result, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
  bool seen = st == BRI_JOB_SUCCEEDED && w->has_committed && w->committed.loaded;
  bri_jobs_outcome o = {.state = st, .result_json = res, .error = error, .bytes_written = written,
                        .bytes_reused = reused, .has_seen_version = seen,
                        .seen_version = seen ? w->committed.latest : 0};
  bri_error err;
  int rc;
  for (int try = 0; !recorded(w, rc = bri_jobs_finish(s, w->job.id, &o, &err), try, "its end", &err); try++) {
  }
  free(res);
  json_decref(result);
  return rc == 0;
}

/* Errors worth another attempt after the backoff: a concurrent writer won,
 * an I/O error (a full disk, a flaky mount), memory. Corrupt or unsupported
 * input fails at once: retrying cannot change the bytes. */
static bool transient(int rc) {
  return rc == BRI_ECONFLICT || rc == BRI_ETAKEN || rc == BRI_EIO || rc == BRI_ENOMEM;
}

static void retry(svc_worker *w, const char *why) {
  bri_job_state st;
  int64_t nb = 0;
  bri_error err;
  int rc;
  for (int try = 0;
       !recorded(w, rc = bri_jobs_retry_later(w->pool->store, w->job.id, why, &st, &nb, &err), try, "a retry", &err);
       try++) {
  }
  if (rc) return;
  if (st == BRI_JOB_QUEUED)
    log_notice("job %lld (%s %s): %s; retrying in %llds", (long long)w->job.id,
               bri_job_kind_name(w->job.kind), w->job.root, why,
               (long long)((nb - bri_now_ms()) / 1000));
  else
    log_notice("job %lld (%s %s): %s; now %s", (long long)w->job.id, bri_job_kind_name(w->job.kind),
               w->job.root, why, bri_job_state_name(st));
}

/* Removes what a failed attempt left (the library already removed its own
 * files; this settles the journal and anything it could not remove). */
static void roll_back(svc_worker *w) {
  size_t removed = 0, kept = 0;
  bri_error err;
  if (svc_recover_outputs(w->pool->store, &w->job, &removed, &kept, &err))
    log_err("job %lld (%s): rolling back its outputs: %s; recovery retries once its lease has run out", (long long)w->job.id,
            w->job.root, err.msg);
  else if (removed || kept)
    log_info("job %lld (%s): rollback removed %zu leftover file(s), kept %zu referenced", (long long)w->job.id,
             w->job.root, removed, kept);
}

/* The end of an attempt that did not succeed (its outputs rolled back): a
 * cancellation for shutdown and transient errors go back to the queue, a
 * lost lease leaves the job to recovery, a cancellation on request ends the
 * job cancelled, anything else fails it. */
static void end_unsucceeded(svc_worker *w, int rc, const bri_error *err) {
  const char *kind = bri_job_kind_name(w->job.kind);
  if (rc == BRI_ECANCELLED && atomic_load(&w->cancel) == CANCEL_SHUTDOWN) {
    retry(w, "interrupted: brid is shutting down");
  } else if ((rc == BRI_ECANCELLED && atomic_load(&w->cancel) == CANCEL_LEASE) || rc == BRI_ELEASE) {
    /* not requeued from here: once the lease has run out the job is
     * recovery's (of this instance or another), which takes it over in one
     * statement; a requeue racing it would record a second end */
    log_warn("job %lld (%s %s): stopped: its lease could not be confirmed in time (%s); recovery requeues it "
             "once the lease has run out",
             (long long)w->job.id, kind, w->job.root,
             rc == BRI_ELEASE ? err->msg : "the job store did not answer the heartbeats");
  } else if (rc == BRI_ECANCELLED) {
    log_notice("job %lld (%s %s): cancelled", (long long)w->job.id, kind, w->job.root);
    finish(w, BRI_JOB_CANCELLED, NULL, "cancelled on request", 0, 0);
  } else if (transient(rc)) {
    retry(w, err->msg);
  } else {
    log_err("job %lld (%s %s) failed: %s", (long long)w->job.id, kind, w->job.root, err->msg);
    finish(w, BRI_JOB_FAILED, NULL, err->msg, 0, 0);
  }
}

/* ------------------------------------------------ the job API (svc_kinds) */

static void job_phase(void *user, const char *phase) { set_phase(user, phase); }

/* After a commit: the table is checked again on this thread (a job queued
 * here if the job's budget left work, svc_check_settle); the version it
 * found is recorded with the job's end (finish), and then the loop takes
 * the result (svc_pool_collect) before it shows the table again. */
static void job_committed(void *user) {
  svc_worker *w = user;
  svc_check *c = &w->committed;
  svc_probe how = {.trigger = SVC_TRIGGER_AFTER, .force = true};
  svc_check_probe(w->job.root, &w->policy, &how, c);
  /* seen = latest: the version is left to finish to record */
  svc_check_settle(w->pool->store, w->job.table_id, w->job.root, w->policy.auto_compact, true, c->latest, c);
  w->has_committed = true;
}

/* Hands the table after the commit to the loop (svc_pool_collect). */
static void publish_committed(svc_worker *w, bool seen_recorded) {
  if (!w->has_committed) return;
  w->has_committed = false;
  w->committed.seen_recorded = seen_recorded && w->committed.loaded;
  char *root = strdup(w->job.root);
  pthread_mutex_lock(&w->pool->mu);
  if (root) {
    free(w->post_root);
    w->post_root = root;
    w->post = w->committed;
  }
  pthread_mutex_unlock(&w->pool->mu);
}

static void job_count(void *user, uint64_t items) {
  svc_worker *w = user;
  pthread_mutex_lock(&w->pool->mu);
  w->prog.rows_done = items; /* files, for the progress line */
  w->prog.updated_ms = bri_now_ms();
  pthread_mutex_unlock(&w->pool->mu);
}

static void job_succeed(void *user, json_t *result, uint64_t written, uint64_t reused) {
  svc_worker *w = user;
  publish_committed(w, finish(w, BRI_JOB_SUCCEEDED, result, NULL, written, reused));
}

static void job_fail(void *user, json_t *result, const char *msg) {
  svc_worker *w = user;
  log_err("job %lld (%s %s) failed: %s", (long long)w->job.id, bri_job_kind_name(w->job.kind), w->job.root, msg);
  finish(w, BRI_JOB_FAILED, result, msg, 0, 0);
}

static void job_unsucceeded(void *user, int rc, const bri_error *err) {
  roll_back(user);
  end_unsucceeded(user, rc, err);
}

/* ------------------------------------------------------------ the lock */

/* brictl working offline on the table holds its lock: the job waits */
#define LOCKED_RETRY_MS 5000

/* Takes the table lock of a job that writes (ops/lock.h). False when the
 * job cannot run now: the lock is held (the job goes back to the queue
 * without counting an attempt, and says who holds the lock), or it could
 * not be taken (the job's attempt ends as by that error). A store without
 * locks runs without one. */
static bool take_lock(svc_worker *w, bri_table_lock **lock) {
  char who[160];
  snprintf(who, sizeof who, "brid pid %d, job %lld (%s)", (int)getpid(), (long long)w->job.id,
           bri_job_kind_name(w->job.kind));
  bri_error err;
  int rc = bri_table_lock_take(w->job.root, who, lock, &err);
  if (rc == 0 || rc == BRI_EUNSUPPORTED) return true;
  if (rc != BRI_ETAKEN) {
    job_unsucceeded(w, rc, &err);
    return false;
  }
  bri_job_state st;
  bri_error e2;
  for (int try = 0; !recorded(w, bri_jobs_defer(w->pool->store, w->job.id, LOCKED_RETRY_MS, err.msg, &st, &e2), try,
                              "a deferral", &e2);
       try++) {
  }
  log_info("job %lld (%s %s): %s; waiting", (long long)w->job.id, bri_job_kind_name(w->job.kind), w->job.root,
           err.msg);
  return false;
}

/* -------------------------------------------------------------- thread */

static void run_job(svc_worker *w) {
  json_t *params = NULL;
  if (w->job.params) {
    json_error_t je;
    params = json_loads(w->job.params, 0, &je);
  }
  log_info("job %lld: %s %s started (attempt %d of %d)", (long long)w->job.id, bri_job_kind_name(w->job.kind),
           w->job.root, w->job.attempts, w->job.max_attempts);
  const svc_kind *k = svc_kind_of(w->job.kind);
  svc_job j = {.root = w->job.root, .id = w->job.id,
               .hooks = {.journal = on_journal, .cancelled = on_cancelled, .progress = on_progress,
                         .commit_intent = on_commit_intent, .confirm = on_confirm, .user = w},
               .phase = job_phase, .committed = job_committed, .count = job_count, .succeed = job_succeed, .fail = job_fail, .unsucceeded = job_unsucceeded};
  svc_opts o;
  char msg[512];
  if (!k) {
    snprintf(msg, sizeof msg, "%s jobs are not available in this build of brid", bri_job_kind_name(w->job.kind));
    job_fail(w, NULL, msg);
  } else if (k->parse(params, &w->policy, &o, NULL, msg, sizeof msg)) {
    job_fail(w, NULL, msg); /* a store written by another version of brid */
  } else if (!rpc_kind_of(k->kind)->read_only && k->writes(&o)) {
    bri_table_lock *lock = NULL;
    if (take_lock(w, &lock)) k->run(&j, &o);
    bri_table_lock_release(lock);
  } else {
    k->run(&j, &o);
  }
  publish_committed(w, false); /* a commit whose job did not end succeeded */
  drop_reserved(w);
  json_decref(params);
}

static void *worker_main(void *arg) {
  svc_worker *w = arg;
  svc_pool *p = w->pool;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    while (!p->stop && w->state != W_ASSIGNED) pthread_cond_wait(&w->cv, &p->mu);
    if (w->state != W_ASSIGNED) break; /* stop, and nothing to run */
    w->state = W_RUNNING;
    pthread_mutex_unlock(&p->mu);
    run_job(w);
    pthread_mutex_lock(&p->mu);
    w->state = W_DONE;
    uv_async_send(&p->async);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

/* --------------------------------------------------------- loop thread */

void svc_pool_collect(svc_pool *p) {
  if (!p) return;
  for (int i = 0; i < p->n; i++) {
    svc_worker *w = &p->w[i];
    pthread_mutex_lock(&p->mu);
    char *root = w->post_root;
    svc_check c = w->post;
    w->post_root = NULL;
    pthread_mutex_unlock(&p->mu);
    if (!root) continue;
    brid_table *t = svc_state_table(p->d, root);
    if (t) svc_state_table_checked(t, &c);
    free(root);
  }
}

static void on_async(uv_async_t *h) {
  svc_pool *p = h->data;
  svc_pool_collect(p);
  int freed = 0;
  pthread_mutex_lock(&p->mu);
  for (int i = 0; i < p->n; i++) {
    svc_worker *w = &p->w[i];
    if (w->state != W_DONE) continue;
    brid_table *t = svc_state_table(p->d, w->job.root);
    if (t) svc_state_job_ended(t); /* (its table's post-commit check was applied above) */
    bri_jobs_job_clear(&w->job);
    memset(&w->prog, 0, sizeof w->prog);
    atomic_store(&w->cancel, 0);
    w->state = W_IDLE;
    freed++;
  }
  pthread_mutex_unlock(&p->mu);
  if (atomic_load(&p->store_failed) && !p->d->draining) {
    p->d->exit_code = 1;
    svc_state_fatal(p->d);
  }
  if (freed) svc_state_work_queued(p->d);
  for (int i = 0; i < freed; i++) svc_state_busy_end(p->d); /* each began in svc_pool_run */
  svc_state_status_changed(p->d, freed > 0);
}

int svc_pool_start(brid *d, int n, svc_pool **out, bri_error *err) {
  *out = NULL;
  svc_pool *p = calloc(1, sizeof *p);
  if (!p || !(p->w = calloc((size_t)n, sizeof *p->w))) {
    free(p);
    return bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  p->d = d;
  p->store = d->store;
  p->n = n;
  pthread_mutex_init(&p->mu, NULL);
  if (uv_async_init(&d->loop, &p->async, on_async) != 0) {
    pthread_mutex_destroy(&p->mu);
    free(p->w), free(p);
    return bri_error_set(err, BRI_EIO, "uv_async_init failed");
  }
  p->async.data = p;
  p->async_open = true;
  for (int i = 0; i < n; i++) {
    svc_worker *w = &p->w[i];
    w->pool = p;
    w->index = i;
    pthread_cond_init(&w->cv, NULL);
    atomic_init(&w->cancel, 0);
    int e = pthread_create(&w->thread, NULL, worker_main, w);
    if (e) {
      *out = p;
      svc_pool_stop(p);
      return bri_error_set(err, BRI_EIO, "cannot start worker thread %d: %s", i, strerror(e));
    }
    w->started = true;
  }
  *out = p;
  return 0;
}

int svc_pool_size(const svc_pool *p) { return p ? p->n : 0; }

int svc_pool_idle(const svc_pool *p) {
  if (!p) return 0;
  int n = 0;
  pthread_mutex_lock((pthread_mutex_t *)&p->mu);
  for (int i = 0; i < p->n; i++) n += p->w[i].state == W_IDLE;
  pthread_mutex_unlock((pthread_mutex_t *)&p->mu);
  return n;
}

void svc_pool_run(svc_pool *p, bri_jobs_job *job, const svc_policy *pol) {
  bool assigned = false;
  pthread_mutex_lock(&p->mu);
  for (int i = 0; i < p->n; i++) {
    svc_worker *w = &p->w[i];
    if (w->state != W_IDLE) continue;
    w->job = *job;
    memset(job, 0, sizeof *job);
    w->policy = *pol;
    memset(&w->prog, 0, sizeof w->prog);
    w->prog.started_ms = bri_now_ms();
    w->prog.updated_ms = w->woke_ms = w->prog.started_ms;
    w->prog.phase = "starting";
    atomic_store(&w->cancel, 0);
    atomic_store(&w->lease_ok_mono, bri_mono_ms() + 2 * bri_jobs_lease_ttl_ms(p->store) / 3);
    w->state = W_ASSIGNED;
    pthread_cond_signal(&w->cv);
    assigned = true;
    break;
  }
  pthread_mutex_unlock(&p->mu);
  if (assigned) svc_state_busy_begin(p->d); /* a draining daemon waits for the job */
}

bool svc_pool_cancel(svc_pool *p, int64_t job_id, bool for_shutdown) {
  bool found = false;
  pthread_mutex_lock(&p->mu);
  for (int i = 0; i < p->n; i++) {
    svc_worker *w = &p->w[i];
    if ((w->state == W_ASSIGNED || w->state == W_RUNNING) && w->job.id == job_id) {
      int expected = 0;
      atomic_compare_exchange_strong(&w->cancel, &expected, for_shutdown ? CANCEL_SHUTDOWN : CANCEL_USER);
      found = true;
    }
  }
  pthread_mutex_unlock(&p->mu);
  return found;
}

size_t svc_pool_held(svc_pool *p, int64_t *ids, size_t cap) {
  size_t n = 0;
  pthread_mutex_lock(&p->mu);
  for (int i = 0; i < p->n && n < cap; i++)
    if (p->w[i].state == W_ASSIGNED || p->w[i].state == W_RUNNING) ids[n++] = p->w[i].job.id;
  pthread_mutex_unlock(&p->mu);
  return n;
}

bool svc_pool_holds(svc_pool *p, int64_t job_id) {
  int64_t ids[64];
  size_t n = svc_pool_held(p, ids, sizeof ids / sizeof ids[0]);
  for (size_t i = 0; i < n; i++)
    if (ids[i] == job_id) return true;
  return n == sizeof ids / sizeof ids[0]; /* more workers than looked at: assume it runs here */
}

void svc_pool_leases(svc_pool *p, const int64_t *ids, const int *renewed, size_t n, int64_t ok_until_mono) {
  pthread_mutex_lock(&p->mu);
  for (int i = 0; i < p->n; i++) {
    svc_worker *w = &p->w[i];
    if (w->state != W_ASSIGNED && w->state != W_RUNNING) continue;
    for (size_t k = 0; k < n; k++) {
      if (ids[k] != w->job.id) continue;
      int expected = 0;
      if (renewed[k]) atomic_store(&w->lease_ok_mono, ok_until_mono);
      else atomic_compare_exchange_strong(&w->cancel, &expected, CANCEL_LEASE);
    }
  }
  pthread_mutex_unlock(&p->mu);
}

void svc_pool_cancel_all(svc_pool *p, bool for_shutdown) {
  pthread_mutex_lock(&p->mu);
  for (int i = 0; i < p->n; i++) {
    svc_worker *w = &p->w[i];
    int expected = 0;
    if (w->state == W_ASSIGNED || w->state == W_RUNNING)
      atomic_compare_exchange_strong(&w->cancel, &expected, for_shutdown ? CANCEL_SHUTDOWN : CANCEL_USER);
  }
  pthread_mutex_unlock(&p->mu);
}

bool svc_pool_progress(svc_pool *p, int64_t job_id, svc_progress *out) {
  bool found = false;
  pthread_mutex_lock(&p->mu);
  for (int i = 0; i < p->n; i++) {
    svc_worker *w = &p->w[i];
    if (w->state != W_IDLE && w->job.id == job_id) {
      *out = w->prog;
      found = true;
    }
  }
  pthread_mutex_unlock(&p->mu);
  return found;
}

/* Rates over the time since the first progress report (planning is not
 * writing), once a second of it has passed; the ETA from the row rate. */
json_t *svc_progress_to_json(const svc_progress *pr) {
  json_t *o = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I}", "phase", pr->phase ? pr->phase : "starting", "rows_done",
                        (json_int_t)pr->rows_done, "rows_total", (json_int_t)pr->rows_total, "bytes_written",
                        (json_int_t)pr->bytes_written, "started_at", (json_int_t)pr->started_ms, "updated_at",
                        (json_int_t)pr->updated_ms);
  if (pr->rows_total)
    json_object_set_new(o, "percent", json_real(100.0 * (double)pr->rows_done / (double)pr->rows_total));
  double secs = pr->writing_ms ? (double)(pr->updated_ms - pr->writing_ms) / 1000.0 : 0;
  json_t *rows_ps = json_null(), *bytes_ps = json_null(), *eta = json_null();
  if (secs >= 1.0) {
    double rps = (double)pr->rows_done / secs;
    rows_ps = json_real(rps);
    bytes_ps = json_real((double)pr->bytes_written / secs);
    if (rps > 0 && pr->rows_total >= pr->rows_done)
      eta = json_integer((json_int_t)((double)(pr->rows_total - pr->rows_done) / rps + 0.5));
  }
  json_object_set_new(o, "rows_per_second", rows_ps);
  json_object_set_new(o, "bytes_per_second", bytes_ps);
  json_object_set_new(o, "eta_seconds", eta);
  return o;
}

json_t *svc_pool_running(svc_pool *p) {
  json_t *a = json_array();
  if (!p) return a;
  pthread_mutex_lock(&p->mu);
  for (int i = 0; i < p->n; i++) {
    svc_worker *w = &p->w[i];
    if (w->state == W_IDLE) continue;
    json_t *o = json_pack("{s:I, s:s, s:s, s:i, s:b}", "job", (json_int_t)w->job.id, "table", w->job.root, "kind",
                          bri_job_kind_name(w->job.kind), "worker", i, "cancelling", atomic_load(&w->cancel) != 0);
    json_object_set_new(o, "progress", svc_progress_to_json(&w->prog));
    json_array_append_new(a, o);
  }
  pthread_mutex_unlock(&p->mu);
  return a;
}

static void on_async_closed(uv_handle_t *h) { (void)h; }

void svc_pool_stop(svc_pool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->stop = true;
  for (int i = 0; i < p->n; i++) pthread_cond_signal(&p->w[i].cv);
  pthread_mutex_unlock(&p->mu);
  for (int i = 0; i < p->n; i++)
    if (p->w[i].started) {
      pthread_join(p->w[i].thread, NULL);
      p->w[i].started = false;
    }
  if (p->async_open) {
    uv_close((uv_handle_t *)&p->async, on_async_closed);
    p->async_open = false;
  }
}

void svc_pool_free(svc_pool *p) {
  if (!p) return;
  for (int i = 0; i < p->n; i++) {
    bri_jobs_job_clear(&p->w[i].job);
    drop_reserved(&p->w[i]);
    free(p->w[i].reserved);
    free(p->w[i].post_root);
    pthread_cond_destroy(&p->w[i].cv);
  }
  pthread_mutex_destroy(&p->mu);
  free(p->w);
  free(p);
}

static int pool_start(brid *d, bri_error *err) { return svc_pool_start(d, d->cfg.workers, &d->pool, err); }
static void pool_close(brid *d) { svc_pool_stop(d->pool); }
static void pool_dispose(brid *d) { svc_pool_free(d->pool); }

const brid_module svc_worker_module = {.name = "workers", .start = pool_start, .close = pool_close, .dispose = pool_dispose};
