#!/usr/bin/env bash
# Managed blobs on Azure (the test Azurite scripts/run-tests.sh starts): what
# test_managed_switch.sh checks locally, on tables pylance 14.0.3 wrote there
# (managed_checks.sh): compact --strategy managed switches a plain table without a
# payload byte copied by brictl or the service, pylance reads the same values, its own
# compact_files() afterwards writes no payload and under 2% of the table, both
# cleanups keep it; 80% deleted, then brid's compaction and cleanup leave _blobs/ at
# most 1.3 times the live payload. About 15 s.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_azure azmanaged
need_lance_py
. "$(dirname "$0")/managed_checks.sh"
OBJECTS="/usr/bin/python3 $INTEROP_DIR/objects.py"
P=$AZ_PREFIX
lance_py make --writer lance14 media:4="$P/media.lance" managed80="$P/m80.lance" >"$TMPD/made.json"
grep -q '"error"' "$TMPD/made.json" && fail "pylance could not write the tables: $(cat "$TMPD/made.json")"
check_switch "$P/media.lance"
check_lance_compacts "$P/media.lance"
check_reclaim "$P/m80.lance"
pass
