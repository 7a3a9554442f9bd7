#!/usr/bin/env bash
# bench/cluster.sh: brid instances sharing one PostgreSQL job store, on one
# S3 root of the test radosgw (scripts/s3-server.sh and scripts/pg-server.sh,
# started here when they are not running).
#
#   bench/cluster.sh [TABLES [FRAGMENTS [INSTANCES...]]]   (default 200 20 1 2 3)
#
# TABLES blob tables of FRAGMENTS fragments each are written once by LanceDB
# (or taken from BENCH_BASE, the base prefix of an earlier run)
# (one append per fragment: 2 rows, 64 KiB values); each run compacts a deep
# clone of them (brictl clone --deep: the same files, server-side copies)
# under a prefix of its own, with a fresh database, by 1, 2, then 3 brids
# started together (2 workers each, strategy auto = copy on S3). Measured per
# run, from the first start to the moment every table has a succeeded
# compaction and nothing is queued or running:
#   - wall time and jobs per minute;
#   - store round trips per job: the statements brid's job store sent
#     (brid_store_statements_total of every instance) and PostgreSQL's
#     committed transactions for the database (pg_stat_database), each
#     divided by the jobs that ran.
# Prints a table and writes $WORK/results.json (WORK: a temp dir, or $WORK).
# The tables stay on the server (the base and one copy per run, about 0.5 GB
# each at the defaults): radosgw's memory store holds 8 GB, so restart it
# (scripts/s3-server.sh stop) before running the test suite after a few runs.
set -euo pipefail
cd "$(dirname "$0")/.."
TABLES=${1:-200}
FRAGS=${2:-20}
shift $(($# > 2 ? 2 : $#))
RUNS=("$@")
[ ${#RUNS[@]} -gt 0 ] || RUNS=(1 2 3)
BUILD=${BUILD:-build}
BRID=$PWD/$BUILD/bin/brid BRICTL=$PWD/$BUILD/bin/brictl
export ORACLE_NODE_DIR=${ORACLE_NODE_DIR:-$PWD/.deps/node} LANCEDB_LOG=error
[ -x "$BRID" ] || { echo "build first: make" >&2; exit 1; }
eval "$(scripts/s3-server.sh start)"
eval "$(scripts/pg-server.sh start)"
WORK=${WORK:-$(mktemp -d /tmp/brid-bench-cluster.XXXXXX)}
mkdir -p "$WORK"
P=s3://$BRI_S3_BUCKET/bench-cluster-$$
BASE=${BENCH_BASE:-$P/base}
now() { date +%s.%N; }
name() { printf 't%03d.lance' "$1"; }

[ -n "${BENCH_BASE:-}" ] || echo "writing $TABLES tables of $FRAGS fragments under $BASE ..." >&2
for i in $(seq 0 $((TABLES - 1))); do
  [ -z "${BENCH_BASE:-}" ] || break
  node tests/interop/lance_make.mjs --out "$BASE" --tables blobs --blob-name "$(printf t%03d "$i")" \
    --blob-batches "$FRAGS:2:64k" --blob-delete "" --seed $((i + 1)) >/dev/null &
  if (( i % 6 == 5 )); then wait; fi
done
wait

printf '%s\n' "$AWS_SECRET_ACCESS_KEY" >"$WORK/secret" && chmod 600 "$WORK/secret"
results=()
for k in "${RUNS[@]}"; do
  root=$P/run$k
  echo "run $k: cloning the tables to $root ..." >&2
  for i in $(seq 0 $((TABLES - 1))); do
    "$BRICTL" clone "$BASE/$(name "$i")" "$root/$(name "$i")" --deep >/dev/null &
    if (( i % 8 == 7 )); then wait; fi
  done
  wait
  db=bench_cluster_$$_$k
  psql "$BRI_TEST_PG" -qXc "CREATE DATABASE $db" >/dev/null
  store="$BRI_TEST_PG&dbname=$db"
  pids=()
  x0=$(psql -X -A -t -q "$store" -c "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")
  t0=$(now)
  for n in $(seq 1 "$k"); do
    cat >"$WORK/b$k-$n.conf" <<EOF
[daemon]
root = $root
store = $store
instance_name = bench-$n
workers = 2
debounce = 0s
metrics_listen = 127.0.0.1:0
EOF
    bash -c ". tests/integration/lib.sh >/dev/null; s3_root_section '$root' '$WORK/secret'" >>"$WORK/b$k-$n.conf"
    "$BRID" --config "$WORK/b$k-$n.conf" --socket "$WORK/b$k-$n.sock" 2>"$WORK/b$k-$n.log" &
    pids+=($!)
  done
  sql() { psql -X -A -t -q "$store" -c "$1"; }
  until [ "$(sql "SELECT count(DISTINCT table_id) FROM jobs WHERE kind = 'compact' AND state = 'succeeded'" 2>/dev/null || echo 0)" -ge "$TABLES" ] &&
    [ "$(sql "SELECT count(*) FROM jobs WHERE state IN ('queued', 'running')")" = 0 ]; do
    sleep 0.2
  done
  wall=$(echo "$(now) - $t0" | bc)
  jobs=$(sql "SELECT count(*) FROM jobs WHERE state = 'succeeded'")
  statements=0
  for n in $(seq 1 "$k"); do
    s=$("$BRICTL" metrics --socket "$WORK/b$k-$n.sock" | awk '$1 == "brid_store_statements_total" {print $2}')
    statements=$((statements + ${s:-0}))
  done
  x1=$(sql "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")
  by=$(sql "SELECT instance || '=' || count(*) FROM jobs WHERE state = 'succeeded' GROUP BY instance ORDER BY 1" | tr '\n' ' ')
  kill -TERM "${pids[@]}"
  wait "${pids[@]}" 2>/dev/null || true
  line=$(printf '%d instance(s): %6.1f s wall, %6.0f jobs/min, %5.1f statements/job, %5.1f transactions/job (%s)' "$k" "$wall" \
    "$(echo "$jobs * 60 / $wall" | bc -l)" "$(echo "$statements / $jobs" | bc -l)" "$(echo "($x1 - $x0) / $jobs" | bc -l)" "$by")
  echo "$line"
  results+=("{\"instances\": $k, \"wall_s\": $wall, \"jobs\": $jobs, \"statements\": $statements, \"transactions\": $((x1 - x0))}")
done
(IFS=,; echo "[${results[*]}]") >"$WORK/results.json"
echo "results: $WORK/results.json" >&2
