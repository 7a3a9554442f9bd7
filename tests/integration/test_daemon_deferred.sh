#!/usr/bin/env bash
# DAEMON DEFERRED JOB: a job that falls due while brid's scheduler is
# claiming is still claimed. brid defers a job whose table brictl --offline
# holds (for 5 s, then tries again). Here every claim is held 5.5 s after it
# looked for due jobs (the timing point sched.after_claim), so the claim that
# follows the deferral begins before the job falls due and ends after it: the
# scheduler must come back for the job by itself. (It used to wait for a
# worker's end or a request to kick it, and with none to come the job stayed
# queued for good: seen once in CI, under AddressSanitizer.)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mkdir -p "$TMPD/root"
T=$TMPD/root/t.lance
"$BRICTL" gen "$T" --fragments 4 --rows 2 >/dev/null
printf '[daemon]\nroot = %s\n[defaults]\nauto_compact = no\ncleanup_interval = 0\n' "$TMPD/root" >"$TMPD/d.conf"
export BRI_FAILPOINTS=sched.after_claim=delay:5500
brid_start d --config "$TMPD/d.conf"
unset BRI_FAILPOINTS

# brictl --offline holds the table's lock for 15 s (one delay after its
# first batch of rows), longer than brid takes to claim the job and defer it
BRI_FAILPOINTS=compact.after_rows=delay:15000@1 "$BRICTL" compact "$T" --offline --strategy copy >"$TMPD/off.out" 2>&1 &
OFF=$!
wait_until 15 grep -q "^brictl pid $OFF" "$T/.brid.lock" || fail "brictl --offline did not take the lock"
J=$(ctl compact "$T" --json | jget 'd["job"]')
wait_until 20 log_has "job $J \\(compact $T\\): .*held by brictl pid $OFF.*; waiting" ||
  fail "job $J was not deferred for brictl's lock: $(ctl job "$J")"
wait $OFF || fail "brictl --offline: $(cat "$TMPD/off.out")"
succeeded() { ctl job "$J" --json | jget 'd["state"]' | grep -qx succeeded; }
wait_until 40 succeeded || fail "job $J was not claimed once due: $(ctl job "$J")"
[ "$(ctl job "$J" --json | jget 'len(d["attempt_log"])')" = 1 ] || fail "waiting for the lock counted an attempt"
"$BRICTL" verify "$T" >/dev/null || fail "the table does not verify"
brid_stop || fail "brid did not stop cleanly"
echo "ok a job deferred for a lock is claimed when it falls due, though a claim was running then"
pass
