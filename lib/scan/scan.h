/* scan.h: a table version read the way LanceDB reads it: the row count and
 * one SHA-256 per top-level column over every visible row (scan/hash.h), in
 * the exact shape of the LanceDB oracle tests/interop/lance_read.mjs, so
 * that "brid reads this table like Lance does" is a comparison of two
 * outputs. `brictl scan` prints it; brid and the unit tests can call it.
 *
 * The report (JSON): table (absolute, as node's path.resolve writes it),
 * version, rows (visible rows read), countRows (the manifest's count),
 * fragments, key (the column rows were ordered by, or null for scan order),
 * schema (one "name:Type" string per top-level column, typename.h), columns
 * {name: {type, nulls, sha256, and for Blob v2 columns descriptorKinds and
 * payloadBytes, for columns with a Blob v2 field inside nestedBlobs}}. */
#ifndef BRI_SCAN_H
#define BRI_SCAN_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"

typedef struct bri_scan_options {
  uint64_t version; /* 0: the latest */
  const char *key;  /* order rows by this top-level column; "" scan order; NULL: "id" if the table has one */
  bool blob_bytes;  /* hash Blob v2 payloads (false: their descriptors) */
} bri_scan_options;

/* Scans table version o->version of the table at root into *report (owned
 * by the caller). Every fragment's data files stay open during the scan. */
int bri_scan_table(const char *root, const bri_scan_options *o, json_t **report, bri_error *err);

#endif
