#!/usr/bin/env bash
# CLUSTER: three brids share one PostgreSQL job store and one root (issue
# CLUSTER), run by test_cluster_s3.sh (an S3 root on the test radosgw) and
# test_cluster_local.sh (one local directory standing in for a filesystem
# the three hosts mount). CLUSTER_ROOT=s3|local says which.
#
# 40 blob tables written by LanceDB; a LanceDB writer appends to and deletes
# from 5 of them throughout. The instances run with lease_ttl = 6s. During
# the run:
#  - instance a is killed -9 in the middle of a compaction (a failpoint
#    holds its compactions for 15 s after their data files are written, long
#    enough for this test to see one journaled on a loaded machine);
#  - instance b is stopped (SIGSTOP) in the middle of a job for longer than
#    its lease, then continued: it must neither commit nor delete after that;
#  - the PostgreSQL server is restarted once.
# Afterwards:
#  - every table verifies (brictl verify), the 5 written tables hold exactly
#    the rows the writer committed (lance_rowset.mjs), the other 35 read
#    back in LanceDB exactly as before;
#  - the killed instance's interrupted job was recovered by another
#    instance, and no file it journaled is left unless a committed version
#    references it (its journal is empty);
#  - no job is running, none failed, and no two attempts on one table
#    overlap in time (the store's own history);
#  - brictl status of a live instance lists the three instances (a lost),
#    and brictl jobs --json names the instance of each job.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_oracle
pg_private
KIND=${CLUSTER_ROOT:-s3}
N=40
WRITTEN=5
TTL=6

if [ "$KIND" = s3 ]; then
  need_s3 cluster
  ROOT=$S3_PREFIX
else
  ROOT=$TMPD/shared
  mkdir -p "$ROOT"
fi
table() { printf '%s/t%02d.lance' "$ROOT" "$1"; }

# ---------------------------------------------------------------- tables
echo "writing $N tables under $ROOT"
for i in $(seq 0 $((N - 1))); do
  make_tables "$ROOT" --tables blobs --blob-name "$(printf t%02d "$i")" --blob-batches 4:4:100k \
    --blob-delete "" --seed $((100 + i)) >/dev/null &
  if (( i % 4 == 3 )); then wait; fi
done
wait
for i in $(seq "$WRITTEN" $((N - 1))); do lance_read "$(table "$i")" --json >"$TMPD/before-$i.json"; done

# ------------------------------------------------------------- instances
STORE=$(pg_fresh_db cluster)
declare -A PID SOCKET LOG
conf() { # conf NAME: brid.conf of instance NAME
  cat <<EOF
[daemon]
root = $ROOT
store = $STORE
instance_name = brid-$1
lease_ttl = ${TTL}s
debounce = 1s
sweep_interval = 2s
retry_base = 1s
retry_max = 2s
max_attempts = 20
workers = 2
EOF
  if [ "$KIND" = s3 ]; then
    printf '%s\n' "$AWS_SECRET_ACCESS_KEY" >"$TMPD/secret" && chmod 600 "$TMPD/secret"
    s3_root_section "$ROOT" "$TMPD/secret"
  fi
}
start() { # start NAME [FAILPOINTS]
  local n=$1
  conf "$n" >"$TMPD/$n.conf"
  SOCKET[$n]=$TMPD/$n.sock
  LOG[$n]=$TMPD/$n.log
  BRI_FAILPOINTS=${2:-} "$BRID" --config "$TMPD/$n.conf" --socket "${SOCKET[$n]}" 2>>"${LOG[$n]}" &
  PID[$n]=$!
  wait_until 30 grep -q "ready:" "${LOG[$n]}" || { cat "${LOG[$n]}" >&2; fail "brid-$n did not get ready"; }
}
on() { local n=$1; shift; "$BRICTL" "$@" --socket "${SOCKET[$n]}"; }
stop_all() {
  for n in "${!PID[@]}"; do kill -KILL "${PID[$n]}" 2>/dev/null || true; kill -CONT "${PID[$n]}" 2>/dev/null || true; done
}
# on failure: each instance's last lines, then the reason again (run-tests.sh
# shows a failed test's last 60 lines)
WHY=
fail() { _TEST_FAILED=1; WHY="$*"; echo "FAIL: $TEST_NAME: $*" >&2; exit 1; }
trap 'stop_all; if [ "${_TEST_FAILED:-0}" = 1 ]; then for n in "${!LOG[@]}"; do echo "--- brid-$n ---" >&2;
  tail -8 "${LOG[$n]}" | cut -c1-200 >&2; done; echo "FAIL: $TEST_NAME: $WHY" >&2; fi; _brid_cleanup' EXIT
running_job() { # running_job NAME: the id of a compaction instance NAME runs, if any
  on "$1" status --json | jget '([r["job"] for r in d["running"] if r["kind"] == "compact"] or [""])[0]'
}
await_job() { # await_job NAME SECONDS: prints the id of a compaction NAME is running
  local end=$((SECONDS + $2)) j
  while [ $SECONDS -lt $end ]; do
    j=$(running_job "$1" 2>/dev/null || true)
    [ -n "$j" ] && { echo "$j"; return 0; }
    sleep 0.2
  done
  return 1
}
sql() { psql -X -A -t -q "$STORE" -c "$1"; }

start a "compact.after_bin=delay:15000"
start b "compact.after_bin=delay:2500"
start c
echo "three instances on one store"

WRITERS=
for i in $(seq 0 $((WRITTEN - 1))); do
  node "$INTEROP_DIR/lance_writer_loop.mjs" "$(table "$i")" --kind blobs --blob-size 65536 --seconds 40 --rows 2 \
    --delete-every 3 --pause 300 --seed $((100 + i)) >"$TMPD/writer-$i.json" 2>"$TMPD/writer-$i.err" &
  WRITERS+=" $!"
done

# kill -9 a in the middle of a compaction: its data files written, not committed
JA=$(await_job a 60) || fail "brid-a ran no compaction within 60 s"
# its outputs journaled (then written; the failpoint holds it 15 s after that)
journaled() { [ -n "$(sql "SELECT path FROM job_outputs WHERE job_id = $JA LIMIT 1")" ]; }
wait_until 30 journaled || fail "brid-a's job $JA journaled nothing within 30 s"
sleep 0.5
journal_a=$(sql "SELECT path FROM job_outputs WHERE job_id = $JA")
kill -KILL "${PID[a]}"
echo "killed brid-a during job $JA ($(wc -l <<<"$journal_a") journaled file(s))"

# stop b past its lease in the middle of a job, restart PostgreSQL meanwhile.
# The job must still be running in the store once b is stopped: status may
# name a job in its last moments, which b ends before the signal (a job
# ended before the stop tests no lease), so then b goes on and the next one
# is taken.
JB=
for _ in 1 2 3 4 5; do
  j=$(await_job b 60) || fail "brid-b ran no compaction within 60 s"
  kill -STOP "${PID[b]}"
  sleep 0.2 # an end b sent just before the stop reaches the store
  [ "$(sql "SELECT state FROM jobs WHERE id = $j")" = running ] && { JB=$j; break; }
  kill -CONT "${PID[b]}"
done
[ -n "$JB" ] || fail "brid-b ended each of 5 jobs before it could be stopped in one"
pg_restart
sleep $((TTL + 4))
b_lines=$(wc -l <"${LOG[b]}")
kill -CONT "${PID[b]}"
echo "brid-b stopped for $((TTL + 4)) s during job $JB; PostgreSQL restarted meanwhile"

for w in $WRITERS; do wait "$w" || fail "a LanceDB writer failed: $(cat "$TMPD"/writer-*.err)"; done
echo "writers done"

# quiet: nothing queued or running for 5 s, every table compacted since its last commit
quiet() { [ "$(sql "SELECT count(*) FROM jobs WHERE state IN ('queued', 'running')")" = 0 ]; }
end=$((SECONDS + 180))
calm=0
while [ $SECONDS -lt $end ] && [ $calm -lt 5 ]; do
  if quiet; then calm=$((calm + 1)); else calm=0; fi
  sleep 1
done
[ $calm -ge 5 ] || fail "jobs still queued or running after 180 s: $(on c jobs --state queued,running)"

# ------------------------------------------------------------------ checks
for i in $(seq 0 $((N - 1))); do
  "$BRICTL" verify "$(table "$i")" >"$TMPD/verify" 2>&1 || fail "$(table "$i") does not verify: $(cat "$TMPD/verify")"
done
for i in $(seq 0 $((WRITTEN - 1))); do
  node "$INTEROP_DIR/lance_rowset.mjs" "$(table "$i")" "$TMPD/writer-$i.json" 16 >"$TMPD/rows" ||
    fail "$(table "$i"): the rows are not the writer's: $(cat "$TMPD/rows")"
done
for i in $(seq "$WRITTEN" $((N - 1))); do
  lance_read "$(table "$i")" --json >"$TMPD/after.json"
  json_eq "$TMPD/before-$i.json" "$TMPD/after.json" --ignore version,fragments,ms,table,fragmentRows,deletionFiles ||
    fail "$(table "$i") reads other values after the run"
done
echo "ok: $N tables verify; the written ones hold the writers' rows, the others read as before"

# the killed instance's job: recovered by another instance, nothing of it left
[ "$(sql "SELECT count(*) FROM job_outputs WHERE job_id = $JA")" = 0 ] || fail "job $JA still has a journal"
# (recovery takes the job over: its instance is the recoverer's, or the next
# claimer's; it may have been requeued, finished, or superseded by a job
# queued meanwhile for the writer's newer commits)
rec=$(sql "SELECT instance || ' ' || state FROM jobs WHERE id = $JA")
outcome1=$(sql "SELECT outcome FROM job_attempts WHERE job_id = $JA ORDER BY attempt LIMIT 1")
[ "$outcome1" = crashed ] || fail "brid-a's attempt of job $JA ended '$outcome1', not crashed"
case $rec in
  "brid-b "* | "brid-c "*) ;;
  *) fail "job $JA was not taken over by a live instance: $rec" ;;
esac
landed=$(sql "SELECT coalesce(result, '') FROM jobs WHERE id = $JA")
while read -r p; do
  [ -n "$p" ] || continue
  case $p in
    s3://*) left=$(python3 "$REPO/tests/s3/objects.py" ls "${p%/*}" | awk -v k="${p#s3://*/}" '$1 == k' || true) ;;
    *) left=$([ -e "$p" ] && echo "$p" || true) ;;
  esac
  [ -z "$left" ] || grep -q '"recovered": *true' <<<"$landed" || fail "brid-a's file $p is still there after recovery"
done <<<"$journal_a"
echo "ok: brid-a's job $JA recovered by $rec, its journaled files gone"

# history: nothing running or failed, no two attempts on one table at once
[ "$(sql "SELECT count(*) FROM jobs WHERE state IN ('running', 'failed')")" = 0 ] ||
  fail "jobs running or failed at the end: $(sql "SELECT id, state, error FROM jobs WHERE state IN ('running', 'failed')")"
overlap=$(sql "SELECT j1.table_id, a1.job_id, a1.attempt, a1.instance, a2.job_id, a2.attempt, a2.instance
  FROM job_attempts a1 JOIN jobs j1 ON j1.id = a1.job_id, job_attempts a2 JOIN jobs j2 ON j2.id = a2.job_id
  WHERE j1.table_id = j2.table_id AND (a1.job_id, a1.attempt) < (a2.job_id, a2.attempt)
    AND a1.started_at < a2.finished_at AND a2.started_at < a1.finished_at LIMIT 5")
[ -z "$overlap" ] || fail "attempts on one table overlapped: $overlap"
n_jobs=$(sql "SELECT count(*) FROM jobs WHERE state = 'succeeded'")
by=$(sql "SELECT instance || ':' || count(*) FROM jobs WHERE state = 'succeeded' GROUP BY instance ORDER BY 1" | tr '\n' ' ')
echo "ok: $n_jobs jobs succeeded ($by), none running or failed, no attempts overlapped on a table"

# b lost its job while stopped: its attempt was recovered (by b itself
# once the store answered again, or by another; "succeeded" when its commit
# had landed before the stop), and b committed nothing after it resumed
case $(sql "SELECT outcome FROM job_attempts WHERE job_id = $JB ORDER BY attempt LIMIT 1") in
  crashed) ;;
  succeeded) grep -q '"recovered": *true' <<<"$(sql "SELECT result FROM jobs WHERE id = $JB")" ||
               fail "brid-b's attempt of job $JB succeeded by itself although it was stopped past its lease" ;;
  *) fail "brid-b's attempt of job $JB: $(sql "SELECT * FROM job_attempts WHERE job_id = $JB")" ;;
esac
! tail -n +$((b_lines + 1)) "${LOG[b]}" | grep -q "job $JB: compacted" || fail "brid-b committed job $JB after it resumed"
# status lists the instances, jobs name theirs
on c status --json >"$TMPD/status.json"
[ "$(jget '",".join(sorted(i["name"] + "=" + i["state"] for i in d["instances"]))' <"$TMPD/status.json")" = \
  "brid-a=lost,brid-b=running,brid-c=running" ] || fail "status instances: $(jget 'd["instances"]' <"$TMPD/status.json")"
on c jobs --json --state succeeded --limit 5 | jget 'all(j["instance"] in ("brid-a", "brid-b", "brid-c") and j["start"].endswith("Z") for j in d["jobs"])' |
  grep -q True || fail "brictl jobs --json does not name each job's instance and ISO start"
on c status | grep -q "brid-a .*lost" || fail "brictl status does not show brid-a lost: $(on c status)"
pass
