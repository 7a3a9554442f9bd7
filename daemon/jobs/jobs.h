/* jobs.h: the job store's public API in one include (store, tables, queue, instances,
 * history, journal, recovery); see store.h for the design. */
#ifndef BRI_JOBS_H
#define BRI_JOBS_H

#include "jobs/history.h"
#include "jobs/instances.h"
#include "jobs/journal.h"
#include "jobs/queue.h"
#include "jobs/recover.h"
#include "jobs/store.h"
#include "jobs/tables.h"

#endif
