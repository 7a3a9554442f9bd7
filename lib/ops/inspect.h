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

#endif
