/* test_encoding_pages.c: whole pages through bri_page_decode_buffers, built
 * by hand from the real bytes of docs/format/examples.md (sections 4, 6, 12,
 * 13, 14) and from deliberately hostile variants: chunks claiming more values
 * than the page, sizes past buffers, impossible bit widths, bad FSST tables,
 * zstd bombs, levels above the layers' maximum, 2.3 encodings. Every hostile
 * case asserts the error code and the message, which must name the page (and
 * the chunk) and what was expected. */
#include <stdlib.h>
#include <string.h>

#include "lance/encoding/bitpack.h"
#include "lance/encoding/general.h"
#include "lance/encoding/page.h"
#include "lance/encoding/rle.h"
#include "testutil.h"
#include "util/bytes.h"

typedef Lance__Encodings21__CompressiveEncoding CE;
#define ENC(x) LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION_##x

/* ---- building encodings (malloc'd; freed with protobuf_c_message_free_unpacked) */

static void *msg(size_t size, const ProtobufCMessageDescriptor *d) {
  ProtobufCMessage *m = calloc(1, size);
  protobuf_c_message_init(d, m);
  return m;
}
#define NEW(T, d) ((T *)msg(sizeof(T), &(d)))

static CE *ce(int kase, void *body) {
  CE *e = NEW(CE, lance__encodings21__compressive_encoding__descriptor);
  e->compression_case = kase;
  e->flat = body; /* every case is a pointer in the union */
  return e;
}
static CE *flat(uint64_t bits) {
  Lance__Encodings21__Flat *f = NEW(Lance__Encodings21__Flat, lance__encodings21__flat__descriptor);
  f->has_bits_per_value = 1;
  f->bits_per_value = bits;
  return ce(ENC(FLAT), f);
}
static CE *inline_bp(uint64_t t) {
  Lance__Encodings21__InlineBitpacking *b =
      NEW(Lance__Encodings21__InlineBitpacking, lance__encodings21__inline_bitpacking__descriptor);
  b->has_uncompressed_bits_per_value = 1;
  b->uncompressed_bits_per_value = t;
  return ce(ENC(INLINE_BITPACKING), b);
}
static CE *rle(uint64_t t) {
  Lance__Encodings21__Rle *r = NEW(Lance__Encodings21__Rle, lance__encodings21__rle__descriptor);
  r->values = flat(t);
  r->run_lengths = flat(8);
  return ce(ENC(RLE), r);
}
static CE *variable(uint64_t bits) {
  Lance__Encodings21__Variable *v = NEW(Lance__Encodings21__Variable, lance__encodings21__variable__descriptor);
  v->offsets = flat(bits);
  return ce(ENC(VARIABLE), v);
}
static CE *general(int scheme, CE *inner) {
  Lance__Encodings21__General *g = NEW(Lance__Encodings21__General, lance__encodings21__general__descriptor);
  g->compression = NEW(Lance__Encodings21__BufferCompression, lance__encodings21__buffer_compression__descriptor);
  g->compression->has_scheme = 1;
  g->compression->scheme = scheme;
  g->values = inner;
  return ce(ENC(GENERAL), g);
}
static CE *fsl_enc(uint64_t dim, int validity, CE *inner) {
  Lance__Encodings21__FixedSizeList *f =
      NEW(Lance__Encodings21__FixedSizeList, lance__encodings21__fixed_size_list__descriptor);
  f->has_items_per_value = 1;
  f->items_per_value = dim;
  f->has_has_validity = 1;
  f->has_validity = validity;
  f->values = inner;
  return ce(ENC(FIXED_SIZE_LIST), f);
}
static CE *fsst_enc(const uint8_t *table, size_t len, CE *inner) {
  Lance__Encodings21__Fsst *f = NEW(Lance__Encodings21__Fsst, lance__encodings21__fsst__descriptor);
  f->has_symbol_table = 1;
  f->symbol_table.data = malloc(len);
  memcpy(f->symbol_table.data, table, len);
  f->symbol_table.len = len;
  f->values = inner;
  return ce(ENC(FSST), f);
}
static CE *range_enc(void) {
  Lance__Encodings21__Range *r = NEW(Lance__Encodings21__Range, lance__encodings21__range__descriptor);
  return ce(ENC(RANGE), r);
}

static Lance__Encodings21__RepDefLayer *layers(int n, const int *l) {
  Lance__Encodings21__RepDefLayer *a = malloc(sizeof *a * (size_t)n);
  for (int i = 0; i < n; i++) a[i] = l[i];
  return a;
}

static Lance__Encodings21__PageLayout *page_layout(void) {
  return NEW(Lance__Encodings21__PageLayout, lance__encodings21__page_layout__descriptor);
}

static Lance__Encodings21__PageLayout *miniblock(CE *values, CE *rep, CE *def, int nl, const int *l,
                                                 uint64_t num_buffers, uint64_t num_items, int large) {
  Lance__Encodings21__MiniBlockLayout *mb =
      NEW(Lance__Encodings21__MiniBlockLayout, lance__encodings21__mini_block_layout__descriptor);
  mb->value_compression = values;
  mb->rep_compression = rep;
  mb->def_compression = def;
  mb->n_layers = (size_t)nl;
  mb->layers = layers(nl, l);
  mb->has_num_buffers = 1;
  mb->num_buffers = num_buffers;
  mb->has_num_items = 1;
  mb->num_items = num_items;
  mb->has_has_large_chunk = large;
  mb->has_large_chunk = large;
  if (rep) {
    mb->has_repetition_index_depth = 1;
    mb->repetition_index_depth = 1;
  }
  Lance__Encodings21__PageLayout *p = page_layout();
  p->layout_case = LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_MINI_BLOCK_LAYOUT;
  p->mini_block_layout = mb;
  return p;
}

static void free_layout(Lance__Encodings21__PageLayout *p) {
  protobuf_c_message_free_unpacked(&p->base, NULL);
}

/* ---- running a page --------------------------------------------------------- */

typedef struct page_case {
  const Lance__Encodings21__PageLayout *layout;
  uint64_t n_rows;
  size_t n;
  const uint8_t *bufs[4];
  uint64_t sizes[4];
  uint64_t limit;
} page_case;

static int run(const page_case *c, const bri_leaf_type *t, bri_leaf_page *out, bri_error *err) {
  bri_page_input in = {.where = "t.lance: page 0 of column 0",
                       .file_minor = 2,
                       .n_rows = c->n_rows,
                       .layout = c->layout,
                       .n_buffers = c->n,
                       .buffers = c->bufs,
                       .buffer_sizes = c->sizes};
  bri_page_limits lim = {c->limit};
  return bri_page_decode_buffers(&in, t, &lim, out, err);
}

static void expect_fail(const page_case *c, const bri_leaf_type *t, int code, const char *substr) {
  bri_leaf_page pg;
  bri_error err = {0};
  int rc = run(c, t, &pg, &err);
  ck_assert_msg(rc == code, "rc %d, expected %d: %s", rc, code, err.msg);
  ck_assert_msg(strstr(err.msg, substr) != NULL, "message '%s' lacks '%s'", err.msg, substr);
  ck_assert_msg(strncmp(err.msg, "t.lance: page 0 of column 0: ", 29) == 0, "no page prefix: %s",
                err.msg);
  ck_assert_ptr_null(pg.rep);
  ck_assert_ptr_null(pg.values.data);
}

static const bri_leaf_type T32 = {.kind = BRI_LEAF_FIXED, .bits = 32};
static const bri_leaf_type T64 = {.kind = BRI_LEAF_FIXED, .bits = 64};
static const bri_leaf_type TVAR = {.kind = BRI_LEAF_VARIABLE};

/* ---- docs/format/examples.md section 4: a list<int32?>? chunk ---------------- */

static const uint8_t LIST_META[4] = {0xe0, 0, 0, 0};
static uint8_t LIST_CHUNK[120] = {
    0x0d, 0, 0x1a, 0, 0x1a, 0, 0x24, 0, 0, 0, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe,
    1, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe,
    0, 0, 0, 0, 2, 0, 3, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 3, 0, 0, 0, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe,
    1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 8, 0, 0, 0,
    0xfe, 0xfe, 0xfe, 0xfe};
static const uint8_t LIST_REPIDX[16] = {9};
static const int LIST_LAYERS[2] = {BRI_LAYER_NULLABLE_ITEM, BRI_LAYER_NULL_AND_EMPTY_LIST};

static Lance__Encodings21__PageLayout *list_layout(void) {
  return miniblock(flat(32), flat(16), flat(16), 2, LIST_LAYERS, 1, 9, 1);
}
static page_case list_case(const Lance__Encodings21__PageLayout *l, const uint8_t *chunk) {
  page_case c = {.layout = l, .n_rows = 9, .n = 3,
                 .bufs = {LIST_META, chunk, LIST_REPIDX}, .sizes = {4, 120, 16}};
  return c;
}

START_TEST(worked_list_chunk) {
  Lance__Encodings21__PageLayout *l = list_layout();
  page_case c = list_case(l, LIST_CHUNK);
  bri_leaf_page pg;
  bri_error err = {0};
  ck_assert_int_eq(run(&c, &T32, &pg, &err), 0);
  static const uint16_t rep[] = {1, 0, 1, 1, 1, 0, 1, 1, 0, 0, 1, 1, 1};
  static const uint16_t def[] = {0, 0, 2, 3, 1, 0, 0, 0, 1, 0, 2, 3, 0};
  static const uint32_t val[] = {1, 2, 0, 4, 5, 6, 0, 7, 8};
  ck_assert_uint_eq(pg.layout, BRI_PAGE_MINIBLOCK);
  ck_assert_uint_eq(pg.n_levels, 13);
  ck_assert_mem_eq(pg.rep, rep, sizeof rep);
  ck_assert_mem_eq(pg.def, def, sizeof def);
  ck_assert_uint_eq(pg.values.n, 9);
  ck_assert_mem_eq(pg.values.data, val, sizeof val);
  ck_assert_uint_eq(pg.values.data_len, 36);
  ck_assert_uint_eq(pg.max_rep, 1);
  ck_assert_uint_eq(pg.max_def, 3);
  ck_assert_uint_eq(pg.max_visible_def, 1);
  bri_leaf_page_dispose(&pg);

  /* The same page with 2.1 framing: u16 metadata word and u16 buffer size, so
   * the header is exactly 8 bytes and every section moves up. */
  Lance__Encodings21__PageLayout *l21 = miniblock(flat(32), flat(16), flat(16), 2, LIST_LAYERS, 1, 9, 0);
  uint8_t chunk21[112];
  memset(chunk21, 0xfe, sizeof chunk21);
  memcpy(chunk21, LIST_CHUNK, 6);
  bri_put_le16(chunk21 + 6, 36);
  memcpy(chunk21 + 8, LIST_CHUNK + 16, 26);  /* rep */
  memcpy(chunk21 + 40, LIST_CHUNK + 48, 26); /* def */
  memcpy(chunk21 + 72, LIST_CHUNK + 80, 36); /* values */
  page_case c21 = list_case(l21, chunk21);
  static const uint8_t meta21[2] = {0xd0, 0};
  c21.bufs[0] = meta21;
  c21.sizes[0] = 2;
  c21.sizes[1] = 112;
  ck_assert_int_eq(run(&c21, &T32, &pg, &err), 0);
  ck_assert_mem_eq(pg.rep, rep, sizeof rep);
  ck_assert_mem_eq(pg.def, def, sizeof def);
  ck_assert_mem_eq(pg.values.data, val, sizeof val);
  bri_leaf_page_dispose(&pg);
  free_layout(l21);
  free_layout(l);
}
END_TEST

START_TEST(hostile_list_chunk) {
  Lance__Encodings21__PageLayout *l = list_layout();
  uint8_t chunk[120];
  page_case c;

  memcpy(chunk, LIST_CHUNK, 120);
  chunk[48 + 2 * 3] = 5; /* def[3] = 5 > max_def 3 */
  c = list_case(l, chunk);
  expect_fail(&c, &T32, BRI_ECORRUPT, "level 3 has definition 5, above the layers' maximum 3");

  memcpy(chunk, LIST_CHUNK, 120);
  chunk[16] = 0; /* first rep 0: the page does not start a row */
  c = list_case(l, chunk);
  expect_fail(&c, &T32, BRI_ECORRUPT, "level 0 has repetition 0; a page must start a new row (1)");

  memcpy(chunk, LIST_CHUNK, 120);
  chunk[6] = 0xff; /* value buffer 255 bytes */
  c = list_case(l, chunk);
  expect_fail(&c, &T32, BRI_ECORRUPT,
              "chunk 0 (chunk buffer byte 0, 9 values): value buffer 0: 255 bytes at chunk byte 80 "
              "run past the 120-byte chunk");

  memcpy(chunk, LIST_CHUNK, 120);
  chunk[6] = 0x20; /* 32 bytes: 8 values, 9 needed */
  c = list_case(l, chunk);
  expect_fail(&c, &T32, BRI_ECORRUPT, "values: Flat: 9 values of 32 bits need 36 bytes but the buffer has 32");

  c = list_case(l, LIST_CHUNK);
  c.n_rows = 10;
  expect_fail(&c, &T32, BRI_ECORRUPT, "page holds 9 rows but its length says 10");

  c = list_case(l, LIST_CHUNK);
  c.sizes[1] = 100; /* chunk buffer shorter than the 120-byte chunk */
  expect_fail(&c, &T32, BRI_ECORRUPT, "chunk 0: 120 bytes at byte 0 run past the 100-byte chunk buffer");

  c = list_case(l, LIST_CHUNK);
  static const uint8_t meta2[8] = {0xec, 0, 0, 0, 0xe0, 0, 0, 0}; /* chunk 0: log 12 */
  c.bufs[0] = meta2;
  c.sizes[0] = 8;
  expect_fail(&c, &T32, BRI_ECORRUPT, "chunk 0 claims 4096 values but only 9 of the page's 9 remain");

  c = list_case(l, LIST_CHUNK);
  c.sizes[0] = 3;
  expect_fail(&c, &T32, BRI_ECORRUPT, "chunk metadata is 3 bytes, not a whole number of 4-byte words");

  c = list_case(l, LIST_CHUNK);
  c.n = 1;
  expect_fail(&c, &T32, BRI_ECORRUPT, "MiniBlockLayout page has 1 buffers; expected 2");

  c = list_case(l, LIST_CHUNK);
  expect_fail(&c, &T64, BRI_ECORRUPT, "Flat produces 32-bit values; the column needs 64 bits");

  l->mini_block_layout->num_items = 8;
  c = list_case(l, LIST_CHUNK);
  expect_fail(&c, &T32, BRI_ECORRUPT, "levels make 9 value slots but 8 values were decoded");

  l->mini_block_layout->num_items = 9;
  l->mini_block_layout->num_buffers = 2;
  c = list_case(l, LIST_CHUNK);
  expect_fail(&c, &T32, BRI_ECORRUPT, "MiniBlockLayout says 2 value buffers per chunk but Flat uses 1");
  l->mini_block_layout->num_buffers = 1;

  l->mini_block_layout->layers[1] = 9;
  c = list_case(l, LIST_CHUNK);
  expect_fail(&c, &T32, BRI_ECORRUPT, "layer 1 has unknown RepDefLayer value 9");
  free_layout(l);

  /* A 2.3 encoding is refused by name. */
  l = miniblock(range_enc(), NULL, NULL, 1, LIST_LAYERS, 1, 9, 1);
  c = list_case(l, LIST_CHUNK);
  expect_fail(&c, &T32, BRI_EUNSUPPORTED, "Range encoding belongs to Lance file format 2.3");
  free_layout(l);
}
END_TEST

/* ---- docs/format/examples.md section 6: Rle values in a mini-block ----------- */

static size_t rle_chunk(uint8_t *chunk, uint32_t first, uint32_t n) {
  int32_t in[4096];
  for (uint32_t i = 0; i < n; i++) in[i] = (int32_t)((first + i) / 1000);
  uint8_t vals[4096 * 4], lens[4096];
  size_t runs = bri_rle_encode(32, (uint8_t *)in, n, vals, lens);
  memset(chunk, 0xfe, 8192);
  bri_put_le16(chunk, 0);
  bri_put_le32(chunk + 2, (uint32_t)runs * 4);
  bri_put_le32(chunk + 6, (uint32_t)runs);
  size_t pos = 16;
  memcpy(chunk + pos, vals, runs * 4);
  pos = (pos + runs * 4 + 7) & ~(size_t)7;
  memcpy(chunk + pos, lens, runs);
  return (pos + runs + 7) & ~(size_t)7;
}

START_TEST(worked_rle_chunks) {
  /* 20,000 values in 4 chunks of 4096 and a last of 3616. */
  static uint8_t chunks[5 * 8192];
  uint8_t meta[20];
  size_t off = 0;
  for (int k = 0; k < 5; k++) {
    uint32_t n = k < 4 ? 4096 : 20000 - 4 * 4096;
    size_t size = rle_chunk(chunks + off, (uint32_t)k * 4096, n);
    bri_put_le32(meta + 4 * k, (uint32_t)(((size / 8 - 1) << 4) | (k < 4 ? 12 : 0)));
    if (k == 0) {
      static const uint8_t head[16] = {0, 0, 0x44, 0, 0, 0, 0x11, 0, 0, 0, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe};
      ck_assert_uint_eq(size, 112);
      ck_assert_mem_eq(chunks, head, 16);
      ck_assert_uint_eq(bri_le32(meta), 0xdc); /* `dc 00 00 00` */
      static const uint8_t lens[] = {0xff, 0xff, 0xff, 0xeb, 0xff, 0xff, 0xff, 0xeb};
      ck_assert_mem_eq(chunks + 88, lens, 8);
    }
    off += size;
  }
  int l1[1] = {BRI_LAYER_ALL_VALID_ITEM};
  Lance__Encodings21__PageLayout *l = miniblock(rle(32), NULL, NULL, 1, l1, 2, 20000, 1);
  page_case c = {.layout = l, .n_rows = 20000, .n = 2, .bufs = {meta, chunks}, .sizes = {20, off}};
  bri_leaf_page pg;
  bri_error err = {0};
  ck_assert_int_eq(run(&c, &T32, &pg, &err), 0);
  ck_assert_ptr_null(pg.rep);
  ck_assert_ptr_null(pg.def);
  ck_assert_uint_eq(pg.n_levels, 20000);
  for (uint32_t i = 0; i < 20000; i++) ck_assert_uint_eq(bri_values_get_uint(&pg.values, i, 0), i / 1000);
  bri_leaf_page_dispose(&pg);
  /* runs ending early in chunk 2 */
  chunks[112 * 2 + 88] = 0x10;
  expect_fail(&c, &T32, BRI_ECORRUPT, "chunk 2 (chunk buffer byte 224, 4096 values): values: Rle: 18 "
                                      "runs hold 3857 values but 4096 are expected");
  chunks[112 * 2 + 88] = 0xff;
  free_layout(l);
}
END_TEST

/* ---- docs/format/examples.md section 14: FixedSizeList validity in a chunk - */

START_TEST(worked_fsl_validity) {
  /* rows [0, null, 2, null], [1, 2, 3, null] */
  uint8_t chunk[56];
  memset(chunk, 0xfe, sizeof chunk);
  bri_put_le16(chunk, 0);
  bri_put_le32(chunk + 2, 1);
  bri_put_le32(chunk + 6, 32);
  chunk[16] = 0x75;
  static const uint32_t v[8] = {0, 0, 2, 0, 1, 2, 3, 0};
  memcpy(chunk + 24, v, 32);
  uint8_t meta[4];
  bri_put_le32(meta, ((56 / 8 - 1) << 4));
  int l1[1] = {BRI_LAYER_ALL_VALID_ITEM};
  Lance__Encodings21__PageLayout *l = miniblock(fsl_enc(4, 1, flat(32)), NULL, NULL, 1, l1, 2, 2, 1);
  page_case c = {.layout = l, .n_rows = 2, .n = 2, .bufs = {meta, chunk}, .sizes = {4, 56}};
  bri_leaf_type t = {.kind = BRI_LEAF_FIXED, .bits = 32, .n_dims = 1, .dims = {4}};
  bri_leaf_page pg;
  bri_error err = {0};
  ck_assert_int_eq(run(&c, &t, &pg, &err), 0);
  ck_assert_uint_eq(pg.values.n, 2);
  ck_assert_uint_eq(pg.values.elems_per_slot, 4);
  ck_assert_mem_eq(pg.values.data, v, 32);
  ck_assert_ptr_nonnull(pg.values.fsl_validity[0]);
  ck_assert_uint_eq(pg.values.fsl_validity[0][0], 0x75);
  bri_leaf_page_dispose(&pg);
  /* wrong dimension */
  bri_leaf_type t3 = {.kind = BRI_LEAF_FIXED, .bits = 32, .n_dims = 1, .dims = {3}};
  expect_fail(&c, &t3, BRI_ECORRUPT, "FixedSizeList layer 1 has 4 items per value; the column's dimension is 3");
  expect_fail(&c, &T32, BRI_ECORRUPT, "FixedSizeList layer 1, but the column has 0 FSL dimension(s)");
  free_layout(l);
}
END_TEST

/* ---- General(zstd) bomb and bad FSST table inside pages ---------------------- */

START_TEST(hostile_general_and_fsst) {
  /* General(zstd, Flat(32)) chunk whose unit declares 2^40 bytes */
  uint8_t chunk[32];
  memset(chunk, 0xfe, sizeof chunk);
  bri_put_le16(chunk, 0);
  bri_put_le32(chunk + 2, 16);
  bri_put_le64(chunk + 8, (uint64_t)1 << 40);
  memcpy(chunk + 16, "\x28\xb5\x2f\xfd\x00\x00\x00\x00", 8);
  uint8_t meta[4];
  bri_put_le32(meta, ((32 / 8 - 1) << 4));
  int l1[1] = {BRI_LAYER_ALL_VALID_ITEM};
  Lance__Encodings21__PageLayout *l = miniblock(general(2, flat(32)), NULL, NULL, 1, l1, 1, 4, 1);
  page_case c = {.layout = l, .n_rows = 4, .n = 2, .bufs = {meta, chunk}, .sizes = {4, 32}};
  expect_fail(&c, &T32, BRI_ECORRUPT, "zstd: unit declares 1099511627776 uncompressed bytes, more than the");
  l->mini_block_layout->value_compression->general->compression->scheme = 0;
  expect_fail(&c, &T32, BRI_EUNSUPPORTED, "General names compression scheme 0; expected lz4 (1) or zstd (2)");
  free_layout(l);

  /* A real zstd unit works in the same frame. */
  uint8_t vals[16] = {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0}, *z;
  size_t zlen;
  bri_error err = {0};
  ck_assert_int_eq(bri_general_compress(BRI_GENERAL_ZSTD, 1, vals, 16, &z, &zlen, &err), 0);
  uint8_t chunk2[128];
  memset(chunk2, 0xfe, sizeof chunk2);
  bri_put_le16(chunk2, 0);
  bri_put_le32(chunk2 + 2, (uint32_t)zlen);
  memcpy(chunk2 + 8, z, zlen);
  size_t csize = (8 + zlen + 7) & ~(size_t)7;
  bri_put_le32(meta, (uint32_t)((csize / 8 - 1) << 4));
  free(z);
  l = miniblock(general(2, flat(32)), NULL, NULL, 1, l1, 1, 4, 1);
  page_case c2 = {.layout = l, .n_rows = 4, .n = 2, .bufs = {meta, chunk2}, .sizes = {4, csize}};
  bri_leaf_page pg;
  ck_assert_int_eq(run(&c2, &T32, &pg, &err), 0);
  ck_assert_mem_eq(pg.values.data, vals, 16);
  bri_leaf_page_dispose(&pg);
  /* the page limit applies to decompression too */
  c2.limit = 8;
  expect_fail(&c2, &T32, BRI_ECORRUPT, "page decode limit");
  free_layout(l);

  /* Fsst with a symbol of length 9 */
  uint8_t table[8 + 9] = {1, 0, 0, 1, 0x54, 0x53, 0x53, 0x46, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 9};
  uint8_t vchunk[24];
  memset(vchunk, 0xfe, sizeof vchunk);
  bri_put_le16(vchunk, 0);
  bri_put_le32(vchunk + 2, 9);
  bri_put_le32(vchunk + 8, 8);
  bri_put_le32(vchunk + 12, 9);
  vchunk[16] = 0;
  bri_put_le32(meta, ((24 / 8 - 1) << 4));
  l = miniblock(fsst_enc(table, sizeof table, variable(32)), NULL, NULL, 1, l1, 1, 1, 1);
  page_case c3 = {.layout = l, .n_rows = 1, .n = 2, .bufs = {meta, vchunk}, .sizes = {4, 24}};
  expect_fail(&c3, &TVAR, BRI_ECORRUPT, "Fsst: symbol 0 has length 9 at table byte 16; lengths are 1..8");
  table[16] = 8;
  l->mini_block_layout->value_compression->fsst->symbol_table.data[16] = 8;
  ck_assert_int_eq(run(&c3, &TVAR, &pg, &err), 0);
  ck_assert_uint_eq(pg.values.offsets[1], 8);
  ck_assert_mem_eq(pg.values.data, "abcdefgh", 8);
  bri_leaf_page_dispose(&pg);
  /* offsets going backwards */
  bri_put_le32(vchunk + 12, 7);
  expect_fail(&c3, &TVAR, BRI_ECORRUPT, "Variable: offset 1 (7) is below offset 0 (8)");
  bri_put_le32(vchunk + 12, 99);
  expect_fail(&c3, &TVAR, BRI_ECORRUPT, "Variable: last offset 99 is past the 9-byte chunk buffer");
  free_layout(l);
}
END_TEST

/* ---- InlineBitpacking with an impossible width inside a page ------------------ */

START_TEST(hostile_bit_width) {
  uint8_t chunk[24];
  memset(chunk, 0xfe, sizeof chunk);
  bri_put_le16(chunk, 0);
  bri_put_le32(chunk + 2, 8);
  bri_put_le64(chunk + 8, 65);
  uint8_t meta[4];
  bri_put_le32(meta, ((24 / 8 - 1) << 4));
  int l1[1] = {BRI_LAYER_ALL_VALID_ITEM};
  Lance__Encodings21__PageLayout *l = miniblock(inline_bp(64), NULL, NULL, 1, l1, 1, 3, 1);
  page_case c = {.layout = l, .n_rows = 3, .n = 2, .bufs = {meta, chunk}, .sizes = {4, 24}};
  expect_fail(&c, &T64, BRI_ECORRUPT, "bit width 65, more than the 64-bit values it packs");
  free_layout(l);
}
END_TEST

/* ---- dictionary pages ------------------------------------------------------------ */

START_TEST(dictionary_null_entry) {
  /* items "a", "", "bb" (the empty one is Lance's null entry); indices 2,1,0,1 with
   * def 0,1,0,1: the nulls point at the null entry, and a null slot whose index
   * is garbage (7) must still decode because nulls come from def. */
  uint8_t dict[8 + 16 + 3];
  bri_put_le32(dict, 32);
  bri_put_le32(dict + 4, 24);
  bri_put_le32(dict + 8, 0);
  bri_put_le32(dict + 12, 1);
  bri_put_le32(dict + 16, 1);
  bri_put_le32(dict + 20, 3);
  memcpy(dict + 24, "abb", 3);
  uint8_t chunk[40];
  memset(chunk, 0xfe, sizeof chunk);
  bri_put_le16(chunk, 4);
  bri_put_le16(chunk + 2, 8);
  bri_put_le32(chunk + 4, 16);
  static const uint16_t def[4] = {0, 1, 0, 1};
  memcpy(chunk + 8, def, 8);
  static const uint32_t idx[4] = {2, 7, 0, 1};
  memcpy(chunk + 16, idx, 16);
  uint8_t meta[4];
  bri_put_le32(meta, ((32 / 8 - 1) << 4));
  int l1[1] = {BRI_LAYER_NULLABLE_ITEM};
  Lance__Encodings21__PageLayout *l = miniblock(flat(32), NULL, flat(16), 1, l1, 1, 4, 1);
  l->mini_block_layout->dictionary = variable(32);
  l->mini_block_layout->has_num_dictionary_items = 1;
  l->mini_block_layout->num_dictionary_items = 3;
  page_case c = {.layout = l, .n_rows = 4, .n = 3, .bufs = {meta, chunk, dict}, .sizes = {4, 32, sizeof dict}};
  bri_leaf_page pg;
  bri_error err = {0};
  ck_assert_int_eq(run(&c, &TVAR, &pg, &err), 0);
  static const int64_t offs[5] = {0, 2, 2, 3, 3};
  ck_assert_mem_eq(pg.values.offsets, offs, sizeof offs);
  ck_assert_mem_eq(pg.values.data, "bba", 3);
  bri_leaf_page_dispose(&pg);
  /* a valid slot pointing past the dictionary */
  bri_put_le32(chunk + 16 + 8, 3);
  expect_fail(&c, &TVAR, BRI_ECORRUPT, "value slot 2 holds dictionary index 3 but the dictionary has 3 items");
  bri_put_le32(chunk + 16 + 8, 0);
  l->mini_block_layout->num_dictionary_items = 4;
  expect_fail(&c, &TVAR, BRI_ECORRUPT, "dictionary of 4 items: Variable block holds 4 offsets; 4 values need 5");
  free_layout(l);
}
END_TEST

/* ---- FullZip: docs/format/examples.md section 12, Blob v2 descriptors -------- */

static Lance__Encodings21__PageLayout *blob_fullzip(int nullable) {
  Lance__Encodings21__VariablePackedStruct *v =
      NEW(Lance__Encodings21__VariablePackedStruct, lance__encodings21__variable_packed_struct__descriptor);
  static const uint64_t bits[5] = {8, 64, 64, 32, 0};
  v->n_fields = 5;
  v->fields = calloc(5, sizeof *v->fields);
  for (int i = 0; i < 5; i++) {
    Lance__Encodings21__VariablePackedStruct__FieldEncoding *f =
        NEW(Lance__Encodings21__VariablePackedStruct__FieldEncoding,
            lance__encodings21__variable_packed_struct__field_encoding__descriptor);
    if (bits[i]) {
      f->value = flat(bits[i]);
      f->layout_case = LANCE__ENCODINGS21__VARIABLE_PACKED_STRUCT__FIELD_ENCODING__LAYOUT_BITS_PER_VALUE;
      f->bits_per_value = bits[i];
    } else {
      f->value = variable(32);
      f->layout_case = LANCE__ENCODINGS21__VARIABLE_PACKED_STRUCT__FIELD_ENCODING__LAYOUT_BITS_PER_LENGTH;
      f->bits_per_length = 32;
    }
    v->fields[i] = f;
  }
  Lance__Encodings21__FullZipLayout *fz =
      NEW(Lance__Encodings21__FullZipLayout, lance__encodings21__full_zip_layout__descriptor);
  fz->has_bits_def = 1;
  fz->bits_def = nullable ? 1 : 0;
  fz->details_case = LANCE__ENCODINGS21__FULL_ZIP_LAYOUT__DETAILS_BITS_PER_OFFSET;
  fz->bits_per_offset = 32;
  fz->has_num_items = fz->has_num_visible_items = 1;
  fz->num_items = fz->num_visible_items = 3;
  fz->value_compression = ce(ENC(VARIABLE_PACKED_STRUCT), v);
  int layer = nullable ? BRI_LAYER_NULLABLE_ITEM : BRI_LAYER_ALL_VALID_ITEM;
  fz->n_layers = 1;
  fz->layers = layers(1, &layer);
  Lance__Encodings21__PageLayout *p = page_layout();
  p->layout_case = LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_FULL_ZIP_LAYOUT;
  p->full_zip_layout = fz;
  return p;
}

START_TEST(worked_blob_v2_fullzip) {
  static uint8_t data[] = {
      0x00, 0x19, 0, 0, 0, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
      0x00, 0x19, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x90, 0x01, 0, 0, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0,
      0x01};
  static const uint8_t rowidx[4] = {0, 30, 60, 61};
  Lance__Encodings21__PageLayout *l = blob_fullzip(1);
  page_case c = {.layout = l, .n_rows = 3, .n = 2, .bufs = {data, rowidx}, .sizes = {sizeof data, 4}};
  bri_leaf_page pg;
  bri_error err = {0};
  ck_assert_int_eq(run(&c, bri_leaf_type_blob_v2(), &pg, &err), 0);
  ck_assert_uint_eq(pg.layout, BRI_PAGE_FULLZIP);
  ck_assert_uint_eq(pg.values.n, 3);
  static const uint16_t def[3] = {0, 0, 1};
  ck_assert_mem_eq(pg.def, def, sizeof def);
  const bri_values *ch = pg.values.children;
  ck_assert_uint_eq(bri_values_get_uint(&ch[0], 1, 0), 1);      /* kind Packed */
  ck_assert_uint_eq(bri_values_get_uint(&ch[1], 1, 0), 0);      /* position */
  ck_assert_uint_eq(bri_values_get_uint(&ch[2], 1, 0), 102400); /* size */
  ck_assert_uint_eq(bri_values_get_uint(&ch[3], 1, 0), 1);      /* blob_id */
  ck_assert_uint_eq(ch[4].offsets[3], 0);                       /* no uris */
  ck_assert_uint_eq(bri_values_get_uint(&ch[2], 2, 0), 0);      /* the null row is zero */
  bri_leaf_page_dispose(&pg);

  /* hostile: a row claiming more bytes than remain; a row with a short field */
  data[31] = 0x40;
  expect_fail(&c, bri_leaf_type_blob_v2(), BRI_ECORRUPT, "item 1 claims 64 bytes at byte 35 but only 26 remain");
  data[31] = 0x18;
  expect_fail(&c, bri_leaf_type_blob_v2(), BRI_ECORRUPT, "item 1 (byte 35): field 4: its 4-byte length at row byte 21 is past the 24-byte row");
  data[31] = 0x19;
  l->full_zip_layout->num_items = 1000;
  expect_fail(&c, bri_leaf_type_blob_v2(), BRI_ECORRUPT, "FullZip page claims 1000 items but its 61 bytes hold at most 61");
  l->full_zip_layout->num_items = 50;
  expect_fail(&c, bri_leaf_type_blob_v2(), BRI_ECORRUPT, "item 3: control word at byte 61 is past the 61-byte buffer");
  l->full_zip_layout->num_items = 3;
  expect_fail(&c, &TVAR, BRI_ECORRUPT, "FullZip page holds a VariablePackedStruct but the column is not a packed struct");
  free_layout(l);
}
END_TEST

/* ---- ConstantLayout: docs/format/examples.md section 13 ------------------------ */

static Lance__Encodings21__PageLayout *unpack_layout(const uint8_t *b, size_t n) {
  Lance__Encodings21__PageLayout *l = lance__encodings21__page_layout__unpack(NULL, n, b);
  ck_assert_ptr_nonnull(l);
  return l;
}

START_TEST(worked_constant_pages) {
  bri_leaf_page pg;
  bri_error err = {0};
  static const uint8_t all7[] = {0x12, 0x09, 0x2a, 0x01, 0x01, 0x32, 0x04, 0x07, 0x00, 0x00, 0x00};
  Lance__Encodings21__PageLayout *l = unpack_layout(all7, sizeof all7);
  page_case c = {.layout = l, .n_rows = 5};
  ck_assert_int_eq(run(&c, &T32, &pg, &err), 0);
  ck_assert_uint_eq(pg.layout, BRI_PAGE_CONSTANT);
  ck_assert_uint_eq(pg.values.n, 5);
  for (int i = 0; i < 5; i++) ck_assert_uint_eq(bri_values_get_uint(&pg.values, i, 0), 7);
  bri_leaf_page_dispose(&pg);
  expect_fail(&c, &T64, BRI_ECORRUPT, "ConstantLayout inline value is 4 bytes; the column's values are 8");
  c.n_rows = (uint64_t)1 << 40; /* constant bomb: no bytes, 2^40 rows */
  expect_fail(&c, &T32, BRI_ECORRUPT, "page decode limit");
  protobuf_c_message_free_unpacked(&l->base, NULL);

  static const uint8_t allnull[] = {0x12, 0x03, 0x2a, 0x01, 0x03};
  l = unpack_layout(allnull, sizeof allnull);
  c = (page_case){.layout = l, .n_rows = 4};
  ck_assert_int_eq(run(&c, &TVAR, &pg, &err), 0);
  ck_assert_uint_eq(pg.values.n, 4);
  for (int i = 0; i < 4; i++) ck_assert_uint_eq(pg.def[i], 1);
  ck_assert_uint_eq(pg.values.offsets[4], 0);
  bri_leaf_page_dispose(&pg);
  protobuf_c_message_free_unpacked(&l->base, NULL);

  static const uint8_t nine[] = {0x12, 0x09, 0x2a, 0x01, 0x03, 0x32, 0x04, 0x09, 0x00, 0x00, 0x00};
  l = unpack_layout(nine, sizeof nine);
  uint8_t *defs = malloc(6000);
  for (int i = 0; i < 3000; i++) bri_put_le16(defs + 2 * i, (uint16_t)(i % 2 == 0));
  c = (page_case){.layout = l, .n_rows = 3000, .n = 2, .bufs = {defs, defs}, .sizes = {0, 6000}};
  ck_assert_int_eq(run(&c, &T32, &pg, &err), 0);
  ck_assert_ptr_null(pg.rep);
  for (int i = 0; i < 3000; i++) {
    ck_assert_uint_eq(pg.def[i], i % 2 == 0);
    ck_assert_uint_eq(bri_values_get_uint(&pg.values, i, 0), i % 2 ? 9 : 0);
  }
  bri_leaf_page_dispose(&pg);
  c.sizes[1] = 5999;
  expect_fail(&c, &T32, BRI_ECORRUPT, "raw definition levels buffer is 5999 bytes, not whole u16s");
  bri_put_le16(defs, 2);
  c.sizes[1] = 6000;
  expect_fail(&c, &T32, BRI_ECORRUPT, "level 0 has definition 2, above the layers' maximum 1");
  free(defs);
  protobuf_c_message_free_unpacked(&l->base, NULL);

  static const uint8_t label[] = {0x12, 0x03, 0x2a, 0x01, 0x01};
  static const uint8_t scalar[25] = {2, 0, 0, 0, 8, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0,
                                     'l', 'a', 'b', 'e', 'l'};
  l = unpack_layout(label, sizeof label);
  c = (page_case){.layout = l, .n_rows = 3, .n = 1, .bufs = {scalar}, .sizes = {25}};
  ck_assert_int_eq(run(&c, &TVAR, &pg, &err), 0);
  static const int64_t offs[4] = {0, 5, 10, 15};
  ck_assert_mem_eq(pg.values.offsets, offs, sizeof offs);
  ck_assert_mem_eq(pg.values.data, "labellabellabel", 15);
  bri_leaf_page_dispose(&pg);
  c.sizes[0] = 24;
  expect_fail(&c, &TVAR, BRI_ECORRUPT, "scalar buffer: scalar Arrow buffer 1: 5 bytes at byte 20 run past the 24-byte buffer");
  protobuf_c_message_free_unpacked(&l->base, NULL);

  /* all-null list<int32> of 3000 rows with Rle levels (both buffers alike) */
  static const uint8_t nulllist[] = {
      0x12, 0x2a, 0x2a, 0x02, 0x01, 0x04,
      0x3a, 0x0e, 0x42, 0x0c, 0x0a, 0x04, 0x0a, 0x02, 0x08, 0x10, 0x12, 0x04, 0x0a, 0x02, 0x08, 0x08,
      0x42, 0x0e, 0x42, 0x0c, 0x0a, 0x04, 0x0a, 0x02, 0x08, 0x10, 0x12, 0x04, 0x0a, 0x02, 0x08, 0x08,
      0x48, 0xb8, 0x17, 0x50, 0xb8, 0x17};
  uint8_t lv[44] = {24};
  for (int i = 0; i < 12; i++) lv[8 + 2 * i] = 1;
  memset(lv + 32, 0xff, 11);
  lv[43] = 0xc3;
  l = unpack_layout(nulllist, sizeof nulllist);
  c = (page_case){.layout = l, .n_rows = 3000, .n = 2, .bufs = {lv, lv}, .sizes = {44, 44}};
  ck_assert_int_eq(run(&c, &T32, &pg, &err), 0);
  ck_assert_uint_eq(pg.n_levels, 3000);
  ck_assert_uint_eq(pg.values.n, 0);
  for (int i = 0; i < 3000; i++) ck_assert(pg.rep[i] == 1 && pg.def[i] == 1);
  bri_leaf_page_dispose(&pg);
  l->constant_layout->num_def_values = 2999;
  expect_fail(&c, &T32, BRI_ECORRUPT, "3000 repetition levels but 2999 definition levels");
  protobuf_c_message_free_unpacked(&l->base, NULL);
}
END_TEST

START_TEST(refused_layouts) {
  Lance__Encodings21__PageLayout *l = page_layout();
  page_case c = {.layout = l, .n_rows = 1};
  expect_fail(&c, &T32, BRI_ECORRUPT, "PageLayout has no layout set");
  l->layout_case = LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_SPARSE_LAYOUT;
  l->sparse_layout = NEW(Lance__Encodings21__SparseLayout, lance__encodings21__sparse_layout__descriptor);
  expect_fail(&c, &T32, BRI_EUNSUPPORTED, "SparseLayout belongs to Lance file format 2.3");
  free_layout(l);
}
END_TEST

/* ---- rarely written shapes: Flat.data, Constant values, legacy Variable
 * block headers, the compressive Dictionary (refused) ----------------------- */

START_TEST(rare_shapes) {
  int l1[1] = {BRI_LAYER_ALL_VALID_ITEM};
  bri_leaf_page pg;
  bri_error err = {0};
  uint8_t meta[4];

  /* Flat(32) whose buffer is a zstd unit (Flat.data) */
  uint8_t vals[12] = {7, 0, 0, 0, 8, 0, 0, 0, 9, 0, 0, 0}, *z;
  size_t zlen;
  ck_assert_int_eq(bri_general_compress(BRI_GENERAL_ZSTD, 1, vals, 12, &z, &zlen, &err), 0);
  uint8_t chunk[128];
  memset(chunk, 0xfe, sizeof chunk);
  bri_put_le16(chunk, 0);
  bri_put_le32(chunk + 2, (uint32_t)zlen);
  memcpy(chunk + 8, z, zlen);
  free(z);
  size_t csize = (8 + zlen + 7) & ~(size_t)7;
  bri_put_le32(meta, (uint32_t)((csize / 8 - 1) << 4));
  CE *f = flat(32);
  f->flat->data = NEW(Lance__Encodings21__BufferCompression, lance__encodings21__buffer_compression__descriptor);
  f->flat->data->has_scheme = 1;
  f->flat->data->scheme = 2;
  Lance__Encodings21__PageLayout *l = miniblock(f, NULL, NULL, 1, l1, 1, 3, 1);
  page_case c = {.layout = l, .n_rows = 3, .n = 2, .bufs = {meta, chunk}, .sizes = {4, csize}};
  ck_assert_int_eq(run(&c, &T32, &pg, &err), 0);
  ck_assert_mem_eq(pg.values.data, vals, 12);
  bri_leaf_page_dispose(&pg);
  free_layout(l);

  /* Constant(value) as the value encoding: no value buffers at all */
  Lance__Encodings21__Constant *k = NEW(Lance__Encodings21__Constant, lance__encodings21__constant__descriptor);
  k->has_value = 1;
  k->value.data = malloc(4);
  memcpy(k->value.data, "\x05\x00\x00\x00", 4);
  k->value.len = 4;
  l = miniblock(ce(ENC(CONSTANT), k), NULL, NULL, 1, l1, 0, 5, 1);
  uint8_t cchunk[8] = {0, 0, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe, 0xfe};
  bri_put_le32(meta, 0);
  c = (page_case){.layout = l, .n_rows = 5, .n = 2, .bufs = {meta, cchunk}, .sizes = {4, 8}};
  ck_assert_int_eq(run(&c, &T32, &pg, &err), 0);
  for (int i = 0; i < 5; i++) ck_assert_uint_eq(bri_values_get_uint(&pg.values, i, 0), 5);
  bri_leaf_page_dispose(&pg);
  expect_fail(&c, &T64, BRI_ECORRUPT, "Constant value is 4 bytes; the column needs 64-bit values");
  free_layout(l);

  /* Dictionary items in the legacy Variable block header (u8 bits, u32 count,
   * u32 bytes_start), compressed with lz4; indices InlineBitpacking(32). */
  uint8_t items[9 + 12 + 5];
  items[0] = 32;
  bri_put_le32(items + 1, 2);
  bri_put_le32(items + 5, 21);
  bri_put_le32(items + 9, 0);
  bri_put_le32(items + 13, 2);
  bri_put_le32(items + 17, 5);
  memcpy(items + 21, "hiyou", 5);
  uint8_t *lz;
  size_t lzlen;
  ck_assert_int_eq(bri_general_compress(BRI_GENERAL_LZ4, 0, items, sizeof items, &lz, &lzlen, &err), 0);
  uint32_t idx[3] = {1, 0, 1};
  uint8_t packed[4 + 128];
  ck_assert_uint_eq(bri_inline_bitpack_encode(32, (uint8_t *)idx, 3, packed), 4 + 128);
  uint8_t dchunk[8 + 136];
  memset(dchunk, 0xfe, sizeof dchunk);
  bri_put_le16(dchunk, 0);
  bri_put_le32(dchunk + 2, 132);
  memcpy(dchunk + 8, packed, 132);
  bri_put_le32(meta, ((144 / 8 - 1) << 4));
  l = miniblock(inline_bp(32), NULL, NULL, 1, l1, 1, 3, 1);
  l->mini_block_layout->dictionary = general(1, variable(32));
  l->mini_block_layout->has_num_dictionary_items = 1;
  l->mini_block_layout->num_dictionary_items = 2;
  c = (page_case){.layout = l, .n_rows = 3, .n = 3, .bufs = {meta, dchunk, lz}, .sizes = {4, 144, lzlen}};
  ck_assert_int_eq(run(&c, &TVAR, &pg, &err), 0);
  static const int64_t offs[4] = {0, 3, 5, 8};
  ck_assert_mem_eq(pg.values.offsets, offs, sizeof offs);
  ck_assert_mem_eq(pg.values.data, "youhiyou", 8);
  bri_leaf_page_dispose(&pg);
  free(lz);
  free_layout(l);

  /* A null slot that carries bytes (Lance writes none) comes back empty, and
   * the bytes of the slots after it move down. */
  {
    int ln[1] = {BRI_LAYER_NULLABLE_ITEM};
    uint8_t vc[48];
    memset(vc, 0xfe, sizeof vc);
    bri_put_le16(vc, 3);
    bri_put_le16(vc + 2, 6);
    bri_put_le32(vc + 4, 20);
    static const uint16_t dv[3] = {0, 1, 0};
    memcpy(vc + 8, dv, 6);
    static const uint32_t off[4] = {16, 17, 19, 20};
    memcpy(vc + 16, off, 16);
    memcpy(vc + 32, "azzb", 4);
    bri_put_le32(meta, ((40 / 8 - 1) << 4));
    l = miniblock(variable(32), NULL, flat(16), 1, ln, 1, 3, 1);
    c = (page_case){.layout = l, .n_rows = 3, .n = 2, .bufs = {meta, vc}, .sizes = {4, 40}};
    ck_assert_int_eq(run(&c, &TVAR, &pg, &err), 0);
    static const int64_t o2[4] = {0, 1, 1, 2};
    ck_assert_mem_eq(pg.values.offsets, o2, sizeof o2);
    ck_assert_uint_eq(pg.values.data_len, 2);
    ck_assert_mem_eq(pg.values.data, "ab", 2);
    bri_leaf_page_dispose(&pg);
    free_layout(l);
  }

  /* The compressive Dictionary encoding (never written by Lance 12) is refused by name. */
  Lance__Encodings21__Dictionary *dd = NEW(Lance__Encodings21__Dictionary, lance__encodings21__dictionary__descriptor);
  dd->indices = flat(32);
  dd->items = flat(32);
  l = miniblock(ce(ENC(DICTIONARY), dd), NULL, NULL, 1, l1, 1, 3, 1);
  c = (page_case){.layout = l, .n_rows = 3, .n = 2, .bufs = {meta, dchunk}, .sizes = {4, 144}};
  expect_fail(&c, &T32, BRI_EUNSUPPORTED, "Dictionary cannot encode mini-block values");
  free_layout(l);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("encoding_pages");
  TCase *tc = tcase_create("pages");
  tcase_add_test(tc, worked_list_chunk);
  tcase_add_test(tc, hostile_list_chunk);
  tcase_add_test(tc, worked_rle_chunks);
  tcase_add_test(tc, worked_fsl_validity);
  tcase_add_test(tc, hostile_general_and_fsst);
  tcase_add_test(tc, hostile_bit_width);
  tcase_add_test(tc, dictionary_null_entry);
  tcase_add_test(tc, worked_blob_v2_fullzip);
  tcase_add_test(tc, worked_constant_pages);
  tcase_add_test(tc, refused_layouts);
  tcase_add_test(tc, rare_shapes);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(suite)
