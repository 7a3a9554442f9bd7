/* verify.c: table verification (see verify.h).
 *
 * One pass per version, oldest first. Each check that touches the disk is
 * keyed in a map ("kind|path") so that shared files cost one stat for all
 * versions, and a fragment's descriptors are read once per distinct set of
 * (data files, deletion file) paths. Descriptors are found by walking the
 * Arrow arrays the fragment reader hands out alongside the manifest schema:
 * only fields that have a Blob v2 field below them are read, only valid
 * elements are visited, and each non-null descriptor goes through the
 * resolver of the DataFile that stores its field (BRI included). */
#include "ops/verify.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lance/table/bri.h"
#include "lance/table/frag_reuse.h"
#include "blob/resolve.h"
#include "blob/walk.h"
#include "ops/clone.h"
#include "lance/file/arrow_build.h"
#include "lance/dataset/reader.h"
#include "lance/core/schema.h"
#include "lance/table/deletion.h"
#include "lance/table/flags.h"
#include "lance/table/rowids.h"
#include "lance/table/rules.h"
#include "lance/table/table.h"
#include "lance/file/datafile.h"
#include "util/bytes.h"
#include "util/fsutil.h"
#include "util/strmap.h"

typedef struct vrun {
  const bri_verify_options *o;
  bri_verify_report *rep;
  bri_table *t;
  const Lance__Table__Manifest *m; /* the version being checked (its bases) */
  uint64_t v;            /* version being checked */
  bool oom;
  bri_strmap seen;       /* "kind|path" -> a: 1 ok, 2 problem */
  bri_strmap prev, cur;  /* rule 9: "base|path" -> BRI hash (a), length (b) */
} vrun;

static void vproblem(vrun *r, const char *rule, const char *file, const char *fmt, va_list ap) {
  r->rep->problems_total++;
  if (r->rep->n_problems >= r->o->max_problems) return;
  char *what = NULL;
  if (vasprintf(&what, fmt, ap) < 0) what = NULL;
  if (!what) {
    r->oom = true;
    return;
  }
  /* messages from the library usually start with the file: say it once */
  size_t fl = strlen(file);
  if (!strncmp(what, file, fl) && !strncmp(what + fl, ": ", 2)) memmove(what, what + fl + 2, strlen(what + fl + 2) + 1);
  bri_verify_problem *g = realloc(r->rep->problems, (r->rep->n_problems + 1) * sizeof *g);
  char *f = strdup(file);
  if (!g || !f) {
    if (g) r->rep->problems = g;
    free(what), free(f);
    r->oom = true;
    return;
  }
  r->rep->problems = g;
  g[r->rep->n_problems++] = (bri_verify_problem){r->v, f, what, rule};
}

static void rule_report(vrun *r, const char *rule, const char *file, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void rule_report(vrun *r, const char *rule, const char *file, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vproblem(r, rule, file, fmt, ap);
  va_end(ap);
}

static void problem(vrun *r, const char *file, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void problem(vrun *r, const char *file, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vproblem(r, NULL, file, fmt, ap);
  va_end(ap);
}

/* A broken invariant (lance/table/rules.h): "rule NAME: what". */
static void rule_problem(vrun *r, const char *rule, const char *file, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void rule_problem(vrun *r, const char *rule, const char *file, const char *fmt, ...) {
  char what[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  rule_report(r, rule, file, "rule %s: %s", rule, what);
}

/* 1 when key was seen before (its check already ran), 0 when it is new. */
static int seen(vrun *r, const char *kind, const char *path) {
  char *key = bri_strdupf("%s|%s", kind, path);
  if (!key) {
    r->oom = true;
    return 1;
  }
  int was = bri_strmap_get(&r->seen, key) != NULL;
  if (!was && !bri_strmap_put(&r->seen, key, 1, 0)) r->oom = true;
  free(key);
  return was;
}

/* What is at path, through the store that reaches it (never following a
 * link); false with a problem recorded when it cannot be told. */
static bool stat_of(vrun *r, const char *path, const char *what, bri_store_info *info) {
  bri_store *st;
  bri_error e;
  int rc = bri_table_store_of(r->t, r->m, path, &st, &e);
  if (!rc) rc = bri_store_stat(st, path, info, &e);
  if (rc == BRI_ENOTFOUND) problem(r, path, "%s is missing (%s)", what, strerror(ENOENT));
  else if (rc) problem(r, path, "%s cannot be checked: %s", what, e.msg);
  return rc == 0;
}

/* Checks a regular file exists (and has `size` bytes when size > 0). */
static bool check_file(vrun *r, const char *path, uint64_t size, const char *what) {
  char sz[32];
  snprintf(sz, sizeof sz, "%llu", (unsigned long long)size);
  char *key = bri_strdupf("%s|%s", sz, path);
  if (!key) {
    r->oom = true;
    return false;
  }
  bri_strmap_entry *e = bri_strmap_get(&r->seen, key);
  if (e) {
    free(key);
    return e->a == 1;
  }
  bool ok = false;
  bri_store_info st;
  if (!stat_of(r, path, what, &st)) {
    /* recorded */
  } else if (st.kind != BRI_ENTRY_FILE)
    problem(r, path, "%s is not a regular file", what);
  else if (size && st.size != size)
    problem(r, path, "%s has %llu bytes, the manifest records %llu", what,
            (unsigned long long)st.size, (unsigned long long)size);
  else
    ok = true;
  if (!bri_strmap_put(&r->seen, key, ok ? 1 : 2, 0)) r->oom = true;
  free(key);
  return ok;
}

static bool check_dir(vrun *r, const char *path, const char *what) {
  if (seen(r, "dir", path)) return true;
  bri_store_info st;
  if (!stat_of(r, path, what, &st)) return false;
  if (st.kind != BRI_ENTRY_DIR) {
    problem(r, path, "%s is not a directory", what);
    return false;
  }
  return true;
}

typedef struct bri_ctx {
  vrun *r;
  const char *datafile;
} bri_ctx;

static int bri_target_cb(void *user, const char *path) {
  bri_ctx *c = user;
  if (seen(c->r, "bri", path)) return 0;
  c->r->rep->bri_targets++;
  bri_store *st;
  bri_store_info info;
  if (bri_table_store_of(c->r->t, c->r->m, path, &st, NULL) != 0 ||
      bri_store_stat(st, path, &info, NULL) != 0 || info.kind != BRI_ENTRY_FILE)
    problem(c->r, path, "sidecar named by the BRI of data file %s is missing", c->datafile);
  return 0;
}

/* docs/format/bri.md rule 9: a DataFile kept at the same (base, path) keeps its BRI. */
static void check_immutable(vrun *r, const bri_manifest *bm, const Lance__Table__DataFile *df) {
  uint64_t h = 1469598103934665603ULL, len = 0;
  for (size_t i = 0; i < df->base.n_unknown_fields; i++) {
    const ProtobufCMessageUnknownField *u = &df->base.unknown_fields[i];
    if (u->tag != BRI_DATAFILE_FIELD || u->wire_type != PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED) continue;
    for (size_t k = 0; k < u->len; k++) h = (h ^ u->data[k]) * 1099511628211ULL;
    len += u->len;
  }
  char *key = df->has_base_id ? bri_strdupf("%u|%s", df->base_id, df->path) : bri_strdupf("-|%s", df->path);
  if (!key) {
    r->oom = true;
    return;
  }
  bri_strmap_entry *p = bri_strmap_get(&r->prev, key);
  if (p && (p->a != h || p->b != len))
    problem(r, bm->path, "data file %s keeps its path from the previous version but its blob reuse "
            "index changed (docs/format/bri.md rule 9: a new mapping needs a new data file)", df->path);
  if (!bri_strmap_get(&r->cur, key) && !bri_strmap_put(&r->cur, key, h, len)) r->oom = true;
  free(key);
}

/* ------------------------------------------------------------ descriptors */

typedef struct res {
  const Lance__Table__DataFile *df;
  bri_blob_resolver *r;
} res;

typedef struct fctx {
  vrun *r;
  const bri_manifest *bm;
  const Lance__Table__DataFragment *frag;
  bri_fragment_reader *rd;
  const bool *has_blob;   /* per manifest field index: a Blob v2 field at or below it */
  res *res;
  size_t n_res;
  uint64_t row;           /* visible row being walked (for messages) */
  const char *path;       /* dotted path of the blob field being walked */
} fctx;

static bri_blob_resolver *resolver(fctx *c, long fi) {
  const Lance__Table__DataFile *df = bri_fragment_field_datafile(c->rd, c->bm->pb->fields[fi]->id);
  if (!df) return NULL;
  for (size_t i = 0; i < c->n_res; i++)
    if (c->res[i].df == df) return c->res[i].r;
  res *g = realloc(c->res, (c->n_res + 1) * sizeof *g);
  if (!g) {
    c->r->oom = true;
    return NULL;
  }
  c->res = g;
  bri_error e;
  if (bri_blob_resolver_open(c->r->t, c->bm->pb, df, &g[c->n_res].r, &e) != 0) {
    problem(c->r, df->path, "%s", e.msg);
    return NULL;
  }
  g[c->n_res].df = df;
  return g[c->n_res++].r;
}

static void check_desc(fctx *c, const struct ArrowSchema *s, const struct ArrowArray *a, int64_t i,
                       long fi) {
  bri_blob_desc d;
  bool is_null;
  bri_error e;
  if (bri_blob_desc_get(s, a, i, &d, &is_null, &e) != 0) {
    problem(c->r, c->bm->path, "fragment %llu field %s: %s", (unsigned long long)c->frag->id,
            c->path, e.msg);
    return;
  }
  if (is_null) return;
  bri_blob_resolver *br = resolver(c, fi);
  if (!br) {
    if (!c->r->oom && !bri_fragment_field_datafile(c->rd, c->bm->pb->fields[fi]->id))
      problem(c->r, c->bm->path, "fragment %llu: no data file stores blob field %s",
              (unsigned long long)c->frag->id, c->path);
    return;
  }
  uint64_t len;
  int rc = bri_blob_length(br, &d, &len, &e);
  if (rc == BRI_EUNSUPPORTED && d.kind == BRI_BLOB_EXTERNAL) {
    c->r->rep->blobs_unchecked++;
    return;
  }
  c->r->rep->blobs++;
  if (!rc) return;
  /* name the file that holds (or should hold) the bytes */
  char *side = NULL;
  bri_error e2;
  if ((d.kind == BRI_BLOB_PACKED || d.kind == BRI_BLOB_DEDICATED) && d.blob_id &&
      bri_blob_sidecar_path(br, d.blob_id, &side, &e2) != 0)
    side = NULL;
  char *msg = strdup(e.msg);
  if (!msg) {
    c->r->oom = true;
    free(side);
    return;
  }
  const char *file = side ? side : bri_blob_resolver_datafile(br);
  size_t fl = strlen(file);
  const char *tail = !strncmp(msg, file, fl) && !strncmp(msg + fl, ": ", 2) ? msg + fl + 2 : msg;
  problem(c->r, file, "fragment %llu row %llu, blob field %s: %s", (unsigned long long)c->frag->id,
          (unsigned long long)c->row, c->path, tail);
  free(msg), free(side);
}

/* bri_blob_walk's callback: one Blob v2 value. */
static int check_value(void *ctx, long fi, const struct ArrowSchema *s, const struct ArrowArray *a, int64_t i) {
  fctx *c = ctx;
  check_desc(c, s, a, i, fi);
  return c->r->oom;
}

static void check_fragment(vrun *r, const bri_manifest *bm, const Lance__Table__DataFragment *f,
                           const bool *has_blob) {
  const Lance__Table__Manifest *m = bm->pb;
  bri_error e;
  fctx c = {.r = r, .bm = bm, .frag = f, .has_blob = has_blob};
  if (bri_fragment_open(r->t, bm, f, &c.rd, &e) != 0) {
    problem(r, bm->path, "fragment %llu cannot be read: %s", (unsigned long long)f->id, e.msg);
    return;
  }
  r->rep->fragments++;
  const uint32_t *offs = bri_fragment_row_offsets(c.rd);
  for (size_t fi = 0; fi < m->n_fields && !r->oom; fi++) {
    if (m->fields[fi]->parent_id != -1 || !has_blob[fi]) continue;
    struct ArrowArray a;
    struct ArrowSchema s;
    if (bri_fragment_read_field(c.rd, m->fields[fi]->id, &a, &s, &e) != 0) {
      problem(r, bm->path, "fragment %llu field %s cannot be read: %s", (unsigned long long)f->id,
              m->fields[fi]->name, e.msg);
      continue;
    }
    char *path = bri_field_path(m->fields, m->n_fields, fi);
    c.path = path ? path : m->fields[fi]->name;
    for (int64_t i = 0; i < a.length && !r->oom; i++) {
      c.row = offs ? offs[i] : (uint64_t)i;
      (void)bri_blob_walk(m, has_blob, &s, &a, i, (long)fi, check_value, &c);
    }
    free(path);
    bri_arrow_array_release(&a);
    bri_arrow_schema_release(&s);
  }
  for (size_t i = 0; i < c.n_res; i++) bri_blob_resolver_close(c.res[i].r);
  free(c.res);
  bri_fragment_close(c.rd);
}

/* ------------------------------------------------------------ Lance's invariants */

typedef struct rule_ctx {
  vrun *r;
  const char *file;
} rule_ctx;

static void on_rule(void *user, const char *rule, const char *what) {
  rule_ctx *c = user;
  rule_problem(c->r, rule, c->file, "%s", what);
}

/* The rules that need only the manifest and its transaction. */
static void check_rules(vrun *r, const bri_manifest *bm) {
  rule_ctx c = {r, bm->path};
  bri_rules_check_manifest(bm->pb, bm->indices, on_rule, &c);
  Lance__Table__Transaction *txn = bm->txn;
  bri_error e;
  if (!txn && bri_table_load_transaction(r->t, r->v, &txn, &e) != 0) txn = NULL; /* reported as a file */
  bri_rules_check_transaction(bm->pb, txn, on_rule, &c);
  if (txn && txn != bm->txn) lance__table__transaction__free_unpacked(txn, NULL);
}

/* "data-file-rows": every data file of a fragment holds physical_rows rows
 * (Lance reads a fragment's columns side by side). */
static void check_file_rows(vrun *r, const bri_manifest *bm, const Lance__Table__DataFragment *f,
                            const char *path) {
  char *key = bri_strdupf("%llu|%s", (unsigned long long)f->physical_rows, path);
  bool done = !key || seen(r, "rows", key);
  if (!key) r->oom = true;
  free(key);
  if (done) return;
  bri_datafile *df;
  bri_store *st;
  bri_error e;
  if (bri_table_store_of(r->t, bm->pb, path, &st, &e) != 0 || bri_datafile_open(st, path, &df, &e) != 0) {
    problem(r, path, "%s", e.msg);
    return;
  }
  if (bri_datafile_num_rows(df) != f->physical_rows)
    rule_problem(r, "data-file-rows", bm->path, "fragment %llu: data file %s holds %llu rows, the fragment "
                 "records %llu physical rows", (unsigned long long)f->id, path,
                 (unsigned long long)bri_datafile_num_rows(df), (unsigned long long)f->physical_rows);
  bri_datafile_close(df);
}

/* "deletion-file": the file holds exactly num_deleted_rows offsets, each
 * below physical_rows. On success *offs (may be NULL) gets them. */
static bool check_deletions(vrun *r, const bri_manifest *bm, const Lance__Table__DataFragment *f,
                            const char *path, uint32_t **offs, size_t *n) {
  bri_error e;
  bri_store *st;
  *offs = NULL, *n = 0;
  if (bri_table_store_of(r->t, bm->pb, path, &st, &e) == 0 &&
      bri_deletion_read(st, path, f->deletion_file->file_type, f->deletion_file->num_deleted_rows,
                        f->physical_rows, offs, n, &e) == 0)
    return true;
  if (!seen(r, "delbad", e.msg))
    rule_problem(r, "deletion-file", bm->path, "fragment %llu: %s", (unsigned long long)f->id, e.msg);
  return false;
}

/* 1 when this deletion file was read before against the same counts. */
static int seen_deletions(vrun *r, const Lance__Table__DataFragment *f, const char *path) {
  char *key = bri_strdupf("%llu|%llu|%s", (unsigned long long)f->deletion_file->num_deleted_rows,
                          (unsigned long long)f->physical_rows, path);
  int was = key ? seen(r, "delread", key) : 1;
  if (!key) r->oom = true;
  free(key);
  return was;
}

/* "row-ids-unique": with stable row ids, a live row's id is its identity;
 * an Update moves a row (the old copy keeps its id but is deleted), so only
 * live rows must not share an id. ids collects them; checked at the end. */
typedef struct live_ids {
  uint64_t *v;
  size_t n, cap;
} live_ids;

static void collect_live_ids(vrun *r, const Lance__Table__DataFragment *f,
                             const uint32_t *del, size_t n_del, live_ids *ids) {
  if (f->row_id_sequence_case != LANCE__TABLE__DATA_FRAGMENT__ROW_ID_SEQUENCE_INLINE_ROW_IDS) return;
  Lance__Table__RowIdSequence *seq = NULL;
  uint64_t *v = NULL;
  size_t n = 0;
  bri_error e;
  if (bri_u64seq_unpack(f->inline_row_ids.data, f->inline_row_ids.len, &seq, &e) != 0 ||
      bri_u64seq_decode(seq, f->physical_rows, &v, &n, &e) != 0) {
    if (seq) lance__table__row_id_sequence__free_unpacked(seq, NULL);
    return; /* rule row-ids reports the broken sequence */
  }
  lance__table__row_id_sequence__free_unpacked(seq, NULL);
  if (ids->n + n > ids->cap) {
    size_t cap = ids->cap ? ids->cap : 4096;
    while (cap < ids->n + n) cap *= 2;
    uint64_t *g = realloc(ids->v, cap * sizeof *g);
    if (!g) {
      r->oom = true;
      free(v);
      return;
    }
    ids->v = g, ids->cap = cap;
  }
  size_t d = 0;
  for (size_t i = 0; i < n; i++) {
    while (d < n_del && del[d] < i) d++;
    if (d < n_del && del[d] == i) continue;
    ids->v[ids->n++] = v[i];
  }
  free(v);
}

static void check_live_ids(vrun *r, const bri_manifest *bm, live_ids *ids) {
  if (ids->n > 1) qsort(ids->v, ids->n, sizeof *ids->v, bri_cmp_u64);
  for (size_t i = 1; i < ids->n; i++)
    if (ids->v[i] == ids->v[i - 1]) {
      rule_problem(r, "row-ids-unique", bm->path, "row id %llu belongs to two live rows",
                   (unsigned long long)ids->v[i]);
      break;
    }
  free(ids->v);
}

/* ------------------------------------------------------------ one version */

static void check_version(vrun *r, const bri_manifest *bm) {
  const Lance__Table__Manifest *m = bm->pb;
  r->m = m;
  bri_error e;
  char *p = NULL;
  /* which fields have a Blob v2 field at or below them */
  bool *has_blob = bri_blob_fields(m);
  if (!has_blob) {
    r->oom = true;
    return;
  }
  bool any_blob = false;
  for (size_t i = 0; i < m->n_fields; i++) any_blob |= has_blob[i];
  if (m->transaction_file && *m->transaction_file) {
    p = bri_strdupf("%s/_transactions/%s", r->t->root, m->transaction_file);
    if (p && !seen(r, "txn", p)) {
      /* a version whose manifest embeds its transaction needs no .txn
       * file: the embedded copy is the one Lance reads, and the file may
       * be short or gone after a power loss (brid writes it without an
       * fsync, as Lance does; docs/format/table.md 4) */
      bri_store *st;
      bri_store_info info;
      bool present = !bm->txn || bri_table_store_of(r->t, m, p, &st, &e) != 0 ||
                     bri_store_stat(st, p, &info, &e) != BRI_ENOTFOUND;
      if (present) {
        r->rep->transaction_files++;
        if (!bm->txn) check_file(r, p, 0, "transaction file");
      }
    }
    free(p);
  }
  check_rules(r, bm);
  bool stable = (m->reader_feature_flags & BRI_FLAG_STABLE_ROW_IDS) != 0;
  live_ids ids = {0};
  for (size_t i = 0; i < m->n_fragments && !r->oom; i++) {
    const Lance__Table__DataFragment *f = m->fragments[i];
    uint32_t *del = NULL;
    size_t n_del = 0;
    bool whole = true;
    char *key = strdup("");
    for (size_t k = 0; k < f->n_files; k++) {
      const Lance__Table__DataFile *df = f->files[k];
      check_immutable(r, bm, df);
      if (bri_table_datafile_path(r->t, m, df, &p, &e) != 0) {
        problem(r, bm->path, "fragment %llu data file %s: %s", (unsigned long long)f->id, df->path, e.msg);
        whole = false;
        continue;
      }
      if (!seen(r, "data", p)) r->rep->data_files++;
      bool ok = check_file(r, p, df->file_size_bytes, "data file");
      if (ok) check_file_rows(r, bm, f, p);
      whole &= ok;
      bri_ctx bc = {r, p};
      if (bri_table_bri_paths(r->t, m, df, bm->path, bri_target_cb, &bc, &e) != 0)
        problem(r, bm->path, "%s", e.msg);
      char *k2 = key ? bri_strdupf("%s%s\n", key, p) : NULL;
      free(key);
      key = k2;
      free(p);
    }
    if (f->deletion_file) {
      if (bri_table_deletion_path(r->t, m, f, &p, &e) != 0) {
        problem(r, bm->path, "fragment %llu deletion file: %s", (unsigned long long)f->id, e.msg);
        whole = false;
      } else {
        if (!seen(r, "del", p)) r->rep->deletion_files++;
        bool ok = check_file(r, p, 0, "deletion file");
        /* its offsets: every version under stable row ids (live ids), else once */
        if (ok && (stable || !seen_deletions(r, f, p))) check_deletions(r, bm, f, p, &del, &n_del);
        whole &= ok;
        char *k2 = key ? bri_strdupf("%s%s\n", key, p) : NULL;
        free(key);
        key = k2;
        free(p);
      }
    }
    if (stable) collect_live_ids(r, f, del, n_del, &ids);
    free(del);
    if (!key) r->oom = true;
    else if (whole && any_blob && !r->o->skip_blobs && !seen(r, "frag", key))
      check_fragment(r, bm, f, has_blob);
    free(key);
  }
  if (stable) check_live_ids(r, bm, &ids);
  for (size_t i = 0; bm->indices && i < bm->indices->n_indices && !r->oom; i++) {
    const Lance__Table__IndexMetadata *x = bm->indices->indices[i];
    if (bri_fri_is(x)) {
      /* no directory unless its details outgrew the manifest; they must read */
      bri_fri_content *c = NULL;
      if (bri_fri_load(r->t, bm, x, &c, &e) != 0) problem(r, bm->path, "%s", e.msg);
      bri_fri_content_free(c);
      continue;
    }
    if (bri_table_index_dir(r->t, m, x, &p, &e) != 0) {
      problem(r, bm->path, "index %s: %s", x->name ? x->name : "?", e.msg);
      continue;
    }
    if (!seen(r, "idx", p)) r->rep->index_dirs++;
    check_dir(r, p, "index directory");
    free(p);
  }
  free(has_blob);
}

int bri_verify_table(const char *root, const bri_verify_options *o, bri_verify_report *rep,
                     bri_error *err) {
  memset(rep, 0, sizeof *rep);
  bri_verify_options opts = {0};
  if (o) opts = *o;
  if (!opts.max_problems) opts.max_problems = 1000;
  vrun r = {.o = &opts, .rep = rep};
  int rc = bri_table_open(root, &r.t, err);
  if (rc) return rc;
  size_t first = 0, last = r.t->n_versions;
  if (!opts.all_versions) {
    uint64_t want = opts.version ? opts.version : bri_table_latest_version(r.t);
    for (first = 0; first < r.t->n_versions && r.t->versions[first].version != want; first++) {
    }
    if (first == r.t->n_versions) {
      rc = bri_error_set(err, BRI_ENOTFOUND, "%s: no version %llu (latest is %llu)", root,
                         (unsigned long long)want, (unsigned long long)bri_table_latest_version(r.t));
      bri_table_close(r.t);
      return rc;
    }
    last = first + 1;
  }
  bri_manifest *before = NULL;
  for (size_t i = first; i < last && !r.oom; i++) {
    r.v = r.t->versions[i].version;
    bri_manifest *bm;
    bri_error e;
    if (bri_table_load(r.t, r.v, &bm, &e) != 0) {
      char *mp = bri_table_manifest_path(r.t, r.v);
      problem(&r, mp ? mp : root, "%s", e.msg);
      free(mp);
      continue;
    }
    rep->versions_checked++;
    check_version(&r, bm);
    if (before) {
      rule_ctx c = {&r, bm->path};
      bri_rules_check_succession(before->pb, bm->pb, on_rule, &c);
    }
    bri_manifest_free(before);
    before = bm; /* the high-water marks of consecutive versions */
    bri_strmap_dispose(&r.prev);
    r.prev = r.cur;
    memset(&r.cur, 0, sizeof r.cur);
  }
  bri_manifest_free(before);
  bri_strmap_dispose(&r.prev);
  bri_strmap_dispose(&r.cur);
  bri_strmap_dispose(&r.seen);
  bri_table_close(r.t);
  if (r.oom) return bri_error_set(err, BRI_ENOMEM, "%s: out of memory while verifying", root);
  return 0;
}

void bri_verify_report_dispose(bri_verify_report *rep) {
  for (size_t i = 0; i < rep->n_problems; i++) {
    free(rep->problems[i].file);
    free(rep->problems[i].what);
  }
  free(rep->problems);
  rep->problems = NULL;
  rep->n_problems = 0;
}
