/* fuzz_request.c: libFuzzer harness for what a peer's bytes on the control
 * socket go through before a method acts: the line splitter (fed in
 * chunks, as reads arrive), JSON-RPC parsing and validation
 * (rpc_proto.c), the method's parameter check (svc_request.c, which
 * svc_api_call runs first), and the error reply (svc_control.c's
 * handle_line builds it the same way).
 *
 * Main design choice: no daemon and no mock of one. What happens after the
 * check (table lookup, job store, pool) needs a running brid and is
 * covered by tests/integration/test_daemon_api.sh; here a request that
 * passes must satisfy what the handlers rely on (a table is an absolute
 * path, a job method has its params, an id is >= 1), else abort. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/rpc_proto.h"
#include "brid/1_leaves/svc_request.h"

static void bad(const char *what) {
  fprintf(stderr, "fuzz_request: %s\n", what);
  abort();
}

/* The reply must be one line of JSON. */
static void reply(json_t *msg) {
  if (!msg) bad("no reply built");
  size_t len;
  char *s = rpc_line(msg, &len);
  if (!s) bad("the reply does not serialize");
  if (len == 0 || s[len - 1] != '\n' || memchr(s, '\n', len - 1)) bad("the reply is not one line");
  free(s);
  json_decref(msg);
}

static void handle(const char *line, size_t len) {
  rpc_req req;
  json_t *id = NULL;
  char msg[1024];
  int code = rpc_parse_request(line, len, &req, &id, msg, sizeof msg);
  if (code) {
    reply(rpc_error(id, code, "%s", msg));
    json_decref(id);
    return;
  }
  json_decref(id);
  if (!req.method || !req.method[0] || !json_is_object(req.params)) bad("a parsed request lacks method or params");
  svc_request r;
  code = svc_request_check(&req, &r, msg, sizeof msg);
  if (code) {
    if (code != RPC_METHOD_NOT_FOUND && code != RPC_INVALID_PARAMS) bad("unexpected error code");
    if (req.id) reply(rpc_error(req.id, code, "%s", msg));
  } else {
    if (r.table && r.table[0] != '/') bad("a checked table is not absolute");
    bool job = r.method == SVC_M_JOB;
    if (job != (rpc_kind_of(r.kind) != NULL)) bad("a job method without its kind, or a kind without one");
    if (job != (r.job_params != NULL)) bad("job params present iff a job method");
    if (job && !r.table) bad("a job method without a table");
    if ((r.method == SVC_M_JOBS_GET || r.method == SVC_M_JOBS_CANCEL) && r.id < 1) bad("job id < 1");
    if (r.method == SVC_M_JOBS_LIST && r.filter.limit > 10000) bad("limit over 10000");
    if (job) {
      char *pj = json_dumps(r.job_params, JSON_COMPACT | JSON_SORT_KEYS);
      if (!pj) bad("job params do not serialize");
      free(pj);
    }
    if (req.id) reply(rpc_result(req.id, json_pack("{s:b}", "checked", 1)));
    svc_request_clear(&r);
  }
  rpc_req_clear(&req);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  rpc_lines in;
  rpc_lines_init(&in, 4096);
  /* reads of varying size, as a socket delivers them */
  size_t chunk = 1 + size % 251;
  for (size_t off = 0; off < size; off += chunk) {
    size_t n = size - off < chunk ? size - off : chunk;
    int f = rpc_lines_feed(&in, (const char *)data + off, n);
    if (f) {
      if (f != -1) bad("line splitter out of memory");
      reply(rpc_error(NULL, RPC_INVALID_REQUEST, "request line exceeds %zu bytes", in.max));
      break;
    }
    const char *line;
    size_t len;
    while (rpc_lines_next(&in, &line, &len)) {
      if (len > in.max) bad("a line longer than the limit");
      bool blank = true;
      for (size_t i = 0; i < len && blank; i++) blank = line[i] == ' ' || line[i] == '\t';
      if (!blank) handle(line, len);
    }
  }
  rpc_lines_dispose(&in);
  return 0;
}
