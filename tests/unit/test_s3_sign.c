/* test_s3_sign.c: the SigV4 signer against AWS's published examples: the
 * Signature Version 4 test suite (get-vanilla, get-vanilla-query-order-key-
 * case, post-vanilla; service "service") and the four worked examples of the
 * S3 API reference (GET Object with a range, PUT Object, GET Bucket
 * Lifecycle, GET Bucket list with a query). The expected signatures are the
 * published ones; a signer that differs in one byte of the canonical request
 * fails them. */
#include <stdlib.h>
#include <string.h>

#include "storage/s3_sign.h"
#include "testutil.h"

#define SUITE_AK "AKIDEXAMPLE"
#define SUITE_SK "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define SUITE_DATE "20150830T123600Z"
#define S3_AK "AKIAIOSFODNN7EXAMPLE"
#define S3_SK "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
#define S3_DATE "20130524T000000Z"
#define S3_HOST "examplebucket.s3.amazonaws.com"

static char *sign(const char *method, const char *path, const bri_http_pair *q, size_t nq,
                  const bri_http_pair *h, size_t nh, const char *payload, const char *date,
                  const char *service, const char *ak, const char *sk) {
  bri_sigv4_request r = {method, path, q, nq, h, nh, payload, date, "us-east-1", service, ak, sk};
  char *auth = NULL;
  bri_error err;
  ck_assert_msg(bri_sigv4_authorization(&r, &auth, &err) == 0, "%s", err.msg);
  return auth;
}

static void expect_signature(char *auth, const char *sig) {
  const char *p = strstr(auth, "Signature=");
  ck_assert_msg(p != NULL, "%s", auth);
  ck_assert_str_eq(p + 10, sig);
  free(auth);
}

START_TEST(test_suite_get_vanilla) {
  bri_http_pair h[] = {{"Host", "example.amazonaws.com"}, {"X-Amz-Date", SUITE_DATE}};
  char *auth = sign("GET", "/", NULL, 0, h, 2, bri_sha256_empty_hex, SUITE_DATE, "service",
                    SUITE_AK, SUITE_SK);
  ck_assert_str_eq(auth,
                   "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/"
                   "aws4_request, SignedHeaders=host;x-amz-date, "
                   "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
  free(auth);
}
END_TEST

START_TEST(test_suite_query_order_key_case) {
  bri_http_pair h[] = {{"Host", "example.amazonaws.com"}, {"X-Amz-Date", SUITE_DATE}};
  bri_http_pair q[] = {{"Param2", "value2"}, {"Param1", "value1"}};
  expect_signature(sign("GET", "/", q, 2, h, 2, bri_sha256_empty_hex, SUITE_DATE, "service",
                        SUITE_AK, SUITE_SK),
                   "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500");
}
END_TEST

START_TEST(test_suite_post_vanilla) {
  bri_http_pair h[] = {{"X-Amz-Date", SUITE_DATE}, {"Host", "example.amazonaws.com"}};
  expect_signature(sign("POST", "/", NULL, 0, h, 2, bri_sha256_empty_hex, SUITE_DATE, "service",
                        SUITE_AK, SUITE_SK),
                   "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b");
}
END_TEST

START_TEST(test_s3_get_object_range) {
  bri_http_pair h[] = {{"Host", S3_HOST},
                        {"Range", "bytes=0-9"},
                        {"x-amz-content-sha256", bri_sha256_empty_hex},
                        {"x-amz-date", S3_DATE}};
  bri_sigv4_request r = {"GET", "/test.txt", NULL, 0, h, 4, bri_sha256_empty_hex, S3_DATE,
                         "us-east-1", "s3", S3_AK, S3_SK};
  bri_error err;
  char *canon = bri_sigv4_canonical(&r, &err);
  ck_assert_ptr_nonnull(canon);
  ck_assert_str_eq(canon,
                   "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\n"
                   "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
                   "x-amz-date:20130524T000000Z\n\nhost;range;x-amz-content-sha256;x-amz-date\n"
                   "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  char hash[65];
  bri_sha256_hex(canon, strlen(canon), hash);
  ck_assert_str_eq(hash, "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
  free(canon);
  expect_signature(sign("GET", "/test.txt", NULL, 0, h, 4, bri_sha256_empty_hex, S3_DATE, "s3",
                        S3_AK, S3_SK),
                   "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}
END_TEST

START_TEST(test_s3_put_object) {
  const char *body = "Welcome to Amazon S3.";
  char payload[65];
  bri_sha256_hex(body, strlen(body), payload);
  ck_assert_str_eq(payload, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  bri_http_pair h[] = {{"Host", S3_HOST},
                        {"Date", "Fri, 24 May 2013 00:00:00 GMT"},
                        {"x-amz-date", S3_DATE},
                        {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
                        {"x-amz-content-sha256", payload}};
  /* the key has a '$', which the canonical URI encodes as %24 */
  char *auth = sign("PUT", "/test$file.text", NULL, 0, h, 5, payload, S3_DATE, "s3", S3_AK, S3_SK);
  ck_assert_msg(strstr(auth, "SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,"),
                "%s", auth);
  expect_signature(auth, "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
}
END_TEST

START_TEST(test_s3_bucket_queries) {
  bri_http_pair h[] = {{"Host", S3_HOST},
                        {"x-amz-content-sha256", bri_sha256_empty_hex},
                        {"x-amz-date", S3_DATE}};
  bri_http_pair lifecycle[] = {{"lifecycle", ""}};
  expect_signature(sign("GET", "/", lifecycle, 1, h, 3, bri_sha256_empty_hex, S3_DATE, "s3",
                        S3_AK, S3_SK),
                   "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
  bri_http_pair list[] = {{"prefix", "J"}, {"max-keys", "2"}}; /* sorted by the signer */
  expect_signature(sign("GET", "/", list, 2, h, 3, bri_sha256_empty_hex, S3_DATE, "s3", S3_AK,
                        S3_SK),
                   "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}
END_TEST

/* UploadPartCopy's two copy headers: sorted by name, not by "name:value"
 * (curl 7.88 sorts by the whole line and puts -range first). */
START_TEST(test_copy_source_headers_sort_by_name) {
  bri_http_pair h[] = {{"host", "h"},
                        {"x-amz-copy-source-range", "bytes=0-9"},
                        {"x-amz-copy-source", "/b/k"},
                        {"x-amz-date", S3_DATE}};
  bri_sigv4_request r = {"PUT", "/b/k2", NULL, 0, h, 4, bri_sha256_empty_hex, S3_DATE,
                         "us-east-1", "s3", S3_AK, S3_SK};
  bri_error err;
  char *canon = bri_sigv4_canonical(&r, &err);
  ck_assert_msg(strstr(canon, "x-amz-copy-source:/b/k\nx-amz-copy-source-range:bytes=0-9\n"), "%s",
                canon);
  ck_assert(strstr(canon, "host;x-amz-copy-source;x-amz-copy-source-range;x-amz-date"));
  free(canon);
  /* the same header twice is a caller bug, refused by name */
  bri_http_pair twice[] = {{"Host", "h"}, {"host", "h"}};
  r.headers = twice;
  r.n_headers = 2;
  ck_assert_ptr_null(bri_sigv4_canonical(&r, &err));
  ck_assert_int_eq(err.code, BRI_EINVAL);
  ck_assert(strstr(err.msg, "host given twice"));
}
END_TEST

START_TEST(test_encoding) {
  char *e = bri_uri_encode("a b/c+d=é~._-", false);
  ck_assert_str_eq(e, "a%20b/c%2Bd%3D%C3%A9~._-");
  free(e);
  e = bri_uri_encode("x/y", true);
  ck_assert_str_eq(e, "x%2Fy");
  free(e);
  bri_http_pair q[] = {{"prefix", "t.lance/_versions/"}, {"delimiter", "/"}, {"list-type", "2"},
                        {"a", NULL}};
  char *s = bri_http_query(q, 4);
  ck_assert_str_eq(s, "a=&delimiter=%2F&list-type=2&prefix=t.lance%2F_versions%2F");
  free(s);
  /* values trimmed, inner runs of spaces folded (SigV4 Trimall) */
  bri_http_pair h[] = {{"Host", "h"}, {"X-Odd", "  a   b  "}};
  bri_sigv4_request r = {"GET", "/", NULL, 0, h, 2, bri_sha256_empty_hex, S3_DATE, "us-east-1",
                         "s3", S3_AK, S3_SK};
  bri_error err;
  char *canon = bri_sigv4_canonical(&r, &err);
  ck_assert(strstr(canon, "\nx-odd:a b\n"));
  free(canon);
  char *auth;
  r.amz_date = "2013-05-24";
  ck_assert_int_eq(bri_sigv4_authorization(&r, &auth, &err), BRI_EINVAL);
  ck_assert(strstr(err.msg, "YYYYMMDDTHHMMSSZ"));
}
END_TEST

static Suite *s3_sign_suite(void) {
  Suite *s = suite_create("s3_sign");
  TCase *tc = tcase_create("s3_sign");
  tcase_add_test(tc, test_suite_get_vanilla);
  tcase_add_test(tc, test_suite_query_order_key_case);
  tcase_add_test(tc, test_suite_post_vanilla);
  tcase_add_test(tc, test_s3_get_object_range);
  tcase_add_test(tc, test_s3_put_object);
  tcase_add_test(tc, test_s3_bucket_queries);
  tcase_add_test(tc, test_copy_source_headers_sort_by_name);
  tcase_add_test(tc, test_encoding);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(s3_sign_suite)
