/* azure_config.h: Azure Blob Storage locations and where a client's
 * account, credentials and endpoint come from, as object_store (and so
 * LanceDB) takes them.
 *
 * Locations (docs/azure.md): az://CONTAINER/PREFIX is the canonical form;
 * azure://CONTAINER/PREFIX and adl://CONTAINER/PREFIX name the same, and
 * abfs[s]://CONTAINER@ACCOUNT.dfs.core.windows.net/PREFIX names a container
 * of a given account (the account must then agree with the settings'). The
 * canonical name of every form is az://CONTAINER/PREFIX, no trailing slash.
 *
 * Settings, first found wins:
 *   account  the abfss:// URI's, AZURE_STORAGE_ACCOUNT_NAME,
 *            AZURE_STORAGE_ACCOUNT; with the emulator: devstoreaccount1;
 *   key      AZURE_STORAGE_ACCOUNT_KEY, AZURE_STORAGE_ACCESS_KEY,
 *            AZURE_STORAGE_MASTER_KEY (base64, Shared Key); with the
 *            emulator: its documented development key;
 *   SAS      AZURE_STORAGE_SAS_TOKEN, AZURE_STORAGE_SAS_KEY (a query string,
 *            a leading '?' dropped), used when there is no key;
 *   endpoint AZURE_STORAGE_ENDPOINT (object_store's azure_storage_endpoint:
 *            scheme://host[:port][/ACCOUNT]; a path makes requests
 *            path-style, the account in the path); else, with
 *            AZURE_STORAGE_USE_EMULATOR=true, AZURITE_BLOB_STORAGE_URL
 *            (default http://127.0.0.1:10000) and the account as the path;
 *            else https://ACCOUNT.blob.core.windows.net;
 *   http     refused unless AZURE_STORAGE_ALLOW_HTTP=true or the emulator;
 *   AZURE_STORAGE_MAX_ATTEMPTS: tries per request, first included. */
#ifndef BRI_AZURE_CONFIG_H
#define BRI_AZURE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

/* Explicit settings (a daemon's per-root ones; secrets read from files by
 * it); NULL fields fall through to the environment. */
typedef struct bri_azure_settings {
  const char *account;
  const char *account_key; /* base64 */
  const char *sas_token;
  const char *endpoint;
  bool use_emulator; /* as AZURE_STORAGE_USE_EMULATOR=true */
} bri_azure_settings;

typedef struct bri_azure_config {
  char *account;
  unsigned char *key; /* the decoded account key; NULL with a SAS alone */
  size_t key_len;
  char *sas;      /* a SAS token (no leading '?'); NULL when a key signs */
  char *endpoint; /* scheme://host[:port][/path], no trailing slash */
  bool path_style; /* the account is the endpoint's path (emulator, custom endpoint) */
  int max_attempts; /* 0: the client's default */
} bri_azure_config;

/* Resolves every setting (above), explicit ones first (explicit may be
 * NULL; a key or a SAS given there is the credential, whatever the
 * environment holds); account_hint is the URI's account (NULL when it names
 * none). BRI_EINVAL, naming the variable, when no account or no credential
 * is found, a key is not base64, the endpoint is not http(s)://host..., or
 * the URI's account differs from the settings'. */
int bri_azure_config_load(const char *account_hint, const bri_azure_settings *explicit_settings,
                          bri_azure_config *out, bri_error *err);
void bri_azure_config_clear(bri_azure_config *c);

/* Whether uri has one of the Azure schemes above. */
bool bri_azure_uri_is(const char *uri);

/* The container, the key below it ("" when none; no leading or trailing
 * slash) and the account the URI names (NULL when none), malloc'd.
 * Refuses container names Azure does not allow (3-63 of a-z 0-9 -,
 * starting with a letter or digit, no "--", not ending in '-'), an
 * abfss:// URI whose host is not ACCOUNT.dfs.core.windows.net or
 * ACCOUNT.blob.core.windows.net, and URIs with a query or fragment. */
int bri_azure_uri_parse(const char *uri, char **container, char **key, char **account,
                        bri_error *err);

/* "az://CONTAINER[/KEY]" of any form (malloc'd), or NULL with err set. */
char *bri_azure_uri_canonical(const char *uri, bri_error *err);

#endif
