/* resolve.h: from a Blob v2 descriptor to the bytes it names.
 *
 * A descriptor (kind, position, size, blob_id, blob_uri) is only meaningful
 * together with the DataFile that stores it: Inline bytes sit in that .lance
 * file, Packed/Dedicated bytes in a sidecar named after its stem (or, through
 * the file's Blob Reuse Index, in another directory), External bytes behind a
 * URI or a base path (docs/format/blob.md 2-3, docs/format/bri.md 4). A resolver is
 * therefore built once per DataFile: it decodes the BRI into sorted id tables
 * (binary search per source, no per-blob protobuf work), remembers the data
 * file's path, and keeps the last opened file so that many values of one
 * pack cost one open. Every range is checked against the size of the file it
 * lies in before a byte is read, and errors name that file. */
#ifndef BRI_RESOLVE_H
#define BRI_RESOLVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lance/table/table.h"
#include "table.pb-c.h"
#include "util/arrow_c.h"
#include "util/error.h"

/* Descriptor kinds (docs/format/blob.md sections 2 and 8). Managed (4, 5)
 * are Lance 14's: blob_uri names an object relative to a base's root,
 * the data file's own (4) or base blob_id (5). */
enum {
  BRI_BLOB_INLINE = 0,
  BRI_BLOB_PACKED = 1,
  BRI_BLOB_DEDICATED = 2,
  BRI_BLOB_EXTERNAL = 3,
  BRI_BLOB_MANAGED = 4,
  BRI_BLOB_MANAGED_BASE = 5,
};

/* One stored descriptor. uri points at uri_len bytes (not NUL-terminated),
 * borrowed from wherever the descriptor was decoded. */
typedef struct bri_blob_desc {
  uint8_t kind;
  uint64_t position;
  uint64_t size;
  uint32_t blob_id;
  const char *uri;
  size_t uri_len;
} bri_blob_desc;

/* Decodes element i of a Blob v2 descriptor array (a "+s" struct with
 * children kind "C", position "L", size "L", blob_id "I", blob_uri "u"/"U",
 * found by name, as the fragment reader hands them out). *is_null is set for
 * a null struct or a null kind; d->uri borrows from the array. */
int bri_blob_desc_get(const struct ArrowSchema *s, const struct ArrowArray *a, int64_t i,
                      bri_blob_desc *d, bool *is_null, bri_error *err);

/* Where a descriptor's payload lies: length bytes at offset of path. */
typedef struct bri_blob_location {
  char *path; /* malloc'd; NULL for an empty Inline blob (no file is read) */
  uint64_t offset;
  uint64_t length;
} bri_blob_location;

/* Receives one chunk of a payload; a non-zero return stops the stream and is
 * returned by the streaming call (fill err when returning an error). */
typedef int (*bri_blob_chunk_fn)(void *ctx, const uint8_t *data, size_t len, bri_error *err);

typedef struct bri_blob_resolver bri_blob_resolver;

/* Builds the resolver of data file df of manifest m in table t: data file
 * path, own sidecar directory, and the decoded BRI (if df carries one; the
 * BRI was validated when the manifest was opened, docs/format/bri.md 3). t and m
 * must outlive the resolver. */
int bri_blob_resolver_open(const bri_table *t, const Lance__Table__Manifest *m,
                           const Lance__Table__DataFile *df, bri_blob_resolver **out,
                           bri_error *err);
void bri_blob_resolver_close(bri_blob_resolver *r);

/* Closes the files the resolver keeps open (they reopen on demand): for
 * callers that hold many resolvers and must bound their descriptors. */
void bri_blob_resolver_drop_files(bri_blob_resolver *r);

/* The data file's absolute path (for messages). */
const char *bri_blob_resolver_datafile(const bri_blob_resolver *r);

/* Sidecar path of local blob id L of this data file (docs/format/bri.md 4: a BRI
 * hit gives data_dir(effective base)/blob_dir/name(physical), a miss the
 * identity data_dir(base)/stem/name(L)). malloc'd into *out. */
int bri_blob_sidecar_path(bri_blob_resolver *r, uint32_t local_id, char **out, bri_error *err);

/* Where the bytes of local blob id L of this data file physically live:
 * through the BRI when it names L, else under the file's own stem. Never a
 * chain: BRI entries are terminal by construction (docs/format/bri.md 5).
 * Strings are borrowed from the resolver. */
typedef struct bri_blob_terminal {
  bool has_base;        /* effective base of the sidecar (false: the table root) */
  uint32_t base_id;
  const char *blob_dir; /* one path component under that base's data directory */
  const char *dir;      /* data_dir(base)/blob_dir */
  uint32_t physical_id; /* the sidecar is dir/name(physical_id) */
} bri_blob_terminal;
void bri_blob_terminal_of(const bri_blob_resolver *r, uint32_t local_id, bri_blob_terminal *out);

/* The object a Managed descriptor (kind 4 or 5) names: its blob_uri, a
 * canonical relative path (no empty, "." or ".." component, no leading or
 * trailing '/', no "://", no backslash: Lance 14's rule, anything else is
 * BRI_ECORRUPT), joined to the root of its base (the data file's for kind
 * 4, base blob_id for kind 5, which the manifest must define). Into *out,
 * malloc'd. */
int bri_blob_managed_path(bri_blob_resolver *r, const bri_blob_desc *d, char **out, bri_error *err);

/* Validates d and says where its payload is: kind known, sidecar or object
 * present, range inside the file (Dedicated: sidecar length == size),
 * External URI local (absolute path or file://, or relative to a base path
 * without ".." components), Managed object inside its base (an empty
 * Managed range is not looked up, as Lance does not). Errors: BRI_ECORRUPT
 * (bad descriptor, missing or short file), BRI_EUNSUPPORTED (remote URI
 * scheme), BRI_EIO. */
int bri_blob_locate(bri_blob_resolver *r, const bri_blob_desc *d, bri_blob_location *loc,
                    bri_error *err);
void bri_blob_location_dispose(bri_blob_location *loc);

/* Payload length of d (validates as bri_blob_locate does). */
int bri_blob_length(bri_blob_resolver *r, const bri_blob_desc *d, uint64_t *len, bri_error *err);

/* Streams the payload of d to fn in chunks of at most BRI_BLOB_CHUNK bytes
 * through one buffer of at most that size: a 1 GiB blob never needs more in
 * memory. An empty payload calls fn zero times. */
int bri_blob_stream(bri_blob_resolver *r, const bri_blob_desc *d, bri_blob_chunk_fn fn, void *ctx,
                    bri_error *err);

/* Reads the whole payload of d into a malloc'd buffer (*out non-NULL even when
 * empty); refuses payloads larger than max bytes (BRI_EUNSUPPORTED). */
int bri_blob_read(bri_blob_resolver *r, const bri_blob_desc *d, uint64_t max, uint8_t **out,
                  size_t *len, bri_error *err);

#define BRI_BLOB_CHUNK ((size_t)1 << 20)

#endif
