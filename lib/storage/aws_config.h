/* aws_config.h: where an S3 client's endpoint, region and credentials come
 * from, as AWS tools take them.
 *
 * Order, first found wins, per setting:
 *   1. explicit settings (brid.conf's per-root keys; secrets there are read
 *      from a file by brid, never written inline),
 *   2. the environment: AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+
 *      AWS_SESSION_TOKEN) as one set, AWS_REGION then AWS_DEFAULT_REGION,
 *      AWS_ENDPOINT_URL_S3 then AWS_ENDPOINT_URL, AWS_PROFILE,
 *      AWS_VIRTUAL_HOSTED_STYLE_REQUEST (true/false, as object_store and so
 *      Lance name it), AWS_MAX_ATTEMPTS,
 *   3. the profile (AWS_PROFILE, else "default") in the shared credentials
 *      file (AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials: section
 *      [NAME]) and the config file (AWS_CONFIG_FILE, else ~/.aws/config:
 *      [profile NAME], or [default]): aws_access_key_id,
 *      aws_secret_access_key, aws_session_token, region, endpoint_url,
 *      max_attempts, and
 *      the nested "s3 =" block's addressing_style (path|virtual|auto) and
 *      endpoint_url,
 *   4. defaults: region us-east-1; the AWS endpoint of the region.
 * Addressing: virtual-hosted (bucket.host) for AWS's own endpoint, path-style
 * (host/bucket) for any other endpoint (Ceph, MinIO and most S3-compatible
 * stores are reached by address, not by bucket DNS names), unless set. */
#ifndef BRI_AWS_CONFIG_H
#define BRI_AWS_CONFIG_H

#include <stdbool.h>

#include "util/error.h"

typedef enum bri_s3_addressing {
  BRI_S3_ADDRESSING_AUTO = 0, /* decide by endpoint (see above) */
  BRI_S3_ADDRESSING_PATH,
  BRI_S3_ADDRESSING_VIRTUAL,
} bri_s3_addressing;

/* Explicit settings; NULL/AUTO fields fall through to the environment. */
typedef struct bri_aws_settings {
  const char *profile;
  const char *endpoint;
  const char *region;
  const char *access_key_id;
  const char *secret_access_key;
  const char *session_token;
  bri_s3_addressing addressing;
} bri_aws_settings;

typedef struct bri_aws_config {
  char *access_key_id;
  char *secret_access_key;
  char *session_token; /* NULL when none */
  char *region;
  char *endpoint; /* scheme://host[:port], no trailing slash */
  bool virtual_hosted;
  int max_attempts; /* tries per request, first included; 0: the client's default */
  char *credentials_from; /* "settings", "environment" or the file and profile */
} bri_aws_config;

/* Resolves every setting; explicit may be NULL. Fails (BRI_EINVAL) when no
 * credentials are found, when only half of a key pair is given, or on an
 * endpoint that is not http(s)://host[:port]; messages name the variable or
 * file and line. */
int bri_aws_config_load(const bri_aws_settings *explicit_settings, bri_aws_config *out,
                        bri_error *err);
void bri_aws_config_clear(bri_aws_config *c);

#endif
