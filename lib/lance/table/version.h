/* version.h: the names of manifest files in _versions/.
 *
 * Lance has two schemes and a table uses exactly one: V1 "N.manifest", and V2
 * "{u64::MAX - N, 20 digits}.manifest" (newest sorts first). Names starting
 * with 'd' are detached versions, and staging/temporary names are not
 * versions; listing skips both. A directory mixing schemes is refused, as
 * Lance refuses it. */
#ifndef BRI_VERSION_H
#define BRI_VERSION_H

#include <stddef.h>
#include <stdint.h>

#include "storage/store.h"
#include "util/error.h"

typedef enum { BRI_NAMING_V1 = 1, BRI_NAMING_V2 = 2 } bri_naming;

typedef struct bri_version_entry {
  uint64_t version;
  char *file;            /* name inside _versions/ */
} bri_version_entry;

/* Classifies a directory entry: 1 = a version manifest (fills version and
 * scheme), 0 = not one (detached, staging, hint file, anything else). */
int bri_version_parse_name(const char *name, uint64_t *version, bri_naming *scheme);

/* File name of version v under scheme (malloc'd). */
char *bri_version_file_name(uint64_t v, bri_naming scheme);

/* Lists versions in versions_dir (a directory of store st), ascending.
 * Duplicates (the same version under both names) and mixed schemes are
 * errors. An empty list is not an error; *scheme is BRI_NAMING_V2 then
 * (what Lance uses for new tables). */
int bri_versions_list(bri_store *st, const char *versions_dir, bri_version_entry **out,
                      size_t *count, bri_naming *scheme, bri_error *err);
void bri_versions_free(bri_version_entry *v, size_t count);

#endif
