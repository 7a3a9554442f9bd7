/* test_hostile.c: symbolic links and ".." inside a table never lead cleanup,
 * materialize, (deep) clone or compaction outside it, also when a link is
 * swapped in between a check and the use (the *_beneath calls of fsutil,
 * with openat2 and with the component walk), and regression tests for what
 * the fuzzers found in the u64 sequence codecs.
 *
 * Each case plants the trap in a copy of tests/fixtures/tables/blobs.lance
 * (Inline, Packed and Dedicated blobs, a deleted row), with the link target
 * or the ".." target in a directory next to the table ("outside"), and
 * checks the outcome: the operation refuses with a message naming the link
 * (or, for cleanup below a real directory, skips the link), and neither the
 * table nor the outside directory changed (sizes and types of every path). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lance/table/bri.h"
#include "ops/cleanup.h"
#include "ops/clone.h"
#include "ops/materialize.h"
#include "compact/execute.h"
#include "lance/table/rowids.h"
#include "lance/table/table.h"
#include "testutil.h"
#include "util/fsutil.h"
#include "storage/outputs.h"

static char *tmp, *root, *outside;

static void setup(void) {
  bri_fixture_table("tables/blobs.lance", &tmp, &root);
  outside = bri_path_join(tmp, "outside");
  ck_assert_int_eq(mkdir(outside, 0755), 0);
}

static void teardown(void) {
  bri_rmtree(tmp);
  free(tmp), free(root), free(outside);
}

static void compact(bri_strategy s) {
  bri_compact_request q;
  bri_compact_request_default(&q);
  q.strategy = s;
  bri_compact_report rep;
  bri_error err = {0};
  ck_assert_msg(bri_compact_table(root, &q, NULL, &rep, &err) == 0, "%s", err.msg);
  json_decref(rep.plan);
  ck_assert_uint_gt(rep.version, 0);
}

static int cleanup_now(bri_error *err) {
  bri_cleanup_policy p;
  bri_cleanup_policy_default(&p);
  p.older_than_sec = 0, p.grace_sec = 0;
  bri_cleanup_stats st;
  return bri_cleanup_run(root, &p, NULL, &st, err);
}

static void write_old_file(const char *path, const char *text) {
  bri_write_bytes(path, text, strlen(text));
  struct timespec t[2] = {{1577836800, 0}, {1577836800, 0}}; /* 2020-01-01: old enough for any rule */
  ck_assert_int_eq(utimensat(AT_FDCWD, path, t, AT_SYMLINK_NOFOLLOW), 0);
}

/* Moves path to outside/name and leaves a symbolic link to it in its place. */
static char *swap_for_link(const char *path, const char *name) {
  char *to = bri_path_join(outside, name);
  ck_assert_msg(rename(path, to) == 0, "rename %s: %s", path, strerror(errno));
  ck_assert_int_eq(symlink(to, path), 0);
  return to;
}

static void undo_link(const char *path, char *to) {
  ck_assert_int_eq(unlink(path), 0);
  ck_assert_int_eq(rename(to, path), 0);
  free(to);
}

/* The sidecar directories (data/<stem>/) of the latest version's data files
 * that hold files, in manifest order. */
static size_t sidecar_dirs(char **out, size_t cap) {
  bri_table *t;
  bri_manifest *m;
  bri_error err = {0};
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  ck_assert_int_eq(bri_table_load(t, 0, &m, &err), 0);
  size_t n = 0;
  for (size_t i = 0; i < m->pb->n_fragments; i++) {
    char *d;
    ck_assert_int_eq(bri_table_sidecar_dir(t, m->pb, m->pb->fragments[i]->files[0], &d, &err), 0);
    char **names;
    size_t k;
    if (bri_list_dir(d, &names, &k, NULL) == 0 && k && n < cap) out[n++] = d;
    else free(d);
    if (names && k) bri_free_names(names, k);
  }
  bri_manifest_free(m);
  bri_table_close(t);
  return n;
}

static char *first_file(const char *dir) {
  char **names;
  size_t n;
  ck_assert_int_eq(bri_list_dir(dir, &names, &n, NULL), 0);
  ck_assert_uint_gt(n, 0);
  char *p = bri_path_join(dir, names[0]);
  bri_free_names(names, n);
  return p;
}

typedef struct snap {
  char *table, *out;
} snap;

static snap take(void) { return (snap){bri_tree_listing(root), bri_tree_listing(outside)}; }

static void same_as(snap s, const char *what) {
  char *t = bri_tree_listing(root), *o = bri_tree_listing(outside);
  ck_assert_msg(!strcmp(t, s.table), "%s changed the table:\n%s\nwas:\n%s", what, t, s.table);
  ck_assert_msg(!strcmp(o, s.out), "%s changed the outside directory:\n%s\nwas:\n%s", what, o, s.out);
  free(t), free(o), free(s.table), free(s.out);
}

static void expect_refusal(int rc, const bri_error *err, const char *needle, const char *what) {
  ck_assert_msg(rc < 0, "%s succeeded", what);
  ck_assert_msg(strstr(err->msg, needle), "%s: \"%s\" lacks \"%s\"", what, err->msg, needle);
}

/* ------------------------------------------------------------ cleanup */

START_TEST(test_cleanup_refuses_symlinked_data_dir) {
  compact(BRI_STRATEGY_COPY); /* old data files and sidecars become garbage */
  char *data = bri_path_join(root, "data");
  char *moved = swap_for_link(data, "data");
  char *victim = bri_path_join(moved, "00000000000000000000000000000000000000000000000000.lance");
  write_old_file(victim, "not referenced by anybody, and not the table's");
  snap s = take();
  bri_error err = {0};
  expect_refusal(cleanup_now(&err), &err, "data is a symbolic link", "cleanup");
  ck_assert_msg(strstr(err.msg, "nothing was deleted"), "%s", err.msg);
  same_as(s, "cleanup");
  free(victim), free(moved), free(data);
}
END_TEST

START_TEST(test_cleanup_refuses_symlinked_versions_dir) {
  compact(BRI_STRATEGY_COPY);
  char *v = bri_path_join(root, "_versions");
  free(swap_for_link(v, "_versions"));
  snap s = take();
  bri_error err = {0};
  expect_refusal(cleanup_now(&err), &err, "_versions is a symbolic link", "cleanup");
  same_as(s, "cleanup");
  free(v);
}
END_TEST

START_TEST(test_cleanup_skips_symlinked_sidecar_dir_and_file) {
  char *dirs[4];
  size_t n = sidecar_dirs(dirs, 4);
  ck_assert_uint_eq(n, 2); /* the packed and the dedicated sidecar directories */
  compact(BRI_STRATEGY_COPY); /* both directories are garbage now */
  char *moved_dir = swap_for_link(dirs[0], "sidecar-dir");
  char *file = first_file(dirs[1]);
  char *moved_file = swap_for_link(file, "sidecar-file");
  char *out_before = bri_tree_listing(outside);
  bri_error err = {0};
  ck_assert_msg(cleanup_now(&err) == 0, "%s", err.msg);
  char *out_after = bri_tree_listing(outside);
  ck_assert_str_eq(out_after, out_before); /* nothing behind a link was deleted */
  struct stat st;
  ck_assert_int_eq(lstat(dirs[0], &st), 0); /* the links themselves stay too */
  ck_assert(S_ISLNK(st.st_mode));
  ck_assert_int_eq(lstat(file, &st), 0);
  ck_assert(S_ISLNK(st.st_mode));
  /* while the real files next to the link were cleaned */
  char **names;
  size_t k;
  ck_assert_int_eq(bri_list_dir(dirs[1], &names, &k, NULL), 0);
  ck_assert_uint_eq(k, 1);
  bri_free_names(names, k);
  free(out_before), free(out_after), free(moved_dir), free(file), free(moved_file);
  for (size_t i = 0; i < n; i++) free(dirs[i]);
}
END_TEST

START_TEST(test_cleanup_skips_symlinked_data_file) {
  compact(BRI_STRATEGY_COPY); /* the old data files are garbage now */
  char **names;
  size_t n;
  char *data = bri_path_join(root, "data");
  ck_assert_int_eq(bri_list_dir(data, &names, &n, NULL), 0);
  char *file = NULL;
  for (size_t i = 0; i < n && !file; i++)
    if (strstr(names[i], ".lance")) file = bri_path_join(data, names[i]);
  bri_free_names(names, n);
  ck_assert_ptr_nonnull(file);
  char *moved = swap_for_link(file, "data-file");
  char *out_before = bri_tree_listing(outside);
  bri_error err = {0};
  ck_assert_msg(cleanup_now(&err) == 0, "%s", err.msg);
  char *out_after = bri_tree_listing(outside);
  ck_assert_str_eq(out_after, out_before);
  struct stat st;
  ck_assert_int_eq(lstat(file, &st), 0); /* neither followed nor deleted */
  ck_assert(S_ISLNK(st.st_mode));
  free(out_before), free(out_after), free(moved), free(file), free(data);
}
END_TEST

/* ------------------------------------------------------------ races */

/* Links swapped in while cleanup runs, after its checks: from the cleanup
 * callback (called after each delete), a directory cleanup already listed
 * is moved outside and a link to it left in its place, as a hostile
 * writer racing the daemon would do. Every later delete must be refused
 * by the resolution beneath the table root, the files outside kept. Run
 * with openat2 (_i 0) and with the component walk (_i 1). */
typedef struct swap_ctx {
  const char *dir;       /* swap this directory ... */
  bri_cleanup_kind when; /* ... after the first delete of this kind (under dir when a sidecar) */
  char *moved;
  char *listing; /* outside, right after the swap */
} swap_ctx;

static void swap_on_delete(void *user, int kind, const char *path, uint64_t bytes) {
  (void)bytes;
  swap_ctx *c = user;
  if (c->moved || kind != (int)c->when) return;
  if (kind == BRI_CLEAN_SIDECAR && strncmp(path, c->dir, strlen(c->dir)) != 0) return;
  c->moved = swap_for_link(c->dir, "swapped");
  c->listing = bri_tree_listing(outside);
}

static void race_cleanup(swap_ctx *c, const char *needle) {
  bri_cleanup_policy p;
  bri_cleanup_policy_default(&p);
  p.older_than_sec = 0, p.grace_sec = 0;
  bri_cleanup_stats st;
  bri_error err = {0};
  const bri_hooks hooks = {.deleted = swap_on_delete, .user = c};
  int rc = bri_cleanup_run(root, &p, &hooks, &st, &err);
  ck_assert_msg(c->moved, "the swap never happened");
  expect_refusal(rc, &err, needle, "cleanup (link swapped in)");
  ck_assert_msg(strstr(err.msg, "brid never follows links out of a table"), "%s", err.msg);
  char *now = bri_tree_listing(outside);
  ck_assert_msg(!strcmp(now, c->listing), "cleanup deleted behind a link:\n%s\nwas:\n%s", now,
                c->listing);
  free(now), free(c->moved), free(c->listing);
}

START_TEST(test_cleanup_race_data_dir_swapped) {
  bri_beneath_force_walk(_i == 1);
  compact(BRI_STRATEGY_COPY);
  /* data/ becomes a link right after the first old manifest is deleted:
   * the sweep of data/ that follows lists the files behind it */
  char *data = bri_path_join(root, "data");
  swap_ctx c = {.dir = data, .when = BRI_CLEAN_MANIFEST};
  race_cleanup(&c, "data is a symbolic link");
  bri_beneath_force_walk(false);
  free(data);
}
END_TEST

START_TEST(test_cleanup_race_sidecar_dir_swapped) {
  bri_beneath_force_walk(_i == 1);
  char *dirs[4];
  size_t n = sidecar_dirs(dirs, 4);
  ck_assert_uint_eq(n, 2);
  compact(BRI_STRATEGY_COPY);
  /* a second, older-named file so that the directory is swapped between
   * two deletes in it (names are swept in order) */
  char *first = bri_path_join(dirs[0], "00000000000000000000000000000001.blob");
  write_old_file(first, "garbage");
  swap_ctx c = {.dir = dirs[0], .when = BRI_CLEAN_SIDECAR};
  const char *stem = strrchr(dirs[0], '/') + 1;
  char *needle = bri_strdupf("data/%s is a symbolic link", stem);
  race_cleanup(&c, needle);
  bri_beneath_force_walk(false);
  free(needle), free(first);
  for (size_t i = 0; i < n; i++) free(dirs[i]);
}
END_TEST

/* ------------------------------------------------------------ compaction */

static int compact_rc(bri_strategy s, bri_error *err) {
  bri_compact_request q;
  bri_compact_request_default(&q);
  q.strategy = s;
  bri_compact_report rep;
  int rc = bri_compact_table(root, &q, NULL, &rep, err);
  json_decref(rep.plan);
  return rc;
}

/* A sidecar of the latest version replaced by a link to a copy of itself
 * outside, then a sidecar directory replaced the same way: the copy and
 * link strategies read or link sources beneath the table root and refuse,
 * naming the file; neither the table nor the outside changes. */
START_TEST(test_compact_refuses_symlinked_sidecars) {
  bri_beneath_force_walk(_i == 1);
  char *dirs[4];
  size_t n = sidecar_dirs(dirs, 4);
  ck_assert_uint_eq(n, 2);
  static const bri_strategy strategies[] = {BRI_STRATEGY_COPY, BRI_STRATEGY_LINK};
  for (size_t d = 0; d < n; d++) {
    char *file = first_file(dirs[d]);
    const char *rel = file + strlen(root) + 1;
    for (size_t k = 0; k < 2; k++) {
      /* the file itself a link (to the same bytes: only the link is wrong) */
      char *to = bri_path_join(outside, "sidecar");
      size_t len;
      uint8_t *bytes = bri_slurp(file, &len);
      bri_write_bytes(to, bytes, len);
      free(bytes);
      ck_assert_int_eq(unlink(file), 0);
      ck_assert_int_eq(symlink(to, file), 0);
      snap s = take();
      bri_error err = {0};
      char *needle = bri_strdupf("%s is a symbolic link, not a regular file", rel);
      expect_refusal(compact_rc(strategies[k], &err), &err, needle,
                     k ? "compaction (link, linked sidecar)" : "compaction (copy, linked sidecar)");
      same_as(s, "compaction");
      free(needle);
      ck_assert_int_eq(unlink(file), 0);
      ck_assert_int_eq(rename(to, file), 0);
      free(to);
      /* its directory a link */
      char *moved = swap_for_link(dirs[d], "sidecar-dir");
      s = take();
      needle = bri_strdupf("data/%s is a symbolic link", strrchr(dirs[d], '/') + 1);
      expect_refusal(compact_rc(strategies[k], &err), &err, needle,
                     k ? "compaction (link, linked directory)" : "compaction (copy, linked directory)");
      same_as(s, "compaction");
      free(needle);
      undo_link(dirs[d], moved);
    }
    free(file);
  }
  /* with the traps gone both work */
  bri_error err = {0};
  ck_assert_msg(compact_rc(BRI_STRATEGY_LINK, &err) == 0, "%s", err.msg);
  bri_beneath_force_walk(false);
  for (size_t i = 0; i < n; i++) free(dirs[i]);
}
END_TEST

/* ------------------------------------------------------------ the beneath calls */

/* openat2 and the walk: the same outcome and the same message for each
 * path, in a tree with a linked directory, a linked file, a dangling link,
 * a file where a directory is expected, and lexical escapes. */
START_TEST(test_beneath_openat2_and_walk_agree) {
  char *top = bri_path_join(tmp, "top");
  ck_assert_int_eq(mkdir(top, 0755), 0);
  char *p = bri_strdupf("%s/a", top);
  ck_assert_int_eq(mkdir(p, 0755), 0);
  free(p);
  p = bri_strdupf("%s/a/f", top);
  bri_write_bytes(p, "inside", 6);
  free(p);
  char *secret = bri_path_join(outside, "secret");
  bri_write_bytes(secret, "outside", 7);
  p = bri_strdupf("%s/a/dirlink", top);
  ck_assert_int_eq(symlink(outside, p), 0);
  free(p);
  p = bri_strdupf("%s/a/filelink", top);
  ck_assert_int_eq(symlink(secret, p), 0);
  free(p);
  p = bri_strdupf("%s/a/dangling", top);
  ck_assert_int_eq(symlink("/nonexistent/x", p), 0);
  free(p);
  p = bri_strdupf("%s/a/rel", top);
  ck_assert_int_eq(symlink("f", p), 0); /* even a link that stays inside */
  free(p);
  int dfd;
  bri_error err = {0};
  ck_assert_int_eq(bri_dir_open(top, &dfd, &err), 0);
  static const struct {
    const char *rel;
    int flags, rc;
    const char *msg; /* after "<top>/" */
  } cases[] = {
      {"a/f", O_RDONLY, 0, NULL},
      {"a", O_RDONLY | O_DIRECTORY, 0, NULL},
      {"a", O_PATH | O_DIRECTORY, 0, NULL},
      {"a/dirlink/secret", O_RDONLY, BRI_ECORRUPT,
       "a/dirlink is a symbolic link; brid never follows links out of a table"},
      {"a/dirlink", O_RDONLY | O_DIRECTORY, BRI_ECORRUPT,
       "a/dirlink is a symbolic link, not a regular file or directory; brid never follows links out of a table"},
      {"a/filelink", O_RDONLY, BRI_ECORRUPT,
       "a/filelink is a symbolic link, not a regular file or directory; brid never follows links out of a table"},
      {"a/filelink", O_PATH, BRI_ECORRUPT,
       "a/filelink is a symbolic link, not a regular file or directory; brid never follows links out of a table"},
      {"a/rel", O_RDONLY, BRI_ECORRUPT,
       "a/rel is a symbolic link, not a regular file or directory; brid never follows links out of a table"},
      {"a/dangling", O_RDONLY, BRI_ECORRUPT,
       "a/dangling is a symbolic link, not a regular file or directory; brid never follows links out of a table"},
      {"a/f/x", O_RDONLY, BRI_ECORRUPT, "a/f is not a directory"},
      {"a/missing", O_RDONLY, BRI_ENOTFOUND, "a/missing: no such file or directory"},
      {"a/missing/f", O_RDONLY, BRI_ENOTFOUND, "a/missing: no such file or directory"},
      {"../outside/secret", O_RDONLY, BRI_ECORRUPT, "../outside/secret: not a plain relative path"},
      {"a/../a/f", O_RDONLY, BRI_ECORRUPT, "a/../a/f: not a plain relative path"},
      {"a/./f", O_RDONLY, BRI_ECORRUPT, "a/./f: not a plain relative path"},
      {"a//f", O_RDONLY, BRI_ECORRUPT, "a//f: not a plain relative path"},
      {"/etc/passwd", O_RDONLY, BRI_ECORRUPT, "/etc/passwd: not a plain relative path"},
      {"", O_RDONLY, BRI_ECORRUPT, ": not a plain relative path"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *want = cases[i].msg ? bri_strdupf("%s/%s", top, cases[i].msg) : NULL;
    for (int walk = 0; walk < 2; walk++) {
      int fd = -1;
      bri_error_clear(&err);
      int rc = walk ? bri_open_beneath_walk(dfd, top, cases[i].rel, cases[i].flags, &fd, &err)
                    : bri_open_beneath(dfd, top, cases[i].rel, cases[i].flags, &fd, &err);
      ck_assert_msg(rc == cases[i].rc, "%s (%s): rc %d, want %d: %s", cases[i].rel,
                    walk ? "walk" : "openat2", rc, cases[i].rc, err.msg);
      if (rc == 0) {
        ck_assert_int_ge(fd, 0);
        close(fd);
      } else {
        ck_assert_int_eq(fd, -1);
        ck_assert_msg(!strncmp(err.msg, want, strlen(want)), "%s (%s): \"%s\", want \"%s...\"",
                      cases[i].rel, walk ? "walk" : "openat2", err.msg, want);
      }
    }
    free(want);
  }
  /* reading through a descriptor from either way gives the inside file */
  int fd;
  char buf[8] = {0};
  ck_assert_int_eq(bri_open_beneath_walk(dfd, top, "a/f", O_RDONLY, &fd, &err), 0);
  ck_assert_int_eq(read(fd, buf, sizeof buf), 6);
  ck_assert_str_eq(buf, "inside");
  close(fd);
  /* unlink, mkdir and link refuse the linked directory, for both ways */
  for (int walk = 0; walk < 2; walk++) {
    bri_beneath_force_walk(walk);
    ck_assert_int_eq(bri_unlink_beneath(dfd, top, "a/dirlink/secret", 0, &err), BRI_ECORRUPT);
    ck_assert_msg(strstr(err.msg, "a/dirlink is a symbolic link"), "%s", err.msg);
    ck_assert_int_eq(access(secret, F_OK), 0);
    ck_assert_int_eq(bri_mkdir_beneath(dfd, top, "a/dirlink/new", &err), BRI_ECORRUPT);
    uint64_t bytes;
    ck_assert_int_eq(bri_link_beneath(dfd, top, "a/filelink", dfd, top, "a/g", &bytes, &err), BRI_ECORRUPT);
    ck_assert_msg(strstr(err.msg, "a/filelink is a symbolic link"), "%s", err.msg);
    ck_assert_int_eq(bri_link_beneath(dfd, top, "a/f", dfd, top, "a/dirlink/g", &bytes, &err), BRI_ECORRUPT);
    bool linked;
    ck_assert_int_eq(bri_link_or_copy_beneath(dfd, top, "a/dirlink/secret", dfd, top, "a/g", true,
                                              &linked, &bytes, &err), BRI_ECORRUPT);
    ck_assert_int_eq(bri_link_or_copy_beneath(dfd, top, "a/f", dfd, top, "a/dirlink/g", false,
                                              &linked, &bytes, &err), BRI_ECORRUPT);
    /* what is allowed works */
    ck_assert_msg(bri_link_beneath(dfd, top, "a/f", dfd, top, "a/g", &bytes, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(bytes, 6);
    ck_assert_int_eq(bri_link_beneath(dfd, top, "a/f", dfd, top, "a/g", &bytes, &err), BRI_ETAKEN);
    ck_assert_msg(strstr(err.msg, "already exists"), "%s", err.msg);
    ck_assert_int_eq(bri_unlink_beneath(dfd, top, "a/g", 0, &err), 0);
    ck_assert_int_eq(bri_unlink_beneath(dfd, top, "a/g", 0, &err), BRI_ENOTFOUND);
    ck_assert_int_eq(bri_mkdir_beneath(dfd, top, "a/d", &err), 0);
    ck_assert_int_eq(bri_unlink_beneath(dfd, top, "a/d", AT_REMOVEDIR, &err), 0);
    /* unlinking a link removes the link, never its target */
    p = bri_strdupf("%s/a/tmplink", top);
    ck_assert_int_eq(symlink(secret, p), 0);
    free(p);
    ck_assert_int_eq(bri_unlink_beneath(dfd, top, "a/tmplink", 0, &err), 0);
    ck_assert_int_eq(access(secret, F_OK), 0);
  }
  bri_beneath_force_walk(false);
  ck_assert_str_eq(bri_path_below("/t", "/t/a/b"), "a/b");
  ck_assert_str_eq(bri_path_below("/t/", "/t/a"), "a");
  ck_assert_ptr_null(bri_path_below("/t", "/tx/a"));
  ck_assert_ptr_null(bri_path_below("/t", "/t"));
  ck_assert_ptr_null(bri_path_below("/t", "/t/"));
  close(dfd);
  free(top), free(secret);
}
END_TEST

/* ------------------------------------------------------------ materialize */

static int materialize(bri_error *err) {
  bri_materialize_report rep;
  return bri_materialize_table(root, NULL, NULL, &rep, err);
}

START_TEST(test_materialize_refuses_symlinks) {
  char *dirs[4];
  size_t n = sidecar_dirs(dirs, 4);
  ck_assert_uint_eq(n, 2);
  compact(BRI_STRATEGY_BRI); /* the BRI now names files in both directories */
  bri_error err = {0};
  /* a BRI source directory that is a link */
  char *moved = swap_for_link(dirs[0], "src-dir");
  snap s = take();
  expect_refusal(materialize(&err), &err, "is a symbolic link", "materialize (linked BRI directory)");
  same_as(s, "materialize");
  undo_link(dirs[0], moved);
  /* a BRI target that is a link */
  char *file = first_file(dirs[1]);
  moved = swap_for_link(file, "src-file");
  s = take();
  expect_refusal(materialize(&err), &err, "not a regular file", "materialize (linked BRI target)");
  same_as(s, "materialize");
  undo_link(file, moved);
  free(file);
  /* a link in the data file's own sidecar directory */
  bri_table *t;
  bri_manifest *m;
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  ck_assert_int_eq(bri_table_load(t, 0, &m, &err), 0);
  char *own;
  ck_assert_int_eq(bri_table_sidecar_dir(t, m->pb, m->pb->fragments[0]->files[0], &own, &err), 0);
  bri_manifest_free(m);
  bri_table_close(t);
  ck_assert_int_eq(mkdir(own, 0755), 0);
  char *target = bri_path_join(outside, "secret");
  write_old_file(target, "outside the table");
  char *lnk = bri_path_join(own, "00000000000000000000000000001111.blob");
  ck_assert_int_eq(symlink(target, lnk), 0);
  s = take();
  expect_refusal(materialize(&err), &err, "not a regular file", "materialize (link in own directory)");
  same_as(s, "materialize");
  ck_assert_int_eq(unlink(lnk), 0);
  ck_assert_int_eq(rmdir(own), 0);
  /* the data directory itself a link */
  char *data = bri_path_join(root, "data");
  moved = swap_for_link(data, "data");
  s = take();
  expect_refusal(materialize(&err), &err, "data is a symbolic link", "materialize (linked data/)");
  same_as(s, "materialize");
  undo_link(data, moved);
  /* with the traps gone it works */
  ck_assert_msg(materialize(&err) == 0, "%s", err.msg);
  free(data), free(own), free(target), free(lnk);
  for (size_t i = 0; i < n; i++) free(dirs[i]);
}
END_TEST

/* ------------------------------------------------------------ clone */

static int deep_clone(bri_error *err) {
  bri_clone_options o = {.deep = true};
  bri_clone_report rep;
  char *dst = bri_path_join(tmp, "clone.lance");
  int rc = bri_clone_table(root, dst, &o, NULL, &rep, err);
  struct stat st;
  if (rc) ck_assert_msg(lstat(dst, &st) != 0, "a failed clone left %s behind", dst);
  else bri_rmtree(dst);
  free(dst);
  return rc;
}

START_TEST(test_deep_clone_refuses_symlinks) {
  char *dirs[4];
  size_t n = sidecar_dirs(dirs, 4);
  ck_assert_uint_eq(n, 2);
  bri_error err = {0};
  char *moved = swap_for_link(dirs[0], "sidecar-dir");
  snap s = take();
  expect_refusal(deep_clone(&err), &err, "is a symbolic link", "clone (linked sidecar directory)");
  same_as(s, "clone");
  undo_link(dirs[0], moved);
  char *file = first_file(dirs[1]);
  moved = swap_for_link(file, "sidecar-file");
  s = take();
  expect_refusal(deep_clone(&err), &err, "brid does not follow links", "clone (linked sidecar)");
  same_as(s, "clone");
  undo_link(file, moved);
  char *data = bri_path_join(root, "data");
  moved = swap_for_link(data, "data");
  s = take();
  expect_refusal(deep_clone(&err), &err, "data is a symbolic link", "clone (linked data/)");
  same_as(s, "clone");
  undo_link(data, moved);
  /* a BRI source directory that is a link */
  compact(BRI_STRATEGY_BRI);
  moved = swap_for_link(dirs[1], "bri-dir");
  s = take();
  expect_refusal(deep_clone(&err), &err, "is a symbolic link", "clone (linked BRI directory)");
  same_as(s, "clone");
  undo_link(dirs[1], moved);
  ck_assert_msg(deep_clone(&err) == 0, "%s", err.msg);
  free(file), free(data);
  for (size_t i = 0; i < n; i++) free(dirs[i]);
}
END_TEST

/* ------------------------------------------------------------ ".." in manifests */

/* Commits (by hand, no checks) a copy of the latest manifest as the next
 * version after edit() changed it. */
static void write_hostile_version(void (*edit)(Lance__Table__Manifest *)) {
  bri_table *t;
  bri_manifest *m;
  bri_error err = {0};
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  ck_assert_int_eq(bri_table_load(t, 0, &m, &err), 0);
  uint64_t v = bri_table_latest_version(t) + 1;
  m->pb->version = v;
  edit(m->pb);
  uint8_t *buf;
  size_t len;
  ck_assert_int_eq(bri_manifest_serialize(m->pb, m->txn, m->indices, &buf, &len, &err), 0);
  char *name = bri_version_file_name(v, t->naming);
  char *path = bri_strdupf("%s/_versions/%s", root, name);
  bri_write_bytes(path, buf, len);
  free(buf), free(name), free(path);
  bri_manifest_free(m);
  bri_table_close(t);
}

static void edit_blob_dir_dotdot(Lance__Table__Manifest *m) {
  for (size_t i = 0; i < m->n_fragments; i++) {
    Lance__Table__DataFile *df = m->fragments[i]->files[0];
    Lance__Table__BlobReuseIndex *b;
    bri_error err = {0};
    if (bri_datafile_get_bri(df, "edit", &b, &err) != 1) continue;
    char *saved = b->sources[0]->blob_dir;
    b->sources[0]->blob_dir = "..";
    ck_assert_int_eq(bri_datafile_set_bri(df, b, &err), 0);
    b->sources[0]->blob_dir = saved;
    lance__table__blob_reuse_index__free_unpacked(b, NULL);
    return;
  }
  ck_abort_msg("no data file carries a BRI");
}

static void edit_path_dotdot(Lance__Table__Manifest *m) {
  Lance__Table__DataFile *df = m->fragments[0]->files[0];
  free(df->path);
  df->path = strdup("../../outside/victim.lance");
}

static void all_refuse(const char *needle) {
  bri_table *t;
  bri_manifest *m = NULL;
  bri_error err = {0};
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  expect_refusal(bri_table_load(t, 0, &m, &err), &err, needle, "manifest open");
  bri_table_close(t);
  snap s = take();
  expect_refusal(cleanup_now(&err), &err, "nothing was deleted", "cleanup");
  ck_assert_msg(strstr(err.msg, needle), "cleanup: %s", err.msg);
  expect_refusal(materialize(&err), &err, needle, "materialize");
  expect_refusal(deep_clone(&err), &err, needle, "clone");
  same_as(s, "cleanup, materialize and clone");
}

START_TEST(test_bri_blob_dir_dotdot_refused) {
  compact(BRI_STRATEGY_BRI);
  write_hostile_version(edit_blob_dir_dotdot);
  all_refuse("blob_dir \"..\" is not one plain path component (docs/format/bri.md rule 7)");
}
END_TEST

START_TEST(test_datafile_path_dotdot_refused) {
  char *victim = bri_path_join(outside, "victim.lance");
  write_old_file(victim, "outside the table");
  write_hostile_version(edit_path_dotdot);
  all_refuse("path \"../../outside/victim.lance\" has an empty, '.' or '..' component");
  free(victim);
}
END_TEST

/* ------------------------------------------------------------ fuzz regressions */

START_TEST(test_versions_row_count_overflow) {
  /* fuzz_rowids: 2^61 + 22 rows made the allocation wrap to 176 bytes, and
   * one run spanning them all wrote past it */
  uint64_t n = ((uint64_t)1 << 61) + 22;
  Lance__Table__U64Segment__Range rg = LANCE__TABLE__U64_SEGMENT__RANGE__INIT;
  rg.has_start = rg.has_end = 1, rg.start = 0, rg.end = n;
  Lance__Table__U64Segment seg = LANCE__TABLE__U64_SEGMENT__INIT;
  seg.segment_case = LANCE__TABLE__U64_SEGMENT__SEGMENT_RANGE, seg.range = &rg;
  Lance__Table__RowDatasetVersionRun run = LANCE__TABLE__ROW_DATASET_VERSION_RUN__INIT, *rp = &run;
  run.span = &seg, run.has_version = 1, run.version = 3;
  Lance__Table__RowDatasetVersionSequence s = LANCE__TABLE__ROW_DATASET_VERSION_SEQUENCE__INIT;
  s.runs = &rp, s.n_runs = 1;
  uint8_t buf[64];
  size_t len = lance__table__row_dataset_version_sequence__pack(&s, buf);
  uint64_t *v = NULL;
  bri_error err = {0};
  ck_assert_int_eq(bri_versions_unpack(buf, len, n, &v, &err), BRI_ENOMEM);
  ck_assert_str_eq(err.msg, "2305843009213693974 row versions do not fit in memory");
  ck_assert_ptr_null(v);
  /* and runs that do not cover the rows are refused before any allocation */
  ck_assert_int_eq(bri_versions_unpack(buf, len, n - 1, &v, &err), BRI_ECORRUPT);
  ck_assert_int_eq(bri_versions_unpack(buf, len, 5, &v, &err), BRI_ECORRUPT);
}
END_TEST

START_TEST(test_u64seq_pack_through_max) {
  /* fuzz_rowids: a run ending at 2^64-1 was packed as Range [start, 0) */
  uint64_t v[9];
  for (int i = 0; i < 9; i++) v[i] = UINT64_MAX - 8 + (uint64_t)i;
  uint8_t *buf;
  size_t len;
  bri_error err = {0};
  ck_assert_int_eq(bri_u64seq_pack(v, 9, &buf, &len, &err), 0);
  Lance__Table__RowIdSequence *seq;
  ck_assert_int_eq(bri_u64seq_unpack(buf, len, &seq, &err), 0);
  uint64_t *w;
  size_t n;
  ck_assert_msg(bri_u64seq_decode(seq, 9, &w, &n, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(n, 9);
  ck_assert(memcmp(v, w, sizeof v) == 0);
  free(w), free(buf);
  lance__table__row_id_sequence__free_unpacked(seq, NULL);
  /* a long run below the maximum still packs as one Range */
  uint64_t r[64];
  for (int i = 0; i < 64; i++) r[i] = 1000 + (uint64_t)i;
  ck_assert_int_eq(bri_u64seq_pack(r, 64, &buf, &len, &err), 0);
  ck_assert_int_eq(bri_u64seq_unpack(buf, len, &seq, &err), 0);
  ck_assert_uint_eq(seq->n_segments, 1);
  ck_assert_int_eq(seq->segments[0]->segment_case, LANCE__TABLE__U64_SEGMENT__SEGMENT_RANGE);
  free(buf);
  lance__table__row_id_sequence__free_unpacked(seq, NULL);
}
END_TEST

START_TEST(test_u64seq_decode_wrapping_count) {
  /* more values than size_t bytes can count: refused, not a wrapped malloc */
  Lance__Table__U64Segment__Range rg = LANCE__TABLE__U64_SEGMENT__RANGE__INIT;
  rg.has_start = rg.has_end = 1, rg.start = 0, rg.end = ((uint64_t)1 << 62);
  Lance__Table__U64Segment seg = LANCE__TABLE__U64_SEGMENT__INIT, *sp = &seg;
  seg.segment_case = LANCE__TABLE__U64_SEGMENT__SEGMENT_RANGE, seg.range = &rg;
  Lance__Table__RowIdSequence seq = LANCE__TABLE__ROW_ID_SEQUENCE__INIT;
  seq.segments = &sp, seq.n_segments = 1;
  uint64_t *v = NULL;
  size_t n = 0;
  bri_error err = {0};
  ck_assert_int_eq(bri_u64seq_decode(&seq, UINT64_MAX, &v, &n, &err), BRI_ENOMEM);
  ck_assert_ptr_null(v);
}
END_TEST

/* A rollback resolves its recorded paths beneath the root: an output
 * directory swapped for a link after its files were made does not send the
 * removal of those files elsewhere (the link itself, inside the table, goes;
 * what it points at stays), and unswapped outputs are removed as before. */
START_TEST(test_outputs_roll_back_stays_beneath) {
  char *dir = bri_path_join(root, "data/out_x"), *file = bri_path_join(dir, "a.blob");
  char *plain = bri_path_join(root, "data/out_y.lance");
  bri_outputs o = {0};
  bri_error err = {0};
  bri_store *store;
  ck_assert_int_eq(bri_store_open(root, 0, &store, &err), 0);
  o.store = store;
  ck_assert_int_eq(bri_outputs_add(&o, plain, 0, &err), 0);
  bri_write_bytes(plain, "y", 1);
  ck_assert_int_eq(bri_outputs_add(&o, dir, BRI_JOURNAL_TREE, &err), 0);
  ck_assert_int_eq(mkdir(dir, 0755), 0);
  ck_assert_int_eq(bri_outputs_add(&o, file, 0, &err), 0);
  bri_write_bytes(file, "payload", 7);
  char *moved = swap_for_link(dir, "out_x");
  char *victim = bri_path_join(moved, "a.blob");
  bri_outputs_roll_back(&o);
  struct stat st;
  ck_assert_msg(stat(victim, &st) == 0, "the rollback followed the link and removed %s", victim);
  ck_assert_int_eq(lstat(dir, &st), -1); /* the link inside the table is gone */
  ck_assert_int_eq(lstat(plain, &st), -1);
  bri_outputs_dispose(&o);
  bri_store_close(store);
  free(victim), free(moved), free(plain), free(file), free(dir);
}
END_TEST

static Suite *hostile_suite(void) {
  Suite *s = suite_create("hostile");
  TCase *tc = tcase_create("hostile");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_cleanup_refuses_symlinked_data_dir);
  tcase_add_test(tc, test_cleanup_refuses_symlinked_versions_dir);
  tcase_add_test(tc, test_cleanup_skips_symlinked_sidecar_dir_and_file);
  tcase_add_test(tc, test_cleanup_skips_symlinked_data_file);
  tcase_add_loop_test(tc, test_cleanup_race_data_dir_swapped, 0, 2);
  tcase_add_loop_test(tc, test_cleanup_race_sidecar_dir_swapped, 0, 2);
  tcase_add_loop_test(tc, test_compact_refuses_symlinked_sidecars, 0, 2);
  tcase_add_test(tc, test_beneath_openat2_and_walk_agree);
  tcase_add_test(tc, test_materialize_refuses_symlinks);
  tcase_add_test(tc, test_deep_clone_refuses_symlinks);
  tcase_add_test(tc, test_outputs_roll_back_stays_beneath);
  tcase_add_test(tc, test_bri_blob_dir_dotdot_refused);
  tcase_add_test(tc, test_datafile_path_dotdot_refused);
  tcase_add_test(tc, test_versions_row_count_overflow);
  tcase_add_test(tc, test_u64seq_pack_through_max);
  tcase_add_test(tc, test_u64seq_decode_wrapping_count);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(hostile_suite)
