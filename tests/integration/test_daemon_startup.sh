#!/usr/bin/env bash
# DAEMON start-up over thousands of tables (one brictl gen table hard-linked
# 4,000 times under 4 directories):
#  - the control socket answers while the discovery still walks (each batch
#    of new tables held 200 ms by the timing failpoint watch.register_batch),
#    status saying discovery.running with the tables registered so far, which
#    grow batch by batch; "ready" is logged once every table is registered;
#  - every table ends up watched (one inotify watch each), and checked once
#    (discovery.first_sweep_done, unchecked_tables 0);
#  - when table watches fail (failpoint watch.inotify_exhausted: ENOSPC, as
#    with fs.inotify.max_user_watches exhausted) brid still starts, logs one
#    warning (not one per table), counts the tables in tables.sweep_only with
#    the reason, and its sweep finds an append to one of them;
#  - a job queued before a restart and claimed while the discovery still
#    walks (held 2 s) waits for its table to be found and then runs: it is
#    not cancelled as a table that is gone.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

N=4000
"$BRICTL" gen "$TMPD/src.lance" --rows 5 >/dev/null
for g in 0 1 2 3; do mkdir -p "$TMPD/root/g$g"; done
for ((i = 0; i < 1000; i++)); do cp -al "$TMPD/src.lance" "$TMPD/root/g0/t$i.lance"; done
for g in 1 2 3; do rmdir "$TMPD/root/g$g"; cp -al "$TMPD/root/g0" "$TMPD/root/g$g"; done
st() { "$BRICTL" status --json --socket "$TMPD/s.sock" 2>/dev/null; }

# 1. the socket answers during the discovery
SOCK=$TMPD/s.sock BRID_LOG=$TMPD/s.log
BRI_FAILPOINTS=watch.register_batch=delay:200 "$BRID" --root "$TMPD/root" --socket "$SOCK" --state "$TMPD/s.db" \
  --workers 2 --debounce 1s 2>"$BRID_LOG" &
BRID_PID=$!
wait_until 10 st || fail "the socket did not answer within 10 s"
seen=
while :; do
  st >"$TMPD/st.json" || fail "status failed during the discovery"
  [ "$(jget 'd["discovery"]["startup_done_at"] is None' <"$TMPD/st.json")" = True ] || break
  [ "$(jget 'd["discovery"]["running"]' <"$TMPD/st.json")" = True ] || fail "discovery not running before ready"
  seen="$seen $(jget 'd["tables"]["watched"]' <"$TMPD/st.json")"
  sleep 0.2
done
log_has "ready:" || fail "no ready line after the discovery ended"
echo "watched during the discovery:$seen"
python3 -c 'import sys; v = list(map(int, sys.argv[1:])); sys.exit(0 if len(v) >= 3 and 0 < v[1] < '$N' and v == sorted(v) else 1)' $seen ||
  fail "status did not show the tables registered batch by batch:$seen"
wait_until 60 sh -c "'$BRICTL' status --json --socket '$SOCK' | grep -q '\"first_sweep_done\": *true'" ||
  fail "no first sweep within 60 s: $(st | jget 'd["discovery"]')"
st >"$TMPD/st.json"
[ "$(jget '[d["tables"]["watched"], d["tables"]["inotify_watches"], d["tables"]["sweep_only"], d["discovery"]["unchecked_tables"]]' <"$TMPD/st.json")" = "[$N, $N, 0, 0]" ] ||
  fail "after the first sweep: $(jget '[d["tables"], d["discovery"]]' <"$TMPD/st.json")"
[ "$(ctl tables --json | jget 'sum(t["watching"] and t["state"] == "idle" for t in d["tables"])')" = "$N" ] ||
  fail "not every table is watched and idle"
log_has "first sweep done: $N table" || fail "no first-sweep line"
brid_stop || fail "brid exited non-zero"
echo "ok streamed start-up"

# 2. table watches fail (inotify limit): the sweep covers them
printf '[daemon]\nroot = %s\nsweep_interval = 2s\n' "$TMPD/root" >"$TMPD/full.conf"
BRI_FAILPOINTS=watch.inotify_exhausted=on brid_start full --config "$TMPD/full.conf" --debounce 1s
ctl status --json >"$TMPD/st.json"
[ "$(jget '[d["state"], d["tables"]["watched"], d["tables"]["inotify_watches"], d["tables"]["sweep_only"]]' <"$TMPD/st.json")" = \
  "[\"running\", $N, 0, $N]" ] || fail "with the watch limit: $(jget '[d["state"], d["tables"]]' <"$TMPD/st.json")"
jget 'd["tables"]["watch_error"]' <"$TMPD/st.json" | grep -q max_user_watches || fail "watch_error does not name the limit"
[ "$(grep -c 'cannot watch' "$BRID_LOG")" = 1 ] || fail "expected one warning, got $(grep -c 'cannot watch' "$BRID_LOG")"
T=$TMPD/root/g2/t7.lance
rm -rf "$T" && cp -a "$TMPD/src.lance" "$T" # its own files: the append must not reach the other links
"$BRICTL" gen "$T" --rows 5 >/dev/null
compacted() { ctl jobs --kind compact --state succeeded --table "$T" --json | jget 'len(d["jobs"]) >= 1' | grep -q True; }
wait_until 30 compacted || fail "the sweep did not find the append to an unwatched table"
brid_stop || fail "brid exited non-zero"
echo "ok watch limit"

# 3. a job queued before a restart, claimed during the next discovery
T=$TMPD/later/t.lance
"$BRICTL" gen "$T" --fragments 4 --rows 5 >/dev/null
BRI_FAILPOINTS=jobs.before_claim=exit brid_start later --root "$TMPD/later" --debounce 1h
ctl compact "$T" >/dev/null 2>&1 || true # brid may exit before it replies
rc=0; brid_wait || rc=$?
[ $rc = 99 ] || fail "brid did not exit at the claim of the job (exit $rc)"
BRI_FAILPOINTS=watch.register_batch=delay:2000 brid_start later --root "$TMPD/later" --debounce 1h
J=$(ctl jobs --kind compact --table "$T" --json | jget 'd["jobs"][0]["id"]')
ended() { ctl job "$J" --json | jget 'd["state"] in ("succeeded", "failed", "cancelled")' | grep -q True; }
wait_until 30 ended || fail "job $J did not end after the restart: $(ctl job "$J" --json)"
ctl job "$J" --json >"$TMPD/j.json"
[ "$(jget 'd["state"], d["result"]["fragments_after"]' <"$TMPD/j.json")" = "('succeeded', 1)" ] ||
  fail "job $J after the restart: $(jget '[d["state"], d["error"], d["result"]]' <"$TMPD/j.json")"
brid_stop || fail "brid exited non-zero"
echo "ok a job queued before a restart waits for its table's discovery"
pass
