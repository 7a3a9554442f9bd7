#!/usr/bin/env bash
# bench/compact_managed_s3.sh: compacting a Managed-blob table (Lance 14,
# docs/format/blob.md 8) on S3: brictl compact against pylance 14's own
# compact_files() on identical tables, each on a test radosgw of its own
# (scripts/s3-server.sh, started here).
#
#   bench/compact_managed_s3.sh [APPENDS]    (default 40 appends of 10 rows:
#                                            one 4.5 MiB dedicated value, four
#                                            200 KB packed, five 10 KB inline;
#                                            rows id % 5 = 2 deleted after)
#
# Both tables are written by pylance 14 (.deps/py, scripts/deps.sh) with the
# same values, schema metadata lance.blob.managed = true. Timed: pylance's
# compact_files() call alone (the dataset opened before), and brictl compact
# as a whole process (open included). Reported: wall time, the bytes of the
# objects each left in the store that were not there before (data files,
# manifests, transactions, and any payload), payload bytes brid copied (0
# expected), brid's requests by kind. Checks: pylance reads both tables with
# the values it read before. Prints a table and writes $WORK/results.json.
set -euo pipefail
cd "$(dirname "$0")/.."
APPENDS=${1:-40}
BUILD=${BUILD:-build}
BRICTL=$PWD/$BUILD/bin/brictl
PY=$PWD/.deps/py/bin/python
[ -x "$BRICTL" ] || { echo "build first: make" >&2; exit 1; }
[ -x "$PY" ] || { echo "no pylance venv: scripts/deps.sh" >&2; exit 1; }
WORK=${WORK:-$(mktemp -d /tmp/brid-bench-managed.XXXXXX)}
mkdir -p "$WORK"
server_start() { # server_start RUN: a server of its own; $P the table's URI
  export BRI_S3_DIR=$WORK/server-$1
  eval "$(scripts/s3-server.sh start)"
  P=s3://$BRI_S3_BUCKET/bench-$$/$1.lance
}
server_stop() { BRI_S3_DIR=$WORK/server-$1 scripts/s3-server.sh stop >/dev/null 2>&1 || true; }
trap 'for r in pylance brid; do server_stop $r; done' EXIT

# lance RUN write|objects|compact|read: pylance 14 on the table at $P
lance() {
  "$PY" - "$1" "$P" "$APPENDS" <<'PY'
import hashlib, json, os, sys, time
import lance, pyarrow as pa
from lance.blob import blob_field, blob_array
op, uri, appends = sys.argv[1], sys.argv[2], int(sys.argv[3])
e = os.environ
so = {"endpoint": e["AWS_ENDPOINT_URL"], "allow_http": "true", "aws_access_key_id": e["AWS_ACCESS_KEY_ID"],
      "aws_secret_access_key": e["AWS_SECRET_ACCESS_KEY"], "region": e.get("AWS_REGION", "us-east-1"),
      "virtual_hosted_style_request": "false"}
def value(i):
    size = 4_500_000 if i % 10 == 0 else 200_000 if i % 10 < 5 else 10_000
    return hashlib.shake_256(str(i).encode()).digest(size)
if op == "write":
    schema = pa.schema([pa.field("id", pa.int64()), blob_field("blob")], metadata={"lance.blob.managed": "true"})
    for k in range(appends):
        ids = list(range(k * 10, k * 10 + 10))
        t = pa.table({"id": pa.array(ids, pa.int64()), "blob": blob_array([value(i) for i in ids])}, schema=schema)
        lance.write_dataset(t, uri, mode="create" if k == 0 else "append", storage_options=so)
    lance.dataset(uri, storage_options=so).delete("id % 5 = 2")
elif op == "compact":
    ds = lance.dataset(uri, storage_options=so)
    t0 = time.time()
    ds.optimize.compact_files()
    print(json.dumps({"seconds": time.time() - t0}))
elif op == "read":
    ds = lance.dataset(uri, storage_options=so)
    t = ds.to_table(columns=["id"], with_row_id=True)
    rows = sorted(zip(t["id"].to_pylist(), t["_rowid"].to_pylist()))
    h = hashlib.sha256()
    for b in ds.take_blobs("blob", ids=[r for _, r in rows]):
        h.update(b.readall())
    print(json.dumps({"rows": len(rows), "sha256": h.hexdigest(), "fragments": len(ds.get_fragments())}))
PY
}
# the objects below $P with their sizes ("key size" lines; Debian's python3-boto3)
listing() { /usr/bin/python3 - "$P" <<'PY'
import os, sys, boto3
uri = sys.argv[1]
bucket, prefix = uri[5:].split("/", 1)
s3 = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name=os.environ.get("AWS_REGION", "us-east-1"))
for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix + "/"):
    for o in page.get("Contents", []): print(o["Key"], o["Size"])
PY
}
new_bytes() { # new_bytes BEFORE AFTER: bytes of the objects AFTER lists that BEFORE does not
  awk 'NR == FNR { seen[$1] = 1; next } !($1 in seen) { n += $2 } END { print n + 0 }' "$1" "$2"
}

for run in pylance brid; do
  server_start $run
  echo "$run: writing $APPENDS appends to $P ..." >&2
  lance write >/dev/null
  lance read >"$WORK/$run.before.json"
  listing >"$WORK/$run.objects.before"
  if [ $run = pylance ]; then
    lance compact >"$WORK/pylance.json"
  else
    t0=$(date +%s.%N)
    "$BRICTL" compact "$P" --json >"$WORK/brid.json"
    echo "{\"seconds\": $(echo "$(date +%s.%N) - $t0" | bc)}" >"$WORK/brid.time.json"
  fi
  listing >"$WORK/$run.objects.after"
  lance read >"$WORK/$run.after.json"
  cmp -s <(jq -c '{rows, sha256}' "$WORK/$run.before.json") <(jq -c '{rows, sha256}' "$WORK/$run.after.json") ||
    { echo "$run: pylance reads other values after the compaction" >&2; exit 1; }
  server_stop $run
done

py_s=$(jq .seconds "$WORK/pylance.json")
br_s=$(jq .seconds "$WORK/brid.time.json")
py_b=$(new_bytes "$WORK/pylance.objects.before" "$WORK/pylance.objects.after")
br_b=$(new_bytes "$WORK/brid.objects.before" "$WORK/brid.objects.after")
jq -n --argjson py "$(cat "$WORK/pylance.json")" --argjson br "$(cat "$WORK/brid.json")" \
  --argjson brs "$br_s" --argjson pyb "$py_b" --argjson brb "$br_b" --argjson appends "$APPENDS" \
  '{appends: $appends, pylance: {seconds: $py.seconds, bytes_written: $pyb},
    brid: {seconds: $brs, bytes_written: $brb, payload_bytes_copied: $br.payload_bytes_copied,
           strategy_used: $br.strategy_used, managed_kept: $br.managed_kept,
           requests: $br.storage.requests, requests_by_kind: $br.storage.requests_by_kind}}' >"$WORK/results.json"
printf '%-8s %9s %14s %9s\n' run seconds "bytes written" requests
printf '%-8s %9.3f %14s %9s\n' pylance "$py_s" "$py_b" -
printf '%-8s %9.3f %14s %9s\n' brid "$br_s" "$br_b" "$(jq .storage.requests "$WORK/brid.json")"
echo "brid: $(jq -c '{strategy_used, payload_bytes_copied, managed_kept, requests_by_kind: .storage.requests_by_kind}' "$WORK/brid.json")"
echo "ratio: brid takes $(echo "scale=3; $br_s / $py_s" | bc) of pylance's time; results in $WORK/results.json"
