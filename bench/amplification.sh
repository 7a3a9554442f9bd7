#!/usr/bin/env bash
# bench/amplification.sh: what a copying compaction writes when it runs after
# every round of appends (BUSY): brid's copy strategy, with its built-in
# defaults (target_fragment_bytes 1G, size tiers), against LanceDB's own
# optimize(), on identical tables, locally and on S3 (the test radosgw of
# scripts/s3-server.sh, one started here).
#
#   bench/amplification.sh [ROUNDS (20)] [APPENDS:ROWS:SIZE (4:4:256K)]
#
# Four tables start identical (lance_make.mjs: the blobs table, one round of
# APPENDS fragments of ROWS rows, a Blob v2 value of SIZE bytes each, no
# deletions): brid's and LanceDB's, locally (under $WORK) and on S3. Each
# round LanceDB appends the same rows to all four (bench/lance_blob_rounds.mjs),
# then brictl compact --strategy copy runs on brid's two and optimize() on
# LanceDB's two (tests/interop/lance_optimize.mjs). What a compaction wrote
# is what its table gained or rewrote: the files (objects on S3) that are
# new or changed after it, every kind (data files, sidecars, manifests,
# transactions), measured the same way for both. Reported per table: the
# bytes the compactions wrote, divided by the payload bytes appended, and
# the fragments at the end; the same for brid's own reports (data files +
# payload copied). Checks: the four tables read the same in LanceDB at the
# end. Results in $WORK/results.json (WORK: a temp dir under /var/tmp,
# removed at the end unless KEEP=1).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-20}
SPEC=${2:-4:4:256K}
IFS=: read -r APPENDS ROWS SIZE <<<"$SPEC"
BUILD=${BUILD:-build}
BRICTL=$PWD/$BUILD/bin/brictl
export ORACLE_NODE_DIR=${ORACLE_NODE_DIR:-$PWD/.deps/node} LANCEDB_LOG=error
[ -x "$BRICTL" ] || { echo "build first: make" >&2; exit 1; }
WORK=${WORK:-$(mktemp -d /var/tmp/brid-amplification.XXXXXX)}
export BRI_S3_DIR=$WORK/server
cleanup() {
  scripts/s3-server.sh stop >/dev/null 2>&1 || true
  [ "${KEEP:-0}" = 1 ] || rm -rf "$WORK"
}
trap cleanup EXIT
eval "$(scripts/s3-server.sh start)"
P=s3://$BRI_S3_BUCKET/amplification-$$
declare -A TABLE=([brid]=$WORK/brid/blobs.lance [lance]=$WORK/lance/blobs.lance
                  [brid_s3]=$P/brid/blobs.lance [lance_s3]=$P/lance/blobs.lance)
SIDES="brid lance brid_s3 lance_s3"

# listing TABLE: "name size etag-or-mtime" for every file or object below it
listing() {
  case $1 in
    s3://*) python3 tests/s3/objects.py ls "$1" ;;
    *) find "$1" -type f -printf '%P %s %T@\n' ;;
  esac
}
# written BEFORE AFTER: the bytes of what is new or changed in AFTER
written() {
  python3 - "$1" "$2" <<'PY'
import sys
def load(f):
    return {p[0]: (int(p[1]), p[2]) for p in (l.split() for l in open(f)) if len(p) == 3}
a, b = load(sys.argv[1]), load(sys.argv[2])
print(sum(size for k, (size, tag) in b.items() if a.get(k) != (size, tag)))
PY
}

echo "4 tables of $APPENDS fragments x $ROWS rows x $SIZE, then $ROUNDS rounds of the same appends, a compaction after each" >&2
for s in $SIDES; do
  out=$(dirname "${TABLE[$s]}")
  node tests/interop/lance_make.mjs --out "$out" --tables blobs --blob-batches "$APPENDS:$ROWS:$SIZE" --blob-delete "" >/dev/null
done
declare -A BYTES REPORT SECS
for s in $SIDES; do BYTES[$s]=0 REPORT[$s]=0 SECS[$s]=0; done
appended=0
for r in $(seq 0 $((ROUNDS - 1))); do
  if [ "$r" -gt 0 ]; then
    node bench/lance_blob_rounds.mjs ${TABLE[brid]} ${TABLE[lance]} ${TABLE[brid_s3]} ${TABLE[lance_s3]} \
      --round "$r" --appends "$APPENDS" --rows "$ROWS" --size "$SIZE" >/dev/null
  fi
  appended=$((appended + APPENDS * ROWS * $(node -e 'import("./tests/interop/lance_common.mjs").then(m=>console.log(m.parseSize(process.argv[1])))' "$SIZE")))
  for s in $SIDES; do
    t=${TABLE[$s]}
    listing "$t" >"$WORK/before"
    t0=$(date +%s%N)
    if [[ $s == brid* ]]; then
      "$BRICTL" compact "$t" --strategy copy --json >"$WORK/report.json"
      REPORT[$s]=$((REPORT[$s] + $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["data_bytes_written"] + r["payload_bytes_copied"])' "$WORK/report.json")))
    else
      node tests/interop/lance_optimize.mjs "$t" --json >/dev/null
    fi
    SECS[$s]=$((SECS[$s] + ($(date +%s%N) - t0) / 1000000))
    listing "$t" >"$WORK/after"
    BYTES[$s]=$((BYTES[$s] + $(written "$WORK/before" "$WORK/after")))
  done
  printf 'round %d: %s\n' "$r" "$(for s in $SIDES; do printf '%s %d MB  ' "$s" $((BYTES[$s] >> 20)); done)" >&2
done

# the four tables read the same in LanceDB, and their fragments
for s in $SIDES; do
  node tests/interop/lance_read.mjs "${TABLE[$s]}" --json >"$WORK/read-$s.json"
done
node - "$WORK" <<'JS'
const fs = require("fs");
const w = process.argv[2];
const strip = (o) => { const c = JSON.parse(fs.readFileSync(`${w}/read-${o}.json`)); return JSON.stringify([c.rows, c.columns]); };
for (const s of ["lance", "brid_s3", "lance_s3"])
  if (strip(s) !== strip("brid")) { console.error(`${s} reads other values than brid`); process.exit(1); }
JS
frags() { "$BRICTL" inspect "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["totals"]["fragments"])'; }
{
  printf '{"rounds": %d, "spec": "%s", "payload_appended": %d, "tables": {' "$ROUNDS" "$SPEC" "$appended"
  sep=
  for s in $SIDES; do
    printf '%s"%s": {"bytes_written": %d, "report_bytes": %d, "ms": %d, "fragments": %d}' "$sep" "$s" "${BYTES[$s]}" \
      "${REPORT[$s]}" "${SECS[$s]}" "$(frags "${TABLE[$s]}")"
    sep=", "
  done
  printf '}}\n'
} >"$WORK/results.json"
python3 - "$WORK/results.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
a = r["payload_appended"]
print(f"{r['rounds']} rounds of {r['spec']} (APPENDS:ROWS:SIZE), {a / 2**20:.0f} MiB of payload appended, a compaction after each")
print(f"{'':28s} {'written':>10s} {'/ appended':>10s} {'fragments':>9s} {'time':>8s}")
names = {"brid": "brid copy, local", "lance": "LanceDB optimize(), local", "brid_s3": "brid copy, S3",
         "lance_s3": "LanceDB optimize(), S3"}
for k, t in r["tables"].items():
    print(f"{names[k]:28s} {t['bytes_written'] / 2**20:8.0f} MiB {t['bytes_written'] / a:10.2f} {t['fragments']:9d} {t['ms'] / 1000:7.1f}s")
for k in ("brid", "brid_s3"):
    t = r["tables"][k]
    print(f"{names[k]}: its reports (data files + payload copied) {t['report_bytes'] / a:.2f} x the payload appended")
PY
