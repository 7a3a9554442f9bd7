#!/usr/bin/env bash
# READ interop: brid reads what Lance reads, byte for byte.
#
# For every kind of table the LanceDB generator writes during this run (plain, blobs,
# encodings, types, nested, blobnest, extras, largelist; storage versions 2.2 and 2.1;
# stable row ids; deletions stored as .arrow and as .bin), `brictl scan --json` must
# equal `lance_read --json` (tests/interop/lance_read.mjs on LanceDB 0.39.0) on the
# table, version, row counts, key, schema strings and every column's type, null count
# and SHA-256 (blob columns: payload hash, descriptor kinds, payload bytes). The same
# holds with --key "" (scan order), a string key with ties, an older --version, and
# --no-blob-bytes. Then `brictl cat` must print, for every row of the blob columns
# (top level and struct-nested, plus a stable-row-id table) named by its address, its
# _rowid and its offset, the bytes LanceDB's fetchBlobs returns, and refuse null,
# deleted and missing rows with exit code 2.
. "$(dirname "$0")/lib.sh"
need_oracle
[ -x "$BRICTL" ] || fail "no brictl at $BRICTL"

IGNORE=ms,fragmentRows,schemaFields
n_scans=0

# compare NAME TABLE [ARGS...]: brictl scan and lance_read agree with ARGS.
compare() {
  local name=$1 table=$2; shift 2
  local a="$TMPD/$name.brictl.json" b="$TMPD/$name.lance.json"
  "$BRICTL" scan "$table" --json "$@" >"$a" 2>"$TMPD/err" ||
    fail "brictl scan $name $*: $(cat "$TMPD/err")"
  lance_read "$table" --json "$@" >"$b" 2>"$TMPD/err" ||
    fail "lance_read $name $*: $(head -c 600 "$TMPD/err")"
  json_eq "$a" "$b" --ignore "$IGNORE" || fail "scan of $name ($*) differs from LanceDB"
  n_scans=$((n_scans + 1))
}

# --- tables -------------------------------------------------------------------
V22=$TMPD/v22 V21=$TMPD/v21 ST=$TMPD/stable DB=$TMPD/delbin
make_tables "$V22" --tables all --small --blob-batches 2:mixed >"$TMPD/v22.json"
make_tables "$V21" --tables plain,encodings,types,nested,largelist --small \
  --storage-version 2.1 >"$TMPD/v21.json"
make_tables "$ST" --tables plain,blobs --small --stable-row-ids --blob-batches 2:mixed \
  >"$TMPD/stable.json"
# .bin deletion files: Lance switches from .arrow to a roaring bitmap at 5000 deletions
make_tables "$DB" --tables plain,types --rows 12000 --fragments 2 \
  --plain-delete "id % 2 = 0" --types-rows 6000 --types-fragments 2 \
  --types-delete "id % 3 = 1" >"$TMPD/delbin.json"
node -e '
const s = JSON.parse(require("fs").readFileSync(process.argv[1]));
const d = s.tables.plain.deletionFiles;
if (!(d.bin > 0)) { console.error("expected .bin deletion files, got " + JSON.stringify(d)); process.exit(1); }
' "$TMPD/delbin.json" || fail "the generator wrote no .bin deletion file"

for t in plain blobs encodings types nested blobnest extras largelist; do
  compare "v22-$t" "$V22/$t.lance"
done
for t in plain encodings types nested largelist; do compare "v21-$t" "$V21/$t.lance"; done
for t in plain blobs; do compare "stable-$t" "$ST/$t.lance"; done
for t in plain types; do compare "delbin-$t" "$DB/$t.lance"; done

# --- options ------------------------------------------------------------------
compare v22-plain-scanorder "$V22/plain.lance" --key ""
compare v22-nested-scanorder "$V22/nested.lance" --key ""
compare v22-plain-keycat "$V22/plain.lance" --key cat          # 5 values: ties keep scan order
compare v22-types-keycat "$V22/types.lance" --key cat         # utf8, low cardinality
compare v22-types-keyu64 "$V22/types.lance" --key u64         # nulls sort as 0, like JS
compare v22-types-keyts "$V22/types.lance" --key ts_ns
# Not compared: string keys with nulls and float keys with NaN. The oracle sorts with
# JavaScript's < , which is not a consistent order there (null vs "a" and NaN vs 1 are
# "equal" both ways), so its row order depends on V8's sort internals; brictl puts
# null strings first and NaN last.
compare v22-plain-v2 "$V22/plain.lance" --version 2
compare v22-blobs-nobytes "$V22/blobs.lance" --no-blob-bytes
compare v22-blobnest-nobytes "$V22/blobnest.lance" --no-blob-bytes
compare stable-blobs-scanorder "$ST/blobs.lance" --key ""

# the text form is the oracle's text form
"$BRICTL" scan "$V22/blobs.lance" >"$TMPD/a.txt" || fail "brictl scan (text) failed"
lance_read "$V22/blobs.lance" >"$TMPD/b.txt" || fail "lance_read (text) failed"
diff "$TMPD/a.txt" "$TMPD/b.txt" >&2 || fail "text output differs"

# --- cat ----------------------------------------------------------------------
# cat_all TABLE COL: every visible row's blob through brictl cat equals fetchBlobs,
# the row named by its address, its LanceDB _rowid and its offset (the line number of
# lance_blob's scan-order listing).
cat_all() {
  local table=$1 col=$2 n=0 nulls=0 off=-1
  node "$INTEROP_DIR/lance_blob.mjs" "$table" "$col" --all >"$TMPD/blobs.txt" ||
    fail "lance_blob.mjs $table $col failed"
  while read -r addr sha len rowid; do
    off=$((off + 1))
    if [ "$sha" = null ]; then
      local rc=0
      "$BRICTL" cat "$table" --column "$col" --rowaddr "$addr" >"$TMPD/out" 2>"$TMPD/err" || rc=$?
      [ "$rc" = 2 ] && [ ! -s "$TMPD/out" ] ||
        fail "cat $col row $addr: LanceDB says null, brictl exited $rc with $(wc -c <"$TMPD/out") bytes"
      grep -q "is null" "$TMPD/err" || fail "cat $col row $addr: $(cat "$TMPD/err")"
      nulls=$((nulls + 1))
      continue
    fi
    local how
    for how in "--rowaddr $addr" "--rowid $rowid" "--offset $off"; do
      # shellcheck disable=SC2086
      "$BRICTL" cat "$table" --column "$col" $how >"$TMPD/out" 2>"$TMPD/err" ||
        fail "cat $col $how: $(cat "$TMPD/err")"
      local got; got=$(sha256sum <"$TMPD/out" | cut -d' ' -f1)
      [ "$got" = "$sha" ] || fail "cat $table $col $how: sha256 $got, LanceDB $sha ($len bytes)"
    done
    n=$((n + 1))
  done <"$TMPD/blobs.txt"
  [ "$n" -gt 0 ] || fail "no blobs compared in $table $col"
  echo "cat $table $col: $n payloads (by address, row id and offset) and $nulls nulls match LanceDB"
}
cat_all "$V22/blobs.lance" blob
cat_all "$V22/blobnest.lance" blob
cat_all "$V22/blobnest.lance" st.b
cat_all "$ST/blobs.lance" blob

# refusals: a deleted row (id 2 is deleted by the default --blob-delete), a missing
# fragment, a list-nested blob, a non-blob column; usage errors exit 1
expect_rc() {
  local want=$1 needle=$2; shift 2
  local rc=0
  "$BRICTL" "$@" >/dev/null 2>"$TMPD/err" || rc=$?
  [ "$rc" = "$want" ] || fail "brictl $* exited $rc, expected $want: $(cat "$TMPD/err")"
  grep -q -- "$needle" "$TMPD/err" || fail "brictl $*: '$needle' not in: $(cat "$TMPD/err")"
}
expect_rc 2 "is deleted" cat "$V22/blobs.lance" --column blob --rowaddr 2
expect_rc 2 "has no fragment 77" cat "$V22/blobs.lance" --column blob --rowaddr $((77 << 32))
expect_rc 2 "does not exist" cat "$V22/blobs.lance" --column blob --rowaddr 4000
expect_rc 2 "structs only" cat "$V22/blobnest.lance" --column lb.item --offset 0
expect_rc 2 "neither a Blob v2 nor a binary" cat "$V22/blobs.lance" --column id --offset 0
expect_rc 2 "has no column nope" cat "$V22/blobs.lance" --column nope --offset 0
expect_rc 1 "say which row" cat "$V22/blobs.lance" --column blob
expect_rc 1 "unknown option" scan "$V22/blobs.lance" --bogus
expect_rc 2 "no top-level column \"nope\"" scan "$V22/blobs.lance" --key nope
expect_rc 2 "has Arrow type" scan "$V22/blobs.lance" --key blob

echo "$n_scans scans match LanceDB"
pass
