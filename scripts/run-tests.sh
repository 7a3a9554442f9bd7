#!/usr/bin/env bash
# Runs brid's tests (with a radosgw for the S3 tests and Azurite for the
# Azure tests, see below): every unit
# test binary in BUILD/tests, the command-line
# tests tests/cli/test_*.sh, the daemon tests tests/integration/test_*.sh
# (a real brid process), the interop tests tests/interop/test_*.sh
# (those need the LanceDB oracle that scripts/deps.sh installs), the
# power-loss subset tests/powerloss/test_*.sh (docs/reliability.md "Power
# loss"), then the system tests tests/system/test_*.sh (the Debian package
# under systemd in a container; one that exits 77 could not boot one here
# and is reported SKIP, not counted as a failure; any other test's 77 is a
# failure). Prints one line per test
# program and a closing "N passed, N failed" line; exits 1 if any failed.
#   scripts/run-tests.sh BUILD [all|unit|cli|integration|interop|powerloss|system] [REGEX]
# REGEX (grep -E) keeps only the tests whose name (e.g. interop/test_s3.sh)
# matches it. BRI_TEST_ONCE=0 (make check SANITIZE=1 sets it) leaves out the
# tests that .ci/run runs once, with the plain build: tests/system (it
# installs the package, built without sanitizers), tests/powerloss (its
# preloaded recorder cannot go into an ASan process), the three-brid
# cluster runs (integration/test_cluster_*.sh, minutes of LanceDB writers
# and lease timeouts), the busy writers (integration/test_daemon_busy*.sh,
# a minute of LanceDB writes each, locally and on S3) and the crash matrix on PostgreSQL
# (integration/test_daemon_crash_matrix_pg.sh: the SQLite matrix runs the
# same cases under ASan); their store and lease code runs under ASan in
# test_jobs and the PostgreSQL daemon tests.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:?build dir}
WHICH=${2:-all}
ONLY=${3:-}
ONCE=${BRI_TEST_ONCE:-1}
export BRI_SOURCE_DIR=$PWD
export BRICTL=$PWD/$BUILD/bin/brictl
export BRI_BUILD=$PWD/$BUILD
export BRID=$PWD/$BUILD/bin/brid
export ORACLE_NODE_DIR=$PWD/.deps/node
export LANCEDB_LOG=error
export CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-120}
# The tests run python3 thousands of times, many of them in loops that poll a
# running job: Debian's (a python3 the deps install), not a version manager's
# shim first in PATH (pyenv's costs half a second a call, 60 ms for the
# interpreter itself, and starved those polls).
if [ -x /usr/bin/python3 ] && [ "$(command -v python3)" != /usr/bin/python3 ]; then
  mkdir -p "$BUILD/testbin"
  ln -sf /usr/bin/python3 "$BUILD/testbin/python3"
  export PATH=$PWD/$BUILD/testbin:$PATH
fi
pass=0; fail=0; skipped=0; failed=()
# The S3 tests run against a real radosgw (scripts/s3-server.sh, about 2 s to
# start; AWS_* and BRI_S3_BUCKET), the Azure tests against Azurite
# (scripts/azurite-server.sh; AZURE_*, AZURITE_BLOB_STORAGE_URL and
# BRI_AZ_CONTAINER), the PostgreSQL job store tests against a throwaway
# PostgreSQL (scripts/pg-server.sh; BRI_TEST_PG): each started here unless
# one is running, its variables exported, and stopped at the end when this
# run started it (BRI_S3_KEEP=1, BRI_AZ_KEEP=1, BRI_PG_KEEP=1 leave them
# running). Each run has servers of its own (state dirs named after its pid,
# free ports), so that two runs on one machine never stop each other's; a
# BRI_S3_DIR, BRI_AZ_DIR or BRI_PG_DIR set by the caller names one to share.
# A server that does not start is a failure, never a skip.
export BRI_S3_DIR=${BRI_S3_DIR:-${TMPDIR:-/tmp}/bri-s3-$(id -u)-run$$}
export BRI_AZ_DIR=${BRI_AZ_DIR:-${TMPDIR:-/tmp}/bri-az-$(id -u)-run$$}
export BRI_PG_DIR=${BRI_PG_DIR:-${TMPDIR:-/tmp}/bri-pg-$(id -u)-run$$}
to_stop=()
stop_servers() {
  local s
  for s in "${to_stop[@]}"; do scripts/$s stop; done
}
trap stop_servers EXIT
server() { # server SCRIPT NAME KEEP: start (or find) it, export its environment
  local out
  if ! scripts/$1 status && [ "$3" != 1 ]; then to_stop+=("$1"); fi
  if out=$(scripts/$1 start 2>&1); then
    eval "$out"
  else
    fail=$((fail+1)); failed+=("$1"); echo "FAIL $1 ($2 did not start)"
    sed 's/^/    /' <<<"$out" | tail -30
  fi
}
server s3-server.sh radosgw "${BRI_S3_KEEP:-0}"
server azurite-server.sh azurite "${BRI_AZ_KEEP:-0}"
server pg-server.sh postgresql "${BRI_PG_KEEP:-0}"
# Tests run BRI_TEST_JOBS at a time [3: most of a daemon or interop test's
# time is spent waiting on timers, LanceDB's node process or the disk, so
# even two cores keep three busy]. The longest start first: the durations of
# this build's last run (BUILD/test-durations), else interop, daemon, command
# line, unit (a build that has not run them yet takes another build's
# durations: the sanitizer build's order from the plain one). Each test's output is kept and printed under its line when it
# fails; a line per test as it ends, with its wall time.
JOBS=${BRI_TEST_JOBS:-3}
DURATIONS=$BUILD/test-durations
OUT=$(mktemp -d)
names=(); paths=()
add() { [ -z "$ONLY" ] || grep -qE -- "$ONLY" <<<"$1" || return 0; names+=("$1"); paths+=("$2"); }
# A test that runs past BRI_TEST_TIMEOUT seconds [1800] is stopped and fails
# (a server that stops answering must not hold a CI run until its limit).
TIMEOUT=${BRI_TEST_TIMEOUT:-1800}
run_one() { case $1 in *.sh) timeout -k 30 "$TIMEOUT" bash "$1" ;; *) timeout -k 30 "$TIMEOUT" "$1" ;; esac; }
if [ "$ONCE" = 0 ]; then
  echo "(tests/system, tests/powerloss, integration/test_cluster_*, test_daemon_busy* and test_daemon_crash_matrix_pg: run by the plain build's make check only)"
elif [ "$WHICH" = all ] || [ "$WHICH" = system ]; then
  for t in tests/system/test_*.sh; do [ -f "$t" ] && add "system/$(basename "$t")" "$t"; done
fi
if [ "$WHICH" = all ] || [ "$WHICH" = interop ]; then
  for t in tests/interop/test_*.sh; do [ -f "$t" ] && add "interop/$(basename "$t")" "$t"; done
fi
if { [ "$WHICH" = all ] || [ "$WHICH" = powerloss ]; } && [ "$ONCE" = 1 ]; then
  for t in tests/powerloss/test_*.sh; do [ -f "$t" ] && add "powerloss/$(basename "$t")" "$t"; done
fi
if [ "$WHICH" = all ] || [ "$WHICH" = integration ]; then
  for t in tests/integration/test_*.sh; do
    [ "$ONCE" = 0 ] && [[ $t == */test_cluster_* || $t == */test_daemon_crash_matrix_pg.sh || $t == */test_daemon_busy* ]] && continue
    [ -f "$t" ] && add "integration/$(basename "$t")" "$t"
  done
fi
if [ "$WHICH" = all ] || [ "$WHICH" = cli ]; then
  for t in tests/cli/test_*.sh; do [ -f "$t" ] && add "cli/$(basename "$t")" "$t"; done
fi
if [ "$WHICH" = all ] || [ "$WHICH" = unit ]; then
  for t in "$BUILD"/tests/test_*; do [ -x "$t" ] && add "unit/$(basename "$t")" "$t"; done
fi
KNOWN=
for f in "$DURATIONS" build*/test-durations; do [ -f "$f" ] && KNOWN=$f && break; done
order=$(for i in "${!names[@]}"; do
  d=$(awk -v n="${names[$i]}" '$2 == n {print $1}' "$KNOWN" 2>/dev/null)
  echo "${d:-0} $i"
done | sort -s -k1,1nr | cut -d' ' -f2)
[ -n "$KNOWN" ] || order=$(seq 0 $((${#names[@]} - 1)))
running=()
finish() { # i: report test i, which has ended
  local i=$1 rc dur; read -r rc dur <"$OUT/$i.rc"
  echo "$dur ${names[$i]}" >>"$OUT/durations"
  if [ "$rc" = 0 ]; then
    pass=$((pass+1)); echo "PASS ${names[$i]} ($dur s)"
  elif [ "$rc" = 77 ] && [[ ${names[$i]} == system/* ]]; then
    skipped=$((skipped+1)); echo "SKIP ${names[$i]}: $(grep -m1 '^SKIP' "$OUT/$i.log" || echo 'exit 77')"
  else
    fail=$((fail+1)); failed+=("${names[$i]}")
    echo "FAIL ${names[$i]} ($dur s$( [ "$rc" = 124 ] || [ "$rc" = 137 ] && echo ", stopped after ${TIMEOUT} s"))"
    sed 's/^/    /' "$OUT/$i.log" | tail -60
  fi
}
reap() { # reports the tests that ended
  local keep=() i
  for i in "${running[@]}"; do if [ -f "$OUT/$i.rc" ]; then finish "$i"; else keep+=("$i"); fi; done
  running=("${keep[@]}")
}
for i in $order; do
  reap
  while [ "${#running[@]}" -ge "$JOBS" ]; do wait -n 2>/dev/null || true; reap; done
  ( t0=$SECONDS; run_one "${paths[$i]}" >"$OUT/$i.log" 2>&1; echo "$? $((SECONDS-t0))" >"$OUT/$i.rc.new"
    mv "$OUT/$i.rc.new" "$OUT/$i.rc" ) &
  running+=("$i")
done
while [ "${#running[@]}" -gt 0 ]; do wait -n 2>/dev/null || true; reap; done
# this run's durations, and the last known of the tests it did not run
{ cat "$OUT/durations"; [ ! -f "$DURATIONS" ] ||
  awk 'NR == FNR {ran[$2] = 1; next} !($2 in ran)' "$OUT/durations" "$DURATIONS"; } >"$OUT/all"
mv "$OUT/all" "$DURATIONS"
rm -rf "$OUT"
echo
((fail)) && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed$( ((skipped)) && echo ", $skipped skipped")"
((fail == 0))
