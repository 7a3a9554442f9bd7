#!/usr/bin/env bash
# Installs what brid's build and tests need on Debian 12 with apt, then the
# LanceDB oracle (npm) into .deps/node, Azurite (npm, the Azure Blob
# emulator of the Azure tests) into .deps/azurite, and current Lance for
# Python (pylance, and LanceDB whose native core is the Lance before it) into
# a venv of Debian's python3 in .deps/py (tests/interop/lance_py.py).
# Idempotent: when everything is present it only checks, in well under a second.
#   scripts/deps.sh          everything make check needs
#   scripts/deps.sh build    only what building brid and brictl needs (make demo)
set -euo pipefail
cd "$(dirname "$0")/.."
WHAT=${1:-test}

# building brid, brictl and libbri (and python3 and coreutils for make demo)
BUILD_PKGS=(build-essential pkg-config
  libuv1-dev libprotobuf-c-dev protobuf-c-compiler libsqlite3-dev libpq-dev
  libjansson-dev libzstd-dev liblz4-dev libroaring-dev libsystemd-dev
  libssl-dev libcurl4-openssl-dev libexpat1-dev libmicrohttpd-dev python3)
# the tests: Check, the fuzzers' clang, valgrind, systemd-analyze, the man
# pages' groff, sqlite3's shell, the S3 server (radosgw), promtool (prometheus),
# make deb and its test under real systemd (debhelper, lintian, mmdebstrap,
# systemd-nspawn), xxd for the Azure server script's signed requests, boto3
# for the S3 tests' own object tool (tests/s3/objects.py: the tests run
# Debian's python3, scripts/run-tests.sh), python3-venv for the venv of
# pylance and LanceDB below, jq for the benches' reports
TEST_PKGS=(check clang libclang-rt-14-dev sqlite3 valgrind systemd groff-base
  radosgw ceph-mon ceph-osd prometheus postgresql
  dpkg-dev debhelper lintian mmdebstrap systemd-container xxd python3-boto3
  python3-venv jq)
APT_PKGS=("${BUILD_PKGS[@]}")
[ "$WHAT" = build ] || APT_PKGS+=("${TEST_PKGS[@]}")
LANCEDB_VERSION=0.39.0
ARROW_VERSION=18.1.0
NODE_DIR=.deps/node
AZURITE_VERSION=3.37.0
AZURITE_DIR=.deps/azurite
# pylance 14.0.3 is Lance 14; lancedb 0.40.0 bundles Lance 13.0.0 (pyarrow: the
# version both were tested with here, pinned with them)
PY_DIR=.deps/py
PY_PKGS=(pylance==14.0.3 lancedb==0.40.0 pyarrow==26.0.1)

missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "$WHAT" != build ]; then
  command -v node >/dev/null || missing+=(nodejs)
  command -v npm >/dev/null || missing+=(npm)
fi
if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

[ "$WHAT" != build ] || exit 0
have_ver() { node -p "require('./$NODE_DIR/node_modules/$1/package.json').version" 2>/dev/null || true; }
if [ "$(have_ver @lancedb/lancedb)" != "$LANCEDB_VERSION" ] || [ "$(have_ver apache-arrow)" != "$ARROW_VERSION" ]; then
  echo "deps: installing @lancedb/lancedb@$LANCEDB_VERSION apache-arrow@$ARROW_VERSION into $NODE_DIR"
  mkdir -p "$NODE_DIR"
  [ -f "$NODE_DIR/package.json" ] || echo '{"name":"brid-oracle","private":true}' > "$NODE_DIR/package.json"
  # npm warns that lancedb wants node >= 22 (EBADENGINE); it runs on node 20.
  (cd "$NODE_DIR" && npm install --no-audit --no-fund --loglevel=error -E \
      "@lancedb/lancedb@$LANCEDB_VERSION" "apache-arrow@$ARROW_VERSION" >/dev/null)
fi
if [ "$(node -p "require('./$AZURITE_DIR/node_modules/azurite/package.json').version" 2>/dev/null || true)" != "$AZURITE_VERSION" ]; then
  echo "deps: installing azurite@$AZURITE_VERSION into $AZURITE_DIR"
  mkdir -p "$AZURITE_DIR"
  [ -f "$AZURITE_DIR/package.json" ] || echo '{"name":"brid-azurite","private":true}' > "$AZURITE_DIR/package.json"
  (cd "$AZURITE_DIR" && npm install --no-audit --no-fund --loglevel=error -E "azurite@$AZURITE_VERSION" >/dev/null)
fi
# the venv: Debian's python3 (not a version manager's), the pinned versions
py_have() {
  [ -x "$PY_DIR/bin/python" ] && grep -qx 'home = /usr/bin' "$PY_DIR/pyvenv.cfg" 2>/dev/null &&
    "$PY_DIR/bin/python" - "${PY_PKGS[@]}" 2>/dev/null <<'EOF'
import sys
from importlib.metadata import version
sys.exit(any(version(p.split("==")[0]) != p.split("==")[1] for p in sys.argv[1:]))
EOF
}
if ! py_have; then
  echo "deps: installing ${PY_PKGS[*]} into $PY_DIR"
  if ! grep -qx 'home = /usr/bin' "$PY_DIR/pyvenv.cfg" 2>/dev/null; then
    rm -rf "$PY_DIR"
    /usr/bin/python3 -m venv "$PY_DIR"
  fi
  "$PY_DIR/bin/pip" install --quiet --disable-pip-version-check "${PY_PKGS[@]}"
fi
