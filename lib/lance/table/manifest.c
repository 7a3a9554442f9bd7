/* manifest.c: manifest file framing, decoding and validation (see manifest.h).
 *
 * Validation is deliberately strict where brid would otherwise act on bad
 * data (paths it would open or delete, ids it would allocate from) and
 * lenient where it only reports (unknown fields are kept, not judged). */
#include "lance/table/manifest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lance/table/bri.h"
#include "lance/table/fields.h"
#include "lance/table/flags.h"
#include "lance/table/rowids.h"
#include "util/bytes.h"
#include "util/fsutil.h"
#include "util/pbcheck.h"

enum { TAIL_LEN = 16 };

/* Decodes a length-prefixed message at off (which must end before limit). */
static int read_section(const uint8_t *buf, uint64_t limit, uint64_t off, const char *path,
                        const char *what, const ProtobufCMessageDescriptor *desc,
                        ProtobufCMessage **out, bri_error *err) {
  if (off > limit || limit - off < 4)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: %s section offset %llu leaves no room for its 4-byte length before "
                         "the manifest at %llu",
                         path, what, (unsigned long long)off, (unsigned long long)limit);
  uint32_t len = bri_le32(buf + off);
  if (len > limit - off - 4)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: offset %llu: %s length %u runs past the manifest at offset %llu",
                         path, (unsigned long long)off, what, len, (unsigned long long)limit);
  return bri_pb_unpack(desc, buf + off + 4, len, off + 4, path, what, out, err);
}

/* A relative file name Lance wrote: non-empty, not absolute, no "." or ".."
 * component, no backslash. Anything else could point outside the table. */
static int check_rel_path(const char *p, const char *path, const char *what, uint64_t frag,
                          bri_error *err) {
  const char *why = NULL;
  if (!p || !*p) why = "is empty";
  else if (p[0] == '/') why = "is absolute";
  else if (strchr(p, '\\')) why = "contains a backslash";
  else {
    for (const char *s = p; *s;) {
      size_t n = strcspn(s, "/");
      if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.')) {
        why = "has an empty, '.' or '..' component";
        break;
      }
      s += n;
      if (*s) s++;
    }
  }
  if (!why) return 0;
  return bri_error_set(err, BRI_ECORRUPT, "%s: fragment %llu: %s path \"%s\" %s", path,
                       (unsigned long long)frag, what, p ? p : "", why);
}

static int base_exists(const Lance__Table__Manifest *m, uint32_t id) {
  for (size_t i = 0; i < m->n_base_paths; i++)
    if (m->base_paths[i]->id == id) return 1;
  return 0;
}

static int cmp_ref(const void *a, const void *b) {
  return bri_cmp_u64(&((const bri_fragment_ref *)a)->id, &((const bri_fragment_ref *)b)->id);
}

/* The schema metadata value of key, or NULL. */
static const ProtobufCBinaryData *schema_meta(const Lance__Table__Manifest *m, const char *key) {
  for (size_t i = 0; i < m->n_schema_metadata; i++)
    if (m->schema_metadata[i]->key && !strcmp(m->schema_metadata[i]->key, key))
      return &m->schema_metadata[i]->value;
  return NULL;
}

static bool meta_is(const ProtobufCBinaryData *v, const char *s) {
  return v && v->len == strlen(s) && !memcmp(v->data, s, v->len);
}

bool bri_manifest_blobs_managed(const Lance__Table__Manifest *m) {
  return meta_is(schema_meta(m, BRI_MANAGED_BLOBS_KEY), "true") ||
         (m->reader_feature_flags & BRI_FLAG_MANAGED_BLOBS);
}

/* What Lance 14 checks of the flags before it opens a version: the opt-in
 * to Managed blobs is "true", "false" or absent; writer flag
 * non_reusable_field_ids goes with field 24 (max_allocated_field_id). */
static int check_opt_ins(const Lance__Table__Manifest *m, const char *path, bri_error *err) {
  const ProtobufCBinaryData *v = schema_meta(m, BRI_MANAGED_BLOBS_KEY);
  if (v && !meta_is(v, "true") && !meta_is(v, "false"))
    return bri_error_set(err, BRI_ECORRUPT, "%s: schema metadata %s is \"%.*s\"; Lance accepts only \"true\" or "
                         "\"false\"", path, BRI_MANAGED_BLOBS_KEY, (int)(v->len > 64 ? 64 : v->len),
                         (const char *)v->data);
  bool bit = (m->writer_feature_flags & BRI_FLAG_NON_REUSABLE_FIELD_IDS) != 0;
  if (bit != (bool)m->has_max_allocated_field_id)
    return bri_error_set(err, BRI_ECORRUPT, "%s: writer flag non_reusable_field_ids is %s but "
                         "max_allocated_field_id (field 24) is %s; Lance 14 requires both or neither",
                         path, bit ? "set" : "not set", m->has_max_allocated_field_id ? "present" : "absent");
  return 0;
}

/* Lance 14's unstable file version 2.3 (lance.encodings23 pages) and
 * anything newer: brid reads neither, so it acts on no version that holds
 * one (older versions, 2.0 and v1, are refused when such a file is opened). */
static int check_file_versions(const Lance__Table__Manifest *m, const char *path, bri_error *err) {
  for (size_t i = 0; i < m->n_fragments; i++)
    for (size_t k = 0; k < m->fragments[i]->n_files; k++) {
      const Lance__Table__DataFile *df = m->fragments[i]->files[k];
      if (df->file_major_version > 2 || (df->file_major_version == 2 && df->file_minor_version > 2))
        return bri_error_set(err, BRI_EUNSUPPORTED,
                             "%s: fragment %llu: data file %s is Lance file version %u.%u%s; brid reads 2.1 "
                             "and 2.2 only", path, (unsigned long long)m->fragments[i]->id, df->path,
                             df->file_major_version, df->file_minor_version,
                             df->file_major_version == 2 && df->file_minor_version == 3 ? " (unstable in Lance 14)" : "");
    }
  return 0;
}

/* Checks what brid relies on, and indexes the fragments by id. */
static int validate(bri_manifest *bm, bri_error *err) {
  const Lance__Table__Manifest *m = bm->pb;
  const char *path = bm->path;
  int rc = bri_flags_check(m->reader_feature_flags, m->writer_feature_flags, path, err);
  if (!rc) rc = check_opt_ins(m, path, err);
  if (!rc) rc = bri_fields_check_manifest(m, bm->indices, path, err);
  if (!rc) rc = check_file_versions(m, path, err);
  if (rc && !(bm->opts & BRI_MANIFEST_ANY_FEATURES)) return rc;
  if (rc) { /* kept for the report: brid will not act on this version */
    snprintf(bm->unsupported, sizeof bm->unsupported, "%s", err ? err->msg : "unsupported");
    bri_error_clear(err);
    rc = 0;
  }
  if (m->version == 0) return bri_error_set(err, BRI_ECORRUPT, "%s: manifest version is 0", path);
  for (size_t i = 0; i < m->n_base_paths; i++)
    for (size_t j = 0; j < i; j++)
      if (m->base_paths[i]->id == m->base_paths[j]->id)
        return bri_error_set(err, BRI_ECORRUPT, "%s: base path id %u is defined twice", path,
                             m->base_paths[i]->id);
  bri_fragment_ref *ids = malloc((m->n_fragments ? m->n_fragments : 1) * sizeof *ids);
  if (!ids) return bri_error_set(err, BRI_ENOMEM, "%s: out of memory", path);
  for (size_t i = 0; i < m->n_fragments && !rc; i++) {
    const Lance__Table__DataFragment *f = m->fragments[i];
    ids[i] = (bri_fragment_ref){f->id, f};
    if (m->has_max_fragment_id && f->id > m->max_fragment_id)
      rc = bri_error_set(err, BRI_ECORRUPT, "%s: fragment id %llu is above max_fragment_id %u",
                         path, (unsigned long long)f->id, m->max_fragment_id);
    for (size_t k = 0; k < f->n_files && !rc; k++) {
      const Lance__Table__DataFile *df = f->files[k];
      rc = check_rel_path(df->path, path, "data file", f->id, err);
      if (!rc && df->n_fields != df->n_column_indices)
        rc = bri_error_set(err, BRI_ECORRUPT,
                           "%s: fragment %llu: data file %s lists %zu fields but %zu column indices",
                           path, (unsigned long long)f->id, df->path, df->n_fields,
                           df->n_column_indices);
      if (!rc && df->has_base_id && !base_exists(m, df->base_id))
        rc = bri_error_set(err, BRI_ECORRUPT,
                           "%s: fragment %llu: data file %s names base id %u, which base_paths lacks",
                           path, (unsigned long long)f->id, df->path, df->base_id);
    }
    const Lance__Table__DeletionFile *d = f->deletion_file;
    if (!rc && d) {
      if (d->num_deleted_rows > f->physical_rows)
        rc = bri_error_set(err, BRI_ECORRUPT,
                           "%s: fragment %llu: %llu deleted rows but only %llu physical rows", path,
                           (unsigned long long)f->id, (unsigned long long)d->num_deleted_rows,
                           (unsigned long long)f->physical_rows);
      else if (d->file_type != LANCE__TABLE__DELETION_FILE__DELETION_FILE_TYPE__ARROW_ARRAY &&
               d->file_type != LANCE__TABLE__DELETION_FILE__DELETION_FILE_TYPE__BITMAP)
        rc = bri_error_set(err, BRI_EUNSUPPORTED, "%s: fragment %llu: unknown deletion file type %d",
                           path, (unsigned long long)f->id, (int)d->file_type);
      else if (d->has_base_id && !base_exists(m, d->base_id))
        rc = bri_error_set(err, BRI_ECORRUPT,
                           "%s: fragment %llu: deletion file names base id %u, which base_paths lacks",
                           path, (unsigned long long)f->id, d->base_id);
    }
  }
  if (!rc) {
    qsort(ids, m->n_fragments, sizeof *ids, cmp_ref);
    for (size_t i = 1; i < m->n_fragments && !rc; i++)
      if (ids[i].id == ids[i - 1].id)
        rc = bri_error_set(err, BRI_ECORRUPT, "%s: fragment id %llu appears twice", path,
                           (unsigned long long)ids[i].id);
  }
  if (rc) free(ids);
  else bm->by_id = ids, bm->n_by_id = m->n_fragments;
  if (!rc) rc = bri_manifest_check_bri(m, path, err);
  return rc;
}

const Lance__Table__DataFragment *bri_manifest_fragment(const bri_manifest *m, uint64_t id) {
  const Lance__Table__Manifest *pb = m->pb;
  if (!m->by_id) {
    for (size_t i = 0; i < pb->n_fragments; i++)
      if (pb->fragments[i]->id == id) return pb->fragments[i];
    return NULL;
  }
  const bri_fragment_ref key = {id, NULL};
  const bri_fragment_ref *hit = bsearch(&key, m->by_id, m->n_by_id, sizeof key, cmp_ref);
  return hit ? hit->f : NULL;
}

int bri_manifest_parse(const uint8_t *buf, size_t len, const char *path, bri_manifest **out,
                       bri_error *err) {
  return bri_manifest_parse_opts(buf, len, path, 0, out, err);
}

int bri_manifest_parse_opts(const uint8_t *buf, size_t len, const char *path, unsigned opts,
                            bri_manifest **out, bri_error *err) {
  *out = NULL;
  if (len < TAIL_LEN + 4)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: %zu bytes is too short for a manifest (needs at least %d)", path, len,
                         TAIL_LEN + 4);
  if (memcmp(buf + len - 4, "LANC", 4) != 0)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: offset %zu: expected magic \"LANC\" at the end of the file", path,
                         len - 4);
  uint64_t pos = bri_le64(buf + len - TAIL_LEN);
  uint64_t region_end = len - TAIL_LEN;
  if (pos > region_end || region_end - pos < 4)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: offset %zu: manifest position %llu is outside the file's %zu bytes",
                         path, len - TAIL_LEN, (unsigned long long)pos, len);
  uint32_t mlen = bri_le32(buf + pos);
  if ((uint64_t)mlen != region_end - pos - 4)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: offset %llu: manifest length %u does not match the %llu bytes "
                         "before the tail",
                         path, (unsigned long long)pos, mlen,
                         (unsigned long long)(region_end - pos - 4));
  bri_manifest *bm = calloc(1, sizeof *bm);
  if (!bm || !(bm->path = strdup(path))) {
    free(bm);
    return bri_error_set(err, BRI_ENOMEM, "%s: out of memory", path);
  }
  bm->file_size = len;
  bm->manifest_pos = pos;
  bm->opts = opts;
  int rc = bri_pb_unpack(&lance__table__manifest__descriptor, buf + pos + 4, mlen, pos + 4, path,
                         "manifest", (ProtobufCMessage **)&bm->pb, err);
  /* the inline transaction: Lance 14's field 23, else the older writers' 21 */
  uint64_t txn_at = 0;
  if (!rc && bri_manifest_transaction_offset(bm->pb, &txn_at))
    rc = read_section(buf, pos, txn_at, path, "transaction",
                      &lance__table__transaction__descriptor, (ProtobufCMessage **)&bm->txn, err);
  if (!rc && bm->pb->has_index_section)
    rc = read_section(buf, pos, bm->pb->index_section, path, "index section",
                      &lance__table__index_section__descriptor, (ProtobufCMessage **)&bm->indices,
                      err);
  if (!rc) rc = validate(bm, err);
  if (rc) {
    bri_manifest_free(bm);
    return rc;
  }
  *out = bm;
  return 0;
}

int bri_manifest_read(bri_store *st, const char *path, bri_manifest **out, bri_error *err) {
  return bri_manifest_read_opts(st, path, 0, out, err);
}

int bri_manifest_read_opts(bri_store *st, const char *path, unsigned opts, bri_manifest **out,
                           bri_error *err) {
  uint8_t *buf;
  size_t len;
  *out = NULL;
  int rc = bri_store_read(st, path, BRI_MANIFEST_MAX_BYTES, &buf, &len, err);
  if (rc) return rc;
  rc = bri_manifest_parse_opts(buf, len, path, opts, out, err);
  free(buf);
  return rc;
}

/* Appends [u32 len][message] at *pos; buf has room (sizes computed first). */
static void put_section(uint8_t *buf, size_t *pos, const ProtobufCMessage *msg, size_t len) {
  bri_put_le32(buf + *pos, (uint32_t)len);
  protobuf_c_message_pack(msg, buf + *pos + 4);
  *pos += 4 + len;
}

bool bri_manifest_transaction_offset(const Lance__Table__Manifest *m, uint64_t *off) {
  if (m->has_transaction_section) *off = m->transaction_section;
  else if (m->has_transaction_section_deprecated) *off = m->transaction_section_deprecated;
  else return false;
  return true;
}

int bri_manifest_serialize(Lance__Table__Manifest *m, const Lance__Table__Transaction *txn,
                           const Lance__Table__IndexSection *idx, uint8_t **out, size_t *len,
                           bri_error *err) {
  *out = NULL;
  *len = 0;
  /* a field Lance 14 does not define could be a position in the file this
   * manifest was read from: dropped, as Lance's own writers drop it (fields.h) */
  bri_fields_drop_unknown(m);
  size_t idx_len = idx ? lance__table__index_section__get_packed_size(idx) : 0;
  size_t txn_len = txn ? lance__table__transaction__get_packed_size(txn) : 0;
  size_t pos = 0;
  m->has_version_aux_data = 0;
  m->version_aux_data = 0;
  m->has_index_section = idx != NULL;
  m->index_section = 0;
  if (idx) pos += 4 + idx_len;
  /* both transaction pointers, to the same bytes: Lance 14 reads 23, Lance
   * 12 and 13 read 21 (docs/format/table.md 2) */
  m->has_transaction_section = m->has_transaction_section_deprecated = txn != NULL;
  m->transaction_section = m->transaction_section_deprecated = txn ? pos : 0;
  if (txn) pos += 4 + txn_len;
  size_t man_len = lance__table__manifest__get_packed_size(m);
  if (idx_len > UINT32_MAX || txn_len > UINT32_MAX || man_len > UINT32_MAX)
    return bri_error_set(err, BRI_EINVAL, "manifest section larger than 4 GiB");
  size_t total = pos + 4 + man_len + TAIL_LEN;
  uint8_t *buf = malloc(total);
  if (!buf) return bri_error_set(err, BRI_ENOMEM, "out of memory for a %zu-byte manifest", total);
  size_t w = 0;
  if (idx) put_section(buf, &w, &idx->base, idx_len);
  if (txn) put_section(buf, &w, &txn->base, txn_len);
  uint64_t manifest_pos = w;
  put_section(buf, &w, &m->base, man_len);
  bri_put_le64(buf + w, manifest_pos);
  bri_put_le16(buf + w + 8, 0);
  bri_put_le16(buf + w + 10, 2);
  memcpy(buf + w + 12, "LANC", 4);
  *out = buf;
  *len = total;
  return 0;
}

void bri_manifest_free(bri_manifest *m) {
  if (!m) return;
  if (m->pb) lance__table__manifest__free_unpacked(m->pb, NULL);
  if (m->txn) lance__table__transaction__free_unpacked(m->txn, NULL);
  if (m->indices) lance__table__index_section__free_unpacked(m->indices, NULL);
  free(m->by_id);
  free(m->path);
  free(m);
}

uint64_t bri_fragment_live_rows(const Lance__Table__DataFragment *f) {
  uint64_t del = f->deletion_file ? f->deletion_file->num_deleted_rows : 0;
  return del > f->physical_rows ? 0 : f->physical_rows - del;
}

int bri_fragment_row_ids(const char *root, const Lance__Table__DataFragment *f, uint64_t **ids, size_t *n,
                         bri_error *err) {
  *ids = NULL;
  *n = 0;
  if (f->row_id_sequence_case != LANCE__TABLE__DATA_FRAGMENT__ROW_ID_SEQUENCE_INLINE_ROW_IDS)
    return bri_error_set(err, BRI_EUNSUPPORTED, "%s: fragment %llu keeps %s", root, (unsigned long long)f->id,
                         f->row_id_sequence_case == LANCE__TABLE__DATA_FRAGMENT__ROW_ID_SEQUENCE_COLUMN_ROW_IDS
                             ? "its row ids in a hidden column (spilled row lineage), which brid does not read"
                             : "no row ids");
  Lance__Table__RowIdSequence *seq = NULL;
  int rc = bri_u64seq_unpack(f->inline_row_ids.data, f->inline_row_ids.len, &seq, err);
  if (!rc) rc = bri_u64seq_decode(seq, f->physical_rows, ids, n, err);
  if (seq) lance__table__row_id_sequence__free_unpacked(seq, NULL);
  if (!rc && *n != f->physical_rows)
    rc = bri_error_set(err, BRI_ECORRUPT, "%s: fragment %llu has %zu row ids for %llu rows", root,
                       (unsigned long long)f->id, *n, (unsigned long long)f->physical_rows);
  if (rc) {
    free(*ids);
    *ids = NULL;
    *n = 0;
  }
  return rc;
}
