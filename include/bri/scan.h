/* bri/scan.h: libbri's public API, reading a table as LanceDB does: the
 * canonical hash of a whole table (scan/scan.h), rows by key (scan/key.h)
 * and one value of one row (scan/cell.h). */
#ifndef BRI_PUBLIC_SCAN_H
#define BRI_PUBLIC_SCAN_H

#include "scan/cell.h"
#include "scan/key.h"
#include "scan/scan.h"

#endif
