/* s3_store.c: the S3 backend (see s3_store.h): s3:// locations and their
 * canonical names, the client a store gets (aws_config.h's settings, one
 * client per endpoint, region, addressing, credentials and registered
 * prefix), and an S3 root's settings; everything else is the object
 * store's (object_store.c). */
#include "storage/s3_store.h"

#include <stdlib.h>
#include <string.h>

#include "storage/object_store.h"
#include "storage/s3_client.h"
#include "util/fsutil.h"

/* ------------------------------------------------------------ clients */

/* A registered prefix's settings (bri_s3_store_configure), strings owned. */
static void settings_free(void *p) {
  bri_aws_settings *s = p;
  free((char *)s->profile);
  free((char *)s->endpoint);
  free((char *)s->region);
  free((char *)s->access_key_id);
  bri_obj_secret_free(s->secret_access_key);
  free((char *)s->session_token);
  free(s);
}

int bri_s3_store_configure(const char *prefix_uri, const bri_aws_settings *set, const bri_store_limits *limits,
                           bri_error *err) {
  if (!set) return bri_obj_store_configure(prefix_uri, NULL, NULL, limits, err);
  bri_aws_settings *s = calloc(1, sizeof *s);
  bool ok = s != NULL;
  if (s) {
    s->profile = bri_obj_setting_dup(set->profile, &ok);
    s->endpoint = bri_obj_setting_dup(set->endpoint, &ok);
    s->region = bri_obj_setting_dup(set->region, &ok);
    s->access_key_id = bri_obj_setting_dup(set->access_key_id, &ok);
    s->secret_access_key = bri_obj_setting_dup(set->secret_access_key, &ok);
    s->session_token = bri_obj_setting_dup(set->session_token, &ok);
    s->addressing = set->addressing;
  }
  if (!ok) {
    if (s) settings_free(s);
    return bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  return bri_obj_store_configure(prefix_uri, s, settings_free, limits, err);
}

/* The registered settings, then the environment and ~/.aws. */
static int s3_load(const void *settings, const char *account, void *cfg, bri_error *err) {
  (void)account; /* an s3:// location names none */
  return bri_aws_config_load(settings, cfg, err);
}

/* A client per endpoint, region, addressing and credentials. */
static char *s3_identity(const void *cfg) {
  const bri_aws_config *c = cfg;
  return bri_strdupf("%s|%s|%d|%s|%s|%s|%d", c->endpoint, c->region, c->virtual_hosted, c->access_key_id,
                     c->secret_access_key, c->session_token ? c->session_token : "", c->max_attempts);
}

static int s3_make(const void *cfg, const bri_obj_options *opt, bri_obj_client **out, bri_error *err) {
  return bri_s3_client_new(cfg, opt, out, err);
}

static void s3_clear(void *cfg) { bri_aws_config_clear(cfg); }

static const bri_obj_connector S3_CONNECTOR = {sizeof(bri_aws_config), s3_load, s3_identity, s3_make, s3_clear};

/* ------------------------------------------------------------ stores */

static int s3_open(const char *uri, unsigned flags, bri_store **out, bri_error *err) {
  (void)flags; /* a prefix needs no creating */
  *out = NULL;
  char *bucket, *key;
  int rc = bri_s3_uri_parse(uri, &bucket, &key, err);
  return rc ? rc : bri_obj_store_open(&bri_s3_store_ops, &S3_CONNECTOR, uri, bucket, key, NULL, out, err);
}

/* s3://BUCKET/PREFIX without trailing slashes, the bucket checked. */
static char *s3_canonical(const char *uri, bri_error *err) {
  char *bucket, *key, *out = NULL;
  if (bri_s3_uri_parse(uri, &bucket, &key, err)) return NULL;
  size_t n = strlen(key);
  while (n && key[n - 1] == '/') n--;
  out = n ? bri_strdupf("s3://%s/%.*s", bucket, (int)n, key) : bri_strdupf("s3://%s", bucket);
  if (!out) bri_error_set(err, BRI_ENOMEM, "out of memory");
  free(bucket), free(key);
  return out;
}

/* ------------------------------------------------------- roots' settings */

static const char *const S3_SETTINGS[] = {"endpoint", "region", "addressing", "profile", "access_key_id",
                                          "secret_access_key", "session_token", NULL};
static const bool S3_SECRET[] = {false, false, false, false, false, true, true};

/* An S3 root's settings (bri_store_configure_root): the key id and its
 * secret together, a session token only with them, a profile or a key. */
static int s3_configure(const char *uri, const bri_store_setting *v, size_t n, const bri_store_limits *limits,
                        bool check_only, bri_error *err) {
  bri_aws_settings a = {.endpoint = bri_obj_setting(v, n, "endpoint"),
                        .region = bri_obj_setting(v, n, "region"),
                        .profile = bri_obj_setting(v, n, "profile"),
                        .access_key_id = bri_obj_setting(v, n, "access_key_id"),
                        .secret_access_key = bri_obj_setting(v, n, "secret_access_key"),
                        .session_token = bri_obj_setting(v, n, "session_token"),
                        .addressing = BRI_S3_ADDRESSING_AUTO};
  const char *addressing = bri_obj_setting(v, n, "addressing");
  static const char *const ADDRESSING[] = {"auto", "path", "virtual"};
  bool known = !addressing;
  for (int i = 0; addressing && i < 3; i++)
    if (!strcmp(addressing, ADDRESSING[i])) a.addressing = (bri_s3_addressing)i, known = true;
  if (!known) return bri_error_set(err, BRI_EINVAL, "%s addressing: \"%s\" is not auto, path or virtual", uri, addressing);
  if (!a.access_key_id != !a.secret_access_key)
    return bri_error_set(err, BRI_EINVAL, "%s: access_key_id and secret_access_key go together", uri);
  if (a.session_token && !a.access_key_id)
    return bri_error_set(err, BRI_EINVAL, "%s: a session token needs access_key_id and secret_access_key", uri);
  if (a.profile && a.access_key_id) return bri_error_set(err, BRI_EINVAL, "%s: profile or access_key_id, not both", uri);
  int rc = bri_obj_check_endpoint(uri, a.endpoint, err);
  if (rc || check_only) return rc;
  return bri_s3_store_configure(uri, &a, limits, err);
}

const bri_store_ops bri_s3_store_ops = {
    .scheme = "s3",
    .open = s3_open,
    .canonical = s3_canonical,
    .setting_names = S3_SETTINGS,
    .setting_secret = S3_SECRET,
    .configure = s3_configure,
    BRI_OBJ_STORE_OPS,
};
