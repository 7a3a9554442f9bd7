/* help.c: brictl's usage lines, help pages and command list (see help.h).
 *
 * Everything here is printed from the command tables, never written by
 * hand, so a help page cannot name an option the parser does not take or
 * show a default the command does not use. Text is wrapped at 79 columns. */
#include "help.h"

#include <string.h>

#include "cli.h"

#define WIDTH 79

/* A space that wrap() never breaks at: "(default:" NBSP "1000)". */
#define NBSP "\x1f"

/* Prints text word by word from column col, continuing lines at indent;
 * returns the column after the last word. */
static int wrap(FILE *f, const char *text, int col, int indent) {
  for (const char *p = text; *p;) {
    if (*p == '\n') {
      fprintf(f, "\n%*s", indent, "");
      col = indent;
      p++;
      continue;
    }
    int len = (int)strcspn(p, " \n");
    if (col > indent && col + 1 + len > WIDTH) {
      fprintf(f, "\n%*s", indent, "");
      col = indent;
    } else if (col > indent) {
      fputc(' ', f);
      col++;
    }
    for (int k = 0; k < len; k++) fputc(p[k] == NBSP[0] ? ' ' : p[k], f);
    col += len;
    p += len;
    while (*p == ' ') p++;
  }
  return col;
}

/* "--rows N", "--strategy bri|link|copy", "-h, --help" */
static void opt_syntax(const cli_opt *o, char *out, size_t cap) {
  size_t n = 0;
  if (o->short_name) n = (size_t)snprintf(out, cap, "-%c, ", o->short_name);
  if (o->type == CLI_FLAG) snprintf(out + n, cap - n, "--%s", o->name);
  else snprintf(out + n, cap - n, "--%s %s", o->name, o->type == CLI_CHOICE ? o->choices : o->value);
}

/* One usage token: "[--rows N (default 1000)]". */
static void usage_token(const cli_opt *o, char *out, size_t cap) {
  char syn[96];
  if (o->type == CLI_FLAG) snprintf(syn, sizeof syn, "--%s", o->name);
  else snprintf(syn, sizeof syn, "--%s %s", o->name, o->type == CLI_CHOICE ? o->choices : o->value);
  if (o->flags & CLI_REQUIRED) snprintf(out, cap, "%s", syn);
  else if (o->def) snprintf(out, cap, "[%s (default %s)]", syn, o->def);
  else snprintf(out, cap, "[%s]", syn);
}

void cli_help_usage(FILE *f, const cli_cmd *c) {
  if (!c) {
    fputs("usage: brictl [GLOBAL OPTIONS] COMMAND [ARGUMENTS] [OPTIONS]\n"
          "       brictl help [COMMAND] | --help | --version\n",
          f);
    return;
  }
  int indent = (int)strlen("usage: brictl ");
  fprintf(f, "usage: brictl [GLOBAL OPTIONS] %s", c->name);
  int col = indent + (int)strlen("[GLOBAL OPTIONS] ") + (int)strlen(c->name);
  if (c->args && c->args[0]) col = wrap(f, c->args, col, indent);
  for (size_t i = 0; c->opts && c->opts[i].name; i++) {
    if (c->opts[i].flags & CLI_RETIRED) continue;
    char tok[160];
    usage_token(&c->opts[i], tok, sizeof tok);
    /* a token wraps as a whole */
    int len = (int)strlen(tok);
    if (col + 1 + len > WIDTH) {
      fprintf(f, "\n%*s%s", indent, "", tok);
      col = indent + len;
    } else {
      fprintf(f, " %s", tok);
      col += 1 + len;
    }
  }
  fputc('\n', f);
}

/* One option line of a help page. */
static void opt_line(FILE *f, const cli_opt *o, bool offline_too) {
  char syn[96], text[512];
  opt_syntax(o, syn, sizeof syn);
  size_t n = (size_t)snprintf(text, sizeof text, "%s", o->help);
  if (o->def && o->def_note)
    n += (size_t)snprintf(text + n, sizeof text - n, " (default:" NBSP "%s; %s)", o->def, o->def_note);
  else if (o->def || o->def_note)
    n += (size_t)snprintf(text + n, sizeof text - n, " (default:" NBSP "%s)", o->def ? o->def : o->def_note);
  if (o->excludes) n += (size_t)snprintf(text + n, sizeof text - n, "; not with --%s", o->excludes);
  if (offline_too && (o->flags & CLI_DAEMON_ONLY))
    n += (size_t)snprintf(text + n, sizeof text - n, " [through brid]");
  if (offline_too && (o->flags & CLI_OFFLINE_ONLY))
    snprintf(text + n, sizeof text - n, " [without brid only]");
  int col = fprintf(f, "  %-26s", syn);
  if (col > 28) {
    fprintf(f, "\n%28s", "");
    col = 28;
  }
  wrap(f, text, col, 28);
  fputc('\n', f);
}

void cli_help_page(FILE *f, const cli_cmd *c) {
  cli_help_usage(f, c);
  fputc('\n', f);
  wrap(f, c->about ? c->about : c->summary, 0, 0);
  fputs("\n", f);
  bool either = (c->flags & CLI_CMD_OFFLINE) && (c->flags & CLI_CMD_DAEMON);
  if (c->opts && c->opts[0].name) {
    fputs("\noptions:\n", f);
    for (size_t i = 0; c->opts[i].name; i++)
      if (!(c->opts[i].flags & CLI_RETIRED)) opt_line(f, &c->opts[i], either);
  }
  fputs("\nglobal options:\n", f);
  for (size_t i = 0; CLI_GLOBAL_OPTS[i].name; i++) {
    if (cli_global_applies(c, &CLI_GLOBAL_OPTS[i])) opt_line(f, &CLI_GLOBAL_OPTS[i], false);
  }
}

void cli_help_top(FILE *f) {
  cli_help_usage(f, NULL);
  static const struct {
    unsigned want;
    const char *title;
  } groups[] = {
      {CLI_CMD_OFFLINE, "\ntable commands (brictl reads and writes the table itself; compact, cleanup,\n"
                        "materialize and verify go through brid with --wait, --daemon or --socket):\n"},
      {CLI_CMD_DAEMON, "\nbrid commands (ask the running daemon):\n"},
      {0, "\nhelp:\n"},
  };
  for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
    fputs(groups[g].title, f);
    for (size_t i = 0; CLI_COMMANDS[i]; i++) {
      const cli_cmd *c = CLI_COMMANDS[i];
      unsigned kind = c->flags & CLI_CMD_OFFLINE ? CLI_CMD_OFFLINE : c->flags & CLI_CMD_DAEMON;
      if (kind != groups[g].want) continue;
      int col = fprintf(f, "  %-12s", c->name);
      wrap(f, c->summary, col, 15);
      fputc('\n', f);
    }
  }
  fputs("\nglobal options (before the command, or among its options):\n", f);
  for (size_t i = 0; CLI_GLOBAL_OPTS[i].name; i++) opt_line(f, &CLI_GLOBAL_OPTS[i], false);
  fprintf(f,
          "\nexit status:\n"
          "  %d  success\n"
          "  %d  usage error (the message says what is wrong and how to call the command)\n"
          "  %d  the table or one of its files could not be read or processed, or brid\n"
          "     answered with an error\n"
          "  %d  brid could not be reached or refused the connection; gen --no-retry:\n"
          "     another writer took the version first\n"
          "  %d  a job followed with --wait failed or was cancelled\n"
          "  %d  verify found problems\n"
          "\nRun 'brictl help COMMAND' for a command's arguments and options.\n",
          CLI_OK, CLI_USAGE, CLI_ERROR, CLI_UNREACHABLE, CLI_JOB_FAILED, CLI_PROBLEMS);
}

/* ------------------------------------------------------------ commands */

int cmd_help(const cli_args *a) {
  if (a->n_pos == 0) {
    cli_help_top(stdout);
    return CLI_OK;
  }
  const cli_cmd *c = cli_find_cmd(a->pos[0]);
  if (!c) return cli_unknown_command(a, a->pos[0]);
  cli_help_page(stdout, c);
  return CLI_OK;
}

const cli_cmd CMD_HELP = {
    .name = "help",
    .args = "[COMMAND]",
    .summary = "the list of commands, or one command's arguments and options",
    .run = cmd_help,
};
