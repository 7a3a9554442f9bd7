/* brictl.c: entry point of brictl, the operator's command-line tool.
 *
 * Offline commands (inspect, scan, ...) link libbri and work on a table
 * directly; daemon commands (added with the daemon) talk to brid over its
 * socket. This file only dispatches: each command lives in cmd_<name>.c. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} COMMANDS[] = {
    {"inspect", cmd_inspect, "versions, flags, schema, fragments and sidecars of a table"},
    {"gen", cmd_gen, "create or append to a table with generated rows (ids, typed columns, blobs)"},
    {"compact", cmd_compact, "merge small fragments, keeping blob payloads in place (--dry-run plans)"},
    {"cleanup", cmd_cleanup, "delete what no retained version reaches (--dry-run lists it)"},
    {"scan", cmd_scan, "row count and one SHA-256 per column, as LanceDB reads them"},
    {"cat", cmd_cat, "write one blob's bytes to stdout (--column C --row ROWID)"},
    {"materialize", cmd_materialize, "make a BRI table readable by stock Lance (links, else copies)"},
    {"clone", cmd_clone, "clone a table: --shallow (references the source) or --deep (copies)"},
    {"verify", cmd_verify, "check that every referenced file, blob and BRI target is there"},
    {"status", cmd_status, "brid: state, workers, queue and running jobs"},
    {"tables", cmd_tables, "brid: watched tables, or one TABLE with its policy and recent jobs"},
    {"jobs", cmd_jobs, "brid: jobs (--table, --state, --kind, --limit)"},
    {"job", cmd_job, "brid: one job ID with its attempts, outputs and progress"},
    {"cancel", cmd_cancel, "brid: cancel job ID (a running one stops at its next safe point)"},
    {"pause", cmd_pause, "brid: start no new job for TABLE (or every table)"},
    {"resume", cmd_resume, "brid: undo pause for TABLE (or every table)"},
    {"reload", cmd_reload, "brid: re-read the configuration file"},
    {"metrics", cmd_metrics, "brid: Prometheus metrics"},
};

static void usage(FILE *out) {
  fprintf(out, "usage: brictl COMMAND [ARGS]\n\ncommands:\n");
  for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
    fprintf(out, "  %-10s %s\n", COMMANDS[i].name, COMMANDS[i].summary);
  fprintf(out, "\nexit status: 0 success, 1 usage error, 2 the table or a file could not be "
               "read or processed\n");
  fprintf(out, "  (brid commands: 2 brid answered with an error, 3 brid could not be reached or refused\n"
               "  the connection, 4 a job followed with --wait failed or was cancelled)\n"
               "compact, cleanup, materialize and verify run in brictl itself, or in brid with\n"
               "--wait, --socket PATH or --daemon; brid commands take --socket PATH (default\n"
               "$BRID_SOCKET, else /run/brid/brid.sock) and --json.\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return CLI_USAGE;
  }
  if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
    usage(stdout);
    return CLI_OK;
  }
  if (cli_submit_wanted(argc - 1, argv + 1)) return cmd_submit(argc - 1, argv + 1);
  for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
    if (!strcmp(argv[1], COMMANDS[i].name)) return COMMANDS[i].run(argc - 1, argv + 1);
  fprintf(stderr, "brictl: unknown command \"%s\"\n", argv[1]);
  usage(stderr);
  return CLI_USAGE;
}
