/* args.c: brictl's one command-line parser (see args.h).
 *
 * Parsing runs in three passes over one command line: global options up to
 * the command name, then the command's arguments (its options first, then
 * the global ones), then the checks that need the whole line (required
 * arguments, options that exclude each other, options that need or refuse
 * brid). Defaults are parsed by the same code as the values people type, so
 * a default shown in a usage line is exactly what the command gets. Every
 * usage error goes through cli_usage: one wording, one exit code. */
#include "args.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bri/util.h"
#include "cli.h"
#include "help.h"

const cli_opt CLI_GLOBAL_OPTS[] = {
    {.name = "socket", .type = CLI_STRING, .value = "PATH", .help = "brid's control socket",
     .def_note = "$BRID_SOCKET, else /run/brid/brid.sock"},
    {.name = "json", .type = CLI_FLAG, .help = "print the result as JSON (keys stable for scripts)"},
    {.name = "timeout", .type = CLI_DURATION, .value = "DURATION", .help = "how long to wait for each answer of brid",
     .def = "30s", .min = 1, .max = 86400},
    {.name = "help", .short_name = 'h', .type = CLI_FLAG, .help = "show the help of brictl or of the command"},
    {.name = "version", .short_name = 'V', .type = CLI_FLAG, .help = "print brictl's version (before the command)",
     .flags = CLI_BEFORE_CMD},
    {0},
};

/* ------------------------------------------------------------ look-ups */

static size_t count_opts(const cli_opt *o) {
  size_t n = 0;
  while (o && o[n].name) n++;
  return n;
}

const cli_cmd *cli_find_cmd(const char *name) {
  for (size_t i = 0; CLI_COMMANDS[i]; i++)
    if (!strcmp(CLI_COMMANDS[i]->name, name)) return CLI_COMMANDS[i];
  return NULL;
}

/* The option of opts called name (its first len bytes), or whose short
 * form is name[0] when is_short; its index, or -1. */
static long find_opt(const cli_opt *opts, const char *name, size_t len, bool is_short) {
  for (size_t i = 0; opts && opts[i].name; i++) {
    if (is_short ? opts[i].short_name == name[0]
                 : strlen(opts[i].name) == len && !strncmp(opts[i].name, name, len))
      return (long)i;
  }
  return -1;
}

const cli_value *cli_value_of(const cli_args *a, const char *name) {
  long i = a->cmd ? find_opt(a->cmd->opts, name, strlen(name), false) : -1;
  if (i >= 0) return &a->v[i];
  i = find_opt(CLI_GLOBAL_OPTS, name, strlen(name), false);
  assert(i >= 0 && "brictl asked for an option its command does not have");
  return &a->g[i];
}

bool cli_given(const cli_args *a, const char *name) { return cli_value_of(a, name)->given; }
bool cli_flag(const cli_args *a, const char *name) { return cli_value_of(a, name)->set; }
const char *cli_text(const cli_args *a, const char *name) {
  const cli_value *v = cli_value_of(a, name);
  return v->set ? v->text : NULL;
}
uint64_t cli_uint(const cli_args *a, const char *name) { return cli_value_of(a, name)->u; }
double cli_number(const cli_args *a, const char *name) { return cli_value_of(a, name)->d; }
int64_t cli_seconds(const cli_args *a, const char *name) { return cli_value_of(a, name)->secs; }

bool cli_global_applies(const cli_cmd *c, const cli_opt *g) {
  if (g->flags & CLI_BEFORE_CMD) return false;
  if (!strcmp(g->name, "json")) return c->flags & CLI_CMD_JSON;
  if (!strcmp(g->name, "socket") || !strcmp(g->name, "timeout")) return c->flags & CLI_CMD_DAEMON;
  return true;
}

bool cli_wants_daemon(const cli_args *a) {
  const cli_cmd *c = a->cmd;
  if (!(c->flags & CLI_CMD_DAEMON)) return false;
  if (!(c->flags & CLI_CMD_OFFLINE)) return true;
  if (cli_given(a, "socket")) return true;
  for (size_t i = 0; i < count_opts(c->opts); i++)
    if (a->v[i].given && (c->opts[i].flags & CLI_DAEMON_ONLY)) return true;
  return false;
}

/* ------------------------------------------------------------ did you mean */

/* Optimal string alignment distance (adjacent swaps count once), capped. */
static size_t distance(const char *s, const char *t) {
  size_t n = strlen(s), m = strlen(t);
  if (n > 40 || m > 40) return 99;
  size_t d[41][41];
  for (size_t i = 0; i <= n; i++) d[i][0] = i;
  for (size_t j = 0; j <= m; j++) d[0][j] = j;
  for (size_t i = 1; i <= n; i++)
    for (size_t j = 1; j <= m; j++) {
      size_t cost = s[i - 1] != t[j - 1], best = d[i - 1][j - 1] + cost;
      if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && s[i - 1] == t[j - 2] && s[i - 2] == t[j - 1] && d[i - 2][j - 2] + 1 < best)
        best = d[i - 2][j - 2] + 1;
      d[i][j] = best;
    }
  return d[n][m];
}

const char *cli_closest(const char *s, const char *const *words, size_t n) {
  const char *best = NULL;
  size_t best_d = 3, len = strlen(s);
  for (size_t i = 0; i < n; i++) {
    size_t dd = distance(s, words[i]);
    if (len >= 3 && !strncmp(words[i], s, len)) dd = 1; /* a prefix: "--dry" for "--dry-run" */
    if (dd < best_d && dd < len) best = words[i], best_d = dd;
  }
  return best;
}

/* " (did you mean --dry-run?)" for an unknown option of cmd, or "". */
static void option_hint(const cli_cmd *cmd, const char *given, char *out, size_t cap) {
  const char *words[CLI_MAX_OPTS + 8];
  char names[CLI_MAX_OPTS + 8][40];
  size_t n = 0;
  const cli_opt *lists[2] = {cmd ? cmd->opts : NULL, CLI_GLOBAL_OPTS};
  for (int l = 0; l < 2; l++)
    for (size_t i = 0; lists[l] && lists[l][i].name && n < CLI_MAX_OPTS + 8; i++) {
      if ((cmd && (lists[l][i].flags & CLI_BEFORE_CMD)) || (lists[l][i].flags & CLI_RETIRED)) continue;
      snprintf(names[n], sizeof names[n], "--%s", lists[l][i].name);
      words[n] = names[n];
      n++;
    }
  char key[64];
  snprintf(key, sizeof key, "%.*s", (int)strcspn(given, "="), given);
  const char *m = cli_closest(key, words, n);
  if (m) snprintf(out, cap, " (did you mean %s?)", m);
  else out[0] = 0;
}

/* ------------------------------------------------------------ usage errors */

int cli_usage(const cli_args *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const cli_cmd *c = a ? a->cmd : NULL;
  if (c) fprintf(stderr, "brictl %s: ", c->name);
  else fputs("brictl: ", stderr);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  cli_help_usage(stderr, c);
  if (c) fprintf(stderr, "Run 'brictl help %s' for every option.\n", c->name);
  else fputs("Run 'brictl help' for the commands.\n", stderr);
  return CLI_USAGE;
}

/* ------------------------------------------------------------ values */

void cli_fmt_seconds(int64_t s, char *out, size_t cap) {
  static const struct {
    char unit;
    int64_t secs;
  } U[] = {{'w', 604800}, {'d', 86400}, {'h', 3600}, {'m', 60}};
  for (size_t i = 0; i < sizeof U / sizeof U[0]; i++)
    if (s > 0 && s % U[i].secs == 0) {
      snprintf(out, cap, "%lld%c", (long long)(s / U[i].secs), U[i].unit);
      return;
    }
  snprintf(out, cap, "%llds", (long long)s);
}

void cli_value_kind(const cli_opt *o, char *out, size_t cap) {
  char lo[32], hi[32];
  switch (o->type) {
  case CLI_FLAG:
    snprintf(out, cap, "no value");
    break;
  case CLI_STRING:
    snprintf(out, cap, "a value (%s)", o->value ? o->value : "TEXT");
    break;
  case CLI_UINT:
    if (o->max > 0) snprintf(out, cap, "an integer from %.0f to %.0f", o->min, o->max);
    else if (o->min == 1) snprintf(out, cap, "a positive integer");
    else if (o->min > 1) snprintf(out, cap, "an integer of at least %.0f", o->min);
    else snprintf(out, cap, "a non-negative integer");
    break;
  case CLI_SIZE:
    snprintf(out, cap, "a size (bytes, or a number with K, M, G or T) of at least %.0f bytes", o->min);
    break;
  case CLI_NUMBER:
    if (o->max > 0) snprintf(out, cap, "a number from %g to %g", o->min, o->max);
    else snprintf(out, cap, "a number of at least %g", o->min);
    break;
  case CLI_DURATION:
    cli_fmt_seconds((int64_t)o->min, lo, sizeof lo);
    cli_fmt_seconds((int64_t)o->max, hi, sizeof hi);
    if (o->max > 0)
      snprintf(out, cap, "a duration with a unit, from %s to %s (e.g. 90s, 30m, 2h, 7d)", lo, hi);
    else
      snprintf(out, cap, "a duration with a unit (e.g. 90s, 30m, 2h, 7d)");
    break;
  case CLI_CHOICE: {
    size_t n = (size_t)snprintf(out, cap, "one of ");
    for (const char *p = o->choices; *p && n + 3 < cap; p++) {
      if (*p == '|') n += (size_t)snprintf(out + n, cap - n, ", ");
      else out[n++] = *p, out[n] = 0;
    }
    break;
  }
  }
}

static bool in_bounds(const cli_opt *o, double v) { return v >= o->min && (o->max <= 0 || v <= o->max); }

static bool is_choice(const char *choices, const char *s) {
  size_t n = strlen(s);
  for (const char *p = choices; *p;) {
    size_t len = strcspn(p, "|");
    if (len == n && !strncmp(p, s, n)) return true;
    p += len + (p[len] == '|');
  }
  return false;
}

/* Parses text as o's value into v; false if it is not one. */
static bool parse_value(const cli_opt *o, const char *text, cli_value *v) {
  char *end;
  v->text = text;
  switch (o->type) {
  case CLI_FLAG:
    return true;
  case CLI_STRING:
    return text[0] != 0 || (o->flags & CLI_EMPTY_OK);
  case CLI_UINT: {
    unsigned long long u;
    if (!cli_parse_u64(text, &u) || !in_bounds(o, (double)u)) return false;
    v->u = u;
    return true;
  }
  case CLI_SIZE: {
    bri_error err;
    return bri_size_parse(text, o->name, &v->u, &err) == 0 && in_bounds(o, (double)v->u);
  }
  case CLI_NUMBER:
    errno = 0;
    v->d = strtod(text, &end);
    return !errno && end != text && !*end && isfinite(v->d) && in_bounds(o, v->d);
  case CLI_DURATION: {
    bri_error err;
    return bri_duration_parse(text, o->name, &v->secs, &err) == 0 && in_bounds(o, (double)v->secs);
  }
  case CLI_CHOICE:
    return is_choice(o->choices, text);
  }
  return false;
}

/* The message for a bad value (one wording for every option). */
static int bad_value(const cli_args *a, const cli_opt *o, const char *text) {
  char kind[160];
  cli_value_kind(o, kind, sizeof kind);
  if (!text) return cli_usage(a, "--%s needs %s", o->name, kind);
  return cli_usage(a, "--%s needs %s, got \"%s\"", o->name, kind, text);
}

static int apply_defaults(const cli_opt *opts, cli_value *vals) {
  for (size_t i = 0; opts && opts[i].name; i++) {
    if (!opts[i].def) continue;
    if (!parse_value(&opts[i], opts[i].def, &vals[i])) {
      fprintf(stderr, "brictl: internal error: the default \"%s\" of --%s is not valid\n", opts[i].def,
              opts[i].name);
      return CLI_ERROR;
    }
    vals[i].set = true;
  }
  return 0;
}

/* ------------------------------------------------------------ options */

/* Takes the option at argv[*i] (its value too). Returns 1 taken, 0 not an
 * option of these lists (nothing printed), -1 a usage error (printed). */
static int take_option(cli_args *a, bool before_cmd, int argc, char **argv, int *i) {
  const char *arg = argv[*i], *name = arg + 1, *inline_val = NULL;
  size_t len;
  if (arg[1] == '-') {
    name = arg + 2;
    len = strcspn(name, "=");
    if (name[len] == '=') inline_val = name + len + 1;
  } else {
    len = strlen(name);
    if (len != 1) return 0; /* no bundles of short options */
  }
  const cli_opt *o = NULL;
  cli_value *v = NULL;
  bool is_short = arg[1] != '-';
  long k = a->cmd ? find_opt(a->cmd->opts, name, len, is_short) : -1;
  if (k >= 0) {
    o = &a->cmd->opts[k], v = &a->v[k];
  } else if ((k = find_opt(CLI_GLOBAL_OPTS, name, len, is_short)) >= 0 &&
             (before_cmd || !(CLI_GLOBAL_OPTS[k].flags & CLI_BEFORE_CMD))) {
    o = &CLI_GLOBAL_OPTS[k], v = &a->g[k];
  }
  if (!o) return 0;
  if (o->flags & CLI_RETIRED) return cli_usage(a, "%s", o->help), -1;
  if (v->given) return cli_usage(a, "--%s given twice", o->name), -1;
  const char *text = inline_val;
  if (o->type == CLI_FLAG) {
    if (inline_val) return cli_usage(a, "--%s takes no value, got \"%s\"", o->name, inline_val), -1;
  } else if (!text) {
    if (*i + 1 >= argc) return bad_value(a, o, NULL), -1;
    text = argv[++*i];
  }
  cli_value nv = {0};
  if (!parse_value(o, text ? text : "", &nv)) return bad_value(a, o, text), -1;
  *v = nv;
  v->given = v->set = true;
  return 1;
}

/* An unknown option before the command: maybe it belongs after it. */
static int unknown_global(cli_args *a, int argc, char **argv, int i) {
  const char *arg = argv[i];
  size_t len = strcspn(arg + 2, "=");
  for (int j = i + 1; j < argc; j++) {
    const cli_cmd *c = argv[j][0] != '-' ? cli_find_cmd(argv[j]) : NULL;
    if (c && arg[1] == '-' && find_opt(c->opts, arg + 2, len, false) >= 0)
      return cli_usage(a, "%s is an option of %s: put it after the command (brictl %s ... %s)", arg, c->name,
                       c->name, arg);
    if (c) break;
  }
  char hint[80];
  option_hint(NULL, arg, hint, sizeof hint);
  return cli_usage(a, "unknown option %s%s", arg, hint);
}

int cli_unknown_command(const cli_args *a, const char *name) {
  const char *names[64];
  size_t n = 0;
  for (; CLI_COMMANDS[n] && n < 64; n++) names[n] = CLI_COMMANDS[n]->name;
  const char *m = cli_closest(name, names, n);
  if (m) return cli_usage(a, "unknown command \"%s\" (did you mean \"%s\"?)", name, m);
  return cli_usage(a, "unknown command \"%s\"", name);
}

/* ------------------------------------------------------------ positionals */

/* The positional names of args ("SRC DST", "[TABLE]"): how many are
 * required, how many allowed, and the name of the k-th. */
static void pos_counts(const char *spec, size_t *required, size_t *allowed) {
  *required = *allowed = 0;
  for (const char *p = spec; p && *p;) {
    p += strspn(p, " ");
    if (!*p) break;
    if (*p != '[') ++*required;
    ++*allowed;
    p += strcspn(p, " ");
  }
}

static void pos_missing(const char *spec, size_t have, char *out, size_t cap) {
  size_t k = 0, n = 0;
  out[0] = 0;
  for (const char *p = spec; *p;) {
    p += strspn(p, " ");
    size_t len = strcspn(p, " ");
    if (len && *p != '[' && k++ >= have)
      n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%s%.*s", n ? " and " : "", (int)len, p);
    p += len;
  }
}

/* ------------------------------------------------------------ parse */

static int finish(cli_args *a) {
  const cli_cmd *c = a->cmd;
  size_t required, allowed, n = count_opts(c->opts);
  pos_counts(c->args, &required, &allowed);
  if (a->n_pos < required) {
    char miss[64];
    pos_missing(c->args, a->n_pos, miss, sizeof miss);
    return cli_usage(a, "%s %s required", miss, strstr(miss, " and ") ? "are" : "is");
  }
  for (size_t i = 0; i < n; i++)
    if (!a->v[i].given && (c->opts[i].flags & CLI_REQUIRED)) return cli_usage(a, "--%s is required", c->opts[i].name);
  for (size_t i = 0; i < n; i++) {
    const cli_opt *o = &c->opts[i];
    if (a->v[i].given && o->excludes && cli_given(a, o->excludes))
      return cli_usage(a, "--%s and --%s exclude each other", o->name, o->excludes);
  }
  for (size_t i = 0; CLI_GLOBAL_OPTS[i].name; i++) {
    const char *g = CLI_GLOBAL_OPTS[i].name;
    if (!a->g[i].given || cli_global_applies(c, &CLI_GLOBAL_OPTS[i])) continue;
    if (!strcmp(g, "json")) return cli_usage(a, "%s has no JSON output (--json)", c->name);
    return cli_usage(a, "%s works without brid; --%s does not apply", c->name, g);
  }
  if (cli_wants_daemon(a) && (c->flags & CLI_CMD_OFFLINE))
    for (size_t i = 0; i < n; i++)
      if (a->v[i].given && (c->opts[i].flags & CLI_OFFLINE_ONLY))
        return cli_usage(a, "--%s works only when brictl %s runs without brid (drop --socket, --wait, --daemon)",
                         c->opts[i].name, c->name);
  return 0;
}

int cli_parse(int argc, char **argv, cli_args *a) {
  memset(a, 0, sizeof *a);
  int i = 1, r;
  if ((r = apply_defaults(CLI_GLOBAL_OPTS, a->g))) return r;
  for (; i < argc && argv[i][0] == '-' && argv[i][1] && strcmp(argv[i], "--"); i++) {
    r = take_option(a, true, argc, argv, &i);
    if (r == 0) return unknown_global(a, argc, argv, i);
    if (r < 0) return CLI_USAGE;
  }
  if (i < argc && !strcmp(argv[i], "--")) i++;
  if (cli_given(a, "version")) {
    printf("brictl %s\n", BRI_VERSION);
    return CLI_OK;
  }
  if (i >= argc) {
    if (cli_given(a, "help")) return cli_help_top(stdout), CLI_OK;
    return cli_usage(NULL, "a command is required");
  }
  const cli_cmd *c = cli_find_cmd(argv[i]);
  if (!c) return cli_unknown_command(NULL, argv[i]);
  a->cmd = c;
  assert(count_opts(c->opts) <= CLI_MAX_OPTS);
  if ((r = apply_defaults(c->opts, a->v))) return r;
  bool options = true;
  size_t required, allowed;
  pos_counts(c->args, &required, &allowed);
  for (i++; i < argc; i++) {
    const char *arg = argv[i];
    if (options && !strcmp(arg, "--")) {
      options = false;
      continue;
    }
    if (options && arg[0] == '-' && arg[1]) {
      r = take_option(a, false, argc, argv, &i);
      if (r == 1) continue;
      if (r < 0) return CLI_USAGE;
      char hint[80];
      option_hint(c, arg, hint, sizeof hint);
      return cli_usage(a, "unknown option %s%s", arg, hint);
    }
    if (a->n_pos >= allowed || a->n_pos >= CLI_MAX_POS) return cli_usage(a, "unexpected argument \"%s\"", arg);
    a->pos[a->n_pos++] = arg;
  }
  if (cli_given(a, "help")) {
    cli_help_page(stdout, c);
    a->cmd = NULL; /* nothing left to run */
    return CLI_OK;
  }
  return finish(a);
}
