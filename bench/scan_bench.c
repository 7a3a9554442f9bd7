/* scan_bench.c: decode and hash throughput of brid's reader on one table.
 *
 *   scan_bench TABLE [--repeat N] [--no-hash]
 *
 * For every top-level column: reads it from every fragment with the fragment
 * reader (lib/lance/dataset/reader.h) and counts the bytes of the Arrow buffers
 * it produced (values, offsets, validity: the decoded size); then hashes the
 * arrays in scan order with the canonical column hasher (hash.h, payload
 * bytes of blob columns excluded). Prints per column and in total: decoded
 * MB, decode MB/s, hash MB/s, and the on-disk size of the data files, so the
 * figures can be compared with the files' size. Best of N repeats (page cache
 * warm after the first). A benchmark, not a test: it prints, and exits 1 on
 * any error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scan/hash.h"
#include "lance/dataset/reader.h"
#include "lance/table/table.h"
#include "util/fsutil.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int int_width(char c) {
  switch (c) {
  case 'c': case 'C': return 1;
  case 's': case 'S': case 'e': return 2;
  case 'i': case 'I': case 'f': return 4;
  case 'l': case 'L': case 'g': return 8;
  default: return 0;
  }
}

/* Bytes of the buffers of array a (elements [0, offset+length)). */
static uint64_t array_bytes(const struct ArrowSchema *s, const struct ArrowArray *a) {
  int64_t n = a->offset + a->length;
  const char *f = s->format;
  uint64_t b = (a->n_buffers > 0 && a->buffers[0]) ? (uint64_t)(n + 7) / 8 : 0;
  int w = f[1] ? 0 : int_width(f[0]);
  if (w) return b + (uint64_t)n * (uint64_t)w;
  if (!strcmp(f, "b")) return b + (uint64_t)(n + 7) / 8;
  if (!strcmp(f, "u") || !strcmp(f, "z") || !strcmp(f, "U") || !strcmp(f, "Z")) {
    int ow = (f[0] == 'U' || f[0] == 'Z') ? 8 : 4;
    uint64_t last = 0;
    if (n > 0) {
      if (ow == 4) {
        int32_t x;
        memcpy(&x, (const uint8_t *)a->buffers[1] + 4 * n, 4);
        last = (uint64_t)x;
      } else {
        int64_t x;
        memcpy(&x, (const uint8_t *)a->buffers[1] + 8 * n, 8);
        last = (uint64_t)x;
      }
    }
    return b + (uint64_t)(n + 1) * (uint64_t)ow + last;
  }
  if (!strncmp(f, "w:", 2)) return b + (uint64_t)n * (uint64_t)atoll(f + 2);
  if (!strncmp(f, "d:", 2)) return b + (uint64_t)n * (strstr(f, ",256") ? 32 : 16);
  if (f[0] == 't') return b + (uint64_t)n * ((!strcmp(f, "tdD") || !strcmp(f, "tts") || !strcmp(f, "ttm")) ? 4 : 8);
  if (!strcmp(f, "+l") || !strcmp(f, "+m")) b += (uint64_t)(n + 1) * 4;
  if (!strcmp(f, "+L")) b += (uint64_t)(n + 1) * 8;
  for (int64_t i = 0; i < a->n_children; i++) b += array_bytes(s->children[i], a->children[i]);
  return b;
}

int main(int argc, char **argv) {
  const char *table = NULL;
  int repeat = 3, do_hash = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--no-hash")) do_hash = 0;
    else table = argv[i];
  }
  if (!table || repeat < 1) {
    fprintf(stderr, "usage: scan_bench TABLE [--repeat N] [--no-hash]\n");
    return 1;
  }
  bri_error err = {0};
  bri_table *t;
  bri_manifest *m;
  if (bri_table_open(table, &t, &err) || bri_table_load(t, 0, &m, &err)) {
    fprintf(stderr, "scan_bench: %s\n", err.msg);
    return 1;
  }
  const Lance__Table__Manifest *pb = m->pb;
  size_t nf = pb->n_fragments;
  bri_fragment_reader **rd = calloc(nf ? nf : 1, sizeof *rd);
  struct ArrowArray *arr = calloc(nf ? nf : 1, sizeof *arr);
  struct ArrowSchema *sch = calloc(nf ? nf : 1, sizeof *sch);
  uint64_t rows = 0, disk = 0;
  for (size_t k = 0; k < nf; k++) {
    if (bri_fragment_open(t, m, pb->fragments[k], &rd[k], &err)) {
      fprintf(stderr, "scan_bench: %s\n", err.msg);
      return 1;
    }
    rows += bri_fragment_num_rows(rd[k]);
    for (size_t d = 0; d < pb->fragments[k]->n_files; d++) {
      char *p;
      uint64_t sz;
      if (!bri_table_datafile_path(t, pb, pb->fragments[k]->files[d], &p, &err) &&
          !bri_file_size(p, &sz, &err))
        disk += sz;
      free(p);
    }
  }
  printf("table %s: %llu rows, %zu fragments, %.1f MB of data files\n", table,
         (unsigned long long)rows, nf, (double)disk / 1e6);
  printf("%-14s %10s %12s %12s\n", "column", "decoded MB", "decode MB/s", "hash MB/s");
  double tot_dec = 0, tot_hash = 0;
  uint64_t tot_bytes = 0;
  for (size_t i = 0; i < pb->n_fields; i++) {
    if (pb->fields[i]->parent_id != -1) continue;
    int32_t id = pb->fields[i]->id;
    double best_dec = 1e30, best_hash = 1e30;
    uint64_t bytes = 0;
    for (int r = 0; r < repeat; r++) {
      double t0 = now();
      bytes = 0;
      for (size_t k = 0; k < nf; k++) {
        if (bri_fragment_read_field(rd[k], id, &arr[k], &sch[k], &err)) {
          fprintf(stderr, "scan_bench: column %s: %s\n", pb->fields[i]->name, err.msg);
          return 1;
        }
        bytes += array_bytes(&sch[k], &arr[k]);
      }
      double t1 = now();
      if (t1 - t0 < best_dec) best_dec = t1 - t0;
      if (do_hash && nf) {
        bri_column_hasher *h;
        bri_column_hash res;
        /* payloads of blob columns are I/O, not decoding: hashed as kind+size */
        if (bri_column_hasher_new(&sch[0], false, &h, &err)) {
          fprintf(stderr, "scan_bench: %s\n", err.msg);
          return 1;
        }
        for (size_t k = 0; k < nf; k++)
          if (bri_column_hasher_add_range(h, &arr[k], 0, arr[k].length, NULL, &err)) {
            fprintf(stderr, "scan_bench: %s\n", err.msg);
            return 1;
          }
        bri_column_hasher_finish(h, &res, &err);
        bri_column_hasher_free(h);
        double t2 = now();
        if (t2 - t1 < best_hash) best_hash = t2 - t1;
      }
      for (size_t k = 0; k < nf; k++) {
        arr[k].release(&arr[k]);
        sch[k].release(&sch[k]);
      }
    }
    tot_dec += best_dec;
    tot_hash += do_hash ? best_hash : 0;
    tot_bytes += bytes;
    printf("%-14s %10.1f %12.0f %12.0f\n", pb->fields[i]->name, (double)bytes / 1e6,
           (double)bytes / 1e6 / best_dec, do_hash ? (double)bytes / 1e6 / best_hash : 0.0);
  }
  printf("%-14s %10.1f %12.0f %12.0f   (decode %.3f s, hash %.3f s; %.0f disk MB/s decoded)\n",
         "TOTAL", (double)tot_bytes / 1e6, (double)tot_bytes / 1e6 / tot_dec,
         do_hash ? (double)tot_bytes / 1e6 / tot_hash : 0.0, tot_dec, tot_hash,
         (double)disk / 1e6 / tot_dec);
  for (size_t k = 0; k < nf; k++) bri_fragment_close(rd[k]);
  free(rd), free(arr), free(sch);
  bri_manifest_free(m);
  bri_table_close(t);
  return 0;
}
