/* s3_store.h: the S3 backend of the storage interface (s3://BUCKET/PREFIX;
 * Azure's az://CONTAINER/PREFIX is the same store over the Azure client,
 * storage/azure_client.h, with settings of its own below;
 * its ops are in storage/backend.h), and its per-root settings by type
 * (bri_store_configure_root, store.h, maps a daemon's named settings onto
 * these; brid itself names no backend).
 *
 * A store rooted at s3://bucket/p/t.lance names objects "p/t.lance/KEY" in
 * bucket. Every store (and every file and writer opened from it) holds a
 * reference to one shared S3 client per distinct endpoint, credentials and
 * registered root, so stores opened and closed per table reuse connections,
 * and a root's request limits hold for everything done below it. */
#ifndef BRI_S3_STORE_H
#define BRI_S3_STORE_H

#include "storage/aws_config.h"
#include "storage/azure_config.h"
#include "storage/store.h"
#include "util/error.h"

/* Request limits of a root (store.h). */
typedef bri_store_limits bri_s3_limits;

/* Settings for every store opened at or below prefix_uri ("s3://bucket" or
 * "s3://bucket/some/prefix"; the longest registered prefix wins; stores
 * elsewhere take the environment). Stores under a registered prefix share
 * one client of their own, so the limits are the prefix's alone. Copies
 * what it is given; settings NULL forgets the prefix. For brid's per-root
 * configuration (its secrets read from files before this call).
 * Thread-safe; stores already open keep the client they have. */
int bri_s3_store_configure(const char *prefix_uri, const bri_aws_settings *settings,
                           const bri_s3_limits *limits, bri_error *err);

/* The same for Azure roots (az://CONTAINER[/PREFIX] in any of its forms,
 * kept under the canonical one): explicit account, key or SAS token and
 * endpoint (NULL fields: the environment's), and the root's request limits,
 * with a client of its own. BRI_EINVAL for a location that is not Azure's. */
int bri_azure_store_configure(const char *prefix_uri, const bri_azure_settings *settings,
                              const bri_s3_limits *limits, bri_error *err);

#endif
