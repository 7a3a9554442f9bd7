/* cleanup.c: version cleanup (see cleanup.h).
 *
 * Three phases, and no delete before the third: (1) read every manifest and
 * decide which versions are retained, failing closed on any unreadable
 * retained manifest or dangling tag; (2) collect the absolute paths that
 * retained versions reach ("live") and that deleted versions reached
 * ("verified"); (3) walk the table's own directories without following
 * symbolic links and delete by Lance's rules, old manifests first and the
 * files they alone reached after them, so that an interrupted run leaves
 * every version that is still listed whole (see phase 3 below). Listings
 * and deletes go through the table's store (storage/store.h), which
 * refuses symbolic links on the way: the listing's kinds decide what to
 * delete (a link is neither followed nor deleted), the store's resolution
 * makes sure a link swapped in after the listing cannot lead a delete
 * outside the table. Deletes are decided one file at a time and carried
 * out in batches on object stores (S3 DeleteObjects, up to 1000 keys a
 * request, where one file costs a HEAD and a delete request), one by one
 * on local stores (see flush). */
#include "ops/cleanup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blob/managed.h"
#include "lance/table/fields.h"
#include "lance/table/reach.h"
#include "lance/table/sidecar.h"
#include "lance/table/table.h"
#include "util/failpoint.h"
#include "util/fsutil.h"
#include "util/strset.h"

void bri_cleanup_policy_default(bri_cleanup_policy *p) {
  memset(p, 0, sizeof *p);
  p->older_than_sec = 7 * 24 * 3600;
  p->grace_sec = 7 * 24 * 3600;
}

const char *bri_cleanup_kind_name(bri_cleanup_kind k) {
  static const char *names[] = {"manifest", "data", "sidecar", "deletion",
                                "transaction", "index", "staging", "managed_blob"};
  return k < BRI_CLEAN_KINDS ? names[k] : "?";
}

typedef struct refs {
  bri_strset files;   /* exact files */
  bri_strset dirs;    /* whole directories: sidecar stems, index dirs */
} refs;

/* A file decided for deletion, not yet deleted. */
typedef struct doomed {
  bri_cleanup_kind kind;
  char *path;
  uint64_t bytes;
} doomed;

/* Most keys one S3 DeleteObjects request takes. */
#define BATCH_MAX 1000

typedef struct run {
  const bri_cleanup_policy *p;
  const bri_hooks *hooks;
  bri_cleanup_stats *stats;
  bri_error *err;
  bri_table *t;          /* its store: every listing and delete goes through it */
  refs live, verified;
  bri_managed_refs *managed; /* what Managed descriptors name, per fragment read once */
  int64_t now, cutoff;   /* nanoseconds; files modified after cutoff are never deleted */
  doomed *queue;         /* decided, not deleted yet: up to batch files */
  size_t queued, batch;
  size_t last_batch;     /* files the last batch deleted (pacing) */
  struct timespec last_delete;
} run;

/* Times are compared in nanoseconds: a version committed a moment before a
 * cleanup with --older-than 0 is older than "now" even within one second. */
#define NS ((int64_t)1000000000)

/* Seconds to nanoseconds, saturating (a duration of centuries means forever). */
static int64_t secs_ns(int64_t s) { return s > INT64_MAX / NS ? INT64_MAX / 2 : s * NS; }

static int64_t manifest_ns(const bri_manifest *m) {
  return m->pb->timestamp->seconds * NS + m->pb->timestamp->nanos;
}

/* One reference of a manifest (lance/table/reach.h) into a set: exact
 * files, and directories kept whole. A BRI source directory is neither:
 * it is swept file by file, and the files a BRI names keep it (it is
 * removed only once empty). */
static int add_ref(void *user, bri_reach_kind kind, const char *path, bri_error *err) {
  refs *into = user;
  bool ok = true;
  switch (kind) {
  case BRI_REACH_SIDECAR_DIR:
  case BRI_REACH_INDEX_DIR: ok = bri_strset_add(&into->dirs, path); break;
  case BRI_REACH_BRI_DIR: break;
  default: ok = bri_strset_add(&into->files, path); break;
  }
  return ok ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory collecting references");
}

/* Everything one manifest references: its files (lance/table/reach.h) and
 * the objects its Managed descriptors name (blob/managed.h). Those of a
 * version being deleted only make files "verified"; when its data files
 * cannot be read, its objects are merely unverified (kept for the grace
 * period), while a retained version's must be known. */
static int collect(run *r, const bri_manifest *bm, refs *into) {
  int rc = bri_reach_manifest(r->t, bm, add_ref, into, r->err);
  if (rc) return rc;
  bri_error e = {0};
  rc = bri_managed_reach(r->managed, r->t, bm, add_ref, into, into == &r->live ? r->err : &e);
  return into == &r->live ? rc : (rc == BRI_ENOMEM ? bri_error_set(r->err, rc, "%s", e.msg) : 0);
}

/* Waits so that deletes stay under the configured rate: the batch after
 * one of n files waits until n / rate seconds after it. */
static void pace(run *r, size_t n) {
  if (r->p->max_deletes_per_sec <= 0) return;
  double gap = (double)r->last_batch / r->p->max_deletes_per_sec;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  double since = (double)(now.tv_sec - r->last_delete.tv_sec) +
                 (double)(now.tv_nsec - r->last_delete.tv_nsec) / 1e9;
  if (r->last_batch && since < gap) {
    double wait = gap - since;
    struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
    nanosleep(&ts, NULL);
  }
  clock_gettime(CLOCK_MONOTONIC, &r->last_delete);
  r->last_batch = n;
}

/* A file is gone (or would be, in a dry run): stats and the hook. */
static void count_deleted(run *r, bri_cleanup_kind kind, const char *path, uint64_t bytes) {
  r->stats->files[kind]++;
  r->stats->bytes[kind] += bytes;
  if (r->hooks && r->hooks->deleted) r->hooks->deleted(r->hooks->user, (int)kind, path, bytes);
}

static void drop_queue(run *r) {
  for (size_t i = 0; i < r->queued; i++) free(r->queue[i].path);
  r->queued = 0;
}

/* Deletes the queued files in one batch: pacing, cancellation and the
 * failpoints cleanup.before_delete / cleanup.after_delete once per batch
 * (per file on local stores, whose batches are one file). A file already
 * gone counts as deleted; any other failure stops the run naming the
 * file, after the files the batch did delete are counted. */
static int flush(run *r) {
  size_t n = r->queued;
  if (!n) return 0;
  const char *first = r->queue[0].path, **paths = malloc(n * sizeof *paths);
  int *rcs = malloc(n * sizeof *rcs), rc = 0;
  char more[80] = "";
  if (n > 1) snprintf(more, sizeof more, " and %zu more files", n - 1);
  if (!paths || !rcs) {
    rc = bri_error_set(r->err, BRI_ENOMEM, "out of memory");
    goto out;
  }
  pace(r, n);
  if (bri_hooks_cancelled(r->hooks)) {
    rc = bri_error_set(r->err, BRI_ECANCELLED, "%s: cleanup cancelled before deleting %s%s", r->t->root, first, more);
    goto out;
  }
  if (r->hooks && r->hooks->confirm && (rc = r->hooks->confirm(r->hooks->user, r->err)) != 0) {
    bri_error_wrap(r->err, "%s: cleanup stopped before deleting %s%s", r->t->root, first, more);
    goto out;
  }
  if ((rc = bri_failpoint("cleanup.before_delete", r->err)) != 0) {
    bri_error_wrap(r->err, "deleting %s%s", first, more);
    goto out;
  }
  for (size_t i = 0; i < n; i++) paths[i] = r->queue[i].path, rcs[i] = BRI_EIO; /* until the store says */
  if ((rc = bri_store_delete_many(r->t->store, paths, n, rcs, r->err)) != 0) {
    size_t bad = 0, failed = 0;
    for (size_t i = 0; i < n; i++) {
      if (rcs[i] == 0) count_deleted(r, r->queue[i].kind, paths[i], r->queue[i].bytes);
      else if (failed++ == 0) bad = i;
    }
    if (failed > 1) snprintf(more, sizeof more, " and %zu more of %zu files", failed - 1, n);
    else more[0] = '\0';
    bri_error_wrap(r->err, "cleanup did not delete %s%s", paths[bad], more);
    goto out;
  }
  if ((rc = bri_failpoint("cleanup.after_delete", r->err)) != 0) {
    bri_error_wrap(r->err, "after deleting %s%s", first, more);
    goto out;
  }
  for (size_t i = 0; i < n; i++) count_deleted(r, r->queue[i].kind, paths[i], r->queue[i].bytes);
out:
  free(paths), free(rcs);
  drop_queue(r);
  return rc;
}

/* Deletes a file the rules gave up: queued, and the queue flushed once it
 * holds a batch (a dry run only counts it). Only the execution waits: every
 * decision is made as the listing is walked. */
static int remove_file(run *r, bri_cleanup_kind kind, const char *path, uint64_t bytes) {
  if (r->p->dry_run) {
    count_deleted(r, kind, path, bytes);
    return 0;
  }
  char *copy = strdup(path);
  if (!copy) return bri_error_set(r->err, BRI_ENOMEM, "out of memory");
  r->queue[r->queued++] = (doomed){kind, copy, bytes};
  return r->queued == r->batch ? flush(r) : 0;
}

/* Lance's rule for a file no retained version references. */
static bool deletable(run *r, int64_t mtime_ns, bool verified) {
  if (mtime_ns > r->cutoff) return false; /* maybe a writer in flight */
  if (verified) return true;
  if (r->now - mtime_ns > secs_ns(r->p->grace_sec)) return true;
  r->stats->kept_too_young++;
  return false;
}

/* Considers one entry of a listing (only regular files: a link is never
 * followed nor deleted). live_dir / verified_dir say whether its directory
 * as a whole is live / was referenced. */
static int consider(run *r, bri_cleanup_kind kind, const char *path, const bri_store_info *info,
                    bool live_dir, bool verified_dir) {
  if (info->kind != BRI_ENTRY_FILE) return 0;
  if (live_dir || bri_strset_has(&r->live.files, path)) return 0;
  bool verified = verified_dir || bri_strset_has(&r->verified.files, path);
  if (!deletable(r, info->mtime_ns, verified)) return 0;
  return remove_file(r, kind, path, info->size);
}

/* Lists a directory with sizes and times (a missing one is empty). */
static int entries(run *r, const char *dir, bri_store_entry **e, size_t *n) {
  int rc = bri_store_list(r->t->store, dir, BRI_LIST_STAT, e, n, r->err);
  if (rc == BRI_ENOTFOUND) {
    *e = NULL, *n = 0;
    return 0;
  }
  return rc;
}

/* Calls fn for every entry of dir with its full path (a missing dir has none). */
typedef int (*entry_fn)(run *r, const char *path, const bri_store_entry *e, const void *arg);

static int each_entry(run *r, const char *dir, entry_fn fn, const void *arg) {
  bri_store_entry *e = NULL;
  size_t n = 0;
  int rc = dir ? entries(r, dir, &e, &n) : bri_error_set(r->err, BRI_ENOMEM, "out of memory");
  for (size_t i = 0; i < n && !rc; i++) {
    char *p = bri_path_join(dir, e[i].name);
    rc = p ? fn(r, p, &e[i], arg) : bri_error_set(r->err, BRI_ENOMEM, "out of memory");
    free(p);
  }
  bri_store_entries_free(e, n);
  return rc;
}

/* A file of a directory swept file by file; arg: the kind and whether the
 * directory was referenced by a deleted version. */
typedef struct sweep_arg {
  bri_cleanup_kind kind;
  bool verified_dir;
} sweep_arg;

static int sweep_one(run *r, const char *path, const bri_store_entry *e, const void *arg) {
  const sweep_arg *a = arg;
  return consider(r, a->kind, path, &e->info, false, a->verified_dir);
}

/* Deletes eligible files of a directory that is not live as a whole, then
 * the directory itself once empty. */
static int sweep_dir(run *r, bri_cleanup_kind kind, const char *dir, bool verified_dir) {
  sweep_arg a = {kind, verified_dir};
  int rc = each_entry(r, dir, sweep_one, &a);
  if (rc || r->p->dry_run || !(bri_store_caps(r->t->store) & BRI_STORE_CAP_DIRS)) return rc;
  /* once empty (its queued files deleted first); a directory still holding
   * files stays (BRI_ENOTEMPTY), and a link swapped in for it is not a
   * directory to remove */
  if ((rc = flush(r)) == 0 && bri_store_delete(r->t->store, dir, NULL) == 0) r->stats->dirs_removed++;
  return rc;
}

static bool has_suffix(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && !strcmp(s + a - b, suf);
}

/* Branches live in tree/{name}/ as tables of their own whose manifests may
 * reference our files through base paths: every version of every branch
 * counts as retained (a branch is cleaned by its own run). Branch names may
 * contain '/', so tree/ is searched for _versions directories. */
static int collect_branches(run *r, const char *dir, int depth);

static int branch_entry(run *r, const char *path, const bri_store_entry *e, const void *arg) {
  int depth = *(const int *)arg;
  if (e->info.kind != BRI_ENTRY_DIR) return 0;
  if (e->name[0] != '_') return depth < 16 ? collect_branches(r, path, depth + 1) : 0;
  if (strcmp(e->name, "_versions")) return 0;
  /* path's directory is a branch table */
  char *root = bri_strdupf("%.*s", (int)(strlen(path) - strlen("/_versions")), path);
  bri_table *bt = NULL;
  int rc = root ? bri_table_open(root, &bt, r->err) : bri_error_set(r->err, BRI_ENOMEM, "out of memory");
  free(root);
  for (size_t v = 0; !rc && v < bt->n_versions; v++) {
    bri_manifest *bm;
    bri_table *own = r->t;
    if ((rc = bri_table_load(bt, bt->versions[v].version, &bm, r->err)) != 0) {
      bri_error_wrap(r->err, "branch manifest cannot be read, nothing was deleted");
      break;
    }
    r->t = bt; /* resolve the branch's paths against the branch root */
    rc = collect(r, bm, &r->live);
    r->t = own;
    bri_manifest_free(bm);
  }
  bri_table_close(bt);
  return rc;
}

static int collect_branches(run *r, const char *dir, int depth) {
  return each_entry(r, dir, branch_entry, &depth);
}

static int data_entry(run *r, const char *path, const bri_store_entry *e, const void *arg) {
  (void)arg;
  if (has_suffix(e->name, ".lance")) return consider(r, BRI_CLEAN_DATA, path, &e->info, false, false);
  /* a sidecar directory data/{stem}/: live as a whole while its data file
   * is retained, else file by file (BRI-named files stay) */
  if (e->info.kind == BRI_ENTRY_DIR && !bri_strset_has(&r->live.dirs, path))
    return sweep_dir(r, BRI_CLEAN_SIDECAR, path, bri_strset_has(&r->verified.dirs, path));
  return 0;
}

static int index_entry(run *r, const char *path, const bri_store_entry *e, const void *arg) {
  (void)arg;
  if (e->info.kind == BRI_ENTRY_DIR && !bri_strset_has(&r->live.dirs, path))
    return sweep_dir(r, BRI_CLEAN_INDEX, path, bri_strset_has(&r->verified.dirs, path));
  return 0;
}

/* Staging files of interrupted commits (_versions/.tmp*): reclaimed after the grace period. */
static int staging_entry(run *r, const char *path, const bri_store_entry *e, const void *arg) {
  (void)arg;
  if (strncmp(e->name, ".tmp", 4) != 0 || e->info.kind != BRI_ENTRY_FILE) return 0;
  if (r->now - e->info.mtime_ns <= secs_ns(r->p->grace_sec)) return 0;
  return remove_file(r, BRI_CLEAN_STAGING, path, e->info.size);
}

/* Sweeps directory sub of the table root with fn, its deletes done by the
 * end (on object stores, the sidecar and index directories below it share
 * its batches: a batch per sidecar directory would be a request per data
 * file). */
static int sweep(run *r, const char *sub, entry_fn fn, const void *arg) {
  char *dir = bri_path_join(r->t->root, sub);
  int rc = each_entry(r, dir, fn, arg);
  free(dir);
  return rc ? rc : flush(r);
}

int bri_cleanup_run(const char *root, const bri_cleanup_policy *p, const bri_hooks *hooks,
                    bri_cleanup_stats *stats, bri_error *err) {
  memset(stats, 0, sizeof *stats);
  run r = {.p = p, .hooks = hooks, .stats = stats, .err = err};
  struct timespec clock;
  clock_gettime(CLOCK_REALTIME, &clock);
  r.now = p->now ? p->now * NS : (int64_t)clock.tv_sec * NS + clock.tv_nsec;
  int rc = bri_table_open(root, &r.t, err);
  if (rc) return rc;
  /* object stores: batches of up to BATCH_MAX files, or of a second's worth
   * of deletes when paced; local stores: one file at a time */
  r.batch = bri_store_caps(r.t->store) & BRI_STORE_CAP_LOCAL ? 1 : BATCH_MAX;
  if (p->max_deletes_per_sec > 0 && r.batch > p->max_deletes_per_sec)
    r.batch = p->max_deletes_per_sec < 1 ? 1 : (size_t)p->max_deletes_per_sec;
  r.queue = calloc(r.batch, sizeof *r.queue);
  size_t nv = r.t->n_versions;
  bri_manifest **ms = calloc(nv, sizeof *ms);
  bool *keep = calloc(nv, sizeof *keep);
  bri_ref *tags = NULL, *branches = NULL;
  size_t n_tags = 0, n_branches = 0;
  bri_error load_err;
  if (!ms || !keep || !r.queue || bri_managed_refs_new(&r.managed, err)) {
    rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    goto out;
  }
  /* The directories cleanup lists and deletes in must be the table's own:
   * a symbolic link (data/ -> another disk, another table) would lead the
   * deletes outside the table, so the run stops before the first delete
   * (the message up front; a link swapped in later is refused by the
   * delete itself). Below them, links are neither followed nor deleted. */
  static const char *own[] = {"_versions", "data", "_deletions", "_transactions", "_indices", "tree", "_blobs"};
  for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
    char *d = bri_path_join(r.t->root, own[i]);
    rc = d ? bri_store_check_dir(r.t->store, d, true, err)
           : bri_error_set(err, BRI_ENOMEM, "out of memory");
    free(d);
    if (rc) {
      char why[sizeof err->msg];
      snprintf(why, sizeof why, "%s", err->msg);
      bri_error_set(err, rc, "%s; nothing was deleted", why);
      goto out;
    }
  }
  if ((rc = bri_table_tags(r.t, &tags, &n_tags, err)) ||
      (rc = bri_table_branches(r.t, &branches, &n_branches, err)))
    goto out;
  /* phase 1: retention */
  r.cutoff = INT64_MAX;
  for (size_t i = 0; i < nv; i++) {
    uint64_t v = r.t->versions[i].version;
    if (bri_table_load(r.t, v, &ms[i], &load_err) != 0) {
      ms[i] = NULL;
      keep[i] = false;
      /* unreadable: retained if any rule other than age would keep it */
    }
    bool k = i + 1 == nv || (p->retain_versions && i + p->retain_versions >= nv);
    if (ms[i] && ms[i]->pb->timestamp &&
        manifest_ns(ms[i]) >= r.now - secs_ns(p->older_than_sec))
      k = true;
    /* the in-flight cutoff comes from this recent working set only: a tag
     * pins old data, it says nothing about writers now (cf. Lance PR 8705) */
    if (k && ms[i] && ms[i]->pb->timestamp && manifest_ns(ms[i]) < r.cutoff)
      r.cutoff = manifest_ns(ms[i]);
    for (size_t j = 0; j < n_tags; j++) k |= !tags[j].branch && tags[j].version == v;
    for (size_t j = 0; j < n_branches; j++) k |= !branches[j].branch && branches[j].version == v;
    if (!ms[i] && !k) {
      /* age is unknown without a timestamp: keep it unless it is old enough on disk */
      char *mp = bri_table_manifest_path(r.t, v);
      bri_store_info info;
      k = !mp || bri_store_stat(r.t->store, mp, &info, NULL) != 0 ||
          r.now - info.mtime_ns <= secs_ns(p->older_than_sec);
      free(mp);
    }
    if (k && !ms[i]) {
      rc = bri_error_set(err, load_err.code ? load_err.code : BRI_ECORRUPT,
                         "retained version %llu cannot be read, nothing was deleted: %s",
                         (unsigned long long)v, load_err.msg);
      goto out;
    }
    keep[i] = k;
  }
  for (size_t j = 0; j < n_tags; j++) {
    if (tags[j].branch) continue;
    bool found = false;
    for (size_t i = 0; i < nv; i++) found |= r.t->versions[i].version == tags[j].version;
    if (!found) {
      rc = bri_error_set(err, BRI_ECORRUPT,
                         "%s: tag %s names version %llu, which has no manifest; nothing was deleted",
                         root, tags[j].name, (unsigned long long)tags[j].version);
      goto out;
    }
  }
  /* phase 2: references */
  for (size_t i = 0; i < nv && !rc; i++) {
    if (!ms[i]) continue;
    /* a retained version's unknown fields may name files (fields.h) */
    if (keep[i] && (rc = bri_fields_check_files(ms[i]->pb, ms[i]->indices, BRI_FIELDS_CLEANUP,
                                                 ms[i]->path, err)) != 0) {
      bri_error_wrap(err, "nothing was deleted");
      break;
    }
    if (keep[i]) {
      stats->versions_retained++;
      char *mp = bri_table_manifest_path(r.t, r.t->versions[i].version);
      if (!bri_strset_add_owned(&r.live.files, mp)) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    }
    if (!rc) rc = collect(&r, ms[i], keep[i] ? &r.live : &r.verified);
  }
  if (!rc) {
    char *tree = bri_path_join(r.t->root, "tree");
    rc = collect_branches(&r, tree, 0);
    free(tree);
  }
  if (rc) goto out;
  if (r.cutoff == INT64_MAX) r.cutoff = r.now;
  bri_strset_freeze(&r.live.files), bri_strset_freeze(&r.live.dirs);
  bri_strset_freeze(&r.verified.files), bri_strset_freeze(&r.verified.dirs);
  /* phase 3: delete, old manifests first, then the files only they reached.
   * An interrupted run then leaves every version still listed whole (each
   * listed manifest's files are there: verify --all-versions passes), where
   * files first (Lance's own order) leaves listed versions whose files are
   * gone. The price: after an interruption the remaining files of the
   * deleted versions are no longer "referenced by an old manifest", so the
   * next run keeps them for the grace period. */
  if (!p->dry_run && (rc = bri_failpoint("cleanup.before_manifests", err)) != 0) goto out;
  for (size_t i = 0; i + 1 < nv && !rc; i++) {
    if (keep[i]) continue;
    char *mp = bri_table_manifest_path(r.t, r.t->versions[i].version);
    bri_store_info info;
    if (mp && bri_store_stat(r.t->store, mp, &info, NULL) == 0 && info.kind == BRI_ENTRY_FILE)
      rc = remove_file(&r, BRI_CLEAN_MANIFEST, mp, info.size);
    free(mp);
  }
  if (!rc) rc = flush(&r); /* every old manifest is gone before the first file goes */
  /* ... durably: a power loss may otherwise bring a deleted manifest back
   * after the files it alone reached are gone (tests/powerloss) */
  char *vdir = rc || p->dry_run ? NULL : bri_strdupf("%s/_versions", r.t->root);
  if (!rc && !p->dry_run)
    rc = vdir ? bri_store_sync(r.t->store, vdir, err) : bri_error_set(err, BRI_ENOMEM, "out of memory");
  free(vdir);
  if (!rc && !p->dry_run) rc = bri_failpoint("cleanup.before_files", err);
  static const sweep_arg deletions = {BRI_CLEAN_DELETION, false}, txns = {BRI_CLEAN_TRANSACTION, false},
                         managed = {BRI_CLEAN_MANAGED, false};
  if (!rc && ((rc = sweep(&r, "data", data_entry, NULL)) ||
              (rc = sweep(&r, "_blobs", sweep_one, &managed)) ||
              (rc = sweep(&r, "_deletions", sweep_one, &deletions)) ||
              (rc = sweep(&r, "_transactions", sweep_one, &txns)) ||
              (rc = sweep(&r, "_indices", index_entry, NULL)) ||
              (rc = sweep(&r, "_versions", staging_entry, NULL))))
    goto out;
out:
  drop_queue(&r); /* left by an error: not deleted */
  free(r.queue);
  bri_table_store_stats(r.t, &stats->storage);
  for (size_t i = 0; ms && i < nv; i++) bri_manifest_free(ms[i]);
  free(ms), free(keep);
  bri_refs_free(tags, n_tags);
  bri_refs_free(branches, n_branches);
  bri_strset_dispose(&r.live.files), bri_strset_dispose(&r.live.dirs);
  bri_strset_dispose(&r.verified.files), bri_strset_dispose(&r.verified.dirs);
  bri_managed_refs_free(r.managed);
  bri_table_close(r.t);
  return rc;
}
