/* schema.h: questions about a Lance schema (a pre-order list of Field
 * messages linked by parent_id), shared by the manifest and data file layers. */
#ifndef BRI_SCHEMA_H
#define BRI_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>

#include "file.pb-c.h"

#define BRI_BLOB_V2_EXTENSION "lance.blob.v2"

/* A Blob v2 field: extension name lance.blob.v2, either in the deprecated
 * extension_name field or in the ARROW:extension:name metadata entry. */
bool bri_field_is_blob_v2(const Lance__File__Field *f);

/* Value of a metadata key as a NUL-terminated copy, or NULL (malloc'd). */
char *bri_field_metadata(const Lance__File__Field *f, const char *key);

/* Dotted path of field index i ("st.b"; list items keep their own name). */
char *bri_field_path(Lance__File__Field *const *fields, size_t n, size_t i);

/* Index of the field with this id, or -1. */
long bri_field_index(Lance__File__Field *const *fields, size_t n, int id);

#endif
