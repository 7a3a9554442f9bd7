#!/usr/bin/env bash
# bench/compact.sh: brictl compact (each strategy) against LanceDB's own
# optimize() on identical copies of a table, from page cache.
#
#   bench/compact.sh [WORKDIR] [blobs|plain|all]
#
# blobs: make_tables --tables blobs --blob-batches 200:1:5M,200:10:200K
#        (1.46 GB of payload in 400 fragments, the issue's benchmark table)
# plain: 200 fragments x 5000 rows of mixed columns, no blobs
# For each copy it reports wall time, bytes written (LanceDB: its process's
# write_bytes; brictl: data files + payload it wrote, from its report), disk
# use at the peak (after compaction, before any cleanup) and peak memory
# (max RSS), then checks
# that brictl scan hashes are unchanged. Results: WORKDIR/results.json and a
# table on stdout. Needs ~4x the table size of free disk.
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-$(mktemp -d /tmp/brid-bench.XXXXXX)}
WHICH=${2:-all}
BUILD=${BUILD:-build}
BRICTL=$PWD/$BUILD/bin/brictl
export ORACLE_NODE_DIR=${ORACLE_NODE_DIR:-$PWD/.deps/node} LANCEDB_LOG=error
[ -x "$BRICTL" ] || { echo "build first: make" >&2; exit 1; }
mkdir -p "$WORK"
RESULTS=$WORK/results.jsonl
: >"$RESULTS"

du_bytes() { du -sb "$1" | cut -f1; }

# measure NAME DIR CMD...: runs CMD under /usr/bin/time: wall time, max RSS,
# disk use before and after (no cleanup runs: "after" is the peak).
measure() {
  local name=$1 dir=$2; shift 2
  local before; before=$(du_bytes "$dir")
  sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true
  cat "$dir"/data/*.lance >/dev/null 2>&1 || true   # warm the page cache for both sides equally
  local tf; tf=$(mktemp)
  /usr/bin/time -f '%e %M' -o "$tf" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || { cat "$WORK/$name.err" >&2; exit 1; }
  local wall rss; read -r wall rss <"$tf"
  local after; after=$(du_bytes "$dir")
  printf '{"run":"%s","wall_s":%s,"max_rss_kb":%s,"disk_before":%s,"disk_after":%s}\n' \
    "$name" "$wall" "$rss" "$before" "$after" >>"$RESULTS"
  rm -f "$tf"
}

bench_table() { # bench_table KIND MAKE_ARGS...
  local kind=$1; shift
  local src=$WORK/src-$kind
  if [ ! -d "$src/$kind.lance" ]; then
    echo "generating $kind table..."
    node tests/interop/lance_make.mjs --out "$src" "$@" >/dev/null
  fi
  local t=$src/$kind.lance
  "$BRICTL" scan "$t" --json >"$WORK/$kind.scan0.json"
  for run in optimize bri link copy; do
    rm -rf "$WORK/$kind-$run"; mkdir -p "$WORK/$kind-$run"
    cp -a "$t" "$WORK/$kind-$run/"
    local c=$WORK/$kind-$run/$kind.lance
    if [ $run = optimize ]; then
      measure "$kind-optimize" "$c" node tests/interop/lance_optimize.mjs "$c" --json
    else
      measure "$kind-$run" "$c" "$BRICTL" compact "$c" --strategy $run --json
      "$BRICTL" scan "$c" --json >"$WORK/$kind.scan.$run.json"
      node -e '
        const [a,b]=process.argv.slice(1).map(f=>JSON.parse(require("fs").readFileSync(f)));
        for (const [k,v] of Object.entries(a.columns)) if (v.sha256!==b.columns[k].sha256) { console.error("hash changed:",k); process.exit(1); }
        if (a.rows!==b.rows) { console.error("rows changed"); process.exit(1); }' "$WORK/$kind.scan0.json" "$WORK/$kind.scan.$run.json"
    fi
  done
}

case $WHICH in
  blobs|all) bench_table blobs --tables blobs --blob-batches 200:1:5M,200:10:200K --blob-delete "" ;;
esac
case $WHICH in
  plain|all) bench_table plain --tables plain --fragments 200 --rows 5000 --plain-delete "" ;;
esac

node - "$RESULTS" "$WORK" <<'JS'
const fs = require("fs");
const [file, work] = process.argv.slice(2);
const runs = fs.readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
const by = Object.fromEntries(runs.map((r) => [r.run, r]));
const report = (name) => { try { return JSON.parse(fs.readFileSync(`${work}/${name}.out`)); } catch { return {}; } };
console.log("run              wall s  ratio vs optimize  written MB  peak disk MB  max RSS MB");
for (const r of runs) {
  const [kind] = r.run.split("-");
  const base = by[`${kind}-optimize`];
  const rep = report(r.run);
  const written = r.run.endsWith("optimize") ? (rep.proc_io ? rep.proc_io.wchar : 0)
    : (rep.data_bytes_written || 0) + (rep.payload_bytes_copied || 0);
  r.written = written;
  r.ratio = base ? r.wall_s / base.wall_s : null;
  console.log(`${r.run.padEnd(16)} ${r.wall_s.toFixed(2).padStart(6)}  ${(r.ratio ?? 0).toFixed(3).padStart(17)}  ${(written / 1e6).toFixed(1).padStart(10)}  ${(r.disk_after / 1e6).toFixed(1).padStart(12)}  ${(r.max_rss_kb / 1024).toFixed(1).padStart(10)}`);
}
fs.writeFileSync(`${work}/results.json`, JSON.stringify(runs, null, 2));
JS
