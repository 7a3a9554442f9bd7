/* write_bench.c: throughput of brid's data file writer and page copy.
 *
 * Builds an in-memory table (Arrow C Data arrays: int64 ids, float64 noise,
 * nullable int32, short utf8, list<int32> with empties, fixed_size_list
 * <float32, 8>) of ROWS rows (default 2,000,000) and measures, on the local
 * filesystem of DIR:
 *   encode   bri_file_writer_append of the whole table in 64k-row batches
 *            (Arrow -> levels -> pages -> file, fsync included);
 *   reencode every page of that file decoded (bri_page_decode) and encoded
 *            again (bri_file_writer_append_leaf);
 *   copy     every column copied page by page (bri_file_writer_copy_column)
 *            from the encoded file, twice, into one new file.
 * MB/s are bytes of the output file per second of wall time (for encode,
 * also Arrow input bytes per second). Usage: write_bench DIR [ROWS] [2.1|2.2] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lance/encoding/page.h"
#include "lance/file/datafile.h"
#include "lance/file/pagecopy.h"
#include "lance/file/writer.h"
#include "util/fsutil.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what, const bri_error *err) {
  fprintf(stderr, "write_bench: %s: %s\n", what, err->msg);
  exit(1);
}

static Lance__File__Field F[8];
static Lance__File__Field *FP[8];
static size_t NF;
static void fld(const char *name, int id, int parent, const char *lt, int nullable) {
  Lance__File__Field *f = &F[NF];
  lance__file__field__init(f);
  f->name = (char *)name;
  f->has_id = id != 0, f->id = id;
  f->has_parent_id = 1, f->parent_id = parent;
  f->logical_type = (char *)lt;
  f->has_nullable = nullable, f->nullable = nullable;
  FP[NF] = f;
  NF++;
}

typedef struct col {
  struct ArrowArray a, child;
  const void *bufs[3], *cbufs[3];
  struct ArrowArray *kids[1];
} col;

static void prim(col *c, int64_t n, const void *validity, int64_t nulls, const void *data) {
  memset(c, 0, sizeof *c);
  c->bufs[0] = validity, c->bufs[1] = data;
  c->a.length = n, c->a.null_count = nulls, c->a.n_buffers = 2, c->a.buffers = c->bufs;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: write_bench DIR [ROWS] [2.1|2.2]\n");
    return 2;
  }
  const char *dir = argv[1];
  int64_t rows = argc > 2 ? atoll(argv[2]) : 2000000;
  uint16_t minor = argc > 3 && !strcmp(argv[3], "2.1") ? 1 : 2;
  fld("id", 0, -1, "int64", 0);
  fld("f64", 1, -1, "double", 0);
  fld("n32", 2, -1, "int32", 1);
  fld("s", 3, -1, "string", 0);
  fld("l", 4, -1, "list", 1);
  fld("item", 5, 4, "int32", 0);
  fld("vec", 6, -1, "fixed_size_list:float:8", 0);

  /* the table */
  int64_t *ids = malloc(rows * 8);
  double *f64 = malloc(rows * 8);
  int32_t *n32 = malloc(rows * 4);
  uint8_t *valid = calloc((size_t)rows / 8 + 1, 1);
  int32_t *soff = malloc((rows + 1) * 4), *loff = malloc((rows + 1) * 4);
  char *sdata = malloc((size_t)rows * 16);
  int32_t *items = malloc((size_t)rows * 4 * 4);
  float *vec = malloc((size_t)rows * 8 * 4);
  uint64_t seed = 42, in_bytes = 0;
  int64_t nulls = 0, nitems = 0;
  soff[0] = loff[0] = 0;
  for (int64_t i = 0; i < rows; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    ids[i] = i;
    f64[i] = (double)(seed >> 11) / 9007199254740992.0;
    n32[i] = (int32_t)(seed >> 40) % 100000;
    if (i % 7) valid[i / 8] |= (uint8_t)(1u << (i % 8));
    else nulls++;
    soff[i + 1] = soff[i] + snprintf(sdata + soff[i], 16, "row%lld", (long long)(i % 1000003));
    int k = (int)(seed >> 60) % 5;
    for (int j = 0; j < k; j++) items[nitems++] = (int32_t)(i + j);
    loff[i + 1] = (int32_t)nitems;
    for (int j = 0; j < 8; j++) vec[i * 8 + j] = (float)(i + j);
  }
  in_bytes = (uint64_t)rows * (8 + 8 + 4 + 4 + 4 + 32) + (uint64_t)soff[rows] + (uint64_t)nitems * 4;

  char *enc = bri_strdupf("%s/bench-enc-%d.lance", dir, (int)getpid());
  char *re = bri_strdupf("%s/bench-re-%d.lance", dir, (int)getpid());
  char *cp = bri_strdupf("%s/bench-copy-%d.lance", dir, (int)getpid());
  bri_error err;
  bri_file_writer *w;
  bri_file_result res;

  /* encode */
  double t0 = now();
  if (bri_file_writer_open(NULL, enc, minor, FP, NF, NULL, &w, &err)) die("open", &err);
  const int64_t B = 65536;
  for (int64_t s = 0; s < rows; s += B) {
    int64_t n = rows - s < B ? rows - s : B;
    col c[6];
    prim(&c[0], n, NULL, 0, ids + s);
    prim(&c[1], n, NULL, 0, f64 + s);
    prim(&c[2], n, valid, nulls ? -1 : 0, n32);
    c[2].a.offset = s;
    c[2].a.length = n;
    c[2].bufs[1] = n32;
    prim(&c[3], n, NULL, 0, soff + s);
    c[3].a.n_buffers = 3;
    c[3].bufs[2] = sdata;
    prim(&c[4], n, NULL, 0, loff + s);
    c[4].child.length = nitems, c[4].child.n_buffers = 2, c[4].child.buffers = c[4].cbufs;
    c[4].cbufs[1] = items;
    c[4].kids[0] = &c[4].child;
    c[4].a.n_children = 1, c[4].a.children = c[4].kids;
    memset(&c[5], 0, sizeof c[5]);
    c[5].bufs[0] = NULL;
    c[5].a.length = n, c[5].a.n_buffers = 1, c[5].a.buffers = c[5].bufs;
    c[5].child.length = rows * 8, c[5].child.n_buffers = 2, c[5].child.buffers = c[5].cbufs;
    c[5].cbufs[1] = vec;
    c[5].a.offset = s;
    c[5].kids[0] = &c[5].child;
    c[5].a.n_children = 1, c[5].a.children = c[5].kids;
    const struct ArrowArray *ap[6] = {&c[0].a, &c[1].a, &c[2].a, &c[3].a, &c[4].a, &c[5].a};
    if (bri_file_writer_append(w, ap, 6, NULL, NULL, &err)) die("append", &err);
  }
  if (bri_file_writer_finish(w, &res, &err)) die("finish", &err);
  bri_file_writer_free(w);
  double t_enc = now() - t0;
  uint64_t enc_size = res.file_size;
  bri_file_result_dispose(&res);
  printf("encode   %lld rows (2.%u): %.1f MB Arrow in, %.1f MB out in %.3f s: %.0f MB/s in, "
         "%.0f MB/s out\n",
         (long long)rows, minor, in_bytes / 1e6, enc_size / 1e6, t_enc, in_bytes / t_enc / 1e6,
         enc_size / t_enc / 1e6);

  /* decode + re-encode */
  bri_datafile *src;
  if (bri_datafile_open(NULL, enc, &src, &err)) die("open source", &err);
  t0 = now();
  if (bri_file_writer_open(NULL, re, minor, FP, NF, NULL, &w, &err)) die("open", &err);
  for (size_t c = 0; c < bri_file_writer_num_columns(w); c++) {
    const bri_column *cl = bri_datafile_column(src, c);
    for (size_t p = 0; p < cl->n_pages; p++) {
      bri_leaf_page lp;
      if (bri_page_decode(src, c, p, bri_file_writer_column_type(w, c), &lp, &err)) die("decode", &err);
      if (bri_file_writer_append_leaf(w, c, &lp, NULL, NULL, &err)) die("append_leaf", &err);
      bri_leaf_page_dispose(&lp);
    }
  }
  if (bri_file_writer_finish(w, &res, &err)) die("finish", &err);
  bri_file_writer_free(w);
  double t_re = now() - t0;
  printf("reencode %.1f MB in %.3f s: %.0f MB/s (decode + encode)\n", res.file_size / 1e6, t_re,
         res.file_size / t_re / 1e6);
  bri_file_result_dispose(&res);

  /* page copy, twice */
  t0 = now();
  if (bri_file_writer_open(NULL, cp, minor, FP, NF, NULL, &w, &err)) die("open", &err);
  for (int k = 0; k < 2; k++)
    for (size_t c = 0; c < bri_file_writer_num_columns(w); c++)
      if (bri_file_writer_copy_column(w, c, src, c, &err)) die("copy", &err);
  if (bri_file_writer_finish(w, &res, &err)) die("finish", &err);
  bri_file_writer_free(w);
  double t_cp = now() - t0;
  printf("copy     %.1f MB in %.3f s: %.0f MB/s (page copy, fsync included)\n", res.file_size / 1e6,
         t_cp, res.file_size / t_cp / 1e6);
  bri_file_result_dispose(&res);
  bri_datafile_close(src);
  unlink(enc), unlink(re), unlink(cp);
  free(enc), free(re), free(cp);
  free(ids), free(f64), free(n32), free(valid), free(soff), free(loff), free(sdata), free(items),
      free(vec);
  return 0;
}
