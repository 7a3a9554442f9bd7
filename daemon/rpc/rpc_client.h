/* rpc_client.h: a blocking JSON-RPC client of brid's control socket, for
 * brictl (and tests): connect, send one request line, read one reply line.
 *
 * Main design choice: plain blocking sockets with poll() timeouts, no event
 * loop: a CLI makes a handful of calls and waits for each. Transport
 * failures (no socket, refused, timeout, a reply that is not JSON-RPC) and
 * error replies are told apart, because brictl maps them to different exit
 * codes. */
#ifndef BRI_RPC_CLIENT_H
#define BRI_RPC_CLIENT_H

#include <jansson.h>

#include "bri/error.h"

/* Where brid listens unless told otherwise. */
#define RPC_DEFAULT_SOCKET "/run/brid/brid.sock"

/* $BRID_SOCKET when set and non-empty, else RPC_DEFAULT_SOCKET. */
const char *rpc_default_socket(void);

typedef struct rpc_client rpc_client;

/* Connects to the Unix socket at path. Failure: BRI_ENOTFOUND when no
 * daemon listens there (no socket, or a stale one: "brid is not running:
 * ..."), else BRI_EIO with a message that says what to do; errno is
 * connect(2)'s (EACCES: the socket file's mode keeps this user out). */
int rpc_client_connect(const char *path, int timeout_ms, rpc_client **out, bri_error *err);

/* Calls method with params (stolen; NULL = {}). On success returns 0 and
 * *result (owned by the caller). An error reply returns BRI_EINVAL, sets
 * *rpc_code to its code and err to its message; a transport failure returns
 * BRI_EIO with *rpc_code 0. */
int rpc_client_call(rpc_client *c, const char *method, json_t *params, json_t **result,
                    int *rpc_code, bri_error *err);

/* Sends raw bytes and reads one reply line as JSON (tests of malformed
 * input). *reply owned by the caller. */
int rpc_client_raw(rpc_client *c, const char *bytes, size_t n, json_t **reply, bri_error *err);

void rpc_client_close(rpc_client *c);

#endif
