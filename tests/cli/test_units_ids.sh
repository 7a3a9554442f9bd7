#!/usr/bin/env bash
# Dangerous units and ids (OPS 9): every duration needs a unit, in brictl and
# in brid (flags and configuration): "--older-than 7" is refused, changes
# nothing, and the message says which units it could mean. `brictl cat`
# names a row by its offset in the table's row order or by a key, which
# still name the same row after a compaction, or by row address / row id
# (stable ids survive, addresses do not, and the error says so); the old
# `--row` (an address) is refused with the choices.
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

# --- rows: offset and key survive a compaction, an address does not -------------
b=$TMP/blobs.lance
"$BRICTL" gen "$b" --fragments 3 --rows 4 --blob-sizes 10,1K,null,100K >/dev/null
sha() { "$BRICTL" cat "$@" | sha256sum | cut -d' ' -f1; }
want=$(sha "$b" --column blob --offset 5)
[ "$want" != "$(sha "$b" --column blob --offset 4)" ] || fail "offsets 4 and 5 read the same blob"
[ "$(sha "$b" --column blob --key id=5)" = "$want" ] || fail "--key id=5 is not offset 5"
[ "$(sha "$b" --column blob --rowaddr $(((1 << 32) + 1)))" = "$want" ] || fail "--rowaddr of row 5"
[ "$(sha "$b" --column blob --rowid $(((1 << 32) + 1)))" = "$want" ] || fail "--rowid without stable row ids"
"$BRICTL" compact "$b" --strategy bri >/dev/null
[ "$(sha "$b" --column blob --offset 5)" = "$want" ] || fail "--offset 5 reads another blob after compaction"
[ "$(sha "$b" --column blob --key id=5)" = "$want" ] || fail "--key id=5 reads another blob after compaction"
bsnap() { (cd "$b" && find . -type f | sort); }
bbefore=$(bsnap)
rc=0; "$BRICTL" cat "$b" --column blob --rowaddr $(((1 << 32) + 1)) >"$TMP/out" 2>"$TMP/err" || rc=$?
[ "$rc" = 2 ] && [ ! -s "$TMP/out" ] || fail "an address from before the compaction: exit $rc"
grep -q "row addresses change when a table is compacted; a row offset or a key does not" "$TMP/err" ||
  fail "the address error does not say why: $(cat "$TMP/err")"
rc=0; "$BRICTL" cat "$b" --column blob --offset 12 2>"$TMP/err" >/dev/null || rc=$?
[ "$rc" = 2 ] && grep -q "row offset 12 does not exist: version 4 has 12 rows (offsets 0..11)" "$TMP/err" ||
  fail "offset beyond the table: exit $rc: $(cat "$TMP/err")"
rc=0; "$BRICTL" cat "$b" --column blob --key id=99 2>"$TMP/err" >/dev/null || rc=$?
[ "$rc" = 2 ] && grep -q "no row of version 4 has id = 99" "$TMP/err" || fail "missing key: exit $rc: $(cat "$TMP/err")"
# --row (an address) is retired; the message names the choices
rc=0; "$BRICTL" cat "$b" --column blob --row 5 2>"$TMP/err" >/dev/null || rc=$?
[ "$rc" = 1 ] && grep -q -- "--row is retired .*--offset N (position in the table's row order), --key COL=VALUE" "$TMP/err" ||
  fail "--row: exit $rc: $(cat "$TMP/err")"
rc=0; "$BRICTL" cat "$b" --column blob --offset 1 --key id=1 2>"$TMP/err" >/dev/null || rc=$?
[ "$rc" = 1 ] && grep -q "say which row with one of --offset N" "$TMP/err" || fail "two row names: exit $rc"
[ "$(bsnap)" = "$bbefore" ] || fail "cat changed the table"
# a key two rows share names no row
"$BRICTL" gen "$b" --rows 2 --start-id 0 --blob-sizes 10 >/dev/null
rc=0; "$BRICTL" cat "$b" --column blob --key id=1 2>"$TMP/err" >/dev/null || rc=$?
[ "$rc" = 2 ] && grep -q "2 rows have id = 1 (row offsets 1, 13); name one by its offset" "$TMP/err" ||
  fail "ambiguous key: exit $rc: $(cat "$TMP/err")"
# the help says which is which
"$BRICTL" help cat >"$TMP/help"
grep -q -- "--offset N .*the row at position N (from 0) in the table's row order" <(tr -s ' \n' ' ' <"$TMP/help") &&
  grep -q -- "--rowaddr ADDR .*changes when the table is compacted" <(tr -s ' \n' ' ' <"$TMP/help") ||
  fail "brictl help cat does not say which row name is which"
# stable row ids survive a compaction
s=$TMP/stable.lance
"$BRICTL" gen "$s" --fragments 3 --rows 4 --blob-sizes 10,1K,null,100K --stable-row-ids >/dev/null
want=$(sha "$s" --column blob --rowid 5)
[ "$(sha "$s" --column blob --offset 5)" = "$want" ] || fail "stable table: row id 5 is not offset 5"
"$BRICTL" compact "$s" --strategy bri >/dev/null
[ "$(sha "$s" --column blob --rowid 5)" = "$want" ] || fail "stable row id 5 reads another blob after compaction"
echo ok
