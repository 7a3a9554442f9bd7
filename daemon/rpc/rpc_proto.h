/* rpc_proto.h: the control protocol shared by brid and brictl: JSON-RPC 2.0,
 * one JSON object per line, over a Unix stream socket.
 *
 * Main design choice: the framing is a newline, never a length prefix, so a
 * person can talk to the daemon with socat and a test can send broken bytes;
 * the price is that a line is bounded (the receiver refuses a line longer
 * than its limit instead of buffering without end). This module holds the
 * pieces both sides need (error codes, message builders, a line splitter,
 * request validation) and nothing that depends on libuv, so brictl links it
 * without the daemon's libraries. */
#ifndef BRI_RPC_PROTO_H
#define BRI_RPC_PROTO_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* JSON-RPC 2.0 codes (the spec's, then brid's in the server-error range). */
enum {
  RPC_PARSE_ERROR = -32700,      /* the line is not JSON */
  RPC_INVALID_REQUEST = -32600,  /* JSON, but not a request (or too long) */
  RPC_METHOD_NOT_FOUND = -32601,
  RPC_INVALID_PARAMS = -32602,
  RPC_INTERNAL_ERROR = -32603,
  RPC_FAILED = -32000,           /* the daemon could not do it (store, config...) */
  RPC_NOT_FOUND = -32001,        /* no such table or job */
  RPC_DENIED = -32002,           /* the peer is not allowed to use the socket */
  RPC_BAD_STATE = -32003,        /* e.g. cancelling a finished job */
  RPC_BUSY = -32005,             /* too many connections; try again */
};

/* Two access levels, two sockets. The control socket takes every method;
 * the read-only socket beside it (its name with "-ro" before ".sock":
 * /run/brid/brid.sock -> /run/brid/brid-ro.sock) takes only the methods
 * that change nothing: status, tables.list, tables.get, jobs.list,
 * jobs.get, metrics. */
bool rpc_method_reads_only(const char *method);
/* The read-only socket's path for the control socket at control. */
void rpc_readonly_socket(const char *control, char *out, size_t cap);

/* Short name of a code ("parse error", "not found", ...). */
const char *rpc_code_name(int code);

/* {"jsonrpc":"2.0","id":id,"result":result}; steals result, borrows id
 * (NULL means JSON null). */
json_t *rpc_result(json_t *id, json_t *result);
/* {"jsonrpc":"2.0","id":id,"error":{"code":code,"message":msg}}. */
json_t *rpc_error(json_t *id, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* {"jsonrpc":"2.0","id":id,"method":method,"params":params}; steals params. */
json_t *rpc_request(json_int_t id, const char *method, json_t *params);

/* The message as one line: compact JSON and '\n' (malloc'd; NULL on out of
 * memory). *len gets its length. */
char *rpc_line(const json_t *msg, size_t *len);

/* A validated request. */
typedef struct rpc_req {
  json_t *msg;        /* the whole parsed object (owned) */
  json_t *id;         /* borrowed from msg; NULL for a notification */
  const char *method; /* borrowed from msg */
  json_t *params;     /* borrowed from msg; an empty object when absent */
} rpc_req;

/* Parses one line (without its newline) into *req. On failure returns the
 * JSON-RPC code (negative), fills msg, and sets *id to a new reference of
 * the request's id when it could be read (else NULL), so the error reply
 * names the request when possible. */
int rpc_parse_request(const char *line, size_t len, rpc_req *req, json_t **id, char *msg,
                      size_t msgcap);
void rpc_req_clear(rpc_req *req);

/* Splits a byte stream into lines of at most max bytes. */
typedef struct rpc_lines {
  char *buf;
  size_t len, cap, max;
  size_t start; /* first byte not yet returned */
} rpc_lines;

void rpc_lines_init(rpc_lines *l, size_t max);
void rpc_lines_dispose(rpc_lines *l);
/* Appends n bytes. Returns 0, or -1 when the pending (unterminated) line
 * is longer than max, or -2 on out of memory. */
int rpc_lines_feed(rpc_lines *l, const char *data, size_t n);
/* Next complete line (without '\n' and a trailing '\r'), valid until the
 * next feed; false when none is complete. */
bool rpc_lines_next(rpc_lines *l, const char **line, size_t *len);

#endif
