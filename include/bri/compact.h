/* bri/compact.h: libbri's public API, compaction: planning
 * (compact/plan.h, with fragment sizes from compact/fragsize.h) and running
 * one to its commit (compact/execute.h). */
#ifndef BRI_PUBLIC_COMPACT_H
#define BRI_PUBLIC_COMPACT_H

#include "compact/execute.h"
#include "compact/fragsize.h"
#include "compact/plan.h"

#endif
