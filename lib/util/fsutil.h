/* fsutil.h: small POSIX file helpers shared by every layer: whole-file and
 * ranged reads with explicit size limits, path joining, directory listing,
 * and resolution of table paths beneath a directory descriptor that never
 * follows a symbolic link (the *_beneath calls below). */
#ifndef BRI_FSUTIL_H
#define BRI_FSUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

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

/* ------------------------------------------------------------------
 * Beneath a directory: every file brid deletes, links or copies inside a
 * table is reached from a descriptor of the table root (or of a base's data
 * directory) by a relative path, and no component of that path may be a
 * symbolic link or leave the directory. A check by path (lstat) followed by
 * a use by path can race with a rename that swaps a link in between; these
 * calls make the resolution itself refuse links, so there is no window:
 * openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_MAGICLINKS when the kernel has it (5.6+), else a walk that
 * opens one component at a time with O_NOFOLLOW | O_DIRECTORY.
 *
 * relpath must be relative, with no empty, "." or ".." component (Lance
 * never writes such paths; a manifest that names one is refused earlier,
 * this is the last line). dirpath is the directory's path, used in messages
 * only ("<dirpath>/<relpath>"); it may be NULL. A refused link is
 * BRI_ECORRUPT whose message names the linked component and says "is a
 * symbolic link" ("..., not a regular file" when it is the last one); a
 * missing component is BRI_ENOTFOUND; other failures BRI_EIO with
 * strerror. errno is left as the failing system call set it, so a caller
 * can tell EEXIST from the rest. */

/* Opens a directory for the calls below (O_RDONLY | O_DIRECTORY). Links in
 * path itself are followed: it is the root the caller chose, not something
 * a table's contents decide. Missing: BRI_ENOTFOUND. */
int bri_dir_open(const char *path, int *out_fd, bri_error *err);

/* The part of path strictly below dir ("a/b" for dir "/t", path "/t/a/b";
 * dir's trailing slashes ignored), or NULL when path is not below dir.
 * Lexical: it tells which descriptor to resolve path from. */
const char *bri_path_below(const char *dir, const char *path);

/* Opens relpath beneath dirfd with open(2) flags (O_CLOEXEC and O_NOFOLLOW
 * are added; O_CREAT creates with mode 0644 less the umask: new table
 * files go through lib/storage, which sets their mode from the directory).
 * A last component that is a link is refused, also with O_PATH. */
int bri_open_beneath(int dirfd, const char *dirpath, const char *relpath, int flags, int *out_fd,
                     bri_error *err);

/* The fallback of bri_open_beneath, one component at a time; exposed so
 * that tests run it on kernels that have openat2. Same contract. */
int bri_open_beneath_walk(int dirfd, const char *dirpath, const char *relpath, int flags,
                          int *out_fd, bri_error *err);

/* Tests only: makes every *_beneath call use the walk (true) or openat2
 * when available (false, the default). */
void bri_beneath_force_walk(bool on);

/* Removes relpath (flags 0: a file, AT_REMOVEDIR: an empty directory). The
 * directories on the way are resolved as above; the last component itself
 * is removed, never followed (unlinking a link removes the link). Missing:
 * BRI_ENOTFOUND. */
int bri_unlink_beneath(int dirfd, const char *dirpath, const char *relpath, int flags,
                       bri_error *err);

/* Removes relpath whether it is a file or an (empty) directory: unlink,
 * then rmdir when it is a directory; same resolution and errors (errno
 * ENOTEMPTY for a directory that is not empty). */
int bri_remove_beneath(int dirfd, const char *dirpath, const char *relpath, bri_error *err);

/* Creates directory relpath (its parent resolved as above) with its
 * parent's mode and group (bri_adopt_parent_mode), whatever the umask.
 * errno EEXIST when it exists. */
int bri_mkdir_beneath(int dirfd, const char *dirpath, const char *relpath, bri_error *err);

/* What is at relpath (lstat: a link is reported, never followed); "" is
 * dirfd itself. Missing: BRI_ENOTFOUND. */
int bri_stat_beneath(int dirfd, const char *dirpath, const char *relpath, struct stat *st,
                     bri_error *err);

/* The directory holding relpath's last component, resolved as above:
 * *parent is dirfd itself (one component; *owned false) or a new O_PATH
 * descriptor the caller closes (*owned), *base_off where the last
 * component starts in relpath. */
int bri_parent_beneath(int dirfd, const char *dirpath, const char *relpath, int *parent,
                       bool *owned, size_t *base_off, bri_error *err);

/* Gives fd (a file or directory just created in directory parent) the
 * permissions its neighbours have, whatever the process umask: a file the
 * directory's read/write bits (2775 -> 0664, 0755 -> 0644), a directory the
 * directory's mode with setgid; and the directory's group where the process
 * may set it (else the group stays as the kernel chose). Best effort: a
 * failure leaves the mode the file was created with (a sandbox that
 * refuses chmod with S_ISGID, systemd's RestrictSUIDSGID=, leaves a
 * directory in a setgid parent as mkdir made it). */
void bri_adopt_parent_mode(int fd, int parent, bool is_dir);

/* Hard-links srel beneath sfd to drel beneath dfd (never overwriting): the
 * source is opened beneath sfd (a link anywhere on the way, or the source
 * itself, is refused) and must be a regular file; the new name is checked
 * to name the inode that was opened (a swap between open and link is undone
 * and refused). *bytes is its size. A filesystem that cannot link is
 * BRI_EUNSUPPORTED (errno EXDEV, EPERM, ... as linkat(2) set it); an
 * existing new name BRI_ETAKEN. The link's modification time is set to now
 * (the inode is shared, so the source's too): a concurrent cleanup must not
 * take the new name for an abandoned file. */
int bri_link_beneath(int sfd, const char *sdir, const char *srel, int dfd, const char *ddir,
                     const char *drel, uint64_t *bytes, bri_error *err);

/* bri_file_link_or_copy for paths beneath two directories: the source is
 * opened beneath sfd (a link anywhere on the way, or the source itself, is
 * refused), must be a regular file, and the new name is created beneath dfd
 * (never overwriting): bri_link_beneath when allow_link, a copy (fsynced)
 * when not or when the filesystem cannot link. */
int bri_link_or_copy_beneath(int sfd, const char *sdir, const char *srel, int dfd, const char *ddir,
                             const char *drel, bool allow_link, bool *linked, uint64_t *bytes,
                             bri_error *err);

/* Lists the names in an open directory (as bri_list_dir; dirfd stays open
 * and is not moved: the listing reads a fresh descriptor of it). */
int bri_list_dirfd(int dirfd, const char *dirpath, char ***names, size_t *count, bri_error *err);

#endif
