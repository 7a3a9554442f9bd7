#!/usr/bin/env bash
# run.sh: the power-loss harness (docs/reliability.md "Power loss"). Each
# workload runs brictl on a fresh copy of a fixture with plshim.so preloaded
# (every file-system operation beneath the workload's root recorded), then
# replay.py builds the crash states a power loss permits and check.py checks
# each (verify, brictl and LanceDB read an old or a new version, the next
# compaction succeeds; for brid-job, brid started on the state recovers).
# PL_MAX_STATES (100) and PL_BRID_STATES (40) cap a workload's states.
#
#   tests/powerloss/run.sh [--quick] [--canary] [--only REGEX]
#
#   --quick    the subset make check runs: compact-link and cleanup, at most
#              PL_QUICK_STATES (60) states each, and brid-job with 15
#   --canary   arm canary.no_put_dir_fsync in the recorded commands: a put
#              skips the fsync of its directory; violations must be reported
#   --only R   the workloads whose name matches R (grep -E)
# Last line: "powerloss: N crash states, M violations"; exit 1 when M > 0
# (with --canary too: there M > 0 is the harness seeing the canary).
# Needs BRICTL, BRI_BUILD (plshim.so in $BRI_BUILD/powerloss) and the LanceDB
# oracle (tests/interop/lib.sh).
. "$(dirname "$0")/../interop/lib.sh"
need_oracle
PLDIR=$REPO/tests/powerloss
PY=${PY:-python3}
SHIM=$BRI_BUILD/powerloss/plshim.so
BRID=${BRID:-$BRI_BUILD/bin/brid}
export BRID
[ -f "$SHIM" ] || fail "no $SHIM (make $SHIM)"
QUICK=0 CANARY=0 ONLY=
while [ $# -gt 0 ]; do
  case $1 in
    --quick) QUICK=1 ;;
    --canary) CANARY=1 ;;
    --only) ONLY=$2; shift ;;
    *) fail "unknown argument $1" ;;
  esac
  shift
done
MAX=${PL_MAX_STATES:-100}
[ $QUICK = 1 ] && MAX=${PL_QUICK_STATES:-60}
T0=$SECONDS
TOTAL=0 VIOL=0
SUMMARY=$TMPD/summary

# ---------------------------------------------------------------- fixtures
FX=$TMPD/fx
mkdir -p "$FX"
make_tables "$FX/gen" --tables blobs --blob-batches 2:6:300,2:5:6K,1:3:80K \
  --inline-threshold 1024 --dedicated-threshold 65536 \
  --blob-delete "(id % 5 = 2 AND id < 12) OR id = 23" >/dev/null
mv "$FX/gen/blobs.lance" "$FX/stock.lance"
lance_ops "$FX/stock.lance" tag old 3 >/dev/null
cp -a "$FX/stock.lance" "$FX/bri.lance"
"$BRICTL" compact "$FX/bri.lance" --strategy bri >/dev/null
"$BRICTL" gen "$FX/bri.lance" --fragments 2 --rows 5 --blob-sizes 300,6K,80K,null \
  --inline-threshold 1024 --dedicated-threshold 65536 >/dev/null
# every fixture file is older than what the workloads write (cleanup's grace)
sleep 1

# the commands of each workload, @ standing for the table, % for the clone
# (one command a line); FIXTURE:WORKLOAD
workload_cmds() {
  case $1 in
    compact-link) printf '%s\n' "compact @ --strategy link" "materialize @" "cleanup @ --older-than 0 --grace 0" ;;
    compact-copy) printf '%s\n' "compact @ --strategy copy" "materialize @" "cleanup @ --older-than 0 --grace 0" ;;
    compact-bri) printf '%s\n' "compact @ --strategy bri" "materialize @" "cleanup @ --older-than 0 --grace 0" ;;
    cleanup) printf '%s\n' "cleanup @ --older-than 0 --grace 0" ;;
    materialize) printf '%s\n' "materialize @" "cleanup @ --older-than 0 --grace 0" ;;
    clone-deep) printf '%s\n' "clone @ % --deep" ;;
    # (gen commits one version a fragment: one fragment a command, so that
    # every version it makes is one of the reads taken between commands)
    gen) printf '%s\n' "gen @ --fragments 1 --rows 4 --blob-sizes 300,6K,80K,null --inline-threshold 1024 --dedicated-threshold 65536" \
                       "gen @ --fragments 1 --rows 3 --blob-sizes 6K,80K --inline-threshold 1024 --dedicated-threshold 65536" ;;
  esac
}
workload_fixture() { case $1 in compact-bri|materialize) echo bri ;; *) echo stock ;; esac; }

# run_workload NAME APPEND: records NAME's commands on a fresh copy of its
# fixture (APPEND=1: a LanceDB append first, made durable before the snapshot),
# builds its crash states and checks them.
run_workload() {
  local name=$1 append=$2 label=$1
  WT0=$SECONDS
  [ "$append" = 1 ] && label=$name+append
  local D=$TMPD/$label W
  W=$D/w
  mkdir -p "$W"
  cp -a "$FX/$(workload_fixture "$name").lance" "$W/t.lance"
  if [ "$append" = 1 ]; then
    # Lance makes no fsync and renames through raw system calls a preload
    # cannot see: its append is taken as durable (synced) before the snapshot
    if [ "$(workload_fixture "$name")" = bri ]; then
      "$BRICTL" gen "$W/t.lance" --fragments 1 --rows 4 --blob-sizes 300,6K,80K,null \
        --inline-threshold 1024 --dedicated-threshold 65536 >/dev/null
    else
      lance_ops "$W/t.lance" append 4 --kind blobs >/dev/null
    fi
    sync -f "$W"
  fi
  local refs=() i=0 line args
  "$BRICTL" scan "$W/t.lance" --json >"$D/ref0.json"
  refs+=("$D/ref0.json")
  "$PY" "$PLDIR/replay.py" snapshot "$W" "$D/snap"
  local env=(PL_LOG="$D/log" PL_ROOTS="$W" LD_PRELOAD="$SHIM")
  [ "$CANARY" = 1 ] && env+=(BRI_FAILPOINTS=canary.no_put_dir_fsync=on)
  while IFS= read -r line; do
    i=$((i + 1))
    args=${line//@/$W/t.lance}
    args=${args//%/$W/c.lance}
    # shellcheck disable=SC2086
    env "${env[@]}" "$BRICTL" $args >"$D/cmd$i.out" 2>&1 || fail "$label: brictl $line: $(tail -3 "$D/cmd$i.out")"
    "$BRICTL" scan "$W/t.lance" --json >"$D/ref$i.json"
    refs+=("$D/ref$i.json")
  done < <(workload_cmds "$name")
  local opt=() tables
  tables=$(IFS=,; echo "${refs[*]}")
  [ -d "$W/c.lance" ] && opt=(--table "c.lance=$tables" --optional c.lance)
  judge "$label" "$D" "$W" "$MAX" --table "t.lance=$tables" "${opt[@]}" --next link
}

# judge LABEL D W MAX CHECK_ARGS...: builds the crash states of D's recording
# (at most MAX), checks them (check.py CHECK_ARGS), adds up and prints the
# workload's line, then removes D.
judge() {
  local label=$1 D=$2 W=$3 max=$4 gen res rc=0 last n m
  shift 4
  gen=$("$PY" "$PLDIR/replay.py" states "$D/log" "$W" "$D/snap" "$D/st" --max "$max")
  res=$("$PY" "$PLDIR/check.py" "$D/st" "$label" "$@") || rc=$?
  grep '^VIOLATION' <<<"$res" | head -"${PL_SHOW:-20}" || true
  last=$(tail -1 <<<"$res")
  n=$(sed -n 's/.*: \([0-9]*\) crash states, .*/\1/p' <<<"$last")
  m=$(sed -n 's/.* \([0-9]*\) violations$/\1/p' <<<"$last")
  [ -n "$n" ] && [ -n "$m" ] || fail "$label: the checker ended without a count: $(tail -3 <<<"$res")"
  [ "$rc" = 0 ] || [ "$m" -gt 0 ] || fail "$label: the checker failed: $(tail -3 <<<"$res")"
  TOTAL=$((TOTAL + n)) VIOL=$((VIOL + m))
  printf '%-22s %4d states %4d violations %4d s  (%s)\n' "$label" "$n" "$m" $((SECONDS - WT0)) "$gen" |
    tee -a "$SUMMARY"
  rm -rf "$D"
}

# run_brid APPEND: brid's own life of a job through its SQLite store: brid
# starts on an empty store (under the recorder, like everything it writes
# beneath the workload's root: the table and the store), a compaction is
# submitted and followed (queue, claim, run, commit, record), brid stops on
# SIGTERM. Each crash state is checked as a table (check.py) and by brid
# started on it (check_brid.py): it recovers, forgets no committed job, and
# the next compaction succeeds.
run_brid() {
  local append=$1 label=brid-job
  [ "$append" = 1 ] && label=brid-job+append
  WT0=$SECONDS
  local D=$TMPD/$label W base
  W=$D/w
  mkdir -p "$W/root" "$W/state"
  cp -a "$FX/stock.lance" "$W/root/t.lance"
  if [ "$append" = 1 ]; then
    lance_ops "$W/root/t.lance" append 4 --kind blobs >/dev/null
    sync -f "$W"
  fi
  "$BRICTL" scan "$W/root/t.lance" --json >"$D/ref0.json"
  base=$("$BRICTL" inspect "$W/root/t.lance" --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["version"])')
  "$PY" "$PLDIR/replay.py" snapshot "$W" "$D/snap"
  printf '[daemon]\nroot = %s\nretry_base = 1s\n[defaults]\nauto_compact = no\ncleanup_interval = 0\n' \
    "$W/root" >"$D/brid.conf"
  local env=(PL_LOG="$D/log" PL_ROOTS="$W" LD_PRELOAD="$SHIM")
  [ "$CANARY" = 1 ] && env+=(BRI_FAILPOINTS=canary.no_put_dir_fsync=on)
  env "${env[@]}" "$BRID" --config "$D/brid.conf" --socket "$D/s.sock" --state "$W/state/jobs.db" 2>"$D/brid.log" &
  local pid=$! i=0
  until grep -q "ready:" "$D/brid.log"; do
    kill -0 $pid 2>/dev/null && [ $i -lt 300 ] || { kill -KILL $pid 2>/dev/null; fail "$label: brid did not start: $(tail -3 "$D/brid.log")"; }
    sleep 0.1; i=$((i + 1))
  done
  "$BRICTL" compact "$W/root/t.lance" --strategy link --wait --socket "$D/s.sock" >"$D/cmd.out" 2>&1 ||
    { kill -KILL $pid; fail "$label: the compaction through brid failed: $(tail -3 "$D/cmd.out")"; }
  kill -TERM $pid
  wait $pid || fail "$label: brid stopped with status $?: $(tail -3 "$D/brid.log")"
  "$BRICTL" scan "$W/root/t.lance" --json >"$D/ref1.json"
  judge "$label" "$D" "$W" "${PL_BRID_STATES:-40}" --table "root/t.lance=$D/ref0.json,$D/ref1.json" \
    --brid "$W:root/t.lance:state/jobs.db:$base:link:$D/snap.inodes"
}

if [ $QUICK = 1 ]; then
  WORKLOADS=("compact-link 0" "cleanup 0" "brid-job 0")
  PL_BRID_STATES=${PL_BRID_STATES:-15}
else
  WORKLOADS=()
  for w in compact-link compact-copy compact-bri cleanup materialize clone-deep gen brid-job; do
    WORKLOADS+=("$w 0" "$w 1")
  done
fi
for w in "${WORKLOADS[@]}"; do
  set -- $w
  [ -z "$ONLY" ] || grep -qE -- "$ONLY" <<<"$1" || continue
  if [ "$1" = brid-job ]; then run_brid "$2"; else run_workload "$1" "$2"; fi
done
echo "powerloss: $((SECONDS - T0)) s"
echo "powerloss: $TOTAL crash states, $VIOL violations"
((VIOL == 0))
