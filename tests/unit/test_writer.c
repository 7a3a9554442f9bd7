/* test_writer.c: brid's data file writer and page copy, without LanceDB.
 *
 * Files are written from hand-built Arrow C Data arrays, then read back with
 * the read side (bri_datafile_open + bri_page_decode) and compared value by
 * value and level by level: the level streams of docs/format/file.md section 2 are
 * the test vectors, and the chunk and page bytes of docs/format/examples.md
 * sections 2, 4 and 13 must come out byte for byte. Container invariants are
 * checked on the raw bytes (64-byte alignment, 0x48 padding, GB0 right after
 * the last buffer, CMO/GBO/footer positions, the column encoding Any). Also:
 * O_EXCL, removal of partial files, page cutting and priorities, Blob v2
 * Inline payloads, dictionary fields, page copy and each refusal reason, and
 * the encoder's input checks. tests/interop/test_write_roundtrip.sh checks the
 * same writer against LanceDB itself. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "google/protobuf/any.pb-c.h"
#include "lance/encoding/enc_page.h"
#include "lance/encoding/general.h"
#include "lance/encoding/page.h"
#include "lance/file/datafile.h"
#include "lance/file/pagecopy.h"
#include "lance/file/writer.h"
#include "testutil.h"
#include "util/fsutil.h"

/* ---- hand-built Arrow arrays (freed together) ------------------------------------ */

#define POOL 4096
static void *pool[POOL];
static size_t npool;

static void *keep(void *p) {
  ck_assert_ptr_nonnull(p);
  ck_assert_uint_lt(npool, POOL);
  pool[npool++] = p;
  return p;
}
static void pool_free(void) {
  while (npool) free(pool[--npool]);
}

/* Validity bitmap from "1101..." (NULL = all valid); *nulls receives the count. */
static const uint8_t *bits(const char *s, int64_t *nulls) {
  *nulls = 0;
  if (!s) return NULL;
  size_t n = strlen(s);
  uint8_t *b = keep(calloc((n + 7) / 8 + 1, 1));
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '1') b[i / 8] |= (uint8_t)(1u << (i % 8));
    else (*nulls)++;
  }
  return b;
}

static struct ArrowArray *arr(int64_t len, const char *valid, int nb, const void *b1, const void *b2,
                              int nk, struct ArrowArray **kids) {
  struct ArrowArray *a = keep(calloc(1, sizeof *a));
  const void **bufs = keep(calloc(3, sizeof *bufs));
  a->length = len;
  bufs[0] = bits(valid, &a->null_count);
  bufs[1] = b1;
  bufs[2] = b2;
  a->n_buffers = nb;
  a->buffers = bufs;
  a->n_children = nk;
  if (nk) {
    struct ArrowArray **k = keep(calloc((size_t)nk, sizeof *k));
    for (int i = 0; i < nk; i++) k[i] = kids[i];
    a->children = k;
  }
  return a;
}
static void *dup_mem(const void *p, size_t n) { return memcpy(keep(malloc(n ? n : 1)), p, n); }
#define PRIM(len, valid, T, ...) \
  arr(len, valid, 2, dup_mem((T[]){__VA_ARGS__}, sizeof((T[]){__VA_ARGS__})), NULL, 0, NULL)
#define OFFS(...) dup_mem((int32_t[]){__VA_ARGS__}, sizeof((int32_t[]){__VA_ARGS__}))
static struct ArrowArray *utf8(int64_t len, const char *valid, const int32_t *off, const char *data) {
  return arr(len, valid, 3, off, dup_mem(data, strlen(data)), 0, NULL);
}
static struct ArrowArray *list(int64_t len, const char *valid, const int32_t *off,
                               struct ArrowArray *child) {
  return arr(len, valid, 2, off, NULL, 1, &child);
}
static struct ArrowArray *strct(int64_t len, const char *valid, int nk, ...) {
  struct ArrowArray *kids[8];
  va_list ap;
  va_start(ap, nk);
  for (int i = 0; i < nk; i++) kids[i] = va_arg(ap, struct ArrowArray *);
  va_end(ap);
  return arr(len, valid, 1, NULL, NULL, nk, kids);
}

/* ---- fields ----------------------------------------------------------------------- */

static Lance__File__Field fields_store[64];
static Lance__File__Field *fields[64];
static size_t nfields;

static void fields_reset(void) { nfields = 0; }
static Lance__File__Field *fld(const char *name, int32_t id, int32_t parent, const char *lt,
                               bool nullable) {
  Lance__File__Field *f = &fields_store[nfields];
  lance__file__field__init(f);
  f->name = (char *)name;
  f->has_id = id != 0;
  f->id = id;
  f->has_parent_id = 1;
  f->parent_id = parent;
  f->logical_type = (char *)lt;
  f->has_nullable = nullable;
  f->nullable = nullable;
  fields[nfields] = f;
  nfields++;
  return f;
}
static Lance__File__Field__MetadataEntry meta_store[16];
static Lance__File__Field__MetadataEntry *meta_ptrs[16];
static size_t nmeta;
static void add_meta(Lance__File__Field *f, const char *k, const char *v) {
  Lance__File__Field__MetadataEntry *e = &meta_store[nmeta];
  lance__file__field__metadata_entry__init(e);
  e->key = (char *)k;
  e->has_value = 1;
  e->value.data = (uint8_t *)v;
  e->value.len = strlen(v);
  meta_ptrs[nmeta] = e;
  if (!f->n_metadata) f->metadata = &meta_ptrs[nmeta];
  f->n_metadata++;
  nmeta++;
}

/* ---- writing and reading back -------------------------------------------------------- */

static char *tmpdir;
static void setup(void) {
  tmpdir = bri_tmpdir();
  fields_reset();
  nmeta = 0;
}
static void teardown(void) {
  pool_free();
  bri_rmtree(tmpdir);
  free(tmpdir);
}

static char *tpath(const char *name) { return bri_path_join(tmpdir, name); }

/* Writes one batch of arrays (one per top-level field) to a new file. */
static void write_file(const char *path, uint16_t minor, const bri_file_writer_options *opt,
                       struct ArrowArray **arrays, size_t n, bri_file_result *res) {
  bri_file_writer *w;
  bri_error err;
  ck_assert_msg(bri_file_writer_open(NULL, path, minor, fields, nfields, opt, &w, &err) == 0, "%s",
                err.msg);
  ck_assert_msg(bri_file_writer_append(w, (const struct ArrowArray *const *)arrays, n, NULL, NULL,
                                       &err) == 0,
                "%s", err.msg);
  ck_assert_msg(bri_file_writer_finish(w, res, &err) == 0, "%s", err.msg);
  bri_file_writer_free(w);
}

static void decode(bri_datafile *df, size_t col, size_t page, const bri_leaf_type *t,
                   bri_leaf_page *lp) {
  bri_error err;
  ck_assert_msg(bri_page_decode(df, col, page, t, lp, &err) == 0, "%s", err.msg);
}

static void check_u16(const uint16_t *got, const uint16_t *want, size_t n, const char *what) {
  ck_assert_ptr_nonnull(got);
  for (size_t i = 0; i < n; i++)
    ck_assert_msg(got[i] == want[i], "%s[%zu] = %u, expected %u", what, i, got[i], want[i]);
}

static const bri_leaf_type I32 = {.kind = BRI_LEAF_FIXED, .bits = 32};
static const bri_leaf_type I64 = {.kind = BRI_LEAF_FIXED, .bits = 64};
static const bri_leaf_type VAR = {.kind = BRI_LEAF_VARIABLE};

/* ---- docs/format/file.md section 2 level vectors ---------------------------------------------- */

/* list<int32?>?: [1,2], null, [], [null,4], [5], [6,null,7], null, [], [8]
 * = docs/format/examples.md section 4, byte for byte. */
/* Every column's metadata in d is, byte for byte, what protobuf-c packs for
 * the message it decodes to (the writer encodes it directly). */
static void metadata_packs_as_protobuf(bri_datafile *d) {
  bri_error err;
  for (size_t c = 0; c < bri_datafile_num_columns(d); c++) {
    const bri_column *col = bri_datafile_column(d, c);
    uint8_t *raw;
    ck_assert_int_eq(bri_datafile_read(d, col->metadata_offset, col->metadata_size, &raw, &err), 0);
    const Lance__File__V2__ColumnMetadata *cm = bri_datafile_column_metadata(d, c);
    ck_assert_ptr_nonnull(cm);
    size_t n = protobuf_c_message_get_packed_size(&cm->base);
    ck_assert_uint_eq(n, col->metadata_size);
    uint8_t *b = malloc(n);
    protobuf_c_message_pack(&cm->base, b);
    ck_assert_mem_eq(b, raw, n);
    free(b), free(raw);
  }
}

START_TEST(test_levels_list_nullable_items) {
  fld("l", 0, -1, "list", true);
  fld("item", 1, 0, "int32", true);
  struct ArrowArray *items = PRIM(9, "110111011", int32_t, 1, 2, 0, 4, 5, 6, 0, 7, 8);
  struct ArrowArray *l = list(9, "101111011", OFFS(0, 2, 2, 2, 4, 5, 8, 8, 8, 9), items);
  char *p = tpath("l.lance");
  bri_file_result res;
  write_file(p, 2, NULL, &l, 1, &res);
  ck_assert_uint_eq(res.n_columns, 1);
  ck_assert_int_eq(res.fields[0], 1); /* only the leaf owns a column */
  bri_datafile *df;
  bri_error err;
  ck_assert_msg(bri_datafile_open(NULL, p, &df, &err) == 0, "%s", err.msg);
  bri_leaf_page lp;
  decode(df, 0, 0, &I32, &lp);
  ck_assert_uint_eq(lp.n_levels, 13);
  ck_assert_uint_eq(lp.n_layers, 2);
  ck_assert_uint_eq(lp.layers[0], BRI_LAYER_NULLABLE_ITEM);
  ck_assert_uint_eq(lp.layers[1], BRI_LAYER_NULL_AND_EMPTY_LIST);
  check_u16(lp.rep, (uint16_t[]){1, 0, 1, 1, 1, 0, 1, 1, 0, 0, 1, 1, 1}, 13, "rep");
  check_u16(lp.def, (uint16_t[]){0, 0, 2, 3, 1, 0, 0, 0, 1, 0, 2, 3, 0}, 13, "def");
  ck_assert_uint_eq(lp.values.n, 9);
  static const int32_t slots[9] = {1, 2, 0, 4, 5, 6, 0, 7, 8};
  ck_assert_mem_eq(lp.values.data, slots, sizeof slots);
  bri_leaf_page_dispose(&lp);
  /* docs/format/examples.md section 4: metadata word, the 120-byte chunk, the rep index */
  const bri_page *pg = &bri_datafile_column(df, 0)->pages[0];
  ck_assert_uint_eq(pg->n_buffers, 3);
  uint8_t *meta, *chunk, *ri;
  ck_assert_int_eq(bri_datafile_read(df, pg->buffer_offsets[0], pg->buffer_sizes[0], &meta, &err), 0);
  ck_assert_int_eq(bri_datafile_read(df, pg->buffer_offsets[1], pg->buffer_sizes[1], &chunk, &err), 0);
  ck_assert_int_eq(bri_datafile_read(df, pg->buffer_offsets[2], pg->buffer_sizes[2], &ri, &err), 0);
  static const uint8_t want_meta[4] = {0xe0, 0, 0, 0};
  ck_assert_uint_eq(pg->buffer_sizes[0], 4);
  ck_assert_mem_eq(meta, want_meta, 4);
  static const uint8_t want_chunk[120] = {
      0x0d, 0, 0x1a, 0, 0x1a, 0, 0x24, 0, 0, 0, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe,
      1, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0,
      0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe,
      0, 0, 0, 0, 2, 0, 3, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 3, 0, 0, 0,
      0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe,
      1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0,
      7, 0, 0, 0, 8, 0, 0, 0, 0xfe, 0xfe, 0xfe, 0xfe};
  ck_assert_uint_eq(pg->buffer_sizes[1], 120);
  ck_assert_mem_eq(chunk, want_chunk, 120);
  static const uint8_t want_ri[16] = {9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  ck_assert_uint_eq(pg->buffer_sizes[2], 16);
  ck_assert_mem_eq(ri, want_ri, 16);
  free(meta), free(chunk), free(ri);
  bri_file_result_dispose(&res);
  bri_datafile_close(df);
  free(p);
}
END_TEST

/* list<int32> without nulls, with empties: [1], [], [2,3], [], [4] */
START_TEST(test_levels_emptyable_list) {
  fld("l", 0, -1, "list", false);
  fld("item", 1, 0, "int32", false);
  struct ArrowArray *items = PRIM(4, NULL, int32_t, 1, 2, 3, 4);
  struct ArrowArray *l = list(5, NULL, OFFS(0, 1, 1, 3, 3, 4), items);
  char *p = tpath("e.lance");
  bri_file_result res;
  write_file(p, 1, NULL, &l, 1, &res);
  bri_datafile *df;
  bri_error err;
  ck_assert_msg(bri_datafile_open(NULL, p, &df, &err) == 0, "%s", err.msg);
  bri_leaf_page lp;
  decode(df, 0, 0, &I32, &lp);
  ck_assert_uint_eq(lp.layers[0], BRI_LAYER_ALL_VALID_ITEM);
  ck_assert_uint_eq(lp.layers[1], BRI_LAYER_EMPTYABLE_LIST);
  check_u16(lp.rep, (uint16_t[]){1, 1, 1, 0, 1, 1}, 6, "rep");
  check_u16(lp.def, (uint16_t[]){0, 1, 0, 0, 1, 0}, 6, "def");
  ck_assert_uint_eq(lp.values.n, 4);
  bri_leaf_page_dispose(&lp);
  bri_file_result_dispose(&res);
  bri_datafile_close(df);
  free(p);
}
END_TEST

/* struct<a:int32?, b:utf8?>?: {1,x}, null, {null,yy}, {3,null} */
START_TEST(test_levels_struct) {
  fld("s", 0, -1, "struct", true);
  fld("a", 1, 0, "int32", true);
  fld("b", 2, 0, "string", true);
  struct ArrowArray *a = PRIM(4, "1001", int32_t, 1, 0, 0, 3);
  struct ArrowArray *b = utf8(4, "1110", OFFS(0, 1, 1, 3, 3), "xyy");
  struct ArrowArray *s = strct(4, "1011", 2, a, b);
  char *p = tpath("s.lance");
  bri_file_result res;
  write_file(p, 2, NULL, &s, 1, &res);
  ck_assert_uint_eq(res.n_columns, 2);
  ck_assert_int_eq(res.fields[0], 1);
  ck_assert_int_eq(res.fields[1], 2);
  ck_assert_int_eq(res.column_indices[1], 1);
  bri_datafile *df;
  bri_error err;
  ck_assert_msg(bri_datafile_open(NULL, p, &df, &err) == 0, "%s", err.msg);
  bri_leaf_page lp;
  decode(df, 0, 0, &I32, &lp);
  ck_assert_ptr_null(lp.rep);
  ck_assert_uint_eq(lp.layers[0], BRI_LAYER_NULLABLE_ITEM);
  ck_assert_uint_eq(lp.layers[1], BRI_LAYER_NULLABLE_ITEM);
  check_u16(lp.def, (uint16_t[]){0, 2, 1, 0}, 4, "def a");
  ck_assert_uint_eq(lp.values.n, 4); /* one slot per row: no list above */
  ck_assert_int_eq(((int32_t *)lp.values.data)[3], 3);
  bri_leaf_page_dispose(&lp);
  decode(df, 1, 0, &VAR, &lp);
  check_u16(lp.def, (uint16_t[]){0, 2, 0, 1}, 4, "def b");
  ck_assert_int_eq(lp.values.offsets[3] - lp.values.offsets[2], 2);
  ck_assert_mem_eq(lp.values.data + lp.values.offsets[2], "yy", 2);
  bri_leaf_page_dispose(&lp);
  bri_file_result_dispose(&res);
  bri_datafile_close(df);
  free(p);
}
END_TEST

/* list<list<int32>?>?: [[1,2],[3]], null, [], [[],null,[4]], [[5]] */
START_TEST(test_levels_list_of_lists) {
  fld("ll", 0, -1, "list", true);
  fld("item", 1, 0, "list", true);
  fld("item", 2, 1, "int32", false);
  struct ArrowArray *v = PRIM(5, NULL, int32_t, 1, 2, 3, 4, 5);
  struct ArrowArray *inner = list(6, "111011", OFFS(0, 2, 3, 3, 3, 4, 5), v);
  struct ArrowArray *outer = list(5, "10111", OFFS(0, 2, 2, 2, 5, 6), inner);
  char *p = tpath("ll.lance");
  bri_file_result res;
  write_file(p, 2, NULL, &outer, 1, &res);
  ck_assert_int_eq(res.fields[0], 2);
  bri_datafile *df;
  bri_error err;
  ck_assert_msg(bri_datafile_open(NULL, p, &df, &err) == 0, "%s", err.msg);
  bri_leaf_page lp;
  decode(df, 0, 0, &I32, &lp);
  ck_assert_uint_eq(lp.n_layers, 3);
  ck_assert_uint_eq(lp.layers[0], BRI_LAYER_ALL_VALID_ITEM);
  ck_assert_uint_eq(lp.layers[1], BRI_LAYER_NULL_AND_EMPTY_LIST);
  ck_assert_uint_eq(lp.layers[2], BRI_LAYER_NULL_AND_EMPTY_LIST);
  check_u16(lp.rep, (uint16_t[]){2, 0, 1, 2, 2, 2, 1, 1, 2}, 9, "rep");
  check_u16(lp.def, (uint16_t[]){0, 0, 0, 3, 4, 2, 1, 0, 0}, 9, "def");
  ck_assert_uint_eq(lp.values.n, 5);
  bri_leaf_page_dispose(&lp);
  bri_file_result_dispose(&res);
  bri_datafile_close(df);
  free(p);
}
END_TEST

/* struct<l: list<int32?>?, k int64>?: {[1,2]}, null, {l:null}, {l:[]}, {[null]}, {[6]} */
START_TEST(test_levels_struct_over_list) {
  fld("s", 0, -1, "struct", true);
  fld("l", 1, 0, "list", true);
  fld("item", 2, 1, "int32", true);
  fld("k", 3, 0, "int64", false);
  struct ArrowArray *items = PRIM(4, "1101", int32_t, 1, 2, 0, 6);
  struct ArrowArray *l = list(6, "110111", OFFS(0, 2, 2, 2, 2, 3, 4), items);
  struct ArrowArray *k = PRIM(6, NULL, int64_t, 10, 11, 12, 13, 14, 15);
  struct ArrowArray *s = strct(6, "101111", 2, l, k);
  char *p = tpath("sl.lance");
  bri_file_result res;
  write_file(p, 2, NULL, &s, 1, &res);
  ck_assert_uint_eq(res.n_columns, 2);
  bri_datafile *df;
  bri_error err;
  ck_assert_msg(bri_datafile_open(NULL, p, &df, &err) == 0, "%s", err.msg);
  bri_leaf_page lp;
  decode(df, 0, 0, &I32, &lp);
  ck_assert_uint_eq(lp.layers[0], BRI_LAYER_NULLABLE_ITEM);
  ck_assert_uint_eq(lp.layers[1], BRI_LAYER_NULL_AND_EMPTY_LIST);
  ck_assert_uint_eq(lp.layers[2], BRI_LAYER_NULLABLE_ITEM);
  check_u16(lp.rep, (uint16_t[]){1, 0, 1, 1, 1, 1, 1}, 7, "rep");
  check_u16(lp.def, (uint16_t[]){0, 0, 4, 2, 3, 1, 0}, 7, "def");
  ck_assert_uint_eq(lp.values.n, 4);
  static const int32_t slots[4] = {1, 2, 0, 6};
  ck_assert_mem_eq(lp.values.data, slots, sizeof slots);
  bri_leaf_page_dispose(&lp);
  /* k: a visible null slot for the null struct */
  decode(df, 1, 0, &I64, &lp);
  check_u16(lp.def, (uint16_t[]){0, 1, 0, 0, 0, 0}, 6, "def k");
  ck_assert_int_eq(((int64_t *)lp.values.data)[1], 0);
  ck_assert_int_eq(((int64_t *)lp.values.data)[5], 15);
  bri_leaf_page_dispose(&lp);
  bri_file_result_dispose(&res);
  bri_datafile_close(df);
  free(p);
}
END_TEST

/* ---- container bytes ----------------------------------------------------------------------- */

/* docs/format/examples.md section 2: int64 1000..1999, one InlineBitpacking chunk. */
static void ids_file(const char *p, uint16_t minor, bri_file_result *res) {
  fld("id", 0, -1, "int64", false);
  int64_t *v = keep(malloc(1000 * sizeof *v));
  for (int i = 0; i < 1000; i++) v[i] = 1000 + i;
  struct ArrowArray *a = arr(1000, NULL, 2, v, NULL, 0, NULL);
  write_file(p, minor, NULL, &a, 1, res);
}

START_TEST(test_container_bytes) {
  char *p = tpath("ids.lance");
  bri_file_result res;
  ids_file(p, 2, &res);
  size_t len;
  uint8_t *b = bri_slurp(p, &len);
  ck_assert_uint_eq(len, res.file_size);
  ck_assert_uint_eq(res.num_rows, 1000);
  ck_assert_uint_eq(res.major, 2);
  ck_assert_uint_eq(res.minor, 2);
  /* footer */
  const uint8_t *f = b + len - 40;
  uint64_t cms, cmo, gbo;
  uint32_t ngb, ncol;
  uint16_t maj, min;
  memcpy(&cms, f, 8), memcpy(&cmo, f + 8, 8), memcpy(&gbo, f + 16, 8);
  memcpy(&ngb, f + 24, 4), memcpy(&ncol, f + 28, 4), memcpy(&maj, f + 32, 2), memcpy(&min, f + 34, 2);
  ck_assert_mem_eq(f + 36, "LANC", 4);
  ck_assert_uint_eq(ngb, 1);
  ck_assert_uint_eq(ncol, 1);
  ck_assert_uint_eq(maj, 2);
  ck_assert_uint_eq(min, 2);
  ck_assert_uint_eq(gbo, cmo + 16 * ncol);
  ck_assert_uint_eq(gbo + 16 * ngb, len - 40);
  uint64_t gb0_pos, gb0_size, c0_pos, c0_size;
  memcpy(&gb0_pos, b + gbo, 8), memcpy(&gb0_size, b + gbo + 8, 8);
  memcpy(&c0_pos, b + cmo, 8), memcpy(&c0_size, b + cmo + 8, 8);
  ck_assert_uint_eq(gb0_pos % 64, 0);
  ck_assert_uint_eq(gb0_pos + gb0_size, cms); /* column metadata right after GB0 */
  ck_assert_uint_eq(c0_pos, cms);
  ck_assert_uint_eq(c0_pos + c0_size, cmo);
  /* global buffer 0 */
  Lance__File__FileDescriptor *fd = lance__file__file_descriptor__unpack(NULL, gb0_size, b + gb0_pos);
  ck_assert_ptr_nonnull(fd);
  ck_assert_uint_eq(fd->length, 1000);
  ck_assert_uint_eq(fd->schema->n_fields, 1);
  ck_assert_str_eq(fd->schema->fields[0]->name, "id");
  ck_assert_int_eq(fd->schema->fields[0]->parent_id, -1);
  lance__file__file_descriptor__free_unpacked(fd, NULL);
  /* pages: 64-aligned buffers, 0x48 between them */
  bri_datafile *df;
  bri_error err;
  ck_assert_msg(bri_datafile_open(NULL, p, &df, &err) == 0, "%s", err.msg);
  const bri_page *pg = &bri_datafile_column(df, 0)->pages[0];
  ck_assert_uint_eq(pg->n_buffers, 2);
  ck_assert_uint_eq(pg->n_rows, 1000);
  ck_assert_uint_eq(pg->priority, 0);
  uint64_t end = 0;
  for (size_t i = 0; i < pg->n_buffers; i++) {
    ck_assert_uint_eq(pg->buffer_offsets[i] % 64, 0);
    for (uint64_t k = end; k < pg->buffer_offsets[i]; k++) ck_assert_uint_eq(b[k], 0x48);
    end = pg->buffer_offsets[i] + pg->buffer_sizes[i];
  }
  for (uint64_t k = end; k < gb0_pos; k++) ck_assert_uint_eq(b[k], 0x48);
  /* docs/format/examples.md section 2: encoding, metadata word, chunk start */
  static const uint8_t want_enc[] = {
      0x0a, 0x1d, '/', 'l', 'a', 'n', 'c', 'e', '.', 'e', 'n', 'c', 'o', 'd', 'i', 'n', 'g', 's',
      '2', '1', '.', 'P', 'a', 'g', 'e', 'L', 'a', 'y', 'o', 'u', 't', 0x12, 0x12, 0x0a, 0x10,
      0x1a, 0x04, 0x2a, 0x02, 0x08, 0x40, 0x32, 0x01, 0x01, 0x38, 0x01, 0x48, 0xe8, 0x07, 0x50, 0x01};
  ck_assert_uint_eq(pg->encoding_len, sizeof want_enc);
  ck_assert_mem_eq(pg->encoding_bytes, want_enc, sizeof want_enc);
  static const uint8_t want_meta[4] = {0x10, 0x0b, 0, 0};
  ck_assert_uint_eq(pg->buffer_sizes[0], 4);
  ck_assert_mem_eq(b + pg->buffer_offsets[0], want_meta, 4);
  static const uint8_t want_chunk[32] = {0, 0, 0x88, 0x05, 0, 0, 0xfe, 0xfe, 0x0b, 0, 0, 0, 0, 0, 0, 0,
                                         0xe8, 0x43, 0x23, 0x3a, 0xd1, 0x8a, 0x5e, 0x34,
                                         0xe9, 0x4b, 0x63, 0x3a, 0xd3, 0x9a, 0xde, 0x34};
  ck_assert_uint_eq(pg->buffer_sizes[1], 1424);
  ck_assert_mem_eq(b + pg->buffer_offsets[1], want_chunk, 32);
  /* the column encoding: Any{/lance.encodings.ColumnEncoding, 0a 00}, no column buffers */
  const Lance__File__V2__ColumnMetadata *cm = bri_datafile_column_metadata(df, 0);
  ck_assert_uint_eq(cm->n_buffer_offsets, 0);
  ck_assert_int_eq(cm->encoding->location_case, LANCE__FILE__V2__ENCODING__LOCATION_DIRECT);
  static const uint8_t want_col[] = {0x0a, 0x1f, '/', 'l', 'a', 'n', 'c', 'e', '.', 'e', 'n', 'c',
                                     'o', 'd', 'i', 'n', 'g', 's', '.', 'C', 'o', 'l', 'u', 'm', 'n',
                                     'E', 'n', 'c', 'o', 'd', 'i', 'n', 'g', 0x12, 0x02, 0x0a, 0x00};
  ck_assert_uint_eq(cm->encoding->direct->encoding.len, sizeof want_col);
  ck_assert_mem_eq(cm->encoding->direct->encoding.data, want_col, sizeof want_col);
  bri_leaf_page lp;
  decode(df, 0, 0, &I64, &lp);
  for (int i = 0; i < 1000; i++) ck_assert_int_eq(((int64_t *)lp.values.data)[i], 1000 + i);
  bri_leaf_page_dispose(&lp);
  bri_datafile_close(df);
  free(b);
  bri_file_result_dispose(&res);
  free(p);
}
END_TEST

/* 2.1: u16 chunk words and buffer sizes, no has_large_chunk. */
START_TEST(test_container_v21) {
  char *p = tpath("ids21.lance");
  bri_file_result res;
  ids_file(p, 1, &res);
  bri_datafile *df;
  bri_error err;
  ck_assert_msg(bri_datafile_open(NULL, p, &df, &err) == 0, "%s", err.msg);
  uint16_t ma, mi;
  bri_datafile_version(df, &ma, &mi);
  ck_assert_uint_eq(mi, 1);
  const bri_page *pg = &bri_datafile_column(df, 0)->pages[0];
  ck_assert(!pg->layout->mini_block_layout->has_has_large_chunk);
  ck_assert_uint_eq(pg->buffer_sizes[0], 2);
  uint8_t *meta, *chunk;
  ck_assert_int_eq(bri_datafile_read(df, pg->buffer_offsets[0], 2, &meta, &err), 0);
  ck_assert_int_eq(bri_datafile_read(df, pg->buffer_offsets[1], 8, &chunk, &err), 0);
  static const uint8_t want_meta[2] = {0x10, 0x0b};
  ck_assert_mem_eq(meta, want_meta, 2);
  static const uint8_t want_chunk[8] = {0, 0, 0x88, 0x05, 0xfe, 0xfe, 0xfe, 0xfe};
  ck_assert_mem_eq(chunk, want_chunk, 8);
  free(meta), free(chunk);
  bri_datafile_close(df);
  bri_file_result_dispose(&res);
  free(p);
}
END_TEST

/* ---- lifecycle ----------------------------------------------------------------------------- */

START_TEST(test_never_overwrites) {
  char *p = tpath("exists.lance");
  bri_write_bytes(p, "keep", 4);
  fld("id", 0, -1, "int64", false);
  bri_file_writer *w;
  bri_error err;
  ck_assert_int_eq(bri_file_writer_open(NULL, p, 2, fields, nfields, NULL, &w, &err), BRI_ETAKEN);
  ck_assert_msg(strstr(err.msg, "exists.lance") != NULL, "%s", err.msg);
  size_t n;
  uint8_t *b = bri_slurp(p, &n);
  ck_assert_uint_eq(n, 4);
  ck_assert_mem_eq(b, "keep", 4);
  free(b);
  free(p);
}
END_TEST

START_TEST(test_partial_file_removed) {
  fld("a", 0, -1, "int32", false);
  fld("b", 1, -1, "int32", false);
  char *p = tpath("partial.lance");
  bri_file_writer *w;
  bri_error err;
  struct stat st;
  /* arrays of different lengths: the append fails and the file is gone */
  ck_assert_int_eq(bri_file_writer_open(NULL, p, 2, fields, nfields, NULL, &w, &err), 0);
  ck_assert_int_eq(stat(p, &st), 0);
  struct ArrowArray *ab[2] = {PRIM(2, NULL, int32_t, 1, 2), PRIM(3, NULL, int32_t, 1, 2, 3)};
  ck_assert_int_eq(bri_file_writer_append(w, (const struct ArrowArray *const *)ab, 2, NULL, NULL, &err),
                   BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "array 1 has 3 rows, array 0 has 2") != NULL, "%s", err.msg);
  ck_assert_int_ne(stat(p, &st), 0);
  bri_file_result res;
  ck_assert_int_eq(bri_file_writer_finish(w, &res, &err), BRI_EINVAL);
  bri_file_writer_free(w);
  /* columns with different row counts: finish fails, nothing is left */
  ck_assert_int_eq(bri_file_writer_open(NULL, p, 2, fields, nfields, NULL, &w, &err), 0);
  bri_leaf_page lp = {0};
  int32_t v[2] = {5, 6};
  lp.n_rows = lp.n_levels = 2;
  lp.n_layers = 1;
  lp.layers[0] = BRI_LAYER_ALL_VALID_ITEM;
  lp.values.kind = BRI_LEAF_FIXED;
  lp.values.bits = 32;
  lp.values.n = 2;
  lp.values.elems_per_slot = 1;
  lp.values.data = (uint8_t *)v;
  lp.values.data_len = 8;
  ck_assert_msg(bri_file_writer_append_leaf(w, 0, &lp, NULL, NULL, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(bri_file_writer_finish(w, &res, &err), BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "column 1 (b) has 0 rows but column 0 (a) has 2") != NULL, "%s",
                err.msg);
  ck_assert_int_ne(stat(p, &st), 0);
  bri_file_writer_free(w);
  /* freed before finish: removed */
  ck_assert_int_eq(bri_file_writer_open(NULL, p, 2, fields, nfields, NULL, &w, &err), 0);
  bri_file_writer_free(w);
  ck_assert_int_ne(stat(p, &st), 0);
  free(p);
}
END_TEST

START_TEST(test_schema_refusals) {
  bri_file_writer *w;
  bri_error err;
  char *p = tpath("x.lance");
  Lance__File__Field *f = fld("old", 0, -1, "large_binary", true);
  add_meta(f, "lance-encoding:blob", "true");
  ck_assert_int_eq(bri_file_writer_open(NULL, p, 1, fields, nfields, NULL, &w, &err), BRI_EUNSUPPORTED);
  ck_assert_msg(strstr(err.msg, "field old is a legacy blob column") != NULL, "%s", err.msg);
  fields_reset();
  fld("iv", 0, -1, "interval:month_day_nano", true);
  ck_assert_int_eq(bri_file_writer_open(NULL, p, 2, fields, nfields, NULL, &w, &err), BRI_EUNSUPPORTED);
  ck_assert_msg(strstr(err.msg, "logical type \"interval:month_day_nano\"") != NULL, "%s", err.msg);
  fields_reset();
  fld("x", 0, -1, "int32", false);
  ck_assert_int_eq(bri_file_writer_open(NULL, p, 3, fields, nfields, NULL, &w, &err), BRI_EUNSUPPORTED);
  ck_assert_msg(strstr(err.msg, "2.3") != NULL, "%s", err.msg);
  fld("y", 1, 7, "int32", false);
  ck_assert_int_eq(bri_file_writer_open(NULL, p, 2, fields, nfields, NULL, &w, &err), BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "has parent 7") != NULL, "%s", err.msg);
  struct stat st;
  ck_assert_int_ne(stat(p, &st), 0);
  free(p);
}
END_TEST

/* ---- pages: cutting, types, layouts -------------------------------------------------------- */

START_TEST(test_page_cutting) {
  fld("id", 0, -1, "int64", false);
  fld("s", 1, -1, "string", true);
  const int n = 50000;
  int64_t *ids = keep(malloc(n * sizeof *ids));
  int32_t *off = keep(malloc((n + 1) * sizeof *off));
  char *data = keep(malloc((size_t)n * 12 + 1));
  char *valid = keep(malloc(n + 1));
  off[0] = 0;
  for (int i = 0; i < n; i++) {
    ids[i] = (int64_t)i * 7919;
    valid[i] = i % 13 ? '1' : '0';
    int k = i % 13 ? snprintf(data + off[i], 12, "v%d", i) : 0;
    off[i + 1] = off[i] + k;
  }
  valid[n] = 0;
  struct ArrowArray *a[2] = {arr(n, NULL, 2, ids, NULL, 0, NULL),
                             arr(n, valid, 3, off, dup_mem(data, (size_t)off[n]), 0, NULL)};
  bri_file_writer_options opt = {.page_target_bytes = 64 * 1024};
  char *p = tpath("cut.lance");
  bri_file_result res;
  write_file(p, 2, &opt, a, 2, &res);
  bri_datafile *df;
  bri_error err;
  ck_assert_msg(bri_datafile_open(NULL, p, &df, &err) == 0, "%s", err.msg);
  for (size_t c = 0; c < 2; c++) {
    const bri_column *col = bri_datafile_column(df, c);
    ck_assert_uint_gt(col->n_pages, 3);
    uint64_t row = 0;
    for (size_t pg = 0; pg < col->n_pages; pg++) {
      ck_assert_uint_eq(col->pages[pg].priority, row);
      bri_leaf_page lp;
      decode(df, c, pg, c ? &VAR : &I64, &lp);
      ck_assert_uint_eq(lp.n_rows, col->pages[pg].n_rows);
      for (uint64_t i = 0; i < lp.n_rows; i++) {
        uint64_t r = row + i;
        if (c == 0) {
          ck_assert_int_eq(((int64_t *)lp.values.data)[i], (int64_t)r * 7919);
        } else if (r % 13 == 0) {
          ck_assert_uint_ne(lp.def[i], 0);
        } else {
          char want[16];
          int k = snprintf(want, sizeof want, "v%llu", (unsigned long long)r);
          ck_assert_int_eq(lp.values.offsets[i + 1] - lp.values.offsets[i], k);
          ck_assert_mem_eq(lp.values.data + lp.values.offsets[i], want, (size_t)k);
        }
      }
      row += lp.n_rows;
      bri_leaf_page_dispose(&lp);
    }
    ck_assert_uint_eq(row, (uint64_t)n);
  }
  bri_datafile_close(df);
  bri_file_result_dispose(&res);
  free(p);
}
END_TEST

static const Lance__Encodings21__PageLayout *layout_of(bri_datafile *df, size_t c) {
  return bri_datafile_column(df, c)->pages[0].layout;
}

START_TEST(test_types_and_layouts) {
  fld("b", 0, -1, "bool", true);
  fld("d", 1, -1, "decimal:128:38:2", false);
  fld("fsb", 2, -1, "fixed_size_binary:3", false);
  fld("vec", 3, -1, "fixed_size_list:float:4", true);
  fld("big", 4, -1, "large_binary", true);
  fld("wide", 5, -1, "fixed_size_binary:300", true);
  fld("dict", 6, -1, "dict:string:int32:false", true);
  fld("nul", 7, -1, "int32", true);
  fld("nt", 8, -1, "null", true);
  fld("lnull", 9, -1, "list", true);
  fld("item", 10, 9, "int32", true);
  const int n = 5;
  struct ArrowArray *a[10];
  a[0] = arr(n, "11011", 2, dup_mem((uint8_t[]){0x05}, 1), NULL, 0, NULL); /* 1 0 1 0 0 */
  uint8_t dec[5 * 16] = {0};
  for (int i = 0; i < n; i++) dec[i * 16] = (uint8_t)(i + 1), dec[i * 16 + 15] = 0x80;
  a[1] = arr(n, NULL, 2, dup_mem(dec, sizeof dec), NULL, 0, NULL);
  a[2] = arr(n, NULL, 2, dup_mem("abcdefghijklmno", 15), NULL, 0, NULL);
  float fv[20];
  for (int i = 0; i < 20; i++) fv[i] = (float)i + 0.5f;
  struct ArrowArray *fitems = arr(20, "11101111111111110111", 2, dup_mem(fv, sizeof fv), NULL, 0, NULL);
  a[3] = arr(n, "10111", 1, NULL, NULL, 1, &fitems);
  int64_t boff[6] = {0, 300, 300, 900, 1000, 1000};
  uint8_t *bdata = keep(malloc(1000));
  for (int i = 0; i < 1000; i++) bdata[i] = (uint8_t)(i * 7);
  a[4] = arr(n, "10111", 3, dup_mem(boff, sizeof boff), bdata, 0, NULL);
  uint8_t *wide = keep(malloc(5 * 300));
  for (int i = 0; i < 1500; i++) wide[i] = (uint8_t)(i * 3 + 1);
  a[5] = arr(n, "11110", 2, wide, NULL, 0, NULL);
  a[6] = utf8(n, "11011", OFFS(0, 3, 6, 6, 10, 13), "redredbluered");
  a[7] = PRIM(n, "00000", int32_t, 0, 0, 0, 0, 0);
  a[8] = arr(n, "00000", 0, NULL, NULL, 0, NULL);
  struct ArrowArray *li = PRIM(0, NULL, int32_t, 0);
  a[9] = list(n, "01010", OFFS(0, 0, 0, 0, 0, 0), li);
  for (uint16_t minor = 1; minor <= 2; minor++) {
    char name[32];
    snprintf(name, sizeof name, "types%u.lance", minor);
    char *p = tpath(name);
    bri_file_result res;
    write_file(p, minor, NULL, a, 10, &res);
    ck_assert_uint_eq(res.n_columns, 10);
    ck_assert_int_eq(res.fields[9], 10);
    bri_datafile *df;
    bri_error err;
    ck_assert_msg(bri_datafile_open(NULL, p, &df, &err) == 0, "%s", err.msg);
    metadata_packs_as_protobuf(df);
    bri_leaf_page lp;
    /* bool */
    bri_leaf_type tb = {.kind = BRI_LEAF_FIXED, .bits = 1};
    decode(df, 0, 0, &tb, &lp);
    check_u16(lp.def, (uint16_t[]){0, 0, 1, 0, 0}, 5, "bool def");
    ck_assert_uint_eq(lp.values.data[0] & 0x1b, 0x01); /* 1 0 (null) 0 0 */
    bri_leaf_page_dispose(&lp);
    /* decimal128 */
    bri_leaf_type td = {.kind = BRI_LEAF_FIXED, .bits = 128};
    decode(df, 1, 0, &td, &lp);
    ck_assert_mem_eq(lp.values.data, dec, sizeof dec);
    bri_leaf_page_dispose(&lp);
    bri_leaf_type tf = {.kind = BRI_LEAF_FIXED, .bits = 24};
    decode(df, 2, 0, &tf, &lp);
    ck_assert_mem_eq(lp.values.data, "abcdefghijklmno", 15);
    bri_leaf_page_dispose(&lp);
    /* fsl with item and row nulls: FixedSizeList(4, has_validity) */
    const Lance__Encodings21__PageLayout *l = layout_of(df, 3);
    ck_assert_int_eq(l->layout_case, LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_MINI_BLOCK_LAYOUT);
    ck_assert_int_eq(l->mini_block_layout->value_compression->compression_case,
                     LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION_FIXED_SIZE_LIST);
    ck_assert(l->mini_block_layout->value_compression->fixed_size_list->has_validity);
    bri_leaf_type tv = {.kind = BRI_LEAF_FIXED, .bits = 32, .n_dims = 1, .dims = {4}};
    decode(df, 3, 0, &tv, &lp);
    check_u16(lp.def, (uint16_t[]){0, 1, 0, 0, 0}, 5, "fsl def");
    ck_assert_ptr_nonnull(lp.values.fsl_validity[0]);
    ck_assert_uint_eq(lp.values.fsl_validity[0][0] & 0x0f, 0x07); /* item 3 of row 0 null */
    ck_assert(((float *)lp.values.data)[8] == 8.5f);
    bri_leaf_page_dispose(&lp);
    /* large_binary up to 600 bytes: FullZip, 64-bit lengths */
    l = layout_of(df, 4);
    ck_assert_int_eq(l->layout_case, LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_FULL_ZIP_LAYOUT);
    ck_assert_uint_eq(l->full_zip_layout->bits_per_offset, 64);
    ck_assert_uint_eq(bri_datafile_column(df, 4)->pages[0].n_buffers, 2); /* + repetition index */
    decode(df, 4, 0, &VAR, &lp);
    check_u16(lp.def, (uint16_t[]){0, 1, 0, 0, 0}, 5, "big def");
    ck_assert_int_eq(lp.values.offsets[3] - lp.values.offsets[2], 600);
    ck_assert_mem_eq(lp.values.data + lp.values.offsets[2], bdata + 300, 600);
    bri_leaf_page_dispose(&lp);
    /* fixed_size_binary(300): FullZip Flat(2400), no repetition index */
    l = layout_of(df, 5);
    ck_assert_int_eq(l->layout_case, LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_FULL_ZIP_LAYOUT);
    ck_assert_uint_eq(l->full_zip_layout->bits_per_value, 2400);
    ck_assert_uint_eq(bri_datafile_column(df, 5)->pages[0].n_buffers, 1);
    bri_leaf_type tw = {.kind = BRI_LEAF_FIXED, .bits = 2400};
    decode(df, 5, 0, &tw, &lp);
    ck_assert_mem_eq(lp.values.data, wide, 1200);
    ck_assert_uint_eq(lp.def[4], 1);
    bri_leaf_page_dispose(&lp);
    /* dictionary: items red, blue, "" in first-appearance order */
    l = layout_of(df, 6);
    ck_assert_ptr_nonnull(l->mini_block_layout->dictionary);
    ck_assert_uint_eq(l->mini_block_layout->num_dictionary_items, 3);
    ck_assert_uint_eq(bri_datafile_column(df, 6)->pages[0].n_buffers, 3);
    decode(df, 6, 0, &VAR, &lp);
    ck_assert_mem_eq(lp.values.data + lp.values.offsets[1], "red", 3);
    ck_assert_mem_eq(lp.values.data + lp.values.offsets[3], "blue", 4);
    ck_assert_mem_eq(lp.values.data + lp.values.offsets[4], "red", 3);
    ck_assert_uint_eq(lp.def[2], 1);
    bri_leaf_page_dispose(&lp);
    /* all null, one item layer: layout 2 with no buffers (wire 12 03 2a 01 03) */
    const bri_page *pg = &bri_datafile_column(df, 7)->pages[0];
    ck_assert_uint_eq(pg->n_buffers, 0);
    static const uint8_t simple_null[5] = {0x12, 0x03, 0x2a, 0x01, 0x03};
    ck_assert_mem_eq(pg->encoding_bytes + pg->encoding_len - 5, simple_null, 5);
    ck_assert_int_eq(bri_datafile_column(df, 8)->pages[0].n_buffers, 0);
    /* all-null list: levels kept (2.1 raw u16, 2.2 Rle with counts) */
    pg = &bri_datafile_column(df, 9)->pages[0];
    ck_assert_uint_eq(pg->n_buffers, 2);
    const Lance__Encodings21__ConstantLayout *cl = pg->layout->constant_layout;
    if (minor == 1) {
      ck_assert_uint_eq(pg->buffer_sizes[0], 10);
      ck_assert_ptr_null(cl->rep_compression);
    } else {
      ck_assert_ptr_nonnull(cl->rep_compression);
      ck_assert_uint_eq(cl->num_def_values, 5);
    }
    decode(df, 9, 0, &I32, &lp);
    check_u16(lp.def, (uint16_t[]){1, 2, 1, 2, 1}, 5, "lnull def"); /* null 1, empty 2 */
    ck_assert_uint_eq(lp.values.n, 0);
    bri_leaf_page_dispose(&lp);
    bri_datafile_close(df);
    bri_file_result_dispose(&res);
    free(p);
  }
}
END_TEST

/* ---- Blob v2 -------------------------------------------------------------------------------- */

static int payload(void *ctx, size_t column, uint64_t index, uint64_t position, uint64_t size,
                   uint8_t *dst, bri_error *err) {
  (void)ctx, (void)column, (void)err;
  for (uint64_t i = 0; i < size; i++) dst[i] = (uint8_t)(position + index + i);
  return 0;
}

START_TEST(test_blob_inline) {
  fld("id", 0, -1, "int64", false);
  Lance__File__Field *b = fld("blob", 1, -1, "struct", true);
  b->extension_name = (char *)"lance.blob.v2";
  add_meta(b, "ARROW:extension:name", "lance.blob.v2");
  fld("data", 2, 1, "large_binary", true);
  fld("uri", 3, 1, "string", true);
  const int n = 5;
  struct ArrowArray *ids = PRIM(n, NULL, int64_t, 0, 1, 2, 3, 4);
  /* inline 100 B, inline empty, packed, null, inline 1000 B */
  struct ArrowArray *kids[5] = {
      PRIM(n, NULL, uint8_t, 0, 0, 1, 0, 0), PRIM(n, NULL, uint64_t, 7, 0, 4096, 0, 9),
      PRIM(n, NULL, uint64_t, 100, 0, 5000, 0, 1000), PRIM(n, NULL, uint32_t, 0, 0, 1, 0, 0),
      utf8(n, NULL, OFFS(0, 0, 0, 0, 0, 0), "")};
  struct ArrowArray *desc = arr(n, "11101", 1, NULL, NULL, 5, kids);
  struct ArrowArray *a[2] = {ids, desc};
  char *p = tpath("blob.lance");
  bri_file_writer *w;
  bri_error err;
  ck_assert_int_eq(bri_file_writer_open(NULL, p, 2, fields, nfields, NULL, &w, &err), 0);
  ck_assert_uint_eq(bri_file_writer_num_columns(w), 2);
  ck_assert(bri_file_writer_column_is_blob(w, 1));
  /* without a payload callback an Inline value cannot be written */
  ck_assert_int_eq(bri_file_writer_append(w, (const struct ArrowArray *const *)a, 2, NULL, NULL, &err),
                   BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "Inline blob 0 (100 bytes) but no payload callback") != NULL, "%s",
                err.msg);
  bri_file_writer_free(w);
  ck_assert_int_eq(bri_file_writer_open(NULL, p, 2, fields, nfields, NULL, &w, &err), 0);
  ck_assert_msg(bri_file_writer_append(w, (const struct ArrowArray *const *)a, 2, payload, NULL, &err) == 0,
                "%s", err.msg);
  bri_file_result res;
  ck_assert_msg(bri_file_writer_finish(w, &res, &err) == 0, "%s", err.msg);
  bri_file_writer_free(w);
  ck_assert_uint_eq(res.n_columns, 2);
  ck_assert_int_eq(res.fields[1], 1); /* the blob struct, not its children */
  bri_datafile *df;
  ck_assert_msg(bri_datafile_open(NULL, p, &df, &err) == 0, "%s", err.msg);
  metadata_packs_as_protobuf(df);
  /* GB0: blob struct + five descriptor fields with id -1 / parent -1 */
  const Lance__File__Schema *s = bri_datafile_descriptor(df)->schema;
  ck_assert_uint_eq(s->n_fields, 7);
  ck_assert_str_eq(s->fields[1]->logical_type, "struct");
  ck_assert_ptr_null(s->fields[1]->extension_name);
  ck_assert_uint_eq(s->fields[1]->n_metadata, 2);
  static const char *names[5] = {"kind", "position", "size", "blob_id", "blob_uri"};
  for (int i = 0; i < 5; i++) {
    ck_assert_str_eq(s->fields[2 + i]->name, names[i]);
    ck_assert_int_eq(s->fields[2 + i]->id, -1);
    ck_assert_int_eq(s->fields[2 + i]->parent_id, -1);
  }
  const Lance__Encodings21__PageLayout *l = layout_of(df, 1);
  ck_assert_int_eq(l->layout_case, LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_FULL_ZIP_LAYOUT);
  ck_assert_int_eq(l->full_zip_layout->value_compression->compression_case,
                   LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION_VARIABLE_PACKED_STRUCT);
  bri_leaf_page lp;
  decode(df, 1, 0, bri_leaf_type_blob_v2(), &lp);
  check_u16(lp.def, (uint16_t[]){0, 0, 0, 1, 0}, 5, "blob def");
  const bri_values *k = lp.values.children;
  uint64_t pos[5], size[5];
  for (int i = 0; i < 5; i++) memcpy(&pos[i], k[1].data + 8 * i, 8), memcpy(&size[i], k[2].data + 8 * i, 8);
  /* Inline payloads: 64-aligned buffers before the pages, bytes from the callback */
  ck_assert_uint_eq(pos[0], 0);
  ck_assert_uint_eq(size[0], 100);
  ck_assert_uint_eq(pos[1], 128); /* empty Inline: the offset at that moment */
  ck_assert_uint_eq(size[1], 0);
  ck_assert_uint_eq(pos[2], 4096); /* Packed: unchanged */
  ck_assert_uint_eq(pos[4], 128);
  ck_assert_uint_eq(size[4], 1000);
  uint8_t *got;
  ck_assert_int_eq(bri_datafile_read(df, pos[4], 1000, &got, &err), 0);
  for (int i = 0; i < 1000; i++) ck_assert_uint_eq(got[i], (uint8_t)(9 + 4 + i));
  free(got);
  ck_assert_uint_ge(bri_datafile_column(df, 0)->pages[0].buffer_offsets[0], 1152);
  bri_leaf_page_dispose(&lp);
  bri_datafile_close(df);
  bri_file_result_dispose(&res);
  /* 2.1 has no VariablePackedStruct */
  char *p21 = tpath("blob21.lance");
  ck_assert_int_eq(bri_file_writer_open(NULL, p21, 1, fields, nfields, NULL, &w, &err), 0);
  ck_assert_int_eq(bri_file_writer_append(w, (const struct ArrowArray *const *)a, 2, payload, NULL, &err), 0);
  ck_assert_int_eq(bri_file_writer_finish(w, &res, &err), BRI_EUNSUPPORTED);
  ck_assert_msg(strstr(err.msg, "needs file version 2.2") != NULL, "%s", err.msg);
  bri_file_writer_free(w);
  free(p21);
  free(p);
}
END_TEST

/* ---- page copy -------------------------------------------------------------------------------- */

static void two_col_file(const char *p, uint16_t minor, int64_t base) {
  fields_reset();
  fld("id", 0, -1, "int64", false);
  fld("l", 1, -1, "list", true);
  fld("item", 2, 1, "string", true);
  int64_t *ids = keep(malloc(3000 * sizeof *ids));
  int32_t *loff = keep(malloc(3001 * sizeof *loff));
  int32_t *soff = keep(malloc(6001 * sizeof *soff));
  char *data = keep(malloc(6000 * 8));
  loff[0] = soff[0] = 0;
  int items = 0;
  for (int i = 0; i < 3000; i++) {
    ids[i] = base + i;
    int k = i % 3;
    for (int j = 0; j < k; j++, items++)
      soff[items + 1] = soff[items] + snprintf(data + soff[items], 8, "%d", (int)(base + i + j));
    loff[i + 1] = items;
  }
  struct ArrowArray *s = arr(items, NULL, 3, soff, data, 0, NULL);
  struct ArrowArray *a[2] = {arr(3000, NULL, 2, ids, NULL, 0, NULL), list(3000, NULL, loff, s)};
  bri_file_result res;
  write_file(p, minor, NULL, a, 2, &res);
  bri_file_result_dispose(&res);
}

START_TEST(test_page_copy) {
  char *a = tpath("a.lance"), *b = tpath("b.lance"), *out = tpath("out.lance");
  two_col_file(a, 2, 0);
  two_col_file(b, 2, 3000);
  bri_datafile *da, *db;
  bri_error err;
  ck_assert_msg(bri_datafile_open(NULL, a, &da, &err) == 0, "%s", err.msg);
  ck_assert_msg(bri_datafile_open(NULL, b, &db, &err) == 0, "%s", err.msg);
  bri_file_writer *w;
  ck_assert_int_eq(bri_file_writer_open(NULL, out, 2, fields, nfields, NULL, &w, &err), 0);
  for (size_t c = 0; c < 2; c++) {
    ck_assert_msg(bri_pagecopy_check(w, c, da, c, &err) == 0, "%s", err.msg);
    ck_assert_msg(bri_file_writer_copy_column(w, c, da, c, &err) == 0, "%s", err.msg);
    ck_assert_msg(bri_file_writer_copy_column(w, c, db, c, &err) == 0, "%s", err.msg);
  }
  ck_assert_uint_eq(bri_file_writer_column_rows(w, 1), 6000);
  bri_file_result res;
  ck_assert_msg(bri_file_writer_finish(w, &res, &err) == 0, "%s", err.msg);
  bri_file_writer_free(w);
  ck_assert_uint_eq(res.num_rows, 6000);
  bri_datafile *d;
  ck_assert_msg(bri_datafile_open(NULL, out, &d, &err) == 0, "%s", err.msg);
  metadata_packs_as_protobuf(d);
  metadata_packs_as_protobuf(da);
  for (size_t c = 0; c < 2; c++) {
    const bri_column *col = bri_datafile_column(d, c), *src = bri_datafile_column(da, c);
    ck_assert_uint_eq(col->n_pages, 2 * src->n_pages);
    ck_assert_uint_eq(col->pages[src->n_pages].priority, 3000);
    for (size_t pg = 0; pg < src->n_pages; pg++) {
      /* identical bytes: encoding and every buffer */
      ck_assert_uint_eq(col->pages[pg].encoding_len, src->pages[pg].encoding_len);
      ck_assert_mem_eq(col->pages[pg].encoding_bytes, src->pages[pg].encoding_bytes,
                       src->pages[pg].encoding_len);
      for (size_t k = 0; k < src->pages[pg].n_buffers; k++) {
        ck_assert_uint_eq(col->pages[pg].buffer_offsets[k] % 64, 0);
        uint8_t *x, *y;
        uint64_t n = src->pages[pg].buffer_sizes[k];
        ck_assert_int_eq(bri_datafile_read(d, col->pages[pg].buffer_offsets[k], n, &x, &err), 0);
        ck_assert_int_eq(bri_datafile_read(da, src->pages[pg].buffer_offsets[k], n, &y, &err), 0);
        ck_assert_mem_eq(x, y, (size_t)n);
        free(x), free(y);
      }
    }
  }
  /* values of the second half come from b */
  bri_leaf_page lp;
  size_t last = bri_datafile_column(d, 0)->n_pages - 1;
  decode(d, 0, last, &I64, &lp);
  ck_assert_int_eq(((int64_t *)lp.values.data)[lp.values.n - 1], 5999);
  bri_leaf_page_dispose(&lp);
  bri_datafile_close(d);
  bri_file_result_dispose(&res);

  /* refusals */
  char *o2 = tpath("o2.lance"), *v21 = tpath("v21.lance");
  two_col_file(v21, 1, 0);
  bri_datafile *d21;
  ck_assert_msg(bri_datafile_open(NULL, v21, &d21, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(bri_file_writer_open(NULL, o2, 2, fields, nfields, NULL, &w, &err), 0);
  ck_assert_int_eq(bri_file_writer_copy_column(w, 0, d21, 0, &err), BRI_EUNSUPPORTED);
  ck_assert_msg(strstr(err.msg, "file versions differ (source 2.1, output 2.2)") != NULL, "%s",
                err.msg);
  bri_file_writer_free(w);
  /* a different schema: same column count, other logical type */
  fields_reset();
  fld("id", 0, -1, "int32", false);
  fld("l", 1, -1, "list", true);
  fld("item", 2, 1, "string", true);
  ck_assert_int_eq(bri_file_writer_open(NULL, o2, 2, fields, nfields, NULL, &w, &err), 0);
  ck_assert_int_eq(bri_pagecopy_check(w, 0, da, 0, &err), BRI_EUNSUPPORTED);
  ck_assert_msg(strstr(err.msg, "schemas differ: source column 0 is id (id 0, int64)") != NULL,
                "%s", err.msg);
  ck_assert_msg(bri_pagecopy_check(w, 1, da, 1, &err) == 0, "%s", err.msg);
  bri_file_writer_free(w);
  /* a different column count */
  fields_reset();
  fld("id", 0, -1, "int64", false);
  ck_assert_int_eq(bri_file_writer_open(NULL, o2, 2, fields, nfields, NULL, &w, &err), 0);
  ck_assert_int_eq(bri_pagecopy_check(w, 0, da, 0, &err), BRI_EUNSUPPORTED);
  ck_assert_msg(strstr(err.msg, "column counts differ (source 2, output 1)") != NULL, "%s", err.msg);
  bri_file_writer_free(w);
  struct stat st;
  ck_assert_int_ne(stat(o2, &st), 0);
  bri_datafile_close(d21);
  bri_datafile_close(da);
  bri_datafile_close(db);
  free(a), free(b), free(out), free(o2), free(v21);
}
END_TEST

START_TEST(test_page_copy_refuses_blobs) {
  fld("id", 0, -1, "int64", false);
  Lance__File__Field *bf = fld("blob", 1, -1, "struct", true);
  add_meta(bf, "ARROW:extension:name", "lance.blob.v2");
  fld("data", 2, 1, "large_binary", true);
  fld("uri", 3, 1, "string", true);
  struct ArrowArray *kids[5] = {PRIM(1, NULL, uint8_t, 0), PRIM(1, NULL, uint64_t, 0),
                                PRIM(1, NULL, uint64_t, 3), PRIM(1, NULL, uint32_t, 0),
                                utf8(1, NULL, OFFS(0, 0), "")};
  struct ArrowArray *a[2] = {PRIM(1, NULL, int64_t, 1), arr(1, NULL, 1, NULL, NULL, 5, kids)};
  char *p = tpath("b.lance"), *o = tpath("o.lance");
  bri_file_writer *w;
  bri_error err;
  ck_assert_int_eq(bri_file_writer_open(NULL, p, 2, fields, nfields, NULL, &w, &err), 0);
  ck_assert_int_eq(bri_file_writer_append(w, (const struct ArrowArray *const *)a, 2, payload, NULL, &err), 0);
  bri_file_result res;
  ck_assert_msg(bri_file_writer_finish(w, &res, &err) == 0, "%s", err.msg);
  bri_file_writer_free(w);
  bri_file_result_dispose(&res);
  bri_datafile *df;
  ck_assert_msg(bri_datafile_open(NULL, p, &df, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(bri_file_writer_open(NULL, o, 2, fields, nfields, NULL, &w, &err), 0);
  ck_assert_msg(bri_pagecopy_check(w, 0, df, 0, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(bri_file_writer_copy_column(w, 1, df, 1, &err), BRI_EUNSUPPORTED);
  ck_assert_msg(strstr(err.msg, "stores Blob v2 descriptors") != NULL, "%s", err.msg);
  bri_file_writer_free(w);
  bri_datafile_close(df);
  free(p), free(o);
}
END_TEST

/* ---- the encoder's input checks ------------------------------------------------------------- */

START_TEST(test_encoder_rejects_bad_input) {
  int32_t v[3] = {1, 2, 3};
  bri_values vals = {.kind = BRI_LEAF_FIXED, .n = 3, .bits = 32, .elems_per_slot = 1,
                     .data = (uint8_t *)v, .data_len = 12};
  uint8_t layers[1] = {BRI_LAYER_NULLABLE_ITEM};
  uint16_t def[3] = {0, 2, 0};
  bri_enc_input in = {.n_rows = 3, .n_levels = 3, .def = def, .n_layers = 1, .layers = layers,
                      .values = &vals};
  bri_enc_options opt = {.file_minor = 2};
  bri_encoded_page ep;
  bri_error err;
  ck_assert_int_eq(bri_page_encode(&in, &opt, &ep, &err), BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "level 1 has def 2 > max 1") != NULL, "%s", err.msg);
  def[1] = 1; /* now level 1 is a null and has a slot: 3 slots for 3 visible levels */
  ck_assert_msg(bri_page_encode(&in, &opt, &ep, &err) == 0, "%s", err.msg);
  ck_assert_str_eq(ep.layout, "mini_block");
  bri_encoded_page_dispose(&ep);
  vals.n = 2;
  ck_assert_int_eq(bri_page_encode(&in, &opt, &ep, &err), BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "3 visible levels but 2 value slots") != NULL, "%s", err.msg);
  vals.n = 3;
  in.n_rows = 4;
  ck_assert_int_eq(bri_page_encode(&in, &opt, &ep, &err), BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "hold 3 rows, not 4") != NULL, "%s", err.msg);
  in.n_rows = 3;
  opt.file_minor = 3;
  ck_assert_int_eq(bri_page_encode(&in, &opt, &ep, &err), BRI_EUNSUPPORTED);
  /* forced FullZip of the same page decodes to the same values */
  opt.file_minor = 2;
  opt.force_fullzip = true;
  ck_assert_msg(bri_page_encode(&in, &opt, &ep, &err) == 0, "%s", err.msg);
  ck_assert_str_eq(ep.layout, "full_zip");
  Lance__Encodings21__PageLayout *pl = NULL;
  {
    Google__Protobuf__Any *any = google__protobuf__any__unpack(NULL, ep.encoding_len, ep.encoding);
    ck_assert_ptr_nonnull(any);
    pl = lance__encodings21__page_layout__unpack(NULL, any->value.len, any->value.data);
    google__protobuf__any__free_unpacked(any, NULL);
  }
  ck_assert_ptr_nonnull(pl);
  const uint8_t *bufs[BRI_ENC_MAX_BUFFERS];
  for (size_t i = 0; i < ep.n_buffers; i++) bufs[i] = ep.buffers[i];
  bri_page_input pin = {.where = "forced", .file_minor = 2, .n_rows = 3, .layout = pl,
                        .n_buffers = ep.n_buffers, .buffers = bufs, .buffer_sizes = ep.sizes};
  bri_leaf_page lp;
  ck_assert_msg(bri_page_decode_buffers(&pin, &I32, NULL, &lp, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(((int32_t *)lp.values.data)[2], 3);
  ck_assert_int_eq(((int32_t *)lp.values.data)[1], 0); /* null slot zeroed */
  check_u16(lp.def, (uint16_t[]){0, 1, 0}, 3, "def");
  bri_leaf_page_dispose(&lp);
  lance__encodings21__page_layout__free_unpacked(pl, NULL);
  bri_encoded_page_dispose(&ep);
}
END_TEST

/* Encodes a page and decodes it again from the returned buffers. */
static void enc_dec(const bri_enc_input *in, const bri_enc_options *opt, const bri_leaf_type *t,
                    bri_encoded_page *ep, Lance__Encodings21__PageLayout **pl, bri_leaf_page *lp) {
  bri_error err;
  ck_assert_msg(bri_page_encode(in, opt, ep, &err) == 0, "%s", err.msg);
  Google__Protobuf__Any *any = google__protobuf__any__unpack(NULL, ep->encoding_len, ep->encoding);
  ck_assert_ptr_nonnull(any);
  *pl = lance__encodings21__page_layout__unpack(NULL, any->value.len, any->value.data);
  google__protobuf__any__free_unpacked(any, NULL);
  ck_assert_ptr_nonnull(*pl);
  const uint8_t *bufs[BRI_ENC_MAX_BUFFERS];
  for (size_t i = 0; i < ep->n_buffers; i++) bufs[i] = ep->buffers[i];
  bri_page_input pin = {.where = "test page", .file_minor = opt->file_minor, .n_rows = in->n_rows,
                        .layout = *pl, .n_buffers = ep->n_buffers, .buffers = bufs,
                        .buffer_sizes = ep->sizes};
  ck_assert_msg(bri_page_decode_buffers(&pin, t, NULL, lp, &err) == 0, "%s", err.msg);
}

/* A chunk would need more than 65535 levels (70000 empty lists before the only
 * value): the mini-block format cannot say that, so the page becomes FullZip. */
START_TEST(test_level_overflow_falls_back_to_fullzip) {
  const uint64_t n = 70001;
  uint16_t *rep = malloc(n * 2), *def = malloc(n * 2);
  for (uint64_t i = 0; i < n; i++) rep[i] = 1, def[i] = i + 1 < n;
  int32_t v = 5;
  bri_values vals = {.kind = BRI_LEAF_FIXED, .n = 1, .bits = 32, .elems_per_slot = 1,
                     .data = (uint8_t *)&v, .data_len = 4};
  uint8_t layers[2] = {BRI_LAYER_ALL_VALID_ITEM, BRI_LAYER_EMPTYABLE_LIST};
  bri_enc_input in = {.n_rows = n, .n_levels = n, .rep = rep, .def = def, .n_layers = 2,
                      .layers = layers, .values = &vals};
  bri_enc_options opt = {.file_minor = 2};
  bri_encoded_page ep;
  Lance__Encodings21__PageLayout *pl;
  bri_leaf_page lp;
  enc_dec(&in, &opt, &I32, &ep, &pl, &lp);
  ck_assert_str_eq(ep.layout, "full_zip");
  ck_assert_uint_eq(lp.n_levels, n);
  ck_assert_uint_eq(lp.values.n, 1);
  ck_assert_int_eq(*(int32_t *)lp.values.data, 5);
  ck_assert_uint_eq(lp.def[n - 1], 0);
  ck_assert_uint_eq(lp.def[0], 1);
  bri_leaf_page_dispose(&lp);
  lance__encodings21__page_layout__free_unpacked(pl, NULL);
  bri_encoded_page_dispose(&ep);
  /* a short page of the same shape stays mini-block */
  in.n_rows = in.n_levels = 5;
  in.def = def + n - 5; /* four empty lists, then [5] */
  in.rep = rep + n - 5;
  enc_dec(&in, &opt, &I32, &ep, &pl, &lp);
  ck_assert_str_eq(ep.layout, "mini_block");
  bri_leaf_page_dispose(&lp);
  lance__encodings21__page_layout__free_unpacked(pl, NULL);
  bri_encoded_page_dispose(&ep);
  free(rep), free(def);
}
END_TEST

/* General wrappers: a field asking for zstd/lz4, and auto_zstd where it pays. */
START_TEST(test_general_compression) {
  const uint64_t n = 20000;
  double *d = malloc(n * sizeof *d);
  for (uint64_t i = 0; i < n; i++) d[i] = (double)(i / 100) * 0.25;
  bri_values vals = {.kind = BRI_LEAF_FIXED, .n = n, .bits = 64, .elems_per_slot = 1,
                     .data = (uint8_t *)d, .data_len = n * 8};
  uint8_t layers[1] = {BRI_LAYER_ALL_VALID_ITEM};
  bri_enc_input in = {.n_rows = n, .n_levels = n, .n_layers = 1, .layers = layers, .values = &vals};
  const bri_leaf_type f64 = {.kind = BRI_LEAF_FIXED, .bits = 64};
  bri_enc_options opts[3] = {{.file_minor = 2, .general_scheme = BRI_GENERAL_ZSTD},
                             {.file_minor = 1, .general_scheme = BRI_GENERAL_LZ4},
                             {.file_minor = 2, .auto_zstd = true}};
  for (int k = 0; k < 3; k++) {
    bri_encoded_page ep;
    Lance__Encodings21__PageLayout *pl;
    bri_leaf_page lp;
    enc_dec(&in, &opts[k], &f64, &ep, &pl, &lp);
    const Lance__Encodings21__CompressiveEncoding *vc = pl->mini_block_layout->value_compression;
    ck_assert_int_eq(vc->compression_case,
                     LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION_GENERAL);
    ck_assert_int_eq(vc->general->compression->scheme, k == 1 ? BRI_GENERAL_LZ4 : BRI_GENERAL_ZSTD);
    ck_assert_uint_lt(bri_encoded_page_bytes(&ep), n * 8 / 4);
    ck_assert_mem_eq(lp.values.data, d, n * 8);
    bri_leaf_page_dispose(&lp);
    lance__encodings21__page_layout__free_unpacked(pl, NULL);
    bri_encoded_page_dispose(&ep);
  }
  /* random bytes do not shrink: no wrapper */
  uint64_t x = 88172645463325252ull;
  for (uint64_t i = 0; i < n; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    memcpy(&d[i], &x, 8);
  }
  bri_encoded_page ep;
  Lance__Encodings21__PageLayout *pl;
  bri_leaf_page lp;
  enc_dec(&in, &opts[2], &f64, &ep, &pl, &lp);
  ck_assert_int_eq(pl->mini_block_layout->value_compression->compression_case,
                   LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION_FLAT);
  ck_assert_mem_eq(lp.values.data, d, n * 8);
  bri_leaf_page_dispose(&lp);
  lance__encodings21__page_layout__free_unpacked(pl, NULL);
  bri_encoded_page_dispose(&ep);
  free(d);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("writer");
  TCase *tc = tcase_create("writer");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_levels_list_nullable_items);
  tcase_add_test(tc, test_levels_emptyable_list);
  tcase_add_test(tc, test_levels_struct);
  tcase_add_test(tc, test_levels_list_of_lists);
  tcase_add_test(tc, test_levels_struct_over_list);
  tcase_add_test(tc, test_container_bytes);
  tcase_add_test(tc, test_container_v21);
  tcase_add_test(tc, test_never_overwrites);
  tcase_add_test(tc, test_partial_file_removed);
  tcase_add_test(tc, test_schema_refusals);
  tcase_add_test(tc, test_page_cutting);
  tcase_add_test(tc, test_types_and_layouts);
  tcase_add_test(tc, test_blob_inline);
  tcase_add_test(tc, test_page_copy);
  tcase_add_test(tc, test_page_copy_refuses_blobs);
  tcase_add_test(tc, test_encoder_rejects_bad_input);
  tcase_add_test(tc, test_level_overflow_falls_back_to_fullzip);
  tcase_add_test(tc, test_general_compression);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(suite)
