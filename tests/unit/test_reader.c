/* test_reader.c: reading fragments as Arrow arrays (lib/lance/dataset/reader.c,
 * assemble.c, arrow_build.c).
 *
 * Two kinds of tests:
 *  - synthetic pages fed straight to the level assembler (bri_asm), using
 *    the observed level streams of docs/format/file.md section 2 as test vectors,
 *    plus hostile level streams;
 *  - real tables in tests/fixtures/reader written by LanceDB 0.39.0 (Lance
 *    12.0.0) with tests/fixtures/reader/make_fixtures.mjs, whose literal or
 *    formula values are asserted here one by one (the two files change
 *    together): nested types with nulls at every level, deletions, two data
 *    files per fragment, every primitive type, FullZip pages, Blob v2
 *    descriptors and payloads, legacy blobs, multi-page columns, row slices,
 *    fields missing from a fragment, and damaged data files.
 * Every exported array is validated structurally (lengths, offsets, child
 * sizes) and released; run under `make SANITIZE=1` for leak checks. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lance/table/sidecar.h"
#include "lance/file/arrow_build.h"
#include "lance/file/assemble.h"
#include "lance/dataset/reader.h"
#include "lance/core/schema.h"
#include "testutil.h"
#include "util/bytes.h"
#include "util/fsutil.h"

/* ---- rendering and validation of exported arrays -------------------------- */
typedef struct sbuf {
  char *p;
  size_t len, cap;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  ck_assert_int_ge(n, 0);
  if (b->len + (size_t)n + 1 > b->cap) {
    b->cap = (b->len + (size_t)n + 1) * 2;
    b->p = realloc(b->p, b->cap);
    ck_assert_ptr_nonnull(b->p);
  }
  va_start(ap, fmt);
  vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

static int valid_at(const struct ArrowArray *a, int64_t i) {
  if (!a->n_buffers) return 0; /* null type */
  const uint8_t *v = a->buffers[0];
  return !v || ((v[(i + a->offset) >> 3] >> ((i + a->offset) & 7)) & 1);
}

/* A compact text form of row i: null, 1, "s", [..], <..> (fixed-size list),
 * {name:..}, 0xhex for binaries. */
static void render(sbuf *b, const struct ArrowSchema *s, const struct ArrowArray *a, int64_t i) {
  const char *f = s->format;
  if (!valid_at(a, i)) {
    sb_printf(b, "null");
    return;
  }
  if (!strcmp(f, "+s")) {
    sb_printf(b, "{");
    for (int64_t c = 0; c < a->n_children; c++) {
      sb_printf(b, "%s%s:", c ? "," : "", s->children[c]->name);
      render(b, s->children[c], a->children[c], i);
    }
    sb_printf(b, "}");
    return;
  }
  if (!strcmp(f, "+l") || !strcmp(f, "+m") || !strcmp(f, "+L")) {
    int64_t lo, hi;
    if (f[1] == 'L') {
      lo = ((const int64_t *)a->buffers[1])[i];
      hi = ((const int64_t *)a->buffers[1])[i + 1];
    } else {
      lo = ((const int32_t *)a->buffers[1])[i];
      hi = ((const int32_t *)a->buffers[1])[i + 1];
    }
    sb_printf(b, "[");
    for (int64_t j = lo; j < hi; j++) {
      if (j > lo) sb_printf(b, ",");
      render(b, s->children[0], a->children[0], j);
    }
    sb_printf(b, "]");
    return;
  }
  if (!strncmp(f, "+w:", 3)) {
    int64_t n = atoll(f + 3);
    sb_printf(b, "<");
    for (int64_t j = 0; j < n; j++) {
      if (j) sb_printf(b, ",");
      render(b, s->children[0], a->children[0], i * n + j);
    }
    sb_printf(b, ">");
    return;
  }
  if (!strcmp(f, "u") || !strcmp(f, "U")) {
    int64_t lo = f[0] == 'U' ? ((const int64_t *)a->buffers[1])[i] : ((const int32_t *)a->buffers[1])[i];
    int64_t hi = f[0] == 'U' ? ((const int64_t *)a->buffers[1])[i + 1]
                             : ((const int32_t *)a->buffers[1])[i + 1];
    sb_printf(b, "\"%.*s\"", (int)(hi - lo), (const char *)a->buffers[2] + lo);
    return;
  }
  if (!strcmp(f, "z") || !strcmp(f, "Z") || !strncmp(f, "w:", 2)) {
    int64_t lo, hi;
    const uint8_t *d;
    if (f[0] == 'w') {
      int64_t w = atoll(f + 2);
      lo = i * w;
      hi = lo + w;
      d = a->buffers[1];
    } else {
      lo = f[0] == 'Z' ? ((const int64_t *)a->buffers[1])[i] : ((const int32_t *)a->buffers[1])[i];
      hi = f[0] == 'Z' ? ((const int64_t *)a->buffers[1])[i + 1] : ((const int32_t *)a->buffers[1])[i + 1];
      d = a->buffers[2];
    }
    sb_printf(b, "0x");
    for (int64_t j = lo; j < hi; j++) sb_printf(b, "%02x", d[j]);
    return;
  }
  const void *d = a->buffers[1];
  switch (f[0]) {
  case 'b': sb_printf(b, "%d", (((const uint8_t *)d)[i >> 3] >> (i & 7)) & 1); return;
  case 'c': sb_printf(b, "%d", ((const int8_t *)d)[i]); return;
  case 'C': sb_printf(b, "%u", ((const uint8_t *)d)[i]); return;
  case 's': sb_printf(b, "%d", ((const int16_t *)d)[i]); return;
  case 'S': sb_printf(b, "%u", ((const uint16_t *)d)[i]); return;
  case 'i': sb_printf(b, "%d", ((const int32_t *)d)[i]); return;
  case 'I': sb_printf(b, "%u", ((const uint32_t *)d)[i]); return;
  case 'l': sb_printf(b, "%" PRId64, ((const int64_t *)d)[i]); return;
  case 'L': sb_printf(b, "%" PRIu64, ((const uint64_t *)d)[i]); return;
  case 'f': sb_printf(b, "%g", ((const float *)d)[i]); return;
  case 'g': sb_printf(b, "%g", ((const double *)d)[i]); return;
  default: ck_abort_msg("render: format %s", f);
  }
}

static char *render_row(const struct ArrowSchema *s, const struct ArrowArray *a, int64_t i) {
  sbuf b = {0};
  render(&b, s, a, i);
  return b.p;
}

/* Structural validity of an exported array (what an Arrow consumer relies
 * on): buffer counts, null counts, offsets in range, child lengths. */
static void validate(const struct ArrowSchema *s, const struct ArrowArray *a) {
  const char *f = s->format;
  ck_assert_ptr_nonnull(a->release);
  ck_assert_ptr_nonnull(s->release);
  ck_assert_int_eq(a->offset, 0);
  ck_assert_int_eq(a->n_children, s->n_children);
  if (!strcmp(f, "n")) {
    ck_assert_int_eq(a->n_buffers, 0);
    ck_assert_int_eq(a->null_count, a->length);
    return;
  }
  int64_t nulls = 0;
  for (int64_t i = 0; i < a->length; i++) nulls += !valid_at(a, i);
  ck_assert_int_eq(nulls, a->null_count);
  if (!a->buffers[0]) ck_assert_int_eq(a->null_count, 0);
  if (!strcmp(f, "+s")) {
    ck_assert_int_eq(a->n_buffers, 1);
    for (int64_t c = 0; c < a->n_children; c++) {
      ck_assert_int_eq(a->children[c]->length, a->length);
      validate(s->children[c], a->children[c]);
    }
  } else if (!strcmp(f, "+l") || !strcmp(f, "+m") || !strcmp(f, "+L")) {
    ck_assert_int_eq(a->n_buffers, 2);
    ck_assert_int_eq(a->n_children, 1);
    int64_t prev = 0;
    for (int64_t i = 0; i <= a->length; i++) {
      int64_t o = f[1] == 'L' ? ((const int64_t *)a->buffers[1])[i] : ((const int32_t *)a->buffers[1])[i];
      if (i == 0) ck_assert_int_eq(o, 0);
      ck_assert_int_ge(o, prev);
      prev = o;
    }
    ck_assert_int_eq(prev, a->children[0]->length);
    validate(s->children[0], a->children[0]);
  } else if (!strncmp(f, "+w:", 3)) {
    ck_assert_int_eq(a->n_buffers, 1);
    ck_assert_int_eq(a->children[0]->length, a->length * atoll(f + 3));
    validate(s->children[0], a->children[0]);
  } else if (!strcmp(f, "u") || !strcmp(f, "z") || !strcmp(f, "U") || !strcmp(f, "Z")) {
    ck_assert_int_eq(a->n_buffers, 3);
    int64_t prev = 0;
    for (int64_t i = 0; i <= a->length; i++) {
      int64_t o = (f[0] == 'U' || f[0] == 'Z') ? ((const int64_t *)a->buffers[1])[i]
                                               : ((const int32_t *)a->buffers[1])[i];
      if (i == 0) ck_assert_int_eq(o, 0);
      ck_assert_int_ge(o, prev);
      prev = o;
    }
    ck_assert_ptr_nonnull(a->buffers[2]);
  } else {
    ck_assert_int_eq(a->n_buffers, 2);
    ck_assert_ptr_nonnull(a->buffers[1]);
  }
}

/* ---- fixtures ------------------------------------------------------------------ */
typedef struct fx {
  bri_table *t;
  bri_manifest *m;
} fx;

static fx fx_open(const char *rel) {
  fx x = {0};
  char *p = bri_fixture(rel);
  bri_error err = {0};
  ck_assert_msg(bri_table_open(p, &x.t, &err) == 0, "%s", err.msg);
  ck_assert_msg(bri_table_load(x.t, 0, &x.m, &err) == 0, "%s", err.msg);
  free(p);
  return x;
}

static void fx_close(fx *x) {
  bri_manifest_free(x->m);
  bri_table_close(x->t);
}

static int32_t field_id(const fx *x, const char *name) {
  Lance__File__Field **fs = x->m->pb->fields;
  for (size_t i = 0; i < x->m->pb->n_fields; i++)
    if (fs[i]->parent_id == -1 && !strcmp(fs[i]->name, name)) return fs[i]->id;
  ck_abort_msg("no field %s", name);
  return -1;
}

/* Id of a.b.c (dotted path). */
static int32_t path_id(const fx *x, const char *path) {
  Lance__File__Field **fs = x->m->pb->fields;
  size_t n = x->m->pb->n_fields;
  for (size_t i = 0; i < n; i++) {
    char *p = bri_field_path(fs, n, i);
    int hit = !strcmp(p, path);
    free(p);
    if (hit) return fs[i]->id;
  }
  ck_abort_msg("no field %s", path);
  return -1;
}

static bri_fragment_reader *frag_open(const fx *x, size_t i) {
  bri_fragment_reader *r = NULL;
  bri_error err = {0};
  ck_assert_uint_lt(i, x->m->pb->n_fragments);
  ck_assert_msg(bri_fragment_open(x->t, x->m, x->m->pb->fragments[i], &r, &err) == 0, "%s", err.msg);
  return r;
}

typedef struct col {
  struct ArrowArray a;
  struct ArrowSchema s;
} col;

static col col_read(bri_fragment_reader *r, int32_t id) {
  col c;
  bri_error err = {0};
  int rc = bri_fragment_read_field(r, id, &c.a, &c.s, &err);
  ck_assert_msg(rc == 0, "field %d: %s", id, err.msg);
  validate(&c.s, &c.a);
  return c;
}

static void col_dispose(col *c) {
  c->a.release(&c->a);
  c->s.release(&c->s);
  ck_assert_ptr_null(c->a.release);
  ck_assert_ptr_null(c->s.release);
}

static void assert_row(const col *c, int64_t i, const char *want, const char *what) {
  char *got = render_row(&c->s, &c->a, i);
  ck_assert_msg(!strcmp(got, want), "%s row %" PRId64 ": got %s, want %s", what, i, got, want);
  free(got);
}

/* ---- synthetic pages (docs/format/file.md section 2) ------------------------------- */
typedef struct synth {
  bri_leaf_page pg;
  int32_t vals[64];
} synth;

static void synth_make(synth *s, uint64_t rows, const uint8_t *layers, size_t nl, const uint16_t *rep,
                       const uint16_t *def, uint64_t nlev, const int32_t *slots, uint64_t nslots) {
  memset(s, 0, sizeof(*s));
  s->pg.layout = BRI_PAGE_MINIBLOCK;
  s->pg.n_rows = rows;
  s->pg.n_levels = nlev;
  s->pg.rep = (uint16_t *)rep;
  s->pg.def = (uint16_t *)def;
  s->pg.n_layers = nl;
  memcpy(s->pg.layers, layers, nl);
  bri_error err = {0};
  ck_assert_int_eq(bri_layers_analyze(layers, nl, &s->pg.max_rep, &s->pg.max_def, &s->pg.max_visible_def, &err), 0);
  memcpy(s->vals, slots, nslots * 4);
  s->pg.values.kind = BRI_LEAF_FIXED;
  s->pg.values.n = nslots;
  s->pg.values.bits = 32;
  s->pg.values.elems_per_slot = 1;
  s->pg.values.data = (uint8_t *)s->vals;
  s->pg.values.data_len = nslots * 4;
}

static const bri_leaf_type I32_LEAF = {BRI_LEAF_FIXED, 32, 0, {0}, 0, NULL};

static void asm_start(bri_asm *a, const int *kinds, size_t depth) {
  bri_error err = {0};
  ck_assert_msg(bri_asm_init(a, kinds, depth, &I32_LEAF, &err) == 0, "%s", err.msg);
}

static void asm_feed(bri_asm *a, synth *s) {
  bri_error err = {0};
  ck_assert_msg(bri_asm_page(a, &s->pg, "synthetic", &err) == 0, "%s", err.msg);
}

static void expect_bits(const bri_bitbuf *b, const char *want) {
  size_t n = strlen(want);
  ck_assert_uint_eq(b->len, n);
  char got[256];
  for (size_t i = 0; i < n; i++) got[i] = bri_bitbuf_get(b, i) ? '1' : '0';
  got[n] = 0;
  ck_assert_str_eq(got, want);
}

static void expect_offsets(const bri_growbuf *g, const int64_t *want, size_t n) {
  ck_assert_uint_eq(g->len, n * 8);
  for (size_t i = 0; i < n; i++) {
    int64_t v;
    memcpy(&v, g->p + 8 * i, 8);
    ck_assert_msg(v == want[i], "offset %zu: %" PRId64 " != %" PRId64, i, v, want[i]);
  }
}

static void expect_i32(const bri_vbuild *vb, const int32_t *want, size_t n) {
  ck_assert_uint_eq(vb->n, n);
  ck_assert_uint_eq(vb->data.len, n * 4);
  for (size_t i = 0; i < n; i++) {
    int32_t v;
    memcpy(&v, vb->data.p + 4 * i, 4);
    ck_assert_msg(v == want[i], "value %zu: %d != %d", i, v, want[i]);
  }
}

/* list<int32?>?: [1,2], null, [], [null,4], [5], [6,null,7], null, [], [8] */
static const uint8_t L_LAYERS[] = {BRI_LAYER_NULLABLE_ITEM, BRI_LAYER_NULL_AND_EMPTY_LIST};
static const uint16_t L_REP[] = {1, 0, 1, 1, 1, 0, 1, 1, 0, 0, 1, 1, 1};
static const uint16_t L_DEF[] = {0, 0, 2, 3, 1, 0, 0, 0, 1, 0, 2, 3, 0};
static const int32_t L_SLOTS[] = {1, 2, 0, 4, 5, 6, 0, 7, 8};
static const int L_KINDS[] = {BRI_ASM_LIST, BRI_ASM_LEAF};

START_TEST(asm_list_nullable_items) {
  synth s;
  synth_make(&s, 9, L_LAYERS, 2, L_REP, L_DEF, 13, L_SLOTS, 9);
  bri_asm a;
  asm_start(&a, L_KINDS, 2);
  asm_feed(&a, &s);
  bri_error err = {0};
  ck_assert_int_eq(bri_asm_finish(&a, &err), 0);
  expect_bits(&a.node[0].validity, "101111011");
  static const int64_t off[] = {0, 2, 2, 2, 4, 5, 8, 8, 8, 9};
  expect_offsets(&a.node[0].offsets, off, 10);
  expect_bits(&a.node[1].validity, "110111011");
  expect_i32(&a.values, L_SLOTS, 9);
  bri_asm_dispose(&a);
}
END_TEST

/* The same page with rows 1 and 5 deleted, then with the row range [2, 7),
 * then fed twice (two pages: offsets continue). */
START_TEST(asm_list_row_filter_and_pages) {
  synth s;
  synth_make(&s, 9, L_LAYERS, 2, L_REP, L_DEF, 13, L_SLOTS, 9);
  bri_error err = {0};
  bri_asm a;
  static const uint32_t del[] = {1, 5};
  asm_start(&a, L_KINDS, 2);
  a.del = del;
  a.n_del = 2;
  asm_feed(&a, &s);
  ck_assert_int_eq(bri_asm_finish(&a, &err), 0);
  /* rows [1,2], [], [null,4], [5], null, [], [8] */
  expect_bits(&a.node[0].validity, "1111011");
  static const int64_t off1[] = {0, 2, 2, 4, 5, 5, 5, 6};
  expect_offsets(&a.node[0].offsets, off1, 8);
  expect_bits(&a.node[1].validity, "110111");
  static const int32_t v1[] = {1, 2, 0, 4, 5, 8};
  expect_i32(&a.values, v1, 6);
  bri_asm_dispose(&a);

  asm_start(&a, L_KINDS, 2);
  a.row_lo = 2;
  a.row_hi = 7;
  asm_feed(&a, &s);
  ck_assert_int_eq(bri_asm_finish(&a, &err), 0);
  /* rows [], [null,4], [5], [6,null,7], null */
  expect_bits(&a.node[0].validity, "11110");
  static const int64_t off2[] = {0, 0, 2, 3, 6, 6};
  expect_offsets(&a.node[0].offsets, off2, 6);
  static const int32_t v2[] = {0, 4, 5, 6, 0, 7};
  expect_i32(&a.values, v2, 6);
  expect_bits(&a.node[1].validity, "011101");
  bri_asm_dispose(&a);

  asm_start(&a, L_KINDS, 2);
  asm_feed(&a, &s);
  asm_feed(&a, &s);
  ck_assert_int_eq(bri_asm_finish(&a, &err), 0);
  ck_assert_uint_eq(a.node[0].length, 18);
  int64_t last;
  memcpy(&last, a.node[0].offsets.p + a.node[0].offsets.len - 8, 8);
  ck_assert_int_eq(last, 18);
  memcpy(&last, a.node[0].offsets.p + 10 * 8, 8);
  ck_assert_int_eq(last, 11); /* second page's row 1 starts after 9 + 2 items */
  expect_bits(&a.node[1].validity, "110111011110111011");
  bri_asm_dispose(&a);
}
END_TEST

/* list<list<int32>?>?: [[1,2],[3]], null, [], [[],null,[4]], [[5]] */
START_TEST(asm_list_of_lists) {
  static const uint8_t layers[] = {BRI_LAYER_ALL_VALID_ITEM, BRI_LAYER_NULL_AND_EMPTY_LIST,
                                   BRI_LAYER_NULL_AND_EMPTY_LIST};
  static const uint16_t rep[] = {2, 0, 1, 2, 2, 2, 1, 1, 2};
  static const uint16_t def[] = {0, 0, 0, 3, 4, 2, 1, 0, 0};
  static const int32_t slots[] = {1, 2, 3, 4, 5};
  static const int kinds[] = {BRI_ASM_LIST, BRI_ASM_LIST, BRI_ASM_LEAF};
  synth s;
  synth_make(&s, 5, layers, 3, rep, def, 9, slots, 5);
  ck_assert_uint_eq(s.pg.max_visible_def, 0);
  bri_asm a;
  bri_error err = {0};
  asm_start(&a, kinds, 3);
  asm_feed(&a, &s);
  ck_assert_int_eq(bri_asm_finish(&a, &err), 0);
  expect_bits(&a.node[0].validity, "10111");
  static const int64_t o0[] = {0, 2, 2, 2, 5, 6};
  expect_offsets(&a.node[0].offsets, o0, 6);
  expect_bits(&a.node[1].validity, "111011");
  static const int64_t o1[] = {0, 2, 3, 3, 3, 4, 5};
  expect_offsets(&a.node[1].offsets, o1, 7);
  expect_bits(&a.node[2].validity, "11111");
  ck_assert_ptr_null(a.node[2].validity.p); /* no nulls: never materialized */
  expect_i32(&a.values, slots, 5);
  bri_asm_dispose(&a);
}
END_TEST

/* struct<l: list<int32?>?, k>? column l.item:
 * {[1,2]}, null, {l:null}, {l:[]}, {[null]}, {[6]} - the null struct sits
 * above the list, so its level is invisible (def 4 > max_visible_def 1). */
START_TEST(asm_struct_above_list) {
  static const uint8_t layers[] = {BRI_LAYER_NULLABLE_ITEM, BRI_LAYER_NULL_AND_EMPTY_LIST,
                                   BRI_LAYER_NULLABLE_ITEM};
  static const uint16_t rep[] = {1, 0, 1, 1, 1, 1, 1};
  static const uint16_t def[] = {0, 0, 4, 2, 3, 1, 0};
  static const int32_t slots[] = {1, 2, 0, 6};
  static const int kinds[] = {BRI_ASM_STRUCT, BRI_ASM_LIST, BRI_ASM_LEAF};
  synth s;
  synth_make(&s, 6, layers, 3, rep, def, 7, slots, 4);
  ck_assert_uint_eq(s.pg.max_visible_def, 1);
  bri_asm a;
  bri_error err = {0};
  asm_start(&a, kinds, 3);
  asm_feed(&a, &s);
  ck_assert_int_eq(bri_asm_finish(&a, &err), 0);
  expect_bits(&a.node[0].validity, "101111");
  expect_bits(&a.node[1].validity, "100111"); /* the null struct's list entry is null too */
  static const int64_t o[] = {0, 2, 2, 2, 2, 3, 4};
  expect_offsets(&a.node[1].offsets, o, 7);
  expect_bits(&a.node[2].validity, "1101");
  expect_i32(&a.values, slots, 4);
  bri_asm_dispose(&a);
}
END_TEST

/* list<struct<a?,b?>?>? column a: [], [null], [{a:null},{a:21}], null */
START_TEST(asm_list_of_structs) {
  static const uint8_t layers[] = {BRI_LAYER_NULLABLE_ITEM, BRI_LAYER_NULLABLE_ITEM,
                                   BRI_LAYER_NULL_AND_EMPTY_LIST};
  static const uint16_t rep[] = {1, 1, 1, 0, 1};
  static const uint16_t def[] = {4, 2, 1, 0, 3};
  static const int32_t slots[] = {0, 0, 21};
  static const int kinds[] = {BRI_ASM_LIST, BRI_ASM_STRUCT, BRI_ASM_LEAF};
  synth s;
  synth_make(&s, 4, layers, 3, rep, def, 5, slots, 3);
  bri_asm a;
  bri_error err = {0};
  asm_start(&a, kinds, 3);
  asm_feed(&a, &s);
  ck_assert_int_eq(bri_asm_finish(&a, &err), 0);
  expect_bits(&a.node[0].validity, "1110");
  static const int64_t o[] = {0, 0, 1, 3, 3};
  expect_offsets(&a.node[0].offsets, o, 5);
  expect_bits(&a.node[1].validity, "011");
  expect_bits(&a.node[2].validity, "001"); /* a under the null struct is null */
  expect_i32(&a.values, slots, 3);
  bri_asm_dispose(&a);
}
END_TEST

/* struct<a:int32?>? column a: {1}, null, {null}, {3}; a page without levels. */
START_TEST(asm_struct_and_flat) {
  static const uint8_t layers[] = {BRI_LAYER_NULLABLE_ITEM, BRI_LAYER_NULLABLE_ITEM};
  static const uint16_t def[] = {0, 2, 1, 0};
  static const int32_t slots[] = {1, 0, 0, 3};
  static const int kinds[] = {BRI_ASM_STRUCT, BRI_ASM_LEAF};
  synth s;
  synth_make(&s, 4, layers, 2, NULL, def, 4, slots, 4);
  bri_asm a;
  bri_error err = {0};
  asm_start(&a, kinds, 2);
  asm_feed(&a, &s);
  ck_assert_int_eq(bri_asm_finish(&a, &err), 0);
  expect_bits(&a.node[0].validity, "1011");
  expect_bits(&a.node[1].validity, "1001");
  bri_asm_dispose(&a);

  static const uint8_t flat[] = {BRI_LAYER_ALL_VALID_ITEM};
  static const int kflat[] = {BRI_ASM_LEAF};
  static const int32_t flat_slots[] = {10, 20, 30, 40};
  synth_make(&s, 4, flat, 1, NULL, NULL, 4, flat_slots, 4);
  static const uint32_t del[] = {0, 3};
  asm_start(&a, kflat, 1);
  a.del = del;
  a.n_del = 2;
  asm_feed(&a, &s);
  static const int32_t kept[] = {20, 30};
  expect_i32(&a.values, kept, 2);
  expect_bits(&a.node[0].validity, "11");
  bri_asm_dispose(&a);

  /* Flat with nulls, all rows kept: the byte-wise validity path. */
  static const uint8_t nl[] = {BRI_LAYER_NULLABLE_ITEM};
  static const uint16_t d20[] = {0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  int32_t v20[20] = {0};
  synth_make(&s, 20, nl, 1, NULL, d20, 20, v20, 20);
  asm_start(&a, kflat, 1);
  asm_feed(&a, &s);
  asm_feed(&a, &s);
  expect_bits(&a.node[0].validity, "1011001111011111111010110011110111111110");
  ck_assert_uint_eq(a.node[0].validity.zeros, 10);
  bri_asm_dispose(&a);
}
END_TEST

static void expect_asm_error(synth *s, const int *kinds, size_t depth, const char *needle) {
  bri_asm a;
  bri_error err = {0};
  asm_start(&a, kinds, depth);
  int rc = bri_asm_page(&a, &s->pg, "pg", &err);
  ck_assert_int_eq(rc, BRI_ECORRUPT);
  ck_assert_msg(strstr(err.msg, needle), "message \"%s\" lacks \"%s\"", err.msg, needle);
  ck_assert_msg(!strncmp(err.msg, "pg: ", 4), "message \"%s\" does not name the page", err.msg);
  bri_asm_dispose(&a);
}

START_TEST(asm_hostile_levels) {
  synth s;
  /* Path depth and layer count disagree. */
  synth_make(&s, 9, L_LAYERS, 2, L_REP, L_DEF, 13, L_SLOTS, 9);
  static const int k3[] = {BRI_ASM_STRUCT, BRI_ASM_LIST, BRI_ASM_LEAF};
  expect_asm_error(&s, k3, 3, "rep/def layers");
  /* A list layer where the schema has a struct. */
  static const int ks[] = {BRI_ASM_STRUCT, BRI_ASM_LEAF};
  expect_asm_error(&s, ks, 2, "list layer");
  /* Def above max_def. */
  uint16_t def[13];
  memcpy(def, L_DEF, sizeof(def));
  def[5] = 4;
  synth_make(&s, 9, L_LAYERS, 2, L_REP, def, 13, L_SLOTS, 9);
  expect_asm_error(&s, L_KINDS, 2, "def 4");
  /* An item continuing a list that def says is null. */
  uint16_t rep[13];
  memcpy(rep, L_REP, sizeof(rep));
  memcpy(def, L_DEF, sizeof(def));
  rep[3] = 0; /* continues the null list of row 1 ... */
  synth_make(&s, 8, L_LAYERS, 2, rep, def, 13, L_SLOTS, 9);
  expect_asm_error(&s, L_KINDS, 2, "continues a list");
  /* First level does not start a row. */
  memcpy(rep, L_REP, sizeof(rep));
  rep[0] = 0;
  synth_make(&s, 9, L_LAYERS, 2, rep, L_DEF, 13, L_SLOTS, 9);
  expect_asm_error(&s, L_KINDS, 2, "does not start a row");
  /* Fewer slots than visible levels, and more. */
  synth_make(&s, 9, L_LAYERS, 2, L_REP, L_DEF, 13, L_SLOTS, 8);
  expect_asm_error(&s, L_KINDS, 2, "value slots");
  int32_t ten[10] = {0};
  synth_make(&s, 9, L_LAYERS, 2, L_REP, L_DEF, 13, ten, 10);
  expect_asm_error(&s, L_KINDS, 2, "slots");
  /* Row count differs from the page's. */
  synth_make(&s, 10, L_LAYERS, 2, L_REP, L_DEF, 13, L_SLOTS, 9);
  expect_asm_error(&s, L_KINDS, 2, "rows");
  synth_make(&s, 8, L_LAYERS, 2, L_REP, L_DEF, 13, L_SLOTS, 9);
  expect_asm_error(&s, L_KINDS, 2, "more than the page's 8 rows");
  /* Value buffer shorter than the slots claim. */
  synth_make(&s, 9, L_LAYERS, 2, L_REP, L_DEF, 13, L_SLOTS, 9);
  s.pg.values.data_len = 20;
  expect_asm_error(&s, L_KINDS, 2, "value bytes");
  /* Unknown layer value. */
  synth_make(&s, 9, L_LAYERS, 2, L_REP, L_DEF, 13, L_SLOTS, 9);
  s.pg.layers[0] = 9;
  expect_asm_error(&s, L_KINDS, 2, "unknown rep/def layer");
  /* Variable-width offsets out of order. */
  static const uint8_t flat[] = {BRI_LAYER_ALL_VALID_ITEM};
  static const int kflat[] = {BRI_ASM_LEAF};
  static const bri_leaf_type var = {BRI_LEAF_VARIABLE, 0, 0, {0}, 0, NULL};
  int64_t offs[] = {0, 3, 1, 4};
  uint8_t bytes[4] = {'a', 'b', 'c', 'd'};
  synth_make(&s, 3, flat, 1, NULL, NULL, 3, L_SLOTS, 3);
  s.pg.values.kind = BRI_LEAF_VARIABLE;
  s.pg.values.offsets = offs;
  s.pg.values.data = bytes;
  s.pg.values.data_len = 4;
  bri_asm a;
  bri_error err = {0};
  ck_assert_int_eq(bri_asm_init(&a, kflat, 1, &var, &err), 0);
  ck_assert_int_eq(bri_asm_page(&a, &s.pg, "pg", &err), BRI_ECORRUPT);
  ck_assert_msg(strstr(err.msg, "out of order"), "%s", err.msg);
  bri_asm_dispose(&a);
  offs[3] = 9; /* past the data */
  offs[2] = 3;
  ck_assert_int_eq(bri_asm_init(&a, kflat, 1, &var, &err), 0);
  ck_assert_int_eq(bri_asm_page(&a, &s.pg, "pg", &err), BRI_ECORRUPT);
  ck_assert_msg(strstr(err.msg, "past the 4 value bytes"), "%s", err.msg);
  bri_asm_dispose(&a);
}
END_TEST

/* ---- arrow_build ----------------------------------------------------------------- */
START_TEST(bitbuf_lazy_and_runs) {
  bri_error err = {0};
  bri_bitbuf b = {0};
  ck_assert_int_eq(bri_bitbuf_append_run(&b, 1, 1000, &err), 0);
  ck_assert_ptr_null(b.p);
  ck_assert_int_eq(bri_bitbuf_push(&b, 0, &err), 0);
  ck_assert_ptr_nonnull(b.p);
  ck_assert_uint_eq(b.len, 1001);
  ck_assert_uint_eq(b.zeros, 1);
  for (int i = 0; i < 1000; i++) ck_assert_int_eq(bri_bitbuf_get(&b, (uint64_t)i), 1);
  ck_assert_int_eq(bri_bitbuf_get(&b, 1000), 0);
  uint8_t src[3] = {0xa5, 0x0f, 0x81};
  ck_assert_int_eq(bri_bitbuf_append_bits(&b, src, 3, 17, &err), 0);
  for (int i = 0; i < 17; i++)
    ck_assert_int_eq(bri_bitbuf_get(&b, 1001 + (uint64_t)i), (src[(i + 3) >> 3] >> ((i + 3) & 7)) & 1);
  bri_bitbuf c = {0};
  ck_assert_int_eq(bri_bitbuf_append_run(&c, 1, 1000, &err), 0);
  ck_assert_int_eq(bri_bitbuf_append_run(&c, 0, 1, &err), 0);
  ck_assert_int_eq(bri_bitbuf_append_bits(&c, src, 3, 17, &err), 0);
  ck_assert(bri_bitbuf_equal(&b, &c));
  ck_assert_int_eq(bri_bitbuf_push(&c, 1, &err), 0);
  ck_assert(!bri_bitbuf_equal(&b, &c));
  void *out;
  ck_assert_int_eq(bri_bitbuf_take(&b, &out, &err), 0);
  ck_assert_ptr_nonnull(out);
  free(out);
  bri_bitbuf_dispose(&c);
  /* A lazy bitmap without zeros is handed out as NULL (all valid). */
  bri_bitbuf d = {0};
  ck_assert_int_eq(bri_bitbuf_append_run(&d, 1, 77, &err), 0);
  ck_assert_int_eq(bri_bitbuf_take(&d, &out, &err), 0);
  ck_assert_ptr_null(out);
  /* Unaligned moves in both directions. */
  uint8_t dst[8] = {0}, pat[8] = {0x3c, 0xf0, 0x55, 0xaa, 0x01, 0x80, 0xff, 0x00};
  for (uint64_t s = 0; s < 9; s++)
    for (uint64_t t = 0; t < 9; t++) {
      memset(dst, 0xff, sizeof(dst));
      bri_bits_move(dst, t, pat, s, 40);
      for (uint64_t i = 0; i < 40; i++)
        ck_assert_int_eq((dst[(t + i) >> 3] >> ((t + i) & 7)) & 1, (pat[(s + i) >> 3] >> ((s + i) & 7)) & 1);
      for (uint64_t i = 0; i < t; i++) ck_assert_int_eq((dst[i >> 3] >> (i & 7)) & 1, 1);
    }
}
END_TEST

START_TEST(metadata_encoding) {
  bri_error err = {0};
  const char *keys[] = {"a", "ARROW:extension:name"};
  const uint8_t *vals[] = {(const uint8_t *)"xyz", (const uint8_t *)"lance.blob.v2"};
  size_t lens[] = {3, 13};
  char *md;
  size_t len;
  ck_assert_int_eq(bri_arrow_metadata_encode(2, keys, vals, lens, &md, &len, &err), 0);
  ck_assert_uint_eq(len, 4 + 4 + 1 + 4 + 3 + 4 + 20 + 4 + 13);
  ck_assert_int_eq(bri_le32((const uint8_t *)md), 2);
  int32_t vl;
  const char *v = bri_arrow_metadata_get(md, "ARROW:extension:name", &vl);
  ck_assert_ptr_nonnull(v);
  ck_assert_int_eq(vl, 13);
  ck_assert(!memcmp(v, "lance.blob.v2", 13));
  ck_assert_ptr_null(bri_arrow_metadata_get(md, "b", &vl));
  free(md);
}
END_TEST

/* ---- nested22 / nested21 --------------------------------------------------------- */
/* The rows of make_fixtures.mjs NESTED, by id (ids 4 and 10 are deleted). */
static const char *const N_L[12] = {"[1,2]", "null", "[]", "[null,4]", "[5]", "[6,null,7]",
                                    "null", "[]", "[8]", "[9]", "[]", "[10,11]"};
static const char *const N_LL[12] = {"[[1,2],[3]]", "null", "[]", "[[],null,[4]]", "[[5]]", "[[6]]",
                                     "null", "[[]]", "[[7,8]]", "[]", "[[9]]", "null"};
static const char *const N_LNN[12] = {"[1]", "[]", "[2,3]", "[]", "[4]", "[5,6]",
                                      "[]", "[7]", "[8]", "[]", "[9]", "[10]"};
static const char *const N_ST[12] = {"{a:1,b:\"x\"}", "null", "{a:null,b:\"yy\"}", "{a:3,b:null}",
                                     "{a:4,b:\"zzzz\"}", "null", "{a:6,b:\"\"}", "{a:null,b:null}",
                                     "{a:8,b:\"\xc3\xa9\"}", "{a:9,b:\"nine\"}", "null", "{a:11,b:\"k\"}"};
static const char *const N_LST[12] = {"[]", "[null]", "[{p:null,q:\"a\"},{p:21,q:null}]", "null",
                                      "[{p:1,q:\"b\"}]", "[null,{p:2,q:\"c\"}]", "[]", "null",
                                      "[{p:3,q:null}]", "[{p:4,q:\"d\"}]", "null", "[]"};
static const char *const N_SL[12] = {"{l:[1,2],k:0}", "null", "{l:null,k:2}", "{l:[],k:3}",
                                     "{l:[null],k:4}", "{l:[6],k:5}", "null", "{l:[7,8,9],k:7}",
                                     "{l:[],k:8}", "{l:[10],k:9}", "{l:null,k:10}", "null"};
static const char *const N_FSL[12] = {"<1,2,3>", "null", "<null,5,6>", "<7,null,null>", "<0,0,0>", "null",
                                      "<1.5,2.5,3.5>", "<null,null,null>", "<9,9,9>", "<10,11,12>",
                                      "null", "<13,null,15>"};
static const char *const N_LFSL[12] = {"[<1,2>]", "null", "[]", "[null,<3,null>]", "[<4,5>,<6,7>]", "[null]",
                                       "[]", "null", "[<8,9>]", "[<10,11>]", "[]", "null"};
static const char *const N_SS[12] = {
    "{inner:{x:10,y:0.5},tag:\"t0\"}", "{inner:null,tag:\"t1\"}", "{inner:{x:12,y:null},tag:\"\"}",
    "{inner:{x:13,y:1.5},tag:\"t3\"}", "{inner:null,tag:\"t4\"}", "{inner:{x:15,y:2.5},tag:\"t5\"}",
    "{inner:{x:16,y:null},tag:\"t6\"}", "{inner:{x:17,y:3.5},tag:\"t7\"}", "{inner:null,tag:\"t8\"}",
    "{inner:{x:19,y:4.5},tag:\"t9\"}", "{inner:{x:20,y:5.5},tag:\"t10\"}", "{inner:null,tag:\"t11\"}"};
static const char *const N_LS[12] = {"[\"a\",null,\"\"]", "[]", "[\"bb\"]", "[null]", "[\"c\",\"dd\",\"eee\"]",
                                     "[\"\"]", "[]", "[\"f\"]", "[\"g\",\"h\"]", "[\"i\"]", "[null,null]", "[]"};
static const char *const N_M[12] = {"[{key:\"a\",value:1}]", "null", "[]",
                                    "[{key:\"b\",value:null},{key:\"c\",value:3}]", "[{key:\"d\",value:4}]",
                                    "[]", "null", "[{key:\"e\",value:5}]", "[{key:\"f\",value:null}]",
                                    "[{key:\"g\",value:7}]", "[]", "null"};
static const char *const N_BIG[12] = {"[1]", "null", "[]", "[2,null]", "[3]", "[4]",
                                      "null", "[]", "[5,6]", "[7]", "null", "[8]"};

typedef struct ncol {
  const char *name, *format;
  const char *const *rows;
  bool nullable;
} ncol;

static const ncol NESTED_COLS[] = {
    {"l", "+l", N_L, true},       {"ll", "+l", N_LL, true},     {"lnn", "+l", N_LNN, false},
    {"st", "+s", N_ST, true},     {"lst", "+l", N_LST, true},   {"sl", "+s", N_SL, true},
    {"fsl", "+w:3", N_FSL, true}, {"lfsl", "+l", N_LFSL, true}, {"ss", "+s", N_SS, false},
    {"ls", "+l", N_LS, true},     {"m", "+m", N_M, true},       {"big", "+L", N_BIG, true},
};

static void check_nested(const char *rel, bool v22) {
  fx x = fx_open(rel);
  ck_assert_uint_eq(x.m->pb->n_fragments, 2);
  static const int64_t ids0[] = {0, 1, 2, 3, 5, 6, 7, 8}, ids1[] = {9, 11};
  static const uint32_t off0[] = {0, 1, 2, 3, 5, 6, 7, 8}, off1[] = {0, 2};
  for (size_t fi = 0; fi < 2; fi++) {
    bri_fragment_reader *r = frag_open(&x, fi);
    const int64_t *ids = fi ? ids1 : ids0;
    size_t n = fi ? 2 : 8;
    ck_assert_uint_eq(bri_fragment_num_rows(r), n);
    ck_assert_uint_eq(bri_fragment_physical_rows(r), fi ? 3 : 9);
    ck_assert(!memcmp(bri_fragment_row_offsets(r), fi ? off1 : off0, n * 4));
    col id = col_read(r, field_id(&x, "id"));
    ck_assert_str_eq(id.s.format, "l");
    ck_assert_int_eq(id.a.length, (int64_t)n);
    for (size_t k = 0; k < n; k++) ck_assert_int_eq(((const int64_t *)id.a.buffers[1])[k], ids[k]);
    col_dispose(&id);
    for (size_t c = 0; c < sizeof(NESTED_COLS) / sizeof(NESTED_COLS[0]); c++) {
      const ncol *nc = &NESTED_COLS[c];
      if (!v22 && (!strcmp(nc->name, "m") || !strcmp(nc->name, "big"))) continue;
      col v = col_read(r, field_id(&x, nc->name));
      ck_assert_str_eq(v.s.format, nc->format);
      ck_assert_str_eq(v.s.name, nc->name);
      ck_assert_int_eq(!!(v.s.flags & ARROW_FLAG_NULLABLE), nc->nullable);
      ck_assert_int_eq(v.a.length, (int64_t)n);
      int64_t nulls = 0;
      for (size_t k = 0; k < n; k++) {
        assert_row(&v, (int64_t)k, nc->rows[ids[k]], nc->name);
        nulls += !strcmp(nc->rows[ids[k]], "null");
      }
      ck_assert_int_eq(v.a.null_count, nulls);
      col_dispose(&v);
    }
    bri_fragment_close(r);
  }
  fx_close(&x);
}

START_TEST(nested22_values) { check_nested("reader/nested22.lance", true); }
END_TEST

START_TEST(nested21_values) { check_nested("reader/nested21.lance", false); }
END_TEST

/* Child types and names, and the second data file of nested22 (large_list
 * written by alterColumns). */
START_TEST(nested22_schema_and_files) {
  fx x = fx_open("reader/nested22.lance");
  bri_fragment_reader *r = frag_open(&x, 0);
  col lfsl = col_read(r, field_id(&x, "lfsl"));
  ck_assert_str_eq(lfsl.s.children[0]->name, "item");
  ck_assert_str_eq(lfsl.s.children[0]->format, "+w:2");
  ck_assert_str_eq(lfsl.s.children[0]->children[0]->format, "s");
  ck_assert(lfsl.s.children[0]->children[0]->flags & ARROW_FLAG_NULLABLE);
  col_dispose(&lfsl);
  col m = col_read(r, field_id(&x, "m"));
  ck_assert_str_eq(m.s.children[0]->name, "entries");
  ck_assert_str_eq(m.s.children[0]->format, "+s");
  ck_assert_int_eq(m.s.children[0]->flags & ARROW_FLAG_NULLABLE, 0);
  ck_assert_str_eq(m.s.children[0]->children[0]->name, "key");
  ck_assert_str_eq(m.s.children[0]->children[1]->format, "i");
  col_dispose(&m);
  const Lance__Table__DataFile *dl = bri_fragment_field_datafile(r, field_id(&x, "l"));
  const Lance__Table__DataFile *db = bri_fragment_field_datafile(r, field_id(&x, "big"));
  ck_assert_ptr_nonnull(dl);
  ck_assert_ptr_nonnull(db);
  ck_assert_ptr_ne(dl, db);
  ck_assert_ptr_eq(db, bri_fragment_field_datafile(r, path_id(&x, "big.item")));
  ck_assert_ptr_nonnull(bri_fragment_field_file(r, field_id(&x, "big")));
  const char *p = bri_fragment_field_path(r, field_id(&x, "big"));
  ck_assert_ptr_nonnull(p);
  ck_assert_ptr_nonnull(strstr(p, db->path));
  ck_assert_ptr_null(bri_fragment_field_datafile(r, 9999));
  bri_fragment_close(r);
  fx_close(&x);
}
END_TEST

/* Every slice of fragment 0 equals the same rows of the full read. */
START_TEST(nested22_row_slices) {
  fx x = fx_open("reader/nested22.lance");
  bri_fragment_reader *r = frag_open(&x, 0);
  bri_error err = {0};
  for (size_t c = 0; c < sizeof(NESTED_COLS) / sizeof(NESTED_COLS[0]); c++) {
    int32_t fid = field_id(&x, NESTED_COLS[c].name);
    col full = col_read(r, fid);
    for (uint64_t first = 0; first <= 8; first++)
      for (uint64_t count = 0; first + count <= 8; count++) {
        col s;
        ck_assert_msg(bri_fragment_read_rows(r, fid, first, count, &s.a, &s.s, &err) == 0, "%s", err.msg);
        validate(&s.s, &s.a);
        ck_assert_int_eq(s.a.length, (int64_t)count);
        for (uint64_t k = 0; k < count; k++) {
          char *want = render_row(&full.s, &full.a, (int64_t)(first + k));
          assert_row(&s, (int64_t)k, want, NESTED_COLS[c].name);
          free(want);
        }
        col_dispose(&s);
      }
    col_dispose(&full);
  }
  col s;
  ck_assert_int_eq(bri_fragment_read_rows(r, field_id(&x, "l"), 5, 4, &s.a, &s.s, &err), BRI_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "8 visible rows"));
  ck_assert_ptr_null(s.a.release);
  ck_assert_ptr_null(s.s.release);
  bri_fragment_close(r);
  fx_close(&x);
}
END_TEST

/* A reader opened for some fields reads them exactly as a full one, decodes
 * only their columns, and refuses the others. */
START_TEST(open_fields_reads_only_those) {
  fx x = fx_open("reader/nested22.lance");
  bri_fragment_reader *full = frag_open(&x, 0), *part = NULL;
  bri_error err = {0};
  int32_t want[2] = {field_id(&x, "st"), field_id(&x, "big")};
  ck_assert_msg(bri_fragment_open_fields(x.t, x.m, x.m->pb->fragments[0], want, 2, &part, &err) == 0,
                "%s", err.msg);
  for (int k = 0; k < 2; k++) {
    col a = col_read(full, want[k]), b = col_read(part, want[k]);
    for (int64_t i = 0; i < a.a.length; i++) {
      char *row = render_row(&a.s, &a.a, i);
      assert_row(&b, i, row, "open_fields");
      free(row);
    }
    col_dispose(&a), col_dispose(&b);
  }
  /* the data file of "st" holds other fields too: only st's columns are there */
  const Lance__Table__DataFile *pb = bri_fragment_field_datafile(part, want[0]);
  bri_datafile *df = bri_fragment_field_file(part, want[0]);
  size_t decoded = 0;
  for (size_t c = 0; c < bri_datafile_num_columns(df); c++) decoded += bri_datafile_column(df, c) != NULL;
  ck_assert_uint_gt(decoded, 0);
  ck_assert_uint_lt(decoded, pb->n_column_indices);
  col c;
  ck_assert_int_eq(bri_fragment_read_field(part, field_id(&x, "l"), &c.a, &c.s, &err), BRI_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "not opened"));
  ck_assert_ptr_null(c.a.release);
  bri_fragment_close(part);
  bri_fragment_close(full);
  fx_close(&x);
}
END_TEST

/* Leaves no data file stores (schema evolution) read as nulls; a field the
 * manifest does not list as top-level is not found. */
static void tombstone(fx *x, size_t frag, int32_t id) {
  Lance__Table__DataFragment *f = x->m->pb->fragments[frag];
  for (size_t i = 0; i < f->n_files; i++)
    for (size_t j = 0; j < f->files[i]->n_fields; j++)
      if (f->files[i]->fields[j] == id) f->files[i]->fields[j] = -2;
}

START_TEST(missing_fields_read_as_null) {
  fx x = fx_open("reader/nested22.lance");
  tombstone(&x, 0, path_id(&x, "st.b"));
  tombstone(&x, 0, path_id(&x, "l.item"));
  tombstone(&x, 0, path_id(&x, "big.item"));
  tombstone(&x, 0, path_id(&x, "sl.k"));
  bri_fragment_reader *r = frag_open(&x, 0);
  static const int64_t ids0[] = {0, 1, 2, 3, 5, 6, 7, 8};
  col st = col_read(r, field_id(&x, "st"));
  static const char *const st_a[12] = {"{a:1,b:null}", "null", "{a:null,b:null}", "{a:3,b:null}", "",
                                       "null", "{a:6,b:null}", "{a:null,b:null}", "{a:8,b:null}"};
  for (int k = 0; k < 8; k++) assert_row(&st, k, st_a[ids0[k]], "st");
  ck_assert_int_eq(st.a.children[1]->null_count, 8);
  col_dispose(&st);
  /* sl keeps its validity from l's column; k (missing) is null. */
  col sl = col_read(r, field_id(&x, "sl"));
  assert_row(&sl, 0, "{l:[1,2],k:null}", "sl");
  assert_row(&sl, 1, "null", "sl");
  col_dispose(&sl);
  static const char *const gone[] = {"l", "big"};
  for (int g = 0; g < 2; g++) {
    col c = col_read(r, field_id(&x, gone[g]));
    ck_assert_int_eq(c.a.length, 8);
    ck_assert_int_eq(c.a.null_count, 8);
    ck_assert_int_eq(c.a.children[0]->length, 0);
    col_dispose(&c);
  }
  bri_error err = {0};
  col c;
  ck_assert_int_eq(bri_fragment_read_field(r, 9999, &c.a, &c.s, &err), BRI_ENOTFOUND);
  ck_assert_int_eq(bri_fragment_read_field(r, path_id(&x, "st.a"), &c.a, &c.s, &err), BRI_ENOTFOUND);
  ck_assert_ptr_nonnull(strstr(err.msg, "no top-level field"));
  bri_fragment_close(r);
  fx_close(&x);
}
END_TEST

/* ---- types22 ------------------------------------------------------------------------ */
static const char *const CATS[] = {"red", "green", "blue", "cyan", "magenta"};
static const char *const DICT[] = {"apple", "banana", "cherry", "date"};

static void mul_small(uint64_t w[4], uint64_t m) {
  unsigned __int128 carry = 0;
  for (int k = 0; k < 4; k++) {
    unsigned __int128 p = (unsigned __int128)w[k] * m + carry;
    w[k] = (uint64_t)p;
    carry = p >> 64;
  }
}

static void dec256(int i, uint8_t out[32]) {
  uint64_t w[4] = {1, 0, 0, 0};
  for (int k = 0; k < 40; k++) mul_small(w, 10);
  mul_small(w, (uint64_t)i);
  unsigned __int128 s = (unsigned __int128)w[0] + 7;
  w[0] = (uint64_t)s;
  for (int k = 1; k < 4 && (s >> 64); k++) s = (unsigned __int128)w[k] + 1, w[k] = (uint64_t)s;
  if (i % 2) {
    int carry = 1;
    for (int k = 0; k < 4; k++) {
      w[k] = ~w[k] + (uint64_t)carry;
      carry = carry && w[k] == 0;
    }
  }
  for (int k = 0; k < 4; k++) bri_put_le64(out + 8 * k, w[k]);
}

static const void *vals(const col *c) { return c->a.buffers[1]; }

static void check_bytes(const col *c, int64_t k, const uint8_t *want, size_t n, const char *what) {
  const char *f = c->s.format;
  int64_t lo, hi;
  const uint8_t *d;
  if (f[0] == 'w') {
    lo = k * atoll(f + 2);
    hi = lo + atoll(f + 2);
    d = c->a.buffers[1];
  } else if (f[0] == 'U' || f[0] == 'Z') {
    lo = ((const int64_t *)c->a.buffers[1])[k];
    hi = ((const int64_t *)c->a.buffers[1])[k + 1];
    d = c->a.buffers[2];
  } else {
    lo = ((const int32_t *)c->a.buffers[1])[k];
    hi = ((const int32_t *)c->a.buffers[1])[k + 1];
    d = c->a.buffers[2];
  }
  ck_assert_msg((size_t)(hi - lo) == n, "%s row %" PRId64 ": %" PRId64 " bytes, want %zu", what, k, hi - lo, n);
  ck_assert_msg(!memcmp(d + lo, want, n), "%s row %" PRId64 ": bytes differ", what, k);
}

START_TEST(types22_values) {
  fx x = fx_open("reader/types22.lance");
  bri_fragment_reader *r = frag_open(&x, 0);
  int rows[150], n = 0;
  for (int i = 0; i < 150; i++)
    if (i % 17 != 5) rows[n++] = i;
  ck_assert_uint_eq(bri_fragment_num_rows(r), (uint64_t)n);
  static const struct {
    const char *name, *format;
  } fmts[] = {{"id", "l"}, {"b", "b"}, {"i8", "c"}, {"u8", "C"}, {"i16", "s"}, {"u16", "S"}, {"i32", "i"},
              {"u32", "I"}, {"i64", "l"}, {"u64", "L"}, {"f16", "e"}, {"f32", "f"}, {"f64", "g"},
              {"d128", "d:38,2"}, {"d256", "d:76,10,256"}, {"date32", "tdD"}, {"date64", "tdm"},
              {"t32s", "tts"}, {"t32ms", "ttm"}, {"t64us", "ttu"}, {"t64ns", "ttn"}, {"ts_s", "tss:"},
              {"ts_us_utc", "tsu:UTC"}, {"ts_ns_ny", "tsn:America/New_York"}, {"dur_ms", "tDm"},
              {"fsb", "w:16"}, {"bin", "z"}, {"lbin", "Z"}, {"s", "u"}, {"lstr", "U"}, {"cat", "u"},
              {"dict", "u"}, {"nul", "n"}, {"allnull", "i"}, {"const_i32", "i"}, {"vec", "+w:4"}};
  for (size_t c = 0; c < sizeof(fmts) / sizeof(fmts[0]); c++) {
    col v = col_read(r, field_id(&x, fmts[c].name));
    ck_assert_msg(!strcmp(v.s.format, fmts[c].format), "%s: format %s", fmts[c].name, v.s.format);
    ck_assert_int_eq(v.a.length, n);
    const char *nm = fmts[c].name;
    for (int k = 0; k < n; k++) {
      int i = rows[k];
      int valid = valid_at(&v.a, k);
      char msg[64];
      snprintf(msg, sizeof(msg), "%s row %d (id %d)", nm, k, i);
      if (!strcmp(nm, "id")) {
        ck_assert_int_eq(((const int64_t *)vals(&v))[k], i);
      } else if (!strcmp(nm, "b")) {
        ck_assert_msg(valid == (i % 5 != 4), "%s", msg);
        if (valid) ck_assert_int_eq((((const uint8_t *)vals(&v))[k >> 3] >> (k & 7)) & 1, i % 3 == 0);
      } else if (!strcmp(nm, "i8")) {
        ck_assert_msg(valid == (i % 7 != 3), "%s", msg);
        if (valid) ck_assert_int_eq(((const int8_t *)vals(&v))[k], (i * 37) % 256 - 128);
      } else if (!strcmp(nm, "u8")) {
        ck_assert_int_eq(((const uint8_t *)vals(&v))[k], (i * 13) % 256);
      } else if (!strcmp(nm, "i16")) {
        ck_assert_int_eq(((const int16_t *)vals(&v))[k], (i * 1237) % 65536 - 32768);
      } else if (!strcmp(nm, "u16")) {
        ck_assert_int_eq(((const uint16_t *)vals(&v))[k], (i * 613) % 65536);
        ck_assert_int_eq(v.s.flags & ARROW_FLAG_NULLABLE, 0);
      } else if (!strcmp(nm, "i32")) {
        ck_assert_msg(valid == (i % 7 != 3), "%s", msg);
        if (valid) ck_assert_int_eq(((const int32_t *)vals(&v))[k], i * 100003 - 20000000);
      } else if (!strcmp(nm, "u32")) {
        ck_assert_uint_eq(((const uint32_t *)vals(&v))[k], (uint32_t)((uint64_t)i * 2654435761u));
      } else if (!strcmp(nm, "i64")) {
        ck_assert_msg(valid == (i % 11 != 1), "%s", msg);
        int64_t want = (int64_t)i * -1000000007LL + (i == 2 ? -((int64_t)1 << 62) : 0);
        if (valid) ck_assert_int_eq(((const int64_t *)vals(&v))[k], want);
      } else if (!strcmp(nm, "u64")) {
        ck_assert_uint_eq(((const uint64_t *)vals(&v))[k], (uint64_t)i * 11400714819323198485ULL);
      } else if (!strcmp(nm, "f16")) {
        ck_assert_msg(valid == (i % 7 != 3), "%s", msg);
        if (valid) ck_assert_uint_eq(((const uint16_t *)vals(&v))[k], (unsigned)((i * 97) % 0x7c00));
      } else if (!strcmp(nm, "f32")) {
        ck_assert(((const float *)vals(&v))[k] == (float)i * 0.25f - 10.0f);
      } else if (!strcmp(nm, "f64")) {
        ck_assert_msg(valid == (i % 7 != 3), "%s", msg);
        if (valid) ck_assert(((const double *)vals(&v))[k] == i * 1.5 - 100);
      } else if (!strcmp(nm, "d128")) {
        ck_assert_msg(valid == (i % 9 != 0), "%s", msg);
        __int128 want = (__int128)i * 123456789 - 5000000000LL;
        if (valid) ck_assert(!memcmp((const uint8_t *)vals(&v) + 16 * k, &want, 16));
      } else if (!strcmp(nm, "d256")) {
        uint8_t want[32];
        dec256(i, want);
        ck_assert_msg(!memcmp((const uint8_t *)vals(&v) + 32 * k, want, 32), "%s", msg);
      } else if (!strcmp(nm, "date32")) {
        ck_assert_int_eq(((const int32_t *)vals(&v))[k], i * 10 - 1000);
      } else if (!strcmp(nm, "date64")) {
        ck_assert_int_eq(((const int64_t *)vals(&v))[k], (int64_t)i * 86400000);
      } else if (!strcmp(nm, "t32s")) {
        ck_assert_int_eq(((const int32_t *)vals(&v))[k], i * 60);
      } else if (!strcmp(nm, "t32ms")) {
        ck_assert_int_eq(((const int32_t *)vals(&v))[k], i * 1000 + 7);
      } else if (!strcmp(nm, "t64us")) {
        ck_assert_int_eq(((const int64_t *)vals(&v))[k], (int64_t)i * 1000001);
      } else if (!strcmp(nm, "t64ns")) {
        ck_assert_int_eq(((const int64_t *)vals(&v))[k], (int64_t)i * 1000000007);
      } else if (!strcmp(nm, "ts_s")) {
        ck_assert_int_eq(((const int64_t *)vals(&v))[k], (int64_t)i * 3600);
      } else if (!strcmp(nm, "ts_us_utc")) {
        ck_assert_int_eq(((const int64_t *)vals(&v))[k], (int64_t)i * 1000000 + 123);
      } else if (!strcmp(nm, "ts_ns_ny")) {
        ck_assert_msg(valid == (i % 7 != 3), "%s", msg);
        if (valid) ck_assert_int_eq(((const int64_t *)vals(&v))[k], (int64_t)i * 999999999);
      } else if (!strcmp(nm, "dur_ms")) {
        ck_assert_int_eq(((const int64_t *)vals(&v))[k], (int64_t)i * 1000 - 5000);
      } else if (!strcmp(nm, "fsb")) {
        ck_assert_msg(valid == (i % 7 != 3), "%s", msg);
        uint8_t want[16];
        for (int j = 0; j < 16; j++) want[j] = (uint8_t)(i + j);
        if (valid) check_bytes(&v, k, want, 16, msg);
      } else if (!strcmp(nm, "bin")) {
        uint8_t want[8];
        for (int j = 0; j < i % 5; j++) want[j] = (uint8_t)(i * 3 + j);
        check_bytes(&v, k, want, (size_t)(i % 5), msg);
      } else if (!strcmp(nm, "lbin")) {
        ck_assert_msg(valid == (i % 11 != 0), "%s", msg);
        uint8_t want[16];
        for (int j = 0; j < i % 9; j++) want[j] = (uint8_t)(i + 7 * j);
        check_bytes(&v, k, want, valid ? (size_t)(i % 9) : 0, msg);
      } else if (!strcmp(nm, "s")) {
        ck_assert_msg(valid == (i % 7 != 3), "%s", msg);
        char want[16];
        snprintf(want, sizeof(want), "s%d", i);
        if (valid && i % 10 == 0) want[0] = 0;
        check_bytes(&v, k, (const uint8_t *)want, valid ? strlen(want) : 0, msg);
      } else if (!strcmp(nm, "lstr")) {
        char want[16];
        snprintf(want, sizeof(want), "L%d\xc3\xa9", i);
        check_bytes(&v, k, (const uint8_t *)want, strlen(want), msg);
      } else if (!strcmp(nm, "cat")) {
        check_bytes(&v, k, (const uint8_t *)CATS[i % 5], strlen(CATS[i % 5]), msg);
      } else if (!strcmp(nm, "dict")) {
        ck_assert_msg(valid == (i % 6 != 5), "%s", msg);
        if (valid) check_bytes(&v, k, (const uint8_t *)DICT[i % 4], strlen(DICT[i % 4]), msg);
      } else if (!strcmp(nm, "nul") || !strcmp(nm, "allnull")) {
        ck_assert_msg(!valid, "%s", msg);
      } else if (!strcmp(nm, "const_i32")) {
        ck_assert_int_eq(((const int32_t *)vals(&v))[k], 7);
      } else if (!strcmp(nm, "vec")) {
        ck_assert_msg(valid == (i % 10 != 9), "%s", msg);
        if (!valid) continue;
        const struct ArrowArray *it = v.a.children[0];
        const float *fv = it->buffers[1];
        float want[4] = {(float)i, (float)i + 0.5f, (float)-i, (float)(i * 2)};
        for (int j = 0; j < 4; j++) {
          int iv = valid_at(it, 4 * k + j);
          ck_assert_msg(iv == (j != 2 || i % 3 != 0), "%s item %d", msg, j);
          if (iv) ck_assert(fv[4 * k + j] == want[j]);
        }
      } else {
        ck_abort_msg("unchecked column %s", nm);
      }
    }
    col_dispose(&v);
  }
  bri_fragment_close(r);
  fx_close(&x);
}
END_TEST

/* ---- wide22: FullZip pages ------------------------------------------------------------ */
/* make_fixtures.mjs ffslRow(i) rendered. */
static void ffsl_want(int i, char *buf, size_t cap) {
  if (i % 5 == 4) {
    snprintf(buf, cap, "null");
    return;
  }
  size_t p = (size_t)snprintf(buf, cap, "<");
  for (int j = 0; j < 3; j++) {
    if (j) p += (size_t)snprintf(buf + p, cap - p, ",");
    if ((i + j) % 7 == 3)
      p += (size_t)snprintf(buf + p, cap - p, "null");
    else if ((i + j) % 3 == 0)
      p += (size_t)snprintf(buf + p, cap - p, "<%d,null>", i * 10 + j * 2);
    else
      p += (size_t)snprintf(buf + p, cap - p, "<%d,%d>", i * 10 + j * 2, i * 10 + j * 2 + 1);
  }
  snprintf(buf + p, cap - p, ">");
}

START_TEST(wide22_fullzip) {
  fx x = fx_open("reader/wide22.lance");
  bri_fragment_reader *r = frag_open(&x, 0);
  col big = col_read(r, field_id(&x, "big"));
  col fsb = col_read(r, field_id(&x, "fsb"));
  col vec = col_read(r, field_id(&x, "vec"));
  ck_assert_str_eq(fsb.s.format, "w:300");
  ck_assert_str_eq(vec.s.format, "+w:80");
  static const char ab[] = "abcdefghijklmnopqrstuvwxyz";
  for (int i = 0; i < 12; i++) {
    char msg[32];
    snprintf(msg, sizeof(msg), "big row %d", i);
    ck_assert_int_eq(valid_at(&big.a, i), i % 4 != 2);
    if (i % 4 != 2) {
      char want[1200];
      int p = snprintf(want, sizeof(want), "%d:", i);
      int len = 26 * (10 + 2 * i) < 300 + 37 * i ? 26 * (10 + 2 * i) : 300 + 37 * i;
      for (int j = 0; j < len; j++) want[p + j] = ab[j % 26];
      check_bytes(&big, i, (const uint8_t *)want, (size_t)(p + len), msg);
    }
    uint8_t w[300];
    for (int j = 0; j < 300; j++) w[j] = (uint8_t)(i * 7 + j);
    check_bytes(&fsb, i, w, 300, "fsb");
    ck_assert_int_eq(valid_at(&vec.a, i), i != 5);
    if (i == 5) continue;
    const struct ArrowArray *it = vec.a.children[0];
    for (int j = 0; j < 80; j++) {
      int iv = valid_at(it, 80 * i + j);
      ck_assert_msg(iv == ((i + j) % 9 != 0), "vec row %d item %d", i, j);
      if (iv) ck_assert(((const float *)it->buffers[1])[80 * i + j] == (float)(i * 100 + j));
    }
  }
  col_dispose(&big);
  col_dispose(&fsb);
  col_dispose(&vec);
  /* Nested fixed-size lists, a packed struct with a string, bfloat16. */
  col ffsl = col_read(r, field_id(&x, "ffsl"));
  ck_assert_str_eq(ffsl.s.format, "+w:3");
  ck_assert_str_eq(ffsl.s.children[0]->format, "+w:2");
  ck_assert_str_eq(ffsl.s.children[0]->children[0]->format, "f");
  col pkv = col_read(r, field_id(&x, "pkv"));
  ck_assert_str_eq(pkv.s.format, "+s");
  ck_assert_str_eq(pkv.s.children[1]->name, "s");
  col bf = col_read(r, field_id(&x, "bf"));
  ck_assert_str_eq(bf.s.format, "+w:2");
  ck_assert_str_eq(bf.s.children[0]->format, "w:2");
  int32_t ml;
  const char *ext = bri_arrow_metadata_get(bf.s.children[0]->metadata, "ARROW:extension:name", &ml);
  ck_assert(ext && ml == 14 && !memcmp(ext, "lance.bfloat16", 14));
  for (int i = 0; i < 12; i++) {
    char want[128];
    ffsl_want(i, want, sizeof(want));
    assert_row(&ffsl, i, want, "ffsl");
    snprintf(want, sizeof(want), "{a:%d,s:\"%.*s%d\"}", -i, i % 4, "sss", i);
    assert_row(&pkv, i, want, "pkv");
    if (i == 7)
      snprintf(want, sizeof(want), "null");
    else if (i % 3 == 1)
      snprintf(want, sizeof(want), "<0x%02x%02x,null>", i, i + 1);
    else
      snprintf(want, sizeof(want), "<0x%02x%02x,0x%02x%02x>", i, i + 1, 2 * i, 2 * i + 1);
    assert_row(&bf, i, want, "bf");
  }
  col_dispose(&ffsl);
  col_dispose(&pkv);
  col_dispose(&bf);
  bri_fragment_close(r);
  fx_close(&x);
}
END_TEST

/* ---- blob22: Blob v2 descriptors ------------------------------------------------------- */
static const int BLOB_SIZES[8] = {0, -1, 10, 16, 17, 300, 1024, 1025};

typedef struct desc {
  int valid;
  uint8_t kind;
  uint64_t position, size;
  uint32_t blob_id;
  int uri_len;
} desc;

static desc desc_at(const struct ArrowSchema *s, const struct ArrowArray *a, int64_t i) {
  desc d = {0};
  ck_assert_str_eq(s->format, "+s");
  ck_assert_int_eq(s->n_children, 5);
  static const char *const names[5] = {"kind", "position", "size", "blob_id", "blob_uri"};
  static const char *const fmts[5] = {"C", "L", "L", "I", "u"};
  for (int c = 0; c < 5; c++) {
    ck_assert_str_eq(s->children[c]->name, names[c]);
    ck_assert_str_eq(s->children[c]->format, fmts[c]);
  }
  int32_t len;
  const char *ext = bri_arrow_metadata_get(s->metadata, "ARROW:extension:name", &len);
  ck_assert_ptr_nonnull(ext);
  ck_assert(len == 13 && !memcmp(ext, "lance.blob.v2", 13));
  d.valid = valid_at(a, i);
  d.kind = ((const uint8_t *)a->children[0]->buffers[1])[i];
  d.position = ((const uint64_t *)a->children[1]->buffers[1])[i];
  d.size = ((const uint64_t *)a->children[2]->buffers[1])[i];
  d.blob_id = ((const uint32_t *)a->children[3]->buffers[1])[i];
  const int32_t *uo = a->children[4]->buffers[1];
  d.uri_len = uo[i + 1] - uo[i];
  return d;
}

/* Checks a descriptor against payload(seed, size) of make_fixtures.mjs and
 * reads the payload bytes where they live. */
static void check_blob(const fx *x, bri_fragment_reader *r, int32_t fid, desc d, int seed, int size,
                       const char *what) {
  if (size < 0) {
    ck_assert_msg(!d.valid, "%s: want null", what);
    return;
  }
  ck_assert_msg(d.valid, "%s: null", what);
  int kind = size <= 16 ? 0 : size <= 1024 ? 1 : 2;
  ck_assert_msg(d.kind == kind, "%s: kind %u, want %d", what, d.kind, kind);
  ck_assert_msg(d.size == (uint64_t)size, "%s: size %" PRIu64 ", want %d", what, d.size, size);
  ck_assert_int_eq(d.uri_len, 0);
  if (!size) return;
  uint8_t *buf = NULL;
  bri_error err = {0};
  if (kind == 0) {
    ck_assert_uint_eq(d.blob_id, 0);
    bri_datafile *df = bri_fragment_field_file(r, fid);
    ck_assert_ptr_nonnull(df);
    ck_assert_msg(bri_datafile_read(df, d.position, d.size, &buf, &err) == 0, "%s", err.msg);
  } else {
    ck_assert_uint_gt(d.blob_id, 0);
    char *dir = NULL, name[BRI_BLOB_NAME_LEN];
    ck_assert_int_eq(bri_table_sidecar_dir(x->t, x->m->pb, bri_fragment_field_datafile(r, fid), &dir, &err), 0);
    bri_blob_file_name(d.blob_id, name);
    char *p = bri_path_join(dir, name);
    size_t len;
    uint8_t *all = bri_slurp(p, &len);
    if (kind == 2) ck_assert_uint_eq(len, d.size);
    ck_assert_uint_le(d.position + d.size, len);
    buf = malloc(d.size);
    memcpy(buf, all + d.position, d.size);
    free(all);
    free(p);
    free(dir);
  }
  for (int j = 0; j < size; j++)
    ck_assert_msg(buf[j] == (uint8_t)(seed * 31 + j * 7), "%s: payload byte %d", what, j);
  free(buf);
}

START_TEST(blob22_descriptors_and_payloads) {
  fx x = fx_open("reader/blob22.lance");
  int32_t blob_id = field_id(&x, "blob"), stb = path_id(&x, "st.b"), lbi = path_id(&x, "lb.item");
  for (size_t fi = 0; fi < 2; fi++) {
    bri_fragment_reader *r = frag_open(&x, fi);
    int ids[8], n = 0;
    for (int i = (int)fi * 8; i < (int)fi * 8 + 8; i++)
      if (i != 3) ids[n++] = i;
    ck_assert_uint_eq(bri_fragment_num_rows(r), (uint64_t)n);
    col b = col_read(r, blob_id), st = col_read(r, field_id(&x, "st")), lb = col_read(r, field_id(&x, "lb"));
    ck_assert_ptr_eq(bri_fragment_field_datafile(r, blob_id), bri_fragment_field_datafile(r, stb));
    for (int k = 0; k < n; k++) {
      int i = ids[k];
      char what[64];
      snprintf(what, sizeof(what), "blob id %d", i);
      check_blob(&x, r, blob_id, desc_at(&b.s, &b.a, k), i, BLOB_SIZES[i % 8], what);
      /* st: null when i % 8 == 6, else {a: i, b: payload(i + 100, ...)} */
      ck_assert_int_eq(valid_at(&st.a, k), i % 8 != 6);
      if (i % 8 != 6) {
        ck_assert_int_eq(((const int32_t *)st.a.children[0]->buffers[1])[k], i);
        snprintf(what, sizeof(what), "st.b id %d", i);
        check_blob(&x, r, stb, desc_at(st.s.children[1], st.a.children[1], k), i + 100,
                   BLOB_SIZES[(i + 3) % 8], what);
      }
      /* lb: null when i % 8 == 7, [] when i % 8 == 2, else two blobs */
      ck_assert_int_eq(valid_at(&lb.a, k), i % 8 != 7);
      const int32_t *o = lb.a.buffers[1];
      int want_len = i % 8 == 7 || i % 8 == 2 ? 0 : 2;
      ck_assert_int_eq(o[k + 1] - o[k], want_len);
      for (int e = 0; e < want_len; e++) {
        snprintf(what, sizeof(what), "lb id %d item %d", i, e);
        check_blob(&x, r, lbi, desc_at(lb.s.children[0], lb.a.children[0], o[k] + e),
                   e ? i + 300 : i + 200, e ? 5 : BLOB_SIZES[(i + 5) % 8], what);
      }
    }
    col_dispose(&b);
    col_dispose(&st);
    col_dispose(&lb);
    bri_fragment_close(r);
  }
  fx_close(&x);
}
END_TEST

/* ---- legacy21: blob v1 payloads ------------------------------------------------------------ */
/* A top-level Blob v2 field's column, decoded page by page with the rows
 * the fragment deleted dropped, holds the descriptors reading the field
 * gives (the compaction survey reads it so); nested fields are refused. */
START_TEST(blob22_leaf_column) {
  fx x = fx_open("reader/blob22.lance");
  int32_t blob_id = field_id(&x, "blob");
  bri_error err = {0};
  for (size_t fi = 0; fi < 2; fi++) {
    bri_fragment_reader *r = frag_open(&x, fi);
    col b = col_read(r, blob_id);
    bri_datafile *df;
    size_t c;
    bri_leaf_type t;
    ck_assert_msg(bri_fragment_leaf_column(r, blob_id, &df, &c, &t, &err) == 0, "%s", err.msg);
    ck_assert_ptr_eq(df, bri_fragment_field_file(r, blob_id));
    const bri_column *column = bri_datafile_column(df, c);
    const uint32_t *vis = bri_fragment_row_offsets(r);
    uint64_t k = 0, row = 0;
    for (size_t p = 0; p < column->n_pages; p++) {
      bri_leaf_page lp;
      ck_assert_msg(bri_page_decode(df, c, p, &t, &lp, &err) == 0, "%s", err.msg);
      for (uint64_t i = 0; i < lp.values.n; i++, row++) {
        if (k == bri_fragment_num_rows(r) || vis[k] != row) continue;
        desc d = desc_at(&b.s, &b.a, (int64_t)k++);
        if (!d.valid) continue;
        ck_assert_uint_eq(((const uint8_t *)lp.values.children[0].data)[i], d.kind);
        ck_assert_uint_eq(((const uint64_t *)lp.values.children[1].data)[i], d.position);
        ck_assert_uint_eq(((const uint64_t *)lp.values.children[2].data)[i], d.size);
        ck_assert_uint_eq(((const uint32_t *)lp.values.children[3].data)[i], d.blob_id);
      }
      bri_leaf_page_dispose(&lp);
    }
    ck_assert_uint_eq(k, bri_fragment_num_rows(r));
    if (fi == 0) ck_assert_uint_lt(k, row); /* its row 3 was deleted */
    ck_assert_int_eq(bri_fragment_leaf_column(r, field_id(&x, "st"), &df, &c, &t, &err), BRI_EINVAL);
    ck_assert_int_eq(bri_fragment_leaf_column(r, field_id(&x, "lb"), &df, &c, &t, &err), BRI_EINVAL);
    ck_assert_int_eq(bri_fragment_leaf_column(r, 9999, &df, &c, &t, &err), BRI_ENOTFOUND);
    col_dispose(&b);
    bri_fragment_close(r);
  }
  fx_close(&x);
}
END_TEST

START_TEST(legacy21_payloads) {
  fx x = fx_open("reader/legacy21.lance");
  bri_fragment_reader *r = frag_open(&x, 0);
  col c = col_read(r, field_id(&x, "pay"));
  ck_assert_str_eq(c.s.format, "Z");
  static const int sizes[8] = {0, -1, 100, 3000, 1, -1, 2000, 3};
  ck_assert_int_eq(c.a.length, 8);
  ck_assert_int_eq(c.a.null_count, 2);
  for (int i = 0; i < 8; i++) {
    ck_assert_int_eq(valid_at(&c.a, i), sizes[i] >= 0);
    uint8_t want[3000];
    for (int j = 0; j < sizes[i]; j++) want[j] = (uint8_t)(i * 31 + j * 7);
    check_bytes(&c, i, want, sizes[i] > 0 ? (size_t)sizes[i] : 0, "pay");
  }
  col_dispose(&c);
  /* A fixed-width packed struct (MiniBlock PackedStruct) and nested FSL in 2.1. */
  col pk = col_read(r, field_id(&x, "pk"));
  col ffsl = col_read(r, field_id(&x, "ffsl"));
  for (int i = 0; i < 8; i++) {
    char want[128];
    snprintf(want, sizeof(want), "{a:%d,b:%g}", i * 3, i / 4.0);
    assert_row(&pk, i, want, "pk");
    ffsl_want(i, want, sizeof(want));
    assert_row(&ffsl, i, want, "ffsl");
  }
  col_dispose(&pk);
  col_dispose(&ffsl);
  bri_fragment_close(r);
  fx_close(&x);
}
END_TEST

/* ---- multipage22 ------------------------------------------------------------------------------- */
static const char *const PATTERN[9] = {"[1,2]", "null", "[]", "[null,4]", "[5]", "[6,null,7]", "null", "[]", "[8]"};

static void multipage_want(int64_t i, char *buf, size_t cap) {
  if (i < 34000)
    snprintf(buf, cap, "[%d,5]", (int)(i % 16));
  else
    snprintf(buf, cap, "%s", PATTERN[i % 9]);
}

START_TEST(multipage22_pages_and_slices) {
  fx x = fx_open("reader/multipage22.lance");
  bri_fragment_reader *r = frag_open(&x, 0);
  uint64_t n = bri_fragment_num_rows(r);
  ck_assert_uint_eq(n, 39355);
  const uint32_t *off = bri_fragment_row_offsets(r);
  uint64_t k = 0;
  for (uint32_t i = 0; i < 40000; i++) {
    bool deleted = i % 1000 == 999 || (i >= 30000 && i < 30600) || i < 5;
    if (!deleted) ck_assert_uint_eq(off[k++], i);
  }
  ck_assert_uint_eq(k, n);
  int32_t lid = field_id(&x, "l");
  col l = col_read(r, lid);
  char want[32];
  for (uint64_t j = 0; j < n; j++) {
    multipage_want(off[j], want, sizeof(want));
    assert_row(&l, (int64_t)j, want, "l");
  }
  col_dispose(&l);
  /* Slices around the page boundary (physical row 34000), the deleted range
   * and both ends; every page outside a slice is skipped undecoded. */
  uint64_t b = 0;
  while (off[b] < 34000) b++;
  uint64_t starts[] = {0, b - 3, b, b - 1, 29990, n - 7, n / 2};
  uint64_t counts[] = {10, 6, 1, 2, 30, 7, 1};
  bri_error err = {0};
  for (size_t t = 0; t < sizeof(starts) / sizeof(starts[0]); t++) {
    col s;
    ck_assert_msg(bri_fragment_read_rows(r, lid, starts[t], counts[t], &s.a, &s.s, &err) == 0, "%s", err.msg);
    validate(&s.s, &s.a);
    ck_assert_int_eq(s.a.length, (int64_t)counts[t]);
    for (uint64_t j = 0; j < counts[t]; j++) {
      multipage_want(off[starts[t] + j], want, sizeof(want));
      assert_row(&s, (int64_t)j, want, "l slice");
    }
    col_dispose(&s);
  }
  bri_fragment_close(r);
  fx_close(&x);
}
END_TEST

/* ---- errors --------------------------------------------------------------------------------------- */
START_TEST(open_errors) {
  fx x = fx_open("reader/nested22.lance");
  bri_error err = {0};
  bri_fragment_reader *r = NULL;
  Lance__Table__DataFragment *f = x.m->pb->fragments[0];
  f->physical_rows = 99;
  ck_assert_int_eq(bri_fragment_open(x.t, x.m, f, &r, &err), BRI_ECORRUPT);
  ck_assert_ptr_null(r);
  ck_assert_msg(strstr(err.msg, "data file holds 9 rows but fragment 0 has 99 physical rows"), "%s", err.msg);
  fx_close(&x);

  /* A deletion file that is gone: the error names it. */
  char *tmp = bri_tmpdir();
  char *src = bri_fixture("reader/nested22.lance");
  char *dst = bri_path_join(tmp, "t.lance");
  bri_copytree(src, dst);
  bri_table *t;
  bri_manifest *m;
  ck_assert_int_eq(bri_table_open(dst, &t, &err), 0);
  ck_assert_int_eq(bri_table_load(t, 0, &m, &err), 0);
  char *dpath = NULL;
  ck_assert_int_eq(bri_table_deletion_path(t, m->pb, m->pb->fragments[0], &dpath, &err), 0);
  ck_assert_int_eq(unlink(dpath), 0);
  ck_assert_int_ne(bri_fragment_open(t, m, m->pb->fragments[0], &r, &err), 0);
  ck_assert_msg(strstr(err.msg, dpath), "%s", err.msg);
  /* A missing data file. */
  char *dfp = NULL;
  ck_assert_int_eq(bri_table_datafile_path(t, m->pb, m->pb->fragments[1]->files[0], &dfp, &err), 0);
  ck_assert_int_eq(unlink(dfp), 0);
  ck_assert_int_ne(bri_fragment_open(t, m, m->pb->fragments[1], &r, &err), 0);
  ck_assert_msg(strstr(err.msg, dfp), "%s", err.msg);
  free(dfp);
  free(dpath);
  bri_manifest_free(m);
  bri_table_close(t);
  bri_rmtree(tmp);
  free(tmp);
  free(src);
  free(dst);
}
END_TEST

START_TEST(schema_errors) {
  fx x = fx_open("reader/nested22.lance");
  bri_fragment_reader *r = frag_open(&x, 0);
  bri_error err = {0};
  col c;
  Lance__File__Field *idf = x.m->pb->fields[bri_field_index(x.m->pb->fields, x.m->pb->n_fields, field_id(&x, "id"))];
  char *saved = idf->logical_type;
  idf->logical_type = "int32";
  ck_assert_int_eq(bri_fragment_read_field(r, idf->id, &c.a, &c.s, &err), BRI_EUNSUPPORTED);
  ck_assert_msg(strstr(err.msg, "\"int32\" in the manifest but \"int64\" in the data file"), "%s", err.msg);
  idf->logical_type = "fancy:thing";
  ck_assert_int_eq(bri_fragment_read_field(r, idf->id, &c.a, &c.s, &err), BRI_EUNSUPPORTED);
  ck_assert_msg(strstr(err.msg, "logical type \"fancy:thing\""), "%s", err.msg);
  idf->logical_type = saved;
  ck_assert_ptr_null(c.a.release);
  /* A list whose item field disappeared from the manifest. */
  Lance__File__Field *item = x.m->pb->fields[bri_field_index(x.m->pb->fields, x.m->pb->n_fields, path_id(&x, "l.item"))];
  int32_t parent = item->parent_id;
  item->parent_id = 12345;
  ck_assert_int_eq(bri_fragment_read_field(r, field_id(&x, "l"), &c.a, &c.s, &err), BRI_ECORRUPT);
  ck_assert_msg(strstr(err.msg, "has 0 child fields, expected 1"), "%s", err.msg);
  item->parent_id = parent;
  /* A column index past the file's columns. */
  Lance__Table__DataFile *df = x.m->pb->fragments[0]->files[0];
  size_t j = 0;
  while (j < df->n_fields && df->fields[j] != path_id(&x, "l.item")) j++;
  ck_assert_uint_lt(j, df->n_fields);
  int32_t ci = df->column_indices[j];
  df->column_indices[j] = 77;
  ck_assert_int_eq(bri_fragment_read_field(r, field_id(&x, "l"), &c.a, &c.s, &err), BRI_ECORRUPT);
  ck_assert_msg(strstr(err.msg, "is column 77 but the file has"), "%s", err.msg);
  /* Pointing the column at another field's column: layers do not fit. */
  df->column_indices[j] = 0;
  ck_assert_int_eq(bri_fragment_read_field(r, field_id(&x, "l"), &c.a, &c.s, &err), BRI_ECORRUPT);
  ck_assert_msg(strstr(err.msg, "rep/def layers") || strstr(err.msg, "value kind") || strstr(err.msg, "bits"),
                "%s", err.msg);
  df->column_indices[j] = ci;
  col ok = col_read(r, field_id(&x, "l"));
  col_dispose(&ok);
  bri_fragment_close(r);
  fx_close(&x);
}
END_TEST

/* Damaged page bytes give errors or (for value bytes) other values, never a
 * crash, a leak or an out-of-bounds access (run under ASan). */
START_TEST(damaged_data_files_never_crash) {
  const char *tables[] = {"reader/types22.lance", "reader/nested22.lance", "reader/blob22.lance"};
  uint32_t seed = 12345;
  int failures = 0, reads = 0;
  for (size_t t = 0; t < 3; t++) {
    char *tmp = bri_tmpdir();
    char *src = bri_fixture(tables[t]);
    char *dst = bri_path_join(tmp, "t.lance");
    bri_copytree(src, dst);
    fx x = {0};
    bri_error err = {0};
    ck_assert_int_eq(bri_table_open(dst, &x.t, &err), 0);
    ck_assert_int_eq(bri_table_load(x.t, 0, &x.m, &err), 0);
    char *dfp = NULL;
    ck_assert_int_eq(bri_table_datafile_path(x.t, x.m->pb, x.m->pb->fragments[0]->files[0], &dfp, &err), 0);
    size_t len;
    uint8_t *orig = bri_slurp(dfp, &len);
    /* Page data sits before the schema (global buffer 0); damage only there
     * so that the container still opens and pages get decoded. */
    bri_datafile *df;
    ck_assert_int_eq(bri_datafile_open(NULL, dfp, &df, &err), 0);
    uint64_t gpos, gsize;
    bri_datafile_global_buffer(df, 0, &gpos, &gsize);
    bri_datafile_close(df);
    for (int it = 0; it < 60; it++) {
      uint8_t *img = malloc(len);
      memcpy(img, orig, len);
      int flips = 1 + it % 4;
      for (int k = 0; k < flips; k++) {
        seed = seed * 1103515245u + 12345u;
        size_t at = (seed >> 8) % gpos;
        img[at] ^= (uint8_t)(1u << ((seed >> 4) & 7));
      }
      bri_write_bytes(dfp, img, len);
      free(img);
      bri_fragment_reader *r = NULL;
      if (bri_fragment_open(x.t, x.m, x.m->pb->fragments[0], &r, &err)) {
        failures++;
        continue;
      }
      for (size_t fi = 0; fi < x.m->pb->n_fields; fi++) {
        if (x.m->pb->fields[fi]->parent_id != -1) continue;
        col c;
        reads++;
        if (bri_fragment_read_field(r, x.m->pb->fields[fi]->id, &c.a, &c.s, &err)) {
          failures++;
          ck_assert_ptr_null(c.a.release);
          ck_assert(err.msg[0]);
          continue;
        }
        validate(&c.s, &c.a);
        col_dispose(&c);
      }
      bri_fragment_close(r);
    }
    free(orig);
    free(dfp);
    fx_close(&x);
    bri_rmtree(tmp);
    free(tmp);
    free(src);
    free(dst);
  }
  ck_assert_int_gt(reads, 0);
  ck_assert_int_gt(failures, 0);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("reader");
  TCase *tc = tcase_create("assemble");
  tcase_add_test(tc, asm_list_nullable_items);
  tcase_add_test(tc, asm_list_row_filter_and_pages);
  tcase_add_test(tc, asm_list_of_lists);
  tcase_add_test(tc, asm_struct_above_list);
  tcase_add_test(tc, asm_list_of_structs);
  tcase_add_test(tc, asm_struct_and_flat);
  tcase_add_test(tc, asm_hostile_levels);
  tcase_add_test(tc, bitbuf_lazy_and_runs);
  tcase_add_test(tc, metadata_encoding);
  suite_add_tcase(s, tc);
  tc = tcase_create("tables");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, nested22_values);
  tcase_add_test(tc, nested21_values);
  tcase_add_test(tc, nested22_schema_and_files);
  tcase_add_test(tc, nested22_row_slices);
  tcase_add_test(tc, open_fields_reads_only_those);
  tcase_add_test(tc, missing_fields_read_as_null);
  tcase_add_test(tc, types22_values);
  tcase_add_test(tc, wide22_fullzip);
  tcase_add_test(tc, blob22_descriptors_and_payloads);
  tcase_add_test(tc, blob22_leaf_column);
  tcase_add_test(tc, legacy21_payloads);
  tcase_add_test(tc, multipage22_pages_and_slices);
  tcase_add_test(tc, open_errors);
  tcase_add_test(tc, schema_errors);
  tcase_add_test(tc, damaged_data_files_never_crash);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(suite)
