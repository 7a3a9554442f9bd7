/* svc_log.c: brid's log lines (see svc_log.h): to the journal with fields
 * when stderr is the journal, else priority-prefixed lines on stderr.
 *
 * A message is formatted into one buffer and embedded newlines are replaced
 * by spaces, so that one call is one journal entry and a message can never
 * forge a second line with another priority. Under systemd, stderr is a
 * stream to journald (the unit's default) and $JOURNAL_STREAM names it
 * ("DEVICE:INODE"); brid then sends each entry natively (sd_journal_sendv)
 * with PRIORITY=, SYSLOG_IDENTIFIER=brid and, for a message about one job,
 * BRID_JOB_ID= (journalctl BRID_JOB_ID=42 shows a job's whole story). An
 * entry the journal refuses goes to stderr as a prefixed line instead. */
#include "svc_log.h"

#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>
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

/* stderr is the journal: $JOURNAL_STREAM is stderr's device and inode (as
 * sd_journal_stream_fd(3) and systemd.exec(5) say to check), decided once */
static bool to_journal;
static pthread_once_t journal_once = PTHREAD_ONCE_INIT;

static void journal_check(void) {
  const char *js = getenv("JOURNAL_STREAM");
  unsigned long long dev, ino;
  struct stat st;
  to_journal = js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0 &&
               (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

/* The job a message is about: the number after its first "job " (brid's
 * messages about a job say "job ID"); 0 when there is none. */
static long long job_of(const char *msg) {
  for (const char *p = msg; (p = strstr(p, "job ")); p += 4)
    if ((p == msg || !isalnum((unsigned char)p[-1])) && isdigit((unsigned char)p[4])) return atoll(p + 4);
  return 0;
}

/* message: "MESSAGE=...", the journal's field */
static int send_journal(int prio, const char *message) {
  char fprio[16], fjob[40];
  snprintf(fprio, sizeof fprio, "PRIORITY=%d", prio);
  struct iovec iov[4];
  int n = 0;
  iov[n++] = (struct iovec){(void *)"SYSLOG_IDENTIFIER=brid", 22};
  iov[n++] = (struct iovec){fprio, strlen(fprio)};
  long long job = job_of(message + 8);
  if (job > 0) {
    snprintf(fjob, sizeof fjob, "BRID_JOB_ID=%lld", job);
    iov[n++] = (struct iovec){fjob, strlen(fjob)};
  }
  iov[n++] = (struct iovec){(void *)message, strlen(message)};
  return sd_journal_sendv(iov, n);
}

void svc_log(int prio, const char *fmt, ...) {
  if (prio > atomic_load(&level)) return;
  pthread_once(&journal_once, journal_check);
  /* room for "MESSAGE=" (the journal's field) or "<N>" (stderr's prefix) */
  char buf[4096];
  const size_t head = 8;
  va_list ap;
  va_start(ap, fmt);
  int m = vsnprintf(buf + head, sizeof buf - head - 1, fmt, ap);
  va_end(ap);
  size_t len = head + (m < 0 ? 0 : (size_t)m);
  if (len > sizeof buf - 2) len = sizeof buf - 2;
  for (size_t i = head; i < len; i++)
    if (buf[i] == '\n' || buf[i] == '\r') buf[i] = ' ';
  buf[len] = 0;
  if (to_journal) {
    memcpy(buf, "MESSAGE=", head);
    if (send_journal(prio, buf) >= 0) return;
  }
  char pre[8];
  int n = snprintf(pre, sizeof pre, "<%d>", prio);
  size_t start = head - (size_t)n;
  memcpy(buf + start, pre, (size_t)n);
  buf[len++] = '\n';
  ssize_t w = write(STDERR_FILENO, buf + start, len - start);
  (void)w;
}
