#!/usr/bin/env bash
# S3 faults: brictl talks to radosgw through tests/s3/fault_proxy.py, which
# drops connections, loses answers, cuts bodies short and answers 500/503
# SlowDown. LanceDB (straight to radosgw) is the judge.
#   - transient faults on a share of all requests: compact copy completes,
#     its report counts the retries, LanceDB reads identical values;
#   - every manifest PUT refused (500): the compaction fails naming the
#     manifest and the status, the table is at its old version, LanceDB reads
#     the same, and the files the attempt wrote are gone again;
#   - every DeleteObjects refused (503) during cleanup: cleanup fails naming an
#     old manifest (the first batch) and the status, and
#     every version that remains reads in LanceDB (no committed version names
#     a missing object); with the faults gone, cleanup finishes.
# About 20 s.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_s3 faults
P=$S3_PREFIX
IGN=ms,table,fragmentRows,schemaFields,version,fragments
jfield() { node -e 'let d=JSON.parse(require("fs").readFileSync(0,"utf8"));for(const k of process.argv[1].split("."))d=d[k];console.log(d)' "$1"; }

# The proxy lives until this shell exits (its stdin is a pipe we hold).
mkfifo "$TMPD/proxy.in"
python3 "$REPO/tests/s3/fault_proxy.py" "${AWS_ENDPOINT_URL#http://}" <"$TMPD/proxy.in" >"$TMPD/proxy.port" &
proxy=$!
exec 7>"$TMPD/proxy.in"
trap 'exec 7>&-; kill $proxy 2>/dev/null || true; _interop_cleanup' EXIT
for _ in $(seq 50); do grep -q port "$TMPD/proxy.port" 2>/dev/null && break; sleep 0.1; done
PROXY=http://127.0.0.1:$(awk '{print $2}' "$TMPD/proxy.port")
rules() { curl -sf -X PUT --data-binary "$1" "$PROXY/__fault__" >/dev/null || fail "cannot set the proxy's rules"; }
through_proxy() { AWS_ENDPOINT_URL=$PROXY "$@"; }
# persistent faults: three tries per request are enough to show the giving up
few_tries() { AWS_MAX_ATTEMPTS=3 "$@"; }
# Every version of the table reads in LanceDB (row count at each version).
all_versions_read() {
  node --input-type=module - "$1" <<'EOF' || fail "a committed version of $1 does not read in LanceDB"
import { openTable } from "./tests/interop/lance_common.mjs";
const { tbl } = await openTable(process.argv[2]);
for (const v of await tbl.listVersions()) { await tbl.checkout(v.version); await tbl.countRows(); }
EOF
}

make_tables "$P/a" --tables blobs --blob-batches 4:mixed >/dev/null
make_tables "$P/b" --tables blobs --blob-batches 4:mixed >/dev/null
lance_read "$P/a/blobs.lance" --json >"$TMPD/a.before"
lance_read "$P/b/blobs.lance" --json >"$TMPD/b.before"

# --- transient faults: the compaction completes ---------------------------------------
rules '[{"match":"GET ","action":"status:503","rate":0.15,"seed":7},
        {"match":"GET ","action":"truncate","rate":0.05},
        {"match":"PUT ","action":"drop","rate":0.1},
        {"match":"PUT /bucket/","action":"lose","rate":0.05},
        {"match":"POST ","action":"status:500","rate":0.1}]'
(cd "$REPO" && through_proxy "$BRICTL" compact "$P/a/blobs.lance" --strategy copy --json) >"$TMPD/a.json" 2>"$TMPD/a.err" ||
  fail "compaction under transient faults failed: $(cat "$TMPD/a.err")"
[ "$(jfield storage.retries <"$TMPD/a.json")" -gt 0 ] || fail "no request was retried: the faults did not fire"
lance_read "$P/a/blobs.lance" --json >"$TMPD/a.after"
json_eq "$TMPD/a.before" "$TMPD/a.after" --ignore "$IGN" || fail "after compaction under faults, LanceDB reads other values"

# --- the manifest PUT always refused: the table stays as it was -------------------------
rules '[{"match":"/_versions/","action":"status:500"}]'
v0=$("$BRICTL" inspect "$P/b/blobs.lance" --json | jfield version)
if (cd "$REPO" && few_tries through_proxy "$BRICTL" compact "$P/b/blobs.lance" --strategy copy) >/dev/null 2>"$TMPD/b.err"; then
  fail "compaction succeeded although no manifest could be written"
fi
grep -q "HTTP 500" "$TMPD/b.err" || fail "the failure does not name the status: $(cat "$TMPD/b.err")"
grep -q "_versions/" "$TMPD/b.err" || fail "the failure does not name the manifest: $(cat "$TMPD/b.err")"
rules '[]'
[ "$("$BRICTL" inspect "$P/b/blobs.lance" --json | jfield version)" = "$v0" ] || fail "a failed compaction changed the version"
lance_read "$P/b/blobs.lance" --json >"$TMPD/b.after"
json_eq "$TMPD/b.before" "$TMPD/b.after" --ignore "$IGN" || fail "after a failed compaction, LanceDB reads other values"
# every version kept: only files no version reaches would go, and there must be none
"$BRICTL" cleanup "$P/b/blobs.lance" --older-than 1000d --grace 0 --dry-run >"$TMPD/orphans" 2>&1
grep -q "would delete 0 files" "$TMPD/orphans" || fail "the failed compaction left files behind: $(cat "$TMPD/orphans")"

# --- cleanup with every DeleteObjects refused, then without faults -----------------------
"$BRICTL" compact "$P/b/blobs.lance" --strategy copy >/dev/null || fail "compaction without faults failed"
rules '[{"match":"?delete","action":"status:503"}]'
if (cd "$REPO" && few_tries through_proxy "$BRICTL" cleanup "$P/b/blobs.lance" --older-than 0 --grace 0) >/dev/null 2>"$TMPD/c.err"; then
  fail "cleanup succeeded although nothing could be deleted"
fi
grep -q "503" "$TMPD/c.err" || fail "the cleanup failure does not name the status: $(cat "$TMPD/c.err")"
# the first batch is the old manifests (they go before their files); the error names one
grep -q "cleanup did not delete $P/b/blobs.lance/_versions/[0-9]*.manifest" "$TMPD/c.err" ||
  fail "the cleanup failure does not name the old manifest it could not delete: $(cat "$TMPD/c.err")"
all_versions_read "$P/b/blobs.lance"
rules '[{"match":"?delete","action":"drop","rate":0.3,"seed":3}]'
(cd "$REPO" && through_proxy "$BRICTL" cleanup "$P/b/blobs.lance" --older-than 0 --grace 0) >"$TMPD/c.out" 2>&1 ||
  fail "cleanup under dropped connections failed: $(cat "$TMPD/c.out")"
all_versions_read "$P/b/blobs.lance"
lance_read "$P/b/blobs.lance" --json >"$TMPD/b.after"
json_eq "$TMPD/b.before" "$TMPD/b.after" --ignore "$IGN" || fail "after cleanup, LanceDB reads other values"
pass
