/* bri/table.h: libbri's public API, tables: opening a table by URI and
 * loading its versions (lance/table/table.h, version.h), what a version
 * references (lance/table/reach.h), the storage interface every access
 * to a table's files goes through (storage/store.h: also what a location
 * can do and its roots' settings by name, which is all brid asks), and the
 * S3 and Azure backends' typed settings (storage/s3_store.h with
 * storage/aws_config.h, storage/azure_store.h with storage/azure_config.h). */
#ifndef BRI_PUBLIC_TABLE_H
#define BRI_PUBLIC_TABLE_H

#include "lance/table/reach.h"
#include "lance/table/table.h"
#include "lance/table/version.h"
#include "storage/azure_store.h"
#include "storage/s3_store.h"
#include "storage/store.h"

#endif
