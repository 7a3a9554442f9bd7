/* aws_config.c: resolving S3 endpoint, region and credentials (see
 * aws_config.h). The shared files are INI as the AWS CLI writes them
 * (util/ini.h; the nested "s3 =" block's keys read as "s3.key"). */
#include "storage/aws_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/ini.h"
#include "util/strbuf.h"

/* A setting of the profile in the config file: [profile NAME], or [default]
 * for the default profile. */
static const char *config_get(const bri_ini *cfg, const char *profile, const char *key) {
  char section[300];
  snprintf(section, sizeof section, "profile %s", profile);
  const char *v = bri_ini_get(cfg, section, key);
  if (!v && !strcmp(profile, "default")) v = bri_ini_get(cfg, "default", key);
  return v;
}

static const char *env(const char *name) {
  const char *v = getenv(name);
  return v && *v ? v : NULL;
}

/* Path of a shared file: the variable's value, else $HOME/.aws/NAME. */
static char *shared_path(const char *var, const char *name) {
  const char *v = env(var);
  if (v) return strdup(v);
  const char *home = env("HOME");
  if (!home) return NULL;
  bri_strbuf b = BRI_STRBUF_INIT;
  bri_strbuf_printf(&b, "%s/.aws/%s", home, name);
  return bri_strbuf_take(&b);
}

static const char *first(const char *a, const char *b) { return a ? a : b; }

static int parse_bool(const char *v, const char *what, bool *out, bri_error *err) {
  if (!strcasecmp(v, "true") || !strcmp(v, "1")) *out = true;
  else if (!strcasecmp(v, "false") || !strcmp(v, "0")) *out = false;
  else return bri_error_set(err, BRI_EINVAL, "%s: expected true or false, got \"%s\"", what, v);
  return 0;
}

/* Endpoint as scheme://host[:port]: a trailing slash is dropped, any path
 * is refused (a path would be signed differently from what S3 expects). */
static int check_endpoint(const char *e, const char *from, char **out, bri_error *err) {
  const char *host = NULL;
  if (!strncmp(e, "http://", 7)) host = e + 7;
  else if (!strncmp(e, "https://", 8)) host = e + 8;
  size_t n = strlen(e);
  while (n && e[n - 1] == '/') n--;
  if (!host || !*host || *host == '/' || memchr(host, '/', (size_t)(e + n - host))) {
    return bri_error_set(err, BRI_EINVAL,
                         "endpoint \"%s\" (from %s) is not http(s)://HOST[:PORT]", e, from);
  }
  *out = strndup(e, n);
  return *out ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
}

static int dup_into(char **dst, const char *src, bri_error *err) {
  if (!src) return 0;
  *dst = strdup(src);
  return *dst ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
}

static int set_credentials(bri_aws_config *c, const char *ak, const char *sk, const char *tok,
                           const char *from, bri_error *err) {
  if (!ak != !sk) {
    return bri_error_set(err, BRI_EINVAL, "%s gives %s but not %s", from,
                         ak ? "an access key id" : "a secret access key",
                         ak ? "its secret access key" : "its access key id");
  }
  int rc;
  if ((rc = dup_into(&c->access_key_id, ak, err)) || (rc = dup_into(&c->secret_access_key, sk, err)) ||
      (rc = dup_into(&c->session_token, tok, err)) || (rc = dup_into(&c->credentials_from, from, err))) {
    return rc;
  }
  return 0;
}

int bri_aws_config_load(const bri_aws_settings *explicit_settings, bri_aws_config *c,
                        bri_error *err) {
  static const bri_aws_settings none;
  const bri_aws_settings *s = explicit_settings ? explicit_settings : &none;
  memset(c, 0, sizeof *c);
  bri_ini creds, cfg;
  memset(&creds, 0, sizeof creds);
  memset(&cfg, 0, sizeof cfg);
  char *creds_path = shared_path("AWS_SHARED_CREDENTIALS_FILE", "credentials");
  char *cfg_path = shared_path("AWS_CONFIG_FILE", "config");
  const char *profile = first(s->profile, first(env("AWS_PROFILE"), "default"));
  int rc = 0;
  if ((creds_path && (rc = bri_ini_read(creds_path, &creds, err))) ||
      (cfg_path && (rc = bri_ini_read(cfg_path, &cfg, err)))) {
    goto out;
  }

  /* Credentials: a whole set from one source. */
  if (s->access_key_id || s->secret_access_key) {
    rc = set_credentials(c, s->access_key_id, s->secret_access_key, s->session_token,
                         "the settings", err);
  } else if (env("AWS_ACCESS_KEY_ID") || env("AWS_SECRET_ACCESS_KEY")) {
    rc = set_credentials(c, env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY"),
                         env("AWS_SESSION_TOKEN"), "the environment (AWS_ACCESS_KEY_ID)", err);
  } else {
    const char *ak = bri_ini_get(&creds, profile, "aws_access_key_id");
    const bri_ini *src = &creds;
    if (!ak && !bri_ini_get(&creds, profile, "aws_secret_access_key")) src = &cfg;
    bri_strbuf from = BRI_STRBUF_INIT;
    bri_strbuf_printf(&from, "profile %s of %s", profile,
                      src->path ? src->path : (creds_path ? creds_path : "~/.aws/credentials"));
    char *from_s = bri_strbuf_take(&from);
    if (src == &creds) {
      rc = set_credentials(c, ak, bri_ini_get(&creds, profile, "aws_secret_access_key"),
                           bri_ini_get(&creds, profile, "aws_session_token"), from_s ? from_s : "", err);
    } else {
      rc = set_credentials(c, config_get(&cfg, profile, "aws_access_key_id"),
                           config_get(&cfg, profile, "aws_secret_access_key"),
                           config_get(&cfg, profile, "aws_session_token"), from_s ? from_s : "", err);
    }
    free(from_s);
  }
  if (rc) goto out;
  if (!c->access_key_id) {
    rc = bri_error_set(err, BRI_EINVAL,
                       "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
                       "or give profile %s in %s", profile,
                       creds_path ? creds_path : "~/.aws/credentials");
    goto out;
  }

  const char *region = first(s->region, first(env("AWS_REGION"), env("AWS_DEFAULT_REGION")));
  region = first(region, first(config_get(&cfg, profile, "region"), "us-east-1"));
  if ((rc = dup_into(&c->region, region, err))) goto out;

  const char *endpoint = s->endpoint, *endpoint_from = "the settings";
  if (!endpoint && (endpoint = env("AWS_ENDPOINT_URL_S3"))) endpoint_from = "AWS_ENDPOINT_URL_S3";
  if (!endpoint && (endpoint = env("AWS_ENDPOINT_URL"))) endpoint_from = "AWS_ENDPOINT_URL";
  if (!endpoint) {
    endpoint = first(config_get(&cfg, profile, "s3.endpoint_url"),
                     config_get(&cfg, profile, "endpoint_url"));
    endpoint_from = cfg.path;
  }
  bool aws_endpoint = !endpoint;
  if (endpoint) {
    if ((rc = check_endpoint(endpoint, endpoint_from, &c->endpoint, err))) goto out;
  } else {
    bri_strbuf b = BRI_STRBUF_INIT;
    bri_strbuf_printf(&b, "https://s3.%s.amazonaws.com", c->region);
    if (!(c->endpoint = bri_strbuf_take(&b))) {
      rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
      goto out;
    }
  }

  const char *attempts = first(env("AWS_MAX_ATTEMPTS"), config_get(&cfg, profile, "max_attempts"));
  if (attempts) {
    char *end;
    long v = strtol(attempts, &end, 10);
    if (*end || v < 1 || v > 100) {
      rc = bri_error_set(err, BRI_EINVAL, "max attempts \"%s\" (AWS_MAX_ATTEMPTS or max_attempts) "
                         "is not a number from 1 to 100", attempts);
      goto out;
    }
    c->max_attempts = (int)v;
  }

  c->virtual_hosted = aws_endpoint;
  const char *style = config_get(&cfg, profile, "s3.addressing_style");
  if (s->addressing != BRI_S3_ADDRESSING_AUTO) {
    c->virtual_hosted = s->addressing == BRI_S3_ADDRESSING_VIRTUAL;
  } else if (env("AWS_VIRTUAL_HOSTED_STYLE_REQUEST")) {
    rc = parse_bool(env("AWS_VIRTUAL_HOSTED_STYLE_REQUEST"), "AWS_VIRTUAL_HOSTED_STYLE_REQUEST",
                    &c->virtual_hosted, err);
  } else if (style && !strcmp(style, "path")) {
    c->virtual_hosted = false;
  } else if (style && !strcmp(style, "virtual")) {
    c->virtual_hosted = true;
  } else if (style && strcmp(style, "auto")) {
    rc = bri_error_set(err, BRI_EINVAL, "%s: s3 addressing_style \"%s\" is not path, virtual or auto",
                       cfg.path, style);
  }
out:
  if (rc) bri_aws_config_clear(c);
  bri_ini_clear(&creds);
  bri_ini_clear(&cfg);
  free(creds_path);
  free(cfg_path);
  return rc;
}

void bri_aws_config_clear(bri_aws_config *c) {
  free(c->access_key_id);
  if (c->secret_access_key) {
    explicit_bzero(c->secret_access_key, strlen(c->secret_access_key));
    free(c->secret_access_key);
  }
  free(c->session_token);
  free(c->region);
  free(c->endpoint);
  free(c->credentials_from);
  memset(c, 0, sizeof *c);
}
