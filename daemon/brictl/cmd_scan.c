/* cmd_scan.c: `brictl scan TABLE [--version N] [--key COL] [--no-blob-bytes]`: row count and one SHA-256 per top-level column over
 * every visible row, in the exact shape (JSON and text) of the LanceDB
 * oracle tests/interop/lance_read.mjs, so that "brid reads this table like
 * Lance does" is a comparison of two outputs.
 *
 * Rows are hashed in key order without holding the table in memory: the key
 * column is read from every fragment once and sorted into a list of
 * (fragment, row) pairs (stable, ties in scan order, compared the way
 * JavaScript's < does); then each column in turn is read from every
 * fragment, hashed in that order, and released. Blob payloads are streamed
 * from their files through one resolver per data file (blob/resolve.h). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "blob/resolve.h"
#include "cli.h"
#include "scan/hash.h"
#include "lance/dataset/reader.h"
#include "lance/core/schema.h"
#include "lance/table/table.h"
#include "util/fsutil.h"

static const cli_opt OPTS[] = {
    {.name = "version", .type = CLI_UINT, .value = "N", .min = 1, .help = "scan table version N",
     .def_note = "the latest"},
    {.name = "key", .type = CLI_STRING, .value = "COL",
     .help = "hash the rows in the order of top-level column COL (\"\": scan order)",
     .def_note = "id when the table has it, else scan order"},
    {.name = "no-blob-bytes", .type = CLI_FLAG, .help = "hash Blob v2 columns' descriptors, not their payloads"},
    {0},
};

/* ------------------------------------------------------------ table path */

/* The table path as node's path.resolve prints it: absolute, no "." or ".."
 * segments, no repeated or trailing slashes (symlinks are kept). */
static char *absolute_path(const char *p) {
  char *cwd = NULL, *joined;
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

/* ------------------------------------------------------------ type names */

/* apache-arrow's DataType.toString() of the manifest field fs[i], the type
 * strings the oracle prints ("Int64", "FixedSizeList[8]<Float32>",
 * "Struct<{data:LargeBinary, uri:Utf8}>"). */
static const char *unit_name(const char *u) {
  if (!strcmp(u, "s")) return "SECOND";
  if (!strcmp(u, "ms")) return "MILLISECOND";
  if (!strcmp(u, "us")) return "MICROSECOND";
  if (!strcmp(u, "ns")) return "NANOSECOND";
  return u;
}

/* A logical type that needs no child fields; false if it does. */
static bool simple_type_name(FILE *o, const char *lt) {
  static const char *const simple[][2] = {
      {"null", "Null"},          {"bool", "Bool"},           {"int8", "Int8"},
      {"int16", "Int16"},        {"int32", "Int32"},         {"int64", "Int64"},
      {"uint8", "Uint8"},        {"uint16", "Uint16"},       {"uint32", "Uint32"},
      {"uint64", "Uint64"},      {"halffloat", "Float16"},   {"float", "Float32"},
      {"double", "Float64"},     {"string", "Utf8"},         {"large_string", "LargeUtf8"},
      {"binary", "Binary"},      {"large_binary", "LargeBinary"}, {"json", "LargeBinary"},
      {"date32:day", "Date32<DAY>"}, {"date64:ms", "Date64<MILLISECOND>"},
      {"lance.bfloat16", "FixedSizeBinary[2]"},
  };
  for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++)
    if (!strcmp(lt, simple[i][0])) {
      fputs(simple[i][1], o);
      return true;
    }
  char a[64], b[128];
  int p, s, n;
  if (sscanf(lt, "time%d:%63s", &n, a) == 2 && (n == 32 || n == 64)) {
    fprintf(o, "Time%d<%s>", n, unit_name(a));
    return true;
  }
  if (!strncmp(lt, "timestamp:", 10)) {
    const char *u = lt + 10, *c = strchr(u, ':');
    if (!c) return false;
    snprintf(a, sizeof a, "%.*s", (int)(c - u), u);
    if (!strcmp(c + 1, "-") || !c[1]) fprintf(o, "Timestamp<%s>", unit_name(a));
    else fprintf(o, "Timestamp<%s, %s>", unit_name(a), c + 1);
    return true;
  }
  if (sscanf(lt, "duration:%63s", a) == 1) {
    fprintf(o, "Duration<%s>", unit_name(a));
    return true;
  }
  if (sscanf(lt, "decimal:%d:%d:%d", &n, &p, &s) == 3) {
    fprintf(o, "Decimal[%de%s%d]", p, s > 0 ? "+" : "", s);
    return true;
  }
  if (sscanf(lt, "fixed_size_binary:%d", &n) == 1) {
    fprintf(o, "FixedSizeBinary[%d]", n);
    return true;
  }
  if (!strncmp(lt, "fixed_size_list:", 16)) { /* fixed_size_list:<inner>:<n> */
    const char *inner = lt + 16, *last = strrchr(inner, ':');
    if (!last || last == inner) return false;
    snprintf(b, sizeof b, "%.*s", (int)(last - inner), inner);
    fprintf(o, "FixedSizeList[%s]<", last + 1);
    if (!simple_type_name(o, b)) fputs(b, o);
    fputc('>', o);
    return true;
  }
  if (!strncmp(lt, "dict:", 5)) { /* dict:<value>:<index>:<ordered> */
    const char *v = lt + 5, *ord = strrchr(v, ':');
    if (!ord || ord == v) return false;
    const char *idx = ord - 1;
    while (idx > v && *idx != ':') idx--;
    if (idx == v) return false;
    snprintf(a, sizeof a, "%.*s", (int)(ord - idx - 1), idx + 1);
    snprintf(b, sizeof b, "%.*s", (int)(idx - v), v);
    fputs("Dictionary<", o);
    if (!simple_type_name(o, a)) fputs(a, o);
    fputs(", ", o);
    if (!simple_type_name(o, b)) fputs(b, o);
    fputc('>', o);
    return true;
  }
  return false;
}

static void type_name(FILE *o, Lance__File__Field *const *fs, size_t n, size_t i, int depth) {
  const Lance__File__Field *f = fs[i];
  const char *lt = f->logical_type ? f->logical_type : "";
  size_t kids[256], nk = 0;
  for (size_t j = i + 1; j < n && nk < 256; j++)
    if (fs[j]->parent_id == f->id) kids[nk++] = j;
  if (depth > 64) {
    fputs(lt, o);
    return;
  }
  if (!strcmp(lt, "struct")) {
    fputs("Struct<{", o);
    for (size_t k = 0; k < nk; k++) {
      fprintf(o, "%s%s:", k ? ", " : "", fs[kids[k]]->name ? fs[kids[k]]->name : "");
      type_name(o, fs, n, kids[k], depth + 1);
    }
    fputs("}>", o);
  } else if (!strncmp(lt, "list", 4) || !strncmp(lt, "large_list", 10)) {
    fputs(lt[0] == 'l' && lt[1] == 'a' ? "LargeList<" : "List<", o);
    if (nk) type_name(o, fs, n, kids[0], depth + 1);
    fputc('>', o);
  } else if (!strcmp(lt, "map")) {
    fputs("Map<{", o);
    if (nk) { /* the entries struct's children */
      size_t e = kids[0], c = 0;
      for (size_t j = e + 1; j < n; j++)
        if (fs[j]->parent_id == fs[e]->id) {
          fprintf(o, "%s%s:", c++ ? ", " : "", fs[j]->name ? fs[j]->name : "");
          type_name(o, fs, n, j, depth + 1);
        }
    }
    fputs("}>", o);
  } else if (!simple_type_name(o, lt)) {
    fputs(lt, o);
  }
}

static char *type_string(const Lance__Table__Manifest *m, size_t i) {
  char *s = NULL;
  size_t len = 0;
  FILE *o = open_memstream(&s, &len);
  if (!o) return NULL;
  type_name(o, m->fields, m->n_fields, i, 0);
  fclose(o);
  return s;
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

static void scan_free(scan *s) {
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

enum { KEY_INT, KEY_UINT, KEY_FLOAT, KEY_STR };

typedef struct row_ref {
  uint32_t frag, row;
} row_ref;

typedef struct key_ent {
  row_ref at;
  uint8_t is_null;
  union {
    int64_t i;
    uint64_t u;
    double d;
    struct {
      const uint8_t *p;
      uint64_t n;
    } s;
  } v;
} key_ent;

static double half_to_double(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m | 0x400, e - 25);
  return (h & 0x8000) ? -v : v;
}

/* Decodes one code point; false on invalid UTF-8. */
static bool utf8_next(const uint8_t *p, uint64_t n, uint64_t *i, uint32_t *cp) {
  uint8_t c = p[*i];
  int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (!len || *i + (uint64_t)len > n) return false;
  uint32_t v = len == 1 ? c : len == 2 ? (c & 0x1f) : len == 3 ? (c & 0x0f) : (c & 0x07);
  for (int k = 1; k < len; k++) {
    if ((p[*i + (uint64_t)k] & 0xc0) != 0x80) return false;
    v = v << 6 | (p[*i + (uint64_t)k] & 0x3f);
  }
  *i += (uint64_t)len;
  *cp = v;
  return true;
}

static int bytes_cmp(const uint8_t *a, uint64_t an, const uint8_t *b, uint64_t bn) {
  int c = memcmp(a, b, an < bn ? an : bn);
  return c ? (c < 0 ? -1 : 1) : (an > bn) - (an < bn);
}

/* JavaScript's string order: UTF-16 code units, which differs from UTF-8
 * byte order when a character above U+FFFF meets one in U+E000..U+FFFF. */
static int js_str_cmp(const uint8_t *a, uint64_t an, const uint8_t *b, uint64_t bn) {
  uint64_t i = 0, j = 0;
  while (i < an && j < bn) {
    if (a[i] == b[j] && a[i] < 0x80) {
      i++, j++;
      continue;
    }
    uint32_t ca, cb;
    uint64_t i0 = i, j0 = j;
    if (!utf8_next(a, an, &i, &ca) || !utf8_next(b, bn, &j, &cb))
      return bytes_cmp(a + i0, an - i0, b + j0, bn - j0);
    if (ca == cb) continue;
    uint32_t ua = ca < 0x10000 ? ca : 0xD800 + ((ca - 0x10000) >> 10);
    uint32_t ub = cb < 0x10000 ? cb : 0xD800 + ((cb - 0x10000) >> 10);
    if (ua != ub) return ua < ub ? -1 : 1;
    return ca < cb ? -1 : 1; /* same high surrogate: the low ones decide */
  }
  return (an - i > bn - j) - (an - i < bn - j);
}

static int key_cmp(const void *x, const void *y, void *arg) {
  const key_ent *a = x, *b = y;
  int kind = *(const int *)arg, c = 0;
  /* JavaScript compares null as 0 with numbers; strings put nulls first
   * (JS leaves that order undefined) and NaN goes last (likewise). */
  if (kind == KEY_INT) {
    int64_t p = a->is_null ? 0 : a->v.i, q = b->is_null ? 0 : b->v.i;
    c = (p > q) - (p < q);
  } else if (kind == KEY_UINT) {
    uint64_t p = a->is_null ? 0 : a->v.u, q = b->is_null ? 0 : b->v.u;
    c = (p > q) - (p < q);
  } else if (kind == KEY_FLOAT) {
    double p = a->is_null ? 0 : a->v.d, q = b->is_null ? 0 : b->v.d;
    if (isnan(p) || isnan(q)) c = isnan(p) - isnan(q);
    else c = (p > q) - (p < q);
  } else {
    if (a->is_null || b->is_null) c = (int)b->is_null - (int)a->is_null;
    else c = js_str_cmp(a->v.s.p, a->v.s.n, b->v.s.p, b->v.s.n);
    if (a->is_null && b->is_null) c = 0;
  }
  if (c) return c;
  /* ties keep scan order: Array.prototype.sort is stable */
  if (a->at.frag != b->at.frag) return a->at.frag < b->at.frag ? -1 : 1;
  return (a->at.row > b->at.row) - (a->at.row < b->at.row);
}

static bool valid_bit(const struct ArrowArray *a, int64_t i) {
  if (a->null_count == 0 || !a->buffers[0]) return true;
  int64_t j = a->offset + i;
  return (((const uint8_t *)a->buffers[0])[j >> 3] >> (j & 7)) & 1;
}

/* Key kind of an Arrow format, -1 when the oracle could not sort by it. */
static int key_kind_of(const char *f, int *width) {
  static const char ints[] = "cCsSiIlL";
  if (f[0] && !f[1] && strchr(ints, f[0])) {
    int k = (int)(strchr(ints, f[0]) - ints);
    *width = 1 << (k / 2);
    return k % 2 ? KEY_UINT : KEY_INT;
  }
  if (!strcmp(f, "tdD") || !strcmp(f, "tts") || !strcmp(f, "ttm")) return *width = 4, KEY_INT;
  if (!strcmp(f, "tdm") || !strncmp(f, "ts", 2) || !strncmp(f, "tD", 2) || !strcmp(f, "ttu") ||
      !strcmp(f, "ttn"))
    return *width = 8, KEY_INT;
  if (!strcmp(f, "e")) return *width = 2, KEY_FLOAT;
  if (!strcmp(f, "f")) return *width = 4, KEY_FLOAT;
  if (!strcmp(f, "g")) return *width = 8, KEY_FLOAT;
  if (!strcmp(f, "u")) return *width = 4, KEY_STR;
  if (!strcmp(f, "U")) return *width = 8, KEY_STR;
  return -1;
}

static void key_value(const struct ArrowArray *a, int64_t i, int kind, int w, key_ent *e) {
  e->is_null = !valid_bit(a, i);
  if (e->is_null) return;
  int64_t j = a->offset + i;
  const uint8_t *v = a->buffers[1];
  if (kind == KEY_STR) {
    int64_t lo, hi;
    if (w == 4) {
      int32_t x, y;
      memcpy(&x, v + 4 * j, 4), memcpy(&y, v + 4 * (j + 1), 4);
      lo = x, hi = y;
    } else {
      memcpy(&lo, v + 8 * j, 8), memcpy(&hi, v + 8 * (j + 1), 8);
    }
    e->v.s.p = (const uint8_t *)a->buffers[2] + lo;
    e->v.s.n = (uint64_t)(hi - lo);
    return;
  }
  const uint8_t *b = v + (size_t)j * (size_t)w;
  if (kind == KEY_FLOAT) {
    if (w == 2) {
      uint16_t h;
      memcpy(&h, b, 2);
      e->v.d = half_to_double(h);
    } else if (w == 4) {
      float f;
      memcpy(&f, b, 4);
      e->v.d = f;
    } else {
      memcpy(&e->v.d, b, 8);
    }
    return;
  }
  uint64_t u = 0;
  memcpy(&u, b, (size_t)w); /* little endian */
  if (kind == KEY_UINT) {
    e->v.u = u;
  } else if (w < 8) {
    int sh = 64 - 8 * w;
    e->v.i = (int64_t)(u << sh) >> sh;
  } else {
    e->v.i = (int64_t)u;
  }
}

/* Sorts all visible rows by the top-level field key_id into *order. */
static int sort_rows(scan *s, int32_t key_id, const char *key, row_ref **order, uint64_t total,
                     bri_error *err) {
  int rc = 0, kind = -1, w = 0;
  key_ent *ents = malloc((total ? total : 1) * sizeof *ents);
  if (!ents) return bri_error_set(err, BRI_ENOMEM, "out of memory sorting %llu rows",
                                  (unsigned long long)total);
  uint64_t n = 0;
  for (size_t k = 0; k < s->n_frags && !rc; k++) {
    frag_state *f = &s->frags[k];
    rc = bri_fragment_read_field(f->rd, key_id, &f->arr, &f->sch, err);
    if (rc) break;
    int kk = key_kind_of(f->sch.format, &w);
    if (kk < 0 || (kind >= 0 && kk != kind)) {
      rc = bri_error_set(err, BRI_EUNSUPPORTED,
                         "%s: key column %s has Arrow type \"%s\"; keys must be integers, floats "
                         "or strings",
                         s->t->root, key, f->sch.format);
      break;
    }
    kind = kk;
    if ((uint64_t)f->arr.length != f->rows || n + f->rows > total) {
      rc = bri_error_set(err, BRI_ECORRUPT, "%s: fragment %llu: key column has %lld rows, "
                         "expected %llu", s->t->root, (unsigned long long)f->frag->id,
                         (long long)f->arr.length, (unsigned long long)f->rows);
      break;
    }
    for (int64_t i = 0; i < f->arr.length; i++, n++) {
      ents[n].at.frag = (uint32_t)k;
      ents[n].at.row = (uint32_t)i;
      key_value(&f->arr, i, kind, w, &ents[n]);
    }
  }
  if (!rc) {
    qsort_r(ents, n, sizeof *ents, key_cmp, &kind);
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

/* ------------------------------------------------------------ output */

static void print_text(json_t *out) {
  printf("table %s\n", json_string_value(json_object_get(out, "table")));
  json_t *key = json_object_get(out, "key");
  printf("version %lld rows %lld countRows %lld fragments %lld key %s\n",
         (long long)json_integer_value(json_object_get(out, "version")),
         (long long)json_integer_value(json_object_get(out, "rows")),
         (long long)json_integer_value(json_object_get(out, "countRows")),
         (long long)json_integer_value(json_object_get(out, "fragments")),
         json_is_string(key) ? json_string_value(key) : "null");
  json_t *schema = json_object_get(out, "schema"), *v;
  size_t i;
  fputs("schema ", stdout);
  json_array_foreach(schema, i, v) printf("%s%s", i ? ", " : "", json_string_value(v));
  fputc('\n', stdout);
  const char *name;
  json_object_foreach(json_object_get(out, "columns"), name, v) {
    printf("col %s %s nulls=%lld sha256=%s", name, json_string_value(json_object_get(v, "type")),
           (long long)json_integer_value(json_object_get(v, "nulls")),
           json_string_value(json_object_get(v, "sha256")));
    json_t *kinds = json_object_get(v, "descriptorKinds");
    if (kinds) {
      char *k = json_dumps(kinds, JSON_COMPACT | JSON_PRESERVE_ORDER);
      printf(" kinds=%s payloadBytes=%s", k ? k : "{}",
             json_string_value(json_object_get(v, "payloadBytes")));
      free(k);
    }
    fputc('\n', stdout);
  }
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

static int cmd_scan(const cli_args *a) {
  const char *table = a->pos[0], *key = cli_text(a, "key");
  unsigned long long version = cli_uint(a, "version");
  bool json = cli_flag(a, "json"), blob_bytes = !cli_flag(a, "no-blob-bytes");
  /* every fragment's data files stay open during the scan: allow as many
   * descriptors as the hard limit does */
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  bri_error err = {0};
  scan s = {0};
  row_ref *order = NULL;
  json_t *out = NULL;
  char *abs = absolute_path(table);
  int rc = abs ? bri_table_open(table, &s.t, &err) : bri_error_set(&err, BRI_ENOMEM, "out of memory");
  if (!rc) rc = bri_table_load(s.t, version, &s.m, &err);
  const Lance__Table__Manifest *m = rc ? NULL : s.m->pb;
  uint64_t total = 0, count_rows = 0;
  if (!rc) {
    s.frags = calloc(m->n_fragments ? m->n_fragments : 1, sizeof *s.frags);
    if (!s.frags) rc = bri_error_set(&err, BRI_ENOMEM, "out of memory");
  }
  for (size_t k = 0; !rc && k < m->n_fragments; k++) {
    frag_state *f = &s.frags[k];
    f->frag = m->fragments[k];
    s.n_frags = k + 1;
    rc = bri_fragment_open(s.t, s.m, f->frag, &f->rd, &err);
    if (rc) break;
    f->rows = bri_fragment_num_rows(f->rd);
    if (f->rows > UINT32_MAX) {
      rc = bri_error_set(&err, BRI_EUNSUPPORTED, "%s: fragment %llu has %llu rows", table,
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
      rc = bri_error_set(&err, BRI_ENOTFOUND, "%s: no top-level column \"%s\" to sort by", table,
                         key);
    else if (key[0])
      rc = sort_rows(&s, m->fields[key_field]->id, key, &order, total, &err);
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
      char *type = type_string(m, i);
      const char *name = m->fields[i]->name ? m->fields[i]->name : "";
      json_array_append_new(schema, json_sprintf("%s:%s%s", name, type ? type : "",
                                                 bri_field_is_blob_v2(m->fields[i]) ? "[blob.v2]"
                                                                                     : ""));
      bri_column_hash r;
      bri_column_hasher *h = NULL;
      if (s.n_frags) {
        rc = hash_column(&s, i, order, total, blob_bytes, &r, &h, &err);
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
  if (!rc) {
    if (json) cli_print_json(out);
    else print_text(out);
    if (fflush(stdout) != 0 || ferror(stdout))
      rc = bri_error_set(&err, BRI_EIO, "writing the output failed");
  }
  json_decref(out);
  free(order);
  free(abs);
  scan_free(&s);
  return rc ? cli_fail(&err) : CLI_OK;
}

const cli_cmd CMD_SCAN = {
    .name = "scan",
    .args = "TABLE",
    .summary = "row count and one SHA-256 per column, as LanceDB reads them",
    .about = "Reads every visible row of TABLE and prints the row count and one SHA-256 per "
             "top-level column (Blob v2 columns: over their payload bytes), in the shape of the "
             "LanceDB oracle tests/interop/lance_read.mjs, so that \"brid reads this table as Lance "
             "does\" is a comparison of two outputs.",
    .opts = OPTS,
    .flags = CLI_CMD_OFFLINE | CLI_CMD_JSON,
    .run = cmd_scan,
};
