#!/usr/bin/env bash
# brid crash matrix: every failpoint that a job of brid passes (the registry
# of lib/util/failpoint.c: compaction, commit, blob output, cleanup,
# materialize and brid's job store) is armed in turn in a real brid that runs
# one job on a fresh copy of a blob table (deleted rows, a tag "old" on an
# older version; tests/reliability/lib.sh builds the tables and names the
# commands), then brid is restarted unarmed and the table is judged.
#
#   tests/reliability/brid_matrix.sh [--fast] [--only REGEX]
#
# One case:
#  1. brid starts with BRI_FAILPOINTS=FP=ACTION and the job is submitted over
#     its socket (automatic compaction and scheduled cleanup are off, so the
#     job is the only one);
#  2. abort and exit must kill brid (status 134 / 99); stop must hold the
#     thread at the failpoint (brid logs "failpoint FP: stop"), and the test
#     sends kill -9; eio and enospc (armed @1, the first pass) must fail the
#     job's first attempt with the injected message while brid keeps running,
#     and the retry must succeed; past the point of no return they are
#     ignored and the job succeeds at once;
#  3. after a crash, with brid down: the table verifies and reads as before;
#     brid restarts unarmed, its recovery requeues the job (or records it as
#     succeeded when its commit had landed) and the job must succeed;
#  4. the next jobs run through brid: cleanup --older-than 0 --grace 0 (the
#     grace period over) and verify --all-versions; brid stops with status 0;
#  5. the table: verify --all-versions passes, the latest version reads the
#     rows and blob bytes LanceDB read from the fixture (LanceDB itself when
#     stock Lance can read it, else brictl scan), the tagged version reads as
#     before, exactly the latest and tagged versions are left, no file is
#     left that no version references (orphans.py), the job's journal is
#     empty and no job is left running or queued.
# --fast (make check, through tests/integration/test_daemon_crash_matrix.sh):
# every failpoint once, the action rotating over abort, exit, stop and eio
# (enospc for the write failpoints; crashes past the point of no return), on
# the first command that reaches it. Full (make reliability): every failpoint
# on every command that reaches it, with every action. A failpoint that no
# command reaches fails the run. Exit status 1 on any failure.
set -euo pipefail
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lib.sh"
need_oracle

matrix_setup brid_matrix.sh "$@"

job_json() { ctl job "$1" --json 2>/dev/null; }

# waits for brid to die, to stop at FP, or for job J to end; prints which
await() {
  local fp=$1 j=$2 end=$((SECONDS + 120)) s
  while [ $SECONDS -lt $end ]; do
    kill -0 "$BRID_PID" 2>/dev/null || { echo dead; return; }
    [ -n "$fp" ] && grep -q "failpoint $fp: stop" "$BRID_LOG" && { echo stopped; return; }
    s=$(job_json "$j" | jget 'd["state"]' 2>/dev/null || true)
    case $s in succeeded | failed | cancelled) echo "$s"; return ;; esac
    sleep 0.1
  done
  echo timeout
}

# run_case FP KIND CMD ACTION: 0 passed, 1 failed, 3 not reached
run_case() {
  local fp=$1 kind=$2 cmd=$3 action=$4 fx=${CMD_FX[$3]} base=${4%@*}
  rm -rf "$CASE" "$TMPD"/bm.*
  mkdir -p "$CASE/root"
  local t=$CASE/root/t.lance what
  cp -a "$FX/$fx.lance" "$t"
  cat >"$CASE/brid.conf" <<EOF
[daemon]
root = $CASE/root
retry_base = 1s
max_attempts = 3
$([ "${BRI_TEST_STORE:-}" = pg ] && echo "lease_ttl = 6s")
[defaults]
auto_compact = no
cleanup_interval = 0
EOF
  BRI_FAILPOINTS="$fp=$action" brid_start bm --config "$CASE/brid.conf"
  # shellcheck disable=SC2086
  local j st rc=0
  if ctl ${CMD_ARGS[$cmd]//@/$t} --json --timeout 10s >"$CASE/submit.json" 2>"$CASE/submit.err"; then
    j=$(jget 'd["job"]' <"$CASE/submit.json") || { echo "no job id in $(cat "$CASE/submit.json")"; return 1; }
  elif { grep -q "failpoint $fp: stop" "$BRID_LOG" || wait_until 10 sh -c "! kill -0 $BRID_PID 2>/dev/null"; } &&
    grep -q "queued job 1$" "$BRID_LOG"; then
    # the job crashed brid, or stopped its loop thread (a claim), before the
    # reply went out; the store is fresh, so it is job 1
    j=1
  else
    echo "submitting the job failed: $(head -3 "$CASE/submit.err")"; return 1
  fi
  # eio on every pass of a job-store write: brid cannot record the job's end
  # and must stop itself (status 1), leaving the job to its restart; on a
  # shared store (PostgreSQL) it leaves the job to recovery once the job's
  # lease runs out and goes on: stopped by hand here, restarted unarmed
  [ "$action" = eio ] && [ "$fp" = jobs.before_finish ] && base=store
  if [ "$base" = store ] && [ "${BRI_TEST_STORE:-}" = pg ]; then
    wait_until 60 log_has "cannot record its end: .*; the job is recovered once its lease expires" ||
      { echo "brid did not leave the job to recovery when its store failed: $(tail -3 "$BRID_LOG")"; return 1; }
    brid_stop || { echo "brid did not stop cleanly after its store failed"; return 1; }
    st=stopped
  else
    st=$(await "$fp" "$j")
  fi
  case $st in
    dead) { wait "$BRID_PID"; } 2>/dev/null || rc=$?; BRID_PID= ;;
    stopped) [ -z "$BRID_PID" ] || brid_kill9 ;; # (already stopped by hand: a PostgreSQL store's failure)
    timeout) echo "job $j neither ended nor reached the failpoint in 120 s"; return 1 ;;
  esac
  case $base in
    abort | exit | stop | store)
      if [ "$st" != dead ] && [ "$st" != stopped ]; then
        brid_stop || true
        return 3
      fi
      case $base in
        abort) [ $rc = 134 ] || { echo "expected SIGABRT (134), brid ended with $rc ($st)"; return 1; }
               what="brid crashed (SIGABRT)" ;;
        exit) [ $rc = 99 ] || { echo "expected _exit(99), brid ended with $rc ($st)"; return 1; }
              what="brid crashed (_exit 99)" ;;
        stop) [ "$st" = stopped ] || { echo "expected a stop at the failpoint, got $st (status $rc)"; return 1; }
              what="a thread stopped at the failpoint, brid killed -9" ;;
        store) [ "${BRI_TEST_STORE:-}" = pg ] || { [ $rc = 1 ] && grep -q "stopping brid (its restart settles the job)" "$BRID_LOG"; } ||
                 { echo "expected brid to stop itself (status 1) when its store fails, got $st, status $rc"; return 1; }
               what="job store unwritable, brid $([ "${BRI_TEST_STORE:-}" = pg ] && echo "left the job to recovery" || echo "stopped itself (status 1)")" ;;
      esac
      check_state "$t" "$fx" "after brid crashed, before its restart" || return 1
      brid_start bm --config "$CASE/brid.conf"
      st=$(await "" "$j")
      [ "$st" = succeeded ] || { echo "after the restart job $j ended $st: $(job_json "$j" | jget 'd.get("error")')"; return 1; }
      what+="; restarted: job $j $(job_json "$j" | jget '"+".join(a["outcome"] or "?" for a in d["attempt_log"])')" ;;
    eio | enospc)
      [ "$st" = dead ] && { echo "brid died (status $rc) on an injected $base"; return 1; }
      [ "$st" = succeeded ] || { echo "job $j ended $st: $(job_json "$j" | jget 'd.get("error")')"; return 1; }
      job_json "$j" >"$CASE/job.json"
      local outcomes first_err
      outcomes=$(jget '"+".join(a["outcome"] or "?" for a in d["attempt_log"])' <"$CASE/job.json")
      first_err=$(jget 'd["attempt_log"][0]["error"] or ""' <"$CASE/job.json")
      if [ "$kind" = ignored ]; then
        [ "$outcomes" = succeeded ] || { echo "past the point of no return $base must be ignored; attempts: $outcomes ($first_err)"; return 1; }
        what="$base ignored, job succeeded"
      elif [ "$outcomes" = succeeded ]; then
        # brid retries a failed job-store write (a claim, a job's end) by
        # itself: the job never saw the error
        grep -q "failpoint $fp: injected" "$BRID_LOG" || { brid_stop || true; return 3; }
        what="$base absorbed by brid: $(grep -m1 "failpoint $fp: injected" "$BRID_LOG" | sed 's/^<[0-9]>//' | cut -c1-110)"
      else
        [[ $outcomes == @(failed|retried)+succeeded ]] || { echo "expected a failed attempt, then a successful one; got $outcomes"; return 1; }
        [[ $first_err == *"failpoint $fp: injected"* ]] || { echo "the failed attempt does not name the injected fault: $first_err"; return 1; }
        [ "$base" = enospc ] && { [[ $first_err == *ENOSPC* ]] || { echo "ENOSPC not reported: $first_err"; return 1; }; }
        what="attempt 1 failed ($(echo "$first_err" | sed 's/.*: failpoint/failpoint/' | cut -c1-70)), retry succeeded"
      fi
      kill -0 "$BRID_PID" || { echo "brid is gone"; return 1; } ;;
  esac
  # the next jobs: cleanup once the grace period is over, then verify
  if ! ctl cleanup "$t" --older-than 0 --grace 0 --wait >"$CASE/clean.out" 2>&1; then
    echo "the next cleanup job fails: $(tail -3 "$CASE/clean.out")"; return 1
  fi
  if ! ctl verify "$t" --all-versions --wait >"$CASE/verify.out" 2>&1; then
    echo "verify through brid fails: $(tail -3 "$CASE/verify.out")"; return 1
  fi
  job_json "$j" >"$CASE/job.json"
  [ "$(jget 'd["journal"]' <"$CASE/job.json")" = "[]" ] || { echo "job $j keeps a journal: $(jget 'd["journal"]' <"$CASE/job.json")"; return 1; }
  local busy
  busy=$(ctl jobs --json | jget 'len([x for x in d["jobs"] if x["state"] in ("running", "queued")])')
  [ "$busy" = 0 ] || { echo "$busy job(s) left running or queued"; return 1; }
  brid_stop || { echo "brid did not stop cleanly"; return 1; }
  check_state "$t" "$fx" "after recovery and the next jobs" || return 1
  local latest
  latest=$("$BRICTL" inspect "$t" --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["version"])')
  if ! orphans "$t" "$TAG_V,$latest" >"$CASE/orphans" 2>&1; then
    sed 's/^/      /' "$CASE/orphans" | head -20
    echo "files left after the grace period that no version references"; return 1
  fi
  echo "$what; intact; next jobs ok; nothing orphaned"
}

# a case that failed half way may leave its brid running (the subshell has
# no exit trap); a failed one shows the end of brid's log
after_case() {
  pkill -KILL -f -- "--socket $TMPD/bm.sock" 2>/dev/null || true
  [ "$1" = 1 ] && tail -15 "$TMPD/bm.log" 2>/dev/null | sed 's/^/      brid: /'
  return 0
}

actions_for() { # FP KIND IDX
  if [ $FAST = 1 ]; then
    local rot=(abort exit stop eio@1) act
    act=${rot[$(($3 % 4))]}
    [ "$2" = ignored ] && [ $act = eio@1 ] && act=stop
    write_fp "$1" && act=enospc@1
    echo $act
  else
    local acts="abort exit stop eio@1"
    write_fp "$1" && acts+=" enospc@1"
    [ "$1" = jobs.before_finish ] && acts+=" eio"
    echo $acts
  fi
}

run_matrix "brid crash matrix" brid "brictl's offline crash_matrix.sh covers it"
pass
