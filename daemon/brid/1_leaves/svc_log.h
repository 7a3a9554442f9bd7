/* svc_log.h: brid's logger: one line per message on stderr, each prefixed
 * with its syslog priority ("<3>" error ... "<7>" debug), which journald
 * turns into the entry's priority (SyslogLevelPrefix=, on by default); when
 * stderr is the journal ($JOURNAL_STREAM), one native journal entry per
 * message instead, with PRIORITY= and, for a message about a job (one that
 * says "job ID"), the field BRID_JOB_ID=.
 *
 * Main design choice: stderr (or the journal behind it) only, no syslog(3)
 * and no files: under systemd the journal collects and rotates, and in a
 * terminal or a test the lines are readable as they are. Safe from any
 * thread (each line is written with one write(2) call, which pipes and the
 * journal keep whole). */
#ifndef BRI_SVC_LOG_H
#define BRI_SVC_LOG_H

#include <syslog.h>

/* Messages above this priority (LOG_ERR..LOG_DEBUG) are dropped; default
 * LOG_INFO. */
void svc_log_set_level(int level);
int svc_log_level(void);
/* "error", "warning", "notice", "info", "debug" -> LOG_*; -1 when unknown. */
int svc_log_parse_level(const char *s);
const char *svc_log_level_name(int level);

void svc_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_err(...) svc_log(LOG_ERR, __VA_ARGS__)
#define log_warn(...) svc_log(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) svc_log(LOG_NOTICE, __VA_ARGS__)
#define log_info(...) svc_log(LOG_INFO, __VA_ARGS__)
#define log_debug(...) svc_log(LOG_DEBUG, __VA_ARGS__)

#endif
