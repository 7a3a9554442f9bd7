/* bri/table.h: libbri's public API, tables: opening a table by URI and
 * loading its versions (lance/table/table.h, version.h), what a version
 * references (lance/table/reach.h), the storage interface every access
 * to a table's files goes through (storage/store.h), and the settings of
 * S3 roots (storage/s3_store.h, with storage/aws_config.h); Azure locations
 * (az://, storage/azure_config.h) open through the same store.h. */
#ifndef BRI_PUBLIC_TABLE_H
#define BRI_PUBLIC_TABLE_H

#include "lance/table/reach.h"
#include "lance/table/table.h"
#include "lance/table/version.h"
#include "storage/s3_store.h"
#include "storage/store.h"

#endif
