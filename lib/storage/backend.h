/* backend.h: what a storage backend implements (for lib/storage/ only; the
 * rest of lib uses store.h).
 *
 * store.c is the front: it parses URIs, picks the backend by scheme (the
 * BACKENDS table in store.c: a new backend adds its file set and one line
 * there), turns every path into a clean key (relative, no empty, "." or
 * ".." component) and builds the messages' full paths, so a backend only
 * ever sees keys. It also supplies what a backend leaves out: a NULL
 * append_copy or copy falls back to reading and writing through this
 * process (also used between two different backends, or when the backend
 * answers BRI_EUNSUPPORTED for that pair of stores), a NULL delete_many to
 * one delete per key, NULL mkdir / sync to success (directories are
 * implicit), a NULL link to BRI_EUNSUPPORTED.
 *
 * Counters: see bri_store_counts below and counts_itself.
 *
 * Objects: a backend allocates its own structs with the public one as the
 * first member (struct obj_store { bri_store base; ... }) and fills the base
 * with bri_store_init / the front's fields below; the front frees the
 * base's own strings (bri_store_base_clear), the backend the rest. */
#ifndef BRI_STORAGE_BACKEND_H
#define BRI_STORAGE_BACKEND_H

#include "storage/store.h"

/* How a put takes its name (the put op's how). */
#define BRI_PUT_IF_ABSENT 1u /* only if nothing is there: bri_store_put_new */
#define BRI_PUT_VOLATILE 2u  /* replace, durable or not: bri_store_put_volatile */

typedef struct bri_store_ops bri_store_ops;

/* Counters of bri_store_stats besides the requests. */
typedef enum bri_store_counter {
  BRI_COUNT_READ,
  BRI_COUNT_WRITTEN,
  BRI_COUNT_COPIED_SERVER,
  BRI_COUNT_RETRIES,
  BRI_COUNT_N
} bri_store_counter;

/* A set of counters, updated atomically from any thread; everything added
 * to one is added to its parent too (a registered root's, store.h
 * bri_store_count_root), so one count serves the job's report and the
 * daemon's per-root metrics. */
typedef struct bri_store_counts {
  uint64_t n[BRI_COUNT_N];
  uint64_t req[BRI_REQ_KINDS][BRI_REQ_CLASSES];
  struct bri_store_counts *parent;
} bri_store_counts;

/* Adds v to counter c (counts NULL: nothing). */
void bri_store_counts_add(bri_store_counts *counts, bri_store_counter c, uint64_t v);
/* One request of this kind answered so (cls: BRI_REQ_NO_ANSWER...). */
void bri_store_counts_request(bri_store_counts *counts, bri_store_req kind, int cls);
/* A consistent-enough copy (each counter read atomically). */
void bri_store_counts_get(const bri_store_counts *counts, bri_store_stats *out);

struct bri_store {
  const bri_store_ops *ops;
  char *uri;       /* as given, no trailing slash: messages' prefix */
  char *canonical; /* bri_store_canonical */
  unsigned caps;   /* BRI_STORE_CAP_* */
  bri_store_counts counts; /* bri_store_stats; parent set by bri_store_base_init */
};

/* Adds n to a counter of st (NULL: nothing); safe from any thread. */
void bri_store_count(bri_store *st, bri_store_counter c, uint64_t n);

/* An open file or writer keeps only its backend's ops from the front: a
 * NULL-store file (store.h) outlives the short-lived store it came from,
 * so a backend keeps in its own struct whatever else it needs. */
struct bri_sfile {
  const bri_store_ops *ops;
  bri_store *st; /* counted into (the front's; NULL for a NULL-store file) */
  char *path; /* full path, for messages (the backend allocates it) */
  uint64_t size;
};

struct bri_swriter {
  const bri_store_ops *ops;
  bri_store *st; /* counted into (the front's; NULL for a NULL-store writer) */
  char *key;     /* the front's */
  char *path;    /* full path (the front's) */
  uint64_t size; /* bytes appended so far (the front's) */
  bri_store_steps steps;
};

struct bri_slock {
  const bri_store_ops *ops;
};

struct bri_store_ops {
  const char *scheme; /* "s3" for s3://...; NULL for the local backend */
  const char *const *also; /* other schemes it takes (NULL-terminated; may be NULL) */
  /* the backend counts what it moves into its stores' counts itself (what
   * crossed the network); otherwise the front counts the bytes its calls
   * pass through, and the copies and links a backend did as copied */
  bool counts_itself;
  /* uri as the user gave it; flags BRI_STORE_CREATE. Fills *out (with
   * uri, canonical, caps set) */
  int (*open)(const char *uri, unsigned flags, bri_store **out, bri_error *err);
  /* uri's canonical name without opening it (bri_store_location), malloc'd;
   * NULL with err set when uri is not valid for the backend */
  char *(*canonical)(const char *uri, bri_error *err);
  void (*close)(bri_store *st);
  unsigned caps; /* BRI_STORE_CAP_* every store of this backend has (bri_store_location_caps) */
  /* the per-root settings it takes (bri_store_setting_names), NULL-terminated,
   * and which of them are secrets (secret[i] for names[i]) */
  const char *const *setting_names;
  const bool *setting_secret;
  /* may be NULL (no settings); uri as given, settings' names among
   * setting_names (the front checked); check_only: validate only */
  int (*configure)(const char *uri, const bri_store_setting *settings, size_t n,
                   const bri_store_limits *limits, bool check_only, bri_error *err);

  /* path: the full path for messages; fills size, ops and path */
  int (*open_file)(bri_store *st, const char *key, const char *path, bri_sfile **out,
                   bri_error *err);
  int (*read)(bri_sfile *f, uint64_t offset, void *buf, size_t len, bri_error *err);
  /* may be NULL (the front reads one range after another) */
  int (*readv)(bri_sfile *f, const bri_sread *reads, size_t n, bri_error *err);
  void (*close_file)(bri_sfile *f);

  int (*stat)(bri_store *st, const char *key, bri_store_info *out, bri_error *err);
  /* dir "" = the root; names sorted by the front, entries' names malloc'd */
  int (*list)(bri_store *st, const char *dir, unsigned flags, bri_store_entry **out,
              size_t *count, bri_error *err);
  /* every object below dir, names relative to it, within max_pages pages
   * (may be NULL: BRI_EUNSUPPORTED; the front sorts) */
  int (*list_tree)(bri_store *st, const char *dir, size_t max_pages, bri_store_entry **out, size_t *count,
                   bri_error *err);
  /* at least the first n by name (may be NULL: the front lists all) */
  int (*list_first)(bri_store *st, const char *dir, unsigned flags, size_t n,
                    bri_store_entry **out, size_t *count, bri_error *err);
  /* may be NULL (the front calls list_first for each); keys[i] is the clean
   * key of dirs[i].dir; fills entries (at least the first n by name), rc
   * and err of each */
  int (*list_first_many)(bri_store *st, bri_store_listing *dirs, const char *const *keys,
                         size_t count, unsigned flags, size_t n, bri_error *err);

  /* how: BRI_PUT_IF_ABSENT (put_new), BRI_PUT_VOLATILE (put_volatile),
   * both (put_new_volatile), or 0 (put) */
  int (*put)(bri_store *st, const char *key, const void *data, size_t len, unsigned how,
             const bri_store_steps *steps, bri_error *err);

  /* allocates the writer (the front fills ops, key, path, size, steps
   * after); it must not need st once made (see above) */
  int (*create)(bri_store *st, const char *key, bri_swriter **out, bri_error *err);
  int (*append)(bri_swriter *w, const void *data, size_t len, bri_error *err);
  /* may be NULL, or answer BRI_EUNSUPPORTED for a source it cannot copy from */
  int (*append_copy)(bri_swriter *w, bri_store *src, const char *src_key, uint64_t offset,
                     uint64_t len, bri_error *err);
  /* completes, frees w; on failure removes the object first */
  int (*finish)(bri_swriter *w, bri_error *err);
  void (*abort)(bri_swriter *w);

  /* whole-object copy into this backend's store dst; may be NULL or answer
   * BRI_EUNSUPPORTED (then the front copies through a writer) */
  int (*copy)(bri_store *src, const char *src_key, bri_store *dst, const char *dst_key,
              unsigned flags, bool *linked, uint64_t *bytes, bri_error *err);
  int (*link)(bri_store *src, const char *src_key, bri_store *dst, const char *dst_key,
              uint64_t *bytes, bri_error *err);
  /* durable: the parent directory synced (the new name durable) */
  int (*mkdir)(bri_store *st, const char *key, bool durable, bri_error *err);
  int (*sync)(bri_store *st, const char *dir, bri_error *err);

  int (*delete_one)(bri_store *st, const char *key, bri_error *err);
  /* may be NULL; rcs[i] per key, missing counted as 0 */
  int (*delete_many)(bri_store *st, const char *const *keys, size_t n, int *rcs, bri_error *err);
  /* may be NULL; keys clean, errors ignored (bri_store_prefetch) */
  void (*prefetch)(bri_store *st, const char *const *keys, size_t n, unsigned flags);

  /* may be NULL (no locks: the front answers BRI_EUNSUPPORTED); path for
   * messages; allocates the lock (the front sets ops) */
  int (*lock)(bri_store *st, const char *key, const char *path, const char *who, bri_slock **out,
              bri_error *err);
  void (*unlock)(bri_slock *l);
};

/* Fills the base of a new store: uri (trailing slashes dropped), canonical
 * (NULL: the same as uri), caps. */
int bri_store_base_init(bri_store *st, const bri_store_ops *ops, const char *uri,
                        const char *canonical, unsigned caps, bri_error *err);
void bri_store_base_clear(bri_store *st);

/* The registered backends (store.c). */
extern const bri_store_ops bri_local_store_ops;
extern const bri_store_ops bri_s3_store_ops;    /* s3_store.c */
extern const bri_store_ops bri_azure_store_ops; /* azure_store.c */

#endif
