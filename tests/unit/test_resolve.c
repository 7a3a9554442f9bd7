/* test_resolve.c: Blob v2 descriptor resolution (lib/blob/resolve.h) on a
 * copy of the fixture table tests/fixtures/tables/blobs.lance (written by
 * LanceDB 0.39.0): Inline ranges of the data file, Packed ranges and
 * Dedicated sidecars under the data file's stem, redirection through a Blob
 * Reuse Index (root base and another base path), External objects (absolute
 * path, file:// URI, base-relative path), streaming in bounded chunks, and
 * every refusal (range past the end, missing sidecar, size mismatch, unknown
 * kind, remote scheme, ".." in a relative path) with the file it names;
 * Managed descriptors (Lance 14, kinds 4 and 5): objects below the data
 * file's base root or base blob_id, empty ranges never looked up, and
 * every blob_uri Lance refuses (absolute, "..", "://", empty components,
 * backslash) refused as corrupt, naming the data file. End
 * to end: a copy of the table whose sidecars were moved to another directory
 * and whose manifest maps them back through a BRI hashes its blob column to
 * the same SHA-256 as the original (fragment reader + resolver + hasher). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lance/table/bri.h"
#include "blob/resolve.h"
#include "lance/table/sidecar.h"
#include "scan/hash.h"
#include "lance/dataset/reader.h"
#include "lance/table/flags.h"
#include "lance/table/table.h"
#include "testutil.h"
#include "util/bytes.h"
#include "util/fsutil.h"

/* Data files of the fixture: one with a 2 KiB pack (two 1 KiB packed values,
 * id 1), one with a 4 KiB dedicated sidecar (id 1). */
#define PACKED_STEM "0010011111001010110111115dc2f240c993003ff62b1588ed"
#define DEDICATED_STEM "110100101010011100000010b64a284570ac12511e4205272c"
#define ID1 "10000000000000000000000000000000.blob"

typedef struct env {
  char *tmp, *root;
  bri_table *t;
  bri_manifest *m;
  Lance__Table__DataFile *packed, *dedicated;
} env;

static Lance__Table__DataFile *find_file(bri_manifest *m, const char *stem) {
  for (size_t i = 0; i < m->pb->n_fragments; i++)
    for (size_t k = 0; k < m->pb->fragments[i]->n_files; k++) {
      Lance__Table__DataFile *df = m->pb->fragments[i]->files[k];
      if (!strncmp(df->path, stem, strlen(stem))) return df;
    }
  ck_abort_msg("no data file %s in the fixture", stem);
  return NULL;
}

static void setup(env *e) {
  bri_error err;
  e->tmp = bri_tmpdir();
  char *src = bri_fixture("tables/blobs.lance");
  e->root = bri_path_join(e->tmp, "blobs.lance");
  bri_copytree(src, e->root);
  free(src);
  ck_assert_msg(bri_table_open(e->root, &e->t, &err) == 0, "%s", err.msg);
  ck_assert_msg(bri_table_load(e->t, 0, &e->m, &err) == 0, "%s", err.msg);
  e->packed = find_file(e->m, PACKED_STEM);
  e->dedicated = find_file(e->m, DEDICATED_STEM);
}

static void teardown(env *e) {
  bri_manifest_free(e->m);
  bri_table_close(e->t);
  bri_rmtree(e->tmp);
  free(e->tmp);
  free(e->root);
}

static bri_blob_resolver *resolver(env *e, Lance__Table__DataFile *df) {
  bri_blob_resolver *r;
  bri_error err;
  ck_assert_msg(bri_blob_resolver_open(e->t, e->m->pb, df, &r, &err) == 0, "%s", err.msg);
  return r;
}

static bri_blob_desc desc(uint8_t kind, uint64_t pos, uint64_t size, uint32_t id,
                          const char *uri) {
  bri_blob_desc d = {kind, pos, size, id, uri, uri ? strlen(uri) : 0};
  return d;
}

/* Reads d and compares with want[0..n). */
static void expect_bytes(bri_blob_resolver *r, bri_blob_desc d, const uint8_t *want, size_t n) {
  uint8_t *got;
  size_t len;
  bri_error err = {0};
  int rc = bri_blob_read(r, &d, UINT64_MAX, &got, &len, &err);
  ck_assert_msg(rc == 0, "read: %s", err.msg);
  ck_assert_uint_eq(len, n);
  ck_assert(n == 0 || !memcmp(got, want, n));
  uint64_t l;
  ck_assert_int_eq(bri_blob_length(r, &d, &l, &err), 0);
  ck_assert_uint_eq(l, n);
  free(got);
}

/* Expects refusal code with all needles in the message. */
static void expect_error(bri_blob_resolver *r, bri_blob_desc d, int code, const char *n1,
                         const char *n2) {
  uint8_t *got = NULL;
  size_t len;
  bri_error err = {0};
  int rc = bri_blob_read(r, &d, UINT64_MAX, &got, &len, &err);
  ck_assert_msg(rc == code, "expected %d, got %d: %s", code, rc, err.msg);
  ck_assert_ptr_null(got);
  ck_assert_msg(strstr(err.msg, n1), "'%s' not in: %s", n1, err.msg);
  ck_assert_msg(!n2 || strstr(err.msg, n2), "'%s' not in: %s", n2, err.msg);
}

static uint8_t *slurp_rel(env *e, const char *rel, size_t *len) {
  char *p = bri_strdupf("%s/%s", e->root, rel);
  uint8_t *b = bri_slurp(p, len);
  free(p);
  return b;
}

START_TEST(test_inline) {
  env e;
  setup(&e);
  bri_blob_resolver *r = resolver(&e, e.packed);
  size_t n;
  uint8_t *file = slurp_rel(&e, "data/" PACKED_STEM ".lance", &n);
  ck_assert_str_eq(bri_blob_resolver_datafile(r), strstr(bri_blob_resolver_datafile(r), e.root));
  expect_bytes(r, desc(BRI_BLOB_INLINE, 0, 256, 0, NULL), file, 256);
  expect_bytes(r, desc(BRI_BLOB_INLINE, n - 10, 10, 0, NULL), file + n - 10, 10);
  /* an empty blob: position is never looked at (docs/format/blob.md section 2) */
  expect_bytes(r, desc(BRI_BLOB_INLINE, UINT64_MAX, 0, 0, NULL), NULL, 0);
  bri_blob_location loc;
  bri_error err;
  bri_blob_desc d = desc(BRI_BLOB_INLINE, 64, 100, 0, NULL);
  ck_assert_int_eq(bri_blob_locate(r, &d, &loc, &err), 0);
  ck_assert_str_eq(loc.path, bri_blob_resolver_datafile(r));
  ck_assert_uint_eq(loc.offset, 64);
  ck_assert_uint_eq(loc.length, 100);
  bri_blob_location_dispose(&loc);
  /* past the end of the data file, and a range that wraps around */
  expect_error(r, desc(BRI_BLOB_INLINE, n - 10, 11, 0, NULL), BRI_ECORRUPT,
               PACKED_STEM ".lance: inline blob", "runs past the end of the data file");
  expect_error(r, desc(BRI_BLOB_INLINE, UINT64_MAX - 1, 4, 0, NULL), BRI_ECORRUPT,
               "runs past the end", NULL);
  expect_error(r, desc(9, 0, 1, 0, NULL), BRI_ECORRUPT, PACKED_STEM ".lance",
               "unknown kind 9");
  free(file);
  bri_blob_resolver_close(r);
  teardown(&e);
}
END_TEST

START_TEST(test_packed_dedicated) {
  env e;
  setup(&e);
  bri_blob_resolver *r = resolver(&e, e.packed);
  size_t n;
  uint8_t *pack = slurp_rel(&e, "data/" PACKED_STEM "/" ID1, &n);
  ck_assert_uint_eq(n, 2048);
  expect_bytes(r, desc(BRI_BLOB_PACKED, 1024, 1024, 1, NULL), pack + 1024, 1024);
  expect_bytes(r, desc(BRI_BLOB_PACKED, 0, 1024, 1, NULL), pack, 1024);
  expect_error(r, desc(BRI_BLOB_PACKED, 1025, 1024, 1, NULL), BRI_ECORRUPT,
               PACKED_STEM "/" ID1 ": packed blob [1025, +1024) of blob id 1",
               "runs past the end of the sidecar (2048 bytes)");
  /* id 7 has no sidecar: the message names the path it looked for */
  expect_error(r, desc(BRI_BLOB_PACKED, 0, 1, 7, NULL), BRI_ECORRUPT,
               PACKED_STEM "/11100000000000000000000000000000.blob: sidecar does not exist",
               "blob id 7 of data file");
  expect_error(r, desc(BRI_BLOB_DEDICATED, 0, 1, 0, NULL), BRI_ECORRUPT,
               "dedicated blob has blob_id 0", NULL);
  /* the pack is no dedicated sidecar of 1024 bytes */
  expect_error(r, desc(BRI_BLOB_DEDICATED, 0, 1024, 1, NULL), BRI_ECORRUPT,
               "has 2048 bytes, the descriptor says 1024", NULL);
  bri_blob_resolver_close(r);

  r = resolver(&e, e.dedicated);
  free(pack);
  pack = slurp_rel(&e, "data/" DEDICATED_STEM "/" ID1, &n);
  ck_assert_uint_eq(n, 4096);
  expect_bytes(r, desc(BRI_BLOB_DEDICATED, 0, 4096, 1, NULL), pack, 4096);
  char *p;
  bri_error err;
  ck_assert_int_eq(bri_blob_sidecar_path(r, 1, &p, &err), 0);
  char *want = bri_strdupf("%s/data/%s/%s", e.root, DEDICATED_STEM, ID1);
  ck_assert_str_eq(p, want);
  free(p);
  free(want);
  free(pack);
  bri_blob_resolver_close(r);
  teardown(&e);
}
END_TEST

/* Builds a BRI source mapping local ids to physical ids (RowIdSequence as an
 * explicit array, physical ids as a U64 array), all in caller storage. */
typedef struct src_buf {
  Lance__Table__BlobReuseSource s;
  Lance__Table__RowIdSequence seq;
  Lance__Table__U64Segment seg, *segp;
  Lance__Table__EncodedU64Array loc, phys;
  Lance__Table__EncodedU64Array__U64Array lv, pv;
  uint8_t lb[64], pb[64];
} src_buf;

static Lance__Table__BlobReuseSource *source(src_buf *b, const char *dir, int has_base,
                                             uint32_t base, const uint64_t *l, const uint64_t *p,
                                             size_t n) {
  lance__table__blob_reuse_source__init(&b->s);
  lance__table__row_id_sequence__init(&b->seq);
  lance__table__u64_segment__init(&b->seg);
  lance__table__encoded_u64_array__init(&b->loc);
  lance__table__encoded_u64_array__init(&b->phys);
  lance__table__encoded_u64_array__u64_array__init(&b->lv);
  lance__table__encoded_u64_array__u64_array__init(&b->pv);
  for (size_t i = 0; i < n; i++) bri_put_le64(b->lb + 8 * i, l[i]), bri_put_le64(b->pb + 8 * i, p[i]);
  b->lv.has_values = b->pv.has_values = 1;
  b->lv.values.data = b->lb, b->lv.values.len = 8 * n;
  b->pv.values.data = b->pb, b->pv.values.len = 8 * n;
  b->loc.array_case = b->phys.array_case = LANCE__TABLE__ENCODED_U64_ARRAY__ARRAY_U64_ARRAY;
  b->loc.u64_array = &b->lv;
  b->phys.u64_array = &b->pv;
  b->seg.segment_case = LANCE__TABLE__U64_SEGMENT__SEGMENT_ARRAY;
  b->seg.array = &b->loc;
  b->segp = &b->seg;
  b->seq.n_segments = 1;
  b->seq.segments = &b->segp;
  b->s.blob_dir = (char *)dir;
  b->s.has_base_id = has_base;
  b->s.base_id = base;
  b->s.local_ids = &b->seq;
  b->s.physical_ids = &b->phys;
  return &b->s;
}

START_TEST(test_bri_redirect) {
  env e;
  setup(&e);
  bri_error err;
  /* base 9: a non-root base path whose data directory is the path itself */
  char *other = bri_path_join(e.tmp, "other");
  char *dirx = bri_path_join(other, "dirx");
  ck_assert_int_eq(mkdir(other, 0755), 0);
  ck_assert_int_eq(mkdir(dirx, 0755), 0);
  char name[BRI_BLOB_NAME_LEN];
  bri_blob_file_name(3, name);
  char *obj = bri_path_join(dirx, name);
  bri_write_bytes(obj, "physical three", 14);
  Lance__Table__BasePath bp, *bps[1] = {&bp};
  lance__table__base_path__init(&bp);
  bp.has_id = 1, bp.id = 9, bp.path = other;
  e.m->pb->base_paths = bps;
  e.m->pb->n_base_paths = 1;

  /* the packed file's local ids 5 and 8 are the dedicated file's sidecar 1 and
   * (absent) 2; local id 6 is base 9's dirx/name(3) */
  src_buf a, b;
  const uint64_t la[] = {5, 8}, pa[] = {1, 2}, lb[] = {6}, pb[] = {3};
  Lance__Table__BlobReuseSource *srcs[] = {source(&a, DEDICATED_STEM, 0, 0, la, pa, 2),
                                           source(&b, "dirx", 1, 9, lb, pb, 1)};
  Lance__Table__BlobReuseIndex bri;
  lance__table__blob_reuse_index__init(&bri);
  bri.sources = srcs, bri.n_sources = 2;
  ck_assert_int_eq(bri_datafile_set_bri(e.packed, &bri, &err), 0);

  bri_blob_resolver *r = resolver(&e, e.packed);
  size_t n;
  uint8_t *ded = slurp_rel(&e, "data/" DEDICATED_STEM "/" ID1, &n);
  expect_bytes(r, desc(BRI_BLOB_DEDICATED, 0, 4096, 5, NULL), ded, 4096);
  expect_bytes(r, desc(BRI_BLOB_PACKED, 4000, 96, 5, NULL), ded + 4000, 96);
  expect_bytes(r, desc(BRI_BLOB_PACKED, 9, 5, 6, NULL), (const uint8_t *)"three", 5);
  /* a miss is the identity under the file's own stem (docs/format/bri.md 4 step 3) */
  uint8_t *pack = slurp_rel(&e, "data/" PACKED_STEM "/" ID1, &n);
  expect_bytes(r, desc(BRI_BLOB_PACKED, 0, 1024, 1, NULL), pack, 1024);
  /* a hit whose physical sidecar is missing names the redirected path */
  expect_error(r, desc(BRI_BLOB_DEDICATED, 0, 1, 8, NULL), BRI_ECORRUPT,
               DEDICATED_STEM "/01000000000000000000000000000000.blob: sidecar does not exist",
               "blob id 8");
  char *p;
  ck_assert_int_eq(bri_blob_sidecar_path(r, 6, &p, &err), 0);
  ck_assert_str_eq(p, obj);
  free(p);
  bri_blob_resolver_close(r);
  free(ded);
  free(pack);
  e.m->pb->base_paths = NULL;
  e.m->pb->n_base_paths = 0;
  free(obj);
  free(dirx);
  free(other);
  teardown(&e);
}
END_TEST

START_TEST(test_external) {
  env e;
  setup(&e);
  char *dir = bri_path_join(e.tmp, "ext dir");
  ck_assert_int_eq(mkdir(dir, 0755), 0);
  char *obj = bri_path_join(dir, "obj.bin");
  bri_write_bytes(obj, "0123456789", 10);
  Lance__Table__BasePath bp, *bps[1] = {&bp};
  lance__table__base_path__init(&bp);
  bp.has_id = 1, bp.id = 4, bp.path = e.tmp;
  e.m->pb->base_paths = bps;
  e.m->pb->n_base_paths = 1;
  bri_blob_resolver *r = resolver(&e, e.packed);

  expect_bytes(r, desc(BRI_BLOB_EXTERNAL, 2, 3, 0, obj), (const uint8_t *)"234", 3);
  /* size 0: the whole object from position on */
  expect_bytes(r, desc(BRI_BLOB_EXTERNAL, 4, 0, 0, obj), (const uint8_t *)"456789", 6);
  expect_bytes(r, desc(BRI_BLOB_EXTERNAL, 10, 0, 0, obj), NULL, 0);
  char *uri = bri_strdupf("file://%s/ext%%20dir/obj.bin", e.tmp);
  expect_bytes(r, desc(BRI_BLOB_EXTERNAL, 0, 2, 0, uri), (const uint8_t *)"01", 2);
  /* relative to base 4 */
  expect_bytes(r, desc(BRI_BLOB_EXTERNAL, 8, 2, 4, "ext dir/obj.bin"), (const uint8_t *)"89", 2);

  expect_error(r, desc(BRI_BLOB_EXTERNAL, 8, 3, 0, obj), BRI_ECORRUPT, "obj.bin: external blob [8, +3)",
               "runs past the end of the object (10 bytes");
  expect_error(r, desc(BRI_BLOB_EXTERNAL, 11, 0, 0, obj), BRI_ECORRUPT, "starts at 11", NULL);
  expect_error(r, desc(BRI_BLOB_EXTERNAL, 0, 1, 0, "s3://bucket/key"), BRI_EUNSUPPORTED,
               PACKED_STEM ".lance: external blob URI \"s3://bucket/key\" uses scheme \"s3\"", NULL);
  expect_error(r, desc(BRI_BLOB_EXTERNAL, 0, 1, 0, "file://host/x"), BRI_EUNSUPPORTED,
               "names a remote host", NULL);
  expect_error(r, desc(BRI_BLOB_EXTERNAL, 0, 1, 0, "rel/path"), BRI_ECORRUPT,
               "has blob_id 0 but is not absolute", NULL);
  expect_error(r, desc(BRI_BLOB_EXTERNAL, 0, 1, 4, "ext dir/../../etc/passwd"), BRI_ECORRUPT,
               "relative to base 4 is not a plain relative path", NULL);
  expect_error(r, desc(BRI_BLOB_EXTERNAL, 0, 1, 4, "/etc/passwd"), BRI_ECORRUPT,
               "is not a plain relative path", NULL);
  expect_error(r, desc(BRI_BLOB_EXTERNAL, 0, 1, 5, "x"), BRI_ECORRUPT,
               "names base id 5, which the manifest does not define", NULL);
  expect_error(r, desc(BRI_BLOB_EXTERNAL, 0, 1, 0, ""), BRI_ECORRUPT, "empty", NULL);
  expect_error(r, desc(BRI_BLOB_EXTERNAL, 0, 1, 4, "missing.bin"), BRI_ECORRUPT,
               "missing.bin: external blob object does not exist", NULL);
  bri_blob_resolver_close(r);
  e.m->pb->base_paths = NULL;
  e.m->pb->n_base_paths = 0;
  free(uri);
  free(obj);
  free(dir);
  teardown(&e);
}
END_TEST

START_TEST(test_managed) {
  env e;
  setup(&e);
  char *blobs = bri_path_join(e.root, "_blobs");
  ck_assert_int_eq(mkdir(blobs, 0755), 0);
  char *obj = bri_path_join(blobs, "pack.blob");
  bri_write_bytes(obj, "abcdefghij", 10);
  char *other = bri_path_join(e.tmp, "other");
  ck_assert_int_eq(mkdir(other, 0755), 0);
  char *odir = bri_path_join(other, "_blobs");
  ck_assert_int_eq(mkdir(odir, 0755), 0);
  char *oobj = bri_path_join(odir, "x.blob");
  bri_write_bytes(oobj, "XYZ", 3);
  Lance__Table__BasePath bp, *bps[1] = {&bp};
  lance__table__base_path__init(&bp);
  bp.has_id = 1, bp.id = 3, bp.path = other, bp.has_is_dataset_root = 1, bp.is_dataset_root = 1;
  e.m->pb->base_paths = bps;
  e.m->pb->n_base_paths = 1;
  bri_blob_resolver *r = resolver(&e, e.packed);
  /* kind 4: below the data file's base root (the table's); kind 5: base 3 */
  expect_bytes(r, desc(BRI_BLOB_MANAGED, 2, 4, 0, "_blobs/pack.blob"), (const uint8_t *)"cdef", 4);
  expect_bytes(r, desc(BRI_BLOB_MANAGED_BASE, 1, 2, 3, "_blobs/x.blob"), (const uint8_t *)"YZ", 2);
  char *path;
  bri_error err;
  bri_blob_desc d = desc(BRI_BLOB_MANAGED, 0, 1, 0, "_blobs/pack.blob");
  ck_assert_int_eq(bri_blob_managed_path(r, &d, &path, &err), 0);
  ck_assert_str_eq(path, obj);
  free(path);
  /* an empty range names nothing to read: a missing object is not looked up */
  expect_bytes(r, desc(BRI_BLOB_MANAGED, 0, 0, 0, "_blobs/gone.blob"), NULL, 0);
  expect_error(r, desc(BRI_BLOB_MANAGED, 8, 3, 0, "_blobs/pack.blob"), BRI_ECORRUPT,
               "pack.blob: managed blob [8, +3) runs past the end of the object (10 bytes", PACKED_STEM);
  expect_error(r, desc(BRI_BLOB_MANAGED, 0, 1, 0, "_blobs/gone.blob"), BRI_ECORRUPT,
               "gone.blob: managed blob object does not exist", NULL);
  expect_error(r, desc(BRI_BLOB_MANAGED_BASE, 0, 1, 9, "_blobs/x.blob"), BRI_ECORRUPT, "base id 9 is not defined",
               PACKED_STEM);
  static const char *const hostile[] = {"/etc/passwd", "_blobs/../../etc/passwd", "_blobs//x", "./x",
                                        "s3://bucket/x", "_blobs\\x", "_blobs/", ""};
  for (size_t i = 0; i < sizeof hostile / sizeof *hostile; i++)
    expect_error(r, desc(BRI_BLOB_MANAGED, 0, 1, 0, hostile[i]), BRI_ECORRUPT,
                 PACKED_STEM ".lance: managed blob_uri", "is not a canonical relative path");
  expect_error(r, desc(6, 0, 1, 0, NULL), BRI_ECORRUPT, "unknown kind 6", "4 or 5 managed");
  bri_blob_resolver_close(r);
  e.m->pb->base_paths = NULL;
  e.m->pb->n_base_paths = 0;
  free(blobs), free(obj), free(other), free(odir), free(oobj);
  teardown(&e);
}
END_TEST

typedef struct sink {
  uint8_t *data;
  size_t len, chunks, max_chunk;
  int stop_after;
} sink;

static int sink_chunk(void *ctx, const uint8_t *data, size_t len, bri_error *err) {
  sink *s = ctx;
  if (s->stop_after && (int)s->chunks == s->stop_after)
    return bri_error_set(err, BRI_EIO, "consumer stopped");
  memcpy(s->data + s->len, data, len);
  s->len += len;
  s->chunks++;
  if (len > s->max_chunk) s->max_chunk = len;
  return 0;
}

START_TEST(test_stream) {
  env e;
  setup(&e);
  /* a 3 MiB + 5 dedicated sidecar, local id 2 of the packed file */
  size_t big = 3 * BRI_BLOB_CHUNK + 5;
  uint8_t *payload = malloc(big);
  for (size_t i = 0; i < big; i++) payload[i] = (uint8_t)(i * 7 + (i >> 13));
  char name[BRI_BLOB_NAME_LEN];
  bri_blob_file_name(2, name);
  char *p = bri_strdupf("%s/data/%s/%s", e.root, PACKED_STEM, name);
  bri_write_bytes(p, payload, big);
  bri_blob_resolver *r = resolver(&e, e.packed);
  bri_blob_desc d = desc(BRI_BLOB_DEDICATED, 0, big, 2, NULL);
  sink s = {malloc(big), 0, 0, 0, 0};
  bri_error err;
  ck_assert_int_eq(bri_blob_stream(r, &d, sink_chunk, &s, &err), 0);
  ck_assert_uint_eq(s.len, big);
  ck_assert_uint_eq(s.chunks, 4);
  ck_assert_uint_eq(s.max_chunk, BRI_BLOB_CHUNK);
  ck_assert(!memcmp(s.data, payload, big));
  /* the consumer can stop the stream; its error comes back */
  sink s2 = {malloc(big), 0, 0, 0, 2};
  ck_assert_int_eq(bri_blob_stream(r, &d, sink_chunk, &s2, &err), BRI_EIO);
  ck_assert_str_eq(err.msg, "consumer stopped");
  ck_assert_uint_eq(s2.len, 2 * BRI_BLOB_CHUNK);
  /* an empty payload calls nobody */
  sink s3 = {NULL, 0, 0, 0, 0};
  bri_blob_desc empty = desc(BRI_BLOB_INLINE, 5, 0, 0, NULL);
  ck_assert_int_eq(bri_blob_stream(r, &empty, sink_chunk, &s3, &err), 0);
  ck_assert_uint_eq(s3.chunks, 0);
  /* a whole read refuses what exceeds its limit */
  uint8_t *out;
  size_t len;
  ck_assert_int_eq(bri_blob_read(r, &d, 1000, &out, &len, &err), BRI_EUNSUPPORTED);
  ck_assert_msg(strstr(err.msg, "exceeds the 1000-byte limit"), "%s", err.msg);
  /* a sidecar that shrank after the descriptor was written */
  ck_assert_int_eq(truncate(p, 100), 0);
  bri_blob_desc packed = desc(BRI_BLOB_PACKED, 50, 60, 2, NULL);
  bri_blob_resolver_close(r);
  r = resolver(&e, e.packed);
  expect_error(r, packed, BRI_ECORRUPT, "runs past the end of the sidecar (100 bytes)", NULL);
  bri_blob_resolver_close(r);
  free(s.data);
  free(s2.data);
  free(payload);
  free(p);
  teardown(&e);
}
END_TEST

/* ------------------------------------------------------------ end to end */

typedef struct frag_res {
  bri_table *t;
  bri_manifest *m;
  bri_fragment_reader *rd;
  int32_t field;
  bri_blob_resolver *r;
} frag_res;

static int e2e_length(void *ctx, const char *path, const bri_blob_desc *d, uint64_t *len,
                      bri_error *err) {
  (void)path;
  frag_res *f = ctx;
  return bri_blob_length(f->r, d, len, err);
}

static int e2e_stream(void *ctx, const char *path, const bri_blob_desc *d, bri_blob_chunk_fn fn,
                      void *fn_ctx, bri_error *err) {
  (void)path;
  frag_res *f = ctx;
  return bri_blob_stream(f->r, d, fn, fn_ctx, err);
}

/* Hash of column `col` of the latest version, rows in scan order; returns the
 * error code (message in err) when a blob cannot be resolved. */
static int column_sha(const char *root, const char *col, char out[65], bri_error *err) {
  bri_table *t;
  bri_manifest *m;
  ck_assert_msg(bri_table_open(root, &t, err) == 0, "%s", err->msg);
  ck_assert_msg(bri_table_load(t, 0, &m, err) == 0, "%s", err->msg);
  int32_t field = -1;
  for (size_t i = 0; i < m->pb->n_fields; i++)
    if (!strcmp(m->pb->fields[i]->name, col) && m->pb->fields[i]->parent_id == -1)
      field = m->pb->fields[i]->id;
  ck_assert_int_ge(field, 0);
  bri_column_hasher *h = NULL;
  int rc = 0;
  for (size_t k = 0; !rc && k < m->pb->n_fragments; k++) {
    frag_res f = {t, m, NULL, field, NULL};
    struct ArrowArray a = {0};
    struct ArrowSchema s = {0};
    ck_assert_msg(bri_fragment_open(t, m, m->pb->fragments[k], &f.rd, err) == 0, "%s", err->msg);
    ck_assert_msg(bri_fragment_read_field(f.rd, field, &a, &s, err) == 0, "%s", err->msg);
    if (!h) ck_assert_int_eq(bri_column_hasher_new(&s, true, &h, err), 0);
    rc = bri_blob_resolver_open(t, m->pb, bri_fragment_field_datafile(f.rd, field), &f.r, err);
    bri_blob_source src = {e2e_length, e2e_stream, &f};
    if (!rc) rc = bri_column_hasher_add_range(h, &a, 0, a.length, &src, err);
    bri_blob_resolver_close(f.r);
    a.release(&a);
    s.release(&s);
    bri_fragment_close(f.rd);
  }
  bri_column_hash res;
  if (!rc) {
    ck_assert_int_eq(bri_column_hasher_finish(h, &res, err), 0);
    memcpy(out, res.sha256, 65);
  }
  bri_column_hasher_free(h);
  bri_manifest_free(m);
  bri_table_close(t);
  return rc;
}

START_TEST(test_bri_table_end_to_end) {
  env e;
  setup(&e);
  bri_error err = {0};
  char want[65], got[65];
  ck_assert_msg(column_sha(e.root, "blob", want, &err) == 0, "%s", err.msg);

  /* move both data files' sidecars into data/reuse_src: the pack keeps
   * physical id 1, the dedicated sidecar becomes physical id 2 */
  char *src_dir = bri_strdupf("%s/data/reuse_src", e.root);
  char *pack = bri_strdupf("%s/data/%s", e.root, PACKED_STEM);
  char *ded = bri_strdupf("%s/data/%s/%s", e.root, DEDICATED_STEM, ID1);
  char *ded_new = bri_strdupf("%s/01000000000000000000000000000000.blob", src_dir);
  ck_assert_int_eq(rename(pack, src_dir), 0);
  ck_assert_int_eq(rename(ded, ded_new), 0);

  /* the blob column can no longer be read from the stems */
  ck_assert_int_eq(column_sha(e.root, "blob", got, &err), BRI_ECORRUPT);
  ck_assert_msg(strstr(err.msg, "sidecar does not exist"), "%s", err.msg);

  /* rewrite the latest manifest with a BRI on each data file and the flag */
  src_buf a, b;
  const uint64_t l1[] = {1}, p1[] = {1}, p2[] = {2};
  Lance__Table__BlobReuseSource *sa[] = {source(&a, "reuse_src", 0, 0, l1, p1, 1)};
  Lance__Table__BlobReuseSource *sb[] = {source(&b, "reuse_src", 0, 0, l1, p2, 1)};
  Lance__Table__BlobReuseIndex ba, bb;
  lance__table__blob_reuse_index__init(&ba);
  lance__table__blob_reuse_index__init(&bb);
  ba.sources = sa, ba.n_sources = 1;
  bb.sources = sb, bb.n_sources = 1;
  ck_assert_int_eq(bri_datafile_set_bri(e.packed, &ba, &err), 0);
  ck_assert_int_eq(bri_datafile_set_bri(e.dedicated, &bb, &err), 0);
  e.m->pb->reader_feature_flags |= BRI_FLAG_BLOB_REUSE_INDEX;
  e.m->pb->writer_feature_flags |= BRI_FLAG_BLOB_REUSE_INDEX;
  uint8_t *buf;
  size_t len;
  ck_assert_int_eq(bri_manifest_serialize(e.m->pb, e.m->txn, e.m->indices, &buf, &len, &err), 0);
  char *mp = bri_table_manifest_path(e.t, bri_table_latest_version(e.t));
  bri_write_bytes(mp, buf, len);

  ck_assert_msg(column_sha(e.root, "blob", got, &err) == 0, "%s", err.msg);
  ck_assert_str_eq(got, want);
  free(buf);
  free(mp);
  free(src_dir), free(pack), free(ded), free(ded_new);
  teardown(&e);
}
END_TEST

static Suite *resolve_suite(void) {
  Suite *s = suite_create("resolve");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_inline);
  tcase_add_test(tc, test_packed_dedicated);
  tcase_add_test(tc, test_bri_redirect);
  tcase_add_test(tc, test_external);
  tcase_add_test(tc, test_managed);
  tcase_add_test(tc, test_stream);
  tcase_add_test(tc, test_bri_table_end_to_end);
  suite_add_tcase(s, tc);
  return s;
}

BRI_TEST_MAIN(resolve_suite)
