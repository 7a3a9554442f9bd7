/* azure_client.h: the Azure Blob Storage dialect of the object-store client
 * (storage/object_client.h, object_http.h), API version 2021-08-06. A
 * bucket is a container; requests go to the configured endpoint
 * (storage/azure_config.h; path-style with the account as the endpoint's
 * path, as the emulator wants), signed with Shared Key or carrying the SAS
 * token (storage/azure_sign.h). A whole-object PUT is Put Blob (BlockBlob);
 * HEAD is Get Blob Properties; a listing is List Blobs (which has no
 * start-after); the last bytes are a range of the first 64 KiB, whose
 * answer gives the size (Azure has no suffix ranges), batched as a HEAD and
 * a range; deletes are Blob Batches of up to 256 Delete Blob sub-requests
 * signed on their own (with a SAS token alone, one Delete Blob per key); a
 * copy is a synchronous Copy Blob, a part copy Put Block From URL with
 * x-ms-source-range, and the source URL carries a service SAS of the
 * account key (or the SAS token), as the service reads it on its own; a
 * multipart upload is blocks: create makes an id and sends nothing, parts
 * are Put Block, complete is Put Block List, abort sends nothing (the
 * service drops uncommitted blocks itself).
 *
 * Its error mapping: the code comes in x-ms-error-code (HEAD answers have
 * no body); ServerBusy (503), OperationTimedOut and InternalError (500) are
 * retried; a Put Blob with If-None-Match: * that meets 409
 * BlobAlreadyExists (or 412) is "taken". */
#ifndef BRI_AZURE_CLIENT_H
#define BRI_AZURE_CLIENT_H

#include "storage/azure_config.h"
#include "storage/object_client.h"
#include "util/error.h"

/* A client of cfg's endpoint, account and credential (copied); zero fields
 * of opt (which may be NULL) take the defaults. */
int bri_azure_client_new(const bri_azure_config *cfg, const bri_obj_options *opt, bri_obj_client **out,
                         bri_error *err);

#endif
