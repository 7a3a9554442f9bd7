/* test_failpoint.c: the failpoints of util/failpoint.h: BRI_FAILPOINTS
 * parsing (lazy, from the environment, and through configure), refusal of
 * unknown names and malformed entries, @N, every action (abort, exit and stop
 * in forked children), the registry against the source, and each eio/enospc
 * failpoint failing its operation cleanly: the operation returns the injected
 * error and the table is byte-for-byte the listing it was (or, past the
 * point of no return, the operation succeeds). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ops/cleanup.h"
#include "ops/materialize.h"
#include "ops/verify.h"
#include "compact/execute.h"
#include "jobs/jobs.h"
#include "lance/table/commit.h"
#include "lance/table/table.h"
#include "testutil.h"
#include "util/failpoint.h"
#include "util/fsutil.h"

static char *tmp, *root;

static void setup(void) { tmp = NULL, root = NULL; }

static void teardown(void) {
  bri_failpoint_configure(NULL, NULL);
  if (tmp) bri_rmtree(tmp);
  free(tmp), free(root);
  tmp = root = NULL;
}

static void arm(const char *spec) {
  bri_error err = {0};
  ck_assert_msg(bri_failpoint_configure(spec, &err) == 0, "%s: %s", spec, err.msg);
}

/* Runs fn in a forked child and returns its wait status. */
static int in_child(void (*fn)(void)) {
  fflush(NULL);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    fn();
    _exit(0);
  }
  int st;
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  return st;
}

/* fn, run in a forked child, exits 0 (its other exit codes name the check
 * that failed) */
static void child_succeeds(void (*fn)(void)) {
  int st = in_child(fn);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
}

/* ------------------------------------------------------------ environment */

static void child_env_unknown(void) {
  /* the test process never touched a failpoint: the first pass reads the env */
  if (atomic_load(&bri_failpoint_state_) != 0) _exit(3);
  setenv("BRI_FAILPOINTS", "commit.before_lnk=eio", 1);
  bri_error err = {0};
  int rc = bri_failpoint("commit.before_link", &err);
  if (rc != BRI_EINVAL) _exit(4);
  if (!strstr(err.msg, "unknown failpoint \"commit.before_lnk\"")) _exit(5);
  bri_error e2 = {0};
  if (bri_failpoint_init(&e2) != BRI_EINVAL || strcmp(e2.msg, err.msg)) _exit(6);
  /* every later pass of any failpoint keeps failing: a typo fails loudly */
  if (bri_failpoint("cleanup.after_delete", &err) != BRI_EINVAL) _exit(7);
  _exit(0);
}

START_TEST(test_env_unknown_name_refused) {
  child_succeeds(child_env_unknown);
}
END_TEST

static void child_env_arms(void) {
  if (atomic_load(&bri_failpoint_state_) != 0) _exit(3);
  setenv("BRI_FAILPOINTS", " writer.write=eio@2 , cleanup.after_delete=enospc", 1);
  bri_error err = {0};
  if (bri_failpoint_init(&err) != 0) _exit(4);
  if (bri_failpoint("writer.write", &err) != 0) _exit(5);
  if (bri_failpoint("writer.write", &err) != BRI_EIO) _exit(6);
  if (strcmp(err.msg, "failpoint writer.write: injected I/O error")) _exit(7);
  if (bri_failpoint("writer.write", &err) != 0) _exit(8);
  if (bri_failpoint("cleanup.after_delete", &err) != BRI_EIO) _exit(9);
  if (strcmp(err.msg, "failpoint cleanup.after_delete: injected error: no space left on device (ENOSPC)"))
    _exit(10);
  if (bri_failpoint("commit.before_link", &err) != 0) _exit(11);
  _exit(0);
}

START_TEST(test_env_arms) {
  child_succeeds(child_env_arms);
}
END_TEST

static void child_env_unset(void) {
  if (atomic_load(&bri_failpoint_state_) != 0) _exit(3);
  unsetenv("BRI_FAILPOINTS");
  bri_error err = {0};
  if (bri_failpoint("commit.before_link", &err) != 0) _exit(4);
  /* nothing armed: the inline check answers from then on */
  if (atomic_load(&bri_failpoint_state_) != 1) _exit(5);
  _exit(0);
}

START_TEST(test_env_unset_costs_a_branch) {
  child_succeeds(child_env_unset);
}
END_TEST

/* ------------------------------------------------------------ parsing */

START_TEST(test_parse_errors) {
  static const struct {
    const char *spec, *msg;
  } bad[] = {
      {"commit.before_link", "BRI_FAILPOINTS: \"commit.before_link\" is not NAME=ACTION[@N]"},
      {"nope=eio", "BRI_FAILPOINTS: unknown failpoint \"nope\""},
      {"commit.before_link=explode", "BRI_FAILPOINTS: commit.before_link: unknown action \"explode\""},
      {"commit.before_link=eio@0", "BRI_FAILPOINTS: commit.before_link: \"@0\" is not a pass number"},
      {"commit.before_link=eio@x", "BRI_FAILPOINTS: commit.before_link: \"@x\" is not a pass number"},
      {"commit.before_link=delay:abc", "unknown action \"delay:abc\""},
      {"writer.write=eio,commit.before_lnk=abort", "unknown failpoint \"commit.before_lnk\""},
      {"watch.no_inotify=abort", "watch.no_inotify is a switch: its only action is \"on\""},
      {"watch.no_inotify=1", "watch.no_inotify is a switch: its only action is \"on\""},
      {"writer.write=on", "writer.write: \"on\" is for switches"},
      {"sched.after_claim=abort", "sched.after_claim is a timing point: its only action is delay:MS"},
      {"sched.after_claim=on", "sched.after_claim is a timing point: its only action is delay:MS"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    bri_error err = {0};
    ck_assert_int_eq(bri_failpoint_configure(bad[i].spec, &err), BRI_EINVAL);
    ck_assert_msg(strstr(err.msg, bad[i].msg), "%s: got \"%s\"", bad[i].spec, err.msg);
    /* refused: nothing armed, every pass reports the refusal */
    bri_error e2 = {0};
    ck_assert_int_eq(bri_failpoint("writer.write", &e2), BRI_EINVAL);
    ck_assert_str_eq(e2.msg, err.msg);
  }
  arm("");
  bri_error err = {0};
  ck_assert_int_eq(bri_failpoint("writer.write", &err), 0);
  ck_assert_int_eq(atomic_load(&bri_failpoint_state_), 1);
}
END_TEST

START_TEST(test_at_n_and_every_pass) {
  bri_error err = {0};
  arm("commit.before_link=eio@2,cleanup.before_delete=enospc");
  ck_assert_int_eq(bri_failpoint("commit.before_link", &err), 0);
  ck_assert_int_eq(bri_failpoint("commit.before_link", &err), BRI_EIO);
  ck_assert_str_eq(err.msg, "failpoint commit.before_link: injected I/O error");
  for (int i = 0; i < 5; i++) ck_assert_int_eq(bri_failpoint("commit.before_link", &err), 0);
  for (int i = 0; i < 3; i++) {
    ck_assert_int_eq(bri_failpoint("cleanup.before_delete", &err), BRI_EIO);
    ck_assert_str_eq(err.msg, "failpoint cleanup.before_delete: injected error: no space left on "
                              "device (ENOSPC)");
  }
  ck_assert_int_eq(bri_failpoint("commit.after_link", &err), 0); /* not armed */
  ck_assert_int_eq(bri_failpoint_armed("commit.before_link"), 1);
  ck_assert_int_eq(bri_failpoint_armed("commit.after_link"), 0);
  /* configure resets the counts */
  arm("commit.before_link=eio@1");
  ck_assert_int_eq(bri_failpoint("commit.before_link", &err), BRI_EIO);
  ck_assert_int_eq(bri_failpoint("commit.before_link", &err), 0);
}
END_TEST

/* a step's failpoint and a timing point (BRI_FP_TIMING) both sleep */
START_TEST(test_delay) {
  arm("cleanup.after_delete=delay:60,sched.after_claim=delay:60");
  ck_assert_int_eq(bri_failpoint_find("sched.after_claim")->eio, BRI_FP_TIMING);
  static const char *const names[] = {"cleanup.after_delete", "sched.after_claim"};
  for (size_t i = 0; i < 2; i++) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    bri_error err = {0};
    ck_assert_int_eq(bri_failpoint(names[i], &err), 0);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
    ck_assert_msg(ms >= 59.0, "%s slept %.1f ms", names[i], ms);
  }
}
END_TEST

/* ------------------------------------------------------------ crashing actions */

static void quiet(void) {
  int fd = open("/dev/null", O_WRONLY);
  if (fd >= 0) dup2(fd, 2);
}

static void child_abort(void) {
  quiet();
  arm("compact.before_commit=abort@2");
  bri_error err = {0};
  if (bri_failpoint("compact.before_commit", &err) != 0) _exit(3);
  bri_failpoint("compact.before_commit", &err);
  _exit(4);
}

static void child_exit(void) {
  quiet();
  arm("compact.before_commit=exit");
  bri_error err = {0};
  bri_failpoint("compact.before_commit", &err);
  _exit(4);
}

START_TEST(test_abort_and_exit) {
  int st = in_child(child_abort);
  ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "abort: status %d", st);
  st = in_child(child_exit);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 99, "exit: status %d", st);
}
END_TEST

START_TEST(test_stop_then_kill) {
  int fds[2];
  ck_assert_int_eq(pipe(fds), 0);
  fflush(NULL);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    dup2(fds[1], 2);
    close(fds[0]);
    arm("materialize.before_commit=stop");
    bri_error err = {0};
    bri_failpoint("materialize.before_commit", &err);
    _exit(4); /* never */
  }
  close(fds[1]);
  char line[200] = {0};
  size_t got = 0;
  while (got < sizeof line - 1 && !strchr(line, '\n')) {
    ssize_t n = read(fds[0], line + got, sizeof line - 1 - got);
    if (n <= 0) break;
    got += (size_t)n;
  }
  close(fds[0]);
  ck_assert_str_eq(line, "failpoint materialize.before_commit: stop (pass 1)\n");
  usleep(50 * 1000);
  int st;
  ck_assert_int_eq(waitpid(pid, &st, WNOHANG), 0); /* still there, stopped */
  kill(pid, SIGKILL);
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}
END_TEST

/* a switch is armed with "on": it is then armed, and passing it does nothing */
START_TEST(test_switch_on) {
  ck_assert(!bri_failpoint_armed("watch.no_inotify"));
  arm("watch.no_inotify=on");
  ck_assert(bri_failpoint_armed("watch.no_inotify"));
  ck_assert(!bri_failpoint_armed("writer.write"));
  bri_error err = {0};
  ck_assert_int_eq(bri_failpoint("watch.no_inotify", &err), 0);
  ck_assert_int_eq(bri_failpoint("writer.write", &err), 0);
  ck_assert_int_eq(bri_failpoint_find("watch.no_inotify")->eio, BRI_FP_SWITCH);
}
END_TEST

/* ------------------------------------------------------------ registry */

START_TEST(test_registry_matches_source) {
  const char *src = getenv("BRI_SOURCE_DIR");
  ck_assert_msg(src != NULL, "BRI_SOURCE_DIR is not set");
  size_t n = bri_failpoint_count();
  ck_assert_uint_ge(n, 20);
  for (size_t i = 0; i < n; i++) {
    const bri_failpoint_info *fi = bri_failpoint_info_at(i);
    ck_assert_ptr_eq(bri_failpoint_find(fi->name), fi); /* unique */
    const char *dot = strchr(fi->name, '.');
    ck_assert_msg(dot && dot != fi->name && dot[1] && !strchr(dot + 1, '.'), "%s", fi->name);
    ck_assert_msg(fi->reached_by && *fi->reached_by && fi->what && *fi->what, "%s", fi->name);
    /* the file it names passes it (by its quoted name) */
    char *path = bri_path_join(src, fi->file);
    size_t len;
    uint8_t *text = bri_slurp(path, &len);
    char *quoted = bri_strdupf("\"%s\"", fi->name);
    ck_assert_msg(strstr((char *)text, quoted), "%s does not pass failpoint %s", fi->file, fi->name);
    free(quoted), free(text), free(path);
  }
  ck_assert_ptr_null(bri_failpoint_info_at(n));
  /* every bri_failpoint("...") or bri_failpoint_armed("...") call in lib/
   * and daemon/ names a registered failpoint */
  char *cmd = bri_strdupf("grep -rhoE 'bri_failpoint(_armed)?\\(\"[^\"]*\"' '%s/lib' '%s/daemon' "
                          "--include=*.c --exclude=failpoint.c", src, src);
  FILE *f = popen(cmd, "r");
  ck_assert_ptr_nonnull(f);
  char line[256];
  int calls = 0;
  while (fgets(line, sizeof line, f)) {
    char *q = strchr(line, '"'), *e = q ? strchr(q + 1, '"') : NULL;
    ck_assert_ptr_nonnull(e);
    *e = 0;
    ck_assert_msg(bri_failpoint_find(q + 1), "lib/ or daemon/ passes unregistered failpoint %s", q + 1);
    calls++;
  }
  pclose(f);
  free(cmd);
  ck_assert_int_ge(calls, 20);
}
END_TEST

/* ------------------------------------------------------------ eio through the operations */

static int commit_reserve(bri_table *t, bri_error *err) {
  return bri_commit_reserve(t, bri_table_latest_version(t) + 1, err);
}

static void expect_injected(int rc, const bri_error *err, const char *name) {
  ck_assert_msg(rc == BRI_EIO, "%s: rc %d (%s)", name, rc, err->msg);
  char *want = bri_strdupf("failpoint %s: injected", name);
  ck_assert_msg(strstr(err->msg, want), "%s: message \"%s\"", name, err->msg);
  free(want);
}

START_TEST(test_commit_eio_leaves_nothing) {
  static const char *before[] = {"commit.txn_written", "commit.after_txn_written",
                                 "commit.before_manifest_fsync", "commit.after_manifest_fsync",
                                 "commit.before_link"};
  bri_fixture_table("tables/plain.lance", &tmp, &root);
  char *listing = bri_tree_listing(root);
  for (size_t i = 0; i < sizeof before / sizeof before[0]; i++) {
    char *spec = bri_strdupf("%s=eio", before[i]);
    arm(spec);
    free(spec);
    bri_table *t;
    bri_error err = {0};
    ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
    uint64_t latest = bri_table_latest_version(t);
    expect_injected(commit_reserve(t, &err), &err, before[i]);
    ck_assert_uint_eq(bri_table_latest_version(t), latest);
    bri_table_close(t);
    char *now = bri_tree_listing(root);
    ck_assert_msg(!strcmp(now, listing), "%s left files behind:\n%s\nwas:\n%s", before[i], now, listing);
    free(now);
  }
  /* a lost race leaves nothing either (its transaction file goes too, so a
   * retry under the same transaction uuid can write it again) */
  arm("");
  bri_table *t;
  bri_error err = {0};
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  ck_assert_int_eq(bri_commit_reserve(t, bri_table_latest_version(t), &err), BRI_ETAKEN);
  bri_table_close(t);
  char *now = bri_tree_listing(root);
  ck_assert_msg(!strcmp(now, listing), "a lost race left files behind:\n%s\nwas:\n%s", now, listing);
  free(now);
  free(listing);
}
END_TEST

START_TEST(test_commit_after_link_eio_commits) {
  bri_fixture_table("tables/plain.lance", &tmp, &root);
  arm("commit.after_link=eio");
  bri_table *t;
  bri_error err = {0};
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  uint64_t latest = bri_table_latest_version(t);
  char *hint = bri_strdupf("%s/_versions/latest_version_hint.json", root);
  size_t hl;
  uint8_t *hint0 = bri_slurp(hint, &hl);
  ck_assert_int_eq(commit_reserve(t, &err), 0);
  /* published: the version is there, the failed fsync is a warning */
  ck_assert_uint_eq(bri_table_latest_version(t), latest + 1);
  ck_assert_int_eq(err.code, BRI_EIO);
  ck_assert_msg(strstr(err.msg, "is committed, but it may not survive a power loss: failpoint "
                                "commit.after_link: injected I/O error"), "%s", err.msg);
  /* a local table's hint is Lance's (not replaced), and no temp file is left */
  uint8_t *hint1 = bri_slurp(hint, &hl);
  ck_assert_str_eq((char *)hint1, (char *)hint0);
  char *cmd = bri_strdupf("ls -A '%s/_versions' | grep -c '^\\.tmp' || true", root);
  FILE *f = popen(cmd, "r");
  char buf[32] = {0};
  ck_assert_ptr_nonnull(fgets(buf, sizeof buf, f));
  pclose(f);
  ck_assert_str_eq(buf, "0\n");
  free(cmd), free(hint), free(hint0), free(hint1);
  bri_table_close(t);
}
END_TEST

/* Compacts the blob fixture with spec armed and checks the result. */
static void compact_with(const char *spec, bri_strategy s, bool should_fail) {
  bri_fixture_table("tables/blobs.lance", &tmp, &root);
  char *listing = bri_tree_listing(root);
  arm(spec);
  bri_compact_request q;
  bri_compact_request_default(&q);
  q.strategy = s;
  bri_compact_report rep;
  bri_error err = {0};
  int rc = bri_compact_table(root, &q, NULL, &rep, &err);
  json_decref(rep.plan);
  arm("");
  char *name = strdup(spec);
  *strchr(name, '=') = 0;
  if (should_fail) {
    expect_injected(rc, &err, name);
    if (strstr(spec, "=enospc")) ck_assert_msg(strstr(err.msg, "(ENOSPC)"), "%s", err.msg);
    char *now = bri_tree_listing(root);
    ck_assert_msg(!strcmp(now, listing), "%s left files behind:\n%s\nwas:\n%s", spec, now, listing);
    free(now);
  } else {
    ck_assert_msg(rc == 0, "%s: %s", spec, err.msg);
    ck_assert_uint_gt(rep.version, rep.read_version);
  }
  free(name), free(listing);
  bri_rmtree(tmp);
  free(tmp), free(root);
  tmp = root = NULL;
}

START_TEST(test_compact_eio_removes_outputs) {
  compact_with("writer.write=enospc", BRI_STRATEGY_BRI, true);
  compact_with("writer.write=eio", BRI_STRATEGY_LINK, true);
  compact_with("writer.before_fsync=eio", BRI_STRATEGY_BRI, true);
  compact_with("writer.after_finish=eio", BRI_STRATEGY_BRI, true);
  compact_with("outputs.after_record=eio", BRI_STRATEGY_BRI, true);
  compact_with("compact.after_bin=eio", BRI_STRATEGY_BRI, true);
  compact_with("compact.before_commit=eio", BRI_STRATEGY_LINK, true);
  compact_with("commit.before_link=eio", BRI_STRATEGY_LINK, true);
  compact_with("blobout.after_link=eio@2", BRI_STRATEGY_LINK, true);
  compact_with("blobout.before_copy=enospc", BRI_STRATEGY_COPY, true);
  compact_with("blobout.after_copy=eio", BRI_STRATEGY_COPY, true);
  compact_with("blobout.after_pack=eio", BRI_STRATEGY_COPY, true);
  compact_with("outputs.after_record=eio@3", BRI_STRATEGY_COPY, true);
  /* past the point of no return the compaction stands */
  compact_with("compact.after_commit=eio", BRI_STRATEGY_BRI, false);
  compact_with("commit.after_link=eio", BRI_STRATEGY_LINK, false);
}
END_TEST

static int lines(const char *s) {
  int n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

START_TEST(test_cleanup_eio_stops) {
  bri_fixture_table("tables/plain.lance", &tmp, &root);
  char *listing = bri_tree_listing(root);
  bri_cleanup_policy p;
  bri_cleanup_policy_default(&p);
  p.older_than_sec = 0, p.grace_sec = 0;
  bri_cleanup_stats st;
  bri_error err = {0};
  arm("cleanup.before_delete=eio");
  expect_injected(bri_cleanup_run(root, &p, NULL, &st, &err), &err, "cleanup.before_delete");
  ck_assert_msg(strstr(err.msg, "deleting "), "%s", err.msg);
  char *now = bri_tree_listing(root);
  ck_assert_str_eq(now, listing);
  free(now);
  arm("cleanup.after_delete=eio");
  expect_injected(bri_cleanup_run(root, &p, NULL, &st, &err), &err, "cleanup.after_delete");
  ck_assert_msg(strstr(err.msg, "after deleting "), "%s", err.msg);
  now = bri_tree_listing(root);
  ck_assert_int_eq(lines(now), lines(listing) - 1); /* the one file, then it stopped */
  free(now);
  arm("cleanup.before_manifests=eio");
  expect_injected(bri_cleanup_run(root, &p, NULL, &st, &err), &err, "cleanup.before_manifests");
  arm("");
  ck_assert_msg(bri_cleanup_run(root, &p, NULL, &st, &err) == 0, "%s", err.msg);
  ck_assert_uint_gt(st.files[BRI_CLEAN_MANIFEST], 0);
  free(listing);
}
END_TEST

/* Every version still listed after an interrupted cleanup verifies: old
 * manifests go first, the files only they reached after them (the bug the
 * crash matrix found: files first left listed versions without their files). */
static void verify_all(const char *spec) {
  bri_verify_options vo = {.all_versions = true};
  bri_verify_report vr;
  bri_error err = {0};
  ck_assert_msg(bri_verify_table(root, &vo, &vr, &err) == 0, "%s", err.msg);
  ck_assert_msg(vr.problems_total == 0, "after %s: %llu problems, first: %s: %s", spec,
                (unsigned long long)vr.problems_total, vr.n_problems ? vr.problems[0].file : "",
                vr.n_problems ? vr.problems[0].what : "");
  bri_verify_report_dispose(&vr);
}

START_TEST(test_cleanup_interrupted_keeps_listed_versions_whole) {
  static const char *specs[] = {"cleanup.after_delete=eio@1", "cleanup.after_delete=eio@3",
                                "cleanup.before_files=eio", "cleanup.after_delete=eio@9"};
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
    bri_fixture_table("tables/blobs.lance", &tmp, &root);
    bri_compact_request q;
    bri_compact_request_default(&q);
    q.strategy = BRI_STRATEGY_BRI; /* the default (auto) would link */
    bri_compact_report rep;
    bri_error err = {0};
    ck_assert_msg(bri_compact_table(root, &q, NULL, &rep, &err) == 0, "%s", err.msg);
    json_decref(rep.plan);
    bri_cleanup_policy p;
    bri_cleanup_policy_default(&p);
    p.older_than_sec = 0, p.grace_sec = 0;
    bri_cleanup_stats st;
    arm(specs[i]);
    char *name = strdup(specs[i]);
    *strchr(name, '=') = 0;
    expect_injected(bri_cleanup_run(root, &p, NULL, &st, &err), &err, name);
    free(name);
    arm("");
    verify_all(specs[i]);
    /* and the next run finishes the job (the grace period is 0 here) */
    ck_assert_msg(bri_cleanup_run(root, &p, NULL, &st, &err) == 0, "%s", err.msg);
    verify_all(specs[i]);
    bri_table *t;
    ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
    ck_assert_uint_eq(t->n_versions, 1);
    bri_table_close(t);
    bri_rmtree(tmp);
    free(tmp), free(root);
    tmp = root = NULL;
  }
}
END_TEST

START_TEST(test_materialize_eio_removes_outputs) {
  bri_fixture_table("tables/blobs.lance", &tmp, &root);
  bri_compact_request q;
  bri_compact_request_default(&q);
  q.strategy = BRI_STRATEGY_BRI; /* the default (auto) would link */
  bri_compact_report rep;
  bri_error err = {0};
  ck_assert_msg(bri_compact_table(root, &q, NULL, &rep, &err) == 0, "%s", err.msg);
  json_decref(rep.plan);
  char *listing = bri_tree_listing(root);
  static const char *specs[] = {"materialize.after_place=eio", "materialize.after_place=eio@2",
                                "materialize.before_commit=eio", "outputs.after_record=eio@2",
                                "commit.txn_written=enospc"};
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
    arm(specs[i]);
    bri_materialize_report mr;
    int rc = bri_materialize_table(root, NULL, NULL, &mr, &err);
    char *name = strdup(specs[i]);
    *strchr(name, '=') = 0;
    expect_injected(rc, &err, name);
    free(name);
    char *now = bri_tree_listing(root);
    ck_assert_msg(!strcmp(now, listing), "%s left files behind:\n%s\nwas:\n%s", specs[i], now, listing);
    free(now);
  }
  arm("");
  bri_materialize_report mr;
  ck_assert_msg(bri_materialize_table(root, NULL, NULL, &mr, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(mr.commits, 1);
  free(listing);
}
END_TEST

START_TEST(test_jobs_eio) {
  tmp = bri_tmpdir();
  char *db = bri_path_join(tmp, "jobs.db");
  bri_jobs_options o;
  bri_jobs_options_init(&o);
  bri_jobs_store *s;
  bri_error err = {0};
  ck_assert_msg(bri_jobs_open(db, &o, &s, &err) == 0, "%s", err.msg);
  int64_t table, job;
  int dup;
  ck_assert_int_eq(bri_jobs_table_upsert(s, "/t.lance", &table, NULL, &err), 0);
  ck_assert_int_eq(bri_jobs_enqueue(s, table, BRI_JOB_COMPACT, 0, NULL, 0, &job, &dup, &err), 0);
  bri_jobs_job j;
  int got;
  ck_assert_int_eq(bri_jobs_claim_next(s, &j, &got, &err), 0);
  ck_assert_int_eq(got, 1);
  bri_jobs_job_clear(&j);
  bri_jobs_output *out;
  size_t n;
  arm("jobs.before_journal_add=eio");
  expect_injected(bri_jobs_journal_add(s, job, "/t.lance/data/a.lance", "data", &err), &err,
                  "jobs.before_journal_add");
  ck_assert_int_eq(bri_jobs_journal_list(s, job, &out, &n, &err), 0);
  ck_assert_uint_eq(n, 0);
  arm("jobs.after_journal_add=eio");
  expect_injected(bri_jobs_journal_add(s, job, "/t.lance/data/a.lance", "data", &err), &err,
                  "jobs.after_journal_add");
  ck_assert_int_eq(bri_jobs_journal_list(s, job, &out, &n, &err), 0);
  ck_assert_uint_eq(n, 1); /* durable already: the caller must not create the file */
  ck_assert_str_eq(out[0].path, "/t.lance/data/a.lance");
  bri_jobs_journal_free(out, n);
  arm("jobs.before_finish=eio");
  bri_jobs_outcome oc = {.state = BRI_JOB_SUCCEEDED};
  expect_injected(bri_jobs_finish(s, job, &oc, &err), &err, "jobs.before_finish");
  ck_assert_int_eq(bri_jobs_get(s, job, &j, &err), 0);
  ck_assert_int_eq(j.state, BRI_JOB_RUNNING);
  bri_jobs_job_clear(&j);
  arm("");
  ck_assert_msg(bri_jobs_finish(s, job, &oc, &err) == 0, "%s", err.msg);
  bri_jobs_close(s);
  free(db);
}
END_TEST

static Suite *failpoint_suite(void) {
  Suite *s = suite_create("failpoint");
  TCase *tc = tcase_create("failpoint");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_env_unknown_name_refused);
  tcase_add_test(tc, test_env_arms);
  tcase_add_test(tc, test_env_unset_costs_a_branch);
  tcase_add_test(tc, test_parse_errors);
  tcase_add_test(tc, test_at_n_and_every_pass);
  tcase_add_test(tc, test_delay);
  tcase_add_test(tc, test_abort_and_exit);
  tcase_add_test(tc, test_stop_then_kill);
  tcase_add_test(tc, test_switch_on);
  tcase_add_test(tc, test_registry_matches_source);
  tcase_add_test(tc, test_commit_eio_leaves_nothing);
  tcase_add_test(tc, test_commit_after_link_eio_commits);
  tcase_add_test(tc, test_compact_eio_removes_outputs);
  tcase_add_test(tc, test_cleanup_eio_stops);
  tcase_add_test(tc, test_cleanup_interrupted_keeps_listed_versions_whole);
  tcase_add_test(tc, test_materialize_eio_removes_outputs);
  tcase_add_test(tc, test_jobs_eio);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(failpoint_suite)
