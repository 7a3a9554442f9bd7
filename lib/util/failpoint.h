/* failpoint.h: named fault-injection points compiled into libbri, in
 * SQLite's spirit: crash safety is tested, not hoped for.
 *
 * A failpoint is one line at a step that matters for crash safety (a file
 * written, before and after an fsync, a link, a rename, a delete):
 *
 *     if ((rc = bri_failpoint("commit.before_link", err)) != 0) goto out;
 *
 * Tests arm failpoints through the environment variable BRI_FAILPOINTS, a
 * comma list of NAME=ACTION[@N]:
 *   abort      abort() (SIGABRT: no cleanup, like a kill -9)
 *   exit       _exit(99), no atexit handlers, no buffered output flushed
 *   eio        the operation fails: bri_failpoint returns BRI_EIO and fills
 *              err with "failpoint NAME: injected I/O error"
 *   enospc     the same with "failpoint NAME: injected error: no space left
 *              on device (ENOSPC)"
 *   stop       the calling thread sleeps forever, so that a test can kill -9
 *              the process with the step's files on disk
 *   delay:MS   sleep MS milliseconds, then go on
 *   on         for switches (BRI_FP_SWITCH) only, and the only action they
 *              take: the code asks bri_failpoint_armed instead of passing
 *              (timing points, BRI_FP_TIMING, take delay:MS only)
 * @N restricts the action to the Nth pass of that entry (1-based); without it
 * every pass acts. abort, exit and stop first write one line to stderr,
 * "failpoint NAME: ACTION (pass N)", through the notify hook below (the one
 * place libbri writes anything itself: only a process a test armed on
 * purpose ever gets there; brid installs its logger instead).
 *
 * Cost when nothing is armed: one predictable branch on a cached flag (the
 * environment is read once, lazily, under pthread_once). Unknown names and
 * malformed entries are refused: bri_failpoint_init says why, and every later
 * failpoint pass fails the operation with that message (BRI_EINVAL), so a
 * typo in a test fails loudly instead of testing nothing.
 *
 * Every name compiled in is listed, with where it sits and what it means, in
 * the registry of failpoint.c (bri_failpoint_count / bri_failpoint_info_at):
 * the crash matrix (tests/reliability) iterates over it. Arming a name that
 * the registry lacks is refused, and the unit test checks that each
 * bri_failpoint("...") call in lib/ and daemon/ names a registered
 * failpoint and that each registered failpoint is used where it says. brid
 * reads the same variable at start-up and refuses to start on a bad one. */
#ifndef BRI_FAILPOINT_H
#define BRI_FAILPOINT_H

#include <stdatomic.h>
#include <stddef.h>

#include "util/error.h"

/* What an injected I/O error does at a failpoint. */
typedef enum bri_failpoint_eio {
  BRI_FP_EIO_FAILS,   /* the operation fails and removes what it created */
  BRI_FP_EIO_IGNORED, /* after the point of no return (a committed version,
                         a best-effort step): eio/enospc change nothing */
  BRI_FP_SWITCH,      /* not a step but a switch that changes behaviour
                         (bri_failpoint_armed): armed with "on" only */
  BRI_FP_TIMING,      /* not a step but a place where a test holds a thread
                         to widen a race: armed with delay:MS only */
} bri_failpoint_eio;

typedef struct bri_failpoint_info {
  const char *name;       /* "layer.step" */
  const char *file;       /* source file that passes it */
  const char *reached_by; /* comma list: compact, cleanup, materialize, clone, gen, jobs
                             (brid's job store), brid (the daemon alone) */
  bri_failpoint_eio eio;
  const char *what;       /* the state on disk when it fires */
} bri_failpoint_info;

/* The registry: every failpoint compiled in. */
size_t bri_failpoint_count(void);
const bri_failpoint_info *bri_failpoint_info_at(size_t i);
const bri_failpoint_info *bri_failpoint_find(const char *name);

/* Reads BRI_FAILPOINTS (once; later calls return the first result). 0 when
 * unset, empty or valid; BRI_EINVAL with the reason otherwise. */
int bri_failpoint_init(bri_error *err);

/* Replaces the armed set with spec (same syntax; NULL or "" disarms all) and
 * resets pass counts. For tests: not safe while other threads pass
 * failpoints. A bad spec disarms everything and returns BRI_EINVAL. */
int bri_failpoint_configure(const char *spec, bri_error *err);

/* Who hears about abort, exit and stop before they happen (NULL restores
 * the default: one line on stderr). */
typedef void (*bri_failpoint_notify_fn)(const char *name, const char *action, long pass);
void bri_failpoint_set_notify(bri_failpoint_notify_fn fn);

/* Passes failpoint name: 0 unless armed to fail here (then BRI_EIO, err
 * filled), or BRI_EINVAL when BRI_FAILPOINTS was malformed. */
int bri_failpoint_pass(const char *name, bri_error *err);

/* Whether name is armed at all, whatever the action: for switches that
 * change behaviour rather than fail (e.g. the daemon's "no inotify"). */
int bri_failpoint_armed(const char *name);

/* 0: not read yet, 1: nothing armed, 2: something armed or malformed. */
extern _Atomic int bri_failpoint_state_;

static inline int bri_failpoint(const char *name, bri_error *err) {
  if (__builtin_expect(atomic_load_explicit(&bri_failpoint_state_, memory_order_relaxed) == 1, 1))
    return 0;
  return bri_failpoint_pass(name, err);
}

#endif
