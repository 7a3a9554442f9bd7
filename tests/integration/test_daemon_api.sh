#!/usr/bin/env bash
# DAEMON API: every control method through brictl and raw JSON-RPC, with the
# error paths, against a real brid (real socket, inotify, SQLite store):
#  - configuration: --check-config on the documented example (every key of
#    the key table documented, the example parses), unknown key, bad value,
#    no root (exit 78, message with file:line);
#  - status, tables [TABLE], jobs, job ID, compact/cleanup/materialize/verify
#    --wait, pause/resume (one table, all), cancel (queued, running: outputs
#    rolled back; finished: error), reload (file change, SIGHUP, broken file:
#    the daemon keeps its configuration), metrics;
#  - malformed JSON, batch, bad version, unknown method, bad params, unknown
#    param, oversized line, notification, pipelining: JSON-RPC errors, daemon
#    unaffected; connection limit;
#  - a peer with the wrong uid is refused (SO_PEERCRED), a member of
#    socket_group is accepted.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

EX=$BRI_SOURCE_DIR/config/brid.conf.example
[ -f "$EX" ] || EX=$REPO/config/brid.conf.example

# ---------------------------------------------------------------- config
mkdir -p "$TMPD/root"
# every documented key, uncommented with its documented value, parses
printf 'not-a-real-secret\n' >"$TMPD/secret"
printf 'bm90LWEtcmVhbC1rZXk=\n' >"$TMPD/azkey"  # base64, as an account key is
chmod 600 "$TMPD/secret" "$TMPD/azkey"
python3 - "$EX" "$TMPD/root" "$TMPD/secret" "$TMPD/azkey" >"$TMPD/full.conf" <<'EOF'
import re, sys
roots = 0
for line in open(sys.argv[1]):
    line = re.sub(r"^#([a-z_]+ = |\[table |\[root )", r"\1", line)
    if line.startswith("root = /"):  # the local roots: one, the test's; S3 roots stay
        roots += 1
        if roots > 1: continue
        line = "root = %s\n" % sys.argv[2]
    if line.startswith("socket_group = "): line = "socket_group = nogroup\n"
    if line.startswith("readonly_group = "): line = "readonly_group = nogroup\n"
    if line.startswith("secret_access_key_file = "): line = "secret_access_key_file = %s\n" % sys.argv[3]
    if line.startswith("session_token_file = "): line = "session_token_file = %s\n" % sys.argv[3]
    if line.startswith("account_key_file = "): line = "account_key_file = %s\n" % sys.argv[4]
    if line.startswith("sas_token_file = "): continue  # an account key or a SAS token, not both
    if line.startswith("profile = "): continue  # profile or access_key_id, not both
    if line.startswith(("secret_access_key_credential = ", "session_token_credential = ",
                        "account_key_credential = ", "sas_token_credential = ")):
        continue  # a secret's file or its credential, not both (the credential needs systemd)
    if line.startswith(("store = ", "store_password_file = ", "store_password_credential = ")):
        continue  # state or store (PostgreSQL), not both
    sys.stdout.write(line)
EOF
"$BRID" --config "$TMPD/full.conf" --check-config >"$TMPD/check.json" 2>"$TMPD/check.err" ||
  fail "the documented example does not parse: $(cat "$TMPD/check.err")"
grep -q "configuration OK" "$TMPD/check.err" || fail "--check-config did not say OK"
[ "$(jget 'd["defaults"]["strategy"]' <"$TMPD/check.json")" = auto ] || fail "example: default strategy"
[ "$(jget 'len(d["tables"])' <"$TMPD/check.json")" = 5 ] || fail "example: 5 table sections expected"
[ "$(jget 'd["root_settings"][0]["poll_interval"], d["root_settings"][0]["secret_access_key_file"] is not None' \
  <"$TMPD/check.json")" = "('30s', True)" ] || fail "example: the S3 root's settings"
! grep -q not-a-real-secret "$TMPD/check.json" || fail "--check-config shows a secret"
# every key brid knows is documented in the example, and nothing else is
python3 - "$TMPD/check.json" "$EX" <<'EOF' || fail "config/brid.conf.example and brid's keys differ"
import json, re, sys
c = json.load(open(sys.argv[1]))
daemon = set(c) - {"file", "roots", "defaults", "tables", "root_settings"} | {"root"}
policy = set(c["defaults"])
rootkeys = set().union(*c["root_settings"]) - {"root"}
text = open(sys.argv[2]).read()
sec, doc = "daemon", {"daemon": set(), "defaults": set(), "root": set()}
for line in text.splitlines():
    m = re.match(r"^#?\[(\w+)", line)
    if m and m.group(1) in doc: sec = m.group(1)
    elif m: sec = None
    m = re.match(r"^#?([a-z_]+) = ", line)
    if m and sec in doc: doc[sec].add(m.group(1))
bad = (daemon ^ doc["daemon"]) | (policy ^ doc["defaults"]) | (rootkeys ^ doc["root"])
if bad: print("undocumented or unknown:", sorted(bad)); sys.exit(1)
EOF
printf '[daemon]\nroot = %s\nbogus = 1\n' "$TMPD/root" >"$TMPD/bad1.conf"
rc=0; "$BRID" --config "$TMPD/bad1.conf" --check-config >/dev/null 2>"$TMPD/err" || rc=$?
[ $rc = 78 ] || fail "unknown key: exit $rc, expected 78"
grep -q "bad1.conf:3: \[daemon\] bogus: unknown key" "$TMPD/err" || fail "unknown key message: $(cat "$TMPD/err")"
printf '[daemon]\nroot = %s\n[defaults]\nrepack_threshold = 2\n' "$TMPD/root" >"$TMPD/bad2.conf"
rc=0; "$BRID" --config "$TMPD/bad2.conf" --check-config >/dev/null 2>"$TMPD/err" || rc=$?
[ $rc = 78 ] && grep -q "bad2.conf:4: \[defaults\] repack_threshold: 2 is outside \[0, 1\]" "$TMPD/err" ||
  fail "bad value: exit $rc: $(cat "$TMPD/err")"
printf '[daemon]\nroot = %s\nworkers = 2\n[defaults]\nworkers = 3\n' "$TMPD/root" >"$TMPD/bad3.conf"
rc=0; "$BRID" --config "$TMPD/bad3.conf" --check-config >/dev/null 2>"$TMPD/err" || rc=$?
[ $rc = 78 ] && grep -q "workers: a daemon key; put it in \[daemon\]" "$TMPD/err" || fail "misplaced key: $(cat "$TMPD/err")"
# a file that is not UTF-8 (its settings could not be shown as JSON): refused with the line
printf '[daemon]\nroot = %s/\377\n' "$TMPD/root" >"$TMPD/bad4.conf"
rc=0; "$BRID" --config "$TMPD/bad4.conf" --check-config >/dev/null 2>"$TMPD/err" || rc=$?
[ $rc = 78 ] && grep -q "bad4.conf:2: not UTF-8 text (byte 0xff at offset" "$TMPD/err" || fail "not UTF-8: exit $rc: $(cat "$TMPD/err")"
# "[table#N]" as written is not brid's internal name of the Nth [table PATH] section
printf '[daemon]\nroot = %s\n[table /t/a]\npaused = yes\n[table#0]\nstrategy = copy\n' "$TMPD/root" >"$TMPD/bad5.conf"
rc=0; "$BRID" --config "$TMPD/bad5.conf" --check-config >/dev/null 2>"$TMPD/err" || rc=$?
[ $rc = 78 ] && grep -q "bad5.conf:6: \[table#0\]: the table path must be absolute" "$TMPD/err" ||
  fail "[table#0]: exit $rc: $(cat "$TMPD/err")"
rc=0; "$BRID" --check-config >/dev/null 2>"$TMPD/err" || rc=$?
[ $rc = 78 ] && grep -q "no table root configured" "$TMPD/err" || fail "no root: exit $rc: $(cat "$TMPD/err")"
# flags override the file; a [table] section longer than libinih's 49-byte section names
long=$TMPD/root/a-table-whose-path-is-much-longer-than-fifty-bytes.lance
printf '[daemon]\nroot = /nonexistent\nworkers = 3\n[table %s]\nstrategy = copy\n' "$long" >"$TMPD/ov.conf"
"$BRID" --config "$TMPD/ov.conf" --root "$TMPD/root" --workers 5 --check-config >"$TMPD/ov.json" 2>/dev/null
[ "$(jget 'd["workers"]' <"$TMPD/ov.json")" = 5 ] || fail "--workers did not override the file"
[ "$(jget 'd["roots"][0]' <"$TMPD/ov.json")" = "$TMPD/root" ] || fail "--root did not replace the file's roots"
[ "$(jget 'd["tables"][0]["table"]' <"$TMPD/ov.json")" = "$long" ] || fail "long [table] path was cut"
echo "ok config"

# ---------------------------------------------------------------- daemon
cp -a "$BRI_SOURCE_DIR/tests/fixtures/tables/blobs.lance" "$BRI_SOURCE_DIR/tests/fixtures/tables/plain.lance" \
  "$BRI_SOURCE_DIR/tests/fixtures/tables/v21.lance" "$TMPD/root/"
chmod 711 "$TMPD"
mkdir -m 755 "$TMPD/pub"
cat >"$TMPD/api.conf" <<EOF
[daemon]
root = $TMPD/root
socket_mode = 0666
max_connections = 3
max_request_bytes = 4K
log_level = debug
retry_base = 1s
[defaults]
auto_compact = no
cleanup_interval = 0
[table $TMPD/root/blobs.lance]
batch_rows = 1
EOF
# compactions of blobs.lance take at least 4 batches (a fragment each) x 800 ms:
# long enough to watch and cancel, even on a loaded machine
export BRI_FAILPOINTS=compact.after_rows=delay:800
brid_start pub/api --config "$TMPD/api.conf" --debounce 1h
unset BRI_FAILPOINTS
B=$TMPD/root/blobs.lance P=$TMPD/root/plain.lance V=$TMPD/root/v21.lance

ctl status --json >"$TMPD/st.json" || fail "status failed"
[ "$(jget 'd["state"]' <"$TMPD/st.json")" = running ] || fail "status: state"
# the default: 4 per CPU brid may run on (nproc: its affinity), 2 to 32
w=$((4 * $(nproc))); w=$((w < 2 ? 2 : w > 32 ? 32 : w))
[ "$(jget 'd["workers"]["total"]' <"$TMPD/st.json")" = "$w" ] || fail "status: workers, $w expected"
[ "$(jget 'd["tables"]["watched"]' <"$TMPD/st.json")" = 3 ] || fail "status: 3 tables expected"
[ "$(jget 'd["tables"]["inotify_watches"]' <"$TMPD/st.json")" = 3 ] || fail "status: 3 watches expected"
ctl status | grep -q "^tables:  3 watched" || fail "status: human output"
ctl tables --json | jget 'sorted(t["root"] for t in d["tables"])' | grep -q "v21.lance" || fail "tables: list"
ctl tables | grep -q "blobs.lance" || fail "tables: human output"
ctl tables "$B" --json >"$TMPD/t.json"
[ "$(jget 'd["policy"]["batch_rows"]' <"$TMPD/t.json")" = 1 ] || fail "tables TABLE: per-table policy not applied"
[ "$(jget 'd["policy"]["strategy"]' <"$TMPD/t.json")" = auto ] || fail "tables TABLE: default strategy"
rc=0; ctl tables "$TMPD/nope.lance" 2>"$TMPD/err" || rc=$?
[ $rc = 2 ] && grep -q "is not a table brid watches" "$TMPD/err" || fail "tables on a non-table: exit $rc"
# relative table paths are resolved by brictl
(cd "$TMPD/root" && "$BRICTL" tables blobs.lance --socket "$SOCK" --json) | jget 'd["root"]' | grep -qx "$B" ||
  fail "relative TABLE path"
echo "ok status/tables"

# compact --wait: progress while waiting, summary, bytes
ctl compact "$B" --wait >"$TMPD/c.out" 2>"$TMPD/c.err" || fail "compact --wait failed: $(cat "$TMPD/c.err")"
grep -q "version 5 -> 6: 4 -> 1 fragments, 8 rows" "$TMPD/c.out" || fail "compact summary: $(cat "$TMPD/c.out")"
grep -q "writing" "$TMPD/c.err" || fail "no progress shown while waiting: $(cat "$TMPD/c.err")"
ctl jobs --json >"$TMPD/j.json"
J1=$(jget 'd["jobs"][0]["id"]' <"$TMPD/j.json")
[ "$(jget 'd["jobs"][0]["state"]' <"$TMPD/j.json")" = succeeded ] || fail "jobs: state"
[ "$(jget 'd["jobs"][0]["bytes_reused"]' <"$TMPD/j.json")" = 6144 ] || fail "jobs: bytes reused"
[ "$(jget '"plan" in d["jobs"][0]["result"]' <"$TMPD/j.json")" = False ] || fail "jobs: lists must not carry plans"
ctl job "$J1" --json >"$TMPD/j1.json"
[ "$(jget 'd["attempt_log"][0]["outcome"]' <"$TMPD/j1.json")" = succeeded ] || fail "job: attempt log"
[ "$(jget 'd["journal"]' <"$TMPD/j1.json")" = "[]" ] || fail "job: journal not cleared after success"
[ "$(jget '"bins" in d["result"]["plan"]' <"$TMPD/j1.json")" = True ] || fail "job: plan missing"
ctl job "$J1" | grep -q "state:      succeeded" || fail "job: human output"
ctl jobs --table "$B" --state succeeded,failed --kind compact --limit 1 --json | jget 'len(d["jobs"])' | grep -qx 1 ||
  fail "jobs filters"
rc=0; ctl job 9999 2>"$TMPD/err" || rc=$?
[ $rc = 2 ] && grep -q "no job 9999" "$TMPD/err" || fail "job 9999: exit $rc"
# nothing to do, dry run
ctl compact "$P" --wait --dry-run | grep -q "dry run at version" || fail "compact --dry-run"
# cleanup, verify, materialize through the daemon
ctl cleanup "$B" --wait --older-than 0 --grace 0 | grep -q "deleted [1-9][0-9]* files" || fail "cleanup --wait"
ctl verify "$B" --wait | grep -q "0 problem(s)" || fail "verify --wait"
ctl materialize "$B" --wait >"$TMPD/m.out" || fail "materialize --wait: $(cat "$TMPD/m.out")"
ctl verify "$B" --wait --all-versions >/dev/null || fail "verify after materialize"
# submit without waiting, and a duplicate of a queued job
ctl pause "$V" | grep -q "paused 1 table" || fail "pause TABLE"
ctl compact "$V" --json >"$TMPD/q1.json"
ctl compact "$V" --daemon >"$TMPD/q2.out"
Q=$(jget 'd["job"]' <"$TMPD/q1.json")
grep -q "already queued as job $Q" "$TMPD/q2.out" || fail "duplicate submission: $(cat "$TMPD/q2.out")"
sleep 1
[ "$(ctl job "$Q" --json | jget 'd["state"]')" = queued ] || fail "a paused table's job ran"
ctl tables --json | jget '[t["paused"] for t in d["tables"] if t["root"].endswith("v21.lance")][0]' | grep -qx True ||
  fail "tables: paused flag"
ctl resume "$V" | grep -q "resumed 1 table" || fail "resume TABLE"
wait_until 10 sh -c "\"$BRICTL\" job $Q --json --socket \"$SOCK\" | grep -q '\"state\": \"succeeded\"'" ||
  fail "job $Q did not run after resume"
# cancel: a queued job, then a running one (its outputs are rolled back)
ctl pause | grep -q "paused 3 table" || fail "pause (all)"
Q2=$(ctl cleanup "$P" --json | jget 'd["job"]')
ctl cancel "$Q2" | grep -q "job $Q2: cancelled" || fail "cancel queued"
rc=0; ctl cancel "$J1" 2>"$TMPD/err" || rc=$?
[ $rc = 2 ] && grep -q "already succeeded" "$TMPD/err" || fail "cancel finished job: exit $rc"
ctl resume | grep -q "resumed 3 table" || fail "resume (all)"
cp -a "$BRI_SOURCE_DIR/tests/fixtures/tables/blobs.lance" "$TMPD/root/blobs2.lance"
wait_until 15 sh -c "\"$BRICTL\" tables \"$TMPD/root/blobs2.lance\" --socket \"$SOCK\"" || fail "new table not discovered"
printf '[table %s]\nbatch_rows = 1\nstrategy = copy\n' "$TMPD/root/blobs2.lance" >>"$TMPD/api.conf"
ctl reload >/dev/null || fail "reload"
R=$(ctl compact "$TMPD/root/blobs2.lance" --json | jget 'd["job"]')
wait_until 10 sh -c "\"$BRICTL\" job $R --json --socket \"$SOCK\" | grep -q '\"rows_done\": [1-9]'" || fail "job $R did not start"
ctl status | grep -q "job $R .*writing" || fail "status does not show the running job"
ctl job "$R" --json | jget 'len(d["journal"]) > 0' | grep -qx True || fail "running job has no journal"
ctl cancel "$R" | grep -q "stops at its next safe point" || fail "cancel running"
wait_until 10 sh -c "\"$BRICTL\" job $R --json --socket \"$SOCK\" | grep -q '\"state\": \"cancelled\"'" ||
  fail "running job $R not cancelled"
ctl job "$R" --json >"$TMPD/r.json"
[ "$(jget 'd["journal"]' <"$TMPD/r.json")" = "[]" ] || fail "cancelled job kept journal entries"
n=$(find "$TMPD/root/blobs2.lance/data" -mindepth 1 -newer "$TMPD/api.conf" | wc -l)
[ "$n" = 0 ] || fail "cancelled job left $n files: $(find "$TMPD/root/blobs2.lance/data" -mindepth 1 -newer "$TMPD/api.conf")"
"$BRICTL" scan "$TMPD/root/blobs2.lance" >/dev/null || fail "table unreadable after cancel"
echo "ok jobs"

# reload: a per-table pause from the file; resume refuses it; broken file kept out
printf '[table %s]\npaused = yes\n' "$P" >>"$TMPD/api.conf"
ctl reload --json | jget 'd["changes"]["table_sections"]' | grep -qx 3 || fail "reload: changes"
[ "$(ctl tables "$P" --json | jget 'd["paused_by_config"]')" = True ] || fail "reload: config pause not applied"
rc=0; ctl resume "$P" 2>"$TMPD/err" || rc=$?
[ $rc = 2 ] && grep -q "paused by the configuration" "$TMPD/err" || fail "resume of a config-paused table: exit $rc"
cp "$TMPD/api.conf" "$TMPD/api.good"
echo "workers = lots" >>"$TMPD/api.conf"
rc=0; ctl reload 2>"$TMPD/err" || rc=$?
[ $rc = 2 ] && grep -q "api.conf:[0-9]*: .* workers: a daemon key" "$TMPD/err" || fail "broken reload: exit $rc: $(cat "$TMPD/err")"
ctl status | grep -q "last reload FAILED" || fail "status: failed reload not shown"
cp "$TMPD/api.good" "$TMPD/api.conf"
sed -i '$d' "$TMPD/api.conf"; sed -i '$d' "$TMPD/api.conf" # drop the pause section
kill -HUP "$BRID_PID"
wait_until 15 sh -c "\"$BRICTL\" tables \"$P\" --json --socket \"$SOCK\" | grep -q '\"paused_by_config\": false'" ||
  fail "SIGHUP reload"
echo "ok reload"

# metrics
ctl metrics >"$TMPD/metrics.txt"
grep -q '^brid_jobs{state="succeeded"} [1-9]' "$TMPD/metrics.txt" || fail "metrics: jobs by state"
grep -q '^brid_queue_depth 0' "$TMPD/metrics.txt" || fail "metrics: queue depth"
grep -q "^brid_bytes_reused_total{table=\"$B\",kind=\"compact\"} 6144" "$TMPD/metrics.txt" || fail "metrics: bytes reused"
grep -q "^brid_jobs_finished_total{table=\"$TMPD/root/blobs2.lance\",kind=\"compact\",outcome=\"cancelled\"} 1" \
  "$TMPD/metrics.txt" || fail "metrics: cancelled"
grep -q '^brid_job_run_seconds_total{' "$TMPD/metrics.txt" || fail "metrics: durations"
grep -q '^# TYPE brid_bytes_written_total counter' "$TMPD/metrics.txt" || fail "metrics: TYPE lines"
echo "ok metrics"

# ---------------------------------------------------------------- protocol
code() { python3 -c 'import json,sys
for l in sys.stdin:
    o=json.loads(l); print(o["error"]["code"] if "error" in o else "ok")'; }
[ "$(rpc_raw 'garbage' | code)" = -32700 ] || fail "malformed JSON"
[ "$(rpc_raw '[1,2]' | code)" = -32600 ] || fail "batch"
[ "$(rpc_raw '42' | code)" = -32600 ] || fail "not an object"
[ "$(rpc_raw '{"id":1,"method":"status"}' | code)" = -32600 ] || fail "no jsonrpc member"
[ "$(rpc_raw '{"jsonrpc":"2.0","id":1,"method":"nope"}' | code)" = -32601 ] || fail "unknown method"
[ "$(rpc_raw '{"jsonrpc":"2.0","id":1,"method":"status","params":[1]}' | code)" = -32602 ] || fail "positional params"
[ "$(rpc_raw '{"jsonrpc":"2.0","id":1,"method":"jobs.get","params":{"id":"x"}}' | code)" = -32602 ] || fail "bad id type"
[ "$(rpc_raw '{"jsonrpc":"2.0","id":1,"method":"jobs.get","params":{}}' | code)" = -32602 ] || fail "missing id"
[ "$(rpc_raw '{"jsonrpc":"2.0","id":1,"method":"status","params":{"x":1}}' | code)" = -32602 ] || fail "unknown param"
[ "$(rpc_raw "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"compact\",\"params\":{\"table\":\"$B\",\"strategy\":\"zip\"}}" | code)" = -32602 ] ||
  fail "bad strategy"
[ "$(rpc_raw '{"jsonrpc":"2.0","id":1,"method":"compact","params":{"table":"relative/t"}}' | code)" = -32602 ] ||
  fail "relative table"
[ "$(rpc_raw '{"jsonrpc":"2.0","id":1,"method":"cleanup","params":{"table":"/nonexistent"}}' | code)" = -32001 ] ||
  fail "unknown table"
[ "$(rpc_raw '{"jsonrpc":"2.0","id":1,"method":"cleanup","params":{"table":"'"$B"'","older_than":"soon"}}' | code)" = -32602 ] ||
  fail "bad duration"
[ "$(rpc_raw '{"jsonrpc":"2.0","id":7,"method":"jobs.cancel","params":{"id":'"$J1"'}}' | code)" = -32003 ] ||
  fail "cancel finished (raw)"
[ "$(rpc_raw '{"jsonrpc":"2.0","id":1,"method":"pause","params":{"table":"/nonexistent"}}' | code)" = -32001 ] ||
  fail "pause of an unknown table"
[ "$(rpc_raw '{"jsonrpc":"2.0","id":1,"method":"resume","params":{"cancel_running":true}}' | code)" = -32602 ] ||
  fail "resume takes no cancel_running"
[ "$(rpc_raw '{"jsonrpc":"2.0","id":1,"method":"metrics","params":{"format":"x"}}' | code)" = -32602 ] ||
  fail "metrics: a format other than text or json"
[ "$(rpc_raw '{"jsonrpc":"2.0","id":1,"method":"jobs.list","params":{"state":"done"}}' | code)" = -32602 ] ||
  fail "jobs.list: bad state"
[ "$(rpc_raw '{"jsonrpc":"2.0","id":1,"method":"jobs.list","params":{"limit":0}}' | code)" = -32602 ] ||
  fail "jobs.list: bad limit"
[ "$(rpc_raw '{"jsonrpc":"2.0","id":1,"method":"verify","params":{"table":"'"$B"'","all_versions":"yes"}}' | code)" = -32602 ] ||
  fail "verify: bad boolean"
[ "$(rpc_raw '{"jsonrpc":"2.0","id":1,"method":"tables.get","params":{}}' | code)" = -32602 ] ||
  fail "tables.get without table"
# an empty parameter name once made the accepted-names scan loop forever (brid hung)
[ "$(rpc_raw '{"jsonrpc":"2.0","id":1,"method":"tables.list","params":{"":1}}' | code)" = -32602 ] ||
  fail "empty parameter name"
[ "$(rpc_raw '{"jsonrpc":"2.0","id":1,"method":"status","params":{"":1}}' | code)" = -32602 ] ||
  fail "empty parameter name of a method without params"
# a notification gets no reply; pipelined requests are answered in order; ids are echoed
out=$(rpc_raw '{"jsonrpc":"2.0","method":"status"}' '{"jsonrpc":"2.0","id":"a","method":"status"}' \
  'not json' '{"jsonrpc":"2.0","id":3,"method":"jobs.list","params":{"limit":1}}')
[ "$(echo "$out" | python3 -c 'import json,sys; print([json.loads(l).get("id") for l in sys.stdin])')" = "['a', None, 3]" ] ||
  fail "pipelining/notification: $out"
# an oversized line: error, then the connection is closed
big=$(python3 -c 'print("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"status\",\"params\":{\"x\":\"" + "a"*6000 + "\"}}")')
out=$(rpc_raw "$big" '{"jsonrpc":"2.0","id":2,"method":"status"}')
echo "$out" | head -1 | grep -q '"code":-32600,"message":"request line exceeds 4096 bytes"' || fail "oversized line: $out"
echo "$out" | tail -1 | grep -qx EOF || fail "connection not closed after an oversized line"
# too many connections
python3 - "$SOCK" <<'EOF' || fail "connection limit"
import json, socket, sys
conns = []
for i in range(3):
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); conns.append(s)
s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(sys.argv[1])
r = json.loads(s.makefile().readline())
assert r["error"]["code"] == -32005, r
for c in conns: c.close()
EOF
ctl status >/dev/null || fail "daemon stopped serving after bad input"
echo "ok protocol"

# ---------------------------------------------------------------- peers
rc=0; setpriv --reuid=65534 --regid=65534 --clear-groups "$BRICTL" status --socket "$SOCK" 2>"$TMPD/err" || rc=$?
[ $rc = 3 ] && grep -q "permission denied: uid 65534 is not brid's user" "$TMPD/err" ||
  fail "wrong uid not refused (exit $rc): $(cat "$TMPD/err")"
log_has "refused peer uid 65534" || fail "refusal not logged"
grep -q '^brid_peers_refused_total [1-9]' <<<"$(ctl metrics)" || fail "metrics: refused peers"
brid_stop || fail "brid exited non-zero"
# with socket_group, a member is accepted (supplementary group via SO_PEERGROUPS)
sed -i 's/^socket_mode = 0666/socket_mode = 0666\nsocket_group = nogroup/' "$TMPD/api.conf"
brid_start pub/api --config "$TMPD/api.conf" --debounce 1h
setpriv --reuid=65534 --regid=65533 --groups=65534 "$BRICTL" status --socket "$SOCK" >/dev/null ||
  fail "member of socket_group (supplementary) refused"
rc=0; setpriv --reuid=65534 --regid=65533 --clear-groups "$BRICTL" status --socket "$SOCK" 2>/dev/null || rc=$?
[ $rc = 3 ] || fail "non-member accepted (exit $rc)"
# the socket file mode is applied
[ "$(stat -c %a "$SOCK")" = 666 ] || fail "socket mode $(stat -c %a "$SOCK")"
brid_stop || fail "brid exited non-zero"
[ ! -e "$SOCK" ] || fail "socket file left after stop"
# default mode 0660: the kernel already keeps others out
sed -i '/^socket_mode/d; /^socket_group/d' "$TMPD/api.conf"
brid_start pub/api --config "$TMPD/api.conf" --debounce 1h
[ "$(stat -c %a "$SOCK")" = 660 ] || fail "default socket mode $(stat -c %a "$SOCK")"
rc=0; setpriv --reuid=65534 --regid=65534 --clear-groups "$BRICTL" status --socket "$SOCK" 2>"$TMPD/err" || rc=$?
[ $rc = 3 ] && grep -q "permission denied on" "$TMPD/err" || fail "0660 socket: exit $rc: $(cat "$TMPD/err")"
# a second daemon on the same socket or store is refused
rc=0; "$BRID" --root "$TMPD/root" --socket "$SOCK" --state "$TMPD/other.db" 2>"$TMPD/err" || rc=$?
[ $rc != 0 ] && grep -q "another process (brid?) is listening" "$TMPD/err" || fail "second daemon on the socket: $(cat "$TMPD/err")"
if [ "${BRI_TEST_STORE:-}" != pg ]; then # a PostgreSQL store is shared by design
  rc=0; "$BRID" --root "$TMPD/root" --socket "$TMPD/pub/other.sock" --state "$TMPD/pub/api.db" 2>"$TMPD/err" || rc=$?
  [ $rc != 0 ] && grep -qi "lock" "$TMPD/err" || fail "second daemon on the store: $(cat "$TMPD/err")"
fi
brid_stop || fail "brid exited non-zero"
echo "ok peers"
pass
