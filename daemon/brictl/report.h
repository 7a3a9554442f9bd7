/* report.h: brictl's one printer of a job's report for people, per kind
 * (compact, cleanup, materialize, verify), from the report's JSON: the
 * object lib/ops/report.h builds, which --json prints as it is and brid
 * keeps as a job's result (docs/api.md). The offline commands (cmd_*.c)
 * and the daemon's client (--wait in cmd_submit.c, brictl job in
 * cmd_jobs.c) print every report through it. */
#ifndef BRI_CLI_REPORT_H
#define BRI_CLI_REPORT_H

#include <jansson.h>

/* Prints report, of a job of kind, each line after indent; runner names
 * the process whose storage counters the report holds ("brictl", "brid").
 * Nothing for a kind it does not know. */
void cli_print_report(const char *kind, const json_t *report, const char *runner, const char *indent);

#endif
