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
. "$(dirname "$0")/remote.sh"

fault_proxy_start "${AWS_ENDPOINT_URL#http://}"
through_proxy() { AWS_ENDPOINT_URL=$PROXY "$@"; }
# persistent faults: three tries per request are enough to show the giving up
few_tries() { AWS_MAX_ATTEMPTS=3 "$@"; }

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
faults_commit_refused "$P/b/blobs.lance" "$TMPD/b.before" "HTTP 500" "_versions/"

# --- cleanup with every DeleteObjects refused, then with connections dropped --------------
"$BRICTL" compact "$P/b/blobs.lance" --strategy copy >/dev/null || fail "compaction without faults failed"
rules '[{"match":"?delete","action":"status:503"}]'
faults_cleanup_refused "$P/b/blobs.lance" "503"
rules '[{"match":"?delete","action":"drop","rate":0.3,"seed":3}]'
faults_cleanup_dropped "$P/b/blobs.lance" "$TMPD/b.before"
pass
