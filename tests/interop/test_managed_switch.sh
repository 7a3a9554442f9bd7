#!/usr/bin/env bash
# Switching to Managed blobs and reclaiming their dead space (docs/format/blob.md 8)
# on local tables pylance 14.0.3 wrote (the checks: managed_checks.sh; the same on
# radosgw: test_s3_managed.sh):
#  - compact --strategy managed on plain Blob v2 tables (inline, packed, dedicated, empty
#    and null values; one with deletions): an UpdateConfig version then the compaction,
#    0 payload bytes copied, pylance reads the same values, Lance 13 (LanceDB 0.40)
#    refuses the table by its flag; pylance's cleanup and brid's leave it intact; after
#    more appends pylance's own compaction writes no payload and under 2% of the table
#    (the media kind: payloads mostly packed and dedicated, as bench/ measures);
#  - materialize --managed of a bri compaction: 0 payload bytes, the same values;
#  - 80% of a Managed table's rows deleted: brid's compaction and cleanup leave _blobs/
#    at most 1.3 times the live payload (pylance's own on a copy leaves more: printed).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_lance_py
. "$(dirname "$0")/managed_checks.sh"
OBJECTS=local_objects
local_objects() { (cd "$1" && find . -type f ! -name .brid.lock -printf '%P %s\n'); }

lance_py make --writer lance14 blob="$TMPD/blob.lance" deleted="$TMPD/deleted.lance" media:8="$TMPD/media.lance" \
  managed80="$TMPD/m80.lance" >"$TMPD/made.json"
grep -q '"error"' "$TMPD/made.json" && fail "pylance could not write the tables: $(cat "$TMPD/made.json")"
cp -a "$TMPD/deleted.lance" "$TMPD/bri.lance"
cp -a "$TMPD/m80.lance" "$TMPD/m80-lance.lance"

check_switch "$TMPD/blob.lance"
lance_py read --reader lance13 "$TMPD/blob.lance" | grep -q '"error".*16384' ||
  fail "Lance 13 reads the switched table, or refuses it for another reason"
check_switch "$TMPD/deleted.lance"
check_switch "$TMPD/media.lance"
check_lance_compacts "$TMPD/media.lance"
check_materialize "$TMPD/bri.lance"
check_reclaim "$TMPD/m80.lance"
lance_py compact "$TMPD/m80-lance.lance" >/dev/null && lance_py cleanup "$TMPD/m80-lance.lance" >/dev/null
echo "   pylance's own compact_files() and cleanup_old_versions() on a copy: _blobs/ $(dir_bytes "$TMPD/m80-lance.lance" _blobs) bytes"
pass
