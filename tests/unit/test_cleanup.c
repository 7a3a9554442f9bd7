/* test_cleanup.c: version cleanup on copies of real Lance tables: what goes
 * (old manifests and what only they referenced), what stays (retained and
 * tagged versions, young unreferenced files, BRI-named sidecars inside an
 * otherwise dead sidecar directory), dry runs, fail-closed on an unreadable
 * retained manifest, and symbolic links never followed; on S3 (the real
 * radosgw), deletes in batches under the same rules. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "lance/table/bri.h"
#include "lance/table/sidecar.h"
#include "ops/cleanup.h"
#include "gen/gen.h"
#include "ops/verify.h"
#include "compact/execute.h"
#include "compact/rewrite.h"
#include "lance/table/table.h"
#include "testutil.h"
#include "util/failpoint.h"
#include "util/fsutil.h"

static char *tmp, *root;

static void copy_fixture(const char *name) { bri_fixture_table(name, &tmp, &root); }


static void teardown(void) {
  bri_rmtree(tmp);
  free(tmp), free(root);
}

static void age_file(const char *path, int64_t seconds_ago) {
  struct timeval tv[2];
  gettimeofday(&tv[0], NULL);
  tv[0].tv_sec -= seconds_ago;
  tv[1] = tv[0];
  ck_assert_int_eq(utimes(path, tv), 0);
}

static void set_mtime(const char *path, time_t when) {
  struct timeval tv[2] = {{.tv_sec = when}, {.tv_sec = when}};
  ck_assert_int_eq(utimes(path, tv), 0);
}

static bri_cleanup_policy now_policy(void) {
  bri_cleanup_policy p;
  bri_cleanup_policy_default(&p);
  p.older_than_sec = 0;
  p.now = (int64_t)time(NULL) + 1;
  return p;
}

/* plain.lance: versions 1..5, tag v2tag -> 2. Retained: 2 and 5. */
static int refuse_confirm(void *user, bri_error *err) {
  (void)user;
  return bri_error_set(err, BRI_ELEASE, "lease gone");
}

/* Old versions go, a tagged one stays; a dry run reports exactly what a
 * run deletes; a caller's confirm hook that refuses stops the run before
 * its first delete. */
START_TEST(test_old_versions_go_tagged_stays) {
  copy_fixture("tables/plain.lance");
  bri_table *t;
  bri_error err;
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  char *m1 = bri_table_manifest_path(t, 1), *m2 = bri_table_manifest_path(t, 2),
       *m3 = bri_table_manifest_path(t, 3), *m5 = bri_table_manifest_path(t, 5);
  bri_manifest *v3;
  ck_assert_int_eq(bri_table_load(t, 3, &v3, &err), 0);
  char *txn3 = bri_strdupf("%s/_transactions/%s", root, v3->pb->transaction_file);
  bri_manifest_free(v3);
  bri_table_close(t);
  bri_cleanup_policy p = now_policy();
  bri_cleanup_stats dry, real;
  char *before = bri_tree_listing(root);
  /* a caller that may no longer act (brid's lost lease) stops it before any delete */
  bri_hooks refuse = {.confirm = refuse_confirm};
  ck_assert_int_eq(bri_cleanup_run(root, &p, &refuse, &real, &err), BRI_ELEASE);
  ck_assert_msg(strstr(err.msg, "cleanup stopped before deleting") && strstr(err.msg, "lease gone"), "%s", err.msg);
  char *after_refused = bri_tree_listing(root);
  ck_assert_str_eq(before, after_refused);
  free(after_refused);
  p.dry_run = true;
  ck_assert_msg(bri_cleanup_run(root, &p, NULL, &dry, &err) == 0, "%s", err.msg);
  char *after_dry = bri_tree_listing(root);
  ck_assert_str_eq(before, after_dry); /* a dry run deletes nothing */
  p.dry_run = false;
  ck_assert_msg(bri_cleanup_run(root, &p, NULL, &real, &err) == 0, "%s", err.msg);
  ck_assert_mem_eq(&dry, &real, sizeof dry); /* and reports exactly what a run does */
  ck_assert_uint_eq(real.versions_retained, 2);
  ck_assert_uint_eq(real.files[BRI_CLEAN_MANIFEST], 3); /* versions 1, 3, 4 */
  ck_assert_uint_eq(real.files[BRI_CLEAN_TRANSACTION], 3);
  ck_assert_uint_eq(real.files[BRI_CLEAN_DATA], 0);
  ck_assert(access(m1, F_OK) != 0 && access(m3, F_OK) != 0);
  ck_assert(access(m2, F_OK) == 0 && access(m5, F_OK) == 0);
  ck_assert(access(txn3, F_OK) != 0);
  /* both retained versions still load */
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  bri_manifest *m;
  ck_assert_int_eq(bri_table_load(t, 2, &m, &err), 0);
  bri_manifest_free(m);
  ck_assert_int_eq(bri_table_load(t, 5, &m, &err), 0);
  bri_manifest_free(m);
  bri_table_close(t);
  /* a second run finds nothing more */
  ck_assert_int_eq(bri_cleanup_run(root, &p, NULL, &real, &err), 0);
  ck_assert_uint_eq(real.files[BRI_CLEAN_MANIFEST] + real.files[BRI_CLEAN_TRANSACTION], 0);
  free(m1), free(m2), free(m3), free(m5), free(txn3), free(before), free(after_dry);
  teardown();
}
END_TEST

START_TEST(test_fail_closed_on_unreadable_retained_manifest) {
  copy_fixture("tables/plain.lance");
  bri_table *t;
  bri_error err;
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  char *m2 = bri_table_manifest_path(t, 2); /* tagged: retained */
  bri_table_close(t);
  size_t len;
  uint8_t *b = bri_slurp(m2, &len);
  b[len / 2] ^= 0xff;
  b[len - 1] = 'X';
  unlink(m2);
  bri_write_bytes(m2, b, len);
  free(b);
  char *before = bri_tree_listing(root);
  bri_cleanup_policy p = now_policy();
  bri_cleanup_stats st;
  ck_assert_int_eq(bri_cleanup_run(root, &p, NULL, &st, &err), BRI_ECORRUPT);
  ck_assert_msg(strstr(err.msg, "retained version 2 cannot be read, nothing was deleted") != NULL, "%s", err.msg);
  ck_assert_msg(strstr(err.msg, m2) != NULL, "no file in: %s", err.msg);
  char *after = bri_tree_listing(root);
  ck_assert_str_eq(before, after);
  free(before), free(after), free(m2);
  teardown();
}
END_TEST

START_TEST(test_grace_and_links) {
  copy_fixture("tables/v21.lance");
  char *stray_old = bri_strdupf("%s/data/old-stray.lance", root);
  char *stray_new = bri_strdupf("%s/data/new-stray.lance", root);
  bri_write_bytes(stray_old, "x", 1);
  bri_write_bytes(stray_new, "y", 1);
  /* Dated absolutely, so that the case does not age: both strays are older
   * than the fixture's versions (files newer than the oldest recent
   * version are never deleted), one from 1970 (beyond the grace period
   * below), one from 2000 (within it). */
  set_mtime(stray_old, 86400);
  set_mtime(stray_new, 946684800);
  /* links pointing out of the table: never followed, never deleted */
  char *outside = bri_path_join(tmp, "outside");
  mkdir(outside, 0755);
  char *victim = bri_path_join(outside, "victim.blob");
  bri_write_bytes(victim, "keep", 4);
  age_file(victim, 30 * 24 * 3600);
  char *link1 = bri_strdupf("%s/data/evil.lance", root), *link2 = bri_strdupf("%s/data/evilstem", root);
  ck_assert_int_eq(symlink(victim, link1), 0);
  ck_assert_int_eq(symlink(outside, link2), 0);
  bri_cleanup_policy p = now_policy();
  p.grace_sec = p.now - 365 * 86400; /* young: anything after 1971 */
  bri_cleanup_stats st;
  bri_error err;
  ck_assert_msg(bri_cleanup_run(root, &p, NULL, &st, &err) == 0, "%s", err.msg);
  ck_assert(access(stray_old, F_OK) != 0);
  ck_assert(access(stray_new, F_OK) == 0);
  ck_assert_uint_eq(st.kept_too_young, 1);
  ck_assert(access(victim, F_OK) == 0);
  struct stat s1;
  ck_assert_int_eq(lstat(link1, &s1), 0);
  ck_assert_int_eq(lstat(link2, &s1), 0);
  free(stray_old), free(stray_new), free(outside), free(victim), free(link1), free(link2);
  teardown();
}
END_TEST

static Lance__Table__DataFragment *copy_fragment(const Lance__Table__DataFragment *from) {
  size_t len = lance__table__data_fragment__get_packed_size(from);
  uint8_t *buf = malloc(len);
  lance__table__data_fragment__pack(from, buf);
  Lance__Table__DataFragment *f = lance__table__data_fragment__unpack(NULL, len, buf);
  free(buf);
  return f;
}

/* A compaction that keeps pack 1 of fragment 0's sidecar directory through a
 * BRI: after cleanup the old data file and every other file of that
 * directory are gone, and the BRI-named sidecar stays. */
START_TEST(test_bri_sources_cleaned_file_by_file) {
  copy_fixture("tables/blobs.lance");
  bri_table *t;
  bri_manifest *m;
  bri_error err;
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  ck_assert_int_eq(bri_table_load(t, 0, &m, &err), 0);
  /* find a fragment with a sidecar; give its directory a second file */
  Lance__Table__DataFragment *src = NULL;
  char *side = NULL;
  char **names = NULL;
  size_t n = 0;
  for (size_t i = 0; i < m->pb->n_fragments && !src; i++) {
    ck_assert_int_eq(bri_table_sidecar_dir(t, m->pb, m->pb->fragments[i]->files[0], &side, &err), 0);
    if (bri_list_dir(side, &names, &n, &err) == 0 && n >= 1) src = m->pb->fragments[i];
    else {
      if (names) bri_free_names(names, n);
      names = NULL;
      free(side);
    }
  }
  ck_assert_ptr_nonnull(src);
  uint32_t keep_id;
  ck_assert(bri_blob_file_id(names[0], &keep_id));
  char other[BRI_BLOB_NAME_LEN];
  bri_blob_file_name(keep_id + 1, other);
  char *kept = bri_path_join(side, names[0]), *dropped = bri_path_join(side, other);
  bri_write_bytes(dropped, "pack", 4);
  age_file(dropped, 60);
  char *stem = bri_datafile_stem(src->files[0]->path);
  /* the "compacted" fragment: a copy of the data file under a new name */
  Lance__Table__DataFragment *nf = copy_fragment(src);
  nf->id = 0;
  nf->deletion_file = NULL; /* (leaked into the copy's allocation; freed with it below) */
  char *old_lance = NULL;
  ck_assert_int_eq(bri_table_datafile_path(t, m->pb, src->files[0], &old_lance, &err), 0);
  free(nf->files[0]->path);
  nf->files[0]->path = strdup("compacted00000000000000000000000000000000000000000.lance");
  char *new_lance = bri_strdupf("%s/data/%s", root, nf->files[0]->path);
  size_t len;
  uint8_t *bytes = bri_slurp(old_lance, &len);
  bri_write_bytes(new_lance, bytes, len);
  free(bytes);
  /* BRI: local id 1 -> (stem, keep_id) */
  Lance__Table__BlobReuseIndex b = LANCE__TABLE__BLOB_REUSE_INDEX__INIT;
  Lance__Table__BlobReuseSource s = LANCE__TABLE__BLOB_REUSE_SOURCE__INIT;
  Lance__Table__BlobReuseSource *sp = &s;
  Lance__Table__RowIdSequence seq = LANCE__TABLE__ROW_ID_SEQUENCE__INIT;
  Lance__Table__U64Segment seg;
  lance__table__u64_segment__init(&seg);
  Lance__Table__U64Segment *segp = &seg;
  Lance__Table__U64Segment__Range r = LANCE__TABLE__U64_SEGMENT__RANGE__INIT;
  r.start = 1, r.end = 2, r.has_start = r.has_end = 1;
  seg.segment_case = LANCE__TABLE__U64_SEGMENT__SEGMENT_RANGE;
  seg.range = &r;
  seq.segments = &segp, seq.n_segments = 1;
  Lance__Table__EncodedU64Array phys;
  lance__table__encoded_u64_array__init(&phys);
  Lance__Table__EncodedU64Array__U64Array u64 = LANCE__TABLE__ENCODED_U64_ARRAY__U64_ARRAY__INIT;
  uint8_t pid[8] = {0};
  pid[0] = (uint8_t)keep_id, pid[1] = (uint8_t)(keep_id >> 8);
  u64.values.data = pid, u64.values.len = 8, u64.has_values = 1;
  phys.array_case = LANCE__TABLE__ENCODED_U64_ARRAY__ARRAY_U64_ARRAY;
  phys.u64_array = &u64;
  s.blob_dir = stem, s.local_ids = &seq, s.physical_ids = &phys;
  b.sources = &sp, b.n_sources = 1;
  ck_assert_int_eq(bri_datafile_set_bri(nf->files[0], &b, &err), 0);
  uint64_t old_id = src->id, v;
  bri_rewrite_group g = {.n_old = 1, .old_ids = &old_id, .n_new = 1, .new_frags = &nf};
  bri_rewrite rw = {.read_version = m->pb->version, .n_groups = 1, .groups = &g};
  ck_assert_msg(bri_rewrite_commit(t, &rw, 3, &v, &err) == 0, "%s", err.msg);
  bri_manifest_free(m);
  bri_table_close(t);
  /* everything is old enough */
  bri_cleanup_policy p = now_policy();
  p.now += 5;
  bri_cleanup_stats st;
  ck_assert_msg(bri_cleanup_run(root, &p, NULL, &st, &err) == 0, "%s", err.msg);
  ck_assert(access(old_lance, F_OK) != 0);   /* the old data file is gone */
  ck_assert(access(new_lance, F_OK) == 0);
  ck_assert(access(kept, F_OK) == 0);        /* the sidecar the BRI names remains */
  ck_assert(access(dropped, F_OK) != 0);     /* the rest of that directory is gone */
  ck_assert_uint_ge(st.files[BRI_CLEAN_SIDECAR], 1);
  ck_assert_uint_eq(st.files[BRI_CLEAN_DATA], 1);
  bri_free_names(names, n);
  lance__table__data_fragment__free_unpacked(nf, NULL);
  free(side), free(kept), free(dropped), free(stem), free(old_lance), free(new_lance);
  teardown();
}
END_TEST

static void on_deleted(void *user, int kind, const char *path, uint64_t bytes) {
  (void)kind, (void)path, (void)bytes;
  ++*(uint64_t *)user;
}

static uint64_t all_files(const bri_cleanup_stats *st) {
  uint64_t n = 0;
  for (int k = 0; k < BRI_CLEAN_KINDS; k++) n += st->files[k];
  return n;
}

static uint64_t requests(const bri_cleanup_stats *st, int kind) {
  uint64_t n = 0;
  for (int c = 0; c < BRI_REQ_CLASSES; c++) n += st->storage.by_kind[kind][c];
  return n;
}

/* Verifies every listed version of table; returns how many there are. */
static uint64_t versions_whole(const char *table) {
  bri_verify_options vo = {.all_versions = true};
  bri_verify_report vr;
  bri_error err = {0};
  ck_assert_msg(bri_verify_table(table, &vo, &vr, &err) == 0, "%s", err.msg);
  ck_assert_msg(vr.problems_total == 0, "%s: %s", vr.n_problems ? vr.problems[0].file : "",
                vr.n_problems ? vr.problems[0].what : "");
  uint64_t n = vr.versions_checked;
  bri_verify_report_dispose(&vr);
  return n;
}

/* On S3 the files go in DeleteObjects batches, with the rules of a local
 * run: old manifests all gone before the first file (cleanup.before_files
 * stops it there), an interrupted run leaves every listed version whole,
 * the deleted hook once per file, and pacing by files, not batches. A
 * table of 20 fragments written by gen on S3 (20 versions), compacted there
 * (copy) so that the fragments' files are old. About 2 s. */
START_TEST(test_s3_batches) {
  const char *bucket = getenv("BRI_S3_BUCKET");
  ck_assert_msg(bucket && getenv("AWS_ENDPOINT_URL"), "no S3 server: run through scripts/run-tests.sh");
  char *s3 = bri_strdupf("s3://%s/cleanup-%d-%ld/t.lance", bucket, (int)getpid(), (long)time(NULL));
  bri_error err = {0};
  bri_gen_options go;
  bri_gen_options_default(&go);
  bri_gen_blob blob = {.size = 2048};
  go.fragments = 20, go.rows = 4, go.blobs = &blob, go.n_blobs = 1, go.inline_threshold = 1024;
  bri_gen_report gr;
  ck_assert_msg(bri_gen_run(s3, &go, &gr, &err) == 0, "%s", err.msg);
  bri_compact_request q;
  bri_compact_request_default(&q);
  q.strategy = BRI_STRATEGY_COPY;
  bri_compact_report rep;
  ck_assert_msg(bri_compact_table(s3, &q, NULL, &rep, &err) == 0, "%s", err.msg);
  json_decref(rep.plan);
  bri_cleanup_policy p;
  bri_cleanup_policy_default(&p);
  p.older_than_sec = 0, p.grace_sec = 0;
  bri_cleanup_stats st;
  ck_assert_int_eq(bri_failpoint_configure("cleanup.before_files=eio", &err), 0);
  ck_assert_int_eq(bri_cleanup_run(s3, &p, NULL, &st, &err), BRI_EIO);
  ck_assert_uint_eq(st.files[BRI_CLEAN_MANIFEST], 20); /* gen's versions */
  ck_assert_uint_eq(all_files(&st), 20);
  ck_assert_int_eq(bri_failpoint_configure(NULL, &err), 0);
  ck_assert_uint_eq(versions_whole(s3), 1); /* the compacted one, whole */
  /* the rest, paced: a batch of n files holds the next back n / rate seconds */
  uint64_t hooked = 0;
  bri_hooks h = {.deleted = on_deleted, .user = &hooked};
  p.max_deletes_per_sec = 40;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  ck_assert_msg(bri_cleanup_run(s3, &p, &h, &st, &err) == 0, "%s", err.msg);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  uint64_t n = all_files(&st), deletes = requests(&st, BRI_REQ_DELETE);
  ck_assert_uint_eq(hooked, n);
  ck_assert_uint_ge(n, 60);
  ck_assert_msg(deletes >= 1 && deletes <= n / 4, "%llu delete requests for %llu files",
                (unsigned long long)deletes, (unsigned long long)n);
  ck_assert_uint_lt(requests(&st, BRI_REQ_HEAD), n); /* no HEAD per file either */
  double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  ck_assert_msg(secs >= (double)(n - 40) / 40, "%llu files in %.2f s at 40 a second", (unsigned long long)n, secs);
  ck_assert_uint_eq(versions_whole(s3), 1);
  free(s3);
}
END_TEST

static Suite *cleanup_suite(void) {
  Suite *s = suite_create("cleanup");
  TCase *tc = tcase_create("cleanup");
  tcase_add_test(tc, test_old_versions_go_tagged_stays);
  tcase_add_test(tc, test_fail_closed_on_unreadable_retained_manifest);
  tcase_add_test(tc, test_grace_and_links);
  tcase_add_test(tc, test_bri_sources_cleaned_file_by_file);
  tcase_add_test(tc, test_s3_batches);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(cleanup_suite)
