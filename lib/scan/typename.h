/* typename.h: the type of a manifest field as apache-arrow's
 * DataType.toString() writes it ("Int64", "FixedSizeList[8]<Float32>",
 * "Struct<{data:LargeBinary, uri:Utf8}>"), which the LanceDB oracle prints in
 * its schema lines: brictl scan's report must match it string for string. */
#ifndef BRI_TYPENAME_H
#define BRI_TYPENAME_H

#include <stddef.h>

#include "table.pb-c.h"

/* The type string of field i of m, malloc'd; NULL when out of memory. */
char *bri_scan_type_name(const Lance__Table__Manifest *m, size_t i);

#endif
