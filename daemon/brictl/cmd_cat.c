/* cmd_cat.c: `brictl cat TABLE --column C (--offset N | --key COL=VALUE |
 * --rowid ID | --rowaddr ADDR) [--version N]`: writes the payload of one
 * Blob v2 value to stdout, the bytes LanceDB's Table.fetchBlobs returns for
 * it (binary and string columns: their raw value).
 *
 * A row has several names, and only some survive a compaction
 * (lib/lance/dataset/rows.h): its offset in the table's row order and a key
 * do, a row address does not (nor a row id without stable row ids, which
 * is the address). The old `--row ROWID` was an address that failed after
 * every compaction; it is retired with a message that names the choices.
 * Exit 0 on success, 1 on usage errors, 2 when the row is deleted or
 * missing, the value is null, or a file cannot be read. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bri/scan.h"
#include "bri/table.h"
#include "cli.h"

static const cli_opt OPTS[] = {
    {.name = "column", .type = CLI_STRING, .value = "C", .flags = CLI_REQUIRED,
     .help = "the Blob v2 (or binary) column: top level, or a dotted path through structs (st.b)"},
    {.name = "offset", .type = CLI_UINT, .value = "N",
     .help = "the row at position N (from 0) in the table's row order: fragments in order, deleted rows skipped "
             "(Lance's take, a query's offset); a compaction keeps it"},
    {.name = "key", .type = CLI_STRING, .value = "COL=VALUE",
     .help = "the one row whose top-level column COL (integers, floats or strings) equals VALUE"},
    {.name = "rowid", .type = CLI_UINT, .value = "ID",
     .help = "LanceDB's _rowid: the stable row id when the table has stable row ids (a compaction keeps it), "
             "else the row address"},
    {.name = "rowaddr", .type = CLI_UINT, .value = "ADDR",
     .help = "LanceDB's _rowaddr: fragment id << 32 | offset in the fragment; changes when the table is compacted"},
    {.name = "version", .type = CLI_UINT, .value = "N", .min = 1, .help = "read table version N",
     .def_note = "the latest"},
    {.name = "row", .type = CLI_UINT, .flags = CLI_RETIRED,
     .help = "--row is retired (it took a row address, which a compaction changes): say --offset N (position in "
             "the table's row order), --key COL=VALUE, --rowid ID or --rowaddr ADDR"},
    {0},
};

static int write_chunk(void *ctx, const uint8_t *data, size_t len, bri_error *err) {
  (void)ctx;
  if (fwrite(data, 1, len, stdout) != len) return bri_error_set(err, BRI_EIO, "writing to stdout: %s", strerror(errno));
  return 0;
}

/* Finds the row the command line names; *rd is its fragment's reader. */
static int find_row(const cli_args *a, const bri_table *t, const bri_manifest *m, bri_row *row,
                    bri_fragment_reader **rd, bri_error *err) {
  if (cli_given(a, "key")) {
    const char *kv = cli_text(a, "key"), *eq = strchr(kv, '=');
    char col[256];
    snprintf(col, sizeof col, "%.*s", (int)(eq - kv), kv);
    return bri_key_find(t, m, col, eq + 1, row, rd, err);
  }
  bri_row_by by = cli_given(a, "offset")  ? BRI_ROW_BY_OFFSET
                  : cli_given(a, "rowid") ? BRI_ROW_BY_ID
                                          : BRI_ROW_BY_ADDRESS;
  const char *opt = by == BRI_ROW_BY_OFFSET ? "offset" : by == BRI_ROW_BY_ID ? "rowid" : "rowaddr";
  return bri_row_find(t, m, by, cli_uint(a, opt), row, rd, err);
}

static int cmd_cat(const cli_args *a) {
  const char *table = a->pos[0], *column = cli_text(a, "column");
  static const char *const ways[] = {"offset", "key", "rowid", "rowaddr"};
  int n = 0;
  for (size_t i = 0; i < sizeof ways / sizeof ways[0]; i++) n += cli_given(a, ways[i]);
  if (n != 1)
    return cli_usage(a, "say which row with one of --offset N (position in the table's row order), --key COL=VALUE, "
                        "--rowid ID or --rowaddr ADDR");
  if (cli_given(a, "key")) {
    const char *kv = cli_text(a, "key"), *eq = strchr(kv, '=');
    if (!eq || eq == kv || eq - kv > 255)
      return cli_usage(a, "--key needs COL=VALUE (a top-level column and its value), got \"%s\"", kv);
  }
  bri_error err = {0};
  bri_table *t = NULL;
  bri_manifest *m = NULL;
  bri_fragment_reader *rd = NULL;
  bri_row row;
  int rc = bri_table_open(table, &t, &err);
  if (!rc) rc = bri_table_load(t, cli_uint(a, "version"), &m, &err);
  if (!rc) rc = find_row(a, t, m, &row, &rd, &err);
  if (!rc) rc = bri_cell_stream(t, m, rd, &row, column, write_chunk, NULL, &err);
  if (!rc && fflush(stdout) != 0) rc = bri_error_set(&err, BRI_EIO, "writing to stdout: %s", strerror(errno));
  bri_fragment_close(rd);
  bri_manifest_free(m);
  bri_table_close(t);
  return rc ? cli_fail(&err) : CLI_OK;
}

const cli_cmd CMD_CAT = {
    .name = "cat",
    .args = "TABLE",
    .summary = "write one blob's bytes to stdout (--column C and --offset N, --key COL=VALUE, --rowid or --rowaddr)",
    .about = "Writes the payload of one Blob v2 value to stdout: the bytes LanceDB's fetchBlobs returns for it "
             "(binary and string columns: their raw value). Name the row by its offset in the table's row order "
             "or by a key: both still name the same row after a compaction. A row address (--rowaddr, and "
             "--rowid on a table without stable row ids) changes at every compaction. Exits 2 when the row is "
             "deleted or missing or the value is null.",
    .opts = OPTS,
    .flags = CLI_CMD_OFFLINE,
    .run = cmd_cat,
};
