# Helpers sourced by brid's integration tests (a real brid process, a real
# socket, real inotify, a real SQLite store). Builds on tests/interop/lib.sh
# (TMPD, fail, pass, skip, make_tables, lance_ops, lance_read, json_eq).
#
#   . "$(dirname "$0")/lib.sh"
#
# Variables: BRID, BRICTL (from scripts/run-tests.sh or $BRI_BUILD/bin).
# Functions:
#   brid_start NAME ARGS...   starts $BRID with --socket $TMPD/NAME.sock --state
#                             $TMPD/NAME.db plus ARGS, stderr in $TMPD/NAME.log; waits
#                             for "ready" (15 s, or 120 s under valgrind); sets
#                             BRID_PID and SOCK. BRID_PREFIX (e.g. "valgrind ...")
#                             is prepended to the command. BRI_TEST_STORE=pg: the
#                             store is a PostgreSQL database of the test server
#                             (BRI_TEST_PG) instead, one per NAME and test (brid_store
#                             prints its --store URI), created at the first start
#   brid_stop                 SIGTERM, waits for exit (30 s); returns brid's status
#   brid_wait                 waits for exit (30 s) without a signal
#   brid_kill9                kill -9, waits
#   ctl ARGS...               $BRICTL with --socket $SOCK appended where it belongs
#   jget EXPR                 evaluates a Python expression over JSON on stdin (d)
#   wait_until SECONDS CMD... retries CMD every 0.2 s until it succeeds
#   rpc_raw LINES...          sends raw lines on one connection, prints one reply
#                             line per line that expects one (python3)
#   log_has REGEX             brid's log (this instance) matches
#   notify_listen SOCK FILE   a systemd notify socket at SOCK (for NOTIFY_SOCKET):
#                             each datagram one line of FILE, newlines as |
#   s3_root_section URI SECRET_FILE
#                             brid.conf's [root URI] section for the test radosgw
#                             (AWS_* from scripts/s3-server.sh; the secret read from
#                             SECRET_FILE), polled every second
#   pg_private, pg_restart, pg_fresh_db NAME
#                             a PostgreSQL of the test's own (BRI_TEST_PG then names it),
#                             restarted; a fresh database there (its URI printed)
#   brid_http_addr            the address brid's HTTP listener bound (metrics_listen,
#                             port 0 resolved), from its log: 127.0.0.1:PORT, [::1]:PORT
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/../interop" && pwd)/lib.sh"

BRI_SOURCE_DIR=${BRI_SOURCE_DIR:-$REPO}
BRID=${BRID:-$BRI_BUILD/bin/brid}
[ -x "$BRID" ] || fail "no brid binary at $BRID (build it: make)"
[ -x "$BRICTL" ] || fail "no brictl binary at $BRICTL"
BRID_PID=
SOCK=
BRID_LOG=

_NOTIFY_LISTENERS=
_PG_PRIVATE=
_brid_cleanup() {
  [ -z "$_PG_PRIVATE" ] || "$REPO/scripts/pg-server.sh" stop >/dev/null 2>&1 || true
  # shellcheck disable=SC2086
  [ -z "$_NOTIFY_LISTENERS" ] || kill $_NOTIFY_LISTENERS 2>/dev/null || true
  if [ -n "$BRID_PID" ] && kill -0 "$BRID_PID" 2>/dev/null; then
    kill -KILL "$BRID_PID" 2>/dev/null || true
    wait "$BRID_PID" 2>/dev/null || true
  fi
  if [ "${KEEP_TMP:-0}" != 1 ] && [ -n "$BRID_LOG" ] && [ "${_TEST_FAILED:-0}" = 1 ]; then
    echo "--- brid log ($BRID_LOG) ---" >&2
    tail -40 "$BRID_LOG" >&2 || true
  fi
  _interop_cleanup
}
trap _brid_cleanup EXIT
fail() { _TEST_FAILED=1; echo "FAIL: $TEST_NAME: $*" >&2; exit 1; }

# brid_store NAME: the store argument brid_start gives instance NAME
brid_store() {
  if [ "${BRI_TEST_STORE:-}" = pg ]; then
    local db
    db=brid_$(printf '%s_%s' "$(basename "$TMPD")" "$1" | tr -c 'A-Za-z0-9_\n' _ | tr 'A-Z' 'a-z')
    echo "--store=$BRI_TEST_PG&dbname=$db"
  else
    echo "--state=$TMPD/$1.db"
  fi
}

# pg_private: a PostgreSQL server of the test's own, for tests that stop or
# restart it (the run's shared one serves the others): scripts/pg-server.sh
# with a state dir the postgres user can reach (TMPD is private), stopped
# at exit; BRI_TEST_PG is its maintenance database from then on.
pg_private() {
  export BRI_PG_DIR=${TMPDIR:-/tmp}/bri-pg-$(id -u)-$(basename "$TMPD")
  _PG_PRIVATE=1
  eval "$("$REPO/scripts/pg-server.sh" start)" || fail "a private PostgreSQL did not start"
}
# pg_restart: restarts pg_private's server
pg_restart() { "$REPO/scripts/pg-server.sh" restart >/dev/null || fail "PostgreSQL did not restart"; }
# pg_fresh_db NAME: creates database NAME on BRI_TEST_PG's server, prints its URI
pg_fresh_db() {
  psql "$BRI_TEST_PG" -qXc "CREATE DATABASE $1" >/dev/null || fail "creating database $1"
  echo "$BRI_TEST_PG&dbname=$1"
}

_pg_store_made() { # creates instance NAME's database once
  local db=${1##*dbname=}
  [ -e "$TMPD/.pg-$db" ] && return 0
  [ -n "${BRI_TEST_PG:-}" ] || fail "BRI_TEST_STORE=pg needs BRI_TEST_PG (scripts/pg-server.sh)"
  pg_fresh_db "$db" >/dev/null
  : >"$TMPD/.pg-$db"
}

brid_start() {
  local name=$1; shift
  local store; store=$(brid_store "$name")
  [ "${BRI_TEST_STORE:-}" != pg ] || _pg_store_made "$store"
  SOCK=$TMPD/$name.sock
  BRID_LOG=$TMPD/$name.log
  local limit=15 from=1
  [ -n "${BRID_PREFIX:-}" ] && limit=120
  [ -f "$BRID_LOG" ] && from=$(($(wc -l <"$BRID_LOG") + 1))
  # shellcheck disable=SC2086
  ${BRID_PREFIX:-} "$BRID" --socket "$SOCK" "$store" "$@" 2>>"$BRID_LOG" &
  BRID_PID=$!
  local i=0
  while ! tail -n +"$from" "$BRID_LOG" 2>/dev/null | grep -q "ready:"; do
    kill -0 "$BRID_PID" 2>/dev/null || { cat "$BRID_LOG" >&2; fail "brid exited during start-up"; }
    sleep 0.1
    i=$((i + 1))
    [ $i -lt $((limit * 10)) ] || fail "brid not ready after ${limit}s"
  done
}

brid_stop() {
  [ -n "$BRID_PID" ] || return 0
  kill -TERM "$BRID_PID" 2>/dev/null || true
  brid_wait
}

# brid_wait: waits (30 s) for brid to exit by itself; returns its status
brid_wait() {
  local rc=0 i=0
  while kill -0 "$BRID_PID" 2>/dev/null; do
    sleep 0.1
    i=$((i + 1))
    [ $i -lt 300 ] || fail "brid did not stop within 30s of SIGTERM"
  done
  wait "$BRID_PID" || rc=$?
  BRID_PID=
  return $rc
}

brid_kill9() {
  kill -KILL "$BRID_PID"
  wait "$BRID_PID" 2>/dev/null || true
  BRID_PID=
}

ctl() { "$BRICTL" "$@" --socket "$SOCK"; }

jget() { python3 -c 'import json,sys
d=json.load(sys.stdin)
v=eval(sys.argv[1], {"d": d, "len": len, "any": any, "all": all, "sorted": sorted})
print(json.dumps(v) if isinstance(v, (dict, list)) else v)' "$1"; }

wait_until() {
  local secs=$1; shift
  local end=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $end ] || return 1
    sleep 0.2
  done
}

log_has() { grep -Eq -- "$1" "$BRID_LOG"; }

# table_shape_is SHAPE TABLE: brid's view of TABLE, "(fragments, polled,
# watching)", is SHAPE
table_shape_is() {
  [ "$(ctl tables --json | jget '[(t["fragments"], t["polled"], t["watching"]) for t in d["tables"] if t["root"] == "'"$2"'"][0]')" = "$1" ]
}

# last_held_back TABLE: why the newest succeeded compaction of TABLE held
# fragments back (its report's plan.held_back), one reason a line
last_held_back() {
  local j; j=$(ctl jobs --kind compact --state succeeded --table "$1" --json | jget 'd["jobs"][0]["id"]')
  ctl job "$j" --json | jget '"\n".join(h["reason"] for h in d["result"]["plan"]["held_back"])'
}

brid_http_addr() {
  sed -n 's|.*http: serving /metrics, /healthz and /readyz on http://\(.*\)$|\1|p' "$BRID_LOG" | tail -1
}

# rpc_raw LINE...: each argument is sent as is followed by "\n" (one write);
# then one reply line is read per argument that is not a notification (an
# object without "id" that parses); prints the replies.
rpc_raw() {
  python3 - "$SOCK" "$@" <<'EOF'
import json, socket, sys
path, lines = sys.argv[1], sys.argv[2:]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(path)
s.sendall(("".join(l + "\n" for l in lines)).encode())
want = 0
for l in lines:
    try:
        o = json.loads(l)
        if isinstance(o, dict) and "id" not in o and o.get("jsonrpc") == "2.0" and isinstance(o.get("method"), str):
            continue
    except Exception:
        pass
    want += 1
f = s.makefile("rb")
for _ in range(want):
    line = f.readline()
    if not line:
        print("EOF")
        break
    sys.stdout.write(line.decode())
EOF
}

notify_listen() {
  python3 - "$1" "$2" <<'EOF' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a", buffering=1) as f:
    while True:
        m = s.recv(4096).decode()
        f.write(m.replace("\n", "|") + "\n")
EOF
  _NOTIFY_LISTENERS+=" $!"
  wait_until 15 test -S "$1" || fail "notify listener did not start"
}

s3_root_section() { # s3_root_section URI SECRET_FILE
  cat <<EOF
[root $1]
endpoint = $AWS_ENDPOINT_URL
region = ${AWS_REGION:-us-east-1}
addressing = path
access_key_id = $AWS_ACCESS_KEY_ID
secret_access_key_file = $2
poll_interval = 1s
EOF
}
