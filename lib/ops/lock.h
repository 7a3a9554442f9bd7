/* lock.h: the table lock: what keeps brid's jobs and brictl's offline work
 * on one table apart.
 *
 * Lance's commits are put-if-absent, so two writers never corrupt a
 * version; but maintenance work also removes files (a cleanup with a short
 * grace, a rolled-back job, crash recovery), and one process removing what
 * another has written but not committed yet would lose data. So every job
 * that writes or removes table files (compact, cleanup, materialize; not
 * verify) holds the table's lock while it runs, whichever program runs it:
 * brid's worker before it starts a job, brictl before it works offline.
 * Main design choice: the lock is a file in the table itself
 * (BRI_TABLE_LOCK_NAME) with an open file description lock
 * (storage/store.h, bri_store_lock), not a file under /run: it is seen by
 * every process that reaches the table, on every host that mounts it where
 * the filesystem carries POSIX locks (NFSv4, NFSv3 with lockd, CephFS), and
 * the kernel drops it when its holder dies, so there is never a stale lock
 * to clear by hand. The file holds one line saying who holds the lock
 * ("brid pid 812, job 17 (compact)"), for the message the next one gets.
 * Lance ignores files it does not know at a table's root.
 * Object stores have no lock (BRI_EUNSUPPORTED; jobs run without one):
 * brid's job store keeps one job per table running, commits are
 * put-if-absent, and cleanup's grace keeps it from files another host has
 * not committed yet (docs/s3.md, "The table lock on S3"). */
#ifndef BRI_OPS_LOCK_H
#define BRI_OPS_LOCK_H

#include "util/error.h"

#define BRI_TABLE_LOCK_NAME ".brid.lock"

typedef struct bri_table_lock bri_table_lock;

/* Takes the lock of the table at root without waiting; who is the line
 * written into it. Held elsewhere: BRI_ETAKEN, err "<root> is busy: ...
 * is held by <who>". A table on a store without locks (an object store):
 * BRI_EUNSUPPORTED. */
int bri_table_lock_take(const char *root, const char *who, bri_table_lock **out, bri_error *err);
/* Releases it (NULL is a no-op). */
void bri_table_lock_release(bri_table_lock *l);

#endif
