/* test_azure_sign.c: Shared Key and service SAS signatures. The expected
 * values were computed apart from brid (HMAC-SHA256 in Python over the
 * string laid out as "Authorize with Shared Key" gives it) with the
 * emulator's published key, and the same strings were accepted by Azurite:
 * a signer that differs in one byte of the canonical string fails them. */
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "storage/azure_sign.h"
#include "testutil.h"

#define KEY_B64 "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
#define ACCOUNT "devstoreaccount1"
#define DATE "Wed, 02 Dec 2026 06:27:43 GMT"

static unsigned char key[64];
static size_t key_len;

static void setup(void) {
  int n = EVP_DecodeBlock(key, (const unsigned char *)KEY_B64, (int)strlen(KEY_B64));
  key_len = (size_t)n - 2; /* two '=' of padding */
}

START_TEST(test_put_if_absent) {
  /* headers in any order and case; Content-Length from the body */
  bri_http_pair h[] = {{"x-ms-version", BRI_AZURE_VERSION}, {"If-None-Match", "*"},
                        {"X-MS-Date", DATE}, {"x-ms-blob-type", "BlockBlob"}};
  bri_azure_sign_request r = {"PUT", ACCOUNT, "/devstoreaccount1/brid/p/_versions/1.manifest", NULL, 0, h, 4, 11};
  char *auth = NULL;
  bri_error err;
  ck_assert_int_eq(bri_azure_shared_key(&r, key, key_len, &auth, &err), 0);
  ck_assert_str_eq(auth, "SharedKey devstoreaccount1:tbMFpTn6b7Ecph+jARlxmkwYA+gAs3fKI6krNS84/nE=");
  free(auth);
  char *sts = bri_azure_string_to_sign(&r, &err);
  ck_assert(!strncmp(sts, "PUT\n\n\n11\n\n\n\n\n\n*\n\n\nx-ms-blob-type:BlockBlob\nx-ms-date:", 44));
  free(sts);
}
END_TEST

START_TEST(test_list_query_sorted) {
  /* query names sorted and lowercased in the resource; an empty body leaves
   * Content-Length empty */
  bri_http_pair q[] = {{"prefix", "p/"}, {"delimiter", "/"}, {"Comp", "list"}};
  bri_http_pair h[] = {{"x-ms-date", DATE}, {"x-ms-version", BRI_AZURE_VERSION}};
  bri_azure_sign_request r = {"GET", ACCOUNT, "/devstoreaccount1/brid", q, 3, h, 2, 0};
  char *auth = NULL;
  bri_error err;
  ck_assert_int_eq(bri_azure_shared_key(&r, key, key_len, &auth, &err), 0);
  ck_assert_str_eq(auth, "SharedKey devstoreaccount1:ACwsV7OrpwbDXrBZiYCSrBTUnlBa43CKJjom1fqCcQk=");
  free(auth);
}
END_TEST

START_TEST(test_blob_sas) {
  char *sas = bri_azure_blob_sas(ACCOUNT, key, key_len, "brid", "p/a", 1796196463);
  ck_assert_str_eq(sas, "sv=" BRI_AZURE_VERSION "&sr=b&sp=r&se=2026-12-02T07%3A27%3A43Z"
                        "&sig=OFrCE%2B7X1GjynFP8ixcDDjlzfnqgkVtJYdLDimU3nyI%3D");
  free(sas);
}
END_TEST

START_TEST(test_date) {
  char d[32];
  bri_azure_date(1796192863, d);
  ck_assert_str_eq(d, DATE);
}
END_TEST

static Suite *azure_sign_suite(void) {
  Suite *s = suite_create("azure_sign");
  TCase *tc = tcase_create("azure_sign");
  tcase_add_checked_fixture(tc, setup, NULL);
  tcase_add_test(tc, test_put_if_absent);
  tcase_add_test(tc, test_list_query_sorted);
  tcase_add_test(tc, test_blob_sas);
  tcase_add_test(tc, test_date);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(azure_sign_suite)
