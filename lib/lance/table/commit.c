/* commit.c: put-if-absent commits of new versions (see commit.h). The
 * order of operations is what makes a crash safe: the transaction file is
 * durable before the manifest, and the manifest's bytes are durable before
 * its version name is taken (storage/store.h), so a crash leaves either no
 * new version (and files cleanup can reclaim) or a complete, durable one. */
#include "lance/table/commit.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lance/table/bri.h"
#include "lance/table/flags.h"
#include "lance/table/rules.h"
#include "util/failpoint.h"
#include "util/fsutil.h"
#include "util/random.h"

void bri_manifest_assign_fragment_ids(Lance__Table__Manifest *m,
                                      Lance__Table__DataFragment *const *new_frags, size_t n) {
  uint64_t max = m->has_max_fragment_id ? m->max_fragment_id : 0;
  int any = m->has_max_fragment_id;
  for (size_t i = 0; i < m->n_fragments; i++)
    if (m->fragments[i]->id > max || !any) {
      max = m->fragments[i]->id > max ? m->fragments[i]->id : max;
      any = 1;
    }
  for (size_t i = 0; i < n; i++) {
    if (new_frags[i]->id != 0) continue;
    new_frags[i]->id = any ? max + 1 : 0;
    new_frags[i]->has_id = 1;
    max = new_frags[i]->id;
    any = 1;
  }
  for (size_t i = 0; i < n; i++)
    if (new_frags[i]->id > max) max = new_frags[i]->id;
  if (any) {
    m->has_max_fragment_id = 1;
    m->max_fragment_id = (uint32_t)max;
  }
}

void bri_manifest_derive_flags(Lance__Table__Manifest *m) {
  uint64_t f = 0, w = 0;
  for (size_t i = 0; i < m->n_fragments; i++) {
    if (m->fragments[i]->deletion_file) f |= BRI_FLAG_DELETION_FILES;
    if (m->fragments[i]->row_id_sequence_case !=
        LANCE__TABLE__DATA_FRAGMENT__ROW_ID_SEQUENCE__NOT_SET)
      f |= BRI_FLAG_STABLE_ROW_IDS;
  }
  /* stable row ids are a table property: keep the bit even with no fragments */
  f |= m->reader_feature_flags & BRI_FLAG_STABLE_ROW_IDS;
  /* sticky bits stay set on every later version (flags.h); a paired one is
   * set in both words, and the manifest read had it in both or neither */
  f |= m->reader_feature_flags & m->writer_feature_flags & BRI_FLAGS_STICKY_READER;
  w |= m->writer_feature_flags & BRI_FLAGS_STICKY_WRITER;
  if (m->n_base_paths) f |= BRI_FLAG_BASE_PATHS;
  if (bri_manifest_blobs_managed(m)) f |= BRI_FLAG_MANAGED_BLOBS; /* the opt-in, in both words */
  if (bri_manifest_has_bri(m)) f |= BRI_FLAG_BLOB_REUSE_INDEX;
  w |= f | (m->writer_feature_flags & BRI_FLAG_DISABLE_TRANSACTION_FILE);
  if (m->n_config) w |= BRI_FLAG_TABLE_CONFIG;
  if (m->has_max_allocated_field_id) w |= BRI_FLAG_NON_REUSABLE_FIELD_IDS; /* goes with field 24 */
  m->reader_feature_flags = f;
  m->writer_feature_flags = w;
  m->has_reader_feature_flags = m->has_writer_feature_flags = 1;
}

/* Replaces _versions/latest_version_hint.json with {"version":v}, on an
 * object store, as Lance 14's write_version_hint does after each commit:
 * unconditionally, best effort. The hint is an optimisation for readers,
 * never the source of truth: they verify the version it names and probe
 * upward from there, so a hint that a slower writer lowered after a newer
 * commit costs a reader a probe, and reading the hint first (a GET a
 * commit) would not prevent that race anyway. A failure is not a commit
 * failure. Not on a local table: Lance does not read it there, and reads
 * and writes a table whose hint is stale, empty or garbled
 * (docs/format/table.md 3; tests/interop/test_hint.sh), so its replacement
 * (a file made, renamed over the old one, whose inode is freed) was a cost
 * for nobody. */
static void update_hint(bri_table *t, const char *vdir, uint64_t v) {
  if (bri_store_caps(t->store) & BRI_STORE_CAP_LOCAL) return;
  char *hint = bri_path_join(vdir, "latest_version_hint.json");
  char body[64];
  int n = snprintf(body, sizeof body, "{\"version\":%llu}", (unsigned long long)v);
  if (hint) (void)bri_store_put_volatile(t->store, hint, body, (size_t)n, NULL, NULL);
  free(hint);
}

int bri_commit(bri_table *t, Lance__Table__Manifest *m, Lance__Table__Transaction *txn,
               const Lance__Table__IndexSection *idx, uint64_t version, char **txn_path,
               bri_error *err) {
  if (txn_path) *txn_path = NULL;
  char uuid[37];
  if (!txn->uuid || !*txn->uuid) {
    bri_uuid_v4(uuid);
    if (txn->uuid && txn->uuid != protobuf_c_empty_string) free(txn->uuid);
    txn->uuid = strdup(uuid);
  }
  char *vdir = bri_path_join(t->root, "_versions");
  char *tdir = bri_path_join(t->root, "_transactions");
  char *txn_name = bri_strdupf("%llu-%s.txn", (unsigned long long)txn->read_version, txn->uuid);
  char *name = bri_version_file_name(version, t->naming);
  char *final = vdir && name ? bri_path_join(vdir, name) : NULL;
  char *tpath = NULL;
  uint8_t *buf = NULL, *tbuf = NULL;
  size_t len;
  int rc = 0;
  bool txn_written = false;
  if (!vdir || !tdir || !txn_name || !final) {
    rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    goto out;
  }
  /* stamp what every commit carries */
  m->version = version;
  m->has_version = 1;
  static Google__Protobuf__Timestamp ts_init = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
  if (!m->timestamp) {
    m->timestamp = malloc(sizeof *m->timestamp);
    if (!m->timestamp) {
      rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
      goto out;
    }
    *m->timestamp = ts_init;
  }
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  m->timestamp->seconds = now.tv_sec, m->timestamp->has_seconds = 1;
  m->timestamp->nanos = (int32_t)now.tv_nsec, m->timestamp->has_nanos = 1;
  if (!m->writer_version) {
    m->writer_version = calloc(1, sizeof *m->writer_version);
    if (!m->writer_version) {
      rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
      goto out;
    }
    lance__table__manifest__writer_version__init(m->writer_version);
  }
  Lance__Table__Manifest__WriterVersion *w = m->writer_version;
  if (w->library && w->library != protobuf_c_empty_string) free(w->library);
  if (w->version && w->version != protobuf_c_empty_string) free(w->version);
  if (w->prerelease && w->prerelease != protobuf_c_empty_string) free(w->prerelease);
  if (w->build_metadata && w->build_metadata != protobuf_c_empty_string) free(w->build_metadata);
  w->library = strdup(BRI_WRITER_LIBRARY);
  w->version = strdup(BRI_WRITER_VERSION);
  w->prerelease = w->build_metadata = NULL;
  bri_manifest_derive_flags(m);
  /* Lance's build_manifest sorts every commit's fragments by id; a manifest
   * that breaks one of Lance's invariants is never published (rules.h) */
  bri_manifest_sort_fragments(m);
  if (bri_rules_enforce(m, idx, txn, err) != 0) {
    rc = bri_error_wrap(err, "%s: refusing to commit version %llu", t->root, (unsigned long long)version);
    goto out;
  }

  /* 1. the transaction file (unless the table asked for inline-only) */
  if (!(m->writer_feature_flags & BRI_FLAG_DISABLE_TRANSACTION_FILE)) {
    size_t tlen = lance__table__transaction__get_packed_size(txn);
    tbuf = malloc(tlen ? tlen : 1);
    tpath = bri_path_join(tdir, txn_name);
    if (!tbuf || !tpath) {
      rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
      goto out;
    }
    lance__table__transaction__pack(txn, tbuf);
    rc = bri_store_mkdir(t->store, tdir, err);
    if (rc && rc != BRI_ETAKEN) goto out;
    /* Without an fsync: the manifest carries the same transaction (its
     * transaction section, written and synced with it), which is the copy
     * Lance 12 reads; the file is for readers that look for it, and after
     * a power loss it may be short or gone, as Lance's own are (Lance syncs
     * nothing). docs/format/table.md 4, tests/interop/test_txn_file.sh. */
    static const bri_store_steps txn_steps = {.written = "commit.txn_written"};
    if ((rc = bri_store_put_new_volatile(t->store, tpath, tbuf, tlen, &txn_steps, err)) != 0) goto out;
    txn_written = true;
    if ((rc = bri_failpoint("commit.after_txn_written", err)) != 0) goto out;
    if (txn_path) *txn_path = strdup(tpath);
    if (m->transaction_file && m->transaction_file != protobuf_c_empty_string) free(m->transaction_file);
    m->transaction_file = strdup(txn_name);
  }
  /* 2. the manifest, put-if-absent: another writer's version is never
   * overwritten (docs/format/table.md section 4) */
  if ((rc = bri_manifest_serialize(m, txn, idx, &buf, &len, err)) != 0) goto out;
  if (!t->n_versions && (rc = bri_store_mkdir(t->store, vdir, err)) != 0 && rc != BRI_ETAKEN)
    goto out; /* a new table's first version */
  rc = 0;
  static const bri_store_steps steps = {.written = "commit.before_manifest_fsync",
                                        .durable = "commit.after_manifest_fsync",
                                        .publish = "commit.before_link",
                                        .published = "commit.after_link"};
  bri_error warn = {0};
  rc = bri_store_put_new(t->store, final, buf, len, &steps, &warn);
  if (rc == BRI_ETAKEN) {
    rc = bri_error_set(err, BRI_ETAKEN, "%s: version %llu was committed by another writer first",
                       t->root, (unsigned long long)version);
    goto out;
  }
  if (rc) {
    if (err) *err = warn;
    goto out;
  }
  /* The version is published: from here on nothing may report a failure
   * that would make the caller remove files this version references. A
   * failed directory sync (or an injected error) is a warning left in err
   * with rc 0 (see commit.h). */
  if (warn.code)
    bri_error_set(err, warn.code, "%s: version %llu is committed, but it may not survive a power "
                  "loss: %s", t->root, (unsigned long long)version, warn.msg);
  update_hint(t, vdir, version);
  /* 3. the version list: ours added (listing again cost an object store a
   * LIST request a commit) */
  if (bri_table_note_version(t, version, NULL)) (void)bri_table_refresh(t, NULL);
out:
  /* a failed attempt leaves nothing: no manifest names these files */
  if (rc && txn_written) {
    bri_store_delete(t->store, tpath, NULL);
    if (txn_path) {
      free(*txn_path);
      *txn_path = NULL;
    }
  }
  free(vdir), free(tdir), free(txn_name), free(name), free(final), free(tpath);
  free(buf), free(tbuf);
  return rc;
}
