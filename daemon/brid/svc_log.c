/* svc_log.c: priority-prefixed lines on stderr (see svc_log.h).
 *
 * A message is formatted into one buffer with its prefix and newline, and
 * embedded newlines are replaced by spaces, so that one call is one journal
 * entry and a message can never forge a second line with another
 * priority. */
#include "svc_log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static atomic_int level = LOG_INFO;

void svc_log_set_level(int l) { atomic_store(&level, l); }
int svc_log_level(void) { return atomic_load(&level); }

static const char *const NAMES[] = {"emerg", "alert", "crit", "error", "warning", "notice", "info", "debug"};

int svc_log_parse_level(const char *s) {
  for (int i = LOG_ERR; i <= LOG_DEBUG; i++)
    if (!strcmp(s, NAMES[i])) return i;
  if (!strcmp(s, "err")) return LOG_ERR;
  if (!strcmp(s, "warn")) return LOG_WARNING;
  return -1;
}

const char *svc_log_level_name(int l) { return l >= 0 && l <= LOG_DEBUG ? NAMES[l] : "?"; }

void svc_log(int prio, const char *fmt, ...) {
  if (prio > atomic_load(&level)) return;
  char buf[4096];
  int n = snprintf(buf, sizeof buf, "<%d>", prio);
  va_list ap;
  va_start(ap, fmt);
  int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
  va_end(ap);
  size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
  if (len > sizeof buf - 2) len = sizeof buf - 2;
  for (size_t i = (size_t)n; i < len; i++)
    if (buf[i] == '\n' || buf[i] == '\r') buf[i] = ' ';
  buf[len++] = '\n';
  ssize_t w = write(STDERR_FILENO, buf, len);
  (void)w;
}
