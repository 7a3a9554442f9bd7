/* test_conflict.c: Lance's conflict rules (lib/lance/table/conflict.h), one
 * case per operation pair. Ours is a Rewrite (a compaction of fragments 1
 * and 2, with and without carrying deletions) or a DataReplacement (the file
 * of fields 0 and 1 of fragment 1); theirs is every operation Lance 12 can
 * commit, touching our fragments or not. Each verdict is checked against
 * Lance's resolver (check_rewrite_txn, check_data_replacement_txn), and a
 * conflict's message names the version, the operation and the fragment. */
#include <roaring/roaring.h>
#include <stdlib.h>
#include <string.h>

#include "lance/table/conflict.h"
#include "testutil.h"

enum { OK = 0, CARRY = BRI_CONFLICT_CARRY, NO = BRI_ECONFLICT };

/* The read version: fragments 1, 2, 3 with one data file each. */
static Lance__Table__DataFile files[4], *filep[4];
static Lance__Table__DataFragment frags[4], *fragp[4];
static Lance__Table__Manifest read_m;
static int32_t fields01[] = {0, 1}, fields2[] = {2}, cols[] = {0, 1};

/* Ours. */
static Lance__Table__Transaction rewrite_txn, replace_txn;
static Lance__Table__Transaction__Rewrite rw;
static Lance__Table__Transaction__Rewrite__RewriteGroup group, *groupp = &group;
static Lance__Table__DataFragment *olds[2];
static Lance__Table__Transaction__DataReplacement dr;
static Lance__Table__Transaction__DataReplacementGroup drg, *drgp = &drg;
static Lance__Table__DataFile new_file;

static void setup(void) {
  static const char *paths[] = {"f0.lance", "f1.lance", "f2.lance", "f3.lance"};
  lance__table__manifest__init(&read_m);
  for (int i = 1; i <= 3; i++) {
    lance__table__data_file__init(&files[i]);
    files[i].path = (char *)paths[i];
    files[i].fields = fields01, files[i].n_fields = 2;
    files[i].column_indices = cols, files[i].n_column_indices = 2;
    filep[i] = &files[i];
    lance__table__data_fragment__init(&frags[i]);
    frags[i].id = (uint64_t)i, frags[i].physical_rows = 10;
    frags[i].files = &filep[i], frags[i].n_files = 1;
    fragp[i - 1] = &frags[i];
  }
  read_m.fragments = fragp, read_m.n_fragments = 3, read_m.version = 7;
  lance__table__transaction__init(&rewrite_txn);
  lance__table__transaction__rewrite__init(&rw);
  lance__table__transaction__rewrite__rewrite_group__init(&group);
  olds[0] = &frags[1], olds[1] = &frags[2];
  group.old_fragments = olds, group.n_old_fragments = 2;
  rw.groups = &groupp, rw.n_groups = 1;
  rewrite_txn.operation_case = LANCE__TABLE__TRANSACTION__OPERATION_REWRITE, rewrite_txn.rewrite = &rw;
  lance__table__transaction__init(&replace_txn);
  lance__table__transaction__data_replacement__init(&dr);
  lance__table__transaction__data_replacement_group__init(&drg);
  lance__table__data_file__init(&new_file);
  new_file.path = "m1.lance", new_file.fields = fields01, new_file.n_fields = 2;
  drg.fragment_id = 1, drg.new_file = &new_file;
  dr.replacements = &drgp, dr.n_replacements = 1;
  replace_txn.operation_case = LANCE__TABLE__TRANSACTION__OPERATION_DATA_REPLACEMENT;
  replace_txn.data_replacement = &dr;
}

/* Checks theirs against the three ours: a Rewrite without carrying, with
 * carrying, a DataReplacement. A conflict's message contains msg (the
 * rewrite's) or msg2 (the replacement's; NULL: msg) when set. */
static void expect2(const Lance__Table__Transaction *theirs, int rewrite, int rewrite_carry, int replace,
                    const char *msg, const char *msg2) {
  const struct {
    const Lance__Table__Transaction *ours;
    unsigned flags;
    int want;
    const char *name;
  } cases[] = {{&rewrite_txn, 0, rewrite, "rewrite"},
               {&rewrite_txn, BRI_CONFLICT_CARRY_DELETIONS, rewrite_carry, "rewrite+carry"},
               {&replace_txn, BRI_CONFLICT_CARRY_DELETIONS, replace, "replacement"}};
  for (size_t i = 0; i < 3; i++) {
    bri_error err = {0, ""};
    int got = bri_conflict_check(cases[i].ours, &read_m, cases[i].flags, theirs, 9, &err);
    ck_assert_msg(got == cases[i].want, "operation %d vs %s: %d, expected %d (%s)", (int)theirs->operation_case,
                  cases[i].name, got, cases[i].want, err.msg);
    if (got == NO) {
      ck_assert_msg(strncmp(err.msg, "version 9: ", 11) == 0, "%s", err.msg);
      const char *want = i == 2 && msg2 ? msg2 : msg;
      if (want && i != 1) ck_assert_msg(strstr(err.msg, want) != NULL, "\"%s\" not in \"%s\"", want, err.msg);
    }
  }
}

static void expect(const Lance__Table__Transaction *theirs, int rewrite, int rewrite_carry, int replace,
                   const char *msg) {
  expect2(theirs, rewrite, rewrite_carry, replace, msg, NULL);
}

static Lance__Table__Transaction op(int kind, void *body) {
  Lance__Table__Transaction t;
  lance__table__transaction__init(&t);
  t.operation_case = kind;
  t.append = body; /* the oneof's members share one pointer */
  return t;
}

START_TEST(test_compatible_with_both) {
  /* operations that leave existing fragments alone (their content is not read) */
  static const int kinds[] = {LANCE__TABLE__TRANSACTION__OPERATION_APPEND,
                              LANCE__TABLE__TRANSACTION__OPERATION_RESERVE_FRAGMENTS,
                              LANCE__TABLE__TRANSACTION__OPERATION_UPDATE_CONFIG,
                              LANCE__TABLE__TRANSACTION__OPERATION_CLONE,
                              LANCE__TABLE__TRANSACTION__OPERATION_UPDATE_BASES};
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
    Lance__Table__Transaction t = op(kinds[i], NULL);
    expect(&t, OK, OK, OK, NULL);
  }
}
END_TEST

START_TEST(test_always_conflicting) {
  Lance__Table__Transaction__Overwrite ow = LANCE__TABLE__TRANSACTION__OVERWRITE__INIT;
  Lance__Table__Transaction t = op(LANCE__TABLE__TRANSACTION__OPERATION_OVERWRITE, &ow);
  expect(&t, NO, NO, NO, "an overwrite was committed meanwhile");
  Lance__Table__Transaction__Restore rs = LANCE__TABLE__TRANSACTION__RESTORE__INIT;
  t = op(LANCE__TABLE__TRANSACTION__OPERATION_RESTORE, &rs);
  expect(&t, NO, NO, NO, "a restore");
  Lance__Table__Transaction__Merge mg = LANCE__TABLE__TRANSACTION__MERGE__INIT;
  t = op(LANCE__TABLE__TRANSACTION__OPERATION_MERGE, &mg);
  expect(&t, NO, NO, NO, "a merge (schema change)");
  /* a DataOverlay, or anything newer: brid's proto does not know it */
  t = op(LANCE__TABLE__TRANSACTION__OPERATION__NOT_SET, NULL);
  expect(&t, NO, NO, NO, "an operation brid does not know");
}
END_TEST

/* The one pair where the two answers differ, as in Lance. */
START_TEST(test_mem_wal_state) {
  Lance__Table__Transaction__UpdateMemWalState mw = LANCE__TABLE__TRANSACTION__UPDATE_MEM_WAL_STATE__INIT;
  Lance__Table__Transaction t = op(LANCE__TABLE__TRANSACTION__OPERATION_UPDATE_MEM_WAL_STATE, &mw);
  expect(&t, OK, OK, NO, "a MemWAL state update");
}
END_TEST

START_TEST(test_project) {
  Lance__File__Field f0 = LANCE__FILE__FIELD__INIT, f1 = LANCE__FILE__FIELD__INIT;
  f0.id = 0, f1.id = 1;
  Lance__File__Field *both[] = {&f0, &f1}, *only0[] = {&f0};
  Lance__Table__Transaction__Project pj = LANCE__TABLE__TRANSACTION__PROJECT__INIT;
  pj.schema = both, pj.n_schema = 2;
  Lance__Table__Transaction t = op(LANCE__TABLE__TRANSACTION__OPERATION_PROJECT, &pj);
  /* without preserves_nullability it may tighten a field a value-writer fills */
  expect(&t, OK, OK, NO, "a projection that may change nullability");
  pj.has_preserves_nullability = 1, pj.preserves_nullability = 1;
  expect(&t, OK, OK, OK, NULL);
  pj.schema = only0, pj.n_schema = 1; /* dropped field 1, which ours replaces */
  expect(&t, OK, OK, NO, "a projection that dropped a replaced field touched fragment 1");
}
END_TEST

START_TEST(test_delete) {
  Lance__Table__DataFragment upd;
  Lance__Table__DeletionFile del = LANCE__TABLE__DELETION_FILE__INIT;
  Lance__Table__Transaction__Delete d = LANCE__TABLE__TRANSACTION__DELETE__INIT;
  Lance__Table__DataFragment *updp[] = {&upd};
  Lance__Table__Transaction t = op(LANCE__TABLE__TRANSACTION__OPERATION_DELETE, &d);
  /* fragment 3: not ours */
  upd = frags[3], upd.deletion_file = &del;
  d.updated_fragments = updp, d.n_updated_fragments = 1;
  expect(&t, OK, OK, OK, NULL);
  /* fragment 2 got a deletion file: Lance gives way; brid can carry it */
  upd = frags[2], upd.deletion_file = &del;
  expect(&t, NO, CARRY, OK, "a delete touched fragment 2, which this compaction rewrites");
  /* ... unless its data files are not the ones we read */
  static Lance__Table__DataFile other;
  other = files[2], other.path = "x.lance";
  Lance__Table__DataFile *otherp = &other;
  upd.files = &otherp;
  expect(&t, NO, NO, OK, "a delete");
  bri_error err;
  ck_assert_int_eq(bri_conflict_check(&rewrite_txn, &read_m, BRI_CONFLICT_CARRY_DELETIONS, &t, 9, &err), NO);
  ck_assert_str_eq(err.msg, "version 9: a delete that changed data files touched fragment 2, which this compaction rewrites");
  /* fragment 1 removed whole (every row deleted): carried; the replacement's target is gone */
  uint64_t gone[] = {1};
  d.n_updated_fragments = 0;
  d.deleted_fragment_ids = gone, d.n_deleted_fragment_ids = 1;
  expect2(&t, NO, CARRY, NO, "a delete touched fragment 1, which this compaction rewrites",
          "a delete that removed a whole fragment touched fragment 1, whose data file is being materialized");
}
END_TEST

START_TEST(test_update) {
  Lance__Table__DataFragment upd, moved;
  lance__table__data_fragment__init(&moved);
  Lance__Table__DeletionFile del = LANCE__TABLE__DELETION_FILE__INIT;
  Lance__Table__Transaction__Update u = LANCE__TABLE__TRANSACTION__UPDATE__INIT;
  Lance__Table__DataFragment *updp[] = {&upd}, *newp[] = {&moved};
  Lance__Table__Transaction t = op(LANCE__TABLE__TRANSACTION__OPERATION_UPDATE, &u);
  /* LanceDB's update(): RewriteRows, rows moved to a new fragment */
  upd = frags[3], upd.deletion_file = &del;
  u.updated_fragments = updp, u.n_updated_fragments = 1;
  u.new_fragments = newp, u.n_new_fragments = 1;
  expect(&t, OK, OK, OK, NULL); /* fragment 3 is nobody's */
  upd = frags[1], upd.deletion_file = &del;
  expect(&t, NO, CARRY, NO, "an update touched fragment 1");
  /* the same without moved rows and without our fields: the replacement stays valid */
  u.n_new_fragments = 0;
  expect(&t, NO, CARRY, OK, "an update touched fragment 1");
  uint32_t modified[] = {1};
  u.fields_modified = modified, u.n_fields_modified = 1;
  expect2(&t, NO, CARRY, NO, "an update touched fragment 1, which this compaction rewrites",
          "an update touched fragment 1, whose data file is being materialized");
  /* RewriteColumns: data rewritten in place, nothing to carry */
  u.has_update_mode = 1, u.update_mode = LANCE__TABLE__TRANSACTION__UPDATE__UPDATE_MODE__REWRITE_COLUMNS;
  u.n_fields_modified = 0;
  expect(&t, NO, NO, OK, "an update");
  bri_error err;
  ck_assert_int_eq(bri_conflict_check(&rewrite_txn, &read_m, BRI_CONFLICT_CARRY_DELETIONS, &t, 9, &err), NO);
  ck_assert_msg(strstr(err.msg, "an update that rewrote columns in place touched fragment 1"), "%s", err.msg);
  /* a fragment whose rows all moved */
  uint64_t removed[] = {2};
  u.has_update_mode = 0, u.n_updated_fragments = 0;
  u.removed_fragment_ids = removed, u.n_removed_fragment_ids = 1;
  expect(&t, NO, CARRY, OK, "an update touched fragment 2");
  removed[0] = 1;
  expect2(&t, NO, CARRY, NO, "an update touched fragment 1", "an update that removed a whole fragment touched fragment 1");
}
END_TEST

START_TEST(test_rewrite) {
  Lance__Table__DataFragment *theirs_old[] = {&frags[3]};
  Lance__Table__Transaction__Rewrite__RewriteGroup g = LANCE__TABLE__TRANSACTION__REWRITE__REWRITE_GROUP__INIT, *gp = &g;
  Lance__Table__Transaction__Rewrite r = LANCE__TABLE__TRANSACTION__REWRITE__INIT;
  g.old_fragments = theirs_old, g.n_old_fragments = 1;
  r.groups = &gp, r.n_groups = 1;
  Lance__Table__Transaction t = op(LANCE__TABLE__TRANSACTION__OPERATION_REWRITE, &r);
  expect(&t, OK, OK, OK, NULL);
  theirs_old[0] = &frags[1];
  expect2(&t, NO, NO, NO, "another compaction touched fragment 1", "a compaction touched fragment 1");
  /* the deprecated single group counts too */
  r.n_groups = 0, r.old_fragments = theirs_old, r.n_old_fragments = 1;
  expect2(&t, NO, NO, NO, "another compaction touched fragment 1", "a compaction touched fragment 1");
}
END_TEST

START_TEST(test_data_replacement) {
  Lance__Table__DataFile f = LANCE__TABLE__DATA_FILE__INIT;
  Lance__Table__Transaction__DataReplacementGroup g = LANCE__TABLE__TRANSACTION__DATA_REPLACEMENT_GROUP__INIT, *gp = &g;
  Lance__Table__Transaction__DataReplacement d = LANCE__TABLE__TRANSACTION__DATA_REPLACEMENT__INIT;
  g.fragment_id = 3, g.new_file = &f;
  f.fields = fields01, f.n_fields = 2;
  d.replacements = &gp, d.n_replacements = 1;
  Lance__Table__Transaction t = op(LANCE__TABLE__TRANSACTION__OPERATION_DATA_REPLACEMENT, &d);
  expect(&t, OK, OK, OK, NULL);
  g.fragment_id = 2;
  expect(&t, NO, NO, OK, "a data replacement touched fragment 2");
  g.fragment_id = 1, f.fields = fields2, f.n_fields = 1; /* same fragment, other field */
  expect(&t, NO, NO, OK, NULL);
  f.fields = fields01 + 1; /* field 1: ours too */
  expect2(&t, NO, NO, NO, "a data replacement touched fragment 1", "another data replacement touched fragment 1");
}
END_TEST

static void set_bitmap(Lance__Table__IndexMetadata *x, uint32_t id, uint8_t *buf, size_t cap) {
  roaring_bitmap_t *b = roaring_bitmap_of(1, id);
  size_t len = roaring_bitmap_portable_size_in_bytes(b);
  ck_assert_uint_le(len, cap);
  roaring_bitmap_portable_serialize(b, (char *)buf);
  roaring_bitmap_free(b);
  x->fragment_bitmap.data = buf, x->fragment_bitmap.len = len, x->has_fragment_bitmap = 1;
}

START_TEST(test_create_index) {
  uint8_t buf[64];
  Lance__Table__IndexMetadata x = LANCE__TABLE__INDEX_METADATA__INIT, *xp = &x;
  Lance__Table__Transaction__CreateIndex ci = LANCE__TABLE__TRANSACTION__CREATE_INDEX__INIT;
  ci.new_indices = &xp, ci.n_new_indices = 1;
  Lance__Table__Transaction t = op(LANCE__TABLE__TRANSACTION__OPERATION_CREATE_INDEX, &ci);
  x.fields = fields2, x.n_fields = 1;
  set_bitmap(&x, 3, buf, sizeof buf);
  expect(&t, OK, OK, OK, NULL);
  /* covers fragment 2: our rewrite would have to remap it */
  set_bitmap(&x, 2, buf, sizeof buf);
  expect(&t, NO, NO, OK, "an index creation touched fragment 2");
  /* a hostile bitmap (an array {3, 2}: not sorted) is an error naming the
   * transaction, not a conflict to retry */
  static uint8_t unsorted[] = {0x3a, 0x30, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 16, 0, 0, 0, 3, 0, 2, 0};
  x.fragment_bitmap.data = unsorted, x.fragment_bitmap.len = sizeof unsorted;
  x.name = "idx";
  bri_error err;
  ck_assert_int_eq(bri_conflict_check(&rewrite_txn, &read_m, 0, &t, 9, &err), BRI_ECORRUPT);
  ck_assert_msg(strstr(err.msg, "the transaction of version 9: index idx: fragment_bitmap: offset 18: "
                                "Roaring array container 0 is not strictly increasing (2 after 3)"),
                "%s", err.msg);
  x.has_fragment_bitmap = 0;
  expect(&t, NO, NO, OK, "an index creation without a fragment bitmap");
  /* indexes field 0, which our replacement rewrites */
  x.fields = fields01, x.n_fields = 1;
  set_bitmap(&x, 3, buf, sizeof buf);
  expect(&t, OK, OK, NO, "an index creation on a replaced field touched fragment 1");
}
END_TEST

START_TEST(test_not_ours_to_check) {
  Lance__Table__Transaction__Append app = LANCE__TABLE__TRANSACTION__APPEND__INIT;
  Lance__Table__Transaction ours = op(LANCE__TABLE__TRANSACTION__OPERATION_APPEND, &app);
  bri_error err;
  ck_assert_int_eq(bri_conflict_check(&ours, &read_m, 0, &ours, 9, &err), BRI_EINVAL);
}
END_TEST

static Suite *conflict_suite(void) {
  Suite *s = suite_create("conflict");
  TCase *tc = tcase_create("conflict");
  tcase_add_checked_fixture(tc, setup, NULL);
  tcase_add_test(tc, test_compatible_with_both);
  tcase_add_test(tc, test_always_conflicting);
  tcase_add_test(tc, test_mem_wal_state);
  tcase_add_test(tc, test_project);
  tcase_add_test(tc, test_delete);
  tcase_add_test(tc, test_update);
  tcase_add_test(tc, test_rewrite);
  tcase_add_test(tc, test_data_replacement);
  tcase_add_test(tc, test_create_index);
  tcase_add_test(tc, test_not_ours_to_check);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(conflict_suite)
