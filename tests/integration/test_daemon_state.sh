#!/usr/bin/env bash
# DAEMON STATE: what brid shows is the table's real state (OPS 6).
#  - a table with work and auto_compact = no shows "pending", not "idle";
#  - after a restart an unchanged table shows its real fragment count in
#    `tables` and in brid_table_fragments (the manifest is read again even
#    though the version equals the stored one);
#  - right after a compaction (the job seen as succeeded) `tables` shows the
#    new version, fragments and has_work, not the old ones for a debounce;
#  - a table brid cannot read makes `status` degraded and names it; once
#    readable again, brid is running again.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

FX=$BRI_SOURCE_DIR/tests/fixtures/tables
mkdir -p "$TMPD/root"
cp -a "$FX/blobs.lance" "$TMPD/root/t.lance"
T=$TMPD/root/t.lance
printf '[daemon]\nroot = %s\n[defaults]\nauto_compact = no\ncleanup_interval = 0\n' "$TMPD/root" >"$TMPD/s.conf"
tj() { ctl tables "$T" --json | jget "$1"; }
checked() { [ "$(tj 'd["last_check_at"] is not None')" = True ]; }

brid_start s --config "$TMPD/s.conf" --debounce 1s
wait_until 10 checked || fail "no planner check"
[ "$(tj 'd["fragments"]')" = 4 ] || fail "fragments before: $(tj 'd["fragments"]')"
[ "$(tj 'd["state"]')" = pending ] || fail "a table with work and auto_compact = no shows $(tj 'd["state"]')"
ctl tables | grep -q " pending .*t.lance" || fail "tables does not show pending: $(ctl tables)"
echo "ok auto_compact = no with work: pending"

brid_stop
brid_start s --config "$TMPD/s.conf" --debounce 1s
wait_until 10 checked || fail "no planner check after the restart"
[ "$(tj 'd["fragments"]')" = 4 ] || fail "after a restart: $(tj 'd["fragments"]') fragments, expected 4"
ctl metrics >"$TMPD/m.txt"; grep -q "^brid_table_fragments{table=\"$T\"} 4$" "$TMPD/m.txt" || fail "brid_table_fragments after a restart: $(grep brid_table_fragments "$TMPD/m.txt")"
echo "ok after a restart: 4 fragments in tables and metrics"

ctl compact "$T" --wait --json >"$TMPD/c.json" 2>/dev/null || fail "compact"
V=$(jget 'd["result"]["version"]' <"$TMPD/c.json")
ctl tables "$T" --json >"$TMPD/t.json"
[ "$(jget 'd["latest_version"]' <"$TMPD/t.json")" = "$V" ] || fail "after the compaction: version $(jget 'd["latest_version"]' <"$TMPD/t.json"), committed $V"
[ "$(jget 'd["fragments"]' <"$TMPD/t.json")" = 1 ] || fail "after the compaction: $(jget 'd["fragments"]' <"$TMPD/t.json") fragments"
[ "$(jget 'd["has_work"]' <"$TMPD/t.json")" = False ] || fail "after the compaction: has_work"
[ "$(jget 'd["state"]' <"$TMPD/t.json")" = idle ] || fail "after the compaction: state $(jget 'd["state"]' <"$TMPD/t.json")"
echo "ok after a compaction: version $V, 1 fragment, no work, at once"

# unreadable: a newer manifest that is not one
next=$(python3 -c "print(str(2**64 - 1 - ($V + 1)).zfill(20))")
printf 'not a manifest' >"$T/_versions/$next.manifest"
degraded() { [ "$(ctl status --json | jget 'd["state"]')" = degraded ]; }
wait_until 10 degraded || fail "status with an unreadable table: $(ctl status --json | jget 'd["state"]')"
ctl status --json | jget 'd["unreadable_tables"][0]["table"]' | grep -qx "$T" || fail "status does not name the table"
ctl status >"$TMPD/status.txt"
grep -q "degraded for" "$TMPD/status.txt" && grep -q "^unreadable: $T: " "$TMPD/status.txt" ||
  fail "brictl status: $(cat "$TMPD/status.txt")"
[ "$(tj 'd["state"]')" = unreadable ] || fail "tables: state $(tj 'd["state"]')"
ctl metrics >"$TMPD/m.txt" # (not piped into grep -q: brictl would write into a closed pipe)
grep -q '^brid_tables_unreadable 1$' "$TMPD/m.txt" || fail "metrics: brid_tables_unreadable"
rm "$T/_versions/$next.manifest"
running() { [ "$(ctl status --json | jget 'd["state"]')" = running ]; }
wait_until 10 running || fail "status stays $(ctl status --json | jget 'd["state"]') once the table is readable"
brid_stop
echo "ok an unreadable table: degraded, named; running again once readable"
pass
