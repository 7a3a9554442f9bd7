/* svc_notify.h: telling systemd what brid is doing (sd_notify): READY once
 * the socket listens and recovery is done, STATUS lines, WATCHDOG pings,
 * RELOADING and STOPPING.
 *
 * Main design choice: thin wrappers over libsystemd's sd_notify, which is
 * itself a no-op when $NOTIFY_SOCKET is unset, so brid started by hand or
 * by a test behaves the same without any "am I under systemd" branches. */
#ifndef BRI_SVC_NOTIFY_H
#define BRI_SVC_NOTIFY_H

#include <stdint.h>

void svc_notify_ready(void);
void svc_notify_reloading(void);
void svc_notify_stopping(void);
void svc_notify_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void svc_notify_watchdog(void);
/* The watchdog interval systemd asked for (WatchdogSec=), 0 when none. */
uint64_t svc_notify_watchdog_usec(void);

#endif
