/* test_materialize.c: turning BRI tables back into stock-readable ones
 * (lib/ops/materialize.h) on copies of the fixture blobs.lance after a
 * bri compaction: the committed version is a DataReplacement of the same
 * fragment, carries no BRI and no BRI flag bits, its data file is a hard
 * link of the old bytes under a new stem, its sidecar directory holds every
 * BRI target (same inode) and the old directory's own packs, and every row
 * reads back the same bytes; a second run does nothing; a missing BRI
 * target fails naming it and leaves the table as it was; a failing journal
 * rolls back exactly what was created; a concurrent compaction of the
 * fragment makes the first round conflict, roll back and plan again; with
 * managed, the table is switched to Managed blobs and the BRI file
 * replaced by one whose descriptors name the same bytes, nothing placed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lance/table/bri.h"
#include "lance/table/commit.h"
#include "blob/resolve.h"
#include "lance/table/sidecar.h"
#include "ops/materialize.h"
#include "ops/verify.h"
#include "compact/execute.h"
#include "compact/rewrite.h"
#include "lance/file/arrow_build.h"
#include "lance/dataset/reader.h"
#include "lance/table/flags.h"
#include "lance/table/rowids.h"
#include "lance/table/table.h"
#include "testutil.h"
#include "util/fsutil.h"

static char *tmp, *root;

static void copy_fixture(const char *name) { bri_fixture_table(name, &tmp, &root); }


static void teardown(void) {
  bri_rmtree(tmp);
  free(tmp), free(root);
}


typedef struct row {
  int64_t id;
  uint64_t h;
} row;

static int cmp_row(const void *a, const void *b) {
  const row *x = a, *y = b;
  return x->id < y->id ? -1 : x->id > y->id;
}

/* "id=hash-of-blob-bytes," for every visible row of the latest version,
 * sorted by id (null blobs hash to 0). */
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
  ck_assert(id_field >= 0 && blob_field >= 0);
  row *rows = NULL;
  size_t n = 0;
  for (size_t f = 0; f < m->pb->n_fragments; f++) {
    bri_fragment_reader *rd;
    ck_assert_msg(bri_fragment_open(t, m, m->pb->fragments[f], &rd, &err) == 0, "%s", err.msg);
    struct ArrowArray ia, ba;
    struct ArrowSchema is, bs;
    ck_assert_msg(bri_fragment_read_field(rd, id_field, &ia, &is, &err) == 0, "%s", err.msg);
    ck_assert_msg(bri_fragment_read_field(rd, blob_field, &ba, &bs, &err) == 0, "%s", err.msg);
    bri_blob_resolver *res;
    ck_assert_msg(bri_blob_resolver_open(t, m->pb, bri_fragment_field_datafile(rd, blob_field), &res,
                                         &err) == 0, "%s", err.msg);
    rows = realloc(rows, (n + (size_t)ia.length) * sizeof *rows);
    for (int64_t i = 0; i < ia.length; i++) {
      bri_blob_desc d;
      bool is_null;
      ck_assert_msg(bri_blob_desc_get(&bs, &ba, i, &d, &is_null, &err) == 0, "%s", err.msg);
      uint64_t h = 0;
      if (!is_null) {
        uint8_t *bytes;
        size_t len;
        ck_assert_msg(bri_blob_read(res, &d, 1 << 26, &bytes, &len, &err) == 0, "%s", err.msg);
        h = bri_fnv1a(bytes, len) ^ len;
        free(bytes);
      }
      rows[n++] = (row){((const int64_t *)ia.buffers[1])[ia.offset + i], h};
    }
    bri_blob_resolver_close(res);
    bri_arrow_array_release(&ia), bri_arrow_array_release(&ba);
    bri_arrow_schema_release(&is), bri_arrow_schema_release(&bs);
    bri_fragment_close(rd);
  }
  qsort(rows, n, sizeof *rows, cmp_row);
  char *out = NULL;
  size_t len = 0;
  FILE *s = open_memstream(&out, &len);
  for (size_t i = 0; i < n; i++) fprintf(s, "%lld=%016llx,", (long long)rows[i].id, (unsigned long long)rows[i].h);
  fclose(s);
  free(rows);
  bri_manifest_free(m);
  bri_table_close(t);
  return out;
}

static void compact(double repack_threshold) {
  bri_compact_request q;
  bri_compact_request_default(&q);
  q.strategy = BRI_STRATEGY_BRI; /* the default (auto) would link */
  q.options.repack_threshold = repack_threshold;
  bri_compact_report rep;
  bri_error err;
  ck_assert_msg(bri_compact_table(root, &q, NULL, &rep, &err) == 0, "%s", err.msg);
  json_decref(rep.plan);
  ck_assert_uint_ne(rep.version, 0);
}

static bri_manifest *latest(bri_table **t) {
  bri_manifest *m;
  bri_error err;
  ck_assert_msg(bri_table_open(root, t, &err) == 0, "%s", err.msg);
  ck_assert_msg(bri_table_load(*t, 0, &m, &err) == 0, "%s", err.msg);
  return m;
}

static ino_t inode(const char *path) {
  struct stat st;
  ck_assert_msg(stat(path, &st) == 0, "%s missing", path);
  return st.st_ino;
}

static void assert_verifies(void) {
  bri_verify_report vr;
  bri_error err;
  ck_assert_msg(bri_verify_table(root, NULL, &vr, &err) == 0, "%s", err.msg);
  ck_assert_msg(vr.problems_total == 0, "verify: %s: %s", vr.n_problems ? vr.problems[0].file : "",
                vr.n_problems ? vr.problems[0].what : "");
  ck_assert_uint_gt(vr.blobs, 0);
  bri_verify_report_dispose(&vr);
}

/* A bri compaction that also repacks the pack (threshold above 1): the new
 * file's BRI names the dedicated sidecar, its own directory holds the pack. */
START_TEST(test_materialize_replaces_bri_file) {
  copy_fixture("tables/blobs.lance");
  char *before = digest(root);
  compact(2.0);
  bri_table *t;
  bri_manifest *m = latest(&t);
  ck_assert(bri_manifest_has_bri(m->pb));
  ck_assert_uint_eq(m->pb->n_fragments, 1);
  const Lance__Table__DataFragment *of = m->pb->fragments[0];
  const Lance__Table__DataFile *odf = of->files[0];
  char *old_path, *old_dir;
  bri_error err;
  ck_assert_int_eq(bri_table_datafile_path(t, m->pb, odf, &old_path, &err), 0);
  ck_assert_int_eq(bri_table_sidecar_dir(t, m->pb, odf, &old_dir, &err), 0);
  /* the BRI targets, by local id */
  Lance__Table__BlobReuseIndex *b;
  ck_assert_int_eq(bri_datafile_get_bri(odf, m->path, &b, &err), 1);
  ck_assert_uint_ge(b->n_sources, 1);
  uint64_t *loc, *phys;
  size_t nl, np;
  ck_assert_int_eq(bri_u64seq_decode(b->sources[0]->local_ids, 100, &loc, &nl, &err), 0);
  ck_assert_int_eq(bri_u64array_decode(b->sources[0]->physical_ids, 100, &phys, &np, &err), 0);
  char name[BRI_BLOB_NAME_LEN];
  bri_blob_file_name((uint32_t)phys[0], name);
  char *target = bri_strdupf("%s/data/%s/%s", root, b->sources[0]->blob_dir, name);
  uint32_t target_local = (uint32_t)loc[0];
  lance__table__blob_reuse_index__free_unpacked(b, NULL);
  free(loc), free(phys);
  /* the repacked pack sits in the old file's own directory */
  char **own;
  size_t n_own;
  ck_assert_int_eq(bri_list_dir(old_dir, &own, &n_own, &err), 0);
  ck_assert_uint_eq(n_own, 1);
  char *own_file = bri_path_join(old_dir, own[0]);
  uint64_t frag_id = of->id, version = m->pb->version, rows = of->physical_rows;
  bri_manifest_free(m);
  bri_table_close(t);

  /* old enough that a concurrent cleanup could take a link of it for garbage */
  char *cmd = bri_strdupf("find '%s' -exec touch -h -d 2020-01-01 {} +", root);
  ck_assert_int_eq(system(cmd), 0);
  free(cmd);
  time_t start = time(NULL);
  bri_materialize_report rep;
  ck_assert_msg(bri_materialize_table(root, NULL, NULL, &rep, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(rep.commits, 1);
  ck_assert_uint_eq(rep.data_files, 1);
  ck_assert_uint_eq(rep.read_version, version);
  ck_assert_uint_eq(rep.version, version + 1);
  ck_assert_uint_eq(rep.links, 3); /* data file, one BRI target, one own pack */
  ck_assert_uint_eq(rep.copies, 0);

  m = latest(&t);
  ck_assert_uint_eq(m->pb->version, version + 1);
  ck_assert(!bri_manifest_has_bri(m->pb));
  ck_assert_uint_eq(m->pb->reader_feature_flags & BRI_FLAG_BLOB_REUSE_INDEX, 0);
  ck_assert_uint_eq(m->pb->writer_feature_flags & BRI_FLAG_BLOB_REUSE_INDEX, 0);
  /* a DataReplacement of the same fragment: id, rows, deletion file kept */
  ck_assert_ptr_nonnull(m->txn);
  ck_assert_int_eq(m->txn->operation_case, LANCE__TABLE__TRANSACTION__OPERATION_DATA_REPLACEMENT);
  ck_assert_uint_eq(m->txn->read_version, version);
  ck_assert_uint_eq(m->txn->data_replacement->n_replacements, 1);
  ck_assert_uint_eq(m->txn->data_replacement->replacements[0]->fragment_id, frag_id);
  const Lance__Table__DataFragment *nf = m->pb->fragments[0];
  ck_assert_uint_eq(m->pb->n_fragments, 1);
  ck_assert_uint_eq(nf->id, frag_id);
  ck_assert_uint_eq(nf->physical_rows, rows);
  const Lance__Table__DataFile *ndf = nf->files[0];
  ck_assert_str_eq(m->txn->data_replacement->replacements[0]->new_file->path, ndf->path);
  char *new_path, *new_dir;
  ck_assert_int_eq(bri_table_datafile_path(t, m->pb, ndf, &new_path, &err), 0);
  ck_assert_int_eq(bri_table_sidecar_dir(t, m->pb, ndf, &new_dir, &err), 0);
  ck_assert_str_ne(new_path, old_path);
  ck_assert_uint_eq(inode(new_path), inode(old_path)); /* a hard link: no byte copied */
  struct stat st;
  ck_assert_int_eq(stat(new_path, &st), 0);
  ck_assert_int_ge(st.st_mtime, start - 1); /* and dated now, not 2020 */
  bri_blob_file_name(target_local, name);
  char *linked_target = bri_path_join(new_dir, name);
  ck_assert_uint_eq(inode(linked_target), inode(target));
  char *linked_own = bri_path_join(new_dir, own[0]);
  ck_assert_uint_eq(inode(linked_own), inode(own_file));
  bri_manifest_free(m);
  bri_table_close(t);

  char *after = digest(root);
  ck_assert_str_eq(before, after);
  assert_verifies();
  /* nothing left to do */
  ck_assert_int_eq(bri_materialize_table(root, NULL, NULL, &rep, &err), 0);
  ck_assert_uint_eq(rep.commits, 0);
  ck_assert_uint_eq(rep.read_version, version + 1);
  bri_free_names(own, n_own);
  free(before), free(after), free(old_path), free(old_dir), free(target), free(own_file);
  free(new_path), free(new_dir), free(linked_target), free(linked_own);
  teardown();
}
END_TEST

START_TEST(test_materialize_copy_mode_and_dry_run) {
  copy_fixture("tables/blobs.lance");
  char *before = digest(root);
  compact(0.3);
  char *l0 = bri_tree_listing(root);
  bri_materialize_options o;
  bri_materialize_options_default(&o);
  o.dry_run = true;
  bri_materialize_report rep;
  bri_error err;
  ck_assert_msg(bri_materialize_table(root, &o, NULL, &rep, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(rep.commits, 0);
  ck_assert_uint_eq(rep.data_files, 1);
  ck_assert_uint_eq(rep.bri_files_left, 1);
  ck_assert_uint_eq(rep.links, 3); /* data file + pack + dedicated sidecar */
  char *l1 = bri_tree_listing(root);
  ck_assert_str_eq(l0, l1); /* a dry run creates nothing */
  o.dry_run = false;
  o.no_links = true;
  ck_assert_msg(bri_materialize_table(root, &o, NULL, &rep, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(rep.links, 0);
  ck_assert_uint_eq(rep.copies, 3);
  ck_assert_uint_gt(rep.bytes_copied, 6144);
  char *after = digest(root);
  ck_assert_str_eq(before, after);
  assert_verifies();
  free(before), free(after), free(l0), free(l1);
  teardown();
}
END_TEST

START_TEST(test_materialize_nothing_to_do) {
  copy_fixture("tables/blobs.lance");
  char *l0 = bri_tree_listing(root);
  bri_materialize_report rep;
  bri_error err;
  ck_assert_msg(bri_materialize_table(root, NULL, NULL, &rep, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(rep.commits, 0);
  ck_assert_uint_eq(rep.version, 0);
  char *l1 = bri_tree_listing(root);
  ck_assert_str_eq(l0, l1);
  free(l0), free(l1);
  teardown();
}
END_TEST

START_TEST(test_materialize_missing_target_changes_nothing) {
  copy_fixture("tables/blobs.lance");
  compact(0.3);
  bri_table *t;
  bri_manifest *m = latest(&t);
  /* remove the last sidecar the BRI names */
  char *victim = NULL;
  bri_error err;
  Lance__Table__BlobReuseIndex *b;
  ck_assert_int_eq(bri_datafile_get_bri(m->pb->fragments[0]->files[0], m->path, &b, &err), 1);
  const Lance__Table__BlobReuseSource *s = b->sources[b->n_sources - 1];
  uint64_t *phys;
  size_t np;
  ck_assert_int_eq(bri_u64array_decode(s->physical_ids, 100, &phys, &np, &err), 0);
  char name[BRI_BLOB_NAME_LEN];
  bri_blob_file_name((uint32_t)phys[np - 1], name);
  victim = bri_strdupf("%s/data/%s/%s", root, s->blob_dir, name);
  free(phys);
  lance__table__blob_reuse_index__free_unpacked(b, NULL);
  uint64_t version = m->pb->version;
  bri_manifest_free(m);
  bri_table_close(t);
  ck_assert_int_eq(unlink(victim), 0);
  char *l0 = bri_tree_listing(root);
  bri_materialize_report rep;
  ck_assert_int_eq(bri_materialize_table(root, NULL, NULL, &rep, &err), BRI_ECORRUPT);
  ck_assert_msg(strstr(err.msg, victim) && strstr(err.msg, "is missing"), "%s", err.msg);
  char *l1 = bri_tree_listing(root);
  ck_assert_str_eq(l0, l1); /* every file it made is gone again, nothing else touched */
  m = latest(&t);
  ck_assert_uint_eq(m->pb->version, version);
  bri_manifest_free(m);
  bri_table_close(t);
  free(victim), free(l0), free(l1);
  teardown();
}
END_TEST

typedef struct jstate {
  char **paths;
  size_t n;
  int fail_after;   /* fail the call with this index (-1: never) */
  bool rewrite_once; /* commit a conflicting Rewrite at the first call */
} jstate;

static Lance__Table__DataFragment *copy_fragment(const Lance__Table__DataFragment *from) {
  size_t len = lance__table__data_fragment__get_packed_size(from);
  uint8_t *buf = malloc(len);
  lance__table__data_fragment__pack(from, buf);
  Lance__Table__DataFragment *f = lance__table__data_fragment__unpack(NULL, len, buf);
  free(buf);
  return f;
}

/* A concurrent writer: rewrites the only fragment into an identical one
 * with a new id (same data file, same BRI). */
static void concurrent_rewrite(void) {
  bri_table *t;
  bri_manifest *m = latest(&t);
  Lance__Table__DataFragment *nf = copy_fragment(m->pb->fragments[0]);
  nf->id = 0;
  uint64_t old_id = m->pb->fragments[0]->id, v;
  bri_rewrite_group g = {.n_old = 1, .old_ids = &old_id, .n_new = 1, .new_frags = &nf};
  bri_rewrite rw = {.read_version = m->pb->version, .n_groups = 1, .groups = &g};
  bri_error err;
  ck_assert_msg(bri_rewrite_commit(t, &rw, 3, &v, &err) == 0, "%s", err.msg);
  lance__table__data_fragment__free_unpacked(nf, NULL);
  bri_manifest_free(m);
  bri_table_close(t);
}

static int test_journal(void *user, const char *path, unsigned flags, bri_error *err) {
  (void)flags;
  jstate *j = user;
  if (j->fail_after >= 0 && (int)j->n == j->fail_after)
    return bri_error_set(err, BRI_EIO, "journal refused %s", path);
  if (j->rewrite_once && j->n == 0) concurrent_rewrite();
  j->paths = realloc(j->paths, (j->n + 1) * sizeof *j->paths);
  j->paths[j->n++] = strdup(path);
  return 0;
}

START_TEST(test_materialize_journal_failure_rolls_back) {
  copy_fixture("tables/blobs.lance");
  compact(0.3);
  char *l0 = bri_tree_listing(root);
  jstate j = {NULL, 0, 3, false};
  bri_materialize_options o;
  bri_materialize_options_default(&o);
  const bri_hooks hooks = {.journal = test_journal, .user = &j};
  bri_materialize_report rep;
  bri_error err;
  ck_assert_int_eq(bri_materialize_table(root, &o, &hooks, &rep, &err), BRI_EIO);
  ck_assert_msg(strstr(err.msg, "journal refused") != NULL, "%s", err.msg);
  ck_assert_uint_eq(j.n, 3); /* data file, its directory, one sidecar: all removed again */
  for (size_t i = 0; i < j.n; i++) {
    ck_assert_msg(access(j.paths[i], F_OK) != 0, "%s survived the rollback", j.paths[i]);
    free(j.paths[i]);
  }
  free(j.paths);
  ck_assert_uint_eq(rep.commits, 0);
  char *l1 = bri_tree_listing(root);
  ck_assert_str_eq(l0, l1);
  free(l0), free(l1);
  teardown();
}
END_TEST

START_TEST(test_materialize_conflict_replans) {
  copy_fixture("tables/blobs.lance");
  char *before = digest(root);
  compact(0.3);
  jstate j = {NULL, 0, -1, true};
  bri_materialize_options o;
  bri_materialize_options_default(&o);
  const bri_hooks hooks = {.journal = test_journal, .user = &j};
  bri_materialize_report rep;
  bri_error err;
  ck_assert_msg(bri_materialize_table(root, &o, &hooks, &rep, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(rep.commits, 1);
  ck_assert_uint_eq(rep.data_files, 1);
  /* round 1 (4 paths: file, dir, 2 sidecars) lost to the rewrite and was
   * removed; round 2 committed its own paths */
  ck_assert_uint_eq(j.n, 8);
  for (size_t i = 0; i < 4; i++) ck_assert_msg(access(j.paths[i], F_OK) != 0, "%s survived", j.paths[i]);
  for (size_t i = 4; i < 8; i++) ck_assert_msg(access(j.paths[i], F_OK) == 0, "%s missing", j.paths[i]);
  for (size_t i = 0; i < j.n; i++) free(j.paths[i]);
  free(j.paths);
  bri_table *t;
  bri_manifest *m = latest(&t);
  ck_assert(!bri_manifest_has_bri(m->pb));
  ck_assert_int_eq(m->txn->operation_case, LANCE__TABLE__TRANSACTION__OPERATION_DATA_REPLACEMENT);
  ck_assert_uint_eq(m->txn->data_replacement->replacements[0]->fragment_id, m->pb->fragments[0]->id);
  bri_manifest_free(m);
  bri_table_close(t);
  char *after = digest(root);
  ck_assert_str_eq(before, after);
  free(before), free(after);
  teardown();
}
END_TEST

/* --managed on the bri compaction that repacked into its own directory:
 * a dry run only says it would switch; then the switch (UpdateConfig), one
 * DataReplacement whose file has only Managed and Inline descriptors,
 * nothing linked, copied or placed beside it, no BRI left, the flag in
 * both words, the same bytes read back. */
START_TEST(test_materialize_managed) {
  copy_fixture("tables/blobs.lance");
  char *before = digest(root);
  compact(2.0);
  char *l0 = bri_tree_listing(root);
  bri_materialize_options o;
  bri_materialize_options_default(&o);
  o.managed = o.dry_run = true;
  bri_materialize_report rep;
  bri_error err;
  ck_assert_msg(bri_materialize_table(root, &o, NULL, &rep, &err) == 0, "%s", err.msg);
  ck_assert(rep.managed_switch);
  ck_assert_uint_eq(rep.managed_switch_version, 0);
  ck_assert_uint_eq(rep.data_files, 1);
  char *l1 = bri_tree_listing(root);
  ck_assert_str_eq(l0, l1);
  o.dry_run = false;
  bri_table *t;
  bri_manifest *m = latest(&t);
  uint64_t v = m->pb->version;
  bri_manifest_free(m);
  bri_table_close(t);
  ck_assert_msg(bri_materialize_table(root, &o, NULL, &rep, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(rep.managed_switch_version, v + 1);
  ck_assert_uint_eq(rep.version, v + 2);
  ck_assert_uint_eq(rep.commits, 1);
  ck_assert_uint_eq(rep.links + rep.copies + rep.sidecars + rep.bytes_copied + rep.bytes_linked, 0);
  ck_assert_uint_gt(rep.values_adopted, 0);
  m = latest(&t);
  ck_assert(!bri_manifest_has_bri(m->pb));
  ck_assert(m->pb->reader_feature_flags & m->pb->writer_feature_flags & BRI_FLAG_MANAGED_BLOBS);
  ck_assert(!(m->pb->reader_feature_flags & BRI_FLAG_BLOB_REUSE_INDEX));
  /* the new data file alone: no sidecar directory beside it */
  char *stem = strndup(m->pb->fragments[0]->files[0]->path, strlen(m->pb->fragments[0]->files[0]->path) - 6);
  struct stat st;
  ck_assert_int_ne(stat(bri_test_at(root, "data"), &st), -1);
  char *dir = bri_strdupf("%s/data/%s", root, stem);
  ck_assert_int_eq(stat(dir, &st), -1);
  Lance__Table__Transaction *txn;
  ck_assert_int_eq(bri_table_load_transaction(t, v + 1, &txn, &err), 0);
  ck_assert_int_eq(txn->operation_case, LANCE__TABLE__TRANSACTION__OPERATION_UPDATE_CONFIG);
  lance__table__transaction__free_unpacked(txn, NULL);
  /* every descriptor: Inline, or Managed */
  bri_fragment_reader *rd;
  int32_t blob_field = -1;
  for (size_t i = 0; i < m->pb->n_fields; i++)
    if (!strcmp(m->pb->fields[i]->name, "blob")) blob_field = m->pb->fields[i]->id;
  ck_assert_msg(bri_fragment_open(t, m, m->pb->fragments[0], &rd, &err) == 0, "%s", err.msg);
  struct ArrowArray ba;
  struct ArrowSchema bs;
  ck_assert_msg(bri_fragment_read_field(rd, blob_field, &ba, &bs, &err) == 0, "%s", err.msg);
  int managed = 0;
  for (int64_t i = 0; i < ba.length; i++) {
    bri_blob_desc d;
    bool is_null;
    ck_assert_int_eq(bri_blob_desc_get(&bs, &ba, i, &d, &is_null, &err), 0);
    if (is_null) continue;
    ck_assert_msg(d.kind == BRI_BLOB_INLINE || d.kind == BRI_BLOB_MANAGED, "row %lld: kind %u", (long long)i, d.kind);
    managed += d.kind == BRI_BLOB_MANAGED;
  }
  ck_assert_int_eq(managed, (int)rep.values_adopted);
  bri_arrow_array_release(&ba);
  bri_arrow_schema_release(&bs);
  bri_fragment_close(rd);
  bri_manifest_free(m);
  bri_table_close(t);
  char *after = digest(root);
  ck_assert_str_eq(before, after);
  assert_verifies();
  free(before), free(after), free(l0), free(l1), free(stem), free(dir);
  teardown();
}
END_TEST

/* --managed on a fragment whose BRI file is one of two data files: refused
 * before the switch, nothing written. */
START_TEST(test_materialize_managed_refuses_two_files) {
  copy_fixture("tables/blobs.lance");
  compact(0.3);
  bri_table *t;
  bri_manifest *m = latest(&t);
  Lance__Table__DataFragment *f = m->pb->fragments[0];
  Lance__Table__DataFile extra = LANCE__TABLE__DATA_FILE__INIT, **files = calloc(2, sizeof *files);
  extra.path = "extra.lance"; /* (a column added later, as far as the manifest tells) */
  extra.has_file_major_version = extra.has_file_minor_version = 1;
  extra.file_major_version = 2, extra.file_minor_version = 2;
  files[0] = f->files[0], files[1] = &extra;
  Lance__Table__DataFile **was = f->files;
  f->files = files, f->n_files = 2;
  Lance__Table__Transaction txn = LANCE__TABLE__TRANSACTION__INIT;
  Lance__Table__Transaction__ReserveFragments rf = LANCE__TABLE__TRANSACTION__RESERVE_FRAGMENTS__INIT;
  txn.has_read_version = 1, txn.read_version = m->pb->version;
  txn.operation_case = LANCE__TABLE__TRANSACTION__OPERATION_RESERVE_FRAGMENTS, txn.reserve_fragments = &rf;
  bri_error err;
  ck_assert_msg(bri_commit(t, m->pb, &txn, m->indices, m->pb->version + 1, NULL, &err) == 0, "%s", err.msg);
  free(txn.uuid);
  f->files = was, f->n_files = 1;
  free(files);
  bri_manifest_free(m);
  bri_table_close(t);
  char *l0 = bri_tree_listing(root);
  bri_materialize_options o;
  bri_materialize_options_default(&o);
  o.managed = true;
  bri_materialize_report rep;
  ck_assert_int_eq(bri_materialize_table(root, &o, NULL, &rep, &err), BRI_EUNSUPPORTED);
  ck_assert_msg(strstr(err.msg, "holds 2 data files") && strstr(err.msg, "_versions/"), "%s", err.msg);
  char *l1 = bri_tree_listing(root);
  ck_assert_str_eq(l0, l1);
  free(l0), free(l1);
  teardown();
}
END_TEST

static Suite *materialize_suite(void) {
  Suite *s = suite_create("materialize");
  TCase *tc = tcase_create("materialize");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_materialize_replaces_bri_file);
  tcase_add_test(tc, test_materialize_copy_mode_and_dry_run);
  tcase_add_test(tc, test_materialize_nothing_to_do);
  tcase_add_test(tc, test_materialize_missing_target_changes_nothing);
  tcase_add_test(tc, test_materialize_journal_failure_rolls_back);
  tcase_add_test(tc, test_materialize_conflict_replans);
  tcase_add_test(tc, test_materialize_managed);
  tcase_add_test(tc, test_materialize_managed_refuses_two_files);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(materialize_suite)
