/* test_table.c: version naming schemes, version listing, table opening, base
 * path resolution, deletion and sidecar paths, tags and branches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lance/table/sidecar.h"
#include "lance/table/table.h"
#include "lance/table/version.h"
#include "testutil.h"
#include "util/fsutil.h"

START_TEST(test_parse_names) {
  uint64_t v;
  bri_naming s;
  ck_assert(bri_version_parse_name("18446744073709551614.manifest", &v, &s));
  ck_assert_uint_eq(v, 1);
  ck_assert_int_eq(s, BRI_NAMING_V2);
  ck_assert(bri_version_parse_name("00000000000000000000.manifest", &v, &s)); /* u64::MAX */
  ck_assert_uint_eq(v, UINT64_MAX);
  ck_assert(bri_version_parse_name("7.manifest", &v, &s));
  ck_assert_uint_eq(v, 7);
  ck_assert_int_eq(s, BRI_NAMING_V1);
  const char *not_versions[] = {"d18446744073709551614.manifest", "7.manifest#1", ".tmp_7.manifest",
                                "7.manifest-0a1b", "latest_version_hint.json", "0.manifest",
                                "07.manifest", "-1.manifest", "99999999999999999999999.manifest",
                                "18446744073709551615.manifest2", ".manifest", "x.manifest"};
  for (size_t i = 0; i < sizeof not_versions / sizeof not_versions[0]; i++)
    ck_assert_msg(!bri_version_parse_name(not_versions[i], &v, &s), "%s accepted", not_versions[i]);
  char *n = bri_version_file_name(5, BRI_NAMING_V2);
  ck_assert_str_eq(n, "18446744073709551610.manifest");
  free(n);
  n = bri_version_file_name(5, BRI_NAMING_V1);
  ck_assert_str_eq(n, "5.manifest");
  free(n);
}
END_TEST

/* Copies a fixture, renames its manifests to V1 names, adds junk that is not
 * a version, and checks the listing; then mixes schemes and expects refusal. */
START_TEST(test_v1_naming_and_mixed_schemes) {
  char *tmp = bri_tmpdir(), *src = bri_fixture("tables/v21.lance");
  char *root = bri_path_join(tmp, "t");
  bri_copytree(src, root);
  bri_table *t;
  bri_error err;
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  uint64_t latest = bri_table_latest_version(t);
  for (size_t i = 0; i < t->n_versions; i++) {
    char *from = bri_strdupf("%s/_versions/%s", root, t->versions[i].file);
    char *name = bri_version_file_name(t->versions[i].version, BRI_NAMING_V1);
    char *to = bri_strdupf("%s/_versions/%s", root, name);
    ck_assert_int_eq(rename(from, to), 0);
    free(from), free(name), free(to);
  }
  bri_table_close(t);
  char *junk = bri_strdupf("%s/_versions/d9223372036854775809.manifest", root);
  bri_write_bytes(junk, "x", 1);
  free(junk);
  junk = bri_strdupf("%s/_versions/3.manifest#1", root);
  bri_write_bytes(junk, "x", 1);
  free(junk);
  ck_assert_msg(bri_table_open(root, &t, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(t->naming, BRI_NAMING_V1);
  ck_assert_uint_eq(bri_table_latest_version(t), latest);
  bri_manifest *m;
  ck_assert_msg(bri_table_load(t, 0, &m, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(m->pb->version, latest);
  bri_manifest_free(m);
  ck_assert_int_eq(bri_table_load(t, latest + 1, &m, &err), BRI_ENOTFOUND);
  bri_table_close(t);
  char *v2 = bri_version_file_name(latest + 1, BRI_NAMING_V2);
  char *p = bri_strdupf("%s/_versions/%s", root, v2);
  bri_write_bytes(p, "x", 1);
  ck_assert_int_eq(bri_table_open(root, &t, &err), BRI_ECORRUPT);
  ck_assert_msg(strstr(err.msg, "both V1") != NULL, "%s", err.msg);
  free(v2), free(p);
  bri_rmtree(tmp);
  free(tmp), free(src), free(root);
}
END_TEST

/* A version noted after a commit joins the list in order, under the
 * table's naming, once; listing the directory again finds the same. */
START_TEST(test_note_version) {
  char *tmp = bri_tmpdir(), *src = bri_fixture("tables/v21.lance");
  char *root = bri_path_join(tmp, "t");
  bri_copytree(src, root);
  char *oldest = bri_strdupf("%s/_versions/18446744073709551614.manifest", root); /* version 1 */
  ck_assert_int_eq(unlink(oldest), 0);
  free(oldest);
  bri_table *t;
  bri_error err;
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  size_t n = t->n_versions;
  uint64_t latest = bri_table_latest_version(t), first = t->versions[0].version;
  ck_assert_int_eq(bri_table_note_version(t, latest + 1, &err), 0);
  ck_assert_int_eq(bri_table_note_version(t, latest + 1, &err), 0); /* already there */
  ck_assert_uint_eq(t->n_versions, n + 1);
  ck_assert_uint_eq(bri_table_latest_version(t), latest + 1);
  char *name = bri_version_file_name(latest + 1, t->naming);
  ck_assert_str_eq(t->versions[n].file, name);
  free(name);
  ck_assert_uint_eq(first, 2);
  ck_assert_int_eq(bri_table_note_version(t, 1, &err), 0); /* below the oldest listed: first */
  ck_assert_uint_eq(t->versions[0].version, 1);
  ck_assert_uint_eq(t->versions[1].version, 2);
  for (size_t i = 1; i < t->n_versions; i++) ck_assert_uint_lt(t->versions[i - 1].version, t->versions[i].version);
  ck_assert_int_eq(bri_table_refresh(t, &err), 0); /* nothing was written: the directory's own list */
  ck_assert_uint_eq(t->n_versions, n);
  ck_assert_uint_eq(bri_table_latest_version(t), latest);
  bri_table_close(t);
  bri_rmtree(tmp);
  free(tmp), free(src), free(root);
}
END_TEST

START_TEST(test_not_a_table) {
  char *tmp = bri_tmpdir();
  bri_table *t;
  bri_error err;
  ck_assert_int_eq(bri_table_open(tmp, &t, &err), BRI_ENOTFOUND);
  ck_assert_msg(strstr(err.msg, "no _versions") != NULL, "%s", err.msg);
  char *v = bri_path_join(tmp, "_versions");
  mkdir(v, 0755);
  ck_assert_int_eq(bri_table_open(tmp, &t, &err), BRI_ENOTFOUND);
  ck_assert_msg(strstr(err.msg, "no manifest") != NULL, "%s", err.msg);
  bri_rmtree(tmp);
  free(tmp), free(v);
}
END_TEST

START_TEST(test_paths_and_bases) {
  char *root = bri_fixture("tables/blobs.lance");
  bri_table *t;
  bri_manifest *m;
  bri_error err;
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  ck_assert_int_eq(bri_table_load(t, 0, &m, &err), 0);
  Lance__Table__DataFile *df = m->pb->fragments[0]->files[0];
  char *p, *side, *stem = bri_datafile_stem(df->path);
  ck_assert_int_eq(bri_table_datafile_path(t, m->pb, df, &p, &err), 0);
  char *want = bri_strdupf("%s/data/%s", t->root, df->path);
  ck_assert_str_eq(p, want);
  uint64_t size;
  ck_assert_int_eq(bri_file_size(p, &size, &err), 0);
  ck_assert_uint_eq(size, df->file_size_bytes);
  ck_assert_int_eq(bri_table_sidecar_dir(t, m->pb, df, &side, &err), 0);
  char *want_side = bri_strdupf("%s/data/%s", t->root, stem);
  ck_assert_str_eq(side, want_side);
  free(p), free(want), free(side), free(want_side), free(stem);
  /* deletion path follows {frag}-{read_version}-{id}.arrow and exists */
  Lance__Table__DataFragment *f = m->pb->fragments[0];
  ck_assert_ptr_nonnull(f->deletion_file);
  ck_assert_int_eq(bri_table_deletion_path(t, m->pb, f, &p, &err), 0);
  want = bri_strdupf("%s/_deletions/%llu-%llu-%llu.arrow", t->root, (unsigned long long)f->id,
                     (unsigned long long)f->deletion_file->read_version,
                     (unsigned long long)f->deletion_file->id);
  ck_assert_str_eq(p, want);
  ck_assert_int_eq(bri_file_size(p, &size, &err), 0);
  free(p), free(want);
  /* base paths: dataset root, plain directory, file:// URI, remote refused */
  Lance__Table__BasePath b1 = LANCE__TABLE__BASE_PATH__INIT, b2 = LANCE__TABLE__BASE_PATH__INIT,
                         b3 = LANCE__TABLE__BASE_PATH__INIT;
  b1.id = 1, b1.is_dataset_root = 1, b1.path = "/other/table";
  b2.id = 2, b2.path = "file:///blobs/dir";
  b3.id = 3, b3.path = "s3://bucket/x";
  Lance__Table__BasePath *bases[] = {&b1, &b2, &b3};
  Lance__Table__Manifest mm = *m->pb;
  mm.base_paths = bases;
  mm.n_base_paths = 3;
  ck_assert_int_eq(bri_table_data_dir(t, &mm, true, 1, &p, &err), 0);
  ck_assert_str_eq(p, "/other/table/data");
  free(p);
  ck_assert_int_eq(bri_table_data_dir(t, &mm, true, 2, &p, &err), 0);
  ck_assert_str_eq(p, "/blobs/dir");
  free(p);
  ck_assert_int_eq(bri_table_data_dir(t, &mm, true, 3, &p, &err), BRI_EUNSUPPORTED);
  ck_assert_int_eq(bri_table_data_dir(t, &mm, true, 4, &p, &err), BRI_ECORRUPT);
  bri_manifest_free(m);
  bri_table_close(t);
  free(root);
}
END_TEST

START_TEST(test_branches_and_bad_refs) {
  char *tmp = bri_tmpdir(), *src = bri_fixture("tables/v21.lance");
  char *root = bri_path_join(tmp, "t");
  bri_copytree(src, root);
  char *d = bri_strdupf("mkdir -p '%s/_refs/branches' '%s/_refs/tags'", root, root);
  ck_assert_int_eq(system(d), 0);
  free(d);
  char *p = bri_strdupf("%s/_refs/branches/feat%%2Fx.json", root);
  const char *js = "{\"parentBranch\": null, \"parentVersion\": 2, \"createAt\": 1, \"manifestSize\": 5}";
  bri_write_bytes(p, js, strlen(js));
  free(p);
  bri_table *t;
  bri_error err;
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  bri_ref *r;
  size_t n;
  ck_assert_msg(bri_table_branches(t, &r, &n, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(n, 1);
  ck_assert_str_eq(r[0].name, "feat/x");
  ck_assert_uint_eq(r[0].version, 2);
  bri_refs_free(r, n);
  p = bri_strdupf("%s/_refs/tags/broken.json", root);
  bri_write_bytes(p, "{\"version\": \"two\"}", 18);
  ck_assert_int_eq(bri_table_tags(t, &r, &n, &err), BRI_ECORRUPT);
  ck_assert_msg(strstr(err.msg, "broken.json") != NULL, "%s", err.msg);
  bri_write_bytes(p, "{\"vers", 6);
  ck_assert_int_eq(bri_table_tags(t, &r, &n, &err), BRI_ECORRUPT);
  free(p);
  bri_table_close(t);
  bri_rmtree(tmp);
  free(tmp), free(src), free(root);
}
END_TEST

START_TEST(test_sidecar_names) {
  char name[BRI_BLOB_NAME_LEN];
  bri_blob_file_name(1, name);
  ck_assert_str_eq(name, "10000000000000000000000000000000.blob");
  bri_blob_file_name(3, name);
  ck_assert_str_eq(name, "11000000000000000000000000000000.blob");
  bri_blob_file_name(4, name);
  ck_assert_str_eq(name, "00100000000000000000000000000000.blob");
  uint32_t id;
  for (uint32_t v = 1; v < 5000; v += 7) {
    bri_blob_file_name(v, name);
    ck_assert(bri_blob_file_id(name, &id));
    ck_assert_uint_eq(id, v);
  }
  ck_assert(!bri_blob_file_id("1000000000000000000000000000000.blob", &id));
  ck_assert(!bri_blob_file_id("10000000000000000000000000000002.blob", &id));
  char *s = bri_datafile_stem("sub/abc.lance");
  ck_assert_str_eq(s, "abc");
  free(s);
}
END_TEST

static Suite *table_suite(void) {
  Suite *s = suite_create("table");
  TCase *tc = tcase_create("table");
  tcase_add_test(tc, test_parse_names);
  tcase_add_test(tc, test_v1_naming_and_mixed_schemes);
  tcase_add_test(tc, test_note_version);
  tcase_add_test(tc, test_not_a_table);
  tcase_add_test(tc, test_paths_and_bases);
  tcase_add_test(tc, test_branches_and_bad_refs);
  tcase_add_test(tc, test_sidecar_names);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(table_suite)
