/* bri.h: the Blob Reuse Index carried by a DataFile (docs/format/bri.md).
 *
 * The BRI lives in DataFile field 8, length-delimited. A Lance branch uses
 * field 8 as a varint, so the field is not declared in table.proto: protobuf-c
 * keeps it as an unknown field, and this module dispatches on its wire type
 * (length-delimited = BRI, varint = someone else's, kept untouched).
 * Validation implements docs/format/bri.md 3 and runs whenever a manifest is
 * opened: an invalid BRI refuses the whole version. */
#ifndef BRI_BRI_H
#define BRI_BRI_H

#include <stddef.h>
#include <stdint.h>

#include "bri.pb-c.h"
#include "table.pb-c.h"
#include "util/error.h"

#define BRI_DATAFILE_FIELD 8
/* Most ids one data file's BRI may list; bounds validation memory. */
#define BRI_MAX_IDS_PER_FILE ((uint64_t)1 << 24)

/* 1 and *out set when df carries a BRI, 0 (and *out NULL) when it carries
 * none (absent, or field 8 used as a varint by another writer), negative
 * when the BRI bytes are malformed. path is the manifest, for messages. */
int bri_datafile_get_bri(const Lance__Table__DataFile *df, const char *path,
                         Lance__Table__BlobReuseIndex **out, bri_error *err);

/* Stores b as df's field 8 (replacing any BRI it had; a varint field 8 of
 * another writer is kept). b NULL removes the BRI. */
int bri_datafile_set_bri(Lance__Table__DataFile *df, const Lance__Table__BlobReuseIndex *b,
                         bri_error *err);

/* The base a BRI source's sidecars live in: its own base_id, else the data
 * file's, else -1 (the table root). */
int64_t bri_source_base(const Lance__Table__BlobReuseSource *s, const Lance__Table__DataFile *df);

/* True when some DataFile of the manifest carries a BRI (wire type 2 field 8). */
int bri_manifest_has_bri(const Lance__Table__Manifest *m);

/* Validates every BRI of the manifest and the flag rule. */
int bri_manifest_check_bri(const Lance__Table__Manifest *m, const char *path, bri_error *err);

#endif
