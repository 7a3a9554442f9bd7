/* test_s3_xml.c: S3's XML read into a tree (namespaces dropped, repeated
 * elements walked, text concatenated across entities) and written escaped;
 * broken, too deep or empty documents refused with the document named. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/xml.h"
#include "testutil.h"

static const char listing[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
    "<Name>bucket</Name><Prefix>t.lance/</Prefix><KeyCount>2</KeyCount>"
    "<IsTruncated>true</IsTruncated><NextContinuationToken>tok</NextContinuationToken>"
    "<Contents><Key>t.lance/a&amp;b</Key><Size>10</Size><ETag>&quot;e1&quot;</ETag></Contents>"
    "<CommonPrefixes><Prefix>t.lance/data/</Prefix></CommonPrefixes>"
    "<Contents><Key>t.lance/c</Key><Size>20</Size></Contents>"
    "</ListBucketResult>";

START_TEST(test_parse_listing) {
  bri_xml_node *root;
  bri_error err;
  ck_assert_msg(bri_xml_parse(listing, strlen(listing), "list", &root, &err) == 0, "%s", err.msg);
  ck_assert_str_eq(root->name, "ListBucketResult");
  ck_assert_str_eq(bri_xml_text(root, "NextContinuationToken"), "tok");
  ck_assert_ptr_null(bri_xml_text(root, "Missing"));
  const bri_xml_node *c = bri_xml_child(root, "Contents");
  ck_assert_str_eq(bri_xml_text(c, "Key"), "t.lance/a&b");
  ck_assert_str_eq(bri_xml_text(c, "ETag"), "\"e1\"");
  c = bri_xml_next_same(c);
  ck_assert_ptr_nonnull(c);
  ck_assert_str_eq(bri_xml_text(c, "Size"), "20");
  ck_assert_ptr_null(bri_xml_next_same(c));
  ck_assert_str_eq(bri_xml_text(bri_xml_child(root, "CommonPrefixes"), "Prefix"), "t.lance/data/");
  bri_xml_free(root);
}
END_TEST

START_TEST(test_refusals) {
  bri_xml_node *root;
  bri_error err;
  const char *bad[] = {"", "<a>", "<a></b>", "<a/><b/>", "not xml"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ck_assert_int_eq(bri_xml_parse(bad[i], strlen(bad[i]), "answer of s3://b/k", &root, &err), BRI_ECORRUPT);
    ck_assert_msg(strstr(err.msg, "answer of s3://b/k: XML"), "%s", err.msg);
    ck_assert_ptr_null(root);
  }
  char deep[33 * 3 + 1] = "";
  for (int i = 0; i < 33; i++) strcat(deep, "<a>");
  ck_assert_int_eq(bri_xml_parse(deep, strlen(deep), "deep", &root, &err), BRI_ECORRUPT);
  ck_assert_msg(strstr(err.msg, "nested too deeply"), "%s", err.msg);
}
END_TEST

START_TEST(test_escape) {
  bri_strbuf b = BRI_STRBUF_INIT;
  bri_xml_escape(&b, "a<b>&\"c'");
  char *s = bri_strbuf_take(&b);
  ck_assert_str_eq(s, "a&lt;b&gt;&amp;&quot;c&apos;");
  /* what is escaped reads back as it was */
  char doc[128];
  snprintf(doc, sizeof doc, "<Key>%s</Key>", s);
  bri_xml_node *root;
  bri_error err;
  ck_assert(bri_xml_parse(doc, strlen(doc), "key", &root, &err) == 0);
  ck_assert_str_eq(root->text, "a<b>&\"c'");
  bri_xml_free(root);
  free(s);
}
END_TEST

static Suite *s3_xml_suite(void) {
  Suite *s = suite_create("s3_xml");
  TCase *tc = tcase_create("s3_xml");
  tcase_add_test(tc, test_parse_listing);
  tcase_add_test(tc, test_refusals);
  tcase_add_test(tc, test_escape);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(s3_xml_suite)
