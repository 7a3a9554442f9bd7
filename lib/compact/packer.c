/* packer.c: new packs assembled from ranges of existing ones (see
 * packer.h). Ranges already copied are found by "path|position|size";
 * the run of the current pack (its last source and where its last range
 * ended there) decides, in runs mode, whether a range continues the pack
 * or starts a new one. */
#include "compact/packer.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/failpoint.h"
#include "util/fsutil.h"
#include "util/strmap.h"

#define PACK_ROLL ((uint64_t)1 << 30) /* Lance rolls packs at 1 GiB */
#define OBJECT_GAP ((uint64_t)4 << 20) /* dead bytes copied along on object stores */

struct bri_packer {
  bri_store *dst;
  bool runs;
  bri_packer_next_fn next;
  void *ctx;
  bri_strmap ranges;     /* path|pos|size -> pack id (a), position (b) */
  bri_swriter *pack;     /* the current pack, or NULL */
  uint64_t pack_id;
  char *pack_src;        /* the source of the current pack's last range */
  uint64_t pack_src_end; /* where that range ends in its source */
  uint64_t packs;
};

int bri_packer_new(bri_store *dst, bool runs, bri_packer_next_fn next, void *ctx, bri_packer **out,
                   bri_error *err) {
  if (!(*out = calloc(1, sizeof **out))) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  (*out)->dst = dst, (*out)->runs = runs, (*out)->next = next, (*out)->ctx = ctx;
  return 0;
}

int bri_packer_finish(bri_packer *p, bri_error *err) {
  if (!p || !p->pack) return 0;
  bri_swriter *w = p->pack;
  p->pack = NULL;
  int rc = bri_swriter_finish(w, err);
  return rc ? rc : bri_failpoint("blobout.after_pack", err);
}

/* Starts the next pack (a fresh one starts with no run). */
static int open_pack(bri_packer *p, bri_error *err) {
  char *path = NULL;
  int rc = p->next(p->ctx, &path, &p->pack_id, err);
  if (!rc) rc = bri_store_create(p->dst, path, NULL, &p->pack, err);
  if (!rc) p->packs++;
  free(path);
  free(p->pack_src);
  p->pack_src = NULL;
  return rc;
}

int bri_packer_copy(bri_packer *p, bri_store *st, const char *src, uint64_t pos, uint64_t size, uint64_t *id,
                    uint64_t *at, uint64_t *grown, bri_error *err) {
  *grown = 0;
  char *key = bri_strdupf("%s|%llu|%llu", src, (unsigned long long)pos, (unsigned long long)size);
  if (!key) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  bri_strmap_entry *e = bri_strmap_get(&p->ranges, key);
  if (e) {
    *id = e->a, *at = e->b;
    free(key);
    return 0;
  }
  int rc = 0;
  bool new_source = p->runs && p->pack && p->pack_src && strcmp(p->pack_src, src);
  if (p->pack && bri_swriter_size(p->pack) && (bri_swriter_size(p->pack) + size > PACK_ROLL || new_source))
    rc = bri_packer_finish(p, err);
  if (!rc && !p->pack) rc = open_pack(p, err);
  uint64_t start = p->pack ? bri_swriter_size(p->pack) : 0;
  if (!rc && (rc = bri_failpoint("blobout.before_copy", err)) == 0 && p->runs && p->pack_src &&
      !strcmp(p->pack_src, src) && pos > p->pack_src_end && pos - p->pack_src_end <= OBJECT_GAP)
    rc = bri_swriter_append_copy(p->pack, st, src, p->pack_src_end, pos - p->pack_src_end, err);
  *at = p->pack ? bri_swriter_size(p->pack) : 0;
  if (!rc) rc = bri_swriter_append_copy(p->pack, st, src, pos, size, err);
  if (rc && p->pack) bri_error_wrap(err, "copying into %s", bri_swriter_path(p->pack));
  if (!rc && (!p->pack_src || strcmp(p->pack_src, src))) {
    free(p->pack_src);
    if (!(p->pack_src = strdup(src))) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  if (!rc) {
    p->pack_src_end = pos + size;
    *id = p->pack_id;
    *grown = bri_swriter_size(p->pack) - start;
    if (!bri_strmap_put(&p->ranges, key, *id, *at)) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  free(key);
  return rc;
}

uint64_t bri_packer_packs(const bri_packer *p) { return p ? p->packs : 0; }

void bri_packer_free(bri_packer *p) {
  if (!p) return;
  bri_swriter_abort(p->pack); /* recorded by its caller: the rollback removes it too */
  bri_strmap_dispose(&p->ranges);
  free(p->pack_src);
  free(p);
}
