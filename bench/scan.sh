#!/usr/bin/env bash
# Read throughput of brid on big generated tables: decode MB/s per column and in total
# (bench/scan_bench.c: the fragment reader alone, then the canonical hasher), the wall
# time of a whole `brictl scan` next to LanceDB reading and hashing the same table
# (tests/interop/lance_read.mjs), and Blob v2 payload MB/s (resolve + stream + SHA-256)
# on a blob table.
#
#   bench/scan.sh [OUT_DIR]        tables are generated into OUT_DIR (kept) or a temp dir
#
# Environment: BUILD [build], PLAIN_ROWS per fragment [250000] x PLAIN_FRAGS [4],
# ENC_ROWS [200000], BLOB_BATCHES [50:1:5M,50:10:200K], REPEAT [3], SKIP_LANCE=1 to skip
# the LanceDB timings.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$REPO/build}
export ORACLE_NODE_DIR=${ORACLE_NODE_DIR:-$REPO/.deps/node} LANCEDB_LOG=error
OUT=${1:-$(mktemp -d "${TMPDIR:-/tmp}/brid-bench.XXXXXX")}
PLAIN_ROWS=${PLAIN_ROWS:-250000} PLAIN_FRAGS=${PLAIN_FRAGS:-4} ENC_ROWS=${ENC_ROWS:-200000}
REPEAT=${REPEAT:-3} BLOB_BATCHES=${BLOB_BATCHES:-50:1:5M,50:10:200K}

[ -f "$BUILD/libbri.a" ] || { echo "no $BUILD/libbri.a: run make first" >&2; exit 1; }
BIN=$BUILD/bench/scan_bench
mkdir -p "$(dirname "$BIN")"
PKGS="libprotobuf-c jansson libzstd liblz4 libcrypto libcurl expat"
# shellcheck disable=SC2046
cc -std=c11 -D_GNU_SOURCE -O2 -I"$REPO/lib" -I"$BUILD/gen" $(pkg-config --cflags $PKGS) \
  -o "$BIN" "$REPO/bench/scan_bench.c" "$BUILD/libbri.a" $(pkg-config --libs $PKGS) -lroaring -lm

if [ ! -d "$OUT/plain.lance" ] || [ ! -d "$OUT/encodings.lance" ]; then
  echo "generating tables in $OUT (plain ${PLAIN_FRAGS}x$PLAIN_ROWS rows, encodings $ENC_ROWS rows)"
  node "$REPO/tests/interop/lance_make.mjs" --out "$OUT" --tables plain,encodings \
    --fragments "$PLAIN_FRAGS" --rows "$PLAIN_ROWS" --plain-delete "" \
    --enc-rows "$ENC_ROWS" >/dev/null
fi
if [ ! -d "$OUT/blobs.lance" ]; then
  echo "generating blobs in $OUT ($BLOB_BATCHES)"
  node "$REPO/tests/interop/lance_make.mjs" --out "$OUT" --tables blobs \
    --blob-batches "$BLOB_BATCHES" --blob-delete "" >/dev/null
fi

BRICTL=${BRICTL:-$BUILD/bin/brictl}
for t in plain encodings; do
  echo
  "$BIN" "$OUT/$t.lance" --repeat "$REPEAT"
  s=$(date +%s.%N)
  "$BRICTL" scan "$OUT/$t.lance" --key "" >/dev/null
  e=$(date +%s.%N)
  "$BRICTL" scan "$OUT/$t.lance" >/dev/null
  k=$(date +%s.%N)
  printf 'brictl scan (scan order) %.2f s, sorted by id %.2f s\n' "$(echo "$e - $s" | bc)" "$(echo "$k - $e" | bc)"
  if [ "${SKIP_LANCE:-0}" != 1 ]; then
    s=$(date +%s.%N)
    node "$REPO/tests/interop/lance_read.mjs" "$OUT/$t.lance" --key "" >/dev/null
    e=$(date +%s.%N)
    printf 'LanceDB read + hash (lance_read.mjs, scan order) %.2f s\n' "$(echo "$e - $s" | bc)"
  fi
done
echo
t=$OUT/blobs.lance
"$BRICTL" scan "$t" >/dev/null  # warm the page cache
best=999
for _ in $(seq "$REPEAT"); do
  s=$(date +%s.%N); "$BRICTL" scan "$t" --json >"$OUT/blobs.scan.json"; e=$(date +%s.%N)
  d=$(echo "$e - $s" | bc); if (( $(echo "$d < $best" | bc) )); then best=$d; fi
done
bytes=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).columns.blob.payloadBytes)' "$OUT/blobs.scan.json")
printf 'blobs: brictl scan %.2f s for %.1f MB of payload: %.0f MB/s\n' "$best" \
  "$(echo "$bytes / 1000000" | bc -l)" "$(echo "$bytes / 1000000 / $best" | bc -l)"
if [ "${SKIP_LANCE:-0}" != 1 ]; then
  s=$(date +%s.%N)
  node "$REPO/tests/interop/lance_read.mjs" "$t" >/dev/null
  e=$(date +%s.%N)
  printf 'blobs: LanceDB read + fetchBlobs + hash %.2f s\n' "$(echo "$e - $s" | bc)"
fi
[ $# -ge 1 ] || rm -rf "$OUT"
