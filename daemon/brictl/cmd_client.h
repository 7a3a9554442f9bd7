/* cmd_client.h: what brictl's daemon commands share: the common options
 * (--socket PATH, --json, --timeout SECONDS), one call to brid with errors
 * mapped to exit codes, and formatting for people (sizes, times, tables).
 *
 * Exit codes of the daemon commands (on top of cli.h's 0 ok, 1 usage):
 *   2  brid answered with an error (no such table or job, bad parameter,
 *      job in the wrong state, configuration error on reload)
 *   3  brid could not be reached or refused the connection (not running,
 *      socket missing, permission denied, too many connections, timeout)
 *   4  a job waited for (--wait) ended failed or cancelled */
#ifndef BRI_CMD_CLIENT_H
#define BRI_CMD_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "rpc/rpc_client.h"

enum { CLI_DAEMON_ERROR = 2, CLI_UNREACHABLE_EXIT = 3, CLI_JOB_FAILED_EXIT = 4 };

typedef struct cli_client {
  const char *socket;
  bool json;
  int timeout_ms;
} cli_client;

void cli_client_init(cli_client *c);

/* Consumes a common option at argv[*i] (advancing *i past its value):
 * 1 consumed, 0 not a common option, -1 usage error (already printed). */
int cli_client_opt(cli_client *c, const char *cmd, const char *usage, int argc, char **argv, int *i);

/* Connects; on failure prints the reason and returns CLI_UNREACHABLE_EXIT. */
int cli_client_open(const cli_client *c, rpc_client **out);
/* One call on an open connection; params stolen. On failure prints the
 * reason and returns the exit code; 0 and *result otherwise. */
int cli_client_call_on(rpc_client *rc, const char *method, json_t *params, json_t **result);
/* Connect, call, close. */
int cli_client_call(const cli_client *c, const char *method, json_t *params, json_t **result);

/* A table argument as brid needs it: absolute (realpath when it exists). */
const char *cli_table_path(const char *arg, char *buf, size_t cap);

/* "1.5 MiB", "512 B" */
void cli_fmt_bytes(uint64_t b, char *out, size_t cap);
/* A JSON ms timestamp as local "YYYY-MM-DD HH:MM:SS", "-" for null. */
void cli_fmt_time(const json_t *ms, char *out, size_t cap);
/* A duration in ms as "850ms", "12s", "3m20s", "2h5m", "3d4h". */
void cli_fmt_duration(int64_t ms, char *out, size_t cap);
/* JSON member helpers: string or "-", integer or 0. */
const char *cli_str(const json_t *o, const char *key);
long long cli_int(const json_t *o, const char *key);
/* One line describing a job's progress ("writing 45% (4500/10000 rows, 12 MiB written)"). */
void cli_fmt_progress(const json_t *progress, char *out, size_t cap);

/* One job in detail, for people (cmd_jobs.c). */
void cli_print_job(const json_t *job);

#endif
