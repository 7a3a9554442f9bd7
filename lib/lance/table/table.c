/* table.c: table roots, version lookup, base-path resolution and refs (see
 * table.h). Tag and branch files are JSON; Lance's code writes camelCase
 * keys and its docs show snake_case, so both spellings are accepted. */
#include "lance/table/table.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lance/table/bri.h"
#include "lance/table/rowids.h"
#include "lance/table/sidecar.h"
#include "util/fsutil.h"
#include "util/pbcheck.h"

/* Stores of base paths, by the path the manifest gives (file:// dropped);
 * opened on demand from any thread (fragments are opened in parallel). */
struct bri_table_bases {
  pthread_mutex_t lock;
  size_t n;
  char **paths;
  bri_store **stores;
};

static int list_versions(bri_table *t, bri_version_entry **v, size_t *n, bri_naming *naming,
                         bri_error *err) {
  char *vdir = bri_path_join(t->root, "_versions");
  int rc = vdir ? bri_versions_list(t->store, vdir, v, n, naming, err)
                : bri_error_set(err, BRI_ENOMEM, "%s: out of memory", t->root);
  free(vdir);
  return rc;
}

int bri_table_create(bri_store *st, bri_table **out, bri_error *err) {
  *out = NULL;
  const char *root = bri_store_uri(st);
  bri_table *t = calloc(1, sizeof *t);
  bool ok = t && (t->root = strdup(root)) && (t->bases = calloc(1, sizeof *t->bases)) &&
            (t->pbcache = bri_pbcache_new());
  if (ok && pthread_mutex_init(&t->bases->lock, NULL) != 0) {
    free(t->bases);
    t->bases = NULL;
    ok = false;
  }
  if (!ok) {
    int rc = bri_error_set(err, BRI_ENOMEM, "%s: out of memory", root);
    if (t) t->store = st, bri_table_close(t);
    else bri_store_close(st);
    return rc;
  }
  t->store = st;
  t->naming = BRI_NAMING_V2; /* what Lance uses for new tables */
  *out = t;
  return 0;
}

int bri_table_open_store(bri_store *st, bri_table **out, bri_error *err) {
  bri_table *t;
  int rc = bri_table_create(st, &t, err);
  if (rc) return rc;
  rc = list_versions(t, &t->versions, &t->n_versions, &t->naming, err);
  if (rc == BRI_ENOTFOUND)
    rc = bri_error_set(err, BRI_ENOTFOUND, "%s: not a Lance table (no _versions directory)", t->root);
  else if (!rc && t->n_versions == 0)
    rc = bri_error_set(err, BRI_ENOTFOUND, "%s: not a Lance table (no manifest in %s/_versions)",
                       t->root, t->root);
  if (rc) {
    bri_table_close(t);
    return rc;
  }
  *out = t;
  return 0;
}

int bri_table_open(const char *root, bri_table **out, bri_error *err) {
  *out = NULL;
  bri_store *st;
  int rc = bri_store_open(root, 0, &st, err);
  if (rc == BRI_ENOTFOUND) {
    size_t n = strlen(root);
    while (n > 1 && root[n - 1] == '/') n--;
    return bri_error_set(err, BRI_ENOTFOUND, "%.*s: not a Lance table (no _versions directory)",
                         (int)n, root);
  }
  return rc ? rc : bri_table_open_store(st, out, err);
}

void bri_table_close(bri_table *t) {
  if (!t) return;
  bri_versions_free(t->versions, t->n_versions);
  if (t->bases) {
    for (size_t i = 0; i < t->bases->n; i++) {
      free(t->bases->paths[i]);
      bri_store_close(t->bases->stores[i]);
    }
    free(t->bases->paths);
    free(t->bases->stores);
    pthread_mutex_destroy(&t->bases->lock);
    free(t->bases);
  }
  bri_pbcache_free(t->pbcache);
  bri_store_close(t->store);
  free(t->root);
  free(t);
}

int bri_table_refresh(bri_table *t, bri_error *err) {
  bri_version_entry *v;
  size_t nv;
  bri_naming scheme;
  int rc = list_versions(t, &v, &nv, &scheme, err);
  if (rc) return rc;
  bri_versions_free(t->versions, t->n_versions);
  t->versions = v, t->n_versions = nv;
  if (nv) t->naming = scheme;
  return 0;
}

int bri_table_note_version(bri_table *t, uint64_t version, bri_error *err) {
  size_t at = t->n_versions;
  while (at > 0 && t->versions[at - 1].version > version) at--;
  if (at > 0 && t->versions[at - 1].version == version) return 0;
  char *file = bri_version_file_name(version, t->naming);
  bri_version_entry *v = file ? realloc(t->versions, (t->n_versions + 1) * sizeof *v) : NULL;
  if (!v) {
    free(file);
    return bri_error_set(err, BRI_ENOMEM, "%s: out of memory", t->root);
  }
  memmove(v + at + 1, v + at, (t->n_versions - at) * sizeof *v);
  v[at] = (bri_version_entry){.version = version, .file = file};
  t->versions = v;
  t->n_versions++;
  return 0;
}

/* The local path of a base (file:// dropped), or NULL for another scheme. */
static const char *base_local(const Lance__Table__BasePath *b) {
  const char *p = b->path ? b->path : "";
  if (!strncmp(p, "file://", 7)) p += 7;
  return strstr(p, "://") ? NULL : p;
}

/* bri_table_store_of for a path outside the root, under b's lock. */
static int base_store(const bri_table *t, bri_table_bases *b, const Lance__Table__Manifest *m,
                      const char *path, bri_store **out, bri_error *err) {
  for (size_t i = 0; i < b->n; i++)
    if (bri_path_below(b->paths[i], path)) {
      *out = b->stores[i];
      return 0;
    }
  for (size_t i = 0; m && i < m->n_base_paths; i++) {
    const char *p = base_local(m->base_paths[i]);
    if (!p || p[0] != '/' || !bri_path_below(p, path)) continue;
    char **np = realloc(b->paths, (b->n + 1) * sizeof *np);
    if (np) b->paths = np;
    bri_store **ns = np ? realloc(b->stores, (b->n + 1) * sizeof *ns) : NULL;
    if (ns) b->stores = ns;
    if (!np || !ns || !(b->paths[b->n] = strdup(p)))
      return bri_error_set(err, BRI_ENOMEM, "out of memory");
    int rc = bri_store_open(p, 0, &b->stores[b->n], err);
    if (rc) {
      free(b->paths[b->n]);
      return bri_error_wrap(err, "%s: base %u of %s", path, m->base_paths[i]->id, t->root);
    }
    *out = b->stores[b->n++];
    return 0;
  }
  return bri_error_set(err, BRI_EINVAL, "%s is neither in the table %s nor in one of its bases",
                       path, t->root);
}

int bri_table_store_of(const bri_table *t, const Lance__Table__Manifest *m, const char *path,
                       bri_store **out, bri_error *err) {
  *out = NULL;
  if (bri_store_key(t->store, path)) {
    *out = t->store;
    return 0;
  }
  bri_table_bases *b = t->bases;
  pthread_mutex_lock(&b->lock);
  int rc = base_store(t, b, m, path, out, err);
  pthread_mutex_unlock(&b->lock);
  return rc;
}

void bri_table_store_stats(const bri_table *t, bri_store_stats *out) {
  memset(out, 0, sizeof *out);
  if (!t) return;
  bri_store_stats_get(t->store, out);
  pthread_mutex_lock(&t->bases->lock);
  for (size_t i = 0; i < t->bases->n; i++) {
    bri_store_stats one;
    bri_store_stats_get(t->bases->stores[i], &one);
    bri_store_stats_add(out, &one);
  }
  pthread_mutex_unlock(&t->bases->lock);
}

uint64_t bri_table_latest_version(const bri_table *t) {
  return t->n_versions ? t->versions[t->n_versions - 1].version : 0;
}

char *bri_table_manifest_path(const bri_table *t, uint64_t v) {
  for (size_t i = 0; i < t->n_versions; i++)
    if (t->versions[i].version == v)
      return bri_strdupf("%s/_versions/%s", t->root, t->versions[i].file);
  return NULL;
}

int bri_table_load(const bri_table *t, uint64_t v, bri_manifest **out, bri_error *err) {
  return bri_table_load_opts(t, v, 0, out, err);
}

int bri_table_load_opts(const bri_table *t, uint64_t v, unsigned opts, bri_manifest **out,
                        bri_error *err) {
  *out = NULL;
  if (v == 0) v = bri_table_latest_version(t);
  char *p = bri_table_manifest_path(t, v);
  if (!p)
    return bri_error_set(err, BRI_ENOTFOUND, "%s: no version %llu (latest is %llu)", t->root,
                         (unsigned long long)v, (unsigned long long)bri_table_latest_version(t));
  int rc = bri_manifest_read_opts(t->store, p, opts, out, err);
  if (!rc && (*out)->pb->version != v) {
    rc = bri_error_set(err, BRI_ECORRUPT, "%s: file name says version %llu, manifest says %llu", p,
                       (unsigned long long)v, (unsigned long long)(*out)->pb->version);
    bri_manifest_free(*out);
    *out = NULL;
  }
  free(p);
  return rc;
}

int bri_table_load_transaction(const bri_table *t, uint64_t v, Lance__Table__Transaction **out,
                               bri_error *err) {
  *out = NULL;
  bri_manifest *m;
  int rc = bri_table_load(t, v, &m, err);
  if (rc) return rc;
  if (m->txn) { /* take the embedded one */
    *out = m->txn;
    m->txn = NULL;
    bri_manifest_free(m);
    return 0;
  }
  const char *name = m->pb->transaction_file;
  if (!name || !*name || strchr(name, '/')) {
    bri_manifest_free(m);
    return bri_error_set(err, BRI_ECONFLICT,
                         "%s: version %llu records no transaction; its changes cannot be told",
                         t->root, (unsigned long long)v);
  }
  char *p = bri_strdupf("%s/_transactions/%s", t->root, name);
  bri_manifest_free(m);
  uint8_t *buf;
  size_t len;
  rc = p ? bri_store_read(t->store, p, (size_t)1 << 30, &buf, &len, err)
         : bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (!rc) {
    rc = bri_pb_unpack(&lance__table__transaction__descriptor, buf, len, 0, p, "transaction",
                       (ProtobufCMessage **)out, err);
    free(buf);
  }
  free(p);
  return rc;
}

void bri_uuid_format(const uint8_t u[16], char out[37]) {
  snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
           u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
           u[15]);
}

int bri_table_index_dir(const bri_table *t, const Lance__Table__Manifest *m,
                        const Lance__Table__IndexMetadata *x, char **out, bri_error *err) {
  *out = NULL;
  if (!x->uuid || x->uuid->uuid.len != 16)
    return bri_error_set(err, BRI_ECORRUPT, "%s: index %s has no 16-byte uuid", t->root,
                         x->name ? x->name : "?");
  char id[37];
  bri_uuid_format(x->uuid->uuid.data, id);
  if (!x->has_base_id) {
    *out = bri_strdupf("%s/_indices/%s", t->root, id);
  } else {
    const Lance__Table__BasePath *b = NULL;
    for (size_t i = 0; i < m->n_base_paths; i++)
      if (m->base_paths[i]->id == x->base_id) b = m->base_paths[i];
    if (!b || !b->path)
      return bri_error_set(err, BRI_ECORRUPT, "%s: index %s names base id %u, which is not defined",
                           t->root, id, x->base_id);
    const char *p = strncmp(b->path, "file://", 7) ? b->path : b->path + 7;
    if (strstr(p, "://"))
      return bri_error_set(err, BRI_EUNSUPPORTED, "%s: base %u is at %s; brid only works on local "
                           "paths", t->root, x->base_id, b->path);
    *out = b->is_dataset_root ? bri_strdupf("%s/_indices/%s", p, id) : bri_strdupf("%s/%s", p, id);
  }
  return *out ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
}

static const Lance__Table__BasePath *find_base(const Lance__Table__Manifest *m, uint32_t id) {
  for (size_t i = 0; i < m->n_base_paths; i++)
    if (m->base_paths[i]->id == id) return m->base_paths[i];
  return NULL;
}

int bri_table_base_root(const bri_table *t, const Lance__Table__Manifest *m, bool has_base,
                        uint32_t base_id, char **out, bri_error *err) {
  *out = NULL;
  if (!has_base) {
    *out = strdup(t->root);
  } else {
    const Lance__Table__BasePath *b = find_base(m, base_id);
    if (!b) return bri_error_set(err, BRI_ECORRUPT, "%s: base id %u is not defined", t->root, base_id);
    const char *p = b->path ? b->path : "";
    if (!strncmp(p, "file://", 7)) p += 7;
    else if (strstr(p, "://"))
      return bri_error_set(err, BRI_EUNSUPPORTED, "%s: base %u is at %s; brid only works on local paths",
                           t->root, base_id, p);
    if (p[0] != '/')
      return bri_error_set(err, BRI_ECORRUPT, "%s: base %u path \"%s\" is not absolute", t->root,
                           base_id, p);
    *out = strdup(p);
  }
  return *out ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
}

int bri_table_data_dir(const bri_table *t, const Lance__Table__Manifest *m, bool has_base,
                       uint32_t base_id, char **out, bri_error *err) {
  char *root;
  int rc = bri_table_base_root(t, m, has_base, base_id, &root, err);
  if (rc) return rc;
  /* the table root and dataset-root bases keep data files in data/ */
  *out = !has_base || find_base(m, base_id)->is_dataset_root ? bri_path_join(root, "data") : strdup(root);
  free(root);
  return *out ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
}

int bri_table_datafile_path(const bri_table *t, const Lance__Table__Manifest *m,
                            const Lance__Table__DataFile *df, char **out, bri_error *err) {
  char *dir;
  int rc = bri_table_data_dir(t, m, df->has_base_id, df->base_id, &dir, err);
  if (rc) return rc;
  *out = bri_path_join(dir, df->path);
  free(dir);
  return *out ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
}

int bri_table_sidecar_dir(const bri_table *t, const Lance__Table__Manifest *m,
                          const Lance__Table__DataFile *df, char **out, bri_error *err) {
  char *dir, *stem = bri_datafile_stem(df->path);
  int rc = stem ? bri_table_data_dir(t, m, df->has_base_id, df->base_id, &dir, err)
                : bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (rc) {
    free(stem);
    return rc;
  }
  /* the stem keeps any subdirectory of df->path: sidecars sit next to the file */
  const char *slash = strrchr(df->path, '/');
  *out = slash ? bri_strdupf("%s/%.*s/%s", dir, (int)(slash - df->path), df->path, stem)
               : bri_path_join(dir, stem);
  free(dir);
  free(stem);
  return *out ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
}

int bri_table_deletion_path(const bri_table *t, const Lance__Table__Manifest *m,
                            const Lance__Table__DataFragment *f, char **out, bri_error *err) {
  const Lance__Table__DeletionFile *d = f->deletion_file;
  *out = NULL;
  if (!d) return bri_error_set(err, BRI_ENOTFOUND, "fragment %llu has no deletion file",
                               (unsigned long long)f->id);
  const char *root = t->root;
  char *base_root = NULL;
  if (d->has_base_id) {
    const Lance__Table__BasePath *b = find_base(m, d->base_id);
    if (!b) return bri_error_set(err, BRI_ECORRUPT, "%s: base id %u is not defined", t->root, d->base_id);
    const char *p = strncmp(b->path, "file://", 7) ? b->path : b->path + 7;
    base_root = strdup(p);
    root = base_root;
  }
  const char *ext = d->file_type == LANCE__TABLE__DELETION_FILE__DELETION_FILE_TYPE__BITMAP ? "bin" : "arrow";
  *out = bri_strdupf("%s/_deletions/%llu-%llu-%llu.%s", root, (unsigned long long)f->id,
                     (unsigned long long)d->read_version, (unsigned long long)d->id, ext);
  free(base_root);
  return *out ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
}

static const char *json_str2(json_t *o, const char *a, const char *b) {
  json_t *v = json_object_get(o, a);
  if (!v) v = json_object_get(o, b);
  return json_is_string(v) ? json_string_value(v) : NULL;
}

static int json_u64_2(json_t *o, const char *a, const char *b, uint64_t *out) {
  json_t *v = json_object_get(o, a);
  if (!v) v = json_object_get(o, b);
  if (!json_is_integer(v) || json_integer_value(v) < 0) return 0;
  *out = (uint64_t)json_integer_value(v);
  return 1;
}

/* Percent-decodes a branch file name ("a%2Fb" -> "a/b"). */
static char *unescape(const char *s) {
  char *o = malloc(strlen(s) + 1), *w = o;
  if (!o) return NULL;
  for (; *s; s++) {
    unsigned c;
    if (s[0] == '%' && sscanf(s + 1, "%2x", &c) == 1 && s[1] && s[2]) {
      *w++ = (char)c;
      s += 2;
    } else {
      *w++ = *s;
    }
  }
  *w = 0;
  return o;
}

static int read_refs(const bri_table *t, const char *sub, int is_tag, bri_ref **out,
                     size_t *count, bri_error *err) {
  *out = NULL;
  *count = 0;
  char *dir = bri_strdupf("%s/_refs/%s", t->root, sub);
  if (!dir) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  bri_store_entry *e;
  size_t n;
  int rc = bri_store_list(t->store, dir, 0, &e, &n, err);
  if (rc == BRI_ENOTFOUND) {
    free(dir);
    return 0;
  }
  if (rc) {
    free(dir);
    return rc;
  }
  bri_ref *refs = calloc(n ? n : 1, sizeof *refs);
  size_t k = 0;
  if (!refs) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  for (size_t i = 0; i < n && !rc; i++) {
    char *name = e[i].name;
    size_t len = strlen(name);
    if (len <= 5 || strcmp(name + len - 5, ".json")) continue;
    char *p = bri_path_join(dir, name);
    uint8_t *buf = NULL;
    size_t blen;
    json_error_t je;
    json_t *j = NULL;
    if (!p) {
      rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
      break;
    }
    if ((rc = bri_store_read(t->store, p, 1 << 20, &buf, &blen, err)) == 0 &&
        !(j = json_loadb((const char *)buf, blen, 0, &je)))
      rc = bri_error_set(err, BRI_ECORRUPT, "%s: %s", p, je.text);
    uint64_t ver;
    const char *vkey = is_tag ? "version" : "parentVersion", *vkey2 = is_tag ? "version" : "parent_version";
    if (!rc && (!json_is_object(j) || !json_u64_2(j, vkey, vkey2, &ver))) {
      rc = bri_error_set(err, BRI_ECORRUPT, "%s: expected an object with a non-negative integer "
                         "version", p);
    } else if (!rc) {
      const char *br = is_tag ? json_str2(j, "branch", "branch")
                              : json_str2(j, "parentBranch", "parent_branch");
      name[len - 5] = 0;
      refs[k].name = is_tag ? strdup(name) : unescape(name);
      refs[k].branch = br ? strdup(br) : NULL;
      refs[k].version = ver;
      k++;
    }
    json_decref(j);
    free(buf);
    free(p);
  }
  bri_store_entries_free(e, n);
  free(dir);
  if (rc) {
    bri_refs_free(refs, k);
    return rc;
  }
  *out = refs;
  *count = k;
  return 0;
}

int bri_table_tags(const bri_table *t, bri_ref **out, size_t *count, bri_error *err) {
  return read_refs(t, "tags", 1, out, count, err);
}

int bri_table_branches(const bri_table *t, bri_ref **out, size_t *count, bri_error *err) {
  return read_refs(t, "branches", 0, out, count, err);
}

void bri_refs_free(bri_ref *refs, size_t count) {
  if (!refs) return;
  for (size_t i = 0; i < count; i++) {
    free(refs[i].name);
    free(refs[i].branch);
  }
  free(refs);
}

int bri_table_bri_paths(const bri_table *t, const Lance__Table__Manifest *m, const Lance__Table__DataFile *df,
                        const char *mpath, int (*fn)(void *user, const char *path), void *user, bri_error *err) {
  Lance__Table__BlobReuseIndex *b;
  int rc = bri_datafile_get_bri(df, mpath, &b, err);
  if (rc <= 0) return rc;
  rc = 0;
  for (size_t i = 0; i < b->n_sources && !rc; i++) {
    const Lance__Table__BlobReuseSource *s = b->sources[i];
    int64_t base = bri_source_base(s, df);
    char *dir = NULL;
    uint64_t *phys = NULL;
    size_t n = 0;
    rc = bri_table_data_dir(t, m, base >= 0, (uint32_t)(base >= 0 ? base : 0), &dir, err);
    if (!rc) rc = bri_u64array_decode(s->physical_ids, BRI_MAX_IDS_PER_FILE, &phys, &n, err);
    for (size_t k = 0; k < n && !rc; k++) {
      char name[BRI_BLOB_NAME_LEN];
      bri_blob_file_name((uint32_t)phys[k], name);
      char *p = bri_strdupf("%s/%s/%s", dir, s->blob_dir, name);
      rc = p ? fn(user, p) : bri_error_set(err, BRI_ENOMEM, "out of memory");
      free(p);
    }
    free(dir), free(phys);
  }
  lance__table__blob_reuse_index__free_unpacked(b, NULL);
  return rc;
}
