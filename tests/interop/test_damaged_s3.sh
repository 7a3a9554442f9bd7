#!/usr/bin/env bash
# Damaged sources on S3 are refused (docs/reliability.md, "Damaged
# sources"): a table `brictl gen` writes on the test radosgw (3 fragments of
# 4 rows: an inline value, two values in one pack and a dedicated sidecar
# each), copied by clone --deep for each case, whose fragment 1 has
#   - its dedicated sidecar shortened to 10 bytes,
#   - its dedicated sidecar deleted,
#   - its pack cut short of its second value's range,
# compact under every strategy (bri, copy, auto; link is refused for the
# links S3 does not have, and changes nothing either), materialize (of a
# copy compacted with bri first) and clone --deep exit 2 with a message
# naming the table, fragment, row, sidecar, expected and actual bytes, and
# the listing of the table's objects (keys, sizes, ETags) is what it was;
# the refused clone leaves no object. Undamaged, bri and copy compact with
# reports counting the objects' bytes, and the sizes come from one LIST per
# sidecar directory, not a HEAD per sidecar.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_s3 damaged
P=$S3_PREFIX
B=$BRICTL
OBJ="python3 $BRI_SOURCE_DIR/tests/s3/objects.py"
"$B" gen "$P/src.lance" --fragments 3 --rows 4 --blob-sizes 512,20K,30K,100K --inline-threshold 1024 \
  --dedicated-threshold 65536 >/dev/null || fail "brictl gen on S3 failed"
jf() { python3 -c 'import json,sys
d=json.load(sys.stdin)
for k in sys.argv[1].split("."): d=d[int(k)] if isinstance(d, list) else d[k]
print(d)' "$1"; }
frag1_dir() { "$B" inspect "$1" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
print([f for f in d["fragments"] if f["id"] == 1][0]["files"][0]["sidecars"]["dir"])'; }
dir1=$(frag1_dir "$P/src.lance")
PACK=$dir1/10000000000000000000000000000000.blob
DEDI=$dir1/01000000000000000000000000000000.blob
damage() { # damage TABLE KIND: sidecar, row, expected and actual bytes of the refusal
  case $2 in
    truncated) $OBJ truncate "$1/$DEDI" 10; echo "$DEDI 3 expected 102400 bytes, actual 10" ;;
    deleted) $OBJ rm "$1/$DEDI"; echo "$DEDI 3 expected 102400 bytes, actual 0" ;;
    short-pack) $OBJ truncate "$1/$PACK" 40000; echo "$PACK 2 expected at least 51200 bytes, actual 40000" ;;
  esac
}
refused() { # refused WHAT TABLE FRAGMENT ROW SIDECAR SIZES ERRFILE RC
  [ "$8" = 2 ] || fail "$1: exit $8, expected 2: $(cat "$7")"
  grep -qF "brictl: $2: fragment $3 row $4: sidecar $2/$5 " "$7" ||
    fail "$1: the message does not name table, fragment, row and sidecar: $(cat "$7")"
  grep -qF "($6)" "$7" || fail "$1: the message does not say ($6): $(cat "$7")"
}

# a BRI copy for materialize: its one fragment's rows 4..7 are fragment 1's
"$B" clone "$P/src.lance" "$P/bri.lance" --deep >/dev/null || fail "clone --deep on S3 failed"
"$B" compact "$P/bri.lance" --strategy bri --json >"$TMPD/bri.json" || fail "compact --strategy bri on S3 failed"
bfrag=$("$B" inspect "$P/bri.lance" --json | jf fragments.0.id)

n=0
for kind in truncated deleted short-pack; do
  for s in bri link copy auto; do
    n=$((n + 1)); w=$P/w$n.lance
    "$B" clone "$P/src.lance" "$w" --deep >/dev/null || fail "clone --deep on S3 failed"
    read -r side row sizes < <(damage "$w" $kind)
    $OBJ ls "$w" >"$TMPD/before"
    set +e; "$B" compact "$w" --strategy $s >/dev/null 2>"$TMPD/err"; rc=$?; set -e
    if [ $s = link ]; then # S3 has no links: refused for that first (its first pack)
      [ $rc = 2 ] && grep -q "cannot hard-link" "$TMPD/err" || fail "S3 compact --strategy link: exit $rc: $(cat "$TMPD/err")"
    else
      refused "S3 compact --strategy $s, $kind sidecar" "$w" 1 "$row" "$side" "$sizes" "$TMPD/err" $rc
    fi
    $OBJ ls "$w" | cmp -s - "$TMPD/before" || fail "S3 compact --strategy $s, $kind sidecar: the objects changed"
  done
  set +e; "$B" clone "$w" "$P/clone$n.lance" --deep >/dev/null 2>"$TMPD/err"; rc=$?; set -e
  refused "S3 clone --deep, $kind sidecar" "$w" 1 "$row" "$side" "$sizes" "$TMPD/err" $rc
  [ -z "$($OBJ ls "$P/clone$n.lance")" ] || fail "S3 clone --deep, $kind sidecar: left $($OBJ ls "$P/clone$n.lance" | head -3)"
  $OBJ ls "$w" | cmp -s - "$TMPD/before" || fail "S3 clone --deep, $kind sidecar: the source changed"
  m=$P/m$n.lance
  "$B" clone "$P/bri.lance" "$m" --deep >/dev/null || fail "clone --deep of the BRI table on S3 failed"
  # (the clone keeps the source's directory names, so its BRI reads $dir1)
  read -r side row sizes < <(damage "$m" $kind)
  $OBJ ls "$m" >"$TMPD/before"
  set +e; "$B" materialize "$m" >/dev/null 2>"$TMPD/err"; rc=$?; set -e
  refused "S3 materialize, $kind sidecar" "$m" "$bfrag" $((4 + row)) "$side" "$sizes" "$TMPD/err" $rc
  $OBJ ls "$m" | cmp -s - "$TMPD/before" || fail "S3 materialize, $kind sidecar: the objects changed"
done

# undamaged: the reports count the objects' bytes; sizes from LISTs
sidecars=$($OBJ ls "$P/src.lance/data" | awk '$1 ~ /\.blob$/ {s += $2} END {print s}')
[ "$(jf payload_bytes_reused <"$TMPD/bri.json")" = "$sidecars" ] ||
  fail "S3 bri reused $(jf payload_bytes_reused <"$TMPD/bri.json") bytes; the sidecars hold $sidecars"
# one LIST per sidecar directory (3) besides the version listings, no HEAD per sidecar (6)
heads=$(jf storage.requests_by_kind.head <"$TMPD/bri.json") lists=$(jf storage.requests_by_kind.list <"$TMPD/bri.json")
[ "$heads" -le 1 ] && [ "$lists" -le 5 ] || fail "S3 bri: $heads HEADs and $lists LISTs for 3 sidecar directories"
"$B" clone "$P/src.lance" "$P/copy.lance" --deep >/dev/null || fail "clone --deep on S3 failed"
"$B" compact "$P/copy.lance" --strategy copy --json >"$TMPD/copy.json" || fail "compact --strategy copy on S3 failed"
[ "$(jf payload_bytes_copied <"$TMPD/copy.json")" = "$sidecars" ] ||
  fail "S3 copy copied $(jf payload_bytes_copied <"$TMPD/copy.json") bytes; the sidecars hold $sidecars"
"$B" verify "$P/copy.lance" >/dev/null || fail "verify after S3 compact copy: $("$B" verify "$P/copy.lance" 2>&1 | head -3)"
pass
