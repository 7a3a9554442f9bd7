#!/usr/bin/env bash
# DAEMON TRIGGERS: a real brid on tables LanceDB writes.
#  - a table found at start-up is compacted once it has been quiet for the
#    debounce, counted from its last commit (not from brid's start);
#  - two LanceDB appends in a row trigger ONE compaction, queued no sooner
#    than the debounce after the last commit; the values LanceDB reads stay
#    those of a table written in one go;
#  - a table created under the root while brid runs is found and compacted;
#  - cleanup runs on its schedule (twice), deletes what old versions held,
#    and the table still reads the same;
#  - commits made while brid was stopped are picked up at the next start.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_oracle

same() { json_eq "$1" "$2" --ignore version,fragments,ms,table,fragmentRows,schemaFields,descriptorKinds,deletionFiles; }
now_ms() { python3 -c 'import time; print(int(time.time()*1000))'; }
jobs_of() { # jobs_of KIND STATE TABLE: ids, oldest first
  ctl jobs --kind "$1" --state "$2" --table "$3" --json | jget '" ".join(str(j["id"]) for j in reversed(d["jobs"]))'
}
count_jobs() { local n; n=$(jobs_of "$@"); set -- $n; echo $#; }
at_least() { [ "$(count_jobs "$2" "$3" "$4")" -ge "$1" ]; } # at_least N KIND STATE TABLE

mkdir -p "$TMPD/root" "$TMPD/ref"
make_tables "$TMPD/root" --tables plain --fragments 3 --rows 100 --plain-delete "" >/dev/null
make_tables "$TMPD/ref" --tables plain --fragments 1 --rows 360 --plain-delete "" >/dev/null
T=$TMPD/root/plain.lance
lance_read "$T" --json >"$TMPD/before.json"
cat >"$TMPD/brid.conf" <<EOF
[daemon]
root = $TMPD/root
retry_base = 1s
[defaults]
cleanup_interval = 4s
cleanup_older_than = 0
cleanup_grace = 0
EOF
# the table's last commit (its manifest's time): brid starts more than the
# debounce after it, so the first check comes at once
t1=$(find "$T/_versions" -name '*.manifest' -printf '%T@\n' | sort -n | tail -1 |
  python3 -c 'import sys; print(int(float(sys.stdin.read()) * 1000))')
while [ $(($(now_ms) - t1)) -lt 1500 ]; do sleep 0.1; done
brid_start trig --config "$TMPD/brid.conf" --debounce 1s
started=$(ctl status --json | jget 'd["started_at"]')

# 1. found at start-up, compacted after the debounce
wait_until 20 at_least 1 compact succeeded "$T" || fail "no compaction of the table found at start-up"
J=$(jobs_of compact succeeded "$T" | cut -d' ' -f1)
ctl job "$J" --json >"$TMPD/j.json"
[ "$(jget 'd["params"]["trigger"]' <"$TMPD/j.json")" = auto ] || fail "start-up job: trigger"
[ "$(jget 'd["result"]["fragments_before"], d["result"]["fragments_after"]' <"$TMPD/j.json")" = "(3, 1)" ] ||
  fail "start-up job: fragments $(jget 'd["result"]' <"$TMPD/j.json")"
[ $(($(jget 'd["created_at"]' <"$TMPD/j.json") - t1)) -ge 900 ] || fail "start-up job queued before the debounce after the last commit"
[ $(($(jget 'd["created_at"]' <"$TMPD/j.json") - started)) -lt 900 ] ||
  fail "the start-up job of a table quiet for more than the debounce waited for another debounce after brid's start"
lance_read "$T" --json >"$TMPD/after1.json"
same "$TMPD/before.json" "$TMPD/after1.json" || fail "values changed by the start-up compaction"
echo "ok start-up trigger"

# 2. two appends, one compaction, after the debounce
# two commits in one LanceDB process, milliseconds apart: two node start-ups
# can be more than the debounce apart on a loaded machine
lance_ops "$T" append 30 --times 2 >/dev/null
# the last commit's time is its manifest's, not when node exits (which can
# take hundreds of ms on a loaded machine)
t2=$(find "$T/_versions" -name '*.manifest' -printf '%T@\n' | sort -n | tail -1 |
  python3 -c 'import sys; print(int(float(sys.stdin.read()) * 1000))')
wait_until 20 at_least 2 compact succeeded "$T" || fail "appends did not trigger a compaction"
sleep 1.5 # a second (wrong) trigger would be queued by now
n=$(ctl jobs --kind compact --table "$T" --json | jget 'len(d["jobs"])')
[ "$n" = 2 ] || fail "expected 2 compaction jobs (appends coalesced by the debounce), got $n"
J2=$(jobs_of compact succeeded "$T" | cut -d' ' -f2)
ctl job "$J2" --json >"$TMPD/j2.json"
[ $(($(jget 'd["created_at"]' <"$TMPD/j2.json") - t2)) -ge 900 ] ||
  fail "compaction queued $(($(jget 'd["created_at"]' <"$TMPD/j2.json") - t2)) ms after the last append (debounce 1 s)"
[ "$(jget 'd["result"]["fragments_before"], d["result"]["fragments_after"]' <"$TMPD/j2.json")" = "(3, 1)" ] ||
  fail "append job: fragments $(jget 'd["result"]' <"$TMPD/j2.json")"
lance_read "$T" --json >"$TMPD/after2.json"
lance_read "$TMPD/ref/plain.lance" --json >"$TMPD/ref.json"
same "$TMPD/ref.json" "$TMPD/after2.json" || fail "after appends + compaction, LanceDB reads other values"
log_has "plain.lance: version [0-9]+ has 1 bin\\(s\\) to compact: queued job $J2" || fail "trigger not logged"
echo "ok append trigger"

# 3. a table created while brid runs
make_tables "$TMPD/root" --tables plain --plain-name late --fragments 2 --rows 10 --plain-delete "" >/dev/null
L=$TMPD/root/late.lance
wait_until 20 at_least 1 compact succeeded "$L" || fail "the new table was not found and compacted"
ctl tables --json | jget '[t["watching"] for t in d["tables"] if t["root"].endswith("late.lance")][0]' | grep -qx True ||
  fail "the new table is not watched"
echo "ok new table"

# 4. cleanup on its schedule
wait_until 30 at_least 2 cleanup succeeded "$T" || fail "cleanup did not run twice on its 4 s schedule"
C=$(jobs_of cleanup succeeded "$T" | cut -d' ' -f1)
ctl job "$C" --json >"$TMPD/c.json"
[ "$(jget 'd["params"]["trigger"]' <"$TMPD/c.json")" = schedule ] || fail "cleanup: trigger"
[ "$(jget 'd["result"]["files"] > 0' <"$TMPD/c.json")" = True ] || fail "the first cleanup deleted nothing"
[ "$(ls "$T/_versions" | grep -c '\.manifest$')" -le 2 ] || fail "old versions left after cleanup: $(ls "$T/_versions")"
[ "$(ctl tables "$T" --json | jget 'd["last_cleanup_at"] is not None')" = True ] || fail "last_cleanup_at not set"
lance_read "$T" --json >"$TMPD/after3.json"
same "$TMPD/ref.json" "$TMPD/after3.json" || fail "values changed by cleanup"
echo "ok cleanup schedule"

# 5. commits while brid is down are noticed at the next start
brid_stop || fail "brid exited non-zero"
lance_ops "$T" append 5 >/dev/null
brid_start trig --config "$TMPD/brid.conf" --debounce 1s
wait_until 20 at_least 3 compact succeeded "$T" || fail "a commit made while brid was down was missed"
brid_stop || fail "brid exited non-zero"
echo "ok restart"
pass
