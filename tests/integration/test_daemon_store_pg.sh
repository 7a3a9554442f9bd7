#!/usr/bin/env bash
# DAEMON STORE ON POSTGRESQL: brid's --store / store = settings and a store
# that goes away.
#  - --state with --store, a password inside the URI, a password file and a
#    store = in the file: refused or taken as documented, the password never
#    in a message;
#  - brid on a private PostgreSQL (scripts/pg-server.sh in the test's dir):
#    status names the backend and says it is up; with the server halted,
#    status answers "degraded" with the store's error and brid_store_up is 0;
#    once the server is back brid reconnects by itself and is running again.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mkdir -p "$TMPD/root"
# ------------------------------------------------------------ refusals
rc=0; "$BRID" --root "$TMPD/root" --socket "$TMPD/x.sock" --state "$TMPD/x.db" \
  --store "postgresql://brid@/brid?host=/nowhere" 2>"$TMPD/err" || rc=$?
[ $rc = 78 ] && grep -q "name two job stores: give one" "$TMPD/err" ||
  fail "--state with --store: exit $rc: $(cat "$TMPD/err")"
rc=0; "$BRID" --root "$TMPD/root" --socket "$TMPD/x.sock" \
  --store "postgresql://brid:hunter2@/brid?host=/nowhere" 2>"$TMPD/err" || rc=$?
[ $rc != 0 ] && grep -q "holds a password; give it with store_password_file" "$TMPD/err" ||
  fail "inline password: exit $rc: $(cat "$TMPD/err")"
! grep -q hunter2 "$TMPD/err" || fail "the password is in the message: $(cat "$TMPD/err")"
printf 'hunter2\n' >"$TMPD/pw"
chmod 644 "$TMPD/pw"
printf '[daemon]\nroot = %s\nstore = postgresql://brid@/brid?host=/nowhere\nstore_password_file = %s\n' \
  "$TMPD/root" "$TMPD/pw" >"$TMPD/pw.conf"
rc=0; "$BRID" --config "$TMPD/pw.conf" --check-config >/dev/null 2>"$TMPD/err" || rc=$?
[ $rc = 78 ] && grep -q "store_password_file: $TMPD/pw is readable by every user" "$TMPD/err" ||
  fail "world-readable password file: exit $rc: $(cat "$TMPD/err")"
chmod 600 "$TMPD/pw"
"$BRID" --config "$TMPD/pw.conf" --check-config >"$TMPD/check.json" 2>"$TMPD/err" ||
  fail "store = in the file: $(cat "$TMPD/err")"
[ "$(jget 'd["store"], d["state"], d["store_password_file"]' <"$TMPD/check.json")" = \
  "('postgresql://brid@/brid?host=/nowhere', None, '$TMPD/pw')" ] || fail "check-config: $(cat "$TMPD/check.json")"
! grep -q hunter2 "$TMPD/check.json" || fail "--check-config shows the password"
echo "ok settings"

# ------------------------------------------------------------ a store that goes away
# a server of its own (halted below; others' tests share the run's), in a
# dir the postgres user can reach (TMPD is private)
pg_private
PG=$REPO/scripts/pg-server.sh
export BRI_TEST_STORE=pg # brid_start: --store, a database of BRI_TEST_PG
# the password file is sent and ignored (trust authentication)
printf '[daemon]\nroot = %s\nstore_password_file = %s\nmetrics_listen = 127.0.0.1:0\n' \
  "$TMPD/root" "$TMPD/pw" >"$TMPD/pg.conf"
brid_start pg --config "$TMPD/pg.conf"
st() { ctl status --json | jget "$1"; }
[ "$(st 'd["state"], d["store_status"]["backend"], d["store_status"]["up"]')" = "('running', 'PostgreSQL', True)" ] ||
  fail "status on PostgreSQL: $(ctl status --json)"
ctl status >"$TMPD/status" && grep -q "^store:   PostgreSQL postgresql://" "$TMPD/status" || fail "status text: $(cat "$TMPD/status")"
# (the metrics to a file first: grep -q ending the pipe early fails it under pipefail)
store_up() { ctl metrics >"$TMPD/metrics" && grep -qx "brid_store_up{backend=\"PostgreSQL\"} $1" "$TMPD/metrics"; }
store_up 1 || fail "brid_store_up: $(grep store_up "$TMPD/metrics")"
"$PG" halt || fail "halting PostgreSQL"
store_down() { [ "$(st 'd["store_status"]["up"]')" = False ]; }
running() { [ "$(st 'd["state"]')" = running ]; }
wait_until 20 store_down ||
  fail "status never said the store is down: $(ctl status --json)"
[ "$(st 'd["state"]')" = degraded ] || fail "not degraded: $(ctl status --json)"
ctl status >"$TMPD/status" && grep -q "^store:   PostgreSQL .*: UNREACHABLE since " "$TMPD/status" || fail "status text: $(cat "$TMPD/status")"
store_up 0 || fail "brid_store_up: $(grep store_up "$TMPD/metrics")"
"$PG" resume || fail "resuming PostgreSQL"
wait_until 40 running ||
  fail "brid did not reconnect: $(ctl status --json)"
brid_stop || fail "brid exited non-zero"
echo "ok reconnect"
pass
