#!/usr/bin/env bash
# bench/load.sh: brid watching many tables that receive appends at a steady
# rate. Reports the queue latency (commit of the append that made a table
# compactable -> start of its compaction job) as percentiles, compaction
# jobs per minute, and brid's CPU time and RSS.
#
#   bench/load.sh [TABLES=1000] [SECONDS=60] [RATE=5 appends/s] [DEBOUNCE=1]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000} DUR=${2:-60} RATE=${3:-5} DEBOUNCE=${4:-1}
BUILD=${BUILD:-build}
BRICTL=$PWD/$BUILD/bin/brictl BRID=$PWD/$BUILD/bin/brid
W=$(mktemp -d /tmp/brid-load.XXXXXX)
trap '[ -n "${pid:-}" ] && kill "$pid" 2>/dev/null; rm -rf "$W"' EXIT
mkdir -p "$W/root"
echo "creating $N tables..."
seq 0 $((N - 1)) | xargs -P 2 -I{} "$BRICTL" gen "$W/root/t{}.lance" --rows 5 >/dev/null
"$BRID" --root "$W/root" --socket "$W/s" --state "$W/db" --debounce "${DEBOUNCE}s" --workers 2 \
  --log-level notice 2>"$W/brid.log" &
pid=$!
for _ in $(seq 100); do "$BRICTL" status --socket "$W/s" >/dev/null 2>&1 && break; sleep 0.1; done
cpu0=$(awk '{print $14 + $15}' /proc/$pid/stat)
echo "appending for ${DUR}s at ${RATE}/s..."
end=$((SECONDS + DUR)) i=0
: >"$W/commits"
while [ $SECONDS -lt $end ]; do
  t=$((RANDOM * 32768 % N + RANDOM % N)); t=$((t % N))
  "$BRICTL" gen "$W/root/t$t.lance" --rows 5 >/dev/null
  echo "$W/root/t$t.lance $(date +%s%3N)" >>"$W/commits"
  i=$((i + 1))
  sleep "$(awk -v r="$RATE" 'BEGIN{printf "%.3f", 1/r}')"
done
echo "waiting for the queue to drain..."
for _ in $(seq 120); do
  q=$("$BRICTL" status --socket "$W/s" --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const j=JSON.parse(s);console.log((j.jobs.queued||0)+(j.jobs.running||0))})')
  [ "$q" = 0 ] && break
  sleep 1
done
cpu1=$(awk '{print $14 + $15}' /proc/$pid/stat)
rss=$(awk '/VmRSS/ {print $2}' /proc/$pid/status)
hwm=$(awk '/VmHWM/ {print $2}' /proc/$pid/status)
"$BRICTL" jobs --socket "$W/s" --kind compact --limit 100000 --json >"$W/jobs.json"
node - "$W/commits" "$W/jobs.json" "$DUR" "$((cpu1 - cpu0))" "$rss" "$hwm" "$i" <<'JS'
const fs = require("fs");
const [cf, jf, dur, ticks, rss, hwm, appends] = process.argv.slice(2);
const commits = {};
for (const l of fs.readFileSync(cf, "utf8").trim().split("\n")) {
  const [t, ms] = l.split(" ");
  (commits[t] = commits[t] || []).push(Number(ms));
}
let jobs = JSON.parse(fs.readFileSync(jf));
jobs = jobs.jobs || jobs;
const lat = [];
let done = 0;
for (const j of jobs) {
  if (j.state !== "succeeded") continue;
  done++;
  const c = (commits[j.table] || []).filter((x) => x <= j.started_at);
  if (c.length) lat.push(j.started_at - Math.max(...c));
}
lat.sort((a, b) => a - b);
const p = (q) => (lat.length ? lat[Math.min(lat.length - 1, Math.floor(q * lat.length))] : NaN);
console.log(`appends ${appends}, compaction jobs succeeded ${done} (${(done / (Number(dur) / 60)).toFixed(1)}/min)`);
console.log(`queue latency commit -> job start (ms): p50 ${p(0.5)} p90 ${p(0.9)} p99 ${p(0.99)} max ${lat[lat.length - 1]}`);
console.log(`brid CPU ${(Number(ticks) / 100).toFixed(2)} s over the run, RSS ${rss} kB (peak ${hwm} kB)`);
JS
