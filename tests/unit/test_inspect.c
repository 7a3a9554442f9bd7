/* test_inspect.c: the description of a table version (lib/ops/inspect.h)
 * on the LanceDB-written fixtures (tests/fixtures/tables/README.md) and on
 * a copy of blobs.lance compacted with the bri strategy: versions, flags
 * with their names, schema, fragments with deletion files, sidecars and
 * Blob Reuse Index sources, indices, tags and totals. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compact/execute.h"
#include "ops/inspect.h"
#include "testutil.h"

static json_t *get(json_t *o, const char *path) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *save = NULL, *k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save))
    o = json_is_array(o) ? json_array_get(o, (size_t)atoi(k)) : json_object_get(o, k);
  ck_assert_msg(o != NULL, "no %s", path);
  return o;
}
static long long num(json_t *o, const char *path) { return (long long)json_integer_value(get(o, path)); }
static const char *str(json_t *o, const char *path) { return json_string_value(get(o, path)); }

START_TEST(test_plain) {
  char *root = bri_fixture("tables/plain.lance");
  json_t *r;
  bri_error err;
  ck_assert_msg(bri_inspect_table(root, 0, &r, &err) == 0, "%s", err.msg);
  ck_assert_str_eq(str(r, "table"), root);
  ck_assert_int_eq(num(r, "version"), 5);
  ck_assert_int_eq(num(r, "versions.latest"), 5);
  ck_assert_int_eq(num(r, "versions.count"), (long long)json_array_size(get(r, "versions.list")));
  /* 3 x 100 rows, id % 7 == 3 or 110 <= id < 150 deleted */
  ck_assert_int_eq(num(r, "totals.fragments"), 3);
  ck_assert_int_eq(num(r, "totals.physical_rows"), 300);
  ck_assert_int_eq(num(r, "totals.rows"), 222);
  ck_assert_int_eq(num(r, "totals.deleted_rows"), 78);
  long long deleted1 = 0;
  for (int id = 100; id < 200; id++) deleted1 += id % 7 == 3 || (id >= 110 && id < 150);
  ck_assert_int_eq(num(r, "fragments.1.deleted_rows"), deleted1);
  ck_assert_str_eq(str(r, "fragments.0.deletion_file.type"), "arrow");
  ck_assert_str_eq(str(r, "flags.reader_names.0"), "deletion_files");
  ck_assert_str_eq(str(r, "tags.0.name"), "v2tag");
  ck_assert_int_eq(num(r, "tags.0.version"), 2);
  ck_assert_int_eq(num(r, "indices.0.fields.0"), 0); /* the BTree on id */
  ck_assert_str_eq(str(r, "schema.4.path"), "vec");
  ck_assert(json_is_null(get(r, "fragments.0.files.0.blob_reuse_index")));
  json_decref(r);
  /* an older version, and one that is not there */
  ck_assert_int_eq(bri_inspect_table(root, 2, &r, &err), 0);
  ck_assert_int_eq(num(r, "version"), 2);
  ck_assert_int_eq(num(r, "totals.fragments"), 2);
  json_decref(r);
  ck_assert_int_eq(bri_inspect_table(root, 99, &r, &err), BRI_ENOTFOUND);
  ck_assert_ptr_null(r);
  free(root);
}
END_TEST

/* compact --strategy managed on the plain blob fixture: it would switch
 * the table, Lance 14 reads it then, Lance 12 and 13 no more; a declared
 * min_reader of 14 makes auto do it, 13 does not. */
START_TEST(test_managed_verdict) {
  char *root = bri_fixture("tables/blobs.lance");
  json_t *r;
  bri_error err;
  ck_assert_msg(bri_inspect_table(root, 0, &r, &err) == 0, "%s", err.msg);
  ck_assert(json_is_true(get(r, "compatibility.compact_managed.ok")));
  ck_assert(json_is_true(get(r, "compatibility.compact_managed.switches")));
  ck_assert_uint_eq(json_array_size(get(r, "compatibility.compact_managed.readers")), 1);
  ck_assert_ptr_nonnull(strstr(str(r, "compatibility.compact_managed.readers.0"), "Lance 14"));
  ck_assert_uint_eq(json_array_size(get(r, "compatibility.compact_managed.locks_out")), 2);
  ck_assert_ptr_nonnull(strstr(str(r, "compatibility.compact_managed.locks_out.1"), "Lance 13"));
  json_t *d = bri_inspect_declared(r, 14);
  ck_assert_str_eq(str(d, "compact_auto"), "managed");
  ck_assert_uint_eq(json_array_size(get(d, "locks_out")), 2);
  ck_assert_uint_eq(json_array_size(get(d, "older_than_declared")), 2);
  json_decref(d);
  d = bri_inspect_declared(r, 13);
  ck_assert_str_eq(str(d, "compact_auto"), "auto");
  ck_assert_uint_eq(json_array_size(get(d, "locks_out")), 0);
  ck_assert_uint_eq(json_array_size(get(d, "older_than_declared")), 1);
  json_decref(d);
  json_decref(r);
  free(root);
}
END_TEST

START_TEST(test_bri_table) {
  char *tmp, *root;
  bri_fixture_table("tables/blobs.lance", &tmp, &root);
  json_t *r;
  bri_error err;
  ck_assert_int_eq(bri_inspect_table(root, 0, &r, &err), 0);
  long long sidecars = num(r, "totals.sidecar_files"), rows = num(r, "totals.rows");
  ck_assert_int_gt(sidecars, 0);
  json_decref(r);
  bri_compact_request q;
  bri_compact_request_default(&q);
  q.strategy = BRI_STRATEGY_BRI;
  bri_compact_report rep;
  ck_assert_msg(bri_compact_table(root, &q, NULL, &rep, &err) == 0, "%s", err.msg);
  json_decref(rep.plan);
  ck_assert_int_eq(bri_inspect_table(root, 0, &r, &err), 0);
  ck_assert_int_eq(num(r, "totals.fragments"), 1);
  ck_assert_int_eq(num(r, "totals.rows"), rows);
  /* the new data file names the old sidecars through its BRI */
  json_t *b = get(r, "fragments.0.files.0.blob_reuse_index");
  ck_assert(json_is_object(b));
  ck_assert_int_gt((long long)json_array_size(get(b, "sources")), 0);
  ck_assert_int_gt(num(b, "sources.0.entries"), 0);
  bool flagged = false;
  size_t i;
  json_t *v;
  json_array_foreach(get(r, "flags.reader_names"), i, v) flagged |= !strcmp(json_string_value(v), "blob_reuse_index");
  ck_assert(flagged);
  /* a BRI table is not switched by a compaction (materialize --managed does it) */
  ck_assert(json_is_false(get(r, "compatibility.compact_managed.ok")));
  ck_assert_ptr_nonnull(strstr(str(r, "compatibility.compact_managed.reason"), "materialize --managed"));
  json_t *d = bri_inspect_declared(r, 14);
  ck_assert_str_eq(str(d, "compact_auto"), "auto");
  json_decref(d);
  json_decref(r);
  bri_rmtree(tmp);
  free(tmp);
  free(root);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("inspect");
  TCase *tc = tcase_create("inspect");
  tcase_add_test(tc, test_plain);
  tcase_add_test(tc, test_bri_table);
  tcase_add_test(tc, test_managed_verdict);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(suite)
