/* cli.h: what every brictl command shares: exit codes, error reporting and
 * the commands' tables. Printing lives here and in the cmd_*.c files, never
 * in lib/. Argument parsing is args.h's. */
#ifndef BRI_CLI_H
#define BRI_CLI_H

#include <jansson.h>
#include <stdbool.h>

#include "args.h"
#include "bri/error.h"

/* brictl's exit codes (brictl --help and brictl(1) list them). */
enum {
  CLI_OK = 0,
  CLI_USAGE = 1,       /* usage error */
  CLI_ERROR = 2,       /* the table or a file could not be read or processed; brid answered an error */
  CLI_UNREACHABLE = 3, /* brid could not be reached or refused the connection */
  CLI_CONFLICT = 3,    /* gen --no-retry: another writer took the version first */
  CLI_JOB_FAILED = 4,  /* a job followed with --wait failed or was cancelled */
  CLI_PROBLEMS = 5,    /* verify found problems */
};

/* Prints "brictl: <message>" to stderr and returns CLI_ERROR. */
int cli_fail(const bri_error *err);
/* Parses a non-negative decimal integer; false on anything else. */
bool cli_parse_u64(const char *s, unsigned long long *out);
/* Prints a JSON value (indented, keys in insertion order) and a newline. */
void cli_print_json(json_t *v);

/* The commands, each defined beside its code. */
extern const cli_cmd CMD_INSPECT, CMD_GEN, CMD_COMPACT, CMD_CLEANUP, CMD_SCAN, CMD_CAT, CMD_MATERIALIZE,
    CMD_CLONE, CMD_VERIFY;
/* Daemon client commands (cmd_status.c, cmd_tables.c, cmd_jobs.c, cmd_control.c). */
extern const cli_cmd CMD_STATUS, CMD_TABLES, CMD_JOBS, CMD_JOB, CMD_CANCEL, CMD_PAUSE, CMD_RESUME, CMD_RELOAD,
    CMD_METRICS;
/* help.c, completion.c */
extern const cli_cmd CMD_HELP, CMD_COMPLETION;

/* compact, cleanup, materialize and verify run in brid or in brictl itself
 * (cmd_submit.c), one control path (OPS 4): with --offline in brictl; with
 * --wait, --daemon or --socket in brid (which must answer); otherwise in brid
 * when its socket answers (following the job to its end, as --wait), and
 * in brictl when no brid answers. Each command hands its offline run to
 * cli_table_job, which decides, and when brictl works itself on a table
 * (writes: the job writes or removes table files, not a dry run) takes the table lock
 * (ops/lock.h) around it, so that brid's jobs and brictl never work on one
 * table at once. Their option tables end with CLI_SUBMIT_OPTS. */
int cli_table_job(const cli_args *a, bool writes, int (*offline)(const cli_args *a));
#define CLI_SUBMIT_OPTS                                                                                \
  {.name = "wait", .type = CLI_FLAG, .flags = CLI_DAEMON_ONLY,                                         \
   .help = "run it in brid and follow the job to its end, with its progress on stderr"},               \
      {.name = "daemon", .type = CLI_FLAG, .flags = CLI_DAEMON_ONLY,                                   \
       .help = "queue it in brid (ahead of automatic jobs) and return its job id"},                    \
      {.name = "quiet", .type = CLI_FLAG, .flags = CLI_DAEMON_ONLY, .help = "no progress on stderr"},  \
      {.name = "offline", .type = CLI_FLAG, .flags = CLI_OFFLINE_ONLY,                                 \
       .help = "run it in brictl itself even when brid runs (under the table's lock: it waits for "    \
               "nothing, and refuses while brid works on the table)"}

#endif
