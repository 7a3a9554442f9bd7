#!/usr/bin/env bash
# Runs brid's tests (with a radosgw for the S3 tests, see below): every unit
# test binary in BUILD/tests, the command-line
# tests tests/cli/test_*.sh, the daemon tests tests/integration/test_*.sh
# (a real brid process), then the interop tests tests/interop/test_*.sh
# (those need the LanceDB oracle that scripts/deps.sh installs). Prints one line per test
# program and a closing "N passed, N failed" line; exits 1 if any failed.
#   scripts/run-tests.sh BUILD [unit|cli|integration|interop]
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:?build dir}
WHICH=${2:-all}
export BRI_SOURCE_DIR=$PWD
export BRICTL=$PWD/$BUILD/bin/brictl
export BRI_BUILD=$PWD/$BUILD
export BRID=$PWD/$BUILD/bin/brid
export ORACLE_NODE_DIR=$PWD/.deps/node
export LANCEDB_LOG=error
export CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-120}
pass=0; fail=0; failed=()
# The S3 tests run against a real radosgw (scripts/s3-server.sh, about 2 s to
# start): started here unless one is running, its AWS_* variables and
# BRI_S3_BUCKET exported, and stopped at the end when this run started it
# (BRI_S3_KEEP=1 leaves it running). A server that does not start is a
# failure, never a skip.
s3_started=0
s3_stop() { if [ "$s3_started" = 1 ] && [ "${BRI_S3_KEEP:-0}" != 1 ]; then scripts/s3-server.sh stop; fi; }
trap s3_stop EXIT
scripts/s3-server.sh status || s3_started=1
if s3_env=$(scripts/s3-server.sh start 2>&1); then
  eval "$s3_env"
else
  fail=$((fail+1)); failed+=("s3-server"); echo "FAIL s3-server (radosgw did not start)"
  sed 's/^/    /' <<<"$s3_env" | tail -30
fi
run() {
  local name=$1; shift
  local log; log=$(mktemp)
  if "$@" >"$log" 2>&1; then
    pass=$((pass+1)); echo "PASS $name"
  else
    fail=$((fail+1)); failed+=("$name"); echo "FAIL $name"; sed 's/^/    /' "$log" | tail -60
  fi
  rm -f "$log"
}
if [ "$WHICH" = all ] || [ "$WHICH" = unit ]; then
  for t in "$BUILD"/tests/test_*; do [ -x "$t" ] && run "unit/$(basename "$t")" "$t"; done
fi
if [ "$WHICH" = all ] || [ "$WHICH" = cli ]; then
  for t in tests/cli/test_*.sh; do [ -f "$t" ] && run "cli/$(basename "$t")" bash "$t"; done
fi
if [ "$WHICH" = all ] || [ "$WHICH" = integration ]; then
  for t in tests/integration/test_*.sh; do [ -f "$t" ] && run "integration/$(basename "$t")" bash "$t"; done
fi
if [ "$WHICH" = all ] || [ "$WHICH" = interop ]; then
  for t in tests/interop/test_*.sh; do [ -f "$t" ] && run "interop/$(basename "$t")" bash "$t"; done
fi
echo
((fail)) && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed"
((fail == 0))
