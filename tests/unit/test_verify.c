/* test_verify.c: table verification (lib/ops/verify.h) on copies of the
 * fixture tables. Whole tables pass (every version, every fixture, and a
 * BRI table after compaction). Each kind of damage is found and named by
 * file: a missing or resized data file, a missing deletion file,
 * transaction file or index directory, an unreadable manifest (the other
 * versions are still checked), a missing BRI target, a sidecar too short
 * for the descriptors that point into it, and a BRI changed under a kept
 * data file path (rule 9). The problem list is bounded, and a directory
 * that is not a table is an error, not a problem. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lance/table/bri.h"
#include "lance/table/sidecar.h"
#include "ops/verify.h"
#include "compact/execute.h"
#include "lance/table/commit.h"
#include "lance/table/deletion.h"
#include "lance/table/version.h"
#include "lance/table/rowids.h"
#include "lance/table/table.h"
#include "testutil.h"
#include "util/fsutil.h"

static char *tmp, *root;

static bool contains_u32(const uint32_t *v, size_t n, uint32_t x) {
  for (size_t i = 0; i < n; i++)
    if (v[i] == x) return true;
  return false;
}

static void copy_fixture(const char *name) { bri_fixture_table(name, &tmp, &root); }


static void teardown(void) {
  bri_rmtree(tmp);
  free(tmp), free(root);
}

static bri_verify_report run(bool all, uint64_t version) {
  bri_verify_options o = {.all_versions = all, .version = version};
  bri_verify_report r;
  bri_error err;
  ck_assert_msg(bri_verify_table(root, &o, &r, &err) == 0, "%s", err.msg);
  return r;
}

/* The problem that names file (a substring) and says what (a substring). */
static void assert_problem(const bri_verify_report *r, const char *file, const char *what) {
  for (size_t i = 0; i < r->n_problems; i++)
    if (strstr(r->problems[i].file, file) && strstr(r->problems[i].what, what)) return;
  ck_abort_msg("no problem naming %s with \"%s\" among %zu (first: %s: %s)", file, what,
               r->n_problems, r->n_problems ? r->problems[0].file : "-",
               r->n_problems ? r->problems[0].what : "-");
}

static void compact_bri(void) {
  bri_compact_request q;
  bri_compact_request_default(&q);
  q.strategy = BRI_STRATEGY_BRI; /* the default (auto) would link */
  bri_compact_report rep;
  bri_error err;
  ck_assert_msg(bri_compact_table(root, &q, NULL, &rep, &err) == 0, "%s", err.msg);
  json_decref(rep.plan);
}

static bri_manifest *latest(bri_table **t) {
  bri_manifest *m;
  bri_error err;
  ck_assert_msg(bri_table_open(root, t, &err) == 0, "%s", err.msg);
  ck_assert_msg(bri_table_load(*t, 0, &m, &err) == 0, "%s", err.msg);
  return m;
}

START_TEST(test_fixtures_are_whole) {
  const char *names[] = {"tables/plain.lance", "tables/blobs.lance", "tables/stable.lance", "tables/v21.lance"};
  for (size_t i = 0; i < 4; i++) {
    copy_fixture(names[i]);
    bri_verify_report r = run(true, 0);
    ck_assert_msg(r.problems_total == 0, "%s: %s: %s", names[i], r.n_problems ? r.problems[0].file : "",
                  r.n_problems ? r.problems[0].what : "");
    ck_assert_uint_gt(r.versions_checked, 1);
    ck_assert_uint_gt(r.data_files, 0);
    ck_assert_uint_eq(r.transaction_files, r.versions_checked);
    if (i == 0) {
      ck_assert_uint_eq(r.index_dirs, 1);
      ck_assert_uint_eq(r.deletion_files, 3);
    }
    if (i == 1) {
      ck_assert_uint_eq(r.blobs_unchecked, 0);
      /* 8 visible values in the latest version, and the versions before it */
      ck_assert_uint_gt(r.blobs, 8);
    }
    bri_verify_report_dispose(&r);
    teardown();
  }
}
END_TEST

START_TEST(test_missing_and_resized_files) {
  copy_fixture("tables/plain.lance");
  bri_table *t;
  bri_manifest *m = latest(&t);
  bri_error err;
  char *d0, *d1, *del = NULL, *txn, *idx;
  ck_assert_int_eq(bri_table_datafile_path(t, m->pb, m->pb->fragments[0]->files[0], &d0, &err), 0);
  ck_assert_int_eq(bri_table_datafile_path(t, m->pb, m->pb->fragments[1]->files[0], &d1, &err), 0);
  for (size_t i = 0; i < m->pb->n_fragments && !del; i++)
    if (m->pb->fragments[i]->deletion_file)
      ck_assert_int_eq(bri_table_deletion_path(t, m->pb, m->pb->fragments[i], &del, &err), 0);
  ck_assert_ptr_nonnull(del);
  txn = bri_strdupf("%s/_transactions/%s", root, m->pb->transaction_file);
  const uint8_t *u = m->indices->indices[0]->uuid->uuid.data;
  idx = bri_strdupf("%s/_indices/%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", root,
                    u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
                    u[14], u[15]);
  uint64_t size1 = m->pb->fragments[1]->files[0]->file_size_bytes;
  bri_manifest_free(m);
  bri_table_close(t);
  ck_assert_int_eq(unlink(d0), 0);
  ck_assert_int_eq(truncate(d1, 100), 0);
  ck_assert_int_eq(unlink(del), 0);
  ck_assert_int_eq(unlink(txn), 0);
  bri_rmtree(idx);
  /* the transaction file is not missed: the manifest embeds the transaction
   * (docs/format/table.md 4) */
  bri_verify_report r = run(false, 0);
  ck_assert_uint_eq(r.problems_total, 4);
  assert_problem(&r, d0, "data file is missing");
  char *want = bri_strdupf("data file has 100 bytes, the manifest records %llu", (unsigned long long)size1);
  assert_problem(&r, d1, want);
  assert_problem(&r, del, "deletion file is missing");
  assert_problem(&r, idx, "index directory is missing");
  ck_assert_uint_eq(r.problems[0].version, 5);
  bri_verify_report_dispose(&r);
  /* a manifest without the embedded copy needs its file */
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  ck_assert_int_eq(bri_table_load(t, 0, &m, &err), 0);
  uint8_t *bytes;
  size_t len;
  ck_assert_int_eq(bri_manifest_serialize(m->pb, NULL, m->indices, &bytes, &len, &err), 0);
  ck_assert_int_eq(unlink(m->path), 0);
  bri_write_bytes(m->path, bytes, len);
  free(bytes);
  bri_manifest_free(m);
  bri_table_close(t);
  r = run(false, 0);
  ck_assert_uint_eq(r.problems_total, 5);
  assert_problem(&r, txn, "transaction file is missing");
  bri_verify_report_dispose(&r);
  /* an older version that references none of them is whole */
  r = run(false, 1);
  ck_assert_uint_eq(r.problems_total, 1); /* only its data file 0 */
  assert_problem(&r, d0, "data file is missing");
  bri_verify_report_dispose(&r);
  free(d0), free(d1), free(del), free(txn), free(idx), free(want);
  teardown();
}
END_TEST

START_TEST(test_unreadable_manifest_does_not_stop_the_rest) {
  copy_fixture("tables/plain.lance");
  bri_table *t;
  bri_error err;
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  char *m3 = bri_table_manifest_path(t, 3);
  bri_table_close(t);
  size_t len;
  uint8_t *b = bri_slurp(m3, &len);
  b[len - 1] = 'X'; /* the LANC magic */
  unlink(m3);
  bri_write_bytes(m3, b, len);
  free(b);
  bri_verify_report r = run(true, 0);
  ck_assert_uint_eq(r.problems_total, 1);
  ck_assert_uint_eq(r.versions_checked, 4);
  ck_assert_str_eq(r.problems[0].file, m3);
  ck_assert_uint_eq(r.problems[0].version, 3);
  bri_verify_report_dispose(&r);
  /* the latest alone is fine */
  r = run(false, 0);
  ck_assert_uint_eq(r.problems_total, 0);
  bri_verify_report_dispose(&r);
  free(m3);
  teardown();
}
END_TEST

/* The BRI target that holds the dedicated sidecar, as an absolute path. */
static char *bri_target(size_t source) {
  bri_table *t;
  bri_manifest *m = latest(&t);
  bri_error err;
  Lance__Table__BlobReuseIndex *b;
  ck_assert_int_eq(bri_datafile_get_bri(m->pb->fragments[0]->files[0], m->path, &b, &err), 1);
  ck_assert_uint_gt(b->n_sources, source);
  uint64_t *phys;
  size_t n;
  ck_assert_int_eq(bri_u64array_decode(b->sources[source]->physical_ids, 100, &phys, &n, &err), 0);
  char name[BRI_BLOB_NAME_LEN];
  bri_blob_file_name((uint32_t)phys[0], name);
  char *p = bri_strdupf("%s/data/%s/%s", root, b->sources[source]->blob_dir, name);
  free(phys);
  lance__table__blob_reuse_index__free_unpacked(b, NULL);
  bri_manifest_free(m);
  bri_table_close(t);
  return p;
}

START_TEST(test_bri_targets_and_descriptors) {
  copy_fixture("tables/blobs.lance");
  compact_bri();
  bri_verify_report r = run(true, 0);
  ck_assert_msg(r.problems_total == 0, "%s: %s", r.n_problems ? r.problems[0].file : "",
                r.n_problems ? r.problems[0].what : "");
  ck_assert_uint_eq(r.bri_targets, 2);
  bri_verify_report_dispose(&r);
  char *a = bri_target(0), *b = bri_target(1);
  /* one target gone, the other too short for the values it holds */
  ck_assert_int_eq(unlink(a), 0);
  ck_assert_int_eq(truncate(b, 10), 0);
  r = run(false, 0);
  assert_problem(&r, a, "sidecar named by the BRI of data file");
  assert_problem(&r, a, "is missing");
  assert_problem(&r, b, "fragment 4 row");
  ck_assert_uint_ge(r.problems_total, 3); /* the missing one is also named by its descriptors */
  ck_assert_uint_eq(r.blobs, 8);
  bri_verify_report_dispose(&r);
  /* the same damage seen from every version: each file is named once per check */
  r = run(true, 0);
  ck_assert_uint_ge(r.problems_total, 3);
  bri_verify_report_dispose(&r);
  /* --skip-blobs only checks files */
  bri_verify_options o = {.skip_blobs = true};
  bri_error err;
  ck_assert_int_eq(bri_verify_table(root, &o, &r, &err), 0);
  ck_assert_uint_eq(r.problems_total, 1);
  ck_assert_uint_eq(r.blobs, 0);
  bri_verify_report_dispose(&r);
  free(a), free(b);
  teardown();
}
END_TEST

/* Rule 9: a version that keeps a data file's path but changes its BRI. */
START_TEST(test_bri_changed_under_kept_path) {
  copy_fixture("tables/blobs.lance");
  compact_bri();
  bri_table *t;
  bri_manifest *m = latest(&t);
  bri_error err;
  Lance__Table__DataFile *df = m->pb->fragments[0]->files[0];
  Lance__Table__BlobReuseIndex *b;
  ck_assert_int_eq(bri_datafile_get_bri(df, m->path, &b, &err), 1);
  /* swap the two sources' directories: still a valid BRI, different mapping */
  char *d0 = b->sources[0]->blob_dir;
  b->sources[0]->blob_dir = b->sources[1]->blob_dir;
  b->sources[1]->blob_dir = d0;
  ck_assert_int_eq(bri_datafile_set_bri(df, b, &err), 0);
  b->sources[1]->blob_dir = b->sources[0]->blob_dir;
  b->sources[0]->blob_dir = d0;
  lance__table__blob_reuse_index__free_unpacked(b, NULL);
  Lance__Table__Transaction txn;
  Lance__Table__Transaction__ReserveFragments rf;
  lance__table__transaction__init(&txn);
  lance__table__transaction__reserve_fragments__init(&rf);
  txn.has_read_version = 1, txn.read_version = m->pb->version;
  txn.operation_case = LANCE__TABLE__TRANSACTION__OPERATION_RESERVE_FRAGMENTS;
  txn.reserve_fragments = &rf;
  uint64_t v = m->pb->version + 1;
  ck_assert_msg(bri_commit(t, m->pb, &txn, m->indices, v, NULL, &err) == 0, "%s", err.msg);
  free(txn.uuid);
  bri_manifest_free(m);
  bri_table_close(t);
  bri_verify_report r = run(true, 0);
  assert_problem(&r, "_versions/", "docs/format/bri.md rule 9");
  bri_verify_report_dispose(&r);
  /* the latest alone cannot see the rule, but its descriptors now miss */
  r = run(false, 0);
  ck_assert_uint_gt(r.problems_total, 0);
  for (size_t i = 0; i < r.n_problems; i++) ck_assert(!strstr(r.problems[i].what, "rule 9"));
  bri_verify_report_dispose(&r);
  teardown();
}
END_TEST

START_TEST(test_bounded_list_and_errors) {
  copy_fixture("tables/blobs.lance");
  /* every data file of every version gone */
  char *data = bri_path_join(root, "data");
  char **names;
  size_t n;
  bri_error err;
  ck_assert_int_eq(bri_list_dir(data, &names, &n, &err), 0);
  size_t removed = 0;
  for (size_t i = 0; i < n; i++) {
    size_t l = strlen(names[i]);
    if (l > 6 && !strcmp(names[i] + l - 6, ".lance")) {
      char *p = bri_path_join(data, names[i]);
      ck_assert_int_eq(unlink(p), 0);
      free(p);
      removed++;
    }
  }
  bri_free_names(names, n);
  ck_assert_uint_ge(removed, 4);
  bri_verify_options o = {.all_versions = true, .max_problems = 2};
  bri_verify_report r;
  ck_assert_int_eq(bri_verify_table(root, &o, &r, &err), 0);
  ck_assert_uint_eq(r.n_problems, 2);
  ck_assert_uint_eq(r.problems_total, removed); /* each missing file once, however many versions */
  ck_assert_uint_eq(r.fragments, 0);           /* no descriptor read from a broken fragment */
  bri_verify_report_dispose(&r);
  /* not a table, or no such version: errors */
  char *nowhere = bri_path_join(tmp, "nowhere");
  ck_assert_int_eq(bri_verify_table(nowhere, NULL, &r, &err), BRI_ENOTFOUND);
  bri_verify_report_dispose(&r);
  o = (bri_verify_options){.version = 99};
  ck_assert_int_eq(bri_verify_table(root, &o, &r, &err), BRI_ENOTFOUND);
  ck_assert_msg(strstr(err.msg, "no version 99") != NULL, "%s", err.msg);
  bri_verify_report_dispose(&r);
  free(data), free(nowhere);
  teardown();
}
END_TEST

/* Publishes pb as the next version without bri_commit (which refuses a
 * manifest that breaks a rule): what a buggy writer would leave. */
static uint64_t publish_raw(Lance__Table__Manifest *pb, const Lance__Table__IndexSection *idx) {
  bri_table *t;
  bri_error err;
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  uint64_t v = bri_table_latest_version(t) + 1;
  pb->version = v;
  uint8_t *buf;
  size_t len;
  ck_assert_int_eq(bri_manifest_serialize(pb, NULL, idx, &buf, &len, &err), 0);
  char *name = bri_version_file_name(v, t->naming);
  bri_table_close(t);
  char *path = bri_strdupf("%s/_versions/%s", root, name);
  bri_write_bytes(path, buf, len);
  free(buf), free(name), free(path);
  return v;
}

/* The problem of version v under rule `rule` whose text says `what`. */
static void assert_rule(const bri_verify_report *r, uint64_t v, const char *rule, const char *what) {
  for (size_t i = 0; i < r->n_problems; i++)
    if (r->problems[i].version == v && r->problems[i].rule && !strcmp(r->problems[i].rule, rule) &&
        strstr(r->problems[i].what, what) && strstr(r->problems[i].file, "_versions/"))
      return;
  ck_abort_msg("no problem of version %llu under rule %s with \"%s\" among %zu (first: v%llu %s)",
               (unsigned long long)v, rule, what, r->n_problems,
               r->n_problems ? (unsigned long long)r->problems[0].version : 0ULL,
               r->n_problems ? r->problems[0].what : "-");
}

/* Lance's invariants (lance/table/rules.h) are checked on every version and
 * named: the manifest-only rules, and the ones that need other files. */
START_TEST(test_lance_rules) {
  copy_fixture("tables/plain.lance");
  bri_table *t;
  bri_manifest *m = latest(&t);
  Lance__Table__Manifest *pb = m->pb;
  ck_assert_uint_ge(pb->n_fragments, 3);
  /* 1: fragments out of order, the way brid's rewrite used to leave them */
  Lance__Table__DataFragment *f0 = pb->fragments[0];
  pb->fragments[0] = pb->fragments[1], pb->fragments[1] = f0;
  uint64_t v1 = publish_raw(pb, m->indices);
  pb->fragments[1] = pb->fragments[0], pb->fragments[0] = f0;
  /* 2: a deletion count the file does not hold; a fragment longer than its file */
  Lance__Table__DataFragment *fd = NULL, *fr = NULL;
  for (size_t i = 0; i < pb->n_fragments; i++) {
    if (pb->fragments[i]->deletion_file && !fd) fd = pb->fragments[i];
    else if (!fr) fr = pb->fragments[i];
  }
  ck_assert(fd && fr);
  fd->deletion_file->num_deleted_rows++;
  fr->physical_rows++;
  uint64_t v2 = publish_raw(pb, m->indices);
  fd->deletion_file->num_deleted_rows--;
  fr->physical_rows--;
  uint64_t fd_id = fd->id, fr_rows = fr->physical_rows;
  /* 3: max_fragment_id raised (a reservation), then lowered again */
  uint32_t max = pb->max_fragment_id;
  pb->max_fragment_id = max + 5;
  uint64_t v3 = publish_raw(pb, m->indices);
  pb->max_fragment_id = max;
  uint64_t v4 = publish_raw(pb, m->indices);
  bri_manifest_free(m);
  bri_table_close(t);

  bri_verify_report r = run(false, v1);
  ck_assert_uint_eq(r.problems_total, 1);
  assert_rule(&r, v1, "fragments-sorted", "follows fragment");
  bri_verify_report_dispose(&r);
  r = run(false, v2);
  ck_assert_uint_eq(r.problems_total, 2);
  char want[128];
  snprintf(want, sizeof want, "fragment %llu: ", (unsigned long long)fd_id);
  assert_rule(&r, v2, "deletion-file", want);
  snprintf(want, sizeof want, "the fragment records %llu physical rows", (unsigned long long)fr_rows + 1);
  assert_rule(&r, v2, "data-file-rows", want);
  bri_verify_report_dispose(&r);
  r = run(false, v4); /* alone, the lowered mark is not visible */
  ck_assert_uint_eq(r.problems_total, 0);
  bri_verify_report_dispose(&r);
  r = run(true, 0);
  snprintf(want, sizeof want, "max_fragment_id went down from %u (version %llu) to %u", max + 5,
           (unsigned long long)v3, max);
  assert_rule(&r, v4, "high-water-marks", want);
  ck_assert_uint_eq(r.problems_total, 4);
  bri_verify_report_dispose(&r);
  teardown();
}
END_TEST

/* Stable row ids: a live row id held twice (a moved row whose old copy was
 * not deleted) is found; the same id on a deleted row is how Lance moves
 * rows and is fine. */
START_TEST(test_live_row_ids_unique) {
  copy_fixture("tables/stable.lance");
  bri_table *t;
  bri_manifest *m = latest(&t);
  Lance__Table__Manifest *pb = m->pb;
  bri_error err;
  uint64_t *ids[2];
  size_t n[2];
  uint32_t *del[2];
  size_t nd[2];
  for (int k = 0; k < 2; k++) {
    Lance__Table__DataFragment *f = pb->fragments[k];
    Lance__Table__RowIdSequence *seq;
    ck_assert_int_eq(bri_u64seq_unpack(f->inline_row_ids.data, f->inline_row_ids.len, &seq, &err), 0);
    ck_assert_int_eq(bri_u64seq_decode(seq, f->physical_rows, &ids[k], &n[k], &err), 0);
    lance__table__row_id_sequence__free_unpacked(seq, NULL);
    char *p;
    ck_assert_int_eq(bri_table_deletion_path(t, pb, f, &p, &err), 0);
    ck_assert_int_eq(bri_deletion_read(t->store, p, f->deletion_file->file_type, f->deletion_file->num_deleted_rows,
                                       f->physical_rows, &del[k], &nd[k], &err), 0);
    free(p);
  }
  /* a live and a deleted offset of fragment 0, a live offset of fragment 1 */
  size_t live0 = 0, dead0 = del[0][0], live1 = 0;
  while (contains_u32(del[0], nd[0], (uint32_t)live0)) live0++;
  while (contains_u32(del[1], nd[1], (uint32_t)live1)) live1++;
  /* fragment 1's live row takes the id of fragment 0's deleted row: fine */
  ids[1][live1] = ids[0][dead0];
  uint8_t *old_data = pb->fragments[1]->inline_row_ids.data;
  size_t old_len = pb->fragments[1]->inline_row_ids.len;
  ck_assert_int_eq(bri_u64seq_pack(ids[1], n[1], &pb->fragments[1]->inline_row_ids.data,
                                   &pb->fragments[1]->inline_row_ids.len, &err), 0);
  uint64_t v1 = publish_raw(pb, m->indices);
  free(pb->fragments[1]->inline_row_ids.data);
  /* ... but not the id of its live row */
  ids[1][live1] = ids[0][live0];
  ck_assert_int_eq(bri_u64seq_pack(ids[1], n[1], &pb->fragments[1]->inline_row_ids.data,
                                   &pb->fragments[1]->inline_row_ids.len, &err), 0);
  uint64_t v2 = publish_raw(pb, m->indices);
  free(pb->fragments[1]->inline_row_ids.data);
  pb->fragments[1]->inline_row_ids.data = old_data, pb->fragments[1]->inline_row_ids.len = old_len;
  bri_manifest_free(m);
  bri_table_close(t);
  bri_verify_report r = run(false, v1);
  ck_assert_msg(r.problems_total == 0, "%s", r.n_problems ? r.problems[0].what : "");
  bri_verify_report_dispose(&r);
  r = run(false, v2);
  ck_assert_uint_eq(r.problems_total, 1);
  char want[64];
  snprintf(want, sizeof want, "row id %llu belongs to two live rows", (unsigned long long)ids[0][live0]);
  assert_rule(&r, v2, "row-ids-unique", want);
  bri_verify_report_dispose(&r);
  for (int k = 0; k < 2; k++) free(ids[k]), free(del[k]);
  teardown();
}
END_TEST

static Suite *verify_suite(void) {
  Suite *s = suite_create("verify");
  TCase *tc = tcase_create("verify");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_fixtures_are_whole);
  tcase_add_test(tc, test_missing_and_resized_files);
  tcase_add_test(tc, test_unreadable_manifest_does_not_stop_the_rest);
  tcase_add_test(tc, test_bri_targets_and_descriptors);
  tcase_add_test(tc, test_bri_changed_under_kept_path);
  tcase_add_test(tc, test_bounded_list_and_errors);
  tcase_add_test(tc, test_lance_rules);
  tcase_add_test(tc, test_live_row_ids_unique);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(verify_suite)
