/* svc_control.c: the control socket server (see svc_control.h).
 *
 * Requests on one connection are answered in order, each to completion
 * before the next line is looked at; a request runs on libuv's thread pool
 * (the job store may wait on a disk, the loop never does), and the
 * connection reads nothing more until it comes back. A request line that
 * breaks the framing (longer than the limit) gets an error and closes the
 * connection, since the rest of that line cannot be told from the next
 * request; a line that is merely not valid JSON-RPC gets an error and the
 * connection goes on.
 *
 * No peer can hold the loop thread or a slot for long: a connection is read
 * only while less than HIGH_WATER bytes of its replies wait to be taken
 * (backpressure through the socket, so a peer that never reads costs at most
 * that much memory), at most LINES_PER_TURN of its lines are handled before
 * other connections get a turn, and one sweeping timer closes connections
 * whose request line or queued reply did not move within request_timeout or
 * that sat idle for idle_timeout. When all slots are taken, the connection
 * stalled longest gives its slot to a newcomer. */
#include "svc_control.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "brid/1_leaves/svc_log.h"
#include "brid/4_sources/svc_watch.h"
#include "rpc/rpc_proto.h"
#include "svc_api.h"

#define MAX_PENDING_WRITE ((size_t)64 << 20)
/* stop reading a peer with this many reply bytes queued, resume below LOW_WATER */
#define HIGH_WATER ((size_t)256 << 10)
#define LOW_WATER ((size_t)64 << 10)
#define LINES_PER_TURN 64
/* a connection without a complete request for this long may be evicted */
#define EVICT_AFTER_MS 500
#define SWEEP_MS 250

typedef struct conn {
  uv_pipe_t pipe;
  svc_control *ctl;
  rpc_lines in;
  bool closing, close_when_flushed;
  bool counted; /* holds one of the max_connections slots */
  bool paused;  /* reading stopped: replies queued, or lines left for the next turn */
  bool yielded; /* lines left for the next turn (on the idle handle) */
  size_t pending;
  bool busy;    /* a request runs on the thread pool; the next line waits */
  bool dead;    /* closed while busy: freed when the request comes back */
  uint64_t active_ms;    /* accepted, last complete request or reply taken */
  uint64_t line_ms;      /* first byte of the unfinished request line (0: none) */
  uint64_t write_ms;     /* last progress of the queued replies (pending > 0) */
  svc_peer peer;
  struct conn *prev, *next;
} conn;

/* One listening socket: the control socket, or the read-only one. */
typedef struct listener {
  uv_pipe_t pipe;
  svc_control *ctl;
  bool readonly;
  bool listening, open; /* open: the handle needs closing */
  char *path;
} listener;

struct svc_control {
  brid *d;
  listener srv[2]; /* [0] control, [1] read-only */
  uv_timer_t sweep;
  uv_idle_t turn;
  bool handles;
  conn *conns;
  size_t n_conns; /* in the list (closing ones until their close callback) */
  size_t n_slots; /* connections holding a slot */
  size_t fd_slots; /* what the open-file limit leaves for connections */
  int reserve_fd;  /* closed to accept (and refuse) a peer when out of fds */
  uint64_t nofile;      /* RLIMIT_NOFILE (soft) at start-up */
  uint64_t emfile_logged_ms, refused_logged_ms;
  size_t n_refused_quiet; /* refusals not logged yet */
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
  ctl->d->connections = --ctl->n_conns; /* published for the status (svc_view.c) */
  if (ctl->n_conns == 0 && ctl->handles) uv_timer_stop(&ctl->sweep);
  if (c->busy) {
    c->dead = true; /* its request comes back to a closed connection */
    return;
  }
  rpc_lines_dispose(&c->in);
  free(c);
}

static void release_slot(conn *c) {
  if (!c->counted) return;
  c->counted = false;
  c->ctl->n_slots--;
}

static void conn_close(conn *c) {
  if (c->closing) return;
  c->closing = true;
  release_slot(c);
  uv_read_stop((uv_stream_t *)&c->pipe);
  uv_close((uv_handle_t *)&c->pipe, on_conn_closed);
}

static uint64_t now_ms(const conn *c) { return uv_now(&c->ctl->d->loop); }

static void drain(conn *c);

static void on_written(uv_write_t *req, int status) {
  wreq *w = (wreq *)req;
  conn *c = w->c;
  c->pending -= w->len;
  c->write_ms = now_ms(c);
  if (c->pending == 0) c->active_ms = c->write_ms;
  free(w->buf);
  free(w);
  if (status < 0 && status != UV_ECANCELED) conn_close(c);
  else if (c->close_when_flushed && c->pending == 0) conn_close(c);
  else if (!c->closing && c->paused && !c->yielded && c->pending <= LOW_WATER) drain(c);
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
  if (c->pending == 0) c->write_ms = now_ms(c);
  c->pending += len;
}

static void conn_send_and_close(conn *c, json_t *msg) {
  uv_read_stop((uv_stream_t *)&c->pipe);
  release_slot(c);
  c->close_when_flushed = true;
  conn_send(c, msg);
  if (!c->closing && c->pending == 0) conn_close(c);
}

/* A refusal at accept: the line fits an empty socket buffer, so it is
 * written at once and the descriptor closed now, not an iteration later (a
 * flood of refused peers must not pile up descriptors). */
static void refuse(conn *c, json_t *msg) {
  size_t len;
  char *line = rpc_line(msg, &len);
  json_decref(msg);
  if (line) {
    uv_buf_t b = uv_buf_init(line, (unsigned)len);
    (void)uv_try_write((uv_stream_t *)&c->pipe, &b, 1);
    free(line);
  }
  conn_close(c);
}

/* A request running on libuv's thread pool (svc_api.h: prepared on the
 * loop, executed there, finished here): the loop never waits on the job
 * store. The connection reads no further line until it comes back, so
 * replies keep the order of the requests. */
typedef struct api_work {
  uv_work_t req;
  conn *c;
  svc_call *call;
  json_t *id; /* NULL for a notification */
} api_work;

static void api_run(uv_work_t *req) { svc_api_execute(((api_work *)req)->call); }
static void api_done(uv_work_t *req, int status);

static void api_queue(api_work *w) {
  brid *d = w->c->ctl->d;
  int e = uv_queue_work(&d->loop, &w->req, api_run, api_done);
  if (e) api_done(&w->req, e); /* answered as an internal error */
}

static void api_rediscovered(void *user) {
  api_work *w = user;
  if (svc_api_refresh(w->c->ctl->d, w->call)) {
    api_done(&w->req, UV_ENOMEM);
    return;
  }
  api_queue(w);
}

static void api_done(uv_work_t *req, int status) {
  api_work *w = (api_work *)req;
  conn *c = w->c;
  brid *d = c->ctl->d;
  svc_call *call = w->call;
  if (status == 0 && (call->post & SVC_POST_DISCOVER) && !call->discovered) {
    /* a table brid had not discovered yet: look, then run once more */
    call->discovered = true;
    svc_watch_discover_then(d, api_rediscovered, w);
    return;
  }
  char msg[1024];
  int code = RPC_INTERNAL_ERROR;
  json_t *result = NULL;
  if (status == 0) result = svc_api_finish(d, call, &code, msg, sizeof msg);
  else snprintf(msg, sizeof msg, "internal error: %s", uv_strerror(status));
  if (!result) d->n_request_errors++;
  c->busy = false;
  if (c->dead) {
    json_decref(result);
    rpc_lines_dispose(&c->in);
    free(c);
  } else {
    if (!w->id) json_decref(result); /* a notification gets no reply */
    else if (result) conn_send(c, rpc_result(w->id, result));
    else conn_send(c, rpc_error(w->id, code, "%s", msg));
    if (!c->closing) drain(c);
  }
  json_decref(w->id);
  svc_api_free(call);
  free(w);
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
  svc_call *call = svc_api_prepare(d, &req, &c->peer, &code, msg, sizeof msg);
  api_work *w = call ? calloc(1, sizeof *w) : NULL;
  if (!w) {
    if (call) code = RPC_INTERNAL_ERROR, snprintf(msg, sizeof msg, "out of memory");
    svc_api_free(call);
    d->n_request_errors++;
    if (req.id) conn_send(c, rpc_error(req.id, code, "%s", msg));
    rpc_req_clear(&req);
    return;
  }
  w->c = c, w->call = call, w->id = req.id ? json_incref(req.id) : NULL;
  rpc_req_clear(&req);
  c->busy = true;
  api_queue(w);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  conn *c = h->data;
  (void)suggested;
  /* one buffer for all connections: libuv fills it and calls on_read
   * before allocating again */
  *buf = uv_buf_init(c->ctl->readbuf, sizeof c->ctl->readbuf);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf);

static void pause_reading(conn *c) {
  if (c->paused) return;
  c->paused = true;
  uv_read_stop((uv_stream_t *)&c->pipe);
}

static void on_turn(uv_idle_t *h);

/* Handles the complete lines buffered, within this turn's budget and while
 * the peer keeps up with the replies; reads again when all are done. */
static void drain(conn *c) {
  int budget = LINES_PER_TURN;
  bool completed = false;
  const char *line;
  size_t len;
  while (!c->closing && !c->close_when_flushed) {
    if (c->busy) {
      pause_reading(c); /* api_done drains again */
      return;
    }
    if (c->pending > HIGH_WATER) {
      pause_reading(c); /* on_written resumes */
      return;
    }
    if (budget == 0) {
      pause_reading(c);
      c->yielded = true;
      uv_idle_start(&c->ctl->turn, on_turn);
      return;
    }
    if (!rpc_lines_next(&c->in, &line, &len)) break;
    budget--;
    completed = true;
    c->active_ms = now_ms(c);
    bool blank = true;
    for (size_t i = 0; i < len && blank; i++) blank = line[i] == ' ' || line[i] == '\t';
    if (!blank) handle_line(c, line, len);
  }
  if (c->closing || c->close_when_flushed) return;
  /* what is left is the start of the next line */
  if (c->in.start < c->in.len) {
    if (completed || !c->line_ms) c->line_ms = now_ms(c);
  } else {
    c->line_ms = 0;
  }
  if (c->paused) {
    c->paused = false;
    uv_read_start((uv_stream_t *)&c->pipe, on_alloc, on_read);
  }
}

/* The next turn of the connections that used up their budget. */
static void on_turn(uv_idle_t *h) {
  svc_control *ctl = h->data;
  bool more = false;
  for (conn *c = ctl->conns; c; c = c->next) {
    if (!c->yielded) continue;
    c->yielded = false;
    if (!c->closing) drain(c);
    more |= c->yielded;
  }
  if (!more) uv_idle_stop(h);
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
  drain(c);
}

/* Every SWEEP_MS while connections are open: the timeouts. */
static void on_sweep(uv_timer_t *t) {
  svc_control *ctl = t->data;
  const svc_config *cfg = &ctl->d->cfg;
  uint64_t now = uv_now(&ctl->d->loop);
  uint64_t req_ms = (uint64_t)cfg->request_timeout_sec * 1000, idle_ms = (uint64_t)cfg->idle_timeout_sec * 1000;
  for (conn *c = ctl->conns; c; c = c->next) {
    if (c->closing) continue;
    int pid = (int)c->peer.pid;
    if (c->pending > 0 && now - c->write_ms >= req_ms) {
      log_warn("control: peer pid %d does not read its replies (%zu bytes queued for %llds, request_timeout); "
               "disconnected", pid, c->pending, (long long)cfg->request_timeout_sec);
      conn_close(c);
    } else if (c->close_when_flushed) {
      continue;
    } else if (!c->busy && c->line_ms && now - c->line_ms >= req_ms) {
      ctl->d->n_request_errors++;
      log_warn("control: pid %d did not complete a request line within %llds (request_timeout); disconnected", pid,
               (long long)cfg->request_timeout_sec);
      conn_send_and_close(c, rpc_error(NULL, RPC_INVALID_REQUEST,
                                       "request not completed within %lld s (request_timeout); closing",
                                       (long long)cfg->request_timeout_sec));
    } else if (!c->line_ms && c->pending == 0 && !c->paused && now - c->active_ms >= idle_ms) {
      log_info("control: pid %d idle for %llds (idle_timeout); closed", pid, (long long)cfg->idle_timeout_sec);
      conn_close(c);
    }
  }
}

/* The connection that has gone longest without a complete request (at
 * least EVICT_AFTER_MS) and has nothing in flight, or NULL. */
static conn *stalled_longest(svc_control *ctl, uint64_t now) {
  conn *best = NULL;
  uint64_t best_since = 0;
  for (conn *c = ctl->conns; c; c = c->next) {
    if (!c->counted || c->pending || c->paused) continue;
    uint64_t since = c->line_ms ? c->line_ms : c->active_ms;
    if (now - since < EVICT_AFTER_MS) continue;
    if (!best || since < best_since) best = c, best_since = since;
  }
  return best;
}

/* accept(2) failed for lack of descriptors (something else in brid holds
 * them): libuv closes the waiting peers with its own spare descriptor, but
 * when that one is lost it would retry at once, forever. Ours lets one peer
 * in to be told why, and is reopened after. */
static void refuse_without_fds(svc_control *ctl, int status) {
  uint64_t now = uv_now(&ctl->d->loop);
  if (now - ctl->emfile_logged_ms >= 10000 || !ctl->emfile_logged_ms) {
    ctl->emfile_logged_ms = now ? now : 1;
    log_err("control: accept: %s: brid is out of file descriptors; refusing connections", uv_strerror(status));
  }
  ctl->d->n_connections_refused++;
  if (ctl->reserve_fd < 0) ctl->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (ctl->reserve_fd < 0) {
    /* no spare either: a stalled connection's descriptor ends the retries */
    conn *v = stalled_longest(ctl, now);
    if (v) conn_close(v);
    return;
  }
  close(ctl->reserve_fd);
  uv_os_fd_t lfd;
  int fd = uv_fileno((uv_handle_t *)&ctl->srv[0].pipe, &lfd) == 0
               ? accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)
               : -1;
  if (fd >= 0) {
    static const char msg[] = "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32005,\"message\":"
                              "\"brid is out of file descriptors; try again\"}}\n";
    (void)!write(fd, msg, sizeof msg - 1);
    close(fd);
  }
  ctl->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

static bool in_group(int fd, gid_t primary, gid_t gid) {
  if (primary == gid) return true;
  gid_t groups[256];
  socklen_t gl = sizeof groups;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &gl) == 0)
    for (size_t i = 0; i < gl / sizeof(gid_t); i++)
      if (groups[i] == gid) return true;
  return false;
}

/* SO_PEERCRED, and SO_PEERGROUPS for supplementary groups (Linux 4.13+;
 * without it only the primary group counts). The control socket admits
 * brid's user, root and socket_group; the read-only socket those and
 * readonly_group, or anyone when no readonly_group is set. */
static bool peer_allowed(const brid *d, int fd, bool readonly, svc_peer *p) {
  struct ucred cr;
  socklen_t l = sizeof cr;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) != 0) return false;
  p->uid = cr.uid, p->gid = cr.gid, p->pid = cr.pid;
  p->readonly = readonly;
  if (cr.uid == geteuid() || cr.uid == 0) return true;
  if (d->cfg.socket_group && in_group(fd, cr.gid, d->cfg.socket_gid)) return true;
  return readonly && (!d->cfg.readonly_group || in_group(fd, cr.gid, d->cfg.readonly_gid));
}

static void on_connection(uv_stream_t *server, int status) {
  listener *ls = server->data;
  svc_control *ctl = ls->ctl;
  brid *d = ctl->d;
  if (status == UV_EMFILE || status == UV_ENFILE) {
    refuse_without_fds(ctl, status);
    return;
  }
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
  if (ctl->n_conns++ == 0) uv_timer_start(&ctl->sweep, on_sweep, SWEEP_MS, SWEEP_MS);
  d->connections = ctl->n_conns; /* published for the status (svc_view.c) */
  uint64_t now = uv_now(&d->loop);
  c->active_ms = now;
  if (uv_accept(server, (uv_stream_t *)&c->pipe) != 0) {
    conn_close(c);
    return;
  }
  uv_os_fd_t fd;
  if (uv_fileno((uv_handle_t *)&c->pipe, &fd) != 0 || !peer_allowed(d, fd, ls->readonly, &c->peer)) {
    d->n_peers_refused++;
    const char *g = ls->readonly ? d->cfg.readonly_group : d->cfg.socket_group;
    log_warn("control: refused peer uid %u gid %u pid %d on the %s socket: not brid's user%s%s", (unsigned)c->peer.uid,
             (unsigned)c->peer.gid, (int)c->peer.pid, ls->readonly ? "read-only" : "control",
             d->cfg.socket_group ? " nor in socket_group" : "", ls->readonly && g ? " nor in readonly_group" : "");
    refuse(c, rpc_error(NULL, RPC_DENIED, "permission denied: uid %u is not brid's user (uid %u)%s%s%s%s",
                        (unsigned)c->peer.uid, (unsigned)geteuid(), d->cfg.socket_group ? " and not in group " : "",
                        d->cfg.socket_group ? d->cfg.socket_group : "", ls->readonly && g ? " nor in group " : "",
                        ls->readonly && g ? g : ""));
    return;
  }
  size_t limit = (size_t)d->cfg.max_connections;
  bool by_fds = ctl->fd_slots < limit;
  if (by_fds) limit = ctl->fd_slots;
  if (ctl->n_slots >= limit) {
    conn *v = stalled_longest(ctl, now);
    if (v) {
      log_info("control: %zu connections open; closing pid %d's, without a request for %.1fs, for pid %d",
               ctl->n_slots, (int)v->peer.pid, (double)(now - (v->line_ms ? v->line_ms : v->active_ms)) / 1000,
               (int)c->peer.pid);
      conn_close(v);
    }
  }
  if (ctl->n_slots >= limit) {
    d->n_connections_refused++;
    ctl->n_refused_quiet++;
    if (now - ctl->refused_logged_ms >= 10000 || !ctl->refused_logged_ms) {
      log_warn("control: %zu connections open, all busy; refusing pid %d (%zu refused since the last message)",
               ctl->n_slots, (int)c->peer.pid, ctl->n_refused_quiet);
      ctl->refused_logged_ms = now ? now : 1;
      ctl->n_refused_quiet = 0;
    }
    if (by_fds)
      refuse(c, rpc_error(NULL, RPC_BUSY,
                          "too many connections (%zu: what brid's open-file limit of %llu leaves after its own file "
                          "descriptors; max_connections = %d); try again",
                          limit, (unsigned long long)ctl->nofile, d->cfg.max_connections));
    else
      refuse(c, rpc_error(NULL, RPC_BUSY, "too many connections (max_connections = %d); try again",
                          d->cfg.max_connections));
    return;
  }
  c->counted = true;
  ctl->n_slots++;
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

/* Descriptors open in this process. */
static size_t open_fds(void) {
  size_t n = 0;
  DIR *dir = opendir("/proc/self/fd");
  if (!dir) return 32; /* a guess: no /proc */
  for (struct dirent *e; (e = readdir(dir)) != NULL;)
    if (e->d_name[0] != '.') n++;
  closedir(dir);
  return n > 0 ? n - 1 : 0; /* not the one reading the directory */
}

/* Binds, sets the mode and group, and listens. */
static int listen_on(svc_control *c, listener *ls, const char *path, bool readonly, unsigned mode, const char *group,
                     gid_t gid, bri_error *err) {
  brid *d = c->d;
  int rc = clear_stale(path, err);
  if (rc) return rc;
  ls->ctl = c;
  ls->readonly = readonly;
  if (!(ls->path = strdup(path))) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  uv_pipe_init(&d->loop, &ls->pipe, 0);
  ls->pipe.data = ls;
  ls->open = true;
  int e = uv_pipe_bind(&ls->pipe, path);
  if (!e) {
    /* until chmod, the umask applies (brid's unit sets 0007); no one can
     * connect before uv_listen below anyway */
    if (chmod(path, mode) != 0) {
      rc = bri_error_errno(err, "chmod", path);
    } else if (group && chown(path, (uid_t)-1, gid) != 0) {
      rc = bri_error_errno(err, readonly ? "chown (readonly_group)" : "chown (socket_group)", path);
    } else {
      /* room for bursts: a client connecting without blocking gets EAGAIN
       * when the backlog is full, and refusals are quick anyway */
      e = uv_listen((uv_stream_t *)&ls->pipe, 256, on_connection);
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
  if (!rc) ls->listening = true;
  return rc;
}

int svc_control_open(brid *d, svc_control **out, bri_error *err) {
  *out = NULL;
  svc_control *c = calloc(1, sizeof *c);
  if (!c) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  c->d = d;
  c->reserve_fd = -1;
  *out = c; /* on failure freed by the caller after the loop closes the handles */
  int rc = listen_on(c, &c->srv[0], d->cfg.socket_path, false, d->cfg.socket_mode, d->cfg.socket_group,
                     d->cfg.socket_gid, err);
  /* the read-only socket: anyone may connect when no readonly_group is
   * set; the credential check decides the rest */
  if (!rc)
    rc = listen_on(c, &c->srv[1], d->cfg.readonly_socket, true, d->cfg.readonly_group ? 0660 : 0666,
                   d->cfg.readonly_group, d->cfg.readonly_gid, err);
  if (rc) {
    svc_control_close(c);
    return rc;
  }
  uv_timer_init(&d->loop, &c->sweep);
  c->sweep.data = c;
  uv_idle_init(&d->loop, &c->turn);
  c->turn.data = c;
  c->handles = true;
  c->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  /* a quarter of the open-file limit stays for brid's own files (store,
   * tables, watches); connections get what is left */
  struct rlimit rl;
  c->nofile = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? (uint64_t)rl.rlim_cur : 1 << 20;
  size_t used = open_fds(), keep = c->nofile / 4 > 16 ? (size_t)(c->nofile / 4) : 16;
  c->fd_slots = c->nofile > used + keep + 1 ? (size_t)c->nofile - used - keep : 1;
  if (c->fd_slots < (size_t)d->cfg.max_connections)
    log_warn("control: the open-file limit (%llu, %zu in use) leaves room for %zu control connections, fewer than "
             "max_connections = %d (raise LimitNOFILE= or ulimit -n)",
             (unsigned long long)c->nofile, used, c->fd_slots, d->cfg.max_connections);
  return 0;
}

void svc_control_close(svc_control *c) {
  if (!c) return;
  for (int i = 0; i < 2; i++) {
    listener *ls = &c->srv[i];
    if (ls->open) uv_close((uv_handle_t *)&ls->pipe, on_server_closed);
    /* only a socket this daemon listened on is its to remove */
    if (ls->listening) unlink(ls->path);
    ls->open = ls->listening = false;
  }
  if (c->handles) {
    uv_close((uv_handle_t *)&c->sweep, on_server_closed);
    uv_close((uv_handle_t *)&c->turn, on_server_closed);
    c->handles = false;
  }
  if (c->reserve_fd >= 0) close(c->reserve_fd);
  c->reserve_fd = -1;
  for (conn *k = c->conns; k; k = k->next) conn_close(k);
}

void svc_control_free(svc_control *c) {
  if (!c) return;
  free(c->srv[0].path);
  free(c->srv[1].path);
  free(c);
}

static int control_start(brid *d, bri_error *err) { return svc_control_open(d, &d->ctl, err); }
static void control_close(brid *d) { svc_control_close(d->ctl); }
static void control_dispose(brid *d) { svc_control_free(d->ctl); }

const brid_module svc_control_module = {.name = "control",
                                        .start = control_start,
                                        .close = control_close,
                                        .dispose = control_dispose};
