/* svc_control.c: the control socket server (see svc_control.h).
 *
 * Requests on one connection are answered in order, each to completion
 * before the next line is looked at (every method is a few store queries on
 * the loop thread, so there is nothing to overlap). A request line that
 * breaks the framing (longer than the limit) gets an error and closes the
 * connection, since the rest of that line cannot be told from the next
 * request; a line that is merely not valid JSON-RPC gets an error and the
 * connection goes on. */
#include "svc_control.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "rpc_proto.h"
#include "svc_api.h"
#include "svc_log.h"

#define MAX_PENDING_WRITE ((size_t)64 << 20)

typedef struct conn {
  uv_pipe_t pipe;
  svc_control *ctl;
  rpc_lines in;
  bool closing, close_when_flushed;
  size_t pending;
  svc_peer peer;
  struct conn *prev, *next;
} conn;

struct svc_control {
  brid *d;
  uv_pipe_t server;
  bool listening;
  char *path;
  conn *conns;
  size_t n_conns;
  char readbuf[65536];
};

typedef struct wreq {
  uv_write_t req;
  conn *c;
  char *buf;
  size_t len;
} wreq;

static void on_conn_closed(uv_handle_t *h) {
  conn *c = h->data;
  svc_control *ctl = c->ctl;
  if (c->prev) c->prev->next = c->next;
  else ctl->conns = c->next;
  if (c->next) c->next->prev = c->prev;
  ctl->n_conns--;
  rpc_lines_free(&c->in);
  free(c);
}

static void conn_close(conn *c) {
  if (c->closing) return;
  c->closing = true;
  uv_read_stop((uv_stream_t *)&c->pipe);
  uv_close((uv_handle_t *)&c->pipe, on_conn_closed);
}

static void on_written(uv_write_t *req, int status) {
  wreq *w = (wreq *)req;
  conn *c = w->c;
  c->pending -= w->len;
  free(w->buf);
  free(w);
  if (status < 0 && status != UV_ECANCELED) conn_close(c);
  else if (c->close_when_flushed && c->pending == 0) conn_close(c);
}

/* Queues msg (consumed) as one line. */
static void conn_send(conn *c, json_t *msg) {
  size_t len;
  char *line = rpc_line(msg, &len);
  json_decref(msg);
  if (c->closing) {
    free(line);
    return;
  }
  if (!line) {
    conn_close(c);
    return;
  }
  if (c->pending + len > MAX_PENDING_WRITE) {
    log_warn("control: peer pid %d does not read its replies (%zu bytes queued); disconnected", (int)c->peer.pid,
             c->pending);
    free(line);
    conn_close(c);
    return;
  }
  wreq *w = malloc(sizeof *w);
  if (!w) {
    free(line);
    conn_close(c);
    return;
  }
  w->c = c;
  w->buf = line;
  w->len = len;
  uv_buf_t b = uv_buf_init(line, (unsigned)len);
  if (uv_write(&w->req, (uv_stream_t *)&c->pipe, &b, 1, on_written) != 0) {
    free(line);
    free(w);
    conn_close(c);
    return;
  }
  c->pending += len;
}

static void conn_send_and_close(conn *c, json_t *msg) {
  uv_read_stop((uv_stream_t *)&c->pipe);
  c->close_when_flushed = true;
  conn_send(c, msg);
  if (!c->closing && c->pending == 0) conn_close(c);
}

static void handle_line(conn *c, const char *line, size_t len) {
  brid *d = c->ctl->d;
  d->n_requests++;
  rpc_req req;
  json_t *id = NULL;
  char msg[1024];
  int code = rpc_parse_request(line, len, &req, &id, msg, sizeof msg);
  if (code) {
    d->n_request_errors++;
    log_debug("control: pid %d: %s: %s", (int)c->peer.pid, rpc_code_name(code), msg);
    conn_send(c, rpc_error(id, code, "%s", msg));
    json_decref(id);
    return;
  }
  json_decref(id);
  json_t *result = svc_api_call(d, &req, &c->peer, &code, msg, sizeof msg);
  if (req.id) {
    if (result) {
      conn_send(c, rpc_result(req.id, result));
    } else {
      d->n_request_errors++;
      conn_send(c, rpc_error(req.id, code, "%s", msg));
    }
  } else {
    json_decref(result); /* a notification gets no reply */
  }
  rpc_req_clear(&req);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  conn *c = h->data;
  (void)suggested;
  /* one buffer for all connections: libuv fills it and calls on_read
   * before allocating again */
  *buf = uv_buf_init(c->ctl->readbuf, sizeof c->ctl->readbuf);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  conn *c = s->data;
  if (n < 0) {
    conn_close(c);
    return;
  }
  if (n == 0 || c->closing || c->close_when_flushed) return;
  int f = rpc_lines_feed(&c->in, buf->base, (size_t)n);
  if (f) {
    c->ctl->d->n_request_errors++;
    if (f == -1) log_warn("control: pid %d sent a request line over %zu bytes; disconnected", (int)c->peer.pid,
                          c->in.max);
    conn_send_and_close(c, f == -1 ? rpc_error(NULL, RPC_INVALID_REQUEST, "request line exceeds %zu bytes", c->in.max)
                                   : rpc_error(NULL, RPC_INTERNAL_ERROR, "out of memory"));
    return;
  }
  const char *line;
  size_t len;
  while (!c->closing && !c->close_when_flushed && rpc_lines_next(&c->in, &line, &len)) {
    bool blank = true;
    for (size_t i = 0; i < len && blank; i++) blank = line[i] == ' ' || line[i] == '\t';
    if (!blank) handle_line(c, line, len);
  }
}

/* SO_PEERCRED, and SO_PEERGROUPS for supplementary groups (Linux 4.13+;
 * without it only the primary group counts). */
static bool peer_allowed(const brid *d, int fd, svc_peer *p) {
  struct ucred cr;
  socklen_t l = sizeof cr;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) != 0) return false;
  p->uid = cr.uid, p->gid = cr.gid, p->pid = cr.pid;
  if (cr.uid == geteuid() || cr.uid == 0) return true;
  if (!d->cfg.socket_group) return false;
  if (cr.gid == d->cfg.socket_gid) return true;
  gid_t groups[256];
  socklen_t gl = sizeof groups;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &gl) == 0)
    for (size_t i = 0; i < gl / sizeof(gid_t); i++)
      if (groups[i] == d->cfg.socket_gid) return true;
  return false;
}

static void on_connection(uv_stream_t *server, int status) {
  svc_control *ctl = server->data;
  brid *d = ctl->d;
  if (status < 0) {
    log_warn("control: accept: %s", uv_strerror(status));
    return;
  }
  conn *c = calloc(1, sizeof *c);
  if (!c) return;
  c->ctl = ctl;
  rpc_lines_init(&c->in, (size_t)d->cfg.max_request_bytes);
  uv_pipe_init(&d->loop, &c->pipe, 0);
  c->pipe.data = c;
  c->next = ctl->conns;
  if (ctl->conns) ctl->conns->prev = c;
  ctl->conns = c;
  ctl->n_conns++;
  if (uv_accept(server, (uv_stream_t *)&c->pipe) != 0) {
    conn_close(c);
    return;
  }
  uv_os_fd_t fd;
  if (uv_fileno((uv_handle_t *)&c->pipe, &fd) != 0 || !peer_allowed(d, fd, &c->peer)) {
    d->n_peers_refused++;
    log_warn("control: refused peer uid %u gid %u pid %d: not brid's user%s", (unsigned)c->peer.uid,
             (unsigned)c->peer.gid, (int)c->peer.pid, d->cfg.socket_group ? " nor in socket_group" : "");
    conn_send_and_close(c, rpc_error(NULL, RPC_DENIED,
                                     "permission denied: uid %u is not brid's user (uid %u)%s%s", (unsigned)c->peer.uid,
                                     (unsigned)geteuid(), d->cfg.socket_group ? " and not in group " : "",
                                     d->cfg.socket_group ? d->cfg.socket_group : ""));
    return;
  }
  if (ctl->n_conns > (size_t)d->cfg.max_connections) {
    d->n_connections_refused++;
    log_warn("control: %zu connections open; refusing pid %d", ctl->n_conns - 1, (int)c->peer.pid);
    conn_send_and_close(c, rpc_error(NULL, RPC_BUSY, "too many connections (max_connections = %d); try again",
                                     d->cfg.max_connections));
    return;
  }
  uv_read_start((uv_stream_t *)&c->pipe, on_alloc, on_read);
}

/* A socket file left by a daemon that died is replaced; one that answers
 * belongs to a live daemon and is left alone. */
static int clear_stale(const char *path, bri_error *err) {
  struct stat st;
  if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : bri_error_errno(err, "lstat", path);
  if (!S_ISSOCK(st.st_mode))
    return bri_error_set(err, BRI_EINVAL, "%s exists and is not a socket: refusing to replace it", path);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
  int e = fd < 0 ? errno : connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 ? 0 : errno;
  if (fd >= 0) close(fd);
  if (e == 0) return bri_error_set(err, BRI_EINVAL, "another process (brid?) is listening on %s", path);
  /* only "nobody listens" proves the file stale */
  if (e != ECONNREFUSED)
    return bri_error_set(err, BRI_EINVAL, "%s: cannot tell whether the socket is in use (%s): refusing to replace it",
                         path, strerror(e));
  if (unlink(path) != 0 && errno != ENOENT) return bri_error_errno(err, "removing the stale socket", path);
  log_info("control: replaced the stale socket %s", path);
  return 0;
}

static void on_server_closed(uv_handle_t *h) { (void)h; }

int svc_control_open(brid *d, svc_control **out, bri_error *err) {
  *out = NULL;
  const char *path = d->cfg.socket_path;
  int rc = clear_stale(path, err);
  if (rc) return rc;
  svc_control *c = calloc(1, sizeof *c);
  if (!c || !(c->path = strdup(path))) {
    free(c);
    return bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  c->d = d;
  uv_pipe_init(&d->loop, &c->server, 0);
  c->server.data = c;
  int e = uv_pipe_bind(&c->server, path);
  if (!e) {
    /* until chmod, the umask applies (brid's unit sets 0077: owner only) */
    if (chmod(path, d->cfg.socket_mode) != 0) {
      rc = bri_error_errno(err, "chmod", path);
    } else if (d->cfg.socket_group && chown(path, (uid_t)-1, d->cfg.socket_gid) != 0) {
      rc = bri_error_errno(err, "chown (socket_group)", path);
    } else {
      e = uv_listen((uv_stream_t *)&c->server, 64, on_connection);
    }
  }
  if (e && !rc) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) *slash = 0;
    rc = bri_error_set(err, BRI_EIO, "cannot listen on %s: %s%s%s", path, uv_strerror(e),
                       e == UV_ENOENT ? ": no directory " : "", e == UV_ENOENT ? dir : "");
  }
  if (rc) {
    uv_close((uv_handle_t *)&c->server, on_server_closed);
    *out = c; /* freed by the caller after the loop closes the handle */
    return rc;
  }
  c->listening = true;
  *out = c;
  return 0;
}

void svc_control_close(svc_control *c) {
  if (!c) return;
  if (c->listening) {
    uv_close((uv_handle_t *)&c->server, on_server_closed);
    c->listening = false;
    unlink(c->path);
  }
  for (conn *k = c->conns; k; k = k->next) conn_close(k);
}

void svc_control_free(svc_control *c) {
  if (!c) return;
  free(c->path);
  free(c);
}

size_t svc_control_connections(const svc_control *c) { return c ? c->n_conns : 0; }
