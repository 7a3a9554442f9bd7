/* svc_metrics.h: brid's metrics, returned by the metrics method: in the
 * Prometheus text exposition format (version 0.0.4), for a scraper or
 * node_exporter's textfile collector, or as JSON (the same families).
 *
 * Main design choice: built on demand from the job store's monotonic
 * per-table, per-kind counters (which survive restarts and history
 * pruning, as Prometheus counters must) plus gauges read from the loop's
 * state; nothing is accumulated in memory that a restart would reset,
 * except the process's own event counters, which carry the usual
 * "since start" semantics. */
#ifndef BRI_SVC_METRICS_H
#define BRI_SVC_METRICS_H

#include "svc_daemon.h"

/* [{name, type ("gauge" or "counter"), help, samples: [{labels: {name:
 * value}, value}]}]: every family, in the order of the text. */
json_t *svc_metrics_json(brid *d);
/* The exposition text of svc_metrics_json (malloc'd), or NULL on out of
 * memory. */
char *svc_metrics_text(brid *d);

#endif
