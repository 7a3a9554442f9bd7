/* test_rules.c: Lance's manifest invariants (lib/lance/table/rules.h), one
 * test per rule on manifests built in memory: a manifest shaped as Lance
 * writes it keeps every rule, and each kind of damage is reported under its
 * rule's name, once, with the ids involved. Sorting puts a Rewrite's
 * fragments where Lance puts them; bri_rules_enforce names the first broken
 * rule. (The rules that need other files are tested in test_verify.c.) */
#include <roaring/roaring.h>
#include <stdlib.h>
#include <string.h>

#include "lance/table/flags.h"
#include "lance/table/rowids.h"
#include "lance/table/rules.h"
#include "testutil.h"

#define NF 4

/* A manifest of NF fragments (ids 0..NF-1, 10 rows, one 2.2 data file
 * each), version 5, max_fragment_id NF-1: every rule holds. */
typedef struct mf {
  Lance__Table__Manifest m;
  Lance__Table__Manifest__DataStorageFormat fmt;
  Lance__Table__DataFragment f[NF], *fp[NF];
  Lance__Table__DataFile df[NF], *dfp[NF];
  int32_t fields[1], cols[1];
  Lance__Table__DeletionFile del;
  uint8_t *owned[2 * NF + 2]; /* serialized sequences and bitmaps to free */
  size_t n_owned;
  Lance__Table__IndexSection idx;
  Lance__Table__IndexMetadata ix, *ixp;
  Lance__Table__UUID uuid;
  uint8_t uuid_bytes[16];
  Lance__File__Field field[3], *fieldp[3];
} mf;

static void build(mf *x) {
  memset(x, 0, sizeof *x);
  lance__table__manifest__init(&x->m);
  lance__table__manifest__data_storage_format__init(&x->fmt);
  x->fmt.version = "2.2";
  x->m.data_format = &x->fmt;
  x->m.version = 5, x->m.has_version = 1;
  x->m.max_fragment_id = NF - 1, x->m.has_max_fragment_id = 1;
  x->fields[0] = 0, x->cols[0] = 0;
  for (int i = 0; i < NF; i++) {
    lance__table__data_fragment__init(&x->f[i]);
    lance__table__data_file__init(&x->df[i]);
    x->df[i].path = "a.lance";
    x->df[i].fields = x->fields, x->df[i].n_fields = 1;
    x->df[i].column_indices = x->cols, x->df[i].n_column_indices = 1;
    x->df[i].file_major_version = 2, x->df[i].file_minor_version = 2;
    x->dfp[i] = &x->df[i];
    x->f[i].id = (uint64_t)i, x->f[i].has_id = 1;
    x->f[i].physical_rows = 10, x->f[i].has_physical_rows = 1;
    x->f[i].files = &x->dfp[i], x->f[i].n_files = 1;
    x->fp[i] = &x->f[i];
  }
  x->m.fragments = x->fp, x->m.n_fragments = NF;
  lance__table__deletion_file__init(&x->del);
  lance__table__index_section__init(&x->idx);
  lance__table__index_metadata__init(&x->ix);
  x->ix.name = "idx";
  lance__table__uuid__init(&x->uuid);
  x->uuid.has_uuid = 1, x->uuid.uuid.data = x->uuid_bytes, x->uuid.uuid.len = 16;
  x->ix.uuid = &x->uuid;
  x->ixp = &x->ix;
  x->idx.indices = &x->ixp, x->idx.n_indices = 1;
}

static void unbuild(mf *x) {
  for (size_t i = 0; i < x->n_owned; i++) free(x->owned[i]);
}

/* Stable row ids: fragment i holds ids first + i*10 .. +10; next_row_id
 * right above the last. */
static void give_row_ids(mf *x, uint64_t first) {
  x->m.reader_feature_flags |= BRI_FLAG_STABLE_ROW_IDS;
  for (int i = 0; i < NF; i++) {
    uint64_t v[10];
    for (int k = 0; k < 10; k++) v[k] = first + (uint64_t)(i * 10 + k);
    bri_error err;
    Lance__Table__DataFragment *f = &x->f[i];
    ck_assert_int_eq(bri_u64seq_pack(v, 10, &f->inline_row_ids.data, &f->inline_row_ids.len, &err), 0);
    x->owned[x->n_owned++] = f->inline_row_ids.data;
    f->row_id_sequence_case = LANCE__TABLE__DATA_FRAGMENT__ROW_ID_SEQUENCE_INLINE_ROW_IDS;
  }
  x->m.next_row_id = first + NF * 10, x->m.has_next_row_id = 1;
}

static void set_bitmap(mf *x, const uint32_t *ids, size_t n) {
  roaring_bitmap_t *b = roaring_bitmap_of_ptr(n, ids);
  size_t len = roaring_bitmap_portable_size_in_bytes(b);
  uint8_t *buf = malloc(len);
  roaring_bitmap_portable_serialize(b, (char *)buf);
  roaring_bitmap_free(b);
  x->owned[x->n_owned++] = buf;
  x->ix.fragment_bitmap.data = buf, x->ix.fragment_bitmap.len = len, x->ix.has_fragment_bitmap = 1;
}

/* What the checks reported: "rule|what" lines. */
typedef struct seen_rules {
  char text[4096];
  int n;
} seen_rules;

static void collect(void *user, const char *rule, const char *what) {
  seen_rules *s = user;
  size_t len = strlen(s->text);
  snprintf(s->text + len, sizeof s->text - len, "%s|%s\n", rule, what);
  s->n++;
}

static seen_rules check(const mf *x) {
  seen_rules s = {{0}, 0};
  size_t n = bri_rules_check_manifest(&x->m, &x->idx, collect, &s);
  ck_assert_uint_eq(n, (size_t)s.n);
  return s;
}

/* Exactly one broken rule, `rule`, whose message contains `what`. */
static void expect_one(const mf *x, const char *rule, const char *what) {
  seen_rules s = check(x);
  ck_assert_msg(s.n == 1, "expected one broken rule (%s), got %d:\n%s", rule, s.n, s.text);
  char head[128];
  snprintf(head, sizeof head, "%s|", rule);
  ck_assert_msg(strncmp(s.text, head, strlen(head)) == 0, "expected rule %s, got %s", rule, s.text);
  ck_assert_msg(strstr(s.text, what) != NULL, "\"%s\" not in %s", what, s.text);
}

START_TEST(test_clean_manifest) {
  mf x;
  build(&x);
  ck_assert_int_eq(check(&x).n, 0);
  give_row_ids(&x, 100);
  uint32_t ids[] = {0, 1, 3};
  set_bitmap(&x, ids, 3);
  ck_assert_msg(check(&x).n == 0, "%s", check(&x).text);
  ck_assert_int_eq(bri_rules_enforce(&x.m, &x.idx, NULL, NULL), 0);
  unbuild(&x);
}
END_TEST

START_TEST(test_fragments_sorted) {
  mf x;
  build(&x);
  /* what brid's rewrite wrote before: the new fragment in the group's place */
  x.f[0].id = 21, x.f[1].id = 10, x.f[2].id = 22, x.f[3].id = 23;
  x.m.max_fragment_id = 23;
  expect_one(&x, BRI_RULE_FRAGMENTS_SORTED, "fragment 10 follows fragment 21");
  bri_manifest_sort_fragments(&x.m);
  ck_assert_uint_eq(x.m.fragments[0]->id, 10);
  ck_assert_uint_eq(x.m.fragments[1]->id, 21);
  ck_assert_uint_eq(x.m.fragments[3]->id, 23);
  ck_assert_int_eq(check(&x).n, 0);
  unbuild(&x);
}
END_TEST

START_TEST(test_fragment_ids) {
  mf x;
  build(&x);
  x.f[2].id = 1;
  expect_one(&x, BRI_RULE_FRAGMENT_IDS, "two fragments have id 1");
  /* a duplicate that is not the neighbour in an unsorted list */
  x.f[0].id = 3, x.f[1].id = 1, x.f[2].id = 2, x.f[3].id = 1;
  seen_rules s = check(&x);
  ck_assert_msg(strstr(s.text, "fragment-ids|two fragments have id 1") != NULL, "%s", s.text);
  build(&x);
  x.f[3].id = (uint64_t)1 << 32;
  x.m.has_max_fragment_id = 0;
  expect_one(&x, BRI_RULE_FRAGMENT_IDS, "4294967296 does not fit the 32 bits");
}
END_TEST

START_TEST(test_max_fragment_id) {
  mf x;
  build(&x);
  x.m.max_fragment_id = 2;
  expect_one(&x, BRI_RULE_MAX_FRAGMENT_ID, "fragment 3 is above max_fragment_id 2");
  x.m.has_max_fragment_id = 0; /* unset: the highest id is the mark */
  ck_assert_int_eq(check(&x).n, 0);
}
END_TEST

START_TEST(test_physical_rows) {
  mf x;
  build(&x);
  x.f[1].physical_rows = 0, x.f[1].has_physical_rows = 0;
  expect_one(&x, BRI_RULE_PHYSICAL_ROWS, "fragment 1 records 0 physical rows");
  build(&x);
  x.f[2].physical_rows = (uint64_t)1 << 32;
  expect_one(&x, BRI_RULE_PHYSICAL_ROWS, "fragment 2 records 4294967296");
}
END_TEST

START_TEST(test_deletion_count) {
  mf x;
  build(&x);
  x.m.reader_feature_flags = BRI_FLAG_DELETION_FILES;
  x.f[1].deletion_file = &x.del;
  x.del.num_deleted_rows = 3;
  ck_assert_int_eq(check(&x).n, 0);
  x.del.num_deleted_rows = 10; /* every row: Lance drops such a fragment */
  expect_one(&x, BRI_RULE_DELETIONS, "fragment 1: deletion file records 10 deleted rows of 10");
  x.del.num_deleted_rows = 0; /* unknown count */
  expect_one(&x, BRI_RULE_DELETIONS, "records 0 deleted rows");
}
END_TEST

START_TEST(test_storage_version_and_columns) {
  mf x;
  build(&x);
  x.df[2].file_minor_version = 1;
  expect_one(&x, BRI_RULE_STORAGE_VERSION, "data file a.lance is format 2.1, the table's data storage version is 2.2");
  /* mixed_data_file_versions: each file names its own version */
  x.m.reader_feature_flags |= BRI_FLAG_MIXED_DATA_FILE_VERSIONS;
  x.m.writer_feature_flags |= BRI_FLAG_MIXED_DATA_FILE_VERSIONS;
  ck_assert_int_eq(check(&x).n, 0);
  build(&x);
  x.df[0].n_column_indices = 0;
  expect_one(&x, BRI_RULE_COLUMN_INDICES, "lists 1 fields but 0 column indices");
}
END_TEST

START_TEST(test_row_ids) {
  mf x;
  build(&x);
  give_row_ids(&x, 100);
  x.m.next_row_id = 139; /* fragment 3 holds 130..139 */
  expect_one(&x, BRI_RULE_ROW_IDS, "fragment 3 holds row id 139, not below next_row_id 139");
  x.m.next_row_id = 140;
  x.f[1].physical_rows = 11;
  expect_one(&x, BRI_RULE_ROW_IDS, "fragment 1 has 10 row ids for 11 physical rows");
  x.f[1].physical_rows = 10;
  x.f[2].row_id_sequence_case = LANCE__TABLE__DATA_FRAGMENT__ROW_ID_SEQUENCE__NOT_SET;
  expect_one(&x, BRI_RULE_ROW_IDS, "fragment 2 has no row ids, but the table has stable row ids");
  unbuild(&x);
  build(&x);
  give_row_ids(&x, 0);
  x.m.reader_feature_flags = 0;
  seen_rules s = check(&x);
  ck_assert_msg(strstr(s.text, "row-ids|fragment 0 carries row ids, but the table has no stable row ids"), "%s", s.text);
  ck_assert_msg(strstr(s.text, "feature-flags|fragments carry row ids but the stable_row_ids flag is not set"), "%s", s.text);
  unbuild(&x);
}
END_TEST

START_TEST(test_row_versions) {
  mf x;
  build(&x);
  uint64_t v[10] = {1, 1, 1, 2, 2, 2, 3, 3, 3, 5};
  bri_error err;
  Lance__Table__DataFragment *f = &x.f[1];
  ck_assert_int_eq(bri_versions_pack(v, 10, &f->inline_created_at_versions.data, &f->inline_created_at_versions.len, &err), 0);
  x.owned[x.n_owned++] = f->inline_created_at_versions.data;
  f->created_at_version_sequence_case = LANCE__TABLE__DATA_FRAGMENT__CREATED_AT_VERSION_SEQUENCE_INLINE_CREATED_AT_VERSIONS;
  ck_assert_int_eq(check(&x).n, 0);
  x.m.version = 4;
  expect_one(&x, BRI_RULE_ROW_VERSIONS, "fragment 1: a row's created_at version is 5, after the manifest's version 4");
  x.m.version = 5;
  f->physical_rows = 12;
  expect_one(&x, BRI_RULE_ROW_VERSIONS, "version runs cover 10 of the fragment's 12 rows");
  unbuild(&x);
}
END_TEST

START_TEST(test_index_bitmap) {
  mf x;
  build(&x);
  uint32_t ids[] = {1, 2, 4};
  set_bitmap(&x, ids, 3);
  expect_one(&x, BRI_RULE_INDEX_BITMAP, "index idx covers fragment 4, above every id handed out (3)");
  x.m.max_fragment_id = 4; /* reserved, not yet listed: fine */
  ck_assert_int_eq(check(&x).n, 0);
  static uint8_t junk[] = {1, 2, 3};
  x.ix.fragment_bitmap.data = junk, x.ix.fragment_bitmap.len = sizeof junk;
  expect_one(&x, BRI_RULE_INDEX_BITMAP, "index idx: fragment_bitmap: 3 bytes, too short for a Roaring bitmap cookie");
  unbuild(&x);
}
END_TEST

/* Lance 14 refuses to load an index without its uuid. */
START_TEST(test_index_uuid) {
  mf x;
  build(&x);
  x.uuid.uuid.len = 15;
  expect_one(&x, BRI_RULE_INDEX_UUID, "index idx has no 16-byte uuid");
  x.ix.uuid = NULL;
  expect_one(&x, BRI_RULE_INDEX_UUID, "index idx has no 16-byte uuid");
  unbuild(&x);
}
END_TEST

/* Lance 14's rule for 2.1+ files: a leaf (or blob, or packed struct) has a
 * column of its own, a parent none. Schema: 0 struct s {1 int a}, 2 blob. */
START_TEST(test_column_indices_by_field) {
  mf x;
  build(&x);
  const int32_t ids[3] = {0, 1, 2}, parents[3] = {-1, 0, -1};
  for (int i = 0; i < 3; i++) {
    lance__file__field__init(&x.field[i]);
    x.field[i].id = ids[i], x.field[i].has_id = 1, x.field[i].parent_id = parents[i], x.field[i].has_parent_id = 1;
    x.field[i].name = i == 0 ? "s" : i == 1 ? "a" : "b";
    x.fieldp[i] = &x.field[i];
  }
  x.field[2].extension_name = "lance.blob.v2";
  x.field[2].name = "blob";
  x.m.fields = x.fieldp, x.m.n_fields = 3;
  int32_t fields[3] = {0, 1, 2}, good[3] = {-1, 0, 1}, bad_parent[3] = {0, 1, 2}, bad_blob[3] = {-1, 0, -1};
  for (int i = 0; i < NF; i++)
    x.df[i].fields = fields, x.df[i].n_fields = 3, x.df[i].column_indices = good, x.df[i].n_column_indices = 3;
  ck_assert_int_eq(check(&x).n, 0);
  for (int i = 0; i < NF; i++) x.df[i].column_indices = bad_parent;
  expect_one(&x, BRI_RULE_COLUMN_INDICES, "field s (id 0) column index 0, but a field with children has none");
  for (int i = 0; i < NF; i++) x.df[i].column_indices = bad_blob;
  expect_one(&x, BRI_RULE_COLUMN_INDICES, "field blob (id 2) column index -1, but a leaf, packed struct or blob");
  unbuild(&x);
}
END_TEST

START_TEST(test_feature_flags) {
  mf x;
  build(&x);
  x.f[0].deletion_file = &x.del;
  x.del.num_deleted_rows = 1;
  expect_one(&x, BRI_RULE_FEATURE_FLAGS, "deletion files but the deletion_files flag is not set");
  x.f[0].deletion_file = NULL;
  /* Lance 14's checks: paired bits in both words, bit 15 with field 24 */
  x.m.writer_feature_flags = BRI_FLAG_MANAGED_BLOBS;
  expect_one(&x, BRI_RULE_FEATURE_FLAGS, "a paired flag (16384) is set in one word only");
  x.m.reader_feature_flags = BRI_FLAG_MANAGED_BLOBS;
  ck_assert_int_eq(check(&x).n, 0);
  x.m.writer_feature_flags |= BRI_FLAG_NON_REUSABLE_FIELD_IDS;
  expect_one(&x, BRI_RULE_FEATURE_FLAGS, "non_reusable_field_ids and max_allocated_field_id");
  x.m.has_max_allocated_field_id = 1;
  ck_assert_int_eq(check(&x).n, 0);
}
END_TEST

START_TEST(test_rewrite_applied) {
  mf x;
  build(&x);
  Lance__Table__DataFragment old5, new7;
  lance__table__data_fragment__init(&old5);
  lance__table__data_fragment__init(&new7);
  old5.id = 5, new7.id = 7;
  Lance__Table__DataFragment *olds[] = {&old5, &x.f[0]}, *news[] = {&new7};
  Lance__Table__Transaction__Rewrite__RewriteGroup g = LANCE__TABLE__TRANSACTION__REWRITE__REWRITE_GROUP__INIT, *gp = &g;
  Lance__Table__Transaction__Rewrite rw = LANCE__TABLE__TRANSACTION__REWRITE__INIT;
  Lance__Table__Transaction txn = LANCE__TABLE__TRANSACTION__INIT;
  rw.groups = &gp, rw.n_groups = 1;
  txn.operation_case = LANCE__TABLE__TRANSACTION__OPERATION_REWRITE, txn.rewrite = &rw;
  g.old_fragments = olds, g.n_old_fragments = 1;
  g.new_fragments = news, g.n_new_fragments = 1;
  seen_rules s = {{0}, 0};
  ck_assert_uint_eq(bri_rules_check_transaction(&x.m, &txn, collect, &s), 1);
  ck_assert_msg(strstr(s.text, "rewrite-applied|the rewrite wrote fragment 7, which is not listed"), "%s", s.text);
  new7.id = 3; /* now listed */
  ck_assert_uint_eq(bri_rules_check_transaction(&x.m, &txn, NULL, NULL), 0);
  g.n_old_fragments = 2; /* fragment 0 was replaced but is still there */
  bri_error err;
  ck_assert_int_eq(bri_rules_enforce(&x.m, &x.idx, &txn, &err), BRI_EINVAL);
  ck_assert_str_eq(err.msg, "rule rewrite-applied: the rewrite replaced fragment 0, which is still listed");
  news[0] = &x.f[0]; /* a group that rewrote fragment 0's files under its id */
  ck_assert_uint_eq(bri_rules_check_transaction(&x.m, &txn, NULL, NULL), 0);
}
END_TEST

START_TEST(test_high_water_marks) {
  mf a, b;
  build(&a);
  build(&b);
  give_row_ids(&a, 0);
  give_row_ids(&b, 0);
  a.m.max_fragment_id = 9;
  b.m.max_fragment_id = 8;
  b.m.next_row_id = a.m.next_row_id - 1;
  seen_rules s = {{0}, 0};
  ck_assert_uint_eq(bri_rules_check_succession(&a.m, &b.m, collect, &s), 2);
  ck_assert_msg(strstr(s.text, "high-water-marks|max_fragment_id went down from 9 (version 5) to 8"), "%s", s.text);
  ck_assert_msg(strstr(s.text, "high-water-marks|next_row_id went down from 40 (version 5) to 39"), "%s", s.text);
  b.m.max_fragment_id = 9, b.m.next_row_id = 40;
  ck_assert_uint_eq(bri_rules_check_succession(&a.m, &b.m, NULL, NULL), 0);
  unbuild(&a), unbuild(&b);
}
END_TEST

static Suite *rules_suite(void) {
  Suite *s = suite_create("rules");
  TCase *tc = tcase_create("rules");
  tcase_add_test(tc, test_clean_manifest);
  tcase_add_test(tc, test_fragments_sorted);
  tcase_add_test(tc, test_fragment_ids);
  tcase_add_test(tc, test_max_fragment_id);
  tcase_add_test(tc, test_physical_rows);
  tcase_add_test(tc, test_deletion_count);
  tcase_add_test(tc, test_storage_version_and_columns);
  tcase_add_test(tc, test_row_ids);
  tcase_add_test(tc, test_row_versions);
  tcase_add_test(tc, test_index_bitmap);
  tcase_add_test(tc, test_index_uuid);
  tcase_add_test(tc, test_column_indices_by_field);
  tcase_add_test(tc, test_feature_flags);
  tcase_add_test(tc, test_rewrite_applied);
  tcase_add_test(tc, test_high_water_marks);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(rules_suite)
