#!/usr/bin/env bash
# bench/busy_writer.sh: how many compactions commit while a LanceDB writer is
# busy, brid's against LanceDB's own optimize() in the same loop.
#
#   bench/busy_writer.sh [SECONDS] [MODES]      (defaults: 60, "link copy bri optimize")
#
# For each mode and for tables without and with stable row ids: a fresh plain
# table (6 fragments x 200 rows), a LanceDB writer (tests/interop/
# lance_writer_loop.mjs: 20 rows appended per iteration, a delete every 2nd,
# an update of two rows every 3rd) for SECONDS, and on the other side either
# brictl compact --strategy MODE every 0.3 s, or LanceDB's optimize() every
# 0.3 s (bench/lance_optimize_loop.mjs). Counts compactions that committed,
# that gave way to the writer (brid's reasons are listed), and that found
# nothing to do; then checks the rows are exactly the writer's
# (tests/interop/lance_rowset.mjs). Prints one line per run.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-60}
MODES=${2:-link copy bri optimize}
BUILD=${BUILD:-build}
BRICTL=$PWD/$BUILD/bin/brictl
export ORACLE_NODE_DIR=${ORACLE_NODE_DIR:-$PWD/.deps/node} LANCEDB_LOG=error
[ -x "$BRICTL" ] || { echo "build first: make" >&2; exit 1; }
I=tests/interop
WORK=$(mktemp -d /tmp/brid-busy.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

run() { # MODE [--stable-row-ids]
  local mode=$1 d; d=$(mktemp -d "$WORK/run.XXXX"); shift
  node $I/lance_make.mjs --out "$d" --tables plain --fragments 6 --rows 200 --plain-delete "" "$@" >/dev/null
  local t=$d/plain.lance
  node $I/lance_writer_loop.mjs "$t" --seconds "$SECS" --rows 20 --delete-every 2 --update-every 3 \
    >"$d/writer.json" 2>"$d/writer.err" &
  local writer=$! committed=0 gave_way=0 nothing=0 carried=0
  if [ "$mode" = optimize ]; then
    node bench/lance_optimize_loop.mjs "$t" --seconds "$SECS" >"$d/opt.json"
    read -r committed gave_way nothing < <(node -e 'const r=JSON.parse(require("fs").readFileSync(process.argv[1]));
      console.log(r.committed, r.gaveWay, r.nothing)' "$d/opt.json")
  else
    local deadline=$((SECONDS + SECS))
    while [ $SECONDS -lt $deadline ]; do
      if "$BRICTL" compact "$t" --strategy "$mode" --json >"$d/c.json" 2>"$d/c.err"; then
        if grep -q '"version": 0,' "$d/c.json"; then nothing=$((nothing + 1)); else
          committed=$((committed + 1))
          carried=$((carried + $(grep -o '"deletions_carried": [0-9]*' "$d/c.json" | grep -o '[0-9]*$')))
        fi
      else
        gave_way=$((gave_way + 1))
        sed -e 's/version [0-9]*/version N/g; s/fragment [0-9]*/fragment F/g' "$d/c.err" | head -1 >>"$d/why"
      fi
      sleep 0.3
    done
  fi
  wait $writer
  local rows; rows=$(node $I/lance_rowset.mjs "$t" "$d/writer.json" 1200)
  printf '%-8s %-11s committed %4d  gave way %4d  nothing %3d  (%d%% of those with work)  carried %4d rows; %s\n' \
    "$mode" "${1:+stable ids}" "$committed" "$gave_way" "$nothing" \
    $((committed + gave_way ? 100 * committed / (committed + gave_way) : 0)) "$carried" "$rows"
  [ ! -f "$d/why" ] || sort "$d/why" | uniq -c | sed 's/^/    gave way: /'
}

for m in $MODES; do
  run "$m"
  run "$m" --stable-row-ids
done
