/* azure_config.c: Azure locations and settings (see azure_config.h).
 *
 * Settings are read from the environment as object_store names them, so a
 * shell that LanceDB works in works for brid too; the emulator switch
 * supplies Azurite's public development account and key, as object_store
 * does. Nothing here makes a request. */
#include "storage/azure_config.h"

#include <ctype.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "util/fsutil.h"

/* Azurite's documented development account and key (public). */
#define EMULATOR_ACCOUNT "devstoreaccount1"
#define EMULATOR_KEY \
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
#define EMULATOR_URL "http://127.0.0.1:10000"

static const char *const SCHEMES[] = {"az://", "azure://", "adl://", "abfs://", "abfss://", NULL};

/* The first of the variables that is set and not empty (and its name). */
static const char *env_first(const char *const *names, const char **which) {
  for (int i = 0; names[i]; i++) {
    const char *v = getenv(names[i]);
    if (v && *v) {
      if (which) *which = names[i];
      return v;
    }
  }
  return NULL;
}

static bool env_true(const char *name) {
  const char *v = getenv(name);
  return v && (!strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "yes"));
}

bool bri_azure_uri_is(const char *uri) {
  for (int i = 0; SCHEMES[i]; i++)
    if (!strncmp(uri, SCHEMES[i], strlen(SCHEMES[i]))) return true;
  return false;
}

/* Azure's container naming rules (3-63 of a-z 0-9 -, alphanumeric first
 * and last, no "--"). */
static bool container_ok(const char *c, size_t n) {
  if (n < 3 || n > 63 || !isalnum((unsigned char)c[0]) || c[n - 1] == '-') return false;
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)c[i];
    if (!(islower(ch) || isdigit(ch) || ch == '-')) return false;
    if (ch == '-' && c[i + 1] == '-') return false;
  }
  return true;
}

int bri_azure_uri_parse(const char *uri, char **container, char **key, char **account,
                        bri_error *err) {
  *container = *key = *account = NULL;
  const char *sep = strstr(uri, "://");
  if (!bri_azure_uri_is(uri) || !sep)
    return bri_error_set(err, BRI_EINVAL, "%s: not an Azure URI (az://CONTAINER/PREFIX)", uri);
  if (strpbrk(uri, "?#"))
    return bri_error_set(err, BRI_EINVAL, "%s: a table location takes no query or fragment "
                         "(a SAS token goes in AZURE_STORAGE_SAS_TOKEN)", uri);
  const char *host = sep + 3, *slash = strchr(host, '/');
  size_t hn = slash ? (size_t)(slash - host) : strlen(host);
  const char *at = memchr(host, '@', hn);
  size_t cn = at ? (size_t)(at - host) : hn;
  if (at) { /* abfss://CONTAINER@ACCOUNT.dfs.core.windows.net */
    const char *acc = at + 1, *dot = memchr(acc, '.', hn - cn - 1);
    size_t an = dot ? (size_t)(dot - acc) : 0;
    size_t rest = dot ? hn - cn - 1 - an : 0;
    bool dfs = rest == strlen(".dfs.core.windows.net") && !strncmp(dot, ".dfs.core.windows.net", rest);
    bool blob = rest == strlen(".blob.core.windows.net") && !strncmp(dot, ".blob.core.windows.net", rest);
    if (!an || (!dfs && !blob))
      return bri_error_set(err, BRI_EINVAL, "%s: the host after '@' must be ACCOUNT.dfs.core.windows.net "
                           "or ACCOUNT.blob.core.windows.net", uri);
    if (!(*account = strndup(acc, an))) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  if (!container_ok(host, cn)) {
    free(*account);
    *account = NULL;
    return bri_error_set(err, BRI_EINVAL, "%s: container \"%.*s\" is not a valid Azure container name "
                         "(3-63 characters of a-z 0-9 -, no \"--\")", uri, (int)(cn > 80 ? 80 : cn), host);
  }
  const char *k = slash ? slash + 1 : "";
  while (*k == '/') k++;
  size_t kn = strlen(k);
  while (kn && k[kn - 1] == '/') kn--;
  *container = strndup(host, cn);
  *key = strndup(k, kn);
  if (!*container || !*key) {
    free(*container), free(*key), free(*account);
    *container = *key = *account = NULL;
    return bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  return 0;
}

char *bri_azure_uri_canonical(const char *uri, bri_error *err) {
  char *c, *k, *a;
  if (bri_azure_uri_parse(uri, &c, &k, &a, err)) return NULL;
  char *out = *k ? bri_strdupf("az://%s/%s", c, k) : bri_strdupf("az://%s", c);
  if (!out) bri_error_set(err, BRI_ENOMEM, "out of memory");
  free(c), free(k), free(a);
  return out;
}

void bri_azure_config_clear(bri_azure_config *c) {
  if (c->key) explicit_bzero(c->key, c->key_len);
  if (c->sas) explicit_bzero(c->sas, strlen(c->sas));
  free(c->account), free(c->key), free(c->sas), free(c->endpoint);
  memset(c, 0, sizeof *c);
}

/* Decodes a base64 account key. */
static int decode_key(const char *b64, const char *from, bri_azure_config *c, bri_error *err) {
  size_t n = strlen(b64);
  if (n == 0 || n % 4) return bri_error_set(err, BRI_EINVAL, "%s: not a base64 account key", from);
  c->key = malloc(n / 4 * 3 + 1);
  if (!c->key) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  int got = EVP_DecodeBlock(c->key, (const unsigned char *)b64, (int)n);
  if (got < 0) return bri_error_set(err, BRI_EINVAL, "%s: not a base64 account key", from);
  size_t pad = (b64[n - 1] == '=') + (b64[n - 2] == '=');
  c->key_len = (size_t)got - pad;
  return 0;
}

int bri_azure_config_load(const char *account_hint, const bri_azure_settings *x,
                          bri_azure_config *out, bri_error *err) {
  memset(out, 0, sizeof *out);
  static const char *const ACCOUNT[] = {"AZURE_STORAGE_ACCOUNT_NAME", "AZURE_STORAGE_ACCOUNT", NULL};
  static const char *const KEY[] = {"AZURE_STORAGE_ACCOUNT_KEY", "AZURE_STORAGE_ACCESS_KEY",
                                    "AZURE_STORAGE_MASTER_KEY", NULL};
  static const char *const SAS[] = {"AZURE_STORAGE_SAS_TOKEN", "AZURE_STORAGE_SAS_KEY", NULL};
  static const char *const ENDPOINT[] = {"AZURE_STORAGE_ENDPOINT", "AZURE_ENDPOINT", NULL};
  bool emulator = env_true("AZURE_STORAGE_USE_EMULATOR") || (x && x->use_emulator);
  const char *from = NULL, *key_from = NULL, *ep_from = NULL;
  const char *account = env_first(ACCOUNT, &from), *key = env_first(KEY, &key_from);
  const char *sas = env_first(SAS, NULL), *ep = env_first(ENDPOINT, &ep_from);
  if (x && x->account) account = x->account, from = "the root's account";
  if (x && (x->account_key || x->sas_token)) { /* the root's credential, not the environment's */
    key = x->account_key, key_from = "the root's account key";
    sas = x->sas_token;
  }
  if (x && x->endpoint) ep = x->endpoint, ep_from = "the root's endpoint";
  int rc = 0;
  if (account_hint && account && strcmp(account_hint, account))
    return bri_error_set(err, BRI_EINVAL, "the location names account %s, but %s is %s", account_hint,
                         from, account);
  if (!account) account = account_hint ? account_hint : emulator ? EMULATOR_ACCOUNT : NULL;
  if (!account)
    return bri_error_set(err, BRI_EINVAL, "no Azure storage account: set AZURE_STORAGE_ACCOUNT_NAME");
  if (!key && !sas && emulator && !strcmp(account, EMULATOR_ACCOUNT)) key = EMULATOR_KEY, key_from = "the emulator";
  if (!key && !sas)
    return bri_error_set(err, BRI_EINVAL, "no Azure credentials for account %s: set "
                         "AZURE_STORAGE_ACCOUNT_KEY or AZURE_STORAGE_SAS_TOKEN", account);
  if (!(out->account = strdup(account))) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (!rc && key) rc = decode_key(key, key_from, out, err);
  if (!rc && !key) {
    if (*sas == '?') sas++;
    if (!(out->sas = strdup(sas))) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  if (!rc) {
    const char *emu = getenv("AZURITE_BLOB_STORAGE_URL");
    if (ep) {
      out->endpoint = strdup(ep);
    } else if (emulator) {
      ep_from = "AZURITE_BLOB_STORAGE_URL";
      out->endpoint = bri_strdupf("%s/%s", emu && *emu ? emu : EMULATOR_URL, account);
    } else {
      out->endpoint = bri_strdupf("https://%s.blob.core.windows.net", account);
    }
    if (!out->endpoint) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  if (!rc) {
    char *e = out->endpoint;
    size_t n = strlen(e);
    while (n && e[n - 1] == '/') e[--n] = '\0';
    const char *host = strstr(e, "://");
    bool http = !strncmp(e, "http://", 7);
    if (!host || (!http && strncmp(e, "https://", 8)) || !host[3])
      rc = bri_error_set(err, BRI_EINVAL, "%s: endpoint %s is not http(s)://host[:port][/path]", ep_from, e);
    else if (http && !emulator && !env_true("AZURE_STORAGE_ALLOW_HTTP") && !env_true("AZURE_ALLOW_HTTP"))
      rc = bri_error_set(err, BRI_EINVAL, "%s: endpoint %s is plain http: set AZURE_STORAGE_ALLOW_HTTP=true "
                         "to allow it", ep_from, e);
    else
      out->path_style = strchr(host + 3, '/') != NULL;
  }
  const char *ma = getenv("AZURE_STORAGE_MAX_ATTEMPTS");
  if (!rc && ma && *ma) {
    char *end;
    long v = strtol(ma, &end, 10);
    if (*end || v < 1 || v > 100)
      rc = bri_error_set(err, BRI_EINVAL, "AZURE_STORAGE_MAX_ATTEMPTS: \"%s\" is not a number of 1-100", ma);
    out->max_attempts = (int)v;
  }
  if (rc) bri_azure_config_clear(out);
  return rc;
}
