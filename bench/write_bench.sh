#!/usr/bin/env bash
# Builds and runs bench/write_bench.c (writer encode, decode+re-encode and
# page-copy throughput) against an already built libbri.
#   bench/write_bench.sh [BUILD=build] [DIR=/tmp] [ROWS=2000000] [2.1|2.2]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
DIR=${2:-${TMPDIR:-/tmp}}
ROWS=${3:-2000000}
VER=${4:-2.2}
make --no-print-directory BUILD="$BUILD" "$BUILD/libbri.a" >/dev/null
PKGS="libprotobuf-c jansson libzstd liblz4 libcrypto libcurl expat"
cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -Wshadow -Wvla -Ilib -I"$BUILD/gen" \
  $(pkg-config --cflags $PKGS) bench/write_bench.c -o "$BUILD/write_bench" \
  "$BUILD/libbri.a" $(pkg-config --libs $PKGS) -lsqlite3 -lroaring -lm
"$BUILD/write_bench" "$DIR" "$ROWS" "$VER"
