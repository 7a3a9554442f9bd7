/* test_optin.c: the switch of a table to Managed blobs (lib/compact/optin.c):
 * one UpdateConfig version that sets the schema metadata and the flag in
 * both words and changes no fragment; nothing when the table is Managed
 * already or has no Blob v2 field; a lost race built again on the winner;
 * a data storage version Lance 14 keeps no Managed blobs in refused before
 * anything is written. Then strategy managed as a compaction: the switch,
 * then every Packed and Dedicated value adopted, no payload byte written;
 * and auto under a declared min_reader of 14. */
#include <stdlib.h>
#include <string.h>

#include "compact/execute.h"
#include "compact/optin.h"
#include "gen/gen.h"
#include "lance/table/commit.h"
#include "lance/table/flags.h"
#include "testutil.h"
#include "util/fsutil.h"
#include "util/pbcheck.h"

static char *tmp, *root;

static void gen(const char *sizes) {
  bri_gen_options o;
  bri_gen_options_default(&o);
  o.fragments = 3, o.rows = 6;
  bri_gen_blob *b = NULL;
  bri_error err;
  if (sizes) ck_assert_msg(bri_gen_parse_blobs(sizes, &b, &o.n_blobs, &err) == 0, "%s", err.msg);
  o.blobs = b;
  bri_gen_report rep;
  ck_assert_msg(bri_gen_run(root, &o, &rep, &err) == 0, "%s", err.msg);
  free(b);
}

static void setup(void) {
  tmp = bri_tmpdir();
  root = bri_path_join(tmp, "t.lance");
}

static void teardown(void) {
  bri_rmtree(tmp);
  free(tmp), free(root);
}

static bool managed_meta(const Lance__Table__Manifest *m) {
  for (size_t i = 0; i < m->n_schema_metadata; i++)
    if (!strcmp(m->schema_metadata[i]->key, "lance.blob.managed"))
      return m->schema_metadata[i]->value.len == 4 && !memcmp(m->schema_metadata[i]->value.data, "true", 4);
  return false;
}

/* The switch, checked on disk: version v is an UpdateConfig on v - 1 with
 * the one schema metadata update, its manifest opts in with the flag in
 * both words, and its fragments are those of v - 1, byte for byte. */
static void check_switched(bri_table *t, uint64_t v) {
  bri_manifest *a, *b;
  bri_error err;
  ck_assert_int_eq(bri_table_load(t, v - 1, &a, &err), 0);
  ck_assert_int_eq(bri_table_load(t, v, &b, &err), 0);
  ck_assert(managed_meta(b->pb) && !managed_meta(a->pb));
  ck_assert(b->pb->reader_feature_flags & b->pb->writer_feature_flags & BRI_FLAG_MANAGED_BLOBS);
  ck_assert_uint_eq(b->pb->n_fragments, a->pb->n_fragments);
  for (size_t i = 0; i < a->pb->n_fragments; i++)
    ck_assert(bri_pb_equal(&a->pb->fragments[i]->base, &b->pb->fragments[i]->base));
  Lance__Table__Transaction *txn;
  ck_assert_int_eq(bri_table_load_transaction(t, v, &txn, &err), 0);
  ck_assert_int_eq(txn->operation_case, LANCE__TABLE__TRANSACTION__OPERATION_UPDATE_CONFIG);
  ck_assert_uint_eq(txn->read_version, v - 1);
  const Lance__Table__Transaction__UpdateMap *u = txn->update_config->schema_metadata_updates;
  ck_assert_ptr_nonnull(u);
  ck_assert(!txn->update_config->config_updates && !txn->update_config->table_metadata_updates);
  ck_assert_uint_eq(u->n_update_entries, 1);
  ck_assert(!u->replace);
  ck_assert_str_eq(u->update_entries[0]->key, "lance.blob.managed");
  ck_assert_str_eq(u->update_entries[0]->value, "true");
  lance__table__transaction__free_unpacked(txn, NULL);
  bri_manifest_free(a), bri_manifest_free(b);
}

START_TEST(switches_in_one_version) {
  gen("100,70K,5M");
  bri_table *t;
  bri_manifest *m;
  bri_error err;
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  ck_assert_int_eq(bri_table_load(t, 0, &m, &err), 0);
  ck_assert(bri_managed_optin_applies(m->pb));
  uint64_t v;
  ck_assert_msg(bri_managed_optin(t, &m, NULL, 0, &v, &err) == 0, "%s", err.msg);
  ck_assert_uint_eq(v, 4);
  ck_assert_uint_eq(m->pb->version, 4); /* the caller's manifest is the switched version */
  check_switched(t, 4);
  /* again: nothing to do */
  ck_assert(!bri_managed_optin_applies(m->pb));
  ck_assert_int_eq(bri_managed_optin(t, &m, NULL, 0, &v, &err), 0);
  ck_assert_uint_eq(v, 0);
  ck_assert_int_eq(bri_table_refresh(t, &err), 0);
  ck_assert_uint_eq(bri_table_latest_version(t), 4);
  bri_manifest_free(m);
  bri_table_close(t);
}
END_TEST

START_TEST(no_blob_field_no_switch) {
  gen(NULL);
  bri_table *t;
  bri_manifest *m;
  bri_error err;
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  ck_assert_int_eq(bri_table_load(t, 0, &m, &err), 0);
  ck_assert(!bri_managed_optin_applies(m->pb));
  uint64_t v = 9;
  ck_assert_int_eq(bri_managed_optin(t, &m, NULL, 0, &v, &err), 0);
  ck_assert_uint_eq(v, 0);
  ck_assert_int_eq(bri_table_refresh(t, &err), 0);
  ck_assert_uint_eq(bri_table_latest_version(t), 3);
  bri_manifest_free(m);
  bri_table_close(t);
}
END_TEST

/* Another writer commits right before the switch's first attempt. */
static int races;
static int other_writer(void *user, bri_error *err) {
  bri_table *t = user;
  if (races++) return 0;
  bri_table *w;
  int rc = bri_table_open(bri_store_uri(t->store), &w, err);
  if (!rc) rc = bri_commit_reserve(w, bri_table_latest_version(w) + 1, err);
  bri_table_close(w);
  return rc;
}

START_TEST(lost_race_switches_on_the_winner) {
  gen("70K");
  bri_table *t;
  bri_manifest *m;
  bri_error err;
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  ck_assert_int_eq(bri_table_load(t, 0, &m, &err), 0);
  bri_hooks h = {.confirm = other_writer, .user = t};
  races = 0;
  uint64_t v;
  ck_assert_msg(bri_managed_optin(t, &m, &h, 0, &v, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(races, 2);
  ck_assert_uint_eq(v, 5); /* 4 is the other writer's */
  check_switched(t, 5);
  bri_manifest_free(m);
  bri_table_close(t);
}
END_TEST

START_TEST(refuses_other_storage_versions) {
  gen("70K");
  char *before = bri_tree_listing(root);
  bri_table *t;
  bri_manifest *m;
  bri_error err;
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  ck_assert_int_eq(bri_table_load(t, 0, &m, &err), 0);
  char *was = m->pb->data_format->version;
  m->pb->data_format->version = "2.1";
  uint64_t v;
  ck_assert_int_eq(bri_managed_optin(t, &m, NULL, 0, &v, &err), BRI_EUNSUPPORTED);
  ck_assert_msg(strstr(err.msg, root) && strstr(err.msg, "2.1") && strstr(err.msg, "Managed"), "%s", err.msg);
  m->pb->data_format->version = was;
  char *after = bri_tree_listing(root);
  ck_assert_str_eq(before, after);
  free(before), free(after);
  bri_manifest_free(m);
  bri_table_close(t);
}
END_TEST

/* compact --strategy managed: the switch, then one Rewrite on it that
 * adopts every Packed and Dedicated value in place; a dry run only says
 * it would switch. */
START_TEST(strategy_managed_switches_and_adopts) {
  gen("0,100,70K,200K,5M");
  bri_compact_request q;
  bri_compact_request_default(&q);
  q.strategy = BRI_STRATEGY_MANAGED, q.dry_run = true;
  bri_compact_report rep;
  bri_error err;
  ck_assert_msg(bri_compact_table(root, &q, NULL, &rep, &err) == 0, "%s", err.msg);
  ck_assert(rep.managed_switch);
  ck_assert_uint_eq(rep.managed_switch_version, 0);
  ck_assert_uint_eq(rep.version, 0);
  json_decref(rep.plan);
  q.dry_run = false;
  ck_assert_msg(bri_compact_table(root, &q, NULL, &rep, &err) == 0, "%s", err.msg);
  json_decref(rep.plan);
  ck_assert(rep.managed_switch);
  ck_assert_uint_eq(rep.managed_switch_version, 4);
  ck_assert_uint_eq(rep.read_version, 4);
  ck_assert_uint_eq(rep.version, 5);
  ck_assert_int_eq(rep.strategy, BRI_STRATEGY_MANAGED);
  ck_assert_uint_eq(rep.payload_bytes_copied, 0);
  ck_assert_uint_eq(rep.managed_adopted, 10); /* the 70K, 200K and 5M values of 18 rows */
  bri_table *t;
  ck_assert_int_eq(bri_table_open(root, &t, &err), 0);
  check_switched(t, 4);
  bri_table_close(t);
  /* a Managed table: managed again switches nothing */
  ck_assert_msg(bri_compact_table(root, &q, NULL, &rep, &err) == 0, "%s", err.msg);
  json_decref(rep.plan);
  ck_assert(!rep.managed_switch);
  ck_assert_uint_eq(rep.version, 0);
}
END_TEST

/* The operator's declaration: min_reader 14 makes auto switch a plain Blob
 * v2 table; 13 leaves auto as it is (link locally, no switch). */
START_TEST(min_reader_14_makes_auto_managed) {
  gen("70K,5M");
  bri_compact_request q;
  bri_compact_request_default(&q);
  q.min_reader = 13;
  q.dry_run = true;
  bri_compact_report rep;
  bri_error err;
  ck_assert_msg(bri_compact_table(root, &q, NULL, &rep, &err) == 0, "%s", err.msg);
  json_decref(rep.plan);
  ck_assert(!rep.managed_switch);
  ck_assert_int_eq(rep.strategy, BRI_STRATEGY_AUTO);
  q.min_reader = 14, q.dry_run = false;
  ck_assert_msg(bri_compact_table(root, &q, NULL, &rep, &err) == 0, "%s", err.msg);
  json_decref(rep.plan);
  ck_assert_int_eq(rep.strategy, BRI_STRATEGY_MANAGED);
  ck_assert_uint_eq(rep.managed_switch_version, 4);
  ck_assert_uint_eq(rep.payload_bytes_copied, 0);
  ck_assert_uint_eq(rep.links, 0);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("optin");
  TCase *tc = tcase_create("optin");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, switches_in_one_version);
  tcase_add_test(tc, no_blob_field_no_switch);
  tcase_add_test(tc, lost_race_switches_on_the_winner);
  tcase_add_test(tc, refuses_other_storage_versions);
  tcase_add_test(tc, strategy_managed_switches_and_adopts);
  tcase_add_test(tc, min_reader_14_makes_auto_managed);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(suite)
