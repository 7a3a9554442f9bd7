/* test_frag_reuse.c: the Fragment Reuse Index format (lance/table/frag_reuse.c):
 * RoaringTreemap bytes as Rust's roaring writes them, strict decoding of
 * hostile treemaps, the checks Lance applies to FRI details, Lance's bitmap
 * remap (full groups, straddling groups, chains) and trim rule, and entries
 * built inline or with their details in _indices/<uuid>/details.binpb, read
 * back, and refused when damaged (with the file named). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lance/table/frag_reuse.h"
#include "testutil.h"
#include "util/bytes.h"
#include "util/fsutil.h"

static bri_treemap_part part(uint32_t high, const uint32_t *v, size_t n) {
  return (bri_treemap_part){high, roaring_bitmap_of_ptr(n, v)};
}

START_TEST(test_treemap_bytes) {
  /* {1 << 32 | 5}: [u64 1][u32 1][cookie 12346, 1 container, key 0 card 1, offset 16][5] */
  const uint32_t five = 5;
  bri_treemap_part p = part(1, &five, 1);
  uint8_t *b;
  size_t len;
  bri_error err;
  ck_assert_int_eq(bri_treemap_encode(&p, 1, &b, &len, &err), 0);
  static const uint8_t want[] = {1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0x3a, 0x30, 0, 0, 1, 0, 0, 0,
                                 0, 0, 0, 0, 0x10, 0, 0, 0, 5, 0};
  ck_assert_uint_eq(len, sizeof want);
  ck_assert(!memcmp(b, want, len));
  free(b);
  roaring_bitmap_free(p.low);
  /* nothing: just the count */
  ck_assert_int_eq(bri_treemap_encode(NULL, 0, &b, &len, &err), 0);
  ck_assert_uint_eq(len, 8);
  free(b);
}
END_TEST

START_TEST(test_treemap_roundtrip) {
  bri_treemap_part p[3];
  p[0] = (bri_treemap_part){3, roaring_bitmap_from_range(0, 100000, 1)}; /* runs */
  const uint32_t odd[] = {1, 3, 70000, 70001};
  p[1] = part(7, odd, 4);
  p[2] = (bri_treemap_part){9, roaring_bitmap_create()}; /* empty: left out */
  uint8_t *b;
  size_t len;
  bri_error err;
  ck_assert_int_eq(bri_treemap_encode(p, 3, &b, &len, &err), 0);
  bri_treemap_part *q;
  size_t n;
  ck_assert_msg(bri_treemap_decode(b, len, "t", &q, &n, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(n, 2);
  ck_assert_uint_eq(q[0].high, 3);
  ck_assert(roaring_bitmap_equals(q[0].low, p[0].low));
  ck_assert_uint_eq(q[1].high, 7);
  ck_assert(roaring_bitmap_equals(q[1].low, p[1].low));
  bri_treemap_free(q, n);
  free(b);
  /* keys out of order are refused when encoding */
  bri_treemap_part swapped[2] = {p[1], p[0]};
  ck_assert_int_eq(bri_treemap_encode(swapped, 2, &b, &len, &err) != 0, 1);
  ck_assert_ptr_null(b);
  for (int i = 0; i < 3; i++) roaring_bitmap_free(p[i].low);
}
END_TEST

static void expect_corrupt(const uint8_t *b, size_t len, const char *needle) {
  bri_treemap_part *q = NULL;
  size_t n = 0;
  bri_error err;
  ck_assert_int_eq(bri_treemap_decode(b, len, "T", &q, &n, &err), BRI_ECORRUPT);
  ck_assert_ptr_null(q);
  ck_assert_msg(strstr(err.msg, "T: ") && strstr(err.msg, needle), "%s", err.msg);
}

START_TEST(test_treemap_hostile) {
  const uint32_t v[] = {1, 2, 3};
  bri_treemap_part p[2] = {part(1, v, 3), part(2, v, 1)};
  uint8_t *b;
  size_t len;
  bri_error err;
  ck_assert_int_eq(bri_treemap_encode(p, 2, &b, &len, &err), 0);
  /* every truncation is refused, none crashes */
  for (size_t cut = 0; cut < len; cut++) {
    bri_treemap_part *q = NULL;
    size_t n;
    ck_assert_int_eq(bri_treemap_decode(b, cut, "T", &q, &n, &err), BRI_ECORRUPT);
  }
  uint8_t *x = malloc(len + 1);
  memcpy(x, b, len);
  x[len] = 0;
  expect_corrupt(x, len + 1, "trailing");
  memcpy(x, b, len);
  bri_put_le64(x, 1000000);
  expect_corrupt(x, len, "claims 1000000 bitmaps");
  memcpy(x, b, len);
  bri_put_le32(x + 8, 5); /* first key 5, then 2 */
  expect_corrupt(x, len, "not ascending");
  memcpy(x, b, len);
  bri_put_le32(x + 12, 777); /* no Roaring cookie */
  expect_corrupt(x, len, "cookie 777");
  free(x);
  free(b);
  for (int i = 0; i < 2; i++) roaring_bitmap_free(p[i].low);
}
END_TEST

/* ------------------------------------------------------------ content */

typedef struct fake_fri {
  bri_fri_content c;
  bri_fri_version v[2], *vp[2];
  bri_fri_group g[2], *gp[2];
  bri_fri_digest d[8], *dp[8];
  uint8_t *bytes[2];
} fake_fri;

static bri_fri_digest *dig(fake_fri *f, size_t i, uint64_t id, uint64_t rows) {
  lance__table__fragment_reuse_index_details__fragment_digest__init(&f->d[i]);
  f->d[i].has_id = 1, f->d[i].id = id;
  f->d[i].has_physical_rows = 1, f->d[i].physical_rows = rows;
  f->dp[i] = &f->d[i];
  return &f->d[i];
}

/* Version 0 (dataset version 10): fragments 0 (4 rows, offset 1 deleted) and
 * 1 (2 rows) -> 5 (5 rows). Version 1 (dataset version 20): 5 -> 6. */
static void make_fri(fake_fri *f) {
  memset(f, 0, sizeof *f);
  lance__table__fragment_reuse_index_details__inline_content__init(&f->c);
  const uint32_t a[] = {0, 2, 3}, b[] = {0, 1}, c[] = {0, 1, 2, 3, 4};
  bri_treemap_part p[2] = {part(0, a, 3), part(1, b, 2)};
  size_t len;
  bri_error err;
  ck_assert_int_eq(bri_treemap_encode(p, 2, &f->bytes[0], &len, &err), 0);
  for (int k = 0; k < 2; k++) roaring_bitmap_free(p[k].low);
  for (int k = 0; k < 2; k++) {
    lance__table__fragment_reuse_index_details__version__init(&f->v[k]);
    lance__table__fragment_reuse_index_details__group__init(&f->g[k]);
    f->v[k].has_dataset_version = 1, f->v[k].dataset_version = k ? 20 : 10;
    f->v[k].groups = &f->gp[k];
    f->v[k].n_groups = 1;
    f->gp[k] = &f->g[k];
    f->vp[k] = &f->v[k];
  }
  f->g[0].has_changed_row_addrs = f->g[1].has_changed_row_addrs = 1;
  f->g[0].changed_row_addrs.data = f->bytes[0];
  f->g[0].changed_row_addrs.len = len;
  dig(f, 0, 0, 4)->has_num_deleted_rows = 1;
  f->d[0].num_deleted_rows = 1;
  dig(f, 1, 1, 2);
  dig(f, 2, 5, 5);
  f->g[0].old_fragments = &f->dp[0], f->g[0].n_old_fragments = 2;
  f->g[0].new_fragments = &f->dp[2], f->g[0].n_new_fragments = 1;
  bri_treemap_part q = part(5, c, 5);
  ck_assert_int_eq(bri_treemap_encode(&q, 1, &f->bytes[1], &len, &err), 0);
  roaring_bitmap_free(q.low);
  f->g[1].changed_row_addrs.data = f->bytes[1];
  f->g[1].changed_row_addrs.len = len;
  dig(f, 3, 5, 5);
  dig(f, 4, 6, 5);
  f->g[1].old_fragments = &f->dp[3], f->g[1].n_old_fragments = 1;
  f->g[1].new_fragments = &f->dp[4], f->g[1].n_new_fragments = 1;
  f->c.versions = f->vp;
  f->c.n_versions = 2;
}

static void free_fri(fake_fri *f) { free(f->bytes[0]), free(f->bytes[1]); }

static void expect_check(const bri_fri_content *c, int code, const char *needle) {
  bri_error err;
  int rc = bri_fri_check(c, "M", &err);
  ck_assert_int_eq(rc, code);
  if (needle) ck_assert_msg(strstr(err.msg, needle) && strstr(err.msg, "M: "), "%s", err.msg);
}

START_TEST(test_check) {
  fake_fri f;
  make_fri(&f);
  expect_check(&f.c, 0, NULL);
  f.d[2].physical_rows = 6; /* 5 live old rows for 6 new ones */
  expect_check(&f.c, BRI_ECORRUPT, "the old fragments hold 5 live rows but the new ones 6");
  f.d[2].physical_rows = 5;
  /* Lance 14's ledger: survivors match each source's live rows; no deletions
   * in what a rewrite produced; produced and consumed once; sizes agree */
  f.d[0].num_deleted_rows = 0, f.d[2].physical_rows = 6, f.d[3].physical_rows = 6, f.d[4].physical_rows = 6;
  expect_check(&f.c, BRI_ECORRUPT, "3 surviving rows of old fragment 0, which has 4 live rows");
  f.d[0].num_deleted_rows = 1, f.d[2].physical_rows = 5, f.d[3].physical_rows = 5, f.d[4].physical_rows = 5;
  f.d[2].num_deleted_rows = 1;
  expect_check(&f.c, BRI_ECORRUPT, "new fragment 5 records 1 deleted rows");
  f.d[2].num_deleted_rows = 0;
  f.d[3].physical_rows = 7; /* fragment 5 consumed with another size than produced */
  expect_check(&f.c, BRI_ECORRUPT, "old fragment 5 has 7 rows, but was produced with 5");
  f.d[3].physical_rows = 5;
  f.d[4].id = 5; /* version 1 produces fragment 5 again */
  expect_check(&f.c, BRI_ECORRUPT, "new fragment 5 was already produced");
  f.d[4].id = 6;
  f.g[1].n_old_fragments = 0;
  expect_check(&f.c, BRI_ECORRUPT, "a group without old fragments");
  f.g[1].n_old_fragments = 1;
  f.d[0].physical_rows = 3, f.d[0].num_deleted_rows = 0; /* offset 3 of fragment 0 is out of range */
  expect_check(&f.c, BRI_ECORRUPT, "row offset 3 outside old fragment 0");
  f.d[0].physical_rows = 4, f.d[0].num_deleted_rows = 1;
  f.d[1].id = 0; /* fragment 0 twice; fragment 1's rows then belong to no old fragment */
  expect_check(&f.c, BRI_ECORRUPT, "old fragment 0 was already consumed");
  f.d[1].id = 1;
  f.d[4].id = (uint64_t)1 << 32;
  expect_check(&f.c, BRI_ECORRUPT, "outside the row-address range");
  f.d[4].id = 6;
  f.d[3].id = 4; /* version 1's rows of fragment 5 are not among its old fragments */
  expect_check(&f.c, BRI_ECORRUPT, "version 1 (dataset version 20), group 0");
  free_fri(&f);
}
END_TEST

static roaring_bitmap_t *ids(const uint32_t *v, size_t n) { return roaring_bitmap_of_ptr(n, v); }

START_TEST(test_remap_bitmap) {
  fake_fri f;
  make_fri(&f);
  const uint32_t a[] = {0, 1, 2, 9}, want_a[] = {2, 6, 9};
  roaring_bitmap_t *b = ids(a, 4), *w = ids(want_a, 3);
  bri_fri_remap_bitmap(&f.c, b); /* 0,1 -> 5 -> 6 */
  ck_assert(roaring_bitmap_equals(b, w));
  roaring_bitmap_free(b), roaring_bitmap_free(w);
  /* a straddling group: the covered old fragment leaves, nothing comes in */
  const uint32_t s[] = {1, 9}, want_s[] = {9};
  b = ids(s, 2), w = ids(want_s, 1);
  bri_fri_remap_bitmap(&f.c, b);
  ck_assert(roaring_bitmap_equals(b, w));
  roaring_bitmap_free(b), roaring_bitmap_free(w);
  /* an index built after version 0 (it covers 5) follows version 1 only */
  const uint32_t l[] = {5}, want_l[] = {6};
  b = ids(l, 1), w = ids(want_l, 1);
  bri_fri_remap_bitmap(&f.c, b);
  ck_assert(roaring_bitmap_equals(b, w));
  roaring_bitmap_free(b), roaring_bitmap_free(w);
  free_fri(&f);
}
END_TEST

/* An index section of one index (and the FRI entry, which the rule skips). */
typedef struct fake_sec {
  Lance__Table__IndexSection s;
  Lance__Table__IndexMetadata x[2], *xp[2];
  uint8_t *bm;
} fake_sec;

static void make_sec(fake_sec *f, uint64_t dataset_version, const uint32_t *cover, size_t n) {
  memset(f, 0, sizeof *f);
  lance__table__index_section__init(&f->s);
  for (int k = 0; k < 2; k++) lance__table__index_metadata__init(&f->x[k]), f->xp[k] = &f->x[k];
  f->x[0].name = "idx";
  f->x[0].dataset_version = dataset_version;
  roaring_bitmap_t *b = roaring_bitmap_of_ptr(n, cover);
  f->x[0].fragment_bitmap.len = roaring_bitmap_portable_size_in_bytes(b);
  f->bm = malloc(f->x[0].fragment_bitmap.len);
  roaring_bitmap_portable_serialize(b, (char *)f->bm);
  roaring_bitmap_free(b);
  f->x[0].fragment_bitmap.data = f->bm;
  f->x[0].has_fragment_bitmap = 1;
  f->x[1].name = BRI_FRI_NAME; /* dataset version 0, would never be caught up */
  f->s.indices = f->xp;
  f->s.n_indices = 2;
}

START_TEST(test_caught_up) {
  fake_fri f;
  make_fri(&f);
  fake_sec s;
  const uint32_t old[] = {0, 1}, fresh[] = {5};
  make_sec(&s, 10, fresh, 1);
  ck_assert(bri_fri_version_caught_up(&f.v[0], &s.s));   /* built at 10, covers none of 0, 1 */
  ck_assert(!bri_fri_version_caught_up(&f.v[1], &s.s));  /* built before version 1 (20) */
  free(s.bm);
  make_sec(&s, 12, old, 2);
  ck_assert(!bri_fri_version_caught_up(&f.v[0], &s.s));  /* still names the old fragments */
  s.x[0].has_fragment_bitmap = 0;                         /* no bitmap: caught up, as in Lance */
  ck_assert(bri_fri_version_caught_up(&f.v[0], &s.s));
  free(s.bm);
  free_fri(&f);
}
END_TEST

/* ------------------------------------------------------------ entries */

static char *tmp;
static bri_table table;
static bri_manifest man;
static Lance__Table__Manifest man_pb;

static void setup(void) {
  tmp = bri_tmpdir();
  memset(&table, 0, sizeof table);
  table.root = tmp;
  bri_error err;
  ck_assert_int_eq(bri_store_open(tmp, 0, &table.store, &err), 0);
  lance__table__manifest__init(&man_pb);
  memset(&man, 0, sizeof man);
  man.pb = &man_pb;
  man.path = "/t/_versions/7.manifest";
}

static void teardown(void) {
  bri_store_close(table.store);
  bri_rmtree(tmp);
  free(tmp);
}

static size_t packed(const bri_fri_content *c, uint8_t **out) {
  size_t n = protobuf_c_message_get_packed_size(&c->base);
  *out = malloc(n);
  protobuf_c_message_pack(&c->base, *out);
  return n;
}

static void roundtrip(const bri_fri_content *c, bool external) {
  const uint32_t news[] = {6};
  roaring_bitmap_t *nb = roaring_bitmap_of_ptr(1, news);
  Lance__Table__IndexMetadata *x;
  char *ext;
  bri_error err;
  ck_assert_msg(bri_fri_entry_build(&table, c, NULL, 21, nb, &x, &ext, &err) == 0, "%s", err.msg);
  roaring_bitmap_free(nb);
  ck_assert(bri_fri_is(x));
  ck_assert_str_eq(x->index_details->type_url, BRI_FRI_TYPE_URL);
  ck_assert_uint_eq(x->dataset_version, 21);
  ck_assert_int_eq(x->index_version, 0);
  ck_assert_uint_eq(x->uuid->uuid.len, 16);
  ck_assert_int_eq(ext != NULL, external);
  if (external) {
    char u[37];
    bri_uuid_format(x->uuid->uuid.data, u);
    char *want = bri_strdupf("%s/_indices/%s/details.binpb", tmp, u);
    ck_assert_str_eq(ext, want);
    free(want);
  }
  bri_fri_content *back;
  ck_assert_msg(bri_fri_load(&table, &man, x, &back, &err) == 0, "%s", err.msg);
  uint8_t *p1, *p2;
  size_t n1 = packed(c, &p1), n2 = packed(back, &p2);
  ck_assert_uint_eq(n1, n2);
  ck_assert(!memcmp(p1, p2, n1));
  free(p1), free(p2);
  bri_fri_content_free(back);
  if (external) { /* a damaged external file is refused, naming it */
    struct stat st;
    ck_assert_int_eq(stat(ext, &st), 0);
    ck_assert_int_eq(truncate(ext, st.st_size - 3), 0);
    ck_assert_int_eq(bri_fri_load(&table, &man, x, &back, &err), BRI_ECORRUPT);
    ck_assert_msg(strstr(err.msg, ext) && strstr(err.msg, "reads"), "%s", err.msg);
    ck_assert_int_eq(remove(ext), 0);
    ck_assert_int_ne(bri_fri_load(&table, &man, x, &back, &err), 0);
    ck_assert_msg(strstr(err.msg, ext), "%s", err.msg);
  }
  bri_fri_entry_free(x);
  free(ext);
}

START_TEST(test_entry_inline) {
  fake_fri f;
  make_fri(&f);
  roundtrip(&f.c, false);
  free_fri(&f);
}
END_TEST

START_TEST(test_entry_external) {
  /* 3000 groups of scattered offsets: well over 200 KiB of details */
  enum { G = 3000 };
  bri_fri_content c;
  lance__table__fragment_reuse_index_details__inline_content__init(&c);
  bri_fri_version v, *vp = &v;
  lance__table__fragment_reuse_index_details__version__init(&v);
  bri_fri_group *g = calloc(G, sizeof *g), **gp = calloc(G, sizeof *gp);
  bri_fri_digest *d = calloc(2 * G, sizeof *d), **dp = calloc(2 * G, sizeof *dp);
  uint32_t offs[40];
  for (size_t i = 0; i < 40; i++) offs[i] = (uint32_t)(i * 97);
  for (size_t k = 0; k < G; k++) {
    lance__table__fragment_reuse_index_details__group__init(&g[k]);
    for (int j = 0; j < 2; j++) {
      lance__table__fragment_reuse_index_details__fragment_digest__init(&d[2 * k + j]);
      d[2 * k + j].has_id = d[2 * k + j].has_physical_rows = 1;
      d[2 * k + j].id = j ? 100000 + k : k;
      d[2 * k + j].physical_rows = j ? 40 : 4000;
      d[2 * k + j].has_num_deleted_rows = !j, d[2 * k + j].num_deleted_rows = j ? 0 : 3960;
      dp[2 * k + j] = &d[2 * k + j];
    }
    bri_treemap_part p = part((uint32_t)k, offs, 40);
    bri_error err;
    ck_assert_int_eq(bri_treemap_encode(&p, 1, &g[k].changed_row_addrs.data,
                                        &g[k].changed_row_addrs.len, &err), 0);
    roaring_bitmap_free(p.low);
    g[k].has_changed_row_addrs = 1;
    g[k].old_fragments = &dp[2 * k], g[k].n_old_fragments = 1;
    g[k].new_fragments = &dp[2 * k + 1], g[k].n_new_fragments = 1;
    gp[k] = &g[k];
  }
  v.groups = gp, v.n_groups = G, v.has_dataset_version = 1, v.dataset_version = 3;
  c.versions = &vp, c.n_versions = 1;
  ck_assert_uint_gt(protobuf_c_message_get_packed_size(&c.base), BRI_FRI_INLINE_MAX);
  roundtrip(&c, true);
  for (size_t k = 0; k < G; k++) free(g[k].changed_row_addrs.data);
  free(g), free(gp), free(d), free(dp);
}
END_TEST

static void expect_load(const Lance__Table__IndexMetadata *x, int code, const char *needle) {
  bri_fri_content *c = NULL;
  bri_error err;
  ck_assert_int_eq(bri_fri_load(&table, &man, x, &c, &err), code);
  ck_assert_ptr_null(c);
  ck_assert_msg(strstr(err.msg, needle) && strstr(err.msg, man.path), "%s", err.msg);
}

START_TEST(test_load_refuses) {
  Lance__Table__IndexMetadata x;
  Google__Protobuf__Any any;
  lance__table__index_metadata__init(&x);
  google__protobuf__any__init(&any);
  x.name = BRI_FRI_NAME;
  expect_load(&x, BRI_ECORRUPT, "does not carry FragmentReuseIndexDetails");
  x.index_details = &any;
  any.type_url = "/lance.table.BTreeIndexDetails";
  expect_load(&x, BRI_ECORRUPT, "does not carry FragmentReuseIndexDetails");
  any.type_url = BRI_FRI_TYPE_URL;
  static uint8_t junk[] = {0xff, 0xff, 0xff};
  any.value.data = junk, any.value.len = sizeof junk, any.has_value = 1;
  expect_load(&x, BRI_ECORRUPT, "do not decode");
  any.value.len = 0;
  expect_load(&x, BRI_ECORRUPT, "has no content");
  /* external file names that would leave the index directory */
  static uint8_t ext[] = {0x12, 0x07, 0x0a, 0x05, '.', '.', '/', 'x', 'y'}; /* external{path "../xy"} */
  any.value.data = ext, any.value.len = sizeof ext;
  expect_load(&x, BRI_ECORRUPT, "not a file name");
  x.has_index_version = 1, x.index_version = 1; /* 2026's tagged FRI */
  expect_load(&x, BRI_EUNSUPPORTED, "index_version 1");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("frag_reuse");
  TCase *tc = tcase_create("format");
  tcase_add_test(tc, test_treemap_bytes);
  tcase_add_test(tc, test_treemap_roundtrip);
  tcase_add_test(tc, test_treemap_hostile);
  tcase_add_test(tc, test_check);
  tcase_add_test(tc, test_remap_bitmap);
  tcase_add_test(tc, test_caught_up);
  suite_add_tcase(s, tc);
  TCase *te = tcase_create("entries");
  tcase_add_checked_fixture(te, setup, teardown);
  tcase_add_test(te, test_entry_inline);
  tcase_add_test(te, test_entry_external);
  tcase_add_test(te, test_load_refuses);
  suite_add_tcase(s, te);
  return s;
}

BRI_TEST_MAIN(suite)
