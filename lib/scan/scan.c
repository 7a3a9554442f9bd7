/* scan.c: a table version read the way LanceDB reads it (see scan.h).
 *
 * Rows are hashed in key order without holding the table in memory: the key
 * column is read from every fragment once and sorted into a list of
 * (fragment, row) pairs (stable, ties in scan order, compared the way
 * JavaScript's < does: scan/key.h); then each column in turn is read from
 * every fragment, hashed in that order, and released. Blob payloads are
 * streamed from their files through one resolver per data file
 * (blob/resolve.h), at most MAX_OPEN_RESOLVERS of them with open files. */
#include "scan/scan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blob/resolve.h"
#include "lance/core/schema.h"
#include "lance/dataset/reader.h"
#include "lance/table/table.h"
#include "scan/hash.h"
#include "scan/key.h"
#include "scan/typename.h"
#include "util/fsutil.h"

/* ------------------------------------------------------------ table path */

/* The table path as node's path.resolve prints it: absolute, no "." or ".."
 * segments, no repeated or trailing slashes (symlinks are kept). */
static char *absolute_path(const char *p) {
  char *cwd = NULL, *joined;
  if (strstr(p, "://")) return strdup(p); /* a URI (s3://...) is absolute already */
  if (p[0] == '/') {
    joined = strdup(p);
  } else {
    cwd = getcwd(NULL, 0);
    joined = cwd ? bri_strdupf("%s/%s", cwd, p) : NULL;
  }
  free(cwd);
  if (!joined) return NULL;
  size_t n = strlen(joined);
  char *out = malloc(n + 2), *w = out;
  if (!out) {
    free(joined);
    return NULL;
  }
  for (char *s = joined; *s;) {
    while (*s == '/') s++;
    if (!*s) break;
    char *e = strchr(s, '/');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    if (len == 1 && s[0] == '.') {
    } else if (len == 2 && s[0] == '.' && s[1] == '.') {
      while (w > out && *--w != '/') {
      }
    } else {
      *w++ = '/';
      memcpy(w, s, len);
      w += len;
    }
    s += len;
  }
  if (w == out) *w++ = '/';
  *w = 0;
  free(joined);
  return out;
}

/* ------------------------------------------------------------ scan state */

typedef struct res_entry {
  const Lance__Table__DataFile *df;
  bri_blob_resolver *r;
  uint64_t used; /* tick of last use, 0 = files closed */
} res_entry;

/* Resolvers keep up to two files open; past this many resolvers with open
 * files, the least recently used one closes its files (rows in key order
 * hop between fragments, so every fragment's resolver stays live). */
#ifndef MAX_OPEN_RESOLVERS
#define MAX_OPEN_RESOLVERS 256
#endif

typedef struct frag_state {
  const Lance__Table__DataFragment *frag;
  bri_fragment_reader *rd;
  uint64_t rows;
  res_entry *res;
  size_t n_res;
  struct ArrowArray arr;   /* the column being hashed */
  struct ArrowSchema sch;
} frag_state;

typedef struct scan {
  bri_table *t;
  bri_manifest *m;
  frag_state *frags;
  size_t n_frags;
  size_t cur;              /* fragment of the row being hashed */
  uint64_t tick;           /* resolver uses, for the LRU */
  size_t n_open;           /* resolvers whose files are open */
  char *path_cache;        /* last blob path -> field id */
  int32_t path_field;
} scan;

static void scan_dispose(scan *s) {
  for (size_t i = 0; i < s->n_frags; i++) {
    frag_state *f = &s->frags[i];
    for (size_t k = 0; k < f->n_res; k++) bri_blob_resolver_close(f->res[k].r);
    free(f->res);
    if (f->arr.release) f->arr.release(&f->arr);
    if (f->sch.release) f->sch.release(&f->sch);
    bri_fragment_close(f->rd);
  }
  free(s->frags);
  free(s->path_cache);
  bri_manifest_free(s->m);
  bri_table_close(s->t);
}

/* The field id whose dotted path is path (e.g. "st.b"). */
static int path_field(scan *s, const char *path, int32_t *id, bri_error *err) {
  if (s->path_cache && !strcmp(s->path_cache, path)) {
    *id = s->path_field;
    return 0;
  }
  const Lance__Table__Manifest *m = s->m->pb;
  for (size_t i = 0; i < m->n_fields; i++) {
    char *p = bri_field_path(m->fields, m->n_fields, i);
    int same = p && !strcmp(p, path);
    free(p);
    if (same) {
      free(s->path_cache);
      s->path_cache = strdup(path);
      s->path_field = m->fields[i]->id;
      *id = s->path_field;
      return 0;
    }
  }
  return bri_error_set(err, BRI_ENOTFOUND, "%s: no field %s in the schema", s->t->root, path);
}

/* The resolver of the data file holding blob field `path` in the current
 * fragment; built once per data file. */
static int resolver_for(scan *s, const char *path, bri_blob_resolver **out, bri_error *err) {
  int32_t id = -1;
  int rc = path_field(s, path, &id, err);
  if (rc) return rc;
  frag_state *f = &s->frags[s->cur];
  const Lance__Table__DataFile *df = bri_fragment_field_datafile(f->rd, id);
  if (!df)
    return bri_error_set(err, BRI_ECORRUPT, "%s: fragment %llu stores no data for blob field %s",
                         s->t->root, (unsigned long long)f->frag->id, path);
  res_entry *e = NULL;
  for (size_t k = 0; k < f->n_res && !e; k++)
    if (f->res[k].df == df) e = &f->res[k];
  if (!e) {
    res_entry *g = realloc(f->res, (f->n_res + 1) * sizeof *g);
    if (!g) return bri_error_set(err, BRI_ENOMEM, "out of memory");
    f->res = g;
    e = &g[f->n_res];
    rc = bri_blob_resolver_open(s->t, s->m->pb, df, &e->r, err);
    if (rc) return rc;
    e->df = df;
    e->used = 0;
    f->n_res++;
  }
  if (!e->used && ++s->n_open > MAX_OPEN_RESOLVERS) {
    res_entry *lru = NULL;
    for (size_t k = 0; k < s->n_frags; k++)
      for (size_t j = 0; j < s->frags[k].n_res; j++) {
        res_entry *c = &s->frags[k].res[j];
        if (c->used && (!lru || c->used < lru->used)) lru = c;
      }
    if (lru) {
      bri_blob_resolver_drop_files(lru->r);
      lru->used = 0;
      s->n_open--;
    }
  }
  e->used = ++s->tick;
  *out = e->r;
  return 0;
}

static int src_length(void *ctx, const char *path, const bri_blob_desc *d, uint64_t *len,
                      bri_error *err) {
  bri_blob_resolver *r;
  int rc = resolver_for(ctx, path, &r, err);
  return rc ? rc : bri_blob_length(r, d, len, err);
}

static int src_stream(void *ctx, const char *path, const bri_blob_desc *d, bri_blob_chunk_fn fn,
                      void *fn_ctx, bri_error *err) {
  bri_blob_resolver *r;
  int rc = resolver_for(ctx, path, &r, err);
  return rc ? rc : bri_blob_stream(r, d, fn, fn_ctx, err);
}

/* ------------------------------------------------------------ key order */

typedef struct row_ref {
  uint32_t frag, row;
} row_ref;

typedef struct key_ent {
  row_ref at;
  bri_key key;
} key_ent;

static int key_cmp(const void *x, const void *y, void *arg) {
  const key_ent *a = x, *b = y;
  int c = bri_key_cmp(*(const bri_key_kind *)arg, &a->key, &b->key);
  if (c) return c;
  /* ties keep scan order: Array.prototype.sort is stable */
  if (a->at.frag != b->at.frag) return a->at.frag < b->at.frag ? -1 : 1;
  return (a->at.row > b->at.row) - (a->at.row < b->at.row);
}

static int sort_rows(scan *s, int32_t key_id, const char *key, row_ref **order, uint64_t total,
                     bri_error *err) {
  int rc = 0;
  bri_key_type kind = {0};
  bool have_kind = false;
  key_ent *ents = malloc((total ? total : 1) * sizeof *ents);
  if (!ents) return bri_error_set(err, BRI_ENOMEM, "out of memory sorting %llu rows",
                                  (unsigned long long)total);
  uint64_t n = 0;
  for (size_t k = 0; k < s->n_frags && !rc; k++) {
    frag_state *f = &s->frags[k];
    rc = bri_fragment_read_field(f->rd, key_id, &f->arr, &f->sch, err);
    if (rc) break;
    bri_key_type kk;
    if (!bri_key_type_of(f->sch.format, &kk) || (have_kind && (kk.kind != kind.kind || kk.width != kind.width))) {
      rc = bri_error_set(err, BRI_EUNSUPPORTED,
                         "%s: key column %s has Arrow type \"%s\"; keys must be integers, floats "
                         "or strings",
                         s->t->root, key, f->sch.format);
      break;
    }
    kind = kk;
    have_kind = true;
    if ((uint64_t)f->arr.length != f->rows || n + f->rows > total) {
      rc = bri_error_set(err, BRI_ECORRUPT, "%s: fragment %llu: key column has %lld rows, "
                         "expected %llu", s->t->root, (unsigned long long)f->frag->id,
                         (long long)f->arr.length, (unsigned long long)f->rows);
      break;
    }
    for (int64_t i = 0; i < f->arr.length; i++, n++) {
      ents[n].at.frag = (uint32_t)k;
      ents[n].at.row = (uint32_t)i;
      bri_key_get(&f->arr, i, kind, &ents[n].key);
    }
  }
  if (!rc) {
    qsort_r(ents, n, sizeof *ents, key_cmp, &kind.kind);
    row_ref *o = malloc((n ? n : 1) * sizeof *o);
    if (!o) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    for (uint64_t i = 0; o && i < n; i++) o[i] = ents[i].at;
    *order = o;
  }
  free(ents);
  for (size_t k = 0; k < s->n_frags; k++) {
    if (s->frags[k].arr.release) s->frags[k].arr.release(&s->frags[k].arr);
    if (s->frags[k].sch.release) s->frags[k].sch.release(&s->frags[k].sch);
  }
  return rc;
}

/* ------------------------------------------------------------ columns */

static bool is_top(const Lance__File__Field *f) { return f->parent_id == -1; }

/* Descendants of field i that are Blob v2 (the oracle's hasNestedBlob), and
 * the ones reached through structs only (structBlobPaths), appended to paths. */
static bool nested_blobs(const Lance__Table__Manifest *m, size_t i, bool struct_only,
                         json_t *paths, int depth) {
  bool any = false;
  const Lance__File__Field *f = m->fields[i];
  bool is_struct = f->logical_type && !strcmp(f->logical_type, "struct");
  for (size_t j = i + 1; j < m->n_fields && depth < 64; j++) {
    if (m->fields[j]->parent_id != f->id) continue;
    if (bri_field_is_blob_v2(m->fields[j])) {
      any = true;
      if (paths && struct_only && is_struct) {
        char *p = bri_field_path(m->fields, m->n_fields, j);
        json_array_append_new(paths, json_string(p ? p : ""));
        free(p);
      }
    } else if (nested_blobs(m, j, struct_only && is_struct, paths, depth + 1)) {
      any = true;
    }
  }
  return any;
}

static int hash_column(scan *s, size_t fi, const row_ref *order, uint64_t total, bool blob_bytes,
                       bri_column_hash *out, bri_column_hasher **hp, bri_error *err) {
  int32_t id = s->m->pb->fields[fi]->id;
  int rc = 0;
  bri_column_hasher *h = NULL;
  bri_blob_source src = {src_length, src_stream, s};
  /* key order needs every fragment's array at once; scan order streams
   * fragment by fragment (one fragment's column in memory) */
  for (size_t k = 0; k < s->n_frags && !rc; k++) {
    frag_state *f = &s->frags[k];
    rc = bri_fragment_read_field(f->rd, id, &f->arr, &f->sch, err);
    if (!rc && (uint64_t)f->arr.length != f->rows)
      rc = bri_error_set(err, BRI_ECORRUPT, "%s: fragment %llu: column %s has %lld rows, expected "
                         "%llu", s->t->root, (unsigned long long)f->frag->id,
                         s->m->pb->fields[fi]->name, (long long)f->arr.length,
                         (unsigned long long)f->rows);
    if (!rc && !h) rc = bri_column_hasher_new(&f->sch, blob_bytes, &h, err);
    else if (!rc) rc = bri_column_hasher_check_schema(h, &f->sch, err);
    if (!rc && !order) {
      s->cur = k;
      rc = bri_column_hasher_add_range(h, &f->arr, 0, f->arr.length, &src, err);
      f->arr.release(&f->arr);
      f->sch.release(&f->sch);
    }
  }
  for (uint64_t i = 0; order && !rc && i < total; i++) {
    s->cur = order[i].frag;
    rc = bri_column_hasher_add(h, &s->frags[s->cur].arr, order[i].row, &src, err);
  }
  if (!rc && h) rc = bri_column_hasher_finish(h, out, err);
  for (size_t k = 0; k < s->n_frags; k++) {
    if (s->frags[k].arr.release) s->frags[k].arr.release(&s->frags[k].arr);
    if (s->frags[k].sch.release) s->frags[k].sch.release(&s->frags[k].sch);
  }
  if (rc) {
    bri_column_hasher_free(h);
    return bri_error_wrap(err, "column %s", s->m->pb->fields[fi]->name);
  }
  *hp = h;
  return 0;
}

static json_t *column_json(const Lance__Table__Manifest *m, size_t fi, const char *type,
                           const bri_column_hash *r, bool blob_bytes) {
  bool blob = bri_field_is_blob_v2(m->fields[fi]);
  json_t *c = json_object();
  json_object_set_new(c, "type", json_string(blob ? "blob.v2" : type));
  json_object_set_new(c, "nulls", json_integer((json_int_t)r->nulls));
  json_object_set_new(c, "sha256", json_string(r->sha256));
  if (blob) {
    json_t *k = json_object();
    for (size_t i = 0; i < r->n_kinds; i++) {
      char name[16];
      if (r->kinds[i] < 0) snprintf(name, sizeof name, "null");
      else snprintf(name, sizeof name, "kind%d", r->kinds[i]);
      json_object_set_new(k, name, json_integer((json_int_t)r->kind_counts[i]));
    }
    json_object_set_new(c, "descriptorKinds", k);
    char b[24];
    snprintf(b, sizeof b, "%llu", (unsigned long long)r->payload_bytes);
    json_object_set_new(c, "payloadBytes", json_string(b));
  } else {
    json_t *paths = json_array();
    if (nested_blobs(m, fi, blob_bytes, paths, 0)) json_object_set_new(c, "nestedBlobs", paths);
    else json_decref(paths);
  }
  return c;
}

int bri_scan_table(const char *table, const bri_scan_options *o, json_t **report, bri_error *err) {
  uint64_t version = o->version;
  const char *key = o->key;
  bool blob_bytes = o->blob_bytes;
  *report = NULL;
  scan s = {0};
  row_ref *order = NULL;
  json_t *out = NULL;
  char *abs = absolute_path(table);
  int rc = abs ? bri_table_open(table, &s.t, err) : bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (!rc) rc = bri_table_load(s.t, version, &s.m, err);
  const Lance__Table__Manifest *m = rc ? NULL : s.m->pb;
  uint64_t total = 0, count_rows = 0;
  if (!rc) {
    s.frags = calloc(m->n_fragments ? m->n_fragments : 1, sizeof *s.frags);
    if (!s.frags) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  for (size_t k = 0; !rc && k < m->n_fragments; k++) {
    frag_state *f = &s.frags[k];
    f->frag = m->fragments[k];
    s.n_frags = k + 1;
    rc = bri_fragment_open(s.t, s.m, f->frag, &f->rd, err);
    if (rc) break;
    f->rows = bri_fragment_num_rows(f->rd);
    if (f->rows > UINT32_MAX) {
      rc = bri_error_set(err, BRI_EUNSUPPORTED, "%s: fragment %llu has %llu rows", table,
                         (unsigned long long)f->frag->id, (unsigned long long)f->rows);
      break;
    }
    total += f->rows;
    count_rows += bri_fragment_live_rows(f->frag);
  }
  /* the key: --key COL, else "id" when the table has one, else scan order */
  long key_field = -1;
  if (!rc) {
    const char *want = key ? key : "id";
    for (size_t i = 0; i < m->n_fields; i++)
      if (is_top(m->fields[i]) && m->fields[i]->name && !strcmp(m->fields[i]->name, want))
        key_field = (long)i;
    if (!key && key_field < 0) key = "";
    else if (!key) key = "id";
    if (key[0] && key_field < 0)
      rc = bri_error_set(err, BRI_ENOTFOUND, "%s: no top-level column \"%s\" to sort by", table,
                         key);
    else if (key[0])
      rc = sort_rows(&s, m->fields[key_field]->id, key, &order, total, err);
  }
  if (!rc) {
    out = json_object();
    json_object_set_new(out, "table", json_string(abs));
    json_object_set_new(out, "version", json_integer((json_int_t)m->version));
    json_object_set_new(out, "rows", json_integer((json_int_t)total));
    json_object_set_new(out, "countRows", json_integer((json_int_t)count_rows));
    json_object_set_new(out, "fragments", json_integer((json_int_t)m->n_fragments));
    json_object_set_new(out, "key", key[0] ? json_string(key) : json_null());
    json_t *schema = json_array(), *cols = json_object();
    json_object_set_new(out, "schema", schema);
    json_object_set_new(out, "columns", cols);
    for (size_t i = 0; !rc && i < m->n_fields; i++) {
      if (!is_top(m->fields[i])) continue;
      char *type = bri_scan_type_name(m, i);
      const char *name = m->fields[i]->name ? m->fields[i]->name : "";
      json_array_append_new(schema, json_sprintf("%s:%s%s", name, type ? type : "",
                                                 bri_field_is_blob_v2(m->fields[i]) ? "[blob.v2]"
                                                                                     : ""));
      bri_column_hash r;
      bri_column_hasher *h = NULL;
      if (s.n_frags) {
        rc = hash_column(&s, i, order, total, blob_bytes, &r, &h, err);
      } else { /* no rows: the hash of nothing */
        memset(&r, 0, sizeof r);
        snprintf(r.sha256, sizeof r.sha256, "%s",
                 bri_field_is_blob_v2(m->fields[i]) && !blob_bytes
                     ? "skipped"
                     : "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
      }
      if (!rc) json_object_set_new(cols, name, column_json(m, i, type ? type : "", &r, blob_bytes));
      bri_column_hasher_free(h);
      free(type);
    }
  }
  if (!rc) *report = out;
  else json_decref(out);
  free(order);
  free(abs);
  scan_dispose(&s);
  return rc;
}
