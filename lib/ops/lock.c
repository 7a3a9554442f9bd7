/* lock.c: the table lock (see lock.h): a store lock on the table's
 * BRI_TABLE_LOCK_NAME, taken through a store opened for that alone (the
 * lock outlives it). */
#include "ops/lock.h"

#include <stdlib.h>

#include "storage/store.h"

struct bri_table_lock {
  bri_slock *lock;
};

int bri_table_lock_take(const char *root, const char *who, bri_table_lock **out, bri_error *err) {
  *out = NULL;
  bri_store *st = NULL;
  int rc = bri_store_open(root, 0, &st, err);
  if (rc) return rc;
  bri_table_lock *l = calloc(1, sizeof *l);
  char *path = bri_store_path(st, BRI_TABLE_LOCK_NAME);
  if (!l || !path) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (!rc) rc = bri_store_lock(st, path, who, &l->lock, err);
  if (rc == BRI_ETAKEN) bri_error_wrap(err, "%s is busy", root);
  free(path);
  bri_store_close(st);
  if (rc) {
    free(l);
    return rc;
  }
  *out = l;
  return 0;
}

void bri_table_lock_release(bri_table_lock *l) {
  if (!l) return;
  bri_store_unlock(l->lock);
  free(l);
}
