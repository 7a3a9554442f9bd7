#!/usr/bin/env bash
# S3: Lance tables that LanceDB writes on a real S3 server (radosgw, started by
# scripts/run-tests.sh through scripts/s3-server.sh; AWS_* and BRI_S3_BUCKET in
# the environment), handled by brictl at s3:// URIs.
#   - blob tables with deletions and stable row ids (top-level and nested blobs,
#     nested lists): `brictl scan --json` equals LanceDB's read;
#   - compact --strategy bri: brictl scan equals LanceDB's read from before, and
#     the report says no payload byte went through brictl; verify passes;
#     a pack's size is asked of S3 only when the descriptors cannot tell it
#     (whole packs, packs below the repack threshold whatever their size);
#     materialize: LanceDB reads the values from before again;
#   - compact --strategy copy: LanceDB reads identical values; the payload was
#     copied by the server (bytes through brictl are the data files only);
#   - compact --strategy link: refused, naming the reason, the table unchanged;
#   - cleanup: fewer DeleteObjects (and HEAD) requests than files deleted, then
#     verify passes and LanceDB still reads the same;
#   - deep clones S3 -> local -> S3 -> S3 and a shallow clone on S3: LanceDB reads
#     the same values in each;
#   - a LanceDB writer appending and deleting during repeated copy compactions:
#     at the end exactly the rows the writer's history says (commits race on
#     PUT If-None-Match: *; the loser rebases or gives way).
# About 35 s.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_s3 interop
P=$S3_PREFIX
IGN=ms,table,fragmentRows,schemaFields
same_as() { # same_as JSON_FILE_OF_BEFORE JSON_FILE_OF_AFTER WHAT
  json_eq "$1" "$2" --ignore "$IGN,version,fragments" || fail "$3"
}
. "$(dirname "$0")/remote.sh"

# --- LanceDB writes; brictl reads the same -----------------------------------------
make_tables "$P/a" --tables blobs,blobnest,nested --small --blob-batches 2:mixed --stable-row-ids \
  --blobnest-delete "id % 4 = 1" >/dev/null
make_tables "$P/b" --tables blobs --blob-batches 4:mixed >/dev/null
for t in a/blobs a/blobnest a/nested b/blobs; do
  lance_read "$P/$t.lance" --json >"$TMPD/${t//\//_}.before" || fail "LanceDB cannot read $P/$t.lance"
  "$BRICTL" scan "$P/$t.lance" --json >"$TMPD/scan.json" || fail "brictl scan $P/$t.lance failed"
  json_eq "$TMPD/${t//\//_}.before" "$TMPD/scan.json" --ignore "$IGN" || fail "brictl scan of $t differs from LanceDB"
done

# --- bri: no payload byte through brictl -------------------------------------------
for t in a/blobs a/blobnest; do check_bri_moves_nothing "$P/$t.lance" "$TMPD/${t//\//_}.before"; done

# --- bri: a pack's size is asked of S3 only when the descriptors cannot tell it ----------
# every row visible, each pack its data file's own: the size is where its last value
# ends (no HEAD); after LanceDB deletes 90% of the rows, the live ranges cover less
# than the repack threshold of that, so the packs are repacked, without a HEAD either
r=$P/r/t.lance
"$BRICTL" gen "$r" --fragments 3 --rows 40 --blob-sizes 2K,3K,5K --inline-threshold 1024 \
  --dedicated-threshold 65536 >/dev/null || fail "brictl gen on S3 failed"
"$BRICTL" compact "$r" --strategy bri --dry-run --json >"$TMPD/whole.json"
node -e 'const r=JSON.parse(require("fs").readFileSync(process.argv[1]));
  const p=r.plan.packs; if(p.length!==3||!p.every(x=>x.bytes===x.live_bytes&&x.utilization===1&&!x.repack)||r.storage.requests_by_kind.head)
  {console.error(JSON.stringify([p,r.storage]));process.exit(1)}' "$TMPD/whole.json" || fail "whole packs were measured or misjudged"
lance_ops "$r" delete "id % 10 != 0" >/dev/null
lance_read "$r" --json >"$TMPD/r.before"
"$BRICTL" compact "$r" --strategy bri --json >"$TMPD/low.json" || fail "compact bri of the mostly deleted table failed"
node -e 'const r=JSON.parse(require("fs").readFileSync(process.argv[1]));
  const p=r.plan.packs; if(p.length!==3||!p.every(x=>x.repack&&x.bytes===null)||!(r.payload_bytes_copied>0))
  {console.error(JSON.stringify([p,r.storage]));process.exit(1)}' "$TMPD/low.json" || fail "low packs were not repacked"
"$BRICTL" scan "$r" --json >"$TMPD/scan.json"
same_as "$TMPD/r.before" "$TMPD/scan.json" "after repacking on S3, brictl scan differs from LanceDB's read from before"

# --- verify, then materialize: LanceDB reads the bri table again ------------------------
"$BRICTL" verify "$P/a/blobs.lance" >"$TMPD/verify" || fail "verify after bri: $(cat "$TMPD/verify")"
"$BRICTL" materialize "$P/a/blobs.lance" >"$TMPD/mat" || fail "materialize failed: $(cat "$TMPD/mat")"
lance_read "$P/a/blobs.lance" --json >"$TMPD/after.json" || fail "LanceDB cannot read the table after materialize"
same_as "$TMPD/a_blobs.before" "$TMPD/after.json" "after materialize, LanceDB reads other values"
"$BRICTL" verify "$P/a/blobs.lance" >"$TMPD/verify" || fail "verify after materialize: $(cat "$TMPD/verify")"

# --- link: refused, nothing changed -------------------------------------------------
check_link_refused "$P/b/blobs.lance"

# --- copy: LanceDB reads identical values, the server copied the payload -------------
"$BRICTL" compact "$P/b/blobs.lance" --strategy copy --json >"$TMPD/copy.json" || fail "compact copy failed"
check_copy_by_server "$TMPD/copy.json"
lance_read "$P/b/blobs.lance" --json >"$TMPD/after.json" || fail "LanceDB cannot read the table after compact copy"
same_as "$TMPD/b_blobs.before" "$TMPD/after.json" "after compact copy, LanceDB reads other values"

# --- cleanup in DeleteObjects batches: LanceDB still reads ------------------------------
"$BRICTL" cleanup "$P/b/blobs.lance" --older-than 0 --grace 0 --json >"$TMPD/clean.json" 2>"$TMPD/clean.err" ||
  fail "cleanup failed: $(cat "$TMPD/clean.err")"
node -e 'const r=JSON.parse(require("fs").readFileSync(process.argv[1])), k=r.storage.requests_by_kind;
  if(!(r.files>=10&&r.deleted.length===r.files&&k.delete>=1&&k.delete<r.files&&(k.head||0)<r.files))
  {console.error(JSON.stringify([r.files,r.deleted.length,r.storage]));process.exit(1)}' "$TMPD/clean.json" ||
  fail "cleanup did not delete in batches (a delete request, or a HEAD, per file)"
lance_read "$P/b/blobs.lance" --json >"$TMPD/after.json" || fail "LanceDB cannot read the table after cleanup"
same_as "$TMPD/b_blobs.before" "$TMPD/after.json" "after cleanup, LanceDB reads other values"
"$BRICTL" verify "$P/b/blobs.lance" --all-versions >"$TMPD/verify" || fail "verify after cleanup: $(cat "$TMPD/verify")"

# --- deep clones S3 -> local -> S3 and S3 -> S3, a shallow clone on S3 -----------------
"$BRICTL" clone "$P/b/blobs.lance" "$TMPD/local.lance" --deep >/dev/null || fail "deep clone S3 -> local failed"
"$BRICTL" clone "$TMPD/local.lance" "$P/d/blobs.lance" --deep >/dev/null || fail "deep clone local -> S3 failed"
"$BRICTL" clone "$P/d/blobs.lance" "$P/e/blobs.lance" --deep >/dev/null || fail "deep clone S3 -> S3 failed"
"$BRICTL" clone "$P/e/blobs.lance" "$P/f/blobs.lance" --shallow >/dev/null || fail "shallow clone on S3 failed"
for c in "$TMPD/local.lance" "$P/d/blobs.lance" "$P/e/blobs.lance" "$P/f/blobs.lance"; do
  lance_read "$c" --json >"$TMPD/clone.json" || fail "LanceDB cannot read the clone $c"
  same_as "$TMPD/b_blobs.before" "$TMPD/clone.json" "LanceDB reads other values in the clone $c"
done

# --- a LanceDB writer during compactions ----------------------------------------------
make_tables "$P/c" --tables plain --fragments 6 --rows 200 --plain-delete "" >/dev/null
t=$P/c/plain.lance
compact_beside_writer "$t" copy 6
pass
