/* tables.h: the watched tables in the job store and their per-table state.
 *
 * A table is identified by its root path, compared as text: the caller
 * passes its canonical name (bri_store_location) so that one table has one
 * row. The row
 * carries what the daemon must remember across restarts: the paused flag,
 * the last version it saw (so a restart does not re-trigger on old
 * versions), the last error, and the times of the last successful
 * compaction and cleanup. Byte counters are summed from the per-kind
 * statistics (history.h). */
#ifndef BRI_JOBS_TABLES_H
#define BRI_JOBS_TABLES_H

#include <stddef.h>
#include <stdint.h>

#include "jobs/store.h"

typedef struct bri_jobs_table {
  int64_t id;
  char *root;
  int paused;
  int has_seen_version;
  uint64_t last_seen_version;
  char *last_error; /* NULL when none */
  int64_t last_error_at;
  int64_t last_compaction_at, last_cleanup_at; /* 0 = never */
  int64_t created_at;
  int64_t running_job;  /* id of its running job, 0 when none */
  uint64_t queued_jobs; /* number of queued jobs */
  uint64_t bytes_written, bytes_reused; /* totals over finished jobs */
} bri_jobs_table;

/* Frees the members and zeroes the struct. */
void bri_jobs_table_clear(bri_jobs_table *t);
void bri_jobs_table_list_free(bri_jobs_table *ts, size_t n);

/* Returns the id of the table with this root, adding it when missing
 * (*created = 1; created may be NULL). Empty root: BRI_EINVAL. */
int bri_jobs_table_upsert(bri_jobs_store *s, const char *root, int64_t *id, int *created,
                          bri_error *err);

/* What bri_jobs_tables_register found for one root. */
typedef struct bri_jobs_registered {
  int64_t id;
  int created; /* the store did not know the root */
  int has_seen_version;
  uint64_t last_seen_version;
} bri_jobs_registered;

/* bri_jobs_table_upsert for n roots in one transaction (a discovery of
 * many tables registers them a few hundred at a time, not one commit
 * each), with each row's last seen version: out[i] for roots[i]. On an
 * error nothing is registered. */
int bri_jobs_tables_register(bri_jobs_store *s, const char *const *roots, size_t n,
                             bri_jobs_registered *out, bri_error *err);

/* The ids of the paused tables, ascending (*ids NULL when there are none):
 * a status counts them without reading every row. */
int bri_jobs_table_paused_ids(bri_jobs_store *s, int64_t **ids, size_t *n, bri_error *err);

/* One table by id or by root: BRI_ENOTFOUND when there is none. */
int bri_jobs_table_get(bri_jobs_store *s, int64_t id, bri_jobs_table *out, bri_error *err);
int bri_jobs_table_find(bri_jobs_store *s, const char *root, bri_jobs_table *out,
                        bri_error *err);

/* All tables ordered by id (*out NULL when there are none). */
int bri_jobs_table_list(bri_jobs_store *s, bri_jobs_table **out, size_t *n, bri_error *err);

/* Paused tables keep their queued jobs but none is claimed; a running job
 * is not interrupted (the daemon cancels it if it wants to). */
int bri_jobs_table_set_paused(bri_jobs_store *s, int64_t id, int paused, bri_error *err);

/* Records the latest version the daemon has seen (must fit in int64). */
int bri_jobs_table_set_seen_version(bri_jobs_store *s, int64_t id, uint64_t version,
                                    bri_error *err);

/* Sets the table's last error (with the time), or clears it when msg is NULL. */
int bri_jobs_table_set_error(bri_jobs_store *s, int64_t id, const char *msg, bri_error *err);

/* Forgets a table and its whole job history. Refused (BRI_EINVAL) while it
 * has a running job or any job with journaled outputs, which recovery still
 * needs. */
int bri_jobs_table_remove(bri_jobs_store *s, int64_t id, bri_error *err);

#endif
