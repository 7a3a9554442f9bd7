/* bri.c: Blob Reuse Index extraction and validation (see bri.h). Each rule
 * of docs/format/bri.md 3 is checked where it is named below, and the error says
 * which rule broke, so that an operator can tell a bug from tampering. */
#include "lance/table/bri.h"

#include <stdlib.h>
#include <string.h>

#include "lance/table/sidecar.h"
#include "lance/table/flags.h"
#include "util/bytes.h"
#include "util/fsutil.h"
#include "lance/table/rowids.h"
#include "util/pbcheck.h"

static const ProtobufCMessageUnknownField *field8(const Lance__Table__DataFile *df) {
  const ProtobufCMessageUnknownField *found = NULL;
  for (size_t i = 0; i < df->base.n_unknown_fields; i++)
    if (df->base.unknown_fields[i].tag == BRI_DATAFILE_FIELD) found = &df->base.unknown_fields[i];
  return found;
}

int bri_datafile_get_bri(const Lance__Table__DataFile *df, const char *path,
                         Lance__Table__BlobReuseIndex **out, bri_error *err) {
  *out = NULL;
  size_t n_len = 0;
  const ProtobufCMessageUnknownField *u = NULL;
  for (size_t i = 0; i < df->base.n_unknown_fields; i++) {
    const ProtobufCMessageUnknownField *f = &df->base.unknown_fields[i];
    if (f->tag == BRI_DATAFILE_FIELD && f->wire_type == PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED) {
      n_len++;
      u = f;
    }
  }
  if (!u) return 0; /* absent, or a varint field 8 of another writer */
  if (n_len > 1)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: data file %s: BRI appears %zu times (docs/format/bri.md 3: one BRI per "
                         "data file)",
                         path, df->path, n_len);
  /* protobuf-c keeps a length-delimited unknown field with its length prefix */
  size_t pos = 0;
  uint64_t blen;
  if (!bri_pb_varint(u->data, u->len, &pos, &blen) || blen != u->len - pos)
    return bri_error_set(err, BRI_ECORRUPT, "%s: data file %s: BRI length prefix is malformed",
                         path, df->path);
  Lance__Table__BlobReuseIndex *b =
      lance__table__blob_reuse_index__unpack(NULL, (size_t)blen, u->data + pos);
  if (!b)
    return bri_error_set(err, BRI_ECORRUPT, "%s: data file %s: BRI (%zu bytes) does not decode",
                         path, df->path, (size_t)blen);
  /* Re-encoding must give the same bytes: a duplicated singular field or a
   * NUL inside blob_dir would otherwise decode into something ambiguous. */
  if (lance__table__blob_reuse_index__get_packed_size(b) != blen) {
    lance__table__blob_reuse_index__free_unpacked(b, NULL);
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: data file %s: BRI is ambiguous (repeated singular field or NUL in "
                         "blob_dir)",
                         path, df->path);
  }
  *out = b;
  return 1;
}

int bri_datafile_set_bri(Lance__Table__DataFile *df, const Lance__Table__BlobReuseIndex *b,
                         bri_error *err) {
  ProtobufCMessage *base = &df->base;
  size_t keep = 0;
  for (size_t i = 0; i < base->n_unknown_fields; i++) {
    ProtobufCMessageUnknownField *f = &base->unknown_fields[i];
    if (f->tag == BRI_DATAFILE_FIELD && f->wire_type == PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED)
      free(f->data);
    else
      base->unknown_fields[keep++] = *f;
  }
  base->n_unknown_fields = keep;
  if (!b) return 0;
  size_t len = lance__table__blob_reuse_index__get_packed_size(b);
  uint8_t *data = malloc(len + 10);
  ProtobufCMessageUnknownField *grown =
      realloc(base->unknown_fields, (keep + 1) * sizeof *base->unknown_fields);
  if (!data || !grown) {
    free(data);
    if (grown) base->unknown_fields = grown;
    return bri_error_set(err, BRI_ENOMEM, "out of memory storing a BRI");
  }
  base->unknown_fields = grown;
  size_t pre = 0;
  for (uint64_t v = len; ; v >>= 7) { /* varint length prefix, as protobuf-c stores it */
    data[pre++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
    if (v < 0x80) break;
  }
  lance__table__blob_reuse_index__pack(b, data + pre);
  grown[keep].tag = BRI_DATAFILE_FIELD;
  grown[keep].wire_type = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED;
  grown[keep].len = pre + len;
  grown[keep].data = data;
  base->n_unknown_fields = keep + 1;
  return 0;
}

int bri_manifest_has_bri(const Lance__Table__Manifest *m) {
  for (size_t i = 0; i < m->n_fragments; i++)
    for (size_t k = 0; k < m->fragments[i]->n_files; k++) {
      const ProtobufCMessageUnknownField *u = field8(m->fragments[i]->files[k]);
      if (u && u->wire_type == PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED) return 1;
    }
  return 0;
}

static int plain_component(const char *s) {
  if (!s || !*s || !strcmp(s, ".") || !strcmp(s, "..")) return 0;
  return strpbrk(s, "/\\") == NULL;
}

static int base_known(const Lance__Table__Manifest *m, uint32_t id) {
  for (size_t i = 0; i < m->n_base_paths; i++)
    if (m->base_paths[i]->id == id) return 1;
  return 0;
}

/* Effective base of a source: its own base_id, else the data file's, else
 * the table root (-1). */
int64_t bri_source_base(const Lance__Table__BlobReuseSource *s, const Lance__Table__DataFile *df) {
  if (s->has_base_id) return s->base_id;
  if (df->has_base_id) return df->base_id;
  return -1;
}

static int check_one(const Lance__Table__Manifest *m, const Lance__Table__DataFile *df,
                     const Lance__Table__BlobReuseIndex *b, const char *path, bri_error *err) {
#define FAIL(...) \
  do { rc = bri_error_set(err, BRI_ECORRUPT, __VA_ARGS__); goto out; } while (0)
  int rc = 0;
  uint64_t *all = NULL, *loc = NULL, *phys = NULL;
  size_t n_all = 0, n_loc = 0, n_phys = 0;
  const char *f = df->path;
  if (b->n_sources == 0) FAIL("%s: data file %s: BRI has no sources (docs/format/bri.md rule 1)", path, f);
  for (size_t i = 0; i < b->n_sources; i++) {
    const Lance__Table__BlobReuseSource *s = b->sources[i];
    if (!plain_component(s->blob_dir))
      FAIL("%s: data file %s: BRI source %zu: blob_dir \"%s\" is not one plain path component "
           "(docs/format/bri.md rule 7)", path, f, i, s->blob_dir ? s->blob_dir : "");
    int64_t base = bri_source_base(s, df);
    if (base >= 0 && !base_known(m, (uint32_t)base))
      FAIL("%s: data file %s: BRI source %zu: base id %lld is not in base_paths (docs/format/bri.md "
           "rule 3)", path, f, i, (long long)base);
    for (size_t j = 0; j < i; j++)
      if (bri_source_base(b->sources[j], df) == base && !strcmp(b->sources[j]->blob_dir, s->blob_dir))
        FAIL("%s: data file %s: BRI sources %zu and %zu both name blob_dir \"%s\" on the same base "
             "(docs/format/bri.md rule 2)", path, f, j, i, s->blob_dir);
    if (!s->local_ids)
      FAIL("%s: data file %s: BRI source %zu has no local ids (docs/format/bri.md rule 1)", path, f, i);
    bri_error e2;
    /* counts first: local ids (a Range claims any number in a few bytes) are
     * only decoded once they match the physical ids, which the bytes bound */
    uint64_t c_loc, c_phys;
    if (bri_u64seq_count(s->local_ids, &c_loc, &e2))
      FAIL("%s: data file %s: BRI source %zu local ids: %s", path, f, i, e2.msg);
    if (bri_u64array_count(s->physical_ids, &c_phys, &e2))
      FAIL("%s: data file %s: BRI source %zu physical ids: %s", path, f, i, e2.msg);
    if (c_loc != c_phys)
      FAIL("%s: data file %s: BRI source %zu has %llu local ids but %llu physical ids (docs/format/bri.md "
           "rule 5)", path, f, i, (unsigned long long)c_loc, (unsigned long long)c_phys);
    if (bri_u64seq_decode(s->local_ids, BRI_MAX_IDS_PER_FILE - n_all, &loc, &n_loc, &e2))
      FAIL("%s: data file %s: BRI source %zu local ids: %s", path, f, i, e2.msg);
    if (bri_u64array_decode(s->physical_ids, BRI_MAX_IDS_PER_FILE, &phys, &n_phys, &e2))
      FAIL("%s: data file %s: BRI source %zu physical ids: %s", path, f, i, e2.msg);
    if (n_loc == 0)
      FAIL("%s: data file %s: BRI source %zu maps no ids (docs/format/bri.md rule 1)", path, f, i);
    if (n_loc != n_phys)
      FAIL("%s: data file %s: BRI source %zu has %zu local ids but %zu physical ids (docs/format/bri.md "
           "rule 5)", path, f, i, n_loc, n_phys);
    for (size_t k = 0; k < n_loc; k++) {
      if (loc[k] == 0 || loc[k] > UINT32_MAX || phys[k] == 0 || phys[k] > UINT32_MAX)
        FAIL("%s: data file %s: BRI source %zu entry %zu: ids %llu -> %llu outside [1, 2^32-1] "
             "(docs/format/bri.md rule 6)", path, f, i, k, (unsigned long long)loc[k],
             (unsigned long long)phys[k]);
      if (k && loc[k] <= loc[k - 1])
        FAIL("%s: data file %s: BRI source %zu: local ids not strictly increasing at entry %zu "
             "(docs/format/bri.md rule 4)", path, f, i, k);
    }
    uint64_t *grown = realloc(all, (n_all + n_loc) * sizeof *all);
    if (!grown) {
      rc = bri_error_set(err, BRI_ENOMEM, "%s: out of memory validating BRI", path);
      goto out;
    }
    all = grown;
    memcpy(all + n_all, loc, n_loc * sizeof *loc);
    n_all += n_loc;
    free(loc), free(phys);
    loc = phys = NULL;
  }
  qsort(all, n_all, sizeof *all, bri_cmp_u64);
  for (size_t k = 1; k < n_all; k++)
    if (all[k] == all[k - 1])
      FAIL("%s: data file %s: BRI local id %llu appears in two sources (docs/format/bri.md rule 4)",
           path, f, (unsigned long long)all[k]);
out:
  free(all), free(loc), free(phys);
  return rc;
#undef FAIL
}

int bri_manifest_check_bri(const Lance__Table__Manifest *m, const char *path, bri_error *err) {
  int any = 0;
  for (size_t i = 0; i < m->n_fragments; i++)
    for (size_t k = 0; k < m->fragments[i]->n_files; k++) {
      const Lance__Table__DataFile *df = m->fragments[i]->files[k];
      Lance__Table__BlobReuseIndex *b;
      int rc = bri_datafile_get_bri(df, path, &b, err);
      if (rc < 0) return rc;
      if (rc == 0) continue;
      any = 1;
      rc = check_one(m, df, b, path, err);
      lance__table__blob_reuse_index__free_unpacked(b, NULL);
      if (rc) return rc;
    }
  int r = (m->reader_feature_flags & BRI_FLAG_BLOB_REUSE_INDEX) != 0;
  int w = (m->writer_feature_flags & BRI_FLAG_BLOB_REUSE_INDEX) != 0;
  if (r != w)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: the blob_reuse_index flag is set in the %s flags only (docs/format/bri.md "
                         "rule 8: both words or neither)",
                         path, r ? "reader" : "writer");
  if (any && !r)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: a data file carries a BRI but the blob_reuse_index flag is not set "
                         "(docs/format/bri.md rule 8)",
                         path);
  if (!any && r)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: the blob_reuse_index flag is set but no data file carries a BRI "
                         "(docs/format/bri.md rule 8)",
                         path);
  return 0;
}

