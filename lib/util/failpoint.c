/* failpoint.c: the failpoint registry, BRI_FAILPOINTS parsing and the
 * actions (see failpoint.h).
 *
 * The armed set is a small fixed table written once (lazily, under
 * pthread_once, or by bri_failpoint_configure in tests) and read-only
 * afterwards; only the per-entry pass counters change, atomically, so worker
 * threads pass failpoints without a lock. Lookup is a linear scan of the
 * armed entries: a handful in any test, none in production, where the
 * inline check in failpoint.h never calls in here at all. */
#include "util/failpoint.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Every failpoint compiled into libbri and brid. Keep in step with the calls:
 * the unit test greps lib/ and daemon/ for bri_failpoint("...") and compares
 * with this list. */
static const bri_failpoint_info REGISTRY[] = {
    /* commit: lib/lance/table/commit.c, bri_commit */
    {"commit.txn_written", "lib/lance/table/commit.c", "compact,materialize,clone,gen",
     BRI_FP_EIO_FAILS, "the transaction file is written in _transactions/, not closed"},
    {"commit.after_txn_written", "lib/lance/table/commit.c", "compact,materialize,clone,gen",
     BRI_FP_EIO_FAILS, "the transaction file is in place (never synced: the manifest holds the copy Lance reads); no manifest yet"},
    {"commit.before_manifest_fsync", "lib/lance/table/commit.c", "compact,materialize,clone,gen",
     BRI_FP_EIO_FAILS, "the staging manifest _versions/.tmp_* is written, not yet fsynced"},
    {"commit.after_manifest_fsync", "lib/lance/table/commit.c", "compact,materialize,clone,gen",
     BRI_FP_EIO_FAILS, "the staging manifest is fsynced and closed"},
    {"commit.before_link", "lib/lance/table/commit.c", "compact,materialize,clone,gen",
     BRI_FP_EIO_FAILS, "about to link the staging manifest to its version name"},
    {"commit.after_link", "lib/lance/table/commit.c", "compact,materialize,clone,gen",
     BRI_FP_EIO_IGNORED,
     "the version is published (linked); the staging name still exists and _versions/ is not "
     "fsynced; eio here stands for a failed directory fsync: the commit stands"},
    /* data file writer: lib/lance/file/writer.c */
    {"writer.write", "lib/lance/file/writer.c", "compact,gen", BRI_FP_EIO_FAILS,
     "before each write(2) into a new data file (eio/enospc: a write that fails part way; the "
     "partial file is removed)"},
    {"writer.before_fsync", "lib/lance/file/writer.c", "compact,gen", BRI_FP_EIO_FAILS,
     "every byte of a new data file is written, not yet fsynced"},
    {"writer.after_finish", "lib/lance/file/writer.c", "compact,gen", BRI_FP_EIO_FAILS,
     "a new data file is complete, fsynced and closed; no manifest names it yet"},
    /* created-path record: lib/util/outputs.c */
    {"outputs.after_record", "lib/storage/outputs.c", "compact,materialize,clone", BRI_FP_EIO_FAILS,
     "a path was recorded (and handed to the journal callback); its file or directory does "
     "not exist yet"},
    /* compaction: lib/compact/execute.c */
    {"compact.after_rows", "lib/compact/execute.c", "compact,materialize", BRI_FP_EIO_FAILS,
     "a batch of rows (or a page-copied fragment) was appended to the open output data file, "
     "which is journaled and partly written (also materialize --managed's new data file)"},
    {"compact.after_bin", "lib/compact/execute.c", "compact", BRI_FP_EIO_FAILS,
     "one output data file and its sidecars are written and fsynced"},
    {"compact.before_commit", "lib/compact/execute.c", "compact", BRI_FP_EIO_FAILS,
     "every output file is written; the Rewrite is not committed"},
    {"compact.after_commit", "lib/compact/execute.c", "compact", BRI_FP_EIO_IGNORED,
     "the Rewrite is committed; the outputs are forgotten (they belong to the new version)"},
    /* compaction blob output: lib/compact/blobout.c */
    {"blobout.after_link", "lib/compact/blobout.c", "compact", BRI_FP_EIO_FAILS,
     "a source sidecar was hard-linked into the output file's own directory (link strategy)"},
    {"blobout.before_copy", "lib/compact/blobout.c", "compact", BRI_FP_EIO_FAILS,
     "about to copy payload bytes into an output sidecar or pack (copy strategy, repack, a Managed "
     "repack into _blobs/); eio/enospc: the copy fails"},
    {"blobout.after_copy", "lib/compact/blobout.c", "compact", BRI_FP_EIO_FAILS,
     "a Dedicated sidecar was copied whole and fsynced (copy strategy)"},
    {"blobout.after_pack", "lib/compact/packer.c", "compact", BRI_FP_EIO_FAILS,
     "an output pack (copied or repacked Packed values, or a Managed pack repacked into _blobs/) was "
     "fsynced and closed"},
    /* cleanup: lib/ops/cleanup.c */
    {"cleanup.before_manifests", "lib/ops/cleanup.c", "cleanup", BRI_FP_EIO_FAILS,
     "the plan is made; nothing is deleted yet"},
    {"cleanup.before_files", "lib/ops/cleanup.c", "cleanup", BRI_FP_EIO_FAILS,
     "every old manifest is deleted; no file they alone referenced is deleted yet"},
    {"cleanup.before_delete", "lib/ops/cleanup.c", "cleanup", BRI_FP_EIO_FAILS,
     "about to delete one file (a manifest, data file, sidecar, deletion, transaction, index "
     "or staging file; on an object store, one batch of them)"},
    {"cleanup.after_delete", "lib/ops/cleanup.c", "cleanup", BRI_FP_EIO_FAILS,
     "one file was just deleted (on an object store, one batch)"},
    /* materialize: lib/ops/materialize.c */
    {"materialize.after_place", "lib/ops/materialize.c", "materialize", BRI_FP_EIO_FAILS,
     "one file (data file or sidecar) was linked or copied to its new name (--managed: a data file "
     "written with Managed descriptors)"},
    {"materialize.before_commit", "lib/ops/materialize.c", "materialize", BRI_FP_EIO_FAILS,
     "a round's new data files and sidecar directories are placed and fsynced, not committed"},
    /* job store: daemon/jobs/journal.c, daemon/jobs/queue.c */
    {"jobs.before_claim", "daemon/jobs/queue.c", "jobs", BRI_FP_EIO_FAILS,
     "a queued job is marked running with its attempt recorded, not yet committed (eio: the "
     "claim is rolled back and the job stays queued)"},
    {"jobs.after_commit_intent", "daemon/jobs/journal.c", "jobs", BRI_FP_EIO_FAILS,
     "a compaction's commit intent (transaction uuid, read version) and the outputs it reserves "
     "(data files, sidecar trees) are durable; none of them exists yet"},
    {"jobs.before_journal_add", "daemon/jobs/journal.c", "jobs", BRI_FP_EIO_FAILS,
     "about to journal an output path (nothing recorded yet)"},
    {"jobs.after_journal_add", "daemon/jobs/journal.c", "jobs", BRI_FP_EIO_FAILS,
     "the journal entry is durable; the file it names does not exist yet"},
    {"jobs.before_finish", "daemon/jobs/queue.c", "jobs", BRI_FP_EIO_FAILS,
     "the job's work is done (committed or rolled back); its final state is not recorded"},
    /* brid: daemon/brid/4_sources/svc_watch.c */
    {"watch.no_inotify", "daemon/brid/4_sources/svc_watch.c", "brid", BRI_FP_SWITCH,
     "a switch: brid watches no _versions/ directory, as on a filesystem without inotify, and "
     "finds new commits by its periodic sweep alone"},
    {"watch.inotify_exhausted", "daemon/brid/4_sources/svc_watch.c", "brid", BRI_FP_SWITCH,
     "a switch: every table watch fails with ENOSPC, as when fs.inotify.max_user_watches is exhausted; "
     "brid finds those tables' commits by its periodic sweep and counts them in status (tables.sweep_only)"},
    /* the power-loss canary: lib/storage/local.c, local_put */
    {"canary.no_put_dir_fsync", "lib/storage/local.c", "compact,materialize,clone,gen", BRI_FP_SWITCH,
     "a switch for the power-loss harness's canary (tests/powerloss): a durable put (a manifest) "
     "skips the fsync of its directory after linking or renaming the new name, so the name is not "
     "durable; brid must never run so"},
    /* brid: daemon/brid/5_sched/svc_sched.c */
    {"sched.after_claim", "daemon/brid/5_sched/svc_sched.c", "brid", BRI_FP_TIMING,
     "a timing point: a claim has taken the jobs due and found when the next falls due; the "
     "loop has not heard back yet"},
    /* brid: daemon/brid/6_iface/svc_http.c */
    {"http.render", "daemon/brid/6_iface/svc_http.c", "brid", BRI_FP_TIMING,
     "a timing point on libuv's pool: the loop asked for a new metrics snapshot for an HTTP request, which "
     "waits for it at most 2 s before it is served the previous one"},
    {"watch.register_batch", "daemon/brid/4_sources/svc_discover.c", "brid", BRI_FP_TIMING,
     "a timing point on libuv's pool: a discovery has found a batch of new tables and not yet "
     "registered them in the job store (a slow walk, for tests of what answers meanwhile)"},
    {"http.loop_answer", "daemon/brid/6_iface/svc_http.c", "brid", BRI_FP_TIMING,
     "a timing point on the loop thread (a stuck loop): an HTTP request's ask has reached the loop, which "
     "has not answered it yet"},
};

#define N_REGISTRY (sizeof REGISTRY / sizeof REGISTRY[0])

size_t bri_failpoint_count(void) { return N_REGISTRY; }

const bri_failpoint_info *bri_failpoint_info_at(size_t i) {
  return i < N_REGISTRY ? &REGISTRY[i] : NULL;
}

const bri_failpoint_info *bri_failpoint_find(const char *name) {
  for (size_t i = 0; name && i < N_REGISTRY; i++)
    if (!strcmp(REGISTRY[i].name, name)) return &REGISTRY[i];
  return NULL;
}

/* ------------------------------------------------------------ armed set */

typedef enum { ACT_ABORT, ACT_EXIT, ACT_EIO, ACT_ENOSPC, ACT_STOP, ACT_DELAY, ACT_ON } action;

#define MAX_ARMED 16

typedef struct armed {
  const char *name; /* points into REGISTRY */
  action act;
  long delay_ms;
  long at; /* 0: every pass */
  atomic_long passes;
} armed;

_Atomic int bri_failpoint_state_ = 0;

static armed g_armed[MAX_ARMED];
static size_t g_n_armed;
static bri_error g_bad; /* why BRI_FAILPOINTS was refused (code 0: it was not) */
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static _Atomic(bri_failpoint_notify_fn) g_notify;

static int parse_long(const char *s, long *out) {
  char *end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || !end || end == s || *end || v < 0) return 0;
  *out = v;
  return 1;
}

/* Parses spec into the armed table; on error the table is left empty. */
static int parse(const char *spec, bri_error *err) {
  g_n_armed = 0;
  if (!spec || !*spec) return 0;
  char *copy = strdup(spec);
  if (!copy) return bri_error_set(err, BRI_ENOMEM, "BRI_FAILPOINTS: out of memory");
  int rc = 0;
  char *save = NULL;
  for (char *tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
    while (*tok == ' ') tok++;
    for (char *e = tok + strlen(tok); e > tok && e[-1] == ' ';) *--e = 0;
    if (!*tok) continue;
    char *eq = strchr(tok, '=');
    if (!eq) {
      rc = bri_error_set(err, BRI_EINVAL, "BRI_FAILPOINTS: \"%s\" is not NAME=ACTION[@N]", tok);
      break;
    }
    *eq = 0;
    const char *act = eq + 1;
    const bri_failpoint_info *fi = bri_failpoint_find(tok);
    if (!fi) {
      rc = bri_error_set(err, BRI_EINVAL,
                         "BRI_FAILPOINTS: unknown failpoint \"%s\" (the registry in "
                         "lib/util/failpoint.c lists the %zu known ones)",
                         tok, N_REGISTRY);
      break;
    }
    if (g_n_armed == MAX_ARMED) {
      rc = bri_error_set(err, BRI_EINVAL, "BRI_FAILPOINTS: more than %d entries", MAX_ARMED);
      break;
    }
    armed *a = &g_armed[g_n_armed];
    memset(a, 0, sizeof *a);
    a->name = fi->name;
    char *at = strchr(act, '@');
    if (at) {
      *at = 0;
      if (!parse_long(at + 1, &a->at) || a->at < 1) {
        rc = bri_error_set(err, BRI_EINVAL, "BRI_FAILPOINTS: %s: \"@%s\" is not a pass number "
                           "(1, 2, ...)", tok, at + 1);
        break;
      }
    }
    if (fi->eio == BRI_FP_TIMING && strncmp(act, "delay:", 6)) {
      rc = bri_error_set(err, BRI_EINVAL, "BRI_FAILPOINTS: %s is a timing point: its only action "
                         "is delay:MS", tok);
      break;
    }
    if ((fi->eio == BRI_FP_SWITCH) != !strcmp(act, "on")) {
      rc = bri_error_set(err, BRI_EINVAL, fi->eio == BRI_FP_SWITCH
                         ? "BRI_FAILPOINTS: %s is a switch: its only action is \"on\""
                         : "BRI_FAILPOINTS: %s: \"on\" is for switches; this failpoint takes "
                           "abort, exit, eio, enospc, stop or delay:MS", tok);
      break;
    }
    if (!strcmp(act, "on")) a->act = ACT_ON;
    else if (!strcmp(act, "abort")) a->act = ACT_ABORT;
    else if (!strcmp(act, "exit")) a->act = ACT_EXIT;
    else if (!strcmp(act, "eio")) a->act = ACT_EIO;
    else if (!strcmp(act, "enospc")) a->act = ACT_ENOSPC;
    else if (!strcmp(act, "stop")) a->act = ACT_STOP;
    else if (!strncmp(act, "delay:", 6) && parse_long(act + 6, &a->delay_ms)) a->act = ACT_DELAY;
    else {
      rc = bri_error_set(err, BRI_EINVAL, "BRI_FAILPOINTS: %s: unknown action \"%s\" (abort, "
                         "exit, eio, enospc, stop or delay:MS, optionally @N)", tok, act);
      break;
    }
    atomic_init(&a->passes, 0);
    g_n_armed++;
  }
  free(copy);
  if (rc) g_n_armed = 0;
  return rc;
}

static void apply(const char *spec) {
  bri_error_clear(&g_bad);
  int rc = parse(spec, &g_bad);
  if (!rc) bri_error_clear(&g_bad);
  atomic_store(&bri_failpoint_state_, rc || g_n_armed ? 2 : 1);
}

static void init_once(void) { apply(getenv("BRI_FAILPOINTS")); }

int bri_failpoint_init(bri_error *err) {
  pthread_once(&g_once, init_once);
  if (g_bad.code) return bri_error_set(err, g_bad.code, "%s", g_bad.msg);
  return 0;
}

int bri_failpoint_configure(const char *spec, bri_error *err) {
  pthread_once(&g_once, init_once); /* so that a later lazy init cannot undo this */
  apply(spec);
  if (g_bad.code) return bri_error_set(err, g_bad.code, "%s", g_bad.msg);
  return 0;
}

void bri_failpoint_set_notify(bri_failpoint_notify_fn fn) { atomic_store(&g_notify, fn); }

static void notify(const char *name, const char *what, long pass) {
  bri_failpoint_notify_fn fn = atomic_load(&g_notify);
  if (fn) {
    fn(name, what, pass);
    return;
  }
  char line[256];
  int n = snprintf(line, sizeof line, "failpoint %s: %s (pass %ld)\n", name, what, pass);
  if (n > 0) {
    ssize_t w = write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    (void)w;
  }
}

int bri_failpoint_pass(const char *name, bri_error *err) {
  if (atomic_load(&bri_failpoint_state_) == 0) pthread_once(&g_once, init_once);
  if (atomic_load(&bri_failpoint_state_) == 1) return 0;
  if (g_bad.code) return bri_error_set(err, g_bad.code, "%s", g_bad.msg);
  int rc = 0;
  for (size_t i = 0; i < g_n_armed && !rc; i++) {
    armed *a = &g_armed[i];
    if (strcmp(a->name, name) != 0) continue;
    long pass = atomic_fetch_add(&a->passes, 1) + 1;
    if (a->at && pass != a->at) continue;
    switch (a->act) {
    case ACT_ABORT:
      notify(name, "abort", pass);
      abort();
    case ACT_EXIT:
      notify(name, "exit", pass);
      _exit(99);
    case ACT_STOP:
      notify(name, "stop", pass);
      for (;;) pause();
    case ACT_DELAY: {
      struct timespec ts = {a->delay_ms / 1000, (a->delay_ms % 1000) * 1000000L};
      while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
      }
      break;
    }
    case ACT_ON:
      break;
    case ACT_EIO:
      rc = bri_error_set(err, BRI_EIO, "failpoint %s: injected I/O error", name);
      break;
    case ACT_ENOSPC:
      rc = bri_error_set(err, BRI_EIO,
                         "failpoint %s: injected error: no space left on device (ENOSPC)", name);
      break;
    }
  }
  return rc;
}

int bri_failpoint_armed(const char *name) {
  if (atomic_load(&bri_failpoint_state_) == 0) pthread_once(&g_once, init_once);
  for (size_t i = 0; i < g_n_armed; i++)
    if (!strcmp(g_armed[i].name, name)) return 1;
  return 0;
}
