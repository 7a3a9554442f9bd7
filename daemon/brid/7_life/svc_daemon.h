/* svc_daemon.h: the daemon's life after its configuration is loaded, the
 * top layer of brid (svc_state.h lists them): start-up, signals, reload,
 * the drain and shutdown. brid.c holds only main. */
#ifndef BRI_SVC_DAEMON_H
#define BRI_SVC_DAEMON_H

#include "brid/2_state/svc_state.h"

/* Runs the daemon whose configuration main loaded (d->cfg): store,
 * recovery, the modules in start-up order, then the loop until the drain
 * ends. Returns the exit status (0 stopped cleanly, 1 failed). */
int svc_daemon_run(brid *d);

#endif
