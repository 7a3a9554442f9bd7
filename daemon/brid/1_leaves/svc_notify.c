/* svc_notify.c: sd_notify wrappers (see svc_notify.h).
 *
 * STATUS is rate-free here; the caller (brid.c's status timer) decides how
 * often to send it. RELOADING carries MONOTONIC_USEC as systemd 253+ expects
 * for Type=notify-reload, which older systemd ignores. */
#include "svc_notify.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <systemd/sd-daemon.h>
#include <time.h>

void svc_notify_ready(void) { sd_notify(0, "READY=1"); }

void svc_notify_reloading(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu",
             (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000);
}

void svc_notify_stopping(void) { sd_notify(0, "STOPPING=1"); }

void svc_notify_status(const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  for (char *p = buf; *p; p++)
    if (*p == '\n') *p = ' ';
  sd_notifyf(0, "STATUS=%s", buf);
}

void svc_notify_watchdog(void) { sd_notify(0, "WATCHDOG=1"); }

uint64_t svc_notify_watchdog_usec(void) {
  uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) > 0) return usec;
  return 0;
}
