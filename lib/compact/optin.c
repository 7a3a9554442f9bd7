/* optin.c: the commit that switches a table to Managed blobs (see
 * optin.h). Each attempt works on a copy of the latest manifest, so that a
 * failed one leaves the caller's manifest as it was; a lost race is not
 * rebased but built again on the version that won, which is what Lance's
 * resolver asks of an UpdateConfig that changes schema metadata over a
 * schema change, and harmless over anything else (the switch changes no
 * fragment). */
#include "compact/optin.h"

#include <stdlib.h>
#include <string.h>

#include "lance/core/schema.h"
#include "lance/table/commit.h"
#include "util/pbcheck.h"

bool bri_managed_optin_applies(const Lance__Table__Manifest *m) {
  if (bri_manifest_blobs_managed(m)) return false;
  for (size_t i = 0; i < m->n_fields; i++)
    if (bri_field_is_blob_v2(m->fields[i])) return true;
  return false;
}

int bri_managed_optin_check(const char *where, const bri_manifest *m, bri_error *err) {
  if (!bri_managed_optin_applies(m->pb)) return 0;
  const char *v = m->pb->data_format && m->pb->data_format->version ? m->pb->data_format->version : "?";
  /* Lance 14 preserves Managed descriptors only when it writes 2.2 or 2.3
   * (optimize.rs); brid writes 2.1 and 2.2 and refuses 2.3 */
  if (strcmp(v, "2.2"))
    return bri_error_set(err, BRI_EUNSUPPORTED, "%s: cannot switch to Managed blobs: the table's data "
                         "storage version is %s, and Lance 14 keeps Managed blobs only in files of 2.2 "
                         "(brid writes 2.2 and reads 2.1 and 2.2)", where, v);
  return 0;
}

/* Sets schema metadata key to value in m (a copy the caller owns). */
static int set_schema_meta(Lance__Table__Manifest *m, const char *key, const char *value, bri_error *err) {
  size_t len = strlen(value);
  uint8_t *bytes = malloc(len ? len : 1);
  if (!bytes) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  memcpy(bytes, value, len);
  for (size_t i = 0; i < m->n_schema_metadata; i++) {
    Lance__Table__Manifest__SchemaMetadataEntry *e = m->schema_metadata[i];
    if (e->key && !strcmp(e->key, key)) {
      free(e->value.data);
      e->has_value = 1, e->value.data = bytes, e->value.len = len;
      return 0;
    }
  }
  Lance__Table__Manifest__SchemaMetadataEntry **g =
      realloc(m->schema_metadata, (m->n_schema_metadata + 1) * sizeof *g);
  Lance__Table__Manifest__SchemaMetadataEntry *e = g ? malloc(sizeof *e) : NULL;
  if (g) m->schema_metadata = g;
  if (e) lance__table__manifest__schema_metadata_entry__init(e);
  if (!e || !(e->key = strdup(key))) {
    free(e), free(bytes);
    return bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  e->has_value = 1, e->value.data = bytes, e->value.len = len;
  m->schema_metadata[m->n_schema_metadata++] = e;
  return 0;
}

/* One attempt: the switch as version m + 1 (BRI_ETAKEN: another writer
 * took it first). */
static int commit_once(bri_table *t, const bri_manifest *m, bri_error *err) {
  Lance__Table__Manifest *pb = (Lance__Table__Manifest *)bri_pb_copy(&m->pb->base);
  if (!pb) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  int rc = set_schema_meta(pb, BRI_MANAGED_BLOBS_KEY, "true", err);
  /* Lance 14's update_schema_metadata({"lance.blob.managed": "true"}) */
  Lance__Table__Transaction__UpdateMapEntry entry = LANCE__TABLE__TRANSACTION__UPDATE_MAP_ENTRY__INIT,
                                            *entries[] = {&entry};
  Lance__Table__Transaction__UpdateMap map = LANCE__TABLE__TRANSACTION__UPDATE_MAP__INIT;
  Lance__Table__Transaction__UpdateConfig uc = LANCE__TABLE__TRANSACTION__UPDATE_CONFIG__INIT;
  Lance__Table__Transaction txn = LANCE__TABLE__TRANSACTION__INIT;
  entry.key = BRI_MANAGED_BLOBS_KEY, entry.value = "true";
  map.update_entries = entries, map.n_update_entries = 1;
  map.has_replace = 1, map.replace = 0;
  uc.schema_metadata_updates = &map;
  txn.has_read_version = 1, txn.read_version = m->pb->version;
  txn.operation_case = LANCE__TABLE__TRANSACTION__OPERATION_UPDATE_CONFIG;
  txn.update_config = &uc;
  if (!rc) rc = bri_commit(t, pb, &txn, m->indices, m->pb->version + 1, NULL, err);
  free(txn.uuid);
  lance__table__manifest__free_unpacked(pb, NULL);
  return rc;
}

int bri_managed_optin(bri_table *t, bri_manifest **m, const bri_hooks *hooks, int max_attempts,
                      uint64_t *version, bri_error *err) {
  *version = 0;
  if (max_attempts <= 0) max_attempts = 20;
  for (int a = 0; bri_managed_optin_applies((*m)->pb); a++) { /* another writer may switch it first */
    if (a == max_attempts)
      return bri_error_set(err, BRI_ECONFLICT, "%s: other writers took every version the switch to Managed "
                           "blobs tried (%d attempts); nothing was switched", t->root, max_attempts);
    int rc = bri_managed_optin_check(t->root, *m, err);
    if (!rc && hooks && hooks->confirm) rc = hooks->confirm(hooks->user, err);
    uint64_t v = (*m)->pb->version + 1;
    if (!rc) rc = commit_once(t, *m, err);
    if (rc == BRI_ETAKEN) {
      v = 0; /* lost the race: the latest version, whoever wrote it */
      rc = bri_table_refresh(t, err);
    }
    bri_manifest *next;
    if (!rc) rc = bri_table_load(t, v, &next, err);
    if (rc) return rc;
    bri_manifest_free(*m);
    *m = next;
    if (v) {
      *version = v;
      return 0;
    }
  }
  return 0;
}
