/* svc_http.c: the HTTP listener (see svc_http.h): /metrics, /healthz and
 * /readyz for Prometheus and for probes, with libmicrohttpd.
 *
 * Threads. libmicrohttpd answers on its own thread; brid's state lives on
 * the libuv loop thread (svc_state.h), and the job store is read only off
 * the loop. They meet in one snapshot under one mutex (mu), and the HTTP
 * thread makes exactly one libuv call, uv_async_send (the one libuv allows
 * from any thread):
 *   - /metrics and /readyz take the snapshot if it is younger than
 *     FRESH_MS; otherwise they ask the loop for a new one (async) and wait
 *     on a condition variable for at most WAIT_MS from the ask, then answer
 *     from whatever snapshot there is. A stale one is served as it is by
 *     /metrics; /readyz answers 503 and says how old it is. While an ask is
 *     already overdue no request waits again, so a stuck loop delays one
 *     request, not every request.
 *   - the loop, woken by the async handle, records that it answered (what
 *     /healthz waits for: liveness is "the loop turns"), takes a view of its
 *     state (svc_view.h) and queues the render on libuv's pool: the metrics
 *     text (svc_metrics_text, the same function as `brictl metrics`) and the
 *     readiness checks (not_ready(): the one place a readiness condition is
 *     added). The done callback, on the loop, swaps the snapshot in and
 *     wakes the waiters. One render at a time, so at most one per FRESH_MS
 *     however many clients ask.
 * Hostile clients. libmicrohttpd bounds the connections at once
 * (CONN_LIMIT, and PER_IP_LIMIT from one address: on loopback every client
 * shares 127.0.0.1, so that is the cap there), the bytes of a request's
 * header (MEMORY_LIMIT: a longer header is refused with 431, a longer URL
 * with 414) and idle time. Its timeout restarts with every byte received,
 * so a reaper thread closes (shutdown(2)) each connection that has not sent
 * its request and taken its answer within request_timeout of connecting or
 * of its previous answer: a slowloris client cannot keep a slot. A
 * connection is in the reaper's table from libmicrohttpd's "started" to its
 * "closed" notification, which it sends before it closes the socket, so
 * the reaper never shuts a descriptor that was closed and reused. Only GET
 * and HEAD are served (405 otherwise) on the three paths (404 otherwise);
 * nothing a request says reaches brid's state. */
#include "svc_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bri/util.h"
#include "brid/1_leaves/svc_log.h"
#include "brid/3_exec/svc_worker.h"
#include "brid/4_sources/svc_roots.h"
#include "svc_metrics.h"
#include "svc_view.h"

#define FRESH_MS 1000            /* a snapshot this young is served without asking the loop */
#define WAIT_MS 2000             /* how long a request waits for the loop's new snapshot */
#define CONN_LIMIT 32            /* HTTP connections at once */
#define PER_IP_LIMIT 8           /* ... from one client address */
#define MEMORY_LIMIT (16 << 10)  /* a connection's buffer: the request header must fit */
#define REAP_EVERY_MS 200
#define BACKLOG 1024 /* a burst of connects waits in the kernel's queue, not in SYN-RECV retries that
                       * brid cannot see (a full queue delays a handshake by 1 s, then 3 s) */

/* A connection, in the reaper's table (under mu). */
typedef struct conn_slot {
  bool used, reaped;
  int fd;
  int64_t since_ms; /* connected, or its previous answer was sent */
} conn_slot;

struct svc_http {
  brid *d;
  struct MHD_Daemon *mhd;
  uv_async_t async;
  bool async_open;
  char addr[INET6_ADDRSTRLEN + 16];
  int64_t request_timeout_ms;

  pthread_mutex_t mu;
  pthread_cond_t cv;        /* a snapshot landed, the loop answered, or stopping */
  pthread_cond_t reaper_cv; /* stopping */
  /* under mu */
  char *metrics;            /* the snapshot's metrics text; NULL: none yet */
  char *not_ready;          /* its reasons, a line each ("" when ready) */
  int64_t rendered_ms;      /* when its view was taken */
  uint64_t generation;      /* snapshots landed (or renders that failed) */
  int64_t render_asked_ms;  /* an unanswered ask for a render (0: none) */
  int64_t ping_asked_ms;    /* an unanswered liveness ask (0: none) */
  int64_t loop_seen_ms;     /* the loop last answered an ask */
  bool stopping;
  conn_slot slots[CONN_LIMIT];

  pthread_t reaper;
  bool reaper_started;
  bool rendering; /* loop thread only */
};

/* Monotonic milliseconds (any thread). */
static int64_t mono_ms(void) { return (int64_t)(uv_hrtime() / 1000000); }

/* ----------------------------------------------------------- readiness */

/* Why brid is not ready, one line per reason ("" when ready), malloc'd.
 * The one place a readiness condition goes: each check below appends its
 * lines, and /readyz answers 503 with them when there are any. Runs on
 * libuv's pool, with a view of the loop's state: a check may read the job
 * store and the disks, never the loop's structures. */
static char *not_ready(const svc_view *v, bri_jobs_store *store) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  if (v->draining) fprintf(f, "draining: brid is stopping (SIGTERM) and starts no new job\n");
  /* the job store answers a query (SQLite, or PostgreSQL over its link) */
  uint64_t counts[BRI_JOB_NSTATES + 1];
  bri_error err;
  if (bri_jobs_count_states(store, 0, counts, &err)) fprintf(f, "job store %s: %s\n", v->state_path, err.msg);
  /* every root is reachable: none failed its last listing (svc_roots.h:
   * an S3 root's polls, a local root's sweeps and rescans), and every local
   * root is a directory brid can list now (a root made unreadable is seen
   * here before the next sweep) */
  for (size_t i = 0; i < v->n_root_states; i++) {
    const svc_root_view *rs = &v->root_states[i];
    const char *r = rs->root;
    bri_error why;
    if (rs->known && !rs->up)
      fprintf(f, "root %s: unreachable for %llds (%llu failed listing(s)): %s\n", r,
              (long long)((bri_now_ms() - rs->down_since_ms) / 1000), (unsigned long long)rs->failures,
              rs->last_error ? rs->last_error : "cannot list");
    else if ((svc_location_caps(r) & BRI_STORE_CAP_LOCAL) && svc_roots_local_listable(r, &why))
      fprintf(f, "root %s: %s\n", r, why.msg);
  }
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}

/* -------------------------------------------------- rendering, on the loop */

typedef struct render_req {
  uv_work_t req;
  svc_http *h;
  svc_view *view;
  int64_t taken_ms;
  char *metrics, *not_ready;
} render_req;

static void render_work(uv_work_t *req) {
  render_req *r = req->data;
  brid *d = r->h->d;
  bri_error err;
  (void)bri_failpoint("http.render", &err);
  bri_jobs_store *reads = svc_state_reads(d);
  r->metrics = svc_metrics_text(r->view, reads, d->pool);
  r->not_ready = not_ready(r->view, reads);
}

/* On the loop: a render ended. metrics and nr (taken) become the snapshot
 * when both are set; otherwise the previous snapshot stays, and why is
 * logged. Either way the waiters wake. */
static void landed(svc_http *h, char *metrics, char *nr, int64_t taken_ms, const char *failure) {
  bool ok = metrics && nr;
  pthread_mutex_lock(&h->mu);
  if (ok) {
    free(h->metrics), free(h->not_ready);
    h->metrics = metrics, h->not_ready = nr;
    metrics = nr = NULL;
    h->rendered_ms = taken_ms;
  }
  h->generation++;
  h->render_asked_ms = 0;
  pthread_cond_broadcast(&h->cv);
  pthread_mutex_unlock(&h->mu);
  if (!ok)
    log_warn("http: could not render the metrics (%s); serving the previous ones", failure ? failure : "out of memory");
  free(metrics), free(nr);
  h->rendering = false;
}

static void render_done(uv_work_t *req, int status) {
  render_req *r = req->data;
  landed(r->h, r->metrics, r->not_ready, r->taken_ms, status ? uv_strerror(status) : NULL);
  svc_view_free(r->view);
  free(r);
}

static void start_render(svc_http *h) {
  brid *d = h->d;
  render_req *r = calloc(1, sizeof *r);
  svc_pool_collect(d->pool); /* a job seen to have ended shows its table's new state */
  if (!r || !(r->view = svc_view_take(d, true))) {
    free(r);
    landed(h, NULL, NULL, 0, "out of memory");
    return;
  }
  r->req.data = r;
  r->h = h;
  r->taken_ms = mono_ms();
  h->rendering = true;
  int e = uv_queue_work(&d->loop, &r->req, render_work, render_done);
  if (e) render_done(&r->req, e);
}

/* The async handle: a request asked (liveness, a render, or both). */
static void on_async(uv_async_t *a) {
  svc_http *h = a->data;
  bri_error err;
  (void)bri_failpoint("http.loop_answer", &err);
  pthread_mutex_lock(&h->mu);
  h->loop_seen_ms = mono_ms();
  h->ping_asked_ms = 0;
  bool render = h->render_asked_ms != 0 && !h->rendering;
  pthread_cond_broadcast(&h->cv);
  pthread_mutex_unlock(&h->mu);
  if (render) start_render(h);
}

/* ------------------------------------------------- on the HTTP thread */

#define METRICS_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define TEXT_TYPE "text/plain; charset=utf-8"

/* Under mu: waits on cv until deadline_ms (monotonic) at the latest. */
static void wait_locked(svc_http *h, int64_t deadline_ms) {
  int64_t left = deadline_ms - mono_ms();
  if (left <= 0) return;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  ts.tv_sec += left / 1000;
  ts.tv_nsec += (left % 1000) * 1000000;
  if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
  pthread_cond_timedwait(&h->cv, &h->mu, &ts);
}

/* Under mu: asks the loop (*asked: the pending ask of that kind, if any;
 * one ask at a time) and returns when it was asked. */
static int64_t ask_locked(svc_http *h, int64_t *asked, int64_t now) {
  if (!*asked) {
    *asked = now;
    uv_async_send(&h->async);
  }
  return *asked;
}

/* Under mu: the snapshot, renewed first if it is older than FRESH_MS and
 * the loop answers within WAIT_MS of the ask. Its age in ms, -1 if none. */
static int64_t snapshot_locked(svc_http *h) {
  int64_t now = mono_ms();
  if (!h->metrics || now - h->rendered_ms >= FRESH_MS) {
    int64_t deadline = ask_locked(h, &h->render_asked_ms, now) + WAIT_MS;
    uint64_t g = h->generation;
    while (!h->stopping && h->generation == g && mono_ms() < deadline) wait_locked(h, deadline);
  }
  return h->metrics ? mono_ms() - h->rendered_ms : -1;
}

typedef struct answer {
  unsigned code;
  const char *type;
  char *body; /* malloc'd; NULL: out of memory */
} answer;

static answer text(unsigned code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static answer text(unsigned code, const char *fmt, ...) {
  answer a = {code, TEXT_TYPE, NULL};
  va_list ap;
  va_start(ap, fmt);
  if (vasprintf(&a.body, fmt, ap) < 0) a.body = NULL;
  va_end(ap);
  return a;
}

static answer metrics_answer(svc_http *h) {
  pthread_mutex_lock(&h->mu);
  answer a = snapshot_locked(h) < 0 ? text(503, "brid has not rendered its metrics yet: its loop or its job store did "
                                                "not answer within %d s\n", WAIT_MS / 1000)
                                    : (answer){200, METRICS_TYPE, strdup(h->metrics)};
  pthread_mutex_unlock(&h->mu);
  return a;
}

/* Kubernetes' readiness: 200 with nothing in not_ready(), else 503 naming
 * what is not ready; a snapshot the loop could not renew is not trusted. */
static answer ready_answer(svc_http *h) {
  pthread_mutex_lock(&h->mu);
  int64_t age = snapshot_locked(h);
  answer a;
  if (age < 0)
    a = text(503, "not ready: brid has not rendered its state yet (its loop or its job store did not answer within "
                  "%d s)\n", WAIT_MS / 1000);
  else if (age >= FRESH_MS + WAIT_MS)
    a = text(503, "not ready: brid's loop or its job store has not answered for %lld s; %s%s",
             (long long)(age / 1000), *h->not_ready ? "as of then:\n" : "ready as of then\n", h->not_ready);
  else if (*h->not_ready)
    a = text(503, "not ready:\n%s", h->not_ready);
  else
    a = text(200, "ready\n");
  pthread_mutex_unlock(&h->mu);
  return a;
}

/* Kubernetes' liveness: the loop turns (it answered within FRESH_MS before
 * the request, or answers within WAIT_MS of the ask). */
static answer health_answer(svc_http *h) {
  pthread_mutex_lock(&h->mu);
  int64_t now = mono_ms();
  if (now - h->loop_seen_ms >= FRESH_MS) {
    int64_t deadline = ask_locked(h, &h->ping_asked_ms, now) + WAIT_MS;
    while (!h->stopping && h->loop_seen_ms < now && mono_ms() < deadline) wait_locked(h, deadline);
  }
  answer a = h->loop_seen_ms >= now - FRESH_MS
                 ? text(200, "ok\n")
                 : text(503, "brid's event loop has not answered for %lld ms\n", (long long)(mono_ms() - h->loop_seen_ms));
  pthread_mutex_unlock(&h->mu);
  return a;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **req_cls) {
  svc_http *h = cls;
  (void)version, (void)upload_data;
  answer a;
  bool get = !strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD);
  /* GET and HEAD are answered once the request has been read (the call
   * after the header's, with no body left): answered earlier, the
   * connection could not be kept alive. A body sent with one is dropped
   * (the reaper bounds how long that may go on). */
  if (get && !*req_cls) {
    *req_cls = h;
    return MHD_YES;
  }
  if (get && *upload_data_size) {
    *upload_data_size = 0;
    return MHD_YES;
  }
  /* read-only: GET and HEAD (libmicrohttpd sends no body for HEAD); the
   * answer to anything else is queued before its body is read, and
   * libmicrohttpd closes the connection after it */
  if (!get)
    a = text(405, "method not allowed: brid's HTTP listener is read-only (GET and HEAD)\n");
  else if (!strcmp(url, "/metrics"))
    a = metrics_answer(h);
  else if (!strcmp(url, "/healthz"))
    a = health_answer(h);
  else if (!strcmp(url, "/readyz"))
    a = ready_answer(h);
  else
    a = text(404, "not found: brid serves /metrics, /healthz and /readyz\n");
  if (!a.body) return MHD_NO; /* out of memory: libmicrohttpd closes the connection */
  struct MHD_Response *r = MHD_create_response_from_buffer(strlen(a.body), a.body, MHD_RESPMEM_MUST_FREE);
  if (!r) {
    free(a.body);
    return MHD_NO;
  }
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, a.type);
  MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
  if (a.code == 405) MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
  enum MHD_Result ret = MHD_queue_response(c, a.code, r);
  MHD_destroy_response(r);
  return ret;
}

/* libmicrohttpd's own messages are about single connections (refused at
 * the limit, reset, malformed): debug level, or a flood of clients would
 * flood the journal. */
static void on_mhd_log(void *cls, const char *fmt, va_list ap) {
  (void)cls;
  char buf[512];
  vsnprintf(buf, sizeof buf, fmt, ap);
  size_t n = strlen(buf);
  while (n && buf[n - 1] == '\n') buf[--n] = 0;
  log_debug("http: %s", buf);
}

/* ------------------------------------------------------------ the reaper */

/* A connection enters the reaper's table when libmicrohttpd accepts it and
 * leaves it at its "closed" notification, sent before the socket is closed. */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe) {
  svc_http *h = cls;
  pthread_mutex_lock(&h->mu);
  if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    *socket_context = NULL;
    for (size_t i = 0; ci && i < CONN_LIMIT; i++)
      if (!h->slots[i].used) {
        h->slots[i] = (conn_slot){.used = true, .fd = ci->connect_fd, .since_ms = mono_ms()};
        *socket_context = &h->slots[i];
        break;
      }
  } else if (*socket_context) {
    ((conn_slot *)*socket_context)->used = false;
  }
  pthread_mutex_unlock(&h->mu);
}

/* An answer was sent: a kept-alive connection's next request gets its own
 * request_timeout. */
static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls, enum MHD_RequestTerminationCode toe) {
  svc_http *h = cls;
  (void)req_cls, (void)toe;
  const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  pthread_mutex_lock(&h->mu);
  if (ci && ci->socket_context) ((conn_slot *)ci->socket_context)->since_ms = mono_ms();
  pthread_mutex_unlock(&h->mu);
}

static void *reaper_main(void *arg) {
  svc_http *h = arg;
  pthread_mutex_lock(&h->mu);
  while (!h->stopping) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_nsec += REAP_EVERY_MS * 1000000L;
    if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
    pthread_cond_timedwait(&h->reaper_cv, &h->mu, &ts);
    int64_t now = mono_ms();
    int n = 0;
    for (size_t i = 0; i < CONN_LIMIT; i++) {
      conn_slot *s = &h->slots[i];
      if (s->used && !s->reaped && now - s->since_ms > h->request_timeout_ms) {
        shutdown(s->fd, SHUT_RDWR); /* libmicrohttpd sees the end and closes it */
        s->reaped = true;
        n++;
      }
    }
    if (n)
      log_debug("http: closed %d connection(s) that did not send a request and take its answer within "
                "request_timeout (%llds)", n, (long long)(h->request_timeout_ms / 1000));
  }
  pthread_mutex_unlock(&h->mu);
  return NULL;
}

/* ------------------------------------------------------------ life */

static bool is_loopback(const struct sockaddr_storage *ss) {
  if (ss->ss_family == AF_INET) return ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24 == 127;
  const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
  return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
}

/* The listening socket for c->metrics_listen; writes the address bound
 * (port 0 resolved) to addr. -1 with err set on failure. */
static int listen_socket(const svc_config *c, char *addr, size_t cap, bri_error *err) {
  const struct sockaddr_storage *ss = &c->metrics_addr;
  int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), one = 1;
  if (fd < 0) {
    int e = errno;
    bri_error_set(err, BRI_EIO, "metrics_listen %s: cannot create a TCP socket: %s%s", c->metrics_listen, strerror(e),
                  e == EAFNOSUPPORT || e == EPERM
                      ? " (under systemd, the unit's RestrictAddressFamilies= must allow AF_INET and AF_INET6)"
                      : "");
    return -1;
  }
  struct sockaddr_storage bound;
  socklen_t len = sizeof bound;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (ss->ss_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  if (bind(fd, (const struct sockaddr *)ss, c->metrics_addrlen) != 0 || listen(fd, BACKLOG) != 0 ||
      getsockname(fd, (struct sockaddr *)&bound, &len) != 0) {
    bri_error_set(err, BRI_EIO, "metrics_listen %s: cannot listen there: %s", c->metrics_listen, strerror(errno));
    close(fd);
    return -1;
  }
  char host[INET6_ADDRSTRLEN];
  bool v6 = bound.ss_family == AF_INET6;
  const void *a = v6 ? (const void *)&((struct sockaddr_in6 *)&bound)->sin6_addr
                     : (const void *)&((struct sockaddr_in *)&bound)->sin_addr;
  unsigned port = ntohs(v6 ? ((struct sockaddr_in6 *)&bound)->sin6_port : ((struct sockaddr_in *)&bound)->sin_port);
  inet_ntop(bound.ss_family, a, host, sizeof host);
  snprintf(addr, cap, "%s%s%s:%u", v6 ? "[" : "", host, v6 ? "]" : "", port);
  return fd;
}

int svc_http_open(brid *d, svc_http **out, bri_error *err) {
  *out = NULL;
  if (!d->cfg.metrics_listen) return 0;
  svc_http *h = calloc(1, sizeof *h);
  if (!h) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  h->d = d;
  h->request_timeout_ms = d->cfg.request_timeout_sec * 1000;
  h->loop_seen_ms = mono_ms();
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_mutex_init(&h->mu, NULL);
  pthread_cond_init(&h->cv, &ca);
  pthread_cond_init(&h->reaper_cv, &ca);
  pthread_condattr_destroy(&ca);
  *out = h; /* svc_http_close and svc_http_free undo what follows, whatever failed */
  int fd = listen_socket(&d->cfg, h->addr, sizeof h->addr, err);
  if (fd < 0) return err->code;
  uv_async_init(&d->loop, &h->async, on_async);
  h->async.data = h;
  h->async_open = true;
  int e = pthread_create(&h->reaper, NULL, reaper_main, h);
  if (e) {
    close(fd);
    return bri_error_set(err, BRI_EIO, "metrics_listen: cannot start a thread: %s", strerror(e));
  }
  h->reaper_started = true;
  unsigned timeout_s = (unsigned)d->cfg.request_timeout_sec;
  h->mhd = MHD_start_daemon(
      MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_USE_ERROR_LOG |
          (d->cfg.metrics_addr.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
      0, NULL, NULL, on_request, h, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONN_LIMIT,
      MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)PER_IP_LIMIT, MHD_OPTION_CONNECTION_TIMEOUT, timeout_s,
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)MEMORY_LIMIT, MHD_OPTION_STRICT_FOR_CLIENT, 1,
      MHD_OPTION_NOTIFY_CONNECTION, on_connection, h, MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
      MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, h, MHD_OPTION_END);
  if (!h->mhd) /* fd not closed here: some of libmicrohttpd's failure paths close it; brid exits next */
    return bri_error_set(err, BRI_EIO, "metrics_listen %s: libmicrohttpd could not start serving", h->addr);
  if (!is_loopback(&d->cfg.metrics_addr))
    log_warn("metrics_listen %s is not a loopback address: whoever can reach it reads brid's metrics (table paths, "
             "error messages); restrict it with a firewall", d->cfg.metrics_listen);
  log_notice("http: serving /metrics, /healthz and /readyz on http://%s", h->addr);
  d->http_address = h->addr; /* published for the status (svc_view.c) */
  return 0;
}

void svc_http_close(svc_http *h) {
  if (!h) return;
  pthread_mutex_lock(&h->mu);
  h->stopping = true; /* waiting requests answer at once */
  pthread_cond_broadcast(&h->cv);
  pthread_cond_broadcast(&h->reaper_cv);
  pthread_mutex_unlock(&h->mu);
  if (h->reaper_started) pthread_join(h->reaper, NULL);
  h->reaper_started = false;
  if (h->mhd) MHD_stop_daemon(h->mhd); /* joins its thread: no uv_async_send after this */
  h->mhd = NULL;
  if (h->async_open) uv_close((uv_handle_t *)&h->async, NULL);
  h->async_open = false;
}

void svc_http_free(svc_http *h) {
  if (!h) return;
  pthread_mutex_destroy(&h->mu);
  pthread_cond_destroy(&h->cv);
  pthread_cond_destroy(&h->reaper_cv);
  free(h->metrics), free(h->not_ready);
  free(h);
}

static int http_start(brid *d, bri_error *err) { return svc_http_open(d, &d->http, err); }
static void http_close(brid *d) { svc_http_close(d->http); }
static void http_dispose(brid *d) {
  d->http_address = NULL;
  svc_http_free(d->http);
}

const brid_module svc_http_module = {.name = "http", .start = http_start, .close = http_close, .dispose = http_dispose};
