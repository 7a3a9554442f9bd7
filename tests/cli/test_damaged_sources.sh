#!/usr/bin/env bash
# Damaged sources are refused (docs/reliability.md, "Damaged sources"): on a
# local table made by `brictl gen` (3 fragments of 4 rows: an inline value,
# two values in one pack and a dedicated sidecar each) whose fragment 1 has
#   - its dedicated sidecar truncated to 10 bytes,
#   - its dedicated sidecar deleted,
#   - its pack cut short of its second value's range,
# compact under every strategy (bri, link, copy, auto), materialize (of a
# table compacted with bri first) and clone --deep exit 2 with a message
# naming the table, fragment 1, the row, the sidecar, the bytes expected and
# the bytes there, and leave the table's tree exactly as it was (the lock
# file aside) and no clone behind. Undamaged, each strategy compacts and its
# report counts the bytes of the files: with a pack longer than its values
# (bytes appended), bri and link report the reused files' sizes, copy the
# bytes it copied.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
B=$BRICTL
# per fragment, rows 0..3: inline 512 B, packed 20 KiB and 30 KiB (one
# pack [0, 51200)), dedicated 100 KiB
"$B" gen "$TMP/src" --fragments 3 --rows 4 --blob-sizes 512,20K,30K,100K --inline-threshold 1024 \
  --dedicated-threshold 65536 >/dev/null
# the sidecar directory of fragment 1
dir1=$("$B" inspect "$TMP/src" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
print([f for f in d["fragments"] if f["id"] == 1][0]["files"][0]["sidecars"]["dir"])')
PACK=$dir1/10000000000000000000000000000000.blob
DEDI=$dir1/01000000000000000000000000000000.blob
[ -f "$TMP/src/$PACK" ] && [ -f "$TMP/src/$DEDI" ] || fail "gen made no pack and dedicated sidecar in $dir1"
tree() { (cd "$1" && find . ! -name .brid.lock -printf '%p %s %y\n' | LC_ALL=C sort &&
  find . -type f ! -name .brid.lock -exec sha1sum {} + | LC_ALL=C sort); }

damage() { # damage TABLE KIND: row, expected and actual bytes of the refusal on stdout
  case $2 in
    truncated) truncate -s 10 "$1/$DEDI"; echo "$DEDI 3 expected 102400 bytes, actual 10" ;;
    deleted) rm "$1/$DEDI"; echo "$DEDI 3 expected 102400 bytes, actual 0" ;;
    short-pack) truncate -s 40000 "$1/$PACK"; echo "$PACK 2 expected at least 51200 bytes, actual 40000" ;;
  esac
}
refused() { # refused WHAT TABLE SIDECAR ROW SIZES ERRFILE RC
  [ "$7" = 2 ] || fail "$1: exit $7, expected 2: $(cat "$6")"
  grep -qF "brictl: $2: fragment 1 row $4: sidecar $2/$3 " "$6" || fail "$1: the message does not name table, fragment, row and sidecar: $(cat "$6")"
  grep -qF "($5)" "$6" || fail "$1: the message does not say ($5): $(cat "$6")"
}

# a table carrying a BRI, for materialize: its one fragment's rows 4..7 are
# fragment 1's, whose values it reads from the same sidecars ($dir1)
cp -a "$TMP/src" "$TMP/bri"
"$B" compact "$TMP/bri" --strategy bri >/dev/null || fail "compact --strategy bri of the undamaged table failed"
bfrag=$("$B" inspect "$TMP/bri" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert len(d["fragments"]) == 1 and d["fragments"][0]["files"][0]["blob_reuse_index"], d["fragments"]
print(d["fragments"][0]["id"])') || fail "compact --strategy bri made no one fragment with a BRI"

for kind in truncated deleted short-pack; do
  for s in bri link copy auto; do
    rm -rf "$TMP/w" && cp -a "$TMP/src" "$TMP/w"
    read -r side row sizes < <(damage "$TMP/w" $kind)
    before=$(tree "$TMP/w")
    set +e; "$B" compact "$TMP/w" --strategy $s >/dev/null 2>"$TMP/err"; rc=$?; set -e
    refused "compact --strategy $s, $kind sidecar" "$TMP/w" "$side" "$row" "$sizes" "$TMP/err" $rc
    [ "$(tree "$TMP/w")" = "$before" ] || fail "compact --strategy $s, $kind sidecar: the table changed"
  done
  # clone --deep: refused, no clone left behind, the source unchanged
  set +e; "$B" clone "$TMP/w" "$TMP/clone" --deep >/dev/null 2>"$TMP/err"; rc=$?; set -e
  refused "clone --deep, $kind sidecar" "$TMP/w" "$side" "$row" "$sizes" "$TMP/err" $rc
  [ ! -e "$TMP/clone" ] || fail "clone --deep, $kind sidecar: left $(find "$TMP/clone" | head -5)"
  [ "$(tree "$TMP/w")" = "$before" ] || fail "clone --deep, $kind sidecar: the source changed"
done

# materialize of the BRI table: refused the same way, for its fragment
for kind in truncated deleted short-pack; do
  rm -rf "$TMP/m" && cp -a "$TMP/bri" "$TMP/m"
  read -r side row sizes < <(damage "$TMP/m" $kind)
  before=$(tree "$TMP/m")
  set +e; "$B" materialize "$TMP/m" >/dev/null 2>"$TMP/err"; rc=$?; set -e
  [ "$rc" = 2 ] || fail "materialize, $kind sidecar: exit $rc: $(cat "$TMP/err")"
  grep -qF "brictl: $TMP/m: fragment $bfrag row $((4 + row)): sidecar $TMP/m/$side " "$TMP/err" ||
    fail "materialize, $kind sidecar: the message does not name table, fragment, row and sidecar: $(cat "$TMP/err")"
  grep -qF "($sizes)" "$TMP/err" || fail "materialize, $kind sidecar: the message does not say ($sizes): $(cat "$TMP/err")"
  [ "$(tree "$TMP/m")" = "$before" ] || fail "materialize, $kind sidecar: the table changed"
done

# undamaged, with 1000 bytes appended to fragment 1's pack (values still
# inside it): reports count the files' bytes
sidecar_bytes() { find "$1/data" -name '*.blob' -printf '%s\n' | awk '{s += $1} END {print s}'; }
field() { python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
for s in bri link copy auto; do
  rm -rf "$TMP/w" && cp -a "$TMP/src" "$TMP/w"
  head -c 1000 /dev/zero >>"$TMP/w/$dir1/10000000000000000000000000000000.blob"
  files=$(sidecar_bytes "$TMP/w")
  "$B" compact "$TMP/w" --strategy $s --json >"$TMP/rep.json" || fail "compact --strategy $s of the undamaged table failed"
  reused=$(field payload_bytes_reused <"$TMP/rep.json") copied=$(field payload_bytes_copied <"$TMP/rep.json")
  case $s in
    bri | link | auto)
      [ "$reused" = "$files" ] && [ "$copied" = 0 ] ||
        fail "compact --strategy $s: reused $reused, copied $copied; the sidecars hold $files bytes" ;;
    copy)
      # the values' bytes: the 1000 bytes after the pack's last value are no value's
      [ "$copied" = $((files - 1000)) ] && [ "$reused" = 0 ] ||
        fail "compact --strategy copy: copied $copied, reused $reused; the values hold $((files - 1000)) bytes" ;;
  esac
  "$B" verify "$TMP/w" >/dev/null || fail "verify after compact --strategy $s: $("$B" verify "$TMP/w" 2>&1 | head -5)"
done
echo ok
