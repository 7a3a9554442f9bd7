#!/usr/bin/env bash
# A throwaway Azure Blob Storage server for brid's tests: Azurite, Microsoft's
# emulator (npm package azurite, installed into .deps/azurite by
# scripts/deps.sh), its blob service alone on 127.0.0.1, with one container.
# Idempotent: `start` on a running server only prints its environment.
#
#   scripts/azurite-server.sh start    start (or find running), print env lines
#   scripts/azurite-server.sh env      print the env lines of the running server
#   scripts/azurite-server.sh status   exit 0 when the service answers
#   scripts/azurite-server.sh stop     stop it, remove the state dir
#
# The env lines (eval "$(scripts/azurite-server.sh start)") are what LanceDB
# (object_store) and brid take: AZURE_STORAGE_ACCOUNT_NAME,
# AZURE_STORAGE_ACCOUNT_KEY (the emulator's well-known account and key),
# AZURE_STORAGE_ENDPOINT (http://127.0.0.1:PORT/devstoreaccount1: path-style,
# the account in the path), AZURE_STORAGE_USE_EMULATOR=true,
# AZURE_STORAGE_ALLOW_HTTP=true, AZURITE_BLOB_STORAGE_URL (where object_store's
# emulator switch sends requests: without it, 127.0.0.1:10000), plus
# BRI_AZ_CONTAINER (the container made at start).
#
# Settings (environment): BRI_AZ_DIR state dir [/tmp/bri-az-$UID],
# BRI_AZ_PORT blob port [a free port the kernel picks at start, kept in the
# state dir's port file for env, status and stop].
set -euo pipefail
cd "$(dirname "$0")/.."

D=${BRI_AZ_DIR:-${TMPDIR:-/tmp}/bri-az-$(id -u)}
PORT=${BRI_AZ_PORT:-}
[ -n "$PORT" ] || [ ! -f "$D/port" ] || read -r PORT <"$D/port"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
ACCOUNT=devstoreaccount1
# Azurite's documented development key (public, the same for every emulator)
KEY='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
CONTAINER=brid
BIN=.deps/azurite/node_modules/.bin/azurite-blob
endpoint() { echo "http://127.0.0.1:${PORT:-0}/$ACCOUNT"; }

print_env() {
  cat <<EOT
export AZURE_STORAGE_ACCOUNT_NAME=$ACCOUNT
export AZURE_STORAGE_ACCOUNT_KEY=$KEY
export AZURE_STORAGE_ENDPOINT=$(endpoint)
export AZURE_STORAGE_USE_EMULATOR=true
export AZURE_STORAGE_ALLOW_HTTP=true
export AZURITE_BLOB_STORAGE_URL=http://127.0.0.1:${PORT:-0}
export BRI_AZ_CONTAINER=$CONTAINER
EOT
}

# A Shared Key signed request on the container (METHOD, then query lines
# "name:value" of the canonicalized resource, in order).
signed() {
  local method=$1 date sts sig; shift
  date=$(LC_ALL=C TZ=GMT date '+%a, %d %b %Y %H:%M:%S GMT')
  sts=$(printf '%s\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:%s\nx-ms-version:2021-08-06\n/%s/%s/%s\nrestype:container' \
    "$method" "$date" "$ACCOUNT" "$ACCOUNT" "$CONTAINER")
  sig=$(printf '%s' "$sts" | openssl dgst -sha256 -mac HMAC -macopt "hexkey:$(printf '%s' "$KEY" | base64 -d | xxd -p -c 256)" -binary | base64 -w0)
  curl -sf -o /dev/null -m 5 -X "$method" -H "x-ms-date: $date" -H "x-ms-version: 2021-08-06" \
    -H "Authorization: SharedKey $ACCOUNT:$sig" -H "Content-Length: 0" \
    "$(endpoint)/$CONTAINER?restype=container"
}

# The service answers and our container exists (Get Container Properties: 200).
up() { [ -n "$PORT" ] && signed GET 2>/dev/null; }

stop() {
  if [ -f "$D/pid" ]; then
    local pid; pid=$(cat "$D/pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -rf "$D"
}

die() {
  echo "azurite-server: $*" >&2
  tail -n 20 "$D/log" >&2 2>/dev/null || true
  exit 1
}

start() {
  if up; then print_env; return 0; fi
  [ -x "$BIN" ] || die "$BIN is missing (run scripts/deps.sh)"
  command -v xxd >/dev/null || die "xxd is not installed (run scripts/deps.sh)"
  stop
  mkdir -p "$D/data"
  PORT=${BRI_AZ_PORT:-$(free_port)} # a gone server's port may be taken by now
  echo "$PORT" >"$D/port"
  setsid "$BIN" --blobHost 127.0.0.1 --blobPort "$PORT" --location "$D/data" --silent \
    --skipApiVersionCheck --loose >"$D/log" 2>&1 </dev/null &
  echo $! >"$D/pid"
  local ok=0
  for _ in $(seq 100); do
    curl -s -o /dev/null -m 1 "$(endpoint)/" && { ok=1; break; }
    kill -0 "$(cat "$D/pid")" 2>/dev/null || break
    sleep 0.1
  done
  [ "$ok" = 1 ] || die "azurite does not answer on $(endpoint)"
  signed PUT || die "creating container $CONTAINER failed"
  up || die "container $CONTAINER is not reachable"
  print_env
}

case "${1:-}" in
  start) start ;;
  env) up || { echo "azurite-server: not running on $(endpoint)" >&2; exit 1; }; print_env ;;
  status) up ;;
  stop) stop ;;
  *) echo "usage: $0 start|env|status|stop" >&2; exit 2 ;;
esac
