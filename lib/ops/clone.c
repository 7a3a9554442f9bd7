/* clone.c: shallow and deep clones of one table version (see clone.h).
 *
 * Both kinds build the clone's manifest from a copy of the source's (every
 * unknown field kept), then commit it with bri_commit into the new root,
 * which gets V2 manifest naming (what Lance uses for new tables). The
 * deep clone copies first and commits last, so an interrupted clone never
 * has a version that names a missing file; its journal lists every path it
 * created, and a failure removes exactly those (newest first). Paths in the
 * clone are computed by resolving the copied manifest against the clone's
 * own root once base ids are dropped: the same resolver that readers use
 * decides where the copies go. A deep clone reads the source's files
 * through the store that reaches them (the source's or its base's), which
 * refuses symbolic links on the way (the directory checks only give the
 * early message), and copies server-side where the stores can. */
#include "ops/clone.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blob/managed.h"
#include "blob/sizes.h"
#include "blob/walk.h"
#include "lance/table/bri.h"
#include "lance/table/fields.h"
#include "lance/table/frag_reuse.h"
#include "lance/table/sidecar.h"
#include "ops/materialize.h"
#include "lance/table/commit.h"
#include "lance/table/rowids.h"
#include "storage/outputs.h"
#include "util/fsutil.h"
#include "util/pbcheck.h"
#include "util/strmap.h"

/* ------------------------------------------------------------ run state */

typedef struct run {
  const bri_clone_options *o;
  bri_clone_report *rep;
  bri_error *err;
  bri_table *src;                   /* the source table */
  const Lance__Table__Manifest *m;  /* the source version being cloned */
  bri_table *dst;                   /* the clone (versions appear on commit) */
  bri_outputs out;                  /* what the clone created */
  bri_sidecar_sizes *sizes;         /* the source sidecars' sizes, as checked (blob/sizes.h) */
} run;

static int journal(run *r, const char *path) { return bri_outputs_add(&r->out, path, 0, r->err); }

/* Creates dir and any missing parents, all inside the clone's root. */
static int make_dirs(run *r, const char *dir) {
  bri_store *st = r->dst->store;
  const char *key = bri_store_key(st, dir);
  if (!key || !*key) return bri_error_set(r->err, BRI_EINVAL, "%s: outside the clone %s", dir, r->dst->root);
  bri_store_info info;
  bri_error e;
  int rc = bri_store_stat(st, dir, &info, &e);
  if (!rc)
    return info.kind == BRI_ENTRY_DIR ? 0 : bri_error_set(r->err, BRI_EIO, "%s exists and is not a "
                                                          "directory", dir);
  if (rc != BRI_ENOTFOUND) {
    *r->err = e;
    return rc;
  }
  rc = 0;
  const char *slash = strrchr(key, '/');
  if (slash) {
    char *parent = bri_strdupf("%.*s", (int)(strlen(dir) - strlen(slash)), dir);
    if (!parent) return bri_error_set(r->err, BRI_ENOMEM, "out of memory");
    rc = make_dirs(r, parent);
    free(parent);
  }
  if (!rc) rc = journal(r, dir);
  if (!rc) rc = bri_store_mkdir(st, dir, r->err);
  return rc;
}

/* Copies one file of the source (its own or a base's) into the clone. */
static int copy_file(run *r, const char *from, const char *to, const char *what, uint64_t *out_bytes) {
  char *parent = strdup(to);
  if (!parent) return bri_error_set(r->err, BRI_ENOMEM, "out of memory");
  char *slash = strrchr(parent, '/');
  if (slash) *slash = 0;
  int rc = make_dirs(r, parent);
  free(parent);
  if (!rc) rc = journal(r, to);
  uint64_t bytes = 0;
  bri_store *st = NULL;
  if (!rc) rc = bri_table_store_of(r->src, r->m, from, &st, r->err);
  if (!rc) rc = bri_store_copy(st, from, r->dst->store, to, 0, NULL, &bytes, r->err);
  if (rc == BRI_ENOTFOUND)
    rc = bri_error_set(r->err, BRI_ECORRUPT, "%s: %s is missing in the source", from, what);
  /* the bytes copied are the bytes checked (deep_copy), or the source changed */
  if (!rc) rc = bri_sidecar_sizes_copied(r->sizes, from, bytes, r->err);
  if (rc) return rc;
  r->rep->files_copied++;
  r->rep->bytes_copied += bytes;
  if (out_bytes) *out_bytes = bytes;
  return 0;
}

/* Copies the regular files of a directory tree (index directories, sidecar
 * directories). A missing source directory copies nothing when optional. */
static int copy_tree(run *r, const char *from, const char *to, bool optional, uint64_t *files,
                     int depth) {
  bri_store *st;
  bri_store_entry *e = NULL;
  size_t n = 0;
  int rc = bri_table_store_of(r->src, r->m, from, &st, r->err);
  if (!rc) rc = bri_store_check_dir(st, from, optional, r->err); /* a link could lead outside */
  if (rc == BRI_ENOTFOUND)
    return bri_error_set(r->err, BRI_ECORRUPT, "%s: directory is missing in the source", from);
  if (rc) return rc;
  rc = bri_store_list(st, from, 0, &e, &n, r->err);
  if (rc == BRI_ENOTFOUND && optional) return 0;
  if (rc == BRI_ENOTFOUND)
    return bri_error_set(r->err, BRI_ECORRUPT, "%s: directory is missing in the source", from);
  if (rc) return rc;
  if ((rc = make_dirs(r, to)) != 0) goto out;
  for (size_t i = 0; i < n && !rc; i++) {
    char *a = bri_path_join(from, e[i].name), *b = bri_path_join(to, e[i].name);
    bri_entry_kind k = e[i].info.kind;
    if (!a || !b) rc = bri_error_set(r->err, BRI_ENOMEM, "out of memory");
    else if (k == BRI_ENTRY_DIR && depth < 16) rc = copy_tree(r, a, b, false, files, depth + 1);
    else if (k == BRI_ENTRY_FILE) {
      rc = copy_file(r, a, b, "file", NULL);
      if (!rc && files) (*files)++;
    } else
      rc = bri_error_set(r->err, BRI_ECORRUPT, "%s: not a regular file or directory; brid does "
                         "not follow links", a);
    free(a), free(b);
  }
out:
  bri_store_entries_free(e, n);
  return rc;
}

/* ------------------------------------------------------------ manifest copy */

static void drop_string(char **s) {
  if (*s && *s != protobuf_c_empty_string) free(*s);
  *s = NULL;
}

/* ------------------------------------------------------------ deep */

typedef struct deep {
  bri_strmap managed; /* Managed objects copied (copy_managed) */
  bri_strmap dirs;  /* "base|blob_dir" of a BRI source -> index in names */
  bri_strmap used;  /* names taken in the clone's data/ */
  char **names;
  size_t n_names;
} deep;

/* The directory of the clone that receives BRI source (base, blob_dir). */
static int target_dir(run *r, deep *d, bool has_base, uint32_t base, const char *blob_dir,
                      const char **out) {
  char *key = has_base ? bri_strdupf("%u|%s", base, blob_dir) : bri_strdupf("root|%s", blob_dir);
  if (!key) return bri_error_set(r->err, BRI_ENOMEM, "out of memory");
  bri_strmap_entry *e = bri_strmap_get(&d->dirs, key);
  if (e) {
    free(key);
    *out = d->names[e->a];
    return 0;
  }
  /* the source's own name when free, else a numbered variant */
  char *name = strdup(blob_dir);
  for (unsigned k = 1; name && bri_strmap_get(&d->used, name); k++) {
    free(name);
    name = bri_strdupf("%s-%u", blob_dir, k);
  }
  char **g = name ? realloc(d->names, (d->n_names + 1) * sizeof *g) : NULL;
  if (!g || !bri_strmap_put(&d->used, name, 0, 0) || !bri_strmap_put(&d->dirs, key, d->n_names, 0)) {
    if (g) d->names = g;
    free(name), free(key);
    return bri_error_set(r->err, BRI_ENOMEM, "out of memory");
  }
  d->names = g;
  d->names[d->n_names++] = name;
  free(key);
  *out = name;
  return 0;
}

/* Copies the BRI targets of source DataFile `was` (in manifest m) and
 * rewrites the BRI of its copy `df` to the clone's directories. */
static int deep_bri(run *r, deep *d, const bri_manifest *bm, const Lance__Table__DataFile *was,
                    Lance__Table__DataFile *df) {
  Lance__Table__BlobReuseIndex *b;
  int rc = bri_datafile_get_bri(was, bm->path, &b, r->err);
  if (rc <= 0) return rc;
  rc = 0;
  char **saved = calloc(b->n_sources + 1, sizeof *saved);
  char *data = bri_path_join(r->dst->root, "data");
  if (!saved || !data) rc = bri_error_set(r->err, BRI_ENOMEM, "out of memory");
  size_t k = 0;
  for (; k < b->n_sources && !rc; k++) {
    Lance__Table__BlobReuseSource *s = b->sources[k];
    bool has_base = s->has_base_id || was->has_base_id;
    uint32_t base = s->has_base_id ? s->base_id : was->base_id;
    const char *name = NULL;
    char *from_dir = NULL, *dir = NULL, *to_dir = NULL;
    uint64_t *phys = NULL;
    size_t n = 0;
    saved[k] = s->blob_dir;
    if (!(rc = target_dir(r, d, has_base, base, s->blob_dir, &name)) &&
        !(rc = bri_table_data_dir(r->src, bm->pb, has_base, base, &from_dir, r->err)) &&
        !(rc = bri_u64array_decode(s->physical_ids, BRI_MAX_IDS_PER_FILE, &phys, &n, r->err))) {
      to_dir = bri_path_join(data, name);
      dir = bri_path_join(from_dir, s->blob_dir);
      bri_store *st;
      if (!to_dir || !dir) rc = bri_error_set(r->err, BRI_ENOMEM, "out of memory");
      else if (!(rc = bri_table_store_of(r->src, bm->pb, dir, &st, r->err)) &&
               (rc = bri_store_check_dir(st, dir, false, r->err)) == BRI_ENOTFOUND)
        rc = bri_error_set(r->err, BRI_ECORRUPT, "%s: a BRI names this directory, which is missing "
                           "in the source", dir);
    }
    for (size_t i = 0; i < n && !rc; i++) {
      char fname[BRI_BLOB_NAME_LEN];
      bri_blob_file_name((uint32_t)phys[i], fname);
      char *a = bri_path_join(dir, fname), *t = bri_path_join(to_dir, fname);
      bri_store_info info;
      if (!a || !t) rc = bri_error_set(r->err, BRI_ENOMEM, "out of memory");
      else if ((rc = bri_store_stat(r->dst->store, t, &info, r->err)) == BRI_ENOTFOUND) {
        rc = copy_file(r, a, t, "a sidecar a BRI names", NULL); /* each distinct target once */
        if (!rc) r->rep->bri_targets++;
      }
      free(a), free(t);
    }
    free(phys), free(from_dir), free(to_dir), free(dir);
    /* the clone's BRI: same ids, the clone's directory, no base (docs/format/bri.md 9) */
    if (!rc) {
      s->blob_dir = (char *)name;
      s->has_base_id = 0, s->base_id = 0;
    }
  }
  if (!rc) rc = bri_datafile_set_bri(df, b, r->err);
  for (size_t i = 0; saved && i < k; i++) b->sources[i]->blob_dir = saved[i];
  lance__table__blob_reuse_index__free_unpacked(b, NULL);
  free(saved), free(data);
  return rc;
}

/* The objects the Managed descriptors of a fragment's rows name (blob/
 * managed.h). Kind 4 names its object relative to its data file's base;
 * the clone's copy of the data file is its own, so the object is copied to
 * the same relative path below the clone's root (once, whatever names it),
 * and must hold the range. Kind 5 names a base the clone keeps in its base
 * paths: it reads from there, as the source does. */
typedef struct managed_copy {
  run *r;
  bri_strmap *done; /* clone paths copied -> their size */
} managed_copy;

static int copy_managed(void *ctx, const bri_blob_desc *d, const char *path, bri_error *err) {
  managed_copy *mc = ctx;
  run *r = mc->r;
  if (d->kind != BRI_BLOB_MANAGED) return 0;
  char *to = bri_strdupf("%s/%.*s", r->dst->root, (int)d->uri_len, d->uri);
  if (!to) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  bri_strmap_entry *e = bri_strmap_get(mc->done, to);
  uint64_t bytes = e ? e->a : 0;
  int rc = e ? 0 : copy_file(r, path, to, "a Managed blob object", &bytes);
  if (!rc && !e) {
    r->rep->sidecars++;
    if (!bri_strmap_put(mc->done, to, bytes, 0)) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  if (!rc && (d->position > bytes || d->size > bytes - d->position))
    rc = bri_error_set(err, BRI_ECORRUPT, "%s: a Managed blob [%llu, +%llu) lies past its %llu bytes", path,
                       (unsigned long long)d->position, (unsigned long long)d->size, (unsigned long long)bytes);
  free(to);
  return rc;
}

static int deep_copy(run *r, const bri_manifest *bm, Lance__Table__Manifest *c,
                     Lance__Table__IndexSection *idx) {
  const Lance__Table__Manifest *m = bm->pb;
  deep d = {0};
  int rc = 0;
  /* the source's own directories must be its own: a link could lead the
   * copies to read anything outside it */
  static const char *own[] = {"data", "_deletions", "_indices", "_blobs"};
  for (size_t i = 0; i < sizeof own / sizeof own[0] && !rc; i++) {
    char *dir = bri_path_join(r->src->root, own[i]);
    rc = dir ? bri_store_check_dir(r->src->store, dir, true, r->err)
             : bri_error_set(r->err, BRI_ENOMEM, "out of memory");
    free(dir);
  }
  if (rc) return rc;
  /* data file names and stems are taken in the clone's data/ */
  for (size_t i = 0; i < m->n_fragments && !rc; i++)
    for (size_t k = 0; k < m->fragments[i]->n_files && !rc; k++) {
      const char *p = m->fragments[i]->files[k]->path;
      char *first = strdup(p), *stem = bri_datafile_stem(p);
      if (first && strchr(first, '/')) *strchr(first, '/') = 0;
      if (!first || !stem || (!bri_strmap_get(&d.used, first) && !bri_strmap_put(&d.used, first, 0, 0)) ||
          (!bri_strmap_get(&d.used, stem) && !bri_strmap_put(&d.used, stem, 0, 0)))
        rc = bri_error_set(r->err, BRI_ENOMEM, "out of memory");
      free(first), free(stem);
    }
  for (size_t i = 0; i < m->n_fragments && !rc; i++) {
    const Lance__Table__DataFragment *f = m->fragments[i];
    Lance__Table__DataFragment *cf = c->fragments[i];
    /* a damaged source is refused before it is copied: every value the
     * clone will reference lies within its sidecar (blob/sizes.h) */
    rc = bri_blob_check_fragment(r->src, bm, f, NULL, r->sizes, r->err);
    managed_copy mc = {r, &d.managed};
    if (!rc && bri_manifest_blobs_managed(m)) rc = bri_managed_fragment(r->src, bm, f, copy_managed, &mc, r->err);
    for (size_t k = 0; k < f->n_files && !rc; k++) {
      const Lance__Table__DataFile *was = f->files[k];
      Lance__Table__DataFile *df = cf->files[k];
      char *from = NULL, *to = NULL, *from_dir = NULL, *to_dir = NULL;
      uint64_t bytes = 0;
      df->has_base_id = 0, df->base_id = 0;
      if (!(rc = bri_table_datafile_path(r->src, m, was, &from, r->err)) &&
          !(rc = bri_table_datafile_path(r->dst, c, df, &to, r->err)) &&
          !(rc = copy_file(r, from, to, "a data file", &bytes))) {
        r->rep->data_files++;
        if (was->file_size_bytes && bytes != was->file_size_bytes)
          rc = bri_error_set(r->err, BRI_ECORRUPT, "%s: has %llu bytes, the manifest records %llu",
                             from, (unsigned long long)bytes,
                             (unsigned long long)was->file_size_bytes);
      }
      /* the file's own sidecar directory, whole */
      if (!rc && !(rc = bri_table_sidecar_dir(r->src, m, was, &from_dir, r->err)) &&
          !(rc = bri_table_sidecar_dir(r->dst, c, df, &to_dir, r->err)))
        rc = copy_tree(r, from_dir, to_dir, true, &r->rep->sidecars, 0);
      if (!rc) rc = deep_bri(r, &d, bm, was, df);
      free(from), free(to), free(from_dir), free(to_dir);
    }
    if (!rc && f->deletion_file) {
      char *from = NULL, *to = NULL;
      cf->deletion_file->has_base_id = 0, cf->deletion_file->base_id = 0;
      if (!(rc = bri_table_deletion_path(r->src, m, f, &from, r->err)) &&
          !(rc = bri_table_deletion_path(r->dst, c, cf, &to, r->err)) &&
          !(rc = copy_file(r, from, to, "a deletion file", NULL)))
        r->rep->deletion_files++;
      free(from), free(to);
    }
  }
  for (size_t i = 0; idx && i < idx->n_indices && !rc; i++) {
    char *from = NULL, *to = NULL;
    const Lance__Table__IndexMetadata *was = bm->indices->indices[i];
    idx->indices[i]->has_base_id = 0, idx->indices[i]->base_id = 0;
    if (!(rc = bri_table_index_dir(r->src, m, was, &from, r->err)) &&
        !(rc = bri_table_index_dir(r->dst, c, idx->indices[i], &to, r->err)) &&
        /* the fragment reuse index has a directory only for external details */
        !(rc = copy_tree(r, from, to, bri_fri_is(was), NULL, 0)))
      r->rep->index_dirs++;
    free(from), free(to);
  }
  bri_strmap_dispose(&d.managed);
  bri_strmap_dispose(&d.dirs);
  bri_strmap_dispose(&d.used);
  for (size_t i = 0; i < d.n_names; i++) free(d.names[i]);
  free(d.names);
  return rc;
}

/* ------------------------------------------------------------ shallow */

static uint32_t next_base_id(const Lance__Table__Manifest *m) {
  /* Lance: the highest id + 1, or 0 for a table without base paths */
  uint32_t id = 0;
  for (size_t i = 0; i < m->n_base_paths; i++)
    if (m->base_paths[i]->id >= id) id = m->base_paths[i]->id + 1;
  return id;
}

static void shallow_rebase(Lance__Table__Manifest *c, Lance__Table__IndexSection *idx, uint32_t id) {
  for (size_t i = 0; i < c->n_fragments; i++) {
    Lance__Table__DataFragment *f = c->fragments[i];
    for (size_t k = 0; k < f->n_files; k++)
      if (!f->files[k]->has_base_id) f->files[k]->has_base_id = 1, f->files[k]->base_id = id;
    if (f->deletion_file && !f->deletion_file->has_base_id)
      f->deletion_file->has_base_id = 1, f->deletion_file->base_id = id;
  }
  for (size_t i = 0; idx && i < idx->n_indices; i++)
    if (!idx->indices[i]->has_base_id) idx->indices[i]->has_base_id = 1, idx->indices[i]->base_id = id;
}

/* ------------------------------------------------------------ entry */

/* The version a clone takes: a tag's, the one asked for, or the latest. */
static int pick_version(run *r, uint64_t *v) {
  if (!r->o->tag) {
    *v = r->o->version ? r->o->version : bri_table_latest_version(r->src);
    return 0;
  }
  bri_ref *tags;
  size_t n;
  int rc = bri_table_tags(r->src, &tags, &n, r->err);
  if (rc) return rc;
  rc = bri_error_set(r->err, BRI_ENOTFOUND, "%s: no tag \"%s\"", r->src->root, r->o->tag);
  for (size_t i = 0; i < n; i++)
    if (!strcmp(tags[i].name, r->o->tag)) {
      if (tags[i].branch)
        rc = bri_error_set(r->err, BRI_EUNSUPPORTED, "%s: tag \"%s\" is on branch %s; brid clones "
                           "the main branch only", r->src->root, r->o->tag, tags[i].branch);
      else {
        *v = tags[i].version;
        rc = 0;
      }
    }
  bri_refs_free(tags, n);
  return rc;
}

/* Prepares the destination: absent (created) or an empty directory, not
 * inside the source; r->dst is the new table on it. */
static int prepare_dst(run *r, const char *dst) {
  bri_store_info info;
  bri_store *st = NULL;
  int rc = bri_store_stat(NULL, dst, &info, r->err);
  if (!rc && info.kind != BRI_ENTRY_DIR)
    return bri_error_set(r->err, BRI_EINVAL, "%s exists and is not a directory", dst);
  if (!rc) {
    bri_store_entry *e;
    size_t n;
    if ((rc = bri_store_open(dst, 0, &st, r->err)) || (rc = bri_store_list(st, dst, 0, &e, &n, r->err))) {
      bri_store_close(st);
      return rc;
    }
    bri_store_entries_free(e, n);
    if (n) {
      bri_store_close(st);
      return bri_error_set(r->err, BRI_EINVAL, "%s is not empty; a clone goes into a new or empty "
                           "directory", dst);
    }
  } else if (rc == BRI_ENOTFOUND) {
    if ((rc = journal(r, dst)) || (rc = bri_store_open(dst, BRI_STORE_CREATE, &st, r->err))) return rc;
  } else {
    return rc;
  }
  const char *abs = bri_store_canonical(st), *abs_src = bri_store_canonical(r->src->store);
  size_t sl = strlen(abs_src);
  if (!strncmp(abs, abs_src, sl) && (abs[sl] == 0 || abs[sl] == '/')) {
    bri_store_close(st);
    return bri_error_set(r->err, BRI_EINVAL, "%s: the clone cannot live inside its source %s", dst,
                         abs_src);
  }
  if ((rc = bri_table_create(st, &r->dst, r->err)) != 0) return rc;
  r->out.store = r->dst->store;
  return 0;
}

int bri_clone_table(const char *src, const char *dst, const bri_clone_options *o,
                    const bri_hooks *hooks, bri_clone_report *rep, bri_error *err) {
  memset(rep, 0, sizeof *rep);
  bri_clone_options def = {0};
  if (!o) o = &def;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  run r = {.o = o, .rep = rep, .err = err};
  r.out.hooks = hooks;
  bri_manifest *bm = NULL;
  Lance__Table__Manifest *c = NULL;
  Lance__Table__IndexSection *idx = NULL;
  Lance__Table__BasePath **bases = NULL, *nb = NULL;
  Lance__Table__BasePath **saved_bases = NULL;
  size_t saved_n = 0;
  char *txn_path = NULL;
  uint64_t v = 0;
  bri_error_clear(err);
  int rc = bri_sidecar_sizes_new(&r.sizes, err);
  if (!rc) rc = bri_table_open(src, &r.src, err);
  if (rc) {
    bri_sidecar_sizes_free(r.sizes);
    return rc;
  }
  if ((rc = pick_version(&r, &v)) || (rc = bri_table_load(r.src, v, &bm, err))) goto out;
  r.m = bm->pb;
  rep->version = v;
  if ((rc = bri_fields_check_files(bm->pb, bm->indices, BRI_FIELDS_CLONE, bm->path, err)))
    goto out;
  if ((rc = prepare_dst(&r, dst))) goto out;
  c = (Lance__Table__Manifest *)bri_pb_copy(&bm->pb->base);
  idx = bm->indices ? (Lance__Table__IndexSection *)bri_pb_copy(&bm->indices->base) : NULL;
  if (!c || (bm->indices && !idx)) {
    rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    goto out;
  }
  drop_string(&c->tag);
  drop_string(&c->branch);
  if (!o->deep) {
    uint32_t id = next_base_id(c);
    rep->base_id = id;
    shallow_rebase(c, idx, id);
    nb = malloc(sizeof *nb);
    bases = malloc((c->n_base_paths + 1) * sizeof *bases);
    if (!nb || !bases) {
      rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
      goto out;
    }
    /* what Lance writes: {id, name = the tag if any, is_dataset_root, path} */
    lance__table__base_path__init(nb);
    nb->has_id = id != 0, nb->id = id;
    nb->name = (char *)o->tag;
    nb->has_is_dataset_root = 1, nb->is_dataset_root = 1;
    nb->path = (char *)bri_store_canonical(r.src->store);
    if (c->n_base_paths) memcpy(bases, c->base_paths, c->n_base_paths * sizeof *bases);
    bases[c->n_base_paths] = nb;
    saved_bases = c->base_paths, saved_n = c->n_base_paths;
    c->base_paths = bases, c->n_base_paths = saved_n + 1;
    for (size_t i = 0; i < c->n_fragments; i++) rep->data_files += c->fragments[i]->n_files;
    for (size_t i = 0; i < c->n_fragments; i++) rep->deletion_files += c->fragments[i]->deletion_file != NULL;
    rep->index_dirs = idx ? idx->n_indices : 0;
  } else if ((rc = deep_copy(&r, bm, c, idx)) != 0) {
    goto out;
  }
  /* commit: the clone's first version carries the source's number, as Lance's clones do */
  char *vdir = bri_path_join(r.dst->root, "_versions"), *tdir = bri_path_join(r.dst->root, "_transactions");
  if (!vdir || !tdir) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (!rc) rc = make_dirs(&r, vdir);
  if (!rc) rc = make_dirs(&r, tdir);
  free(vdir), free(tdir);
  if (rc) goto out;
  Lance__Table__Transaction txn;
  Lance__Table__Transaction__Clone cl;
  lance__table__transaction__init(&txn);
  lance__table__transaction__clone__init(&cl);
  cl.has_is_shallow = 1, cl.is_shallow = !o->deep;
  cl.ref_name = (char *)o->tag;
  cl.has_ref_version = 1, cl.ref_version = v;
  cl.ref_path = (char *)bri_store_canonical(r.src->store);
  txn.has_read_version = 1, txn.read_version = v;
  txn.operation_case = LANCE__TABLE__TRANSACTION__OPERATION_CLONE;
  txn.clone = &cl;
  rc = bri_commit(r.dst, c, &txn, idx, v, &txn_path, err);
  free(txn.uuid);
out:
  if (rc) bri_outputs_roll_back(&r.out);
  if (saved_bases || bases) {
    if (c) c->base_paths = saved_bases, c->n_base_paths = saved_n;
  }
  free(bases), free(nb), free(txn_path);
  if (c) lance__table__manifest__free_unpacked(c, NULL);
  if (idx) lance__table__index_section__free_unpacked(idx, NULL);
  bri_manifest_free(bm);
  bri_outputs_dispose(&r.out);
  bri_sidecar_sizes_free(r.sizes);
  bri_table_close(r.dst);
  bri_table_close(r.src);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  rep->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  return rc;
}
