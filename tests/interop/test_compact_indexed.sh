#!/usr/bin/env bash
# COMPACT indexed tables (REALTABLES 2): LanceDB tables of 40 appends x 200 rows
# whose indexes were built part-way through (BITMAP, BTREE, LABEL_LIST, IVF_PQ,
# IVF_FLAT, FTS, IVF_HNSW_SQ, each after a different append; lance_indexed.mjs):
#  - brictl compact (link, copy, bri + materialize) reports every index carried
#    (without stable row ids: by the fragment reuse index, but BTREE and FTS, whose
#    fragments are held back because Lance 13 and 14 lose them in their own next
#    compaction, docs/indexes.md), leaves exactly the held-back fragments and one per
#    bin (with stable row ids: the fragment count of LanceDB's optimize() on an
#    identical copy, +-1), and LanceDB then gives exactly the answers it gave before: vector top-10 ids
#    and distances with and without where, every FTS match with its score, where
#    counts on the indexed columns, listIndices/indexStats, full-scan hashes;
#  - after a LanceDB optimize() and then an append and a delete on both the
#    brid-compacted table and the copy LanceDB optimized itself, the answers
#    are the same on both. Vector answers are compared there with every
#    partition probed, PQ candidates re-ranked and the whole HNSW graph walked:
#    LanceDB's own HNSW builds differ from run to run, and its optimize() of the
#    same rows in another fragment layout can give other PQ codes;
#  - three tables: no stable row ids (the fragment reuse index carries the
#    indexes); no stable row ids with 20% of the rows deleted (rows the fragment
#    reuse index maps to "deleted"; no HNSW index, see the next point); stable
#    row ids with deletions (bitmaps follow the rows);
#  - HNSW over rows deleted since it was built: those fragments are held back
#    and reported, the rest is compacted, and the answers stay the same.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_oracle
IX=$INTEROP_DIR/lance_indexed.mjs

answers() { node "$IX" answers "$1" >"$2" || fail "LanceDB cannot answer on $1"; }
same() { json_eq "$1" "$2" --ignore "version,fragments${4:+,$4}" || fail "$3"; }
frags() { node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).fragments)' "$1"; }
# report FILE EXPECTED_CARRY: every index is carried that way (with the fragment
# reuse index: BTREE and FTS held back instead, holding what they cover), nothing
# else held back, no fragment reuse index version unless EXPECTED is
# fragment_reuse_index (then one unless every rewritten fragment is outside the
# carried indexes); prints the fragments the compaction leaves (held back + bins)
report() {
  node - "$1" "$2" <<'JS' || fail "$1: the compaction report is not as expected"
const fs = require("fs");
const [f, want] = process.argv.slice(2);
const r = JSON.parse(fs.readFileSync(f)), p = r.plan;
const bad = (m) => { console.error(m); process.exit(1); };
if (!p.indices.length) bad("no indices reported");
const heldTypes = want === "fragment_reuse_index" ? ["BTree", "Inverted"] : [];
let holds = 0;
for (const x of p.indices) {
  const held = heldTypes.includes(x.type);
  if (x.carried !== (held ? "held_back" : want) || (!held && x.holds)) bad(`index ${x.name}: ${JSON.stringify(x)}`);
  if (held && x.holds !== x.fragments) bad(`index ${x.name} holds ${x.holds} of its ${x.fragments} fragments`);
  holds = Math.max(holds, x.holds);
}
if (p.held_back.length !== holds) bad(`held back: ${p.held_back} (the widest held index holds ${holds})`);
const fri = p.index_update && p.index_update.fragment_reuse_index;
const carriedCover = Math.max(0, ...p.indices.filter((x) => x.carried === want).map((x) => x.fragments));
if (fri ? want !== "fragment_reuse_index" : want === "fragment_reuse_index" && carriedCover > holds)
  bad(`index_update: ${JSON.stringify(p.index_update)}`);
console.log(p.held_back.length + p.bins.length);
JS
}

run_table() { # NAME STRATEGIES MAKE-OPTIONS... : the whole cycle on one table
  local n=$1 strategies=$2; shift 2
  local d=$TMPD/$n
  mkdir -p "$d"
  node "$IX" make "$d/base.lance" "$@" >/dev/null
  answers "$d/base.lance" "$d/a0.json"
  cp -a "$d/base.lance" "$d/lance.lance"
  node "$IX" optimize "$d/lance.lance" >"$d/lance.opt.json"
  local want_frags; want_frags=$(frags "$d/lance.opt.json")
  local carry=fragment_reuse_index
  case " $* " in *" --stable-row-ids "*) carry=row_ids ;; esac
  for s in $strategies; do
    local c=$d/$s.lance
    cp -a "$d/base.lance" "$c"
    "$BRICTL" compact "$c" --strategy "$s" --json >"$d/$s.report.json" || fail "$n/$s: compact failed"
    local expect; expect=$(report "$d/$s.report.json" "$carry")
    [ "$s" = bri ] && { "$BRICTL" materialize "$c" >/dev/null || fail "$n/bri: materialize failed"; }
    "$BRICTL" verify "$c" >/dev/null || fail "$n/$s: verify: $("$BRICTL" verify "$c")"
    answers "$c" "$d/$s.a1.json"
    same "$d/a0.json" "$d/$s.a1.json" "$n/$s: LanceDB answers differently after the compaction"
    local got; got=$(frags "$d/$s.a1.json")
    if [ "$carry" = row_ids ]; then
      [ $((got - want_frags)) -le 1 ] && [ $((want_frags - got)) -le 1 ] ||
        fail "$n/$s: $got fragments, LanceDB's optimize() reached $want_frags"
    else
      [ "$got" = "$expect" ] || fail "$n/$s: $got fragments, the report says $expect (held back + bins)"
    fi
    echo "ok $n/$s: $got fragments (LanceDB $want_frags), answers unchanged"
  done
  # LanceDB keeps working on brid's output as on its own: optimize, append, delete
  answers "$d/lance.lance" "$d/lance.a2.json"
  node "$IX" optimize "$d/link.lance" >/dev/null
  answers "$d/link.lance" "$d/link.a2.json"
  # LanceDB builds vector indexes differently from run to run: the "exact" answers only
  same "$d/lance.a2.json" "$d/link.a2.json" "$n: answers differ after LanceDB's optimize()" vector,hnsw
  for t in lance link; do
    node "$IX" append "$d/$t.lance" 300 100000 >/dev/null
    node "$IX" delete "$d/$t.lance" "id % 11 = 4" >/dev/null
    answers "$d/$t.lance" "$d/$t.a3.json"
  done
  same "$d/lance.a3.json" "$d/link.a3.json" "$n: answers differ after an append and a delete" vector,hnsw
  echo "ok $n: same answers as LanceDB's own copy after optimize(), append and delete"
}

run_table plain "link copy bri"
run_table deleted "link copy bri" --delete "id % 5 = 1" --skip vhnsw
run_table stable "link copy" --stable-row-ids --delete "id % 5 = 1"

# HNSW over rows deleted after it was built: those fragments stay, reported
d=$TMPD/hnsw
mkdir -p "$d"
node "$IX" make "$d/t.lance" --delete "id % 9 = 2" --skip cat,num,tags,vpq,vflat,text >/dev/null
answers "$d/t.lance" "$d/a0.json"
"$BRICTL" compact "$d/t.lance" --strategy link --json >"$d/report.json" || fail "hnsw: compact failed"
node - "$d/report.json" <<'JS' || fail "hnsw: the report does not hold back the HNSW-covered fragments"
const r = JSON.parse(require("fs").readFileSync(process.argv[2])).plan;
const x = r.indices.find((i) => i.name === "vhnsw_idx");
if (!x || !x.hnsw || x.holds === 0 || r.held_back.length !== x.holds) process.exit(1);
JS
answers "$d/t.lance" "$d/a1.json"
same "$d/a0.json" "$d/a1.json" "hnsw: answers changed"
echo "ok hnsw: $(node -e 'const r=JSON.parse(require("fs").readFileSync(process.argv[1])).plan;console.log(r.held_back.length+" fragments held back, "+r.bins.length+" bins")' "$d/report.json")"
pass
