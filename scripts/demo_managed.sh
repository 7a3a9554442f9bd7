#!/usr/bin/env bash
# make demo, the last step: switching a plain Blob v2 table to Lance 14's Managed
# blobs without writing a payload byte (brictl compact --strategy managed, what brid
# does by itself when brid.conf declares min_reader = 14).
#   scripts/demo_managed.sh BUILD        (BUILD: the build directory, e.g. build)
# 1. writes a table of 20 fragments (a packed 100 KiB and a dedicated 300 KiB blob
#    each) with brictl gen, and shows which Lance releases read it, and what
#    declaring min_reader = 14 would make brid do (brictl inspect --min-reader 14);
# 2. compacts it with --strategy managed: the switch (one version, as Lance 14's
#    update_schema_metadata commits it), then the compaction, which adopts every
#    sidecar in place: payload bytes written 0;
# 3. shows which Lance releases read the result: Lance 14 (pylance 14), not Lance 12
#    or 13 (LanceDB 0.39 for Node, LanceDB 0.40 for Python).
# Everything lives in a temporary directory, removed at the end (KEEP=1 keeps it).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:?usage: scripts/demo_managed.sh BUILD}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
BRICTL=$BUILD/bin/brictl
[ -x "$BRICTL" ] || { echo "demo: build brictl first (make)" >&2; exit 1; }
DEMO=$(mktemp -d "${TMPDIR:-/tmp}/brid-demo-managed.XXXXXX")
finish() { if [ "${KEEP:-0}" = 1 ]; then echo "kept $DEMO"; else rm -rf "$DEMO"; fi; }
trap finish EXIT
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
jq_() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
T=$DEMO/media.lance

say "M1. a plain Blob v2 table, and who reads it"
echo "\$ brictl gen $T --fragments 20 --rows 2 --blob-sizes 100K,300K --dedicated-threshold 262144"
"$BRICTL" gen "$T" --fragments 20 --rows 2 --blob-sizes 100K,300K --dedicated-threshold 262144 >/dev/null
payload=$(du -sb --exclude='*.lance' "$T/data" | cut -f1)
echo "$T: 20 fragments, $(numfmt --to=iec "$payload") of blob payload in sidecars"
echo "\$ brictl inspect $T --min-reader 14"
"$BRICTL" inspect "$T" --min-reader 14 | grep -E '^(readers|  compact|declared)'

say "M2. the switch to Managed blobs, and the compaction"
echo "\$ brictl compact $T --strategy managed"
"$BRICTL" compact "$T" --strategy managed --json >"$DEMO/switch.json"
jq_ '"switched at version %d, compacted at version %d: %d -> %d fragments, %d values adopted in place" % (d["managed_switch"]["version"], d["version"], d["fragments_before"], d["fragments_after"], d["managed_adopted"])' <"$DEMO/switch.json"
printf '%-32s %s\n' "payload bytes written" "$(jq_ 'd["payload_bytes_copied"]' <"$DEMO/switch.json")"
printf '%-32s %s\n' "payload bytes left in place" "$(jq_ 'd["payload_bytes_reused"]' <"$DEMO/switch.json")"
printf '%-32s %s\n' "data file bytes written" "$(jq_ 'd["data_bytes_written"]' <"$DEMO/switch.json")"

say "M3. who reads it now"
echo "\$ brictl inspect $T"
"$BRICTL" inspect "$T" | grep -E '^(flags|readers)'
echo "Lance 14 (pylance 14) reads it, and its own compaction no longer copies payload;"
echo "Lance 12 and 13 (LanceDB 0.39 for Node, LanceDB 0.40 for Python) refuse it from now on."
echo "Declare min_reader = 14 in brid.conf once no such reader remains (README, docs/man/brid.conf.5)."
"$BRICTL" verify "$T" >/dev/null && echo "brictl verify: ok"
