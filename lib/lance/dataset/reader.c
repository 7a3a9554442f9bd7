/* reader.c: one fragment's fields as Arrow arrays (see reader.h).
 *
 * Reading a top-level field: (1) build a node tree from the manifest schema
 * (structs, lists and maps recurse; primitives, fixed-size lists, packed
 * structs, Blob v2 and legacy blob fields are leaves, docs/format/file.md 1.3);
 * (2) for each leaf in pre-order find the data file whose DataFile.fields
 * lists its id and the column DataFile.column_indices gives, check the data
 * file's own schema agrees, and run one assembly pass over the column's
 * pages (file/assemble.h) with the fragment's deletions as the row filter;
 * the first pass through a struct or list keeps its validity/offsets, later
 * passes must rebuild the same; (3) give leaves nobody stores all-null
 * arrays; (4) export the tree as ArrowArray/ArrowSchema.
 *
 * Design choice: the manifest is the source of truth for the output types
 * and names, the data file's schema only has to agree with it (same logical
 * type per field id) - which is what lets a fragment whose columns were
 * rewritten by schema evolution (several data files, tombstoned ids) read
 * like any other. */
#include "lance/dataset/reader.h"

#include <ctype.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lance/encoding/page.h"
#include "lance/file/arrow_build.h"
#include "lance/file/assemble.h"
#include "lance/table/deletion.h"
#include "lance/core/schema.h"
#include "util/fsutil.h"

/* ---- fragment ------------------------------------------------------------- */
typedef struct rfile {
  const Lance__Table__DataFile *pb;
  char *path;
  bri_datafile *df;
} rfile;

struct bri_fragment_reader {
  const bri_table *t;
  const bri_manifest *m;
  const Lance__Table__DataFragment *frag;
  size_t n_files;
  rfile *files;
  uint64_t physical_rows;
  uint32_t *del;
  size_t n_del;
  uint32_t *visible;
  uint64_t n_visible;
  int32_t *only; /* bri_fragment_open_fields: the top-level fields it may read */
  size_t n_only;
};

void bri_fragment_close(bri_fragment_reader *r) {
  if (!r) return;
  for (size_t i = 0; i < r->n_files; i++) {
    bri_datafile_close(r->files[i].df);
    free(r->files[i].path);
  }
  free(r->files);
  free(r->del);
  free(r->visible);
  free(r->only);
  free(r);
}

/* Inserts id into the sorted set ids[0..*n) (room for one more). */
static void set_add(int32_t *ids, size_t *n, int32_t id) {
  size_t i = *n;
  while (i && ids[i - 1] > id) ids[i] = ids[i - 1], i--;
  if (i && ids[i - 1] == id) {
    memmove(ids + i, ids + i + 1, (*n - i) * sizeof *ids); /* undo the shift */
    return;
  }
  ids[i] = id;
  (*n)++;
}

static bool set_has(const int32_t *ids, size_t n, int32_t id) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (ids[mid] < id) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && ids[lo] == id;
}

/* The ids of the top-level fields top[0..n) and of all their descendants
 * (the manifest lists fields in pre-order, parents first), sorted. */
static int subtree_ids(const Lance__Table__Manifest *m, const int32_t *top, size_t n, int32_t **out,
                       size_t *n_out, bri_error *err) {
  int32_t *ids = malloc((m->n_fields + 1) * sizeof *ids);
  if (!ids) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  size_t k = 0;
  for (size_t i = 0; i < m->n_fields; i++) {
    const Lance__File__Field *f = m->fields[i];
    bool in = f->parent_id != -1 && set_has(ids, k, f->parent_id);
    for (size_t j = 0; !in && f->parent_id == -1 && j < n; j++) in = top[j] == f->id;
    if (in) set_add(ids, &k, f->id);
  }
  *out = ids, *n_out = k;
  return 0;
}

/* The columns of data file pb that store one of ids (sorted), into cols. */
static size_t file_columns(const Lance__Table__DataFile *pb, const int32_t *ids, size_t n_ids,
                           uint32_t *cols) {
  size_t k = 0;
  for (size_t j = 0; j < pb->n_fields && j < pb->n_column_indices; j++)
    if (pb->column_indices[j] >= 0 && set_has(ids, n_ids, pb->fields[j]))
      cols[k++] = (uint32_t)pb->column_indices[j];
  return k;
}

/* The objects a fragment's open reads (r's data files, its deletion file
 * dpath or NULL) asked for in one round on an object store, rather than
 * one after another: their tails land in the store's cache, where the
 * opens find them. Only those in the first data file's store; errors are
 * left to the opens. */
static void prefetch_fragment(const bri_fragment_reader *r, const char *dpath) {
  size_t n = r->n_files + (dpath != NULL), k = 0;
  bri_store *first, *st;
  bri_error ignored;
  if (n < 2 || bri_table_store_of(r->t, r->m->pb, r->files[0].path, &first, &ignored) != 0 ||
      (bri_store_caps(first) & BRI_STORE_CAP_LOCAL))
    return; /* locally, nothing to gain */
  const char **paths = calloc(n, sizeof *paths);
  for (size_t i = 0; paths && i < n; i++) {
    const char *p = i < r->n_files ? r->files[i].path : dpath;
    if (bri_table_store_of(r->t, r->m->pb, p, &st, &ignored) == 0 && st == first) paths[k++] = p;
  }
  if (k > 1) bri_store_prefetch(first, paths, k, BRI_PREFETCH_OPEN);
  free(paths);
}

int bri_fragment_open(const bri_table *t, const bri_manifest *m,
                      const Lance__Table__DataFragment *frag, bri_fragment_reader **out,
                      bri_error *err) {
  return bri_fragment_open_fields(t, m, frag, NULL, 0, out, err);
}

int bri_fragment_open_fields(const bri_table *t, const bri_manifest *m,
                             const Lance__Table__DataFragment *frag, const int32_t *fields,
                             size_t n_fields, bri_fragment_reader **out, bri_error *err) {
  *out = NULL;
  bri_fragment_reader *r = calloc(1, sizeof(*r));
  if (!r) return bri_error_set(err, BRI_ENOMEM, "out of memory opening fragment %llu", (unsigned long long)frag->id);
  r->t = t;
  r->m = m;
  r->frag = frag;
  int rc = 0;
  int32_t *ids = NULL;
  size_t n_ids = 0;
  uint32_t *cols = NULL;
  char *dpath = NULL; /* the deletion file's */
  if (fields) {
    r->only = malloc((n_fields + 1) * sizeof *r->only);
    if (!r->only) {
      rc = bri_error_set(err, BRI_ENOMEM, "out of memory opening fragment %llu", (unsigned long long)frag->id);
      goto fail;
    }
    memcpy(r->only, fields, n_fields * sizeof *fields);
    r->n_only = n_fields;
    if ((rc = subtree_ids(m->pb, fields, n_fields, &ids, &n_ids, err))) goto fail;
  }
  if (!frag->n_files) {
    rc = bri_error_set(err, BRI_ECORRUPT, "%s: fragment %llu has no data files", m->path,
                       (unsigned long long)frag->id);
    goto fail;
  }
  r->files = calloc(frag->n_files, sizeof(*r->files));
  if (!r->files) {
    rc = bri_error_set(err, BRI_ENOMEM, "out of memory opening fragment %llu", (unsigned long long)frag->id);
    goto fail;
  }
  /* every path first: an object store is asked for them in one round */
  r->n_files = frag->n_files;
  for (size_t i = 0; !rc && i < frag->n_files; i++) {
    r->files[i].pb = frag->files[i];
    rc = bri_table_datafile_path(t, m->pb, r->files[i].pb, &r->files[i].path, err);
  }
  if (!rc && frag->deletion_file) rc = bri_table_deletion_path(t, m->pb, frag, &dpath, err);
  if (rc) goto fail;
  prefetch_fragment(r, dpath);
  bool have_rows = frag->has_physical_rows;
  r->physical_rows = frag->physical_rows;
  for (size_t i = 0; i < frag->n_files; i++) {
    rfile *f = &r->files[i];
    bri_store *st = NULL;
    bri_datafile_opts opts = {.cache = t->pbcache};
    if (fields) {
      uint32_t *g = realloc(cols, (f->pb->n_fields + 1) * sizeof *g);
      if (!g) {
        rc = bri_error_set(err, BRI_ENOMEM, "out of memory opening fragment %llu", (unsigned long long)frag->id);
        goto fail;
      }
      cols = g;
      opts.columns = cols;
      opts.n_columns = file_columns(f->pb, ids, n_ids, cols);
    }
    rc = bri_table_store_of(t, m->pb, f->path, &st, err);
    if (!rc) rc = bri_datafile_open_in(st, f->path, &opts, &f->df, err);
    if (rc) goto fail;
    uint64_t rows = bri_datafile_num_rows(f->df);
    if (!have_rows) {
      r->physical_rows = rows;
      have_rows = true;
    } else if (rows != r->physical_rows) {
      rc = bri_error_set(err, BRI_ECORRUPT, "%s: data file holds %llu rows but fragment %llu has %llu physical rows",
                         f->path, (unsigned long long)rows, (unsigned long long)frag->id,
                         (unsigned long long)r->physical_rows);
      goto fail;
    }
  }
  /* Row addresses keep the offset in 32 bits (docs/format/table.md 5.3). */
  if (r->physical_rows > (uint64_t)UINT32_MAX + 1) {
    rc = bri_error_set(err, BRI_EUNSUPPORTED, "%s: fragment %llu has %llu rows, more than 2^32", m->path,
                       (unsigned long long)frag->id, (unsigned long long)r->physical_rows);
    goto fail;
  }
  if (dpath) {
    const Lance__Table__DeletionFile *dfp = frag->deletion_file;
    bri_store *st = NULL;
    rc = bri_table_store_of(t, m->pb, dpath, &st, err);
    if (!rc)
      rc = bri_deletion_read(st, dpath, (int)dfp->file_type, dfp->num_deleted_rows,
                             r->physical_rows, &r->del, &r->n_del, err);
    if (rc) goto fail;
  }
  r->n_visible = r->physical_rows - r->n_del;
  if (r->n_visible) {
    r->visible = malloc((size_t)r->n_visible * sizeof(uint32_t));
    if (!r->visible) {
      rc = bri_error_set(err, BRI_ENOMEM, "out of memory for %llu row offsets", (unsigned long long)r->n_visible);
      goto fail;
    }
    uint64_t k = 0;
    size_t d = 0;
    for (uint64_t row = 0; row < r->physical_rows; row++) {
      if (d < r->n_del && r->del[d] == row) {
        d++;
        continue;
      }
      r->visible[k++] = (uint32_t)row;
    }
  }
  free(ids), free(cols), free(dpath);
  *out = r;
  return 0;
fail:
  free(ids), free(cols), free(dpath);
  bri_fragment_close(r);
  return rc;
}

uint64_t bri_fragment_num_rows(const bri_fragment_reader *r) { return r->n_visible; }
uint64_t bri_fragment_physical_rows(const bri_fragment_reader *r) { return r->physical_rows; }
const uint32_t *bri_fragment_row_offsets(const bri_fragment_reader *r) { return r->visible; }

/* The data file and column storing field id: the first DataFile listing it
 * with a column index >= 0 (Lance marks replaced columns with id -2 and
 * parents, in old files, with column -1). */
static bool locate(const bri_fragment_reader *r, int32_t id, size_t *file, size_t *column) {
  if (id < 0) return false;
  for (size_t i = 0; i < r->n_files; i++) {
    const Lance__Table__DataFile *pb = r->files[i].pb;
    for (size_t j = 0; j < pb->n_fields && j < pb->n_column_indices; j++)
      if (pb->fields[j] == id && pb->column_indices[j] >= 0) {
        *file = i;
        *column = (size_t)pb->column_indices[j];
        return true;
      }
  }
  return false;
}

/* File index storing field id or, for a parent, its first stored descendant. */
static long field_file(const bri_fragment_reader *r, int32_t id) {
  size_t file, col;
  if (locate(r, id, &file, &col)) return (long)file;
  Lance__File__Field **fields = r->m->pb->fields;
  size_t n = r->m->pb->n_fields;
  long at = bri_field_index(fields, n, id);
  if (at < 0) return -1;
  /* Descendants follow their parent in pre-order, each one's parent seen
   * before it; collect ids of the subtree on the way. */
  int32_t stack[BRI_MAX_LAYERS];
  size_t depth = 1;
  stack[0] = id;
  for (size_t j = (size_t)at + 1; j < n; j++) {
    while (depth && fields[j]->parent_id != stack[depth - 1]) depth--;
    if (!depth) break;
    if (locate(r, fields[j]->id, &file, &col)) return (long)file;
    if (depth < BRI_MAX_LAYERS) stack[depth++] = fields[j]->id;
  }
  return -1;
}

const Lance__Table__DataFile *bri_fragment_field_datafile(const bri_fragment_reader *r,
                                                          int32_t field_id) {
  long f = field_file(r, field_id);
  return f < 0 ? NULL : r->files[f].pb;
}

const char *bri_fragment_extra_buffers(const bri_fragment_reader *r, size_t *n) {
  for (size_t i = 0; i < r->n_files; i++) {
    uint16_t major, minor;
    bri_datafile_version(r->files[i].df, &major, &minor);
    *n = bri_datafile_num_global_buffers(r->files[i].df);
    if (major >= 2 && *n > 1) return r->files[i].path;
  }
  *n = 0;
  return NULL;
}

bri_datafile *bri_fragment_field_file(const bri_fragment_reader *r, int32_t field_id) {
  long f = field_file(r, field_id);
  return f < 0 ? NULL : r->files[f].df;
}

const char *bri_fragment_field_path(const bri_fragment_reader *r, int32_t field_id) {
  long f = field_file(r, field_id);
  return f < 0 ? NULL : r->files[f].path;
}

/* ---- logical types -------------------------------------------------------- */
enum { LT_FIXED = 1, LT_VAR, LT_NULL, LT_STRUCT, LT_LIST, LT_LARGE_LIST, LT_MAP };

typedef struct ltype {
  int cls;
  uint32_t bits;  /* LT_FIXED: element width */
  bool large;     /* LT_VAR: 64-bit offsets */
  bool bfloat16;  /* element is the lance.bfloat16 extension */
  uint32_t n_dims;
  uint32_t dims[BRI_MAX_FSL_DEPTH]; /* FSL, outermost first */
  char fmt[64];   /* Arrow format of the element */
} ltype;

static bool parse_u32(const char *s, size_t len, uint32_t max, uint32_t *out) {
  if (!len || len > 10) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < len; i++) {
    if (!isdigit((unsigned char)s[i])) return false;
    v = v * 10 + (uint64_t)(s[i] - '0');
  }
  if (v > max) return false;
  *out = (uint32_t)v;
  return true;
}

static const struct {
  const char *name;
  int cls;
  uint32_t bits;
  const char *fmt;
} SIMPLE_TYPES[] = {
    {"null", LT_NULL, 0, "n"},        {"bool", LT_FIXED, 1, "b"},
    {"int8", LT_FIXED, 8, "c"},       {"uint8", LT_FIXED, 8, "C"},
    {"int16", LT_FIXED, 16, "s"},     {"uint16", LT_FIXED, 16, "S"},
    {"int32", LT_FIXED, 32, "i"},     {"uint32", LT_FIXED, 32, "I"},
    {"int64", LT_FIXED, 64, "l"},     {"uint64", LT_FIXED, 64, "L"},
    {"halffloat", LT_FIXED, 16, "e"}, {"float", LT_FIXED, 32, "f"},
    {"double", LT_FIXED, 64, "g"},    {"string", LT_VAR, 0, "u"},
    {"binary", LT_VAR, 0, "z"},       {"large_string", LT_VAR, 1, "U"},
    {"large_binary", LT_VAR, 1, "Z"}, {"json", LT_VAR, 1, "Z"},
    {"date32:day", LT_FIXED, 32, "tdD"}, {"date64:ms", LT_FIXED, 64, "tdm"},
    {"time32:s", LT_FIXED, 32, "tts"},   {"time32:ms", LT_FIXED, 32, "ttm"},
    {"time64:us", LT_FIXED, 64, "ttu"},  {"time64:ns", LT_FIXED, 64, "ttn"},
    {"duration:s", LT_FIXED, 64, "tDs"}, {"duration:ms", LT_FIXED, 64, "tDm"},
    {"duration:us", LT_FIXED, 64, "tDu"}, {"duration:ns", LT_FIXED, 64, "tDn"},
    {"struct", LT_STRUCT, 0, "+s"},      {"list", LT_LIST, 0, "+l"},
    {"list.struct", LT_LIST, 0, "+l"},   {"large_list", LT_LARGE_LIST, 0, "+L"},
    {"large_list.struct", LT_LARGE_LIST, 0, "+L"}, {"map", LT_MAP, 0, "+m"},
};

/* Parses Lance's logical type string (lance-core datatypes: LogicalType).
 * Returns false for anything not understood. */
static bool parse_ltype(const char *s, ltype *t, int depth) {
  memset(t, 0, sizeof(*t));
  if (!s || depth > BRI_MAX_FSL_DEPTH) return false;
  for (size_t i = 0; i < sizeof(SIMPLE_TYPES) / sizeof(SIMPLE_TYPES[0]); i++)
    if (!strcmp(s, SIMPLE_TYPES[i].name)) {
      t->cls = SIMPLE_TYPES[i].cls;
      if (t->cls == LT_VAR)
        t->large = SIMPLE_TYPES[i].bits;
      else
        t->bits = SIMPLE_TYPES[i].bits;
      snprintf(t->fmt, sizeof(t->fmt), "%s", SIMPLE_TYPES[i].fmt);
      return true;
    }
  const char *c1 = strchr(s, ':');
  if (!c1) return false;
  size_t head = (size_t)(c1 - s);
  const char *rest = c1 + 1;
  if (head == 9 && !strncmp(s, "timestamp", 9)) {
    /* timestamp:{s|ms|us|ns}:{zone or -} */
    const char *c2 = strchr(rest, ':');
    if (!c2) return false;
    size_t ul = (size_t)(c2 - rest);
    char u = ul == 1 && rest[0] == 's' ? 's'
             : ul == 2 && !strncmp(rest, "ms", 2) ? 'm'
             : ul == 2 && !strncmp(rest, "us", 2) ? 'u'
             : ul == 2 && !strncmp(rest, "ns", 2) ? 'n' : 0;
    const char *tz = c2 + 1;
    if (!u || !*tz || strlen(tz) > 40) return false;
    t->cls = LT_FIXED;
    t->bits = 64;
    snprintf(t->fmt, sizeof(t->fmt), "ts%c:%s", u, strcmp(tz, "-") ? tz : "");
    return true;
  }
  if (head == 7 && !strncmp(s, "decimal", 7)) {
    /* decimal:{128|256}:{precision}:{scale} */
    const char *c2 = strchr(rest, ':'), *c3 = c2 ? strchr(c2 + 1, ':') : NULL;
    uint32_t bits, prec, scale;
    if (!c3 || !parse_u32(rest, (size_t)(c2 - rest), 256, &bits) ||
        !parse_u32(c2 + 1, (size_t)(c3 - c2 - 1), 76, &prec) || (bits != 128 && bits != 256))
      return false;
    /* Scale may be negative (i8 in Lance). */
    const char *sc = c3 + 1;
    bool neg = *sc == '-';
    if (!parse_u32(sc + neg, strlen(sc + neg), 128, &scale)) return false;
    t->cls = LT_FIXED;
    t->bits = bits;
    snprintf(t->fmt, sizeof(t->fmt), "d:%u,%s%u%s", prec, neg ? "-" : "", scale,
             bits == 256 ? ",256" : "");
    return true;
  }
  if (head == 17 && !strncmp(s, "fixed_size_binary", 17)) {
    uint32_t w;
    if (!parse_u32(rest, strlen(rest), INT32_MAX / 8, &w) || !w) return false;
    t->cls = LT_FIXED;
    t->bits = w * 8;
    snprintf(t->fmt, sizeof(t->fmt), "w:%u", w);
    return true;
  }
  if (head == 4 && !strncmp(s, "dict", 4)) {
    /* dict:{value}:{index}:{ordered}: decoded to the value type. */
    const char *c2 = strchr(rest, ':');
    if (!c2) return false;
    char value[64];
    size_t vl = (size_t)(c2 - rest);
    if (!vl || vl >= sizeof(value)) return false;
    memcpy(value, rest, vl);
    value[vl] = 0;
    if (!parse_ltype(value, t, depth + 1)) return false;
    return t->cls == LT_FIXED || t->cls == LT_VAR;
  }
  if (head == 15 && !strncmp(s, "fixed_size_list", 15)) {
    /* fixed_size_list:{inner}:{n}; inner may itself contain colons. */
    const char *last = strrchr(rest, ':');
    uint32_t n;
    if (!last || last == rest || !parse_u32(last + 1, strlen(last + 1), INT32_MAX, &n) || !n)
      return false;
    char inner[160];
    size_t il = (size_t)(last - rest);
    if (il >= sizeof(inner)) return false;
    memcpy(inner, rest, il);
    inner[il] = 0;
    ltype it;
    if (!strcmp(inner, "lance.bfloat16")) {
      memset(&it, 0, sizeof(it));
      it.cls = LT_FIXED;
      it.bits = 16;
      it.bfloat16 = true;
      snprintf(it.fmt, sizeof(it.fmt), "w:2");
    } else if (!parse_ltype(inner, &it, depth + 1)) {
      return false;
    }
    if (it.cls != LT_FIXED || it.n_dims >= BRI_MAX_FSL_DEPTH) return false;
    *t = it;
    memmove(t->dims + 1, t->dims, t->n_dims * sizeof(uint32_t));
    t->dims[0] = n;
    t->n_dims++;
    uint64_t elems = 1;
    for (uint32_t k = 0; k < t->n_dims; k++) {
      elems *= t->dims[k];
      if (elems > UINT32_MAX || elems * t->bits > ((uint64_t)1 << 40)) return false;
    }
    return true;
  }
  return false;
}

/* ---- node tree ------------------------------------------------------------ */
enum { OUT_FIXED = 1, OUT_VAR, OUT_NULL, OUT_PACKED, OUT_BLOB2, OUT_LEGACY };

typedef struct rnode {
  int kind; /* BRI_ASM_* */
  const Lance__File__Field *f;
  ltype t;
  size_t n_children;
  struct rnode *children;
  /* leaves */
  int out;
  bri_leaf_type lt;
  bri_leaf_type *kid_lt; /* OUT_PACKED children */
  ltype *kid_t;
  const char **kid_names;
  size_t n_kids;
  /* assembled */
  bool built;
  uint64_t length;
  bri_bitbuf validity;
  bri_growbuf offsets;
  bri_vbuild values;
} rnode;

static void rnode_dispose(rnode *n) {
  for (size_t i = 0; i < n->n_children; i++) rnode_dispose(&n->children[i]);
  free(n->children);
  free(n->kid_lt);
  free(n->kid_t);
  free(n->kid_names);
  bri_bitbuf_dispose(&n->validity);
  bri_growbuf_dispose(&n->offsets);
  bri_vbuild_dispose(&n->values);
  memset(n, 0, sizeof(*n));
}

static bool meta_true(const Lance__File__Field *f, const char *key) {
  char *v = bri_field_metadata(f, key);
  bool yes = v && !strcasecmp(v, "true");
  free(v);
  return yes;
}

static bool is_packed(const Lance__File__Field *f) {
  return meta_true(f, "lance-encoding:packed") || meta_true(f, "packed");
}

static bool is_legacy_blob(const Lance__File__Field *f) {
  char *v = bri_field_metadata(f, "lance-encoding:blob");
  bool yes = v != NULL;
  free(v);
  return yes;
}

static void leaf_type_of(const ltype *t, bri_leaf_type *lt) {
  memset(lt, 0, sizeof(*lt));
  if (t->cls == LT_VAR) {
    lt->kind = BRI_LEAF_VARIABLE;
    return;
  }
  lt->kind = BRI_LEAF_FIXED;
  lt->bits = t->cls == LT_NULL ? 0 : t->bits;
  lt->n_dims = t->n_dims;
  for (uint32_t k = 0; k < t->n_dims; k++) lt->dims[k] = t->dims[k];
}

static const char *fname(const Lance__File__Field *f) { return f->name ? f->name : "?"; }

/* Children of fields[at]: the following fields whose parent_id is its id. */
static int build_node(Lance__File__Field **fields, size_t n, size_t at, size_t depth, rnode *nd,
                      size_t *budget, const char *mpath, bri_error *err) {
  const Lance__File__Field *f = fields[at];
  memset(nd, 0, sizeof(*nd));
  nd->f = f;
  /* A proper schema uses each field once; duplicate ids could make a
   * subtree appear under several parents (and grow exponentially). */
  if (!*budget)
    return bri_error_set(err, BRI_ECORRUPT, "%s: field %s: the schema reuses field ids (%zu fields)", mpath,
                         fname(f), n);
  (*budget)--;
  if (depth >= BRI_MAX_LAYERS)
    return bri_error_set(err, BRI_EUNSUPPORTED, "%s: field %s is nested more than %d levels deep", mpath,
                         fname(f), BRI_MAX_LAYERS);
  bool blob2 = bri_field_is_blob_v2(f);
  if (!blob2 && !parse_ltype(f->logical_type, &nd->t, 0))
    return bri_error_set(err, BRI_EUNSUPPORTED, "%s: field %s (id %d) has logical type \"%s\", which brid does not read",
                         mpath, fname(f), f->id, f->logical_type ? f->logical_type : "");
  /* Collect direct children (pre-order: they follow, before the next field
   * at this field's level or above). */
  size_t kids[BRI_MAX_STRUCT_CHILDREN + 1], nk = 0;
  for (size_t j = at + 1; j < n; j++) {
    if (fields[j]->parent_id != f->id) continue;
    if (nk == BRI_MAX_STRUCT_CHILDREN)
      return bri_error_set(err, BRI_EUNSUPPORTED, "%s: field %s has more than %d children", mpath, fname(f),
                           BRI_MAX_STRUCT_CHILDREN);
    kids[nk++] = j;
  }
  if (blob2) {
    nd->kind = BRI_ASM_LEAF;
    nd->out = OUT_BLOB2;
    nd->lt = *bri_leaf_type_blob_v2();
    return 0;
  }
  switch (nd->t.cls) {
  case LT_STRUCT:
    if (is_packed(f)) {
      if (!nk)
        return bri_error_set(err, BRI_EUNSUPPORTED, "%s: packed struct %s has no fields", mpath, fname(f));
      nd->kind = BRI_ASM_LEAF;
      nd->out = OUT_PACKED;
      nd->kid_lt = calloc(nk, sizeof(*nd->kid_lt));
      nd->kid_t = calloc(nk, sizeof(*nd->kid_t));
      nd->kid_names = calloc(nk, sizeof(*nd->kid_names));
      if (!nd->kid_lt || !nd->kid_t || !nd->kid_names)
        return bri_error_set(err, BRI_ENOMEM, "out of memory");
      nd->n_kids = nk;
      for (size_t i = 0; i < nk; i++) {
        const Lance__File__Field *c = fields[kids[i]];
        if (!parse_ltype(c->logical_type, &nd->kid_t[i], 0) ||
            (nd->kid_t[i].cls != LT_VAR && (nd->kid_t[i].cls != LT_FIXED || nd->kid_t[i].n_dims ||
                                            nd->kid_t[i].bits < 8)))
          return bri_error_set(err, BRI_EUNSUPPORTED, "%s: packed struct %s: field %s of type \"%s\" cannot be packed",
                               mpath, fname(f), fname(c), c->logical_type ? c->logical_type : "");
        leaf_type_of(&nd->kid_t[i], &nd->kid_lt[i]);
        nd->kid_names[i] = fname(c);
      }
      nd->lt.kind = BRI_LEAF_STRUCT;
      nd->lt.n_children = nk;
      nd->lt.children = nd->kid_lt;
      return 0;
    }
    if (!nk)
      return bri_error_set(err, BRI_EUNSUPPORTED, "%s: struct %s has no fields (empty structs are not read)",
                           mpath, fname(f));
    nd->kind = BRI_ASM_STRUCT;
    break;
  case LT_LIST:
  case LT_LARGE_LIST:
  case LT_MAP:
    if (nk != 1)
      return bri_error_set(err, BRI_ECORRUPT, "%s: list field %s (id %d) has %zu child fields, expected 1", mpath,
                           fname(f), f->id, nk);
    nd->kind = BRI_ASM_LIST;
    break;
  default:
    if (nk)
      return bri_error_set(err, BRI_ECORRUPT, "%s: field %s of type \"%s\" has %zu child fields", mpath, fname(f),
                           f->logical_type, nk);
    nd->kind = BRI_ASM_LEAF;
    if (nd->t.cls == LT_VAR && nd->t.large && is_legacy_blob(f)) {
      nd->out = OUT_LEGACY;
      nd->lt.kind = BRI_LEAF_LEGACY_BLOB;
    } else {
      nd->out = nd->t.cls == LT_NULL ? OUT_NULL : nd->t.cls == LT_VAR ? OUT_VAR : OUT_FIXED;
      leaf_type_of(&nd->t, &nd->lt);
    }
    return 0;
  }
  nd->children = calloc(nk, sizeof(*nd->children));
  if (!nd->children) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  nd->n_children = nk;
  for (size_t i = 0; i < nk; i++) {
    int rc = build_node(fields, n, kids[i], depth + 1, &nd->children[i], budget, mpath, err);
    if (rc) return rc;
  }
  return 0;
}

/* ---- reading leaves -------------------------------------------------------- */
typedef struct readctx {
  bri_fragment_reader *r;
  uint64_t row_lo, row_hi; /* physical rows wanted */
  const rnode *top;
} readctx;

/* The data file's own description of field id (FileDescriptor schema). */
static const Lance__File__Field *file_field(bri_datafile *df, int32_t id) {
  const Lance__File__FileDescriptor *fd = bri_datafile_descriptor(df);
  if (!fd || !fd->schema) return NULL;
  for (size_t i = 0; i < fd->schema->n_fields; i++)
    if (fd->schema->fields[i]->id == id) return fd->schema->fields[i];
  return NULL;
}

/* The data file must store the field as the manifest describes it. */
static int check_file_field(const rfile *rf, const rnode *leaf, bri_error *err) {
  const Lance__File__Field *ff = file_field(rf->df, leaf->f->id);
  const Lance__File__Field *mf = leaf->f;
  if (!ff)
    return bri_error_set(err, BRI_ECORRUPT, "%s: the data file's schema has no field id %d (%s) although the manifest lists it",
                         rf->path, mf->id, fname(mf));
  const char *ml = mf->logical_type ? mf->logical_type : "", *fl = ff->logical_type ? ff->logical_type : "";
  switch (leaf->out) {
  case OUT_BLOB2:
    /* Blob v2: a packed struct with lance-encoding:blob (docs/format/blob.md 2). */
    if (strcmp(fl, "struct") || !is_packed(ff))
      return bri_error_set(err, BRI_EUNSUPPORTED, "%s: Blob v2 field %s is stored as \"%s\"%s, not as a packed descriptor struct",
                           rf->path, fname(mf), fl, is_legacy_blob(ff) ? " (legacy blob)" : "");
    return 0;
  case OUT_LEGACY:
    if (strcmp(fl, ml) || !is_legacy_blob(ff))
      return bri_error_set(err, BRI_EUNSUPPORTED, "%s: legacy blob field %s is stored as \"%s\" without the blob encoding",
                           rf->path, fname(mf), fl);
    return 0;
  case OUT_PACKED:
    if (strcmp(fl, "struct") || !is_packed(ff))
      return bri_error_set(err, BRI_ECORRUPT, "%s: packed struct %s is not packed in the data file", rf->path,
                           fname(mf));
    return 0;
  default:
    if (strcmp(fl, ml))
      return bri_error_set(err, BRI_EUNSUPPORTED, "%s: field %s is \"%s\" in the manifest but \"%s\" in the data file",
                           rf->path, fname(mf), ml, fl);
    if (is_legacy_blob(ff) && leaf->out == OUT_VAR)
      return bri_error_set(err, BRI_EUNSUPPORTED, "%s: field %s is a legacy blob in the data file only", rf->path,
                           fname(mf));
    return 0;
  }
}

static bool offsets_equal(const bri_growbuf *a, const bri_growbuf *b) {
  return a->len == b->len && (!a->len || !memcmp(a->p, b->p, (size_t)a->len));
}

static int read_leaf(readctx *cx, rnode **path, size_t depth, bri_error *err) {
  bri_fragment_reader *r = cx->r;
  rnode *leaf = path[depth - 1];
  size_t fi, col;
  if (!locate(r, leaf->f->id, &fi, &col)) return 0; /* filled with nulls later */
  rfile *rf = &r->files[fi];
  int rc = check_file_field(rf, leaf, err);
  if (rc) return rc;
  if (col >= bri_datafile_num_columns(rf->df))
    return bri_error_set(err, BRI_ECORRUPT, "%s: field %s is column %zu but the file has %zu columns", rf->path,
                         fname(leaf->f), col, bri_datafile_num_columns(rf->df));
  const bri_column *column = bri_datafile_column(rf->df, col);
  if (!column) /* the reader was opened for other fields (open_fields) */
    return bri_error_set(err, BRI_EINVAL, "%s: column %zu (field %s) was not opened", rf->path, col,
                         fname(leaf->f));

  int kinds[BRI_MAX_LAYERS];
  for (size_t k = 0; k < depth; k++) kinds[k] = path[k]->kind;
  bri_asm *a = malloc(sizeof(*a));
  if (!a) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  rc = bri_asm_init(a, kinds, depth, &leaf->lt, err);
  if (rc) goto out;
  a->row_lo = cx->row_lo;
  a->row_hi = cx->row_hi;
  a->del = r->del;
  a->n_del = r->n_del;
  a->df = rf->df;
  a->extra_inner_ok = leaf->out == OUT_BLOB2 || leaf->out == OUT_PACKED;

  for (size_t p = 0; p < column->n_pages && a->row < cx->row_hi; p++) {
    uint64_t rows = column->pages[p].n_rows;
    if (a->row + rows <= cx->row_lo) {
      bri_asm_skip_rows(a, rows);
      continue;
    }
    bri_leaf_page pg;
    memset(&pg, 0, sizeof(pg));
    rc = bri_page_decode(rf->df, col, p, &leaf->lt, &pg, err);
    if (!rc && pg.n_rows != rows)
      rc = bri_error_set(err, BRI_ECORRUPT, "%s: column %zu page %zu decoded %llu rows, its metadata says %llu",
                         rf->path, col, p, (unsigned long long)pg.n_rows, (unsigned long long)rows);
    if (!rc) {
      char where[512];
      snprintf(where, sizeof(where), "%s: column %zu (field %s) page %zu", rf->path, col,
               fname(leaf->f), p);
      rc = bri_asm_page(a, &pg, where, err);
    }
    bri_leaf_page_dispose(&pg);
    if (rc) goto out;
  }
  rc = bri_asm_finish(a, err);
  if (rc) goto out;

  /* Ancestors: keep the first rebuild, compare the others. */
  for (size_t k = 0; k + 1 < depth; k++) {
    rnode *nd = path[k];
    bri_asm_node *an = &a->node[k];
    if (!nd->built) {
      nd->built = true;
      nd->length = an->length;
      nd->validity = an->validity;
      nd->offsets = an->offsets;
      memset(&an->validity, 0, sizeof(an->validity));
      memset(&an->offsets, 0, sizeof(an->offsets));
    } else if (nd->length != an->length || !bri_bitbuf_equal(&nd->validity, &an->validity) ||
               !offsets_equal(&nd->offsets, &an->offsets)) {
      rc = bri_error_set(err, BRI_ECORRUPT, "%s: column %zu (field %s) disagrees with an earlier column on the nulls or lengths of %s (%llu vs %llu entries)",
                         rf->path, col, fname(leaf->f), fname(nd->f),
                         (unsigned long long)an->length, (unsigned long long)nd->length);
      goto out;
    }
  }
  leaf->built = true;
  leaf->length = a->node[depth - 1].length;
  leaf->validity = a->node[depth - 1].validity;
  memset(&a->node[depth - 1].validity, 0, sizeof(bri_bitbuf));
  leaf->values = a->values;
  memset(&a->values, 0, sizeof(a->values));
out:
  bri_asm_dispose(a);
  free(a);
  if (rc && rc != BRI_ENOMEM)
    bri_error_wrap(err, "reading field %s of fragment %llu", fname(cx->top->f),
                   (unsigned long long)r->frag->id);
  return rc;
}

static int walk(readctx *cx, rnode *nd, rnode **path, size_t depth, bri_error *err) {
  path[depth++] = nd;
  if (nd->kind == BRI_ASM_LEAF) return read_leaf(cx, path, depth, err);
  for (size_t i = 0; i < nd->n_children; i++) {
    int rc = walk(cx, &nd->children[i], path, depth, err);
    if (rc) return rc;
  }
  return 0;
}

/* Nodes no leaf pass built (fields no data file stores): nulls. */
static int fill_null(rnode *nd, uint64_t len, bri_error *err) {
  int rc;
  nd->built = true;
  nd->length = len;
  if ((rc = bri_bitbuf_append_run(&nd->validity, 0, len, err))) return rc;
  switch (nd->kind) {
  case BRI_ASM_STRUCT:
    for (size_t i = 0; i < nd->n_children; i++)
      if ((rc = fill_null(&nd->children[i], len, err))) return rc;
    return 0;
  case BRI_ASM_LIST:
    if ((rc = bri_growbuf_append_zeros(&nd->offsets, (len + 1) * 8, err))) return rc;
    return fill_null(&nd->children[0], 0, err);
  default:
    if ((rc = bri_vbuild_init(&nd->values, &nd->lt, err))) return rc;
    return bri_vbuild_append_zero(&nd->values, len, err);
  }
}

static int complete(rnode *nd, uint64_t len, const char *where, bri_error *err) {
  if (!nd->built) return fill_null(nd, len, err);
  if (nd->length != len)
    return bri_error_set(err, BRI_ECORRUPT, "%s: field %s has %llu entries where %llu were expected", where,
                         fname(nd->f), (unsigned long long)nd->length, (unsigned long long)len);
  int rc = 0;
  switch (nd->kind) {
  case BRI_ASM_STRUCT:
    for (size_t i = 0; !rc && i < nd->n_children; i++) rc = complete(&nd->children[i], len, where, err);
    return rc;
  case BRI_ASM_LIST: {
    int64_t end;
    memcpy(&end, nd->offsets.p + nd->offsets.len - 8, 8);
    return complete(&nd->children[0], (uint64_t)end, where, err);
  }
  default:
    if (nd->values.n != len)
      return bri_error_set(err, BRI_ECORRUPT, "%s: field %s has %llu values for %llu entries", where,
                           fname(nd->f), (unsigned long long)nd->values.n, (unsigned long long)len);
    return 0;
  }
}

/* ---- export ---------------------------------------------------------------- */
/* int64 offsets -> int32 in place (Arrow list/utf8/binary). */
static int narrow_offsets(bri_growbuf *g, const char *what, const char *name, bri_error *err) {
  uint64_t n = g->len / 8;
  int64_t last;
  memcpy(&last, g->p + g->len - 8, 8);
  if (last > INT32_MAX)
    return bri_error_set(err, BRI_EUNSUPPORTED, "field %s: %s needs %lld offsets/bytes, more than a 32-bit-offset Arrow array holds",
                         name, what, (long long)last);
  for (uint64_t i = 0; i < n; i++) {
    int64_t v;
    memcpy(&v, g->p + 8 * i, 8);
    int32_t w = (int32_t)v;
    memcpy(g->p + 4 * i, &w, 4);
  }
  g->len = n * 4;
  return 0;
}

static int field_metadata(const Lance__File__Field *f, const char *ext, char **out, size_t *len,
                          bri_error *err) {
  *out = NULL;
  *len = 0;
  size_t n = f ? f->n_metadata : 0;
  const char **keys = calloc(n + 1, sizeof(char *));
  const uint8_t **vals = calloc(n + 1, sizeof(uint8_t *));
  size_t *lens = calloc(n + 1, sizeof(size_t));
  int rc = 0;
  if (!keys || !vals || !lens) {
    rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    goto done;
  }
  size_t k = 0;
  bool has_ext = false;
  for (size_t i = 0; i < n; i++) {
    if (!f->metadata[i]->key) continue;
    keys[k] = f->metadata[i]->key;
    vals[k] = f->metadata[i]->value.data;
    lens[k] = f->metadata[i]->value.len;
    if (!strcmp(keys[k], "ARROW:extension:name")) has_ext = true;
    k++;
  }
  if (!ext && f && f->extension_name && *f->extension_name) ext = f->extension_name;
  if (ext && !has_ext) {
    keys[k] = "ARROW:extension:name";
    vals[k] = (const uint8_t *)ext;
    lens[k] = strlen(ext);
    k++;
  }
  if (k) rc = bri_arrow_metadata_encode(k, keys, vals, lens, out, len, err);
done:
  free(keys);
  free(vals);
  free(lens);
  return rc;
}

/* A child array of a packed struct / blob descriptor (no validity). */
static int export_plain(bri_vbuild *vb, const ltype *t, const char *name, struct ArrowArray *arr,
                        struct ArrowSchema *sch, bri_error *err) {
  void *bufs[3] = {NULL, NULL, NULL};
  int rc;
  int64_t nb;
  if (vb->kind == BRI_LEAF_VARIABLE) {
    if (!t->large && (rc = narrow_offsets(&vb->offsets, "data", name, err))) return rc;
    if ((rc = bri_growbuf_take(&vb->offsets, &bufs[1], err))) return rc;
    if ((rc = bri_growbuf_take(&vb->data, &bufs[2], err))) {
      free(bufs[1]);
      return rc;
    }
    nb = 3;
  } else {
    if ((rc = bri_growbuf_take(&vb->data, &bufs[1], err))) return rc;
    nb = 2;
  }
  rc = bri_arrow_array_make(arr, (int64_t)vb->n, 0, nb, bufs, 0, NULL, err);
  if (!rc) rc = bri_arrow_schema_make(sch, t->fmt, name, NULL, 0, 0, 0, NULL, err);
  return rc;
}

static int export_node(rnode *nd, struct ArrowArray *arr, struct ArrowSchema *sch, bri_error *err);

/* The array of a fixed-width leaf (takes `validity`, the leaf's own bitmap).
 * Without FSL dims: the primitive array. With dims: the outermost
 * fixed-size list array, its chain of children down to the elements, and in
 * *item_schema the schema of its child (the caller wraps it in the leaf's
 * own "+w:N" schema, which carries the field's name and flags). */
static int export_fixed(rnode *nd, void *validity, int64_t null_count, struct ArrowArray *arr,
                        struct ArrowSchema *item_schema, bri_error *err) {
  bri_vbuild *vb = &nd->values;
  const ltype *t = &nd->t;
  int rc;
  /* Innermost: the elements, validity = fslv[last] (or the leaf's own). */
  void *ebufs[2] = {NULL, NULL};
  int64_t elen = (int64_t)(vb->n * vb->elems);
  int64_t enull = null_count;
  if (t->n_dims) {
    enull = (int64_t)vb->fslv[t->n_dims - 1].zeros;
    rc = bri_bitbuf_take(&vb->fslv[t->n_dims - 1], &ebufs[0], err);
  } else {
    ebufs[0] = validity;
    validity = NULL;
    rc = 0;
  }
  if (!rc) rc = vb->bits == 1 ? bri_bitbuf_take(&vb->bitdata, &ebufs[1], err)
                              : bri_growbuf_take(&vb->data, &ebufs[1], err);
  if (rc) {
    free(ebufs[0]);
    free(validity);
    return rc;
  }
  struct ArrowArray cur;
  struct ArrowSchema cs;
  memset(&cs, 0, sizeof(cs));
  rc = bri_arrow_array_make(&cur, elen, enull, 2, ebufs, 0, NULL, err);
  if (rc) {
    free(validity);
    return rc;
  }
  char *md = NULL;
  size_t mdl = 0;
  if (t->bfloat16) {
    const char *k = "ARROW:extension:name";
    const uint8_t *v = (const uint8_t *)"lance.bfloat16";
    size_t vl = strlen("lance.bfloat16");
    rc = bri_arrow_metadata_encode(1, &k, &v, &vl, &md, &mdl, err);
  }
  if (!rc) {
    if (t->n_dims)
      rc = bri_arrow_schema_make(&cs, t->fmt, "item", md, mdl, ARROW_FLAG_NULLABLE, 0, NULL, err);
    else
      rc = 0; /* the leaf's own schema is made by the caller */
  }
  free(md);
  if (rc) {
    bri_arrow_array_release(&cur);
    free(validity);
    return rc;
  }
  if (!t->n_dims) {
    *arr = cur;
    return 0;
  }
  /* FSL layers from the innermost outward: layer k has validity fslv[k-1]
   * (the outermost, k = 0, the leaf's own). */
  uint64_t count = vb->n * vb->elems;
  for (uint32_t kk = t->n_dims; kk-- > 0;) {
    count /= t->dims[kk];
    void *vbuf = NULL;
    int64_t nc;
    if (kk == 0) {
      vbuf = validity;
      validity = NULL;
      nc = null_count;
    } else {
      nc = (int64_t)vb->fslv[kk - 1].zeros;
      rc = bri_bitbuf_take(&vb->fslv[kk - 1], &vbuf, err);
    }
    struct ArrowArray up;
    struct ArrowSchema us;
    char fmt[32];
    snprintf(fmt, sizeof(fmt), "+w:%u", t->dims[kk]);
    if (!rc) rc = bri_arrow_array_make(&up, (int64_t)count, nc, 1, &vbuf, 1, &cur, err);
    else {
      bri_arrow_array_release(&cur);
    }
    if (rc) {
      bri_arrow_schema_release(&cs);
      free(validity);
      return rc;
    }
    if (kk == 0) {
      /* The caller names and flags the outermost schema. */
      *arr = up;
      *item_schema = cs;
      return 0;
    }
    rc = bri_arrow_schema_make(&us, fmt, "item", NULL, 0, ARROW_FLAG_NULLABLE, 1, &cs, err);
    if (rc) {
      bri_arrow_array_release(&up);
      free(validity);
      return rc;
    }
    cur = up;
    cs = us;
  }
  return 0; /* not reached */
}

static int export_node(rnode *nd, struct ArrowArray *arr, struct ArrowSchema *sch, bri_error *err) {
  memset(arr, 0, sizeof(*arr));
  memset(sch, 0, sizeof(*sch));
  const Lance__File__Field *f = nd->f;
  const char *name = fname(f);
  int64_t flags = f->nullable ? ARROW_FLAG_NULLABLE : 0;
  int64_t null_count = (int64_t)nd->validity.zeros;
  void *validity = NULL;
  int rc = bri_bitbuf_take(&nd->validity, &validity, err);
  if (rc) return rc;
  char *md = NULL;
  size_t mdl = 0;
  rc = field_metadata(f, nd->out == OUT_BLOB2 ? BRI_BLOB_V2_EXTENSION : NULL, &md, &mdl, err);
  if (rc) {
    free(validity);
    return rc;
  }
  size_t nk = nd->kind == BRI_ASM_LEAF ? nd->n_kids : nd->n_children;
  if (nd->out == OUT_BLOB2) nk = 5;
  struct ArrowArray *ca = calloc(nk + 1, sizeof(*ca));
  struct ArrowSchema *cs = calloc(nk + 1, sizeof(*cs));
  if (!ca || !cs) {
    rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    goto fail;
  }
  if (nd->kind == BRI_ASM_STRUCT || nd->kind == BRI_ASM_LIST) {
    for (size_t i = 0; i < nk; i++)
      if ((rc = export_node(&nd->children[i], &ca[i], &cs[i], err))) goto fail;
    void *bufs[2] = {validity, NULL};
    validity = NULL;
    int64_t nb = 1;
    if (nd->kind == BRI_ASM_LIST) {
      if (nd->t.cls != LT_LARGE_LIST && (rc = narrow_offsets(&nd->offsets, "list", name, err))) {
        free(bufs[0]);
        goto fail;
      }
      if ((rc = bri_growbuf_take(&nd->offsets, &bufs[1], err))) {
        free(bufs[0]);
        goto fail;
      }
      nb = 2;
    }
    rc = bri_arrow_array_make(arr, (int64_t)nd->length, null_count, nb, bufs, (int64_t)nk, ca, err);
    if (!rc) rc = bri_arrow_schema_make(sch, nd->t.fmt, name, md, mdl, flags, (int64_t)nk, cs, err);
    if (rc) goto fail;
    goto done;
  }
  switch (nd->out) {
  case OUT_NULL:
    free(validity);
    validity = NULL;
    rc = bri_arrow_array_make(arr, (int64_t)nd->length, (int64_t)nd->length, 0, NULL, 0, NULL, err);
    if (!rc) rc = bri_arrow_schema_make(sch, "n", name, md, mdl, flags, 0, NULL, err);
    break;
  case OUT_FIXED: {
    struct ArrowSchema inner;
    memset(&inner, 0, sizeof(inner));
    void *v = validity;
    validity = NULL;
    rc = export_fixed(nd, v, null_count, arr, &inner, err);
    if (rc) break;
    if (nd->t.n_dims) {
      char fmt[32];
      snprintf(fmt, sizeof(fmt), "+w:%u", nd->t.dims[0]);
      rc = bri_arrow_schema_make(sch, fmt, name, md, mdl, flags, 1, &inner, err);
    } else {
      rc = bri_arrow_schema_make(sch, nd->t.fmt, name, md, mdl, flags, 0, NULL, err);
    }
    break;
  }
  case OUT_VAR:
  case OUT_LEGACY: {
    void *bufs[3] = {validity, NULL, NULL};
    validity = NULL;
    bool large = nd->out == OUT_LEGACY || nd->t.large;
    if (!large) rc = narrow_offsets(&nd->values.offsets, "data", name, err);
    if (!rc) rc = bri_growbuf_take(&nd->values.offsets, &bufs[1], err);
    if (!rc) rc = bri_growbuf_take(&nd->values.data, &bufs[2], err);
    if (rc) {
      free(bufs[0]);
      free(bufs[1]);
      break;
    }
    rc = bri_arrow_array_make(arr, (int64_t)nd->length, null_count, 3, bufs, 0, NULL, err);
    if (!rc)
      rc = bri_arrow_schema_make(sch, nd->out == OUT_LEGACY ? "Z" : nd->t.fmt, name, md, mdl, flags, 0,
                                 NULL, err);
    break;
  }
  case OUT_PACKED:
  case OUT_BLOB2: {
    static const char *const blob_names[5] = {"kind", "position", "size", "blob_id", "blob_uri"};
    ltype bt[5];
    memset(bt, 0, sizeof(bt));
    snprintf(bt[0].fmt, sizeof(bt[0].fmt), "C");
    snprintf(bt[1].fmt, sizeof(bt[1].fmt), "L");
    snprintf(bt[2].fmt, sizeof(bt[2].fmt), "L");
    snprintf(bt[3].fmt, sizeof(bt[3].fmt), "I");
    snprintf(bt[4].fmt, sizeof(bt[4].fmt), "u");
    if (nd->values.n_children != nk) {
      rc = bri_error_set(err, BRI_ECORRUPT, "field %s: %zu packed fields, expected %zu", name,
                         nd->values.n_children, nk);
      break;
    }
    for (size_t i = 0; i < nk; i++) {
      const ltype *kt = nd->out == OUT_BLOB2 ? &bt[i] : &nd->kid_t[i];
      const char *kn = nd->out == OUT_BLOB2 ? blob_names[i] : nd->kid_names[i];
      if ((rc = export_plain(&nd->values.children[i], kt, kn, &ca[i], &cs[i], err))) break;
    }
    if (rc) break;
    void *bufs[1] = {validity};
    validity = NULL;
    rc = bri_arrow_array_make(arr, (int64_t)nd->length, null_count, 1, bufs, (int64_t)nk, ca, err);
    if (!rc) rc = bri_arrow_schema_make(sch, "+s", name, md, mdl, flags, (int64_t)nk, cs, err);
    break;
  }
  default:
    rc = bri_error_set(err, BRI_EINVAL, "field %s: unknown leaf", name);
  }
  if (rc) goto fail;
done:
  free(ca);
  free(cs);
  free(md);
  return 0;
fail:
  if (ca)
    for (size_t i = 0; i < nk; i++) bri_arrow_array_release(&ca[i]);
  if (cs)
    for (size_t i = 0; i < nk; i++) bri_arrow_schema_release(&cs[i]);
  free(ca);
  free(cs);
  free(md);
  free(validity);
  bri_arrow_array_release(arr);
  bri_arrow_schema_release(sch);
  return rc;
}

/* ---- public read ------------------------------------------------------------ */
/* The manifest index of top-level field field_id, or -1. */
static long top_field(const Lance__Table__Manifest *m, int32_t field_id) {
  for (size_t i = 0; i < m->n_fields; i++)
    if (m->fields[i]->id == field_id && m->fields[i]->parent_id == -1) return (long)i;
  return -1;
}

int bri_fragment_leaf_column(bri_fragment_reader *r, int32_t field_id, bri_datafile **df,
                             size_t *column, bri_leaf_type *type, bri_error *err) {
  const Lance__Table__Manifest *m = r->m->pb;
  long at = top_field(m, field_id);
  if (at < 0)
    return bri_error_set(err, BRI_ENOTFOUND, "%s: no top-level field with id %d", r->m->path, field_id);
  rnode nd;
  size_t budget = m->n_fields, fi, col;
  int rc = build_node(m->fields, m->n_fields, (size_t)at, 0, &nd, &budget, r->m->path, err);
  /* (a packed struct's leaf type points into the node: not handed out) */
  if (!rc && (nd.kind != BRI_ASM_LEAF || nd.out == OUT_PACKED || nd.out == OUT_LEGACY))
    rc = bri_error_set(err, BRI_EINVAL, "field %s is not one plain column", fname(nd.f));
  else if (!rc && !locate(r, field_id, &fi, &col))
    rc = bri_error_set(err, BRI_ENOTFOUND, "fragment %llu stores no field %s", (unsigned long long)r->frag->id,
                       fname(nd.f));
  if (!rc) rc = check_file_field(&r->files[fi], &nd, err);
  if (!rc && !bri_datafile_column(r->files[fi].df, col))
    rc = bri_error_set(err, BRI_EINVAL, "%s: column %zu (field %s) is not in the file or was not opened",
                       r->files[fi].path, col, fname(nd.f));
  if (!rc) *df = r->files[fi].df, *column = col, *type = nd.lt;
  rnode_dispose(&nd);
  return rc;
}

int bri_fragment_read_rows(bri_fragment_reader *r, int32_t field_id, uint64_t first,
                           uint64_t count, struct ArrowArray *array, struct ArrowSchema *schema,
                           bri_error *err) {
  memset(array, 0, sizeof(*array));
  memset(schema, 0, sizeof(*schema));
  const Lance__Table__Manifest *m = r->m->pb;
  if (first > r->n_visible || count > r->n_visible - first)
    return bri_error_set(err, BRI_EINVAL, "rows [%llu, +%llu) of fragment %llu: it has %llu visible rows",
                         (unsigned long long)first, (unsigned long long)count,
                         (unsigned long long)r->frag->id, (unsigned long long)r->n_visible);
  long at = top_field(m, field_id);
  if (at < 0)
    return bri_error_set(err, BRI_ENOTFOUND, "%s: no top-level field with id %d", r->m->path, field_id);
  bool opened = !r->only;
  for (size_t i = 0; !opened && i < r->n_only; i++) opened = r->only[i] == field_id;
  if (!opened)
    return bri_error_set(err, BRI_EINVAL, "fragment %llu: field %d was not opened for reading",
                         (unsigned long long)r->frag->id, field_id);

  rnode root;
  size_t budget = m->n_fields;
  int rc = build_node(m->fields, m->n_fields, (size_t)at, 0, &root, &budget, r->m->path, err);
  if (rc) goto out;
  readctx cx = {r, 0, 0, &root};
  if (count) {
    cx.row_lo = r->visible[first];
    cx.row_hi = (uint64_t)r->visible[first + count - 1] + 1;
  }
  rnode *path[BRI_MAX_LAYERS];
  rc = walk(&cx, &root, path, 0, err);
  if (!rc) {
    char where[64];
    snprintf(where, sizeof(where), "fragment %llu", (unsigned long long)r->frag->id);
    rc = complete(&root, count, where, err);
  }
  if (!rc) rc = export_node(&root, array, schema, err);
out:
  rnode_dispose(&root);
  return rc;
}

int bri_fragment_read_field(bri_fragment_reader *r, int32_t field_id, struct ArrowArray *array,
                            struct ArrowSchema *schema, bri_error *err) {
  return bri_fragment_read_rows(r, field_id, 0, r->n_visible, array, schema, err);
}
