/* test_carry.c: deletions committed while a compaction runs are carried over
 * to its new fragments (lib/compact/carry.h). A real compaction of a table
 * brid generated (3 fragments x 100 rows, ids 0..299; with and without
 * stable row ids) meets a concurrent Delete committed just before its commit
 * (the confirm hook, asked just before it): rows deleted in one old fragment, another old
 * fragment removed whole. The compaction commits anyway, its new fragment
 * carries a deletion file in Lance's format, and it reads exactly the rows
 * the writer left (row ids kept, verify whole). It gives way, leaving nothing
 * behind, when the concurrent write changed a data file, and when every row
 * it copied was deleted. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compact/execute.h"
#include "gen/gen.h"
#include "lance/dataset/reader.h"
#include "lance/table/commit.h"
#include "lance/table/deletion.h"
#include "lance/table/rowids.h"
#include "ops/verify.h"
#include "testutil.h"
#include "util/arrow_c.h"
#include "util/fsutil.h"

static char *tmp, *root;

static void make_table(bool stable) {
  tmp = bri_tmpdir();
  root = bri_path_join(tmp, "t.lance");
  bri_gen_options o;
  bri_gen_options_default(&o);
  o.fragments = 3, o.rows = 100, o.stable_row_ids = stable;
  bri_gen_report rep;
  bri_error err;
  ck_assert_msg(bri_gen_run(root, &o, &rep, &err) == 0, "%s", err.msg);
}

static void teardown(void) {
  bri_rmtree(tmp);
  free(tmp), free(root);
}

/* What the concurrent writer does. */
typedef struct writer {
  const uint32_t *offs; /* rows of fragment 1 to delete */
  size_t n_offs;
  bool remove_2;        /* fragment 2 removed whole */
  bool remove_all;      /* every fragment removed */
  bool new_file;        /* fragment 1's data file replaced by a copy */
} writer;

static int concurrent_delete(void *user, bri_error *err) {
  const writer *w = user;
  bri_table *t;
  bri_manifest *m;
  ck_assert_int_eq(bri_table_open(root, &t, err), 0);
  ck_assert_int_eq(bri_table_load(t, 0, &m, err), 0);
  Lance__Table__Manifest *pb = m->pb;
  Lance__Table__DataFragment *f1 = pb->fragments[1];
  ck_assert_uint_eq(f1->id, 1);
  Lance__Table__DeletionFile del = LANCE__TABLE__DELETION_FILE__INIT;
  char *name = bri_deletion_file_name(1, pb->version, 77, BRI_DELETION_BITMAP);
  char *ddir = bri_path_join(root, "_deletions"), *path = bri_path_join(ddir, name);
  mkdir(ddir, 0755); /* may exist */
  ck_assert_msg(bri_deletion_write_bin(t->store, path, w->offs, w->n_offs, err) == 0, "%s", err->msg);
  del.has_file_type = 1, del.file_type = LANCE__TABLE__DELETION_FILE__DELETION_FILE_TYPE__BITMAP;
  del.has_read_version = 1, del.read_version = pb->version;
  del.has_id = 1, del.id = 77;
  del.has_num_deleted_rows = 1, del.num_deleted_rows = w->n_offs;
  f1->deletion_file = &del;
  char *saved_path = f1->files[0]->path, *copy = NULL;
  if (w->new_file) { /* the same rows under another name: a data file that changed */
    char *src = bri_strdupf("%s/data/%s", root, saved_path);
    copy = bri_strdupf("copy-%s", saved_path);
    char *dst = bri_strdupf("%s/data/%s", root, copy);
    size_t len;
    uint8_t *b = bri_slurp(src, &len);
    bri_write_bytes(dst, b, len);
    free(b), free(src), free(dst);
    f1->files[0]->path = copy;
  }
  Lance__Table__Transaction__Delete d = LANCE__TABLE__TRANSACTION__DELETE__INIT;
  Lance__Table__DataFragment *upd[] = {f1};
  uint64_t removed[] = {0, 1, 2};
  d.updated_fragments = upd, d.n_updated_fragments = w->remove_all ? 0 : 1;
  Lance__Table__DataFragment **all = pb->fragments;
  size_t n_all = pb->n_fragments;
  Lance__Table__DataFragment *keep[] = {pb->fragments[0], f1};
  if (w->remove_all) {
    d.deleted_fragment_ids = removed, d.n_deleted_fragment_ids = 3;
    pb->n_fragments = 0;
  } else if (w->remove_2) {
    d.deleted_fragment_ids = removed + 2, d.n_deleted_fragment_ids = 1;
    pb->fragments = keep, pb->n_fragments = 2;
  }
  Lance__Table__Transaction txn = LANCE__TABLE__TRANSACTION__INIT;
  txn.has_read_version = 1, txn.read_version = pb->version;
  txn.operation_case = LANCE__TABLE__TRANSACTION__OPERATION_DELETE, txn.delete_ = &d;
  int rc = bri_commit(t, pb, &txn, m->indices, pb->version + 1, NULL, err);
  ck_assert_msg(rc == 0, "%s", err->msg);
  free(txn.uuid);
  pb->fragments = all, pb->n_fragments = n_all;
  f1->deletion_file = NULL, f1->files[0]->path = saved_path;
  free(copy), free(name), free(ddir), free(path);
  bri_manifest_free(m);
  bri_table_close(t);
  return 0;
}

static int compact(writer *w, bri_compact_report *rep, bri_error *err) {
  bri_compact_request q;
  bri_compact_request_default(&q);
  q.strategy = BRI_STRATEGY_LINK;
  bri_hooks h = {.confirm = concurrent_delete, .user = w};
  int rc = bri_compact_table(root, &q, &h, rep, err);
  json_decref(rep->plan);
  return rc;
}

/* The ids LanceDB would read, in order, from every fragment of the latest version. */
static size_t read_ids(int64_t *out, size_t cap) {
  bri_table *t;
  bri_manifest *m;
  bri_error err;
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  ck_assert_int_eq(bri_table_load(t, 0, &m, &err), 0);
  size_t n = 0;
  for (size_t i = 0; i < m->pb->n_fragments; i++) {
    bri_fragment_reader *r;
    ck_assert_msg(bri_fragment_open(t, m, m->pb->fragments[i], &r, &err) == 0, "%s", err.msg);
    struct ArrowArray a;
    struct ArrowSchema s;
    ck_assert_msg(bri_fragment_read_field(r, 0, &a, &s, &err) == 0, "%s", err.msg);
    const int64_t *v = a.buffers[1];
    for (int64_t k = 0; k < a.length; k++) {
      ck_assert_uint_lt(n, cap);
      out[n++] = v[a.offset + k];
    }
    a.release(&a);
    s.release(&s);
    bri_fragment_close(r);
  }
  bri_manifest_free(m);
  bri_table_close(t);
  return n;
}

static void assert_whole(void) {
  bri_verify_options o = {.all_versions = true};
  bri_verify_report r;
  bri_error err;
  ck_assert_msg(bri_verify_table(root, &o, &r, &err) == 0, "%s", err.msg);
  ck_assert_msg(r.problems_total == 0, "v%llu %s: %s", r.n_problems ? (unsigned long long)r.problems[0].version : 0ULL,
                r.n_problems ? r.problems[0].file : "", r.n_problems ? r.problems[0].what : "");
  bri_verify_report_dispose(&r);
}

static void carried(bool stable) {
  make_table(stable);
  static const uint32_t offs[] = {3, 17, 50, 99};
  writer w = {offs, 4, true, false, false};
  bri_compact_report rep;
  bri_error err;
  ck_assert_msg(compact(&w, &rep, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(rep.read_version, 3);
  ck_assert_uint_eq(rep.version, 5); /* rebased over the delete (version 4) */
  ck_assert_uint_eq(rep.deletions_carried, 4 + 100);
  int64_t ids[400];
  size_t n = read_ids(ids, 400);
  ck_assert_uint_eq(n, 196); /* fragment 0, and fragment 1 without 4 rows */
  size_t k = 0;
  for (int64_t id = 0; id < 200; id++) {
    if (id == 103 || id == 117 || id == 150 || id == 199) continue;
    ck_assert_int_eq(ids[k++], id);
  }
  /* one new fragment of 300 rows, the 104 carried ones deleted in a .bin file */
  bri_table *t;
  bri_manifest *m;
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  ck_assert_int_eq(bri_table_load(t, 0, &m, &err), 0);
  ck_assert_uint_eq(m->pb->n_fragments, 1);
  const Lance__Table__DataFragment *f = m->pb->fragments[0];
  ck_assert_uint_eq(f->physical_rows, 300);
  ck_assert_ptr_nonnull(f->deletion_file);
  ck_assert_int_eq(f->deletion_file->file_type, LANCE__TABLE__DELETION_FILE__DELETION_FILE_TYPE__BITMAP);
  ck_assert_uint_eq(f->deletion_file->num_deleted_rows, 104);
  ck_assert_uint_eq(f->deletion_file->read_version, 4);
  if (stable) { /* the row ids of the copied rows, in order: deleted ones included */
    Lance__Table__RowIdSequence *seq;
    uint64_t *v;
    size_t nv;
    ck_assert_int_eq(bri_u64seq_unpack(f->inline_row_ids.data, f->inline_row_ids.len, &seq, &err), 0);
    ck_assert_int_eq(bri_u64seq_decode(seq, 300, &v, &nv, &err), 0);
    ck_assert_uint_eq(nv, 300);
    for (size_t i = 0; i < nv; i++) ck_assert_uint_eq(v[i], i);
    free(v);
    lance__table__row_id_sequence__free_unpacked(seq, NULL);
  }
  bri_manifest_free(m);
  bri_table_close(t);
  assert_whole();
  teardown();
}

START_TEST(test_carried) { carried(false); }
END_TEST

START_TEST(test_carried_stable_row_ids) { carried(true); }
END_TEST

/* Gives way with BRI_ECONFLICT; the only files left are the writer's. */
static void gives_way(writer *w, const char *msg) {
  make_table(false);
  char *data = bri_path_join(root, "data");
  char **before;
  size_t nb;
  bri_error err;
  ck_assert_int_eq(bri_list_dir(data, &before, &nb, &err), 0);
  bri_compact_report rep;
  ck_assert_int_eq(compact(w, &rep, &err), BRI_ECONFLICT);
  ck_assert_msg(strstr(err.msg, msg) != NULL, "\"%s\" not in %s", msg, err.msg);
  char **after;
  size_t na;
  ck_assert_int_eq(bri_list_dir(data, &after, &na, &err), 0);
  ck_assert_uint_eq(na, nb + (w->new_file ? 1 : 0)); /* no output left behind */
  char *dels = bri_path_join(root, "_deletions");
  char **d;
  size_t nd;
  ck_assert_int_eq(bri_list_dir(dels, &d, &nd, &err), 0);
  ck_assert_uint_eq(nd, 1); /* the writer's */
  bri_free_names(before, nb), bri_free_names(after, na), bri_free_names(d, nd);
  free(data), free(dels);
  teardown();
}

START_TEST(test_gives_way) {
  static const uint32_t offs[] = {3};
  writer changed = {offs, 1, false, false, true};
  gives_way(&changed, "a delete that changed data files touched fragment 1");
  writer all = {offs, 1, false, true, false};
  gives_way(&all, "every row this compaction copied into a new fragment was deleted meanwhile");
}
END_TEST

static Suite *carry_suite(void) {
  Suite *s = suite_create("carry");
  TCase *tc = tcase_create("carry");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_carried);
  tcase_add_test(tc, test_carried_stable_row_ids);
  tcase_add_test(tc, test_gives_way);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(carry_suite)
