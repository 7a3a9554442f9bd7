/* test_scan.c: reading a table as LanceDB does (lib/scan/scan.h), key
 * order as JavaScript's < orders keys (lib/scan/key.h) and the Arrow type
 * names of manifest fields (lib/scan/typename.h). The interop test
 * tests/interop/test_scan.sh compares whole scans with LanceDB; here: the
 * rules one by one, on hand-made keys and the LanceDB-written fixtures
 * (tests/fixtures/tables/README.md: plain.lance keeps 222 of 300 rows, ids
 * in fragment order). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scan/key.h"
#include "scan/scan.h"
#include "scan/typename.h"
#include "testutil.h"

static bri_key str_key(const char *s) {
  bri_key k = {.is_null = false};
  k.v.s.p = (const uint8_t *)s;
  k.v.s.n = strlen(s);
  return k;
}

START_TEST(test_js_string_order) {
  /* UTF-16 code units, not UTF-8 bytes: U+1F600 (D83D DE00) sorts before
   * U+FFFD although its UTF-8 (F0...) is the larger */
  bri_key emoji = str_key("\xF0\x9F\x98\x80"), repl = str_key("\xEF\xBF\xBD"), a = str_key("a"), ab = str_key("ab");
  ck_assert_int_lt(bri_key_cmp(BRI_KEY_STR, &emoji, &repl), 0);
  ck_assert_int_gt(bri_key_cmp(BRI_KEY_STR, &repl, &emoji), 0);
  ck_assert_int_lt(bri_key_cmp(BRI_KEY_STR, &a, &ab), 0);
  ck_assert_int_eq(bri_key_cmp(BRI_KEY_STR, &ab, &ab), 0);
  /* two characters above U+FFFF share a high surrogate: the low one decides */
  bri_key x = str_key("\xF0\x9F\x98\x80"), y = str_key("\xF0\x9F\x98\x81");
  ck_assert_int_lt(bri_key_cmp(BRI_KEY_STR, &x, &y), 0);
  /* nulls first for strings */
  bri_key null = {.is_null = true};
  ck_assert_int_lt(bri_key_cmp(BRI_KEY_STR, &null, &a), 0);
  ck_assert_int_eq(bri_key_cmp(BRI_KEY_STR, &null, &null), 0);
}
END_TEST

START_TEST(test_js_number_order) {
  bri_key null = {.is_null = true}, zero = {.v.i = 0}, minus = {.v.i = -1}, one = {.v.i = 1};
  /* null compares as 0 */
  ck_assert_int_eq(bri_key_cmp(BRI_KEY_INT, &null, &zero), 0);
  ck_assert_int_lt(bri_key_cmp(BRI_KEY_INT, &minus, &null), 0);
  ck_assert_int_lt(bri_key_cmp(BRI_KEY_INT, &null, &one), 0);
  bri_key big = {.v.u = UINT64_MAX}, small = {.v.u = 1};
  ck_assert_int_gt(bri_key_cmp(BRI_KEY_UINT, &big, &small), 0);
  /* NaN last */
  bri_key nan = {.v.d = NAN}, inf = {.v.d = INFINITY};
  ck_assert_int_gt(bri_key_cmp(BRI_KEY_FLOAT, &nan, &inf), 0);
  ck_assert_int_lt(bri_key_cmp(BRI_KEY_FLOAT, &inf, &nan), 0);
}
END_TEST

START_TEST(test_key_types_and_parsing) {
  bri_key_type t;
  ck_assert(bri_key_type_of("c", &t) && t.kind == BRI_KEY_INT && t.width == 1);
  ck_assert(bri_key_type_of("L", &t) && t.kind == BRI_KEY_UINT && t.width == 8);
  ck_assert(bri_key_type_of("tsu:UTC", &t) && t.kind == BRI_KEY_INT && t.width == 8);
  ck_assert(bri_key_type_of("tdD", &t) && t.kind == BRI_KEY_INT && t.width == 4);
  ck_assert(bri_key_type_of("e", &t) && t.kind == BRI_KEY_FLOAT && t.width == 2);
  ck_assert(bri_key_type_of("U", &t) && t.kind == BRI_KEY_STR && t.width == 8);
  ck_assert(!bri_key_type_of("+s", &t) && !bri_key_type_of("b", &t) && !bri_key_type_of("z", &t));
  bri_key k;
  bri_error err;
  ck_assert(bri_key_type_of("c", &t));
  ck_assert_int_eq(bri_key_parse("-128", t, &k, &err), 0);
  ck_assert_int_eq(k.v.i, -128);
  ck_assert_int_eq(bri_key_parse("128", t, &k, &err), BRI_EINVAL);
  ck_assert_str_eq(err.msg, "\"128\" is not an integer from -128 to 127");
  ck_assert(bri_key_type_of("S", &t));
  ck_assert_int_eq(bri_key_parse("-1", t, &k, &err), BRI_EINVAL);
  ck_assert_int_eq(bri_key_parse("65535", t, &k, &err), 0);
  ck_assert_int_eq(bri_key_parse("65536", t, &k, &err), BRI_EINVAL);
  ck_assert(bri_key_type_of("g", &t));
  ck_assert_int_eq(bri_key_parse("2.5", t, &k, &err), 0);
  ck_assert(k.v.d == 2.5);
  ck_assert_int_eq(bri_key_parse("2.5x", t, &k, &err), BRI_EINVAL);
}
END_TEST

/* One column of a scan report. */
static const char *col_sha(json_t *r, const char *col) {
  return json_string_value(json_object_get(json_object_get(json_object_get(r, "columns"), col), "sha256"));
}

START_TEST(test_scan_fixture) {
  char *root = bri_fixture("tables/plain.lance");
  bri_error err;
  json_t *by_id, *by_scan;
  bri_scan_options o = {.blob_bytes = true};
  ck_assert_msg(bri_scan_table(root, &o, &by_id, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(json_integer_value(json_object_get(by_id, "rows")), 222);
  ck_assert_int_eq(json_integer_value(json_object_get(by_id, "countRows")), 222);
  ck_assert_int_eq(json_integer_value(json_object_get(by_id, "version")), 5);
  ck_assert_str_eq(json_string_value(json_object_get(by_id, "key")), "id"); /* the default key */
  /* the schema line as apache-arrow prints it */
  json_t *schema = json_object_get(by_id, "schema");
  ck_assert_int_eq(json_array_size(schema), 8);
  ck_assert_str_eq(json_string_value(json_array_get(schema, 0)), "id:Int64");
  ck_assert_str_eq(json_string_value(json_array_get(schema, 4)), "vec:FixedSizeList[8]<Float32>");
  ck_assert_str_eq(json_string_value(json_array_get(schema, 7)), "bin:LargeBinary");
  /* ids ascend in scan order, so ordering by id changes no hash */
  o.key = "";
  ck_assert_int_eq(bri_scan_table(root, &o, &by_scan, &err), 0);
  ck_assert(json_is_null(json_object_get(by_scan, "key")));
  const char *k;
  json_t *v;
  json_object_foreach(json_object_get(by_id, "columns"), k, v) ck_assert_str_eq(col_sha(by_id, k), col_sha(by_scan, k));
  json_decref(by_scan);
  /* a low-cardinality key reorders the rows: the id column hashes differently */
  o.key = "cat";
  ck_assert_int_eq(bri_scan_table(root, &o, &by_scan, &err), 0);
  ck_assert_str_ne(col_sha(by_id, "id"), col_sha(by_scan, "id"));
  ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(json_object_get(by_scan, "columns"), "allnull"), "nulls")), 222);
  json_decref(by_scan);
  /* an older version; keys that cannot be */
  o.key = NULL;
  o.version = 2;
  ck_assert_int_eq(bri_scan_table(root, &o, &by_scan, &err), 0);
  ck_assert_int_eq(json_integer_value(json_object_get(by_scan, "version")), 2);
  json_decref(by_scan);
  o.version = 0;
  o.key = "nope";
  ck_assert_int_eq(bri_scan_table(root, &o, &by_scan, &err), BRI_ENOTFOUND);
  ck_assert_ptr_null(by_scan);
  o.key = "vec";
  ck_assert_int_eq(bri_scan_table(root, &o, &by_scan, &err), BRI_EUNSUPPORTED);
  ck_assert_msg(strstr(err.msg, "keys must be integers, floats or strings") != NULL, "%s", err.msg);
  json_decref(by_id);
  free(root);
}
END_TEST

/* The table path in the report is node's path.resolve: absolute, no "." or
 * "..", no repeated or trailing slash. */
START_TEST(test_scan_table_path) {
  char *root = bri_fixture("tables/plain.lance");
  char *dir = strdup(root);
  *strrchr(dir, '/') = 0;
  char cwd[4096];
  ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
  ck_assert_int_eq(chdir(dir), 0);
  bri_error err;
  json_t *r;
  bri_scan_options o = {.blob_bytes = false};
  ck_assert_msg(bri_scan_table("../tables/.//plain.lance/", &o, &r, &err) == 0, "%s", err.msg);
  ck_assert_str_eq(json_string_value(json_object_get(r, "table")), root);
  json_decref(r);
  ck_assert_int_eq(bri_scan_table("plain.lance", &o, &r, &err), 0);
  ck_assert_str_eq(json_string_value(json_object_get(r, "table")), root);
  json_decref(r);
  ck_assert_int_eq(chdir(cwd), 0);
  free(dir);
  free(root);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("scan");
  TCase *tc = tcase_create("scan");
  tcase_add_test(tc, test_js_string_order);
  tcase_add_test(tc, test_js_number_order);
  tcase_add_test(tc, test_key_types_and_parsing);
  tcase_add_test(tc, test_scan_fixture);
  tcase_add_test(tc, test_scan_table_path);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(suite)
