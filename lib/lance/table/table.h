/* table.h: a Lance table root, on any store (storage/store.h).
 *
 * Opening a table opens its store and lists its versions (either naming
 * scheme) without reading any manifest; manifests are loaded on demand.
 * This module also resolves where the files a manifest names live (base
 * paths: docs/format/table.md section 1), as paths below the table root or below
 * a base, with the store that reaches each (bri_table_store_of), and reads
 * tags and branches from _refs/. Everything here is read-only. */
#ifndef BRI_TABLE_H
#define BRI_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lance/file/pbcache.h"
#include "lance/table/manifest.h"
#include "lance/table/version.h"
#include "storage/store.h"
#include "util/error.h"

typedef struct bri_table_bases bri_table_bases;

typedef struct bri_table {
  char *root;                 /* as given, without trailing slashes: bri_store_uri(store) */
  bri_store *store;           /* the root's store (owned) */
  bri_naming naming;
  size_t n_versions;
  bri_version_entry *versions; /* ascending */
  bri_table_bases *bases;      /* stores of base paths, opened on demand (owned) */
  bri_pbcache *pbcache;        /* data file schemas and layouts decoded once for all readers (owned) */
} bri_table;

typedef struct bri_ref {
  char *name;
  char *branch;     /* NULL for main */
  uint64_t version; /* tags: the tagged version; branches: the parent version */
} bri_ref;

/* Opens root (a directory with _versions/). No manifest: BRI_ENOTFOUND. */
int bri_table_open(const char *root, bri_table **out, bri_error *err);
/* The same on a store already open; the table takes it (closed with the
 * table, also when the open fails). */
int bri_table_open_store(bri_store *st, bri_table **out, bri_error *err);
void bri_table_close(bri_table *t);
/* A table with no version yet in store st (taken as above), for making its
 * first one with bri_commit (which creates _versions/); naming is V2. */
int bri_table_create(bri_store *st, bri_table **out, bri_error *err);

/* The store that reaches path: the table's own below its root, else the
 * store of the base path of m that path lies below (opened once, kept with
 * the table). Anything else is BRI_EINVAL naming it. Safe from several
 * threads at once. */
int bri_table_store_of(const bri_table *t, const Lance__Table__Manifest *m, const char *path,
                       bri_store **out, bri_error *err);

/* What the table's stores (its root's and its bases') moved since it was
 * opened (storage/store.h bri_store_stats): a job that opens a table for
 * itself reads here what it moved, whatever threads did the work. */
void bri_table_store_stats(const bri_table *t, bri_store_stats *out);

/* Lists the versions of the table again (to see other writers' commits). */
int bri_table_refresh(bri_table *t, bri_error *err);
/* Adds version (committed by this process under the table's naming) to
 * the version list, in order, without listing again: a commit knows what it
 * published. */
int bri_table_note_version(bri_table *t, uint64_t version, bri_error *err);

uint64_t bri_table_latest_version(const bri_table *t);
/* Path of version v's manifest (malloc'd), or NULL when v does not exist. */
char *bri_table_manifest_path(const bri_table *t, uint64_t v);
/* Loads version v (0 = latest). Unknown version: BRI_ENOTFOUND. */
int bri_table_load(const bri_table *t, uint64_t v, bri_manifest **out, bri_error *err);
/* The same with BRI_MANIFEST_* options (manifest.h). */
int bri_table_load_opts(const bri_table *t, uint64_t v, unsigned opts, bri_manifest **out,
                        bri_error *err);

/* The transaction that produced version v: the one embedded in its
 * manifest, else its _transactions file. The caller frees it with
 * lance__table__transaction__free_unpacked. A version that records neither
 * is BRI_ECONFLICT: nobody can tell what it changed (Lance refuses to rebase
 * over it too). */
int bri_table_load_transaction(const bri_table *t, uint64_t v, Lance__Table__Transaction **out,
                               bri_error *err);

/* The root of base id (has_base false: the table root), which Managed blob
 * references are relative to: the base's path, file:// stripped; other URI
 * schemes are BRI_EUNSUPPORTED. */
int bri_table_base_root(const bri_table *t, const Lance__Table__Manifest *m, bool has_base,
                        uint32_t base_id, char **out, bri_error *err);
/* Directory that holds data files of base id (has_base false = the table
 * root): {root}/data, {path}/data for dataset-root bases, {path} otherwise.
 * file:// prefixes are stripped; other URI schemes are BRI_EUNSUPPORTED. */
int bri_table_data_dir(const bri_table *t, const Lance__Table__Manifest *m, bool has_base,
                       uint32_t base_id, char **out, bri_error *err);
/* Absolute path of a data file and of its own sidecar directory. */
int bri_table_datafile_path(const bri_table *t, const Lance__Table__Manifest *m,
                            const Lance__Table__DataFile *df, char **out, bri_error *err);
int bri_table_sidecar_dir(const bri_table *t, const Lance__Table__Manifest *m,
                          const Lance__Table__DataFile *df, char **out, bri_error *err);
/* Calls fn(user, path) for every sidecar file df's BRI names, as the
 * absolute path of the object holding the bytes (docs/format/bri.md 4): the
 * source's base data directory / blob_dir / name(physical id). fn returning
 * non-zero stops the walk with that code. No BRI: no calls. mpath names the
 * manifest in messages. */
int bri_table_bri_paths(const bri_table *t, const Lance__Table__Manifest *m, const Lance__Table__DataFile *df,
                        const char *mpath, int (*fn)(void *user, const char *path), void *user, bri_error *err);
/* Path of a fragment's deletion file (malloc'd). */
int bri_table_deletion_path(const bri_table *t, const Lance__Table__Manifest *m,
                            const Lance__Table__DataFragment *f, char **out, bri_error *err);

/* The directory of an index (docs/format/table.md 1): {root or base}/_indices/{uuid}. */
int bri_table_index_dir(const bri_table *t, const Lance__Table__Manifest *m,
                        const Lance__Table__IndexMetadata *x, char **out, bri_error *err);

/* A 16-byte UUID in its 36-character text form. */
void bri_uuid_format(const uint8_t u[16], char out[37]);

/* Reads the JSON files in _refs/tags and _refs/branches (missing dirs: none). */
int bri_table_tags(const bri_table *t, bri_ref **out, size_t *count, bri_error *err);
int bri_table_branches(const bri_table *t, bri_ref **out, size_t *count, bri_error *err);
void bri_refs_free(bri_ref *refs, size_t count);

#endif
