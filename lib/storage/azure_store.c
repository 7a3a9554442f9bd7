/* azure_store.c: the Azure Blob Storage backend (see azure_store.h): its
 * locations (az:// canonical; azure://, adl:// and abfs[s]:// name the
 * same containers, azure_config.h), the client a store gets
 * (azure_config.h's settings, one client per endpoint, account,
 * credential and registered prefix), and an Azure root's settings;
 * everything else is the object store's (object_store.c). */
#include "storage/azure_store.h"

#include <stdlib.h>
#include <string.h>

#include "storage/azure_client.h"
#include "storage/http_encode.h"
#include "storage/object_store.h"
#include "util/fsutil.h"

/* ------------------------------------------------------------ clients */

/* A registered prefix's settings (bri_azure_store_configure), strings
 * owned. */
static void settings_free(void *p) {
  bri_azure_settings *s = p;
  free((char *)s->account);
  bri_obj_secret_free(s->account_key);
  bri_obj_secret_free(s->sas_token);
  free((char *)s->endpoint);
  free(s);
}

int bri_azure_store_configure(const char *prefix_uri, const bri_azure_settings *set,
                              const bri_store_limits *limits, bri_error *err) {
  char *c, *k, *a;
  if (bri_azure_uri_parse(prefix_uri, &c, &k, &a, err)) return BRI_EINVAL;
  free(c), free(k), free(a);
  /* kept under the canonical name, which stores look it up by */
  char *canon = bri_azure_uri_canonical(prefix_uri, err);
  if (!canon) return BRI_ENOMEM;
  bri_azure_settings *s = set ? calloc(1, sizeof *s) : NULL;
  bool ok = !set || s;
  if (s) {
    s->account = bri_obj_setting_dup(set->account, &ok);
    s->account_key = bri_obj_setting_dup(set->account_key, &ok);
    s->sas_token = bri_obj_setting_dup(set->sas_token, &ok);
    s->endpoint = bri_obj_setting_dup(set->endpoint, &ok);
    s->use_emulator = set->use_emulator;
  }
  int rc;
  if (!ok) {
    if (s) settings_free(s);
    rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  } else {
    rc = bri_obj_store_configure(canon, s, settings_free, limits, err);
  }
  free(canon);
  return rc;
}

/* The registered settings, then the environment. */
static int azure_load(const void *settings, const char *account, void *cfg, bri_error *err) {
  return bri_azure_config_load(account, settings, cfg, err);
}

/* A client per endpoint, account, key (by its hash) and SAS token. */
static char *azure_identity(const void *cfg) {
  const bri_azure_config *c = cfg;
  char kh[BRI_SHA256_HEX_LEN + 1] = "";
  if (c->key) bri_sha256_hex(c->key, c->key_len, kh);
  return bri_strdupf("az|%s|%s|%s|%s|%d", c->endpoint, c->account, kh, c->sas ? c->sas : "", c->max_attempts);
}

static int azure_make(const void *cfg, const bri_obj_options *opt, bri_obj_client **out, bri_error *err) {
  return bri_azure_client_new(cfg, opt, out, err);
}

static void azure_clear(void *cfg) { bri_azure_config_clear(cfg); }

static const bri_obj_connector AZURE_CONNECTOR = {sizeof(bri_azure_config), azure_load, azure_identity, azure_make,
                                                  azure_clear};

/* ------------------------------------------------------------ stores */

static int azure_open(const char *uri, unsigned flags, bri_store **out, bri_error *err) {
  (void)flags; /* a prefix needs no creating; the container must exist */
  *out = NULL;
  char *container, *key, *account;
  int rc = bri_azure_uri_parse(uri, &container, &key, &account, err);
  if (rc == 0) rc = bri_obj_store_open(&bri_azure_store_ops, &AZURE_CONNECTOR, uri, container, key, account, out, err);
  free(account);
  return rc;
}

/* ------------------------------------------------------- roots' settings */

static const char *const AZURE_SETTINGS[] = {"account_name", "endpoint", "use_emulator", "account_key", "sas_token",
                                             NULL};
static const bool AZURE_SECRET[] = {false, false, false, true, true};

/* An Azure root's settings: a key or a SAS token, not both. */
static int azure_configure(const char *uri, const bri_store_setting *v, size_t n, const bri_store_limits *limits,
                           bool check_only, bri_error *err) {
  bri_azure_settings a = {.account = bri_obj_setting(v, n, "account_name"),
                          .endpoint = bri_obj_setting(v, n, "endpoint"),
                          .account_key = bri_obj_setting(v, n, "account_key"),
                          .sas_token = bri_obj_setting(v, n, "sas_token")};
  const char *emu = bri_obj_setting(v, n, "use_emulator");
  if (emu && strcmp(emu, "true") && strcmp(emu, "false"))
    return bri_error_set(err, BRI_EINVAL, "%s use_emulator: \"%s\" is not true or false", uri, emu);
  a.use_emulator = emu && !strcmp(emu, "true");
  if (a.account_key && a.sas_token) return bri_error_set(err, BRI_EINVAL, "%s: account_key or sas_token, not both", uri);
  int rc = bri_obj_check_endpoint(uri, a.endpoint, err);
  if (!rc) { /* the whole resolution, as a store would do it, so a bad key fails at load */
    char *c, *k, *account;
    if ((rc = bri_azure_uri_parse(uri, &c, &k, &account, err)) != 0) return rc;
    bri_azure_config cfg;
    rc = bri_azure_config_load(account, &a, &cfg, err);
    if (!rc) bri_azure_config_clear(&cfg);
    free(c), free(k), free(account);
  }
  if (rc || check_only) return rc;
  return bri_azure_store_configure(uri, &a, limits, err);
}

const bri_store_ops bri_azure_store_ops = {
    .scheme = "az",
    .also = (const char *const[]){"azure", "adl", "abfs", "abfss", NULL},
    .open = azure_open,
    .canonical = bri_azure_uri_canonical,
    .setting_names = AZURE_SETTINGS,
    .setting_secret = AZURE_SECRET,
    .configure = azure_configure,
    BRI_OBJ_STORE_OPS,
};
