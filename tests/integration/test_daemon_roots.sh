#!/usr/bin/env bash
# ROOTS: a root that brid cannot reach is a degraded state (issue ROOTS).
#  - An S3 root on a port where nothing listens: within two poll intervals
#    brictl status says "degraded" and names the root (text and JSON, its
#    error and failures), so do STATUS= and /readyz (503), brictl tables shows it, brid_root_up{root} is 0,
#    and brid's log has one warning for it however many polls fail. Then a
#    radosgw of its own is started on that port and LanceDB writes a table
#    there: status goes back to "running" by itself (and /readyz to 200), brid_root_up is 1 with a
#    last-success time, the log has one recovery line, and the table is
#    compacted.
#  - A local root whose directory is removed (its table moved away): the
#    same degraded state; the table keeps its state and history (still
#    listed, state "unreachable", no job queued even though LanceDB appends
#    to it meanwhile). The directory is recreated and the table moved back:
#    running again, one warning and one recovery line, and the appends are
#    compacted.
# About 30 s (a second radosgw starts in about 2 s).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_s3 roots

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
metric() { ctl metrics | grep -E "^$1 " | awk '{print $2}'; }
state() { ctl status --json | jget 'd["state"]'; }
root_state() { # root_state URI: reachable, unreachable or unknown
  ctl status --json | jget '[r["state"] for r in d["roots"] if r["root"] == "'"$1"'"][0]'
}
jobs_of() { # jobs_of STATE TABLE: how many compactions of TABLE are in STATE (by name: TABLE may be away)
  ctl jobs --kind compact --state "$1" --json | jget 'len([j for j in d["jobs"] if j["table"] == "'"$2"'"])'
}
compacted() { [ "$(jobs_of succeeded "$1")" -ge "${2:-1}" ]; }
degraded_naming() { [ "$(state)" = degraded ] && [ "$(root_state "$1")" = unreachable ]; }
running() { [ "$(state)" = running ]; }

PORT=$(free_port)
MONPORT=$(free_port)
S3DIR=$TMPD/s3b
second_s3() { BRI_S3_DIR=$S3DIR BRI_S3_PORT=$PORT BRI_S3_MON_PORT=$MONPORT "$BRI_SOURCE_DIR/scripts/s3-server.sh" "$@"; }
stop_second_s3() { second_s3 stop >/dev/null 2>&1 || true; }
trap 'stop_second_s3; _brid_cleanup' EXIT

S=s3://$BRI_S3_BUCKET/down-$$
L=$TMPD/local
mkdir -p "$L"
make_tables "$L" --tables blobs --small --blob-batches 3:mixed >/dev/null
T=$L/blobs.lance
cat >"$TMPD/brid.conf" <<EOF
[daemon]
root = $L
root = $S
sweep_interval = 1s
metrics_listen = 127.0.0.1:0
[root $S]
endpoint = http://127.0.0.1:$PORT
region = us-east-1
addressing = path
access_key_id = $AWS_ACCESS_KEY_ID
secret_access_key_file = $TMPD/secret
poll_interval = 1s
EOF
printf '%s\n' "$AWS_SECRET_ACCESS_KEY" >"$TMPD/secret"
chmod 600 "$TMPD/secret"
notify_listen "$TMPD/notify.sock" "$TMPD/notify.txt"
BRID_PREFIX="env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_ENDPOINT_URL NOTIFY_SOCKET=$TMPD/notify.sock AWS_MAX_ATTEMPTS=1" \
  brid_start roots --config "$TMPD/brid.conf" --debounce 1s

# 1. an S3 root where nothing listens: degraded within two poll intervals
t0=$SECONDS
wait_until 3 degraded_naming "$S" || fail "status is $(state), root $(root_state "$S") 3 s after start"
ctl status >"$TMPD/status.txt"
grep -q "^brid .* degraded for" "$TMPD/status.txt" && grep -q "  $S: UNREACHABLE since .*(.*failed listing(s)): " "$TMPD/status.txt" ||
  fail "brictl status does not say degraded and name the root: $(cat "$TMPD/status.txt")"
ctl tables >"$TMPD/tables.txt"
grep -q "  $S: UNREACHABLE" "$TMPD/tables.txt" || fail "brictl tables does not show the root: $(cat "$TMPD/tables.txt")"
[ "$(metric "brid_root_up\\{root=\"$S\"\\}")" = 0 ] || fail "brid_root_up of the unreachable root: $(ctl metrics | grep brid_root)"
[ "$(metric "brid_root_up\\{root=\"$L\"\\}")" = 1 ] || fail "brid_root_up of the local root: $(ctl metrics | grep brid_root)"
readyz() { curl -s -o "$TMPD/readyz.txt" -w '%{http_code}' "http://$(brid_http_addr)/readyz"; }
[ "$(readyz)" = 503 ] && grep -q "^root $S: unreachable for " "$TMPD/readyz.txt" ||
  fail "/readyz does not name the unreachable root: $(cat "$TMPD/readyz.txt")"
notified() { grep -q "$1" "$TMPD/notify.txt"; }
wait_until 5 notified "^STATUS=degraded: root $S unreachable; " || fail "STATUS= does not say degraded: $(tail -3 "$TMPD/notify.txt")"
echo "ok an unreachable S3 root: degraded after $((SECONDS - t0)) s, named in status, STATUS=, /readyz, tables and metrics"

# 2. several polls fail: one warning, not one a poll
several() { [ "$(ctl status --json | jget '[r["consecutive_failures"] for r in d["roots"] if r["root"] == "'"$S"'"][0]')" -ge 4 ]; }
wait_until 15 several || fail "the root's failed listings are not counted"
[ "$(grep -c "root $S: unreachable" "$BRID_LOG")" = 1 ] && [ "$(grep -- "$S" "$BRID_LOG" | grep -c '^<4>')" = 1 ] ||
  fail "the unreachable root is not logged exactly once: $(grep -- "$S" "$BRID_LOG")"
grep -- "root $S: unreachable" "$BRID_LOG" | grep -q '^<4>' || fail "the root's warning is not a warning"
echo "ok logged once over several failed listings"

# 3. radosgw comes up on that port, LanceDB writes a table there: running again, compacted
eval "$(second_s3 start)"
make_tables "$S" --tables blobs --small --blob-batches 3:mixed >/dev/null
wait_until 10 running || fail "status did not go back to running after the root came up: $(state)"
ready() { [ "$(readyz)" = 200 ]; }
wait_until 5 ready || fail "/readyz after the recovery: $(cat "$TMPD/readyz.txt")"
last_status_fine() { grep '^STATUS=' "$TMPD/notify.txt" | tail -1 | grep -q '^STATUS=[0-9]* tables'; }
wait_until 10 last_status_fine || fail "STATUS= still degraded after the recovery: $(grep STATUS= "$TMPD/notify.txt" | tail -3)"
[ "$(metric "brid_root_up\\{root=\"$S\"\\}")" = 1 ] || fail "brid_root_up after the recovery: $(ctl metrics | grep brid_root)"
last=$(metric "brid_root_last_success_timestamp_seconds\\{root=\"$S\"\\}")
python3 -c "import sys,time; sys.exit(0 if abs(time.time() - float('$last')) < 60 else 1)" ||
  fail "brid_root_last_success_timestamp_seconds after the recovery: $last"
[ "$(grep -c "root $S: reachable again" "$BRID_LOG")" = 1 ] || fail "no single recovery line: $(grep -- "$S" "$BRID_LOG")"
grep -- "root $S: reachable again" "$BRID_LOG" | grep -q '^<5>' || fail "the recovery line is not a notice"
wait_until 30 compacted "$S/blobs.lance" || fail "the table under the recovered S3 root was not compacted"
echo "ok the S3 root recovered by itself: running, metric 1, one recovery line, its table compacted"

# 4. a local root removed: degraded, its table kept and given no job
wait_until 30 compacted "$T" || fail "the local table was not compacted at start"
mv "$L" "$TMPD/away"
t0=$SECONDS
wait_until 3 degraded_naming "$L" || fail "status is $(state), root $(root_state "$L") 3 s after the root was removed"
echo "ok a removed local root: degraded after $((SECONDS - t0)) s"
lance_ops "$TMPD/away/blobs.lance" append 3 --times 2 >/dev/null
lance_read "$TMPD/away/blobs.lance" --json >"$TMPD/before.json"
sleep 3 # debounce, sweeps and checks would have queued a compaction by now
ctl tables --json >"$TMPD/tables.json"
[ "$(jget '[t["state"] for t in d["tables"] if t["root"] == "'"$T"'"][0]' <"$TMPD/tables.json")" = unreachable ] ||
  fail "the table under the removed root: $(jget '[t for t in d["tables"] if t["root"] == "'"$T"'"]' <"$TMPD/tables.json")"
[ "$(jobs_of queued "$T")" = 0 ] && [ "$(jobs_of succeeded "$T")" = 1 ] || fail "jobs for the table under the removed root: $(ctl jobs)"
[ "$(metric "brid_root_up\\{root=\"$L\"\\}")" = 0 ] || fail "brid_root_up of the removed root"
echo "ok its table is kept (state unreachable), no job queued"

# 5. recreated: running again, one warning and one recovery line, the appends compacted
mkdir "$L"
mv "$TMPD/away/blobs.lance" "$L/"
wait_until 10 running || fail "status did not go back to running after the root was recreated: $(state)"
wait_until 30 compacted "$T" 2 || fail "the appends made while the root was away were not compacted"
lance_read "$T" --json >"$TMPD/after.json"
json_eq "$TMPD/before.json" "$TMPD/after.json" --ignore version,fragments,ms,table,fragmentRows,schemaFields,descriptorKinds,deletionFiles ||
  fail "LanceDB reads other values after the compaction"
[ "$(grep -c "root $L: unreachable" "$BRID_LOG")" = 1 ] && [ "$(grep -c "root $L: reachable again" "$BRID_LOG")" = 1 ] ||
  fail "the local root's changes are not logged once each: $(grep -- "root $L" "$BRID_LOG")"
echo "ok the local root recovered: running, logged once each way, the appends compacted"
brid_stop || fail "brid did not stop cleanly"
pass
