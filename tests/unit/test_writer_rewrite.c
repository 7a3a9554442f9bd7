/* test_writer_rewrite.c: rewriting every data file of a real Lance table with
 * brid's writer, committing the result, and reading it back.
 *
 * Three ways to rewrite, all committed as a Rewrite transaction:
 *   leaf   every page decoded (bri_page_decode) and re-encoded
 *          (bri_file_writer_append_leaf): same fragments, same physical rows,
 *          deletion files kept, new data files;
 *   copy   pages copied verbatim where page copy allows, Blob v2 descriptor
 *          columns re-encoded with their Inline payloads copied;
 *   arrow  each fragment read through the reader (visible rows, Arrow C Data,
 *          slices of 700 rows) and written with bri_file_writer_append into
 *          one new file: new fragment ids, no deletion files (a compaction).
 * Packed/Dedicated blob sidecars of a rewritten file are hard-linked under
 * the new file's stem (the "link" strategy). Each test hashes every
 * top-level column through brid's reader before and after (payload bytes of
 * blobs included) and requires equal hashes.
 *
 * Without environment variables the fixture tables are rewritten in copies.
 * With BRI_REWRITE_TABLES (colon-separated table roots) and BRI_REWRITE_MODE
 * (leaf|copy|arrow) those tables are rewritten in place; the interop test
 * (tests/interop/test_write_roundtrip.sh) then checks them with LanceDB.
 * BRI_REWRITE_STATS=1 prints what was done. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lance/encoding/page.h"
#include "lance/file/datafile.h"
#include "scan/scan.h"
#include "lance/file/pagecopy.h"
#include "lance/dataset/reader.h"
#include "lance/file/writer.h"
#include "lance/table/commit.h"
#include "lance/core/schema.h"
#include "lance/table/table.h"
#include "testutil.h"
#include "util/random.h"
#include "util/fsutil.h"

typedef enum { RW_LEAF, RW_COPY, RW_ARROW } rw_mode;

typedef struct rw_stats {
  uint64_t files, columns_copied, columns_encoded, bytes_written, rows;
  double seconds;
} rw_stats;

/* Writer options for every rewrite (BRI_REWRITE_PAGE_BYTES: a small page
 * target, to get many pages per column). */
static bri_file_writer_options g_opt;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- helpers ------------------------------------------------------------------- */

static Lance__Table__DataFragment *clone_frag(const Lance__Table__DataFragment *f) {
  size_t n = lance__table__data_fragment__get_packed_size(f);
  uint8_t *b = malloc(n ? n : 1);
  lance__table__data_fragment__pack(f, b);
  Lance__Table__DataFragment *c = lance__table__data_fragment__unpack(NULL, n, b);
  free(b);
  ck_assert_ptr_nonnull(c);
  return c;
}

static char *new_stem(void) {
  char u[37];
  bri_uuid_v4(u);
  return bri_strdupf("brid-%s", u);
}

/* Hard-links every file of src_dir into dst_dir (created); no src_dir: nothing. */
static int link_dir(const char *src_dir, const char *dst_dir, bri_error *err) {
  DIR *d = opendir(src_dir);
  if (!d) return errno == ENOENT ? 0 : bri_error_errno(err, "opening", src_dir);
  if (mkdir(dst_dir, 0755) != 0 && errno != EEXIST) {
    closedir(d);
    return bri_error_errno(err, "creating", dst_dir);
  }
  struct dirent *e;
  int rc = 0;
  while (!rc && (e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char *a = bri_path_join(src_dir, e->d_name), *b = bri_path_join(dst_dir, e->d_name);
    if (link(a, b) != 0 && errno != EEXIST) rc = bri_error_errno(err, "linking", b);
    free(a), free(b);
  }
  closedir(d);
  return rc;
}

static void set_datafile(Lance__Table__DataFile *df, const char *stem, const bri_file_result *res) {
  free(df->path);
  df->path = bri_strdupf("%s.lance", stem);
  free(df->fields);
  free(df->column_indices);
  df->n_fields = df->n_column_indices = res->n_columns;
  df->fields = malloc(res->n_columns * sizeof *df->fields);
  df->column_indices = malloc(res->n_columns * sizeof *df->column_indices);
  memcpy(df->fields, res->fields, res->n_columns * sizeof *df->fields);
  memcpy(df->column_indices, res->column_indices, res->n_columns * sizeof *df->column_indices);
  df->has_file_major_version = df->has_file_minor_version = 1;
  df->file_major_version = res->major;
  df->file_minor_version = res->minor;
  df->has_file_size_bytes = 1;
  df->file_size_bytes = res->file_size;
  df->has_base_id = 0;
  df->base_id = 0;
}

/* ---- leaf / copy: one data file -------------------------------------------------- */

static int payload_from_datafile(void *ctx, size_t column, uint64_t index, uint64_t position,
                                 uint64_t size, uint8_t *dst, bri_error *err) {
  (void)column, (void)index;
  return bri_datafile_read_into(ctx, position, size, dst, err);
}

static int rewrite_datafile(bri_table *t, Lance__Table__Manifest *m, Lance__Table__DataFile *df,
                            rw_mode mode, rw_stats *st, bri_error *err) {
  char *src_path = NULL, *data_dir = NULL, *stem = new_stem(), *dst_path = NULL;
  char *src_side = NULL, *dst_side = NULL;
  bri_datafile *src = NULL;
  bri_file_writer *w = NULL;
  bri_file_result res = {0};
  int rc;
  if ((rc = bri_table_datafile_path(t, m, df, &src_path, err))) goto out;
  if ((rc = bri_table_data_dir(t, m, false, 0, &data_dir, err))) goto out;
  if ((rc = bri_datafile_open(NULL, src_path, &src, err))) goto out;
  dst_path = bri_strdupf("%s/%s.lance", data_dir, stem);
  uint16_t major, minor;
  bri_datafile_version(src, &major, &minor);
  const Lance__File__FileDescriptor *fd = bri_datafile_descriptor(src);
  if ((rc = bri_file_writer_open(NULL, dst_path, minor, fd->schema->fields, fd->schema->n_fields, &g_opt,
                                 &w, err)))
    goto out;
  for (size_t c = 0; c < bri_file_writer_num_columns(w); c++) {
    bri_error why;
    if (mode == RW_COPY && bri_pagecopy_check(w, c, src, c, &why) == 0) {
      if ((rc = bri_file_writer_copy_column(w, c, src, c, err))) goto out;
      st->columns_copied++;
      continue;
    }
    const bri_column *col = bri_datafile_column(src, c);
    for (size_t p = 0; p < col->n_pages; p++) {
      bri_leaf_page lp;
      if ((rc = bri_page_decode(src, c, p, bri_file_writer_column_type(w, c), &lp, err))) goto out;
      rc = bri_file_writer_append_leaf(w, c, &lp, payload_from_datafile, src, err);
      bri_leaf_page_dispose(&lp);
      if (rc) goto out;
    }
    st->columns_encoded++;
  }
  if ((rc = bri_file_writer_finish(w, &res, err))) goto out;
  if ((rc = bri_table_sidecar_dir(t, m, df, &src_side, err))) goto out;
  dst_side = bri_path_join(data_dir, stem);
  if ((rc = link_dir(src_side, dst_side, err))) goto out;
  st->files++;
  st->bytes_written += res.file_size;
  st->rows += res.num_rows;
  set_datafile(df, stem, &res);
out:
  bri_file_result_dispose(&res);
  bri_file_writer_free(w);
  bri_datafile_close(src);
  free(src_path), free(data_dir), free(stem), free(dst_path), free(src_side), free(dst_side);
  return rc;
}

/* ---- arrow: one fragment --------------------------------------------------------------- */

typedef struct arrow_ctx {
  bri_fragment_reader *r;
  bri_file_writer *w;
} arrow_ctx;

static int payload_from_fragment(void *ctx, size_t column, uint64_t index, uint64_t position,
                                 uint64_t size, uint8_t *dst, bri_error *err) {
  (void)index;
  arrow_ctx *a = ctx;
  bri_datafile *df = bri_fragment_field_file(a->r, bri_file_writer_column_field(a->w, column));
  if (!df) return bri_error_set(err, BRI_ENOTFOUND, "no data file stores blob column %zu", column);
  return bri_datafile_read_into(df, position, size, dst, err);
}

static int rewrite_fragment_arrow(bri_table *t, Lance__Table__Manifest *m,
                                  Lance__Table__DataFragment *frag, Lance__Table__DataFragment **out,
                                  rw_stats *st, bri_error *err) {
  bri_manifest mm = {.pb = m};
  bri_fragment_reader *r = NULL;
  bri_file_writer *w = NULL;
  bri_file_result res = {0};
  char *data_dir = NULL, *stem = new_stem(), *dst_path = NULL;
  size_t ntop = 0;
  int32_t top_ids[256];
  struct ArrowArray arrs[256];
  struct ArrowSchema schs[256];
  const struct ArrowArray *ap[256];
  int rc;
  memset(arrs, 0, sizeof arrs);
  memset(schs, 0, sizeof schs);
  for (size_t i = 0; i < m->n_fields; i++)
    if (m->fields[i]->parent_id == -1 && ntop < 256) top_ids[ntop++] = m->fields[i]->id;
  if ((rc = bri_fragment_open(t, &mm, frag, &r, err))) goto out;
  if ((rc = bri_table_data_dir(t, m, false, 0, &data_dir, err))) goto out;
  dst_path = bri_strdupf("%s/%s.lance", data_dir, stem);
  uint16_t minor = frag->n_files ? (uint16_t)frag->files[0]->file_minor_version : 2;
  if ((rc = bri_file_writer_open(NULL, dst_path, minor, m->fields, m->n_fields, &g_opt, &w, err))) goto out;
  arrow_ctx ac = {r, w};
  uint64_t rows = bri_fragment_num_rows(r);
  for (uint64_t first = 0; first < rows;) {
    uint64_t cnt = rows - first < 700 ? rows - first : 700;
    for (size_t i = 0; i < ntop && !rc; i++) {
      rc = bri_fragment_read_rows(r, top_ids[i], first, cnt, &arrs[i], &schs[i], err);
      ap[i] = &arrs[i];
    }
    if (!rc) rc = bri_file_writer_append(w, ap, ntop, payload_from_fragment, &ac, err);
    for (size_t i = 0; i < ntop; i++) {
      if (arrs[i].release) arrs[i].release(&arrs[i]);
      if (schs[i].release) schs[i].release(&schs[i]);
    }
    if (rc) goto out;
    first += cnt;
  }
  if ((rc = bri_file_writer_finish(w, &res, err))) goto out;
  /* sidecars of every Blob v2 column's source file, under the new stem */
  for (size_t c = 0; c < res.n_columns; c++) {
    if (!bri_file_writer_column_is_blob(w, c)) continue;
    const Lance__Table__DataFile *sdf = bri_fragment_field_datafile(r, res.fields[c]);
    if (!sdf) continue;
    char *side = NULL, *dst_side = bri_path_join(data_dir, stem);
    rc = bri_table_sidecar_dir(t, m, sdf, &side, err);
    if (!rc) rc = link_dir(side, dst_side, err);
    free(side), free(dst_side);
    if (rc) goto out;
  }
  Lance__Table__DataFragment *nf = malloc(sizeof *nf);
  lance__table__data_fragment__init(nf);
  nf->n_files = 1;
  nf->files = malloc(sizeof *nf->files);
  nf->files[0] = malloc(sizeof **nf->files);
  lance__table__data_file__init(nf->files[0]);
  set_datafile(nf->files[0], stem, &res);
  nf->has_physical_rows = 1;
  nf->physical_rows = res.num_rows;
  *out = nf;
  st->files++;
  st->columns_encoded += res.n_columns;
  st->bytes_written += res.file_size;
  st->rows += res.num_rows;
out:
  bri_file_result_dispose(&res);
  bri_file_writer_free(w);
  bri_fragment_close(r);
  free(data_dir), free(stem), free(dst_path);
  return rc;
}

/* A fragment built by rewrite_fragment_arrow (plain mallocs). */
static void free_built_frag(Lance__Table__DataFragment *f) {
  Lance__Table__DataFile *df = f->files[0];
  free(df->path), free(df->fields), free(df->column_indices), free(df);
  free(f->files);
  free(f);
}

/* ---- the whole table -------------------------------------------------------------------- */

static int rewrite_table(const char *root, rw_mode mode, rw_stats *st, bri_error *err) {
  bri_table *t = NULL;
  bri_manifest *m = NULL;
  int rc;
  double t0 = now_s();
  memset(st, 0, sizeof *st);
  if ((rc = bri_table_open(root, &t, err))) return rc;
  if ((rc = bri_table_load(t, 0, &m, err))) goto out;
  Lance__Table__Manifest *pb = m->pb;
  size_t nf = pb->n_fragments;
  Lance__Table__DataFragment **old = calloc(nf ? nf : 1, sizeof *old);
  Lance__Table__DataFragment **neu = calloc(nf ? nf : 1, sizeof *neu);
  Lance__Table__Transaction__Rewrite__RewriteGroup **groups = calloc(nf ? nf : 1, sizeof *groups);
  for (size_t i = 0; i < nf && !rc; i++) {
    old[i] = clone_frag(pb->fragments[i]);
    if (mode == RW_ARROW) {
      rc = rewrite_fragment_arrow(t, pb, pb->fragments[i], &neu[i], st, err);
    } else {
      for (size_t k = 0; k < pb->fragments[i]->n_files && !rc; k++)
        rc = rewrite_datafile(t, pb, pb->fragments[i]->files[k], mode, st, err);
    }
  }
  Lance__Table__DataFragment **orig = NULL;
  if (!rc && mode == RW_ARROW) {
    /* the new fragments take the old ones' places, with fresh ids */
    orig = malloc((nf ? nf : 1) * sizeof *orig);
    for (size_t i = 0; i < nf; i++) {
      orig[i] = pb->fragments[i];
      pb->fragments[i] = neu[i];
    }
    bri_manifest_assign_fragment_ids(pb, neu, nf);
  }
  if (!rc) {
    Lance__Table__Transaction txn = LANCE__TABLE__TRANSACTION__INIT;
    Lance__Table__Transaction__Rewrite rw = LANCE__TABLE__TRANSACTION__REWRITE__INIT;
    Lance__Table__Transaction__Rewrite__RewriteGroup *gs =
        calloc(nf ? nf : 1, sizeof *gs);
    for (size_t i = 0; i < nf; i++) {
      lance__table__transaction__rewrite__rewrite_group__init(&gs[i]);
      gs[i].n_old_fragments = gs[i].n_new_fragments = 1;
      gs[i].old_fragments = &old[i];
      gs[i].new_fragments = &pb->fragments[i];
      groups[i] = &gs[i];
    }
    rw.n_groups = nf;
    rw.groups = groups;
    txn.has_read_version = 1;
    txn.read_version = pb->version;
    txn.operation_case = LANCE__TABLE__TRANSACTION__OPERATION_REWRITE;
    txn.rewrite = &rw;
    rc = bri_commit(t, pb, &txn, m->indices, pb->version + 1, NULL, err);
    free(txn.uuid);
    free(gs);
  }
  if (orig) /* the manifest gets its own fragments back before it is freed */
    for (size_t i = 0; i < nf; i++) pb->fragments[i] = orig[i];
  free(orig);
  if (mode == RW_ARROW)
    for (size_t i = 0; i < nf; i++)
      if (neu[i]) free_built_frag(neu[i]);
  for (size_t i = 0; i < nf; i++)
    if (old[i]) lance__table__data_fragment__free_unpacked(old[i], NULL);
  free(old), free(neu), free(groups);
out:
  bri_manifest_free(m);
  bri_table_close(t);
  st->seconds = now_s() - t0;
  return rc;
}

/* ---- hashing a table through brid's reader ------------------------------------------------ */

/* Rows and every top-level column's hash and null count, rows in scan order
 * (the rewrites keep that order), as one string (lib/scan/scan.h). */
static char *table_hashes(const char *root) {
  bri_scan_options o = {.key = "", .blob_bytes = true};
  json_t *r;
  bri_error err;
  ck_assert_msg(bri_scan_table(root, &o, &r, &err) == 0, "%s", err.msg);
  json_t *kept = json_pack("{s:O, s:O}", "rows", json_object_get(r, "rows"), "columns", json_object_get(r, "columns"));
  char *out = json_dumps(kept, JSON_SORT_KEYS);
  json_decref(kept);
  json_decref(r);
  return out;
}

/* Every data file of the latest version: opens, 64-aligned buffers, version. */
static void check_files(const char *root, const char *prefix) {
  bri_table *t;
  bri_manifest *m;
  bri_error err;
  ck_assert_msg(bri_table_open(root, &t, &err) == 0, "%s", err.msg);
  ck_assert_msg(bri_table_load(t, 0, &m, &err) == 0, "%s", err.msg);
  for (size_t k = 0; k < m->pb->n_fragments; k++)
    for (size_t f = 0; f < m->pb->fragments[k]->n_files; f++) {
      Lance__Table__DataFile *df = m->pb->fragments[k]->files[f];
      ck_assert_msg(strncmp(df->path, prefix, strlen(prefix)) == 0, "%s not rewritten", df->path);
      char *p;
      ck_assert_int_eq(bri_table_datafile_path(t, m->pb, df, &p, &err), 0);
      bri_datafile *d;
      ck_assert_msg(bri_datafile_open(NULL, p, &d, &err) == 0, "%s", err.msg);
      ck_assert_uint_eq(bri_datafile_size(d), df->file_size_bytes);
      uint16_t ma, mi;
      bri_datafile_version(d, &ma, &mi);
      ck_assert_uint_eq(ma, df->file_major_version);
      ck_assert_uint_eq(mi, df->file_minor_version);
      ck_assert_uint_eq(bri_datafile_num_columns(d), df->n_column_indices);
      for (size_t c = 0; c < bri_datafile_num_columns(d); c++) {
        const bri_column *col = bri_datafile_column(d, c);
        for (size_t pg = 0; pg < col->n_pages; pg++)
          for (size_t b = 0; b < col->pages[pg].n_buffers; b++)
            ck_assert_uint_eq(col->pages[pg].buffer_offsets[b] % 64, 0);
      }
      bri_datafile_close(d);
      free(p);
    }
  bri_manifest_free(m);
  bri_table_close(t);
}

static void roundtrip(const char *fixture, rw_mode mode) {
  char *tmp = bri_tmpdir();
  char *src = bri_fixture(fixture);
  char *root = bri_path_join(tmp, "t.lance");
  bri_copytree(src, root);
  char *before = table_hashes(root);
  rw_stats st;
  bri_error err;
  int rc = rewrite_table(root, mode, &st, &err);
  ck_assert_msg(rc == 0, "%s (mode %d): %s", fixture, (int)mode, err.msg);
  ck_assert_uint_gt(st.files, 0);
  if (mode == RW_COPY) ck_assert_uint_gt(st.columns_copied, 0);
  check_files(root, "brid-");
  char *after = table_hashes(root);
  ck_assert_msg(strcmp(before, after) == 0, "%s (mode %d): hashes differ\nbefore:\n%s\nafter:\n%s",
                fixture, (int)mode, before, after);
  free(before), free(after);
  bri_rmtree(tmp);
  free(tmp), free(src), free(root);
}

START_TEST(test_rewrite_plain_leaf) { roundtrip("tables/plain.lance", RW_LEAF); }
END_TEST
START_TEST(test_rewrite_plain_copy) { roundtrip("tables/plain.lance", RW_COPY); }
END_TEST
START_TEST(test_rewrite_plain_arrow) { roundtrip("tables/plain.lance", RW_ARROW); }
END_TEST
START_TEST(test_rewrite_v21_leaf) { roundtrip("tables/v21.lance", RW_LEAF); }
END_TEST
START_TEST(test_rewrite_v21_copy) { roundtrip("tables/v21.lance", RW_COPY); }
END_TEST
START_TEST(test_rewrite_v21_arrow) { roundtrip("tables/v21.lance", RW_ARROW); }
END_TEST
START_TEST(test_rewrite_blobs_leaf) { roundtrip("tables/blobs.lance", RW_LEAF); }
END_TEST
START_TEST(test_rewrite_blobs_copy) { roundtrip("tables/blobs.lance", RW_COPY); }
END_TEST
START_TEST(test_rewrite_blobs_arrow) { roundtrip("tables/blobs.lance", RW_ARROW); }
END_TEST
START_TEST(test_rewrite_stable_copy) { roundtrip("tables/stable.lance", RW_COPY); }
END_TEST

/* The interop hook: BRI_REWRITE_TABLES / BRI_REWRITE_MODE (see the top). */
START_TEST(test_rewrite_env_tables) {
  const char *list = getenv("BRI_REWRITE_TABLES"), *m = getenv("BRI_REWRITE_MODE");
  if (!list || !*list) return;
  rw_mode mode = RW_LEAF;
  if (m && !strcmp(m, "copy")) mode = RW_COPY;
  else if (m && !strcmp(m, "arrow")) mode = RW_ARROW;
  else if (m && strcmp(m, "leaf")) ck_abort_msg("BRI_REWRITE_MODE must be leaf, copy or arrow");
  const char *pb = getenv("BRI_REWRITE_PAGE_BYTES");
  if (pb) g_opt.page_target_bytes = strtoull(pb, NULL, 10);
  char *dup = strdup(list), *save = NULL;
  for (char *root = strtok_r(dup, ":", &save); root; root = strtok_r(NULL, ":", &save)) {
    char *before = table_hashes(root);
    rw_stats st;
    bri_error err;
    int rc = rewrite_table(root, mode, &st, &err);
    ck_assert_msg(rc == 0, "%s (%s): %s", root, m ? m : "leaf", err.msg);
    char *after = table_hashes(root);
    ck_assert_msg(strcmp(before, after) == 0, "%s (%s): hashes differ\nbefore:\n%s\nafter:\n%s",
                  root, m ? m : "leaf", before, after);
    if (getenv("BRI_REWRITE_STATS"))
      printf("rewrite %s %s: %llu files, %llu rows, %llu columns copied, %llu re-encoded, "
             "%llu bytes in %.3f s (%.1f MB/s)\n",
             m ? m : "leaf", root, (unsigned long long)st.files, (unsigned long long)st.rows,
             (unsigned long long)st.columns_copied, (unsigned long long)st.columns_encoded,
             (unsigned long long)st.bytes_written, st.seconds,
             st.seconds > 0 ? st.bytes_written / st.seconds / 1e6 : 0.0);
    free(before), free(after);
  }
  free(dup);
  memset(&g_opt, 0, sizeof g_opt);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("writer_rewrite");
  TCase *tc = tcase_create("fixtures");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_rewrite_plain_leaf);
  tcase_add_test(tc, test_rewrite_plain_copy);
  tcase_add_test(tc, test_rewrite_plain_arrow);
  tcase_add_test(tc, test_rewrite_v21_leaf);
  tcase_add_test(tc, test_rewrite_v21_copy);
  tcase_add_test(tc, test_rewrite_v21_arrow);
  tcase_add_test(tc, test_rewrite_blobs_leaf);
  tcase_add_test(tc, test_rewrite_blobs_copy);
  tcase_add_test(tc, test_rewrite_blobs_arrow);
  tcase_add_test(tc, test_rewrite_stable_copy);
  tcase_add_test(tc, test_rewrite_env_tables);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(suite)
