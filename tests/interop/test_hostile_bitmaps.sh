#!/usr/bin/env bash
# Hostile index bitmaps in LanceDB-written tables: brictl refuses, names the
# manifest and what is wrong, and changes nothing on disk (a hash of every
# file's name and bytes is the same before and after each command).
#  - a LanceDB table with a BITMAP and a BTREE index (lance_indexed.mjs): the
#    BTREE's IndexMetadata.fragment_bitmap given a run past 65535 (same
#    length, so the manifest's offsets still hold): inspect, compact, verify;
#  - the same table without its BTREE (which holds its fragments back,
#    docs/indexes.md) compacted by brid (a fragment reuse index): the FRI
#    entry's fragment_bitmap with a cardinality that lies: inspect, compact,
#    verify; its changed_row_addrs treemap with a run past 65535: compact and
#    verify (inspect lists indexes without reading FRI details).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_oracle
IX=$INTEROP_DIR/lance_indexed.mjs

# Every name and byte of the table but the lock's file: a job that writes
# takes its OFD lock on .brid.lock (docs/s3.md), an empty file left for the
# next one.
tree_hash() { (cd "$1" && find . ! -name .brid.lock -print0 | sort -z | xargs -0 -n 64 sh -c \
  'for f; do if [ -f "$f" ]; then sha256sum "$f"; else echo "dir $f"; fi; done' sh) | sha256sum; }
latest() { ls "$1"/_versions/*.manifest | sort | head -1; } # names count down from 2^64-1

# patch FILE PYTHON: edit the manifest's bytes b (a bytearray) in place
patch() {
  python3 - "$1" "$2" <<'PY' || fail "cannot patch $1"
import sys
path, code = sys.argv[1], sys.argv[2]
b = bytearray(open(path, "rb").read())
def one(pattern, start=0):
    i = b.find(pattern, start)
    assert i >= 0 and b.find(pattern, i + 1) < 0, f"{pattern.hex()} not found exactly once"
    return i
exec(code)
open(path, "wb").write(b)
PY
}

# refuses TABLE NEEDLE CMD...: CMD fails, its output names the latest manifest
# and NEEDLE, and the table is unchanged
refuses() {
  local t=$1 needle=$2; shift 2
  local before after m; before=$(tree_hash "$t"); m=$(latest "$t")
  if "$BRICTL" "$@" "$t" >"$TMPD/out" 2>&1; then fail "brictl $* accepted $t: $(tail -3 "$TMPD/out")"; fi
  grep -qF "$m" "$TMPD/out" || fail "brictl $* does not name $m: $(tail -3 "$TMPD/out")"
  grep -qF "$needle" "$TMPD/out" || fail "brictl $* does not say \"$needle\": $(tail -3 "$TMPD/out")"
  after=$(tree_hash "$t")
  [ "$before" = "$after" ] || fail "brictl $* changed $t"
}

node "$IX" make "$TMPD/base.lance" --appends 12 --rows 20 --skip vpq,vflat,text,vhnsw,tags >/dev/null
"$BRICTL" verify "$TMPD/base.lance" >/dev/null || fail "the LanceDB table does not verify"

# the BTREE (num_idx, built before append 10) covers fragments 0-9: LanceDB
# writes one run container {start 0, length-1 9}; its start becomes 65528
t=$TMPD/btree.lance
cp -a "$TMPD/base.lance" "$t"
patch "$(latest "$t")" '
i = one(bytes.fromhex("3b3000000100000900010000000900"))
b[i + 11:i + 13] = (65528).to_bytes(2, "little")'
why="index num_idx: fragment_bitmap: offset 11: Roaring run 0 of container 0 (start 65528, length 10) runs past 65535"
refuses "$t" "$why" inspect
refuses "$t" "$why" compact --offline --strategy link
refuses "$t" "$why" compact --offline --strategy copy --dry-run
refuses "$t" "$why" verify

# brid's compaction writes a fragment reuse index (for the BITMAP index: the
# BTREE one holds its fragments back)
c=$TMPD/compacted.lance
node "$IX" make "$c" --appends 12 --rows 20 --skip vpq,vflat,text,vhnsw,tags,num >/dev/null
"$BRICTL" compact "$c" --offline --strategy link --json >"$TMPD/compact.json" || fail "compact failed"
grep -q '"fragment_reuse_index"' "$TMPD/compact.json" || fail "no fragment reuse index written"
"$BRICTL" verify "$c" >/dev/null || fail "the compacted table does not verify"

# the FRI entry's bitmap (the new fragments) claims one value more than it holds
t=$TMPD/fri_bitmap.lance
cp -a "$c" "$t"
patch "$(latest "$t")" '
i = b.find(b"\x3a\x30", one(b"__lance_frag_reuse"))
j = b.find(b"\x3b\x30", one(b"__lance_frag_reuse"))
i = min(x for x in (i, j) if x >= 0)
card = i + (10 if b[i] == 0x3a else 7)
b[card] += 1'
refuses "$t" "index __lance_frag_reuse: fragment_bitmap: offset" inspect
refuses "$t" "index __lance_frag_reuse: fragment_bitmap: offset" compact --offline --strategy link
refuses "$t" "index __lance_frag_reuse: fragment_bitmap: offset" verify

# the surviving rows of old fragment 0 (all 20: one run) start at 65520
t=$TMPD/fri_treemap.lance
cp -a "$c" "$t"
patch "$(latest "$t")" '
i = one(b"\x00\x00\x00\x00\x3b\x30\x00\x00\x01\x00\x00\x13\x00\x01\x00\x00\x00\x13\x00", one(b"__lance_frag_reuse")) + 4
b[i + 11:i + 13] = (65520).to_bytes(2, "little")'
why="bitmap 0 (fragment 0) at offset 12 of the RoaringTreemap: offset 11: Roaring run 0 of container 0 (start 65520, length 20) runs past 65535"
refuses "$t" "$why" compact --offline --strategy link
refuses "$t" "$why" verify

pass
