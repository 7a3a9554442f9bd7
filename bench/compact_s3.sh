#!/usr/bin/env bash
# bench/compact_s3.sh: brictl compact (bri, copy) against LanceDB's own
# optimize() on identical tables on S3 (the test radosgw of
# scripts/s3-server.sh, one started here for each run), or with
# BENCH_STORE=azure on Azure Blob Storage (Azurite, scripts/azurite-server.sh:
# bench/compact_azure.sh).
#
#   bench/compact_s3.sh [BLOB_BATCHES]     (default 200:1:5M,200:10:200K:
#                                          400 fragments, 1.16 GB of payload,
#                                          issue MANY's bri <= 1/50 of optimize())
#   bench/compact_s3.sh 400:4:100K         400 fragments of four 100 KB blobs
#                                          (packed), ~160 MB: the request floor
#
# BLOB_BATCHES is lance_make.mjs's --blob-batches (APPENDS:ROWS:SIZE, one
# fragment per append). BLOB_DELETE (env) is its --blob-delete, the rows
# deleted after the appends [lance_make's: id % 5 = 2 OR id = 21, which
# gives most fragments a deletion file]; BLOB_DELETE= (empty) deletes none.
#
# Three tables are written by LanceDB with the same seed (same values, own
# files), each on a server of its own that holds nothing else, under
# s3://$BRI_S3_BUCKET/bench-PID/{optimize,bri,copy}/blobs.lance
# (az://$BRI_AZ_CONTAINER/bench-PID/... on Azure).
# Each timed run starts once the server is idle (settle, below). For each
# run: wall time; for brictl also the bytes that passed through it
# (its report's storage block: bytes in + out over the network) and the bytes
# the server copied, against the table's payload (LanceDB's fetchBlobs
# total), and the requests it sent to the store: in all, per source
# fragment, and by kind (get, head, put, list, delete, copy, the multipart
# kinds; docs/api.md). Checks: LanceDB reads the optimize and copy tables with the values
# it read before; brictl scan of the bri table equals that too. Targets (issue
# 15): bri wall <= 1/20 of optimize's with <= 1% of the payload through brid;
# copy ~0 payload bytes through brid and wall <= optimize's; issue MANY: bri
# about one request per object a source fragment has (its data file, its
# deletion file if any). Prints a table and
# writes $WORK/results.json (WORK: a temp dir, or $WORK).
set -euo pipefail
cd "$(dirname "$0")/.."
BATCHES=${1:-200:1:5M,200:10:200K}
BUILD=${BUILD:-build}
BRICTL=$PWD/$BUILD/bin/brictl
export ORACLE_NODE_DIR=${ORACLE_NODE_DIR:-$PWD/.deps/node} LANCEDB_LOG=error
[ -x "$BRICTL" ] || { echo "build first: make" >&2; exit 1; }
WORK=${WORK:-$(mktemp -d /tmp/brid-bench-${BENCH_STORE:-s3}.XXXXXX)}
mkdir -p "$WORK"
# Each run gets a server of its own, started for it in $WORK (free ports),
# holding only its table: a gateway that already stores the other runs'
# gigabytes (in memory: one memstore OSD) answers slower, and the runs
# would not be timed on identical servers.
case ${BENCH_STORE:-s3} in
  s3) SERVER=scripts/s3-server.sh; export BRI_S3_DIR ;;
  azure) SERVER=scripts/azurite-server.sh; export BRI_AZ_DIR ;;
  *) echo "BENCH_STORE: s3 or azure, not ${BENCH_STORE}" >&2; exit 2 ;;
esac
server_dir() { BRI_S3_DIR=$WORK/server-$1 BRI_AZ_DIR=$WORK/server-$1; }
server_start() { # server_start RUN: its server up, its environment set, $P its prefix
  server_dir "$1"
  eval "$("$SERVER" start)"
  case ${BENCH_STORE:-s3} in
    s3) P=s3://$BRI_S3_BUCKET/bench-$$; SERVER_PIDS=$(cat "$BRI_S3_DIR"/run/*.pid) ;;
    azure) P=az://$BRI_AZ_CONTAINER/bench-$$; SERVER_PIDS=$(cat "$BRI_AZ_DIR"/pid) ;;
  esac
}
server_stop() { server_dir "$1"; "$SERVER" stop >/dev/null 2>&1 || true; }
trap 'for r in optimize bri copy; do server_stop $r; done' EXIT
IGN=ms,table,fragmentRows,schemaFields,version,fragments
jf() { node -e 'let d=JSON.parse(require("fs").readFileSync(0,"utf8"));for(const k of process.argv[1].split("."))d=d[k];console.log(d)' "$1"; }
now() { date +%s.%N; }
# settle: waits (at most 60 s) until the store's server processes used less
# than a tenth of a core in each of 5 seconds in a row: after writing a GB
# the OSD works on for seconds, in bursts, and a run timed meanwhile
# measures that too. Every timed run (optimize() and brictl's) starts
# settled.
ticks() { local t=0 p; for p in $SERVER_PIDS; do [ -r /proc/$p/stat ] &&
  t=$((t + $(awk '{print $14 + $15}' /proc/$p/stat))); done; echo $t; }
settle() {
  local a b hz quiet=0; hz=$(getconf CLK_TCK)
  for _ in $(seq 60); do
    a=$(ticks); sleep 1; b=$(ticks)
    if [ $(( (b - a) * 10 )) -lt "$hz" ]; then quiet=$((quiet + 1)); else quiet=0; fi
    [ $quiet -ge 5 ] && return 0
  done
  echo "the store's server did not settle within 60 s: timing anyway" >&2
}

# write RUN: its server started, its table written by LanceDB (the same seed
# for every run: the same values, files of its own)
write() {
  server_start "$1"
  echo "writing $P/$1/blobs.lance ($BATCHES) on a server of its own..." >&2
  node tests/interop/lance_make.mjs --out "$P/$1" --tables blobs --blob-batches "$BATCHES" \
    ${BLOB_DELETE+--blob-delete "$BLOB_DELETE"} >/dev/null
}

write optimize
node tests/interop/lance_read.mjs "$P/optimize/blobs.lance" --json >"$WORK/before.json"
payload=$(node -e 'const d=JSON.parse(require("fs").readFileSync(0,"utf8"));
  let n=0; for (const c of Object.values(d.columns)) if (c.payloadBytes) n+=Number(c.payloadBytes); console.log(n)' <"$WORK/before.json")
echo "payload: $payload bytes" >&2
settle
t0=$(now)
node tests/interop/lance_optimize.mjs "$P/optimize/blobs.lance" --json >"$WORK/optimize.json"
opt_wall=$(echo "$(now) - $t0" | bc)
node tests/interop/lance_read.mjs "$P/optimize/blobs.lance" --json >"$WORK/optimize.read.json"
bash -c ". tests/interop/lib.sh; json_eq '$WORK/before.json' '$WORK/optimize.read.json' --ignore $IGN" ||
  { echo "LanceDB reads other values after its optimize()" >&2; exit 1; }
server_stop optimize

for s in bri copy; do
  write "$s"
  settle
  t0=$(now)
  "$BRICTL" compact "$P/$s/blobs.lance" --strategy "$s" --json >"$WORK/$s.json"
  eval "${s}_wall=$(echo "$(now) - $t0" | bc)"
  if [ "$s" = bri ]; then
    "$BRICTL" scan "$P/bri/blobs.lance" --json >"$WORK/bri.scan.json"
    bash -c ". tests/interop/lib.sh; json_eq '$WORK/before.json' '$WORK/bri.scan.json' --ignore $IGN" ||
      { echo "brictl scan of the bri table differs from LanceDB's read from before" >&2; exit 1; }
  else
    node tests/interop/lance_read.mjs "$P/copy/blobs.lance" --json >"$WORK/copy.read.json"
    bash -c ". tests/interop/lib.sh; json_eq '$WORK/before.json' '$WORK/copy.read.json' --ignore $IGN" ||
      { echo "LanceDB reads other values after compact copy" >&2; exit 1; }
  fi
  server_stop "$s"
done

# "get=722 head=1 ..." of a report's storage.requests_by_kind
by_kind() { node -e 'const d=JSON.parse(require("fs").readFileSync(0,"utf8")).storage.requests_by_kind;
  console.log(Object.entries(d).map(([k,v])=>k+"="+v).join(" "))'; }
row() { # row NAME WALL REPORT_JSON|-
  local through=- server=- pct=- req=- per=- kinds=
  if [ "$3" != - ]; then
    through=$(( $(jf storage.bytes_read <"$3") + $(jf storage.bytes_written <"$3") ))
    server=$(jf storage.bytes_copied_server <"$3")
    pct=$(echo "scale=3; 100 * $through / $payload" | bc)
    req=$(jf storage.requests <"$3")
    per=$(echo "scale=2; $req / $(jf fragments_before <"$3")" | bc)
    kinds=$(by_kind <"$3")
  fi
  printf '%-10s %9.2f %8s %14s %7s %14s %8s %8s  %s\n' "$1" "$2" "$(echo "scale=1; $opt_wall / $2" | bc)x" \
    "$through" "$pct" "$server" "$req" "$per" "$kinds"
}
{
  printf '%-10s %9s %9s %14s %7s %14s %8s %8s  %s\n' run wall_s speedup through_brid "% pay" server_copied \
    requests req/frag by_kind
  row optimize "$opt_wall" -
  row bri "$bri_wall" "$WORK/bri.json"
  row copy "$copy_wall" "$WORK/copy.json"
} | tee "$WORK/results.txt"
node -e '
const fs=require("fs"), w=process.argv[1];
const r={payload:+process.argv[2], optimize:{wall_s:+process.argv[3]},
  bri:{wall_s:+process.argv[4], report:JSON.parse(fs.readFileSync(w+"/bri.json"))},
  copy:{wall_s:+process.argv[5], report:JSON.parse(fs.readFileSync(w+"/copy.json"))}};
for (const k of ["bri","copy"]) {
  delete r[k].report.plan;
  r[k].requests_per_fragment = r[k].report.storage.requests / r[k].report.fragments_before;
}
fs.writeFileSync(w+"/results.json", JSON.stringify(r,null,1));' "$WORK" "$payload" "$opt_wall" "$bri_wall" "$copy_wall"
echo "results: $WORK/results.json" >&2
