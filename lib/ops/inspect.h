/* inspect.h: what `brictl inspect` shows of a table version, as one JSON
 * document whose keys are documented in docs/inspect.md and stable for
 * scripts: the versions (with their timestamps), the chosen version's
 * writer, data format, feature flags (with names), config, schema,
 * fragments (data files with their sizes, Blob v2 sidecar directories and
 * Blob Reuse Index sources; deletion files; row id storage), indices, tags,
 * branches and totals. */
#ifndef BRI_INSPECT_H
#define BRI_INSPECT_H

#include <jansson.h>
#include <stdint.h>

#include "util/error.h"

/* Describes version `version` (0: the latest) of the table at root into
 * *out (owned by the caller). */
int bri_inspect_table(const char *root, uint64_t version, json_t **out, bri_error *err);

/* The Lance releases brid is tested with whose major version is below
 * major, oldest first (names as in compatibility.tested_with). */
json_t *bri_lance_releases_below(unsigned major);

/* What an operator's declaration of the oldest Lance that reads the table
 * (brid.conf min_reader) means for the version an inspect report
 * describes: {min_reader, older_than_declared (the tested releases it
 * excludes), compact_auto ("managed" when a compaction with strategy auto
 * switches the table to Managed blobs, else "auto"), locks_out (the
 * tested releases that read the table now and would not after it)}. */
json_t *bri_inspect_declared(const json_t *report, unsigned min_reader);

#endif
