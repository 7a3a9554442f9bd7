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
#   - every Delete Blob refused (503 ServerBusy): cleanup fails naming an old
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
jfield() { node -e 'let d=JSON.parse(require("fs").readFileSync(0,"utf8"));for(const k of process.argv[1].split("."))d=d[k];console.log(d)' "$1"; }

mkfifo "$TMPD/proxy.in"
python3 "$REPO/tests/s3/fault_proxy.py" "${AZURITE_BLOB_STORAGE_URL#http://}" <"$TMPD/proxy.in" >"$TMPD/proxy.port" &
proxy=$!
exec 7>"$TMPD/proxy.in"
trap 'exec 7>&-; kill $proxy 2>/dev/null || true; _interop_cleanup' EXIT
for _ in $(seq 50); do grep -q port "$TMPD/proxy.port" 2>/dev/null && break; sleep 0.1; done
PROXY=http://127.0.0.1:$(awk '{print $2}' "$TMPD/proxy.port")
rules() { curl -sf -X PUT --data-binary "$1" "$PROXY/__fault__" >/dev/null || fail "cannot set the proxy's rules"; }
through_proxy() { AZURE_STORAGE_ENDPOINT=$PROXY/$AZURE_STORAGE_ACCOUNT_NAME "$@"; }
few_tries() { AZURE_STORAGE_MAX_ATTEMPTS=3 "$@"; }
all_versions_read() {
  node --input-type=module - "$1" <<'EOT' || fail "a committed version of $1 does not read in LanceDB"
import { openTable } from "./tests/interop/lance_common.mjs";
const { tbl } = await openTable(process.argv[2]);
for (const v of await tbl.listVersions()) { await tbl.checkout(v.version); await tbl.countRows(); }
EOT
}

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
v0=$("$BRICTL" inspect "$P/b/blobs.lance" --json | jfield version)
if (cd "$REPO" && few_tries through_proxy "$BRICTL" compact "$P/b/blobs.lance" --strategy copy) >/dev/null 2>"$TMPD/b.err"; then
  fail "compaction succeeded although no manifest could be written"
fi
grep -q "HTTP 500 InternalError" "$TMPD/b.err" || fail "the failure does not name the status and code: $(cat "$TMPD/b.err")"
grep -q "az://$BRI_AZ_CONTAINER/.*_versions/" "$TMPD/b.err" || fail "the failure does not name the manifest: $(cat "$TMPD/b.err")"
rules '[]'
[ "$("$BRICTL" inspect "$P/b/blobs.lance" --json | jfield version)" = "$v0" ] || fail "a failed compaction changed the version"
lance_read "$P/b/blobs.lance" --json >"$TMPD/b.after"
json_eq "$TMPD/b.before" "$TMPD/b.after" --ignore "$IGN" || fail "after a failed compaction, LanceDB reads other values"
"$BRICTL" cleanup "$P/b/blobs.lance" --older-than 1000d --grace 0 --dry-run >"$TMPD/orphans" 2>&1
grep -q "would delete 0 files" "$TMPD/orphans" || fail "the failed compaction left files behind: $(cat "$TMPD/orphans")"

# --- cleanup with every Delete Blob refused, then with connections dropped ----------------
"$BRICTL" compact "$P/b/blobs.lance" --strategy copy >/dev/null || fail "compaction without faults failed"
rules '[{"match":"DELETE ","action":"status:503:ServerBusy"}]'
if (cd "$REPO" && few_tries through_proxy "$BRICTL" cleanup "$P/b/blobs.lance" --older-than 0 --grace 0) >/dev/null 2>"$TMPD/d.err"; then
  fail "cleanup succeeded although nothing could be deleted"
fi
grep -q "HTTP 503 ServerBusy" "$TMPD/d.err" || fail "the cleanup failure does not name the status: $(cat "$TMPD/d.err")"
grep -q "cleanup did not delete $P/b/blobs.lance/_versions/[0-9]*.manifest" "$TMPD/d.err" ||
  fail "the cleanup failure does not name the old manifest it could not delete: $(cat "$TMPD/d.err")"
all_versions_read "$P/b/blobs.lance"
rules '[{"match":"DELETE ","action":"drop","rate":0.3,"seed":3}]'
(cd "$REPO" && through_proxy "$BRICTL" cleanup "$P/b/blobs.lance" --older-than 0 --grace 0) >"$TMPD/d.out" 2>&1 ||
  fail "cleanup under dropped connections failed: $(cat "$TMPD/d.out")"
all_versions_read "$P/b/blobs.lance"
lance_read "$P/b/blobs.lance" --json >"$TMPD/b.after"
json_eq "$TMPD/b.before" "$TMPD/b.after" --ignore "$IGN" || fail "after cleanup, LanceDB reads other values"
pass
