/* pbcache.h: decoded metadata messages, shared by the data files of a table.
 *
 * Every data file carries its schema (global buffer 0) and, for each page,
 * a PageLayout; decoding them was most of the cost of opening a small file
 * (SCALE profile). Yet the files of a table almost always carry the very
 * same bytes: one schema per schema version, and a handful of distinct
 * layouts across thousands of pages (2,000 generated fragments: 16,000 pages,
 * 14 distinct layouts). A cache maps exact bytes of a message type to the
 * message, checked and decoded once (bri_pb_unpack), shared read-only by
 * every file opened with it (bri_datafile_opts.cache, datafile.h).
 *
 * Entries live until the cache is freed (files that share them must be
 * closed first). At most BRI_PBCACHE_MAX entries and BRI_PBCACHE_BYTES of
 * memory are kept; beyond that bri_pbcache_get answers NULL and the caller
 * decodes for itself, so a table whose layouts are all different costs a
 * lookup per page and no more. Thread-safe (one lock; a miss decodes under
 * it, which is rare once a table's few messages are in). */
#ifndef BRI_PBCACHE_H
#define BRI_PBCACHE_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

typedef struct bri_pbcache bri_pbcache;

#define BRI_PBCACHE_MAX 4096
#define BRI_PBCACHE_BYTES ((size_t)16 << 20)

/* An empty cache, or NULL out of memory. */
bri_pbcache *bri_pbcache_new(void);
void bri_pbcache_free(bri_pbcache *c);

/* The desc message encoded by bytes[0..len), decoded once and shared, and
 * the cache's own copy of the bytes (*key, may be NULL): valid until the
 * cache is freed, never to be modified. NULL when the bytes are not a valid
 * desc message, when the cache is full, or out of memory: the caller then
 * decodes them itself (and reports what is wrong). */
const ProtobufCMessage *bri_pbcache_get(bri_pbcache *c, const ProtobufCMessageDescriptor *desc,
                                        const uint8_t *bytes, size_t len, const uint8_t **key);

#endif
