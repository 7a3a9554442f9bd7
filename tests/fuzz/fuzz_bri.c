/* fuzz_bri.c: libFuzzer harness for the Blob Reuse Index: arbitrary bytes in
 * DataFile field 8 of a manifest, through every consumer of those bytes:
 * bri_datafile_get_bri (with a set/get round trip of what decodes),
 * bri_manifest_check_bri (docs/format/bri.md 3), the whole manifest open
 * (serialize, then bri_manifest_parse, which validates), the resolver's BRI
 * loading in lib/blob/resolve.c (bri_blob_resolver_open, fed the manifest
 * whether it validated or not: the resolver re-checks what its lookups rely
 * on), its lookups, and bri_table_bri_paths (what cleanup keeps).
 *
 * Input: byte 0 = flags (bit 0: the data file has a base id, byte 1 % 4 picks
 * it: 0 undefined, 1 a dataset-root base, 2 a file:// base, 3 a remote one;
 * bit 1: BRI flag bits set in both words; bit 2: in the reader word only;
 * bit 3: also a varint field 8 from another writer; bit 4: the BRI field
 * twice), byte 1 = base choice, the rest = the BRI message bytes. Nothing is
 * read from disk: the table root does not exist. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lance/table/bri.h"
#include "blob/resolve.h"
#include "lance/table/flags.h"
#include "lance/table/manifest.h"
#include "lance/table/table.h"

static int count_path(void *user, const char *path) {
  (void)path;
  (*(size_t *)user)++;
  return 0;
}

static void set_field8(ProtobufCMessageUnknownField *u, const uint8_t *bri, size_t len) {
  uint8_t *d = malloc(len + 10);
  size_t pre = 0;
  for (uint64_t v = len;; v >>= 7) {
    d[pre++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
    if (v < 0x80) break;
  }
  if (len) memcpy(d + pre, bri, len);
  u->tag = BRI_DATAFILE_FIELD;
  u->wire_type = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED;
  u->len = pre + len;
  u->data = d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  uint8_t flags = data[0], base_pick = data[1] % 4;
  const uint8_t *bri = data + 2;
  size_t bri_len = size - 2;

  /* base paths: 1 dataset root, 2 file:// plain directory, 3 remote */
  Lance__Table__BasePath b1 = LANCE__TABLE__BASE_PATH__INIT, b2 = LANCE__TABLE__BASE_PATH__INIT,
                         b3 = LANCE__TABLE__BASE_PATH__INIT;
  b1.has_id = 1, b1.id = 1, b1.path = "/fuzz-base-one", b1.has_is_dataset_root = 1, b1.is_dataset_root = 1;
  b2.has_id = 1, b2.id = 2, b2.path = "file:///fuzz-base-two/data";
  b3.has_id = 1, b3.id = 3, b3.path = "s3://bucket/t.lance";
  Lance__Table__BasePath *bases[3] = {&b1, &b2, &b3};

  int32_t fields[1] = {0}, cols[1] = {0};
  Lance__Table__DataFile df = LANCE__TABLE__DATA_FILE__INIT;
  df.path = "0123456789abcdef.lance";
  df.fields = fields, df.n_fields = 1;
  df.column_indices = cols, df.n_column_indices = 1;
  if (flags & 1) df.has_base_id = 1, df.base_id = base_pick;
  ProtobufCMessageUnknownField unk[3];
  size_t n_unk = 0;
  set_field8(&unk[n_unk++], bri, bri_len);
  if (flags & 16) set_field8(&unk[n_unk++], bri, bri_len);
  if (flags & 8) {
    uint8_t *v = malloc(1);
    v[0] = 42;
    unk[n_unk].tag = BRI_DATAFILE_FIELD, unk[n_unk].wire_type = PROTOBUF_C_WIRE_TYPE_VARINT;
    unk[n_unk].len = 1, unk[n_unk].data = v;
    n_unk++;
  }
  df.base.unknown_fields = unk;
  df.base.n_unknown_fields = n_unk;
  Lance__Table__DataFile *dfs[1] = {&df};

  Lance__Table__DataFragment frag = LANCE__TABLE__DATA_FRAGMENT__INIT;
  frag.has_id = 1, frag.id = 0;
  frag.files = dfs, frag.n_files = 1;
  frag.has_physical_rows = 1, frag.physical_rows = 1;
  Lance__Table__DataFragment *frags[1] = {&frag};

  Lance__Table__Manifest m = LANCE__TABLE__MANIFEST__INIT;
  m.fragments = frags, m.n_fragments = 1;
  m.base_paths = bases, m.n_base_paths = 3;
  m.has_version = 1, m.version = 1;
  if (flags & 2) m.reader_feature_flags = m.writer_feature_flags = BRI_FLAG_BLOB_REUSE_INDEX;
  if (flags & 4) m.reader_feature_flags = BRI_FLAG_BLOB_REUSE_INDEX;
  m.has_reader_feature_flags = m.has_writer_feature_flags = 1;

  bri_error err;
  /* 1. extraction, and a set/get round trip of what decodes */
  Lance__Table__BlobReuseIndex *b = NULL;
  int got = bri_datafile_get_bri(&df, "fuzz.manifest", &b, &err);
  if (got > 0) {
    Lance__Table__DataFile copy = LANCE__TABLE__DATA_FILE__INIT;
    if (bri_datafile_set_bri(&copy, b, &err) == 0) {
      Lance__Table__BlobReuseIndex *b2x = NULL;
      if (bri_datafile_get_bri(&copy, "copy", &b2x, &err) != 1) abort();
      size_t l1 = lance__table__blob_reuse_index__get_packed_size(b);
      size_t l2 = lance__table__blob_reuse_index__get_packed_size(b2x);
      if (l1 != l2 || l1 != bri_len) abort(); /* get_bri refuses ambiguous encodings */
      lance__table__blob_reuse_index__free_unpacked(b2x, NULL);
      bri_datafile_set_bri(&copy, NULL, &err);
    }
    free(copy.base.unknown_fields);
    lance__table__blob_reuse_index__free_unpacked(b, NULL);
  }
  /* 2. validation */
  int valid = bri_manifest_check_bri(&m, "fuzz.manifest", &err) == 0;
  /* 3. the whole manifest open */
  uint8_t *buf = NULL;
  size_t len = 0;
  if (bri_manifest_serialize(&m, NULL, NULL, &buf, &len, &err) == 0) {
    bri_manifest *bm = NULL;
    int rc = bri_manifest_parse(buf, len, "fuzz.manifest", &bm, &err);
    if (rc == 0 && !valid) abort(); /* the open must refuse what validation refuses */
    bri_manifest_free(bm);
    free(buf);
  }
  /* 4. the resolver, valid or not, and what cleanup would keep */
  bri_table t = {.root = "/nonexistent/fuzz.lance"};
  bri_blob_resolver *r = NULL;
  if (bri_blob_resolver_open(&t, &m, &df, &r, &err) == 0) {
    static const uint32_t ids[] = {0, 1, 2, 3, 7, 100, 65535, 65536, 0x7fffffff, 0xfffffffe, 0xffffffff};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
      bri_blob_terminal term;
      bri_blob_terminal_of(r, ids[i], &term);
      if (!term.dir || !term.blob_dir || !*term.blob_dir) abort();
      char *p = NULL;
      if (bri_blob_sidecar_path(r, ids[i], &p, &err) == 0) free(p);
    }
    bri_blob_resolver_close(r);
  }
  if (valid) {
    size_t n = 0;
    bri_table_bri_paths(&t, &m, &df, "fuzz.manifest", count_path, &n, &err);
  }
  for (size_t i = 0; i < n_unk; i++) free(unk[i].data);
  return 0;
}
