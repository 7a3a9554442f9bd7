/* fuzz_datafile.c: libFuzzer harness for the data file container reader.
 *
 * The input is a whole .lance file image, opened from memory with
 * bri_datafile_open_mem (the same code path as files on disk). When it
 * opens, the harness checks the guarantees open promises (every page buffer
 * inside the data region, page rows adding up to the file's rows) and reads
 * every page buffer through bri_datafile_read, so that any bounds mistake
 * shows up under ASan. Seeds: tests/fuzz/corpus/datafile (real Lance 12 files). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lance/file/datafile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  bri_datafile *df = NULL;
  bri_error err;
  if (bri_datafile_open_mem(data, size, "fuzz.lance", &df, &err) != 0) {
    if (!strstr(err.msg, "fuzz.lance")) abort(); /* every message names the file */
    return 0;
  }
  uint64_t end = bri_datafile_footer_of(df)->column_meta_start;
  uint64_t rows = bri_datafile_num_rows(df);
  for (size_t c = 0; c < bri_datafile_num_columns(df); c++) {
    const bri_column *col = bri_datafile_column(df, c);
    uint64_t sum = 0;
    for (size_t p = 0; p < col->n_pages; p++) {
      const bri_page *pg = &col->pages[p];
      sum += pg->n_rows;
      if (!pg->layout || !bri_datafile_layout_name(pg->layout)) abort();
      for (size_t b = 0; b < pg->n_buffers; b++) {
        if (pg->buffer_offsets[b] + pg->buffer_sizes[b] > end || pg->buffer_offsets[b] % 64)
          abort();
        uint8_t *buf;
        if (bri_datafile_read(df, pg->buffer_offsets[b], pg->buffer_sizes[b], &buf, &err) != 0)
          abort();
        if (pg->buffer_sizes[b] && memcmp(buf, data + pg->buffer_offsets[b], pg->buffer_sizes[b]))
          abort();
        free(buf);
      }
    }
    if (sum != rows || col->n_rows != rows) abort();
  }
  bri_datafile_close(df);
  return 0;
}
