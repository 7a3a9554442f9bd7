/* sidecar.h: where Blob v2 payloads live on disk, and the names of the
 * data files they sit beside.
 *
 * Packed and Dedicated payloads of data file {stem}.lance sit in
 * {data dir}/{stem}/{name(id)}.blob, where name(id) is the 32 binary digits
 * of the bit-reversed 32-bit local blob id (docs/format/blob.md section 3). */
#ifndef BRI_SIDECAR_H
#define BRI_SIDECAR_H

#include <stdint.h>

/* 32 digits + ".blob" + NUL */
#define BRI_BLOB_NAME_LEN 38

/* Writes the sidecar file name of a local blob id into out. */
void bri_blob_file_name(uint32_t id, char out[BRI_BLOB_NAME_LEN]);

/* Parses a sidecar file name back into its id; 0 when name is not one. */
int bri_blob_file_id(const char *name, uint32_t *id);

/* The stem of a data file path ("a/b/xyz.lance" -> "xyz"), malloc'd. */
char *bri_datafile_stem(const char *datafile_path);

/* A fresh data file stem named the way Lance names them: 24 binary digits
 * of 3 random bytes, then 26 hex digits of 13 more (docs/format/table.md 1). */
#define BRI_STEM_LEN 51
void bri_new_datafile_stem(char out[BRI_STEM_LEN]);

#endif
