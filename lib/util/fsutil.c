/* fsutil.c: POSIX file helpers (see fsutil.h). Reads retry on EINTR and
 * treat a short read as a truncated file, never as success. */
#include "util/fsutil.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
  return bri_strdupf("%.*s/%s", (int)la, a, b);
}

char *bri_strdupf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = NULL;
  int n = vasprintf(&s, fmt, ap);
  va_end(ap);
  return n < 0 ? NULL : s;
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int bri_list_dir(const char *dir, char ***names, size_t *count, bri_error *err) {
  *names = NULL;
  *count = 0;
  DIR *d = opendir(dir);
  if (!d)
    return errno == ENOENT ? bri_error_set(err, BRI_ENOTFOUND, "%s: no such directory", dir)
                           : bri_error_errno(err, "open directory", dir);
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

int bri_file_link_or_copy(const char *src, const char *dst, bool allow_link, bool *linked,
                          uint64_t *bytes, bri_error *err) {
  struct stat st;
  *linked = false;
  *bytes = 0;
  if (lstat(src, &st) != 0)
    return errno == ENOENT ? bri_error_set(err, BRI_ENOTFOUND, "%s: no such file", src)
                           : bri_error_errno(err, "stat", src);
  /* Lance writes regular files only; a link could lead anywhere */
  if (!S_ISREG(st.st_mode))
    return bri_error_set(err, BRI_ECORRUPT, "%s: not a regular file (symbolic links and special "
                         "files are never followed)", src);
  *bytes = (uint64_t)st.st_size;
  if (allow_link) {
    if (link(src, dst) == 0) {
      *linked = true;
      return 0;
    }
    if (errno == EEXIST) return bri_error_set(err, BRI_EIO, "%s already exists; brid never overwrites", dst);
    if (!link_unsupported(errno)) return bri_error_errno(err, "link", dst);
  }
  int in = open(src, O_RDONLY | O_CLOEXEC);
  if (in < 0) return bri_error_errno(err, "open", src);
  int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (out < 0) {
    int e = errno;
    close(in);
    errno = e;
    return e == EEXIST ? bri_error_set(err, BRI_EIO, "%s already exists; brid never overwrites", dst)
                       : bri_error_errno(err, "create", dst);
  }
  int rc = bri_copy_fd(in, out, (uint64_t)st.st_size, src, dst, err);
  if (!rc && fsync(out) != 0) rc = bri_error_errno(err, "fsync", dst);
  if (close(out) != 0 && !rc) rc = bri_error_errno(err, "close", dst);
  close(in);
  if (rc) unlink(dst);
  return rc;
}
