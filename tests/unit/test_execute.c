/* test_execute.c: how a compaction surveys its blob descriptors
 * (lib/compact/execute.c). A real run reads each fragment's descriptors
 * while it writes it when the table lets it (no BRI, no budgets: stream
 * mode), a dry run surveys everything first; both must plan the same bins
 * and report the same packs. The table here makes the difference matter: a
 * fragment too big to be a candidate whose pack falls below the repack
 * threshold once its large blob is deleted (5% of its rows: not enough to
 * compact it for deletions) must join the bin of its small neighbours, and
 * have its pack repacked: into a new pack of its own under bri, into a
 * _blobs/ object under managed (compact/managed.h), which repacks its
 * Managed packs too once rows are deleted from them (a new _blobs/ object
 * journaled before it is made, and removed when the attempt fails). And the
 * size rule by strategy on a real table: a fragment whose payload reaches
 * the target is held back by copy (which would copy it) and merged by bri,
 * link and auto (link on a local disk), which leave payload in place. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compact/execute.h"
#include "gen/gen.h"
#include "lance/table/commit.h"
#include "lance/table/deletion.h"
#include "testutil.h"
#include "util/fsutil.h"

static char *tmp, *root;

/* gen with a blob size cycle; inline only below 1 KiB so 10K blobs are Packed. */
static void gen(uint64_t fragments, uint64_t rows, const char *sizes) {
  bri_gen_options o;
  bri_gen_options_default(&o);
  o.fragments = fragments, o.rows = rows, o.inline_threshold = 1024;
  bri_gen_blob *b;
  bri_error err;
  ck_assert_msg(bri_gen_parse_blobs(sizes, &b, &o.n_blobs, &err) == 0, "%s", err.msg);
  o.blobs = b;
  bri_gen_report rep;
  ck_assert_msg(bri_gen_run(root, &o, &rep, &err) == 0, "%s", err.msg);
  free(b);
}

/* Deletes rows[0..n) of fragment 0 (a Delete transaction, as LanceDB commits one). */
static void delete_rows(const uint32_t *rows, uint32_t n) {
  bri_table *t;
  bri_manifest *m;
  bri_error err;
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  ck_assert_int_eq(bri_table_load(t, 0, &m, &err), 0);
  Lance__Table__Manifest *pb = m->pb;
  Lance__Table__DataFragment *f = pb->fragments[0];
  char *name = bri_deletion_file_name(f->id, pb->version, 7, BRI_DELETION_BITMAP);
  char *ddir = bri_path_join(root, "_deletions"), *path = bri_path_join(ddir, name);
  mkdir(ddir, 0755);
  ck_assert_msg(bri_deletion_write_bin(t->store, path, rows, n, &err) == 0, "%s", err.msg);
  Lance__Table__DeletionFile del = LANCE__TABLE__DELETION_FILE__INIT;
  del.has_file_type = 1, del.file_type = LANCE__TABLE__DELETION_FILE__DELETION_FILE_TYPE__BITMAP;
  del.has_read_version = 1, del.read_version = pb->version;
  del.has_id = 1, del.id = 7;
  del.has_num_deleted_rows = 1, del.num_deleted_rows = n;
  f->deletion_file = &del;
  Lance__Table__Transaction__Delete d = LANCE__TABLE__TRANSACTION__DELETE__INIT;
  Lance__Table__DataFragment *upd[] = {f};
  d.updated_fragments = upd, d.n_updated_fragments = 1;
  Lance__Table__Transaction txn = LANCE__TABLE__TRANSACTION__INIT;
  txn.has_read_version = 1, txn.read_version = pb->version;
  txn.operation_case = LANCE__TABLE__TRANSACTION__OPERATION_DELETE, txn.delete_ = &d;
  ck_assert_msg(bri_commit(t, pb, &txn, m->indices, pb->version + 1, NULL, &err) == 0, "%s", err.msg);
  free(txn.uuid);
  f->deletion_file = NULL;
  free(name), free(ddir), free(path);
  bri_manifest_free(m);
  bri_table_close(t);
}

static void setup(void) {
  tmp = bri_tmpdir();
  root = bri_path_join(tmp, "t.lance");
  /* fragment 0: 20 rows, one 3 MiB blob and 19 of 10 KiB in one pack */
  gen(1, 20, "3M,10K,10K,10K,10K,10K,10K,10K,10K,10K,10K,10K,10K,10K,10K,10K,10K,10K,10K,10K");
  gen(2, 4, "10K"); /* fragments 1 and 2: small */
  delete_rows((uint32_t[]){0}, 1); /* the pack of fragment 0 is now 6% used */
}

static void teardown(void) {
  bri_rmtree(tmp);
  free(tmp), free(root);
}

static json_t *compact(bri_strategy s, bool dry, bri_compact_report *rep) {
  bri_compact_request q;
  bri_compact_request_default(&q);
  q.strategy = s, q.dry_run = dry;
  q.options.target_rows_per_fragment = 10; /* fragment 0 is no candidate for its size */
  bri_error err;
  ck_assert_msg(bri_compact_table(root, &q, NULL, rep, &err) == 0, "%s", err.msg);
  return rep->plan;
}

/* The plan parts a dry run and a run must agree on. */
static char *plan_text(json_t *plan) {
  json_t *keep = json_pack("{s:O, s:O, s:O}", "bins", json_object_get(plan, "bins"), "packs",
                           json_object_get(plan, "packs"), "payload_bytes",
                           json_object_get(plan, "payload_bytes"));
  char *s = json_dumps(keep, JSON_SORT_KEYS);
  json_decref(keep);
  return s;
}

START_TEST(run_plans_as_dry_run) {
  static const bri_strategy strategies[] = {BRI_STRATEGY_BRI, BRI_STRATEGY_LINK, BRI_STRATEGY_MANAGED};
  for (int k = 0; k < 3; k++) {
    setup();
    bri_compact_report dry, run;
    json_t *a = compact(strategies[k], true, &dry), *b = compact(strategies[k], false, &run);
    char *x = plan_text(a), *y = plan_text(b);
    ck_assert_str_eq(x, y);
    json_t *bins = json_object_get(b, "bins");
    ck_assert_uint_eq(json_array_size(bins), 1);
    size_t n = json_array_size(json_object_get(json_array_get(bins, 0), "fragments"));
    if (strategies[k] != BRI_STRATEGY_LINK) {
      /* the low pack made fragment 0 a candidate: all three in one bin, its pack repacked */
      ck_assert_uint_eq(n, 3);
      ck_assert_uint_eq(run.packs_below_threshold, 1);
      ck_assert_uint_eq(dry.packs_below_threshold, 1);
      ck_assert_uint_eq(run.payload_bytes_copied, 19 * 10240);
      /* managed: the 19 live values into one _blobs/ object, the rest adopted */
      ck_assert_uint_eq(run.managed_repacked, strategies[k] == BRI_STRATEGY_MANAGED ? 19 : 0);
      ck_assert_uint_eq(run.managed_adopted, strategies[k] == BRI_STRATEGY_MANAGED ? 8 : 0);
    } else {
      /* link never repacks: fragment 0 stays as it is */
      ck_assert_uint_eq(n, 2);
      ck_assert_uint_eq(run.packs_below_threshold, 0);
    }
    ck_assert_uint_eq(run.fragments_rewritten, n);
    free(x), free(y);
    json_decref(a), json_decref(b);
    teardown();
  }
}
END_TEST

/* The plan of a compaction of a table of one fragment with 12 MiB of
 * payload and two of 40 KiB, target 1 MiB. */
static json_t *sized_plan(bri_strategy s, bool dry, bri_compact_report *rep) {
  bri_compact_request q;
  bri_compact_request_default(&q);
  q.strategy = s, q.dry_run = dry;
  q.options.target_fragment_bytes = 1 << 20;
  bri_error err;
  ck_assert_msg(bri_compact_table(root, &q, NULL, rep, &err) == 0, "%s", err.msg);
  return rep->plan;
}

START_TEST(size_rule_by_strategy) {
  static const bri_strategy strategies[] = {BRI_STRATEGY_COPY, BRI_STRATEGY_BRI, BRI_STRATEGY_LINK, BRI_STRATEGY_AUTO};
  for (int k = 0; k < 4; k++) {
    tmp = bri_tmpdir();
    root = bri_path_join(tmp, "t.lance");
    gen(1, 4, "3M");
    gen(2, 4, "10K");
    bri_compact_report dry, run;
    json_t *a = sized_plan(strategies[k], true, &dry), *b = sized_plan(strategies[k], false, &run);
    char *x = plan_text(a), *y = plan_text(b);
    ck_assert_str_eq(x, y);
    bool copy = strategies[k] == BRI_STRATEGY_COPY;
    json_t *bins = json_object_get(b, "bins"), *held = json_object_get(b, "held_back");
    ck_assert_uint_eq(json_array_size(bins), 1);
    ck_assert_uint_eq(json_array_size(json_object_get(json_array_get(bins, 0), "fragments")), copy ? 2 : 3);
    ck_assert(json_is_true(json_object_get(b, "size_counts_payload")) == copy);
    ck_assert_uint_eq(json_array_size(held), copy);
    if (copy) {
      json_t *h = json_array_get(held, 0);
      ck_assert_str_eq(json_string_value(json_object_get(h, "reason")), "at target size");
      ck_assert_int_ge(json_integer_value(json_object_get(h, "size_bytes")), 12 << 20);
      /* it is left alone: only the two small fragments' payload is copied */
      ck_assert_uint_lt(run.payload_bytes_copied, 1 << 20);
    }
    ck_assert_uint_eq(run.fragments_after, copy ? 2 : 1);
    free(x), free(y);
    json_decref(a), json_decref(b);
    teardown();
  }
}
END_TEST

/* The size of the one file in root/_blobs (fails unless exactly one). */
static uint64_t only_blob(char **name) {
  char *cmd = bri_strdupf("ls '%s/_blobs'", root);
  FILE *f = popen(cmd, "r");
  char line[256] = "", more[256];
  ck_assert(fgets(line, sizeof line, f) && !fgets(more, sizeof more, f));
  pclose(f);
  line[strcspn(line, "\n")] = 0;
  struct stat st;
  char *path = bri_strdupf("%s/_blobs/%s", root, line);
  ck_assert_int_eq(stat(path, &st), 0);
  if (name) *name = strdup(line);
  free(cmd), free(path);
  return (uint64_t)st.st_size;
}

/* Hooks of a compaction whose commit is refused, recording what it journals. */
static char journaled[4096];
static int note_path(void *user, const char *path, unsigned flags, bri_error *err) {
  (void)user, (void)flags, (void)err;
  strncat(journaled, path, sizeof journaled - strlen(journaled) - 2);
  strcat(journaled, "\n");
  return 0;
}
static int refuse_commit(void *user, bri_error *err) {
  (void)user;
  return bri_error_set(err, BRI_ECONFLICT, "the lease is gone");
}

/* A Managed pack whose rows were mostly deleted is repacked too, its size
 * told by the ranges of its live and deleted rows (no stat of it), and a
 * Managed pack that is whole is kept where it is. */
START_TEST(managed_repacks_managed_packs) {
  bri_compact_report rep;
  json_decref(compact(BRI_STRATEGY_MANAGED, false, &rep));
  ck_assert_uint_eq(rep.managed_repacked, 19);
  char *first;
  ck_assert_uint_eq(only_blob(&first), 19 * 10240);
  /* the output fragment: rows 0-18 are the 19 repacked values (in one
   * _blobs/ object), 19-26 the 8 adopted ones; 17 of the 19 deleted */
  uint32_t dead[17];
  for (uint32_t i = 0; i < 17; i++) dead[i] = i;
  delete_rows(dead, 17);
  /* bytes no descriptor names at its end: a size asked of the store would count them */
  char *path = bri_strdupf("%s/_blobs/%s", root, first);
  FILE *f = fopen(path, "ab");
  ck_assert(f && fwrite("trailing", 1, 8, f) == 8 && fclose(f) == 0);
  free(path);
  bri_compact_request q;
  bri_compact_request_default(&q);
  q.strategy = BRI_STRATEGY_AUTO; /* a Managed table: managed whatever is asked */
  bri_error err;
  /* an attempt that fails at its commit: the new _blobs/ object was told to
   * the journal before it was made, and is gone again */
  journaled[0] = 0;
  bri_hooks h = {.journal = note_path, .confirm = refuse_commit};
  ck_assert_int_eq(bri_compact_table(root, &q, &h, &rep, &err), BRI_ECONFLICT);
  json_decref(rep.plan);
  ck_assert_msg(strstr(journaled, "/_blobs/"), "journaled: %s", journaled);
  ck_assert_uint_eq(only_blob(NULL), 19 * 10240 + 8);
  ck_assert_msg(bri_compact_table(root, &q, NULL, &rep, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(rep.strategy, BRI_STRATEGY_MANAGED);
  ck_assert_uint_eq(rep.packs_below_threshold, 1);
  ck_assert_uint_eq(rep.managed_repacked, 2);
  ck_assert_uint_eq(rep.managed_kept, 8); /* the adopted packs are whole */
  ck_assert_uint_eq(rep.payload_bytes_copied, 2 * 10240);
  json_t *packs = json_object_get(rep.plan, "packs");
  size_t i;
  json_t *p;
  json_array_foreach(packs, i, p) {
    if (!strstr(json_string_value(json_object_get(p, "path")), first)) continue;
    /* known from the descriptors, not asked: the 19 ranges, 2 live, from 0 without a gap */
    ck_assert_int_eq(json_integer_value(json_object_get(p, "bytes")), 19 * 10240);
    ck_assert_int_eq(json_integer_value(json_object_get(p, "live_bytes")), 2 * 10240);
  }
  json_decref(rep.plan);
  free(first);
}
END_TEST

static Suite *execute_suite(void) {
  Suite *s = suite_create("execute");
  TCase *tc = tcase_create("survey");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, run_plans_as_dry_run);
  tcase_add_test(tc, size_rule_by_strategy);
  TCase *m = tcase_create("managed");
  tcase_set_timeout(m, 60);
  tcase_add_checked_fixture(m, setup, teardown);
  tcase_add_test(m, managed_repacks_managed_packs);
  suite_add_tcase(s, m);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(execute_suite)
