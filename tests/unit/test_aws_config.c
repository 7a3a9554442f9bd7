/* test_aws_config.c: endpoint, region, credentials and addressing resolved
 * as AWS tools resolve them: explicit settings, then the environment, then
 * the profile in ~/.aws/credentials and ~/.aws/config (HOME pointed at a
 * temporary directory), then defaults; refusals name what is wrong. Each
 * test runs in its own process (Check forks), so environment changes stay
 * there. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "storage/aws_config.h"
#include "testutil.h"

static const char *const vars[] = {
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
    "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_PROFILE",
    "AWS_VIRTUAL_HOSTED_STYLE_REQUEST", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_MAX_ATTEMPTS"};

static char *home;

/* A clean environment and an empty HOME with a ~/.aws directory. */
static void setup(void) {
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
  home = bri_tmpdir();
  setenv("HOME", home, 1);
  char p[512];
  snprintf(p, sizeof p, "%s/.aws", home);
  mkdir(p, 0700);
}

static void teardown(void) {
  bri_rmtree(home);
  free(home);
}

static void write_aws(const char *name, const char *text) {
  char p[512];
  snprintf(p, sizeof p, "%s/.aws/%s", home, name);
  bri_write_bytes(p, text, strlen(text));
}

START_TEST(test_environment) {
  setenv("AWS_ACCESS_KEY_ID", "AK", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "SK", 1);
  setenv("AWS_SESSION_TOKEN", "TOK", 1);
  setenv("AWS_DEFAULT_REGION", "eu-west-1", 1);
  bri_aws_config c;
  bri_error err;
  ck_assert_msg(bri_aws_config_load(NULL, &c, &err) == 0, "%s", err.msg);
  ck_assert_str_eq(c.access_key_id, "AK");
  ck_assert_str_eq(c.secret_access_key, "SK");
  ck_assert_str_eq(c.session_token, "TOK");
  ck_assert_str_eq(c.region, "eu-west-1");
  ck_assert_int_eq(c.max_attempts, 0);
  ck_assert_str_eq(c.endpoint, "https://s3.eu-west-1.amazonaws.com");
  ck_assert(c.virtual_hosted); /* AWS itself: bucket.s3.region.amazonaws.com */
  bri_aws_config_clear(&c);

  setenv("AWS_REGION", "us-west-2", 1); /* wins over AWS_DEFAULT_REGION */
  setenv("AWS_MAX_ATTEMPTS", "3", 1);
  setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:7480/", 1);
  ck_assert(bri_aws_config_load(NULL, &c, &err) == 0);
  ck_assert_str_eq(c.region, "us-west-2");
  ck_assert_int_eq(c.max_attempts, 3);
  ck_assert_str_eq(c.endpoint, "http://127.0.0.1:7480");
  ck_assert(!c.virtual_hosted); /* another endpoint: path-style */
  bri_aws_config_clear(&c);
  setenv("AWS_VIRTUAL_HOSTED_STYLE_REQUEST", "true", 1);
  setenv("AWS_ENDPOINT_URL_S3", "https://s3.example.com", 1);
  ck_assert(bri_aws_config_load(NULL, &c, &err) == 0);
  ck_assert_str_eq(c.endpoint, "https://s3.example.com");
  ck_assert(c.virtual_hosted);
  bri_aws_config_clear(&c);

  /* explicit settings win over the environment, as a whole key pair */
  bri_aws_settings s = {.access_key_id = "AK2", .secret_access_key = "SK2", .region = "ap-south-1",
                        .endpoint = "http://10.0.0.1:9000", .addressing = BRI_S3_ADDRESSING_PATH};
  ck_assert(bri_aws_config_load(&s, &c, &err) == 0);
  ck_assert_str_eq(c.access_key_id, "AK2");
  ck_assert_ptr_null(c.session_token);
  ck_assert_str_eq(c.region, "ap-south-1");
  ck_assert_str_eq(c.endpoint, "http://10.0.0.1:9000");
  ck_assert(!c.virtual_hosted);
  bri_aws_config_clear(&c);
}
END_TEST

START_TEST(test_profiles) {
  write_aws("credentials",
            "# comment\n[default]\naws_access_key_id = DEFAULT_AK\naws_secret_access_key = DEFAULT_SK\n\n"
            "[dev]\r\naws_access_key_id=DEV_AK\r\naws_secret_access_key = DEV_SK\r\n"
            "aws_session_token = DEV_TOK\r\n");
  write_aws("config",
            "[default]\nregion = eu-central-1\n"
            "[profile dev]\nregion = us-east-2\ns3 =\n  addressing_style = virtual\n"
            "  endpoint_url = https://minio.example:9000\nendpoint_url = https://ignored.example\n");
  bri_aws_config c;
  bri_error err;
  ck_assert_msg(bri_aws_config_load(NULL, &c, &err) == 0, "%s", err.msg);
  ck_assert_str_eq(c.access_key_id, "DEFAULT_AK");
  ck_assert_str_eq(c.region, "eu-central-1");
  ck_assert(strstr(c.credentials_from, "profile default of ") && strstr(c.credentials_from, "/.aws/credentials"));
  bri_aws_config_clear(&c);

  setenv("AWS_PROFILE", "dev", 1);
  ck_assert_msg(bri_aws_config_load(NULL, &c, &err) == 0, "%s", err.msg);
  ck_assert_str_eq(c.access_key_id, "DEV_AK");
  ck_assert_str_eq(c.secret_access_key, "DEV_SK");
  ck_assert_str_eq(c.session_token, "DEV_TOK");
  ck_assert_str_eq(c.region, "us-east-2");
  ck_assert_str_eq(c.endpoint, "https://minio.example:9000"); /* the s3 block's endpoint first */
  ck_assert(c.virtual_hosted);
  bri_aws_config_clear(&c);

  /* keys in the config file when the credentials file lacks the profile */
  write_aws("config", "[profile ops]\naws_access_key_id = OPS_AK\naws_secret_access_key = OPS_SK\n");
  bri_aws_settings s = {.profile = "ops"};
  ck_assert_msg(bri_aws_config_load(&s, &c, &err) == 0, "%s", err.msg);
  ck_assert_str_eq(c.access_key_id, "OPS_AK");
  ck_assert_str_eq(c.region, "us-east-1");
  ck_assert(strstr(c.credentials_from, "/.aws/config"));
  bri_aws_config_clear(&c);
}
END_TEST

START_TEST(test_refusals) {
  bri_aws_config c;
  bri_error err;
  ck_assert_int_eq(bri_aws_config_load(NULL, &c, &err), BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "no S3 credentials: set AWS_ACCESS_KEY_ID"), "%s", err.msg);

  setenv("AWS_ACCESS_KEY_ID", "AK", 1);
  ck_assert_int_eq(bri_aws_config_load(NULL, &c, &err), BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "the environment (AWS_ACCESS_KEY_ID) gives an access key id but not its secret"),
                "%s", err.msg);
  setenv("AWS_SECRET_ACCESS_KEY", "SK", 1);

  const char *bad[] = {"127.0.0.1:7480", "http://", "http://host/path", "ftp://host"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    setenv("AWS_ENDPOINT_URL", bad[i], 1);
    ck_assert_int_eq(bri_aws_config_load(NULL, &c, &err), BRI_EINVAL);
    ck_assert_msg(strstr(err.msg, "(from AWS_ENDPOINT_URL) is not http(s)://HOST[:PORT]"), "%s", err.msg);
  }
  unsetenv("AWS_ENDPOINT_URL");
  setenv("AWS_VIRTUAL_HOSTED_STYLE_REQUEST", "maybe", 1);
  ck_assert_int_eq(bri_aws_config_load(NULL, &c, &err), BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "AWS_VIRTUAL_HOSTED_STYLE_REQUEST: expected true or false"), "%s", err.msg);
  unsetenv("AWS_VIRTUAL_HOSTED_STYLE_REQUEST");
  setenv("AWS_MAX_ATTEMPTS", "0", 1);
  ck_assert_int_eq(bri_aws_config_load(NULL, &c, &err), BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "is not a number from 1 to 100"), "%s", err.msg);
  unsetenv("AWS_MAX_ATTEMPTS");

  write_aws("config", "[default]\nregion us-east-1\n");
  ck_assert_int_eq(bri_aws_config_load(NULL, &c, &err), BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "/.aws/config line 2: expected key = value"), "%s", err.msg);
  write_aws("config", "[default]\ns3 =\n  addressing_style = sideways\n");
  ck_assert_int_eq(bri_aws_config_load(NULL, &c, &err), BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "addressing_style \"sideways\" is not path, virtual or auto"), "%s", err.msg);
}
END_TEST

static Suite *aws_config_suite(void) {
  Suite *s = suite_create("aws_config");
  TCase *tc = tcase_create("aws_config");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_environment);
  tcase_add_test(tc, test_profiles);
  tcase_add_test(tc, test_refusals);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(aws_config_suite)
