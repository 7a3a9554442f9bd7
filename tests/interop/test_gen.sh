#!/usr/bin/env bash
# WRITE interop: tables brid writes itself (brictl gen) read back in LanceDB
# with the hashes brictl scan computes (typed columns with nulls, a list,
# Blob v2 values of all three storage kinds, 2.1 and 2.2, stable row ids);
# LanceDB appends to, deletes from and optimizes a table whose latest
# version brid committed; and a commit race between brid and LanceDB always
# leaves one winner per version, a conflict for brid when it loses, and no
# overwritten file.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

same() { json_eq "$1" "$2" --ignore ms,table,fragmentRows,schemaFields; }
check_table() { # check_table TABLE LABEL
  lance_read "$1" --json >"$TMPD/l.json" || fail "$2: LanceDB cannot read it"
  "$BRICTL" scan "$1" --json >"$TMPD/s.json" || fail "$2: brictl scan failed"
  same "$TMPD/l.json" "$TMPD/s.json" || fail "$2: LanceDB and brictl disagree"
}

# 2.2 with blobs: inline (<= 512 B), packed (<= 64 KiB), dedicated, empty, null
t=$TMPD/gen22.lance
"$BRICTL" gen "$t" --fragments 3 --rows 400 --blob-sizes 0,100,512,2K,64K,70K,null \
  --inline-threshold 512 --dedicated-threshold 65536 >/dev/null
"$BRICTL" gen "$t" --fragments 2 --rows 150 --blob-sizes 0,100,512,2K,64K,70K,null \
  --inline-threshold 512 --dedicated-threshold 65536 >/dev/null
check_table "$t" gen22
node -e 'const j=JSON.parse(require("fs").readFileSync(process.argv[1]));const k=j.columns.blob.descriptorKinds;
  if(!(k.kind0>0&&k.kind1>0&&k.kind2>0&&k.null>0)) {console.error("kinds",k);process.exit(1)}
  if(j.rows!==1500) {console.error("rows",j.rows);process.exit(1)}' "$TMPD/l.json" || fail "gen22: expected all blob kinds and 1500 rows"
echo "ok gen 2.2 with blobs"

# 2.1 with stable row ids, no blobs
t=$TMPD/gen21.lance
"$BRICTL" gen "$t" --fragments 2 --rows 3000 --storage-version 2.1 --stable-row-ids >/dev/null
"$BRICTL" gen "$t" --fragments 1 --rows 10 >/dev/null
check_table "$t" gen21
echo "ok gen 2.1 with stable row ids"

# brid extends a table LanceDB created; then LanceDB appends, deletes, optimizes
make_tables "$TMPD" --tables blobs --small >/dev/null
t=$TMPD/blobs.lance
"$BRICTL" gen "$t" --fragments 2 --rows 20 --blob-sizes 0,1K,100K,5M,null >/dev/null
check_table "$t" "blobs+gen"
lance_ops "$t" append 11 >/dev/null
lance_ops "$t" delete "id % 4 = 1" >/dev/null
check_table "$t" "blobs+gen+lance"
lance_ops "$t" optimize >/dev/null
check_table "$t" "blobs+gen+lance+optimize"
"$BRICTL" gen "$t" --fragments 1 --rows 5 --blob-sizes 1K >/dev/null
check_table "$t" "after optimize, brid again"
echo "ok LanceDB writes on top of brid's commits"

# commit race: both write the next version at the same time, many times.
# A table LanceDB created (so both can append to it); brid's rows get ids of
# their own so that the key order is unambiguous.
make_tables "$TMPD/racedir" --tables blobs --small >/dev/null
t=$TMPD/racedir/blobs.lance
rows0=$("$BRICTL" scan "$t" --json --no-blob-bytes | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).rows))')
brid_ok=0 brid_lost=0
for i in $(seq 1 15); do
  # two brid writers (fast to start, so they often collide) and LanceDB
  "$BRICTL" gen "$t" --rows 10 --blob-sizes 1K --start-id $((1000000 + i * 100)) --no-retry >/dev/null 2>"$TMPD/race1.err" & p1=$!
  "$BRICTL" gen "$t" --rows 10 --blob-sizes 1K --start-id $((1000050 + i * 100)) --no-retry >/dev/null 2>"$TMPD/race2.err" & p3=$!
  lance_ops "$t" append 3 --kind blobs --start $((2000000 + i * 12)) >/dev/null 2>&1 & p2=$!
  set +e; wait $p1; r1=$?; wait $p3; r3=$?; wait $p2; r2=$?; set -e
  for r in "$r1:$TMPD/race1.err" "$r3:$TMPD/race2.err"; do
    case ${r%%:*} in 0) brid_ok=$((brid_ok+1));; 3) brid_lost=$((brid_lost+1)); grep -q "conflict" "${r#*:}" || fail "race: exit 3 without a conflict message";;
      *) fail "race $i: brictl gen exit ${r%%:*}: $(cat "${r#*:}")";; esac
  done
  [ $r2 -eq 0 ] || fail "race $i: LanceDB append failed"
done
node - "$t" <<'JS' || fail "race: versions or transactions are inconsistent"
// every version has one manifest whose embedded transaction is byte-identical
// to its .txn file: an overwritten manifest would break that pairing
const fs = require("fs"), path = require("path");
const root = process.argv[2];
const names = fs.readdirSync(path.join(root, "_versions")).filter((n) => n.endsWith(".manifest"));
const seen = new Set();
for (const n of names) {
  const b = fs.readFileSync(path.join(root, "_versions", n));
  const pos = Number(b.readBigUInt64LE(b.length - 16));
  const txnLen = b.readUInt32LE(0);
  const txn = b.subarray(4, 4 + txnLen);
  const m = b.subarray(pos + 4, b.length - 16);
  const txnFiles = fs.readdirSync(path.join(root, "_transactions"));
  const match = txnFiles.filter((f) => fs.readFileSync(path.join(root, "_transactions", f)).equals(txn));
  if (match.length !== 1) { console.error(n, "embedded transaction matches", match.length, "files"); process.exit(1); }
  const v = 18446744073709551615n - BigInt(n.slice(0, 20));
  if (seen.has(v)) { console.error("version", v, "twice"); process.exit(1); }
  seen.add(v);
  void m;
}
JS
rows=$("$BRICTL" scan "$t" --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).rows))')
want=$((rows0 + 10 * brid_ok + 3 * 15))
[ "$rows" -eq "$want" ] || fail "race: $rows rows, expected $want ($brid_ok brid commits won, $brid_lost lost)"
check_table "$t" race
echo "ok commit race: brid won $brid_ok, lost $brid_lost (conflict reported), LanceDB committed all 15"
pass
