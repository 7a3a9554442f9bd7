/* reader.h: reading the rows of one fragment as Arrow arrays.
 *
 * A fragment's fields may be spread over several data files; this module
 * maps each top-level field of the table schema (manifest) to the data file
 * and leaf columns that store it, decodes their pages (lib/lance/encoding),
 * rebuilds nesting (lists, structs, fixed-size lists, nulls at every level)
 * from repetition/definition levels (file/assemble.h), drops the rows the
 * fragment's deletion file deletes, and hands out the result in the Arrow C
 * Data Interface layout (util/arrow_c.h): one ArrowArray + ArrowSchema per
 * top-level field, with one element per visible row, in physical row order.
 *
 * Types follow Lance's logical types (docs/format/table.md 5.8) mapped to Arrow
 * formats: null "n", int8..uint64 "c C s S i I l L", float16/32/64 "e f g",
 * bool "b", date32 "tdD", date64 "tdm", time32 "tts"/"ttm", time64
 * "ttu"/"ttn", timestamp "tss:" / "tsu:UTC" etc. (Lance's "-" zone = empty),
 * duration "tDs" etc., decimal "d:P,S" / "d:P,S,256", utf8 "u", large_utf8
 * "U", binary "z", large_binary and json "Z", fixed_size_binary "w:N",
 * fixed_size_list "+w:N" (child "item", always nullable; lance.bfloat16 items
 * are "w:2" with that extension name), list "+l", large_list "+L", map "+m",
 * struct "+s"; dictionary-typed fields are returned decoded to their value
 * type. ArrowSchema names and metadata are the manifest's; the nullable flag
 * is the manifest's `nullable`.
 *
 * Blob v2 fields (wherever they are nested) come back as their stored
 * descriptor: struct "+s" with children kind "C", position "L", size "L",
 * blob_id "I", blob_uri "u" (no child validity; a null blob is a null
 * struct), and the ArrowSchema metadata ARROW:extension:name =
 * lance.blob.v2. Their bytes are resolved separately (blob/resolve.h) with
 * the DataFile that holds them (bri_fragment_field_datafile). Legacy blob v1
 * columns come back as large_binary with the payload bytes. Other packed
 * structs (metadata lance-encoding:packed) come back as "+s" whose children
 * have no validity of their own.
 *
 * Memory: one top-level field at a time, fully materialized for the rows
 * asked for (bri_fragment_read_rows reads a slice, decoding only the pages it
 * touches). No per-value allocation. */
#ifndef BRI_READER_H
#define BRI_READER_H

#include <stddef.h>
#include <stdint.h>

#include "lance/file/datafile.h"
#include "lance/table/manifest.h"
#include "lance/table/table.h"
#include "util/arrow_c.h"
#include "util/error.h"

typedef struct bri_fragment_reader bri_fragment_reader;

/* Opens every data file of frag and loads its deletion file. Every data file
 * must hold DataFragment.physical_rows rows (when recorded). The table,
 * manifest and fragment must outlive the reader. */
int bri_fragment_open(const bri_table *t, const bri_manifest *m,
                      const Lance__Table__DataFragment *frag, bri_fragment_reader **out,
                      bri_error *err);
/* The same for reading only the top-level fields with these manifest ids:
 * of each data file only the columns of those fields (and their children)
 * are decoded and checked (datafile.h opts), so a reader of one column of a
 * wide table does a fraction of the work. Reading another field is
 * BRI_EINVAL; bri_fragment_field_file hands out files whose other columns
 * are missing (bri_datafile_column NULL). */
int bri_fragment_open_fields(const bri_table *t, const bri_manifest *m,
                             const Lance__Table__DataFragment *frag, const int32_t *fields,
                             size_t n_fields, bri_fragment_reader **out, bri_error *err);
void bri_fragment_close(bri_fragment_reader *r);

/* Rows after deletions, and the physical row offset (within the fragment) of
 * each of them, ascending (row address of visible row i = frag->id << 32 |
 * offset[i]). NULL when there are no visible rows. */
uint64_t bri_fragment_num_rows(const bri_fragment_reader *r);
uint64_t bri_fragment_physical_rows(const bri_fragment_reader *r);
const uint32_t *bri_fragment_row_offsets(const bri_fragment_reader *r);

/* Reads the top-level field with manifest field id `field_id`: all visible
 * rows of the fragment. The caller releases both structs (release callbacks).
 * A field (or a nested child) that no data file of the fragment stores
 * (added later by schema evolution) comes back as nulls. An id that is not a
 * top-level field of the manifest is BRI_ENOTFOUND; a type brid does not
 * handle is BRI_EUNSUPPORTED; bytes that contradict the format are
 * BRI_ECORRUPT naming the file, column and page. On failure both structs
 * are left released (release == NULL). */
int bri_fragment_read_field(bri_fragment_reader *r, int32_t field_id, struct ArrowArray *array,
                            struct ArrowSchema *schema, bri_error *err);

/* The same for visible rows [first, first + count) only (count may be 0).
 * Pages that hold none of those rows are not decoded. */
int bri_fragment_read_rows(bri_fragment_reader *r, int32_t field_id, uint64_t first,
                           uint64_t count, struct ArrowArray *array, struct ArrowSchema *schema,
                           bri_error *err);

/* The data file and column that store the top-level field field_id when it
 * is one plain leaf column (a primitive, a fixed-size list, a Blob v2
 * descriptor struct), checked against the manifest as reading it is: for
 * callers that decode its pages themselves (bri_page_decode with *type,
 * dropping the rows the fragment deleted). BRI_ENOTFOUND when no data file
 * stores it (all null), BRI_EINVAL for anything else (structs, lists,
 * packed structs, legacy blobs: read them with bri_fragment_read_field). */
int bri_fragment_leaf_column(bri_fragment_reader *r, int32_t field_id, bri_datafile **df,
                             size_t *column, bri_leaf_type *type, bri_error *err);

/* The DataFile that stores field id (any depth; for a struct or list, the
 * file of its first stored leaf), or NULL. */
const Lance__Table__DataFile *bri_fragment_field_datafile(const bri_fragment_reader *r,
                                                          int32_t field_id);
/* The same file opened (bri_datafile_read reads Inline blob payloads), and
 * its absolute path; NULL when no file stores the field. */
bri_datafile *bri_fragment_field_file(const bri_fragment_reader *r, int32_t field_id);
/* A data file of r with global buffers beyond the schema's (buffer 0), e.g.
 * the index seeds newer Lance writes, or NULL; *n: how many it has. */
const char *bri_fragment_extra_buffers(const bri_fragment_reader *r, size_t *n);
const char *bri_fragment_field_path(const bri_fragment_reader *r, int32_t field_id);

#endif
