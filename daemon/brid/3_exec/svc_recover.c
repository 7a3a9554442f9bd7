/* svc_recover.c: reference checks and removal of a job's leftover outputs
 * (see svc_recover.h).
 *
 * The reference set of a table is built once per (table, oldest version
 * needed) and reused for every output of every job of that table during
 * one recovery pass: a link-strategy job journals one entry per hard link,
 * and re-reading every manifest per entry would be quadratic. Outputs that
 * no longer exist are settled with one lstat, without reading any manifest
 * (the common case after a worker's own rollback). */
#include "svc_recover.h"

#include <stdlib.h>
#include <string.h>

#include "bri/table.h"
#include "bri/util.h"
#include "brid/1_leaves/svc_log.h"

/* A file the job wrote cannot appear in a version older than the job; an
 * hour of slack covers clock adjustments between the two timestamps. */
#define SLACK_MS (3600LL * 1000)

typedef struct refs {
  char *root;
  int64_t since_ms; /* versions whose manifest is older were not read */
  bri_strset files; /* exact paths: data, deletion, transaction, BRI'd sidecars and their dirs */
  bri_strset dirs;  /* sidecar directories of referenced data files, index directories */
} refs;

static void refs_free(refs *r) {
  if (!r) return;
  free(r->root);
  bri_strset_dispose(&r->files);
  bri_strset_dispose(&r->dirs);
  free(r);
}

/* One reference of a manifest (lance/table/reach.h): sidecar and index
 * directories kept whole, everything else exactly (a BRI source directory
 * is kept as a file: it must not be removed while a BRI names a file in
 * it). */
static int add_ref(void *user, bri_reach_kind kind, const char *path, bri_error *err) {
  refs *r = user;
  bool whole = kind == BRI_REACH_SIDECAR_DIR || kind == BRI_REACH_INDEX_DIR;
  if (!bri_strset_add(whole ? &r->dirs : &r->files, path))
    return bri_error_set(err, BRI_ENOMEM, "out of memory");
  return 0;
}

/* Reads every version of root whose manifest was written at or after
 * since_ms (0: all). A table that no longer exists references nothing. */
static int refs_build(const char *root, int64_t since_ms, refs **out, bri_error *err) {
  *out = NULL;
  refs *r = calloc(1, sizeof *r);
  if (!r || !(r->root = strdup(root))) {
    free(r);
    return bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  r->since_ms = since_ms;
  bri_table *t = NULL;
  int rc = bri_table_open(root, &t, err);
  if (rc == BRI_ENOTFOUND) {
    rc = 0; /* no versions left: nothing is referenced */
    goto done;
  }
  for (size_t i = 0; !rc && i < t->n_versions; i++) {
    char *mp = bri_table_manifest_path(t, t->versions[i].version);
    bri_store_info info;
    if (!mp) {
      rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
      break;
    }
    bool skip = since_ms > 0 && bri_store_stat(t->store, mp, &info, NULL) == 0 && info.mtime_ns / 1000000 < since_ms;
    free(mp);
    if (skip) continue;
    bri_manifest *m = NULL;
    rc = bri_table_load(t, t->versions[i].version, &m, err);
    if (rc == BRI_ENOTFOUND) { /* removed by a concurrent cleanup meanwhile */
      rc = 0;
      continue;
    }
    if (!rc) rc = bri_reach_manifest(t, m, add_ref, r, err);
    bri_manifest_free(m);
  }
done:
  bri_table_close(t);
  if (rc) {
    refs_free(r);
    return bri_error_wrap(err, "checking which files of %s committed versions reference", root);
  }
  bri_strset_freeze(&r->files);
  bri_strset_freeze(&r->dirs);
  *out = r;
  return 0;
}

static bool refs_has(const refs *r, const char *path) {
  if (bri_strset_has(&r->files, path) || bri_strset_has(&r->dirs, path)) return true;
  /* inside a referenced data file's sidecar directory */
  char buf[4096];
  size_t n = strlen(path);
  if (n >= sizeof buf) return false;
  memcpy(buf, path, n + 1);
  for (char *s = strrchr(buf, '/'); s && s > buf; s = strrchr(buf, '/')) {
    *s = 0;
    if (bri_strset_has(&r->dirs, buf)) return true;
  }
  /* a directory that holds a referenced file */
  size_t plen = strlen(path);
  for (size_t i = 0; i < r->files.n; i++)
    if (!strncmp(r->files.items[i], path, plen) && r->files.items[i][plen] == '/') return true;
  return false;
}

/* The files directly in a tree the job created (a new data file's sidecar
 * directory: sidecars only, no sub-directories), removed before the
 * directory itself. Anything else found in it (a directory, a link)
 * stays, and so does the directory then. */
static int empty_tree(bri_store *st, const char *dir, bri_error *err) {
  bri_store_entry *e = NULL;
  size_t n = 0;
  int rc = bri_store_list(st, dir, 0, &e, &n, err);
  if (rc == BRI_ENOTFOUND) return 0;
  const char **files = rc ? NULL : calloc(n + 1, sizeof *files);
  if (!rc && !files) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  size_t k = 0;
  for (size_t i = 0; !rc && i < n; i++) {
    if (e[i].info.kind == BRI_ENTRY_DIR) continue;
    if (!(files[k] = bri_path_join(dir, e[i].name))) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    else k++;
  }
  if (!rc && k) rc = bri_store_delete_many(st, files, k, NULL, err);
  for (size_t i = 0; i < k; i++) free((char *)files[i]);
  free(files);
  bri_store_entries_free(e, n);
  return rc;
}

/* Paths journaled by brid are inside the table; anything else is refused
 * rather than removed. The removal goes through the table's store, which
 * resolves the path beneath the root without following links
 * (storage/store.h), so that a directory swapped for a link since the
 * crash cannot send it elsewhere. A tree goes with what is in it. */
static int remove_path(const char *root, const char *path, bool tree, bri_error *err) {
  bri_store *st;
  int rc = bri_store_open(root, 0, &st, err);
  if (rc) return rc == BRI_ENOTFOUND ? 0 : rc; /* the table is gone, and its outputs with it */
  const char *key = bri_store_key(st, path);
  if (!key || !*key)
    rc = bri_error_set(err, BRI_EINVAL, "journaled output %s is not inside its table %s: left in place",
                       path, root);
  else if (!tree || !(rc = empty_tree(st, path, err)))
    rc = bri_store_delete(st, path, err);
  if (rc == BRI_ENOTEMPTY) {
    /* a directory the job created holds files it did not journal: keep
     * them (cleanup's reachability decides later) rather than guess */
    log_warn("%s: directory still holds files that are not in the job's journal; left in place", path);
    rc = 0;
  }
  if (rc == BRI_ENOTFOUND) rc = 0;
  bri_store_close(st);
  return rc;
}

/* Whether a journaled output of the table at root may still be there
 * (never following a link): only a definite "no such file" says it is
 * gone. A table on an object store is asked through its store. */
static bool output_exists(const char *root, const char *path) {
  bri_store_info info;
  bri_store *st = NULL;
  if (strstr(root, "://") && bri_store_open(root, 0, &st, NULL) != 0) return true; /* cannot tell */
  bool there = bri_store_stat(st, path, &info, NULL) != BRI_ENOTFOUND;
  bri_store_close(st);
  return there;
}

/* A directory journaled whole (util/hooks.h BRI_JOURNAL_TREE). */
static bool is_tree(const bri_jobs_output *o) { return !strcmp(o->kind, "tree"); }

static int64_t since_of(const bri_jobs_job *job) {
  return job->started_at > SLACK_MS ? job->started_at - SLACK_MS : 0;
}

/* ------------------------------------------------------------ recovery */

typedef struct rctx {
  refs *cache;
  svc_job_held_fn held; /* NULL at start-up: no worker runs yet */
  void *held_ctx;
} rctx;

static int cached_refs(rctx *x, const bri_jobs_job *job, refs **out, bri_error *err) {
  int64_t since = since_of(job);
  if (x->cache && !strcmp(x->cache->root, job->root) && x->cache->since_ms <= since) {
    *out = x->cache;
    return 0;
  }
  refs_free(x->cache);
  x->cache = NULL;
  int rc = refs_build(job->root, since, &x->cache, err);
  *out = x->cache;
  return rc;
}

static int cb_is_referenced(void *user, const bri_jobs_job *job, const bri_jobs_output *o,
                            int *referenced, bri_error *err) {
  *referenced = 0;
  if (!output_exists(job->root, o->path)) return 0;
  refs *r;
  int rc = cached_refs(user, job, &r, err);
  if (!rc) *referenced = refs_has(r, o->path);
  return rc;
}

static int cb_remove(void *user, const bri_jobs_job *job, const bri_jobs_output *o, bri_error *err) {
  (void)user;
  int rc = remove_path(job->root, o->path, is_tree(o), err);
  if (!rc) log_info("recovery: job %lld: removed %s (%s, written by a crashed attempt)", (long long)job->id,
                    o->path, o->kind);
  return rc;
}

static int cb_commit_landed(void *user, const bri_jobs_job *job, int *landed, uint64_t *version,
                            bri_error *err) {
  (void)user;
  *landed = 0;
  *version = 0;
  if (!job->commit_uuid || !*job->commit_uuid) return 0;
  bri_table *t = NULL;
  int rc = bri_table_open(job->root, &t, err);
  if (rc == BRI_ENOTFOUND) return 0;
  for (size_t i = 0; !rc && !*landed && i < t->n_versions; i++) {
    if (job->has_commit_read_version && t->versions[i].version <= job->commit_read_version) continue;
    bri_manifest *m = NULL;
    rc = bri_table_load(t, t->versions[i].version, &m, err);
    if (rc == BRI_ENOTFOUND) {
      rc = 0;
      continue;
    }
    if (rc) break;
    const char *tf = m->pb->transaction_file;
    if ((m->txn && m->txn->uuid && !strcmp(m->txn->uuid, job->commit_uuid)) ||
        (tf && strstr(tf, job->commit_uuid))) {
      *landed = 1;
      *version = t->versions[i].version;
    }
    bri_manifest_free(m);
  }
  bri_table_close(t);
  return rc;
}

static int cb_in_flight(void *user, int64_t job_id) {
  rctx *x = user;
  return x->held && x->held(x->held_ctx, job_id);
}

int svc_recover_jobs(bri_jobs_store *s, svc_job_held_fn held, void *held_ctx, bri_jobs_recovery_report *rep,
                     bri_error *err) {
  rctx x = {.held = held, .held_ctx = held_ctx};
  bri_jobs_recovery_ops ops = {.is_referenced = cb_is_referenced,
                               .remove = cb_remove,
                               .commit_landed = cb_commit_landed,
                               .in_flight = cb_in_flight,
                               .user = &x};
  int rc = bri_jobs_recover(s, &ops, rep, err);
  refs_free(x.cache);
  return rc;
}

int svc_recover_outputs(bri_jobs_store *s, const bri_jobs_job *job, size_t *removed, size_t *kept,
                        bri_error *err) {
  if (removed) *removed = 0;
  if (kept) *kept = 0;
  bri_jobs_output *outs = NULL;
  size_t n = 0;
  int rc = bri_jobs_journal_list(s, job->id, &outs, &n, err);
  if (rc) return rc;
  rctx x = {0};
  for (size_t i = n; !rc && i-- > 0;) {
    if (outs[i].attempt != job->attempts) continue; /* another attempt's: recovery's business */
    int ref = 0;
    rc = cb_is_referenced(&x, job, &outs[i], &ref, err);
    if (!rc && !ref) {
      bool existed = output_exists(job->root, outs[i].path);
      rc = remove_path(job->root, outs[i].path, is_tree(&outs[i]), err);
      if (!rc && existed && removed) (*removed)++;
    } else if (!rc && kept) {
      (*kept)++;
    }
    if (!rc) rc = bri_jobs_journal_remove(s, job->id, outs[i].path, err);
  }
  refs_free(x.cache);
  bri_jobs_journal_free(outs, n);
  return rc;
}
