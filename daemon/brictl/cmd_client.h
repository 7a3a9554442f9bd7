/* cmd_client.h: what brictl's daemon commands share: a client set up from
 * the global options (--socket, --json, --timeout), one call to brid with errors
 * mapped to exit codes, and formatting for people (sizes, times, tables).
 *
 * Exit codes (cli.h): CLI_ERROR when brid answered with an error (no such
 * table or job, bad parameter, job in the wrong state, configuration error
 * on reload); CLI_UNREACHABLE when brid could not be reached or refused the
 * connection (not running, socket missing, permission denied, too many
 * connections, timeout); CLI_JOB_FAILED when a job waited for (--wait)
 * ended failed or cancelled. */
#ifndef BRI_CMD_CLIENT_H
#define BRI_CMD_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "rpc/rpc_client.h"

typedef struct cli_client {
  const char *socket;
  bool socket_given; /* --socket: that one socket, no fallback ($BRID_SOCKET is a default) */
  bool json;
  int timeout_ms;
} cli_client;

/* The client as the global options (--socket, --json, --timeout) ask. */
void cli_client_init(cli_client *c, const cli_args *a);

/* The JSON-RPC params of the options given that brid takes (cli_opt.param):
 * flags as true, numbers and durations (seconds) as integers, the rest as
 * strings; a TABLE value made absolute (cli_table_path). */
json_t *cli_params(const cli_args *a);

/* Connects; on failure prints the reason and returns CLI_UNREACHABLE_EXIT. */
int cli_client_open(const cli_client *c, rpc_client **out);
/* One call on an open connection; params stolen. On failure prints the
 * reason and returns the exit code; 0 and *result otherwise. */
int cli_client_call_on(rpc_client *rc, const char *method, json_t *params, json_t **result);
/* Connect, call, close. A method that changes nothing
 * (rpc_method_reads_only), refused on the default control socket (its mode
 * or brid's credential check), is asked again on the read-only socket
 * beside it, so that users outside brid's socket group can watch it. */
int cli_client_call(const cli_client *c, const char *method, json_t *params, json_t **result);

/* A table argument as brid names it: its canonical name (bri_store_location). */
const char *cli_table_path(const char *arg, char *buf, size_t cap);

/* "1.5 MiB", "512 B" */
void cli_fmt_bytes(uint64_t b, char *out, size_t cap);
/* A JSON ms timestamp as local time with its zone, "2026-12-01 14:03:22+01:00"
 * (RFC 3339), "-" for null. */
void cli_fmt_time(const json_t *ms, char *out, size_t cap);
/* A duration in ms as "850ms", "12s", "3m20s", "2h5m", "3d4h". */
void cli_fmt_duration(int64_t ms, char *out, size_t cap);
/* JSON member helpers: string or "-", integer or 0. */
const char *cli_str(const json_t *o, const char *key);
long long cli_int(const json_t *o, const char *key);
/* One line describing a job's progress ("writing 45% (4500/10000 rows, 12.0 MiB written, 3.1 MiB/s, ETA 1m20s)"). */
void cli_fmt_progress(const json_t *progress, char *out, size_t cap);

/* The roots section of status and tables, for people: one line a root,
 * an unreachable one with its error (cmd_status.c). */
void cli_print_roots(const json_t *roots);

/* One job in detail, for people (cmd_jobs.c). */
void cli_print_job(const json_t *job);

#endif
