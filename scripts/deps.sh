#!/usr/bin/env bash
# Installs everything brid's build and tests need on Debian 12, then the
# LanceDB oracle (npm) into .deps/node. Idempotent: when everything is
# present it only checks, in well under a second.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PKGS=(build-essential pkg-config clang libclang-rt-14-dev
  libuv1-dev libprotobuf-c-dev protobuf-c-compiler libsqlite3-dev sqlite3
  libjansson-dev check libzstd-dev liblz4-dev libroaring-dev libsystemd-dev
  libinih-dev libssl-dev valgrind systemd python3 groff-base
  libcurl4-openssl-dev libexpat1-dev radosgw ceph-mon ceph-osd
  libmicrohttpd-dev dpkg-dev debhelper lintian mmdebstrap systemd-container)
LANCEDB_VERSION=0.39.0
ARROW_VERSION=18.1.0
NODE_DIR=.deps/node

missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

have_ver() { node -p "require('./$NODE_DIR/node_modules/$1/package.json').version" 2>/dev/null || true; }
if [ "$(have_ver @lancedb/lancedb)" != "$LANCEDB_VERSION" ] || [ "$(have_ver apache-arrow)" != "$ARROW_VERSION" ]; then
  echo "deps: installing @lancedb/lancedb@$LANCEDB_VERSION apache-arrow@$ARROW_VERSION into $NODE_DIR"
  mkdir -p "$NODE_DIR"
  [ -f "$NODE_DIR/package.json" ] || echo '{"name":"brid-oracle","private":true}' > "$NODE_DIR/package.json"
  # npm warns that lancedb wants node >= 22 (EBADENGINE); it runs on node 20.
  (cd "$NODE_DIR" && npm install --no-audit --no-fund --loglevel=error -E \
      "@lancedb/lancedb@$LANCEDB_VERSION" "apache-arrow@$ARROW_VERSION" >/dev/null)
fi
