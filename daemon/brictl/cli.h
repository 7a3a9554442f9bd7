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

/* compact/cleanup/materialize/verify through brid (cmd_submit.c): the
 * commands call it when cli_wants_daemon(a). Their option tables end with
 * CLI_SUBMIT_OPTS, the options of that path. */
int cmd_submit(const cli_args *a);
#define CLI_SUBMIT_OPTS                                                                                \
  {.name = "wait", .type = CLI_FLAG, .flags = CLI_DAEMON_ONLY,                                         \
   .help = "run it in brid and follow the job to its end, with its progress on stderr"},               \
      {.name = "daemon", .type = CLI_FLAG, .flags = CLI_DAEMON_ONLY,                                   \
       .help = "queue it in brid (ahead of automatic jobs) and return its job id"},                    \
      {.name = "quiet", .type = CLI_FLAG, .flags = CLI_DAEMON_ONLY, .help = "no progress on stderr"}

#endif
