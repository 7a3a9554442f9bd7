#!/usr/bin/env bash
# DAEMON REQUESTS: only identical requests are merged (OPS 5). Against a
# real brid, with the table paused so that every request is still queued
# when the next one arrives:
#  - a real cleanup after a queued dry run is a job of its own, runs, and
#    deletes (the dry run deletes nothing); the same dry run again is the
#    queued dry run (duplicate), and brictl says which other job is queued;
#  - compact --strategy link after a queued compact (table's policy) is a
#    job of its own and runs with link;
#  - compact --dry-run --wait after a queued real compaction follows its own
#    job: a dry run, the real one committed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

FX=$BRI_SOURCE_DIR/tests/fixtures/tables
mkdir -p "$TMPD/root"
cp -a "$FX/blobs.lance" "$TMPD/root/c.lance"
cp -a "$FX/blobs.lance" "$TMPD/root/k.lance"
C=$TMPD/root/c.lance K=$TMPD/root/k.lance
"$BRICTL" compact "$C" >/dev/null # brid is not running yet: offline; old versions to clean up
printf '[daemon]\nroot = %s\n[defaults]\nauto_compact = no\ncleanup_interval = 0\n' "$TMPD/root" >"$TMPD/r.conf"
brid_start r --config "$TMPD/r.conf"
ctl pause >/dev/null

# cleanup: dry run, then a real one, then the dry run again
D=$(ctl cleanup "$C" --dry-run --older-than 0 --grace 0 --json | jget 'd["job"]')
ctl cleanup "$C" --older-than 0 --grace 0 >"$TMPD/real.out" 2>"$TMPD/real.err"
R=$(sed -n 's/^queued job \([0-9]*\) .*/\1/p' "$TMPD/real.out")
[ -n "$R" ] && [ "$R" != "$D" ] || fail "a real cleanup was merged into the queued dry run $D: $(cat "$TMPD/real.out")"
grep -q "cleanup job $D with other options" "$TMPD/real.err" || fail "brictl does not name the other queued job: $(cat "$TMPD/real.err")"
ctl cleanup "$C" --dry-run --older-than 0s --grace 0 --json >"$TMPD/again.json"
[ "$(jget 'd["job"]' <"$TMPD/again.json")" = "$D" ] && [ "$(jget 'd["duplicate"]' <"$TMPD/again.json")" = True ] ||
  fail "an identical dry run is not the queued one: $(cat "$TMPD/again.json")"
echo "ok cleanup: dry run $D and real cleanup $R are two jobs; the same dry run again is $D"

# compact: the table's policy, then link
P=$(ctl compact "$K" --json | jget 'd["job"]')
L=$(ctl compact "$K" --strategy link --json | jget 'd["job"]')
[ "$L" != "$P" ] || fail "compact --strategy link merged into the queued compact $P"

ctl resume >/dev/null
for j in $D $R $P $L; do
  wait_until 20 sh -c "\"$BRICTL\" job $j --json --socket \"$SOCK\" | grep -q '\"state\": \"succeeded\"'" ||
    fail "job $j did not succeed: $(ctl job "$j")"
done
[ "$(ctl job "$D" --json | jget 'd["result"]["dry_run"]')" = True ] || fail "the dry run was not one"
[ "$(ctl job "$R" --json | jget 'd["result"]["dry_run"]')" = False ] || fail "the real cleanup ran as a dry run"
[ "$(ctl job "$R" --json | jget 'd["result"]["files"] > 0')" = True ] || fail "the real cleanup deleted nothing"
[ "$(ctl job "$L" --json | jget 'd["params"]["strategy"]')" = link ] || fail "job $L lost its strategy"
echo "ok compact: job $P (policy) and job $L (link) ran one after the other"

# a dry run --wait after a queued real compaction follows its own job
cp -a "$FX/blobs.lance" "$TMPD/root/w.lance"
W=$TMPD/root/w.lance
wait_until 15 sh -c "\"$BRICTL\" tables \"$W\" --socket \"$SOCK\"" || fail "w.lance not discovered"
ctl pause "$W" >/dev/null
Q=$(ctl compact "$W" --json | jget 'd["job"]')
ctl compact "$W" --dry-run --wait --json >"$TMPD/dry.json" 2>"$TMPD/dry.err" &
WAITER=$!
queued() { ctl jobs --table "$W" --state queued --json | jget 'len(d["jobs"])'; }
wait_until 15 sh -c "[ \"\$(\"$BRICTL\" jobs --table \"$W\" --state queued --json --socket \"$SOCK\" | grep -c '\"id\"')\" = 2 ]" ||
  fail "compact --dry-run merged into the queued real compaction $Q ($(queued) queued)"
ctl resume "$W" >/dev/null
wait $WAITER || fail "compact --dry-run --wait: $(cat "$TMPD/dry.err")"
[ "$(jget 'd["id"]' <"$TMPD/dry.json")" != "$Q" ] || fail "compact --dry-run --wait followed the real compaction $Q"
[ "$(jget 'd["result"]["dry_run"]' <"$TMPD/dry.json")" = True ] || fail "the dry run's result is not a dry run"
wait_until 20 sh -c "\"$BRICTL\" job $Q --json --socket \"$SOCK\" | grep -q '\"state\": \"succeeded\"'" ||
  fail "the real compaction $Q did not run"
[ "$(ctl job "$Q" --json | jget 'd["result"]["version"] > 0')" = True ] || fail "the real compaction committed nothing"
echo "ok compact --dry-run --wait: its own job, not job $Q"
pass
