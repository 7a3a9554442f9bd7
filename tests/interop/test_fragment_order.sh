#!/usr/bin/env bash
# FRAGMENT ORDER interop (REALTABLES 1): every manifest brid writes lists its
# fragments in id order, as LanceDB's own commits do; LanceDB's delete()
# builds a sorted row-address map from that list and failed with "integers
# are ordered up to the 0th element" on brid's old output. Two cases:
#  - a compaction that leaves a fragment alone in the middle: 10 x 100 rows,
#    3000, 10 x 100, compacted with --target-rows 1000 (was [21, 10, 22]);
#  - a LanceDB append that lands while brid compacts (failpoint delay before
#    the commit), so brid rebases over it (was [new, appended...]).
# In both, brictl verify passes (it checks Lance's invariants, and the
# manifests written before the fix fail it), LanceDB's delete() succeeds, and
# LanceDB answers exactly as on an uncompacted copy that got the same writes.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_oracle

ids() { "$BRICTL" inspect "$1" --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).fragments.map(f=>f.id).join(",")))'; }
sorted() { node -e 'const v=process.argv[1].split(",").map(Number);process.exit(v.every((x,i)=>!i||v[i-1]<x)?0:1)' "$1"; }
same() { json_eq "$1" "$2" --ignore version,fragments,ms,table,fragmentRows,schemaFields; }

# case 1: a fragment too large to merge sits between two runs of small ones
t=$TMPD/a/plain.lance
make_tables "$TMPD/a" --tables plain --fragments 10 --rows 100 --plain-delete "" >/dev/null
lance_ops "$t" append 3000 >/dev/null
lance_ops "$t" append 100 --times 10 >/dev/null
mkdir -p "$TMPD/ctl-a" && cp -a "$t" "$TMPD/ctl-a/plain.lance"
"$BRICTL" compact "$t" --strategy link --target-rows 1000 >/dev/null
order=$(ids "$t")
[ "$order" = "10,21,22" ] || fail "case 1: fragments listed as [$order], Lance lists [10,21,22]"
"$BRICTL" verify "$t" --all-versions >"$TMPD/verify" || fail "case 1: verify: $(cat "$TMPD/verify")"
for c in "$t" "$TMPD/ctl-a/plain.lance"; do
  lance_ops "$c" delete "id % 13 = 1" >"$TMPD/del.json" 2>"$TMPD/err" || fail "case 1: LanceDB delete() failed on $c: $(cat "$TMPD/err")"
done
lance_read "$t" --json >"$TMPD/a.json"
lance_read "$TMPD/ctl-a/plain.lance" --json >"$TMPD/control-a.json"
same "$TMPD/control-a.json" "$TMPD/a.json" || fail "case 1: LanceDB reads the compacted table differently"
echo "ok case 1: [$order], delete() and answers as on the uncompacted copy"

# case 2: LanceDB appends while brid waits before its commit
t=$TMPD/b/plain.lance
make_tables "$TMPD/b" --tables plain --fragments 6 --rows 100 --plain-delete "" >/dev/null
lance_ops "$t" append 3000 >/dev/null
lance_ops "$t" append 100 >/dev/null
mkdir -p "$TMPD/ctl-b" && cp -a "$t" "$TMPD/ctl-b/plain.lance"
BRI_FAILPOINTS=compact.before_commit=delay:4000 "$BRICTL" compact "$t" --strategy link --target-rows 1000 \
  >"$TMPD/compact.out" 2>&1 &
compactor=$!
sleep 1.5
lance_ops "$t" append 50 >/dev/null
wait $compactor || fail "case 2: compact failed: $(cat "$TMPD/compact.out")"
grep -q "version 8 -> 10" "$TMPD/compact.out" || fail "case 2: brid did not rebase over the append: $(cat "$TMPD/compact.out")"
order=$(ids "$t")
sorted "$order" || fail "case 2: fragments listed as [$order]"
"$BRICTL" verify "$t" --all-versions >"$TMPD/verify" || fail "case 2: verify: $(cat "$TMPD/verify")"
lance_ops "$TMPD/ctl-b/plain.lance" append 50 >/dev/null
for c in "$t" "$TMPD/ctl-b/plain.lance"; do
  lance_ops "$c" delete "id % 13 = 1" >/dev/null 2>"$TMPD/err" || fail "case 2: LanceDB delete() failed on $c: $(cat "$TMPD/err")"
done
lance_read "$t" --json >"$TMPD/b.json"
lance_read "$TMPD/ctl-b/plain.lance" --json >"$TMPD/control-b.json"
same "$TMPD/control-b.json" "$TMPD/b.json" || fail "case 2: LanceDB reads the compacted table differently"
echo "ok case 2: [$order] after rebasing over a concurrent append"
pass
