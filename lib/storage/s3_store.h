/* s3_store.h: the S3 backend of the storage interface (s3://BUCKET/PREFIX;
 * its ops, bri_s3_store_ops, are in storage/backend.h): an object store
 * (storage/object_store.h) over the S3 client (storage/s3_client.h), and
 * its per-root settings by type (bri_store_configure_root, store.h, maps a
 * daemon's named settings onto these; brid itself names no backend).
 * Stores take their endpoint, region and credentials as aws_config.h says:
 * a registered prefix's settings first, then the environment and ~/.aws. */
#ifndef BRI_S3_STORE_H
#define BRI_S3_STORE_H

#include "storage/aws_config.h"
#include "storage/store.h"
#include "util/error.h"

/* Settings for every store opened at or below prefix_uri ("s3://bucket" or
 * "s3://bucket/some/prefix"), as bri_obj_store_configure (object_store.h)
 * keeps them: the longest registered prefix wins, its stores share a client
 * of their own within limits. Copies what it is given; settings NULL
 * forgets the prefix. For brid's per-root configuration (its secrets read
 * from files before this call). */
int bri_s3_store_configure(const char *prefix_uri, const bri_aws_settings *settings,
                           const bri_store_limits *limits, bri_error *err);

#endif
