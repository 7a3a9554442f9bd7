#!/usr/bin/env bash
# DAEMON STRATEGY: the default strategy never leaves a table stock Lance
# refuses (OPS 1).
#  - brid with no strategy configured compacts a blob table LanceDB wrote:
#    the job ran as "auto", used hard links, and LanceDB reads the result
#    with the values it read before;
#  - a table that already carries a Blob Reuse Index stays on bri;
#  - [defaults] strategy = bri is honoured (bri only when chosen);
#  - where the filesystem refuses a link (fs.protected_hardlinks: sidecars
#    owned by another user that the compacting user may not write), auto
#    copies instead, and LanceDB reads the result.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_oracle

FX=$BRI_SOURCE_DIR/tests/fixtures/tables
mkdir -p "$TMPD/root"
cp -a "$FX/blobs.lance" "$TMPD/root/plain.lance"
cp -a "$FX/blobs.lance" "$TMPD/root/bri.lance"
cp -a "$FX/blobs.lance" "$TMPD/root/chosen.lance"
lance_read "$FX/blobs.lance" --json >"$TMPD/before.json"
# a table with a BRI and work left: 4 fragments -> 3
"$BRICTL" compact "$TMPD/root/bri.lance" --strategy bri --target-rows 3 >/dev/null
"$BRICTL" inspect "$TMPD/root/bri.lance" --json | jget 'd["totals"]["fragments"]' | grep -qx 3 ||
  fail "setup: the bri table should have 3 fragments"
printf '[daemon]\nroot = %s\n[defaults]\nauto_compact = no\ncleanup_interval = 0\n[table %s]\nstrategy = bri\n' \
  "$TMPD/root" "$TMPD/root/chosen.lance" >"$TMPD/s.conf"
brid_start s --config "$TMPD/s.conf"

result() { ctl jobs --table "$1" --kind compact --limit 1 --json | jget "d['jobs'][0]['result']['$2']"; }
has_bri() { grep -q '"blob_reuse_index": {' <<<"$("$BRICTL" inspect "$1" --json)"; } # no pipe: grep -q would close it under pipefail

ctl tables "$TMPD/root/plain.lance" --json | jget 'd["policy"]["strategy"]' | grep -qx auto ||
  fail "the built-in strategy is not auto"
ctl compact "$TMPD/root/plain.lance" --wait >/dev/null || fail "compact plain.lance"
[ "$(result "$TMPD/root/plain.lance" strategy)" = auto ] || fail "plain: requested strategy"
[ "$(result "$TMPD/root/plain.lance" strategy_used)" = link ] || fail "plain: strategy used"
[ "$(result "$TMPD/root/plain.lance" links)" -gt 0 ] || fail "plain: no link made"
! has_bri "$TMPD/root/plain.lance" || fail "plain: the default left a BRI"
lance_read "$TMPD/root/plain.lance" --json >"$TMPD/plain.json" 2>"$TMPD/err" ||
  fail "LanceDB cannot read the table brid compacted by default: $(cat "$TMPD/err")"
json_eq "$TMPD/before.json" "$TMPD/plain.json" --ignore version,fragments,ms,table,fragmentRows,schemaFields,descriptorKinds || fail "LanceDB reads other values"
echo "ok default: auto -> link, LanceDB reads the same values"

ctl compact "$TMPD/root/bri.lance" --wait >/dev/null || fail "compact bri.lance"
[ "$(result "$TMPD/root/bri.lance" strategy_used)" = bri ] || fail "a BRI table did not stay on bri"
has_bri "$TMPD/root/bri.lance" || fail "bri.lance lost its BRI"
"$BRICTL" inspect "$TMPD/root/bri.lance" --json | jget 'd["totals"]["fragments"]' | grep -qx 1 || fail "bri.lance not compacted"
ctl compact "$TMPD/root/chosen.lance" --wait >/dev/null || fail "compact chosen.lance"
[ "$(result "$TMPD/root/chosen.lance" strategy)" = bri ] || fail "[table] strategy = bri not honoured"
has_bri "$TMPD/root/chosen.lance" || fail "chosen.lance: no BRI"
brid_stop
echo "ok a table with a BRI stays bri; strategy = bri when chosen"

# links refused: the compacting user (65533) owns the directories but not
# the files (65534, 0644), so fs.protected_hardlinks refuses to link them
if [ "$(cat /proc/sys/fs/protected_hardlinks 2>/dev/null)" = 1 ]; then
  t=$TMPD/other/t.lance
  mkdir -p "$TMPD/other" && cp -a "$FX/blobs.lance" "$t"
  chmod 0755 "$TMPD" "$TMPD/other"
  chown -R 65534:65534 "$t"
  find "$t" -type d -exec chown 65533:65533 {} +
  find "$t" -type f -exec chmod 0644 {} +
  setpriv --reuid=65533 --regid=65533 --clear-groups "$BRICTL" compact "$t" --json >"$TMPD/c.json" 2>"$TMPD/err" ||
    fail "compact where links are refused: $(cat "$TMPD/err")"
  [ "$(jget 'd["strategy_used"]' <"$TMPD/c.json")" = copy ] || fail "links refused: strategy used $(jget 'd["strategy_used"]' <"$TMPD/c.json")"
  [ "$(jget 'd["payload_bytes_copied"] > 0' <"$TMPD/c.json")" = True ] || fail "links refused: nothing copied"
  lance_read "$t" --json >"$TMPD/other.json" || fail "LanceDB cannot read the copied table"
  json_eq "$TMPD/before.json" "$TMPD/other.json" --ignore version,fragments,ms,table,fragmentRows,schemaFields,descriptorKinds || fail "copied table reads other values"
  echo "ok links refused: auto -> copy, LanceDB reads the same values"
else
  echo "fs.protected_hardlinks is off: the links-refused case is not exercised"
fi
pass
