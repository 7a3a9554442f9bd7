/* svc_request.c: checking a control request's parameters (see
 * svc_request.h).
 *
 * The method table maps each name to the parameter names it accepts and to
 * its check; a check reads only the params object and fills the request,
 * so the order of the errors a peer sees is: unknown method, unknown
 * parameter, then each parameter in the method's order. */
#include "svc_request.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "svc_kinds.h"

typedef struct chk {
  const json_t *params;
  svc_request *r;
  char *msg;
  size_t cap;
} chk;

static int fail(chk *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(chk *c, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->msg, c->cap, fmt, ap);
  va_end(ap);
  return code;
}

static json_t *get(chk *c, const char *name) { return json_object_get(c->params, name); }

/* params.table: absent is fine unless required. */
static int param_table(chk *c, bool required) {
  json_t *v = get(c, "table");
  if (!v) return required ? fail(c, RPC_INVALID_PARAMS, "params.table is required (a table path)") : 0;
  if (!json_is_string(v) || !json_string_value(v)[0])
    return fail(c, RPC_INVALID_PARAMS, "params.table must be a table path (a string)");
  const char *p = json_string_value(v);
  unsigned caps = svc_location_caps(p);
  if (!caps || ((caps & BRI_STORE_CAP_LOCAL) && p[0] != '/'))
    return fail(c, RPC_INVALID_PARAMS, "params.table must be an absolute path or a storage URI (s3://, az://), got \"%s\"", p);
  c->r->table = p;
  return 0;
}

static int param_bool(chk *c, const char *name, bool *out) {
  json_t *v = get(c, name);
  if (!v) return 0;
  if (!json_is_boolean(v)) return fail(c, RPC_INVALID_PARAMS, "params.%s must be true or false", name);
  *out = json_is_true(v);
  return 0;
}

/* An integer >= min: 0 absent, 1 given, < 0 an error code. */
static int param_int(chk *c, const char *name, bool required, json_int_t min, json_int_t *out) {
  json_t *v = get(c, name);
  if (!v) return required ? fail(c, RPC_INVALID_PARAMS, "params.%s is required", name) : 0;
  if (!json_is_integer(v) || json_integer_value(v) < min)
    return fail(c, RPC_INVALID_PARAMS, "params.%s must be an integer >= %lld", name, (long long)min);
  *out = json_integer_value(v);
  return 1;
}

/* ------------------------------------------------------------- methods */

static int c_none(chk *c) {
  (void)c;
  return 0;
}

static int c_tables_list(chk *c) { return param_bool(c, "all", &c->r->all); }

static int c_table(chk *c) { return param_table(c, true); }

static int c_jobs_list(chk *c) {
  bri_jobs_filter *f = &c->r->filter;
  int rc;
  if ((rc = param_table(c, false))) return rc;
  bri_error err;
  json_t *v;
  if ((v = get(c, "state"))) {
    json_t *list = json_is_array(v) ? json_incref(v) : json_pack("[O]", v);
    if (!list) return fail(c, RPC_INTERNAL_ERROR, "out of memory");
    size_t i;
    json_t *s;
    json_array_foreach(list, i, s) {
      bri_job_state st;
      if (!json_is_string(s) || bri_job_state_parse(json_string_value(s), &st, &err)) {
        json_decref(list);
        return fail(c, RPC_INVALID_PARAMS,
                    "params.state must be queued, running, succeeded, failed or cancelled (or a list of them)");
      }
      f->state_mask |= 1u << st;
    }
    json_decref(list);
  }
  if ((v = get(c, "kind"))) {
    if (!json_is_string(v) || bri_job_kind_parse(json_string_value(v), &f->kind, &err))
      return fail(c, RPC_INVALID_PARAMS, "params.kind must be %s", rpc_kind_list());
  }
  json_int_t x;
  int r = param_int(c, "limit", false, 1, &x);
  if (r < 0) return r;
  if (r) f->limit = x > 10000 ? 10000 : (size_t)x;
  if ((r = param_int(c, "before", false, 1, &x)) < 0) return r;
  if (r) f->before_id = x;
  return 0;
}

static int c_job_id(chk *c) {
  json_int_t id = 0;
  int r = param_int(c, "id", true, 1, &id);
  if (r < 0) return r;
  c->r->id = id;
  return 0;
}

/* A job of the kind named like the method (svc_kinds.h): the kind's parse
 * refuses bad values and writes the job's params, which start as
 * {"trigger": "api"}. */
static int c_kind(chk *c) {
  int rc = param_table(c, true);
  if (rc) return rc;
  const svc_kind *k = svc_kind_of(c->r->kind);
  if (!(c->r->job_params = json_pack("{s:s}", "trigger", "api"))) return fail(c, RPC_INTERNAL_ERROR, "out of memory");
  svc_policy pol;
  svc_policy_default(&pol);
  svc_opts o;
  if (k->parse(c->params, &pol, &o, c->r->job_params, c->msg, c->cap)) return RPC_INVALID_PARAMS;
  return 0;
}

static int c_pause(chk *c) {
  int rc = param_bool(c, "cancel_running", &c->r->cancel_running);
  return rc ? rc : param_table(c, false);
}

static int c_resume(chk *c) { return param_table(c, false); }

static int c_metrics(chk *c) {
  json_t *v = get(c, "format");
  if (!v) return 0;
  if (!json_is_string(v) || (strcmp(json_string_value(v), "text") && strcmp(json_string_value(v), "json")))
    return fail(c, RPC_INVALID_PARAMS, "params.format must be \"text\" or \"json\"");
  c->r->json = !strcmp(json_string_value(v), "json");
  return 0;
}

/* ------------------------------------------------------------ dispatch */

static const struct {
  const char *name;
  svc_method method;
  int (*check)(chk *c);
  const char *params; /* accepted names, space separated */
} METHODS[] = { /* and one method per kind of job (rpc/rpc_kinds.h), named like it */
    {"status", SVC_M_STATUS, c_none, ""},
    {"tables.list", SVC_M_TABLES_LIST, c_tables_list, "all"},
    {"tables.get", SVC_M_TABLES_GET, c_table, "table"},
    {"jobs.list", SVC_M_JOBS_LIST, c_jobs_list, "table state kind limit before"},
    {"jobs.get", SVC_M_JOBS_GET, c_job_id, "id"},
    {"jobs.cancel", SVC_M_JOBS_CANCEL, c_job_id, "id"},
    {"pause", SVC_M_PAUSE, c_pause, "table cancel_running"},
    {"resume", SVC_M_RESUME, c_resume, "table"},
    {"reload", SVC_M_RELOAD, c_none, ""},
    {"metrics", SVC_M_METRICS, c_metrics, "format"},
};

static bool accepts(const char *list, const char *name) {
  size_t n = strlen(name);
  if (!n) return false;
  for (const char *p = list; (p = strstr(p, name)) != NULL; p += n)
    if ((p == list || p[-1] == ' ') && (p[n] == 0 || p[n] == ' ')) return true;
  return false;
}

void svc_request_clear(svc_request *r) {
  json_decref(r->job_params);
  memset(r, 0, sizeof *r);
}

/* Checks that every parameter of req is one of params. */
static int known_params(const rpc_req *req, const char *params, char *msg, size_t cap) {
  const char *k;
  json_t *v;
  json_object_foreach(req->params, k, v) {
    if (!accepts(params, k)) {
      snprintf(msg, cap, "%s: unknown parameter \"%s\"%s%s%s", req->method, k,
               params[0] ? " (accepted: " : " (it takes none)", params, params[0] ? ")" : "");
      return RPC_INVALID_PARAMS;
    }
  }
  return 0;
}

int svc_request_check(const rpc_req *req, svc_request *out, char *msg, size_t cap) {
  memset(out, 0, sizeof *out);
  int (*check)(chk *c) = NULL;
  char kparams[256];
  const char *params = NULL;
  const rpc_kind *kind = rpc_kind_named(req->method);
  if (kind && svc_kind_of(kind->kind)) {
    snprintf(kparams, sizeof kparams, "table %s", kind->params);
    params = kparams;
    out->kind = kind->kind;
    out->method = SVC_M_JOB;
    check = c_kind;
  }
  for (size_t i = 0; !check && i < sizeof METHODS / sizeof METHODS[0]; i++)
    if (strcmp(METHODS[i].name, req->method) == 0) {
      params = METHODS[i].params;
      out->method = METHODS[i].method;
      check = METHODS[i].check;
    }
  if (!check) {
    size_t n = (size_t)snprintf(msg, cap, "no method \"%s\" (methods:", req->method);
    for (size_t i = 0; i < sizeof METHODS / sizeof METHODS[0] && n < cap; i++)
      n += (size_t)snprintf(msg + n, cap - n, " %s,", METHODS[i].name);
    if (n < cap) snprintf(msg + n, cap - n, " and one per kind of job: %s)", rpc_kind_list());
    return RPC_METHOD_NOT_FOUND;
  }
  int rc = known_params(req, params, msg, cap);
  if (rc) {
    svc_request_clear(out);
    return rc;
  }
  chk c = {.params = req->params, .r = out, .msg = msg, .cap = cap};
  rc = check(&c);
  if (rc) svc_request_clear(out);
  return rc;
}
