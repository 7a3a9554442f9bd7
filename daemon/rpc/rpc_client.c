/* rpc_client.c: blocking client of brid's control socket (see rpc_client.h).
 *
 * Each call writes one request line and reads until the reply with the same
 * id arrives (notifications are never sent, so the first line is the reply;
 * a reply with another id is a protocol error). Replies are bounded
 * (RPC_CLIENT_MAX_REPLY) so a confused peer cannot make the CLI allocate
 * without end. */
#include "rpc/rpc_client.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "rpc/rpc_proto.h"

#define RPC_CLIENT_MAX_REPLY ((size_t)256 << 20)

struct rpc_client {
  int fd;
  int timeout_ms;
  char *path;
  rpc_lines in;
  json_int_t next_id;
};

const char *rpc_default_socket(void) {
  const char *s = getenv("BRID_SOCKET");
  return s && *s ? s : RPC_DEFAULT_SOCKET;
}

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int rpc_client_connect(const char *path, int timeout_ms, rpc_client **out, bri_error *err) {
  *out = NULL;
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof sa.sun_path)
    return bri_error_set(err, BRI_EINVAL, "socket path too long (at most %zu bytes): %s",
                         sizeof sa.sun_path - 1, path);
  strcpy(sa.sun_path, path);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return bri_error_errno(err, "socket", path);
  if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
    int e = errno;
    close(fd);
    int rc;
    if (e == ENOENT)
      rc = bri_error_set(err, BRI_ENOTFOUND, "brid is not running: no socket at %s (use --socket PATH "
                                             "or $BRID_SOCKET)", path);
    else if (e == ECONNREFUSED)
      rc = bri_error_set(err, BRI_ENOTFOUND, "brid is not running: nothing listens on %s", path);
    else if (e == EACCES || e == EPERM)
      rc = bri_error_set(err, BRI_EIO, "permission denied on %s: brictl must run as brid's user "
                                       "or in its socket group", path);
    else
      rc = (errno = e, bri_error_errno(err, "connect", path));
    errno = e;
    return rc;
  }
  rpc_client *c = calloc(1, sizeof *c);
  if (!c || !(c->path = strdup(path))) {
    free(c);
    close(fd);
    return bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  c->fd = fd;
  c->timeout_ms = timeout_ms > 0 ? timeout_ms : 30000;
  c->next_id = 1;
  rpc_lines_init(&c->in, RPC_CLIENT_MAX_REPLY);
  *out = c;
  return 0;
}

void rpc_client_close(rpc_client *c) {
  if (!c) return;
  close(c->fd);
  rpc_lines_dispose(&c->in);
  free(c->path);
  free(c);
}

static int send_all(rpc_client *c, const char *p, size_t n, bri_error *err) {
  while (n) {
    ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE || errno == ECONNRESET)
        return bri_error_set(err, BRI_EIO, "brid closed the connection on %s", c->path);
      return bri_error_errno(err, "send to", c->path);
    }
    p += w, n -= (size_t)w;
  }
  return 0;
}

/* Reads one line and parses it as JSON. */
static int read_reply(rpc_client *c, json_t **reply, bri_error *err) {
  int64_t deadline = now_ms() + c->timeout_ms;
  const char *line;
  size_t len;
  char buf[65536];
  while (!rpc_lines_next(&c->in, &line, &len)) {
    int64_t left = deadline - now_ms();
    if (left <= 0)
      return bri_error_set(err, BRI_EIO, "no reply from brid on %s within %d ms", c->path,
                           c->timeout_ms);
    struct pollfd p = {.fd = c->fd, .events = POLLIN};
    int r = poll(&p, 1, (int)left);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return bri_error_errno(err, "poll", c->path);
    if (r == 0) continue;
    ssize_t n = recv(c->fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      if (errno == ECONNRESET)
        return bri_error_set(err, BRI_EIO, "brid closed the connection on %s", c->path);
      return bri_error_errno(err, "recv from", c->path);
    }
    if (n == 0) return bri_error_set(err, BRI_EIO, "brid closed the connection on %s without a reply", c->path);
    int f = rpc_lines_feed(&c->in, buf, (size_t)n);
    if (f == -1) return bri_error_set(err, BRI_EIO, "reply from %s exceeds %zu bytes", c->path, RPC_CLIENT_MAX_REPLY);
    if (f) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  json_error_t je;
  *reply = json_loadb(line, len, 0, &je);
  if (!*reply || !json_is_object(*reply)) {
    json_decref(*reply);
    *reply = NULL;
    return bri_error_set(err, BRI_EIO, "malformed reply from brid on %s: %s", c->path,
                         je.text[0] ? je.text : "not an object");
  }
  return 0;
}

int rpc_client_raw(rpc_client *c, const char *bytes, size_t n, json_t **reply, bri_error *err) {
  *reply = NULL;
  int rc = send_all(c, bytes, n, err);
  return rc ? rc : read_reply(c, reply, err);
}

int rpc_client_call(rpc_client *c, const char *method, json_t *params, json_t **result,
                    int *rpc_code, bri_error *err) {
  *result = NULL;
  *rpc_code = 0;
  json_int_t id = c->next_id++;
  json_t *req = rpc_request(id, method, params);
  size_t len;
  char *line = rpc_line(req, &len);
  json_decref(req);
  if (!line) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  int rc = send_all(c, line, len, err);
  free(line);
  json_t *reply = NULL;
  /* a daemon that refuses the peer answers and closes at once, maybe before
   * the request was sent: its reply is still there to read */
  bri_error rerr;
  if (rc == 0) rc = read_reply(c, &reply, err);
  else if (read_reply(c, &reply, &rerr) == 0) rc = 0;
  if (rc) return rc;
  json_t *e = json_object_get(reply, "error");
  json_t *rid = json_object_get(reply, "id");
  if (e) {
    json_t *code = json_object_get(e, "code");
    json_t *msg = json_object_get(e, "message");
    *rpc_code = json_is_integer(code) ? (int)json_integer_value(code) : RPC_INTERNAL_ERROR;
    if (*rpc_code == 0) *rpc_code = RPC_INTERNAL_ERROR;
    bri_error_set(err, BRI_EINVAL, "%s", json_is_string(msg) ? json_string_value(msg) : rpc_code_name(*rpc_code));
    json_decref(reply);
    return BRI_EINVAL;
  }
  if (!json_is_integer(rid) || json_integer_value(rid) != id || !json_object_get(reply, "result")) {
    json_decref(reply);
    return bri_error_set(err, BRI_EIO, "malformed reply from brid on %s: no result for request %lld",
                         c->path, (long long)id);
  }
  *result = json_incref(json_object_get(reply, "result"));
  json_decref(reply);
  return 0;
}
