/* cli.h: what every brictl command shares: exit codes, error reporting and
 * the command signature. Printing lives here and in the cmd_*.c files, never
 * in lib/. */
#ifndef BRI_CLI_H
#define BRI_CLI_H

#include <jansson.h>
#include <stdbool.h>

#include "util/error.h"

/* brictl exit codes (documented in README.md). */
enum { CLI_OK = 0, CLI_USAGE = 1, CLI_ERROR = 2 };

/* Prints "brictl: <message>" to stderr and returns CLI_ERROR. */
int cli_fail(const bri_error *err);
/* Prints "brictl <cmd>: <message>" and the command's usage; returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *usage, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Parses a non-negative decimal integer; false on anything else. */
bool cli_parse_u64(const char *s, unsigned long long *out);
/* Prints a JSON value (indented, keys in insertion order) and a newline. */
void cli_print_json(json_t *v);

int cmd_inspect(int argc, char **argv);
int cmd_cleanup(int argc, char **argv);
int cmd_compact(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_scan(int argc, char **argv);
int cmd_cat(int argc, char **argv);
int cmd_materialize(int argc, char **argv);
int cmd_clone(int argc, char **argv);
int cmd_verify(int argc, char **argv);
/* Daemon client commands (cmd_status.c, cmd_tables.c, cmd_jobs.c, cmd_control.c);
 * their exit codes are in cmd_client.h. */
int cmd_status(int argc, char **argv);
int cmd_tables(int argc, char **argv);
int cmd_jobs(int argc, char **argv);
int cmd_job(int argc, char **argv);
int cmd_cancel(int argc, char **argv);
int cmd_pause(int argc, char **argv);
int cmd_resume(int argc, char **argv);
int cmd_reload(int argc, char **argv);
int cmd_metrics(int argc, char **argv);
/* compact/cleanup/materialize/verify through brid (cmd_submit.c): taken when
 * cli_submit_wanted(argc, argv) (argv[0] = the command) sees --socket,
 * --wait or --daemon. */
bool cli_submit_wanted(int argc, char **argv);
int cmd_submit(int argc, char **argv);

#endif
