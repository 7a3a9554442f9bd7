/* test_store.c: the storage interface on the local backend (storage/store.h):
 * reads, listings, put-if-absent and replace, streaming writers with copied
 * ranges, copies and links, directories, deletes, the failpoints a writing
 * call passes, paths outside the root or with ".." refused before any I/O,
 * and the permissions of new files and directories (taken from their
 * directory, whatever the umask; OPS 13.2). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "storage/outputs.h"
#include "storage/store.h"
#include "testutil.h"
#include "util/failpoint.h"
#include "util/fsutil.h"

static char *tmp, *root;
static bri_store *st;
static bri_error err;

static void setup(void) {
  tmp = bri_tmpdir();
  root = bri_path_join(tmp, "t.lance");
  ck_assert_int_eq(mkdir(root, 0755), 0);
  ck_assert_msg(bri_store_open(root, 0, &st, &err) == 0, "%s", err.msg);
  bri_error_clear(&err);
}

static void teardown(void) {
  bri_failpoint_configure(NULL, NULL);
  bri_store_close(st);
  bri_rmtree(tmp);
  free(tmp), free(root);
}

/* "<root>/<rel>" (a static buffer per call site is enough for these tests). */
static char *at(const char *rel) {
  static char buf[4][4096];
  static int i;
  i = (i + 1) % 4;
  snprintf(buf[i], sizeof buf[i], "%s/%s", root, rel);
  return buf[i];
}

static void put_file(const char *rel, const char *text) {
  bri_write_bytes(at(rel), text, strlen(text));
}

static char *read_text(const char *rel) {
  uint8_t *b;
  size_t n;
  ck_assert_msg(bri_store_read(st, at(rel), 1 << 20, &b, &n, &err) == 0, "%s", err.msg);
  return (char *)b;
}

static size_t count_tmp(const char *dir) {
  bri_store_entry *e;
  size_t n, k = 0;
  ck_assert_int_eq(bri_store_list(st, dir, 0, &e, &n, &err), 0);
  for (size_t i = 0; i < n; i++) k += !strncmp(e[i].name, ".tmp", 4);
  bri_store_entries_free(e, n);
  return k;
}

START_TEST(test_open_read_ranges) {
  put_file("a.bin", "0123456789");
  bri_sfile *f;
  ck_assert_int_eq(bri_store_open_file(st, at("a.bin"), &f, &err), 0);
  ck_assert_uint_eq(bri_sfile_size(f), 10);
  ck_assert_str_eq(bri_sfile_path(f), at("a.bin"));
  char b[4] = {0};
  ck_assert_int_eq(bri_sfile_read(f, 3, b, 3, &err), 0);
  ck_assert_str_eq(b, "345");
  ck_assert_int_eq(bri_sfile_read(f, 8, b, 3, &err), BRI_ECORRUPT);
  ck_assert_msg(strstr(err.msg, "wanted 3 bytes at offset 8, file ends after 10"), "%s", err.msg);
  bri_sfile_close(f);
  /* missing, a directory, a link */
  ck_assert_int_eq(bri_store_open_file(st, at("nope"), &f, &err), BRI_ENOTFOUND);
  ck_assert_msg(strstr(err.msg, "no such file"), "%s", err.msg);
  ck_assert_int_eq(mkdir(at("d"), 0755), 0);
  ck_assert_int_eq(bri_store_open_file(st, at("d"), &f, &err), BRI_EIO);
  ck_assert_msg(strstr(err.msg, "not a regular file"), "%s", err.msg);
  ck_assert_int_eq(symlink(at("a.bin"), at("l")), 0);
  ck_assert_int_eq(bri_store_open_file(st, at("l"), &f, &err), BRI_ECORRUPT);
  ck_assert_msg(strstr(err.msg, "symbolic link"), "%s", err.msg);
  ck_assert_int_eq(symlink(at("d"), at("dl")), 0);
  put_file("d/x", "x");
  ck_assert_int_eq(bri_store_open_file(st, at("dl/x"), &f, &err), BRI_ECORRUPT);
  /* a whole read larger than allowed */
  uint8_t *all;
  size_t n;
  ck_assert_int_eq(bri_store_read(st, at("a.bin"), 9, &all, &n, &err), BRI_EUNSUPPORTED);
  ck_assert_int_eq(bri_store_read(st, at("a.bin"), 10, &all, &n, &err), 0);
  ck_assert_uint_eq(n, 10);
  ck_assert_str_eq((char *)all, "0123456789");
  free(all);
}
END_TEST

START_TEST(test_paths_outside_or_dotdot_refused) {
  char *outside = bri_path_join(tmp, "secret");
  bri_write_bytes(outside, "s", 1);
  bri_sfile *f;
  ck_assert_int_eq(bri_store_open_file(st, outside, &f, &err), BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "is not inside"), "%s", err.msg);
  ck_assert_int_eq(bri_store_open_file(st, at("../secret"), &f, &err), BRI_ECORRUPT);
  ck_assert_int_eq(bri_store_open_file(st, at("a//b"), &f, &err), BRI_ECORRUPT);
  ck_assert_int_eq(bri_store_delete(st, at("x/../../secret"), &err), BRI_ECORRUPT);
  ck_assert_int_eq(bri_store_put_new(st, at("./x"), "x", 1, NULL, &err), BRI_ECORRUPT);
  const char *many[] = {at("ok"), outside};
  put_file("ok", "o");
  ck_assert_int_eq(bri_store_delete_many(st, many, 2, NULL, &err), BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "nothing deleted"), "%s", err.msg);
  struct stat sb;
  ck_assert_int_eq(stat(at("ok"), &sb), 0); /* nothing was deleted */
  ck_assert_int_eq(stat(outside, &sb), 0);
  /* the prefix test is by component: "<root>x" is not inside "<root>" */
  char *sibling = bri_strdupf("%sx/f", root);
  ck_assert_ptr_null(bri_store_key(st, sibling));
  ck_assert_str_eq(bri_store_key(st, root), "");
  free(sibling), free(outside);
}
END_TEST

START_TEST(test_list_and_stat) {
  put_file("b", "bb");
  put_file("a", "a");
  ck_assert_int_eq(mkdir(at("c"), 0755), 0);
  ck_assert_int_eq(symlink("/etc", at("e")), 0);
  bri_store_entry *e;
  size_t n;
  ck_assert_int_eq(bri_store_list(st, root, BRI_LIST_STAT, &e, &n, &err), 0);
  ck_assert_uint_eq(n, 4);
  ck_assert_str_eq(e[0].name, "a");
  ck_assert_int_eq(e[0].info.kind, BRI_ENTRY_FILE);
  ck_assert_uint_eq(e[0].info.size, 1);
  ck_assert_str_eq(e[1].name, "b");
  ck_assert_uint_eq(e[1].info.size, 2);
  ck_assert(e[1].info.mtime_ns > 0);
  ck_assert_int_eq(e[2].info.kind, BRI_ENTRY_DIR);
  ck_assert_int_eq(e[3].info.kind, BRI_ENTRY_LINK);
  bri_store_entries_free(e, n);
  ck_assert_int_eq(bri_store_list(st, at("nope"), 0, &e, &n, &err), BRI_ENOTFOUND);
  ck_assert_int_eq(bri_store_list(st, at("e"), 0, &e, &n, &err), BRI_ECORRUPT);
  bri_store_info si;
  ck_assert_int_eq(bri_store_stat(st, at("b"), &si, &err), 0);
  ck_assert_int_eq(si.kind, BRI_ENTRY_FILE);
  ck_assert_uint_eq(si.size, 2);
  ck_assert_int_eq(bri_store_stat(st, at("e"), &si, &err), 0);
  ck_assert_int_eq(si.kind, BRI_ENTRY_LINK); /* never followed */
  ck_assert_int_eq(bri_store_stat(st, at("zz"), &si, &err), BRI_ENOTFOUND);
}
END_TEST

START_TEST(test_put_new_is_put_if_absent) {
  ck_assert_int_eq(mkdir(at("_versions"), 0755), 0);
  ck_assert_msg(bri_store_put_new(st, at("_versions/1.manifest"), "first", 5, NULL, &err) == 0, "%s",
                err.msg);
  ck_assert_int_eq(bri_store_put_new(st, at("_versions/1.manifest"), "second", 6, NULL, &err),
                   BRI_ETAKEN);
  char *t = read_text("_versions/1.manifest");
  ck_assert_str_eq(t, "first"); /* the winner's bytes stay */
  free(t);
  ck_assert_uint_eq(count_tmp(at("_versions")), 0);
  /* put replaces */
  ck_assert_int_eq(bri_store_put(st, at("_versions/hint"), "1", 1, NULL, &err), 0);
  ck_assert_int_eq(bri_store_put(st, at("_versions/hint"), "22", 2, NULL, &err), 0);
  t = read_text("_versions/hint");
  ck_assert_str_eq(t, "22");
  free(t);
  ck_assert_uint_eq(count_tmp(at("_versions")), 0);
  /* put_new_volatile: made under its own name, never over another's */
  ck_assert_int_eq(mkdir(at("_transactions"), 0755), 0);
  ck_assert_int_eq(bri_store_put_new_volatile(st, at("_transactions/1-u.txn"), "txn", 3, NULL, &err), 0);
  ck_assert_int_eq(bri_store_put_new_volatile(st, at("_transactions/1-u.txn"), "other", 5, NULL, &err),
                   BRI_ETAKEN);
  t = read_text("_transactions/1-u.txn");
  ck_assert_str_eq(t, "txn");
  free(t);
  ck_assert_uint_eq(count_tmp(at("_transactions")), 0);
  /* a write that fails leaves nothing */
  bri_failpoint_configure("commit.txn_written=eio", NULL);
  static const bri_store_steps steps = {.written = "commit.txn_written"};
  ck_assert_int_eq(bri_store_put_new_volatile(st, at("_transactions/2-u.txn"), "txn", 3, &steps, &err), BRI_EIO);
  struct stat sb;
  ck_assert_int_eq(lstat(at("_transactions/2-u.txn"), &sb), -1);
}
END_TEST

START_TEST(test_put_new_failpoints) {
  const bri_store_steps steps = {"commit.before_manifest_fsync", "commit.after_manifest_fsync",
                                 "commit.before_link", "commit.after_link"};
  ck_assert_int_eq(mkdir(at("v"), 0755), 0);
  /* before the name is taken: a failure, and nothing is left */
  const char *before[] = {"commit.before_manifest_fsync=eio", "commit.after_manifest_fsync=eio",
                          "commit.before_link=enospc"};
  for (size_t i = 0; i < 3; i++) {
    ck_assert_int_eq(bri_failpoint_configure(before[i], &err), 0);
    ck_assert_int_eq(bri_store_put_new(st, at("v/m"), "m", 1, &steps, &err), BRI_EIO);
    ck_assert_msg(strstr(err.msg, "injected"), "%s", err.msg);
    bri_store_entry *e;
    size_t n;
    ck_assert_int_eq(bri_store_list(st, at("v"), 0, &e, &n, &err), 0);
    ck_assert_uint_eq(n, 0);
    bri_store_entries_free(e, n);
  }
  /* after: the object stands, the error is a warning */
  ck_assert_int_eq(bri_failpoint_configure("commit.after_link=eio", &err), 0);
  bri_error_clear(&err);
  ck_assert_int_eq(bri_store_put_new(st, at("v/m"), "m", 1, &steps, &err), 0);
  ck_assert_int_eq(err.code, BRI_EIO);
  ck_assert_msg(strstr(err.msg, "failpoint commit.after_link: injected"), "%s", err.msg);
  char *t = read_text("v/m");
  ck_assert_str_eq(t, "m");
  free(t);
  ck_assert_uint_eq(count_tmp(at("v")), 0);
}
END_TEST

START_TEST(test_writer_append_copy_finish_abort) {
  put_file("src", "abcdefghij");
  bri_swriter *w;
  ck_assert_int_eq(bri_store_create(st, at("out"), NULL, &w, &err), 0);
  ck_assert_int_eq(bri_swriter_append(w, "XY", 2, &err), 0);
  ck_assert_int_eq(bri_swriter_append_copy(w, st, at("src"), 2, 3, &err), 0);
  ck_assert_int_eq(bri_swriter_append(w, "Z", 1, &err), 0);
  ck_assert_uint_eq(bri_swriter_size(w), 6);
  ck_assert_str_eq(bri_swriter_path(w), at("out"));
  ck_assert_int_eq(bri_swriter_finish(w, &err), 0);
  char *t = read_text("out");
  ck_assert_str_eq(t, "XYcdeZ");
  free(t);
  /* never overwrites */
  ck_assert_int_eq(bri_store_create(st, at("out"), NULL, &w, &err), BRI_ETAKEN);
  /* a copied range past the source's end */
  ck_assert_int_eq(bri_store_create(st, at("out2"), NULL, &w, &err), 0);
  ck_assert_int_eq(bri_swriter_append_copy(w, st, at("src"), 8, 5, &err), BRI_EIO);
  bri_swriter_abort(w);
  struct stat sb;
  ck_assert_int_eq(lstat(at("out2"), &sb), -1); /* abort removed it */
  /* a failure at finish removes the file */
  const bri_store_steps steps = {.written = "writer.before_fsync"};
  ck_assert_int_eq(bri_failpoint_configure("writer.before_fsync=eio", &err), 0);
  ck_assert_int_eq(bri_store_create(st, at("out3"), &steps, &w, &err), 0);
  ck_assert_int_eq(bri_swriter_append(w, "q", 1, &err), 0);
  ck_assert_int_eq(bri_swriter_finish(w, &err), BRI_EIO);
  ck_assert_int_eq(lstat(at("out3"), &sb), -1);
  /* the source of a copied range is never reached through a link */
  ck_assert_int_eq(symlink(at("src"), at("srclink")), 0);
  bri_failpoint_configure(NULL, NULL);
  ck_assert_int_eq(bri_store_create(st, at("out4"), NULL, &w, &err), 0);
  ck_assert_int_eq(bri_swriter_append_copy(w, st, at("srclink"), 0, 1, &err), BRI_ECORRUPT);
  bri_swriter_abort(w);
}
END_TEST

START_TEST(test_copy_link) {
  put_file("src", "payload");
  struct timespec old[2] = {{1577836800, 0}, {1577836800, 0}};
  ck_assert_int_eq(utimensat(AT_FDCWD, at("src"), old, 0), 0);
  bool linked;
  uint64_t bytes;
  ck_assert_int_eq(bri_store_copy(st, at("src"), st, at("c1"), 0, &linked, &bytes, &err), 0);
  ck_assert(!linked);
  ck_assert_uint_eq(bytes, 7);
  struct stat a, b;
  ck_assert_int_eq(stat(at("src"), &a), 0);
  ck_assert_int_eq(stat(at("c1"), &b), 0);
  ck_assert(a.st_ino != b.st_ino);
  ck_assert_int_eq(bri_store_copy(st, at("src"), st, at("c2"), BRI_COPY_TRY_LINK, &linked, &bytes,
                                  &err), 0);
  ck_assert(linked);
  ck_assert_int_eq(bri_store_copy(st, at("src"), st, at("c1"), 0, &linked, &bytes, &err), BRI_ETAKEN);
  ck_assert_int_eq(bri_store_copy(st, at("gone"), st, at("c3"), 0, &linked, &bytes, &err),
                   BRI_ENOTFOUND);
  /* a link as the source is refused, linked or copied, and nothing is made */
  ck_assert_int_eq(symlink(at("src"), at("sl")), 0);
  ck_assert_int_eq(bri_store_copy(st, at("sl"), st, at("c4"), BRI_COPY_TRY_LINK, &linked, &bytes,
                                  &err), BRI_ECORRUPT);
  ck_assert_int_eq(bri_store_copy(st, at("sl"), st, at("c4"), 0, &linked, &bytes, &err), BRI_ECORRUPT);
  ck_assert_int_eq(lstat(at("c4"), &b), -1);
  ck_assert_int_eq(bri_store_link(st, at("src"), st, at("l1"), &bytes, &err), 0);
  ck_assert_int_eq(stat(at("l1"), &b), 0);
  ck_assert_int_eq(stat(at("src"), &a), 0);
  ck_assert(a.st_ino == b.st_ino);
  ck_assert(b.st_mtim.tv_sec > 1577836800); /* the new name counts as new */
  ck_assert_int_eq(bri_store_link(st, at("src"), st, at("l1"), &bytes, &err), BRI_ETAKEN);
  ck_assert(bri_store_caps(st) & BRI_STORE_CAP_LINK);
  ck_assert(bri_store_caps(st) & BRI_STORE_CAP_INOTIFY);
  ck_assert(!(bri_store_caps(st) & BRI_STORE_CAP_POLL));
}
END_TEST

START_TEST(test_dirs_and_deletes) {
  ck_assert_int_eq(bri_store_mkdir(st, at("d"), &err), 0);
  ck_assert_int_eq(bri_store_mkdir(st, at("d"), &err), BRI_ETAKEN);
  put_file("f", "f");
  ck_assert_int_eq(bri_store_mkdir(st, at("f"), &err), BRI_ECORRUPT);
  ck_assert_int_eq(bri_store_mkdir(st, at("x/y"), &err), BRI_ENOTFOUND);
  put_file("d/a", "a");
  put_file("d/b", "b");
  ck_assert_int_eq(bri_store_sync(st, at("d"), &err), 0);
  ck_assert_int_eq(bri_store_sync(st, root, &err), 0);
  ck_assert_int_eq(bri_store_delete(st, at("d"), &err), BRI_ENOTEMPTY);
  ck_assert_int_eq(bri_store_delete(st, at("nope"), &err), BRI_ENOTFOUND);
  const char *many[] = {at("d/a"), at("d/b"), at("d/missing"), at("d")};
  int rcs[4];
  ck_assert_msg(bri_store_delete_many(st, many, 4, rcs, &err) == 0, "%s", err.msg);
  for (int i = 0; i < 4; i++) ck_assert_int_eq(rcs[i], 0);
  struct stat sb;
  ck_assert_int_eq(lstat(at("d"), &sb), -1);
  /* a link is removed itself, never what it points at */
  ck_assert_int_eq(symlink(at("f"), at("lnk")), 0);
  ck_assert_int_eq(bri_store_delete(st, at("lnk"), &err), 0);
  ck_assert_int_eq(stat(at("f"), &sb), 0);
}
END_TEST

START_TEST(test_null_store_is_a_plain_local_path) {
  char *p = bri_path_join(tmp, "free.bin");
  bri_write_bytes(p, "hello", 5);
  bri_sfile *f;
  ck_assert_int_eq(bri_store_open_file(NULL, p, &f, &err), 0);
  ck_assert_uint_eq(bri_sfile_size(f), 5);
  char b[6] = {0};
  ck_assert_int_eq(bri_sfile_read(f, 0, b, 5, &err), 0); /* its temporary store is gone */
  ck_assert_str_eq(b, "hello");
  ck_assert_str_eq(bri_sfile_path(f), p);
  bri_sfile_close(f);
  char *q = bri_path_join(tmp, "new.bin");
  bri_swriter *w;
  ck_assert_int_eq(bri_store_create(NULL, q, NULL, &w, &err), 0);
  ck_assert_int_eq(bri_swriter_append_copy(w, NULL, p, 1, 3, &err), 0);
  ck_assert_int_eq(bri_swriter_finish(w, &err), 0);
  size_t n;
  uint8_t *t = bri_slurp(q, &n);
  ck_assert_uint_eq(n, 3);
  ck_assert(!memcmp(t, "ell", 3));
  free(t);
  ck_assert_int_eq(bri_store_delete(NULL, q, &err), 0);
  free(p), free(q);
}
END_TEST

START_TEST(test_open_create_and_schemes) {
  char *fresh = bri_path_join(tmp, "fresh.lance");
  bri_store *s2;
  ck_assert_int_eq(bri_store_open(fresh, 0, &s2, &err), BRI_ENOTFOUND);
  ck_assert_int_eq(bri_store_open(fresh, BRI_STORE_CREATE, &s2, &err), 0);
  ck_assert_str_eq(bri_store_uri(s2), fresh);
  bri_store_close(s2);
  char *uri = bri_strdupf("file://%s/", fresh);
  ck_assert_int_eq(bri_store_open(uri, 0, &s2, &err), 0);
  ck_assert_str_eq(bri_store_uri(s2), fresh); /* file:// dropped, trailing '/' too */
  bri_store_close(s2);
  ck_assert_int_eq(bri_store_open("nosuch://bucket/t", 0, &s2, &err), BRI_EUNSUPPORTED);
  ck_assert_msg(strstr(err.msg, "\"nosuch\""), "%s", err.msg);
  free(uri), free(fresh);
}
END_TEST

/* OPS 13.2: brid runs with UMask=0077, yet what it writes into a
 * group-shared table must be readable and writable by the group. */
static void check_mode(const char *path, mode_t want, gid_t gid) {
  struct stat sb;
  ck_assert_int_eq(lstat(path, &sb), 0);
  ck_assert_msg((sb.st_mode & 07777) == want, "%s: mode %o, want %o", path, sb.st_mode & 07777, want);
  ck_assert_msg(sb.st_gid == gid, "%s: group %u, want %u", path, (unsigned)sb.st_gid, (unsigned)gid);
}

/* The one canonical name of a location (bri_store_location): a local path
 * that exists by its real path, one that does not by its parent's real
 * path and its last name, one whose parent is missing too as given (made
 * absolute); never a trailing slash. */
static void expect_location(const char *uri, const char *want) {
  char *got = NULL;
  ck_assert_msg(bri_store_location(uri, &got, &err) == 0, "%s: %s", uri, err.msg);
  ck_assert_str_eq(got, want);
  free(got);
}

START_TEST(test_location_is_one_canonical_name) {
  char real[PATH_MAX], cwd[PATH_MAX], in[PATH_MAX + 64], want[PATH_MAX + 64];
  ck_assert_ptr_nonnull(realpath(tmp, real));
  char *dir = bri_path_join(tmp, "dir"), *link = bri_path_join(tmp, "link"), *real_dir = bri_path_join(real, "dir");
  ck_assert_int_eq(mkdir(dir, 0755), 0);
  ck_assert_int_eq(symlink(dir, link), 0);
  /* "<link>IN" is named "<real>/dirWANT", or "<link>WANT" when its parent is missing too */
  static const struct {
    const char *in, *want;
    bool parent_exists;
  } under_link[] = {{"", "", true},
                    {"/", "", true},
                    {"/new.lance", "/new.lance", true},
                    {"/new.lance//", "/new.lance", true},
                    {"/no/t.lance", "/no/t.lance", false},
                    {"/no/t.lance/", "/no/t.lance", false}};
  for (size_t i = 0; i < sizeof under_link / sizeof under_link[0]; i++) {
    snprintf(in, sizeof in, "%s%s", link, under_link[i].in);
    snprintf(want, sizeof want, "%s%s", under_link[i].parent_exists ? real_dir : link, under_link[i].want);
    expect_location(in, want);
  }
  ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
  ck_assert_int_eq(chdir(link), 0);
  expect_location(".", real_dir);
  snprintf(want, sizeof want, "%s/rel.lance", real_dir);
  expect_location("rel.lance", want);
  ck_assert_int_eq(chdir(cwd), 0);
  expect_location("/", "/");
  expect_location("s3://bucket/p/t.lance/", "s3://bucket/p/t.lance");
  expect_location("az://brid/p/t.lance/", "az://brid/p/t.lance");
  free(real_dir);
  free(dir), free(link);
}
END_TEST

START_TEST(test_new_files_take_the_directory_mode_and_group) {
  if (geteuid() != 0) return; /* needs to give the table another group */
  const gid_t g = 4242;
  ck_assert_int_eq(chown(root, (uid_t)-1, g), 0);
  ck_assert_int_eq(chmod(root, 02775), 0);
  ck_assert_int_eq(mkdir(at("data"), 02775), 0);
  ck_assert_int_eq(chown(at("data"), (uid_t)-1, g), 0);
  ck_assert_int_eq(chmod(at("data"), 02775), 0);
  mode_t old = umask(077);
  bri_swriter *w;
  ck_assert_int_eq(bri_store_create(st, at("data/x.lance"), NULL, &w, &err), 0);
  ck_assert_int_eq(bri_swriter_finish(w, &err), 0);
  ck_assert_int_eq(bri_store_put_new(st, at("data/m"), "m", 1, NULL, &err), 0);
  ck_assert_int_eq(bri_store_put(st, at("data/h"), "h", 1, NULL, &err), 0);
  ck_assert_int_eq(bri_store_mkdir(st, at("data/stem"), &err), 0);
  bool linked;
  uint64_t bytes;
  ck_assert_int_eq(bri_store_copy(st, at("data/m"), st, at("data/stem/c"), 0, &linked, &bytes, &err), 0);
  umask(old);
  check_mode(at("data/x.lance"), 0664, g);
  check_mode(at("data/m"), 0664, g);
  check_mode(at("data/h"), 0664, g);
  check_mode(at("data/stem"), 02775, g);
  check_mode(at("data/stem/c"), 0664, g);
  /* without setgid, the group is set explicitly where permitted; a user
   * outside the group keeps its own, with the mode still derived */
  ck_assert_int_eq(mkdir(at("plain"), 0775), 0);
  ck_assert_int_eq(chown(at("plain"), 65534, g), 0);
  ck_assert_int_eq(chmod(at("plain"), 0775), 0);
  pid_t pid = fork();
  if (pid == 0) {
    umask(077);
    if (setgroups(0, NULL) || setgid(65534) || setuid(65534)) _exit(3);
    bri_error e;
    if (bri_store_put_new(st, at("plain/n"), "n", 1, NULL, &e)) _exit(4);
    _exit(0);
  }
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_int_eq(WEXITSTATUS(status), 0);
  check_mode(at("plain/n"), 0664, 65534);
  umask(077);
  ck_assert_int_eq(bri_store_put_new(st, at("plain/r"), "r", 1, NULL, &err), 0);
  umask(old);
  check_mode(at("plain/r"), 0664, g); /* root may: the directory's group */
}
END_TEST

START_TEST(test_readv_list_first_and_counters) {
  put_file("a", "0123456789");
  put_file("b", "b");
  put_file("c", "c");
  bri_sfile *f;
  ck_assert_int_eq(bri_store_open_file(st, at("a"), &f, &err), 0);
  char x[3] = {0}, y[4] = {0};
  bri_sread r[2] = {{7, x, 2}, {1, y, 3}};
  ck_assert_int_eq(bri_sfile_readv(f, r, 2, &err), 0);
  ck_assert_str_eq(x, "78");
  ck_assert_str_eq(y, "123");
  bri_sread past[2] = {{0, x, 2}, {9, y, 2}};
  ck_assert_int_eq(bri_sfile_readv(f, past, 2, &err), BRI_ECORRUPT);
  ck_assert_msg(strstr(err.msg, "wanted 2 bytes at offset 9"), "%s", err.msg);
  bri_sfile_close(f);
  bri_store_entry *e;
  size_t n;
  ck_assert_int_eq(bri_store_list_first(st, root, 0, 2, &e, &n, &err), 0);
  ck_assert_uint_eq(n, 2);
  ck_assert_str_eq(e[0].name, "a");
  ck_assert_str_eq(e[1].name, "b");
  bri_store_entries_free(e, n);
  ck_assert_int_eq(bri_store_list_first(st, root, 0, 9, &e, &n, &err), 0);
  ck_assert_uint_eq(n, 3);
  bri_store_entries_free(e, n);
  /* what went through: 5 bytes read above, 3 written, 4 copied by the kernel */
  ck_assert_int_eq(bri_store_put_new(st, at("p"), "ppp", 3, NULL, &err), 0);
  bri_swriter *w;
  ck_assert_int_eq(bri_store_create(st, at("w"), NULL, &w, &err), 0);
  ck_assert_int_eq(bri_swriter_append_copy(w, st, at("a"), 0, 4, &err), 0);
  ck_assert_int_eq(bri_swriter_finish(w, &err), 0);
  bri_store_stats s;
  bri_store_stats_get(st, &s);
  ck_assert_uint_eq(s.bytes_read, 5);
  ck_assert_uint_eq(s.bytes_written, 3);
  ck_assert_uint_eq(s.bytes_copied_server, 4);
  ck_assert_uint_eq(s.requests + s.retries, 0);
}
END_TEST

/* The outputs' records (storage/outputs.h): a tree's entry covers what is
 * made in it (one journal call, with the caller's flags), the tree is not
 * recorded twice, and the rollback removes the tree's files before the
 * tree and everything else newest first. */
typedef struct jcalls {
  int n;
  char paths[4][256];
  unsigned flags[4];
} jcalls;

static int count_journal(void *user, const char *path, unsigned flags, bri_error *e) {
  (void)e;
  jcalls *j = user;
  if (j->n < 4) snprintf(j->paths[j->n], sizeof j->paths[0], "%s", path), j->flags[j->n] = flags;
  j->n++;
  return 0;
}

START_TEST(test_outputs_tree_journaled_once) {
  jcalls j = {0};
  bri_hooks h = {.journal = count_journal, .user = &j};
  bri_outputs o = {.hooks = &h, .store = st};
  char *data = bri_path_join(root, "data/s.lance"), *dir = bri_path_join(root, "data/s");
  char *a = bri_path_join(dir, "1.blob"), *b = bri_path_join(dir, "2.blob");
  char *other = bri_path_join(root, "data/s2"), *data_dir = bri_path_join(root, "data");
  ck_assert_int_eq(mkdir(data_dir, 0755), 0);
  ck_assert_int_eq(bri_outputs_add(&o, data, BRI_JOURNAL_RESERVED, &err), 0);
  ck_assert_int_eq(bri_outputs_add(&o, dir, BRI_JOURNAL_TREE | BRI_JOURNAL_RESERVED, &err), 0);
  bri_write_bytes(data, "d", 1);
  ck_assert_int_eq(bri_outputs_add(&o, dir, BRI_JOURNAL_TREE, &err), 0); /* again: nothing */
  ck_assert_int_eq(mkdir(dir, 0755), 0);
  ck_assert_int_eq(bri_outputs_add(&o, a, 0, &err), 0);
  bri_write_bytes(a, "a", 1);
  ck_assert_int_eq(bri_outputs_add(&o, b, 0, &err), 0);
  bri_write_bytes(b, "b", 1);
  ck_assert_int_eq(bri_outputs_add(&o, other, 0, &err), 0); /* a sibling with the tree's prefix */
  ck_assert_int_eq(j.n, 3);
  ck_assert_str_eq(j.paths[0], data);
  ck_assert_uint_eq(j.flags[0], BRI_JOURNAL_RESERVED);
  ck_assert_str_eq(j.paths[1], dir);
  ck_assert_uint_eq(j.flags[1], BRI_JOURNAL_TREE | BRI_JOURNAL_RESERVED);
  ck_assert_str_eq(j.paths[2], other);
  ck_assert_uint_eq(o.n, 5);
  bri_outputs_roll_back(&o);
  struct stat sb;
  ck_assert_int_eq(lstat(dir, &sb), -1);
  ck_assert_int_eq(lstat(data, &sb), -1);
  ck_assert_uint_eq(o.n, 0);
  ck_assert_uint_eq(o.n_trees, 0);
  /* after a rollback nothing is covered any more */
  ck_assert_int_eq(bri_outputs_add(&o, a, 0, &err), 0);
  ck_assert_int_eq(j.n, 4);
  bri_outputs_dispose(&o);
  free(data), free(dir), free(a), free(b), free(other), free(data_dir);
}
END_TEST

static Suite *store_suite(void) {
  Suite *s = suite_create("store");
  TCase *tc = tcase_create("local");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_open_read_ranges);
  tcase_add_test(tc, test_location_is_one_canonical_name);
  tcase_add_test(tc, test_paths_outside_or_dotdot_refused);
  tcase_add_test(tc, test_list_and_stat);
  tcase_add_test(tc, test_put_new_is_put_if_absent);
  tcase_add_test(tc, test_put_new_failpoints);
  tcase_add_test(tc, test_writer_append_copy_finish_abort);
  tcase_add_test(tc, test_copy_link);
  tcase_add_test(tc, test_outputs_tree_journaled_once);
  tcase_add_test(tc, test_dirs_and_deletes);
  tcase_add_test(tc, test_null_store_is_a_plain_local_path);
  tcase_add_test(tc, test_open_create_and_schemes);
  tcase_add_test(tc, test_new_files_take_the_directory_mode_and_group);
  tcase_add_test(tc, test_readv_list_first_and_counters);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(store_suite)
