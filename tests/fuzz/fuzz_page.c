/* fuzz_page.c: libFuzzer harness for the page decoder (lib/lance/encoding).
 *
 * Input framing (all integers little-endian):
 *   u8   type      leaf type selector:
 *                    bits 0..2 kind: 0-3 fixed, 4 variable, 5 Blob v2
 *                              descriptor, 6 legacy blob, 7 fixed-size list
 *                    bits 3..5 element width: 1, 8, 16, 32, 64, 128, 24, 2080 bits
 *                    bits 6..7 FSL dimension (kind 7): 2, 3, 4, 70
 *   u8   minor     file version minor (2.1 / 2.2)
 *   u32  n_rows    Page.length
 *   u16  L         then L bytes: a serialized lance.encodings21.PageLayout
 *   u8   N         number of page buffers (taken mod 9), then per buffer:
 *   u32  size      then min(size, bytes left) bytes
 * Inputs that do not parse this far, or whose PageLayout does not unpack, are
 * ignored. The decoder runs with a 32 MiB output limit; on success the
 * harness checks the bri_leaf_page invariants page.h promises (offsets
 * monotone and in range, slot count = visible levels, levels within the
 * maxima), on failure that the message names the page.
 *
 * Seeds (tests/fuzz/corpus/page) are real pages of the encoding fixtures;
 * rebuild them with:
 *   cc -DFUZZ_PAGE_SEEDS -std=c11 -D_GNU_SOURCE -Ilib -Ibuild/gen \
 *      tests/fuzz/fuzz_page.c build/libbri.a $(pkg-config --libs libprotobuf-c libcurl expat \
 *      libzstd liblz4) -o /tmp/seeds && /tmp/seeds tests/fuzz/corpus/page */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encodings_v2_1.pb-c.h"
#include "lance/encoding/page.h"
#include "util/bytes.h"

static const uint32_t WIDTHS[8] = {1, 8, 16, 32, 64, 128, 24, 2080};
static const uint32_t DIMS[4] = {2, 3, 4, 70};

static void make_type(uint8_t sel, bri_leaf_type *t) {
  memset(t, 0, sizeof *t);
  unsigned kind = sel & 7;
  t->bits = WIDTHS[(sel >> 3) & 7];
  if (kind < 4) {
    t->kind = BRI_LEAF_FIXED;
  } else if (kind == 4) {
    t->kind = BRI_LEAF_VARIABLE;
  } else if (kind == 5) {
    *t = *bri_leaf_type_blob_v2();
  } else if (kind == 6) {
    t->kind = BRI_LEAF_LEGACY_BLOB;
  } else {
    t->kind = BRI_LEAF_FIXED;
    t->n_dims = 1;
    t->dims[0] = DIMS[sel >> 6];
    if (t->bits == 2080) t->bits = 32;
  }
}

static void check_values(const bri_values *v) {
  if (v->kind == BRI_LEAF_VARIABLE) {
    if (!v->offsets || v->offsets[0] != 0) abort();
    for (uint64_t i = 0; i < v->n; i++)
      if (v->offsets[i + 1] < v->offsets[i]) abort();
    if ((uint64_t)v->offsets[v->n] != v->data_len) abort();
    if (v->data_len && !v->data) abort();
    volatile uint8_t sink = 0;
    if (v->data_len) sink ^= v->data[v->data_len - 1]; /* in bounds under ASan */
    (void)sink;
  } else if (v->kind == BRI_LEAF_FIXED) {
    uint64_t bits = v->n * v->elems_per_slot * v->bits;
    if (v->data_len != bits / 8 + (bits % 8 != 0)) abort();
    volatile uint8_t sink = 0;
    if (v->data_len) sink ^= v->data[v->data_len - 1];
    (void)sink;
  } else if (v->kind == BRI_LEAF_STRUCT) {
    for (size_t c = 0; c < v->n_children; c++) {
      if (v->children[c].n != v->n) abort();
      check_values(&v->children[c]);
    }
  } else {
    abort();
  }
}

static void check_page(const bri_leaf_page *p, uint64_t n_rows) {
  if (p->n_rows != n_rows) abort();
  uint64_t visible = 0, rows = 0;
  if (!p->rep && !p->def) visible = rows = p->n_levels;
  for (uint64_t i = 0; i < p->n_levels && (p->rep || p->def); i++) {
    if (p->rep && p->rep[i] > p->max_rep) abort();
    if (p->def && p->def[i] > p->max_def) abort();
    if (!p->def || p->def[i] <= p->max_visible_def) visible++;
    if (!p->rep || p->rep[i] == p->max_rep) rows++;
  }
  if (visible != p->values.n || rows != n_rows) abort();
  check_values(&p->values);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  bri_cursor c = bri_cursor_make(data, size);
  const uint8_t *h = bri_cursor_take(&c, 8);
  if (!h) return 0;
  bri_leaf_type type;
  make_type(h[0], &type);
  uint16_t minor = h[1];
  uint32_t n_rows = bri_le32(h + 2);
  size_t llen = bri_le16(h + 6);
  const uint8_t *lb = bri_cursor_take(&c, llen);
  if (!lb) return 0;
  Lance__Encodings21__PageLayout *layout = lance__encodings21__page_layout__unpack(NULL, llen, lb);
  if (!layout) return 0;
  const uint8_t *bufs[8] = {0};
  uint64_t sizes[8] = {0};
  size_t nb = 0;
  const uint8_t *nbp = bri_cursor_take(&c, 1);
  if (nbp) {
    nb = nbp[0] % 9;
    for (size_t i = 0; i < nb; i++) {
      const uint8_t *sp = bri_cursor_take(&c, 4);
      uint32_t want = sp ? bri_le32(sp) : 0;
      size_t take = want < bri_cursor_left(&c) ? want : bri_cursor_left(&c);
      bufs[i] = bri_cursor_take(&c, take);
      sizes[i] = take;
    }
  }
  bri_page_input in = {.where = "fuzz.lance: page 0 of column 0",
                       .file_minor = minor,
                       .n_rows = n_rows,
                       .layout = layout,
                       .n_buffers = nb,
                       .buffers = bufs,
                       .buffer_sizes = sizes};
  bri_page_limits lim = {32u << 20};
  bri_leaf_page page;
  bri_error err;
  int rc = bri_page_decode_buffers(&in, &type, &lim, &page, &err);
  if (rc == 0) {
    check_page(&page, n_rows);
  } else {
    if (strncmp(err.msg, "fuzz.lance: page 0 of column 0: ", 32) != 0) abort();
    if (page.rep || page.def || page.values.data || page.values.offsets) abort();
  }
  bri_leaf_page_dispose(&page);
  lance__encodings21__page_layout__free_unpacked(layout, NULL);
  return 0;
}

#ifdef FUZZ_PAGE_SEEDS
/* Writes one seed per page of the encoding fixtures (small pages only). */
#include "lance/file/datafile.h"

static const struct {
  const char *file;
  const char *types; /* one selector per column, see make_type */
} FIXTURES[] = {
    /* selectors: 0x20 = fixed 64 ... built as (width_index << 3) | kind */
    {"prim-2.1.lance", "\x20\x08\x10\x18\x18\x01\x01\x10\x18\x30\x04\x04\x04\x04\x20\x18\x04\x04"},
    {"prim-2.2.lance", "\x20\x08\x10\x18\x18\x01\x01\x10\x18\x30\x04\x04\x04\x04\x20\x18\x04\x04"},
    {"wide-2.2.lance", "\x20\x28\x20\x04\x9f\x5f\x20\x20"},
    {"nested-2.1.lance", "\x18\x18\x18\x04\x18\x18\x04\x18\x18"},
    {"nested-2.2.lance", "\x18\x18\x18\x04\x18\x18\x04\x18\x18"},
    {"biglist-2.2.lance", "\x18"},
    {"consts-2.1.lance", "\x18\x20\x20\x01\x18\x18\x04\x04\x18\x04\x18\x04\x18\x18\x04\x04"},
    {"consts-2.2.lance", "\x18\x20\x20\x01\x18\x18\x04\x04\x18\x04\x18\x04\x18\x18\x04\x04"},
    {"fullzip-2.2.lance", "\x04\x04\x04\x38\xdf\x04"},
    {"legacyblob-2.1.lance", "\x06"},
    {"blobs-2.2.lance", "\x20\x05"},
};

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  int n = 0;
  for (size_t f = 0; f < sizeof FIXTURES / sizeof *FIXTURES; f++) {
    char path[512];
    snprintf(path, sizeof path, "tests/fixtures/encoding/%s", FIXTURES[f].file);
    bri_datafile *df;
    bri_error err;
    if (bri_datafile_open(NULL, path, &df, &err)) {
      fprintf(stderr, "%s\n", err.msg);
      return 1;
    }
    for (size_t col = 0; col < bri_datafile_num_columns(df) && FIXTURES[f].types[col]; col++) {
      const bri_page *pg = &bri_datafile_column(df, col)->pages[0];
      uint64_t total = 0;
      for (size_t b = 0; b < pg->n_buffers; b++) total += pg->buffer_sizes[b];
      if (total > 6000 || pg->n_buffers > 8) continue;
      size_t llen = lance__encodings21__page_layout__get_packed_size(pg->layout);
      uint8_t *out = malloc(8 + llen + 1 + pg->n_buffers * 4 + total);
      size_t pos = 0;
      out[pos++] = (uint8_t)FIXTURES[f].types[col];
      uint16_t major, minor;
      bri_datafile_version(df, &major, &minor);
      out[pos++] = (uint8_t)minor;
      bri_put_le32(out + pos, (uint32_t)pg->n_rows);
      pos += 4;
      bri_put_le16(out + pos, (uint16_t)llen);
      pos += 2;
      pos += lance__encodings21__page_layout__pack(pg->layout, out + pos);
      out[pos++] = (uint8_t)pg->n_buffers;
      for (size_t b = 0; b < pg->n_buffers; b++) {
        uint8_t *buf;
        if (bri_datafile_read(df, pg->buffer_offsets[b], pg->buffer_sizes[b], &buf, &err)) return 1;
        bri_put_le32(out + pos, (uint32_t)pg->buffer_sizes[b]);
        pos += 4;
        memcpy(out + pos, buf, pg->buffer_sizes[b]);
        pos += pg->buffer_sizes[b];
        free(buf);
      }
      /* every seed must decode cleanly */
      if (LLVMFuzzerTestOneInput(out, pos)) return 1;
      snprintf(path, sizeof path, "%s/%.*s-c%zu", argv[1],
               (int)(strlen(FIXTURES[f].file) - 6), FIXTURES[f].file, col);
      FILE *fp = fopen(path, "wb");
      if (!fp || fwrite(out, 1, pos, fp) != pos || fclose(fp)) return 1;
      free(out);
      n++;
    }
    bri_datafile_close(df);
  }
  fprintf(stderr, "%d seeds\n", n);
  return 0;
}
#endif
