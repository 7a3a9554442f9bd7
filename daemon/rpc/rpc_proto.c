/* rpc_proto.c: JSON-RPC 2.0 messages and line framing (see rpc_proto.h).
 *
 * Validation follows the JSON-RPC 2.0 specification closely enough that a
 * generic client gets the errors it expects ("jsonrpc" must be "2.0", an id
 * is a string, a number or null, params are structured), with two choices
 * of brid's: batches (arrays) are refused, since one line is one request,
 * and params must be an object (named parameters only), which keeps the
 * method handlers free of positional guessing. */
#include "rpc/rpc_proto.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool rpc_method_reads_only(const char *method) {
  static const char *const READS[] = {"status", "tables.list", "tables.get", "jobs.list", "jobs.get", "metrics"};
  for (size_t i = 0; i < sizeof READS / sizeof READS[0]; i++)
    if (!strcmp(method, READS[i])) return true;
  return false;
}

void rpc_readonly_socket(const char *control, char *out, size_t cap) {
  size_t n = strlen(control);
  if (n > 5 && !strcmp(control + n - 5, ".sock")) snprintf(out, cap, "%.*s-ro.sock", (int)(n - 5), control);
  else snprintf(out, cap, "%s-ro", control);
}

const char *rpc_code_name(int code) {
  switch (code) {
  case RPC_PARSE_ERROR: return "parse error";
  case RPC_INVALID_REQUEST: return "invalid request";
  case RPC_METHOD_NOT_FOUND: return "method not found";
  case RPC_INVALID_PARAMS: return "invalid params";
  case RPC_INTERNAL_ERROR: return "internal error";
  case RPC_FAILED: return "failed";
  case RPC_NOT_FOUND: return "not found";
  case RPC_DENIED: return "permission denied";
  case RPC_BAD_STATE: return "bad state";
  case RPC_BUSY: return "busy";
  default: return "error";
  }
}

json_t *rpc_result(json_t *id, json_t *result) {
  json_t *m = json_object();
  json_object_set_new(m, "jsonrpc", json_string("2.0"));
  json_object_set(m, "id", id ? id : json_null());
  json_object_set_new(m, "result", result ? result : json_null());
  return m;
}

json_t *rpc_error(json_t *id, int code, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  json_t *m = json_object();
  json_object_set_new(m, "jsonrpc", json_string("2.0"));
  json_object_set(m, "id", id ? id : json_null());
  /* json_stringn_nocheck would accept invalid UTF-8 from a path; the
   * checked constructor returns NULL instead, so fall back to a plain text */
  json_t *s = json_string(msg);
  json_object_set_new(m, "error", json_pack("{s:i, s:o}", "code", code, "message",
                                            s ? s : json_string(rpc_code_name(code))));
  return m;
}

json_t *rpc_request(json_int_t id, const char *method, json_t *params) {
  json_t *m = json_object();
  json_object_set_new(m, "jsonrpc", json_string("2.0"));
  json_object_set_new(m, "id", json_integer(id));
  json_object_set_new(m, "method", json_string(method));
  json_object_set_new(m, "params", params ? params : json_object());
  return m;
}

char *rpc_line(const json_t *msg, size_t *len) {
  /* 15 significant digits: a configured 0.1 travels as 0.1 */
  char *s = json_dumps(msg, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(15));
  if (!s) return NULL;
  size_t n = strlen(s);
  char *out = realloc(s, n + 2);
  if (!out) {
    free(s);
    return NULL;
  }
  out[n] = '\n';
  out[n + 1] = 0;
  *len = n + 1;
  return out;
}

void rpc_req_clear(rpc_req *req) {
  json_decref(req->msg);
  memset(req, 0, sizeof *req);
}

int rpc_parse_request(const char *line, size_t len, rpc_req *req, json_t **id, char *msg,
                      size_t msgcap) {
  memset(req, 0, sizeof *req);
  *id = NULL;
  json_error_t je;
  json_t *m = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
  if (!m) {
    snprintf(msg, msgcap, "not JSON: %s at column %d", je.text, je.column);
    return RPC_PARSE_ERROR;
  }
  if (json_is_array(m)) {
    json_decref(m);
    snprintf(msg, msgcap, "batch requests are not supported: send one request object per line");
    return RPC_INVALID_REQUEST;
  }
  if (!json_is_object(m)) {
    json_decref(m);
    snprintf(msg, msgcap, "a request must be a JSON object");
    return RPC_INVALID_REQUEST;
  }
  json_t *jid = json_object_get(m, "id");
  if (jid && !json_is_string(jid) && !json_is_integer(jid) && !json_is_real(jid) && !json_is_null(jid)) {
    json_decref(m);
    snprintf(msg, msgcap, "\"id\" must be a string, a number or null");
    return RPC_INVALID_REQUEST;
  }
  if (jid) *id = json_incref(jid);
  json_t *v = json_object_get(m, "jsonrpc");
  if (!json_is_string(v) || strcmp(json_string_value(v), "2.0") != 0) {
    json_decref(m);
    snprintf(msg, msgcap, "\"jsonrpc\" must be \"2.0\"");
    return RPC_INVALID_REQUEST;
  }
  json_t *meth = json_object_get(m, "method");
  if (!json_is_string(meth) || !json_string_value(meth)[0]) {
    json_decref(m);
    snprintf(msg, msgcap, "\"method\" must be a non-empty string");
    return RPC_INVALID_REQUEST;
  }
  json_t *params = json_object_get(m, "params");
  if (params && json_is_array(params)) {
    json_decref(m);
    snprintf(msg, msgcap, "params must be an object (brid takes named parameters only)");
    return RPC_INVALID_PARAMS;
  }
  if (params && !json_is_object(params)) {
    json_decref(m);
    snprintf(msg, msgcap, "params must be an object");
    return RPC_INVALID_REQUEST;
  }
  if (!params) {
    params = json_object();
    json_object_set_new(m, "params", params);
  }
  req->msg = m;
  req->id = jid;
  req->method = json_string_value(meth);
  req->params = params;
  return 0;
}

void rpc_lines_init(rpc_lines *l, size_t max) {
  memset(l, 0, sizeof *l);
  l->max = max;
}

void rpc_lines_dispose(rpc_lines *l) {
  free(l->buf);
  memset(l, 0, sizeof *l);
}

int rpc_lines_feed(rpc_lines *l, const char *data, size_t n) {
  /* drop what was returned already */
  if (l->start) {
    memmove(l->buf, l->buf + l->start, l->len - l->start);
    l->len -= l->start;
    l->start = 0;
  }
  /* no line may exceed max: the bound counts bytes, so a peer that never
   * sends a newline makes us hold at most max of them */
  const char *prev = l->len ? memrchr(l->buf, '\n', l->len) : NULL;
  size_t run = prev ? (size_t)(l->buf + l->len - prev - 1) : l->len;
  for (size_t i = 0; i < n; i++) {
    if (data[i] == '\n') {
      run = 0;
    } else if (++run > l->max) {
      return -1;
    }
  }
  if (l->len + n + 1 > l->cap) {
    size_t cap = l->cap ? l->cap : 4096;
    while (cap < l->len + n + 1) cap *= 2;
    char *b = realloc(l->buf, cap);
    if (!b) return -2;
    l->buf = b, l->cap = cap;
  }
  memcpy(l->buf + l->len, data, n);
  l->len += n;
  return 0;
}

bool rpc_lines_next(rpc_lines *l, const char **line, size_t *len) {
  if (l->start >= l->len) return false;
  char *p = memchr(l->buf + l->start, '\n', l->len - l->start);
  if (!p) return false;
  size_t n = (size_t)(p - (l->buf + l->start));
  *line = l->buf + l->start;
  if (n && (*line)[n - 1] == '\r') n--;
  *len = n;
  l->start = (size_t)(p - l->buf) + 1;
  return true;
}
