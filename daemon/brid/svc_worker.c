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
#include <sys/stat.h>

#include "ops/cleanup.h"
#include "compact/execute.h"
#include "svc_log.h"
#include "svc_recover.h"
#include "svc_sched.h"
#include "util/duration.h"
#include "ops/materialize.h"
#include "ops/verify.h"

typedef enum { W_IDLE, W_ASSIGNED, W_RUNNING, W_DONE } wstate;

typedef struct svc_worker {
  struct svc_pool *pool;
  int index;
  pthread_t thread;
  bool started;
  pthread_cond_t cv;
  wstate state;        /* under pool->mu */
  bri_jobs_job job;    /* valid from ASSIGNED to the loop's collection of DONE */
  svc_policy policy;
  svc_progress prog;   /* under pool->mu */
  atomic_int cancel;   /* 0, CANCEL_USER or CANCEL_SHUTDOWN */
} svc_worker;

enum { CANCEL_USER = 1, CANCEL_SHUTDOWN = 2 };

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
  int64_t last_status_ms;
};

/* ------------------------------------------------------ progress (worker) */

static void set_phase(svc_worker *w, const char *phase) {
  pthread_mutex_lock(&w->pool->mu);
  w->prog.phase = phase;
  w->prog.updated_ms = bri_now_ms();
  pthread_mutex_unlock(&w->pool->mu);
  uv_async_send(&w->pool->async);
}

static void on_progress(void *user, uint64_t rows_done, uint64_t rows_total, uint64_t bytes) {
  svc_worker *w = user;
  pthread_mutex_lock(&w->pool->mu);
  w->prog.rows_done = rows_done;
  w->prog.rows_total = rows_total;
  w->prog.bytes_written = bytes;
  w->prog.phase = "writing";
  w->prog.updated_ms = bri_now_ms();
  pthread_mutex_unlock(&w->pool->mu);
  uv_async_send(&w->pool->async);
}

static bool on_cancelled(void *user) {
  svc_worker *w = user;
  return atomic_load(&w->cancel) != 0;
}

/* The commit intent (lib/jobs/journal.h): durable before the commit, so that
 * recovery can tell a commit that landed from one that did not. */
static int on_commit_intent(void *user, const char *txn_uuid, uint64_t read_version, bri_error *err) {
  svc_worker *w = user;
  return bri_jobs_set_commit_intent(w->pool->store, w->job.id, txn_uuid, read_version, err);
}

/* The journal contract (lib/jobs/journal.h): durable before the file. */
static int on_journal(void *user, const char *path, bri_error *err) {
  svc_worker *w = user;
  size_t n = strlen(path);
  const char *kind = n > 6 && !strcmp(path + n - 6, ".lance") ? "data" : "sidecar";
  return bri_jobs_journal_add(w->pool->store, w->job.id, path, kind, err);
}

/* ------------------------------------------------------------- endings */

/* A job's end is written to the store with a few tries (a busy or briefly
 * failing disk). If it still cannot be written, the job stays "running" in
 * the store and would hold its table's slot for good: the pool raises
 * store_failed and the loop stops brid (exit status 1), so that the service
 * manager restarts it and recovery settles the job, crash-only style. */
#define RECORD_TRIES 5

static bool recorded(svc_worker *w, int rc, int try, const char *what, const bri_error *err) {
  if (!rc) return true;
  if (try + 1 < RECORD_TRIES) {
    log_warn("job %lld (%s %s): cannot record %s (try %d of %d): %s", (long long)w->job.id,
             bri_job_kind_name(w->job.kind), w->job.root, what, try + 1, RECORD_TRIES, err->msg);
    struct timespec ts = {0, 100000000L << try};
    while (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    nanosleep(&ts, NULL);
    return false;
  }
  log_err("job %lld (%s %s): cannot record %s: %s; stopping brid (its restart settles the job)",
          (long long)w->job.id, bri_job_kind_name(w->job.kind), w->job.root, what, err->msg);
  atomic_store(&w->pool->store_failed, true);
  return true;
}

static void finish(svc_worker *w, bri_job_state st, json_t *result, const char *error,
                   uint64_t written, uint64_t reused) {
  bri_jobs_store *s = w->pool->store;
  char *res = result ? json_dumps(result, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
  bri_jobs_outcome o = {.state = st, .result_json = res, .error = error, .bytes_written = written,
                        .bytes_reused = reused};
  bri_error err;
  for (int try = 0; !recorded(w, bri_jobs_finish(s, w->job.id, &o, &err), try, "its end", &err); try++) {
  }
  free(res);
  json_decref(result);
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
    log_err("job %lld (%s): rolling back its outputs: %s; the next start-up retries", (long long)w->job.id,
            w->job.root, err.msg);
  else if (removed || kept)
    log_info("job %lld (%s): rollback removed %zu leftover file(s), kept %zu referenced", (long long)w->job.id,
             w->job.root, removed, kept);
}

/* The end of an attempt that did not succeed (its outputs rolled back): a
 * cancellation for shutdown and transient errors go back to the queue, a
 * cancellation on request ends the job cancelled, anything else fails it. */
static void end_unsucceeded(svc_worker *w, int rc, const bri_error *err) {
  const char *kind = bri_job_kind_name(w->job.kind);
  if (rc == BRI_ECANCELLED && atomic_load(&w->cancel) == CANCEL_SHUTDOWN) {
    retry(w, "interrupted: brid is shutting down");
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

static void clear_journal(svc_worker *w) {
  bri_error err;
  if (bri_jobs_journal_clear(w->pool->store, w->job.id, &err))
    log_err("job %lld: clearing its journal: %s", (long long)w->job.id, err.msg);
}

/* ------------------------------------------------------------- compact */

static json_t *compact_result(const bri_compact_request *q, const bri_compact_report *r) {
  json_t *plan = r->plan ? json_incref(r->plan) : json_null();
  return json_pack("{s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:o}",
                   "strategy", bri_strategy_name(q->strategy), "dry_run", q->dry_run, "read_version",
                   (json_int_t)r->read_version, "version", (json_int_t)r->version, "fragments_before",
                   (json_int_t)r->fragments_before, "fragments_after", (json_int_t)r->fragments_after,
                   "bins", (json_int_t)r->bins, "fragments_rewritten", (json_int_t)r->fragments_rewritten,
                   "rows", (json_int_t)r->rows, "data_bytes_written", (json_int_t)r->data_bytes_written,
                   "payload_bytes_copied", (json_int_t)r->payload_bytes_copied, "inline_bytes_copied",
                   (json_int_t)r->inline_bytes_copied, "payload_bytes_reused",
                   (json_int_t)r->payload_bytes_reused, "links", (json_int_t)r->links,
                   "packs_below_threshold", (json_int_t)r->packs_below_threshold, "seconds", r->seconds,
                   "plan", plan);
}

static int compact_params(svc_worker *w, json_t *params, bri_compact_request *q, char *msg, size_t cap) {
  if (!params) return 0;
  json_t *v;
  bri_error err;
  if ((v = json_object_get(params, "strategy")) &&
      (!json_is_string(v) || bri_strategy_parse(json_string_value(v), &q->strategy, &err)))
    return snprintf(msg, cap, "params.strategy must be bri, link or copy"), -1;
  if ((v = json_object_get(params, "dry_run"))) q->dry_run = json_is_true(v);
  if ((v = json_object_get(params, "target_rows_per_fragment")) && json_is_integer(v) && json_integer_value(v) > 0)
    q->options.target_rows_per_fragment = (uint64_t)json_integer_value(v);
  (void)w;
  return 0;
}

static void run_compact(svc_worker *w, json_t *params) {
  bri_compact_request q;
  bri_compact_request_default(&q);
  q.options = w->policy.compact;
  q.strategy = w->policy.strategy;
  q.batch_rows = w->policy.batch_rows;
  char msg[256];
  if (compact_params(w, params, &q, msg, sizeof msg)) {
    finish(w, BRI_JOB_FAILED, NULL, msg, 0, 0);
    return;
  }
  bri_compact_hooks hooks = {.journal = on_journal, .progress = on_progress, .cancelled = on_cancelled,
                             .commit_intent = on_commit_intent, .user = w};
  bri_compact_report rep;
  bri_error err = {0};
  set_phase(w, "planning");
  int rc = bri_compact_table(w->job.root, &q, &hooks, &rep, &err);
  if (rc == 0) {
    clear_journal(w);
    uint64_t written = rep.data_bytes_written + rep.payload_bytes_copied;
    if (rep.version)
      log_notice("job %lld: compacted %s: version %llu, %llu -> %llu fragments, %llu rows, "
                 "%llu bytes written, %llu reused (%.2fs)",
                 (long long)w->job.id, w->job.root, (unsigned long long)rep.version,
                 (unsigned long long)rep.fragments_before, (unsigned long long)rep.fragments_after,
                 (unsigned long long)rep.rows, (unsigned long long)written,
                 (unsigned long long)rep.payload_bytes_reused, rep.seconds);
    else
      log_info("job %lld: %s: %s", (long long)w->job.id, w->job.root,
               q.dry_run ? "dry run planned" : "nothing to compact");
    finish(w, BRI_JOB_SUCCEEDED, compact_result(&q, &rep), NULL, written, rep.payload_bytes_reused);
  } else {
    roll_back(w);
    end_unsucceeded(w, rc, &err);
  }
  json_decref(rep.plan);
}

/* ------------------------------------------------------------- cleanup */

typedef struct clean_ctx {
  svc_worker *w;
  uint64_t files;
} clean_ctx;

static void on_clean(void *user, bri_cleanup_kind kind, const char *path, uint64_t bytes) {
  clean_ctx *c = user;
  c->files++;
  log_debug("job %lld: cleanup %s %s (%llu bytes)", (long long)c->w->job.id, bri_cleanup_kind_name(kind), path,
            (unsigned long long)bytes);
  pthread_mutex_lock(&c->w->pool->mu);
  c->w->prog.rows_done = c->files; /* files, for the progress line */
  c->w->prog.bytes_written = 0;
  pthread_mutex_unlock(&c->w->pool->mu);
}

static void run_cleanup(svc_worker *w, json_t *params) {
  bri_cleanup_policy p = w->policy.cleanup;
  json_t *v;
  if (params) {
    if ((v = json_object_get(params, "older_than")) && json_is_integer(v) && json_integer_value(v) >= 0)
      p.older_than_sec = json_integer_value(v);
    if ((v = json_object_get(params, "retain_versions")) && json_is_integer(v) && json_integer_value(v) >= 0)
      p.retain_versions = (uint64_t)json_integer_value(v);
    if ((v = json_object_get(params, "grace")) && json_is_integer(v) && json_integer_value(v) >= 0)
      p.grace_sec = json_integer_value(v);
    if ((v = json_object_get(params, "dry_run"))) p.dry_run = json_is_true(v);
  }
  p.cancelled = on_cancelled, p.cancel_user = w;
  set_phase(w, "cleaning");
  clean_ctx c = {w, 0};
  bri_cleanup_stats st;
  bri_error err = {0};
  int rc = bri_cleanup_run(w->job.root, &p, on_clean, &c, &st, &err);
  if (rc) {
    end_unsucceeded(w, rc, &err);
    return;
  }
  json_t *kinds = json_object();
  uint64_t files = 0, bytes = 0;
  for (int k = 0; k < BRI_CLEAN_KINDS; k++) {
    json_object_set_new(kinds, bri_cleanup_kind_name(k),
                        json_pack("{s:I, s:I}", "files", (json_int_t)st.files[k], "bytes", (json_int_t)st.bytes[k]));
    files += st.files[k], bytes += st.bytes[k];
  }
  log_notice("job %lld: cleanup of %s %s %llu files, %llu bytes (%llu versions retained)", (long long)w->job.id,
             w->job.root, p.dry_run ? "would delete" : "deleted", (unsigned long long)files,
             (unsigned long long)bytes, (unsigned long long)st.versions_retained);
  json_t *res = json_pack("{s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}", "dry_run", p.dry_run, "older_than",
                          (json_int_t)p.older_than_sec, "retain_versions", (json_int_t)p.retain_versions,
                          "versions_retained", (json_int_t)st.versions_retained, "files", (json_int_t)files,
                          "bytes", (json_int_t)bytes, "dirs_removed", (json_int_t)st.dirs_removed,
                          "kept_too_young", (json_int_t)st.kept_too_young, "by_kind", kinds);
  finish(w, BRI_JOB_SUCCEEDED, res, NULL, 0, 0);
}

/* --------------------------------------------------------- materialize */

static void run_materialize(svc_worker *w, json_t *params) {
  bri_materialize_options o;
  bri_materialize_options_default(&o);
  json_t *v;
  if (params && (v = json_object_get(params, "dry_run"))) o.dry_run = json_is_true(v);
  if (params && (v = json_object_get(params, "no_links"))) o.no_links = json_is_true(v);
  o.journal = on_journal;
  o.journal_user = w;
  o.cancelled = on_cancelled, o.cancel_user = w;
  set_phase(w, "materializing");
  bri_materialize_report rep;
  bri_error err = {0};
  int rc = bri_materialize_table(w->job.root, &o, &rep, &err);
  if (rc) {
    roll_back(w);
    end_unsucceeded(w, rc, &err);
    return;
  }
  clear_journal(w);
  log_notice("job %lld: materialized %s: %llu data files, %llu links, %llu copies (%.2fs)", (long long)w->job.id,
             w->job.root, (unsigned long long)rep.data_files, (unsigned long long)rep.links,
             (unsigned long long)rep.copies, rep.seconds);
  json_t *res = json_pack("{s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f}", "dry_run", o.dry_run,
                          "read_version", (json_int_t)rep.read_version, "version", (json_int_t)rep.version,
                          "commits", (json_int_t)rep.commits, "data_files", (json_int_t)rep.data_files,
                          "sidecars", (json_int_t)rep.sidecars, "links", (json_int_t)rep.links, "copies",
                          (json_int_t)rep.copies, "bytes_linked", (json_int_t)rep.bytes_linked, "bytes_copied",
                          (json_int_t)rep.bytes_copied, "bri_files_left", (json_int_t)rep.bri_files_left,
                          "seconds", rep.seconds);
  finish(w, BRI_JOB_SUCCEEDED, res, NULL, rep.bytes_copied, rep.bytes_linked);
}

/* -------------------------------------------------------------- verify */

/* A verify job succeeds when the table is whole and fails (with the first
 * problem as its error) when it is not, so "failed" in the job list means
 * what an operator expects. */
static void run_verify(svc_worker *w, json_t *params) {
  bri_verify_options o = {0};
  json_t *v;
  if (params && (v = json_object_get(params, "all_versions"))) o.all_versions = json_is_true(v);
  if (params && (v = json_object_get(params, "skip_blobs"))) o.skip_blobs = json_is_true(v);
  o.max_problems = 100;
  set_phase(w, "verifying");
  bri_verify_report rep;
  memset(&rep, 0, sizeof rep);
  bri_error err = {0};
  int rc = bri_verify_table(w->job.root, &o, &rep, &err);
  if (rc) {
    log_err("job %lld (verify %s) failed: %s", (long long)w->job.id, w->job.root, err.msg);
    finish(w, BRI_JOB_FAILED, NULL, err.msg, 0, 0);
    bri_verify_report_free(&rep);
    return;
  }
  json_t *problems = json_array();
  for (size_t i = 0; i < rep.n_problems; i++)
    json_array_append_new(problems, json_pack("{s:I, s:s, s:s}", "version", (json_int_t)rep.problems[i].version, "file",
                                              rep.problems[i].file ? rep.problems[i].file : "", "what",
                                              rep.problems[i].what ? rep.problems[i].what : ""));
  json_t *res = json_pack("{s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}", "all_versions",
                          o.all_versions, "versions_checked", (json_int_t)rep.versions_checked, "data_files",
                          (json_int_t)rep.data_files, "deletion_files", (json_int_t)rep.deletion_files,
                          "transaction_files", (json_int_t)rep.transaction_files, "index_dirs",
                          (json_int_t)rep.index_dirs, "bri_targets", (json_int_t)rep.bri_targets, "fragments",
                          (json_int_t)rep.fragments, "blobs", (json_int_t)rep.blobs, "blobs_unchecked",
                          (json_int_t)rep.blobs_unchecked, "problems_total", (json_int_t)rep.problems_total,
                          "problems", problems);
  if (rep.problems_total == 0) {
    log_notice("job %lld: verified %s: %llu version(s), %llu data files, %llu blobs: no problem", (long long)w->job.id,
               w->job.root, (unsigned long long)rep.versions_checked, (unsigned long long)rep.data_files,
               (unsigned long long)rep.blobs);
    finish(w, BRI_JOB_SUCCEEDED, res, NULL, 0, 0);
  } else {
    char msg[1024];
    snprintf(msg, sizeof msg, "%llu problem(s); first: %s: %s", (unsigned long long)rep.problems_total,
             rep.n_problems ? rep.problems[0].file : "?", rep.n_problems ? rep.problems[0].what : "?");
    log_err("job %lld (verify %s): %s", (long long)w->job.id, w->job.root, msg);
    finish(w, BRI_JOB_FAILED, res, msg, 0, 0);
  }
  bri_verify_report_free(&rep);
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
  switch (w->job.kind) {
  case BRI_JOB_COMPACT: run_compact(w, params); break;
  case BRI_JOB_CLEANUP: run_cleanup(w, params); break;
  case BRI_JOB_MATERIALIZE: run_materialize(w, params); break;
  case BRI_JOB_VERIFY: run_verify(w, params); break;
  default: {
    char msg[160];
    snprintf(msg, sizeof msg, "%s jobs are not available in this build of brid", bri_job_kind_name(w->job.kind));
    log_err("job %lld (%s): %s", (long long)w->job.id, w->job.root, msg);
    finish(w, BRI_JOB_FAILED, NULL, msg, 0, 0);
  }
  }
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

static void on_async(uv_async_t *h) {
  svc_pool *p = h->data;
  int freed = 0;
  pthread_mutex_lock(&p->mu);
  for (int i = 0; i < p->n; i++) {
    svc_worker *w = &p->w[i];
    if (w->state != W_DONE) continue;
    bri_jobs_job_clear(&w->job);
    memset(&w->prog, 0, sizeof w->prog);
    atomic_store(&w->cancel, 0);
    w->state = W_IDLE;
    freed++;
  }
  pthread_mutex_unlock(&p->mu);
  if (atomic_load(&p->store_failed) && !p->d->draining) {
    p->d->exit_code = 1;
    svc_daemon_shutdown(p->d);
  }
  if (freed) {
    svc_sched_kick(p->d);
    svc_daemon_worker_idle(p->d);
  }
  svc_status_update(p->d, freed > 0);
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
  pthread_mutex_lock(&p->mu);
  for (int i = 0; i < p->n; i++) {
    svc_worker *w = &p->w[i];
    if (w->state != W_IDLE) continue;
    w->job = *job;
    memset(job, 0, sizeof *job);
    w->policy = *pol;
    memset(&w->prog, 0, sizeof w->prog);
    w->prog.started_ms = bri_now_ms();
    w->prog.updated_ms = w->prog.started_ms;
    w->prog.phase = "starting";
    atomic_store(&w->cancel, 0);
    w->state = W_ASSIGNED;
    pthread_cond_signal(&w->cv);
    break;
  }
  pthread_mutex_unlock(&p->mu);
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

json_t *svc_progress_to_json(const svc_progress *pr) {
  json_t *o = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I}", "phase", pr->phase ? pr->phase : "starting", "rows_done",
                        (json_int_t)pr->rows_done, "rows_total", (json_int_t)pr->rows_total, "bytes_written",
                        (json_int_t)pr->bytes_written, "started_at", (json_int_t)pr->started_ms, "updated_at",
                        (json_int_t)pr->updated_ms);
  if (pr->rows_total)
    json_object_set_new(o, "percent", json_real(100.0 * (double)pr->rows_done / (double)pr->rows_total));
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
    pthread_cond_destroy(&p->w[i].cv);
  }
  pthread_mutex_destroy(&p->mu);
  free(p->w);
  free(p);
}
