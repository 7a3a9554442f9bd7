#!/usr/bin/env bash
# Managed blobs (Lance 14, docs/format/blob.md 8) through brid's compaction and
# cleanup, on tables pylance 14.0.3 wrote (tests/interop/lance_py.py):
#  - a plain Blob v2 table that pylance switched to Managed (update_schema_metadata
#    only, its old values still Packed and Dedicated): brid's compaction adopts them
#    in place (0 payload bytes copied, adopted values reported), pylance reads the
#    same rows, and its descriptors are byte-identical to those pylance's own
#    compaction writes on a copy; brid's cleanup then keeps every adopted sidecar
#    (data/<old stem>/*.blob) while removing the old data files;
#  - a Managed table with deletions: compaction copies no payload byte; cleanup
#    deletes exactly the _blobs/ objects no retained version names (the same set
#    pylance's own compaction + cleanup leaves) and pylance reads the same rows;
#  - cleanup keeps an unnamed _blobs/ object younger than the grace period (a
#    writer's upload not yet committed);
#  - cleanup stops, deleting nothing, when a retained version's data file cannot be
#    read (the objects it names cannot be known).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_lance_py
PY="$LANCE_PY $INTEROP_DIR/lance_py.py"

tree_hash() { (cd "$1" && find . -type f ! -name .brid.lock -exec sha256sum {} + | sort); }
# descriptors TABLE: every row's Managed descriptor (id, kind, uri, position, size)
descriptors() { "$LANCE_PY" - "$1" <<'PY'
import lance, sys
t = lance.dataset(sys.argv[1]).to_table(columns=["id", "blob"])
for i, b in sorted(zip(t["id"].to_pylist(), t["blob"].to_pylist()), key=lambda r: r[0]):
    if b and b["kind"] in (4, 5): print(i, b["kind"], b["blob_uri"], b["position"], b["size"])
PY
}
report() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d[sys.argv[2]])' "$@"; }

$PY make --writer lance14 switchonly="$TMPD/src/switchonly.lance" manageddel="$TMPD/src/manageddel.lance" >"$TMPD/made.json"
grep -q '"error"' "$TMPD/made.json" && fail "pylance could not write the tables: $(cat "$TMPD/made.json")"

# 1. a table pylance switched to Managed, its old values not yet adopted
s=$TMPD/switched.lance
cp -a "$TMPD/src/switchonly.lance" "$s"
want=$(lance14_rows "$s")
lance_copy=$TMPD/switched-lance.lance
cp -a "$s" "$lance_copy"
$PY compact "$lance_copy" >/dev/null
"$BRICTL" compact "$s" --offline --json >"$TMPD/sw.json" || fail "brid cannot compact the switched table"
[ "$(report "$TMPD/sw.json" strategy_used)" = managed ] || fail "the switched table was not compacted as Managed"
[ "$(report "$TMPD/sw.json" payload_bytes_copied)" = 0 ] || fail "adopting copied payload bytes"
[ "$(report "$TMPD/sw.json" managed_adopted)" -gt 0 ] || fail "nothing adopted: $(cat "$TMPD/sw.json")"
[ "$(lance14_rows "$s")" = "$want" ] || fail "pylance reads other rows after brid adopted the sidecars"
descriptors "$s" >"$TMPD/brid.desc"
descriptors "$lance_copy" >"$TMPD/lance.desc"
diff -q "$TMPD/brid.desc" "$TMPD/lance.desc" >/dev/null ||
  fail "brid's adopted descriptors differ from Lance 14's own: $(diff "$TMPD/brid.desc" "$TMPD/lance.desc" | head -5)"
grep -q " data/" "$TMPD/brid.desc" || fail "no adopted sidecar among the descriptors"
"$BRICTL" cleanup "$s" --offline --older-than 0s --grace 0s >/dev/null || fail "cleanup of the switched table failed"
[ "$(lance14_rows "$s")" = "$want" ] || fail "pylance reads other rows after brid's cleanup (an adopted sidecar deleted?)"
while read -r _ _ uri _ _; do [ -f "$s/$uri" ] || fail "cleanup deleted $uri, which a retained descriptor names"; done <"$TMPD/brid.desc"
"$BRICTL" verify "$s" --all-versions >/dev/null || fail "verify: $("$BRICTL" verify "$s" --all-versions | tail -3)"
echo "ok switched: $(report "$TMPD/sw.json" managed_adopted) values adopted, descriptors as Lance 14's own, sidecars kept by cleanup"

# 2. Managed with deletions: the _blobs/ objects brid's cleanup leaves are
# exactly those pylance's compaction + cleanup leave on a copy
m=$TMPD/manageddel.lance
cp -a "$TMPD/src/manageddel.lance" "$m"
want=$(lance14_rows "$m")
cp -a "$m" "$TMPD/mlance.lance"
$PY compact "$TMPD/mlance.lance" >/dev/null && $PY cleanup "$TMPD/mlance.lance" >/dev/null
"$BRICTL" compact "$m" --offline --json >"$TMPD/m.json" || fail "compact of the Managed table failed"
[ "$(report "$TMPD/m.json" payload_bytes_copied)" = 0 ] || fail "a Managed compaction copied payload"
"$BRICTL" cleanup "$m" --offline --older-than 0s --grace 0s --json >"$TMPD/mc.json" || fail "cleanup failed"
[ "$(ls "$m/_blobs")" = "$(ls "$TMPD/mlance.lance/_blobs")" ] ||
  fail "_blobs/ after brid: $(ls "$m/_blobs" | wc -l) objects, after Lance: $(ls "$TMPD/mlance.lance/_blobs" | wc -l)"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["by_kind"]["managed_blob"]["files"] > 0, d' \
  "$TMPD/mc.json" || fail "cleanup deleted no _blobs/ object"
[ "$(lance14_rows "$m")" = "$want" ] || fail "pylance reads other rows after brid's compaction and cleanup"
echo "ok manageddel: $(ls "$m/_blobs" | wc -l) _blobs/ objects left, as Lance's own cleanup leaves"

# 3. a _blobs/ object no version names, younger than the grace period: kept
printf 'in flight' >"$m/_blobs/uploading.blob"
"$BRICTL" cleanup "$m" --offline --older-than 0s >/dev/null || fail "cleanup failed"
[ -f "$m/_blobs/uploading.blob" ] || fail "cleanup deleted a _blobs/ object younger than the grace period"
touch -d 2000-01-01 "$m/_blobs/uploading.blob"
"$BRICTL" cleanup "$m" --offline --older-than 0s --grace 1d >/dev/null || fail "cleanup failed"
[ ! -e "$m/_blobs/uploading.blob" ] || fail "cleanup kept an unnamed _blobs/ object past the grace period"
echo "ok grace: an unnamed _blobs/ object is kept while young, deleted once old"

# 4. a retained version whose data file cannot be read: nothing deleted
d=$TMPD/damaged.lance
cp -a "$TMPD/src/manageddel.lance" "$d"
# a data file the latest (retained) version holds: appends 1 and 3 were deleted whole
f=$d/data/$("$BRICTL" inspect "$d" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["fragments"][0]["files"][0]["path"])')
truncate -s 100 "$f"
before=$(tree_hash "$d")
if "$BRICTL" cleanup "$d" --offline --older-than 0s --grace 0s >"$TMPD/out" 2>&1; then
  fail "cleanup went on although a retained version's data file is damaged"
fi
grep -q "the Managed blobs of version .* cannot be listed" "$TMPD/out" || fail "message: $(cat "$TMPD/out")"
grep -qF "$(basename "$f")" "$TMPD/out" || fail "the message does not name the data file: $(cat "$TMPD/out")"
[ "$before" = "$(tree_hash "$d")" ] || fail "cleanup changed the table although it stopped"
echo "ok damaged: cleanup stops, names $(basename "$f"), deletes nothing"
pass
