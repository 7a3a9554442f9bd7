/* test_clone.c: shallow and deep clones (lib/ops/clone.h) of copies of
 * the fixture tables. Shallow: the manifest has Lance's shape (the source
 * version's number, the source root as dataset-root base 0, base ids on
 * every data file, deletion file and index, a Clone transaction, the BRI
 * bytes unchanged), reads the same rows, and cleaning the clone never
 * deletes a file of the source. Deep: every byte copied, BRI rewritten to
 * directories of the clone without base ids, and the clone reads the same
 * after the source is removed. Refusals (non-empty destination, destination
 * inside the source, unknown tag) and rollback on failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lance/table/bri.h"
#include "blob/resolve.h"
#include "ops/cleanup.h"
#include "ops/clone.h"
#include "ops/materialize.h"
#include "ops/verify.h"
#include "compact/execute.h"
#include "lance/file/arrow_build.h"
#include "lance/dataset/reader.h"
#include "lance/table/flags.h"
#include "lance/table/table.h"
#include "testutil.h"
#include "util/fsutil.h"

static char *tmp, *root, *dst;

static void copy_fixture(const char *name) {
  bri_fixture_table(name, &tmp, &root);
  dst = bri_path_join(tmp, "clone.lance");
}


static void teardown(void) {
  bri_rmtree(tmp);
  free(tmp), free(root), free(dst);
}



/* Rows of the latest version, in fragment order: the id column's values,
 * and, for tables with a blob column, the FNV of each blob's bytes. */
static char *digest(const char *table) {
  bri_table *t;
  bri_manifest *m;
  bri_error err;
  ck_assert_msg(bri_table_open(table, &t, &err) == 0, "%s", err.msg);
  ck_assert_msg(bri_table_load(t, 0, &m, &err) == 0, "%s", err.msg);
  int32_t id_field = -1, blob_field = -1;
  for (size_t i = 0; i < m->pb->n_fields; i++) {
    if (m->pb->fields[i]->parent_id != -1) continue;
    if (!strcmp(m->pb->fields[i]->name, "id")) id_field = m->pb->fields[i]->id;
    if (!strcmp(m->pb->fields[i]->name, "blob")) blob_field = m->pb->fields[i]->id;
  }
  ck_assert(id_field >= 0);
  char *out = NULL;
  size_t len = 0;
  FILE *s = open_memstream(&out, &len);
  for (size_t f = 0; f < m->pb->n_fragments; f++) {
    bri_fragment_reader *rd;
    ck_assert_msg(bri_fragment_open(t, m, m->pb->fragments[f], &rd, &err) == 0, "%s", err.msg);
    struct ArrowArray ia, ba = {0};
    struct ArrowSchema is, bs = {0};
    ck_assert_msg(bri_fragment_read_field(rd, id_field, &ia, &is, &err) == 0, "%s", err.msg);
    bri_blob_resolver *res = NULL;
    if (blob_field >= 0) {
      ck_assert_msg(bri_fragment_read_field(rd, blob_field, &ba, &bs, &err) == 0, "%s", err.msg);
      ck_assert_msg(bri_blob_resolver_open(t, m->pb, bri_fragment_field_datafile(rd, blob_field),
                                           &res, &err) == 0, "%s", err.msg);
    }
    for (int64_t i = 0; i < ia.length; i++) {
      fprintf(s, "%lld", (long long)((const int64_t *)ia.buffers[1])[ia.offset + i]);
      if (res) {
        bri_blob_desc d;
        bool is_null;
        ck_assert_msg(bri_blob_desc_get(&bs, &ba, i, &d, &is_null, &err) == 0, "%s", err.msg);
        if (!is_null) {
          uint8_t *bytes;
          size_t n;
          ck_assert_msg(bri_blob_read(res, &d, 1 << 26, &bytes, &n, &err) == 0, "%s", err.msg);
          fprintf(s, "=%zu:%016llx", n, (unsigned long long)bri_fnv1a(bytes, n));
          free(bytes);
        }
      }
      fputc(',', s);
    }
    if (res) bri_blob_resolver_close(res);
    bri_arrow_array_release(&ia), bri_arrow_array_release(&ba);
    bri_arrow_schema_release(&is), bri_arrow_schema_release(&bs);
    bri_fragment_close(rd);
  }
  fclose(s);
  bri_manifest_free(m);
  bri_table_close(t);
  return out;
}

static void compact_bri(const char *table) {
  bri_compact_request q;
  bri_compact_request_default(&q);
  q.strategy = BRI_STRATEGY_BRI; /* the default (auto) would link */
  bri_compact_report rep;
  bri_error err;
  ck_assert_msg(bri_compact_table(table, &q, NULL, &rep, &err) == 0, "%s", err.msg);
  json_decref(rep.plan);
  ck_assert_uint_ne(rep.version, 0);
}

static bri_manifest *load(const char *table, bri_table **t) {
  bri_manifest *m;
  bri_error err;
  ck_assert_msg(bri_table_open(table, t, &err) == 0, "%s", err.msg);
  ck_assert_msg(bri_table_load(*t, 0, &m, &err) == 0, "%s", err.msg);
  return m;
}

static void assert_verifies(const char *table) {
  bri_verify_report vr;
  bri_error err;
  ck_assert_msg(bri_verify_table(table, NULL, &vr, &err) == 0, "%s", err.msg);
  ck_assert_msg(vr.problems_total == 0, "verify %s: %s: %s", table,
                vr.n_problems ? vr.problems[0].file : "", vr.n_problems ? vr.problems[0].what : "");
  bri_verify_report_dispose(&vr);
}

/* The serialized BRI of every data file, concatenated (for "unchanged"). */
static char *bri_bytes(const Lance__Table__Manifest *m) {
  char *out = NULL;
  size_t len = 0;
  FILE *s = open_memstream(&out, &len);
  for (size_t i = 0; i < m->n_fragments; i++)
    for (size_t k = 0; k < m->fragments[i]->n_files; k++) {
      const Lance__Table__DataFile *df = m->fragments[i]->files[k];
      for (size_t u = 0; u < df->base.n_unknown_fields; u++)
        if (df->base.unknown_fields[u].tag == BRI_DATAFILE_FIELD)
          for (size_t b = 0; b < df->base.unknown_fields[u].len; b++)
            fprintf(s, "%02x", df->base.unknown_fields[u].data[b]);
      fputc('|', s);
    }
  fclose(s);
  return out;
}

START_TEST(test_shallow_clone_plain_has_lance_shape) {
  copy_fixture("tables/plain.lance");
  char *before = digest(root);
  char *src_listing = bri_tree_listing(root);
  bri_clone_options o = {0};
  bri_clone_report rep;
  bri_error err;
  ck_assert_msg(bri_clone_table(root, dst, &o, NULL, &rep, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(rep.version, 5);
  ck_assert_uint_eq(rep.base_id, 0);
  ck_assert_uint_eq(rep.files_copied, 0);
  bri_table *t;
  bri_manifest *m = load(dst, &t);
  ck_assert_uint_eq(t->naming, BRI_NAMING_V2);
  ck_assert_uint_eq(t->n_versions, 1);
  ck_assert_uint_eq(m->pb->version, 5); /* Lance's shallow clones keep the version number */
  ck_assert_uint_eq(m->pb->n_base_paths, 1);
  const Lance__Table__BasePath *b = m->pb->base_paths[0];
  char real[4096];
  ck_assert_ptr_nonnull(realpath(root, real));
  ck_assert_uint_eq(b->id, 0);
  ck_assert(b->is_dataset_root);
  ck_assert_str_eq(b->path, real);
  ck_assert(m->pb->reader_feature_flags & BRI_FLAG_BASE_PATHS);
  size_t dels = 0;
  for (size_t i = 0; i < m->pb->n_fragments; i++) {
    const Lance__Table__DataFragment *f = m->pb->fragments[i];
    for (size_t k = 0; k < f->n_files; k++) {
      ck_assert(f->files[k]->has_base_id);
      ck_assert_uint_eq(f->files[k]->base_id, 0);
    }
    if (f->deletion_file) {
      dels++;
      ck_assert(f->deletion_file->has_base_id);
      ck_assert_uint_eq(f->deletion_file->base_id, 0);
    }
  }
  ck_assert_uint_gt(dels, 0);
  ck_assert_ptr_nonnull(m->indices);
  ck_assert_uint_eq(m->indices->n_indices, 1);
  ck_assert(m->indices->indices[0]->has_base_id);
  ck_assert_ptr_nonnull(m->txn);
  ck_assert_int_eq(m->txn->operation_case, LANCE__TABLE__TRANSACTION__OPERATION_CLONE);
  ck_assert(m->txn->clone->is_shallow);
  ck_assert_uint_eq(m->txn->clone->ref_version, 5);
  ck_assert_str_eq(m->txn->clone->ref_path, real);
  ck_assert_uint_eq(m->txn->read_version, 5);
  bri_manifest_free(m);
  bri_table_close(t);
  char *after = digest(dst);
  ck_assert_str_eq(before, after);
  assert_verifies(dst);
  char *src_after = bri_tree_listing(root);
  ck_assert_str_eq(src_listing, src_after); /* a shallow clone writes nothing in the source */
  free(before), free(after), free(src_listing), free(src_after);
  teardown();
}
END_TEST

START_TEST(test_clone_by_tag) {
  copy_fixture("tables/plain.lance");
  bri_clone_options o = {.tag = "v2tag"};
  bri_clone_report rep;
  bri_error err;
  ck_assert_msg(bri_clone_table(root, dst, &o, NULL, &rep, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(rep.version, 2);
  bri_table *t;
  bri_manifest *m = load(dst, &t);
  ck_assert_uint_eq(m->pb->version, 2);
  ck_assert_str_eq(m->pb->base_paths[0]->name, "v2tag");
  ck_assert_str_eq(m->txn->clone->ref_name, "v2tag");
  bri_manifest_free(m);
  bri_table_close(t);
  assert_verifies(dst);
  /* an unknown tag: nothing is created */
  char *dst2 = bri_path_join(tmp, "other.lance");
  o.tag = "nope";
  ck_assert_int_eq(bri_clone_table(root, dst2, &o, NULL, &rep, &err), BRI_ENOTFOUND);
  ck_assert_msg(strstr(err.msg, "no tag \"nope\"") != NULL, "%s", err.msg);
  ck_assert_int_eq(access(dst2, F_OK), -1);
  free(dst2);
  teardown();
}
END_TEST

/* A shallow clone of a BRI table keeps its BRI as is; the sources inherit
 * the clone's base and resolve into the source. Cleaning the clone after it
 * moved on (materialize: its latest version no longer references the
 * source) deletes the clone's old manifest but never a file of the source. */
START_TEST(test_shallow_clone_bri_cleanup_spares_source) {
  copy_fixture("tables/blobs.lance");
  char *before = digest(root);
  compact_bri(root);
  bri_table *t;
  bri_manifest *m = load(root, &t);
  char *src_bri = bri_bytes(m->pb);
  ck_assert(bri_manifest_has_bri(m->pb));
  bri_manifest_free(m);
  bri_table_close(t);
  char *cmd = bri_strdupf("find '%s' -exec touch -h -d 2020-01-01 {} +", root);
  ck_assert_int_eq(system(cmd), 0);
  free(cmd);
  char *src_listing = bri_tree_listing(root);
  bri_clone_options o = {0};
  bri_clone_report rep;
  bri_error err;
  ck_assert_msg(bri_clone_table(root, dst, &o, NULL, &rep, &err) == 0, "%s", err.msg);
  m = load(dst, &t);
  char *dst_bri = bri_bytes(m->pb);
  ck_assert_str_eq(src_bri, dst_bri); /* docs/format/bri.md 9: BRI copied unchanged */
  ck_assert(m->pb->reader_feature_flags & BRI_FLAG_BLOB_REUSE_INDEX);
  bri_manifest_free(m);
  bri_table_close(t);
  char *after = digest(dst);
  ck_assert_str_eq(before, after);
  assert_verifies(dst);
  /* the clone moves on, then is cleaned with everything old enough */
  bri_materialize_report mr;
  ck_assert_msg(bri_materialize_table(dst, NULL, NULL, &mr, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(mr.commits, 1);
  bri_cleanup_policy p;
  bri_cleanup_policy_default(&p);
  p.older_than_sec = 0, p.grace_sec = 0;
  p.now = (int64_t)time(NULL) + 10;
  bri_cleanup_stats st;
  ck_assert_msg(bri_cleanup_run(dst, &p, NULL, &st, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(st.files[BRI_CLEAN_MANIFEST], 1); /* the clone's first version went */
  char *src_after = bri_tree_listing(root);
  ck_assert_str_eq(src_listing, src_after); /* not a single file of the source */
  char *after2 = digest(dst);
  ck_assert_str_eq(before, after2);
  free(before), free(after), free(after2), free(src_bri), free(dst_bri), free(src_listing), free(src_after);
  teardown();
}
END_TEST

START_TEST(test_deep_clone_bri_survives_source_removal) {
  copy_fixture("tables/blobs.lance");
  char *before = digest(root);
  compact_bri(root);
  bri_clone_options o = {.deep = true};
  bri_clone_report rep;
  bri_error err;
  ck_assert_msg(bri_clone_table(root, dst, &o, NULL, &rep, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(rep.data_files, 1);
  ck_assert_uint_eq(rep.bri_targets, 2); /* one pack, one dedicated sidecar */
  ck_assert_uint_eq(rep.files_copied, 3);
  bri_table *t;
  bri_manifest *m = load(dst, &t);
  ck_assert_uint_eq(m->pb->n_base_paths, 0);
  ck_assert(!m->txn->clone->is_shallow);
  for (size_t i = 0; i < m->pb->n_fragments; i++)
    for (size_t k = 0; k < m->pb->fragments[i]->n_files; k++) {
      const Lance__Table__DataFile *df = m->pb->fragments[i]->files[k];
      ck_assert(!df->has_base_id);
      Lance__Table__BlobReuseIndex *b;
      ck_assert_int_eq(bri_datafile_get_bri(df, m->path, &b, &err), 1);
      for (size_t s = 0; s < b->n_sources; s++) {
        ck_assert(!b->sources[s]->has_base_id);
        char *dir = bri_strdupf("%s/data/%s", dst, b->sources[s]->blob_dir);
        struct stat st;
        ck_assert_msg(stat(dir, &st) == 0 && S_ISDIR(st.st_mode), "%s missing", dir);
        free(dir);
      }
      lance__table__blob_reuse_index__free_unpacked(b, NULL);
    }
  bri_manifest_free(m);
  bri_table_close(t);
  bri_rmtree(root); /* the clone depends on nothing outside it */
  char *after = digest(dst);
  ck_assert_str_eq(before, after);
  assert_verifies(dst);
  free(before), free(after);
  teardown();
}
END_TEST

START_TEST(test_deep_clone_plain_copies_everything) {
  copy_fixture("tables/plain.lance");
  char *before = digest(root);
  bri_clone_options o = {.deep = true, .version = 5};
  bri_clone_report rep;
  bri_error err;
  ck_assert_msg(bri_clone_table(root, dst, &o, NULL, &rep, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(rep.version, 5);
  ck_assert_uint_eq(rep.data_files, 3);
  ck_assert_uint_gt(rep.deletion_files, 0);
  ck_assert_uint_eq(rep.index_dirs, 1);
  bri_table *t;
  bri_manifest *m = load(dst, &t);
  ck_assert_uint_eq(m->pb->version, 5);
  for (size_t i = 0; i < m->pb->n_fragments; i++) {
    ck_assert(!m->pb->fragments[i]->files[0]->has_base_id);
    if (m->pb->fragments[i]->deletion_file) ck_assert(!m->pb->fragments[i]->deletion_file->has_base_id);
  }
  ck_assert(!m->indices->indices[0]->has_base_id);
  char *idx;
  ck_assert_int_eq(bri_table_index_dir(t, m->pb, m->indices->indices[0], &idx, &err), 0);
  ck_assert_msg(strstr(idx, "/clone.lance/_indices/") != NULL, "%s", idx);
  struct stat st;
  ck_assert(stat(idx, &st) == 0 && S_ISDIR(st.st_mode));
  free(idx);
  bri_manifest_free(m);
  bri_table_close(t);
  bri_rmtree(root);
  assert_verifies(dst);
  char *after = digest(dst);
  ck_assert_str_eq(before, after);
  free(before), free(after);
  teardown();
}
END_TEST

START_TEST(test_clone_refusals) {
  copy_fixture("tables/v21.lance");
  bri_clone_options o = {0};
  bri_clone_report rep;
  bri_error err;
  /* a destination with something in it */
  ck_assert_int_eq(mkdir(dst, 0755), 0);
  char *junk = bri_path_join(dst, "junk");
  bri_write_bytes(junk, "x", 1);
  ck_assert_int_eq(bri_clone_table(root, dst, &o, NULL, &rep, &err), BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "is not empty") != NULL, "%s", err.msg);
  ck_assert_int_eq(access(junk, F_OK), 0);
  /* inside the source */
  char *inner = bri_path_join(root, "sub");
  ck_assert_int_eq(bri_clone_table(root, inner, &o, NULL, &rep, &err), BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "cannot live inside its source") != NULL, "%s", err.msg);
  ck_assert_int_eq(access(inner, F_OK), -1);
  /* not a table */
  char *nowhere = bri_path_join(tmp, "nowhere");
  char *dst3 = bri_path_join(tmp, "dst3");
  ck_assert_int_eq(bri_clone_table(nowhere, dst3, &o, NULL, &rep, &err), BRI_ENOTFOUND);
  ck_assert_int_eq(access(dst3, F_OK), -1);
  free(junk), free(inner), free(nowhere), free(dst3);
  teardown();
}
END_TEST

typedef struct jstate {
  size_t n, fail_at;
} jstate;

static int failing_journal(void *user, const char *path, unsigned flags, bri_error *err) {
  (void)flags;
  jstate *j = user;
  if (j->n++ == j->fail_at) return bri_error_set(err, BRI_EIO, "journal refused %s", path);
  return 0;
}

START_TEST(test_deep_clone_failure_rolls_back) {
  copy_fixture("tables/plain.lance");
  char *src_listing = bri_tree_listing(root);
  for (size_t fail_at = 0; fail_at < 12; fail_at += 3) {
    jstate j = {0, fail_at};
    bri_clone_options o = {.deep = true};
    const bri_hooks hooks = {.journal = failing_journal, .user = &j};
    bri_clone_report rep;
    bri_error err;
    ck_assert_int_eq(bri_clone_table(root, dst, &o, &hooks, &rep, &err), BRI_EIO);
    ck_assert_msg(access(dst, F_OK) != 0, "after a failure at path %zu the clone directory remains", fail_at);
  }
  char *src_after = bri_tree_listing(root);
  ck_assert_str_eq(src_listing, src_after);
  free(src_listing), free(src_after);
  teardown();
}
END_TEST

static Suite *clone_suite(void) {
  Suite *s = suite_create("clone");
  TCase *tc = tcase_create("clone");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_shallow_clone_plain_has_lance_shape);
  tcase_add_test(tc, test_clone_by_tag);
  tcase_add_test(tc, test_shallow_clone_bri_cleanup_spares_source);
  tcase_add_test(tc, test_deep_clone_bri_survives_source_removal);
  tcase_add_test(tc, test_deep_clone_plain_copies_everything);
  tcase_add_test(tc, test_clone_refusals);
  tcase_add_test(tc, test_deep_clone_failure_rolls_back);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(clone_suite)
