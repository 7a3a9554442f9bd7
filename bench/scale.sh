#!/usr/bin/env bash
# bench/scale.sh: compaction cost as the number of fragments grows (SCALE).
#
#   bench/scale.sh [WORKDIR] [COUNTS (default "500 2000 8000")] [REPEATS (default 1)]
#
# For each count N it makes (once; kept in WORKDIR/src-N, reused by later
# runs) a table of N fragments x 4 rows with brictl gen, one commit per
# fragment as LanceDB appends do, and a Blob v2 column whose 4 rows are
# empty, 2 KiB (Inline), 100 KiB (Packed) and null. Then, in one run,
# REPEATS times: two identical copies (cp -a), LanceDB's own optimize() on one
# (tests/interop/lance_optimize.mjs) and `brictl compact --strategy bri` on
# the other, from page cache (both copies synced to disk, then their files
# read once, before each run).
#
# Measured by GNU time (/usr/bin/time -f '%e %U %S %M'): wall seconds, user
# and system CPU seconds, and peak RSS (max resident set, KiB, of the process
# itself: node for LanceDB, brictl for brid; no children run). LanceDB's
# optimize() is also timed inside node around the call alone (its report's
# wall_ms: no node start-up, table open or disk usage walk); the ratio is
# given against both, the call alone being the stricter. Wall time on a
# shared machine is noisy: the user + system columns show how much of it was
# the process's own work, and the load average is recorded with each run.
# Each copy is checked afterwards: brictl scan hashes of every column and
# the row count equal the source table's, and fragments went down.
#
# Output: a table on stdout (wall s, us per fragment, ratios bri / LanceDB,
# CPU s, max RSS MB, for every repeat) and WORKDIR/scale.jsonl. Needs about
# 2 x 140 KB x N of disk per count (8,000 fragments: ~2.3 GB with copies).
# The 8,000-fragment table takes a few minutes to generate, and LanceDB's
# optimize() of it minutes more.
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-$(mktemp -d /tmp/brid-scale.XXXXXX)}
COUNTS=${2:-500 2000 8000}
REPEATS=${3:-1}
BUILD=${BUILD:-build}
BRICTL=$PWD/$BUILD/bin/brictl
export ORACLE_NODE_DIR=${ORACLE_NODE_DIR:-$PWD/.deps/node} LANCEDB_LOG=error
[ -x "$BRICTL" ] || { echo "build first: make" >&2; exit 1; }
mkdir -p "$WORK"
RESULTS=$WORK/scale.jsonl
: >"$RESULTS"

. bench/lib.sh

# measure NAME N REPEAT CMD...: runs CMD under GNU time, appends a result line.
# Dirty pages are written out first: the run before (LanceDB's optimize()
# writes every payload byte again) must not leave its writeback to the next.
measure() {
  local name=$1 n=$2 rep=$3; shift 3
  sync
  local tf; tf=$(mktemp)
  /usr/bin/time -f '%e %U %S %M' -o "$tf" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" ||
    { cat "$WORK/$name.err" >&2; exit 1; }
  local wall user sys rss; read -r wall user sys rss <"$tf"
  rm -f "$tf"
  printf '{"run":"%s","fragments":%s,"repeat":%s,"wall_s":%s,"user_s":%s,"sys_s":%s,"max_rss_kb":%s,"load":"%s"}\n' \
    "$name" "$n" "$rep" "$wall" "$user" "$sys" "$rss" "$(cut -d' ' -f1-3 /proc/loadavg)" >>"$RESULTS"
}

for n in $COUNTS; do
  src=$WORK/src-$n/t.lance
  if [ ! -f "$WORK/src-$n/done" ]; then
    echo "generating $n fragments..."
    rm -rf "$WORK/src-$n"; mkdir -p "$WORK/src-$n"
    "$BRICTL" gen "$src" --fragments "$n" --rows 4 --blob-sizes 0,2K,100K,null >/dev/null
    "$BRICTL" scan "$src" --json >"$WORK/src-$n/scan.json"
    touch "$WORK/src-$n/done"
  fi
  for rep in $(seq "$REPEATS"); do
    for run in optimize bri; do
      c=$WORK/run-$n-$run
      rm -rf "$c"; mkdir -p "$c"; cp -a "$src" "$c/"
    done
    # the copies on disk (no writeback of them during a run), and the same
    # files in page cache for both sides
    sync
    find "$WORK"/run-$n-*/t.lance/data "$WORK"/run-$n-*/t.lance/_versions -name '*.lance' -o -name '*.manifest' |
      xargs cat >/dev/null
    echo "$n fragments, run $rep: LanceDB optimize()..."
    measure "$n-optimize-$rep" "$n" "$rep" node tests/interop/lance_optimize.mjs "$WORK/run-$n-optimize/t.lance" --json
    echo "$n fragments, run $rep: brictl compact --strategy bri..."
    measure "$n-bri-$rep" "$n" "$rep" "$BRICTL" compact "$WORK/run-$n-bri/t.lance" --strategy bri
    for run in optimize bri; do
      "$BRICTL" scan "$WORK/run-$n-$run/t.lance" --json >"$WORK/scan-$n-$run.json"
      same_scan "$WORK/src-$n/scan.json" "$WORK/scan-$n-$run.json" || { echo "$run changed the table's values" >&2; exit 1; }
      frags=$("$BRICTL" inspect "$WORK/run-$n-$run/t.lance" --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).fragments.length))')
      [ "$frags" -lt "$n" ] || { echo "$run left $frags fragments of $n" >&2; exit 1; }
    done
    rm -rf "$WORK"/run-$n-*
  done
done

node - "$RESULTS" <<'JS'
const fs = require("fs");
const runs = fs.readFileSync(process.argv[2], "utf8").trim().split("\n").map((l) => JSON.parse(l));
const key = (r) => `${r.fragments}-${r.repeat}`;
const lance = Object.fromEntries(runs.filter((r) => r.run.includes("-optimize-")).map((r) => [key(r), r]));
const work = require("path").dirname(process.argv[2]);
for (const r of runs.filter((x) => x.run.includes("-optimize-")))
  r.call_s = JSON.parse(fs.readFileSync(`${work}/${r.run}.out`, "utf8")).wall_ms / 1000;
console.log("fragments run         wall s  us/frag  optimize() s  bri/process  bri/optimize()  user+sys s  RSS MB  load");
for (const r of runs) {
  const lancedb = r.run.includes("-optimize-");
  const base = lance[key(r)];
  const ratio = (d) => (lancedb ? "" : `1/${(d / r.wall_s).toFixed(0)}`);
  console.log(`${String(r.fragments).padStart(9)} ${(lancedb ? "LanceDB" : "brictl bri").padEnd(10)} ${r.wall_s.toFixed(2).padStart(7)} ${(r.wall_s * 1e6 / r.fragments).toFixed(0).padStart(8)}  ${(lancedb ? r.call_s.toFixed(2) : "").padStart(12)}  ${ratio(base.wall_s).padStart(11)}  ${ratio(base.call_s).padStart(14)}  ${(r.user_s + r.sys_s).toFixed(2).padStart(10)}  ${(r.max_rss_kb / 1024).toFixed(1).padStart(6)}  ${r.load}`);
}
fs.writeFileSync(process.argv[2].replace(/\.jsonl$/, ".json"), JSON.stringify(runs, null, 2));
JS
