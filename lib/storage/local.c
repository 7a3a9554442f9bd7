/* local.c: the storage backend for local directories (see store.h).
 *
 * A store holds a descriptor of its root; every key is resolved beneath it
 * without following a symbolic link (util/fsutil.h: openat2 with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, else an O_NOFOLLOW walk), so the
 * checks callers make and the uses that follow cannot be split by a link
 * swapped in between. Reads are pread on one descriptor per open file;
 * writers write(2) straight into the new file (the caller buffers), and
 * copies use copy_file_range, so no path is slower than it was before the
 * storage seam. put_new is a staging file fsynced, then link(2)ed to its
 * name (EEXIST: the name is taken), then the directory fsynced; put the
 * same with rename(2). New files and directories take their permissions
 * from their directory (bri_adopt_parent_mode), not from the umask. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/backend.h"
#include "util/failpoint.h"
#include "util/fsutil.h"
#include "util/random.h"

/* What a local directory can do: all of it. */
#define LOCAL_CAPS                                                                                 \
  (BRI_STORE_CAP_LINK | BRI_STORE_CAP_DIRS | BRI_STORE_CAP_LOCAL | BRI_STORE_CAP_INOTIFY |         \
   BRI_STORE_CAP_SERVER_COPY | BRI_STORE_CAP_PUT_IF_ABSENT)

typedef struct local_store {
  bri_store base;
  int fd; /* the root, O_RDONLY | O_DIRECTORY */
} local_store;

typedef struct local_file {
  bri_sfile base;
  int fd;
} local_file;

typedef struct local_writer {
  bri_swriter base;
  int fd;
  int parent; /* the new file's directory (owned) */
  char *name; /* its last component */
} local_writer;

static local_store *ls(bri_store *st) { return (local_store *)st; }

/* Passes failpoint name unless it is NULL. */
static int step(const char *name, bri_error *err) { return name ? bri_failpoint(name, err) : 0; }

static int64_t mtime_ns(const struct stat *st) {
  return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

static bri_entry_kind kind_of(mode_t m) {
  return S_ISREG(m) ? BRI_ENTRY_FILE : S_ISDIR(m) ? BRI_ENTRY_DIR : S_ISLNK(m) ? BRI_ENTRY_LINK
                                                                              : BRI_ENTRY_OTHER;
}

/* ------------------------------------------------------------ store */

/* The canonical path of the directory open at fd, into abs: what the
 * kernel names it (one readlink of /proc/self/fd, where realpath(3) reads
 * every component of the path), or realpath's answer where /proc cannot
 * tell (not mounted, the directory removed meanwhile). NULL when neither
 * can. */
static const char *canonical_of(int fd, const char *path, char abs[PATH_MAX]) {
  char proc[64];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(proc, abs, PATH_MAX - 1);
  static const char deleted[] = " (deleted)";
  if (n > 0 && abs[0] == '/') {
    abs[n] = '\0';
    size_t d = sizeof deleted - 1;
    if ((size_t)n < d || strcmp(abs + n - d, deleted) != 0) return abs;
  }
  return realpath(path, abs);
}

static int local_open(const char *uri, unsigned flags, bri_store **out, bri_error *err) {
  *out = NULL;
  const char *path = *uri ? uri : ".";
  /* the root itself is the caller's choice: links in it are followed; made
   * (with missing parents, like mkdir -p) with the umask, as its parent is
   * not the table's */
  if (flags & BRI_STORE_CREATE) {
    char *p = strdup(path);
    if (!p) return bri_error_set(err, BRI_ENOMEM, "out of memory");
    for (char *q = p + 1; (flags & BRI_STORE_PARENTS) && *q; q++)
      if (*q == '/') {
        *q = 0;
        (void)mkdir(p, 0777); /* an existing one is fine; a real failure shows below */
        *q = '/';
      }
    int rc = mkdir(p, 0777) != 0 && errno != EEXIST ? bri_error_errno(err, "create directory", path) : 0;
    free(p);
    if (rc) return rc;
  }
  local_store *s = calloc(1, sizeof *s);
  if (!s) return bri_error_set(err, BRI_ENOMEM, "%s: out of memory", path);
  s->fd = -1;
  char abs[PATH_MAX];
  int rc = bri_dir_open(path, &s->fd, err);
  if (!rc)
    rc = bri_store_base_init(&s->base, &bri_local_store_ops, path, canonical_of(s->fd, path, abs), LOCAL_CAPS,
                             err);
  if (rc) {
    if (s->fd >= 0) close(s->fd);
    free(s);
    return rc;
  }
  *out = &s->base;
  return 0;
}

static void local_close(bri_store *st) {
  bri_store_base_clear(st);
  close(ls(st)->fd);
  free(st);
}

/* ------------------------------------------------------------ reading */

static int local_open_file(bri_store *st, const char *key, const char *path, bri_sfile **out,
                           bri_error *err) {
  *out = NULL;
  int fd;
  int rc = bri_open_beneath(ls(st)->fd, st->uri, key, O_RDONLY, &fd, err);
  if (rc == BRI_ENOTFOUND) return bri_error_set(err, BRI_ENOTFOUND, "%s: no such file", path);
  if (rc) return rc;
  struct stat sb;
  if (fstat(fd, &sb) != 0) rc = bri_error_errno(err, "stat", path);
  else if (!S_ISREG(sb.st_mode)) rc = bri_error_set(err, BRI_EIO, "%s: not a regular file", path);
  local_file *f = rc ? NULL : calloc(1, sizeof *f);
  if (!rc && (!f || !(f->base.path = strdup(path)))) {
    free(f);
    rc = bri_error_set(err, BRI_ENOMEM, "%s: out of memory", path);
  }
  if (rc) {
    close(fd);
    return rc;
  }
  f->base.ops = &bri_local_store_ops;
  f->base.size = (uint64_t)sb.st_size;
  f->fd = fd;
  *out = &f->base;
  return 0;
}

static int local_read(bri_sfile *f, uint64_t offset, void *buf, size_t len, bri_error *err) {
  return bri_pread_exact(((local_file *)f)->fd, f->path, offset, buf, len, err);
}

static void local_close_file(bri_sfile *f) {
  close(((local_file *)f)->fd);
  free(f->path);
  free(f);
}

/* ------------------------------------------------------------ stat, list */

static int local_stat(bri_store *st, const char *key, bri_store_info *out, bri_error *err) {
  struct stat sb;
  int rc = bri_stat_beneath(ls(st)->fd, st->uri, key, &sb, err);
  if (rc) return rc;
  out->kind = kind_of(sb.st_mode);
  out->size = out->kind == BRI_ENTRY_FILE ? (uint64_t)sb.st_size : 0;
  out->mtime_ns = mtime_ns(&sb);
  return 0;
}

/* Opens directory key ("" = the root) for reading, never through a link. */
static int open_dir(bri_store *st, const char *key, int *fd, bri_error *err) {
  if (!*key) {
    *fd = openat(ls(st)->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return *fd >= 0 ? 0 : bri_error_errno(err, "open directory", st->uri);
  }
  return bri_open_beneath(ls(st)->fd, st->uri, key, O_RDONLY | O_DIRECTORY, fd, err);
}

static int local_list(bri_store *st, const char *dir, unsigned flags, bri_store_entry **out,
                      size_t *count, bri_error *err) {
  int fd;
  int rc = open_dir(st, dir, &fd, err);
  if (rc) return rc;
  DIR *d = fdopendir(fd);
  if (!d) {
    rc = bri_error_errno(err, "open directory", st->uri);
    close(fd);
    return rc;
  }
  bri_store_entry *v = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  errno = 0;
  while (!rc && (e = readdir(d)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 32;
      bri_store_entry *g = realloc(v, cap * sizeof *v);
      if (!g) {
        rc = bri_error_set(err, BRI_ENOMEM, "%s/%s: out of memory listing", st->uri, dir);
        break;
      }
      v = g;
    }
    bri_store_entry *x = &v[n];
    memset(x, 0, sizeof *x);
    if (!(x->name = strdup(e->d_name))) {
      rc = bri_error_set(err, BRI_ENOMEM, "%s/%s: out of memory listing", st->uri, dir);
      break;
    }
    n++;
    unsigned char t = e->d_type;
    x->info.kind = t == DT_REG ? BRI_ENTRY_FILE : t == DT_DIR ? BRI_ENTRY_DIR : t == DT_LNK ? BRI_ENTRY_LINK
                                                                                          : BRI_ENTRY_OTHER;
    if ((flags & BRI_LIST_STAT) || t == DT_UNKNOWN) {
      struct stat sb;
      if (fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
        x->info.kind = kind_of(sb.st_mode);
        x->info.size = x->info.kind == BRI_ENTRY_FILE ? (uint64_t)sb.st_size : 0;
        x->info.mtime_ns = mtime_ns(&sb);
      } else if (errno != ENOENT) { /* ENOENT: gone since readdir; keep what readdir said */
        rc = bri_error_set(err, BRI_EIO, "stat %s/%s%s%s: %s", st->uri, dir, *dir ? "/" : "",
                           e->d_name, strerror(errno));
      }
    }
    errno = 0;
  }
  if (!rc && errno) rc = bri_error_errno(err, "read directory", st->uri);
  closedir(d);
  if (rc) {
    bri_store_entries_free(v, n);
    return rc;
  }
  *out = v;
  *count = n;
  return 0;
}

/* ------------------------------------------------------------ writing */

/* The directory holding key's last component, as a descriptor this call
 * owns (*parent) and the component (*name, into key). */
static int own_parent(bri_store *st, const char *key, int *parent, const char **name,
                      bri_error *err) {
  int p;
  bool owned;
  size_t off;
  int rc = bri_parent_beneath(ls(st)->fd, st->uri, key, &p, &owned, &off, err);
  if (rc) return rc;
  if (!owned && (p = fcntl(p, F_DUPFD_CLOEXEC, 0)) < 0) return bri_error_errno(err, "dup", st->uri);
  *parent = p;
  *name = key + off;
  return 0;
}

/* fsyncs the directory behind a (possibly O_PATH) descriptor. */
static int sync_dirfd(int dfd, const char *what, bri_error *err) {
  int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return bri_error_errno(err, "open directory", what);
  int rc = fsync(fd) == 0 ? 0 : bri_error_errno(err, "fsync directory", what);
  close(fd);
  return rc;
}

static int write_all(int fd, const void *data, size_t len, const char *what, bri_error *err) {
  const uint8_t *p = data;
  size_t done = 0;
  while (done < len) {
    ssize_t n = write(fd, p + done, len - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return bri_error_errno(err, "write", what);
    done += (size_t)n;
  }
  return 0;
}

/* The directory part of key ("" for one component), for messages. */
static char *dir_path(bri_store *st, const char *key, const char *name) {
  return name == key ? strdup(st->uri) : bri_strdupf("%s/%.*s", st->uri, (int)(name - key - 1), key);
}

/* put_new_volatile: the file is made under its own name (O_EXCL) and
 * written, with no staging name and no fsync (store.h). */
static int put_direct(bri_store *st, const char *key, const void *data, size_t len, const bri_store_steps *steps,
                      bri_error *err) {
  int parent = -1, fd = -1;
  const char *name;
  char *full = bri_store_path(st, key);
  int rc = full ? own_parent(st, key, &parent, &name, err) : bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (!rc && (fd = openat(parent, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0)
    rc = errno == EEXIST ? bri_error_set(err, BRI_ETAKEN, "%s already exists; brid never overwrites", full)
                         : bri_error_errno(err, "create", full);
  bool made = !rc;
  if (!rc) {
    bri_adopt_parent_mode(fd, parent, false);
    if (!(rc = write_all(fd, data, len, full, err))) rc = step(steps->written, err);
  }
  if (fd >= 0 && close(fd) != 0 && !rc) rc = bri_error_errno(err, "close", full);
  if (rc && made) unlinkat(parent, name, 0); /* a failed put leaves nothing */
  if (!rc) rc = step(steps->published, err);
  if (parent >= 0) close(parent);
  free(full);
  return rc;
}

static int local_put(bri_store *st, const char *key, const void *data, size_t len, unsigned how,
                     const bri_store_steps *steps, bri_error *err) {
  bool if_absent = how & BRI_PUT_IF_ABSENT, durable = !(how & BRI_PUT_VOLATILE);
  if (if_absent && !durable) return put_direct(st, key, data, len, steps, err);
  int parent = -1, fd = -1;
  const char *name;
  char staging[NAME_MAX + 1];
  char *full = bri_store_path(st, key), *dir = NULL;
  bool staged = false;
  int rc = full ? own_parent(st, key, &parent, &name, err) : bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (rc) goto out;
  if (!(dir = dir_path(st, key, name))) {
    rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    goto out;
  }
  /* staging name in the same directory (Lance's cleanup reclaims .tmp*) */
  uint8_t r[8];
  bri_random_bytes(r, sizeof r);
  char hex[17];
  for (int i = 0; i < 8; i++) snprintf(hex + 2 * i, 3, "%02x", r[i]);
  if ((size_t)snprintf(staging, sizeof staging, ".tmp_%s_%s", name, hex) >= sizeof staging)
    snprintf(staging, sizeof staging, ".tmp_%s", hex);
  fd = openat(parent, staging, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    rc = bri_error_errno(err, "create staging file in", dir);
    goto out;
  }
  staged = true;
  bri_adopt_parent_mode(fd, parent, false);
  if ((rc = write_all(fd, data, len, full, err)) || (rc = step(steps->written, err))) goto out;
  if (durable && fsync(fd) != 0) {
    rc = bri_error_errno(err, "fsync", full);
    goto out;
  }
  int c = close(fd);
  fd = -1;
  if (c != 0) {
    rc = bri_error_errno(err, "close", full);
    goto out;
  }
  if ((rc = step(steps->durable, err)) || (rc = step(steps->publish, err))) goto out;
  if (if_absent ? linkat(parent, staging, parent, name, 0) != 0
                : renameat(parent, staging, parent, name) != 0) {
    rc = if_absent && errno == EEXIST
             ? bri_error_set(err, BRI_ETAKEN, "%s already exists (another writer took it first)", full)
             : bri_error_errno(err, if_absent ? "link" : "rename", full);
    goto out;
  }
  /* published: nothing below may turn into a failure (store.h) */
  bri_error warn;
  int wrc = step(steps->published, &warn);
  if (if_absent) unlinkat(parent, staging, 0); /* renamed away otherwise */
  staged = false;
  /* the new name is durable only once its directory is (the power-loss
   * harness's canary switches this off, docs/reliability.md) */
  if (!wrc && durable && !bri_failpoint_armed("canary.no_put_dir_fsync")) wrc = sync_dirfd(parent, dir, &warn);
  if (wrc && err) *err = warn; /* the reason, as a warning (store.h) */
out:
  if (fd >= 0) close(fd);
  if (staged) unlinkat(parent, staging, 0); /* a failed attempt leaves nothing */
  if (parent >= 0) close(parent);
  free(full), free(dir);
  return rc;
}

static int local_create(bri_store *st, const char *key, bri_swriter **out, bri_error *err) {
  *out = NULL;
  local_writer *w = calloc(1, sizeof *w);
  if (!w) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  w->fd = w->parent = -1;
  const char *name;
  int rc = own_parent(st, key, &w->parent, &name, err);
  if (!rc && !(w->name = strdup(name))) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (!rc) {
    w->fd = openat(w->parent, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (w->fd < 0)
      rc = errno == EEXIST ? bri_error_set(err, BRI_ETAKEN, "%s/%s already exists; brid never "
                                           "overwrites", st->uri, key)
                           : bri_error_set(err, BRI_EIO, "create %s/%s: %s", st->uri, key,
                                           strerror(errno));
    else
      bri_adopt_parent_mode(w->fd, w->parent, false);
  }
  if (rc) {
    if (w->parent >= 0) close(w->parent);
    free(w->name);
    free(w);
    return rc;
  }
  *out = &w->base;
  return 0;
}

static int local_append(bri_swriter *bw, const void *data, size_t len, bri_error *err) {
  return write_all(((local_writer *)bw)->fd, data, len, bw->path, err);
}

static int local_append_copy(bri_swriter *bw, bri_store *src, const char *src_key, uint64_t offset,
                             uint64_t len, bri_error *err) {
  local_writer *w = (local_writer *)bw;
  int in;
  int rc = bri_open_beneath(ls(src)->fd, src->uri, src_key, O_RDONLY, &in, err);
  if (rc) return rc;
  struct stat sb;
  char *from = bri_store_path(src, src_key);
  if (!from) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  else if (fstat(in, &sb) != 0) rc = bri_error_errno(err, "stat", from);
  /* Lance writes regular files only */
  else if (!S_ISREG(sb.st_mode))
    rc = bri_error_set(err, BRI_ECORRUPT, "%s: not a regular file (symbolic links and special files "
                       "are never followed)", from);
  else if (lseek(in, (off_t)offset, SEEK_SET) < 0) rc = bri_error_errno(err, "seek", from);
  else rc = bri_copy_fd(in, w->fd, len, from, bw->path, err);
  close(in);
  free(from);
  return rc;
}

static void writer_free(local_writer *w, bool remove) {
  if (w->fd >= 0) close(w->fd);
  if (remove) unlinkat(w->parent, w->name, 0); /* ours: created O_EXCL */
  close(w->parent);
  free(w->name);
  free(w);
}

static int local_finish(bri_swriter *bw, bri_error *err) {
  local_writer *w = (local_writer *)bw;
  int rc = step(bw->steps.written, err);
  if (!rc && fsync(w->fd) != 0) rc = bri_error_errno(err, "fsync", bw->path);
  int c = close(w->fd);
  w->fd = -1;
  if (!rc && c != 0) rc = bri_error_errno(err, "close", bw->path);
  /* the file's name is durable only once its directory is: without this a
   * power loss may keep a manifest naming the file and lose the name
   * (tests/powerloss, docs/reliability.md) */
  if (!rc) rc = sync_dirfd(w->parent, bw->path, err);
  writer_free(w, rc != 0);
  return rc;
}

static void local_abort(bri_swriter *bw) { writer_free((local_writer *)bw, true); }

static int local_copy(bri_store *src, const char *src_key, bri_store *dst, const char *dst_key,
                      unsigned flags, bool *linked, uint64_t *bytes, bri_error *err) {
  return bri_link_or_copy_beneath(ls(src)->fd, src->uri, src_key, ls(dst)->fd, dst->uri, dst_key,
                                  (flags & BRI_COPY_TRY_LINK) != 0, linked, bytes, err);
}

static int local_link(bri_store *src, const char *src_key, bri_store *dst, const char *dst_key,
                      uint64_t *bytes, bri_error *err) {
  return bri_link_beneath(ls(src)->fd, src->uri, src_key, ls(dst)->fd, dst->uri, dst_key, bytes, err);
}

static int local_mkdir(bri_store *st, const char *key, bool durable, bri_error *err) {
  int rc = bri_mkdir_beneath(ls(st)->fd, st->uri, key, err);
  if (rc == BRI_EIO && errno == EEXIST) {
    struct stat sb;
    bool dir = bri_stat_beneath(ls(st)->fd, st->uri, key, &sb, NULL) == 0 && S_ISDIR(sb.st_mode);
    rc = bri_error_set(err, dir ? BRI_ETAKEN : BRI_ECORRUPT, "%s/%s %s", st->uri, key,
                       dir ? "already exists" : "exists and is not a directory");
  }
  /* the new directory's name is durable only once its parent is: a
   * directory fsynced later (with the files placed in it) does not make its
   * own entry durable (tests/powerloss, docs/reliability.md) */
  int parent = -1;
  const char *name;
  if (!rc && durable && !(rc = own_parent(st, key, &parent, &name, err))) {
    char *dir = dir_path(st, key, name);
    rc = dir ? sync_dirfd(parent, dir, err) : bri_error_set(err, BRI_ENOMEM, "out of memory");
    free(dir);
    close(parent);
  }
  return rc;
}

static int local_sync(bri_store *st, const char *key, bri_error *err) {
  int fd;
  int rc = open_dir(st, key, &fd, err);
  if (rc) return rc;
  if (fsync(fd) != 0) rc = bri_error_set(err, BRI_EIO, "fsync directory %s%s%s: %s", st->uri,
                                         *key ? "/" : "", key, strerror(errno));
  close(fd);
  return rc;
}

static int local_delete(bri_store *st, const char *key, bri_error *err) {
  int rc = bri_remove_beneath(ls(st)->fd, st->uri, key, err);
  if (rc == BRI_EIO && (errno == ENOTEMPTY || errno == EEXIST))
    rc = bri_error_set(err, BRI_ENOTEMPTY, "%s/%s: directory is not empty", st->uri, key);
  return rc;
}

/* ------------------------------------------------------------ locks */

typedef struct local_slock {
  bri_slock base;
  int fd;
} local_slock;

/* OFD locks belong to the open file description, not to the process:
 * two threads of brid, or brid and brictl, exclude each other alike, and
 * closing another descriptor of the file (as POSIX record locks would
 * have it) does not drop the lock. */
static int local_lock(bri_store *st, const char *key, const char *path, const char *who, bri_slock **out,
                      bri_error *err) {
  int parent;
  const char *name;
  int rc = own_parent(st, key, &parent, &name, err);
  if (rc) return rc;
  int fd = openat(parent, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    fd = openat(parent, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) bri_adopt_parent_mode(fd, parent, false);
    else if (errno == EEXIST) fd = openat(parent, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC); /* a racing creator */
  }
  int e = errno;
  close(parent);
  if (fd < 0) return bri_error_set(err, BRI_EIO, "lock %s: %s", path, strerror(e));
  struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
  if (fcntl(fd, F_OFD_SETLK, &fl) != 0) {
    e = errno;
    if (e == EAGAIN || e == EACCES) {
      char held[256] = "";
      ssize_t n = pread(fd, held, sizeof held - 1, 0);
      held[n > 0 ? n : 0] = 0;
      held[strcspn(held, "\n")] = 0;
      rc = bri_error_set(err, BRI_ETAKEN, "%s is held by %s", path, held[0] ? held : "another process");
    } else {
      rc = bri_error_set(err, e == EINVAL || e == ENOLCK ? BRI_EUNSUPPORTED : BRI_EIO, "lock %s: %s", path,
                         strerror(e));
    }
    close(fd);
    return rc;
  }
  local_slock *l = calloc(1, sizeof *l);
  if (!l) {
    close(fd);
    return bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  l->fd = fd;
  /* who holds it, for the message of the next one to try (best effort) */
  size_t len = strlen(who);
  if (ftruncate(fd, 0) == 0 && pwrite(fd, who, len, 0) == (ssize_t)len) (void)!pwrite(fd, "\n", 1, (off_t)len);
  *out = &l->base;
  return 0;
}

static void local_unlock(bri_slock *bl) {
  local_slock *l = (local_slock *)bl;
  /* the holder's line goes with the lock (while still held: never a next
   * holder's line), so a free lock is an empty file */
  (void)!ftruncate(l->fd, 0);
  close(l->fd); /* drops the OFD lock */
  free(l);
}

const bri_store_ops bri_local_store_ops = {
    .scheme = NULL,
    .open = local_open,
    .close = local_close,
    .caps = LOCAL_CAPS,
    .open_file = local_open_file,
    .read = local_read,
    .close_file = local_close_file,
    .stat = local_stat,
    .list = local_list,
    .put = local_put,
    .create = local_create,
    .append = local_append,
    .append_copy = local_append_copy,
    .finish = local_finish,
    .abort = local_abort,
    .copy = local_copy,
    .link = local_link,
    .mkdir = local_mkdir,
    .sync = local_sync,
    .delete_one = local_delete,
    .delete_many = NULL,
    .lock = local_lock,
    .unlock = local_unlock,
};
