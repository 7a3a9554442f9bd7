/* cmd_client.c: shared plumbing of brictl's daemon commands (see
 * cmd_client.h).
 *
 * Error replies are printed as brid wrote them (its messages already name
 * the table, job or parameter); the exit code tells scripts which kind of
 * failure it was. A refused connection (credentials, connection limit)
 * counts as "could not use brid", like a missing socket. */
#include "cmd_client.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bri/table.h"
#include "rpc/rpc_proto.h"

void cli_client_init(cli_client *c, const cli_args *a) {
  c->socket_given = cli_given(a, "socket");
  c->socket = c->socket_given ? cli_text(a, "socket") : rpc_default_socket();
  c->json = cli_flag(a, "json");
  c->timeout_ms = (int)cli_seconds(a, "timeout") * 1000;
}

json_t *cli_params(const cli_args *a) {
  json_t *p = json_object();
  for (size_t i = 0; a->cmd->opts && a->cmd->opts[i].name; i++) {
    const cli_opt *o = &a->cmd->opts[i];
    const cli_value *v = &a->v[i];
    if (!v->given || !o->param) continue;
    char path[4096];
    json_t *j = o->type == CLI_FLAG       ? json_true()
                : o->type == CLI_UINT || o->type == CLI_SIZE ? json_integer((json_int_t)v->u)
                : o->type == CLI_DURATION ? json_integer((json_int_t)v->secs)
                : o->type == CLI_NUMBER   ? json_real(v->d)
                : o->value && !strcmp(o->value, "TABLE") ? json_string(cli_table_path(v->text, path, sizeof path))
                                                         : json_string(v->text);
    json_object_set_new(p, o->param, j);
  }
  return p;
}

int cli_client_open(const cli_client *c, rpc_client **out) {
  bri_error err;
  if (rpc_client_connect(c->socket, c->timeout_ms, out, &err)) {
    fprintf(stderr, "brictl: %s\n", err.msg);
    return CLI_UNREACHABLE;
  }
  return 0;
}

int cli_client_call_on(rpc_client *rc, const char *method, json_t *params, json_t **result) {
  bri_error err;
  int code = 0;
  if (rpc_client_call(rc, method, params, result, &code, &err) == 0) return 0;
  fprintf(stderr, "brictl: %s\n", err.msg);
  if (!code || code == RPC_DENIED || code == RPC_BUSY) return CLI_UNREACHABLE;
  return CLI_ERROR;
}

/* One connect and call; on failure err says why and *denied whether the
 * socket or brid refused this user. */
static int call_once(const char *socket, const cli_client *c, const char *method, json_t *params, json_t **result,
                     bool *denied, bri_error *err) {
  rpc_client *rc;
  int code = 0;
  *denied = false;
  if (rpc_client_connect(socket, c->timeout_ms, &rc, err)) {
    *denied = errno == EACCES || errno == EPERM;
    json_decref(params);
    return CLI_UNREACHABLE;
  }
  int x = rpc_client_call(rc, method, params, result, &code, err);
  rpc_client_close(rc);
  if (!x) return 0;
  *denied = code == RPC_DENIED;
  if (!code || code == RPC_DENIED || code == RPC_BUSY) return CLI_UNREACHABLE;
  return CLI_ERROR;
}

int cli_client_call(const cli_client *c, const char *method, json_t *params, json_t **result) {
  bool fallback = !c->socket_given && rpc_method_reads_only(method), denied;
  json_t *again = fallback ? json_incref(params) : NULL;
  bri_error err, err2;
  int x = call_once(c->socket, c, method, params, result, &denied, &err);
  if (x && fallback && denied) {
    char ro[256];
    rpc_readonly_socket(c->socket, ro, sizeof ro);
    x = call_once(ro, c, method, again, result, &denied, &err2); /* again is consumed */
    if (x) fprintf(stderr, "brictl: %s\nbrictl: and on the read-only socket: %s\n", err.msg, err2.msg);
    return x;
  }
  json_decref(again);
  if (x) fprintf(stderr, "brictl: %s\n", err.msg);
  return x;
}

const char *cli_table_path(const char *arg, char *buf, size_t cap) {
  /* as brid names it: lib/storage's canonical name (a local real path, else
   * absolute; s3:// and az:// without trailing slashes, Azure's other forms
   * as az://); a location it refuses goes as given, for brid to refuse */
  char *loc = NULL;
  bri_error err;
  if (bri_store_location(arg, &loc, &err) == 0) snprintf(buf, cap, "%s", loc);
  else snprintf(buf, cap, "%s", arg);
  free(loc);
  return buf;
}

void cli_fmt_bytes(uint64_t b, char *out, size_t cap) {
  static const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = (double)b;
  int i = 0;
  while (v >= 1024 && i < 5) v /= 1024, i++;
  if (i == 0) snprintf(out, cap, "%llu B", (unsigned long long)b);
  else snprintf(out, cap, "%.1f %s", v, u[i]);
}

void cli_fmt_time(const json_t *ms, char *out, size_t cap) {
  if (!json_is_integer(ms)) {
    snprintf(out, cap, "-");
    return;
  }
  time_t t = (time_t)(json_integer_value(ms) / 1000);
  struct tm tm;
  localtime_r(&t, &tm);
  /* RFC 3339 (with a space): the zone is never left to guess */
  char z[8];
  size_t n = strftime(out, cap, "%Y-%m-%d %H:%M:%S", &tm);
  if (strftime(z, sizeof z, "%z", &tm) == 5 && n < cap)
    snprintf(out + n, cap - n, "%.3s:%s", z, z + 3);
}

void cli_fmt_duration(int64_t ms, char *out, size_t cap) {
  if (ms < 0) ms = 0;
  int64_t s = ms / 1000;
  if (ms < 1000) snprintf(out, cap, "%lldms", (long long)ms);
  else if (s < 60) snprintf(out, cap, "%.1fs", (double)ms / 1000.0);
  else if (s < 3600) snprintf(out, cap, "%lldm%02llds", (long long)(s / 60), (long long)(s % 60));
  else if (s < 86400) snprintf(out, cap, "%lldh%02lldm", (long long)(s / 3600), (long long)(s % 3600 / 60));
  else snprintf(out, cap, "%lldd%lldh", (long long)(s / 86400), (long long)(s % 86400 / 3600));
}

const char *cli_str(const json_t *o, const char *key) {
  const json_t *v = json_object_get(o, key);
  return json_is_string(v) ? json_string_value(v) : "-";
}

long long cli_int(const json_t *o, const char *key) {
  const json_t *v = json_object_get(o, key);
  return json_is_integer(v) ? (long long)json_integer_value(v) : 0;
}

void cli_fmt_progress(const json_t *p, char *out, size_t cap) {
  if (!p) {
    snprintf(out, cap, "starting");
    return;
  }
  char b[32], rate[48] = "", eta[48] = "";
  cli_fmt_bytes((uint64_t)cli_int(p, "bytes_written"), b, sizeof b);
  long long done = cli_int(p, "rows_done"), total = cli_int(p, "rows_total");
  const json_t *pct = json_object_get(p, "percent"), *bps = json_object_get(p, "bytes_per_second"),
               *left = json_object_get(p, "eta_seconds");
  if (json_is_number(bps)) {
    char r[32];
    cli_fmt_bytes((uint64_t)json_number_value(bps), r, sizeof r);
    snprintf(rate, sizeof rate, ", %s/s", r);
  }
  if (json_is_integer(left)) {
    char d[32];
    cli_fmt_duration(json_integer_value(left) * 1000, d, sizeof d);
    snprintf(eta, sizeof eta, ", ETA %s", d);
  }
  if (total)
    snprintf(out, cap, "%s %.0f%% (%lld/%lld rows, %s written%s%s)", cli_str(p, "phase"),
             json_is_number(pct) ? json_number_value(pct) : 0.0, done, total, b, rate, eta);
  else
    snprintf(out, cap, "%s", cli_str(p, "phase"));
}
