#!/usr/bin/env bash
# Crash matrix: every failpoint of libbri's registry (lib/util/failpoint.c)
# that brictl's offline commands pass through, armed in turn while the
# command runs on a fresh copy of a blob table, then the table is judged.
#
#   tests/reliability/crash_matrix.sh [--fast] [--only REGEX]
#
# Tables (built once, copied for every case; all with Inline, Packed and
# Dedicated Blob v2 values, deleted rows, and a tag "old" on version 3):
#   stock   written by LanceDB: 5 appends, then a delete (deletion files);
#   bri     stock compacted by brictl with the bri strategy (a BRI on the
#           merged data file, its sidecars in the old directories), then two
#           fragments appended by brictl gen;
#   linked  stock compacted with the link strategy (still readable by LanceDB).
# Commands (brictl runs them in-process, so a failpoint crashes brictl itself):
#   compact-bri/-link/-copy  compact stock with that strategy
#   compact-bri2             compact bri (its BRI references stay terminal)
#   materialize              materialize bri
#   cleanup                  cleanup bri --older-than 0 (tag kept, BRI sources
#                            cleaned file by file)
#   cleanup-stock            cleanup linked --older-than 0
# Actions: abort (SIGABRT), exit (_exit(99)), stop (the thread sleeps, the test
# sends SIGKILL), eio and enospc (the operation must fail cleanly: exit status
# 2, the injected message, and, except for cleanup, no file changed).
#
# After the armed run: `brictl verify --all-versions` passes, the latest version
# reads exactly the rows and blob bytes the table held before (LanceDB when
# the latest version is stock-readable, else brictl scan; both compared with
# what LanceDB read from the fixture), and the tagged version reads as before.
# Then the command runs again unarmed and must succeed, `brictl cleanup
# --older-than 0 --grace 0` runs, the same reads and verify pass, exactly the
# latest and the tagged versions are left, and no file is left that no
# version references (orphans.py: data files, sidecar directories and files,
# staging files, transaction and deletion files).
#
# --fast (make check): every failpoint once, with one action (rotating over
# abort, exit and eio; enospc for the write failpoints), on the first command
# that reaches it. Full (make reliability): every failpoint on every command
# that reaches it, with every action, plus @3 variants of failpoints passed
# many times. Failpoints that only brid reaches (jobs.*) are listed as such
# (tests/reliability/brid_matrix.sh covers them). A failpoint that no command
# reaches fails the run: the registry and the instrumentation disagree.
# Prints one line per case and a summary; exit status 1 on any failure.
set -euo pipefail
. "$(dirname "$0")/../interop/lib.sh"
. "$(dirname "$0")/lib.sh"
need_oracle

matrix_setup crash_matrix.sh "$@"

# run_case FAILPOINT EIO_KIND COMMAND ACTION: 0 passed, 1 failed, 3 not reached
run_case() {
  local fp=$1 kind=$2 cmd=$3 action=$4 fx=${CMD_FX[$3]}
  CASE=$TMPD/case
  rm -rf "$CASE"
  mkdir -p "$CASE"
  local t=$CASE/t.lance
  cp -a "$FX/$fx.lance" "$t"
  listing "$t" >"$CASE/l0"
  local args=${CMD_ARGS[$cmd]//@/$t} rc=0 what
  local base=${action%@*}
  if [ "$base" = stop ]; then
    # shellcheck disable=SC2086
    BRI_FAILPOINTS="$fp=$action" "$BRICTL" $args >"$CASE/out" 2>"$CASE/err" &
    local pid=$! waited=0
    while kill -0 $pid 2>/dev/null && ! grep -qs "failpoint $fp: stop" "$CASE/err" && [ $waited -lt 600 ]; do
      sleep 0.1; waited=$((waited + 1))
    done
    if grep -qs "failpoint $fp: stop" "$CASE/err"; then kill -9 $pid 2>/dev/null || true; fi
    wait $pid || rc=$?
  else
    # shellcheck disable=SC2086
    BRI_FAILPOINTS="$fp=$action" timeout 120 "$BRICTL" $args >"$CASE/out" 2>"$CASE/err" || rc=$?
  fi
  case $base in
    abort) [ $rc = 0 ] && return 3; [ $rc = 134 ] || { echo "expected SIGABRT (134), got $rc: $(head -3 "$CASE/err")"; return 1; }
           what="crashed (SIGABRT)" ;;
    exit)  [ $rc = 0 ] && return 3; [ $rc = 99 ] || { echo "expected exit 99, got $rc: $(head -3 "$CASE/err")"; return 1; }
           what="crashed (_exit 99)" ;;
    stop)  [ $rc = 0 ] && return 3; [ $rc = 137 ] || { echo "expected SIGKILL (137), got $rc: $(head -3 "$CASE/err")"; return 1; }
           what="stopped, killed -9" ;;
    eio|enospc)
      if [ "$kind" = ignored ]; then
        [ $rc = 0 ] || { echo "past the point of no return $base must be ignored, got $rc: $(head -3 "$CASE/err")"; return 1; }
        what="$base ignored, command succeeded"
      else
        [ $rc = 0 ] && return 3
        [ $rc = 2 ] || { echo "expected exit 2, got $rc: $(head -3 "$CASE/err")"; return 1; }
        grep -q "failpoint $fp: injected" "$CASE/err" || { echo "error does not name the injected fault: $(head -3 "$CASE/err")"; return 1; }
        [ $base = enospc ] && { grep -q "ENOSPC" "$CASE/err" || { echo "ENOSPC not reported: $(head -3 "$CASE/err")"; return 1; }; }
        what="failed with $(sed 's/^brictl: //' "$CASE/err" | head -1 | cut -c1-90)"
        if [[ $cmd != cleanup* ]]; then
          listing "$t" >"$CASE/l1"
          if ! diff -u "$CASE/l0" "$CASE/l1" >"$CASE/diff"; then
            sed 's/^/      /' "$CASE/diff" | head -20
            echo "the failed command left files behind or changed some"; return 1
          fi
          what+="; nothing left behind"
        fi
      fi ;;
  esac
  check_state "$t" "$fx" "after the $base" || return 1
  # shellcheck disable=SC2086
  if ! timeout 120 "$BRICTL" $args >"$CASE/out2" 2>"$CASE/err2"; then
    echo "the unarmed rerun fails: $(head -3 "$CASE/err2")"; return 1
  fi
  if ! "$BRICTL" cleanup "$t" --older-than 0 --grace 0 >"$CASE/clean.out" 2>&1; then
    echo "cleanup --grace 0 fails: $(head -3 "$CASE/clean.out")"; return 1
  fi
  check_state "$t" "$fx" "after the rerun and cleanup" || return 1
  local latest
  latest=$("$BRICTL" inspect "$t" --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["version"])')
  if ! orphans "$t" "$TAG_V,$latest" >"$CASE/orphans" 2>&1; then
    sed 's/^/      /' "$CASE/orphans" | head -20
    echo "files left after cleanup --grace 0 that no version references"; return 1
  fi
  echo "$what; intact; rerun ok; nothing orphaned"
  return 0
}

actions_for() { # FP KIND IDX
  if [ $FAST = 1 ]; then
    local rot=(abort exit eio) act
    act=${rot[$(($3 % 3))]}
    [ "$2" = ignored ] && [ $act = eio ] && act=abort
    write_fp "$1" && act=enospc
    echo $act
  else
    local acts="abort exit stop eio"
    write_fp "$1" && acts+=" enospc"
    repeat_fp "$1" && acts+=" abort@3 eio@3"
    echo $acts
  fi
}

run_matrix "crash matrix" "" "brid alone: brid_matrix.sh covers it"
pass
