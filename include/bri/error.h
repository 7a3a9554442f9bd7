/* bri/error.h: libbri's public API, errors: every call returns 0 or a
 * negative BRI_E* code and fills a bri_error with a message a user can act
 * on (util/error.h). Programs (daemon/) reach libbri only through the
 * headers of include/bri/ (scripts/check-layers.sh). */
#ifndef BRI_PUBLIC_ERROR_H
#define BRI_PUBLIC_ERROR_H

#include "util/error.h"

#endif
