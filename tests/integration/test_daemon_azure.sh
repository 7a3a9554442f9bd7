#!/usr/bin/env bash
# DAEMON ON AZURE: brid with an az:// root compacts new commits by itself
# (issue AZURE). brid runs with root = az://CONTAINER/PREFIX on the test
# Azurite, the account, endpoint and emulator switch from the root's [root]
# section and the account key read from a file (brid's own environment has
# no AZURE_* variables), polling every second:
#  - a key written in brid.conf itself is refused, naming the key;
#    --check-config shows the key's file, never the key; an unknown key of
#    the root is refused, naming it;
#  - LanceDB writes a blob table there before brid starts: brid finds it
#    (List Blobs with delimiter "/"), compacts it after the debounce
#    (strategy auto: copy on Azure, which refuses links), and LanceDB reads
#    identical values (the interop scripts' canonical column hashes);
#  - LanceDB appends: the next poll sees the new version, brid compacts
#    again, LanceDB reads identical values; brictl tables says polled;
#  - cleanup as brid's job deletes the old files by Blob Batch (several a
#    request), LanceDB reads the same;
#  - brictl status shows the root reachable; brictl metrics shows the
#    root's requests (lists of the polls, gets, server-side copies) and polls;
#  - the root's endpoint on a port where nothing listens: status degraded,
#    naming the root, brid_root_up 0; then a forwarder to Azurite starts on
#    that port: running again by itself, brid_root_up 1;
#  - a wrong account key: degraded, the refusal naming 403; the key file
#    corrected and brictl reload: running again (the settings re-read and
#    handed to libbri again).
# About 20-30 s.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_azure daemon
P=$AZ_PREFIX

same() { json_eq "$1" "$2" --ignore version,fragments,ms,table,fragmentRows,schemaFields,descriptorKinds,deletionFiles; }
compactions() { # compactions STATE TABLE: how many
  ctl jobs --kind compact --state "$1" --table "$2" --json | jget 'len(d["jobs"])'
}
at_least() { [ "$(compactions succeeded "$2")" -ge "$1" ]; } # at_least N TABLE
metric() { ctl metrics | grep -E "^$1 " | awk '{print $2}'; }
state() { ctl status --json | jget 'd["state"]'; }
root_state() { ctl status --json | jget '[r["state"] for r in d["roots"] if r["root"] == "'"$1"'"][0]'; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
NO_AZURE_ENV="env -u AZURE_STORAGE_ACCOUNT_NAME -u AZURE_STORAGE_ACCOUNT_KEY -u AZURE_STORAGE_ENDPOINT
  -u AZURE_STORAGE_USE_EMULATOR -u AZURE_STORAGE_ALLOW_HTTP -u AZURITE_BLOB_STORAGE_URL"

make_tables "$P" --tables blobs --small --blob-batches 3:mixed >/dev/null
T=$P/blobs.lance
lance_read "$T" --json >"$TMPD/before.json"

printf '%s\n' "$AZURE_STORAGE_ACCOUNT_KEY" >"$TMPD/key"
chmod 600 "$TMPD/key"
root_conf() { # root_conf ENDPOINT: brid.conf with the az:// root at ENDPOINT
  cat <<EOF
[daemon]
root = $P
retry_base = 1s
sweep_interval = 1s
[root $P]
account_name = $AZURE_STORAGE_ACCOUNT_NAME
endpoint = $1
use_emulator = true
account_key_file = $TMPD/key
poll_interval = 1s
max_requests_in_flight = 8
EOF
}
root_conf "$AZURE_STORAGE_ENDPOINT" >"$TMPD/brid.conf"

# the key in brid.conf itself, an unknown key: refused, naming them
{ cat "$TMPD/brid.conf"; echo "account_key = $AZURE_STORAGE_ACCOUNT_KEY"; } >"$TMPD/bad.conf"
rc=0; $NO_AZURE_ENV "$BRID" --config "$TMPD/bad.conf" --check-config >/dev/null 2>"$TMPD/err" || rc=$?
[ $rc = 78 ] && grep -q "account_key: secrets are never written in brid.conf" "$TMPD/err" ||
  fail "an inline account key: exit $rc: $(cat "$TMPD/err")"
{ cat "$TMPD/brid.conf"; echo "region = us-east-1"; } >"$TMPD/bad.conf"
rc=0; $NO_AZURE_ENV "$BRID" --config "$TMPD/bad.conf" --check-config >/dev/null 2>"$TMPD/err" || rc=$?
[ $rc = 78 ] && grep -q "\[root $P\] region: unknown key" "$TMPD/err" ||
  fail "an S3 key in an Azure root's section: exit $rc: $(cat "$TMPD/err")"
$NO_AZURE_ENV "$BRID" --config "$TMPD/brid.conf" --check-config >"$TMPD/check.json" 2>"$TMPD/err" ||
  fail "--check-config: $(cat "$TMPD/err")"
[ "$(jget '[(r["root"], r["account_key_file"], r["use_emulator"]) for r in d["root_settings"]][0]' <"$TMPD/check.json")" = \
  "('$P', '$TMPD/key', 'true')" ] && ! grep -q "$AZURE_STORAGE_ACCOUNT_KEY" "$TMPD/check.json" ||
  fail "--check-config of the Azure root: $(cat "$TMPD/check.json")"
echo "ok the Azure root's settings: a key's file, never the key"

BRID_PREFIX=$NO_AZURE_ENV brid_start az --config "$TMPD/brid.conf" --debounce 1s

# 1. found at start-up, compacted after the debounce; LanceDB reads the same
wait_until 40 at_least 1 "$T" || fail "no compaction of the Azure table found at start-up: $(tail -5 "$BRID_LOG")"
ctl jobs --kind compact --state succeeded --table "$T" --json | jget 'd["jobs"][-1]["id"]' >"$TMPD/j"
ctl job "$(cat "$TMPD/j")" --json >"$TMPD/j.json"
[ "$(jget 'd["result"]["fragments_before"], d["result"]["fragments_after"], d["result"]["strategy_used"]' \
  <"$TMPD/j.json")" = "(3, 1, 'copy')" ] || fail "start-up job: $(jget 'd["result"]' <"$TMPD/j.json")"
lance_read "$T" --json >"$TMPD/after1.json"
same "$TMPD/before.json" "$TMPD/after1.json" || fail "LanceDB reads other values after brid's compaction"
echo "ok start-up table found and compacted (copy)"

# 2. an append: polled, compacted again
lance_ops "$T" append 3 --times 2 >/dev/null
lance_read "$T" --json >"$TMPD/before2.json"
wait_until 40 at_least 2 "$T" || fail "appends on Azure did not trigger a compaction"
lance_read "$T" --json >"$TMPD/after2.json"
same "$TMPD/before2.json" "$TMPD/after2.json" || fail "LanceDB reads other values after the second compaction"
# the appended fragments merge; the first compaction's fragment (32 MB of
# payload, which copy counts) is larger than they are together and stays
# (the size tiers, plan.h); a poll that saw only the first append leaves it
# alone, and the compaction after the second merges both
wait_until 40 table_shape_is "(2, True, False)" "$T" ||
  fail "the table is not two polled fragments after brid's compactions: $(ctl tables --json)"
[ "$(last_held_back "$T")" = "larger than the newer fragments" ] ||
  fail "the last compaction did not hold the large fragment back: $(last_held_back "$T")"
echo "ok appends polled and compacted"

# 2b. cleanup as brid's job: the old versions' files go by Blob Batch (several
#     a request), LanceDB reads the same
ctl cleanup "$T" --older-than 0 --grace 0 --wait --json >"$TMPD/clean.json" 2>"$TMPD/err" ||
  fail "cleanup through brid: $(cat "$TMPD/err")"
files=$(jget 'd["result"]["files"]' <"$TMPD/clean.json")
deletes=$(jget 'd["result"]["storage"]["requests_by_kind"].get("delete", 0)' <"$TMPD/clean.json")
[ "$files" -ge 8 ] && [ "$deletes" -ge 1 ] && [ $((deletes * 4)) -le "$files" ] ||
  fail "cleanup: $files files in $deletes delete requests: $(cat "$TMPD/clean.json")"
lance_read "$T" --json >"$TMPD/after3.json"
same "$TMPD/before2.json" "$TMPD/after3.json" || fail "LanceDB reads other values after brid's cleanup"
echo "ok cleanup as brid's job: $files files in $deletes Blob Batch request(s)"

# 3. status and metrics name the root
[ "$(state)" = running ] && [ "$(root_state "$P")" = reachable ] || fail "status: $(ctl status)"
ctl status | grep -qF "$P" || fail "brictl status does not show the root: $(ctl status)"
R="root=\"$P\""
lists=$(metric "brid_storage_requests_total\{$R,kind=\"list\",status=\"2xx\"\}")
gets=$(metric "brid_storage_requests_total\{$R,kind=\"get\",status=\"2xx\"\}")
copies=$(ctl metrics | grep -E "^brid_storage_requests_total\{$R,kind=\"(copy|upload_part_copy)\",status=\"2xx\"\}" |
  awk '{s += $2} END {print s + 0}')
polls=$(metric "brid_polls_total\{$R\}")
[ "${lists:-0}" -ge 4 ] && [ "${gets:-0}" -ge 2 ] && [ "$copies" -ge 1 ] && [ "${polls:-0}" -ge 3 ] &&
  [ "$(metric "brid_root_up\{$R\}")" = 1 ] ||
  fail "metrics: list $lists, get $gets, copies $copies, polls $polls, up $(metric "brid_root_up\{$R\}")"
echo "ok status and metrics: $lists List Blobs, $gets GET, $copies server-side copies, $polls polls"
brid_stop || fail "brid did not stop cleanly"

# 4. the endpoint on a port where nothing listens: degraded; a forwarder to
#    Azurite comes up there: running again by itself
PORT=$(free_port)
AZ_PORT=$(sed -E 's|^https?://[^:/]+:([0-9]+).*|\1|' <<<"$AZURE_STORAGE_ENDPOINT")
root_conf "${AZURE_STORAGE_ENDPOINT/:$AZ_PORT/:$PORT}" >"$TMPD/down.conf"
BRID_PREFIX="$NO_AZURE_ENV AZURE_STORAGE_MAX_ATTEMPTS=1" brid_start down --config "$TMPD/down.conf" --debounce 1s
degraded() { [ "$(state)" = degraded ] && [ "$(root_state "$P")" = unreachable ]; }
wait_until 10 degraded || fail "status is $(state), root $(root_state "$P") with the endpoint on a dead port"
ctl status | grep -q "  $P: UNREACHABLE since " || fail "brictl status does not name the root: $(ctl status)"
[ "$(metric "brid_root_up\{$R\}")" = 0 ] || fail "brid_root_up of the unreachable root: $(metric "brid_root_up\{$R\}")"
python3 - "$PORT" "$AZ_PORT" >"$TMPD/fwd.log" 2>&1 <<'EOF' &
import socket, sys, threading
src, dst = int(sys.argv[1]), int(sys.argv[2])
lsock = socket.socket()
lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
lsock.bind(("127.0.0.1", src))
lsock.listen(64)
def pipe(a, b):
    try:
        while True:
            data = a.recv(65536)
            if not data: break
            b.sendall(data)
    except OSError:
        pass
    for s in (a, b):
        try: s.shutdown(socket.SHUT_RDWR)
        except OSError: pass
while True:
    c, _ = lsock.accept()
    u = socket.create_connection(("127.0.0.1", dst))
    for x, y in ((c, u), (u, c)): threading.Thread(target=pipe, args=(x, y), daemon=True).start()
EOF
FWD=$!
trap 'kill $FWD 2>/dev/null || true; _brid_cleanup' EXIT
running() { [ "$(state)" = running ] && [ "$(root_state "$P")" = reachable ]; }
wait_until 15 running || fail "status did not go back to running after the endpoint came up: $(ctl status)"
[ "$(metric "brid_root_up\{$R\}")" = 1 ] || fail "brid_root_up after the recovery"
[ "$(ctl tables --json | jget 'len(d["tables"]), d["tables"][0]["root"]')" = "(1, '$T')" ] ||
  fail "the table is not listed after the recovery: $(ctl tables --json)"
brid_stop || fail "brid did not stop cleanly"
echo "ok an unreachable Azure root: degraded, then running again by itself"

# 5. a wrong account key: the root is refused (403), degraded; the key file
#    corrected and brictl reload: the same root lists again
head -c 64 /dev/urandom | base64 -w0 >"$TMPD/key" && echo >>"$TMPD/key"
BRID_PREFIX="$NO_AZURE_ENV AZURE_STORAGE_MAX_ATTEMPTS=1" brid_start rl --config "$TMPD/brid.conf" --debounce 1s
wait_until 10 degraded || fail "status is $(state), root $(root_state "$P") with a wrong account key"
why=$(ctl status --json | jget '[r["last_error"]["message"] for r in d["roots"]][0]')
[[ $why == *"HTTP 403 AuthorizationFailure"* ]] || fail "the wrong key's refusal does not name the status: $why"
printf '%s\n' "$AZURE_STORAGE_ACCOUNT_KEY" >"$TMPD/key"
ctl reload >"$TMPD/reload.out" 2>&1 || fail "brictl reload: $(cat "$TMPD/reload.out")"
wait_until 15 running || fail "the corrected key did not take effect through brictl reload: $(ctl status)"
brid_stop || fail "brid did not stop cleanly"
echo "ok a corrected account key takes effect through brictl reload"
pass
