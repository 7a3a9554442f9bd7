#!/usr/bin/env bash
# bench/many_watched.sh: brid's start-up over many tables that need no
# compaction (one fragment each): how soon the control socket answers, how
# soon brid is ready, how fast `status` answers meanwhile, and what brid
# costs once it is idle.
#
#   bench/many_watched.sh [N=100000] [DEBOUNCE=1s]
#
# The tables are one `brictl gen --rows 5` table hard-linked (cp -al) N
# times (a real copy every 50,000, as ext4 caps a file's links), 1,000 per directory under one root (root/gNNN/tNNN.lance: depth 2,
# within the default discovery_depth of 3). brid runs with its own state
# database and socket in the work dir, --workers 2 and --debounce DEBOUNCE
# (a table's first check waits for the debounce, as after a commit).
#
# Reported:
#   socket     seconds from exec to the first status reply
#   ready      seconds to the "ready" log line (the start-up discovery ended:
#              every table registered and watched; READY=1)
#   first sweep  seconds until status says discovery.first_sweep_done (every
#              table discovered and checked once by the planner)
#   status     latency of `status` (one connection, a request every 100 ms
#              from the start until the first sweep is done): count, p50, p99, max;
#              the three slowest with their time from exec
#   idle CPU   brid's utime+stime (/proc/PID/stat) over 30 s after that
#   RSS        VmRSS and VmHWM (/proc/PID/status) at the end
# Work dir under TMPDIR (default /var/tmp, a real disk), removed at the end.
# BUILD (default build) picks the binaries, or BRID and BRICTL name them.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-100000}
DEBOUNCE=${2:-1s}
BUILD=${BUILD:-build}
BRICTL=${BRICTL:-$PWD/$BUILD/bin/brictl} BRID=${BRID:-$PWD/$BUILD/bin/brid}
[ -x "$BRID" ] && [ -x "$BRICTL" ] || { echo "build first: make" >&2; exit 1; }
W=$(mktemp -d "${TMPDIR:-/var/tmp}/brid-many.XXXXXX")
trap 'rm -rf "$W"' EXIT
PER_DIR=1000
t0=$(date +%s.%N)
"$BRICTL" gen "$W/src.lance" --rows 5 >/dev/null
mkdir -p "$W/root/g0"
first=$((N < PER_DIR ? N : PER_DIR))
for ((i = 0; i < first; i++)); do cp -al "$W/src.lance" "$W/root/g0/t$i.lance"; done
for ((g = 1; g * PER_DIR < N; g++)); do
  left=$((N - g * PER_DIR))
  base=$((g / 50 * 50)) # ext4 allows 65,000 links to a file: a real copy every 50 directories
  if [ "$left" -ge "$PER_DIR" ] && [ "$g" = "$base" ]; then
    cp -a "$W/root/g0" "$W/root/g$g"
  elif [ "$left" -ge "$PER_DIR" ]; then
    cp -al "$W/root/g$base" "$W/root/g$g"
  else
    mkdir "$W/root/g$g"
    for ((i = 0; i < left; i++)); do cp -al "$W/src.lance" "$W/root/g$g/t$i.lance"; done
  fi
done
made=$(find "$W/root" -mindepth 2 -maxdepth 2 -name '*.lance' | wc -l)
printf 'tables: %d made in %.1f s under %s (inotify: max_user_watches %s)\n' "$made" \
  "$(echo "$(date +%s.%N) - $t0" | bc)" "$W/root" "$(cat /proc/sys/fs/inotify/max_user_watches)"
sync
python3 - "$BRID" "$W" "$N" "$DEBOUNCE" <<'PY'
import json, os, socket, subprocess, sys, time
brid, w, n, debounce = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
sock = os.path.join(w, "s")
log = open(os.path.join(w, "brid.log"), "w")
t0 = time.monotonic()
p = subprocess.Popen([brid, "--root", os.path.join(w, "root"), "--socket", sock, "--state", os.path.join(w, "db"),
                      "--workers", "2", "--debounce", debounce, "--log-level", "notice"], stderr=log)
hz = os.sysconf("SC_CLK_TCK")
def cpu():
    f = open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / hz
def mem():
    m = {}
    for l in open("/proc/%d/status" % p.pid):
        k, _, v = l.partition(":")
        if k in ("VmRSS", "VmHWM"): m[k] = int(v.split()[0]) // 1024
    return m
conn = None
def status():
    global conn
    if conn is None:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(30)
        s.connect(sock)
        conn = (s, s.makefile("rb"))
    s, f = conn
    t = time.monotonic()
    s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"status"}\n')
    r = json.loads(f.readline())["result"]
    return (time.monotonic() - t) * 1000, r
first_reply = None
while first_reply is None:
    if p.poll() is not None: sys.exit("brid exited: see " + log.name)
    try:
        ms, r = status()
        first_reply = time.monotonic() - t0
        lat = [(ms, first_reply)]
    except (FileNotFoundError, ConnectionRefusedError):
        conn = None
        time.sleep(0.01)
ready = None
while True:
    time.sleep(0.1)
    ms, r = status()
    lat.append((ms, time.monotonic() - t0))
    if ready is None and "ready:" in open(log.name).read():
        ready = time.monotonic() - t0
    if r["discovery"]["first_sweep_done"]: break
    if time.monotonic() - t0 > 600: sys.exit("no first sweep after 600 s: " + json.dumps(r["discovery"]))
swept = time.monotonic() - t0
d = r["discovery"]
print("watched %d of %d tables, inotify watches %d, sweep_only %d, checks waiting %d" %
      (r["tables"]["watched"], n, r["tables"]["inotify_watches"], r["tables"]["sweep_only"], r["checks_waiting"]))
print("socket answers   %6.2f s" % first_reply)
print("ready            %6.2f s  (every table registered and watched)" % ready)
print("first sweep done %6.2f s  (every table checked once; brid says %.2f s)" %
      (swept, (d["first_sweep_done_at"] - r["started_at"]) / 1000))
lat.sort()
q = lambda x: lat[min(len(lat) - 1, int(x * len(lat)))][0]
print("status latency   %d requests  p50 %.1f ms  p99 %.1f ms  max %.1f ms" % (len(lat), q(0.5), q(0.99), lat[-1][0]))
print("slowest          %s" % ", ".join("%.1f ms at %.2f s" % l for l in lat[:-4:-1]))
conn[0].close()
c0 = cpu()
time.sleep(30)
c1 = cpu()
m = mem()
print("idle CPU         %.2f s over 30 s (%.2f%%)" % (c1 - c0, (c1 - c0) / 30 * 100))
print("RSS              VmRSS %d MB  VmHWM %d MB" % (m["VmRSS"], m["VmHWM"]))
p.terminate()
p.wait(timeout=60)
PY
