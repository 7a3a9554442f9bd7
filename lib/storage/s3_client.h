/* s3_client.h: the S3 dialect of the object-store client
 * (storage/object_client.h, object_http.h): requests to an S3 endpoint,
 * path-style or virtual-hosted as its configuration says
 * (storage/aws_config.h), signed with our own AWS Signature V4
 * (storage/s3_sign.h); listings are ListObjectsV2 pages (keys URL-encoded);
 * a read of the last bytes is one GET with a suffix Range; deletes are
 * DeleteObjects of up to 1000 keys; a copy is CopyObject, a part copy
 * UploadPartCopy with x-amz-copy-source-range; multipart uploads are S3's
 * (CreateMultipartUpload, UploadPart, CompleteMultipartUpload,
 * AbortMultipartUpload).
 *
 * Its error mapping: S3's <Error> codes InternalError, SlowDown,
 * ServiceUnavailable, RequestTimeout and RequestTimeTooSkewed are retried;
 * a 412 to If-None-Match: * is "taken"; CopyObject, UploadPartCopy and
 * CompleteMultipartUpload may answer 200 with an <Error>, judged as the
 * error; a CompleteMultipartUpload that meets NoSuchUpload checks the
 * object's ETag against the one its parts give (an earlier attempt may
 * have completed it). */
#ifndef BRI_S3_CLIENT_H
#define BRI_S3_CLIENT_H

#include <stdint.h>

#include "storage/aws_config.h"
#include "storage/object_client.h"
#include "util/error.h"

/* A client of cfg's endpoint with cfg's credentials (copied); zero fields
 * of opt (which may be NULL) take the defaults. */
int bri_s3_client_new(const bri_aws_config *cfg, const bri_obj_options *opt, bri_obj_client **out,
                      bri_error *err);

/* s3://BUCKET[/KEY]: bucket and key (key "" when none; no leading slash,
 * trailing slashes kept) as malloc'd strings. Refuses bucket names S3 does
 * not allow (3-63 of a-z 0-9 . -, starting and ending alphanumeric). */
int bri_s3_uri_parse(const char *uri, char **bucket, char **key, bri_error *err);

/* Every part but the last is at least BRI_S3_PART_MIN bytes; a part, a part
 * copy and a whole-object copy at most BRI_S3_PART_MAX. */
#define BRI_S3_PART_MIN (5u << 20)
#define BRI_S3_PART_MAX ((uint64_t)5 << 30)

#endif
