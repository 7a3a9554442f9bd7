/* resolve.c: Blob v2 descriptor resolution (see resolve.h).
 *
 * The BRI of the data file is decoded once, at open, into one sorted
 * (local id -> physical id) table per source; a lookup is a binary search
 * per source (sources are few, ids many). Two file slots are kept open: the
 * data file itself (Inline values) and the last sidecar or external object,
 * because rows of one file alternate between inline values and values of the
 * same pack. Nothing from a descriptor is trusted: each range is checked
 * against the size of the file it names before a read. */
#include "blob/resolve.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lance/table/bri.h"
#include "lance/table/sidecar.h"
#include "lance/table/rowids.h"
#include "util/bytes.h"
#include "util/fsutil.h"

typedef struct bri_source {
  char *dir;       /* data_dir(effective base)/blob_dir */
  char *blob_dir;  /* the source's blob_dir */
  bool has_base;   /* effective base of the source */
  uint32_t base_id;
  uint64_t *local; /* strictly increasing (docs/format/bri.md rule 4) */
  uint64_t *phys;  /* aligned with local (rule 5) */
  size_t n;
} bri_source;

typedef struct file_slot {
  bri_sfile *f;
  char *path;
  uint64_t size;
} file_slot;

struct bri_blob_resolver {
  const bri_table *t;
  const Lance__Table__Manifest *m;
  const Lance__Table__DataFile *df;
  char *datafile; /* absolute path of the .lance file */
  char *own_dir;  /* its own sidecar directory: data_dir(base)/stem */
  char *stem;     /* the data file's stem (its own blob_dir) */
  bri_source *sources;
  size_t n_sources;
  file_slot slot[2]; /* 0: the data file, 1: last sidecar / external object */
};

static void slot_close(file_slot *s) {
  bri_sfile_close(s->f);
  free(s->path);
  s->f = NULL;
  s->path = NULL;
  s->size = 0;
}

void bri_blob_resolver_close(bri_blob_resolver *r) {
  if (!r) return;
  for (size_t i = 0; i < r->n_sources; i++) {
    free(r->sources[i].dir);
    free(r->sources[i].blob_dir);
    free(r->sources[i].local);
    free(r->sources[i].phys);
  }
  free(r->sources);
  slot_close(&r->slot[0]);
  slot_close(&r->slot[1]);
  free(r->datafile);
  free(r->own_dir);
  free(r->stem);
  free(r);
}

/* Decodes one BRI source into its lookup table. */
static int load_source(bri_blob_resolver *r, const Lance__Table__BlobReuseSource *s, size_t i,
                       bri_source *out, bri_error *err) {
  const char *f = r->df->path;
  if (!s->blob_dir || !*s->blob_dir || strchr(s->blob_dir, '/'))
    return bri_error_set(err, BRI_ECORRUPT, "%s: data file %s: BRI source %zu has a bad blob_dir",
                         r->t->root, f, i);
  bool has_base = s->has_base_id || r->df->has_base_id;
  uint32_t base = s->has_base_id ? s->base_id : r->df->base_id;
  char *dd;
  int rc = bri_table_data_dir(r->t, r->m, has_base, base, &dd, err);
  if (rc) return rc;
  out->dir = bri_path_join(dd, s->blob_dir);
  out->blob_dir = strdup(s->blob_dir);
  out->has_base = has_base, out->base_id = base;
  free(dd);
  if (!out->dir || !out->blob_dir) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  size_t n_loc = 0, n_phys = 0;
  bri_error e2;
  uint64_t c_loc = 0, c_phys = 0; /* counts first: see bri.c check_one */
  if (s->local_ids && bri_u64seq_count(s->local_ids, &c_loc, &e2) == 0 &&
      bri_u64array_count(s->physical_ids, &c_phys, &e2) == 0 && c_loc != c_phys)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: data file %s: BRI source %zu has %llu local ids but %llu physical ids",
                         r->t->root, f, i, (unsigned long long)c_loc, (unsigned long long)c_phys);
  if (!s->local_ids ||
      bri_u64seq_decode(s->local_ids, BRI_MAX_IDS_PER_FILE, &out->local, &n_loc, &e2))
    return bri_error_set(err, BRI_ECORRUPT, "%s: data file %s: BRI source %zu local ids: %s",
                         r->t->root, f, i, s->local_ids ? e2.msg : "absent");
  if (bri_u64array_decode(s->physical_ids, BRI_MAX_IDS_PER_FILE, &out->phys, &n_phys, &e2))
    return bri_error_set(err, BRI_ECORRUPT, "%s: data file %s: BRI source %zu physical ids: %s",
                         r->t->root, f, i, e2.msg);
  out->n = n_loc;
  /* Re-checked here although manifest open validated them (docs/format/bri.md
   * rules 4-6): the binary search below relies on them. */
  if (n_loc != n_phys)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: data file %s: BRI source %zu has %zu local ids but %zu physical ids",
                         r->t->root, f, i, n_loc, n_phys);
  for (size_t k = 0; k < n_loc; k++)
    if ((k && out->local[k] <= out->local[k - 1]) || out->phys[k] == 0 ||
        out->phys[k] > UINT32_MAX)
      return bri_error_set(err, BRI_ECORRUPT,
                           "%s: data file %s: BRI source %zu entry %zu is out of order or out of "
                           "range",
                           r->t->root, f, i, k);
  return 0;
}

int bri_blob_resolver_open(const bri_table *t, const Lance__Table__Manifest *m,
                           const Lance__Table__DataFile *df, bri_blob_resolver **out,
                           bri_error *err) {
  *out = NULL;
  bri_blob_resolver *r = calloc(1, sizeof *r);
  if (!r) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  r->t = t, r->m = m, r->df = df;
  Lance__Table__BlobReuseIndex *b = NULL;
  int rc = bri_table_datafile_path(t, m, df, &r->datafile, err);
  if (!rc) rc = bri_table_sidecar_dir(t, m, df, &r->own_dir, err);
  if (!rc && !(r->stem = bri_datafile_stem(df->path))) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (!rc) rc = bri_datafile_get_bri(df, t->root, &b, err);
  if (rc > 0) {
    rc = 0;
    r->sources = calloc(b->n_sources ? b->n_sources : 1, sizeof *r->sources);
    if (!r->sources) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < b->n_sources; i++) {
      r->n_sources = i + 1;
      rc = load_source(r, b->sources[i], i, &r->sources[i], err);
    }
  }
  if (b) lance__table__blob_reuse_index__free_unpacked(b, NULL);
  if (rc) {
    bri_blob_resolver_close(r);
    return rc;
  }
  *out = r;
  return 0;
}

const char *bri_blob_resolver_datafile(const bri_blob_resolver *r) { return r->datafile; }

void bri_blob_resolver_drop_files(bri_blob_resolver *r) {
  slot_close(&r->slot[0]);
  slot_close(&r->slot[1]);
}

/* docs/format/bri.md 4 step 1: the source whose local ids contain id, if any. */
static const bri_source *bri_lookup(const bri_blob_resolver *r, uint32_t id, uint64_t *phys) {
  for (size_t i = 0; i < r->n_sources; i++) {
    const bri_source *s = &r->sources[i];
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (s->local[mid] < id) lo = mid + 1;
      else hi = mid;
    }
    if (lo < s->n && s->local[lo] == id) {
      *phys = s->phys[lo];
      return s;
    }
  }
  return NULL;
}

void bri_blob_terminal_of(const bri_blob_resolver *r, uint32_t local_id, bri_blob_terminal *out) {
  uint64_t phys;
  const bri_source *s = bri_lookup(r, local_id, &phys);
  if (s) { /* docs/format/bri.md 5: the terminal object behind the redirect */
    out->has_base = s->has_base, out->base_id = s->base_id;
    out->blob_dir = s->blob_dir, out->dir = s->dir;
    out->physical_id = (uint32_t)phys;
  } else {
    out->has_base = r->df->has_base_id, out->base_id = r->df->base_id;
    out->blob_dir = r->stem, out->dir = r->own_dir;
    out->physical_id = local_id;
  }
}

int bri_blob_sidecar_path(bri_blob_resolver *r, uint32_t local_id, char **out, bri_error *err) {
  char name[BRI_BLOB_NAME_LEN];
  uint64_t phys;
  const bri_source *s = bri_lookup(r, local_id, &phys);
  if (s) { /* 6.3 step 2: redirected to the terminal physical sidecar */
    bri_blob_file_name((uint32_t)phys, name);
    *out = bri_path_join(s->dir, name);
  } else { /* 6.3 step 3: identity under the data file's own stem */
    bri_blob_file_name(local_id, name);
    *out = bri_path_join(r->own_dir, name);
  }
  return *out ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
}

/* Opens path into slot (reusing it when it already holds path), through
 * the store that reaches it: the table's or a base's; an External object
 * outside both (an absolute path the writer chose) is read as a plain
 * local path (storage/store.h, NULL store). A missing file is
 * BRI_ECORRUPT: the table names it, so the table is damaged. */
static int slot_open(bri_blob_resolver *r, file_slot *s, const char *path, const char *what,
                     bool external, bri_error *err) {
  if (s->path && !strcmp(s->path, path)) return 0;
  slot_close(s);
  bri_store *st = NULL;
  int rc = bri_table_store_of(r->t, r->m, path, &st, err);
  if (rc == BRI_EINVAL && external) rc = 0, st = NULL;
  if (!rc) rc = bri_store_open_file(st, path, &s->f, err);
  if (rc == BRI_ENOTFOUND) return bri_error_set(err, BRI_ECORRUPT, "%s: %s does not exist", path, what);
  if (rc) return rc;
  if (!(s->path = strdup(path))) {
    slot_close(s);
    return bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  s->size = bri_sfile_size(s->f);
  return 0;
}

static bool has_scheme(const char *u, size_t n, size_t *scheme_len) {
  size_t i = 0;
  if (n == 0 || !((u[0] >= 'a' && u[0] <= 'z') || (u[0] >= 'A' && u[0] <= 'Z'))) return false;
  for (i = 1; i < n; i++) {
    char c = u[i];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '+' ||
        c == '-' || c == '.')
      continue;
    break;
  }
  if (i < n && u[i] == ':') {
    *scheme_len = i;
    return true;
  }
  return false;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* True when some '/'-separated component of p is "..". */
static bool has_dotdot(const char *p) {
  for (const char *c = p; *c;) {
    const char *e = strchr(c, '/');
    size_t n = e ? (size_t)(e - c) : strlen(c);
    if (n == 2 && c[0] == '.' && c[1] == '.') return true;
    if (!e) break;
    c = e + 1;
  }
  return false;
}

/* Local path of an External descriptor (docs/format/blob.md section 2: blob_id 0 =
 * absolute URI, > 0 = BasePath id with a path relative to that base). */
static int external_path(bri_blob_resolver *r, const bri_blob_desc *d, char **out, bri_error *err) {
  *out = NULL;
  const char *df = r->datafile;
  if (d->uri_len == 0 || memchr(d->uri, 0, d->uri_len))
    return bri_error_set(err, BRI_ECORRUPT, "%s: external blob has an empty or NUL-bearing URI",
                         df);
  char *u = bri_strdupf("%.*s", (int)d->uri_len, d->uri);
  if (!u) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  size_t sl;
  int rc = 0;
  if (d->blob_id == 0) {
    if (!strncmp(u, "file://", 7)) {
      const char *p = u + 7;
      if (p[0] != '/') {
        rc = bri_error_set(err, BRI_EUNSUPPORTED,
                           "%s: external blob URI \"%s\" names a remote host; brid reads local "
                           "files only",
                           df, u);
      } else { /* file URIs are percent-encoded */
        char *o = malloc(strlen(p) + 1), *w = o;
        if (!o) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
        for (; o && *p; p++) {
          int h1, h2;
          if (p[0] == '%' && (h1 = hexval(p[1])) >= 0 && (h2 = hexval(p[2])) >= 0) {
            *w++ = (char)(h1 << 4 | h2);
            p += 2;
          } else {
            *w++ = *p;
          }
        }
        if (o) {
          *w = 0;
          if (strlen(o) != (size_t)(w - o)) {
            rc = bri_error_set(err, BRI_ECORRUPT, "%s: external blob URI \"%s\" encodes a NUL", df, u);
            free(o);
          } else {
            *out = o;
          }
        }
      }
    } else if (has_scheme(u, strlen(u), &sl)) {
      rc = bri_error_set(err, BRI_EUNSUPPORTED,
                         "%s: external blob URI \"%s\" uses scheme \"%.*s\"; brid reads local "
                         "files (absolute paths and file://) only",
                         df, u, (int)sl, u);
    } else if (u[0] != '/') {
      rc = bri_error_set(err, BRI_ECORRUPT,
                         "%s: external blob URI \"%s\" has blob_id 0 but is not absolute", df, u);
    } else {
      *out = u;
      u = NULL;
    }
  } else {
    const Lance__Table__BasePath *b = NULL;
    for (size_t i = 0; i < r->m->n_base_paths; i++)
      if (r->m->base_paths[i]->id == d->blob_id) b = r->m->base_paths[i];
    if (!b || !b->path) {
      rc = bri_error_set(err, BRI_ECORRUPT,
                         "%s: external blob \"%s\" names base id %u, which the manifest does not "
                         "define",
                         df, u, d->blob_id);
    } else if (u[0] == '/' || has_scheme(u, strlen(u), &sl) || has_dotdot(u) || strchr(u, '\\')) {
      /* a relative reference must stay below its base */
      rc = bri_error_set(err, BRI_ECORRUPT,
                         "%s: external blob path \"%s\" relative to base %u is not a plain "
                         "relative path (absolute, URI or \"..\")",
                         df, u, d->blob_id);
    } else {
      const char *p = b->path;
      if (!strncmp(p, "file://", 7)) p += 7;
      if (has_scheme(p, strlen(p), &sl))
        rc = bri_error_set(err, BRI_EUNSUPPORTED,
                           "%s: external blob base %u is at %s; brid reads local files only", df,
                           d->blob_id, b->path);
      else if (p[0] != '/')
        rc = bri_error_set(err, BRI_ECORRUPT, "%s: base %u path \"%s\" is not absolute", df,
                           d->blob_id, b->path);
      else if (!(*out = bri_path_join(p, u)))
        rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    }
  }
  free(u);
  return rc;
}

static const char *kind_name(uint8_t k) {
  switch (k) {
  case BRI_BLOB_INLINE: return "inline";
  case BRI_BLOB_PACKED: return "packed";
  case BRI_BLOB_DEDICATED: return "dedicated";
  case BRI_BLOB_EXTERNAL: return "external";
  case BRI_BLOB_MANAGED:
  case BRI_BLOB_MANAGED_BASE: return "managed";
  default: return "unknown";
  }
}

/* Lance 14's validate_managed_reference: a canonical relative object path. */
static bool managed_uri_ok(const char *u, size_t n) {
  if (n == 0 || u[0] == '/' || u[n - 1] == '/' || memchr(u, 0, n) || memchr(u, '\\', n)) return false;
  for (size_t i = 0; i + 2 < n; i++)
    if (u[i] == ':' && u[i + 1] == '/' && u[i + 2] == '/') return false;
  for (size_t i = 0; i < n;) {
    const char *e = memchr(u + i, '/', n - i);
    size_t len = e ? (size_t)(e - (u + i)) : n - i;
    if (len == 0 || (len == 1 && u[i] == '.') || (len == 2 && u[i] == '.' && u[i + 1] == '.')) return false;
    i += len + 1;
  }
  return true;
}

int bri_blob_managed_path(bri_blob_resolver *r, const bri_blob_desc *d, char **out, bri_error *err) {
  *out = NULL;
  if (!managed_uri_ok(d->uri, d->uri_len))
    return bri_error_set(err, BRI_ECORRUPT, "%s: managed blob_uri \"%.*s\" is not a canonical relative "
                         "path (empty, absolute, a URI, or with an empty, '.' or '..' component)",
                         r->datafile, (int)(d->uri_len > 200 ? 200 : d->uri_len), d->uri ? d->uri : "");
  bool has_base = d->kind == BRI_BLOB_MANAGED_BASE || r->df->has_base_id;
  uint32_t base = d->kind == BRI_BLOB_MANAGED_BASE ? d->blob_id : r->df->base_id;
  char *root;
  int rc = bri_table_base_root(r->t, r->m, has_base, base, &root, err);
  if (rc) return bri_error_wrap(err, "managed blob of data file %s", r->datafile);
  *out = bri_strdupf("%s/%.*s", root, (int)d->uri_len, d->uri);
  free(root);
  return *out ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
}

/* d's range lies inside the object held in slot 1 (path), else
 * BRI_ECORRUPT naming it: "<path>: <what> [pos, +size) runs past ...". */
static int range_in_object(const bri_blob_resolver *r, const char *path, const char *what, const bri_blob_desc *d,
                           bri_error *err) {
  uint64_t end;
  if (bri_add_ok(d->position, d->size, &end) && end <= r->slot[1].size) return 0;
  return bri_error_set(err, BRI_ECORRUPT, "%s: %s [%llu, +%llu) runs past the end of the object (%llu bytes; data file %s)",
                       path, what, (unsigned long long)d->position, (unsigned long long)d->size,
                       (unsigned long long)r->slot[1].size, r->datafile);
}

/* Validates d and opens the file holding its payload. *slot is NULL for an
 * empty inline blob. */
static int locate(bri_blob_resolver *r, const bri_blob_desc *d, file_slot **slot, uint64_t *off,
                  uint64_t *len, bri_error *err) {
  *slot = NULL;
  *off = *len = 0;
  int rc = 0;
  char *path = NULL;
  uint64_t end = 0;
  switch (d->kind) {
  case BRI_BLOB_INLINE:
    /* An empty blob's position is the writer's offset at the time, not a
     * reference (docs/format/blob.md section 2): never checked, never read. */
    if (d->size == 0) return 0;
    rc = slot_open(r, &r->slot[0], r->datafile, "data file", false, err);
    if (rc) return rc;
    if (!bri_add_ok(d->position, d->size, &end) || end > r->slot[0].size)
      return bri_error_set(err, BRI_ECORRUPT,
                           "%s: inline blob [%llu, +%llu) runs past the end of the data file "
                           "(%llu bytes)",
                           r->datafile, (unsigned long long)d->position,
                           (unsigned long long)d->size, (unsigned long long)r->slot[0].size);
    *slot = &r->slot[0];
    *off = d->position;
    *len = d->size;
    return 0;
  case BRI_BLOB_PACKED:
  case BRI_BLOB_DEDICATED:
    if (d->blob_id == 0)
      return bri_error_set(err, BRI_ECORRUPT,
                           "%s: %s blob has blob_id 0 (sidecar ids start at 1)", r->datafile,
                           kind_name(d->kind));
    rc = bri_blob_sidecar_path(r, d->blob_id, &path, err);
    if (rc) return rc;
    rc = slot_open(r, &r->slot[1], path, "sidecar", false, err);
    if (rc) {
      bri_error_wrap(err, "blob id %u of data file %s", d->blob_id, r->datafile);
      free(path);
      return rc;
    }
    if (d->kind == BRI_BLOB_PACKED) {
      if (!bri_add_ok(d->position, d->size, &end) || end > r->slot[1].size)
        rc = bri_error_set(err, BRI_ECORRUPT,
                           "%s: packed blob [%llu, +%llu) of blob id %u (data file %s) runs past "
                           "the end of the sidecar (%llu bytes)",
                           path, (unsigned long long)d->position, (unsigned long long)d->size,
                           d->blob_id, r->datafile, (unsigned long long)r->slot[1].size);
      *off = d->position;
    } else {
      if (r->slot[1].size != d->size)
        rc = bri_error_set(err, BRI_ECORRUPT,
                           "%s: dedicated sidecar of blob id %u (data file %s) has %llu bytes, "
                           "the descriptor says %llu",
                           path, d->blob_id, r->datafile, (unsigned long long)r->slot[1].size,
                           (unsigned long long)d->size);
      *off = 0;
    }
    free(path);
    if (rc) return rc;
    *slot = &r->slot[1];
    *len = d->size;
    return 0;
  case BRI_BLOB_EXTERNAL:
    rc = external_path(r, d, &path, err);
    if (rc) return rc;
    rc = slot_open(r, &r->slot[1], path, "external blob object", true, err);
    if (rc) {
      bri_error_wrap(err, "external blob of data file %s", r->datafile);
      free(path);
      return rc;
    }
    if (d->size == 0) { /* the sentinel: the whole object from position on */
      if (d->position > r->slot[1].size)
        rc = bri_error_set(err, BRI_ECORRUPT,
                           "%s: external blob starts at %llu, past the end of the object (%llu "
                           "bytes; data file %s)",
                           path, (unsigned long long)d->position,
                           (unsigned long long)r->slot[1].size, r->datafile);
      *len = r->slot[1].size - (rc ? 0 : d->position);
    } else {
      rc = range_in_object(r, path, "external blob", d, err);
      *len = d->size;
    }
    free(path);
    if (rc) return rc;
    *slot = &r->slot[1];
    *off = d->position;
    return 0;
  case BRI_BLOB_MANAGED:
  case BRI_BLOB_MANAGED_BASE:
    rc = bri_blob_managed_path(r, d, &path, err);
    if (rc) return rc;
    if (!bri_add_ok(d->position, d->size, &end))
      rc = bri_error_set(err, BRI_ECORRUPT, "%s: managed blob range [%llu, +%llu) overflows", path,
                         (unsigned long long)d->position, (unsigned long long)d->size);
    /* an empty range reads nothing: Lance does not look the object up either */
    if (!rc && d->size > 0 && (rc = slot_open(r, &r->slot[1], path, "managed blob object", false, err)) != 0)
      bri_error_wrap(err, "managed blob of data file %s", r->datafile);
    if (!rc && d->size > 0) rc = range_in_object(r, path, "managed blob", d, err);
    free(path);
    if (rc || d->size == 0) return rc;
    *slot = &r->slot[1];
    *off = d->position;
    *len = d->size;
    return 0;
  default:
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: blob descriptor has unknown kind %u (expected 0 inline, 1 packed, "
                         "2 dedicated, 3 external, 4 or 5 managed)",
                         r->datafile, d->kind);
  }
}

int bri_blob_locate(bri_blob_resolver *r, const bri_blob_desc *d, bri_blob_location *loc,
                    bri_error *err) {
  memset(loc, 0, sizeof *loc);
  file_slot *s;
  int rc = locate(r, d, &s, &loc->offset, &loc->length, err);
  if (rc) return rc;
  if (s && !(loc->path = strdup(s->path))) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  return 0;
}

void bri_blob_location_dispose(bri_blob_location *loc) {
  free(loc->path);
  loc->path = NULL;
}

int bri_blob_length(bri_blob_resolver *r, const bri_blob_desc *d, uint64_t *len, bri_error *err) {
  file_slot *s;
  uint64_t off;
  return locate(r, d, &s, &off, len, err);
}

int bri_blob_stream(bri_blob_resolver *r, const bri_blob_desc *d, bri_blob_chunk_fn fn, void *ctx,
                    bri_error *err) {
  file_slot *s;
  uint64_t off, len;
  int rc = locate(r, d, &s, &off, &len, err);
  if (rc || len == 0) return rc;
  /* one buffer per call, no larger than the payload: a scan holds hundreds
   * of resolvers, and an idle one should cost no chunk buffer */
  size_t cap = len < BRI_BLOB_CHUNK ? (size_t)len : BRI_BLOB_CHUNK;
  uint8_t *buf = malloc(cap);
  if (!buf) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  while (len > 0 && !rc) {
    size_t n = len < cap ? (size_t)len : cap;
    rc = bri_sfile_read(s->f, off, buf, n, err);
    if (!rc) rc = fn(ctx, buf, n, err);
    off += n;
    len -= n;
  }
  free(buf);
  return rc;
}

int bri_blob_read(bri_blob_resolver *r, const bri_blob_desc *d, uint64_t max, uint8_t **out,
                  size_t *len, bri_error *err) {
  *out = NULL;
  *len = 0;
  file_slot *s;
  uint64_t off, n;
  int rc = locate(r, d, &s, &off, &n, err);
  if (rc) return rc;
  if (n > max || n > SIZE_MAX - 1)
    return bri_error_set(err, BRI_EUNSUPPORTED, "%s: blob of %llu bytes exceeds the %llu-byte limit",
                         s ? s->path : r->datafile, (unsigned long long)n,
                         (unsigned long long)max);
  uint8_t *buf = malloc(n ? (size_t)n : 1);
  if (!buf) return bri_error_set(err, BRI_ENOMEM, "out of memory reading a %llu-byte blob",
                                 (unsigned long long)n);
  if (n) rc = bri_sfile_read(s->f, off, buf, (size_t)n, err);
  if (rc) {
    free(buf);
    return rc;
  }
  *out = buf;
  *len = (size_t)n;
  return 0;
}

/* ------------------------------------------------------------ Arrow */

int bri_blob_desc_get(const struct ArrowSchema *s, const struct ArrowArray *a, int64_t i,
                      bri_blob_desc *d, bool *is_null, bri_error *err) {
  static const char *const names[5] = {"kind", "position", "size", "blob_id", "blob_uri"};
  static const char *const formats[5] = {"C", "L", "L", "I", "u"};
  const struct ArrowArray *c[5] = {0};
  bool large_uri = false;
  memset(d, 0, sizeof *d);
  *is_null = true;
  if (!s->format || strcmp(s->format, "+s") || a->n_children != s->n_children || i < 0 ||
      i >= a->length)
    return bri_error_set(err, BRI_EINVAL, "%s: not a Blob v2 descriptor array (or row %lld out "
                         "of range)", s->name ? s->name : "?", (long long)i);
  for (int64_t k = 0; k < s->n_children; k++)
    for (int f = 0; f < 5; f++) {
      const struct ArrowSchema *cs = s->children[k];
      if (!cs->name || strcmp(cs->name, names[f])) continue;
      bool ok = !strcmp(cs->format, formats[f]) || (f == 4 && !strcmp(cs->format, "U"));
      if (!ok || !a->children[k] || a->children[k]->n_buffers < (f == 4 ? 3 : 2))
        return bri_error_set(err, BRI_EINVAL, "%s: descriptor field %s has format %s",
                             s->name ? s->name : "?", cs->name, cs->format);
      c[f] = a->children[k];
      if (f == 4) large_uri = cs->format[0] == 'U';
    }
  for (int f = 0; f < 5; f++)
    if (!c[f] || c[f]->length < a->offset + a->length)
      return bri_error_set(err, BRI_EINVAL, "%s: descriptor has no usable %s field",
                           s->name ? s->name : "?", names[f]);
  if (!bri_arrow_valid(a, i)) return 0;
  int64_t j = a->offset + i;
  if (!bri_arrow_valid(c[0], j)) return 0; /* a null kind is a null blob (docs/format/blob.md 2) */
  *is_null = false;
  d->kind = ((const uint8_t *)c[0]->buffers[1])[c[0]->offset + j];
  memcpy(&d->position, (const uint8_t *)c[1]->buffers[1] + 8 * (c[1]->offset + j), 8);
  memcpy(&d->size, (const uint8_t *)c[2]->buffers[1] + 8 * (c[2]->offset + j), 8);
  memcpy(&d->blob_id, (const uint8_t *)c[3]->buffers[1] + 4 * (c[3]->offset + j), 4);
  if (bri_arrow_valid(c[4], j)) {
    int64_t k = c[4]->offset + j;
    uint64_t lo, hi;
    if (large_uri) {
      int64_t x, y;
      memcpy(&x, (const uint8_t *)c[4]->buffers[1] + 8 * k, 8);
      memcpy(&y, (const uint8_t *)c[4]->buffers[1] + 8 * (k + 1), 8);
      lo = (uint64_t)x, hi = (uint64_t)y;
    } else {
      int32_t x, y;
      memcpy(&x, (const uint8_t *)c[4]->buffers[1] + 4 * k, 4);
      memcpy(&y, (const uint8_t *)c[4]->buffers[1] + 4 * (k + 1), 4);
      lo = (uint64_t)(int64_t)x, hi = (uint64_t)(int64_t)y;
    }
    if (hi > lo && hi <= INT64_MAX && c[4]->buffers[2]) {
      d->uri = (const char *)c[4]->buffers[2] + lo;
      d->uri_len = (size_t)(hi - lo);
    }
  }
  return 0;
}
