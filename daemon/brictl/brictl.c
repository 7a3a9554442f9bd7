/* brictl.c: entry point of brictl, the operator's command-line tool.
 *
 * Table commands (inspect, compact, scan, ...) link libbri and work on a
 * table directly, or hand the job to brid; brid commands (status, jobs, ...)
 * talk to brid over its socket. This file lists the commands in the order
 * `brictl --help` shows them and dispatches: args.c parses every command
 * line from the commands' tables, each command lives in cmd_<name>.c. */
#include <stddef.h>

#include "cli.h"

const cli_cmd *const CLI_COMMANDS[] = {
    &CMD_INSPECT, &CMD_GEN,    &CMD_COMPACT, &CMD_CLEANUP, &CMD_SCAN,   &CMD_CAT,    &CMD_MATERIALIZE,
    &CMD_CLONE,   &CMD_VERIFY, &CMD_STATUS,  &CMD_TABLES,  &CMD_JOBS,   &CMD_JOB,    &CMD_CANCEL,
    &CMD_PAUSE,   &CMD_RESUME, &CMD_RELOAD,  &CMD_METRICS, &CMD_HELP,   &CMD_COMPLETION, NULL,
};

int main(int argc, char **argv) {
  cli_args a;
  int rc = cli_parse(argc, argv, &a);
  if (rc || !a.cmd) return rc;
  return a.cmd->run(&a);
}
