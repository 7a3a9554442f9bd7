/* bri/gen.h: libbri's public API, synthetic tables for tests and demos
 * (gen/gen.h). */
#ifndef BRI_PUBLIC_GEN_H
#define BRI_PUBLIC_GEN_H

#include "gen/gen.h"

#endif
