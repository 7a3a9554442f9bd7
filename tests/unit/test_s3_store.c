/* test_s3_store.c: the storage interface on the S3 backend, against a real
 * radosgw (scripts/run-tests.sh starts it): reads and ranges, listings of
 * prefixes as directories, put-if-absent and replace, writers that become
 * one PUT or a multipart upload with UploadPartCopy of copied ranges (the
 * payload not passing through this process, by the store's counters),
 * copies within S3 and across backends, no links, deletes, failpoints,
 * per-prefix settings, counting by root, many listings at once. Each test
 * has its own prefix. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "storage/s3_store.h"
#include "storage/store.h"
#include "testutil.h"
#include "util/failpoint.h"

static char root[256];
static bri_store *st;
static bri_error err;

static void setup(void) {
  static int n;
  const char *b = getenv("BRI_S3_BUCKET");
  ck_assert_msg(b && getenv("AWS_ENDPOINT_URL"),
                "no S3 server: run through scripts/run-tests.sh (it starts radosgw)");
  snprintf(root, sizeof root, "s3://%s/store-%d-%ld-%d/t.lance", b, (int)getpid(), (long)time(NULL), n++);
  ck_assert_msg(bri_store_open(root, 0, &st, &err) == 0, "%s", err.msg);
}

/* Removes every object under the test's root. */
static void teardown(void) {
  const char *dirs[] = {"", "data", "data/sub", "_versions"};
  for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
    bri_store_entry *e;
    size_t n;
    char dir[512];
    snprintf(dir, sizeof dir, "%s%s%s", root, *dirs[d] ? "/" : "", dirs[d]);
    if (bri_store_list(st, dir, 0, &e, &n, &err) != 0) continue;
    for (size_t i = 0; i < n; i++) {
      char p[768];
      snprintf(p, sizeof p, "%s/%s", dir, e[i].name);
      if (e[i].info.kind == BRI_ENTRY_FILE) bri_store_delete(st, p, &err);
    }
    bri_store_entries_free(e, n);
  }
  bri_failpoint_configure(NULL, NULL);
  bri_store_close(st);
}

static char *at(const char *rel) { return bri_test_at(root, rel); }

static void put_text(const char *rel, const char *text) {
  ck_assert_msg(bri_store_put(st, at(rel), text, strlen(text), NULL, &err) == 0, "%s", err.msg);
}

/* What st moved so far (its own counters, storage/store.h). */
static bri_store_stats stats(void) {
  bri_store_stats s;
  bri_store_stats_get(st, &s);
  return s;
}

START_TEST(test_read_stat_list) {
  ck_assert_str_eq(bri_store_canonical(st), root);
  /* an object store: no links, dirs or local paths; polls, copies on the server, puts if absent */
  ck_assert_uint_eq(bri_store_caps(st), BRI_STORE_CAP_POLL | BRI_STORE_CAP_SERVER_COPY | BRI_STORE_CAP_PUT_IF_ABSENT);
  put_text("data/a.lance", "0123456789");
  put_text("data/sub/x.blob", "x");
  put_text("_versions/1.manifest", "m");
  bri_sfile *f;
  ck_assert_msg(bri_store_open_file(st, at("data/a.lance"), &f, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(bri_sfile_size(f), 10);
  char buf[8];
  ck_assert(bri_sfile_read(f, 3, buf, 4, &err) == 0);
  ck_assert(!memcmp(buf, "3456", 4));
  ck_assert_int_eq(bri_sfile_read(f, 8, buf, 4, &err), BRI_ECORRUPT);
  ck_assert_msg(strstr(err.msg, "data/a.lance: wanted 4 bytes at offset 8, file ends after 10"), "%s", err.msg);
  bri_sfile_close(f);
  ck_assert_int_eq(bri_store_open_file(st, at("data/none"), &f, &err), BRI_ENOTFOUND);
  ck_assert_msg(strstr(err.msg, "/t.lance/data/none: no such file"), "%s", err.msg);

  bri_store_info info;
  ck_assert(bri_store_stat(st, at("data/a.lance"), &info, &err) == 0);
  ck_assert_int_eq(info.kind, BRI_ENTRY_FILE);
  ck_assert_uint_eq(info.size, 10);
  ck_assert(info.mtime_ns > (int64_t)(time(NULL) - 600) * 1000000000LL);
  ck_assert(bri_store_stat(st, at("data"), &info, &err) == 0);
  ck_assert_int_eq(info.kind, BRI_ENTRY_DIR);
  ck_assert(bri_store_stat(st, root, &info, &err) == 0);
  ck_assert_int_eq(info.kind, BRI_ENTRY_DIR);
  ck_assert_int_eq(bri_store_stat(st, at("dat"), &info, &err), BRI_ENOTFOUND);

  bri_store_entry *e;
  size_t n;
  ck_assert_msg(bri_store_list(st, root, BRI_LIST_STAT, &e, &n, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(n, 2);
  ck_assert_str_eq(e[0].name, "_versions");
  ck_assert_int_eq(e[0].info.kind, BRI_ENTRY_DIR);
  ck_assert_str_eq(e[1].name, "data");
  bri_store_entries_free(e, n);
  ck_assert(bri_store_list(st, at("data"), BRI_LIST_STAT, &e, &n, &err) == 0);
  ck_assert_uint_eq(n, 2);
  ck_assert_str_eq(e[0].name, "a.lance");
  ck_assert_int_eq(e[0].info.kind, BRI_ENTRY_FILE);
  ck_assert_uint_eq(e[0].info.size, 10);
  ck_assert_str_eq(e[1].name, "sub");
  ck_assert_int_eq(e[1].info.kind, BRI_ENTRY_DIR);
  bri_store_entries_free(e, n);
  /* the first n entries: one page of max-keys n */
  put_text("_versions/0.manifest", "m0");
  ck_assert_msg(bri_store_list_first(st, at("_versions"), 0, 1, &e, &n, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(n, 1);
  ck_assert_str_eq(e[0].name, "0.manifest");
  bri_store_entries_free(e, n);
  ck_assert(bri_store_list_first(st, root, 0, 5, &e, &n, &err) == 0);
  ck_assert_uint_eq(n, 2);
  ck_assert_str_eq(e[1].name, "data");
  bri_store_entries_free(e, n);
  /* several ranges at once */
  ck_assert(bri_store_open_file(st, at("data/a.lance"), &f, &err) == 0);
  char r1[2], r2[3], r3[2];
  bri_sread rv[] = {{0, r1, 2}, {4, r2, 3}, {8, r3, 2}};
  ck_assert_msg(bri_sfile_readv(f, rv, 3, &err) == 0, "%s", err.msg);
  ck_assert(!memcmp(r1, "01", 2) && !memcmp(r2, "456", 3) && !memcmp(r3, "89", 2));
  bri_sfile_close(f);
  ck_assert(bri_store_list(st, at("nothing"), 0, &e, &n, &err) == 0); /* S3 cannot tell: empty */
  ck_assert_uint_eq(n, 0);
  bri_store_entries_free(e, n);

  /* the front refuses what lies outside or climbs out, before any request */
  ck_assert_int_eq(bri_store_open_file(st, at("../other/x"), &f, &err), BRI_ECORRUPT);
  ck_assert_int_eq(bri_store_open_file(st, "s3://bucket/elsewhere/x", &f, &err), BRI_EINVAL);
}
END_TEST

START_TEST(test_put_new_is_put_if_absent) {
  const char *m = "_versions/18446744073709551614.manifest";
  ck_assert_msg(bri_store_put_new(st, at(m), "first", 5, NULL, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(bri_store_put_new(st, at(m), "second", 6, NULL, &err), BRI_ETAKEN);
  ck_assert_msg(strstr(err.msg, "18446744073709551614.manifest: exists"), "%s", err.msg);
  uint8_t *b;
  size_t n;
  ck_assert(bri_store_read(st, at(m), 100, &b, &n, &err) == 0);
  ck_assert_uint_eq(n, 5);
  ck_assert_str_eq((char *)b, "first"); /* NUL-terminated, kept */
  free(b);
  put_text("_versions/latest_version_hint.json", "{\"v\":1}");
  put_text("_versions/latest_version_hint.json", "{\"v\":2}"); /* put replaces */
  ck_assert(bri_store_read(st, at("_versions/latest_version_hint.json"), 100, &b, &n, &err) == 0);
  ck_assert_str_eq((char *)b, "{\"v\":2}");
  free(b);
  ck_assert_int_eq(bri_store_read(st, at(m), 3, &b, &n, &err), BRI_EUNSUPPORTED);

  /* failpoints pass at the put's steps: an error before the PUT leaves nothing */
  ck_assert(bri_failpoint_configure("commit.before_link=eio", &err) == 0);
  bri_store_steps steps = {.publish = "commit.before_link"};
  ck_assert_int_eq(bri_store_put_new(st, at("_versions/2.manifest"), "x", 1, &steps, &err), BRI_EIO);
  bri_store_info info;
  ck_assert_int_eq(bri_store_stat(st, at("_versions/2.manifest"), &info, &err), BRI_ENOTFOUND);
}
END_TEST

START_TEST(test_writers) {
  /* small: one conditional PUT at finish */
  bri_swriter *w;
  ck_assert_msg(bri_store_create(st, at("data/small.lance"), NULL, &w, &err) == 0, "%s", err.msg);
  ck_assert(bri_swriter_append(w, "abc", 3, &err) == 0);
  ck_assert_msg(bri_swriter_finish(w, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(bri_store_create(st, at("data/small.lance"), NULL, &w, &err), BRI_ETAKEN);

  /* large: 9 MiB appended, a 12 MiB copied range, a 100 KiB copied range */
  size_t src_n = 13u << 20, mine = 9u << 20, big = 12u << 20;
  uint8_t *src = bri_pattern(src_n, 1), *data = bri_pattern(mine, 2);
  ck_assert(bri_store_put(st, at("data/sub/src.blob"), src, src_n, NULL, &err) == 0);
  bri_store_stats before = stats();
  ck_assert(bri_store_create(st, at("data/big.blob"), NULL, &w, &err) == 0);
  ck_assert(bri_swriter_append(w, data, mine, &err) == 0);
  ck_assert_msg(bri_swriter_append_copy(w, st, at("data/sub/src.blob"), 1000, big, &err) == 0, "%s", err.msg);
  ck_assert_msg(bri_swriter_append_copy(w, st, at("data/sub/src.blob"), 50, 100000, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(bri_swriter_size(w), mine + big + 100000);
  /* nothing visible before finish */
  bri_store_info info;
  ck_assert_int_eq(bri_store_stat(st, at("data/big.blob"), &info, &err), BRI_ENOTFOUND);
  ck_assert_msg(bri_swriter_finish(w, &err) == 0, "%s", err.msg);
  bri_store_stats after = stats();
  /* the 9 MiB: one 8 MiB part; then 1 MiB buffered, topped up to 5 MiB from the copied
   * range's head (4 MiB read), the other 8 MiB of it copied by the server; the last
   * 100000 bytes copied by the server too (the last part may be small) */
  uint64_t read = after.bytes_read - before.bytes_read, copied = after.bytes_copied_server - before.bytes_copied_server;
  ck_assert_uint_eq(copied, big - (4u << 20) + 100000);
  ck_assert_uint_lt(read, (4u << 20) + 20000);
  ck_assert_uint_ge(read, 4u << 20);

  uint8_t *b;
  size_t n;
  ck_assert(bri_store_read(st, at("data/big.blob"), 64u << 20, &b, &n, &err) == 0);
  ck_assert_uint_eq(n, mine + big + 100000);
  ck_assert(!memcmp(b, data, mine));
  ck_assert(!memcmp(b + mine, src + 1000, big));
  ck_assert(!memcmp(b + mine + big, src + 50, 100000));
  free(b);

  /* a range copied whole when nothing is buffered: all by the server */
  before = stats();
  ck_assert(bri_store_create(st, at("data/copied.blob"), NULL, &w, &err) == 0);
  ck_assert(bri_swriter_append_copy(w, st, at("data/sub/src.blob"), 0, src_n, &err) == 0);
  ck_assert(bri_swriter_append(w, "tail", 4, &err) == 0);
  ck_assert(bri_swriter_finish(w, &err) == 0);
  after = stats();
  ck_assert_uint_eq(after.bytes_copied_server - before.bytes_copied_server, src_n);
  ck_assert_uint_lt(after.bytes_read - before.bytes_read, 20000);
  ck_assert(bri_store_read(st, at("data/copied.blob"), 64u << 20, &b, &n, &err) == 0);
  ck_assert_uint_eq(n, src_n + 4);
  ck_assert(!memcmp(b, src, src_n) && !memcmp(b + src_n, "tail", 4));
  free(b);

  /* abort leaves nothing, even after parts were sent */
  ck_assert(bri_store_create(st, at("data/aborted.blob"), NULL, &w, &err) == 0);
  ck_assert(bri_swriter_append(w, data, mine, &err) == 0);
  bri_swriter_abort(w);
  ck_assert_int_eq(bri_store_stat(st, at("data/aborted.blob"), &info, &err), BRI_ENOTFOUND);
  /* a copied range past the source's end fails (when it is sent), naming the source,
   * and leaves nothing */
  ck_assert(bri_store_create(st, at("data/short.blob"), NULL, &w, &err) == 0);
  ck_assert(bri_swriter_append_copy(w, st, at("data/sub/src.blob"), src_n - 10, 100, &err) == 0);
  ck_assert_int_ne(bri_swriter_finish(w, &err), 0);
  ck_assert_msg(strstr(err.msg, "src.blob"), "%s", err.msg);
  ck_assert_int_eq(bri_store_stat(st, at("data/short.blob"), &info, &err), BRI_ENOTFOUND);

  /* 200 adjacent ranges of 60000 bytes (a pack's blobs in order) go as one server-side
   * copy; a gap starts a new range */
  before = stats();
  ck_assert(bri_store_create(st, at("data/pack.blob"), NULL, &w, &err) == 0);
  for (int i = 0; i < 200; i++) {
    uint64_t off = (uint64_t)i * 60000 + (i >= 100 ? 5000 : 0);
    ck_assert(bri_swriter_append_copy(w, st, at("data/sub/src.blob"), off, 60000, &err) == 0);
  }
  ck_assert_msg(bri_swriter_finish(w, &err) == 0, "%s", err.msg);
  after = stats();
  ck_assert_uint_eq(after.bytes_copied_server - before.bytes_copied_server, 12000000);
  ck_assert_uint_lt(after.bytes_read - before.bytes_read, 20000);
  ck_assert(bri_store_read(st, at("data/pack.blob"), 64u << 20, &b, &n, &err) == 0);
  ck_assert_uint_eq(n, 12000000);
  ck_assert(!memcmp(b, src, 6000000) && !memcmp(b + 6000000, src + 6005000, 6000000));
  free(b);
  /* an object that is one small copied range: one part, copied by the server */
  before = stats();
  ck_assert(bri_store_create(st, at("data/one.blob"), NULL, &w, &err) == 0);
  ck_assert(bri_swriter_append_copy(w, st, at("data/sub/src.blob"), 77, 300000, &err) == 0);
  ck_assert_msg(bri_swriter_finish(w, &err) == 0, "%s", err.msg);
  after = stats();
  ck_assert_uint_eq(after.bytes_copied_server - before.bytes_copied_server, 300000);
  ck_assert(bri_store_read(st, at("data/one.blob"), 1u << 20, &b, &n, &err) == 0);
  ck_assert_uint_eq(n, 300000);
  ck_assert(!memcmp(b, src + 77, 300000));
  free(b);
  free(src);
  free(data);
}
END_TEST

START_TEST(test_copy_link_delete) {
  put_text("data/a.blob", "payload");
  bool linked = true;
  uint64_t bytes = 0;
  bri_store_stats before = stats();
  ck_assert_msg(bri_store_copy(st, at("data/a.blob"), st, at("data/b.blob"), BRI_COPY_TRY_LINK, &linked,
                               &bytes, &err) == 0, "%s", err.msg);
  ck_assert(!linked);
  ck_assert_uint_eq(bytes, 7);
  ck_assert_uint_eq(stats().bytes_copied_server - before.bytes_copied_server, 7);
  ck_assert_int_eq(bri_store_copy(st, at("data/a.blob"), st, at("data/b.blob"), 0, NULL, &bytes, &err), BRI_ETAKEN);
  ck_assert_int_eq(bri_store_copy(st, at("data/zz"), st, at("data/c.blob"), 0, NULL, &bytes, &err), BRI_ENOTFOUND);
  ck_assert_int_eq(bri_store_link(st, at("data/a.blob"), st, at("data/l.blob"), &bytes, &err), BRI_EUNSUPPORTED);
  ck_assert_msg(strstr(err.msg, "no links"), "%s", err.msg);

  /* across backends: local -> S3 and back, through this process */
  char *tmp = bri_tmpdir();
  bri_store *local;
  ck_assert(bri_store_open(tmp, 0, &local, &err) == 0);
  char lp[512], lp2[512];
  snprintf(lp, sizeof lp, "%s/x.blob", tmp);
  snprintf(lp2, sizeof lp2, "%s/y.blob", tmp);
  ck_assert(bri_store_put(local, lp, "local bytes", 11, NULL, &err) == 0);
  ck_assert_msg(bri_store_copy(local, lp, st, at("data/from-local.blob"), 0, NULL, &bytes, &err) == 0, "%s", err.msg);
  ck_assert_msg(bri_store_copy(st, at("data/from-local.blob"), local, lp2, 0, NULL, &bytes, &err) == 0, "%s", err.msg);
  uint8_t *b;
  size_t n;
  ck_assert(bri_store_read(local, lp2, 100, &b, &n, &err) == 0);
  ck_assert_str_eq((char *)b, "local bytes");
  free(b);
  bri_store_close(local);
  bri_rmtree(tmp);
  free(tmp);

  /* deletes: one, a missing one, a prefix (nothing), many with a missing one */
  ck_assert(bri_store_delete(st, at("data/b.blob"), &err) == 0);
  ck_assert_int_eq(bri_store_delete(st, at("data/b.blob"), &err), BRI_ENOTFOUND);
  ck_assert(bri_store_delete(st, at("data"), &err) == 0);
  const char *paths[] = {at("data/a.blob"), at("data/none"), at("data/from-local.blob")};
  int rcs[3] = {9, 9, 9};
  ck_assert_msg(bri_store_delete_many(st, paths, 3, rcs, &err) == 0, "%s", err.msg);
  ck_assert(rcs[0] == 0 && rcs[1] == 0 && rcs[2] == 0);
  bri_store_entry *e;
  ck_assert(bri_store_list(st, at("data"), 0, &e, &n, &err) == 0);
  ck_assert_uint_eq(n, 0);
  bri_store_entries_free(e, n);
}
END_TEST

/* Prefetched tails and HEADs: the later opens and stats need no request. */
START_TEST(test_prefetch) {
  char *paths[20];
  for (int i = 0; i < 20; i++) {
    char rel[32], text[32];
    snprintf(rel, sizeof rel, "data/f%02d.lance", i);
    snprintf(text, sizeof text, "file %d", i);
    put_text(rel, text);
    paths[i] = strdup(at(rel));
  }
  bri_store_stats t0 = stats();
  bri_store_prefetch(st, (const char *const *)paths, 10, BRI_PREFETCH_OPEN);
  bri_store_prefetch(st, (const char *const *)paths + 10, 10, BRI_PREFETCH_STAT);
  bri_store_stats t1 = stats();
  ck_assert_uint_eq(t1.requests - t0.requests, 20);
  ck_assert_uint_eq(t1.by_kind[BRI_REQ_GET][BRI_REQ_2XX] - t0.by_kind[BRI_REQ_GET][BRI_REQ_2XX], 10);
  ck_assert_uint_eq(t1.by_kind[BRI_REQ_HEAD][BRI_REQ_2XX] - t0.by_kind[BRI_REQ_HEAD][BRI_REQ_2XX], 10);
  for (int i = 0; i < 10; i++) {
    bri_sfile *f;
    char buf[16], want[32];
    ck_assert_msg(bri_store_open_file(st, paths[i], &f, &err) == 0, "%s", err.msg);
    snprintf(want, sizeof want, "file %d", i);
    ck_assert_uint_eq(bri_sfile_size(f), strlen(want));
    ck_assert(bri_sfile_read(f, 0, buf, strlen(want), &err) == 0);
    ck_assert(!memcmp(buf, want, strlen(want)));
    bri_sfile_close(f);
    bri_store_info info;
    ck_assert(bri_store_stat(st, paths[10 + i], &info, &err) == 0);
    ck_assert_uint_eq(info.size, 7); /* "file 1X" */
    ck_assert(info.mtime_ns > 0);
  }
  ck_assert_uint_eq(stats().requests, t1.requests);
  /* a put through the store drops the cached tail: the next open sees the new bytes */
  put_text("data/f00.lance", "replaced!");
  bri_sfile *f;
  ck_assert(bri_store_open_file(st, paths[0], &f, &err) == 0);
  ck_assert_uint_eq(bri_sfile_size(f), 9);
  bri_sfile_close(f);
  /* a missing file in a prefetch is ignored there and reported by the open */
  const char *missing[] = {at("data/none")};
  bri_store_prefetch(st, missing, 1, BRI_PREFETCH_OPEN);
  ck_assert_int_eq(bri_store_open_file(st, missing[0], &f, &err), BRI_ENOTFOUND);
  for (int i = 0; i < 20; i++) free(paths[i]);
  /* never more tails than the cache keeps (64 MiB: 255 of 256 KiB), which
   * their opens would fetch again */
  enum { MANY = 300 };
  char *many[MANY];
  for (int i = 0; i < MANY; i++) many[i] = strdup(at("data/absent"));
  bri_store_stats m0 = stats();
  bri_store_prefetch(st, (const char *const *)many, MANY, BRI_PREFETCH_OPEN);
  uint64_t asked = stats().requests - m0.requests;
  ck_assert_msg(asked > 200 && asked <= 255, "%llu requests for %d tails", (unsigned long long)asked, MANY);
  for (int i = 0; i < MANY; i++) free(many[i]);
}
END_TEST

START_TEST(test_configured_prefix) {
  /* settings registered for this root (a wrong secret) apply to it, not to others */
  bri_aws_settings bad = {.access_key_id = getenv("AWS_ACCESS_KEY_ID"), .secret_access_key = "wrong"};
  ck_assert(bri_s3_store_configure(root, &bad, NULL, &err) == 0);
  bri_store *st2;
  ck_assert(bri_store_open(root, 0, &st2, &err) == 0);
  ck_assert_int_eq(bri_store_put(st2, at("x"), "x", 1, NULL, &err), BRI_EIO);
  ck_assert_msg(strstr(err.msg, "HTTP 403 SignatureDoesNotMatch"), "%s", err.msg);
  bri_store_close(st2);
  put_text("x", "x"); /* the store opened before keeps its client */
  ck_assert(bri_s3_store_configure(root, NULL, NULL, &err) == 0);
  ck_assert(bri_store_open(root, 0, &st2, &err) == 0);
  ck_assert_msg(bri_store_put(st2, at("y"), "y", 1, NULL, &err) == 0, "%s", err.msg);
  bri_store_close(st2);
  ck_assert(bri_store_delete(st, at("x"), &err) == 0 && bri_store_delete(st, at("y"), &err) == 0);
  /* a bucket name S3 does not allow is refused at open */
  ck_assert_int_eq(bri_store_open("s3://No_Such/t.lance", 0, &st2, &err), BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "is not a valid S3 bucket name"), "%s", err.msg);
}
END_TEST

/* Stores opened and closed on many threads at once under a prefix with
 * settings of its own (so a client of its own, whose last reference drops
 * again and again): each open gets a live client (a listing answers), never
 * one another thread is freeing (ASan tells; the suite runs under it). */
#define CHURN_THREADS 8
#define CHURN_ROUNDS 400
static char churn_root[300];

static void *churn(void *arg) {
  (void)arg;
  bri_error e;
  for (int i = 0; i < CHURN_ROUNDS; i++) {
    bri_store *s;
    if (bri_store_open(churn_root, 0, &s, &e) != 0) return strdup(e.msg);
    if (i % 50 == 0) { /* a request through the client now and then */
      bri_store_entry *l;
      size_t n;
      int rc = bri_store_list(s, churn_root, 0, &l, &n, &e);
      if (rc) {
        bri_store_close(s);
        return strdup(e.msg);
      }
      bri_store_entries_free(l, n);
    }
    bri_store_close(s);
  }
  return NULL;
}

START_TEST(test_clients_shared_across_threads) {
  snprintf(churn_root, sizeof churn_root, "%s/churn", root);
  bri_aws_settings own = {.access_key_id = getenv("AWS_ACCESS_KEY_ID"),
                          .secret_access_key = getenv("AWS_SECRET_ACCESS_KEY")};
  ck_assert_msg(bri_s3_store_configure(churn_root, &own, NULL, &err) == 0, "%s", err.msg);
  pthread_t th[CHURN_THREADS];
  for (int i = 0; i < CHURN_THREADS; i++) ck_assert(pthread_create(&th[i], NULL, churn, NULL) == 0);
  for (int i = 0; i < CHURN_THREADS; i++) {
    char *why;
    pthread_join(th[i], (void **)&why);
    ck_assert_msg(!why, "%s", why);
  }
  ck_assert(bri_s3_store_configure(churn_root, NULL, NULL, &err) == 0);
}
END_TEST

/* A registered root counts what every store opened below it moves, on any
 * thread; a store opened before the registration does not count there.
 * Many listings at once: one batch, each directory its own result. */
START_TEST(test_root_counts_and_list_many) {
  const char *tables[] = {"a.lance", "b.lance", "c.lance"};
  ck_assert(bri_store_count_root(root, &err) == 0);
  ck_assert(bri_store_count_root(root, &err) == 0); /* twice: the same root */
  bri_store_stats r0;
  ck_assert_int_eq(bri_store_root_stats(root, &r0), 0);
  ck_assert_uint_eq(r0.requests, 0);
  bri_store_stats none;
  ck_assert_int_eq(bri_store_root_stats("s3://bucket/never-registered", &none), BRI_ENOTFOUND);
  char p[512];
  for (int i = 0; i < 2; i++) { /* a and b get versions, c stays empty */
    snprintf(p, sizeof p, "%s/%s", root, tables[i]);
    bri_store *t;
    ck_assert_msg(bri_store_open(p, 0, &t, &err) == 0, "%s", err.msg);
    for (int v = 0; v < 3; v++) {
      snprintf(p, sizeof p, "%s/%s/_versions/%020d.manifest", root, tables[i], 9 - v - i);
      ck_assert_msg(bri_store_put_new(t, p, "m", 1, NULL, &err) == 0, "%s", err.msg);
    }
    bri_store_close(t);
  }
  bri_store_stats r1;
  bri_store_root_stats(root, &r1);
  ck_assert_uint_eq(r1.by_kind[BRI_REQ_PUT][BRI_REQ_2XX], 6);
  ck_assert_uint_eq(r1.bytes_written, 6);
  put_text("data/not-counted", "x"); /* st was opened before the root was registered */
  bri_store_root_stats(root, &r0);
  ck_assert_uint_eq(r0.requests, r1.requests);

  bri_store *rs;
  ck_assert(bri_store_open(root, 0, &rs, &err) == 0);
  char dirs[4][512];
  bri_store_listing l[4];
  for (int i = 0; i < 3; i++) {
    snprintf(dirs[i], sizeof dirs[i], "%s/%s/_versions", root, tables[i]);
    l[i].dir = dirs[i];
  }
  snprintf(dirs[3], sizeof dirs[3], "%s/../x/_versions", root);
  l[3].dir = dirs[3];
  ck_assert(bri_store_list_first_many(rs, l, 4, BRI_LIST_STAT, 1, &err) == 0);
  ck_assert_int_eq(l[0].rc, 0);
  ck_assert_uint_eq(l[0].count, 1);
  ck_assert_str_eq(l[0].entries[0].name, "00000000000000000007.manifest"); /* the first by name */
  /* with its LastModified (a poll's word on when the table last moved) */
  ck_assert(l[0].entries[0].info.mtime_ns > (int64_t)(time(NULL) - 600) * 1000000000LL);
  ck_assert_int_eq(l[1].rc, 0);
  ck_assert_uint_eq(l[1].count, 1);
  ck_assert_str_eq(l[1].entries[0].name, "00000000000000000006.manifest");
  ck_assert_int_eq(l[2].rc, 0);
  ck_assert_uint_eq(l[2].count, 0);
  ck_assert_int_eq(l[3].rc, BRI_ECORRUPT); /* refused before any request */
  ck_assert_msg(strstr(l[3].err.msg, "not a plain relative path"), "%s", l[3].err.msg);
  for (int i = 0; i < 4; i++) bri_store_entries_free(l[i].entries, l[i].count);
  bri_store_stats r2;
  bri_store_root_stats(root, &r2);
  ck_assert_uint_eq(r2.by_kind[BRI_REQ_LIST][BRI_REQ_2XX] - r1.by_kind[BRI_REQ_LIST][BRI_REQ_2XX], 3);
  bri_store_stats mine;
  bri_store_stats_get(rs, &mine);
  ck_assert_uint_eq(mine.requests, 3);
  for (int i = 0; i < 2; i++)
    for (int v = 0; v < 3; v++) {
      snprintf(p, sizeof p, "%s/%s/_versions/%020d.manifest", root, tables[i], 9 - v - i);
      ck_assert(bri_store_delete(rs, p, &err) == 0);
    }
  bri_store_close(rs);
}
END_TEST

static Suite *s3_store_suite(void) {
  Suite *s = suite_create("s3_store");
  TCase *tc = tcase_create("s3_store");
  tcase_set_timeout(tc, 60);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_read_stat_list);
  tcase_add_test(tc, test_put_new_is_put_if_absent);
  tcase_add_test(tc, test_writers);
  tcase_add_test(tc, test_copy_link_delete);
  tcase_add_test(tc, test_prefetch);
  tcase_add_test(tc, test_configured_prefix);
  tcase_add_test(tc, test_root_counts_and_list_many);
  tcase_add_test(tc, test_clients_shared_across_threads);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(s3_store_suite)
