/* svc_metrics.h: brid's metrics, returned by the metrics method and served
 * on GET /metrics (svc_http.c): in the Prometheus text exposition format
 * (version 0.0.4), or as JSON (the same families).
 *
 * Main design choice: built on demand from the job store's monotonic
 * per-table, per-kind counters (which survive restarts and history
 * pruning, as Prometheus counters must) plus gauges read from the loop's
 * state; nothing is accumulated in memory that a restart would reset,
 * except the process's own event counters, which carry the usual
 * "since start" semantics. Built on any thread, from a view of the loop's
 * state (svc_view.h), the job store and the pool. */
#ifndef BRI_SVC_METRICS_H
#define BRI_SVC_METRICS_H

#include "brid/2_state/svc_state.h"
#include "svc_view.h"

/* [{name, type ("gauge" or "counter"), help, samples: [{labels: {name:
 * value}, value}]}]: every family, in the order of the text. */
json_t *svc_metrics_json(const svc_view *v, bri_jobs_store *store, svc_pool *pool);
/* The exposition text of svc_metrics_json (malloc'd), or NULL on out of
 * memory. */
char *svc_metrics_text(const svc_view *v, bri_jobs_store *store, svc_pool *pool);

#endif
