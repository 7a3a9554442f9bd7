/* test_datafile.c: the Lance v2 container reader (lib/lance/file/datafile.c).
 *
 * Fixtures in tests/fixtures/datafile were written by LanceDB 0.39.0 (Lance
 * 12.0.0); the expected numbers below were read off with the oracle's
 * independent decoder (lance_inspect.py):
 *   plain21/22.lance   make_tables.mjs --tables plain --rows 40 --fragments 1
 *                      --plain-delete "" --storage-version 2.1 / 2.2
 *   nested21/22.lance  30 rows from three 10-row batches: id int64, name utf8?,
 *                      tags list<int32?>?, pt struct<x f64?, y f32?>?, big utf8?
 *                      (260+ byte values -> FullZip), and in 2.1 only lb
 *                      large_binary with lance-encoding:blob (-> BlobLayout)
 *   multipage21/22.lance  second file of a table written from two 1,000,000-row
 *                      batches of (n int64 all null, k int32 = 5): 1,048,576
 *                      rows, two pages per column (rows 1000000 + 48576)
 *   v20.lance / legacy02.lance  the plain table (10 rows) written with
 *                      --storage-version 2.0 (footer 0.3) / legacy (footer 0.2)
 * Hostile variants are made from these by patching footer bytes or by
 * re-packing the column metadata with protobuf-c (rebuild() below). */
#include <stdlib.h>
#include <string.h>

#include "google/protobuf/any.pb-c.h"
#include "lance/file/datafile.h"
#include "testutil.h"
#include "util/bytes.h"
#include "util/fsutil.h"
#include "util/pbcheck.h"

#define LAYOUT(x) LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_##x

static bri_datafile *open_fixture(const char *name) {
  char *p = bri_fixture(name);
  bri_datafile *df = NULL;
  bri_error err = {0};
  int rc = bri_datafile_open(NULL, p, &df, &err);
  ck_assert_msg(rc == 0, "%s", err.msg);
  free(p);
  return df;
}

static void check_field(const bri_datafile *df, size_t i, const char *name, const char *type,
                        int id, int parent, int nullable) {
  const Lance__File__Schema *s = bri_datafile_descriptor(df)->schema;
  ck_assert_uint_lt(i, s->n_fields);
  const Lance__File__Field *f = s->fields[i];
  ck_assert_str_eq(f->name, name);
  ck_assert_str_eq(f->logical_type, type);
  ck_assert_int_eq(f->has_id ? f->id : 0, id);
  ck_assert_int_eq(f->parent_id, parent);
  ck_assert_int_eq(f->has_nullable && f->nullable, nullable);
}

static const bri_page *page(const bri_datafile *df, size_t c, size_t p) {
  const bri_column *col = bri_datafile_column(df, c);
  ck_assert_ptr_nonnull(col);
  ck_assert_uint_lt(p, col->n_pages);
  return &col->pages[p];
}

static void check_buf(const bri_page *pg, size_t b, uint64_t off, uint64_t size) {
  ck_assert_uint_lt(b, pg->n_buffers);
  ck_assert_uint_eq(pg->buffer_offsets[b], off);
  ck_assert_uint_eq(pg->buffer_sizes[b], size);
}

static void check_plain(const char *name, uint16_t minor, uint64_t size) {
  bri_datafile *df = open_fixture(name);
  uint16_t ma, mi;
  bri_datafile_version(df, &ma, &mi);
  ck_assert_uint_eq(ma, 2);
  ck_assert_uint_eq(mi, minor);
  ck_assert_uint_eq(bri_datafile_size(df), size);
  ck_assert_uint_eq(bri_datafile_num_rows(df), 40);
  ck_assert_uint_eq(bri_datafile_num_columns(df), 8);
  ck_assert_uint_eq(bri_datafile_num_global_buffers(df), 1);
  uint64_t gp, gs;
  bri_datafile_global_buffer(df, 0, &gp, &gs);
  ck_assert_uint_eq(gp, 6016);
  ck_assert_uint_eq(gs, 268);
  ck_assert_uint_eq(bri_datafile_footer_of(df)->column_meta_start, 6284);
  static const char *names[] = {"id", "f64", "s", "cat", "vec", "n32", "allnull", "bin"};
  static const char *types[] = {"int64", "double", "string", "string", "fixed_size_list:float:8",
                                "int32", "int32", "large_binary"};
  ck_assert_uint_eq(bri_datafile_descriptor(df)->schema->n_fields, 8);
  for (int i = 0; i < 8; i++) check_field(df, (size_t)i, names[i], types[i], i, -1, i == 5 || i == 6);
  /* Buffer positions as Lance wrote them: chunk metadata then chunk data. */
  static const uint64_t data_off[] = {64, 512, 960, 2688, 3136, 4544, 0, 4864};
  static const uint64_t data_len[] = {328, 328, 1608, 352, 1288, 248, 0, 1120};
  for (size_t c = 0; c < 8; c++) {
    const bri_column *col = bri_datafile_column(df, c);
    ck_assert_uint_eq(col->n_pages, 1);
    ck_assert_uint_eq(col->n_rows, 40);
    const bri_page *pg = page(df, c, 0);
    ck_assert_uint_eq(pg->n_rows, 40);
    ck_assert_uint_eq(pg->priority, 0);
    ck_assert_ptr_nonnull(pg->layout);
    if (c == 6) {
      ck_assert_int_eq(pg->layout->layout_case, LAYOUT(CONSTANT_LAYOUT));
      ck_assert_str_eq(bri_datafile_layout_name(pg->layout), "constant");
      ck_assert_uint_eq(pg->n_buffers, 0);
      ck_assert_uint_eq(pg->layout->constant_layout->n_layers, 1);
      ck_assert_int_eq(pg->layout->constant_layout->layers[0],
                       LANCE__ENCODINGS21__REP_DEF_LAYER__REPDEF_NULLABLE_ITEM);
      continue;
    }
    ck_assert_int_eq(pg->layout->layout_case, LAYOUT(MINI_BLOCK_LAYOUT));
    const Lance__Encodings21__MiniBlockLayout *mb = pg->layout->mini_block_layout;
    ck_assert_uint_eq(mb->num_items, 40);
    /* 2.2 writes has_large_chunk = true, 2.1 leaves it out (docs/format/file.md 3.1). */
    ck_assert_int_eq(mb->has_has_large_chunk, minor == 2);
    ck_assert_int_eq(mb->has_large_chunk, minor == 2);
    ck_assert_uint_eq(pg->n_buffers, 2);
    check_buf(pg, 1, data_off[c], data_len[c]);
    ck_assert_uint_eq(pg->buffer_sizes[0], minor == 2 ? 4 : 2); /* one chunk word */
    ck_assert_uint_eq(pg->buffer_offsets[0] % 64, 0);
    /* The page's Any bytes are kept verbatim: type URL first. */
    ck_assert_uint_gt(pg->encoding_len, 31);
    ck_assert_int_eq(memcmp(pg->encoding_bytes + 2, BRI_PAGE_LAYOUT_TYPE_URL, 29), 0);
  }
  /* Column 0 (id int64, 40 values in one 328-byte chunk): the chunk word is
   * ((328/8 - 1) << 4) | 0 = 0x280 (docs/format/file.md 3.1). */
  const bri_page *pg = page(df, 0, 0);
  uint8_t *b;
  bri_error err = {0};
  ck_assert_int_eq(bri_datafile_read(df, pg->buffer_offsets[0], pg->buffer_sizes[0], &b, &err), 0);
  ck_assert_uint_eq(b[0], 0x80);
  ck_assert_uint_eq(b[1], 0x02);
  if (minor == 2) ck_assert_uint_eq(bri_le16(b + 2), 0);
  free(b);
  bri_datafile_close(df);
}

START_TEST(plain_2_1) { check_plain("datafile/plain21.lance", 1, 7365); }
END_TEST

START_TEST(plain_2_2) { check_plain("datafile/plain22.lance", 2, 7379); }
END_TEST

static void check_nested(const char *name, int minor) {
  bri_datafile *df = open_fixture(name);
  ck_assert_uint_eq(bri_datafile_num_rows(df), 30);
  ck_assert_uint_eq(bri_datafile_num_columns(df), minor == 1 ? 7 : 6);
  check_field(df, 0, "id", "int64", 0, -1, 0);
  check_field(df, 1, "name", "string", 1, -1, 1);
  check_field(df, 2, "tags", "list", 2, -1, 1);
  check_field(df, 3, "item", "int32", 3, 2, 1);
  check_field(df, 4, "pt", "struct", 4, -1, 1);
  check_field(df, 5, "x", "double", 5, 4, 1);
  check_field(df, 6, "y", "float", 6, 4, 1);
  check_field(df, 7, "big", "string", 7, -1, 1);
  /* tags.item: rep/def levels and a repetition index (third buffer). */
  const bri_page *pg = page(df, 2, 0);
  ck_assert_int_eq(pg->layout->layout_case, LAYOUT(MINI_BLOCK_LAYOUT));
  const Lance__Encodings21__MiniBlockLayout *mb = pg->layout->mini_block_layout;
  ck_assert_uint_eq(pg->n_buffers, 3);
  ck_assert_uint_eq(mb->repetition_index_depth, 1);
  ck_assert_uint_eq(mb->num_items, 24);
  ck_assert_uint_eq(mb->n_layers, 2);
  ck_assert_int_eq(mb->layers[1], LANCE__ENCODINGS21__REP_DEF_LAYER__REPDEF_NULL_AND_EMPTY_LIST);
  ck_assert_uint_eq(pg->buffer_sizes[2], 16); /* one chunk x {u64, u64} */
  /* big: FullZip with a repetition index. */
  pg = page(df, 5, 0);
  ck_assert_int_eq(pg->layout->layout_case, LAYOUT(FULL_ZIP_LAYOUT));
  ck_assert_str_eq(bri_datafile_layout_name(pg->layout), "full_zip");
  ck_assert_uint_eq(pg->layout->full_zip_layout->bits_per_offset, 32);
  ck_assert_uint_eq(pg->layout->full_zip_layout->num_items, 30);
  ck_assert_uint_eq(pg->n_buffers, 2);
  ck_assert_uint_eq(pg->buffer_sizes[0], 1689);
  ck_assert_uint_eq(pg->buffer_sizes[1], 62); /* 31 u16 row offsets */
  if (minor == 1) {
    check_field(df, 8, "lb", "large_binary", 8, -1, 1);
    check_buf(pg, 0, 3392, 1689);
    pg = page(df, 6, 0);
    ck_assert_int_eq(pg->layout->layout_case, LAYOUT(BLOB_LAYOUT));
    const Lance__Encodings21__PageLayout *inner = pg->layout->blob_layout->inner_layout;
    ck_assert_ptr_nonnull(inner);
    ck_assert_int_eq(inner->layout_case, LAYOUT(MINI_BLOCK_LAYOUT));
    ck_assert_uint_eq(inner->mini_block_layout->value_compression->packed_struct->n_bits_per_value,
                      2);
  } else {
    check_buf(pg, 0, 1664, 1689);
    ck_assert_int_eq(page(df, 0, 0)->layout->mini_block_layout->has_large_chunk, 1);
  }
  bri_datafile_close(df);
}

START_TEST(nested_2_1) { check_nested("datafile/nested21.lance", 1); }
END_TEST

START_TEST(nested_2_2) { check_nested("datafile/nested22.lance", 2); }
END_TEST

START_TEST(multipage) {
  for (int v = 1; v <= 2; v++) {
    bri_datafile *df =
        open_fixture(v == 1 ? "datafile/multipage21.lance" : "datafile/multipage22.lance");
    ck_assert_uint_eq(bri_datafile_num_rows(df), 1048576);
    ck_assert_uint_eq(bri_datafile_num_columns(df), 2);
    check_field(df, 0, "n", "int64", 0, -1, 1);
    check_field(df, 1, "k", "int32", 1, -1, 0);
    for (size_t c = 0; c < 2; c++) {
      const bri_column *col = bri_datafile_column(df, c);
      ck_assert_uint_eq(col->n_pages, 2);
      ck_assert_uint_eq(col->pages[0].n_rows, 1000000);
      ck_assert_uint_eq(col->pages[0].priority, 0);
      ck_assert_uint_eq(col->pages[1].n_rows, 48576);
      ck_assert_uint_eq(col->pages[1].priority, 1000000);
    }
    /* The all-null column is a buffer-less constant layout in both versions. */
    ck_assert_int_eq(page(df, 0, 1)->layout->layout_case, LAYOUT(CONSTANT_LAYOUT));
    ck_assert_uint_eq(page(df, 0, 1)->n_buffers, 0);
    if (v == 1) {
      /* k = 5 is Rle in 2.1 (no constant layout there). */
      check_buf(page(df, 1, 0), 0, 0, 490);
      check_buf(page(df, 1, 0), 1, 512, 25408);
      check_buf(page(df, 1, 1), 0, 25920, 24);
      check_buf(page(df, 1, 1), 1, 25984, 1224);
      ck_assert_ptr_nonnull(page(df, 1, 1)->layout->mini_block_layout->value_compression->rle);
    } else {
      const Lance__Encodings21__ConstantLayout *cl = page(df, 1, 1)->layout->constant_layout;
      ck_assert(cl->has_inline_value);
      ck_assert_uint_eq(cl->inline_value.len, 4);
      ck_assert_uint_eq(bri_le32(cl->inline_value.data), 5);
      uint64_t gp, gs;
      bri_datafile_global_buffer(df, 0, &gp, &gs);
      ck_assert_uint_eq(gp, 0); /* no data buffers at all: schema at offset 0 */
    }
    bri_datafile_close(df);
  }
}
END_TEST

START_TEST(open_mem_matches_open) {
  char *p = bri_fixture("datafile/nested21.lance");
  size_t len;
  uint8_t *b = bri_slurp(p, &len);
  bri_datafile *df;
  bri_error err = {0};
  ck_assert_int_eq(bri_datafile_open_mem(b, len, "img.lance", &df, &err), 0);
  ck_assert_str_eq(bri_datafile_path(df), "img.lance");
  ck_assert_uint_eq(bri_datafile_num_columns(df), 7);
  const bri_page *pg = page(df, 5, 0);
  uint8_t *a;
  ck_assert_int_eq(bri_datafile_read(df, pg->buffer_offsets[1], pg->buffer_sizes[1], &a, &err), 0);
  ck_assert_int_eq(memcmp(a, b + pg->buffer_offsets[1], pg->buffer_sizes[1]), 0);
  free(a);
  /* Reads outside the file are refused, naming the file. */
  ck_assert_int_eq(bri_datafile_read(df, len - 10, 11, &a, &err), BRI_ECORRUPT);
  ck_assert_ptr_null(a);
  ck_assert_ptr_nonnull(strstr(err.msg, "img.lance"));
  ck_assert_int_eq(bri_datafile_read(df, UINT64_MAX, 2, &a, &err), BRI_ECORRUPT);
  uint8_t small[4];
  ck_assert_int_eq(bri_datafile_read_into(df, len - 4, 4, small, &err), 0);
  ck_assert_int_eq(memcmp(small, "LANC", 4), 0);
  bri_datafile_close(df);
  /* The ColumnMetadata view matches the parsed page. */
  df = open_fixture("datafile/nested21.lance");
  const Lance__File__V2__ColumnMetadata *cm = bri_datafile_column_metadata(df, 5);
  ck_assert_uint_eq(cm->n_pages, 1);
  ck_assert_uint_eq(cm->pages[0]->buffer_offsets[0], 3392);
  ck_assert_ptr_null(bri_datafile_column(df, 7));
  ck_assert_ptr_null(bri_datafile_column_metadata(df, 7));
  bri_datafile_close(df);
  free(b);
  free(p);
}
END_TEST

/* ------------------------------------------------------------ refusals */

typedef struct fixture_bytes {
  char *dir;
  char *path; /* where the variant is written */
  uint8_t *b;
  size_t len;
} fixture_bytes;

static fixture_bytes load(const char *name) {
  fixture_bytes f;
  char *p = bri_fixture(name);
  f.b = bri_slurp(p, &f.len);
  free(p);
  f.dir = bri_tmpdir();
  f.path = bri_strdupf("%s/variant.lance", f.dir);
  return f;
}

static void unload(fixture_bytes *f) {
  bri_rmtree(f->dir);
  free(f->dir);
  free(f->path);
  free(f->b);
}

/* Writes the bytes at f->path, opens them, and expects code with the path
 * and needle in the message. */
static void expect_refused(const fixture_bytes *f, const uint8_t *b, size_t len, int code,
                           const char *needle) {
  bri_write_bytes(f->path, b, len);
  bri_datafile *df = (bri_datafile *)1;
  bri_error err = {0};
  int rc = bri_datafile_open(NULL, f->path, &df, &err);
  ck_assert_msg(rc == code, "len %zu: expected %d, got %d (%s)", len, code, rc, err.msg);
  ck_assert_ptr_null(df);
  ck_assert_msg(strstr(err.msg, f->path) != NULL, "no path in: %s", err.msg);
  if (needle) ck_assert_msg(strstr(err.msg, needle) != NULL, "'%s' not in: %s", needle, err.msg);
}

static void expect_refused_mem(const uint8_t *b, size_t len, int code) {
  uint8_t *c = malloc(len ? len : 1); /* exact size so ASan sees over-reads */
  memcpy(c, b, len);
  bri_datafile *df = (bri_datafile *)1;
  bri_error err = {0};
  int rc = bri_datafile_open_mem(c, len, "mem.lance", &df, &err);
  ck_assert_msg(rc == code, "len %zu: expected %d, got %d (%s)", len, code, rc, err.msg);
  ck_assert_ptr_null(df);
  ck_assert_ptr_nonnull(strstr(err.msg, "mem.lance"));
  free(c);
}

START_TEST(truncated) {
  const char *names[] = {"datafile/plain21.lance", "datafile/plain22.lance",
                         "datafile/nested21.lance", "datafile/multipage22.lance"};
  for (size_t i = 0; i < 4; i++) {
    fixture_bytes f = load(names[i]);
    /* Every cut in the last 200 bytes, through the file path. */
    for (size_t l = f.len > 200 ? f.len - 200 : 0; l < f.len; l++)
      expect_refused(&f, f.b, l, BRI_ECORRUPT, NULL);
    /* Every other length from memory. */
    for (size_t l = 0; l < f.len; l++) expect_refused_mem(f.b, l, BRI_ECORRUPT);
    unload(&f);
  }
  fixture_bytes f = load("datafile/plain21.lance");
  expect_refused(&f, f.b, 39, BRI_ECORRUPT, "smaller than the 40-byte");
  expect_refused(&f, f.b, f.len - 1, BRI_ECORRUPT, "LANC");
  unload(&f);
}
END_TEST

static uint8_t *copy(const fixture_bytes *f) {
  uint8_t *c = malloc(f->len);
  memcpy(c, f->b, f->len);
  return c;
}

START_TEST(footer_patches) {
  fixture_bytes f = load("datafile/plain21.lance");
  size_t ft = f.len - 40;
  uint8_t *c = copy(&f);
  c[f.len - 1] = 'X';
  expect_refused(&f, c, f.len, BRI_ECORRUPT, "expected the magic \"LANC\"");
  free(c);

  struct {
    uint16_t major, minor;
    const char *needle;
  } versions[] = {
      {0, 3, "version 2.0"}, {2, 3, "version 2.3"}, {0, 1, "legacy Lance v1"},
      {0, 2, "legacy Lance v1"}, {2, 0, "unknown Lance file version 2.0"}, {3, 1, "3.1"},
  };
  for (size_t i = 0; i < sizeof versions / sizeof *versions; i++) {
    c = copy(&f);
    bri_put_le16(c + ft + 32, versions[i].major);
    bri_put_le16(c + ft + 34, versions[i].minor);
    expect_refused(&f, c, f.len, BRI_EUNSUPPORTED, versions[i].needle);
    free(c);
  }
  struct {
    size_t at;
    int width;
    uint64_t value;
    const char *needle;
  } bad[] = {
      {0, 8, 1u << 30, "column metadata start"},              /* column_meta_start past the CMO */
      {8, 8, 100000, "after the global buffer table start"},  /* CMO past the end */
      {8, 8, 7181 + 16, "8 columns need a 128-byte"},         /* CMO moved */
      {16, 8, 100000, "past the footer"},                     /* GBO past the end */
      {16, 8, UINT64_MAX, "past the footer"},
      {28, 4, 0xFFFFFFFFu, "4294967295 columns"},
      {28, 4, 9, "9 columns"},
      {24, 4, 0, "no global buffers"},
      {24, 4, 0xFFFFFFFFu, "4294967295 global buffers"},
      {24, 4, 4, "4 global buffers"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    c = copy(&f);
    if (bad[i].width == 8) bri_put_le64(c + ft + bad[i].at, bad[i].value);
    else bri_put_le32(c + ft + bad[i].at, (uint32_t)bad[i].value);
    expect_refused(&f, c, f.len, BRI_ECORRUPT, bad[i].needle);
    free(c);
  }
  /* Global buffer table entry (at 7309): position past the data region,
   * unaligned, size too large. */
  c = copy(&f);
  bri_put_le64(c + 7309, f.len + 64);
  expect_refused(&f, c, f.len, BRI_ECORRUPT, "global buffer table entry 0 at offset 7309");
  bri_put_le64(c + 7309, 6017);
  bri_put_le64(c + 7317, 200);
  expect_refused(&f, c, f.len, BRI_ECORRUPT, "not a multiple of 64");
  bri_put_le64(c + 7309, 6016);
  bri_put_le64(c + 7317, 269);
  expect_refused(&f, c, f.len, BRI_ECORRUPT, "[6016, +269)");
  /* A global buffer 0 that is not a FileDescriptor. */
  bri_put_le64(c + 7317, 268);
  c[6017] = c[6018] = 0xff; /* schema length varint: far past the buffer */
  c[6019] = 0x7f;
  expect_refused(&f, c, f.len, BRI_ECORRUPT, "file descriptor");
  free(c);
  /* Column metadata table entry 3 (at 7181 + 48) past its region. */
  c = copy(&f);
  bri_put_le64(c + 7181 + 48, 7100);
  expect_refused(&f, c, f.len, BRI_ECORRUPT, "column metadata offset table entry 3");
  bri_put_le64(c + 7181 + 48, 6622);
  bri_put_le64(c + 7181 + 56, 115); /* one byte short: the message is cut */
  expect_refused(&f, c, f.len, BRI_ECORRUPT, "column metadata 3");
  free(c);
  unload(&f);
}
END_TEST

/* Re-packs every ColumnMetadata after mut() changed it, keeping the data
 * region and global buffers, and rewrites the tables and the footer. */
typedef void (*mutator)(size_t c, Lance__File__V2__ColumnMetadata *cm, void *arg);

static uint8_t *rebuild(const uint8_t *b, size_t len, mutator mut, void *arg, size_t *out_len) {
  const uint8_t *ft = b + len - 40;
  uint64_t cms = bri_le64(ft), cmo = bri_le64(ft + 8), gbo = bri_le64(ft + 16);
  uint32_t ng = bri_le32(ft + 24), nc = bri_le32(ft + 28);
  uint8_t *out = malloc(len * 2 + 65536);
  memcpy(out, b, cms);
  size_t pos = cms;
  uint64_t *pos_tab = calloc(nc, 16);
  for (uint32_t c = 0; c < nc; c++) {
    uint64_t p = bri_le64(b + cmo + 16 * c), s = bri_le64(b + cmo + 16 * c + 8);
    Lance__File__V2__ColumnMetadata *cm =
        lance__file__v2__column_metadata__unpack(NULL, (size_t)s, b + p);
    ck_assert_ptr_nonnull(cm);
    mut(c, cm, arg);
    size_t n = lance__file__v2__column_metadata__pack(cm, out + pos);
    pos_tab[2 * c] = pos;
    pos_tab[2 * c + 1] = n;
    pos += n;
    lance__file__v2__column_metadata__free_unpacked(cm, NULL);
  }
  size_t new_cmo = pos;
  for (uint32_t c = 0; c < nc; c++) {
    bri_put_le64(out + pos, pos_tab[2 * c]);
    bri_put_le64(out + pos + 8, pos_tab[2 * c + 1]);
    pos += 16;
  }
  size_t new_gbo = pos;
  memcpy(out + pos, b + gbo, 16 * (size_t)ng);
  pos += 16 * (size_t)ng;
  memcpy(out + pos, ft, 40);
  bri_put_le64(out + pos + 8, new_cmo);
  bri_put_le64(out + pos + 16, new_gbo);
  pos += 40;
  free(pos_tab);
  *out_len = pos;
  return out;
}

typedef struct mut_arg {
  size_t column;
  int what;
  uint64_t value;
} mut_arg;

enum {
  M_NONE, M_BUF_OFFSET, M_BUF_SIZE, M_ROWS, M_PAGE_URL, M_SPARSE, M_UNSET, M_INDIRECT,
  M_COUNTS, M_COLUMN_URL, M_GARBAGE, M_DEEP, M_NO_ENCODING, M_COL_BUFFER, M_EXTRA_PAGE,
};

static void set_any(Lance__File__V2__Encoding *enc, const char *url, const uint8_t *v, size_t n) {
  Google__Protobuf__Any any = GOOGLE__PROTOBUF__ANY__INIT;
  any.type_url = (char *)url;
  any.has_value = 1;
  any.value.data = (uint8_t *)v;
  any.value.len = n;
  size_t sz = google__protobuf__any__get_packed_size(&any);
  uint8_t *buf = malloc(sz);
  google__protobuf__any__pack(&any, buf);
  free(enc->direct->encoding.data);
  enc->direct->encoding.data = buf;
  enc->direct->encoding.len = sz;
}

static void mutate(size_t c, Lance__File__V2__ColumnMetadata *cm, void *argp) {
  mut_arg *a = argp;
  if (c != a->column) return;
  Lance__File__V2__ColumnMetadata__Page *pg = cm->pages[0];
  switch (a->what) {
  case M_BUF_OFFSET: pg->buffer_offsets[1] = a->value; break;
  case M_BUF_SIZE: pg->buffer_sizes[1] = a->value; break;
  case M_ROWS: pg->length = a->value; break;
  case M_PAGE_URL: {
    /* Same layout bytes under the 2.0 type URL. */
    Google__Protobuf__Any *any = google__protobuf__any__unpack(
        NULL, pg->encoding->direct->encoding.len, pg->encoding->direct->encoding.data);
    uint8_t v[256];
    size_t n = any->value.len;
    memcpy(v, any->value.data, n);
    google__protobuf__any__free_unpacked(any, NULL);
    set_any(pg->encoding, "/lance.encodings.ArrayEncoding", v, n);
    break;
  }
  case M_SPARSE: {
    static const uint8_t sparse[] = {0x2a, 0x02, 0x10, 0x01}; /* field 5 {num_buffers 1} */
    set_any(pg->encoding, BRI_PAGE_LAYOUT_TYPE_URL, sparse, sizeof sparse);
    break;
  }
  case M_UNSET: set_any(pg->encoding, BRI_PAGE_LAYOUT_TYPE_URL, NULL, 0); break;
  case M_GARBAGE: {
    static const uint8_t g[] = {0x0a, 0x50, 0x01};
    set_any(pg->encoding, BRI_PAGE_LAYOUT_TYPE_URL, g, sizeof g);
    break;
  }
  case M_DEEP: {
    /* PageLayout{blob_layout: BlobLayout{inner_layout: PageLayout{...}}}
     * nested 200 times, built from the inside out. */
    enum { DEPTH = 200, CAP = 8 * DEPTH + 16 };
    static uint8_t buf[CAP];
    size_t start = CAP;
    for (int d = 0; d < 2 * DEPTH; d++) {
      size_t n = CAP - start;
      if (n >= 128) buf[--start] = (uint8_t)(n >> 7);
      buf[--start] = (uint8_t)((n & 0x7f) | (n >= 128 ? 0x80 : 0));
      buf[--start] = d % 2 == 0 ? 0x0a /* BlobLayout.inner_layout */
                                : 0x22; /* PageLayout.blob_layout */
    }
    set_any(pg->encoding, BRI_PAGE_LAYOUT_TYPE_URL, buf + start, CAP - start);
    break;
  }
  case M_INDIRECT: {
    Lance__File__V2__DeferredEncoding *d = malloc(sizeof *d);
    lance__file__v2__deferred_encoding__init(d);
    lance__file__v2__direct_encoding__free_unpacked(pg->encoding->direct, NULL);
    pg->encoding->location_case = LANCE__FILE__V2__ENCODING__LOCATION_INDIRECT;
    pg->encoding->indirect = d;
    break;
  }
  case M_COUNTS: pg->n_buffer_sizes = 1; break;
  case M_COLUMN_URL: {
    static const uint8_t v[] = {0x0a, 0x00};
    set_any(cm->encoding, "/lance.encodings.ColumnEncodingX", v, sizeof v);
    break;
  }
  case M_NO_ENCODING:
    lance__file__v2__encoding__free_unpacked(pg->encoding, NULL);
    pg->encoding = NULL;
    break;
  case M_COL_BUFFER: {
    cm->n_buffer_offsets = cm->n_buffer_sizes = 1;
    cm->buffer_offsets = malloc(8);
    cm->buffer_sizes = malloc(8);
    cm->buffer_offsets[0] = a->value;
    cm->buffer_sizes[0] = 10;
    break;
  }
  default: break;
  }
}

static void expect_mutation(const fixture_bytes *f, size_t column, int what, uint64_t value,
                            int code, const char *needle) {
  mut_arg a = {column, what, value};
  size_t n;
  uint8_t *b = rebuild(f->b, f->len, mutate, &a, &n);
  if (code == 0) {
    bri_write_bytes(f->path, b, n);
    bri_datafile *df;
    bri_error err = {0};
    ck_assert_msg(bri_datafile_open(NULL, f->path, &df, &err) == 0, "%s", err.msg);
    bri_datafile_close(df);
  } else {
    expect_refused(f, b, n, code, needle);
    expect_refused_mem(b, n, code);
  }
  free(b);
}

START_TEST(column_metadata_mutations) {
  fixture_bytes f = load("datafile/plain21.lance");
  /* The unmodified re-pack opens: the rebuild itself is sound. */
  expect_mutation(&f, 0, M_NONE, 0, 0, NULL);
  expect_mutation(&f, 0, M_BUF_OFFSET, 1u << 20, BRI_ECORRUPT,
                  "column 0 (metadata at offset 6284): page 0: buffer 1 [1048576, +328) is not "
                  "inside the data region [0, 6284)");
  expect_mutation(&f, 2, M_BUF_SIZE, 6284, BRI_ECORRUPT, "page 0: buffer 1 [960, +6284)");
  expect_mutation(&f, 2, M_BUF_OFFSET, 6016, BRI_ECORRUPT, "buffer 1 [6016, +1608)");
  expect_mutation(&f, 0, M_BUF_OFFSET, UINT64_MAX - 63, BRI_ECORRUPT, "not inside the data region");
  expect_mutation(&f, 0, M_BUF_OFFSET, 65, BRI_ECORRUPT, "buffer 1 offset 65 is not a multiple of 64");
  expect_mutation(&f, 3, M_ROWS, 39, BRI_ECORRUPT, "column 3 (metadata at offset 6622): its 1 "
                  "pages hold 39 rows, but the file descriptor says the file has 40 rows");
  expect_mutation(&f, 3, M_ROWS, UINT64_MAX, BRI_ECORRUPT, "rows");
  expect_mutation(&f, 1, M_PAGE_URL, 0, BRI_ECORRUPT,
                  "Any type URL is \"/lance.encodings.ArrayEncoding\", expected "
                  "\"/lance.encodings21.PageLayout\"");
  expect_mutation(&f, 1, M_SPARSE, 0, BRI_EUNSUPPORTED, "SparseLayout");
  expect_mutation(&f, 1, M_UNSET, 0, BRI_ECORRUPT, "sets no layout");
  expect_mutation(&f, 1, M_GARBAGE, 0, BRI_ECORRUPT, "page layout");
  expect_mutation(&f, 1, M_DEEP, 0, BRI_ECORRUPT, "nested deeper");
  expect_mutation(&f, 1, M_INDIRECT, 0, BRI_EUNSUPPORTED, "indirect");
  expect_mutation(&f, 1, M_NO_ENCODING, 0, BRI_ECORRUPT, "no encoding");
  expect_mutation(&f, 1, M_COUNTS, 0, BRI_ECORRUPT, "2 buffer offsets but 1 buffer sizes");
  expect_mutation(&f, 7, M_COLUMN_URL, 0, BRI_ECORRUPT, "/lance.encodings.ColumnEncodingX");
  expect_mutation(&f, 4, M_COL_BUFFER, 6280, BRI_ECORRUPT, "column buffers");
  /* Column buffers need not be 64-aligned, only inside the data region. */
  expect_mutation(&f, 4, M_COL_BUFFER, 6001, 0, NULL);
  unload(&f);
}
END_TEST

START_TEST(layout_error_offset_points_at_the_layout) {
  /* The offset named for a bad page layout is where its bytes really are,
   * although protobuf-c copies them out of the file. */
  fixture_bytes f = load("datafile/plain22.lance");
  mut_arg a = {5, M_GARBAGE, 0};
  size_t n;
  uint8_t *b = rebuild(f.b, f.len, mutate, &a, &n);
  bri_datafile *df;
  bri_error err = {0};
  ck_assert_int_eq(bri_datafile_open_mem(b, n, "g.lance", &df, &err), BRI_ECORRUPT);
  const char *m = strstr(err.msg, "page layout at offset ");
  ck_assert_msg(m != NULL, "%s", err.msg);
  unsigned long long at = strtoull(m + strlen("page layout at offset "), NULL, 10);
  ck_assert_uint_lt(at + 3, n);
  ck_assert_uint_eq(b[at], 0x0a);
  ck_assert_uint_eq(b[at + 1], 0x50);
  ck_assert_uint_eq(b[at + 2], 0x01);
  ck_assert_ptr_nonnull(strstr(err.msg, "column 5"));
  free(b);
  unload(&f);
}
END_TEST

/* What open read for column k (without protobuf-c when the bytes have the
 * shape Lance writes) is what protobuf-c decodes from the same bytes. */
static void same_as_protobuf(bri_datafile *df, size_t k) {
  const bri_column *col = bri_datafile_column(df, k);
  const Lance__File__V2__ColumnMetadata *cm = bri_datafile_column_metadata(df, k);
  ck_assert_ptr_nonnull(cm);
  ck_assert_uint_eq(col->n_pages, cm->n_pages);
  ck_assert_uint_eq(col->n_buffers, cm->n_buffer_offsets);
  for (size_t b = 0; b < col->n_buffers; b++) {
    ck_assert_uint_eq(col->buffer_offsets[b], cm->buffer_offsets[b]);
    ck_assert_uint_eq(col->buffer_sizes[b], cm->buffer_sizes[b]);
  }
  for (size_t p = 0; p < col->n_pages; p++) {
    const bri_page *a = &col->pages[p];
    const Lance__File__V2__ColumnMetadata__Page *b = cm->pages[p];
    ck_assert_uint_eq(a->n_rows, b->has_length ? b->length : 0);
    ck_assert_uint_eq(a->priority, b->has_priority ? b->priority : 0);
    ck_assert_uint_eq(a->n_buffers, b->n_buffer_offsets);
    ck_assert_uint_eq(b->n_buffer_offsets, b->n_buffer_sizes);
    for (size_t q = 0; q < a->n_buffers; q++) {
      ck_assert_uint_eq(a->buffer_offsets[q], b->buffer_offsets[q]);
      ck_assert_uint_eq(a->buffer_sizes[q], b->buffer_sizes[q]);
    }
    ck_assert_int_eq(b->encoding->location_case, LANCE__FILE__V2__ENCODING__LOCATION_DIRECT);
    ck_assert_uint_eq(a->encoding_len, b->encoding->direct->encoding.len);
    ck_assert_int_eq(memcmp(a->encoding_bytes, b->encoding->direct->encoding.data, a->encoding_len), 0);
  }
}

START_TEST(metadata_byte_flips) {
  /* Every single-byte corruption of the metadata either opens with the
   * guarantees intact, reading every column as protobuf-c does, or fails
   * naming the file, with or without a schema
   * cache (one shared by all the variants, as a table's is by its files:
   * a schema cached from an earlier variant must not let a broken one in). */
  fixture_bytes f = load("datafile/nested21.lance");
  bri_pbcache *cache = bri_pbcache_new();
  bri_datafile_opts opts = {.cache = cache};
  size_t from = 5760; /* global buffer 0 */
  for (size_t i = from; i < 2 * f.len - from; i++) {
    for (int x = 1; x < 256; x <<= 1) {
      uint8_t *c = copy(&f);
      c[i < f.len ? i : i - f.len + from] ^= (uint8_t)x;
      bri_datafile *df = NULL;
      bri_error err = {0};
      int rc = i < f.len ? bri_datafile_open_mem(c, f.len, "flip.lance", &df, &err)
                         : bri_datafile_open_mem_in(c, f.len, "flip.lance", &opts, &df, &err);
      if (rc == 0) {
        uint64_t end = bri_datafile_footer_of(df)->column_meta_start;
        for (size_t k = 0; k < bri_datafile_num_columns(df); k++) {
          const bri_column *col = bri_datafile_column(df, k);
          ck_assert_uint_eq(col->n_rows, bri_datafile_num_rows(df));
          for (size_t p = 0; p < col->n_pages; p++)
            for (size_t q = 0; q < col->pages[p].n_buffers; q++)
              ck_assert(col->pages[p].buffer_offsets[q] + col->pages[p].buffer_sizes[q] <= end);
          same_as_protobuf(df, k);
        }
        bri_datafile_close(df);
      } else {
        ck_assert_ptr_nonnull(strstr(err.msg, "flip.lance"));
      }
      free(c);
    }
  }
  bri_pbcache_free(cache);
  unload(&f);
}
END_TEST

START_TEST(cache_shares_schemas_and_layouts) {
  /* Files with the same schema bytes share one decoded Schema, equal to
   * what each file decodes alone; another schema gets its own. Pages with
   * the same layout bytes share one decoded layout. */
  bri_pbcache *cache = bri_pbcache_new();
  const char *names[] = {"datafile/nested22.lance", "datafile/nested22.lance", "datafile/plain22.lance"};
  bri_datafile *cached[3], *alone[3];
  bri_error err = {0};
  bri_datafile_opts opts = {.cache = cache};
  for (int i = 0; i < 3; i++) {
    char *p = bri_fixture(names[i]);
    ck_assert_msg(bri_datafile_open_in(NULL, p, &opts, &cached[i], &err) == 0, "%s", err.msg);
    ck_assert_msg(bri_datafile_open(NULL, p, &alone[i], &err) == 0, "%s", err.msg);
    free(p);
    const Lance__File__FileDescriptor *a = bri_datafile_descriptor(cached[i]);
    const Lance__File__FileDescriptor *b = bri_datafile_descriptor(alone[i]);
    ck_assert(bri_pb_equal(&a->base, &b->base));
    ck_assert_ptr_ne(a->schema, b->schema);
    ck_assert_uint_eq(bri_datafile_num_rows(cached[i]), bri_datafile_num_rows(alone[i]));
    size_t la, lb;
    const uint8_t *ka = bri_datafile_schema_bytes(cached[i], &la), *kb = bri_datafile_schema_bytes(alone[i], &lb);
    ck_assert_ptr_nonnull(ka);
    ck_assert_uint_eq(la, lb);
    ck_assert_int_eq(memcmp(ka, kb, la), 0);
    for (size_t c = 0; c < bri_datafile_num_columns(alone[i]); c++) {
      const bri_column *x = bri_datafile_column(cached[i], c), *y = bri_datafile_column(alone[i], c);
      ck_assert_uint_eq(x->n_pages, y->n_pages);
      for (size_t k = 0; k < x->n_pages; k++)
        ck_assert(bri_pb_equal(&x->pages[k].layout->base, &y->pages[k].layout->base));
    }
  }
  ck_assert_ptr_eq(bri_datafile_descriptor(cached[0])->schema, bri_datafile_descriptor(cached[1])->schema);
  ck_assert_ptr_ne(bri_datafile_descriptor(cached[0])->schema, bri_datafile_descriptor(cached[2])->schema);
  ck_assert_ptr_eq(bri_datafile_column(cached[0], 0)->pages[0].layout,
                   bri_datafile_column(cached[1], 0)->pages[0].layout);
  for (int i = 0; i < 3; i++) bri_datafile_close(cached[i]), bri_datafile_close(alone[i]);
  bri_pbcache_free(cache);
  /* bytes that are no Schema are not cached: the caller decodes and reports */
  cache = bri_pbcache_new();
  static const uint8_t bad[] = {0x0a, 0x05, 0x01};
  ck_assert_ptr_null(bri_pbcache_get(cache, &lance__file__schema__descriptor, bad, sizeof bad, NULL));
  /* the same bytes as another type are another entry */
  Lance__File__Field fl = LANCE__FILE__FIELD__INIT, *flp = &fl;
  Lance__File__Schema s = LANCE__FILE__SCHEMA__INIT;
  fl.name = (char *)"x";
  s.fields = &flp, s.n_fields = 1;
  uint8_t buf[64];
  size_t n = lance__file__schema__pack(&s, buf);
  const ProtobufCMessage *as_schema = bri_pbcache_get(cache, &lance__file__schema__descriptor, buf, n, NULL);
  ck_assert_ptr_nonnull(as_schema);
  ck_assert_ptr_eq(as_schema->descriptor, &lance__file__schema__descriptor);
  /* a full cache answers NULL for new bytes, and still serves its own */
  for (int i = 1; i <= BRI_PBCACHE_MAX; i++) {
    fl.has_id = 1, fl.id = i;
    n = lance__file__schema__pack(&s, buf);
    const Lance__File__Schema *got =
        (const Lance__File__Schema *)bri_pbcache_get(cache, &lance__file__schema__descriptor, buf, n, NULL);
    if (i < BRI_PBCACHE_MAX) {
      ck_assert_ptr_nonnull(got);
      ck_assert_int_eq(got->fields[0]->id, i);
    } else {
      ck_assert_ptr_null(got);
    }
  }
  fl.has_id = 0, fl.id = 0;
  n = lance__file__schema__pack(&s, buf);
  ck_assert_ptr_eq(bri_pbcache_get(cache, &lance__file__schema__descriptor, buf, n, NULL), as_schema);
  bri_pbcache_free(cache);
}
END_TEST

START_TEST(real_unsupported_versions) {
  const char *names[] = {"datafile/v20.lance", "datafile/legacy02.lance"};
  const char *needles[] = {"Lance file version 2.0 (footer version 0.3)",
                           "legacy Lance v1 file (footer version 0.2)"};
  for (int i = 0; i < 2; i++) {
    char *p = bri_fixture(names[i]);
    bri_datafile *df = (bri_datafile *)1;
    bri_error err = {0};
    ck_assert_int_eq(bri_datafile_open(NULL, p, &df, &err), BRI_EUNSUPPORTED);
    ck_assert_ptr_null(df);
    ck_assert_msg(strstr(err.msg, p) && strstr(err.msg, needles[i]), "%s", err.msg);
    free(p);
  }
}
END_TEST

START_TEST(missing_and_not_regular) {
  bri_datafile *df = (bri_datafile *)1;
  bri_error err = {0};
  ck_assert_int_eq(bri_datafile_open(NULL, "/nonexistent/x.lance", &df, &err), BRI_ENOTFOUND);
  ck_assert_ptr_null(df);
  ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/x.lance"));
  char *dir = bri_tmpdir();
  ck_assert_int_eq(bri_datafile_open(NULL, dir, &df, &err), BRI_EIO);
  ck_assert_ptr_nonnull(strstr(err.msg, dir));
  bri_rmtree(dir);
  free(dir);
}
END_TEST

/* A ColumnMetadata field brid does not know (a varint field 99 appended to
 * column 0's metadata, the tables after it shifted): the file still reads,
 * and the column is marked foreign so that page copy leaves it alone
 * (docs/format/compatibility.md); column 1 is not. */
START_TEST(column_metadata_unknown_field) {
  char *p = bri_fixture("datafile/plain22.lance");
  size_t len;
  uint8_t *b = bri_slurp(p, &len);
  ck_assert_ptr_nonnull(b);
  uint8_t *f = b + len - 40;
  uint64_t cmo = bri_le64(f + 8), gbo = bri_le64(f + 16);
  uint32_t ncol = bri_le32(f + 28);
  ck_assert_uint_ge(ncol, 2);
  uint64_t pos0 = bri_le64(b + cmo), end0 = pos0 + bri_le64(b + cmo + 8);
  static const uint8_t extra[] = {0x98, 0x06, 0x07}; /* field 99, varint 7 */
  uint8_t *o = malloc(len + sizeof extra);
  memcpy(o, b, end0);
  memcpy(o + end0, extra, sizeof extra);
  memcpy(o + end0 + sizeof extra, b + end0, len - end0);
  uint8_t *t = o + cmo + sizeof extra, *fo = o + len + sizeof extra - 40;
  for (uint32_t c = 0; c < ncol; c++) {
    uint64_t at = bri_le64(t + 16 * c);
    if (at > pos0) bri_put_le64(t + 16 * c, at + sizeof extra);
  }
  bri_put_le64(t + 8, bri_le64(t + 8) + sizeof extra);
  bri_put_le64(fo + 8, cmo + sizeof extra);
  bri_put_le64(fo + 16, gbo + sizeof extra);
  bri_datafile *df;
  bri_error err = {0};
  ck_assert_msg(bri_datafile_open_mem(o, len + sizeof extra, "foreign.lance", &df, &err) == 0, "%s", err.msg);
  ck_assert(bri_datafile_column(df, 0)->foreign);
  ck_assert(!bri_datafile_column(df, 1)->foreign);
  bri_datafile_close(df);
  free(o), free(b), free(p);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("datafile");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, plain_2_1);
  tcase_add_test(tc, column_metadata_unknown_field);
  tcase_add_test(tc, plain_2_2);
  tcase_add_test(tc, nested_2_1);
  tcase_add_test(tc, nested_2_2);
  tcase_add_test(tc, multipage);
  tcase_add_test(tc, open_mem_matches_open);
  tcase_add_test(tc, truncated);
  tcase_add_test(tc, footer_patches);
  tcase_add_test(tc, column_metadata_mutations);
  tcase_add_test(tc, layout_error_offset_points_at_the_layout);
  tcase_add_test(tc, metadata_byte_flips);
  tcase_add_test(tc, cache_shares_schemas_and_layouts);
  tcase_add_test(tc, real_unsupported_versions);
  tcase_add_test(tc, missing_and_not_regular);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(suite)
