#!/usr/bin/env bash
# CLEAN interop: cleanup, materialize, clone and verify on tables LanceDB wrote.
#  - a benchmark-like blob table (one-value packs, inline values, packs of two
#    values of which one pack is dead) compacted with bri, then `cleanup
#    --older-than 0`: disk use within 1% of the live payload (everything that is
#    not payload, metadata included, under 1%), every blob byte-identical (brictl
#    scan == LanceDB before), verify passes on every version, the old data files
#    are gone, the sidecars the BRI names remain and nothing else of their
#    directories does;
#  - a tagged old version stays fully readable after cleanup (scan --version);
#  - with one retained manifest corrupted, cleanup deletes nothing and names it;
#  - materialize: LanceDB reads the result with identical hashes, appends to it
#    and optimize()s it; a later cleanup keeps it readable;
#  - a deep clone reads identically after its source is removed;
#  - a shallow clone reads identically in LanceDB (link table) and in brictl
#    (bri table), and cleaning it after it moved on never deletes a source file.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_oracle

scan() { "$BRICTL" scan "$@" --json; }
same() { # same A B: equal but for version/fragment bookkeeping
  json_eq "$1" "$2" --ignore version,fragments,ms,table,fragmentRows,schemaFields,descriptorKinds
}
jget() { # jget FILE EXPR: a value from a JSON file (EXPR in JS, the object is j)
  node -e 'const j=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")); console.log(eval(process.argv[2]))' "$1" "$2"
}
listing() { (cd "$1" && find . -printf '%p %s %y\n' | sort); }
bytes_of() { du -sb --apparent-size "$1" | cut -f1; }
# directories a table's BRI sources name (root base only), one per line
bri_dirs() {
  "$BRICTL" inspect "$1" --json | node -e '
    let s=""; process.stdin.on("data",d=>s+=d).on("end",()=>{
      const out=new Set();
      for (const f of JSON.parse(s).fragments) for (const d of f.files)
        for (const x of (d.blob_reuse_index||{sources:[]}).sources) if (x.base_id === null) out.add(x.blob_dir);
      console.log([...out].join("\n"));
    });'
}

# 20 appends of one 512 KiB value (a pack each), 20 appends of ten 64 KiB values
# (inline), 2 appends of four 300 KiB values rolled into packs of two; the
# deletes kill whole packs only, so no dead byte outlives cleanup.
make_tables "$TMPD/gen" --tables blobs --blob-batches 20:1:512K,20:10:64K,2:4:300K \
  --pack-file-threshold 614400 \
  --blob-delete "(id % 5 = 2 AND id < 220) OR id = 21 OR id = 220 OR id = 221" >/dev/null
base=$TMPD/gen/blobs.lance
lance_read "$base" --json >"$TMPD/lance0.json"
scan "$base" >"$TMPD/scan0.json"
same "$TMPD/lance0.json" "$TMPD/scan0.json" || fail "brictl scan differs from LanceDB before compaction"
"$BRICTL" verify "$base" --all-versions >/dev/null || fail "verify fails on the table LanceDB wrote"

# --- compact (bri) + cleanup: disk use, bytes, verify, what went and what stayed
a=$TMPD/a/blobs.lance
mkdir -p "$TMPD/a" && cp -a "$base" "$a"
(cd "$a/data" && ls -1 *.lance) >"$TMPD/old_data_files"
"$BRICTL" compact "$a" --strategy bri --json >"$TMPD/compact.json" || fail "compact failed"
bri_dirs "$a" >"$TMPD/bri_dirs"
[ -s "$TMPD/bri_dirs" ] || fail "the compaction left no BRI"
files_before=0
while read -r d; do files_before=$((files_before + $(ls "$a/data/$d" | wc -l))); done <"$TMPD/bri_dirs"
disk_written=$(bytes_of "$base")
disk_before=$(bytes_of "$a")
"$BRICTL" cleanup "$a" --older-than 0 --json >"$TMPD/cleanup.json" || fail "cleanup failed"
scan "$a" >"$TMPD/scan1.json"
same "$TMPD/lance0.json" "$TMPD/scan1.json" || fail "blob bytes changed by compact + cleanup"
"$BRICTL" verify "$a" --all-versions --json >"$TMPD/verify1.json" || fail "verify fails after cleanup: $(cat "$TMPD/verify1.json")"
while read -r f; do [ ! -e "$a/data/$f" ] || fail "old data file $f survived cleanup"; done <"$TMPD/old_data_files"
files_after=0
while read -r d; do files_after=$((files_after + $(ls "$a/data/$d" | wc -l))); done <"$TMPD/bri_dirs"
targets=$(jget "$TMPD/verify1.json" j.bri_targets)
# verify passed, so every BRI-named sidecar exists; anything more would be a leftover
[ "$files_after" -eq "$targets" ] || fail "BRI source dirs hold $files_after files, the BRI names $targets"
[ "$files_before" -gt "$files_after" ] || fail "no unreferenced file of a BRI source dir was deleted ($files_before before)"
payload=$(jget "$TMPD/scan1.json" 'j.columns.blob.payloadBytes')
disk=$(bytes_of "$a")
node -e 'const [d,p]=process.argv.slice(1).map(Number); process.exit(d <= p*1.01 ? 0 : 1)' "$disk" "$payload" ||
  fail "disk use $disk bytes is not within 1% of the live payload $payload"
echo "ok compact+cleanup: disk $disk_written as written, $disk_before after compaction, $disk after cleanup, for $payload live payload bytes; BRI dirs $files_before -> $files_after files"

# --- a tagged old version stays readable
b=$TMPD/b/blobs.lance
mkdir -p "$TMPD/b" && cp -a "$base" "$b"
lance_ops "$b" tag keep 10 >/dev/null
scan "$b" --version 10 >"$TMPD/tag0.json"
"$BRICTL" compact "$b" >/dev/null
"$BRICTL" cleanup "$b" --older-than 0 >/dev/null
scan "$b" --version 10 >"$TMPD/tag1.json" || fail "tagged version 10 unreadable after cleanup"
json_eq "$TMPD/tag0.json" "$TMPD/tag1.json" --ignore ms,table || fail "tagged version 10 reads differently after cleanup"
"$BRICTL" verify "$b" --version 10 >/dev/null || fail "verify fails on the tagged version"
"$BRICTL" verify "$b" --all-versions >/dev/null || fail "verify fails on the retained versions"
scan "$b" >"$TMPD/tag_latest.json"
same "$TMPD/lance0.json" "$TMPD/tag_latest.json" || fail "latest version changed under a tag"
echo "ok tagged version readable after cleanup"

# --- one retained manifest corrupted: cleanup deletes nothing, names the file
c=$TMPD/c/blobs.lance
mkdir -p "$TMPD/c" && cp -a "$base" "$c"
lance_ops "$c" tag keep 10 >/dev/null
"$BRICTL" compact "$c" >/dev/null
bad=$c/_versions/$(node -e 'console.log((2n ** 64n - 1n - 10n).toString().padStart(20, "0"))').manifest
[ -f "$bad" ] || fail "no V2 manifest for version 10 ($bad)"
printf 'XXXX' | dd of="$bad" bs=1 seek=$(( $(stat -c %s "$bad") - 4 )) conv=notrunc status=none
listing "$c" >"$TMPD/c.before"
if "$BRICTL" cleanup "$c" --older-than 0 2>"$TMPD/c.err" >/dev/null; then fail "cleanup ran over a corrupted retained manifest"; fi
grep -qF "$bad" "$TMPD/c.err" || fail "cleanup error does not name $bad: $(cat "$TMPD/c.err")"
grep -q "nothing was deleted" "$TMPD/c.err" || fail "cleanup error: $(cat "$TMPD/c.err")"
listing "$c" >"$TMPD/c.after"
cmp -s "$TMPD/c.before" "$TMPD/c.after" || fail "cleanup changed the table although a retained manifest is corrupt"
set +e; "$BRICTL" verify "$c" --all-versions >"$TMPD/c.verify"; rc=$?; set -e
[ "$rc" -eq 5 ] && grep -qF "$bad" "$TMPD/c.verify" || fail "verify (exit $rc) does not report $bad"
echo "ok corrupted retained manifest: nothing deleted"

# --- materialize: LanceDB reads, appends, optimizes
d=$TMPD/d/blobs.lance
mkdir -p "$TMPD/d" && cp -a "$a" "$d"
if lance_read "$d" --json >/dev/null 2>&1; then fail "LanceDB opened a BRI table"; fi
"$BRICTL" materialize "$d" --json >"$TMPD/mat.json" || fail "materialize failed"
[ "$(jget "$TMPD/mat.json" j.copies)" = 0 ] || fail "materialize copied on one filesystem: $(cat "$TMPD/mat.json")"
[ "$(jget "$TMPD/mat.json" j.bri_files_left)" = 0 ] || fail "materialize left a BRI"
if "$BRICTL" inspect "$d" --json | grep '"blob_reuse_index"' | grep -vq null; then fail "a data file still carries a BRI"; fi
lance_read "$d" --json >"$TMPD/mat.lance.json" || fail "LanceDB cannot read the materialized table"
same "$TMPD/lance0.json" "$TMPD/mat.lance.json" || fail "LanceDB reads different values after materialize"
"$BRICTL" verify "$d" --all-versions >/dev/null || fail "verify fails after materialize"
rows0=$(jget "$TMPD/mat.lance.json" j.rows)
lance_ops "$d" append 7 --kind blobs >/dev/null || fail "LanceDB cannot append to the materialized table"
lance_ops "$d" optimize >"$TMPD/opt.json" || fail "LanceDB optimize() fails on the materialized table"
lance_read "$d" --json >"$TMPD/mat2.lance.json"
scan "$d" >"$TMPD/mat2.scan.json"
same "$TMPD/mat2.lance.json" "$TMPD/mat2.scan.json" || fail "brictl and LanceDB disagree after LanceDB wrote on the materialized table"
[ "$(jget "$TMPD/mat2.lance.json" j.rows)" -eq $((rows0 + 7)) ] || fail "append lost rows"
"$BRICTL" cleanup "$d" --older-than 0 >/dev/null
lance_read "$d" --json >"$TMPD/mat3.lance.json" || fail "LanceDB cannot read the materialized table after cleanup"
same "$TMPD/mat2.lance.json" "$TMPD/mat3.lance.json" || fail "cleanup after materialize changed values"
"$BRICTL" verify "$d" --all-versions >/dev/null || fail "verify fails after materialize + LanceDB writes + cleanup"
echo "ok materialize: LanceDB reads, appends and optimizes"

# --- deep clone of the compacted, cleaned BRI table; then the source goes away
e=$TMPD/e/blobs.lance
mkdir -p "$TMPD/e" && cp -a "$a" "$TMPD/e/src.lance"
"$BRICTL" clone "$TMPD/e/src.lance" "$e" --deep --json >"$TMPD/deep.json" || fail "deep clone failed"
rm -rf "$TMPD/e/src.lance"
scan "$e" >"$TMPD/deep.scan.json" || fail "the deep clone does not read without its source"
same "$TMPD/lance0.json" "$TMPD/deep.scan.json" || fail "the deep clone reads differently"
"$BRICTL" verify "$e" --all-versions >/dev/null || fail "verify fails on the deep clone"
echo "ok deep clone independent of its source"

# --- shallow clone of a link table: LanceDB reads it; cleaning it spares the source
l=$TMPD/l/src.lance
mkdir -p "$TMPD/l" && cp -a "$base" "$l"
"$BRICTL" compact "$l" --strategy link >/dev/null
ls_=$TMPD/l/clone.lance
"$BRICTL" clone "$l" "$ls_" --shallow >/dev/null || fail "shallow clone failed"
lance_read "$ls_" --json >"$TMPD/shallow.lance.json" || fail "LanceDB cannot read the shallow clone"
same "$TMPD/lance0.json" "$TMPD/shallow.lance.json" || fail "LanceDB reads the shallow clone differently"
listing "$l" >"$TMPD/l.before"
lance_ops "$ls_" append 5 --kind blobs >/dev/null || fail "LanceDB cannot append to the shallow clone"
lance_ops "$ls_" optimize >/dev/null || fail "LanceDB optimize() fails on the shallow clone"
lance_read "$ls_" --json >"$TMPD/shallow2.lance.json"
find "$l" "$ls_" -exec touch -h -d '2020-01-01' {} +
"$BRICTL" cleanup "$ls_" --older-than 0 --grace 0s --json >"$TMPD/shallow.cleanup.json" || fail "cleanup of the shallow clone failed"
[ "$(jget "$TMPD/shallow.cleanup.json" j.files)" -gt 0 ] || fail "cleanup of the shallow clone had nothing to do"
listing "$l" >"$TMPD/l.after"
cmp -s "$TMPD/l.before" "$TMPD/l.after" || fail "cleanup of a shallow clone touched its source: $(diff "$TMPD/l.before" "$TMPD/l.after" | head -5)"
lance_read "$ls_" --json >"$TMPD/shallow3.lance.json"
same "$TMPD/shallow2.lance.json" "$TMPD/shallow3.lance.json" || fail "the shallow clone reads differently after cleanup"
echo "ok shallow clone of a link table (LanceDB reads and writes it; cleanup spares the source)"

# --- shallow clone of a BRI table: brictl reads it; materialized, LanceDB does
s=$TMPD/s/clone.lance
mkdir -p "$TMPD/s"
listing "$a" >"$TMPD/a.before"
"$BRICTL" clone "$a" "$s" --shallow >/dev/null || fail "shallow clone of a BRI table failed"
scan "$s" >"$TMPD/sb.scan.json"
same "$TMPD/lance0.json" "$TMPD/sb.scan.json" || fail "the shallow clone of a BRI table reads differently"
"$BRICTL" verify "$s" >/dev/null || fail "verify fails on the shallow clone of a BRI table"
"$BRICTL" materialize "$s" >/dev/null || fail "materialize of the shallow clone failed"
lance_read "$s" --json >"$TMPD/sb.lance.json" || fail "LanceDB cannot read the materialized shallow clone"
same "$TMPD/lance0.json" "$TMPD/sb.lance.json" || fail "LanceDB reads the materialized shallow clone differently"
find "$s" -exec touch -h -d '2020-01-01' {} +
"$BRICTL" cleanup "$s" --older-than 0 --grace 0s >/dev/null || fail "cleanup of the shallow clone failed"
listing "$a" >"$TMPD/a.after"
cmp -s "$TMPD/a.before" "$TMPD/a.after" || fail "clone, materialize or cleanup of a shallow clone touched its source"
echo "ok shallow clone of a BRI table"
pass
