/* pagecopy.c: verbatim page copy from a data file into a writer
 * (pagecopy.h; docs/format/file.md section 9, Lance's binary_copy.rs rules).
 *
 * The schema check reuses the writer's own schema walk on the source file's
 * global buffer 0, so "same columns" means exactly what the writer means by
 * a column: same field id, logical type, nesting path (struct/list layers),
 * leaf type and offset width, at the same column index, in files with the
 * same number of columns. The writer remembers the source columns of the
 * last schema it checked, by the schema's bytes (datafile.h): the files of
 * a table share one schema, so a bin of many fragments builds it once, not
 * once per file and column. Copying streams each buffer through a 4 MiB
 * staging area. */
#include "lance/file/pagecopy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lance/file/writer_internal.h"

#define COPY_CHUNK ((size_t)4 << 20)

static bool same_column(const wcol *a, const wcol *b) {
  if (a->field_id != b->field_id || a->n_layers != b->n_layers || a->max_rep != b->max_rep ||
      a->blob_v2 != b->blob_v2 || a->offset_bits != b->offset_bits ||
      a->dict_key_bits != b->dict_key_bits ||
      strcmp(a->logical_type, b->logical_type) != 0)
    return false;
  if (memcmp(a->is_list, b->is_list, a->n_layers)) return false;
  for (size_t d = 0; d < a->n_steps; d++)
    if (a->steps[d].kind != b->steps[d].kind || a->steps[d].offset_bits != b->steps[d].offset_bits)
      return false;
  if (a->type.kind != b->type.kind || a->type.bits != b->type.bits ||
      a->type.n_dims != b->type.n_dims ||
      memcmp(a->type.dims, b->type.dims, a->type.n_dims * sizeof a->type.dims[0]))
    return false;
  return true;
}

/* A source schema's columns as the writer's schema walk makes them (no
 * file is made), and the schema bytes they were built from (NULL: none). */
struct bri_pagecopy_src {
  uint8_t *key;
  size_t key_len;
  bri_file_writer cols;
};

static void source_free(struct bri_pagecopy_src *s) {
  if (!s) return;
  for (size_t i = 0; i < s->cols.n_cols; i++) {
    bri_wvals_dispose(&s->cols.cols[i].vals);
    free(s->cols.cols[i].logical_type);
    free(s->cols.cols[i].path);
  }
  free(s->cols.cols);
  bri_writer_schema_dispose(&s->cols);
  free(s->key);
  free(s);
}

void bri_pagecopy_forget(bri_file_writer *w) {
  source_free(w->src);
  w->src = NULL;
}

/* The columns of src's schema: w's remembered ones when the schema bytes
 * are the same, else built (and remembered when src has schema bytes). The
 * caller frees *out unless it is w->src. */
static int source_columns(bri_file_writer *w, bri_datafile *src, struct bri_pagecopy_src **out,
                          bri_error *err) {
  *out = NULL;
  size_t len;
  const uint8_t *key = bri_datafile_schema_bytes(src, &len);
  if (key && w->src && w->src->key && w->src->key_len == len && !memcmp(w->src->key, key, len)) {
    *out = w->src;
    return 0;
  }
  const Lance__File__FileDescriptor *fd = bri_datafile_descriptor(src);
  if (!fd || !fd->schema)
    return bri_error_set(err, BRI_ECORRUPT, "%s: no schema in global buffer 0",
                         bri_datafile_path(src));
  struct bri_pagecopy_src *s = calloc(1, sizeof *s);
  if (!s) return bri_error_set(err, BRI_ENOMEM, "page copy: out of memory");
  s->cols.finished = true; /* owns no file */
  int rc = bri_writer_schema_build(&s->cols, fd->schema->fields, fd->schema->n_fields, err);
  if (rc) {
    bri_error_wrap(err, "%s", bri_datafile_path(src));
    source_free(s);
    return rc;
  }
  if (key && (s->key = malloc(len ? len : 1))) {
    memcpy(s->key, key, len);
    s->key_len = len;
    bri_pagecopy_forget(w);
    w->src = s;
  }
  *out = s;
  return 0;
}

int bri_pagecopy_check(bri_file_writer *w, size_t column, bri_datafile *src, size_t src_column,
                       bri_error *err) {
  const char *sp = bri_datafile_path(src);
  if (column >= w->n_cols)
    return bri_error_set(err, BRI_EINVAL, "page copy into %s: column %zu of %zu", w->path, column,
                         w->n_cols);
  if (src_column >= bri_datafile_num_columns(src))
    return bri_error_set(err, BRI_EINVAL, "page copy from %s: column %zu of %zu", sp, src_column,
                         bri_datafile_num_columns(src));
  uint16_t major, minor;
  bri_datafile_version(src, &major, &minor);
  if (major != 2 || minor != w->minor)
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "page copy from %s: file versions differ (source %u.%u, output 2.%u)", sp,
                         major, minor, w->minor);
  if (bri_datafile_num_columns(src) != w->n_cols)
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "page copy from %s: column counts differ (source %zu, output %zu)", sp,
                         bri_datafile_num_columns(src), w->n_cols);
  const wcol *c = &w->cols[column];
  if (c->blob_v2)
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "page copy from %s: column %zu (%s) stores Blob v2 descriptors, whose "
                         "Inline positions are absolute file offsets; re-encode it",
                         sp, column, c->path);
  struct bri_pagecopy_src *s;
  int rc = source_columns(w, src, &s, err);
  if (rc) {
    if (rc != BRI_EUNSUPPORTED && rc != BRI_EINVAL) return rc;
    char why[sizeof err->msg];
    snprintf(why, sizeof why, "%s", err ? err->msg : "");
    return bri_error_set(err, BRI_EUNSUPPORTED, "page copy: %s", why);
  }
  const bri_file_writer *tmp = &s->cols;
  bool same = tmp->n_cols == w->n_cols && src_column < tmp->n_cols &&
              same_column(&tmp->cols[src_column], c);
  char sdesc[256] = "";
  if (!same && src_column < tmp->n_cols)
    snprintf(sdesc, sizeof sdesc, "%s (id %d, %s)", tmp->cols[src_column].path,
             tmp->cols[src_column].field_id, tmp->cols[src_column].logical_type);
  if (s != w->src) source_free(s);
  if (!same)
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "page copy from %s: schemas differ: source column %zu is %s, output "
                         "column %zu is %s (id %d, %s)",
                         sp, src_column, sdesc[0] ? sdesc : "?", column, c->path, c->field_id,
                         c->logical_type);
  const bri_column *col = bri_datafile_column(src, src_column);
  if (!col)
    return bri_error_set(err, BRI_EINVAL, "page copy from %s: column %zu was not opened", sp,
                         src_column);
  /* a field brid does not know may describe the page bytes: re-encode */
  if (col->foreign)
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "page copy from %s: column %zu's metadata has fields brid does not know", sp,
                         src_column);
  if (col->n_buffers)
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "page copy from %s: column %zu has %zu column-level buffers", sp,
                         src_column, col->n_buffers);
  for (size_t p = 0; p < col->n_pages; p++) {
    const bri_page *pg = &col->pages[p];
    const Lance__Encodings21__PageLayout *l = pg->layout;
    if (l->layout_case == LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_BLOB_LAYOUT)
      return bri_error_set(err, BRI_EUNSUPPORTED,
                           "page copy from %s: page %zu of column %zu is a legacy BlobLayout page "
                           "(its descriptors hold absolute file offsets)",
                           sp, p, src_column);
    if (l->layout_case == LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_FULL_ZIP_LAYOUT &&
        l->full_zip_layout->value_compression &&
        l->full_zip_layout->value_compression->compression_case ==
            LANCE__ENCODINGS21__COMPRESSIVE_ENCODING__COMPRESSION_VARIABLE_PACKED_STRUCT)
      return bri_error_set(err, BRI_EUNSUPPORTED,
                           "page copy from %s: page %zu of column %zu holds Blob v2 descriptors "
                           "(Inline positions are absolute file offsets)",
                           sp, p, src_column);
    if (l->layout_case != LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_MINI_BLOCK_LAYOUT &&
        l->layout_case != LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_FULL_ZIP_LAYOUT &&
        l->layout_case != LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_CONSTANT_LAYOUT)
      return bri_error_set(err, BRI_EUNSUPPORTED,
                           "page copy from %s: page %zu of column %zu has layout %s", sp, p,
                           src_column, bri_datafile_layout_name(l));
    if (pg->n_buffers > BRI_ENC_MAX_BUFFERS)
      return bri_error_set(err, BRI_EUNSUPPORTED,
                           "page copy from %s: page %zu of column %zu has %zu buffers", sp, p,
                           src_column, pg->n_buffers);
  }
  return 0;
}

int bri_file_writer_copy_column(bri_file_writer *w, size_t column, bri_datafile *src,
                                size_t src_column, bri_error *err) {
  if (w->failed || w->finished)
    return bri_error_set(err, BRI_EINVAL, "%s: the writer is %s", w->path,
                         w->failed ? "failed" : "finished");
  int rc = bri_pagecopy_check(w, column, src, src_column, err);
  if (rc) return rc;
  wcol *c = &w->cols[column];
  if ((rc = bri_writer_flush_column(w, c, err))) return rc;
  if (w->scratch_cap < COPY_CHUNK) {
    uint8_t *p = realloc(w->scratch, COPY_CHUNK);
    if (!p) return bri_error_set(err, BRI_ENOMEM, "page copy: out of memory");
    w->scratch = p;
    w->scratch_cap = COPY_CHUNK;
  }
  const bri_column *col = bri_datafile_column(src, src_column);
  const uint64_t base = c->rows_written;
  for (size_t p = 0; p < col->n_pages; p++) {
    const bri_page *pg = &col->pages[p];
    uint64_t offs[BRI_ENC_MAX_BUFFERS];
    for (size_t b = 0; b < pg->n_buffers; b++) {
      offs[b] = w->pos;
      uint64_t at = pg->buffer_offsets[b], left = pg->buffer_sizes[b];
      while (left) {
        size_t k = left < COPY_CHUNK ? (size_t)left : COPY_CHUNK;
        if ((rc = bri_datafile_read_into(src, at, k, w->scratch, err)) ||
            (rc = bri_writer_put_raw(w, w->scratch, k, err)))
          return bri_writer_fail(w, rc);
        at += k;
        left -= k;
      }
      if ((rc = bri_writer_pad(w, err))) return bri_writer_fail(w, rc);
    }
    uint8_t *enc = malloc(pg->encoding_len ? pg->encoding_len : 1);
    if (!enc) return bri_writer_fail(w, bri_error_set(err, BRI_ENOMEM, "page copy: out of memory"));
    memcpy(enc, pg->encoding_bytes, pg->encoding_len);
    /* Lance binary copy: new priority = old priority + rows already in the output */
    if ((rc = bri_writer_add_page(w, c, pg->n_rows, pg->priority + base, offs, pg->buffer_sizes,
                                  pg->n_buffers, enc, pg->encoding_len, err)))
      return bri_writer_fail(w, rc);
  }
  return 0;
}
