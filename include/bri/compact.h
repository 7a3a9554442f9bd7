/* bri/compact.h: libbri's public API, compaction: planning
 * (compact/plan.h, with fragment sizes from compact/fragsize.h), running one
 * to its commit (compact/execute.h), and the switch to Managed blobs it may
 * commit first (compact/optin.h). */
#ifndef BRI_PUBLIC_COMPACT_H
#define BRI_PUBLIC_COMPACT_H

#include "compact/execute.h"
#include "compact/fragsize.h"
#include "compact/optin.h"
#include "compact/plan.h"

#endif
