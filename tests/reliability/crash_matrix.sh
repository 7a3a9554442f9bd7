#!/usr/bin/env bash
# Crash matrix: every failpoint of libbri's registry (lib/util/failpoint.c)
# that brictl's offline commands pass through, armed in turn while the
# command runs on a fresh copy of a blob table, then the table is judged.
#
#   tests/reliability/crash_matrix.sh [--fast] [--only REGEX] [--keep-going]
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
# many times. Failpoints that only the daemon reaches (jobs.*) are listed as
# such (tests/unit/test_failpoint.c covers them). A failpoint that no command
# reaches fails the run: the registry and the instrumentation disagree.
# Prints one line per case and a summary; exit status 1 on any failure.
set -euo pipefail
. "$(dirname "$0")/../interop/lib.sh"
. "$(dirname "$0")/lib.sh"
need_oracle

FAST=0 ONLY="" KEEP_GOING=0
while [ $# -gt 0 ]; do
  case $1 in
    --fast) FAST=1 ;;
    --only) ONLY=$2; shift ;;
    --keep-going) KEEP_GOING=1 ;;
    *) echo "usage: crash_matrix.sh [--fast] [--only REGEX] [--keep-going]" >&2; exit 2 ;;
  esac
  shift
done
[ -x "$BRICTL" ] || fail "no brictl at $BRICTL"
START=$SECONDS
CASE=$TMPD/case
TAG_V=3
FX=$TMPD/fx
mkdir -p "$FX"
build_refs

# ------------------------------------------------------------------ fixtures
make_tables "$FX/gen" --tables blobs --blob-batches 2:6:300,2:5:6K,1:3:80K \
  --inline-threshold 1024 --dedicated-threshold 65536 \
  --blob-delete "(id % 5 = 2 AND id < 12) OR id = 23" >/dev/null
mv "$FX/gen/blobs.lance" "$FX/stock.lance"
lance_ops "$FX/stock.lance" tag old $TAG_V >/dev/null
lance_read "$FX/stock.lance" --json >"$FX/ref_stock.json"
lance_ops "$FX/stock.lance" read --version old >"$FX/ref_v3.json"
"$BRICTL" scan "$FX/stock.lance" --json >"$FX/s.json"
same_read "$FX/ref_stock.json" "$FX/s.json" || fail "fixture: brictl scan differs from LanceDB"
"$BRICTL" scan "$FX/stock.lance" --version $TAG_V --json >"$FX/s.json"
same_read "$FX/ref_v3.json" "$FX/s.json" || fail "fixture: brictl scan --version $TAG_V differs from LanceDB"

cp -a "$FX/stock.lance" "$FX/bri.lance"
"$BRICTL" compact "$FX/bri.lance" --strategy bri >/dev/null
"$BRICTL" gen "$FX/bri.lance" --fragments 2 --rows 5 --blob-sizes 300,6K,80K,null \
  --inline-threshold 1024 --dedicated-threshold 65536 >/dev/null
"$BRICTL" scan "$FX/bri.lance" --json >"$FX/ref_bri.json"
latest_has_bri "$FX/bri.lance" || fail "fixture: the bri table carries no BRI"

cp -a "$FX/stock.lance" "$FX/linked.lance"
"$BRICTL" compact "$FX/linked.lance" --strategy link >/dev/null
lance_read "$FX/linked.lance" --json >"$FX/ref_linked.json"
same_read "$FX/ref_stock.json" "$FX/ref_linked.json" || fail "fixture: the linked table reads differently"
for t in stock bri linked; do
  "$BRICTL" verify "$FX/$t.lance" --all-versions >/dev/null || fail "fixture $t does not verify"
done
# every fixture file is older than what the cases will write
sleep 1

declare -A CMD_FX CMD_ARGS
CMD_FX[compact-bri]=stock;   CMD_ARGS[compact-bri]="compact @ --strategy bri"
CMD_FX[compact-link]=stock;  CMD_ARGS[compact-link]="compact @ --strategy link"
CMD_FX[compact-copy]=stock;  CMD_ARGS[compact-copy]="compact @ --strategy copy"
CMD_FX[compact-bri2]=bri;    CMD_ARGS[compact-bri2]="compact @ --strategy bri"
CMD_FX[materialize]=bri;     CMD_ARGS[materialize]="materialize @"
CMD_FX[cleanup]=bri;         CMD_ARGS[cleanup]="cleanup @ --older-than 0"
CMD_FX[cleanup-stock]=linked; CMD_ARGS[cleanup-stock]="cleanup @ --older-than 0"

# registry: "name reached_by eio" per failpoint, in registry order
mapfile -t REGISTRY < <("$PY" - "$REPO/lib/util/failpoint.c" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
for m in re.finditer(r'\{"([a-z_]+\.[a-z_]+)",\s*"[^"]+",\s*"([^"]*)",\s*BRI_FP_EIO_(\w+)', text):
    print(m.group(1), m.group(2), m.group(3).lower())
EOF
)
[ ${#REGISTRY[@]} -ge 20 ] || fail "could not read the failpoint registry (${#REGISTRY[@]} entries)"

candidates() { # commands that may reach a failpoint, from its reached_by list
  local out="" r
  for r in ${1//,/ }; do
    case $r in
      compact) out+=" compact-bri compact-link compact-copy compact-bri2" ;;
      materialize) out+=" materialize" ;;
      cleanup) out+=" cleanup cleanup-stock" ;;
    esac
  done
  echo $out
}

RESULTS=$TMPD/results
: >"$RESULTS"
FAILED=0 CASES=0
note() { echo "$*" | tee -a "$RESULTS"; }

# check_state TABLE FIXTURE WHEN: verify, latest reads, tagged version reads
check_state() {
  local t=$1 fx=$2 when=$3 out=$CASE/read.json
  if ! "$BRICTL" verify "$t" --all-versions >"$CASE/verify.out" 2>&1; then
    sed 's/^/      /' "$CASE/verify.out" | head -20
    echo "verify --all-versions fails $when"; return 1
  fi
  if ! "$BRICTL" scan "$t" --json >"$out" 2>"$CASE/scan.err"; then
    echo "brictl scan fails $when: $(head -3 "$CASE/scan.err")"; return 1
  fi
  same_read "$FX/ref_$fx.json" "$out" || { echo "brictl reads other rows or bytes $when"; return 1; }
  local stock=0
  latest_has_bri "$t" || stock=1
  if [ $stock = 1 ]; then
    if ! lance_read "$t" --json >"$out" 2>"$CASE/lance.err"; then
      echo "LanceDB cannot read the table $when: $(tail -1 "$CASE/lance.err" | cut -c1-200)"; return 1
    fi
    same_read "$FX/ref_$fx.json" "$out" || { echo "LanceDB reads other rows or bytes $when"; return 1; }
  fi
  if ! "$BRICTL" scan "$t" --version $TAG_V --json >"$out" 2>"$CASE/scan.err"; then
    echo "the tagged version $TAG_V cannot be read $when: $(head -3 "$CASE/scan.err")"; return 1
  fi
  same_read "$FX/ref_v3.json" "$out" || { echo "the tagged version reads differently $when"; return 1; }
  # LanceDB opens the latest version first: it refuses the whole table while
  # the latest carries the BRI flag (by design), so only then is it asked
  if [ $FAST = 0 ] && [ $stock = 1 ]; then
    lance_ops "$t" read --version old >"$out" 2>"$CASE/lance.err" ||
      { echo "LanceDB cannot read the tagged version $when: $(tail -1 "$CASE/lance.err" | cut -c1-200)"; return 1; }
    same_read "$FX/ref_v3.json" "$out" || { echo "LanceDB reads the tagged version differently $when"; return 1; }
  fi
  return 0
}

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

# one_case FP KIND CMD ACTION: runs, records, returns run_case's status
one_case() {
  local out st=0
  out=$(run_case "$@") || st=$?
  if [ $st = 3 ]; then return 3; fi
  CASES=$((CASES + 1))
  if [ $st = 0 ]; then
    note "ok   $1 [$3, $4]: $out"
  else
    FAILED=$((FAILED + 1))
    note "FAIL $1 [$3, $4]: $out"
    if [ "${KEEP_TMP:-0}" = 1 ]; then cp -a "$CASE" "$TMPD/failed-$1-$3-${4//[:@]/_}"; fi
    [ $KEEP_GOING = 1 ] || [ $FAST = 1 ] || true
  fi
  return $st
}

write_fp() { # failpoints where an injected error is a failed write
  case $1 in writer.write|writer.before_fsync|blobout.before_copy|commit.before_txn_fsync|commit.before_manifest_fsync) return 0 ;; esac
  return 1
}
repeat_fp() { # failpoints passed many times by one command
  case $1 in outputs.after_record|blobout.after_link|cleanup.before_delete|cleanup.after_delete|materialize.after_place) return 0 ;; esac
  return 1
}

idx=0
for entry in "${REGISTRY[@]}"; do
  read -r fp reached kind <<<"$entry"
  [ -z "$ONLY" ] || [[ $fp =~ $ONLY ]] || continue
  cmds=$(candidates "$reached")
  if [ -z "$cmds" ]; then
    note "n/a  $fp: reached by $reached only (not an offline brictl command; tests/unit/test_failpoint.c)"
    continue
  fi
  idx=$((idx + 1))
  reached_by=""
  if [ $FAST = 1 ]; then
    actions=(abort exit eio)
    action=${actions[$((idx % 3))]}
    [ "$kind" = ignored ] && [ $action = eio ] && action=abort
    write_fp "$fp" && action=enospc
    # rotate the candidates so that the strategies share the work
    read -ra c <<<"$cmds"
    n=${#c[@]}
    for ((k = 0; k < n; k++)); do
      cmd=${c[$(((idx + k) % n))]}
      st=0; one_case "$fp" "$kind" "$cmd" "$action" || st=$?
      if [ $st != 3 ]; then reached_by=$cmd; break; fi
    done
  else
    for cmd in $cmds; do
      st=0; one_case "$fp" "$kind" "$cmd" abort || st=$?
      [ $st = 3 ] && continue
      reached_by+=" $cmd"
      acts="exit stop eio"
      write_fp "$fp" && acts+=" enospc"
      repeat_fp "$fp" && acts+=" abort@3 eio@3"
      for a in $acts; do
        st=0; one_case "$fp" "$kind" "$cmd" "$a" || st=$?
        [ $st = 3 ] && note "--   $fp [$cmd, $a]: not reached (fewer passes)"
      done
    done
  fi
  if [ -z "$reached_by" ]; then
    FAILED=$((FAILED + 1))
    note "FAIL $fp: no command reached it (candidates: $cmds)"
  fi
done

echo
echo "crash matrix$([ $FAST = 1 ] && echo " (fast)"): $CASES cases, $FAILED failed, $((SECONDS - START)) s"
[ $FAILED = 0 ] || fail "$FAILED crash-matrix cases failed"
pass
