/* test_foreign.c: the refusals of lance/table/foreign.h on messages built
 * here: which unknown fields each check lets pass (the BRI and the upstream
 * size hint, varints where only names of files matter), which it refuses,
 * and that every message names the file, the message type and the field. */
#include <stdlib.h>
#include <string.h>

#include "lance/table/foreign.h"
#include "testutil.h"

static uint8_t seven[] = {0x07};
static uint8_t text[] = {0x03, 'a', 'b', 'c'};

static ProtobufCMessageUnknownField varint_field(uint32_t tag) {
  return (ProtobufCMessageUnknownField){tag, PROTOBUF_C_WIRE_TYPE_VARINT, sizeof seven, seven};
}
static ProtobufCMessageUnknownField ld_field(uint32_t tag) {
  return (ProtobufCMessageUnknownField){tag, PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED, sizeof text, text};
}

static void expect(int rc, const bri_error *err, const char *needle) {
  ck_assert_int_eq(rc, BRI_EUNSUPPORTED);
  ck_assert_msg(strstr(err->msg, "/t/_versions/m.manifest: ") == err->msg, "no file: %s", err->msg);
  ck_assert_msg(strstr(err->msg, needle) != NULL, "'%s' not in: %s", needle, err->msg);
}

/* A fragment a compaction removes: the BRI and a varint field 8 of its data
 * file pass; any other unknown field of the fragment, the data file or the
 * deletion file is refused. */
START_TEST(test_removed_fragment) {
  Lance__Table__DataFragment f;
  lance__table__data_fragment__init(&f);
  Lance__Table__DataFile df = LANCE__TABLE__DATA_FILE__INIT, *dfs[] = {&df};
  Lance__Table__DeletionFile d = LANCE__TABLE__DELETION_FILE__INIT;
  f.id = 3, f.files = dfs, f.n_files = 1, f.deletion_file = &d;
  df.path = "a.lance";
  ProtobufCMessageUnknownField ok[] = {ld_field(8), varint_field(8)};
  df.base.unknown_fields = ok, df.base.n_unknown_fields = 2;
  bri_error err = {0};
  ck_assert_int_eq(bri_foreign_check_removed(&f, "/t/_versions/m.manifest", &err), 0);
  ProtobufCMessageUnknownField bad[] = {ld_field(8), varint_field(12)};
  df.base.unknown_fields = bad;
  expect(bri_foreign_check_removed(&f, "/t/_versions/m.manifest", &err), &err,
         "fragment 3: data file a.lance: DataFile field 12 (varint) is unknown to brid");
  df.base.n_unknown_fields = 0;
  ProtobufCMessageUnknownField del = varint_field(9);
  d.base.unknown_fields = &del, d.base.n_unknown_fields = 1;
  expect(bri_foreign_check_removed(&f, "/t/_versions/m.manifest", &err), &err,
         "fragment 3: DeletionFile field 9 (varint)");
}
END_TEST

/* Clone and cleanup let varints pass and refuse length-delimited fields,
 * at every level, the BRI aside. */
START_TEST(test_files_named) {
  Lance__Table__Manifest m = LANCE__TABLE__MANIFEST__INIT;
  Lance__Table__DataFragment f, *fs[] = {&f};
  lance__table__data_fragment__init(&f);
  Lance__Table__DataFile df = LANCE__TABLE__DATA_FILE__INIT, *dfs[] = {&df};
  Lance__Table__IndexMetadata x = LANCE__TABLE__INDEX_METADATA__INIT, *xs[] = {&x};
  Lance__Table__IndexSection idx = LANCE__TABLE__INDEX_SECTION__INIT;
  m.fragments = fs, m.n_fragments = 1, f.files = dfs, f.n_files = 1, df.path = "a.lance";
  idx.indices = xs, idx.n_indices = 1, x.name = "id_idx";
  ProtobufCMessageUnknownField v = varint_field(30), bri = ld_field(8), ld = ld_field(31);
  m.base.unknown_fields = f.base.unknown_fields = x.base.unknown_fields = &v;
  m.base.n_unknown_fields = f.base.n_unknown_fields = x.base.n_unknown_fields = 1;
  df.base.unknown_fields = &bri, df.base.n_unknown_fields = 1;
  bri_error err = {0};
  const char *p = "/t/_versions/m.manifest";
  ck_assert_int_eq(bri_foreign_check_files(&m, &idx, BRI_FOREIGN_CLONE, p, &err), 0);
  x.base.unknown_fields = &ld;
  expect(bri_foreign_check_files(&m, &idx, BRI_FOREIGN_CLEANUP, p, &err), &err,
         "index id_idx: IndexMetadata field 31 (length-delimited) is unknown to brid; it may name files, "
         "which cleanup would take for unreferenced and delete");
  df.base.unknown_fields = &ld;
  expect(bri_foreign_check_files(&m, &idx, BRI_FOREIGN_CLONE, p, &err), &err,
         "fragment 0: data file a.lance: DataFile field 31 (length-delimited) is unknown to brid; it may "
         "name files, which the clone would not follow");
}
END_TEST

/* A varint equal to a section offset is a pointer; another value is not. */
START_TEST(test_pointers) {
  Lance__Table__Manifest m = LANCE__TABLE__MANIFEST__INIT;
  m.has_transaction_section = 1, m.transaction_section = 7;
  ProtobufCMessageUnknownField v = varint_field(50);
  m.base.unknown_fields = &v, m.base.n_unknown_fields = 1;
  bri_error err = {0};
  expect(bri_foreign_check_pointers(&m, "/t/_versions/m.manifest", &err), &err,
         "Manifest field 50 (varint) is unknown to brid; its value is the transaction section's offset");
  m.transaction_section = 8;
  ck_assert_int_eq(bri_foreign_check_pointers(&m, "/t/_versions/m.manifest", &err), 0);
  m.has_index_section = 1, m.index_section = 7;
  expect(bri_foreign_check_pointers(&m, "/t/_versions/m.manifest", &err), &err, "the index section's offset");
}
END_TEST

/* Another writer's transaction with a top-level field brid does not know. */
START_TEST(test_winner_transaction) {
  Lance__Table__Transaction t = LANCE__TABLE__TRANSACTION__INIT;
  bri_error err = {0};
  ck_assert_int_eq(bri_foreign_check_txn(&t, "/t/_versions/m.manifest", &err), 0);
  ProtobufCMessageUnknownField v = varint_field(5);
  t.base.unknown_fields = &v, t.base.n_unknown_fields = 1;
  expect(bri_foreign_check_txn(&t, "/t/_versions/m.manifest", &err), &err,
         "Transaction field 5 (varint) is unknown to brid; brid cannot tell what that transaction changed");
}
END_TEST

/* The fragment reuse index: an unknown field in its inline content (where
 * Lance keeps tagged transitions) is refused; another index is not judged. */
START_TEST(test_fragment_reuse_index) {
  Lance__Table__FragmentReuseIndexDetails d;
  lance__table__fragment_reuse_index_details__init(&d);
  Lance__Table__FragmentReuseIndexDetails__InlineContent in =
      LANCE__TABLE__FRAGMENT_REUSE_INDEX_DETAILS__INLINE_CONTENT__INIT;
  ProtobufCMessageUnknownField tr = ld_field(2);
  in.base.unknown_fields = &tr, in.base.n_unknown_fields = 1;
  d.content_case = LANCE__TABLE__FRAGMENT_REUSE_INDEX_DETAILS__CONTENT_INLINE, d.inline_ = &in;
  uint8_t buf[64];
  size_t n = lance__table__fragment_reuse_index_details__pack(&d, buf);
  Google__Protobuf__Any any = GOOGLE__PROTOBUF__ANY__INIT;
  any.value.data = buf, any.value.len = n;
  Lance__Table__IndexMetadata x = LANCE__TABLE__INDEX_METADATA__INIT, y = LANCE__TABLE__INDEX_METADATA__INIT;
  Lance__Table__IndexMetadata *xs[] = {&y, &x};
  Lance__Table__IndexSection idx = LANCE__TABLE__INDEX_SECTION__INIT;
  idx.indices = xs, idx.n_indices = 2;
  y.name = "id_idx";
  ProtobufCMessageUnknownField v = varint_field(40);
  y.base.unknown_fields = &v, y.base.n_unknown_fields = 1;
  x.name = "__lance_frag_reuse", x.index_details = &any;
  bri_error err = {0};
  expect(bri_foreign_check_fri(&idx, "/t/_versions/m.manifest", &err), &err,
         "index __lance_frag_reuse: InlineContent field 2 (length-delimited) is unknown to brid");
  in.base.n_unknown_fields = 0;
  n = lance__table__fragment_reuse_index_details__pack(&d, buf);
  any.value.len = n;
  ck_assert_int_eq(bri_foreign_check_fri(&idx, "/t/_versions/m.manifest", &err), 0);
}
END_TEST

static Suite *foreign_suite(void) {
  Suite *s = suite_create("foreign");
  TCase *tc = tcase_create("foreign");
  tcase_add_test(tc, test_removed_fragment);
  tcase_add_test(tc, test_files_named);
  tcase_add_test(tc, test_pointers);
  tcase_add_test(tc, test_winner_transaction);
  tcase_add_test(tc, test_fragment_reuse_index);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(foreign_suite)
