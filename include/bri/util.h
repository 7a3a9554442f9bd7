/* bri/util.h: libbri's public API, small helpers programs share with the
 * library: durations with units and the wall clock (util/duration.h), byte
 * counts with units (util/size.h), path
 * joining and whole-file reads of files outside tables (util/fsutil.h),
 * string sets and maps (util/strset.h, util/strmap.h), the hook struct of
 * long operations (util/hooks.h), the INI reader (util/ini.h), and
 * failpoints (util/failpoint.h). */
#ifndef BRI_PUBLIC_UTIL_H
#define BRI_PUBLIC_UTIL_H

#include "util/duration.h"
#include "util/error.h"
#include "util/failpoint.h"
#include "util/fsutil.h"
#include "util/hooks.h"
#include "util/ini.h"
#include "util/size.h"
#include "util/strmap.h"
#include "util/strset.h"

#endif
