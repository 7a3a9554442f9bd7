/* test_hash.c: the canonical column hash (lib/scan/hash.h) on
 * hand-built Arrow C Data Interface arrays, one per type family, with the
 * expected SHA-256 computed independently by node using the rules of
 * tests/interop/lance_read.mjs. Every expected value below was printed by
 *   node -e "$P; console.log(<expression>)"
 * with the preamble
 *   P='const F=b=>b===null?Buffer.from([0]):Buffer.concat([Buffer.from([1]),
 *     Buffer.from(new BigUint64Array([BigInt(b.length)]).buffer),b]),
 *     H=a=>require("crypto").createHash("sha256").update(Buffer.concat(a.map(F))).digest("hex"),
 *     S=s=>Buffer.from(s),X=h=>Buffer.from(h,"hex"),C=(...a)=>Buffer.concat(a.map(F)),
 *     B=(p,id,n)=>Buffer.from(Array.from({length:n},(_,k)=>((p+k)*131+id)&255))'
 * (F = frame, H = column hash, C = canonical bytes of a nested value, B = the
 * payload the test blob source serves for a descriptor). Also covered:
 * offsets on arrays, Blob v2 statistics, --no-blob-bytes, streaming a 5 MiB
 * payload in chunks, and refusal of malformed arrays and unknown types. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lance/file/arrow_build.h"
#include "scan/hash.h"
#include "testutil.h"

/* ------------------------------------------------------------ builders */

#define MAXOBJ 256
static void *objs[MAXOBJ];
static int n_objs;
static void *keep(void *p) {
  ck_assert_int_lt(n_objs, MAXOBJ);
  objs[n_objs++] = p;
  return p;
}
static void free_all(void) {
  while (n_objs) free(objs[--n_objs]);
}

static struct ArrowArray *arr(int64_t len, int64_t nulls, int64_t off, int nb, const void *b0,
                              const void *b1, const void *b2, int nc, struct ArrowArray **kids) {
  struct ArrowArray *a = keep(calloc(1, sizeof *a));
  const void **bufs = keep(calloc(3, sizeof *bufs));
  bufs[0] = b0, bufs[1] = b1, bufs[2] = b2;
  a->length = len, a->null_count = nulls, a->offset = off;
  a->n_buffers = nb, a->buffers = bufs;
  a->n_children = nc;
  if (nc) {
    a->children = keep(calloc((size_t)nc, sizeof *a->children));
    memcpy(a->children, kids, (size_t)nc * sizeof *kids);
  }
  return a;
}

static struct ArrowSchema *sch(const char *fmt, const char *name, const char *meta, int nc,
                               struct ArrowSchema **kids) {
  struct ArrowSchema *s = keep(calloc(1, sizeof *s));
  s->format = fmt, s->name = name, s->metadata = meta;
  s->flags = ARROW_FLAG_NULLABLE;
  s->n_children = nc;
  if (nc) {
    s->children = keep(calloc((size_t)nc, sizeof *s->children));
    memcpy(s->children, kids, (size_t)nc * sizeof *kids);
  }
  return s;
}

/* C-interface metadata {ARROW:extension:name: lance.blob.v2}. */
static char *blob_meta(void) {
  static const char k[] = "ARROW:extension:name", v[] = "lance.blob.v2";
  int32_t n = 1, kl = (int32_t)strlen(k), vl = (int32_t)strlen(v);
  char *m = keep(malloc(12 + (size_t)kl + (size_t)vl)), *p = m;
  memcpy(p, &n, 4), p += 4;
  memcpy(p, &kl, 4), p += 4;
  memcpy(p, k, (size_t)kl), p += kl;
  memcpy(p, &vl, 4), p += 4;
  memcpy(p, v, (size_t)vl);
  return m;
}

static struct ArrowSchema *blob_schema(const char *name) {
  struct ArrowSchema *k[] = {sch("C", "kind", NULL, 0, NULL), sch("L", "position", NULL, 0, NULL),
                             sch("L", "size", NULL, 0, NULL), sch("I", "blob_id", NULL, 0, NULL),
                             sch("u", "blob_uri", NULL, 0, NULL)};
  return sch("+s", name, blob_meta(), 5, k);
}

/* n descriptors; validity bitmap v (NULL = all valid). */
static struct ArrowArray *blob_array(int64_t n, const uint8_t *v, int64_t nulls, const uint8_t *kind,
                                     const uint64_t *pos, const uint64_t *size,
                                     const uint32_t *id) {
  int32_t *uoff = keep(calloc((size_t)n + 1, sizeof *uoff));
  struct ArrowArray *k[] = {arr(n, 0, 0, 2, NULL, kind, NULL, 0, NULL),
                            arr(n, 0, 0, 2, NULL, pos, NULL, 0, NULL),
                            arr(n, 0, 0, 2, NULL, size, NULL, 0, NULL),
                            arr(n, 0, 0, 2, NULL, id, NULL, 0, NULL),
                            arr(n, 0, 0, 3, NULL, uoff, "", 0, NULL)};
  return arr(n, nulls, 0, 1, v, NULL, NULL, 5, k);
}

/* One column hash of array a (all rows). */
static bri_column_hash hash_of(struct ArrowSchema *s, struct ArrowArray *a, bool bytes,
                               const bri_blob_source *src) {
  bri_column_hasher *h;
  bri_error err = {0};
  bri_column_hash r;
  ck_assert_msg(bri_column_hasher_new(s, bytes, &h, &err) == 0, "new: %s", err.msg);
  ck_assert_msg(bri_column_hasher_add_range(h, a, 0, a->length, src, &err) == 0, "add: %s",
                err.msg);
  ck_assert_int_eq(bri_column_hasher_finish(h, &r, &err), 0);
  bri_column_hasher_free(h); /* r.nested_paths dangles from here on */
  r.nested_paths = NULL;
  return r;
}

static void expect_hash(struct ArrowSchema *s, struct ArrowArray *a, const char *hex,
                        uint64_t nulls) {
  bri_column_hash r = hash_of(s, a, true, NULL);
  ck_assert_str_eq(r.sha256, hex);
  ck_assert_uint_eq(r.rows, (uint64_t)a->length);
  ck_assert_uint_eq(r.nulls, nulls);
  ck_assert(!r.blob);
}

/* ------------------------------------------------------------ primitives */

START_TEST(test_integers) {
  /* H([S("1"),null,S("-5"),S("-9223372036854775808"),S("9223372036854775807")]) */
  static const int64_t v[] = {1, 0, -5, INT64_MIN, INT64_MAX};
  static const uint8_t valid[] = {0x1D};
  expect_hash(sch("l", "x", NULL, 0, NULL), arr(5, 1, 0, 2, valid, v, NULL, 0, NULL),
              "957e092b4e4c590746acd8e2c00f48f46ed1d28b4badf4a693bb8bf4a85f2f55", 1);
  /* the same buffers seen through an offset of 2:
   * H([S("-5"),S("-9223372036854775808"),S("9223372036854775807")]) */
  expect_hash(sch("l", "x", NULL, 0, NULL), arr(3, 0, 2, 2, valid, v, NULL, 0, NULL),
              "45869b0266a7f1e528c0c90dcd0f722134f3a8cbd09cb42d7f23e4c57d84f43b", 0);
  /* H([S("0"),S("18446744073709551615")]) */
  static const uint64_t u[] = {0, UINT64_MAX};
  expect_hash(sch("L", "x", NULL, 0, NULL), arr(2, 0, 0, 2, NULL, u, NULL, 0, NULL),
              "44f9e7cce779d3d3aa7ab4693d9f34e014cdf27ed9a4d676597ac6708b10417a", 0);
  /* H([S("-128"),S("127")]) */
  static const int8_t i8[] = {-128, 127};
  expect_hash(sch("c", "x", NULL, 0, NULL), arr(2, 0, 0, 2, NULL, i8, NULL, 0, NULL),
              "5e617e0aa446c245388fc745f5a46913e88685194d76d0686483986774cbf59f", 0);
  /* H([S("4294967295"),S("0")]) */
  static const uint32_t u32[] = {UINT32_MAX, 0};
  expect_hash(sch("I", "x", NULL, 0, NULL), arr(2, 0, 0, 2, NULL, u32, NULL, 0, NULL),
              "459d06bd8c7750d84757667ecb7d07d2ca0973476addcd3a2a9e4d9fda6f1cf2", 0);
  /* timestamps and dates are their stored counts: H([S("1700000000000000"),S("-1")]) */
  static const int64_t ts[] = {1700000000000000, -1};
  expect_hash(sch("tsu:UTC", "x", NULL, 0, NULL), arr(2, 0, 0, 2, NULL, ts, NULL, 0, NULL),
              "3bbaf361b0bfe61549018e1e446e4760c819e2868bf020d69fab98b935b1c7fd", 0);
  free_all();
}
END_TEST

START_TEST(test_floats_bool_decimal) {
  /* IEEE bits, never a conversion: H([X("003c"),X("017e")]) (1.0, a NaN payload) */
  static const uint16_t f16[] = {0x3C00, 0x7E01};
  expect_hash(sch("e", "x", NULL, 0, NULL), arr(2, 0, 0, 2, NULL, f16, NULL, 0, NULL),
              "efd838bc0af1b4bb8d7c8c58e697dd54a8397fa711cd7ea32fb24f8e286ee10c", 0);
  /* H([X("00000080"),X("0100c07f")]) (-0.0, NaN with payload 1) */
  static const uint32_t f32[] = {0x80000000u, 0x7FC00001u};
  expect_hash(sch("f", "x", NULL, 0, NULL), arr(2, 0, 0, 2, NULL, f32, NULL, 0, NULL),
              "407ce4ddf98f9b0566e474e52fd5aef7c6822a9ad9ffa3876dfa8a37e14067c7", 0);
  /* H([X("000000000000f83f")]) (1.5) */
  static const double f64[] = {1.5};
  expect_hash(sch("g", "x", NULL, 0, NULL), arr(1, 0, 0, 2, NULL, f64, NULL, 0, NULL),
              "bfde0a6b0b21ebce875bf8d0b4380735282918365f1722aeae15a86638cfbcd1", 0);
  /* bits 1..4 of 0x16: H([X("01"),X("01"),X("00"),X("01")]) */
  static const uint8_t bits[] = {0x16};
  expect_hash(sch("b", "x", NULL, 0, NULL), arr(4, 0, 1, 2, NULL, bits, NULL, 0, NULL),
              "dfddcd2d9f5a2f3577cc476a012346a9d64680ffa4ec73b8d5a24a17745dfeab", 0);
  /* H([X("0100..00"),X("ff..ff")]) (1 and -1 as decimal128) */
  static uint8_t dec[32];
  memset(dec, 0, 16);
  dec[0] = 1;
  memset(dec + 16, 0xFF, 16);
  expect_hash(sch("d:38,2", "x", NULL, 0, NULL), arr(2, 0, 0, 2, NULL, dec, NULL, 0, NULL),
              "47f7ec1e1ca6b945f00fe0aca52442b7e94684a056b57f71ad7506ddbe19dd18", 0);
  /* Arrow null type: H([null,null,null]) */
  expect_hash(sch("n", "x", NULL, 0, NULL), arr(3, 3, 0, 0, NULL, NULL, NULL, 0, NULL),
              "709e80c88487a2411e1ee4dfb9f22a861492d20c4765150c0c794abd70f8147c", 3);
  free_all();
}
END_TEST

START_TEST(test_binary) {
  /* H([S("a"),S(""),null,S("héllo")]) */
  static const int32_t off[] = {0, 1, 1, 1, 7};
  static const uint8_t valid[] = {0x0B};
  expect_hash(sch("u", "x", NULL, 0, NULL), arr(4, 1, 0, 3, valid, off, "ah\xc3\xa9llo", 0, NULL),
              "7d00a7978207f8cef1f832e27e542cf955c7a5234b3f774f5a92b02de1104a05", 1);
  /* H([X("0001"),S("xyz")]) */
  static const int64_t loff[] = {0, 2, 5};
  expect_hash(sch("Z", "x", NULL, 0, NULL), arr(2, 0, 0, 3, NULL, loff, "\x00\x01xyz", 0, NULL),
              "eac19d1de2b8c0d828741bc62d057ea294afed0698cada4ce6c71424028c3af1", 0);
  /* H([S("abc"),S("def")]) */
  expect_hash(sch("w:3", "x", NULL, 0, NULL), arr(2, 0, 0, 2, NULL, "abcdef", NULL, 0, NULL),
              "a6e57837b5c4a2f5e8d59995d8da9aa94cd08aabc8fd90c53befdc4b209bc877", 0);
  /* dictionary<int8, utf8> selects values: H([S("qq"),S("p"),null,S("qq")]) */
  static const int8_t idx[] = {1, 0, 0, 1};
  static const int32_t doff[] = {0, 1, 3};
  struct ArrowSchema *ds = sch("c", "x", NULL, 0, NULL);
  ds->dictionary = sch("u", NULL, NULL, 0, NULL);
  struct ArrowArray *da = arr(4, 1, 0, 2, valid, idx, NULL, 0, NULL);
  da->dictionary = arr(2, 0, 0, 3, NULL, doff, "pqq", 0, NULL);
  expect_hash(ds, da, "82e8f9ed1596824867eea73388e7020714d63dcd6045de580aa8da0d6d09ef97", 1);
  free_all();
}
END_TEST

/* ------------------------------------------------------------ nested */

START_TEST(test_nested) {
  /* list<int32?>: [1, null, 3], [], null, [4]:
   * H([C(S("1"),null,S("3")),C(),null,C(S("4"))]) */
  static const int32_t cv[] = {1, 0, 3, 4}, loff[] = {0, 3, 3, 3, 4};
  static const uint8_t cvalid[] = {0x0D}, lvalid[] = {0x0B};
  struct ArrowSchema *item = sch("i", "item", NULL, 0, NULL);
  struct ArrowArray *child = arr(4, 1, 0, 2, cvalid, cv, NULL, 0, NULL);
  expect_hash(sch("+l", "l", NULL, 1, &item), arr(4, 1, 0, 2, lvalid, loff, NULL, 1, &child),
              "33810a05950a9944794368e748afd85195ad1ddde40c0e254ec8f3d5d9b10bb4", 1);

  /* struct<a int32, b utf8>: {1,"x"}, null, {null,"yz"}:
   * H([C(S("1"),S("x")),null,C(null,S("yz"))]) */
  static const int32_t a[] = {1, 0, 0}, boff[] = {0, 1, 1, 3};
  static const uint8_t avalid[] = {0x01}, svalid[] = {0x05};
  struct ArrowSchema *sk[] = {sch("i", "a", NULL, 0, NULL), sch("u", "b", NULL, 0, NULL)};
  struct ArrowArray *ak[] = {arr(3, 2, 0, 2, avalid, a, NULL, 0, NULL),
                             arr(3, 0, 0, 3, NULL, boff, "xyz", 0, NULL)};
  expect_hash(sch("+s", "st", NULL, 2, sk), arr(3, 1, 0, 1, svalid, NULL, NULL, 2, ak),
              "5e79de6d5c8166108670cd282a8b3c3917e7d360ee70cdc9d9d264496ec54c2d", 1);

  /* fixed_size_list<float32, 2>: [1, 2], null, [3, -0]:
   * H([C(X("0000803f"),X("00000040")),null,C(X("00004040"),X("00000080"))]) */
  static const float fv[] = {1, 2, 0, 0, 3, -0.0f};
  struct ArrowSchema *fi = sch("f", "item", NULL, 0, NULL);
  struct ArrowArray *fc = arr(6, 0, 0, 2, NULL, fv, NULL, 0, NULL);
  expect_hash(sch("+w:2", "v", NULL, 1, &fi), arr(3, 1, 0, 1, svalid, NULL, NULL, 1, &fc),
              "625c5f2fd2fed726e691c4a43a3352f7ba55a0143b5c2e32dd962d60ad4a650d", 1);

  /* map<utf8, int32> = list of entries structs: H([C(C(S("k"),S("7")))]) */
  static const int32_t moff[] = {0, 1}, kof[] = {0, 1}, val[] = {7};
  struct ArrowSchema *ek[] = {sch("u", "key", NULL, 0, NULL), sch("i", "value", NULL, 0, NULL)};
  struct ArrowSchema *es = sch("+s", "entries", NULL, 2, ek);
  struct ArrowArray *eka[] = {arr(1, 0, 0, 3, NULL, kof, "k", 0, NULL),
                              arr(1, 0, 0, 2, NULL, val, NULL, 0, NULL)};
  struct ArrowArray *ea = arr(1, 0, 0, 1, NULL, NULL, NULL, 2, eka);
  expect_hash(sch("+m", "m", NULL, 1, &es), arr(1, 0, 0, 2, NULL, moff, NULL, 1, &ea),
              "93b1dd1c926cd29078369ae95691f5c62222c66876b4e373ee1b6e1f194a445f", 0);

  /* no rows: SHA-256 of nothing */
  expect_hash(sch("l", "x", NULL, 0, NULL), arr(0, 0, 0, 2, NULL, NULL, NULL, 0, NULL),
              "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", 0);
  free_all();
}
END_TEST

/* ------------------------------------------------------------ blobs */

/* Serves B(position, blob_id, size) in chunks of at most 1000 bytes. */
typedef struct test_src {
  char last_path[64];
  int lengths, streams;
  int64_t lie; /* added to the announced length (error test) */
} test_src;

static int src_length(void *ctx, const char *path, const bri_blob_desc *d, uint64_t *len,
                      bri_error *err) {
  (void)err;
  test_src *t = ctx;
  snprintf(t->last_path, sizeof t->last_path, "%s", path);
  t->lengths++;
  *len = d->size + (uint64_t)t->lie;
  return 0;
}

static int src_stream(void *ctx, const char *path, const bri_blob_desc *d, bri_blob_chunk_fn fn,
                      void *fn_ctx, bri_error *err) {
  (void)path;
  test_src *t = ctx;
  t->streams++;
  uint8_t chunk[1000];
  for (uint64_t k = 0; k < d->size;) {
    size_t n = 0;
    for (; n < sizeof chunk && k < d->size; n++, k++)
      chunk[n] = (uint8_t)((d->position + k) * 131 + d->blob_id);
    int rc = fn(fn_ctx, chunk, n, err);
    if (rc) return rc;
  }
  return 0;
}

START_TEST(test_blob_top_level) {
  /* rows: inline(100, 5), null, packed(0, 3000, id 1), empty inline(7, 0), dedicated 5 MiB
   * (id 2): H([B(100,0,5),null,B(0,1,3000),B(7,0,0),B(0,2,5242880)]) */
  static const uint8_t valid[] = {0x1D}, kind[] = {0, 0, 1, 0, 2};
  static const uint64_t pos[] = {100, 0, 0, 7, 0}, size[] = {5, 0, 3000, 0, 5242880};
  static const uint32_t id[] = {0, 0, 1, 0, 2};
  test_src t = {0};
  bri_blob_source src = {src_length, src_stream, &t};
  struct ArrowArray *a = blob_array(5, valid, 1, kind, pos, size, id);
  bri_column_hash r = hash_of(blob_schema("blob"), a, true, &src);
  ck_assert_str_eq(r.sha256, "083e7e0098408e0cbd2c41992482530bddd098e4eb6ae5aba7238724b41f5d9b");
  ck_assert(r.blob);
  ck_assert_uint_eq(r.rows, 5);
  ck_assert_uint_eq(r.nulls, 1);
  ck_assert_str_eq(t.last_path, "blob");
  ck_assert_int_eq(t.streams, 4);
  /* kinds in order of first appearance, the oracle's descriptorKinds */
  ck_assert_uint_eq(r.n_kinds, 4);
  ck_assert_int_eq(r.kinds[0], 0);
  ck_assert_uint_eq(r.kind_counts[0], 2);
  ck_assert_int_eq(r.kinds[1], -1);
  ck_assert_uint_eq(r.kind_counts[1], 1);
  ck_assert_int_eq(r.kinds[2], 1);
  ck_assert_uint_eq(r.kind_counts[2], 1);
  ck_assert_int_eq(r.kinds[3], 2);
  ck_assert_uint_eq(r.kind_counts[3], 1);
  ck_assert_uint_eq(r.payload_bytes, 5 + 3000 + 5242880);

  /* without payloads: "skipped", the source is never asked */
  test_src t2 = {0};
  bri_blob_source src2 = {src_length, src_stream, &t2};
  r = hash_of(blob_schema("blob"), a, false, &src2);
  ck_assert_str_eq(r.sha256, "skipped");
  ck_assert_uint_eq(r.nulls, 1);
  ck_assert_uint_eq(r.payload_bytes, 5 + 3000 + 5242880);
  ck_assert_int_eq(t2.lengths + t2.streams, 0);

  /* a source that streams fewer bytes than it announced is an error */
  test_src t3 = {.lie = 1};
  bri_blob_source src3 = {src_length, src_stream, &t3};
  bri_column_hasher *h;
  bri_error err = {0};
  ck_assert_int_eq(bri_column_hasher_new(blob_schema("blob"), true, &h, &err), 0);
  ck_assert_int_eq(bri_column_hasher_add(h, a, 0, &src3, &err), BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "gave 5 bytes, announced 6"), "%s", err.msg);
  /* and hashing payloads needs a source */
  ck_assert_int_eq(bri_column_hasher_add(h, a, 2, NULL, &err), BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "no blob source"), "%s", err.msg);
  bri_column_hasher_free(h);
  free_all();
}
END_TEST

START_TEST(test_blob_nested) {
  /* st struct<a int32, b blob>: {1, inline(0, 4)}, {2, null}, null:
   * H([C(S("1"),B(0,0,4)),C(S("2"),null),null]) */
  static const uint8_t bvalid[] = {0x01}, svalid[] = {0x03}, kind[] = {0, 0, 0};
  static const uint64_t pos[] = {0, 0, 0}, size[] = {4, 0, 0};
  static const uint32_t id[] = {0, 0, 0};
  static const int32_t av[] = {1, 2, 0};
  struct ArrowSchema *sk[] = {sch("i", "a", NULL, 0, NULL), blob_schema("b")};
  struct ArrowSchema *ss = sch("+s", "st", NULL, 2, sk);
  struct ArrowArray *ak[] = {arr(3, 0, 0, 2, NULL, av, NULL, 0, NULL),
                             blob_array(3, bvalid, 2, kind, pos, size, id)};
  struct ArrowArray *sa = arr(3, 1, 0, 1, svalid, NULL, NULL, 2, ak);
  test_src t = {0};
  bri_blob_source src = {src_length, src_stream, &t};
  bri_column_hasher *h;
  bri_error err = {0};
  bri_column_hash r;
  ck_assert_int_eq(bri_column_hasher_new(ss, true, &h, &err), 0);
  ck_assert_int_eq(bri_column_hasher_add_range(h, sa, 0, 3, &src, &err), 0);
  ck_assert_int_eq(bri_column_hasher_finish(h, &r, &err), 0);
  ck_assert_str_eq(r.sha256, "17bb48a415bf57e0b8b5b1d6183a1e3d9505c91ea029adcefd9685d0e9f3374e");
  ck_assert(!r.blob && r.nested_blobs);
  ck_assert_uint_eq(r.nulls, 1);
  ck_assert_uint_eq(r.n_nested_paths, 1);
  ck_assert_str_eq(r.nested_paths[0], "st.b");
  ck_assert_str_eq(t.last_path, "st.b");
  bri_column_hasher_free(h);

  /* --no-blob-bytes: kind + size instead of the payload, no nested paths:
   * H([C(S("1"),X("000400000000000000")),C(S("2"),null),null]) */
  r = hash_of(ss, sa, false, NULL);
  ck_assert_str_eq(r.sha256, "17e5d983fbdfc12765736f5e069c08a9ebf8225d1a40fc4daba4f84d97844375");
  ck_assert(r.nested_blobs);
  ck_assert_uint_eq(r.n_nested_paths, 0);

  /* list<blob>: [packed(size 10), null], null, []: kind + size per element, even with
   * payloads on: H([C(X("010a00000000000000"),null),null,C()]) */
  static const uint8_t lkind[] = {1, 0}, ivalid[] = {0x01}, lvalid[] = {0x05};
  static const uint64_t lpos[] = {0, 0}, lsize[] = {10, 0};
  static const uint32_t lid[] = {1, 0};
  static const int32_t loff[] = {0, 2, 2, 2};
  struct ArrowSchema *li = blob_schema("item");
  struct ArrowArray *lc = blob_array(2, ivalid, 1, lkind, lpos, lsize, lid);
  test_src t2 = {0};
  bri_blob_source src2 = {src_length, src_stream, &t2};
  r = hash_of(sch("+l", "lb", NULL, 1, &li), arr(3, 1, 0, 2, lvalid, loff, NULL, 1, &lc), true,
              &src2);
  ck_assert_str_eq(r.sha256, "820dacdc490e8ade28724ff5e1aeb79718ed4652ede82b680a5d8d0129b5d023");
  ck_assert(r.nested_blobs);
  ck_assert_uint_eq(r.n_nested_paths, 0);
  ck_assert_int_eq(t2.lengths + t2.streams, 0);
  free_all();
}
END_TEST

/* ------------------------------------------------------------ refusals */

START_TEST(test_refusals) {
  bri_column_hasher *h;
  bri_error err = {0};
  /* intervals have no canonical encoding in the oracle */
  ck_assert_int_eq(bri_column_hasher_new(sch("tiM", "iv", NULL, 0, NULL), true, &h, &err),
                   BRI_EUNSUPPORTED);
  ck_assert_msg(strstr(err.msg, "iv") && strstr(err.msg, "tiM"), "%s", err.msg);
  /* a blob struct without its descriptor fields */
  struct ArrowSchema *k = sch("C", "kind", NULL, 0, NULL);
  ck_assert_int_eq(bri_column_hasher_new(sch("+s", "b", blob_meta(), 1, &k), true, &h, &err),
                   BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "no \"position\" child"), "%s", err.msg);

  /* list offsets that go backwards or past the child */
  static const int32_t cv[] = {1, 2}, bad[] = {0, 2, 1}, past[] = {0, 1, 3};
  struct ArrowSchema *item = sch("i", "item", NULL, 0, NULL);
  struct ArrowSchema *ls = sch("+l", "l", NULL, 1, &item);
  struct ArrowArray *child = arr(2, 0, 0, 2, NULL, cv, NULL, 0, NULL);
  ck_assert_int_eq(bri_column_hasher_new(ls, true, &h, &err), 0);
  ck_assert_int_eq(
      bri_column_hasher_add(h, arr(2, 0, 0, 2, NULL, bad, NULL, 1, &child), 0, NULL, &err),
      BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "l: offsets decrease"), "%s", err.msg);
  ck_assert_int_eq(
      bri_column_hasher_add(h, arr(2, 0, 0, 2, NULL, past, NULL, 1, &child), 0, NULL, &err),
      BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "list offsets reach 3, child has 2"), "%s", err.msg);
  /* rows outside the array */
  struct ArrowArray *ok = arr(1, 0, 0, 2, NULL, cv, NULL, 1, &child);
  ck_assert_int_eq(bri_column_hasher_add_range(h, ok, 0, 2, NULL, &err), BRI_EINVAL);
  /* a schema with another shape */
  ck_assert_int_eq(bri_column_hasher_check_schema(h, item, &err), BRI_EINVAL);
  ck_assert_int_eq(bri_column_hasher_check_schema(h, ls, &err), 0);
  bri_column_hasher_free(h);

  /* a dictionary index outside the dictionary */
  static const int8_t idx[] = {5};
  static const int32_t doff[] = {0, 1};
  struct ArrowSchema *ds = sch("c", "d", NULL, 0, NULL);
  ds->dictionary = sch("u", NULL, NULL, 0, NULL);
  struct ArrowArray *da = arr(1, 0, 0, 2, NULL, idx, NULL, 0, NULL);
  da->dictionary = arr(1, 0, 0, 3, NULL, doff, "p", 0, NULL);
  ck_assert_int_eq(bri_column_hasher_new(ds, true, &h, &err), 0);
  ck_assert_int_eq(bri_column_hasher_add(h, da, 0, NULL, &err), BRI_EINVAL);
  ck_assert_msg(strstr(err.msg, "dictionary index 5 outside [0, 1)"), "%s", err.msg);
  /* finishing twice gives the same answer; adding afterwards is refused */
  bri_column_hash r1, r2;
  ck_assert_int_eq(bri_column_hasher_finish(h, &r1, &err), 0);
  ck_assert_int_eq(bri_column_hasher_finish(h, &r2, &err), 0);
  ck_assert_str_eq(r1.sha256, r2.sha256);
  ck_assert_int_eq(bri_column_hasher_add(h, da, 0, NULL, &err), BRI_EINVAL);
  bri_column_hasher_free(h);

  /* the metadata reader (arrow_build.h) agrees with the encoding built here */
  int32_t n = 0;
  const char *v = bri_arrow_metadata_get(blob_meta(), "ARROW:extension:name", &n);
  ck_assert_int_eq(n, 13);
  ck_assert(!memcmp(v, "lance.blob.v2", 13));
  ck_assert_ptr_null(bri_arrow_metadata_get(blob_meta(), "ARROW:extension:metadata", &n));
  ck_assert_ptr_null(bri_arrow_metadata_get(NULL, "x", &n));
  free_all();
}
END_TEST

/* Rows taken alternately from many arrays (key order across fragments) hash
 * like one array holding them in that order. */
START_TEST(test_interleaved_arrays) {
  enum { N = 40 };
  static int64_t vals[N][2], flat[2 * N];
  struct ArrowArray *parts[N];
  for (int k = 0; k < N; k++) {
    vals[k][0] = k, vals[k][1] = 1000 + k;
    parts[k] = arr(2, 0, 0, 2, NULL, vals[k], NULL, 0, NULL);
  }
  int m = 0;
  for (int r = 0; r < 2; r++)
    for (int k = N - 1; k >= 0; k--) flat[m++] = vals[k][r];
  struct ArrowSchema *s = sch("l", "x", NULL, 0, NULL);
  bri_column_hasher *h;
  bri_error err = {0};
  bri_column_hash r1;
  ck_assert_int_eq(bri_column_hasher_new(s, true, &h, &err), 0);
  for (int r = 0; r < 2; r++)
    for (int k = N - 1; k >= 0; k--)
      ck_assert_msg(bri_column_hasher_add(h, parts[k], r, NULL, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(bri_column_hasher_finish(h, &r1, &err), 0);
  bri_column_hasher_free(h);
  bri_column_hash r2 = hash_of(s, arr(2 * N, 0, 0, 2, NULL, flat, NULL, 0, NULL), true, NULL);
  ck_assert_str_eq(r1.sha256, r2.sha256);
  ck_assert_uint_eq(r1.rows, 2 * N);
  free_all();
}
END_TEST

static Suite *hash_suite(void) {
  Suite *s = suite_create("hash");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_integers);
  tcase_add_test(tc, test_floats_bool_decimal);
  tcase_add_test(tc, test_binary);
  tcase_add_test(tc, test_nested);
  tcase_add_test(tc, test_blob_top_level);
  tcase_add_test(tc, test_blob_nested);
  tcase_add_test(tc, test_refusals);
  tcase_add_test(tc, test_interleaved_arrays);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(hash_suite)
