/* svc_control.h: the control socket and the read-only socket beside it:
 * Unix stream sockets speaking line-delimited JSON-RPC 2.0 (rpc_proto.h),
 * served on the loop thread. The read-only socket (readonly_socket, 0666,
 * or 0660 with readonly_group) takes the methods that change nothing
 * (rpc_method_reads_only), for monitoring by users who may not control
 * brid.
 *
 * Main design choice: trust is decided once per connection, at accept, from
 * the kernel's SO_PEERCRED (and SO_PEERGROUPS) rather than from anything
 * the peer says: brid's own user and root are allowed, and members of
 * socket_group when one is configured; on the read-only socket also
 * members of readonly_group, or anyone when none is configured; everyone
 * else gets one JSON-RPC error and is disconnected. The socket file's mode (0660 by default) is a
 * first fence, the credential check the one that holds even if the mode is
 * loosened. Every connection is bounded: request line length
 * (max_request_bytes), number of connections (max_connections, lowered to
 * what the open-file limit leaves; a stalled connection yields its slot to
 * a newcomer), bytes queued for a peer that does not read its replies (it
 * is no longer read), lines handled per turn, and time (request_timeout for
 * a request line or a queued reply, idle_timeout between requests). */
#ifndef BRI_SVC_CONTROL_H
#define BRI_SVC_CONTROL_H

#include <stddef.h>
#include <sys/types.h>

#include "brid/2_state/svc_state.h"

/* Binds and listens on d->cfg.socket_path and d->cfg.readonly_socket (a
 * stale socket file is replaced; a live one is an error), with the
 * configured modes and groups. */
int svc_control_open(brid *d, svc_control **out, bri_error *err);
/* Stops listening, closes every connection and removes the socket file. */
void svc_control_close(svc_control *c);
/* After the loop ran the close callbacks. */
void svc_control_free(svc_control *c);
/* The module lifecycle drives (svc_daemon.c): start opens d->ctl, close
 * and dispose as above. The open connections are published as
 * d->connections. */
extern const brid_module svc_control_module;

#endif
