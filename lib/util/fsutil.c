/* fsutil.c: POSIX file helpers (see fsutil.h). Reads retry on EINTR and
 * treat a short read as a truncated file, never as success. Resolution
 * beneath a directory asks the kernel first (openat2) and walks component
 * by component only when it must; either way a refusal is explained by the
 * same walk, so both give the same message naming the linked component. */
#include "util/fsutil.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int bri_read_file(const char *path, size_t max_len, uint8_t **out, size_t *out_len,
                  bri_error *err) {
  *out = NULL;
  *out_len = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? bri_error_set(err, BRI_ENOTFOUND, "%s: no such file", path)
                           : bri_error_errno(err, "open", path);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int rc = bri_error_errno(err, "stat", path);
    close(fd);
    return rc;
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return bri_error_set(err, BRI_EIO, "%s: not a regular file", path);
  }
  if ((uint64_t)st.st_size > max_len) {
    close(fd);
    return bri_error_set(err, BRI_EUNSUPPORTED, "%s: %lld bytes is more than the %zu allowed",
                         path, (long long)st.st_size, max_len);
  }
  size_t len = (size_t)st.st_size;
  uint8_t *buf = malloc(len + 1);
  if (!buf) {
    close(fd);
    return bri_error_set(err, BRI_ENOMEM, "%s: out of memory for %zu bytes", path, len);
  }
  int rc = bri_pread_exact(fd, path, 0, buf, len, err);
  close(fd);
  if (rc) {
    free(buf);
    return rc;
  }
  buf[len] = 0;
  *out = buf;
  *out_len = len;
  return 0;
}

int bri_pread_exact(int fd, const char *path, uint64_t offset, void *buf, size_t len,
                    bri_error *err) {
  size_t done = 0;
  while (done < len) {
    ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return bri_error_errno(err, "read", path);
    }
    if (n == 0)
      return bri_error_set(err, BRI_ECORRUPT,
                           "%s: wanted %zu bytes at offset %llu, file ends after %llu", path,
                           len, (unsigned long long)offset,
                           (unsigned long long)(offset + done));
    done += (size_t)n;
  }
  return 0;
}

int bri_file_size(const char *path, uint64_t *size, bri_error *err) {
  struct stat st;
  if (stat(path, &st) != 0)
    return errno == ENOENT ? bri_error_set(err, BRI_ENOTFOUND, "%s: no such file", path)
                           : bri_error_errno(err, "stat", path);
  *size = (uint64_t)st.st_size;
  return 0;
}

char *bri_path_join(const char *a, const char *b) {
  size_t la = strlen(a);
  while (la > 1 && a[la - 1] == '/') la--;
  while (*b == '/') b++;
  size_t lb = strlen(b);
  char *s = malloc(la + lb + 2); /* paths are built per fragment: no printf */
  if (!s) return NULL;
  memcpy(s, a, la);
  s[la] = '/';
  memcpy(s + la + 1, b, lb + 1);
  return s;
}

char *bri_strdupf(const char *fmt, ...) {
  char small[256]; /* most strings fit: one formatting pass, no stream */
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) return NULL;
  char *s = malloc((size_t)n + 1);
  if (!s) return NULL;
  if ((size_t)n < sizeof small) {
    memcpy(s, small, (size_t)n + 1);
  } else {
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
  }
  return s;
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Reads the names of an open DIR (closed here), sorted. */
static int read_names(DIR *d, const char *dir, char ***names, size_t *count, bri_error *err) {
  char **v = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  int rc = 0;
  errno = 0;
  while ((e = readdir(d)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 32;
      char **nv = realloc(v, cap * sizeof *v);
      if (!nv) { rc = bri_error_set(err, BRI_ENOMEM, "%s: out of memory listing", dir); break; }
      v = nv;
    }
    if (!(v[n] = strdup(e->d_name))) { rc = bri_error_set(err, BRI_ENOMEM, "%s: out of memory listing", dir); break; }
    n++;
  }
  if (!rc && errno) rc = bri_error_errno(err, "read directory", dir);
  closedir(d);
  if (rc) {
    bri_free_names(v, n);
    return rc;
  }
  if (n) qsort(v, n, sizeof *v, cmp_names);
  *names = v;
  *count = n;
  return 0;
}

int bri_list_dir(const char *dir, char ***names, size_t *count, bri_error *err) {
  *names = NULL;
  *count = 0;
  DIR *d = opendir(dir);
  if (!d)
    return errno == ENOENT ? bri_error_set(err, BRI_ENOTFOUND, "%s: no such directory", dir)
                           : bri_error_errno(err, "open directory", dir);
  return read_names(d, dir, names, count, err);
}

int bri_real_dir(const char *path, bool absent_ok, bri_error *err) {
  struct stat st;
  if (lstat(path, &st) != 0) {
    if (errno == ENOENT)
      return absent_ok ? 0 : bri_error_set(err, BRI_ENOTFOUND, "%s: no such directory", path);
    return bri_error_errno(err, "stat", path);
  }
  if (S_ISLNK(st.st_mode))
    return bri_error_set(err, BRI_ECORRUPT, "%s is a symbolic link; brid never follows links out of "
                         "a table", path);
  if (!S_ISDIR(st.st_mode)) return bri_error_set(err, BRI_ECORRUPT, "%s is not a directory", path);
  return 0;
}

void bri_free_names(char **names, size_t count) {
  for (size_t i = 0; i < count; i++) free(names[i]);
  free(names);
}

#define BRI_COPY_CHUNK ((size_t)1 << 20)

static bool link_unsupported(int e) {
  return e == EXDEV || e == EPERM || e == EMLINK || e == ENOTSUP || e == EOPNOTSUPP || e == ENOSYS;
}

int bri_copy_fd(int in, int out, uint64_t size, const char *src, const char *dst, bri_error *err) {
  uint64_t done = 0;
  off_t in0 = lseek(in, 0, SEEK_CUR), out0 = lseek(out, 0, SEEK_CUR);
  if (in0 < 0 || out0 < 0) return bri_error_errno(err, "seek", src);
  bool plain = false;
  char *buf = NULL;
  while (done < size) {
    size_t want = size - done > ((size_t)1 << 30) ? ((size_t)1 << 30) : (size_t)(size - done);
    ssize_t n;
    if (!plain) {
      n = copy_file_range(in, NULL, out, NULL, want, 0);
      if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
        plain = true; /* e.g. an old kernel or a filesystem pair it cannot handle */
        if (lseek(in, in0 + (off_t)done, SEEK_SET) < 0 || lseek(out, out0 + (off_t)done, SEEK_SET) < 0) {
          free(buf);
          return bri_error_errno(err, "seek", src);
        }
        continue;
      }
    } else {
      if (!buf && !(buf = malloc(BRI_COPY_CHUNK))) return bri_error_set(err, BRI_ENOMEM, "out of memory");
      n = read(in, buf, want < BRI_COPY_CHUNK ? want : BRI_COPY_CHUNK);
      if (n > 0) {
        ssize_t w = 0;
        while (w < n) {
          ssize_t k = write(out, buf + w, (size_t)(n - w));
          if (k < 0 && errno == EINTR) continue;
          if (k <= 0) {
            free(buf);
            return bri_error_errno(err, "write", dst);
          }
          w += k;
        }
      }
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      free(buf);
      return bri_error_errno(err, "copy into", dst);
    }
    if (n == 0) {
      free(buf);
      return bri_error_set(err, BRI_EIO, "%s: shrank to %llu bytes while being copied (expected %llu)",
                           src, (unsigned long long)done, (unsigned long long)size);
    }
    done += (uint64_t)n;
  }
  free(buf);
  return 0;
}

/* ------------------------------------------------------------ beneath a directory */

static atomic_bool force_walk;

void bri_beneath_force_walk(bool on) { atomic_store(&force_walk, on); }

int bri_dir_open(const char *path, int *out_fd, bri_error *err) {
  *out_fd = -1;
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? bri_error_set(err, BRI_ENOTFOUND, "%s: no such directory", path)
                           : bri_error_errno(err, "open directory", path);
  *out_fd = fd;
  return 0;
}

const char *bri_path_below(const char *dir, const char *path) {
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/') n--;
  if (n == 1 && dir[0] == '/') n = 0; /* below "/": everything absolute */
  if (strncmp(dir, path, n) != 0 || path[n] != '/') return NULL;
  const char *rel = path + n;
  while (*rel == '/') rel++;
  return *rel ? rel : NULL;
}

static const char *shown(const char *dirpath) { return dirpath ? dirpath : "."; }

/* Lance never writes an absolute path, an empty, "." or ".." component:
 * such a relpath is refused before any system call (by both ways). */
static int check_rel(const char *dirpath, const char *rel, bri_error *err) {
  const char *p = rel;
  bool bad = !*rel || *rel == '/';
  while (!bad) {
    const char *e = strchr(p, '/');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    bad = n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.') || n > NAME_MAX;
    if (!e) break;
    p = e + 1;
  }
  if (bad) {
    errno = EINVAL;
    return bri_error_set(err, BRI_ECORRUPT, "%s/%s: not a plain relative path (absolute, or an "
                         "empty, '.', '..' or over-long component); brid resolves table files "
                         "only beneath %s", shown(dirpath), rel, shown(dirpath));
  }
  return 0;
}

/* The message for a component that could not be opened: cur is the
 * directory it was looked up in, rel[0..end) the path up to and including
 * it, last whether it is the final component. Keeps errno. */
static int refuse(int cur, const char *dirpath, const char *rel, size_t end, bool last, int e,
                  bri_error *err) {
  char name[NAME_MAX + 1];
  size_t start = end;
  while (start > 0 && rel[start - 1] != '/') start--;
  snprintf(name, sizeof name, "%.*s", (int)(end - start), rel + start);
  struct stat st;
  bool is_link = fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
  int rc;
  if (is_link)
    rc = bri_error_set(err, BRI_ECORRUPT, "%s/%.*s is a symbolic link%s; brid never follows links "
                       "out of a table", shown(dirpath), (int)end, rel,
                       last ? ", not a regular file or directory" : "");
  else if (e == ELOOP || e == EXDEV)
    rc = bri_error_set(err, BRI_ECORRUPT, "%s/%.*s: a symbolic link on the way or a path leading "
                       "out of %s was refused (brid never follows links out of a table)",
                       shown(dirpath), (int)end, rel, shown(dirpath));
  else if (e == ENOENT)
    rc = bri_error_set(err, BRI_ENOTFOUND, "%s/%.*s: no such file or directory", shown(dirpath),
                       (int)end, rel);
  else if (e == ENOTDIR)
    rc = bri_error_set(err, BRI_ECORRUPT, "%s/%.*s is not a directory", shown(dirpath), (int)end, rel);
  else {
    errno = e;
    rc = bri_error_set(err, BRI_EIO, "open %s/%.*s: %s", shown(dirpath), (int)end, rel, strerror(e));
  }
  errno = e;
  return rc;
}

/* Opens the last component of rel in cur (rel + off) with flags; O_PATH is
 * refused on a link (O_PATH | O_NOFOLLOW would open the link itself). */
static int open_last(int cur, const char *dirpath, const char *rel, size_t off, int flags,
                     bool last, int *out_fd, bri_error *err) {
  int fd;
  do fd = openat(cur, rel + off, flags | O_NOFOLLOW | O_CLOEXEC, 0644);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return refuse(cur, dirpath, rel, strlen(rel), last, errno, err);
  if (flags & O_PATH) {
    struct stat st;
    if (fstat(fd, &st) != 0 || S_ISLNK(st.st_mode)) {
      close(fd);
      return refuse(cur, dirpath, rel, strlen(rel), last, ELOOP, err);
    }
  }
  *out_fd = fd;
  return 0;
}

/* Opens every directory of rel but the last component, one at a time,
 * never following a link: *parent is dirfd itself or a new O_PATH
 * descriptor (*owned), *base_off where the last component starts. */
static int walk_parent(int dirfd, const char *dirpath, const char *rel, int *parent, bool *owned,
                       size_t *base_off, bri_error *err) {
  int cur = dirfd;
  bool own = false;
  size_t off = 0;
  const char *slash;
  while ((slash = strchr(rel + off, '/')) != NULL) {
    char name[NAME_MAX + 1];
    size_t n = (size_t)(slash - (rel + off));
    memcpy(name, rel + off, n); /* n <= NAME_MAX: check_rel */
    name[n] = 0;
    int fd;
    do fd = openat(cur, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
      int rc = refuse(cur, dirpath, rel, (size_t)(slash - rel), false, errno, err);
      int e = errno;
      if (own) close(cur);
      errno = e;
      return rc;
    }
    if (own) close(cur);
    cur = fd, own = true;
    off = (size_t)(slash - rel) + 1;
  }
  *parent = cur, *owned = own, *base_off = off;
  return 0;
}

/* The walk; last: relpath's last component is the caller's final one (a
 * parent directory opened for a longer path is not: its refusal message
 * says so, as the walk of the whole path would). */
static int walk(int dirfd, const char *dirpath, const char *relpath, int flags, bool last,
                int *out_fd, bri_error *err) {
  *out_fd = -1;
  int rc = check_rel(dirpath, relpath, err);
  if (rc) return rc;
  int parent;
  bool owned;
  size_t off;
  if ((rc = walk_parent(dirfd, dirpath, relpath, &parent, &owned, &off, err)) != 0) return rc;
  rc = open_last(parent, dirpath, relpath, off, flags, last, out_fd, err);
  int e = errno;
  if (owned) close(parent);
  errno = e;
  return rc;
}

int bri_open_beneath_walk(int dirfd, const char *dirpath, const char *relpath, int flags,
                          int *out_fd, bri_error *err) {
  return walk(dirfd, dirpath, relpath, flags, true, out_fd, err);
}

/* Set once openat2 answered ENOSYS (a kernel before 5.6, or valgrind). */
static atomic_bool no_openat2;

/* openat2 with the no-links resolution: 1 and *fd on success or a refusal
 * (rc in *rc), 0 when the kernel cannot do it (then the caller walks). */
static int try_openat2(int dirfd, const char *dirpath, const char *rel, int flags, bool last,
                       int *out_fd, int *rc, bri_error *err) {
  if (atomic_load(&force_walk) || atomic_load(&no_openat2)) return 0;
  struct open_how how;
  memset(&how, 0, sizeof how);
  how.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC);
  /* O_TMPFILE includes O_DIRECTORY: test it whole, or every directory open
   * gets a mode, which openat2 refuses (EINVAL) and the walk takes over */
  how.mode = (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? 0644 : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  long fd = -1;
  for (int tries = 0; tries < 8; tries++) {
    fd = syscall(SYS_openat2, dirfd, rel, &how, sizeof how);
    if (fd >= 0 || (errno != EINTR && errno != EAGAIN)) break; /* EAGAIN: a concurrent rename */
  }
  if (fd < 0 && errno == ENOSYS) atomic_store(&no_openat2, true); /* not asked again */
  if (fd < 0 && (errno == ENOSYS || errno == EPERM || errno == EINVAL || errno == E2BIG ||
                 errno == EAGAIN || errno == EINTR))
    return 0; /* no openat2 (old kernel, seccomp) or flags it does not take */
  if (fd >= 0 && (flags & O_PATH)) {
    struct stat st;
    if (fstat((int)fd, &st) != 0 || S_ISLNK(st.st_mode)) {
      close((int)fd);
      fd = -1, errno = ELOOP;
    }
  }
  if (fd >= 0) {
    *out_fd = (int)fd, *rc = 0;
    return 1;
  }
  int e = errno;
  if (e == ELOOP || e == EXDEV || e == ENOTDIR || e == ENOENT) {
    /* explain it by the walk: it names the component (without creating:
     * the walk only opens directories here) */
    int parent;
    bool owned;
    size_t off;
    *rc = walk_parent(dirfd, dirpath, rel, &parent, &owned, &off, err);
    if (!*rc) {
      *rc = refuse(parent, dirpath, rel, strlen(rel), last, e, err);
      if (owned) close(parent);
    }
  } else {
    *rc = bri_error_set(err, BRI_EIO, "open %s/%s: %s", shown(dirpath), rel, strerror(e));
  }
  errno = e;
  return 1;
}

static int open_beneath(int dirfd, const char *dirpath, const char *relpath, int flags, bool last,
                        int *out_fd, bri_error *err) {
  *out_fd = -1;
  int rc = check_rel(dirpath, relpath, err);
  if (rc) return rc;
  if (try_openat2(dirfd, dirpath, relpath, flags, last, out_fd, &rc, err)) return rc;
  return walk(dirfd, dirpath, relpath, flags, last, out_fd, err);
}

int bri_open_beneath(int dirfd, const char *dirpath, const char *relpath, int flags, int *out_fd,
                     bri_error *err) {
  return open_beneath(dirfd, dirpath, relpath, flags, true, out_fd, err);
}

int bri_parent_beneath(int dirfd, const char *dirpath, const char *relpath, int *parent,
                       bool *owned, size_t *base_off, bri_error *err) {
  int rc = check_rel(dirpath, relpath, err);
  if (rc) return rc;
  const char *slash = strrchr(relpath, '/');
  if (!slash) {
    *parent = dirfd, *owned = false, *base_off = 0;
    return 0;
  }
  size_t n = (size_t)(slash - relpath);
  char *dir = malloc(n + 1);
  if (!dir) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  memcpy(dir, relpath, n);
  dir[n] = 0;
  rc = open_beneath(dirfd, dirpath, dir, O_PATH | O_DIRECTORY, false, parent, err);
  int e = errno;
  free(dir);
  errno = e;
  if (rc) return rc;
  *owned = true, *base_off = n + 1;
  return 0;
}

void bri_adopt_parent_mode(int fd, int parent, bool is_dir) {
  struct stat ps, st;
  if (fstat(parent, &ps) != 0 || fstat(fd, &st) != 0) return;
  /* files: the directory's read and write bits; directories: its mode with
   * setgid (what a creator with the directory's umask would have made) */
  mode_t want = is_dir ? (ps.st_mode & 02777) : (ps.st_mode & 0666);
  if (st.st_gid != ps.st_gid && fchown(fd, (uid_t)-1, ps.st_gid) != 0) {
    /* not a member of the directory's group: the mode stays as derived */
  }
  if ((st.st_mode & 07777) != want) (void)fchmod(fd, want);
}

int bri_stat_beneath(int dirfd, const char *dirpath, const char *relpath, struct stat *st,
                     bri_error *err) {
  if (!*relpath) return fstat(dirfd, st) == 0 ? 0 : bri_error_errno(err, "stat", shown(dirpath));
  int parent;
  bool owned;
  size_t off;
  int rc = bri_parent_beneath(dirfd, dirpath, relpath, &parent, &owned, &off, err);
  if (rc) return rc;
  if (fstatat(parent, relpath + off, st, AT_SYMLINK_NOFOLLOW) != 0) {
    int e = errno;
    rc = e == ENOENT ? bri_error_set(err, BRI_ENOTFOUND, "%s/%s: no such file or directory",
                                     shown(dirpath), relpath)
                     : bri_error_set(err, BRI_EIO, "stat %s/%s: %s", shown(dirpath), relpath,
                                     strerror(e));
    errno = e;
  }
  int e = errno;
  if (owned) close(parent);
  errno = e;
  return rc;
}

/* unlinkat (flags) or mkdirat of relpath's last component in its parent,
 * opened beneath dirfd. A new directory takes its parent's mode and group
 * (bri_adopt_parent_mode), whatever the umask; under a sandbox that refuses
 * setting S_ISGID, a setgid parent's child keeps the bits the umask let
 * through (brid's unit: UMask=0007, the group's bits). */
typedef enum { AT_UNLINK, AT_MKDIR } at_op;

static int in_parent(at_op op, int dirfd, const char *dirpath, const char *relpath, int flags,
                     bri_error *err) {
  int parent;
  bool owned;
  size_t off;
  int rc = bri_parent_beneath(dirfd, dirpath, relpath, &parent, &owned, &off, err);
  if (rc) return rc;
  const char *name = relpath + off;
  /* mkdir with the parent's permission bits (less the umask): the kernel
   * gives a directory made in a setgid one the setgid bit and the group, and
   * where a sandbox refuses chmod with S_ISGID (systemd's RestrictSUIDSGID=)
   * that is the only way the new directory gets the group bits too; the
   * adoption below then only adds what the umask took away */
  struct stat ps;
  mode_t mode = op == AT_MKDIR && fstat(parent, &ps) == 0 ? (ps.st_mode & 0777) | 0700 : 0700;
  int r = op == AT_UNLINK ? unlinkat(parent, name, flags) : mkdirat(parent, name, mode);
  int e = errno;
  if (r != 0 && op == AT_UNLINK && e == ENOENT)
    rc = bri_error_set(err, BRI_ENOTFOUND, "%s/%s: no such file", shown(dirpath), relpath);
  else if (r != 0)
    rc = bri_error_set(err, BRI_EIO, "%s %s/%s: %s", op == AT_UNLINK ? "delete" : "create directory",
                       shown(dirpath), relpath, strerror(e));
  if (r == 0 && op == AT_MKDIR) {
    /* the directory just made (never a link swapped in for it) */
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
      bri_adopt_parent_mode(fd, parent, true);
      close(fd);
    }
  }
  if (owned) close(parent);
  errno = e;
  return rc;
}

int bri_unlink_beneath(int dirfd, const char *dirpath, const char *relpath, int flags,
                       bri_error *err) {
  return in_parent(AT_UNLINK, dirfd, dirpath, relpath, flags, err);
}

int bri_mkdir_beneath(int dirfd, const char *dirpath, const char *relpath, bri_error *err) {
  return in_parent(AT_MKDIR, dirfd, dirpath, relpath, 0, err);
}

int bri_remove_beneath(int dirfd, const char *dirpath, const char *relpath, bri_error *err) {
  int rc = in_parent(AT_UNLINK, dirfd, dirpath, relpath, 0, err);
  if (rc && errno == EISDIR) rc = in_parent(AT_UNLINK, dirfd, dirpath, relpath, AT_REMOVEDIR, err);
  return rc;
}

/* The source of a link or a copy: opened beneath sfd, a regular file. */
static int open_source(int sfd, const char *sdir, const char *srel, int *in, struct stat *st,
                       bri_error *err) {
  int rc = bri_open_beneath(sfd, sdir, srel, O_RDONLY, in, err);
  if (rc) return rc;
  if (fstat(*in, st) != 0) rc = bri_error_errno(err, "stat", srel);
  /* Lance writes regular files only */
  else if (!S_ISREG(st->st_mode))
    rc = bri_error_set(err, BRI_ECORRUPT, "%s/%s: not a regular file (symbolic links and special "
                       "files are never followed)", shown(sdir), srel);
  if (rc) {
    close(*in);
    *in = -1;
  }
  return rc;
}

int bri_link_beneath(int sfd, const char *sdir, const char *srel, int dfd, const char *ddir,
                     const char *drel, uint64_t *bytes, bri_error *err) {
  *bytes = 0;
  int in = -1, sp = -1, dp = -1;
  bool sp_own = false, dp_own = false;
  size_t soff = 0, doff = 0;
  struct stat st;
  int rc = open_source(sfd, sdir, srel, &in, &st, err);
  if (!rc) rc = bri_parent_beneath(sfd, sdir, srel, &sp, &sp_own, &soff, err);
  if (!rc) rc = bri_parent_beneath(dfd, ddir, drel, &dp, &dp_own, &doff, err);
  if (!rc) {
    /* linkat without AT_SYMLINK_FOLLOW links whatever the name holds now
     * (never what a link points at); the result must be the inode opened
     * above, else a swap happened in between and the link is undone */
    if (linkat(sp, srel + soff, dp, drel + doff, 0) == 0) {
      struct stat ln;
      if (fstatat(dp, drel + doff, &ln, AT_SYMLINK_NOFOLLOW) == 0 && ln.st_dev == st.st_dev &&
          ln.st_ino == st.st_ino) {
        *bytes = (uint64_t)st.st_size;
        /* the new name counts as new: a concurrent cleanup must not take it
         * for an abandoned file by the old inode's age (both names share it).
         * Both times to now (NULL): what write access to a file one does not
         * own permits (an explicit time, even UTIME_NOW beside UTIME_OMIT,
         * takes ownership), as in a table shared by group. Without write
         * access the link cannot be dated: it is undone, and a copy is the
         * way out, as for a filesystem that refuses the link itself. */
        if (futimens(in, NULL) != 0) {
          int e = errno;
          unlinkat(dp, drel + doff, 0);
          rc = e == EPERM || e == EACCES
                   ? bri_error_set(err, BRI_EUNSUPPORTED, "link %s/%s to %s/%s: cannot date the new name (%s)",
                                   shown(sdir), srel, shown(ddir), drel, strerror(e))
                   : (errno = e, bri_error_errno(err, "set the modification time of", srel));
          errno = e;
        }
      } else {
        unlinkat(dp, drel + doff, 0);
        rc = bri_error_set(err, BRI_ECORRUPT, "%s/%s was replaced while being linked into %s/%s; "
                           "refused (brid never follows links out of a table)", shown(sdir), srel,
                           shown(ddir), drel);
        errno = EPERM;
      }
    } else {
      int e = errno;
      rc = e == EEXIST ? bri_error_set(err, BRI_ETAKEN, "%s/%s already exists; brid never overwrites",
                                       shown(ddir), drel)
                       : bri_error_set(err, link_unsupported(e) ? BRI_EUNSUPPORTED : BRI_EIO,
                                       "link %s/%s to %s/%s: %s", shown(sdir), srel, shown(ddir),
                                       drel, strerror(e));
      errno = e;
    }
  }
  int e = errno;
  if (in >= 0) close(in);
  if (sp_own) close(sp);
  if (dp_own) close(dp);
  errno = e;
  return rc;
}

int bri_link_or_copy_beneath(int sfd, const char *sdir, const char *srel, int dfd, const char *ddir,
                             const char *drel, bool allow_link, bool *linked, uint64_t *bytes,
                             bri_error *err) {
  *linked = false;
  *bytes = 0;
  if (allow_link) {
    int rc = bri_link_beneath(sfd, sdir, srel, dfd, ddir, drel, bytes, err);
    if (!rc) {
      *linked = true;
      return 0;
    }
    if (rc != BRI_EUNSUPPORTED) return rc;
  }
  int in = -1, dp = -1, out = -1;
  bool dp_own = false, made = false;
  size_t doff = 0;
  struct stat st;
  char *src = bri_strdupf("%s/%s", shown(sdir), srel), *dst = bri_strdupf("%s/%s", shown(ddir), drel);
  int rc = src && dst ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (!rc) rc = open_source(sfd, sdir, srel, &in, &st, err);
  if (!rc) rc = bri_parent_beneath(dfd, ddir, drel, &dp, &dp_own, &doff, err);
  if (!rc) {
    out = openat(dp, drel + doff, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (out < 0)
      rc = errno == EEXIST ? bri_error_set(err, BRI_ETAKEN, "%s already exists; brid never overwrites", dst)
                           : bri_error_errno(err, "create", dst);
    else {
      made = true;
      bri_adopt_parent_mode(out, dp, false);
    }
  }
  if (!rc) *bytes = (uint64_t)st.st_size;
  if (!rc) rc = bri_copy_fd(in, out, (uint64_t)st.st_size, src, dst, err);
  if (!rc && fsync(out) != 0) rc = bri_error_errno(err, "fsync", dst);
  if (out >= 0 && close(out) != 0 && !rc) rc = bri_error_errno(err, "close", dst);
  /* the copy's name is durable only once its directory is (a link's
   * callers fsync the directories they fill; tests/powerloss) */
  if (!rc) {
    int d = openat(dp, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d < 0 || fsync(d) != 0) rc = bri_error_errno(err, "fsync the directory of", dst);
    if (d >= 0) close(d);
  }
  if (rc && made) unlinkat(dp, drel + doff, 0);
  if (in >= 0) close(in);
  if (dp_own) close(dp);
  free(src), free(dst);
  return rc;
}

int bri_list_dirfd(int dirfd, const char *dirpath, char ***names, size_t *count, bri_error *err) {
  *names = NULL;
  *count = 0;
  /* a fresh descriptor: dirfd may be O_PATH, and readdir moves the offset */
  int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return bri_error_errno(err, "open directory", shown(dirpath));
  DIR *d = fdopendir(fd);
  if (!d) {
    int rc = bri_error_errno(err, "open directory", shown(dirpath));
    close(fd);
    return rc;
  }
  return read_names(d, shown(dirpath), names, count, err);
}
