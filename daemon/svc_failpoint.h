/* svc_failpoint.h: named crash points compiled into brid and armed by the
 * tests, in SQLite's spirit: crash safety is tested, not hoped for.
 *
 * $BRID_FAILPOINTS is a comma list of
 *   NAME=N        the Nth time the code passes failpoint NAME, the calling
 *                 thread stops there for good (it sleeps), so a test can
 *                 kill -9 the daemon at that exact step with the step's
 *                 files on disk; "stopped at failpoint NAME" is logged first;
 *   NAME=delay:MS every pass sleeps MS milliseconds (a slow job, to test
 *                 cancellation and progress).
 * Unarmed, a failpoint costs a string comparison per armed entry (none in
 * production). Names used: "compact.progress" (after a batch of rows was
 * written), "compact.journal" (after an output path was journaled, before
 * its file exists); and the switch "watch.no_inotify" (=1), which makes
 * brid behave as on a filesystem without inotify (the sweep only). */
#ifndef BRI_SVC_FAILPOINT_H
#define BRI_SVC_FAILPOINT_H

/* Reads $BRID_FAILPOINTS; call once at start-up before threads exist. */
void svc_failpoint_init(void);
/* Counts a pass of name and stops the thread when armed for this pass. */
void svc_failpoint(const char *name);
/* Whether name is listed at all (a switch). */
int svc_failpoint_armed(const char *name);

#endif
