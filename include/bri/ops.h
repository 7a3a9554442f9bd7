/* bri/ops.h: libbri's public API, operations on whole tables besides
 * compaction: cleanup, clone, materialize, verify, inspect, the JSON
 * report of each, and the table lock they run under (ops/). */
#ifndef BRI_PUBLIC_OPS_H
#define BRI_PUBLIC_OPS_H

#include "ops/cleanup.h"
#include "ops/clone.h"
#include "ops/inspect.h"
#include "ops/lock.h"
#include "ops/materialize.h"
#include "ops/report.h"
#include "ops/verify.h"

#endif
