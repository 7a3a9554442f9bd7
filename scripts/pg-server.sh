#!/usr/bin/env bash
# A throwaway PostgreSQL server for brid's tests (the job store's PostgreSQL
# backend): a fresh cluster (initdb, trust authentication) listening on a
# Unix socket only, in a state dir of its own. Idempotent: `start` on a
# running server only prints its environment.
#
#   scripts/pg-server.sh start    start (or find running), print env lines
#   scripts/pg-server.sh env      print the env lines of the running server
#   scripts/pg-server.sh uri      print the maintenance database's URI
#   scripts/pg-server.sh status   exit 0 when the server answers
#   scripts/pg-server.sh restart  restart the server (tests of reconnection)
#   scripts/pg-server.sh halt     stop the server, keeping its data and port
#   scripts/pg-server.sh resume   start a halted server again
#   scripts/pg-server.sh stop     stop it, remove the state dir
#
# The env line (eval "$(scripts/pg-server.sh start)") is BRI_TEST_PG, the
# libpq URI of the maintenance database "postgres" as superuser postgres:
# postgresql://postgres@/postgres?host=SOCKDIR&port=PORT. Tests create a
# database of their own from it (CREATE DATABASE) so runs never collide.
#
# PostgreSQL refuses to run as root: as root, the server runs as the
# postgres user (the postgresql package's), which owns the data and socket
# dirs; the state dir is 0755 so it can reach them.
#
# Settings (environment): BRI_PG_DIR state dir [/tmp/bri-pg-$UID],
# BRI_PG_PORT port [a free port picked at start, kept in the state dir's
# port file; it names the socket file], BRI_PG_BIN PostgreSQL's programs
# [/usr/lib/postgresql/15/bin, else the newest installed].
set -euo pipefail
cd "$(dirname "$0")/.."

D=${BRI_PG_DIR:-${TMPDIR:-/tmp}/bri-pg-$(id -u)}
PORT=${BRI_PG_PORT:-}
[ -n "$PORT" ] || [ ! -f "$D/port" ] || read -r PORT <"$D/port"
BIN=${BRI_PG_BIN:-/usr/lib/postgresql/15/bin}
if [ ! -x "$BIN/pg_ctl" ]; then
  BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
fi
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
uri() { echo "postgresql://postgres@/postgres?host=$D/sock&port=${PORT:-0}"; }
print_env() { echo "export BRI_TEST_PG='$(uri)'"; }

as_owner() { # runs a PostgreSQL program as the server's owner
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

up() { [ -n "$PORT" ] && [ -d "$D/data" ] && "$BIN/pg_isready" -q -h "$D/sock" -p "$PORT" 2>/dev/null; }

stop() {
  if [ -d "$D/data" ] && [ -x "$BIN/pg_ctl" ]; then
    as_owner "$BIN/pg_ctl" -D "$D/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$D"
}

die() {
  echo "pg-server: $*" >&2
  tail -n 20 "$D/log" >&2 2>/dev/null || true
  exit 1
}

server_start() {
  as_owner "$BIN/pg_ctl" -D "$D/data" -l "$D/log" -w -t 30 \
    -o "-c listen_addresses= -c unix_socket_directories=$D/sock -p $PORT -c fsync=off" start \
    >/dev/null || die "pg_ctl start failed"
}

start() {
  if up; then print_env; return 0; fi
  [ -x "$BIN/initdb" ] || die "PostgreSQL's programs are missing in $BIN (run scripts/deps.sh)"
  stop
  mkdir -p "$D/data" "$D/sock"
  chmod 0755 "$D"
  [ "$(id -u)" != 0 ] || chown postgres: "$D/data" "$D/sock"
  : >"$D/log"
  [ "$(id -u)" != 0 ] || chown postgres: "$D/log"
  PORT=${BRI_PG_PORT:-$(free_port)}
  echo "$PORT" >"$D/port"
  as_owner "$BIN/initdb" -D "$D/data" -U postgres --auth=trust -E UTF8 --no-sync \
    >>"$D/log" 2>&1 || die "initdb failed"
  server_start
  up || die "the server does not answer on $D/sock port $PORT"
  print_env
}

case "${1:-}" in
  start) start ;;
  env) up || { echo "pg-server: not running ($D)" >&2; exit 1; }; print_env ;;
  uri) up || { echo "pg-server: not running ($D)" >&2; exit 1; }; uri ;;
  status) up ;;
  restart)
    up || die "not running"
    as_owner "$BIN/pg_ctl" -D "$D/data" -m fast -w stop >/dev/null || die "pg_ctl stop failed"
    server_start ;;
  halt)
    up || die "not running"
    as_owner "$BIN/pg_ctl" -D "$D/data" -m fast -w stop >/dev/null || die "pg_ctl stop failed" ;;
  resume)
    [ -n "$PORT" ] && [ -d "$D/data" ] || die "no halted server in $D"
    up || server_start ;;
  stop) stop ;;
  *) echo "usage: $0 start|env|uri|status|restart|halt|resume|stop" >&2; exit 2 ;;
esac
