/* svc_failpoint.c: test crash points (see svc_failpoint.h).
 *
 * A fixed table of a few entries parsed once at start-up; after that the
 * table is read-only and only the counters change (atomically), so worker
 * threads can pass failpoints without a lock. */
#include "svc_failpoint.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "svc_log.h"

#define MAX_FP 8

static struct {
  char name[48];
  long at;       /* stop at this pass (0: none) */
  long delay_ms; /* sleep at every pass (0: none) */
  atomic_long count;
} fps[MAX_FP];
static int n_fps;

void svc_failpoint_init(void) {
  const char *env = getenv("BRID_FAILPOINTS");
  if (!env || !*env) return;
  char buf[512];
  snprintf(buf, sizeof buf, "%s", env);
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",", &save); tok && n_fps < MAX_FP; tok = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(tok, '=');
    long at = 1, delay = 0;
    if (eq && !strncmp(eq + 1, "delay:", 6)) at = 0, delay = strtol(eq + 7, NULL, 10);
    else if (eq) at = strtol(eq + 1, NULL, 10);
    if (eq) *eq = 0;
    if ((at < 1 && delay < 1) || strlen(tok) >= sizeof fps[0].name) continue;
    snprintf(fps[n_fps].name, sizeof fps[n_fps].name, "%s", tok);
    fps[n_fps].at = at;
    fps[n_fps].delay_ms = delay;
    atomic_init(&fps[n_fps].count, 0);
    if (at) log_warn("failpoint %s armed at pass %ld (BRID_FAILPOINTS): this daemon is under test", tok, at);
    else log_warn("failpoint %s delays every pass by %ld ms (BRID_FAILPOINTS): this daemon is under test", tok, delay);
    n_fps++;
  }
}

void svc_failpoint(const char *name) {
  for (int i = 0; i < n_fps; i++) {
    if (strcmp(fps[i].name, name) != 0) continue;
    long c = atomic_fetch_add(&fps[i].count, 1) + 1;
    if (fps[i].delay_ms) {
      struct timespec ts = {fps[i].delay_ms / 1000, (fps[i].delay_ms % 1000) * 1000000L};
      nanosleep(&ts, NULL);
      return;
    }
    if (c != fps[i].at) return;
    log_warn("stopped at failpoint %s (pass %ld)", name, c);
    for (;;) pause();
  }
}

int svc_failpoint_armed(const char *name) {
  for (int i = 0; i < n_fps; i++)
    if (!strcmp(fps[i].name, name)) return 1;
  return 0;
}
