/* azure_store.h: the Azure Blob Storage backend of the storage interface
 * (az://CONTAINER/PREFIX, and the other forms of azure_config.h; its ops,
 * bri_azure_store_ops, are in storage/backend.h): an object store
 * (storage/object_store.h) over the Azure client (storage/azure_client.h),
 * and its per-root settings by type (bri_store_configure_root, store.h,
 * maps a daemon's named settings onto these). Stores take their account,
 * credential and endpoint as azure_config.h says: a registered prefix's
 * settings first, then the environment. */
#ifndef BRI_AZURE_STORE_H
#define BRI_AZURE_STORE_H

#include "storage/azure_config.h"
#include "storage/store.h"
#include "util/error.h"

/* Settings for every store opened at or below prefix_uri (az://CONTAINER
 * [/PREFIX] in any of its forms, kept under the canonical one): explicit
 * account, key or SAS token and endpoint (NULL fields: the environment's),
 * and the root's request limits, with a client of its own (as
 * bri_obj_store_configure, object_store.h). BRI_EINVAL for a location that
 * is not Azure's. */
int bri_azure_store_configure(const char *prefix_uri, const bri_azure_settings *settings,
                              const bri_store_limits *limits, bri_error *err);

#endif
