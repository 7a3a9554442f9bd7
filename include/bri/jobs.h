/* bri/jobs.h: libbri's public API, brid's SQLite job store: tables, jobs,
 * their output journal, history and crash recovery (jobs/jobs.h). */
#ifndef BRI_PUBLIC_JOBS_H
#define BRI_PUBLIC_JOBS_H

#include "jobs/jobs.h"

#endif
