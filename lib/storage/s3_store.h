/* s3_store.h: the S3 backend of the storage interface (s3://BUCKET/PREFIX),
 * and what brid needs of it beyond store.h: per-root settings and request
 * counters.
 *
 * A store rooted at s3://bucket/p/t.lance names objects "p/t.lance/KEY" in
 * bucket. Every store (and every file and writer opened from it) holds a
 * reference to one shared S3 client per distinct endpoint and credentials,
 * so stores opened and closed per table reuse connections. */
#ifndef BRI_S3_STORE_H
#define BRI_S3_STORE_H

#include "storage/aws_config.h"
#include "storage/backend.h"
#include "storage/s3_client.h"

extern const bri_store_ops bri_s3_store_ops;

/* Settings for every store opened at or below prefix_uri ("s3://bucket" or
 * "s3://bucket/some/prefix"; the longest registered prefix wins; stores
 * elsewhere take the environment). Copies what it is given; settings NULL
 * forgets the prefix. For brid's per-root configuration (its secrets read
 * from files before this call). Thread-safe. */
int bri_s3_store_configure(const char *prefix_uri, const bri_aws_settings *settings,
                           const bri_s3_options *options, bri_error *err);

/* Request counters of the client behind st (BRI_EINVAL when st is not an
 * S3 store). */
int bri_s3_store_stats(const bri_store *st, bri_s3_stats *out, bri_error *err);

#endif
