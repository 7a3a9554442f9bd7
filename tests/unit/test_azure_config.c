/* test_azure_config.c: Azure locations (every form LanceDB takes, and the
 * refusals, with their messages), their canonical names through the
 * storage front (bri_store_location), and the settings read from the
 * environment (the emulator switch, a SAS alone, plain http refused);
 * what the front says of a location without opening it (its capabilities,
 * the per-root settings its backend takes, and their checks). */
#include <stdlib.h>
#include <string.h>

#include "storage/azure_config.h"
#include "storage/store.h"
#include "testutil.h"

static const char *const VARS[] = {"AZURE_STORAGE_ACCOUNT_NAME", "AZURE_STORAGE_ACCOUNT",
  "AZURE_STORAGE_ACCOUNT_KEY", "AZURE_STORAGE_ACCESS_KEY", "AZURE_STORAGE_MASTER_KEY",
  "AZURE_STORAGE_SAS_TOKEN", "AZURE_STORAGE_SAS_KEY", "AZURE_STORAGE_ENDPOINT", "AZURE_ENDPOINT",
  "AZURE_STORAGE_USE_EMULATOR", "AZURE_STORAGE_ALLOW_HTTP", "AZURE_ALLOW_HTTP",
  "AZURITE_BLOB_STORAGE_URL", "AZURE_STORAGE_MAX_ATTEMPTS", NULL};

static void clear_env(void) {
  for (int i = 0; VARS[i]; i++) unsetenv(VARS[i]);
}

static void parse_ok(const char *uri, const char *container, const char *key, const char *account) {
  char *c, *k, *a;
  bri_error err;
  ck_assert_msg(bri_azure_uri_parse(uri, &c, &k, &a, &err) == 0, "%s: %s", uri, err.msg);
  ck_assert_str_eq(c, container);
  ck_assert_str_eq(k, key);
  if (account) ck_assert_str_eq(a, account);
  else ck_assert_ptr_null(a);
  free(c), free(k), free(a);
}

static void parse_bad(const char *uri, const char *why) {
  char *c, *k, *a;
  bri_error err;
  ck_assert_int_eq(bri_azure_uri_parse(uri, &c, &k, &a, &err), BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, why), "%s: %s", uri, err.msg);
  ck_assert_ptr_null(c);
}

START_TEST(test_forms) {
  parse_ok("az://brid/p/t.lance", "brid", "p/t.lance", NULL);
  parse_ok("az://brid/p/t.lance///", "brid", "p/t.lance", NULL);
  parse_ok("azure://my-container", "my-container", "", NULL);
  parse_ok("adl://abc/x", "abc", "x", NULL);
  parse_ok("abfss://brid@acct.dfs.core.windows.net/p/t.lance", "brid", "p/t.lance", "acct");
  parse_ok("abfs://brid@acct.blob.core.windows.net/", "brid", "", "acct");
  parse_bad("az://No_Such/x", "container \"No_Such\" is not a valid Azure container name");
  parse_bad("az://ab/x", "not a valid Azure container name");
  parse_bad("az://a--b/x", "not a valid Azure container name");
  parse_bad("az://abc-/x", "not a valid Azure container name");
  parse_bad("abfss://brid@acct.example.com/x", "must be ACCOUNT.dfs.core.windows.net");
  parse_bad("abfss://brid@.dfs.core.windows.net/x", "must be ACCOUNT.dfs.core.windows.net");
  parse_bad("az://brid/x?sv=1", "no query or fragment");
  parse_bad("s3://brid/x", "not an Azure URI");
}
END_TEST

START_TEST(test_location) {
  char *out;
  bri_error err;
  ck_assert_int_eq(bri_store_location("abfss://brid@acct.dfs.core.windows.net/p/t.lance/", &out, &err), 0);
  ck_assert_str_eq(out, "az://brid/p/t.lance");
  free(out);
  ck_assert_int_eq(bri_store_location("azure://brid", &out, &err), 0);
  ck_assert_str_eq(out, "az://brid");
  free(out);
  ck_assert_int_eq(bri_store_location("s3://bucket/p//", &out, &err), 0);
  ck_assert_str_eq(out, "s3://bucket/p");
  free(out);
  ck_assert_int_eq(bri_store_location("/no/such/dir/t.lance", &out, &err), 0);
  ck_assert_str_eq(out, "/no/such/dir/t.lance");
  free(out);
  ck_assert_int_eq(bri_store_location("az://B/x", &out, &err), BRI_EINVAL);
  ck_assert(strstr(err.msg, "not a valid Azure container name"));
  ck_assert_int_eq(bri_store_location("gs://b/x", &out, &err), BRI_EUNSUPPORTED);
  ck_assert(strstr(err.msg, "no storage backend for scheme \"gs\""));
}
END_TEST

START_TEST(test_location_caps) {
  unsigned caps;
  bri_error err;
  unsigned object = BRI_STORE_CAP_POLL | BRI_STORE_CAP_SERVER_COPY | BRI_STORE_CAP_PUT_IF_ABSENT;
  ck_assert_int_eq(bri_store_location_caps("az://brid/p", &caps, &err), 0);
  ck_assert_uint_eq(caps, object);
  ck_assert_int_eq(bri_store_location_caps("abfss://brid@acct.dfs.core.windows.net/p", &caps, &err), 0);
  ck_assert_uint_eq(caps, object);
  ck_assert_int_eq(bri_store_location_caps("s3://bucket", &caps, &err), 0);
  ck_assert_uint_eq(caps, object);
  ck_assert_int_eq(bri_store_location_caps("/srv/t.lance", &caps, &err), 0);
  ck_assert_uint_eq(caps, BRI_STORE_CAP_LINK | BRI_STORE_CAP_DIRS | BRI_STORE_CAP_LOCAL | BRI_STORE_CAP_INOTIFY |
                              BRI_STORE_CAP_SERVER_COPY | BRI_STORE_CAP_PUT_IF_ABSENT);
  ck_assert_int_eq(bri_store_location_caps("file:///srv", &caps, &err), 0);
  ck_assert(caps & BRI_STORE_CAP_LOCAL);
  ck_assert_int_eq(bri_store_location_caps("gs://b/x", &caps, &err), BRI_EUNSUPPORTED);
  ck_assert_uint_eq(caps, 0);
  ck_assert(strstr(err.msg, "no storage backend for scheme \"gs\""));
}
END_TEST

/* bri_store_configure_root(check_only) of uri fails with code, its message holding why. */
static void settings_bad(const char *uri, const bri_store_setting *s, size_t n, int code, const char *why) {
  bri_error err;
  ck_assert_int_eq(bri_store_configure_root(uri, s, n, NULL, true, &err), code);
  ck_assert_msg(strstr(err.msg, why), "%s: \"%s\" does not say \"%s\"", uri, err.msg, why);
}

START_TEST(test_root_settings) {
  clear_env();
  ck_assert_int_eq(bri_store_setting_kind("az://brid", "account_name"), BRI_SETTING_PLAIN);
  ck_assert_int_eq(bri_store_setting_kind("azure://brid/p", "account_key"), BRI_SETTING_SECRET);
  ck_assert_int_eq(bri_store_setting_kind("az://brid", "sas_token"), BRI_SETTING_SECRET);
  ck_assert_int_eq(bri_store_setting_kind("az://brid", "region"), 0);
  ck_assert_int_eq(bri_store_setting_kind("s3://b", "region"), BRI_SETTING_PLAIN);
  ck_assert_int_eq(bri_store_setting_kind("s3://b", "secret_access_key"), BRI_SETTING_SECRET);
  ck_assert_int_eq(bri_store_setting_kind("/srv", "endpoint"), 0);
  ck_assert_ptr_null(bri_store_setting_names("/srv")[0]);
  ck_assert_ptr_null(bri_store_setting_names("gs://b")[0]);
  ck_assert_str_eq(bri_store_setting_names("az://brid")[0], "account_name");
  bri_error err;
  /* the emulator switch alone: its account, key and endpoint */
  bri_store_setting emu[] = {{"use_emulator", "true"}};
  ck_assert_int_eq(bri_store_configure_root("az://brid/p", emu, 1, NULL, true, &err), 0);
  ck_assert_int_eq(bri_store_configure_root("/srv", NULL, 0, NULL, true, &err), 0);
  settings_bad("az://brid/p", (bri_store_setting[]){{"use_emulator", "maybe"}}, 1, BRI_EINVAL,
               "use_emulator: \"maybe\" is not true or false");
  settings_bad("az://brid/p", (bri_store_setting[]){{"account_key", "a2V5"}, {"sas_token", "sv=1&sig=x"}}, 2,
               BRI_EINVAL, "account_key or sas_token, not both");
  settings_bad("az://brid/p", (bri_store_setting[]){{"region", "x"}}, 1, BRI_EINVAL,
               "region is not a setting of such a location");
  settings_bad("az://brid/p",
               (bri_store_setting[]){{"account_name", "acct"}, {"account_key", "a2V5"}, {"endpoint", "http://h:1/acct"}},
               3, BRI_EINVAL, "is plain http");
  settings_bad("abfss://brid@other.dfs.core.windows.net/p", (bri_store_setting[]){{"account_name", "acct"}, {"account_key", "a2V5"}},
               2, BRI_EINVAL, "names account other");
  settings_bad("az://brid/p", (bri_store_setting[]){{"account_name", "acct"}}, 1, BRI_EINVAL, "no Azure credentials");
  settings_bad("s3://b/p", (bri_store_setting[]){{"access_key_id", "AKIA"}}, 1, BRI_EINVAL,
               "access_key_id and secret_access_key go together");
  settings_bad("s3://b/p", (bri_store_setting[]){{"addressing", "sideways"}}, 1, BRI_EINVAL,
               "\"sideways\" is not auto, path or virtual");
  settings_bad("s3://b/p", (bri_store_setting[]){{"endpoint", "ftp://h"}}, 1, BRI_EINVAL,
               "is not an http:// or https:// URL");
  settings_bad("/srv", (bri_store_setting[]){{"endpoint", "http://h"}}, 1, BRI_EINVAL,
               "endpoint is not a setting of such a location");
  settings_bad("gs://b", NULL, 0, BRI_EUNSUPPORTED, "no storage backend");
}
END_TEST

START_TEST(test_emulator) {
  clear_env();
  setenv("AZURE_STORAGE_USE_EMULATOR", "true", 1);
  setenv("AZURITE_BLOB_STORAGE_URL", "http://127.0.0.1:4567", 1);
  bri_azure_config c;
  bri_error err;
  ck_assert_msg(bri_azure_config_load(NULL, NULL, &c, &err) == 0, "%s", err.msg);
  ck_assert_str_eq(c.account, "devstoreaccount1");
  ck_assert_str_eq(c.endpoint, "http://127.0.0.1:4567/devstoreaccount1");
  ck_assert(c.path_style);
  ck_assert_uint_eq(c.key_len, 64);
  ck_assert_ptr_null(c.sas);
  bri_azure_config_clear(&c);
  clear_env();
}
END_TEST

START_TEST(test_sas_and_refusals) {
  clear_env();
  bri_azure_config c;
  bri_error err;
  ck_assert_int_eq(bri_azure_config_load(NULL, NULL, &c, &err), BRI_EINVAL);
  ck_assert(strstr(err.msg, "AZURE_STORAGE_ACCOUNT_NAME"));
  setenv("AZURE_STORAGE_ACCOUNT_NAME", "acct", 1);
  ck_assert_int_eq(bri_azure_config_load(NULL, NULL, &c, &err), BRI_EINVAL);
  ck_assert(strstr(err.msg, "no Azure credentials for account acct"));
  setenv("AZURE_STORAGE_SAS_TOKEN", "?sv=2021&sig=x", 1);
  ck_assert_msg(bri_azure_config_load(NULL, NULL, &c, &err) == 0, "%s", err.msg);
  ck_assert_str_eq(c.sas, "sv=2021&sig=x");
  ck_assert_str_eq(c.endpoint, "https://acct.blob.core.windows.net");
  ck_assert(!c.path_style);
  bri_azure_config_clear(&c);
  ck_assert_int_eq(bri_azure_config_load("other", NULL, &c, &err), BRI_EINVAL);
  ck_assert(strstr(err.msg, "names account other, but AZURE_STORAGE_ACCOUNT_NAME is acct"));
  setenv("AZURE_STORAGE_ENDPOINT", "http://127.0.0.1:9/acct/", 1);
  ck_assert_int_eq(bri_azure_config_load(NULL, NULL, &c, &err), BRI_EINVAL);
  ck_assert(strstr(err.msg, "plain http: set AZURE_STORAGE_ALLOW_HTTP=true"));
  setenv("AZURE_STORAGE_ALLOW_HTTP", "true", 1);
  ck_assert_msg(bri_azure_config_load(NULL, NULL, &c, &err) == 0, "%s", err.msg);
  ck_assert_str_eq(c.endpoint, "http://127.0.0.1:9/acct");
  ck_assert(c.path_style);
  bri_azure_config_clear(&c);
  /* a root's own settings come first: its SAS over the environment's, its endpoint */
  bri_azure_settings x = {.sas_token = "sv=root&sig=y", .endpoint = "https://elsewhere.example"};
  ck_assert_msg(bri_azure_config_load(NULL, &x, &c, &err) == 0, "%s", err.msg);
  ck_assert_str_eq(c.sas, "sv=root&sig=y");
  ck_assert_str_eq(c.endpoint, "https://elsewhere.example");
  bri_azure_config_clear(&c);
  setenv("AZURE_STORAGE_ACCOUNT_KEY", "not base64!", 1);
  ck_assert_int_eq(bri_azure_config_load(NULL, NULL, &c, &err), BRI_EINVAL);
  ck_assert(strstr(err.msg, "AZURE_STORAGE_ACCOUNT_KEY: not a base64 account key"));
  clear_env();
}
END_TEST

static Suite *azure_config_suite(void) {
  Suite *s = suite_create("azure_config");
  TCase *tc = tcase_create("azure_config");
  tcase_add_test(tc, test_forms);
  tcase_add_test(tc, test_location);
  tcase_add_test(tc, test_location_caps);
  tcase_add_test(tc, test_root_settings);
  tcase_add_test(tc, test_emulator);
  tcase_add_test(tc, test_sas_and_refusals);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(azure_config_suite)
