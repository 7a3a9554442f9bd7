#!/usr/bin/env bash
# DAEMON UNITS: times, units and access levels as an operator reads them
# (OPS 10).
#  - the policy is echoed as the configuration writes it (7d, 90s, 0.1), in
#    `tables TABLE`, its --json and brid --check-config;
#  - times in brictl's tables carry their zone (RFC 3339 offset);
#  - `metrics --json` is structured JSON (families, samples, labels);
#  - "draining for" is the time since the drain began, not the uptime;
#  - a read-only access level: the read-only socket takes status, tables,
#    jobs and metrics from any local user and refuses the rest, naming the
#    control socket; brictl falls back to it when the control socket
#    refuses a read.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

FX=$BRI_SOURCE_DIR/tests/fixtures/tables
mkdir -p "$TMPD/root"
chmod 0755 "$TMPD" # the sockets' directory, for uid 65534
cp -a "$FX/blobs.lance" "$TMPD/root/t.lance"
T=$TMPD/root/t.lance
cat >"$TMPD/u.conf" <<EOF
[daemon]
root = $TMPD/root
debounce = 90s
[defaults]
auto_compact = no
cleanup_older_than = 7d
cleanup_interval = 0
materialize_deletions_threshold = 0.1
EOF
"$BRID" --config "$TMPD/u.conf" --check-config >"$TMPD/check.json" 2>/dev/null || fail "check-config"
grep -q '"cleanup_older_than": "7d"' "$TMPD/check.json" && grep -q '"debounce": "1m30s"' "$TMPD/check.json" &&
  grep -q '"materialize_deletions_threshold": 0.1,' "$TMPD/check.json" || fail "check-config: $(cat "$TMPD/check.json")"
brid_start u --config "$TMPD/u.conf"
RO=$TMPD/u-ro.sock
ctl tables "$T" >"$TMPD/t.txt"
grep -Eq '^  cleanup_older_than +"7d"$' "$TMPD/t.txt" && grep -Eq '^  materialize_deletions_threshold +0.1$' "$TMPD/t.txt" ||
  fail "policy not echoed as configured: $(grep -E 'older_than|threshold' "$TMPD/t.txt")"
ctl tables "$T" --json | grep -q '"materialize_deletions_threshold": 0.1,' || fail "tables --json: 0.1"
echo "ok policy as configured: 7d, 1m30s, 0.1"

ctl compact "$T" --wait >/dev/null 2>&1 || fail "compact"
zone='[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}[+-][0-9]{2}:[0-9]{2}'
ctl tables | grep -Eq "$zone" || fail "tables: no zone-qualified time: $(ctl tables)"
ctl jobs | grep -Eq "$zone" || fail "jobs: no zone-qualified time: $(ctl jobs)"
ctl job 1 | grep -Eq "created: +$zone" || fail "job: no zone-qualified time"
echo "ok times carry their zone"

ctl metrics --json >"$TMPD/m.json"
[ "$(jget '[f for f in d["families"] if f["name"] == "brid_tables"][0]["samples"][0]["value"]' <"$TMPD/m.json")" = 1 ] ||
  fail "metrics --json: brid_tables"
[ "$(jget '[s["labels"]["state"] for f in d["families"] if f["name"] == "brid_jobs" for s in f["samples"]]' <"$TMPD/m.json")" = \
  '["queued", "running", "succeeded", "failed", "cancelled"]' ] || fail "metrics --json: labels"
echo "ok metrics --json: structured"

# read-only access: uid 65534 is neither brid's user nor in a group
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$BRICTL" "$@"; }
[ "$(stat -c %a "$RO")" = 666 ] || fail "read-only socket mode $(stat -c %a "$RO")"
as_nobody status --socket "$RO" >/dev/null || fail "status on the read-only socket"
as_nobody tables --socket "$RO" >/dev/null || fail "tables on the read-only socket"
as_nobody metrics --socket "$RO" >/dev/null || fail "metrics on the read-only socket"
as_nobody jobs --socket "$RO" >/dev/null || fail "jobs on the read-only socket"
rc=0; as_nobody pause --socket "$RO" 2>"$TMPD/err" || rc=$?
[ $rc = 3 ] && grep -q "pause changes brid's work: it needs the control socket ($SOCK)" "$TMPD/err" ||
  fail "pause on the read-only socket: exit $rc: $(cat "$TMPD/err")"
rc=0; as_nobody status --socket "$SOCK" 2>/dev/null || rc=$?
[ $rc = 3 ] || fail "the control socket let uid 65534 in (exit $rc)"
BRID_SOCKET=$SOCK setpriv --reuid=65534 --regid=65534 --clear-groups "$BRICTL" status >"$TMPD/st.txt" 2>"$TMPD/err" ||
  fail "brictl status did not fall back to the read-only socket: $(cat "$TMPD/err")"
grep -q "^brid .* running for" "$TMPD/st.txt" || fail "status through the fallback: $(cat "$TMPD/st.txt")"
echo "ok read-only socket: reads for everyone, control refused"

# draining for: the time since SIGTERM, with uptime well above it
printf '[table %s]\nbatch_rows = 1\nstrategy = copy\n' "$T" >>"$TMPD/u.conf"
brid_stop
cp -a "$FX/blobs.lance" "$TMPD/root/d.lance"
export BRI_FAILPOINTS=compact.after_rows=delay:1000 # 4 s at least: still draining when asked
brid_start u --config "$TMPD/u.conf"
unset BRI_FAILPOINTS
sleep 3
J=$(ctl compact "$TMPD/root/d.lance" --json | jget 'd["job"]')
wait_until 15 sh -c "\"$BRICTL\" job $J --json --socket \"$SOCK\" | grep -q '\"state\": \"running\"'" || fail "job $J did not start"
kill -TERM "$BRID_PID"
wait_until 15 sh -c "\"$BRICTL\" status --json --socket \"$SOCK\" | grep -q '\"state\": \"draining\"'" || fail "not draining"
ctl status >"$TMPD/drain.txt" || fail "status while draining"
grep -Eq "^brid .* draining for ([0-9]+ms|[0-2]\.[0-9]s) " "$TMPD/drain.txt" || fail "draining for: $(head -1 "$TMPD/drain.txt")"
brid_wait || fail "brid exited non-zero"
echo "ok draining for: $(sed -n 's/.*\(draining for [^ ]*\).*/\1/p' "$TMPD/drain.txt")"
pass
