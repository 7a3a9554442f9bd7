#!/usr/bin/env bash
# Azure faults: brictl talks to Azurite through tests/s3/fault_proxy.py (an
# HTTP proxy that knows nothing of S3 but its error body, which Azure's
# errors share: <Error><Code>), which drops connections, loses answers,
# cuts bodies short and answers 500 / 503 ServerBusy. LanceDB (straight to
# Azurite) is the judge. A job either completes or leaves the table as it was.
#   - transient faults on Put Block (From URL), Copy Blob, Put Blob, HEAD and
#     List Blobs: compact copy completes, its report counts the retries,
#     LanceDB reads identical values;
#   - transient faults on GET (503 ServerBusy, bodies cut short): compact
#     bri completes and brictl scan equals LanceDB's read from before;
#   - every manifest Put Blob refused (500): the compaction fails naming the
#     manifest and the status, the table is at its old version, LanceDB reads
#     the same, and no file the attempt wrote is left;
#   - every Blob Batch of deletes refused (503 ServerBusy): cleanup fails naming an old
#     manifest and the status, every version that remains reads in LanceDB;
#     with connections dropped instead, cleanup finishes.
# (The service's own reads of a copy's source come through the proxy too:
# GET faults are kept to the bri run, which copies nothing.)
# About 40 s.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_azure faults
P=$AZ_PREFIX
IGN=ms,table,fragmentRows,schemaFields,version,fragments
. "$(dirname "$0")/remote.sh"

fault_proxy_start "${AZURITE_BLOB_STORAGE_URL#http://}"
through_proxy() { AZURE_STORAGE_ENDPOINT=$PROXY/$AZURE_STORAGE_ACCOUNT_NAME "$@"; }
few_tries() { AZURE_STORAGE_MAX_ATTEMPTS=3 "$@"; }

for t in a b c; do
  make_tables "$P/$t" --tables blobs --blob-batches 4:mixed >/dev/null
  lance_read "$P/$t/blobs.lance" --json >"$TMPD/$t.before"
done

# --- transient faults on writes, copies and listings: the copy compaction completes ------
rules '[{"match":"PUT ","action":"status:503:ServerBusy","rate":0.15,"seed":7},
        {"match":"PUT ","action":"drop","rate":0.05},
        {"match":"PUT ","action":"lose","rate":0.05},
        {"match":"HEAD ","action":"status:500:InternalError","rate":0.1},
        {"match":"comp=list","action":"truncate","rate":0.1}]'
(cd "$REPO" && through_proxy "$BRICTL" compact "$P/a/blobs.lance" --strategy copy --json) >"$TMPD/a.json" 2>"$TMPD/a.err" ||
  fail "compaction under transient faults failed: $(cat "$TMPD/a.err")"
[ "$(jfield storage.retries <"$TMPD/a.json")" -gt 0 ] || fail "no request was retried: the faults did not fire"
[ "$(jfield storage.bytes_copied_server <"$TMPD/a.json")" -gt 10000000 ] || fail "the service did not copy the payload"
lance_read "$P/a/blobs.lance" --json >"$TMPD/a.after"
json_eq "$TMPD/a.before" "$TMPD/a.after" --ignore "$IGN" || fail "after compaction under faults, LanceDB reads other values"

# --- transient faults on reads: the bri compaction completes ------------------------------
rules '[{"match":"GET ","action":"status:503:ServerBusy","rate":0.15,"seed":5},
        {"match":"GET ","action":"truncate","rate":0.1},
        {"match":"GET ","action":"drop","rate":0.05}]'
(cd "$REPO" && through_proxy "$BRICTL" compact "$P/c/blobs.lance" --strategy bri --json) >"$TMPD/c.json" 2>"$TMPD/c.err" ||
  fail "bri compaction under read faults failed: $(cat "$TMPD/c.err")"
[ "$(jfield storage.retries <"$TMPD/c.json")" -gt 0 ] || fail "no read was retried: the faults did not fire"
rules '[]'
"$BRICTL" scan "$P/c/blobs.lance" --json >"$TMPD/c.after"
json_eq "$TMPD/c.before" "$TMPD/c.after" --ignore "$IGN" || fail "after bri under read faults, brictl scan differs from LanceDB's read from before"

# --- the manifest Put Blob always refused: the table stays as it was ---------------------
rules '[{"match":"/_versions/","action":"status:500:InternalError"}]'
faults_commit_refused "$P/b/blobs.lance" "$TMPD/b.before" "HTTP 500 InternalError" "az://$BRI_AZ_CONTAINER/.*_versions/"

# --- cleanup with every Blob Batch of deletes refused, then with connections dropped -------
"$BRICTL" compact "$P/b/blobs.lance" --strategy copy >/dev/null || fail "compaction without faults failed"
rules '[{"match":"comp=batch","action":"status:503:ServerBusy"}]'
faults_cleanup_refused "$P/b/blobs.lance" "HTTP 503 ServerBusy"
rules '[{"match":"comp=batch","action":"drop","rate":0.3,"seed":3}]'
faults_cleanup_dropped "$P/b/blobs.lance" "$TMPD/b.before"
pass
