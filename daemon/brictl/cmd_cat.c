/* cmd_cat.c: `brictl cat TABLE --column C --row ROWID [--version N]`:
 * writes the payload of one Blob v2 value to stdout, the bytes LanceDB's
 * Table.fetchBlobs returns for it.
 *
 * ROWID is a row address, fragment id << 32 | physical row offset (LanceDB's
 * _rowid for tables without stable row ids, its _rowaddr otherwise). C is a
 * top-level column or a dotted path through structs ("st.b"). Only that one
 * row of that one field is decoded (bri_fragment_read_rows), and the payload
 * is streamed in bounded chunks, so a 1 GiB blob costs 1 MiB of memory.
 * Binary and string columns (legacy blob v1 columns read as large_binary)
 * print their raw value. Exit 0 on success, 1 on usage errors, 2 when the
 * row is deleted or missing, the value is null, or a file cannot be read. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blob/resolve.h"
#include "cli.h"
#include "lance/dataset/reader.h"
#include "lance/core/schema.h"
#include "lance/table/table.h"
#include "util/fsutil.h"

static const cli_opt OPTS[] = {
    {.name = "column", .type = CLI_STRING, .value = "C", .help = "the column: top level, or a dotted path through structs"},
    {.name = "row", .type = CLI_UINT, .value = "ROWID", .help = "the row address: fragment id << 32 | offset"},
    {.name = "version", .type = CLI_UINT, .value = "N", .min = 1, .help = "read table version N",
     .def_note = "the latest"},
    {0},
};

static int write_chunk(void *ctx, const uint8_t *data, size_t len, bri_error *err) {
  (void)ctx;
  if (fwrite(data, 1, len, stdout) != len)
    return bri_error_set(err, BRI_EIO, "writing to stdout: %s", strerror(errno));
  return 0;
}

static bool valid_bit(const struct ArrowArray *a, int64_t i) {
  if (a->null_count == 0 || a->n_buffers < 1 || !a->buffers[0]) return true;
  int64_t j = a->offset + i;
  return (((const uint8_t *)a->buffers[0])[j >> 3] >> (j & 7)) & 1;
}

/* Finds the manifest field at dotted path (each step a child by name). */
static long find_path(const Lance__Table__Manifest *m, const char *path) {
  for (size_t i = 0; i < m->n_fields; i++) {
    char *p = bri_field_path(m->fields, m->n_fields, i);
    int same = p && !strcmp(p, path);
    free(p);
    if (same) return (long)i;
  }
  return -1;
}

static int cmd_cat(const cli_args *args) {
  const char *table = args->pos[0], *column = cli_text(args, "column");
  unsigned long long rowid = cli_uint(args, "row"), version = cli_uint(args, "version");
  if (!column) return cli_usage(args, "--column is required");
  if (!cli_given(args, "row")) return cli_usage(args, "--row is required");

  bri_error err = {0};
  bri_table *t = NULL;
  bri_manifest *mf = NULL;
  bri_fragment_reader *rd = NULL;
  bri_blob_resolver *res = NULL;
  struct ArrowArray arr = {0};
  struct ArrowSchema sch = {0};
  uint64_t frag_id = rowid >> 32;
  uint32_t offset = (uint32_t)rowid;
  int rc = bri_table_open(table, &t, &err);
  if (!rc) rc = bri_table_load(t, version, &mf, &err);
  const Lance__Table__Manifest *m = rc ? NULL : mf->pb;
  long fi = -1, top = -1;
  if (!rc) {
    fi = find_path(m, column);
    if (fi < 0)
      rc = bri_error_set(&err, BRI_ENOTFOUND, "%s: version %llu has no column %s", table,
                         (unsigned long long)m->version, column);
  }
  /* the top-level field above it, through structs only */
  for (long i = fi; !rc && i >= 0;) {
    top = i;
    if (m->fields[i]->parent_id == -1) break;
    long p = bri_field_index(m->fields, m->n_fields, m->fields[i]->parent_id);
    if (p < 0 || !m->fields[p]->logical_type || strcmp(m->fields[p]->logical_type, "struct") ||
        bri_field_is_blob_v2(m->fields[p]))
      rc = bri_error_set(&err, BRI_EUNSUPPORTED,
                         "%s: column %s is not reached through structs only (lists hold many "
                         "values per row)",
                         table, column);
    i = p;
  }
  const Lance__Table__DataFragment *frag = NULL;
  for (size_t k = 0; !rc && k < m->n_fragments; k++)
    if (m->fragments[k]->id == frag_id) frag = m->fragments[k];
  if (!rc && !frag)
    rc = bri_error_set(&err, BRI_ENOTFOUND, "%s: row %llu: version %llu has no fragment %llu",
                       table, rowid, (unsigned long long)m->version,
                       (unsigned long long)frag_id);
  if (!rc) rc = bri_fragment_open(t, mf, frag, &rd, &err);
  uint64_t idx = 0;
  if (!rc) { /* visible index of the physical offset (offsets ascend) */
    const uint32_t *offs = bri_fragment_row_offsets(rd);
    uint64_t lo = 0, hi = bri_fragment_num_rows(rd);
    while (lo < hi) {
      uint64_t mid = lo + (hi - lo) / 2;
      if (offs[mid] < offset) lo = mid + 1;
      else hi = mid;
    }
    if (lo >= bri_fragment_num_rows(rd) || offs[lo] != offset) {
      bool deleted = offset < bri_fragment_physical_rows(rd);
      rc = bri_error_set(&err, BRI_ENOTFOUND, "%s: row %llu (fragment %llu, offset %u) %s", table,
                         rowid, (unsigned long long)frag_id, offset,
                         deleted ? "is deleted" : "does not exist");
    }
    idx = lo;
  }
  if (!rc) rc = bri_fragment_read_rows(rd, m->fields[top]->id, idx, 1, &arr, &sch, &err);
  /* walk down the struct path to the field, checking validity on the way */
  const struct ArrowArray *a = &arr;
  const struct ArrowSchema *s = &sch;
  int64_t row = 0;
  bool null = false;
  if (!rc) {
    const char *rest = column + strlen(m->fields[top]->name);
    while (!rc && *rest == '.') {
      const char *name = rest + 1, *dot = strchr(name, '.');
      size_t n = dot ? (size_t)(dot - name) : strlen(name);
      if (!valid_bit(a, row)) null = true;
      int64_t k;
      for (k = 0; k < s->n_children; k++)
        if (s->children[k]->name && strlen(s->children[k]->name) == n &&
            !strncmp(s->children[k]->name, name, n))
          break;
      if (k == s->n_children) {
        rc = bri_error_set(&err, BRI_ECORRUPT, "%s: the reader returned no child %.*s for %s",
                           table, (int)n, name, column);
        break;
      }
      row += a->offset;
      a = a->children[k];
      s = s->children[k];
      rest = name + n;
    }
  }
  bri_blob_desc d;
  bool desc_null = false;
  if (!rc && !null && bri_field_is_blob_v2(m->fields[fi])) {
    rc = bri_blob_desc_get(s, a, row, &d, &desc_null, &err);
    if (!rc && !desc_null) {
      const Lance__Table__DataFile *df = bri_fragment_field_datafile(rd, m->fields[fi]->id);
      rc = df ? bri_blob_resolver_open(t, m, df, &res, &err)
              : bri_error_set(&err, BRI_ECORRUPT, "%s: fragment %llu stores no data for %s",
                              table, (unsigned long long)frag_id, column);
      if (!rc) rc = bri_blob_stream(res, &d, write_chunk, NULL, &err);
    }
  } else if (!rc && !null) {
    const char *f = s->format;
    bool large = !strcmp(f, "Z") || !strcmp(f, "U");
    if (!large && strcmp(f, "z") && strcmp(f, "u")) {
      rc = bri_error_set(&err, BRI_EUNSUPPORTED,
                         "%s: column %s is neither a Blob v2 nor a binary column", table, column);
    } else if (valid_bit(a, row)) {
      int64_t j = a->offset + row, lo, hi;
      if (large) {
        memcpy(&lo, (const uint8_t *)a->buffers[1] + 8 * j, 8);
        memcpy(&hi, (const uint8_t *)a->buffers[1] + 8 * (j + 1), 8);
      } else {
        int32_t x, y;
        memcpy(&x, (const uint8_t *)a->buffers[1] + 4 * j, 4);
        memcpy(&y, (const uint8_t *)a->buffers[1] + 4 * (j + 1), 4);
        lo = x, hi = y;
      }
      if (hi > lo) rc = write_chunk(NULL, (const uint8_t *)a->buffers[2] + lo, (size_t)(hi - lo), &err);
    } else {
      null = true;
    }
  }
  if (!rc && (null || desc_null))
    rc = bri_error_set(&err, BRI_ENOTFOUND, "%s: column %s is null at row %llu", table, column,
                       rowid);
  if (!rc && fflush(stdout) != 0)
    rc = bri_error_set(&err, BRI_EIO, "writing to stdout: %s", strerror(errno));
  if (arr.release) arr.release(&arr);
  if (sch.release) sch.release(&sch);
  bri_blob_resolver_close(res);
  bri_fragment_close(rd);
  bri_manifest_free(mf);
  bri_table_close(t);
  return rc ? cli_fail(&err) : CLI_OK;
}

const cli_cmd CMD_CAT = {
    .name = "cat",
    .args = "TABLE",
    .summary = "write one blob's bytes to stdout (--column C --row ROWID)",
    .opts = OPTS,
    .flags = CLI_CMD_OFFLINE,
    .run = cmd_cat,
};
