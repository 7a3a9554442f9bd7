#!/usr/bin/env bash
# A throwaway S3 server for brid's tests: Ceph's RADOS Gateway (radosgw) on
# 127.0.0.1, backed by one monitor and one in-memory OSD (no manager), with
# one user and one bucket. Idempotent: `start` on a running server only
# prints its environment.
#
#   scripts/s3-server.sh start    start (or find running), print env lines
#   scripts/s3-server.sh env      print the env lines of the running server
#   scripts/s3-server.sh status   exit 0 when the gateway answers
#   scripts/s3-server.sh stop     stop the daemons, remove the state dir
#
# The env lines (eval "$(scripts/s3-server.sh start)") are what AWS tools and
# LanceDB take: AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
# AWS_REGION, plus BRI_S3_BUCKET (the bucket made at start).
#
# Settings (environment): BRI_S3_DIR state dir [/tmp/bri-s3-$UID],
# BRI_S3_PORT gateway port, BRI_S3_MON_PORT monitor port [both: free ports
# the kernel picks at start, kept in the state dir's ports file for env,
# status and stop, so a server never collides with another one, Ceph's own
# or another test run's].
# Needs: radosgw ceph-mon ceph-osd (scripts/deps.sh installs them).
#
# Addressing: http://127.0.0.1:PORT/BUCKET is path-style; the gateway's DNS
# name is "localhost", so http://BUCKET.localhost:PORT/ reaches the bucket
# virtual-hosted (curl resolves *.localhost to the loopback by itself).
#
# Two facts the recipe depends on: cephx authentication stays on (with auth
# none the OSD fails with "wrong fsid"), and the monitor map names the
# monitor by a v1 address only (msgr2 off). Start-up takes about 2 s rather
# than 15 because the monitor commits every 50 ms instead of every second
# (paxos_propose_interval): radosgw creates its pools one map change at a
# time. The gateway sets TCP_NODELAY (tcp_nodelay=1): without it a GET's
# body waits for the client's delayed ACK of the headers, 40 ms a request.
# The daemons log errors only (debug_* = 0/0): Ceph's defaults (debug_rgw
# and debug_osd 1/5) write a few lines to the log file and format more in
# memory for every request, CPU the server shares with what it serves.
# The gateway runs two threads per core (rgw_thread_pool_size): its beast
# frontend serves connections asynchronously, so more threads add no
# concurrency, only wake-ups; on a 2-core VM 64 threads cost 0.6 to 0.9 ms of
# gateway CPU per small GET, 4 threads 0.4 ms (bench/compact_s3.sh).
set -euo pipefail

D=${BRI_S3_DIR:-${TMPDIR:-/tmp}/bri-s3-$(id -u)}
PORT=${BRI_S3_PORT:-}
MONPORT=${BRI_S3_MON_PORT:-}
# the ports of the server this state dir holds, unless the caller chose
[ -n "$PORT" ] || [ ! -f "$D/ports" ] || read -r PORT MONPORT <"$D/ports"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
AK=brid-test-key
SK=brid-test-secret
BUCKET=bucket
URL=http://127.0.0.1:${PORT:-0}

print_env() {
  cat <<EOF
export AWS_ENDPOINT_URL=$URL
export AWS_ACCESS_KEY_ID=$AK
export AWS_SECRET_ACCESS_KEY=$SK
export AWS_REGION=us-east-1
export BRI_S3_BUCKET=$BUCKET
EOF
}

# The gateway answers and our bucket exists (a signed HEAD: 200).
up() {
  [ -n "$PORT" ] || return 1
  local e; e=$(printf '' | sha256sum | cut -d' ' -f1)
  curl -sf -o /dev/null -m 2 -I --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AK:$SK" \
    -H "x-amz-content-sha256: $e" "$URL/$BUCKET" 2>/dev/null
}

stop() {
  local f
  for f in "$D"/run/*.pid; do
    [ -f "$f" ] || continue
    kill "$(cat "$f")" 2>/dev/null || true
  done
  for f in "$D"/run/*.pid; do
    [ -f "$f" ] || continue
    local pid; pid=$(cat "$f")
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  rm -rf "$D"
}

# Polls CMD every 0.2 s for up to SECONDS.
poll() {
  local n=$(($1 * 5)); shift
  for _ in $(seq "$n"); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  return 1
}

die() {
  echo "s3-server: $*" >&2
  tail -n 20 "$D"/log/*.log >&2 2>/dev/null || true
  exit 1
}

start() {
  if up; then print_env; return 0; fi
  for b in radosgw ceph-mon ceph-osd ceph-authtool monmaptool radosgw-admin; do
    command -v "$b" >/dev/null || die "$b is not installed (run scripts/deps.sh)"
  done
  stop
  mkdir -p "$D"/{mon.a,osd.0,rgw,log,run}
  # ports of a server that is gone may be taken by now: fresh ones
  PORT=${BRI_S3_PORT:-$(free_port)}
  MONPORT=${BRI_S3_MON_PORT:-$(free_port)}
  URL=http://127.0.0.1:$PORT
  echo "$PORT $MONPORT" >"$D/ports"
  local fsid; fsid=$(cat /proc/sys/kernel/random/uuid)
  local rgw_threads=$(( $(nproc) * 2 ))
  cat >"$D/ceph.conf" <<CONF
[global]
fsid = $fsid
mon_host = v1:127.0.0.1:$MONPORT
public_addr = 127.0.0.1
ms_bind_msgr2 = false
ms_bind_ipv6 = false
auth_allow_insecure_global_id_reclaim = false
mon_warn_on_insecure_global_id_reclaim_allowed = false
osd_pool_default_size = 1
osd_pool_default_min_size = 1
osd_crush_chooseleaf_type = 0
mon_allow_pool_size_one = true
mon_warn_on_pool_no_redundancy = false
osd_pool_default_pg_num = 1
osd_pool_default_pgp_num = 1
osd_pool_default_pg_autoscale_mode = off
mon_max_pg_per_osd = 1000
debug_rgw = 0/0
debug_osd = 0/0
debug_bluestore = 0/0
debug_objecter = 0/0
debug_rados = 0/0
debug_objclass = 0/0
debug_monc = 0/0
run_dir = $D/run
admin_socket = $D/run/\$name.asok
pid_file = $D/run/\$name.pid
log_file = $D/log/\$name.log
keyring = $D/keyring
[mon.a]
mon_data = $D/mon.a
paxos_propose_interval = 0.05
paxos_min_wait = 0.01
[osd]
osd_objectstore = memstore
memstore_device_bytes = 8589934592
osd_data = $D/osd.\$id
osd_memory_target = 1073741824
[client.rgw.a]
rgw_frontends = beast endpoint=127.0.0.1:$PORT tcp_nodelay=1
rgw_data = $D/rgw
rgw_dns_name = localhost
rgw_thread_pool_size = $rgw_threads
rgw_dynamic_resharding = false
rgw_enable_lc_threads = false
CONF
  local c="-c $D/ceph.conf" k="$D/keyring"
  ceph-authtool --create-keyring "$k" --gen-key -n mon. --cap mon 'allow *' >/dev/null
  ceph-authtool "$k" --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' \
    --cap mgr 'allow *' >/dev/null
  ceph-authtool "$k" --gen-key -n osd.0 --cap mon 'allow profile osd' --cap osd 'allow *' \
    --cap mgr 'allow profile osd' >/dev/null
  ceph-authtool "$k" --gen-key -n client.rgw.a --cap mon 'allow rw' --cap osd 'allow rwx' \
    --cap mgr 'allow rw' >/dev/null
  monmaptool --create --addv a "[v1:127.0.0.1:$MONPORT]" --fsid "$fsid" "$D/monmap" >/dev/null
  # shellcheck disable=SC2086
  {
    ceph-mon $c --mkfs -i a --monmap "$D/monmap" --keyring "$k" >>"$D/log/setup.log" 2>&1 ||
      die "ceph-mon --mkfs failed"
    ceph-mon $c -i a >>"$D/log/setup.log" 2>&1 || die "ceph-mon did not start"
    local osduuid id; osduuid=$(cat /proc/sys/kernel/random/uuid)
    id=$(timeout 60 ceph $c osd new "$osduuid" 2>>"$D/log/setup.log") || die "ceph osd new failed"
    ceph-osd $c -i "$id" --mkfs --osd-uuid "$osduuid" >>"$D/log/setup.log" 2>&1 ||
      die "ceph-osd --mkfs failed"
    ceph-osd $c -i "$id" >>"$D/log/setup.log" 2>&1 || die "ceph-osd did not start"
    osd_up() { timeout 10 ceph $c osd stat 2>/dev/null | grep -q '1 up'; }
    poll 60 osd_up || die "the OSD did not come up"
    radosgw $c -n client.rgw.a >>"$D/log/setup.log" 2>&1 || die "radosgw did not start"
    poll 60 curl -s -o /dev/null -m 2 "$URL/" || die "radosgw does not answer on $URL"
    timeout 60 radosgw-admin $c user create --uid=brid --display-name=brid \
      --access-key="$AK" --secret="$SK" >>"$D/log/setup.log" 2>&1 || die "radosgw-admin user create failed"
  }
  local e; e=$(printf '' | sha256sum | cut -d' ' -f1)
  curl -sf -o /dev/null -m 10 -X PUT --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AK:$SK" \
    -H "x-amz-content-sha256: $e" "$URL/$BUCKET" || die "creating bucket $BUCKET failed"
  up || die "bucket $BUCKET is not reachable"
  print_env
}

case "${1:-}" in
  start) start ;;
  env) up || { echo "s3-server: not running on $URL" >&2; exit 1; }; print_env ;;
  status) up ;;
  stop) stop ;;
  *) echo "usage: $0 start|env|status|stop" >&2; exit 2 ;;
esac
