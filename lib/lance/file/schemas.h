/* schemas.h: decoded data file schemas, shared by the files of a table.
 *
 * Every data file stores its schema in global buffer 0 (a FileDescriptor:
 * the Schema and the row count). The files of a table almost always carry
 * the very same schema bytes (one per schema version), and decoding them
 * was the largest single cost of opening a small file (SCALE profile: 43 K
 * of 160 K instructions). A cache maps exact schema bytes to their decoded,
 * validated Schema, decoded once; bri_datafile_open_in (datafile.h) uses it.
 *
 * Entries live until the cache is freed (the files that share them must be
 * closed first); at most BRI_SCHEMAS_MAX distinct schemas are kept, beyond
 * that bri_schemas_get answers NULL and the caller decodes for itself.
 * Thread-safe: one lock around the lookup (the decoding of a new schema
 * happens outside it). */
#ifndef BRI_SCHEMAS_H
#define BRI_SCHEMAS_H

#include <stddef.h>
#include <stdint.h>

#include "file.pb-c.h"

typedef struct bri_schemas bri_schemas;

#define BRI_SCHEMAS_MAX 64

/* An empty cache, or NULL out of memory. */
bri_schemas *bri_schemas_new(void);
void bri_schemas_free(bri_schemas *c);

/* The Schema encoded by bytes[0..len), decoded once and shared, and the
 * cache's own copy of the bytes (*key, may be NULL): valid until the cache
 * is freed, never to be modified. NULL when the bytes are not a valid
 * Schema, when the cache is full, or out of memory: the caller then decodes
 * them itself (and reports what is wrong). */
const Lance__File__Schema *bri_schemas_get(bri_schemas *c, const uint8_t *bytes, size_t len,
                                           const uint8_t **key);

#endif
