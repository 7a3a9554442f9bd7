/* svc_roots.h: whether brid can reach each configured root, as every
 * listing of it found: the root's state (reachable or unreachable), the time
 * of its last successful listing, its last error and its consecutive
 * failures.
 *
 * A root that cannot be listed (an S3 endpoint that does not answer or
 * refuses brid's credentials; a local directory missing, unmounted or
 * unreadable) would otherwise look like an empty root. Its state makes the
 * daemon degraded (status, STATUS=, /readyz name the root), its tables keep
 * their state and history and get no job, and it is logged on change: one
 * warning when it becomes unreachable, a reminder every hour while it stays
 * so, one notice when it is listed again. A local root is listed again
 * every second while it cannot be (a stat and an opendir), so that it comes
 * back as soon as its directory does.
 *
 * Main design choice: the discoveries (svc_watch.c) are the only probes:
 * an S3 root's poll, a local root's sweep or rescan report their outcome
 * here, so a root's state costs no request of its own and says exactly
 * what brid's own work last saw. Loop thread only; views copy it
 * (svc_view.h). */
#ifndef BRI_SVC_ROOTS_H
#define BRI_SVC_ROOTS_H

#include <stdbool.h>
#include <stdint.h>

#include "brid/2_state/svc_state.h"

/* How often a root that stays unreachable is logged again. */
#define SVC_ROOT_REMINDER_MS (3600 * 1000)
/* How long a job claimed for a table under an unreachable root waits,
 * queued, before it is looked at again. */
#define SVC_ROOT_DEFER_MS (10 * 1000)
/* How often a local root that cannot be listed is listed again (an S3 root
 * is listed at each poll anyway): no inotify watch sees a directory come
 * back, and the sweep may be minutes away. */
#define SVC_ROOT_RETRY_MS 1000

/* The module lifecycle drives (svc_daemon.c): prepare hands the configured
 * roots to libbri (svc_config_register_roots) before the loop; at start and at a reload the
 * configured roots get a state (new ones unknown until first listed;
 * removed ones are kept but no longer configured); the drain stops the
 * retry timers, close closes them, dispose comes after the loop ran the close
 * callbacks. */
extern const brid_module svc_roots_module;
/* The state of a configured root (as configured), or NULL. */
brid_root *svc_roots_find(brid *d, const char *uri);
/* A listing of root uri ended: rc 0 (canon: its canonical form, for a local
 * root its real path) or an error (why). Logs a change of state; true when
 * the root is reachable again after failures. */
bool svc_roots_report(brid *d, const char *uri, const char *canon, int rc, const char *why);
/* Whether a local root (a path) can be listed now: an error ("cannot list:
 * why") when it is missing, not a directory or unreadable. Any thread: the
 * discoveries and /readyz ask it. */
int svc_roots_local_listable(const char *dir, bri_error *err);
/* The configured root a table (by its canonical root) lies under, or NULL. */
const brid_root *svc_roots_of_table(const brid *d, const char *table_root);
/* Whether the table's root is known to be unreachable. */
bool svc_roots_table_unreachable(const brid *d, const char *table_root);
/* Whether every configured root was listed (or failed to be) at least once:
 * until then a table brid does not know may just not be discovered yet. */
bool svc_roots_all_listed(const brid *d);
/* How many configured roots are known to be unreachable; *first (may be
 * NULL) the first of them. */
size_t svc_roots_unreachable(const brid *d, const brid_root **first);

#endif
