#!/usr/bin/env bash
# Managed blobs on S3 (the test radosgw scripts/run-tests.sh starts): what
# test_managed_switch.sh checks locally, on tables pylance 14.0.3 wrote to the server
# (managed_checks.sh): compact --strategy managed switches a plain table without a
# payload byte copied by brictl or by the server, pylance reads the same values, its
# own compact_files() afterwards writes no payload and under 2% of the table, both
# cleanups keep it; materialize --managed; 80% deleted, then brid's compaction and
# cleanup leave _blobs/ at most 1.3 times the live payload. A Managed table whose
# fragments all have deletions is compacted reading each object once: one GET for the
# manifest, one per data file and one per deletion file (a fragment's two asked for
# together, never twice), and pylance reads the same values. About 25 s.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_s3 s3managed
need_lance_py
. "$(dirname "$0")/managed_checks.sh"
OBJECTS="/usr/bin/python3 $INTEROP_DIR/objects.py"
P=$S3_PREFIX
lance_py make --writer lance14 media:6="$P/media.lance" deleted="$P/deleted.lance" deleted="$P/bri.lance" \
  managed80="$P/m80.lance" mediamanaged:12="$P/mm.lance" >"$TMPD/made.json"
grep -q '"error"' "$TMPD/made.json" && fail "pylance could not write the tables: $(cat "$TMPD/made.json")"

"$BRICTL" inspect "$P/mm.lance" --json >"$TMPD/mm.inspect.json"
read -r files dels < <(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(d["totals"]["data_files"], sum(1 for f in d["fragments"] if f["deletion_file"]))' "$TMPD/mm.inspect.json")
[ "$dels" -ge 10 ] || fail "mm.lance: $dels of its fragments have deletions, expected at least 10"
lance14_rows "$P/mm.lance" >"$TMPD/mm.before"
"$BRICTL" compact "$P/mm.lance" --json >"$TMPD/mm.json" || fail "compact of the Managed table mm.lance failed"
gets=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["storage"]["requests_by_kind"]["get"])' "$TMPD/mm.json")
[ "$gets" -eq $((1 + files + dels)) ] ||
  fail "compacting mm.lance took $gets GETs, expected $((1 + files + dels)): the manifest, $files data files, $dels deletion files"
lance14_rows "$P/mm.lance" >"$TMPD/mm.after"
cmp -s "$TMPD/mm.before" "$TMPD/mm.after" || fail "pylance reads other values in mm.lance after the compaction"
echo "ok mm.lance: $gets GETs for $files data files and $dels deletion files"
check_switch "$P/media.lance"
check_lance_compacts "$P/media.lance"
check_switch "$P/deleted.lance"
check_materialize "$P/bri.lance"
check_reclaim "$P/m80.lance"
pass
