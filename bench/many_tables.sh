#!/usr/bin/env bash
# bench/many_tables.sh: brid against a LanceDB optimize() loop on many small
# tables (MANY): apps that keep one table per user or per agent memory.
#
#   bench/many_tables.sh [N (default 10000)] [WORKERS (default: brid's built-in, 4 per CPU)]
#
# N tables of 4 fragments of 5 rows (one commit each, as LanceDB appends do),
# half with a Blob v2 column (rows of 0 B, 2 KiB inline, 100 KiB packed in a
# sidecar, null), half plain, are generated once with brictl gen into
# $BENCH_BASE (default /var/tmp/brid-many-N, kept for later runs; about
# 320 KB a table). Each run then makes two identical copies of them (cp -a,
# synced, read once so both sides start from page cache) and:
#   - LanceDB: bench/lance_optimize_many.mjs, one node process calling
#     openTable + optimize() on every table in turn;
#   - brid: started on the other copy with its built-in defaults (a
#     configuration naming the root alone; strategy auto: link here; workers
#     WORKERS when given), timed from its start to every table compacted
#     (its status: N compactions succeeded; the copies keep their tables'
#     times, so the debounce, which counts from a table's last commit, has
#     run out and each is checked at once). A client
#     asks `status` every 100 ms meanwhile: its latencies are reported.
# Then a third copy of the first 500 tables is compacted by brid under
# strace -f -c: fsync/fdatasync calls per job.
#
# Reported: wall s and ms per table for both, the ratio brid / LanceDB (the
# issue's target: at most 1/5 for 2,000 and for 10,000 tables, with the
# defaults), CPU s per table (user +
# system: /usr/bin/time for node, /proc/PID/stat for brid), peak RSS, status
# latency p50/p99/max, fsyncs per job. Checks: every brid job succeeded, the
# LanceDB loop compacted every table, and a sample of 20 tables of each copy
# reads back (brictl scan hashes, rows) as the source did, in one fragment.
# Results also go to $WORK/results.json (WORK: a temp dir under /var/tmp, a
# real disk, removed at the end unless KEEP=1). Most of brid's CPU here is
# the kernel creating the few files a compaction writes, and ext4 makes a
# file creation many times dearer for minutes after many files were deleted
# on the filesystem (it looks past recently deleted inodes: 20,000 creates
# took 0.16 s of CPU, 3.0 s right after 60,000 deletions): leave a few
# minutes between runs (each removes its copies at the end), and run it
# when no test suite deletes files on the same filesystem.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-10000}
WORKERS=${2:-}
BUILD=${BUILD:-build}
BRICTL=$PWD/$BUILD/bin/brictl BRID=$PWD/$BUILD/bin/brid
export ORACLE_NODE_DIR=${ORACLE_NODE_DIR:-$PWD/.deps/node} LANCEDB_LOG=error
[ -x "$BRID" ] || { echo "build first: make" >&2; exit 1; }
BASE=${BENCH_BASE:-/var/tmp/brid-many-$N}
WORK=${WORK:-$(mktemp -d /var/tmp/brid-many-run.XXXXXX)}
STRACE_N=$((N < 500 ? N : 500))
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  [ "${KEEP:-0}" = 1 ] || rm -rf "$WORK"
}
trap cleanup EXIT

if [ ! -f "$BASE/done" ]; then
  echo "generating $N tables into $BASE..." >&2
  rm -rf "$BASE"; mkdir -p "$BASE/tables"
  seq 0 $((N - 1)) | xargs -P 2 -n 50 sh -c '
    for i; do
      if [ $((i % 2)) = 0 ]; then b="--blob-sizes 0,2K,100K,null"; else b=; fi
      "$0" gen "'"$BASE"'/tables/t$i.lance" --fragments 4 --rows 5 $b >/dev/null || exit 1
    done' "$BRICTL"
  for i in $(seq 0 $((N / 20 > 0 ? N / 20 : 1)) $((N - 1))); do
    "$BRICTL" scan "$BASE/tables/t$i.lance" --json >"$BASE/scan-$i.json"
  done
  touch "$BASE/done"
fi

# copy NAME [COUNT]: a copy of the base (its first COUNT tables) in page cache
copy() {
  mkdir -p "$WORK/$1"
  if [ -n "${2:-}" ]; then
    for i in $(seq 0 $(($2 - 1))); do cp -a "$BASE/tables/t$i.lance" "$WORK/$1/"; done
  else
    cp -a "$BASE/tables/." "$WORK/$1/"
  fi
}
echo "copying..." >&2
copy lance; copy brid; copy strace "$STRACE_N"
sync
find "$WORK/lance" "$WORK/brid" -type f | xargs cat >/dev/null

. bench/lib.sh
# check COPY: the sample tables of COPY read as the source did, in one fragment.
check() {
  local f frags i
  for f in "$BASE"/scan-*.json; do
    i=${f##*/scan-}; i=${i%.json}
    "$BRICTL" scan "$WORK/$1/t$i.lance" --json >"$WORK/scan.json"
    same_scan "$f" "$WORK/scan.json" || { echo "$1: t$i.lance changed its values" >&2; exit 1; }
    frags=$("$BRICTL" inspect "$WORK/$1/t$i.lance" --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).fragments.length))')
    [ "$frags" = 1 ] || { echo "$1: t$i.lance has $frags fragments" >&2; exit 1; }
  done
}

# run_brid ROOT COUNT PREFIX...: brid on ROOT until COUNT compactions
# succeeded; writes $WORK/brid-ROOT.json (wall, CPU, RSS, status latencies).
run_brid() {
  local root=$1 count=$2; shift 2
  printf '[daemon]\nroot = %s\n%s\n' "$WORK/$root" "${WORKERS:+workers = $WORKERS}" >"$WORK/$root.conf"
  local t0; t0=$(date +%s%N)
  "$@" "$BRID" --config "$WORK/$root.conf" --socket "$WORK/$root.sock" --state "$WORK/$root.db" \
    --log-level notice 2>"$WORK/$root.log" &
  pid=$!
  python3 - "$WORK/$root.sock" "$count" "$t0" "$WORK/brid-$root.json" <<'PY' || { tail -20 "$WORK/$root.log" >&2; exit 1; }
import json, socket, sys, time
path, count, t0, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) / 1e9, sys.argv[4]
deadline = time.time() + 1800
while True:
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect(path); break
    except OSError:
        if time.time() > deadline: sys.exit("brid's socket never answered")
        time.sleep(0.01)
f = s.makefile("rb")
lat, n = [], 0
while True:
    n += 1
    a = time.monotonic()
    s.sendall((json.dumps({"jsonrpc": "2.0", "id": n, "method": "status"}) + "\n").encode())
    st = json.loads(f.readline())["result"]
    lat.append((time.monotonic() - a) * 1000)
    jobs = st["jobs"]
    if jobs["failed"] or jobs["cancelled"]: sys.exit("brid: jobs failed or were cancelled: %s" % jobs)
    if jobs["succeeded"] >= count: break
    if time.time() > deadline: sys.exit("brid did not finish in 30 minutes: %s" % jobs)
    time.sleep(0.1)
wall = time.time() - t0
lat.sort()
q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))]
json.dump({"wall_s": wall, "workers": st["workers"]["total"], "status_requests": len(lat), "status_p50_ms": q(0.5),
           "status_p99_ms": q(0.99), "status_max_ms": lat[-1]}, open(out, "w"))
PY
}
# stop_brid: SIGTERM to brid itself (under strace, its child: strace then
# writes its summary and exits with it)
stop_brid() {
  kill -TERM "$(pgrep -P "$pid" -x brid || echo "$pid")"; wait "$pid" || true; pid=
}

echo "LanceDB: openTable + optimize() on $N tables..." >&2
/usr/bin/time -f '%e %U %S %M' -o "$WORK/lance.time" node bench/lance_optimize_many.mjs "$WORK/lance" >"$WORK/lance.json"
echo "brid: $N tables, ${WORKERS:-its default} workers..." >&2
run_brid brid "$N"
ticks=$(awk '{print $14 + $15}' "/proc/$pid/stat")
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
stop_brid
echo "brid under strace -f -c: $STRACE_N tables..." >&2
run_brid strace "$STRACE_N" strace -f -c -e trace=fsync,fdatasync,sync_file_range,syncfs -o "$WORK/strace.txt"
stop_brid
check lance
check brid

node - "$WORK" "$N" "$STRACE_N" "$ticks" "$(getconf CLK_TCK)" "$hwm" <<'JS'
const fs = require("fs");
const [work, n, sn, ticks, hz, hwm] = process.argv.slice(2);
const N = Number(n);
const lance = JSON.parse(fs.readFileSync(`${work}/lance.json`));
const [lwall, luser, lsys, lrss] = fs.readFileSync(`${work}/lance.time`, "utf8").trim().split(/\s+/).map(Number);
if (lance.compacted !== N) { console.error(`LanceDB compacted ${lance.compacted} of ${N}:`, lance.errors); process.exit(1); }
const brid = JSON.parse(fs.readFileSync(`${work}/brid-brid.json`));
let fsyncs = 0;
for (const l of fs.readFileSync(`${work}/strace.txt`, "utf8").split("\n")) {
  const m = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(fsync|fdatasync|sync_file_range|syncfs)$/.exec(l);
  if (m) fsyncs += Number(m[1]);
}
const r = {
  tables: N,
  lancedb: { wall_s: lwall, loop_s: lance.ms / 1000, cpu_s: luser + lsys, max_rss_mb: lrss / 1024 },
  brid: { ...brid, cpu_s: Number(ticks) / Number(hz), max_rss_mb: Number(hwm) / 1024 },
  fsyncs_per_job: fsyncs / Number(sn),
  load: fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" "),
};
r.ratio_wall = r.brid.wall_s / r.lancedb.wall_s;
r.ratio_loop = r.brid.wall_s / r.lancedb.loop_s;
fs.writeFileSync(`${work}/results.json`, JSON.stringify(r, null, 2));
const ms = (s) => (1000 * s / N).toFixed(2);
console.log(`${N} tables of 4 fragments (half with blobs)      wall s  ms/table  CPU ms/table  RSS MB`);
console.log(`LanceDB loop (node, openTable + optimize())  ${lwall.toFixed(1).padStart(7)}  ${ms(lwall).padStart(8)}  ${ms(r.lancedb.cpu_s).padStart(12)}  ${r.lancedb.max_rss_mb.toFixed(0).padStart(6)}`);
console.log(`brid (start to all compacted, ${String(brid.workers).padStart(2)} workers)    ${brid.wall_s.toFixed(1).padStart(7)}  ${ms(brid.wall_s).padStart(8)}  ${ms(r.brid.cpu_s).padStart(12)}  ${r.brid.max_rss_mb.toFixed(0).padStart(6)}`);
console.log(`ratio brid / LanceDB: 1/${(1 / r.ratio_wall).toFixed(1)} of the process, 1/${(1 / r.ratio_loop).toFixed(1)} of the loop alone`);
console.log(`status during the run: ${brid.status_requests} requests, p50 ${brid.status_p50_ms.toFixed(1)} ms, p99 ${brid.status_p99_ms.toFixed(1)} ms, max ${brid.status_max_ms.toFixed(1)} ms`);
console.log(`fsyncs per job: ${r.fsyncs_per_job.toFixed(2)} (${sn} tables under strace)   load ${r.load}`);
JS
