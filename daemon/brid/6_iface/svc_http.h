/* svc_http.h: brid's HTTP listener (metrics_listen, --metrics-listen):
 * GET /metrics (the Prometheus text of svc_metrics.h, the text `brictl
 * metrics` prints), GET /healthz (liveness) and GET /readyz (readiness),
 * read-only, served by libmicrohttpd on its own thread.
 *
 * Main design choice: the HTTP thread never reads the loop's state; it
 * serves a snapshot (the metrics text and the reasons brid is not ready)
 * that the loop renders on libuv's pool when asked through an async
 * handle, and falls back to the last snapshot when the loop does not
 * answer in time (svc_http.c says how). Off unless configured. */
#ifndef BRI_SVC_HTTP_H
#define BRI_SVC_HTTP_H

#include "brid/2_state/svc_state.h"

/* On the loop thread, before uv_run: binds d->cfg.metrics_listen and starts
 * serving, and publishes the address bound, port 0 resolved
 * ("127.0.0.1:41234"), as d->http_address. *out is NULL (and 0 returned)
 * when metrics_listen is off. */
int svc_http_open(brid *d, svc_http **out, bri_error *err);
/* On the loop thread: stops serving (joins the HTTP threads, closes every
 * HTTP connection and the listening socket) and closes the async handle.
 * NULL is fine. */
void svc_http_close(svc_http *h);
/* After the loop ran the close callbacks. NULL is fine. */
void svc_http_free(svc_http *h);
/* The module lifecycle drives (svc_daemon.c): start opens d->http, close
 * and dispose as above (close also when start failed: it undoes what start
 * did). */
extern const brid_module svc_http_module;

#endif
