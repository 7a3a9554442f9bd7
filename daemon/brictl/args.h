/* args.h: brictl's one command-line parser.
 *
 * Every command describes itself in a cli_cmd: its positional arguments,
 * its options (name, type, value name, default, bounds, help line) and the
 * function that runs it. From those tables alone come the parsing of every
 * command line (args.c), the usage lines and help pages (help.c) and the
 * bash completion (completion.c), so the three cannot disagree.
 *
 * Syntax, as in git, knotc or systemctl:
 *   brictl [GLOBAL OPTIONS] COMMAND [ARGUMENTS] [OPTIONS]
 * Global options (--socket, --json, --timeout) may come before the command
 * or among its options; --version before the command is brictl's version
 * (after it, some commands take --version N: a table version). Options take
 * their value as "--opt VALUE" or "--opt=VALUE"; "--" ends the options.
 * Options are never abbreviated: a near miss gets a "did you mean".
 *
 * Positional arguments are kept as written: a TABLE is an opaque string (a
 * path today, an object-store URI later) that the command interprets. */
#ifndef BRI_ARGS_H
#define BRI_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum cli_type {
  CLI_FLAG,     /* no value */
  CLI_STRING,   /* any non-empty text */
  CLI_UINT,     /* a decimal integer within [min, max] */
  CLI_SIZE,     /* bytes, util/size.h ("65536", "256M", "1G"), within [min, max] */
  CLI_NUMBER,   /* a decimal number within [min, max] */
  CLI_DURATION, /* util/duration.h with a unit ("90s", "7d"); seconds within [min, max] */
  CLI_CHOICE,   /* one of the words in choices ("bri|link|copy") */
} cli_type;

/* cli_opt.flags */
enum {
  CLI_OFFLINE_ONLY = 1u << 0, /* brictl itself does it; brid has no such parameter */
  CLI_DAEMON_ONLY = 1u << 1,  /* only through brid: giving it sends the command to brid */
  CLI_BEFORE_CMD = 1u << 2,   /* a global option recognised only before the command */
  CLI_RETIRED = 1u << 3,      /* no longer taken: giving it is a usage error with its help as the message;
                               * help pages and the completion leave it out */
  CLI_REQUIRED = 1u << 4,     /* the command needs it (usage shows it without brackets) */
  CLI_EMPTY_OK = 1u << 5,     /* a CLI_STRING that may be "" */

};

typedef struct cli_opt {
  const char *name;     /* the long form without dashes: "dry-run" */
  char short_name;      /* 'h' for -h, or 0 */
  cli_type type;
  const char *value;    /* the value's name in usage lines ("N", "DURATION") */
  const char *help;     /* one line */
  const char *def;      /* applied when the option is not given; shown as its default */
  const char *def_note; /* a default decided elsewhere (shown only), e.g. "the table's policy" */
  const char *choices;  /* CLI_CHOICE: "bri|link|copy" */
  double min, max;      /* bounds of CLI_UINT, CLI_SIZE, CLI_NUMBER, CLI_DURATION; max 0 = none */
  const char *excludes; /* another option of the command that cannot be given with it */
  const char *param;    /* the JSON-RPC parameter brid takes it as (cmd_submit.c), or NULL */
  unsigned flags;
} cli_opt;

/* cli_cmd.flags */
enum {
  CLI_CMD_OFFLINE = 1u << 0, /* works on a table without brid */
  CLI_CMD_DAEMON = 1u << 1,  /* asks brid (both bits: either, see cli_wants_daemon) */
  CLI_CMD_JSON = 1u << 2,    /* has a --json output */
};

#define CLI_MAX_OPTS 24
#define CLI_MAX_POS 4

typedef struct cli_value {
  bool given;       /* on the command line */
  bool set;         /* given, or its default applied */
  const char *text; /* as written, or the default */
  uint64_t u;       /* CLI_UINT, CLI_SIZE */
  double d;         /* CLI_NUMBER */
  int64_t secs;     /* CLI_DURATION */
} cli_value;

typedef struct cli_args cli_args;

typedef struct cli_cmd {
  const char *name;
  const char *args;    /* positional arguments as usage shows them: "TABLE", "SRC DST", "[TABLE]" */
  const char *summary; /* one line for the command list */
  const char *about;   /* the help page's description; may be NULL */
  const cli_opt *opts; /* ended by an entry with a NULL name; NULL for none */
  unsigned flags;
  int (*run)(const cli_args *a);
} cli_cmd;

struct cli_args {
  const cli_cmd *cmd;
  const char *pos[CLI_MAX_POS];
  size_t n_pos;
  cli_value v[CLI_MAX_OPTS]; /* by index in cmd->opts */
  cli_value g[8];            /* by index in CLI_GLOBAL_OPTS */
};

/* The global options: --socket, --json, --timeout, --help, --version. */
extern const cli_opt CLI_GLOBAL_OPTS[];

/* Every command, in the order of the command list (brictl.c); NULL-ended. */
extern const cli_cmd *const CLI_COMMANDS[];

/* Parses argv (argv[0] = the program). Returns 0 with *a filled and a->cmd
 * the command to run; or the exit code to exit with: CLI_USAGE after
 * printing a usage error, CLI_OK with a->cmd NULL after printing help or
 * the version. */
int cli_parse(int argc, char **argv, cli_args *a);

/* The command named name, or NULL. */
const cli_cmd *cli_find_cmd(const char *name);

/* Values by option name (an option the command does not have is a bug:
 * assert). A global option is found by its name too. */
const cli_value *cli_value_of(const cli_args *a, const char *name);
bool cli_given(const cli_args *a, const char *name);
bool cli_flag(const cli_args *a, const char *name);
const char *cli_text(const cli_args *a, const char *name); /* NULL when not set */
uint64_t cli_uint(const cli_args *a, const char *name);
double cli_number(const cli_args *a, const char *name);
int64_t cli_seconds(const cli_args *a, const char *name);

/* Whether global option g means something to command c: --json to a
 * command with a JSON output, --socket and --timeout to one that can ask
 * brid, --help to all. The parser refuses the others, help pages and the
 * completion leave them out. */
bool cli_global_applies(const cli_cmd *c, const cli_opt *g);

/* True when the command goes to brid: it can work both ways and a
 * daemon-only option or --socket was given. */
bool cli_wants_daemon(const cli_args *a);

/* Prints "brictl CMD: <message>", the command's usage and where its help
 * is; returns CLI_USAGE. The one wording of every usage error. */
int cli_usage(const cli_args *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The usage error for a command name that is none (with a did you mean). */
int cli_unknown_command(const cli_args *a, const char *name);

/* What a value of o must be, for messages: "a positive integer", "one of
 * bri, link, copy", "a duration with a unit (e.g. 90s, 30m, 2h, 7d)". */
void cli_value_kind(const cli_opt *o, char *out, size_t cap);

/* Seconds in the largest unit that divides them: "7d", "90s", "0s". */
void cli_fmt_seconds(int64_t s, char *out, size_t cap);

/* The closest of n words to s (edit distance at most 2, or a word that
 * starts with s), or NULL: the "did you mean" of unknown names. */
const char *cli_closest(const char *s, const char *const *words, size_t n);

#endif
