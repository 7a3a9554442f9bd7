#!/usr/bin/env bash
# Dangerous units and ids (OPS 9): every duration needs a unit, in brictl and
# in brid (flags and configuration): "--older-than 7" is refused, changes
# nothing, and the message says which units it could mean.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
: "${BRID:=$(dirname "$BRICTL")/brid}"
t=$TMP/plain.lance
cp -a "$BRI_SOURCE_DIR/tests/fixtures/tables/plain.lance" "$t"
find "$t" -exec touch -h -d 2020-01-01 {} +
snapshot() { (cd "$t" && find . -type f | sort); }
before=$(snapshot)
refused() { # refused CODE NEEDLE CMD...: exit CODE, NEEDLE on stderr, the table unchanged
  local code=$1 needle=$2 rc=0; shift 2
  "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
  [ "$rc" = "$code" ] || fail "$*: exit $rc, expected $code: $(cat "$TMP/err")"
  grep -qF -- "$needle" "$TMP/err" || fail "$*: '$needle' not in: $(cat "$TMP/err")"
  [ "$(snapshot)" = "$before" ] || fail "$*: the table changed"
}

# --- durations -----------------------------------------------------------------
refused 1 '--older-than needs a duration with a unit' "$BRICTL" cleanup "$t" --older-than 7
refused 1 '--grace needs a duration with a unit' "$BRICTL" cleanup "$t" --grace 30
refused 1 '--older-than needs a duration with a unit' "$BRICTL" cleanup "$t" --older-than 1h30
refused 1 '--older-than needs a duration with a unit' "$BRICTL" cleanup "$t" --older-than 7 --wait
refused 1 '--timeout needs a duration with a unit' "$BRICTL" status --timeout 5
"$BRICTL" cleanup "$t" --older-than 7d --grace 1w --dry-run >/dev/null || fail "--older-than 7d refused"
"$BRICTL" cleanup "$t" --older-than 0 --dry-run | grep -q "would delete 6 files" || fail "--older-than 0 (no unit needed)"
[ "$(snapshot)" = "$before" ] || fail "a dry run changed the table"
# brid: flags and configuration keys alike
mkdir -p "$TMP/root"
refused 78 '--debounce takes a duration' "$BRID" --root "$TMP/root" --debounce 5 --check-config
printf '[daemon]\nroot = %s\n[defaults]\ncleanup_older_than = 7\n' "$TMP/root" >"$TMP/b.conf"
refused 78 'cleanup_older_than: "7" is not a duration' "$BRID" --config "$TMP/b.conf" --check-config
printf '[daemon]\nroot = %s\n[defaults]\ncleanup_older_than = 7d\ncleanup_grace = 0\n' "$TMP/root" >"$TMP/g.conf"
"$BRID" --config "$TMP/g.conf" --check-config >/dev/null 2>&1 || fail "brid refuses cleanup_older_than = 7d"
echo ok
