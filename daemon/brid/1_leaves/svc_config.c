/* svc_config.c: parsing and validating brid's configuration (see
 * svc_config.h).
 *
 * libbri's INI reader does the syntax (util/ini.h, BRI_INI_CONF: the one
 * brid.conf always had), entry by entry; this file owns the key table and
 * the values. A section is a [table PATH] or [root URI] by its name; the
 * line of its header tells one section from another of the same name
 * later in the file. Secrets of S3
 * roots are read from the files the configuration names, at load (so a
 * reload reads them again), and never shown. */
#include "svc_config.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <grp.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <pwd.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "bri/table.h"
#include "bri/util.h"
#include "rpc/rpc_proto.h"
#include "svc_log.h"

/* ------------------------------------------------------------------ keys */

typedef enum { S_DAEMON, S_POLICY, S_ROOT } kscope;
typedef enum {
  T_ROOT,     /* repeatable path, appended to roots */
  T_PATH,     /* char * */
  T_GROUP,    /* char *, a group name or number */
  T_INT,      /* int within [min, max] */
  T_U64,      /* uint64_t within [min, max] */
  T_SIZE,     /* uint64_t with an optional K/M/G/T suffix (powers of 1024) */
  T_DUR,      /* int64_t seconds (util/duration.h syntax) */
  T_BOOL,     /* bool: yes/no, true/false, on/off, 1/0 */
  T_DOUBLE,   /* double within [min, max] */
  T_STRATEGY, /* bri_strategy */
  T_MODE,     /* unsigned, octal permission bits */
  T_LEVEL,    /* int, a log level name */
  T_STR,      /* char *, any text but empty */
  T_LISTEN,   /* metrics_listen: ADDR:PORT or off (set_listen) */
} ktype;

typedef struct key {
  const char *name;
  kscope scope;
  ktype type;
  size_t off;
  double min, max;
} key;

#define D(n, t, f, lo, hi) {n, S_DAEMON, t, offsetof(svc_config, f), lo, hi}
#define P(n, t, f, lo, hi) {n, S_POLICY, t, offsetof(svc_policy, f), lo, hi}
#define R(n, t, f, lo, hi) {n, S_ROOT, t, offsetof(svc_root, f), lo, hi}

static const key KEYS[] = {
    D("root", T_ROOT, roots, 0, 0),
    D("socket", T_PATH, socket_path, 0, 0),
    D("socket_mode", T_MODE, socket_mode, 0, 0777),
    D("socket_group", T_GROUP, socket_group, 0, 0),
    D("readonly_socket", T_PATH, readonly_socket, 0, 0),
    D("readonly_group", T_GROUP, readonly_group, 0, 0),
    D("state", T_PATH, state_path, 0, 0),
    D("store", T_STR, store_uri, 0, 0),
    D("store_password_file", T_PATH, store_password_file, 0, 0),
    D("store_password_credential", T_STR, store_password_credential, 0, 0),
    D("workers", T_INT, workers, 1, 64),
    D("debounce", T_DUR, debounce_sec, 0, 86400),
    D("sweep_interval", T_DUR, sweep_sec, 0, 7 * 86400),
    D("discovery_depth", T_INT, discovery_depth, 0, 16),
    D("drain_timeout", T_DUR, drain_sec, 0, 86400),
    D("max_request_bytes", T_SIZE, max_request_bytes, 1024, 64 << 20),
    D("max_connections", T_INT, max_connections, 1, 4096),
    D("request_timeout", T_DUR, request_timeout_sec, 1, 3600),
    D("idle_timeout", T_DUR, idle_timeout_sec, 1, 86400),
    D("metrics_listen", T_LISTEN, metrics_listen, 0, 0),
    D("log_level", T_LEVEL, log_level, 0, 0),
    D("max_attempts", T_INT, max_attempts, 1, 1000),
    D("retry_base", T_DUR, retry_base_sec, 1, 86400),
    D("retry_max", T_DUR, retry_max_sec, 1, 30 * 86400),
    D("history_max_age", T_DUR, history_max_age_sec, 0, 3650LL * 86400),
    D("history_max_rows", T_U64, history_max_rows, 0, 1e9),
    D("instance_name", T_STR, instance_name, 0, 0),
    D("lease_ttl", T_DUR, lease_ttl_sec, 3, 3600),
    P("strategy", T_STRATEGY, strategy, 0, 0),
    P("auto_compact", T_BOOL, auto_compact, 0, 0),
    P("paused", T_BOOL, paused, 0, 0),
    P("debounce", T_DUR, debounce_sec, 0, 86400),
    P("max_delay", T_DUR, max_delay_sec, 0, 7 * 86400),
    P("max_new_fragments", T_U64, max_new_fragments, 0, 1e6),
    P("target_rows_per_fragment", T_U64, compact.target_rows_per_fragment, 1, 1e15),
    P("target_fragment_bytes", T_SIZE, compact.target_fragment_bytes, 1, 1e18),
    P("materialize_deletions", T_BOOL, compact.materialize_deletions, 0, 0),
    P("materialize_deletions_threshold", T_DOUBLE, compact.materialize_deletions_threshold, 0, 1),
    P("repack_threshold", T_DOUBLE, compact.repack_threshold, 0, 1),
    P("max_source_fragments", T_U64, compact.max_source_fragments, 0, 1e15),
    P("max_source_rows", T_U64, compact.max_source_rows, 0, 1e18),
    P("max_source_bytes", T_SIZE, compact.max_source_bytes, 0, 1e18),
    P("batch_rows", T_U64, batch_rows, 0, 1 << 24),
    P("min_reader", T_INT, min_reader, 0, 1000),
    P("cleanup_interval", T_DUR, cleanup_interval_sec, 0, 3650LL * 86400),
    P("cleanup_older_than", T_DUR, cleanup.older_than_sec, 0, 3650LL * 86400),
    P("cleanup_retain_versions", T_U64, cleanup.retain_versions, 0, 1e12),
    P("cleanup_grace", T_DUR, cleanup.grace_sec, 0, 3650LL * 86400),
    P("cleanup_max_deletes_per_sec", T_DOUBLE, cleanup.max_deletes_per_sec, 0, 1e9),
    R("poll_interval", T_DUR, poll_interval_sec, 1, 86400),
    R("max_requests_per_second", T_DOUBLE, max_requests_per_second, 0, 1e6),
    R("max_requests_in_flight", T_INT, max_requests_in_flight, 1, 1024),
};
#define NKEYS (sizeof KEYS / sizeof KEYS[0])

const char *const *svc_config_key_names(void) {
  static const char *names[NKEYS + 1];
  static char buf[NKEYS][64];
  if (!names[0])
    for (size_t i = 0; i < NKEYS; i++) {
      snprintf(buf[i], sizeof buf[i], "%s.%s",
               KEYS[i].scope == S_DAEMON ? "daemon" : KEYS[i].scope == S_POLICY ? "policy" : "root", KEYS[i].name);
      names[i] = buf[i];
    }
  return names;
}

/* ------------------------------------------------------------- defaults */

void svc_policy_default(svc_policy *p) {
  memset(p, 0, sizeof *p);
  p->strategy = BRI_STRATEGY_AUTO; /* never leaves a table stock Lance refuses (execute.h) */
  p->auto_compact = true;
  p->debounce_sec = -1;
  p->max_delay_sec = SVC_DEFAULT_MAX_DELAY;
  p->max_new_fragments = SVC_DEFAULT_MAX_NEW_FRAGMENTS;
  bri_compact_options_default(&p->compact);
  p->batch_rows = 0;
  p->cleanup_interval_sec = 86400;
  bri_cleanup_policy_default(&p->cleanup);
}

static void root_default(svc_root *r) {
  memset(r, 0, sizeof *r);
  r->poll_interval_sec = 30;
  r->max_requests_in_flight = 16;
}

static void root_clear(svc_root *r) {
  free(r->uri);
  for (size_t i = 0; i < r->n_settings; i++) {
    svc_root_setting *v = &r->settings[i];
    if (v->value) explicit_bzero(v->value, strlen(v->value)); /* a secret's, maybe */
    free(v->name), free(v->value), free(v->file), free(v->credential);
  }
  free(r->settings);
}

unsigned svc_location_caps(const char *location) {
  unsigned caps;
  bri_error ignored;
  return location && bri_store_location_caps(location, &caps, &ignored) == 0 ? caps : 0;
}

char *svc_location_name(const char *location, bri_error *err) {
  char *name = NULL;
  if (!(svc_location_caps(location) & BRI_STORE_CAP_LOCAL)) bri_store_location(location, &name, err);
  else if (!(name = strdup(location))) bri_error_set(err, BRI_ENOMEM, "out of memory");
  return name;
}

bool svc_root_contains(const char *root, const char *path) {
  size_t n = root ? strlen(root) : 0;
  return n && !strncmp(path, root, n) && (path[n] == '/' || path[n] == 0 || !strcmp(root, "/"));
}

const svc_root *svc_config_root(const svc_config *c, const char *uri) {
  static const svc_root defaults = {.poll_interval_sec = 30, .max_requests_in_flight = 16};
  for (size_t i = 0; i < c->n_root_settings; i++)
    if (!strcmp(c->root_settings[i].uri, uri)) return &c->root_settings[i];
  return &defaults;
}

int svc_default_workers(void) {
  cpu_set_t set;
  int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : (int)sysconf(_SC_NPROCESSORS_ONLN);
  int n = SVC_WORKERS_PER_CPU * (cpus > 0 ? cpus : 1);
  return n < SVC_WORKERS_MIN ? SVC_WORKERS_MIN : n > SVC_WORKERS_MAX ? SVC_WORKERS_MAX : n;
}

void svc_config_init(svc_config *c) {
  memset(c, 0, sizeof *c);
  c->socket_mode = 0660;
  c->workers = svc_default_workers();
  c->debounce_sec = 30;
  c->sweep_sec = 600;
  c->drain_sec = 60;
  c->discovery_depth = 3;
  c->max_request_bytes = 64 << 10;
  c->max_connections = 32;
  c->request_timeout_sec = 10;
  c->idle_timeout_sec = 60;
  c->log_level = LOG_INFO;
  c->max_attempts = 5;
  c->retry_base_sec = 30;
  c->retry_max_sec = 3600;
  c->history_max_age_sec = 30 * 86400;
  c->history_max_rows = 10000;
  c->lease_ttl_sec = 30;
  svc_policy_default(&c->defaults);
}

void svc_config_dispose(svc_config *c) {
  free(c->file);
  for (size_t i = 0; i < c->n_roots; i++) free(c->roots[i]);
  free(c->roots);
  free(c->socket_path), free(c->socket_group), free(c->state_path);
  free(c->store_uri), free(c->store_password_file), free(c->store_password_credential);
  if (c->store_password) explicit_bzero(c->store_password, strlen(c->store_password));
  free(c->store_password);
  free(c->readonly_socket), free(c->readonly_group);
  free(c->metrics_listen);
  free(c->instance_name);
  for (size_t i = 0; i < c->n_sections; i++) free(c->sections[i].pattern), free(c->sections[i].canonical);
  free(c->sections);
  for (size_t i = 0; i < c->n_root_settings; i++) root_clear(&c->root_settings[i]);
  free(c->root_settings);
  memset(c, 0, sizeof *c);
}

/* --------------------------------------------------------------- values */

/* Length of the longest valid UTF-8 prefix of s[0..n) (shortest forms, no
 * surrogates, at most U+10FFFF: what jansson accepts in a JSON string, and
 * every setting is shown as one). */
static size_t utf8_valid_prefix(const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  size_t i = 0;
  while (i < n) {
    unsigned c = u[i];
    size_t len = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (!len || len > n - i) return i;
    uint32_t cp = len == 1 ? c : c & (0x7Fu >> len);
    for (size_t k = 1; k < len; k++) {
      if ((u[i + k] & 0xC0) != 0x80) return i;
      cp = cp << 6 | (u[i + k] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return i;
    i += len;
  }
  return n;
}

static bool utf8_ok(const char *s) { return !s || utf8_valid_prefix(s, strlen(s)) == strlen(s); }

static bool parse_bool(const char *s, bool *out) {
  static const char *yes[] = {"yes", "true", "on", "1"}, *no[] = {"no", "false", "off", "0"};
  for (int i = 0; i < 4; i++) {
    if (!strcasecmp(s, yes[i])) return *out = true, true;
    if (!strcasecmp(s, no[i])) return *out = false, true;
  }
  return false;
}

/* The decimal number s starts with (no sign, no blanks); *end after it. */
static bool leading_u64(const char *s, unsigned long long *v, char **end) {
  if (!isdigit((unsigned char)*s)) return false;
  errno = 0;
  *v = strtoull(s, end, 10);
  return errno == 0;
}

static bool parse_u64(const char *s, uint64_t *out) {
  unsigned long long v;
  char *end;
  if (!leading_u64(s, &v, &end) || *end) return false;
  *out = v;
  return true;
}

/* metrics_listen (the file's key and --metrics-listen): "off" (or no,
 * none) turns the HTTP listener off; otherwise IPV4:PORT or [IPV6]:PORT,
 * numeric (no name lookup: start-up must not wait on DNS, and a name could
 * resolve to more than loopback), port 0 to 65535 (0: the kernel picks a
 * free one, which brid logs; for tests). Sets c->metrics_listen
 * (normalized) and c->metrics_addr; on error writes what is wrong to msg. */
static bool set_listen(svc_config *c, const char *v, char *msg, size_t cap) {
  bool off;
  if (parse_bool(v, &off) && !off) {
    free(c->metrics_listen);
    c->metrics_listen = NULL;
    c->metrics_addrlen = 0;
    return true;
  }
  if (!strcasecmp(v, "none")) return set_listen(c, "off", msg, cap);
  const char *colon = strrchr(v, ':');
  char host[INET6_ADDRSTRLEN + 2];
  size_t hl = colon ? (size_t)(colon - v) : 0;
  uint64_t port;
  bool v6 = hl >= 2 && v[0] == '[' && v[hl - 1] == ']';
  if (!colon || !hl || hl >= sizeof host || !parse_u64(colon + 1, &port) || port > 65535) {
    snprintf(msg, cap, "\"%s\" is not ADDRESS:PORT (e.g. 127.0.0.1:9851 or [::1]:9851, port 0 to 65535) or off", v);
    return false;
  }
  memcpy(host, v + v6, hl - 2 * v6);
  host[hl - 2 * v6] = 0;
  struct sockaddr_storage ss;
  memset(&ss, 0, sizeof ss);
  socklen_t len;
  if (v6) {
    struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
    a->sin6_family = AF_INET6;
    a->sin6_port = htons((uint16_t)port);
    len = sizeof *a;
    if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1) {
      snprintf(msg, cap, "\"%s\" is not a numeric IPv6 address (e.g. [::1]:9851)", v);
      return false;
    }
  } else {
    struct sockaddr_in *a = (struct sockaddr_in *)&ss;
    a->sin_family = AF_INET;
    a->sin_port = htons((uint16_t)port);
    len = sizeof *a;
    if (inet_pton(AF_INET, host, &a->sin_addr) != 1) {
      snprintf(msg, cap, "\"%s\" is not a numeric IPv4 address and port (e.g. 127.0.0.1:9851; IPv6 in brackets: "
               "[::1]:9851); names are not looked up", v);
      return false;
    }
  }
  char norm[sizeof host + 16];
  snprintf(norm, sizeof norm, "%s%s%s:%u", v6 ? "[" : "", host, v6 ? "]" : "", (unsigned)port);
  char *d = strdup(norm);
  if (!d) {
    snprintf(msg, cap, "out of memory");
    return false;
  }
  free(c->metrics_listen);
  c->metrics_listen = d;
  c->metrics_addr = ss;
  c->metrics_addrlen = len;
  return true;
}

typedef struct parse_ctx {
  svc_config *c;
  const char *file;
  char msg[900];        /* first error */
  bool has_msg;
  int line; /* of the entry that failed; 0 while none did */
} parse_ctx;

static int fail(parse_ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(parse_ctx *x, const char *fmt, ...) {
  if (x->has_msg) return 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(x->msg, sizeof x->msg, fmt, ap);
  va_end(ap);
  x->has_msg = true;
  return 0;
}

/* Stores value into the field of k at base; 1 on success, 0 with the
 * error recorded (fail). */
static int set_value(parse_ctx *x, const key *k, void *base, const char *sect, const char *v) {
  char *f = (char *)base + k->off;
  bri_error err;
  switch (k->type) {
  case T_ROOT: {
    svc_config *c = x->c;
    if ((svc_location_caps(v) & BRI_STORE_CAP_LOCAL) && v[0] != '/')
      return fail(x, "[%s] root: \"%s\" is not an absolute path or a storage URI (s3://, az://)", sect, v);
    char *norm = svc_location_name(v, &err);
    if (!norm && err.code != BRI_ENOMEM) return fail(x, "[%s] root: %s", sect, err.msg);
    char **r = realloc(c->roots, (c->n_roots + 1) * sizeof *r);
    if (r) c->roots = r;
    if (!r || !norm) {
      free(norm);
      return fail(x, "out of memory");
    }
    c->roots[c->n_roots++] = norm;
    return 1;
  }
  case T_STR: {
    if (!*v) return fail(x, "[%s] %s: empty value", sect, k->name);
    char *d = strdup(v);
    if (!d) return fail(x, "out of memory");
    free(*(char **)f);
    *(char **)f = d;
    return 1;
  }
  case T_LISTEN: {
    char msg[256];
    if (!set_listen(x->c, v, msg, sizeof msg)) return fail(x, "[%s] %s: %s", sect, k->name, msg);
    return 1;
  }
  case T_PATH:
  case T_GROUP: {
    if (!*v) return fail(x, "[%s] %s: empty value", sect, k->name);
    if (k->type == T_PATH && v[0] != '/')
      return fail(x, "[%s] %s: \"%s\" is not an absolute path", sect, k->name, v);
    char *d = strdup(v);
    if (!d) return fail(x, "out of memory");
    free(*(char **)f);
    *(char **)f = d;
    return 1;
  }
  case T_INT:
  case T_U64:
  case T_SIZE: {
    uint64_t u;
    bool ok = k->type == T_SIZE ? bri_size_parse(v, k->name, &u, &err) == 0 : parse_u64(v, &u);
    if (!ok)
      return fail(x, "[%s] %s: \"%s\" is not %s", sect, k->name, v,
                  k->type == T_SIZE ? "a size (bytes, or a number with K, M, G or T)" : "a non-negative integer");
    if ((double)u < k->min || (double)u > k->max)
      return fail(x, "[%s] %s: %s is outside [%.0f, %.0f]", sect, k->name, v, k->min, k->max);
    if (k->type == T_INT) *(int *)f = (int)u;
    else *(uint64_t *)f = u;
    return 1;
  }
  case T_DUR: {
    int64_t s;
    if (bri_duration_parse(v, k->name, &s, &err))
      return fail(x, "[%s] %s: \"%s\" is not a duration (e.g. 90s, 10m, 2h, 7d)", sect, k->name, v);
    if ((double)s < k->min || (double)s > k->max)
      return fail(x, "[%s] %s: %s is outside [%.0fs, %.0fs]", sect, k->name, v, k->min, k->max);
    *(int64_t *)f = s;
    return 1;
  }
  case T_BOOL:
    if (!parse_bool(v, (bool *)f)) return fail(x, "[%s] %s: \"%s\" is not yes or no", sect, k->name, v);
    return 1;
  case T_DOUBLE: {
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (errno || end == v || *end || d != d)
      return fail(x, "[%s] %s: \"%s\" is not a number", sect, k->name, v);
    if (d < k->min || d > k->max)
      return fail(x, "[%s] %s: %s is outside [%g, %g]", sect, k->name, v, k->min, k->max);
    *(double *)f = d;
    return 1;
  }
  case T_STRATEGY:
    if (bri_strategy_parse(v, (bri_strategy *)f, &err))
      return fail(x, "[%s] %s: \"%s\" is not auto, bri, link, copy or managed", sect, k->name, v);
    return 1;
  case T_MODE: {
    char *end;
    errno = 0;
    unsigned long m = strtoul(v, &end, 8);
    if (errno || end == v || *end || m > 0777)
      return fail(x, "[%s] %s: \"%s\" is not an octal mode such as 0660", sect, k->name, v);
    *(unsigned *)f = (unsigned)m;
    return 1;
  }
  case T_LEVEL: {
    int l = svc_log_parse_level(v);
    if (l < 0)
      return fail(x, "[%s] %s: \"%s\" is not error, warning, notice, info or debug", sect, k->name, v);
    *(int *)f = l;
    return 1;
  }
  }
  return fail(x, "internal error: key %s", k->name);
}

static const key *find_key(const char *name, kscope scope) {
  for (size_t i = 0; i < NKEYS; i++)
    if (KEYS[i].scope == scope && !strcmp(KEYS[i].name, name)) return &KEYS[i];
  return NULL;
}

/* The argument of a header ("table PATH", root "URI"): after
 * the word, blanks and quotes dropped (malloc'd). */
static char *header_arg(const char *header) {
  const char *a = header + strcspn(header, " \t\"#");
  while (*a == ' ' || *a == '\t') a++;
  size_t n = strlen(a);
  while (n && (a[n - 1] == ' ' || a[n - 1] == '\t')) n--;
  if (n >= 2 && a[0] == '"' && a[n - 1] == '"') a++, n -= 2;
  return strndup(a, n);
}

/* The setting called name of r (a new one when it has none). */
static svc_root_setting *root_setting(svc_root *r, const char *name) {
  for (size_t i = 0; i < r->n_settings; i++)
    if (!strcmp(r->settings[i].name, name)) return &r->settings[i];
  svc_root_setting *a = realloc(r->settings, (r->n_settings + 1) * sizeof *a);
  if (!a) return NULL;
  r->settings = a;
  svc_root_setting *v = &a[r->n_settings];
  memset(v, 0, sizeof *v);
  if (!(v->name = strdup(name))) return NULL;
  r->n_settings++;
  return v;
}

/* Stores a text value into *slot (replacing what a key said earlier). */
static int set_text(parse_ctx *x, const char *shown, const char *name, char **slot, const char *value) {
  if (!*value) return fail(x, "[%s] %s: empty value", shown, name);
  char *d = strdup(value);
  if (!d) return fail(x, "out of memory");
  free(*slot);
  *slot = d;
  return 1;
}

/* A key of a [root URI] section: poll_interval and the request limits are
 * brid's; any other is a setting of the root's backend (libbri says which
 * it takes), a secret named by NAME_file or NAME_credential. */
static int on_root_key(parse_ctx *x, size_t header, const char *shown, const char *name, const char *value) {
  svc_config *c = x->c;
  svc_root *r = NULL;
  if (c->n_root_settings && c->root_settings[c->n_root_settings - 1].header == header) {
    r = &c->root_settings[c->n_root_settings - 1];
  } else {
    char *uri = header_arg(shown);
    if (!uri) return fail(x, "out of memory");
    bri_error err;
    unsigned caps = svc_location_caps(uri);
    if (caps & BRI_STORE_CAP_LOCAL) {
      free(uri);
      return fail(x, "[%s]: settings of a root are for object-store roots (s3://, az://; local roots need none)",
                  shown);
    }
    char *norm = svc_location_name(uri, &err);
    free(uri);
    if (!norm) return fail(x, "[%s]: %s", shown, err.msg);
    for (size_t i = 0; i < c->n_root_settings; i++)
      if (!strcmp(c->root_settings[i].uri, norm)) {
        free(norm);
        return fail(x, "[%s]: a second section for this root", shown);
      }
    svc_root *a = realloc(c->root_settings, (c->n_root_settings + 1) * sizeof *a);
    if (!a) {
      free(norm);
      return fail(x, "out of memory");
    }
    c->root_settings = a;
    r = &a[c->n_root_settings++];
    root_default(r);
    r->uri = norm;
    r->header = header;
  }
  const key *k = find_key(name, S_ROOT);
  if (k) return set_value(x, k, r, shown, value);
  int kind = bri_store_setting_kind(r->uri, name);
  if (kind == BRI_SETTING_SECRET)
    return fail(x, "[%s] %s: secrets are never written in brid.conf; put it in a file only brid's user can read "
                "and name that file with %s_file", shown, name, name);
  svc_root_setting *v;
  if (kind == BRI_SETTING_PLAIN)
    return (v = root_setting(r, name)) ? set_text(x, shown, name, &v->value, value) : fail(x, "out of memory");
  /* NAME_file, NAME_credential of a secret NAME */
  size_t n = strlen(name);
  bool file = n > 5 && !strcmp(name + n - 5, "_file"), cred = n > 11 && !strcmp(name + n - 11, "_credential");
  char base[128];
  snprintf(base, sizeof base, "%.*s", (int)(n - (file ? 5 : cred ? 11 : 0)), name);
  if ((file || cred) && bri_store_setting_kind(r->uri, base) == BRI_SETTING_SECRET) {
    if (!(v = root_setting(r, base))) return fail(x, "out of memory");
    if (file && value[0] != '/') return fail(x, "[%s] %s: \"%s\" is not an absolute path", shown, name, value);
    return set_text(x, shown, name, file ? &v->file : &v->credential, value);
  }
  if (find_key(name, S_DAEMON) || find_key(name, S_POLICY))
    return fail(x, "[%s] %s: not a key of a root (those are in [daemon], [defaults] or [table PATH])", shown, name);
  return fail(x, "[%s] %s: unknown key", shown, name);
}

/* Whether section is a "[table PATH]" header ("[table#...]" too, so that
 * it is refused as a relative path) or a "[root URI]" one. */
static bool is_table_header(const char *section) {
  return strlen(section) > 5 && !strncmp(section, "table", 5) && strchr(" \t\"#", section[5]);
}

static bool is_root_header(const char *section) {
  return strlen(section) > 4 && !strncmp(section, "root", 4) && strchr(" \t\"", section[4]);
}

/* One key of the file; 1 when taken, 0 with the error recorded (fail). */
static int on_key(parse_ctx *x, const bri_ini_entry *e) {
  const char *section = e->section, *name = e->key, *value = e->value;
  size_t header = (size_t)e->section_line;
  if (!*section || !strcmp(section, "daemon")) {
    const key *k = find_key(name, S_DAEMON);
    if (!k) {
      if (find_key(name, S_POLICY))
        return fail(x, "[daemon] %s: a table policy key; put it in [defaults] or a [table PATH] section", name);
      if (find_key(name, S_ROOT))
        return fail(x, "[daemon] %s: a key of a root; put it in a [root URI] section", name);
      return fail(x, "[daemon] %s: unknown key", name);
    }
    return set_value(x, k, x->c, "daemon", value);
  }
  svc_policy *p = NULL;
  svc_table_section *ts = NULL;
  const char *shown = section;
  if (!strcmp(section, "defaults")) {
    p = &x->c->defaults;
  } else if (is_root_header(section)) {
    return on_root_key(x, header, shown, name, value);
  } else if (is_table_header(section)) {
    /* consecutive keys of one header go to one section; the same header
     * again later starts a new one (file order decides) */
    svc_config *c = x->c;
    if (c->n_sections && c->sections[c->n_sections - 1].header == header) {
      ts = &c->sections[c->n_sections - 1];
    } else {
      svc_table_section *s = realloc(c->sections, (c->n_sections + 1) * sizeof *s);
      if (!s) return fail(x, "out of memory");
      c->sections = s;
      ts = &c->sections[c->n_sections++];
      memset(ts, 0, sizeof *ts);
      ts->header = header;
      svc_policy_default(&ts->p);
      /* "table PATH" or table "PATH" */
      if (!(ts->pattern = header_arg(section))) return fail(x, "out of memory");
      unsigned caps = svc_location_caps(ts->pattern);
      if (!caps || ((caps & BRI_STORE_CAP_LOCAL) && ts->pattern[0] != '/'))
        return fail(x, "[%s]: the table path must be absolute (or a storage URI: s3://, az://)", shown);
      ts->is_glob = strpbrk(ts->pattern, "*?[") != NULL;
      bri_error err;
      if (!ts->is_glob && bri_store_location(ts->pattern, &ts->canonical, &err))
        return fail(x, "[%s]: %s", shown, err.msg);
    }
    p = &ts->p;
  } else {
    return fail(x, "[%s]: unknown section (expected [daemon], [defaults], [table PATH] or [root URI])",
                section);
  }
  const key *k = find_key(name, S_POLICY);
  if (!k) {
    if (find_key(name, S_DAEMON))
      return fail(x, "[%s] %s: a daemon key; put it in [daemon]", shown, name);
    if (find_key(name, S_ROOT))
      return fail(x, "[%s] %s: a key of a root; put it in a [root URI] section", shown, name);
    return fail(x, "[%s] %s: unknown key", shown, name);
  }
  if (ts) ts->set |= (uint64_t)1 << (k - KEYS);
  return set_value(x, k, p, shown, value);
}

/* bri_ini_parse's bri_ini_entry_fn: on_key, the failing entry's line kept. */
static int on_entry(void *arg, const bri_ini_entry *e, bri_error *err) {
  (void)err;
  parse_ctx *x = arg;
  if (x->has_msg || !on_key(x, e)) {
    x->line = e->line;
    return BRI_EINVAL;
  }
  return 0;
}

/* Parses the len bytes of the file named path. */
static int parse_text(svc_config *c, const char *path, const char *text, size_t len, bri_error *err) {
  int rc = 0;
  if (memchr(text, 0, len)) return bri_error_set(err, BRI_EINVAL, "%s: not a text file (NUL byte)", path);
  size_t ok = utf8_valid_prefix(text, len);
  if (ok < len) {
    int line = 1;
    for (const char *q = text; (q = memchr(q, '\n', (size_t)(text + ok - q))) != NULL; q++) line++;
    return bri_error_set(err, BRI_EINVAL, "%s:%d: not UTF-8 text (byte 0x%02x at offset %zu)", path, line,
                         (unsigned char)text[ok], ok);
  }
  parse_ctx x = {.c = c, .file = path};
  int bad_line = 0;
  bri_error syntax;
  rc = bri_ini_parse(text, len, BRI_INI_CONF, path, on_entry, &x, &bad_line, &syntax);
  if (x.line || bad_line) {
    rc = bri_error_set(err, BRI_EINVAL, "%s:%d: %s", path, x.line ? x.line : bad_line,
                       x.has_msg ? x.msg : "syntax error (expected [section], key = value, or a comment)");
  } else if (rc) {
    rc = bri_error_set(err, BRI_ENOMEM, "%s: the INI parser ran out of memory", path);
  } else if (x.has_msg) {
    rc = bri_error_set(err, BRI_EINVAL, "%s: %s", path, x.msg);
  }
  return rc;
}

/* A group name or number into *gid; nothing when name is NULL. */
static int resolve_group(const char *setting, const char *name, gid_t *gid, bri_error *err) {
  if (!name) return 0;
  struct group g, *res = NULL;
  char buf[16384];
  uint64_t n;
  if (parse_u64(name, &n) && n < (uint64_t)INT32_MAX) *gid = (gid_t)n;
  else if (getgrnam_r(name, &g, buf, sizeof buf, &res) == 0 && res) *gid = res->gr_gid;
  else return bri_error_set(err, BRI_EINVAL, "%s: no group named \"%s\"", setting, name);
  return 0;
}

/* Reads a secret from the file a key of section where ("[root URI]",
 * "[daemon]") names: its text, trailing
 * blanks and newlines dropped. A file every user may read is refused (a
 * secret there is no secret). */
static int read_secret(const char *where, const char *setting, const char *path, char **out, bri_error *err) {
  struct stat st;
  if (stat(path, &st) != 0)
    return bri_error_set(err, BRI_EINVAL, "%s %s: %s: %s", where, setting, path, strerror(errno));
  if (st.st_mode & S_IROTH)
    return bri_error_set(err, BRI_EINVAL, "%s %s: %s is readable by every user (mode %04o); make it "
                         "readable by brid's user only (chmod 0600, or 0640 with brid's group)", where, setting, path,
                         (unsigned)(st.st_mode & 07777));
  uint8_t *text;
  size_t len;
  if (bri_read_file(path, 4096, &text, &len, err)) return bri_error_wrap(err, "%s %s", where, setting);
  while (len && isspace(text[len - 1])) text[--len] = 0;
  if (!len || memchr(text, '\n', len) || memchr(text, 0, len)) {
    explicit_bzero(text, len);
    free(text);
    return bri_error_set(err, BRI_EINVAL, "%s %s: %s must hold the secret alone, on one line", where, setting,
                         path);
  }
  *out = (char *)text;
  return 0;
}

/* Reads a secret a key of section where names as a systemd credential: the file NAME
 * of $CREDENTIALS_DIRECTORY, where systemd puts what the unit's
 * LoadCredential=NAME:PATH (or SetCredentialEncrypted=, ...) gives the
 * service, readable by brid's user alone. NAME is one path component. A
 * secret given both as a file and as a credential is refused. */
static int read_credential(const char *where, const char *setting, const char *name, const char *file_setting,
                           const char *file, char **out, bri_error *err) {
  if (file)
    return bri_error_set(err, BRI_EINVAL, "%s: %s or %s, not both", where, file_setting, setting);
  if (!*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
    return bri_error_set(err, BRI_EINVAL, "%s %s: \"%s\" is not a credential name (one path component)",
                         where, setting, name);
  const char *dir = getenv("CREDENTIALS_DIRECTORY");
  if (!dir || !*dir)
    return bri_error_set(err, BRI_EINVAL, "%s %s = %s: $CREDENTIALS_DIRECTORY is not set; systemd sets it "
                         "for a unit with LoadCredential=%s:FILE (docs/deploy.md)", where, setting, name, name);
  char *path;
  if (asprintf(&path, "%s/%s", dir, name) < 0) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  int rc = read_secret(where, setting, path, out, err);
  free(path);
  return rc;
}

/* The [root] sections: each names a configured root (unless --root
 * replaced the file's roots), gets its secrets read, and has its settings
 * checked by its backend (bri_store_configure_root, registering nothing). */
static int validate_roots(svc_config *c, bool roots_from_flags, bri_error *err) {
  for (size_t i = 0; i < c->n_root_settings; i++) {
    svc_root *r = &c->root_settings[i];
    bool configured = false;
    for (size_t j = 0; j < c->n_roots; j++) configured |= !strcmp(c->roots[j], r->uri);
    if (!configured && !roots_from_flags)
      return bri_error_set(err, BRI_EINVAL, "[root %s]: not a configured root (add root = %s to [daemon])", r->uri,
                           r->uri);
    int rc;
    char where[600];
    snprintf(where, sizeof where, "[root %s]", r->uri);
    for (size_t j = 0; j < r->n_settings; j++) {
      svc_root_setting *v = &r->settings[j];
      char file_key[160], cred_key[160];
      snprintf(file_key, sizeof file_key, "%s_file", v->name);
      snprintf(cred_key, sizeof cred_key, "%s_credential", v->name);
      if (v->file && (rc = read_secret(where, file_key, v->file, &v->value, err))) return rc;
      if (v->credential &&
          (rc = read_credential(where, cred_key, v->credential, file_key, v->file, &v->value, err)))
        return rc;
      if (!utf8_ok(v->file) || !utf8_ok(v->credential) || (!v->file && !v->credential && !utf8_ok(v->value)))
        return bri_error_set(err, BRI_EINVAL, "[root %s] %s: not UTF-8 text", r->uri, v->name);
    }
    if ((rc = svc_root_configure(r->uri, r, true, err)) != 0) return bri_error_wrap(err, "[root %s]", r->uri);
  }
  return 0;
}

/* The job store: state (a SQLite file) or store (PostgreSQL), not both;
 * state_path becomes the store's path either way. A PostgreSQL password is
 * read from its file or credential; bri_jobs_open refuses one inside the
 * URI. */
static int validate_store(svc_config *c, bri_error *err) {
  if (c->store_uri && c->state_path)
    return bri_error_set(err, BRI_EINVAL,
                         "state (--state, a SQLite file) and store (--store, a PostgreSQL URI) name two job "
                         "stores: give one");
  if (!c->store_uri && (c->store_password_file || c->store_password_credential))
    return bri_error_set(err, BRI_EINVAL,
                         "store_password_file and store_password_credential need store = URI (PostgreSQL)");
  if (c->store_uri && !utf8_ok(c->store_uri)) return bri_error_set(err, BRI_EINVAL, "store: not UTF-8 text");
  const char *given = c->store_uri ? c->store_uri : SVC_DEFAULT_STATE;
  if (!c->state_path && !(c->state_path = strdup(given))) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  int rc = 0;
  if (c->store_password_credential)
    rc = read_credential("[daemon]", "store_password_credential", c->store_password_credential,
                         "store_password_file", c->store_password_file, &c->store_password, err);
  else if (c->store_password_file)
    rc = read_secret("[daemon]", "store_password_file", c->store_password_file, &c->store_password, err);
  return rc;
}

/* strategy managed locks out every Lance older than 14: a policy that
 * declares such a reader (min_reader) and asks for it contradicts itself. */
static int check_readers(const svc_policy *p, const char *where, bri_error *err) {
  if (p->strategy == BRI_STRATEGY_MANAGED && p->min_reader && p->min_reader < BRI_MANAGED_MIN_READER)
    return bri_error_set(err, BRI_EINVAL, "%s: strategy managed locks out the Lance %d readers min_reader "
                         "= %d declares (Lance 12 and 13 refuse Managed blobs; declare 14, or choose another "
                         "strategy)", where, p->min_reader, p->min_reader);
  return 0;
}

static int validate(svc_config *c, bool roots_from_flags, bri_error *err) {
  if (c->n_roots == 0)
    return bri_error_set(err, BRI_EINVAL, "no table root configured: give --root DIR or root = DIR in [daemon]");
  int rc = validate_store(c, err);
  if (rc) return rc;
  if (!c->socket_path && !(c->socket_path = strdup("/run/brid/brid.sock")))
    return bri_error_set(err, BRI_ENOMEM, "out of memory");
  struct sockaddr_un sa;
  if (strlen(c->socket_path) >= sizeof sa.sun_path)
    return bri_error_set(err, BRI_EINVAL, "socket: \"%s\" is longer than a Unix socket path can be (%zu bytes)",
                         c->socket_path, sizeof sa.sun_path - 1);
  if (!c->readonly_socket) {
    char ro[sizeof sa.sun_path + 8];
    rpc_readonly_socket(c->socket_path, ro, sizeof ro);
    if (!(c->readonly_socket = strdup(ro))) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  if (strlen(c->readonly_socket) >= sizeof sa.sun_path)
    return bri_error_set(err, BRI_EINVAL, "readonly_socket: \"%s\" is longer than a Unix socket path can be (%zu bytes)",
                         c->readonly_socket, sizeof sa.sun_path - 1);
  if (!strcmp(c->readonly_socket, c->socket_path))
    return bri_error_set(err, BRI_EINVAL, "readonly_socket: the same path as socket (%s)", c->socket_path);
  if ((rc = resolve_group("socket_group", c->socket_group, &c->socket_gid, err)) ||
      (rc = resolve_group("readonly_group", c->readonly_group, &c->readonly_gid, err)))
    return rc;
  /* the settings are shown as JSON (--check-config, status), which holds only UTF-8 */
  for (size_t i = 0; i < c->n_roots; i++)
    if (!utf8_ok(c->roots[i])) return bri_error_set(err, BRI_EINVAL, "root %zu: the path is not UTF-8 text", i + 1);
  if (!utf8_ok(c->socket_path) || !utf8_ok(c->state_path) || !utf8_ok(c->socket_group) ||
      !utf8_ok(c->readonly_socket) || !utf8_ok(c->readonly_group))
    return bri_error_set(err, BRI_EINVAL, "socket, state, socket_group, readonly_socket or readonly_group: not UTF-8 text");
  for (size_t i = 0; i < c->n_sections; i++)
    if (!utf8_ok(c->sections[i].canonical))
      return bri_error_set(err, BRI_EINVAL, "[table %s]: its real path is not UTF-8 text", c->sections[i].pattern);
  if ((rc = check_readers(&c->defaults, "[defaults]", err)) != 0) return rc;
  for (size_t i = 0; i < c->n_sections; i++)
    if ((rc = check_readers(&c->sections[i].p, c->sections[i].pattern, err)) != 0) return rc;
  if (c->retry_max_sec < c->retry_base_sec)
    return bri_error_set(err, BRI_EINVAL, "retry_max (%llds) is shorter than retry_base (%llds)",
                         (long long)c->retry_max_sec, (long long)c->retry_base_sec);
  for (size_t i = 0; i < c->n_roots; i++)
    for (size_t j = 0; j < i; j++)
      if (!strcmp(c->roots[i], c->roots[j]))
        return bri_error_set(err, BRI_EINVAL, "root %s is listed twice", c->roots[i]);
  return validate_roots(c, roots_from_flags, err);
}

int svc_config_load(svc_config *c, const svc_overrides *ov, bri_error *err) {
  if (!ov->config_file) return svc_config_load_text(c, ov, NULL, 0, err);
  uint8_t *text;
  size_t len;
  if (bri_read_file(ov->config_file, 4 << 20, &text, &len, err)) {
    int e = errno;
    svc_config_init(c);
    bri_error_wrap(err, "reading the configuration");
    if (e == EACCES) {
      /* the usual cause under systemd: the file is not readable by User=brid */
      struct passwd *pw = getpwuid(geteuid());
      size_t n = strlen(err->msg);
      snprintf(err->msg + n, sizeof err->msg - n, " (brid runs as user %s: make the file readable by it, e.g. "
               "chmod 0644, or chgrp %s and chmod 0640)", pw ? pw->pw_name : "?", pw ? pw->pw_name : "brid");
    }
    return err->code;
  }
  int rc = svc_config_load_text(c, ov, (const char *)text, len, err);
  free(text);
  return rc;
}

int svc_config_load_text(svc_config *c, const svc_overrides *ov, const char *text, size_t len, bri_error *err) {
  svc_config_init(c);
  int rc = 0;
  if (text) {
    const char *name = ov->config_file ? ov->config_file : "(configuration)";
    if (!(c->file = strdup(name))) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    if (!rc) rc = parse_text(c, name, text, len, err);
  }
  if (!rc && ov->n_roots) {
    for (size_t i = 0; i < c->n_roots; i++) free(c->roots[i]);
    c->n_roots = 0;
    for (size_t i = 0; !rc && i < ov->n_roots; i++) {
      char **r = realloc(c->roots, (c->n_roots + 1) * sizeof *r);
      if (r) c->roots = r;
      if (!r) {
        rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
        break;
      }
      if (!(r[c->n_roots] = svc_location_name(ov->roots[i], err))) {
        rc = err->code == BRI_ENOMEM ? err->code : bri_error_wrap(err, "--root");
        break;
      }
      c->roots = r;
      c->n_roots++;
    }
  }
  if (!rc && ov->socket_path) {
    free(c->socket_path);
    if (!(c->socket_path = strdup(ov->socket_path))) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  if (!rc && ov->state_path) { /* --state replaces the file's store, whichever it was */
    free(c->state_path), free(c->store_uri);
    c->store_uri = NULL;
    if (!(c->state_path = strdup(ov->state_path))) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  if (!rc && ov->store_uri) {
    if (ov->state_path) {
      rc = bri_error_set(err, BRI_EINVAL, "--state (a SQLite file) and --store (a PostgreSQL URI) name two job "
                         "stores: give one");
    } else {
      free(c->state_path), free(c->store_uri);
      c->state_path = NULL;
      if (!(c->store_uri = strdup(ov->store_uri))) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    }
  }
  if (!rc && ov->metrics_listen) {
    char msg[256];
    if (!set_listen(c, ov->metrics_listen, msg, sizeof msg))
      rc = bri_error_set(err, BRI_EINVAL, "--metrics-listen: %s", msg);
  }
  if (!rc && ov->workers) c->workers = ov->workers;
  if (!rc && ov->debounce_sec >= 0) c->debounce_sec = ov->debounce_sec;
  if (!rc && ov->log_level) {
    int l = svc_log_parse_level(ov->log_level);
    if (l < 0) rc = bri_error_set(err, BRI_EINVAL, "--log-level: \"%s\" is not error, warning, notice, info or debug", ov->log_level);
    else c->log_level = l;
  }
  if (!rc) rc = validate(c, ov->n_roots > 0, err);
  if (rc) svc_config_dispose(c);
  return rc;
}

/* Whether a [table] section's glob names the table at root: fnmatch with
 * FNM_PATHNAME, except that a pattern ending in slash-star-star names every
 * table below a directory its head matches, at any depth (all tables of a
 * root: a section named ROOT, a slash and two stars). */
static bool glob_names(const char *pattern, const char *root) {
  size_t n = strlen(pattern);
  if (n < 3 || strcmp(pattern + n - 3, "/**") != 0) return fnmatch(pattern, root, FNM_PATHNAME) == 0;
  char head[PATH_MAX], dir[PATH_MAX];
  if (n - 3 >= sizeof head) return false;
  memcpy(head, pattern, n - 3);
  head[n - 3] = 0;
  for (const char *slash = strchr(root + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
    size_t k = (size_t)(slash - root);
    if (k >= sizeof dir) return false;
    memcpy(dir, root, k);
    dir[k] = 0;
    if (fnmatch(head, dir, FNM_PATHNAME) == 0) return true;
  }
  return false;
}

void svc_config_policy_for(const svc_config *c, const char *root, svc_policy *out) {
  *out = c->defaults;
  for (size_t s = 0; s < c->n_sections; s++) {
    const svc_table_section *ts = &c->sections[s];
    bool match = ts->is_glob ? glob_names(ts->pattern, root)
                             : !strcmp(ts->canonical ? ts->canonical : ts->pattern, root);
    if (!match) continue;
    for (size_t i = 0; i < NKEYS; i++) {
      if (!(ts->set & ((uint64_t)1 << i))) continue;
      const key *k = &KEYS[i];
      size_t sz = k->type == T_BOOL ? sizeof(bool)
                  : k->type == T_DOUBLE ? sizeof(double)
                  : k->type == T_STRATEGY ? sizeof(bri_strategy)
                  : k->type == T_DUR ? sizeof(int64_t)
                  : k->type == T_INT ? sizeof(int)
                                     : sizeof(uint64_t);
      memcpy((char *)out + k->off, (const char *)&ts->p + k->off, sz);
    }
  }
}

/* A duration as the configuration writes it ("7d", "30s"). */
static json_t *dur(int64_t seconds) {
  char buf[48];
  bri_duration_format(seconds, buf, sizeof buf);
  return json_string(buf);
}

static json_t *policy_json(const svc_policy *p) {
  const bri_compact_options *o = &p->compact;
  const bri_cleanup_policy *c = &p->cleanup;
  return json_pack(
      "{s:s, s:b, s:b, s:o, s:o, s:I, s:I, s:I, s:b, s:f, s:f, s:I, s:I, s:I, s:I, s:o, s:o, s:I, s:o, s:f}",
      "strategy", bri_strategy_name(p->strategy), "auto_compact", p->auto_compact, "paused", p->paused,
      "debounce", p->debounce_sec < 0 ? json_null() : dur(p->debounce_sec), "max_delay", dur(p->max_delay_sec),
      "max_new_fragments", (json_int_t)p->max_new_fragments, "target_rows_per_fragment",
      (json_int_t)o->target_rows_per_fragment, "target_fragment_bytes", (json_int_t)o->target_fragment_bytes,
      "materialize_deletions", o->materialize_deletions,
      "materialize_deletions_threshold", o->materialize_deletions_threshold, "repack_threshold",
      o->repack_threshold, "max_source_fragments", (json_int_t)o->max_source_fragments,
      "max_source_rows", (json_int_t)o->max_source_rows, "max_source_bytes",
      (json_int_t)o->max_source_bytes, "batch_rows", (json_int_t)p->batch_rows, "cleanup_interval",
      dur(p->cleanup_interval_sec), "cleanup_older_than", dur(c->older_than_sec),
      "cleanup_retain_versions", (json_int_t)c->retain_versions, "cleanup_grace",
      dur(c->grace_sec), "cleanup_max_deletes_per_sec", c->max_deletes_per_sec);
}

/* With the readers declared (min_reader, null when not). */
json_t *svc_policy_to_json(const svc_policy *p) {
  json_t *o = policy_json(p);
  json_object_set_new(o, "min_reader", p->min_reader ? json_integer(p->min_reader) : json_null());
  return o;
}

static json_t *str_or_null(const char *s) { return s ? json_string(s) : json_null(); }

/* A root's settings as --check-config shows them: every setting its
 * backend takes (null when unset), a secret as the file or credential it
 * is read from, never the secret. */
static json_t *root_to_json(const char *root, const svc_root *r) {
  json_t *o = json_pack("{s:s}", "root", root);
  for (const char *const *n = bri_store_setting_names(root); *n; n++) {
    const svc_root_setting *v = NULL;
    for (size_t i = 0; i < r->n_settings; i++)
      if (!strcmp(r->settings[i].name, *n)) v = &r->settings[i];
    char name[160];
    if (bri_store_setting_kind(root, *n) == BRI_SETTING_SECRET) {
      snprintf(name, sizeof name, "%s_file", *n);
      json_object_set_new(o, name, str_or_null(v ? v->file : NULL));
      snprintf(name, sizeof name, "%s_credential", *n);
      json_object_set_new(o, name, str_or_null(v ? v->credential : NULL));
    } else {
      json_object_set_new(o, *n, str_or_null(v ? v->value : NULL));
    }
  }
  json_object_set_new(o, "poll_interval", dur(r->poll_interval_sec));
  json_object_set_new(o, "max_requests_per_second", json_real(r->max_requests_per_second));
  json_object_set_new(o, "max_requests_in_flight", json_integer(r->max_requests_in_flight));
  return o;
}

int svc_root_configure(const char *root, const svc_root *r, bool check_only, bri_error *err) {
  bri_store_setting *v = calloc(r->n_settings + 1, sizeof *v);
  if (!v) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  size_t n = 0;
  for (size_t i = 0; i < r->n_settings; i++)
    if (r->settings[i].value) v[n++] = (bri_store_setting){r->settings[i].name, r->settings[i].value};
  bri_store_limits l = {r->max_requests_per_second, r->max_requests_in_flight};
  int rc = bri_store_configure_root(root, v, n, &l, check_only, err);
  free(v);
  return rc;
}

int svc_config_register_roots(const svc_config *c, bri_error *err) {
  for (size_t i = 0; i < c->n_roots; i++) {
    const char *root = c->roots[i];
    char *canon = NULL;
    /* stores count a root under its canonical name (bri_store_canonical) */
    int rc = bri_store_location(root, &canon, err);
    if (!rc) rc = bri_store_count_root(canon, err);
    free(canon);
    if (!rc && !(svc_location_caps(root) & BRI_STORE_CAP_LOCAL) && (rc = svc_root_configure(root, svc_config_root(c, root), false, err)) != 0)
      return bri_error_wrap(err, "root %s", root);
    if (rc) return rc;
  }
  return 0;
}

int svc_config_load_roots(svc_config *c, const svc_overrides *ov, bri_error *err) {
  int rc = svc_config_load(c, ov, err);
  /* the new roots' settings (a root's secret may have changed): stores
   * opened from now on use them */
  if (!rc && (rc = svc_config_register_roots(c, err)) != 0) svc_config_dispose(c);
  return rc;
}

json_t *svc_config_to_json(const svc_config *c) {
  json_t *roots = json_array();
  for (size_t i = 0; i < c->n_roots; i++) json_array_append_new(roots, json_string(c->roots[i]));
  json_t *sections = json_array();
  for (size_t i = 0; i < c->n_sections; i++) {
    json_t *keys = json_object();
    json_t *full = svc_policy_to_json(&c->sections[i].p);
    for (size_t k = 0; k < NKEYS; k++)
      if (c->sections[i].set & ((uint64_t)1 << k))
        json_object_set(keys, KEYS[k].name, json_object_get(full, KEYS[k].name));
    json_decref(full);
    json_array_append_new(sections, json_pack("{s:s, s:o, s:b, s:o}", "table", c->sections[i].pattern,
                                              "canonical", c->sections[i].canonical ? json_string(c->sections[i].canonical) : json_null(),
                                              "pattern", c->sections[i].is_glob, "set", keys));
  }
  char mode[8];
  snprintf(mode, sizeof mode, "%04o", c->socket_mode);
  json_t *out = json_pack("{s:o, s:o, s:s, s:s, s:o, s:s, s:o, s:s, s:i, s:o, s:o, s:i, s:o, s:I, s:i, s:o, s:o, s:s, s:i, s:o, s:o, s:o, s:I, s:o, s:o}",
                   "file", c->file ? json_string(c->file) : json_null(), "roots", roots, "socket",
                   c->socket_path, "socket_mode", mode, "socket_group",
                   c->socket_group ? json_string(c->socket_group) : json_null(), "readonly_socket",
                   c->readonly_socket, "readonly_group",
                   c->readonly_group ? json_string(c->readonly_group) : json_null(), "state", c->state_path,
                   "workers", c->workers, "debounce", dur(c->debounce_sec), "sweep_interval",
                   dur(c->sweep_sec), "discovery_depth", c->discovery_depth, "drain_timeout",
                   dur(c->drain_sec), "max_request_bytes", (json_int_t)c->max_request_bytes,
                   "max_connections", c->max_connections, "request_timeout",
                   dur(c->request_timeout_sec), "idle_timeout", dur(c->idle_timeout_sec),
                   "log_level", svc_log_level_name(c->log_level),
                   "max_attempts", c->max_attempts, "retry_base", dur(c->retry_base_sec),
                   "retry_max", dur(c->retry_max_sec), "history_max_age",
                   dur(c->history_max_age_sec), "history_max_rows", (json_int_t)c->history_max_rows,
                   "defaults", svc_policy_to_json(&c->defaults), "tables", sections);
  /* every object-store root, with its settings (a section's or the defaults) */
  json_t *rs = json_array();
  for (size_t i = 0; i < c->n_roots; i++)
    if (!(svc_location_caps(c->roots[i]) & BRI_STORE_CAP_LOCAL)) {
      json_array_append_new(rs, root_to_json(c->roots[i], svc_config_root(c, c->roots[i])));
    }
  json_object_set_new(out, "root_settings", rs);
  json_object_set_new(out, "metrics_listen", str_or_null(c->metrics_listen));
  json_object_set_new(out, "instance_name", str_or_null(c->instance_name));
  json_object_set_new(out, "lease_ttl", dur(c->lease_ttl_sec));
  /* the store: a SQLite file (state) or PostgreSQL (store; no password in it) */
  if (c->store_uri) json_object_set_new(out, "state", json_null());
  json_object_set_new(out, "store", str_or_null(c->store_uri));
  json_object_set_new(out, "store_password_file", str_or_null(c->store_password_file));
  json_object_set_new(out, "store_password_credential", str_or_null(c->store_password_credential));
  return out;
}
