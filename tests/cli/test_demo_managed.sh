#!/usr/bin/env bash
# make demo's last step (scripts/demo_managed.sh): the switch of a plain table to
# Managed blobs writes no payload byte, and the table is then read by Lance 14 only,
# as brictl inspect says before (--min-reader 14: it would lock out Lance 12 and 13)
# and after.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
"$BRI_SOURCE_DIR/scripts/demo_managed.sh" "$(dirname "$(dirname "$BRICTL")")" >"$TMP/out" 2>&1 ||
  fail "the demo failed: $(tail -5 "$TMP/out")"
grep -q "^declared  min_reader 14: compact (auto) switches the table to Managed blobs and locks out Lance 12 and 13$" "$TMP/out" ||
  fail "the demo does not say what declaring 14 would do: $(cat "$TMP/out")"
grep -q "^payload bytes written  *0$" "$TMP/out" || fail "the switch wrote payload: $(cat "$TMP/out")"
grep -q "values adopted in place" "$TMP/out" || fail "nothing adopted: $(cat "$TMP/out")"
grep -q "^readers   Lance 14 (tested" "$TMP/out" || fail "after the switch: $(grep '^readers' "$TMP/out")"
grep -q "^brictl verify: ok$" "$TMP/out" || fail "verify after the demo: $(tail -3 "$TMP/out")"
echo "PASS: test_demo_managed.sh"
