#!/usr/bin/env bash
# Managed blobs on S3 (the test radosgw scripts/run-tests.sh starts): what
# test_managed_switch.sh checks locally, on tables pylance 14.0.3 wrote to the server
# (managed_checks.sh): compact --strategy managed switches a plain table without a
# payload byte copied by brictl or by the server, pylance reads the same values, its
# own compact_files() afterwards writes no payload and under 2% of the table, both
# cleanups keep it; materialize --managed; 80% deleted, then brid's compaction and
# cleanup leave _blobs/ at most 1.3 times the live payload. About 20 s.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_s3 s3managed
need_lance_py
. "$(dirname "$0")/managed_checks.sh"
OBJECTS="/usr/bin/python3 $INTEROP_DIR/objects.py"
P=$S3_PREFIX
lance_py make --writer lance14 media:6="$P/media.lance" deleted="$P/deleted.lance" deleted="$P/bri.lance" \
  managed80="$P/m80.lance" >"$TMPD/made.json"
grep -q '"error"' "$TMPD/made.json" && fail "pylance could not write the tables: $(cat "$TMPD/made.json")"
check_switch "$P/media.lance"
check_lance_compacts "$P/media.lance"
check_switch "$P/deleted.lance"
check_materialize "$P/bri.lance"
check_reclaim "$P/m80.lance"
pass
