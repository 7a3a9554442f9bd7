/* fsutil.h: small POSIX file helpers shared by every layer: whole-file and
 * ranged reads with explicit size limits, path joining, directory listing. */
#ifndef BRI_FSUTIL_H
#define BRI_FSUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* Reads the whole file into a malloc'd buffer (NUL-terminated for
 * convenience, the NUL is not counted). Refuses files larger than max_len. */
int bri_read_file(const char *path, size_t max_len, uint8_t **out, size_t *out_len,
                  bri_error *err);

/* Reads exactly len bytes at offset from an open descriptor; a short file is
 * BRI_ECORRUPT ("<path>: wanted N bytes at offset O, file has ..."). */
int bri_pread_exact(int fd, const char *path, uint64_t offset, void *buf, size_t len,
                    bri_error *err);

/* Size of the file at path, or BRI_EIO/BRI_ENOTFOUND. */
int bri_file_size(const char *path, uint64_t *size, bri_error *err);

/* Joins a and b with exactly one '/'; returns malloc'd string or NULL. */
char *bri_path_join(const char *a, const char *b);

/* malloc'd printf. */
char *bri_strdupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Lists the names in dir (no "." or ".."), sorted bytewise. Missing dir:
 * BRI_ENOTFOUND. The caller frees each name and the array. */
int bri_list_dir(const char *dir, char ***names, size_t *count, bri_error *err);
void bri_free_names(char **names, size_t count);

/* 0 when path is a real directory (lstat: a symbolic link to one is not),
 * or does not exist and absent_ok; otherwise BRI_ECORRUPT naming path (a
 * symbolic link: "brid never follows links out of a table"), or BRI_EIO /
 * BRI_ENOTFOUND. For the directories cleanup, materialize and clone list or
 * write into, so that no link leads them outside the table. */
int bri_real_dir(const char *path, bool absent_ok, bri_error *err);

/* Copies size bytes from in to out, each from its current offset
 * (copy_file_range when the kernel can, else read/write). A source that
 * ends early is BRI_EIO. */
int bri_copy_fd(int in, int out, uint64_t size, const char *src, const char *dst, bri_error *err);

/* Creates dst (never overwriting) with the bytes of src: a hard link when
 * allow_link and the filesystem permits, else a copy (fsynced). *linked
 * says which; *bytes is the size of src. src must be a regular file:
 * symbolic links and special files are refused, never followed. */
int bri_file_link_or_copy(const char *src, const char *dst, bool allow_link, bool *linked,
                          uint64_t *bytes, bri_error *err);

#endif
