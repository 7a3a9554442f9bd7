#!/usr/bin/env bash
# bench/status_latency.sh: how long brid takes to answer while a worker
# commits: a compaction that links N sidecars journals each link durably
# first (one SQLite commit and an fdatasync of its WAL per file), and a job
# store that serializes every call behind those fsyncs makes whatever calls
# it wait. Two clients: one sends `status` and `tables.list` back to back
# (each reads the store), the other sends lines that are not JSON, which
# the loop answers itself: their latency is the loop's own (a loop that
# waits for the store makes them wait too). Reports count, p50, p99, max
# (ms), idle and while the job runs.
#
#   bench/status_latency.sh [SIDECARS=1000]
# BUILD (default build) picks the binaries, or BRID and BRICTL name them.
# Run it on a disk (fsync is free on tmpfs): TMPDIR defaults to /var/tmp.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000}
BUILD=${BUILD:-build}
BRICTL=${BRICTL:-$PWD/$BUILD/bin/brictl} BRID=${BRID:-$PWD/$BUILD/bin/brid}
W=$(mktemp -d "${TMPDIR:-/var/tmp}/brid-latency.XXXXXX")
trap '[ -n "${pid:-}" ] && kill "$pid" 2>/dev/null; rm -rf "$W"' EXIT
mkdir -p "$W/root"
T=$W/root/t.lance
rows=$(((N + 19) / 20))
"$BRICTL" gen "$T" --fragments 20 --rows "$rows" --blob-sizes 40K --inline-threshold 16384 --dedicated-threshold 32768 >/dev/null
printf '[daemon]\nroot = %s\n[defaults]\nauto_compact = no\ncleanup_interval = 0\nstrategy = link\n' "$W/root" >"$W/b.conf"
"$BRID" --config "$W/b.conf" --socket "$W/s" --state "$W/db" --log-level notice 2>"$W/brid.log" &
pid=$!
for _ in $(seq 100); do "$BRICTL" status --socket "$W/s" >/dev/null 2>&1 && break; sleep 0.1; done
python3 - "$W/s" "$T" <<'PY'
import json, socket, sys, threading, time
path, table = sys.argv[1], sys.argv[2]
def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s, s.makefile("rb")
s, f = connect()
n = 0
def call(method, params=None):
    global n
    n += 1
    msg = {"jsonrpc": "2.0", "id": n, "method": method}
    if params: msg["params"] = params
    t0 = time.monotonic()
    s.sendall((json.dumps(msg) + "\n").encode())
    reply = json.loads(f.readline())
    return (time.monotonic() - t0) * 1000, reply
def report(name, lat):
    lat = sorted(lat)
    q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))]
    print("%-14s %6d requests  p50 %7.2f ms  p99 %7.2f ms  max %7.2f ms" % (name, len(lat), q(0.5), q(0.99), lat[-1]))
stop = threading.Event()
loop_lat = []
def loop_probe():
    ps, pf = connect()
    while not stop.is_set():
        t0 = time.monotonic()
        ps.sendall(b"not json\n")
        pf.readline()
        loop_lat.append((time.monotonic() - t0) * 1000)
        time.sleep(0.001)
idle = [call(m)[0] for _ in range(200) for m in ("status", "tables.list")]
report("idle store", idle)
probe = threading.Thread(target=loop_probe)
probe.start()
job = call("compact", {"table": table})[1]["result"]["job"]
loop_lat.clear()
busy, t0 = [], time.monotonic()
while True:
    ms, st = call("status")
    busy.append(ms)
    busy.append(call("tables.list")[0])
    if not any(r["job"] == job for r in st["result"]["running"]) and time.monotonic() - t0 > 0.5:
        _, j = call("jobs.get", {"id": job})
        if j["result"]["state"] not in ("queued", "running"): break
stop.set()
probe.join()
res = j["result"]
print("job %d %s in %.1f s: %d links journaled" % (job, res["state"], time.monotonic() - t0,
      (res.get("result") or {}).get("links", 0)))
report("busy store", busy)
report("busy loop", loop_lat)
PY
