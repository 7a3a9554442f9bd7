/* optin.h: switching a table to Managed blobs (Lance 14,
 * docs/format/blob.md 8), the commit that opts it in.
 *
 * The switch is one version, as Lance 14's update_schema_metadata makes
 * it: an UpdateConfig transaction whose schema_metadata_updates set
 * lance.blob.managed to "true" (one entry, merged: replace false), and a
 * manifest that is the latest one with that schema metadata and flag
 * managed_blobs in both words (bri_commit derives the flag from the
 * metadata). Metadata and flag arrive in the same put-if-absent manifest,
 * so no writer ever reads a version with one and not the other. Nothing
 * else changes: no fragment, no file, no payload; Packed and Dedicated
 * values stay as they are until a compaction adopts them in place
 * (compact/managed.h), and Lance 14 reads them so meanwhile.
 *
 * Who can read the table afterwards is the caller's decision: Lance 12 and
 * 13 refuse it by the flag, for good (the flag is sticky). brid switches
 * only when asked (strategy managed, materialize --managed, or brid's
 * policy when the operator declared min_reader 14). */
#ifndef BRI_COMPACT_OPTIN_H
#define BRI_COMPACT_OPTIN_H

#include <stdbool.h>
#include <stdint.h>

#include "lance/table/manifest.h"
#include "lance/table/table.h"
#include "util/error.h"
#include "util/hooks.h"

/* Whether version m holds a Blob v2 field and is not Managed yet: what a
 * switch would change. */
bool bri_managed_optin_applies(const Lance__Table__Manifest *m);

/* The oldest Lance (major version) that reads Managed blobs: an operator
 * who declares it (brid.conf min_reader) lets auto switch tables. */
#define BRI_MANAGED_MIN_READER 14

/* Refuses (BRI_EUNSUPPORTED, naming where, the table or its manifest, and
 * the reason) a version that cannot be switched: a data storage version
 * other than 2.2 (Lance 14 keeps Managed descriptors only in files of 2.2
 * and 2.3, and brid writes 2.1 and 2.2). 0 otherwise, also for a version
 * the switch would not change. */
int bri_managed_optin_check(const char *where, const bri_manifest *m, bri_error *err);

/* Commits the switch on top of *m, the latest version of t as the caller
 * loaded it. When another writer takes that version first, the switch is
 * built again on the latest version (it touches no fragment, so whatever
 * won is kept under it), up to max_attempts times (0: 20). hooks->confirm
 * (may be NULL) is asked before each attempt. On success *version is the
 * version committed and *m that version, loaded (the old one freed); when
 * *m does not need the switch (bri_managed_optin_applies), nothing is
 * committed and *version is 0. Errors: bri_managed_optin_check's,
 * BRI_ECONFLICT after max_attempts lost races, and the usual read and
 * write errors; *m is then unchanged or the latest version seen, never
 * NULL. */
int bri_managed_optin(bri_table *t, bri_manifest **m, const bri_hooks *hooks, int max_attempts,
                      uint64_t *version, bri_error *err);

#endif
