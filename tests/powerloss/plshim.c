/* plshim.c: an LD_PRELOAD library that records every file-system operation a
 * process makes beneath the power-loss harness's roots (tests/powerloss/,
 * docs/reliability.md "Power loss"), so that replay.py can build the states a
 * power loss permits.
 *
 * Armed by PL_LOG (the log, appended to by every process of a workload) and
 * PL_ROOTS (colon-separated absolute directories); without PL_LOG every call
 * goes straight through. One line per operation that touches a path beneath
 * a root, written with one write(2) to the O_APPEND log, so the log's order
 * is the order the operations completed in, across threads and processes:
 *
 *   PID OP KIND INO PATH [ARGS...]          (tab-separated)
 *
 *   create  f INO PATH PARENT_INO           a file made by open(O_CREAT)
 *   trunc   f INO PATH SIZE                 O_TRUNC or ftruncate
 *   write   f INO PATH OFF LEN DATA_OFF     bytes at DATA_OFF in PL_LOG.PID
 *   fsync   f|d INO PATH                    fsync and fdatasync alike
 *   sfr     f INO PATH OFF LEN              sync_file_range (durable: nothing)
 *   rename  f|d INO SRC DST SRC_PARENT DST_PARENT
 *   link    f INO SRC DST DST_PARENT
 *   unlink  f INO PATH PARENT_INO
 *   mkdir   d INO PATH PARENT_INO
 *   rmdir   d INO PATH PARENT_INO
 *
 * Paths are absolute, the directory part resolved through /proc/self/fd (the
 * last component as given, never followed). copy_file_range is logged as a
 * write of the bytes it placed (read back from the source). The
 * 64-bit and fortified variants (open64, __openat_2, pwrite64, ...) and
 * openat2 through syscall(2) (lib/util/fsutil.c uses it) are covered; each
 * tracked operation and its line happen under one lock, so a process's
 * lines follow its operations' order. mmap'd writes (SQLite's -shm, which is
 * never durable) are not seen. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_ROOTS 8

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_on;
static int g_log = -1, g_data = -1;
static pid_t g_data_pid;
static off_t g_data_off;
static char g_roots[MAX_ROOTS][PATH_MAX];
static size_t g_nroots;
static char g_data_path[PATH_MAX];

#define REAL(ret, name, args) static ret(*real_##name) args
REAL(int, open, (const char *, int, ...));
REAL(int, openat, (int, const char *, int, ...));
REAL(ssize_t, write, (int, const void *, size_t));
REAL(ssize_t, pwrite, (int, const void *, size_t, off_t));
REAL(ssize_t, writev, (int, const struct iovec *, int));
REAL(ssize_t, pwritev, (int, const struct iovec *, int, off_t));
REAL(int, ftruncate, (int, off_t));
REAL(int, fsync, (int));
REAL(int, fdatasync, (int));
REAL(int, sync_file_range, (int, off_t, off_t, unsigned));
REAL(ssize_t, copy_file_range, (int, off_t *, int, off_t *, size_t, unsigned));
REAL(int, renameat2, (int, const char *, int, const char *, unsigned));
REAL(int, linkat, (int, const char *, int, const char *, int));
REAL(int, unlinkat, (int, const char *, int));
REAL(int, mkdirat, (int, const char *, mode_t));
REAL(long, syscall, (long, ...));

static void *sym(const char *name) {
  void *p = dlsym(RTLD_NEXT, name);
  if (!p) {
    fprintf(stderr, "plshim: no %s\n", name);
    abort();
  }
  return p;
}

static void init(void) {
  real_open = sym("open");
  real_openat = sym("openat");
  real_write = sym("write");
  real_pwrite = sym("pwrite");
  real_writev = sym("writev");
  real_pwritev = sym("pwritev");
  real_ftruncate = sym("ftruncate");
  real_fsync = sym("fsync");
  real_fdatasync = sym("fdatasync");
  real_sync_file_range = sym("sync_file_range");
  real_copy_file_range = sym("copy_file_range");
  real_renameat2 = sym("renameat2");
  real_linkat = sym("linkat");
  real_unlinkat = sym("unlinkat");
  real_mkdirat = sym("mkdirat");
  real_syscall = sym("syscall");
  const char *log = getenv("PL_LOG"), *roots = getenv("PL_ROOTS");
  if (!log || !*log || !roots || !*roots) return;
  g_log = real_open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (g_log < 0) return;
  char *copy = strdup(roots), *save = NULL;
  for (char *r = strtok_r(copy, ":", &save); r && g_nroots < MAX_ROOTS; r = strtok_r(NULL, ":", &save))
    snprintf(g_roots[g_nroots++], PATH_MAX, "%s", r);
  free(copy);
  g_on = 1;
}

static int on(void) {
  pthread_once(&g_once, init);
  return g_on;
}

static int under_root(const char *p) {
  for (size_t i = 0; i < g_nroots; i++) {
    size_t n = strlen(g_roots[i]);
    if (!strncmp(p, g_roots[i], n) && (p[n] == '/' || p[n] == 0)) return 1;
  }
  return 0;
}

/* The absolute path of fd (0 if it has none). */
static int fd_path(int fd, char *out) {
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, out, PATH_MAX - 1);
  if (n <= 0) return 0;
  out[n] = 0;
  return out[0] == '/';
}

/* dirfd + name as an absolute path, the last component not followed. */
static int at_path(int dirfd, const char *name, char *out) {
  char base[PATH_MAX];
  if (name[0] == '/') snprintf(base, sizeof base, "%s", name);
  else {
    char dir[PATH_MAX];
    if (dirfd == AT_FDCWD ? !getcwd(dir, sizeof dir) : !fd_path(dirfd, dir)) return 0;
    if (!*name || !strcmp(name, ".")) snprintf(base, sizeof base, "%s", dir);
    else if ((size_t)snprintf(base, sizeof base, "%s/%s", dir, name) >= sizeof base) return 0;
  }
  /* resolve the directory part (links, ., ..) */
  char *slash = strrchr(base, '/');
  char dir[PATH_MAX];
  if (slash == base) snprintf(dir, sizeof dir, "/");
  else snprintf(dir, sizeof dir, "%.*s", (int)(slash - base), base);
  char real[PATH_MAX];
  if (!realpath(dir, real)) snprintf(real, sizeof real, "%s", dir);
  const char *last = slash + 1;
  if (!strcmp(last, ".") || !*last) snprintf(out, PATH_MAX, "%s", real);
  else if (snprintf(out, PATH_MAX, "%s%s%s", real, strcmp(real, "/") ? "/" : "", last) >= PATH_MAX) return 0;
  return 1;
}

static unsigned long long parent_ino(const char *path) {
  char dir[PATH_MAX];
  const char *slash = strrchr(path, '/');
  snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
  struct stat sb;
  return stat(dir, &sb) == 0 ? (unsigned long long)sb.st_ino : 0;
}

static void emit(const char *fmt, ...) {
  char line[3 * PATH_MAX + 256];
  int n = snprintf(line, sizeof line, "%d\t", (int)getpid());
  va_list ap;
  va_start(ap, fmt);
  n += vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
  va_end(ap);
  if (n >= (int)sizeof line - 1) n = (int)sizeof line - 2;
  line[n++] = '\n';
  (void)!real_write(g_log, line, (size_t)n);
}

/* Appends len bytes to this process's data file; their offset there. */
static long long put_data(const void *buf, size_t len) {
  if (g_data < 0 || g_data_pid != getpid()) {
    if (g_data >= 0) close(g_data); /* a forked child writes its own */
    snprintf(g_data_path, sizeof g_data_path, "%s.%d", getenv("PL_LOG"), (int)getpid());
    g_data = real_open(g_data_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    g_data_pid = getpid();
    g_data_off = 0;
  }
  long long at = g_data_off;
  const char *p = buf;
  size_t done = 0;
  while (done < len) {
    ssize_t w = real_write(g_data, p + done, len - done);
    if (w <= 0) break;
    done += (size_t)w;
  }
  g_data_off += (off_t)done;
  return at;
}

/* ---------------------------------------------------------------- fd ops */

/* Whether fd is tracked: its path and inode. */
static int fd_tracked(int fd, char *path, struct stat *sb) {
  if (!on() || !fd_path(fd, path) || !under_root(path)) return 0;
  return fstat(fd, sb) == 0;
}

static void log_write(const char *path, const struct stat *sb, off_t off, const void *buf, size_t len) {
  long long at = put_data(buf, len);
  emit("write\tf\t%llu\t%s\t%lld\t%zu\t%lld", (unsigned long long)sb->st_ino, path, (long long)off, len, at);
}

static void log_open(int fd, const char *path, int flags, int existed) {
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb) != 0) return;
  if ((flags & O_CREAT) && !existed)
    emit("create\tf\t%llu\t%s\t%llu", (unsigned long long)sb.st_ino, path, parent_ino(path));
  else if ((flags & O_TRUNC) && (flags & O_ACCMODE) != O_RDONLY && S_ISREG(sb.st_mode))
    emit("trunc\tf\t%llu\t%s\t0", (unsigned long long)sb.st_ino, path);
}

/* An open through call(arg): logged when it creates or truncates a file
 * beneath a root. */
static int do_openat(int dirfd, const char *name, int flags, int (*call)(void *), void *arg) {
  char path[PATH_MAX];
  int tracked = on() && (flags & (O_CREAT | O_TRUNC)) && at_path(dirfd, name, path) && under_root(path);
  if (!tracked) return call(arg);
  pthread_mutex_lock(&g_mu);
  struct stat sb;
  int existed = lstat(path, &sb) == 0;
  int fd = call(arg);
  int e = errno;
  if (fd >= 0) log_open(fd, path, flags, existed);
  pthread_mutex_unlock(&g_mu);
  errno = e;
  return fd;
}

typedef struct open_args {
  int dirfd;
  const char *name;
  int flags;
  mode_t mode;
} open_args;

static int call_openat(void *a) {
  open_args *o = a;
  return real_openat(o->dirfd, o->name, o->flags, o->mode);
}

static mode_t va_mode(int flags, va_list ap) {
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

int openat(int dirfd, const char *name, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = va_mode(flags, ap);
  va_end(ap);
  pthread_once(&g_once, init);
  open_args a = {dirfd, name, flags, mode};
  return do_openat(dirfd, name, flags, call_openat, &a);
}

int open(const char *name, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = va_mode(flags, ap);
  va_end(ap);
  pthread_once(&g_once, init);
  open_args a = {AT_FDCWD, name, flags, mode};
  return do_openat(AT_FDCWD, name, flags, call_openat, &a);
}

int open64(const char *name, int flags, ...) __attribute__((alias("open")));
int openat64(int dirfd, const char *name, int flags, ...) __attribute__((alias("openat")));
int __open_2(const char *name, int flags) { return open(name, flags); }
int __open64_2(const char *name, int flags) { return open(name, flags); }
int __openat_2(int dirfd, const char *name, int flags) { return openat(dirfd, name, flags); }
int __openat64_2(int dirfd, const char *name, int flags) { return openat(dirfd, name, flags); }
int creat(const char *name, mode_t mode) { return open(name, O_CREAT | O_WRONLY | O_TRUNC, mode); }
int creat64(const char *name, mode_t mode) { return open(name, O_CREAT | O_WRONLY | O_TRUNC, mode); }

typedef struct openat2_args {
  int dirfd;
  const char *name;
  struct open_how *how;
  size_t size;
} openat2_args;

static int call_openat2(void *a) {
  openat2_args *o = a;
  return (int)real_syscall(SYS_openat2, o->dirfd, o->name, o->how, o->size);
}

long syscall(long n, ...) {
  va_list ap;
  va_start(ap, n);
  long a1 = va_arg(ap, long), a2 = va_arg(ap, long), a3 = va_arg(ap, long);
  long a4 = va_arg(ap, long), a5 = va_arg(ap, long), a6 = va_arg(ap, long);
  va_end(ap);
  pthread_once(&g_once, init);
  if (n == SYS_openat2) {
    struct open_how *how = (struct open_how *)a3;
    openat2_args o = {(int)a1, (const char *)a2, how, (size_t)a4};
    return do_openat((int)a1, (const char *)a2, (int)how->flags, call_openat2, &o);
  }
  return real_syscall(n, a1, a2, a3, a4, a5, a6);
}

ssize_t write(int fd, const void *buf, size_t len) {
  char path[PATH_MAX];
  struct stat sb;
  if (!fd_tracked(fd, path, &sb) || !S_ISREG(sb.st_mode)) return real_write(fd, buf, len);
  pthread_mutex_lock(&g_mu);
  int fl = fcntl(fd, F_GETFL);
  off_t off = fl >= 0 && (fl & O_APPEND) ? (fstat(fd, &sb), sb.st_size) : lseek(fd, 0, SEEK_CUR);
  ssize_t r = real_write(fd, buf, len);
  int e = errno;
  if (r > 0) log_write(path, &sb, off, buf, (size_t)r);
  pthread_mutex_unlock(&g_mu);
  errno = e;
  return r;
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off) {
  char path[PATH_MAX];
  struct stat sb;
  if (!fd_tracked(fd, path, &sb) || !S_ISREG(sb.st_mode)) return real_pwrite(fd, buf, len, off);
  pthread_mutex_lock(&g_mu);
  ssize_t r = real_pwrite(fd, buf, len, off);
  int e = errno;
  if (r > 0) log_write(path, &sb, off, buf, (size_t)r);
  pthread_mutex_unlock(&g_mu);
  errno = e;
  return r;
}
ssize_t pwrite64(int fd, const void *buf, size_t len, off_t off) __attribute__((alias("pwrite")));

/* The bytes of iov as one buffer (malloc'd), for the log. */
static void *gather(const struct iovec *iov, int cnt, size_t len) {
  char *b = malloc(len ? len : 1), *p = b;
  for (int i = 0; b && i < cnt && (size_t)(p - b) < len; i++) {
    size_t k = iov[i].iov_len < len - (size_t)(p - b) ? iov[i].iov_len : len - (size_t)(p - b);
    memcpy(p, iov[i].iov_base, k);
    p += k;
  }
  return b;
}

static ssize_t vec_write(int fd, const struct iovec *iov, int cnt, off_t at, int positioned) {
  char path[PATH_MAX];
  struct stat sb;
  if (!fd_tracked(fd, path, &sb) || !S_ISREG(sb.st_mode))
    return positioned ? real_pwritev(fd, iov, cnt, at) : real_writev(fd, iov, cnt);
  pthread_mutex_lock(&g_mu);
  off_t off = positioned ? at : lseek(fd, 0, SEEK_CUR);
  ssize_t r = positioned ? real_pwritev(fd, iov, cnt, at) : real_writev(fd, iov, cnt);
  int e = errno;
  if (r > 0) {
    void *b = gather(iov, cnt, (size_t)r);
    if (b) log_write(path, &sb, off, b, (size_t)r);
    free(b);
  }
  pthread_mutex_unlock(&g_mu);
  errno = e;
  return r;
}

ssize_t writev(int fd, const struct iovec *iov, int cnt) { return vec_write(fd, iov, cnt, 0, 0); }
ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off) { return vec_write(fd, iov, cnt, off, 1); }
ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off_t off) __attribute__((alias("pwritev")));

int ftruncate(int fd, off_t size) {
  char path[PATH_MAX];
  struct stat sb;
  if (!fd_tracked(fd, path, &sb)) return real_ftruncate(fd, size);
  pthread_mutex_lock(&g_mu);
  int r = real_ftruncate(fd, size);
  int e = errno;
  if (r == 0) emit("trunc\tf\t%llu\t%s\t%lld", (unsigned long long)sb.st_ino, path, (long long)size);
  pthread_mutex_unlock(&g_mu);
  errno = e;
  return r;
}
int ftruncate64(int fd, off_t size) __attribute__((alias("ftruncate")));

static int sync_op(int fd, int data_only) {
  char path[PATH_MAX];
  struct stat sb;
  if (!fd_tracked(fd, path, &sb)) return data_only ? real_fdatasync(fd) : real_fsync(fd);
  pthread_mutex_lock(&g_mu);
  int r = data_only ? real_fdatasync(fd) : real_fsync(fd);
  int e = errno;
  if (r == 0) emit("fsync\t%c\t%llu\t%s", S_ISDIR(sb.st_mode) ? 'd' : 'f', (unsigned long long)sb.st_ino, path);
  pthread_mutex_unlock(&g_mu);
  errno = e;
  return r;
}

int fsync(int fd) { return sync_op(fd, 0); }
int fdatasync(int fd) { return sync_op(fd, 1); }

int sync_file_range(int fd, off_t off, off_t len, unsigned flags) {
  char path[PATH_MAX];
  struct stat sb;
  if (!fd_tracked(fd, path, &sb)) return real_sync_file_range(fd, off, len, flags);
  pthread_mutex_lock(&g_mu);
  int r = real_sync_file_range(fd, off, len, flags);
  int e = errno;
  if (r == 0)
    emit("sfr\tf\t%llu\t%s\t%lld\t%lld", (unsigned long long)sb.st_ino, path, (long long)off, (long long)len);
  pthread_mutex_unlock(&g_mu);
  errno = e;
  return r;
}

ssize_t copy_file_range(int in, off_t *in_off, int out, off_t *out_off, size_t len, unsigned flags) {
  char path[PATH_MAX];
  struct stat sb;
  if (!fd_tracked(out, path, &sb)) return real_copy_file_range(in, in_off, out, out_off, len, flags);
  pthread_mutex_lock(&g_mu);
  off_t at = out_off ? *out_off : lseek(out, 0, SEEK_CUR);
  off_t from = in_off ? *in_off : lseek(in, 0, SEEK_CUR);
  ssize_t r = real_copy_file_range(in, in_off, out, out_off, len, flags);
  int e = errno;
  if (r > 0) {
    /* the bytes placed, read back from the source (out is write-only) */
    char *b = malloc((size_t)r);
    if (b && pread(in, b, (size_t)r, from) == r) log_write(path, &sb, at, b, (size_t)r);
    else emit("error\tf\t0\t%s\tcopy_file_range not read back", path);
    free(b);
  }
  pthread_mutex_unlock(&g_mu);
  errno = e;
  return r;
}

/* ---------------------------------------------------------------- path ops */

int renameat2(int sd, const char *src, int dd, const char *dst, unsigned flags) {
  char sp[PATH_MAX], dp[PATH_MAX];
  if (!on() || !at_path(sd, src, sp) || !at_path(dd, dst, dp) || !(under_root(sp) || under_root(dp)))
    return real_renameat2(sd, src, dd, dst, flags);
  pthread_mutex_lock(&g_mu);
  struct stat sb;
  int have = lstat(sp, &sb) == 0;
  int r = real_renameat2(sd, src, dd, dst, flags);
  int e = errno;
  if (r == 0 && have)
    emit("rename\t%c\t%llu\t%s\t%s\t%llu\t%llu", S_ISDIR(sb.st_mode) ? 'd' : 'f', (unsigned long long)sb.st_ino,
         sp, dp, parent_ino(sp), parent_ino(dp));
  pthread_mutex_unlock(&g_mu);
  errno = e;
  return r;
}
int renameat(int sd, const char *src, int dd, const char *dst) { return renameat2(sd, src, dd, dst, 0); }
int rename(const char *src, const char *dst) { return renameat2(AT_FDCWD, src, AT_FDCWD, dst, 0); }

int linkat(int sd, const char *src, int dd, const char *dst, int flags) {
  char sp[PATH_MAX], dp[PATH_MAX];
  if (!on() || !at_path(sd, src, sp) || !at_path(dd, dst, dp) || !under_root(dp))
    return real_linkat(sd, src, dd, dst, flags);
  pthread_mutex_lock(&g_mu);
  int r = real_linkat(sd, src, dd, dst, flags);
  int e = errno;
  struct stat sb;
  if (r == 0 && lstat(dp, &sb) == 0)
    emit("link\tf\t%llu\t%s\t%s\t%llu", (unsigned long long)sb.st_ino, sp, dp, parent_ino(dp));
  pthread_mutex_unlock(&g_mu);
  errno = e;
  return r;
}
int link(const char *src, const char *dst) { return linkat(AT_FDCWD, src, AT_FDCWD, dst, 0); }

int unlinkat(int dirfd, const char *name, int flags) {
  char p[PATH_MAX];
  if (!on() || !at_path(dirfd, name, p) || !under_root(p)) return real_unlinkat(dirfd, name, flags);
  pthread_mutex_lock(&g_mu);
  struct stat sb;
  int have = lstat(p, &sb) == 0;
  int r = real_unlinkat(dirfd, name, flags);
  int e = errno;
  if (r == 0 && have)
    emit("%s\t%c\t%llu\t%s\t%llu", (flags & AT_REMOVEDIR) ? "rmdir" : "unlink", (flags & AT_REMOVEDIR) ? 'd' : 'f',
         (unsigned long long)sb.st_ino, p, parent_ino(p));
  pthread_mutex_unlock(&g_mu);
  errno = e;
  return r;
}
int unlink(const char *name) { return unlinkat(AT_FDCWD, name, 0); }
int rmdir(const char *name) { return unlinkat(AT_FDCWD, name, AT_REMOVEDIR); }

int mkdirat(int dirfd, const char *name, mode_t mode) {
  char p[PATH_MAX];
  if (!on() || !at_path(dirfd, name, p) || !under_root(p)) return real_mkdirat(dirfd, name, mode);
  pthread_mutex_lock(&g_mu);
  int r = real_mkdirat(dirfd, name, mode);
  int e = errno;
  struct stat sb;
  if (r == 0 && lstat(p, &sb) == 0)
    emit("mkdir\td\t%llu\t%s\t%llu", (unsigned long long)sb.st_ino, p, parent_ino(p));
  pthread_mutex_unlock(&g_mu);
  errno = e;
  return r;
}
int mkdir(const char *name, mode_t mode) { return mkdirat(AT_FDCWD, name, mode); }
