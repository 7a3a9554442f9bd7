#!/usr/bin/env bash
# COMPACT interop: brictl compact on tables LanceDB wrote.
#  - every strategy keeps every column hash (brictl scan before == after);
#  - link and copy output reads in LanceDB with hashes identical to before;
#    LanceDB refuses bri output with its unsupported-feature error;
#  - compact, LanceDB append, LanceDB delete 10%, compact again: the rows
#    and blob bytes equal LanceDB's view before each compaction, and every
#    BRI entry names a sidecar that holds the bytes (no chains);
#  - LanceDB keeps appending and deleting on top of link output.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

scan() { "$BRICTL" scan "$1" --json; }
same() { # same A B: equal but for version/fragment bookkeeping
  json_eq "$1" "$2" --ignore version,fragments,ms,table,fragmentRows,schemaFields,descriptorKinds
}

make_tables "$TMPD/base" --tables plain,blobs,types,nested,blobnest --small >/dev/null
make_tables "$TMPD/base" --tables plain --plain-name stable --stable-row-ids --fragments 3 >/dev/null
make_tables "$TMPD/base21" --tables plain,types,nested --storage-version 2.1 --small >/dev/null
for t in "$TMPD"/base21/*.lance; do mv "$t" "$TMPD/base/$(basename "$t" .lance)21.lance"; done

for t in "$TMPD"/base/*.lance; do
  name=$(basename "$t" .lance)
  lance_read "$t" --json >"$TMPD/$name.lance0.json"
  scan "$t" >"$TMPD/$name.scan0.json"
  same "$TMPD/$name.lance0.json" "$TMPD/$name.scan0.json" || fail "$name: brictl scan differs from LanceDB before compaction"
  for s in bri link copy; do
    c=$TMPD/$s/$name.lance
    mkdir -p "$TMPD/$s"
    cp -a "$t" "$c"
    "$BRICTL" compact "$c" --strategy "$s" --json >"$TMPD/$s.$name.report.json" || fail "$name: compact --strategy $s failed"
    scan "$c" >"$TMPD/$s.$name.scan1.json"
    same "$TMPD/$name.scan0.json" "$TMPD/$s.$name.scan1.json" || fail "$name/$s: hashes changed"
    frags=$("$BRICTL" inspect "$c" --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).totals.fragments))')
    if [ "$s" = bri ]; then
      if lance_read "$c" --json >"$TMPD/$s.$name.lance1.json" 2>"$TMPD/err"; then
        if grep -q '"blob_reuse_index"' <("$BRICTL" inspect "$c" --json | grep -v '"blob_reuse_index": null'); then
          fail "$name/bri: LanceDB opened a table that carries a BRI"
        fi
      else
        grep -q "cannot be read by this version of Lance" "$TMPD/err" || fail "$name/bri: unexpected LanceDB error: $(cat "$TMPD/err")"
      fi
    else
      lance_read "$c" --json >"$TMPD/$s.$name.lance1.json" || fail "$name/$s: LanceDB cannot read the output"
      same "$TMPD/$name.lance0.json" "$TMPD/$s.$name.lance1.json" || fail "$name/$s: LanceDB reads different values"
    fi
    echo "ok $name/$s ($frags fragments after)"
  done
done

# compact, append, delete 10%, compact again: values kept, no chains. LanceDB
# cannot append to a BRI table, so the first compaction links (LanceDB can
# extend that) and the second uses bri over it.
c=$TMPD/cycle/blobs.lance
mkdir -p "$TMPD/cycle"
cp -a "$TMPD/base/blobs.lance" "$c"
lance_read "$c" --json >"$TMPD/cycle.before1.json"
"$BRICTL" compact "$c" --strategy link >/dev/null
lance_read "$c" --json >"$TMPD/cycle.after1.json"
same "$TMPD/cycle.before1.json" "$TMPD/cycle.after1.json" || fail "cycle: values changed by the first compaction"
lance_ops "$c" append 22 >/dev/null
lance_ops "$c" delete "id % 10 = 3" >/dev/null
lance_read "$c" --json >"$TMPD/cycle.before.json"
"$BRICTL" compact "$c" --strategy bri >/dev/null
scan "$c" >"$TMPD/cycle.after.json"
same "$TMPD/cycle.before.json" "$TMPD/cycle.after.json" || fail "cycle: values changed by the second compaction"
# every BRI entry names an existing sidecar (a chain would name an id that
# only exists in another BRI, never as a file)
"$BRICTL" inspect "$c" --json >"$TMPD/cycle.inspect.json"
node - "$TMPD/cycle.inspect.json" "$c" <<'JS' || fail "cycle: a BRI entry does not name a real sidecar"
const fs = require("fs"), path = require("path");
const [f, root] = process.argv.slice(2);
const ins = JSON.parse(fs.readFileSync(f));
let sources = 0;
for (const fr of ins.fragments) for (const d of fr.files) {
  if (!d.blob_reuse_index) continue;
  for (const s of d.blob_reuse_index.sources) {
    sources++;
    const dir = path.join(root, "data", s.blob_dir);
    if (!fs.existsSync(dir) || fs.readdirSync(dir).length === 0) { console.error("missing", dir); process.exit(1); }
    if (ins.fragments.some((g) => g.files.some((e) => e.path === s.blob_dir + ".lance" && e.blob_reuse_index))) {
      console.error("chain through", s.blob_dir); process.exit(1);
    }
  }
}
if (!sources) { console.error("no BRI after a bri compaction"); process.exit(1); }
JS
# bri over bri: compact, brid appends (LanceDB cannot write to a BRI table),
# brid deletes nothing but appends again, compact again: the second BRI must
# name the original sidecars, never the first output's ids (no chains)
c=$TMPD/chain/t.lance
"$BRICTL" gen "$c" --fragments 4 --rows 50 --blob-sizes 0,1K,20K,100K,null --inline-threshold 512 --dedicated-threshold 65536 >/dev/null
"$BRICTL" compact "$c" --strategy bri >/dev/null
"$BRICTL" gen "$c" --fragments 2 --rows 30 --blob-sizes 2K,80K --inline-threshold 512 --dedicated-threshold 65536 >/dev/null
scan "$c" >"$TMPD/chain.before.json"
"$BRICTL" compact "$c" --strategy bri >/dev/null
scan "$c" >"$TMPD/chain.after.json"
same "$TMPD/chain.before.json" "$TMPD/chain.after.json" || fail "chain: values changed by compacting BRI output"
"$BRICTL" inspect "$c" --json >"$TMPD/chain.inspect.json"
node - "$TMPD/chain.inspect.json" "$c" <<'JS' || fail "chain: a BRI entry goes through another BRI"
const fs = require("fs"), path = require("path");
const [f, root] = process.argv.slice(2);
const ins = JSON.parse(fs.readFileSync(f));
const frags = ins.fragments;
if (frags.length !== 1) { console.error("expected one fragment, got", frags.length); process.exit(1); }
const bri = frags[0].files[0].blob_reuse_index;
if (!bri) { console.error("no BRI"); process.exit(1); }
for (const s of bri.sources) {
  const dir = path.join(root, "data", s.blob_dir);
  if (!fs.existsSync(dir)) { console.error("missing", dir); process.exit(1); }
}
JS
echo "ok bri over bri"

# low-utilization packs are repacked (bri): after LanceDB deletes 90% of the
# rows, each pack holds mostly dead bytes; compaction copies the live ranges
# into the output's own pack instead of reusing the old one
c=$TMPD/repack/t.lance
"$BRICTL" gen "$c" --fragments 3 --rows 40 --blob-sizes 2K,3K,5K --inline-threshold 1024 --dedicated-threshold 65536 >/dev/null
lance_ops "$c" delete "id % 10 != 0" >/dev/null
lance_read "$c" --json >"$TMPD/repack.before.json"
"$BRICTL" compact "$c" --strategy bri --json >"$TMPD/repack.report.json"
node -e 'const r=JSON.parse(require("fs").readFileSync(process.argv[1]));
  const packs=r.plan.packs; if(!packs.length||!packs.every(p=>p.repack&&p.utilization<0.3)) {console.error("packs",packs);process.exit(1)}
  if(!(r.payload_bytes_copied>0)) {console.error("nothing repacked",r);process.exit(1)}' "$TMPD/repack.report.json" || fail "repack: low-utilization packs were not repacked"
scan "$c" >"$TMPD/repack.after.json"
same "$TMPD/repack.before.json" "$TMPD/repack.after.json" || fail "repack: values changed"
echo "ok low-utilization packs repacked"

# LanceDB goes on writing over link output
c=$TMPD/link/blobs.lance
lance_ops "$c" append 11 >/dev/null
lance_ops "$c" delete "id % 7 = 1" >/dev/null
lance_ops "$c" optimize >/dev/null
lance_read "$c" --json >"$TMPD/link.after.json"
scan "$c" >"$TMPD/link.after.scan.json"
same "$TMPD/link.after.json" "$TMPD/link.after.scan.json" || fail "link: brictl and LanceDB disagree after LanceDB wrote on top"
pass
