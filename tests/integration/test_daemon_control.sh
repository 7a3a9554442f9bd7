#!/usr/bin/env bash
# DAEMON CONTROL PATH: one control path, and a lock both paths honour (OPS 4).
#  - with brid's socket answering (here $BRID_SOCKET, as an operator's
#    default), `brictl compact TABLE` is a brid job that brictl follows to
#    its end; brictl works offline only with --offline, or when no brid
#    answers;
#  - with both running: brictl --offline holds the table's lock while it
#    works, and the brid job asked for meanwhile waits (queued, saying who
#    holds the lock, no attempt counted) and runs after; while a brid job
#    holds the lock, brictl --offline refuses, naming the job, and changes
#    nothing; the table reads in LanceDB as before throughout.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_oracle

FX=$BRI_SOURCE_DIR/tests/fixtures/tables
mkdir -p "$TMPD/root"
for t in a b c d; do cp -a "$FX/blobs.lance" "$TMPD/root/$t.lance"; done
A=$TMPD/root/a.lance B=$TMPD/root/b.lance C=$TMPD/root/c.lance D=$TMPD/root/d.lance
lance_read "$FX/blobs.lance" --json >"$TMPD/before.json"
same() { json_eq "$TMPD/before.json" "$1" --ignore version,fragments,ms,table,fragmentRows,schemaFields,descriptorKinds; }
printf '[daemon]\nroot = %s\n[defaults]\nauto_compact = no\ncleanup_interval = 0\nbatch_rows = 1\n' "$TMPD/root" >"$TMPD/c.conf"
# brid's compactions take at least 4 batches (a fragment each) x 1 s: job K
# is still running when the test looks, even on a loaded machine
export BRI_FAILPOINTS=compact.after_rows=delay:1000
brid_start c --config "$TMPD/c.conf"
unset BRI_FAILPOINTS
export BRID_SOCKET=$SOCK
jobs_of() { "$BRICTL" jobs --table "$1" --json | jget 'len(d["jobs"])'; }

# the daemon answers: brictl compact is a brid job, followed to its end
"$BRICTL" compact "$A" >"$TMPD/a.out" 2>"$TMPD/a.err" || fail "compact through brid: $(cat "$TMPD/a.err")"
grep -q "^queued job [0-9]* for $A" "$TMPD/a.err" || fail "brictl compact did not ask brid: $(cat "$TMPD/a.out" "$TMPD/a.err")"
grep -q "(compact $A): succeeded" "$TMPD/a.out" || fail "brictl compact did not follow the job: $(cat "$TMPD/a.out")"
[ "$(jobs_of "$A")" = 1 ] || fail "brid has $(jobs_of "$A") jobs for a.lance"
# --offline: brictl itself, brid not asked
"$BRICTL" compact "$B" --offline >"$TMPD/b.out" || fail "compact --offline"
grep -q "^compacted $B" "$TMPD/b.out" || fail "compact --offline: $(cat "$TMPD/b.out")"
[ "$(jobs_of "$B")" = 0 ] || fail "compact --offline made a brid job"
echo "ok one control path: through brid when it answers, --offline in brictl"

# brictl --offline holds the lock: the brid job for the table waits, then runs
BRI_FAILPOINTS=compact.after_rows=delay:700 "$BRICTL" compact "$C" --offline --strategy copy >"$TMPD/c.out" 2>&1 &
OFF=$!
wait_until 15 grep -q "^brictl pid $OFF" "$C/.brid.lock" || fail "brictl --offline did not take the lock"
J=$("$BRICTL" compact "$C" --daemon --json | jget 'd["job"]')
waiting() { "$BRICTL" job "$J" --json | jget 'd["state"] == "queued" and "held by brictl pid" in (d["error"] or "")' | grep -qx True; }
wait_until 10 waiting || fail "job $J does not wait for brictl's lock: $("$BRICTL" job "$J")"
wait $OFF || fail "brictl --offline: $(cat "$TMPD/c.out")"
done_ok() { "$BRICTL" job "$J" --json | grep -q '"state": "succeeded"'; }
wait_until 20 done_ok || fail "job $J did not run after brictl released the lock: $("$BRICTL" job "$J")"
[ "$("$BRICTL" job "$J" --json | jget 'len(d["attempt_log"])')" = 1 ] || fail "waiting for the lock counted an attempt"
log_has "job $J \\(compact $C\\): .*held by brictl pid $OFF" || fail "brid did not log the wait"
lance_read "$C" --json >"$TMPD/c.json" && same "$TMPD/c.json" || fail "c.lance reads differently"
echo "ok brictl --offline holds the lock: brid's job $J waited (no attempt counted), then ran"

# a brid job holds the lock: brictl --offline refuses and changes nothing
K=$("$BRICTL" compact "$D" --daemon --json | jget 'd["job"]')
wait_until 10 grep -q "^brid pid $BRID_PID, job $K (compact)" "$D/.brid.lock" || fail "brid's job did not take the lock"
listing() { (cd "$D" && find . -type f ! -name .brid.lock | sort); }
listing >"$TMPD/d.before"
rc=0; "$BRICTL" cleanup "$D" --offline --older-than 0 --grace 0 >/dev/null 2>"$TMPD/err" || rc=$?
[ $rc = 2 ] && grep -q "$D is busy: .* is held by brid pid $BRID_PID, job $K (compact)" "$TMPD/err" ||
  fail "brictl --offline while brid's job runs: exit $rc: $(cat "$TMPD/err")"
still_running() { "$BRICTL" job "$K" --json | grep -q '"state": "running"'; }
still_running || fail "job $K ended before the check (make it slower)"
listing >"$TMPD/d.during"
cmp -s "$TMPD/d.before" "$TMPD/d.during" || fail "the refused brictl changed the table"
wait_until 20 sh -c "\"$BRICTL\" job $K --json | grep -q '\"state\": \"succeeded\"'" || fail "job $K did not succeed"
lance_read "$D" --json >"$TMPD/d.json" && same "$TMPD/d.json" || fail "d.lance reads differently"
echo "ok brid's job $K holds the lock: brictl --offline refused, nothing changed"

# no brid answers: offline without being asked
brid_stop
cp -a "$FX/blobs.lance" "$TMPD/root/e.lance"
"$BRICTL" compact "$TMPD/root/e.lance" >"$TMPD/e.out" 2>"$TMPD/e.err" || fail "compact with no brid: $(cat "$TMPD/e.err")"
grep -q "^compacted $TMPD/root/e.lance" "$TMPD/e.out" || fail "no brid: $(cat "$TMPD/e.out")"
echo "ok no brid answers: offline"
pass
