/* help.h: brictl's usage lines, help pages and command list, written from
 * the command tables (args.h), and the help command. */
#ifndef BRI_HELP_H
#define BRI_HELP_H

#include <stdio.h>

#include "args.h"

/* "usage: brictl [GLOBAL OPTIONS] compact TABLE [--strategy ...] ...",
 * wrapped; c NULL: brictl's own usage line. */
void cli_help_usage(FILE *f, const cli_cmd *c);
/* `brictl help CMD`: usage, description, every option with its default. */
void cli_help_page(FILE *f, const cli_cmd *c);
/* `brictl --help`: usage, the commands, global options, exit status. */
void cli_help_top(FILE *f);

int cmd_help(const cli_args *a);
int cmd_completion(const cli_args *a);

#endif
