/* writer_schema.c: from the Field list a writer is opened with to its
 * columns and to the schema it stores in global buffer 0.
 *
 * Owns docs/format/file.md section 1.3 on the write side: a pre-order walk that
 * gives every leaf (and every Blob v2 field) a column, records the path of
 * struct and list steps from the top-level array down to it (what the
 * shredder follows in an Arrow batch), numbers the layers innermost first,
 * and parses Lance logical type strings into leaf types (docs/format/table.md 5.8:
 * "int64", "timestamp:us:UTC", "fixed_size_list:float:8", "dict:string:
 * int32:false", ...). It also builds the global-buffer-0 fields: copies of
 * the input, except that a Blob v2 field becomes Lance 12's stored form
 * (section 1.1: packed struct + five descriptor fields with id -1).
 *
 * Design choice: every Field that goes into global buffer 0 is made by
 * packing a message and unpacking it again, so the writer owns one uniform
 * kind of protobuf-c allocation and frees it the same way. */
#include <stdlib.h>
#include <string.h>

#include "lance/file/writer_internal.h"
#include "lance/encoding/general.h"
#include "lance/core/schema.h"
#include "util/pbcheck.h"

static const char *lt_of(const Lance__File__Field *f) {
  return f->logical_type ? f->logical_type : "";
}

static bool meta_present(const Lance__File__Field *f, const char *key) {
  for (size_t i = 0; i < f->n_metadata; i++)
    if (f->metadata[i] && f->metadata[i]->key && strcmp(f->metadata[i]->key, key) == 0) return true;
  return false;
}

static bool is_blob_v2(const Lance__File__Field *f) {
  if (bri_field_is_blob_v2(f)) return true;
  /* the stored form, in case the caller passes a file schema */
  return strcmp(lt_of(f), "struct") == 0 && meta_present(f, "lance-encoding:blob") &&
         meta_present(f, "lance-encoding:packed");
}

static bool starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

static bool parse_uint(const char *s, size_t len, uint64_t max, uint64_t *out) {
  if (len == 0 || len > 19) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (uint64_t)(s[i] - '0');
  }
  if (v > max) return false;
  *out = v;
  return true;
}

/* Parses a leaf logical type (the first len bytes of s). */
static bool parse_leaf(const char *s, size_t len, bri_leaf_type *t, uint32_t *offset_bits,
                       uint32_t *dict_bits, int depth) {
  static const struct {
    const char *name;
    uint32_t bits;
  } fixed[] = {
      {"null", 0},      {"bool", 1},       {"int8", 8},       {"uint8", 8},
      {"int16", 16},    {"uint16", 16},    {"halffloat", 16}, {"int32", 32},
      {"uint32", 32},   {"float", 32},     {"date32:day", 32}, {"int64", 64},
      {"uint64", 64},   {"double", 64},    {"date64:ms", 64},
  };
  static const struct {
    const char *prefix;
    uint32_t bits;
  } prefixed[] = {
      {"time32:", 32},       {"time64:", 64},       {"timestamp:", 64},   {"duration:", 64},
      {"decimal:32:", 32},   {"decimal:64:", 64},   {"decimal:128:", 128}, {"decimal:256:", 256},
  };
  if (depth > BRI_MAX_FSL_DEPTH + 2) return false;
  memset(t, 0, sizeof *t);
  char buf[256];
  if (len >= sizeof buf) return false;
  memcpy(buf, s, len);
  buf[len] = 0;
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
    if (strcmp(buf, fixed[i].name) == 0) {
      t->kind = BRI_LEAF_FIXED;
      t->bits = fixed[i].bits;
      return true;
    }
  for (size_t i = 0; i < sizeof prefixed / sizeof prefixed[0]; i++)
    if (starts(buf, prefixed[i].prefix)) {
      t->kind = BRI_LEAF_FIXED;
      t->bits = prefixed[i].bits;
      return true;
    }
  if (!strcmp(buf, "string") || !strcmp(buf, "binary")) {
    t->kind = BRI_LEAF_VARIABLE;
    *offset_bits = 32;
    return true;
  }
  if (!strcmp(buf, "large_string") || !strcmp(buf, "large_binary")) {
    t->kind = BRI_LEAF_VARIABLE;
    *offset_bits = 64;
    return true;
  }
  uint64_t n;
  if (starts(buf, "fixed_size_binary:")) {
    const char *p = buf + strlen("fixed_size_binary:");
    if (!parse_uint(p, strlen(p), UINT32_MAX / 8, &n) || n == 0) return false;
    t->kind = BRI_LEAF_FIXED;
    t->bits = (uint32_t)(n * 8);
    return true;
  }
  if (starts(buf, "fixed_size_list:")) {
    const char *inner = buf + strlen("fixed_size_list:");
    const char *colon = strrchr(buf, ':');
    if (colon <= inner) return false;
    if (!parse_uint(colon + 1, strlen(colon + 1), UINT32_MAX, &n) || n == 0) return false;
    bri_leaf_type it;
    uint32_t ob = 0;
    size_t ilen = (size_t)(colon - inner);
    if (ilen == strlen("lance.bfloat16") && !strncmp(inner, "lance.bfloat16", ilen)) {
      memset(&it, 0, sizeof it);
      it.kind = BRI_LEAF_FIXED;
      it.bits = 16;
    } else if (!parse_leaf(inner, ilen, &it, &ob, NULL, depth + 1) || it.kind != BRI_LEAF_FIXED) {
      return false;
    }
    if (it.n_dims + 1 > BRI_MAX_FSL_DEPTH || it.bits == 0) return false;
    t->kind = BRI_LEAF_FIXED;
    t->bits = it.bits;
    t->n_dims = it.n_dims + 1;
    t->dims[0] = (uint32_t)n;
    for (uint32_t k = 0; k < it.n_dims; k++) t->dims[k + 1] = it.dims[k];
    return true;
  }
  if (starts(buf, "dict:")) {
    /* dict:VALUE:KEY:ORDERED; the value type may itself contain ':' */
    char *last = strrchr(buf, ':');
    if (!last || last <= buf + 5) return false;
    *last = 0;
    char *key = strrchr(buf, ':');
    if (!key || key <= buf + 5 || !dict_bits) return false;
    bri_leaf_type kt;
    uint32_t kob = 0;
    if (!parse_leaf(key + 1, strlen(key + 1), &kt, &kob, NULL, depth + 1) ||
        kt.kind != BRI_LEAF_FIXED || kt.n_dims ||
        (kt.bits != 8 && kt.bits != 16 && kt.bits != 32 && kt.bits != 64) ||
        strstr(key + 1, "int") == NULL)
      return false;
    const char *val = buf + 5;
    if (!parse_leaf(val, (size_t)(key - val), t, offset_bits, NULL, depth + 1)) return false;
    *dict_bits = kt.bits;
    return true;
  }
  return false;
}

static int general_of(const Lance__File__Field *f, int *scheme, int *level) {
  *scheme = 0;
  *level = 0;
  char *c = bri_field_metadata(f, "lance-encoding:compression");
  if (c) {
    if (!strcmp(c, "zstd")) *scheme = BRI_GENERAL_ZSTD;
    else if (!strcmp(c, "lz4")) *scheme = BRI_GENERAL_LZ4;
    free(c);
  }
  char *l = bri_field_metadata(f, "lance-encoding:compression-level");
  if (l) {
    *level = atoi(l);
    free(l);
  }
  return 0;
}

typedef struct walk_ctx {
  bri_file_writer *w;
  Lance__File__Field *const *f;
  size_t n;
  size_t cap_cols;
  wstep steps[BRI_MAX_LAYERS];
} walk_ctx;

static int add_column(walk_ctx *x, size_t fi, size_t top, size_t nsteps, const bri_leaf_type *t,
                      uint32_t ob, bool blob, bri_error *err) {
  bri_file_writer *w = x->w;
  if (w->n_cols == x->cap_cols) {
    size_t cap = x->cap_cols ? x->cap_cols * 2 : 16;
    wcol *c = realloc(w->cols, cap * sizeof *c);
    if (!c) return bri_error_set(err, BRI_ENOMEM, "file writer: out of memory");
    w->cols = c;
    x->cap_cols = cap;
  }
  wcol *c = &w->cols[w->n_cols];
  memset(c, 0, sizeof *c);
  const Lance__File__Field *f = x->f[fi];
  c->top = top;
  c->field_id = f->id;
  c->field_index = fi;
  c->n_steps = nsteps;
  c->n_layers = nsteps + 1;
  c->first_list = c->n_layers;
  uint16_t lists = 0;
  for (size_t d = nsteps; d-- > 0;) {
    c->steps[d] = x->steps[d];
    c->steps[d].layer = (uint8_t)(c->n_layers - 1 - d);
    if (c->steps[d].kind == WSTEP_LIST) {
      c->steps[d].depth = ++lists;
      c->is_list[c->steps[d].layer] = 1;
      if (c->steps[d].layer < c->first_list) c->first_list = c->steps[d].layer;
    }
  }
  c->max_rep = lists;
  c->type = *t;
  if (blob) {
    static const uint32_t bits[4] = {8, 64, 64, 32};
    for (int i = 0; i < 4; i++) {
      c->child_types[i].kind = BRI_LEAF_FIXED;
      c->child_types[i].bits = bits[i];
    }
    c->child_types[4].kind = BRI_LEAF_VARIABLE;
    c->type.kind = BRI_LEAF_STRUCT;
    c->type.n_children = 5;
    c->type.children = c->child_types;
    ob = 32;
  }
  c->offset_bits = ob ? ob : 32;
  c->blob_v2 = blob;
  general_of(f, &c->general_scheme, &c->general_level);
  c->logical_type = strdup(blob ? "blob.v2" : lt_of(f));
  c->path = bri_field_path(x->f, x->n, fi);
  if (!c->logical_type || !c->path) {
    free(c->logical_type);
    free(c->path);
    return bri_error_set(err, BRI_ENOMEM, "file writer: out of memory");
  }
  w->n_cols++;
  return bri_wvals_init(&c->vals, &c->type, err);
}

/* Children of field fi (they follow it in pre-order, linked by parent_id). */
static size_t kids(const walk_ctx *x, size_t fi, size_t *out, size_t cap) {
  size_t k = 0;
  int32_t id = x->f[fi]->id;
  for (size_t j = fi + 1; j < x->n; j++)
    if (x->f[j]->id != -1 && x->f[j]->parent_id == id) {
      if (k < cap) out[k] = j;
      k++;
    }
  return k;
}

static int walk(walk_ctx *x, size_t fi, size_t top, size_t nsteps, bri_error *err) {
  const Lance__File__Field *f = x->f[fi];
  const char *lt = lt_of(f);
  char *path = NULL;
  int rc = 0;
  if (nsteps + 1 >= BRI_MAX_LAYERS) {
    path = bri_field_path(x->f, x->n, fi);
    rc = bri_error_set(err, BRI_EUNSUPPORTED, "file writer: field %s is nested more than %d deep",
                       path ? path : "?", BRI_MAX_LAYERS - 1);
    goto out;
  }
  if (is_blob_v2(f)) {
    bri_leaf_type t = {.kind = BRI_LEAF_STRUCT};
    return add_column(x, fi, top, nsteps, &t, 32, true, err);
  }
  if (!strcmp(lt, "struct")) {
    if (meta_present(f, "lance-encoding:packed")) {
      path = bri_field_path(x->f, x->n, fi);
      rc = bri_error_set(err, BRI_EUNSUPPORTED,
                         "file writer: field %s is a packed struct (PackedStruct pages are not "
                         "written)",
                         path ? path : "?");
      goto out;
    }
    size_t ks[BRI_MAX_STRUCT_CHILDREN];
    size_t nk = kids(x, fi, ks, BRI_MAX_STRUCT_CHILDREN);
    if (nk == 0 || nk > BRI_MAX_STRUCT_CHILDREN) {
      path = bri_field_path(x->f, x->n, fi);
      rc = bri_error_set(err, BRI_EUNSUPPORTED, "file writer: struct field %s has %zu children",
                         path ? path : "?", nk);
      goto out;
    }
    for (size_t k = 0; k < nk; k++) {
      x->steps[nsteps] = (wstep){.kind = WSTEP_STRUCT, .child = (uint32_t)k};
      if ((rc = walk(x, ks[k], top, nsteps + 1, err))) return rc;
    }
    return 0;
  }
  if (starts(lt, "list") || starts(lt, "large_list") || !strcmp(lt, "map")) {
    size_t ks[2];
    size_t nk = kids(x, fi, ks, 2);
    if (nk != 1) {
      path = bri_field_path(x->f, x->n, fi);
      rc = bri_error_set(err, BRI_EINVAL, "file writer: list field %s has %zu children, not 1",
                         path ? path : "?", nk);
      goto out;
    }
    x->steps[nsteps] = (wstep){.kind = WSTEP_LIST, .offset_bits = starts(lt, "large_") ? 64 : 32};
    return walk(x, ks[0], top, nsteps + 1, err);
  }
  if (meta_present(f, "lance-encoding:blob")) {
    path = bri_field_path(x->f, x->n, fi);
    rc = bri_error_set(err, BRI_EUNSUPPORTED,
                       "file writer: field %s is a legacy blob column (BlobLayout pages are not "
                       "written)",
                       path ? path : "?");
    goto out;
  }
  bri_leaf_type t;
  uint32_t ob = 0, kb = 0;
  if (!parse_leaf(lt, strlen(lt), &t, &ob, &kb, 0)) {
    path = bri_field_path(x->f, x->n, fi);
    rc = bri_error_set(err, BRI_EUNSUPPORTED, "file writer: field %s has logical type \"%s\", "
                       "which the writer does not know",
                       path ? path : "?", lt);
    goto out;
  }
  if ((rc = add_column(x, fi, top, nsteps, &t, ob, false, err))) return rc;
  x->w->cols[x->w->n_cols - 1].dict_key_bits = kb;
  return 0;
out:
  free(path);
  return rc;
}

/* ---- global buffer 0 -------------------------------------------------------- */

static int push_gb0(bri_file_writer *w, size_t *cap, Lance__File__Field *f, bri_error *err) {
  if (!f) return bri_error_set(err, BRI_ENOMEM, "file writer: out of memory");
  if (w->n_gb0 == *cap) {
    size_t nc = *cap ? *cap * 2 : 16;
    Lance__File__Field **g = realloc(w->gb0, nc * sizeof *g);
    if (!g) {
      lance__file__field__free_unpacked(f, NULL);
      return bri_error_set(err, BRI_ENOMEM, "file writer: out of memory");
    }
    w->gb0 = g;
    *cap = nc;
  }
  w->gb0[w->n_gb0++] = f;
  return 0;
}

static int push_blob(bri_file_writer *w, size_t *cap, const Lance__File__Field *f,
                     bri_error *err) {
  static const struct {
    const char *name, *type;
    Lance__File__Encoding enc;
  } desc[5] = {
      {"kind", "uint8", LANCE__FILE__ENCODING__PLAIN},
      {"position", "uint64", LANCE__FILE__ENCODING__PLAIN},
      {"size", "uint64", LANCE__FILE__ENCODING__PLAIN},
      {"blob_id", "uint32", LANCE__FILE__ENCODING__PLAIN},
      {"blob_uri", "string", LANCE__FILE__ENCODING__VAR_BINARY},
  };
  Lance__File__Field s = LANCE__FILE__FIELD__INIT;
  Lance__File__Field__MetadataEntry m1 = LANCE__FILE__FIELD__METADATA_ENTRY__INIT,
                                    m2 = LANCE__FILE__FIELD__METADATA_ENTRY__INIT;
  Lance__File__Field__MetadataEntry *md[2] = {&m1, &m2};
  m1.key = (char *)"lance-encoding:blob";
  m2.key = (char *)"lance-encoding:packed";
  m1.has_value = m2.has_value = 1;
  m1.value.data = m2.value.data = (uint8_t *)"true";
  m1.value.len = m2.value.len = 4;
  s.name = f->name;
  s.has_id = f->id != 0;
  s.id = f->id;
  s.has_parent_id = 1;
  s.parent_id = f->parent_id;
  s.logical_type = (char *)"struct";
  s.has_nullable = f->has_nullable && f->nullable;
  s.nullable = s.has_nullable;
  s.n_metadata = 2;
  s.metadata = md;
  int rc = push_gb0(w, cap, (Lance__File__Field *)bri_pb_copy(&s.base), err);
  for (int i = 0; i < 5 && !rc; i++) {
    Lance__File__Field d = LANCE__FILE__FIELD__INIT;
    d.name = (char *)desc[i].name;
    d.has_id = d.has_parent_id = 1;
    d.id = d.parent_id = -1;
    d.logical_type = (char *)desc[i].type;
    d.has_encoding = 1;
    d.encoding = desc[i].enc;
    rc = push_gb0(w, cap, (Lance__File__Field *)bri_pb_copy(&d.base), err);
  }
  return rc;
}

static void subtree_end(Lance__File__Field *const *f, size_t n, size_t fi, size_t *end) {
  /* pre-order: the subtree is fi and the following fields whose ancestor chain
   * reaches fi; descriptor fields (id -1) right after a blob belong to it */
  size_t j = fi + 1;
  for (; j < n; j++) {
    if (f[j]->id == -1) continue;
    int32_t p = f[j]->parent_id;
    bool inside = false;
    for (size_t k = j; k-- > fi;) {
      if (f[k]->id == p && f[k]->id != -1) {
        if (k == fi) {
          inside = true;
          break;
        }
        p = f[k]->parent_id;
      }
    }
    if (!inside) break;
  }
  *end = j;
}

int bri_writer_schema_build(bri_file_writer *w, Lance__File__Field *const *fields, size_t n,
                            bri_error *err) {
  walk_ctx x = {.w = w, .f = fields, .n = n};
  int rc;
  for (size_t i = 0; i < n; i++)
    if (!fields[i])
      return bri_error_set(err, BRI_EINVAL, "file writer: field %zu of %zu is NULL", i, n);
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++)
      if (fields[i]->id == fields[j]->id && fields[i]->id != -1)
        return bri_error_set(err, BRI_EINVAL, "file writer: fields %zu and %zu both have id %d",
                             i, j, fields[i]->id);
  size_t cap = 0;
  for (size_t i = 0; i < n;) {
    const Lance__File__Field *f = fields[i];
    if (f->id == -1) { /* descriptor fields of a stored blob: regenerated */
      i++;
      continue;
    }
    if (f->parent_id != -1)
      return bri_error_set(err, BRI_EINVAL,
                           "file writer: field %zu (%s, id %d) has parent %d but no field before "
                           "it is its parent",
                           i, f->name ? f->name : "?", f->id, f->parent_id);
    size_t end;
    subtree_end(fields, n, i, &end);
    if ((rc = walk(&x, i, w->n_top, 0, err))) return rc;
    for (size_t j = i; j < end;) {
      if (fields[j]->id == -1) {
        j++;
        continue;
      }
      if (is_blob_v2(fields[j])) { /* stored form; its logical children are not stored */
        if ((rc = push_blob(w, &cap, fields[j], err))) return rc;
        size_t bend;
        subtree_end(fields, n, j, &bend);
        j = bend;
        continue;
      }
      if ((rc = push_gb0(w, &cap, (Lance__File__Field *)bri_pb_copy(&fields[j]->base), err))) return rc;
      j++;
    }
    w->n_top++;
    i = end;
  }
  if (w->n_cols == 0) return bri_error_set(err, BRI_EINVAL, "file writer: the schema has no columns");
  return 0;
}

void bri_writer_schema_dispose(bri_file_writer *w) {
  for (size_t i = 0; i < w->n_gb0; i++) lance__file__field__free_unpacked(w->gb0[i], NULL);
  free(w->gb0);
  w->gb0 = NULL;
  w->n_gb0 = 0;
}
