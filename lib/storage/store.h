/* store.h: the one door to a table's files. Every byte libbri reads from or
 * writes to a table, every listing and every deletion goes through a store;
 * no other layer of lib/ opens, lists or removes table files itself
 * (scripts/check-storage.sh fails the build when one does).
 *
 * A store is one root: a local directory ("/srv/t.lance", "file:///srv/...")
 * or an object-store prefix ("s3://bucket/prefix/t.lance"; such backends
 * register in store.c, see storage/backend.h). Inside it, objects are named
 * by keys, '/'-separated relative paths ("data/x.lance"). Every call that
 * takes a `path` takes the full path: the store's uri, '/', the key
 * ("<uri>/data/x.lance", how lib builds paths from a table root; the uri
 * alone is the root). A path outside the root is BRI_EINVAL, and a key with
 * an empty, "." or ".." component is BRI_ECORRUPT before any I/O: Lance
 * never writes one, so a manifest naming one is damaged or hostile.
 * Backends only ever see clean keys.
 *
 * The model is an object store's, so that S3 is natural and a local disk
 * loses nothing:
 *   - objects are written whole (put, put_new) or streamed once from start
 *     to finish (a writer: append bytes, append a copied range of another
 *     object, finish); nothing is ever modified in place, and only put
 *     replaces an existing object (latest_version_hint.json);
 *   - the commit primitive is put_new, put-if-absent: on a local disk a
 *     staging file linked to its name, on S3 a PUT with If-None-Match: *;
 *     there is no rename in the interface;
 *   - directories are prefixes: list shows the immediate children of one
 *     (files and sub-prefixes, S3's ListObjectsV2 with delimiter "/").
 *     On a local disk they are real (mkdir makes one, delete removes an
 *     empty one, sync makes the names in one durable); on object stores
 *     those three succeed doing nothing;
 *   - hard links exist only where the store says so (BRI_STORE_CAP_LINK).
 *
 * Local stores resolve every path beneath the root and never follow a
 * symbolic link inside it (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS,
 * else a walk of O_NOFOLLOW opens: util/fsutil.h), so a link in a table,
 * even one swapped in between a check and a use, cannot lead a read, write
 * or delete outside. The root itself may be a link: it is what the caller
 * chose. New files and directories take their permissions from the
 * directory they are created in, not from the process umask (brid runs
 * with UMask=0077; the table's users must still read and write what it
 * writes): a file gets the directory's read/write bits (2775 -> 0664, 0755
 * -> 0644, 0700 -> 0600), a directory the directory's mode (setgid kept),
 * and both the directory's group where the process may set it.
 *
 * Durability. put, put_new, a finished writer, copy: the object's bytes are
 * durable when the call returns. put and put_new also make the name
 * durable (they sync the directory). Names created by a writer, copy, link
 * or mkdir become durable with bri_store_sync of their directory (one sync
 * after many files, as compaction does before it commits). Object stores
 * are durable on return; sync does nothing there.
 *
 * Errors (error.h): BRI_ENOTFOUND the object or directory does not exist;
 * BRI_ETAKEN the name exists (put_new, create, copy, link, mkdir: nothing
 * is ever overwritten); BRI_ENOTEMPTY a directory still holds entries;
 * BRI_EUNSUPPORTED the store cannot do it (link on S3 or across
 * filesystems); BRI_ECORRUPT a bad key, a symbolic link where a file or
 * directory must be, a read past the end; BRI_EINVAL a path
 * outside the store; BRI_EIO anything else (the message names the full path
 * and the system's or the server's reason). Messages always name the full
 * path ("<uri>/<key>").
 *
 * Threads: a store may be used from several threads at once; one bri_sfile
 * or bri_swriter by one thread at a time. A file or writer is closed
 * before its store (one opened with a NULL store has none).
 *
 * Failpoints: calls that write take an optional bri_store_steps naming the
 * failpoints (util/failpoint.h) to pass at their crash-relevant steps, so
 * that the crash matrices work the same on every backend. */
#ifndef BRI_STORE_H
#define BRI_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

typedef struct bri_store bri_store;
typedef struct bri_sfile bri_sfile;
typedef struct bri_swriter bri_swriter;
typedef struct bri_slock bri_slock;

/* ------------------------------------------------------------ stores */

/* What a store can do beyond the common model. */
enum {
  BRI_STORE_CAP_LINK = 1 << 0,  /* bri_store_link can work (a POSIX filesystem) */
  BRI_STORE_CAP_DIRS = 1 << 1,  /* directories are real (mkdir, empty dirs, sync) */
  BRI_STORE_CAP_LOCAL = 1 << 2, /* paths are local files this process can open */
  BRI_STORE_CAP_INOTIFY = 1 << 3, /* changes can be watched (inotify on a local disk) */
  BRI_STORE_CAP_POLL = 1 << 4,    /* changes are found by listing (object stores) */
  BRI_STORE_CAP_SERVER_COPY = 1 << 5, /* copies need not pass through this process
                                         (copy_file_range; S3 CopyObject; Azure Copy Blob) */
  BRI_STORE_CAP_PUT_IF_ABSENT = 1 << 6, /* put_new is atomic (link; If-None-Match: *) */
};

/* The canonical name of the location uri (bri_store_canonical's, without
 * opening a store or making a request), malloc'd into *out: the one name
 * brid and brictl give a table or root (its row in the job store, its
 * configuration section, what brictl asks brid about). Object stores: their
 * normalized URI without trailing slashes (every Azure form as
 * az://CONTAINER/PREFIX). Local paths: the real path when the path exists;
 * else the real path of its parent directory joined with its last name (a
 * table not created yet already has the name it will have); else the path
 * made absolute as it is; never a trailing slash. A bad URI (an invalid
 * container or bucket name, an unknown scheme): BRI_EINVAL or
 * BRI_EUNSUPPORTED naming it. */
int bri_store_location(const char *uri, char **out, bri_error *err);

/* bri_store_open flags. */
enum {
  BRI_STORE_CREATE = 1 << 0,  /* create the root when missing (local: one directory,
                                 mode from the umask: its parent is not the table's) */
  BRI_STORE_PARENTS = 1 << 1, /* with BRI_STORE_CREATE: missing parents too (mkdir -p) */
};

/* Opens the store rooted at uri: a local path (absolute or relative; a
 * file:// URI) or a URI whose scheme a backend registered ("s3://...",
 * "az://..." and Azure's other forms, docs/azure.md).
 * Local: the root must be a directory (BRI_ENOTFOUND when missing, unless
 * BRI_STORE_CREATE). Object stores check nothing here that costs a request
 * unless they must (credentials, endpoint). Unknown scheme: BRI_EUNSUPPORTED
 * naming it. */
int bri_store_open(const char *uri, unsigned flags, bri_store **out, bri_error *err);
void bri_store_close(bri_store *st);

/* The root as given, without trailing slashes ("." for ""). */
const char *bri_store_uri(const bri_store *st);
/* The root as an absolute, canonical location (local: realpath; object
 * stores: the normalized URI): what another table's manifest must name
 * to find this one (a shallow clone's base path). */
const char *bri_store_canonical(const bri_store *st);
unsigned bri_store_caps(const bri_store *st);

/* The key of path in st (the part below the root; "" for the root itself),
 * or NULL when path lies outside. Lexical. */
const char *bri_store_key(const bri_store *st, const char *path);
/* "<uri>/<key>" (malloc'd), or NULL out of memory. */
char *bri_store_path(const bri_store *st, const char *key);

/* ------------------------------------------------------------ reading */

/* Opens an object for ranged reads; its size is known from here on (a file
 * that grows later is read as it was). Missing: BRI_ENOTFOUND "<path>: no
 * such file"; a link on the way or at path: BRI_ECORRUPT; a directory or
 * special file: BRI_EIO "<path>: not a regular file". st NULL: path is a
 * local file named by its own absolute or relative path, outside any table
 * (a CLI argument, an External blob's absolute URI); links in its directory
 * part are followed, a link as its last component is refused. The same
 * NULL store serves read, stat, put, put_new, create, delete, list (a
 * directory by its own path) and a copy's source. */
int bri_store_open_file(bri_store *st, const char *path, bri_sfile **out, bri_error *err);
uint64_t bri_sfile_size(const bri_sfile *f);
/* The full path, for messages. */
const char *bri_sfile_path(const bri_sfile *f);
/* Reads exactly len bytes at offset (local: pread; S3: a ranged GET). A range
 * past the end: BRI_ECORRUPT "<path>: wanted N bytes at offset O, file ends
 * after E". */
int bri_sfile_read(bri_sfile *f, uint64_t offset, void *buf, size_t len, bri_error *err);

/* Several ranges of one object at once, each as bri_sfile_read (S3: many
 * ranged GETs in flight; local: one pread after another). Returns the
 * first failure; the buffers are then unspecified. */
typedef struct bri_sread {
  uint64_t offset;
  void *buf;
  size_t len;
} bri_sread;
int bri_sfile_readv(bri_sfile *f, const bri_sread *reads, size_t n, bri_error *err);
void bri_sfile_close(bri_sfile *f);

/* bri_store_prefetch flags: what is wanted soon. */
enum {
  BRI_PREFETCH_OPEN = 0,      /* the files will be opened and read (their ends first) */
  BRI_PREFETCH_STAT = 1 << 0, /* only their size and time (bri_store_stat) */
};

/* A hint that these files will be opened (or stat'ed) soon: object stores
 * fetch what that needs (S3: the last 256 KiB of each, or a HEAD, many
 * requests in flight) and keep it for this store's later calls, so that a
 * job that walks many small files waits for one round of requests instead
 * of one per file. Errors are ignored here (the later call reports them).
 * Local stores do nothing. */
void bri_store_prefetch(bri_store *st, const char *const *paths, size_t n, unsigned flags);

/* Reads a whole object into a malloc'd buffer (NUL-terminated, the NUL not
 * counted). Larger than max_len: BRI_EUNSUPPORTED. st NULL as above. */
int bri_store_read(bri_store *st, const char *path, size_t max_len, uint8_t **out, size_t *len,
                   bri_error *err);

/* ------------------------------------------------------------ stat, list */

typedef enum bri_entry_kind {
  BRI_ENTRY_FILE = 1,
  BRI_ENTRY_DIR,   /* a directory, or a common prefix of an object store */
  BRI_ENTRY_LINK,  /* a symbolic link (local only): never followed */
  BRI_ENTRY_OTHER, /* a fifo, socket, device (local only) */
} bri_entry_kind;

typedef struct bri_store_info {
  bri_entry_kind kind;
  uint64_t size;    /* files */
  int64_t mtime_ns; /* last modification (S3: LastModified); 0 for prefixes */
} bri_store_info;

/* What is at path, never following a link. Missing: BRI_ENOTFOUND (object
 * stores: a key that is neither an object nor a non-empty prefix). */
int bri_store_stat(bri_store *st, const char *path, bri_store_info *out, bri_error *err);

/* 0 when path is a directory (a link to one is not), or is missing and
 * absent_ok; a link: BRI_ECORRUPT "<path> is a symbolic link; brid never
 * follows links out of a table"; anything else BRI_ECORRUPT "<path> is not
 * a directory"; missing: BRI_ENOTFOUND. For the directories an operation
 * lists or writes into: the early, clear refusal (the calls themselves
 * refuse a link again, also one swapped in later). */
int bri_store_check_dir(bri_store *st, const char *path, bool absent_ok, bri_error *err);

typedef struct bri_store_entry {
  char *name;          /* one component */
  bri_store_info info; /* size and mtime_ns only with BRI_LIST_STAT */
} bri_store_entry;

/* bri_store_list flags. */
enum {
  BRI_LIST_STAT = 1 << 0, /* fill size and mtime_ns (free on S3; a stat per entry locally) */
};

/* The immediate children of directory dir ("" = the root), sorted bytewise by
 * name: objects, and sub-directories (S3: common prefixes under delimiter
 * "/"). A missing directory: BRI_ENOTFOUND where the store can tell (local),
 * else an empty list; a link or non-directory at dir: BRI_ECORRUPT. The
 * caller frees with bri_store_entries_free. */
int bri_store_list(bri_store *st, const char *dir, unsigned flags, bri_store_entry **out,
                   size_t *count, bri_error *err);
void bri_store_entries_free(bri_store_entry *e, size_t count);

/* Every file below directory dir at any depth, its name relative to dir
 * ("7f3a/0001.blob"), with size and mtime_ns, sorted as bri_store_list
 * sorts: object stores list once without a delimiter (S3 1000 names a
 * page, Azure 5000), and give up with BRI_EUNSUPPORTED past max_pages
 * pages (a tree too large to be worth it: ask per directory). Stores with
 * real directories (local) answer BRI_EUNSUPPORTED. For caches that would
 * otherwise list many sibling directories one by one. A name from the
 * store is not trusted: use it as a key to look up, never to open. */
int bri_store_list_tree(bri_store *st, const char *dir, size_t max_pages, bri_store_entry **out,
                        size_t *count, bri_error *err);

/* The first n entries of dir in bri_store_list's order (fewer when dir has
 * fewer): Lance's V2 manifest names sort newest first, so n = 1 finds the
 * latest version in one request on S3 (ListObjectsV2 max-keys). */
int bri_store_list_first(bri_store *st, const char *dir, unsigned flags, size_t n,
                         bri_store_entry **out, size_t *count, bri_error *err);

/* One directory of bri_store_list_first_many. */
typedef struct bri_store_listing {
  const char *dir;          /* in: the directory (a full path, as for bri_store_list) */
  bri_store_entry *entries; /* out: its first entries (bri_store_entries_free) */
  size_t count;
  int rc;        /* out: 0, or what bri_store_list_first would have returned */
  bri_error err; /* out: its message when rc is not 0 */
} bri_store_listing;

/* bri_store_list_first of n directories at once: object stores send the
 * listings together (S3: many ListObjectsV2 in flight, within the root's
 * request limits), so that a poll of a thousand tables' _versions/ waits
 * for rounds of requests, not for one request after another. Each
 * directory gets its own outcome; the call itself fails only when it
 * cannot run (out of memory). */
int bri_store_list_first_many(bri_store *st, bri_store_listing *dirs, size_t n, unsigned flags,
                              size_t first, bri_error *err);

/* ------------------------------------------------------------ writing */

/* Failpoints a writing call passes (each may be NULL). */
typedef struct bri_store_steps {
  const char *written;  /* every byte is written, nothing is durable yet (local:
                           before the fsync; S3: before the PUT or Complete) */
  const char *durable;  /* put, put_new: the bytes are durable, the name is not
                           taken yet (local: staging file fsynced and closed) */
  const char *publish;  /* put, put_new: right before the name is taken (link,
                           rename, PUT) */
  const char *published; /* put, put_new: the name is taken; an error here stands
                            for a failed directory sync: a warning, never a failure */
} bri_store_steps;

/* Creates path with exactly these bytes, durably, name included, only if
 * nothing is there: BRI_ETAKEN otherwise (the object that was there is left
 * as it was). Readers see all of the bytes or no object. This is the commit
 * primitive (a manifest version: Lance on S3 PUTs
 * _versions/{u64::MAX - v:020}.manifest with If-None-Match: *). Any failure
 * before the name is taken leaves nothing (local: the staging file is
 * removed; a crash may leave a staging file "<dir>/.tmp_<name>_<uuid>",
 * which cleanup reclaims). Once the name is taken the call returns 0; a
 * later failure (the directory sync) is left in err as a warning: err->code
 * set and the message its reason; the object may not survive a power loss.
 * err->code is otherwise not touched on success. */
int bri_store_put_new(bri_store *st, const char *path, const void *data, size_t len,
                      const bri_store_steps *steps, bri_error *err);

/* Writes path with these bytes, replacing what is there: readers see the
 * old object or the new one, never a mix (local: a staging file renamed
 * over it). Durable, name included; failures and warnings as put_new
 * (steps.publish: right before the rename). Never for anything a version
 * references. */
int bri_store_put(bri_store *st, const char *path, const void *data, size_t len,
                  const bri_store_steps *steps, bri_error *err);

/* bri_store_put without the durability a local disk makes a step of its
 * own: readers see the old object or the new one, never a mix. Local: no
 * fsync of the file nor of its directory, so after a power loss the path
 * may hold the old bytes, the new ones or none at all; object stores: a
 * plain PUT, durable when it returns. For latest_version_hint.json, which
 * Lance does not read on a local table (docs/format/table.md 3). */
int bri_store_put_volatile(bri_store *st, const char *path, const void *data, size_t len,
                           const bri_store_steps *steps, bri_error *err);

/* Creates path with these bytes only if nothing is there (BRI_ETAKEN
 * otherwise), without the durability nor the all-or-nothing visibility of
 * put_new. Local: the file is made under its own name and written, with no
 * staging name and no fsync, so a crash may leave it short, and a power
 * loss short or gone (steps.written, then steps.published once it is
 * closed); object stores: put_new. For a file nothing names until a later
 * durable commit that does not need it: a transaction file, whose
 * transaction the manifest embeds (docs/format/table.md 4). */
int bri_store_put_new_volatile(bri_store *st, const char *path, const void *data, size_t len,
                               const bri_store_steps *steps, bri_error *err);

/* A writer: a new object streamed from first byte to last. create never
 * overwrites (BRI_ETAKEN). Local: the file exists under its name from
 * create on (a crash leaves it partial; callers journal it first); S3: a
 * multipart upload (parts >= 5 MiB), invisible until finish. */
int bri_store_create(bri_store *st, const char *path, const bri_store_steps *steps,
                     bri_swriter **out, bri_error *err);
/* (st NULL: a local file by its own path, as for bri_store_open_file.) */
int bri_swriter_append(bri_swriter *w, const void *data, size_t len, bri_error *err);
/* Appends bytes [offset, offset + len) of another object (any store) without
 * passing them through this process where the stores can: local,
 * copy_file_range; S3 to S3, UploadPartCopy with x-amz-copy-source-range
 * (ranges below the 5 MiB part minimum are read and appended). A source
 * shorter than offset + len: BRI_EIO naming it. */
int bri_swriter_append_copy(bri_swriter *w, bri_store *src, const char *src_path, uint64_t offset,
                            uint64_t len, bri_error *err);
/* Bytes appended so far. */
uint64_t bri_swriter_size(const bri_swriter *w);
const char *bri_swriter_path(const bri_swriter *w);
/* Completes the object and makes its bytes durable (local: fsync, close;
 * S3: CompleteMultipartUpload or one PUT), then frees w. On failure the
 * object is removed (as by abort) and w freed all the same. */
int bri_swriter_finish(bri_swriter *w, bri_error *err);
/* Removes what was written (local: unlink; S3: AbortMultipartUpload) and
 * frees w. NULL is a no-op. */
void bri_swriter_abort(bri_swriter *w);

/* bri_store_copy flags. */
enum {
  BRI_COPY_TRY_LINK = 1 << 0, /* a hard link when both stores can and the filesystem
                                 permits (then *linked), else a copy */
};

/* Creates dst_path in dst with the bytes of src_path in src (whole object),
 * never overwriting (BRI_ETAKEN), durable (the name: bri_store_sync). Local:
 * copy_file_range; S3 to S3: CopyObject (UploadPartCopy parts above 5 GiB);
 * between different backends: read and write. The source must be a regular
 * file (a link is refused, never followed). *bytes: its size; *linked (may
 * be NULL): whether BRI_COPY_TRY_LINK made a link. A missing source:
 * BRI_ENOTFOUND. */
int bri_store_copy(bri_store *src, const char *src_path, bri_store *dst, const char *dst_path,
                   unsigned flags, bool *linked, uint64_t *bytes, bri_error *err);

/* Hard-links src_path to the new name dst_path (never overwriting:
 * BRI_ETAKEN). The new name is checked to name the file that was opened (a
 * swap in between is undone and refused), and its modification time is set
 * to now, so that a concurrent cleanup never takes the new name for an
 * abandoned file (the inode is shared: the old name looks younger too).
 * *bytes: its size. Stores without BRI_STORE_CAP_LINK, two stores on
 * different filesystems, and filesystems that refuse links:
 * BRI_EUNSUPPORTED. */
int bri_store_link(bri_store *src, const char *src_path, bri_store *dst, const char *dst_path,
                   uint64_t *bytes, bri_error *err);

/* Creates directory path (its parent must exist). Exists: BRI_ETAKEN (a
 * directory) or BRI_ECORRUPT (anything else). Object stores: 0, nothing. */
int bri_store_mkdir(bri_store *st, const char *path, bri_error *err);
/* The same, but the new directory's name is not durable until its parent
 * is synced: for a caller that syncs the parent after it anyway (a
 * compaction's sidecar directory: finishing the data file beside it syncs
 * data/), one fsync fewer. */
int bri_store_mkdir_unsynced(bri_store *st, const char *path, bri_error *err);

/* Makes the names created in directory dir durable (local: fsync of the
 * directory). Object stores: 0. */
int bri_store_sync(bri_store *st, const char *dir, bri_error *err);

/* ------------------------------------------------------------ counters */

/* Requests of object stores by kind (S3's operations), for the counters. */
typedef enum bri_store_req {
  BRI_REQ_GET,
  BRI_REQ_HEAD,
  BRI_REQ_PUT,
  BRI_REQ_LIST,
  BRI_REQ_DELETE,
  BRI_REQ_COPY,
  BRI_REQ_MPU_CREATE,
  BRI_REQ_MPU_PART,
  BRI_REQ_MPU_COPY,
  BRI_REQ_MPU_COMPLETE,
  BRI_REQ_MPU_ABORT,
  BRI_REQ_KINDS
} bri_store_req;

/* How a request was answered: not at all (a transport error), 2xx, 3xx,
 * 4xx, 5xx. */
enum { BRI_REQ_NO_ANSWER, BRI_REQ_2XX, BRI_REQ_3XX, BRI_REQ_4XX, BRI_REQ_5XX, BRI_REQ_CLASSES };

/* "get", "head", "put", "list", "delete", "copy", "create_multipart",
 * "upload_part", "upload_part_copy", "complete_multipart",
 * "abort_multipart"; and "none", "2xx" ... "5xx". */
const char *bri_store_req_name(bri_store_req kind);
const char *bri_store_req_class_name(int cls);

/* What went through a store since it was opened, for reports and metrics.
 * Object stores count what crossed the network (every attempt of every
 * request, bodies each way, what the server copied); local stores count
 * the bytes read and written through this process, and what the kernel
 * copied or linked (copy_file_range, links) as copied without passing
 * through. Counted where the work happens, whatever thread does it, so a
 * job's stores say exactly what the job moved. */
typedef struct bri_store_stats {
  uint64_t bytes_read, bytes_written; /* through this process */
  uint64_t bytes_copied_server;       /* copied without passing through it */
  uint64_t requests, retries;         /* object stores: attempts (retries included), retries */
  uint64_t by_kind[BRI_REQ_KINDS][BRI_REQ_CLASSES]; /* the requests by kind and answer */
} bri_store_stats;
void bri_store_stats_get(const bri_store *st, bri_store_stats *out);
/* acc += x, field by field. */
void bri_store_stats_add(bri_store_stats *acc, const bri_store_stats *x);

/* Counting by root, for a daemon's per-root metrics: every store opened
 * from now on at or below uri (a location as bri_store_canonical gives it:
 * a local directory's real path, "s3://bucket/prefix"; the longest
 * registered match wins) also counts into the root's counters. Registering
 * a root twice is a no-op; roots are never forgotten (their counters count
 * from the process's start, as Prometheus counters do). Thread-safe. */
int bri_store_count_root(const char *uri, bri_error *err);
/* The counters of a registered root: 0, or BRI_ENOTFOUND when uri was
 * never registered (out zeroed). */
int bri_store_root_stats(const char *uri, bri_store_stats *out);

/* ------------------------------------------------------------ locations */

/* What every store at location uri can do (BRI_STORE_CAP_*), from its
 * scheme alone, without opening it: a daemon asks this whether a root is
 * watched (INOTIFY) or polled (POLL), whether its paths are local files
 * (LOCAL), whether links or server-side copies can work. Unknown scheme:
 * BRI_EUNSUPPORTED naming it (*caps 0). */
int bri_store_location_caps(const char *uri, unsigned *caps, bri_error *err);

/* Request limits of a root (0: none). */
typedef struct bri_store_limits {
  double max_requests_per_second; /* started per second, all threads and jobs together */
  int max_requests_in_flight;     /* in flight at once, all threads and jobs together */
} bri_store_limits;

/* One setting of a root, by the name its backend gives it. */
typedef struct bri_store_setting {
  const char *name;
  const char *value;
} bri_store_setting;

/* What name is to the backend of location uri: BRI_SETTING_PLAIN (a value
 * a configuration may show), BRI_SETTING_SECRET (a credential: never shown,
 * never written in a configuration file), or 0 when the backend takes no
 * such setting. */
enum { BRI_SETTING_PLAIN = 1, BRI_SETTING_SECRET = 2 };
int bri_store_setting_kind(const char *uri, const char *name);
/* The names of the settings the backend of uri takes, NULL-terminated (an
 * empty list for local paths and unknown schemes), in the order its
 * documentation gives them. */
const char *const *bri_store_setting_names(const char *uri);

/* Per-root settings: every store opened from now on at or below uri (any
 * form of a location; kept under its canonical name; the longest
 * configured prefix wins) uses these settings (unset ones: the
 * environment's) and shares one client whose limits hold for everything
 * done below the root. The backend checks the values (BRI_EINVAL naming
 * the setting); check_only: checks, registers nothing. A local path takes
 * no setting (BRI_EINVAL for any) and no limits. Copies what it is given.
 * Thread-safe; stores already open keep what they have. */
int bri_store_configure_root(const char *uri, const bri_store_setting *settings, size_t n,
                             const bri_store_limits *limits, bool check_only, bri_error *err);

/* ------------------------------------------------------------ deleting */

/* Deletes the object at path, or an empty directory (local). Never follows
 * a link: a link at path is itself removed, a link on the way is refused.
 * Missing: BRI_ENOTFOUND; a directory with entries: BRI_ENOTEMPTY. Object
 * stores: a directory path deletes nothing (0). */
int bri_store_delete(bri_store *st, const char *path, bri_error *err);

/* Deletes paths in the order given (local: one by one; object stores: in
 * batches, S3 DeleteObjects of up to 1000 keys, so files must come before
 * the directories that hold them, as they do in any rollback). rcs[i] (may
 * be NULL) gets each path's result as bri_store_delete returns it; a
 * missing path counts as deleted (0). Returns 0 when every path is gone,
 * else the first failure (err names it) after trying all of them. */
int bri_store_delete_many(bri_store *st, const char *const *paths, size_t n, int *rcs,
                          bri_error *err);

/* ------------------------------------------------------------ locks */

/* Takes the exclusive, advisory lock named by path (a small file of its
 * own beside the table's files, never one Lance owns), without waiting.
 * Every process that locks the same path excludes the others while it
 * holds the lock, whichever program it is (brid's worker, brictl working
 * offline). who is one line saying who holds it; it is the file's content
 * while the lock is held (empty when free), so that the next one to try
 * can be told.
 * Local: an open file description lock (fcntl F_OFD_SETLK, F_WRLCK) on the
 * file, created when missing with its directory's mode and group; the
 * kernel drops it when the holder unlocks, exits or dies, so a crash
 * never leaves a stale lock, and a network filesystem that carries POSIX
 * locks between hosts (NFSv4, NFSv3 with lockd, CephFS) carries this one.
 * Held elsewhere: BRI_ETAKEN, err "<path> is held by <who>". A store
 * without locks (an object store): BRI_EUNSUPPORTED. The lock may outlive
 * its store. */
int bri_store_lock(bri_store *st, const char *path, const char *who, bri_slock **out, bri_error *err);
/* Releases the lock (NULL is a no-op); the file stays for the next one. */
void bri_store_unlock(bri_slock *l);

#endif
