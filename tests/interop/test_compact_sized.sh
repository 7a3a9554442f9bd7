#!/usr/bin/env bash
# COMPACT SIZED interop: the size rule on a table LanceDB wrote, with copy
# (the strategy that copies payload, auto on object stores).
#  - one large fragment (20 rows of 1 MiB) and four small ones (4 rows of
#    50 KiB), target 8 MiB: copy merges the four small ones and leaves the
#    large one untouched (same fragment, same data file, no byte of its
#    payload copied; the report holds it back "at target size"), and
#    LanceDB reads identical values (column hashes, lance_read.mjs);
#  - LanceDB deletes 1 of its 20 rows (5%, below the 10% threshold): it
#    stays untouched;
#  - LanceDB deletes 2 more (15%): the next copy compaction rewrites it
#    (deleted rows dropped), and LanceDB reads identical values again;
#  - bri and link, which copy no payload, count its data file only: the
#    same table compacts to one fragment (dry run).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_oracle

same() { json_eq "$1" "$2" --ignore version,fragments,ms,table,fragmentRows,schemaFields,descriptorKinds,deletionFiles; }
jf() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const d=JSON.parse(s);console.log(eval(process.argv[1]))})' "$1"; }
# large_files: the id and data files of the fragment holding the large rows (id 0)
large_files() { "$BRICTL" inspect "$T" --json | jf 'JSON.stringify(d.fragments.filter(f=>f.files.length)[0].files.map(x=>x.path))'; }

make_tables "$TMPD" --tables blobs --blob-batches 1:20:1M,4:4:50K --blob-delete "" >/dev/null
T=$TMPD/blobs.lance
[ "$("$BRICTL" inspect "$T" --json | jf 'd.totals.fragments')" = 5 ] || fail "the table is not 5 fragments"
large=$(large_files)
lance_read "$T" --json >"$TMPD/before.json"

# bri and link count data files only: every fragment is small
for s in bri link; do
  "$BRICTL" compact "$T" --strategy $s --target-bytes 8M --dry-run --json >"$TMPD/$s.json" || fail "dry run $s"
  [ "$(jf 'd.fragments_rewritten + " " + d.plan.held_back.length' <"$TMPD/$s.json")" = "5 0" ] ||
    fail "$s: not every fragment merges: $(jf 'JSON.stringify(d.plan)' <"$TMPD/$s.json")"
done

# copy: the large fragment is at target size
"$BRICTL" compact "$T" --strategy copy --target-bytes 8M --json >"$TMPD/c1.json" || fail "compact copy failed"
[ "$(jf 'd.fragments_before + " " + d.fragments_rewritten + " " + d.fragments_after' <"$TMPD/c1.json")" = "5 4 2" ] ||
  fail "copy: $(jf 'JSON.stringify([d.fragments_before, d.fragments_rewritten, d.fragments_after, d.plan.held_back])' <"$TMPD/c1.json")"
[ "$(jf 'JSON.stringify(d.plan.held_back.map(h=>[h.fragment, h.reason]))' <"$TMPD/c1.json")" = '[[0,"at target size"]]' ] ||
  fail "copy: held back: $(jf 'JSON.stringify(d.plan.held_back)' <"$TMPD/c1.json")"
[ "$(jf 'd.payload_bytes_copied < 1048576' <"$TMPD/c1.json")" = true ] ||
  fail "copy copied $(jf 'd.payload_bytes_copied' <"$TMPD/c1.json") payload bytes: the large fragment's too"
[ "$(large_files)" = "$large" ] || fail "the large fragment's data file changed: $(large_files), was $large"
lance_read "$T" --json >"$TMPD/after1.json" || fail "LanceDB cannot read the compacted table"
same "$TMPD/before.json" "$TMPD/after1.json" || fail "LanceDB reads other values after copy"
echo "ok copy merged the 4 small fragments, left the large one ($large) untouched"

# deletions below the threshold: still at target size
lance_ops "$T" delete "id = 3" >/dev/null
lance_read "$T" --json >"$TMPD/before2.json"
"$BRICTL" compact "$T" --strategy copy --target-bytes 8M --json >"$TMPD/c2.json" || fail "compact copy (5% deleted) failed"
[ "$(jf 'd.version' <"$TMPD/c2.json")" = 0 ] || fail "5% deleted: the large fragment was rewritten"
[ "$(large_files)" = "$large" ] || fail "5% deleted: the large fragment's data file changed"

# past the threshold: rewritten
lance_ops "$T" delete "id = 5 OR id = 7" >/dev/null
lance_read "$T" --json >"$TMPD/before3.json"
"$BRICTL" compact "$T" --strategy copy --target-bytes 8M --json >"$TMPD/c3.json" || fail "compact copy (15% deleted) failed"
[ "$(jf 'd.version > 0 && d.plan.held_back.length === 0 && d.plan.bins.some(b=>b.fragments.includes(0))' <"$TMPD/c3.json")" = true ] ||
  fail "15% deleted: the large fragment was not rewritten: $(jf 'JSON.stringify(d.plan)' <"$TMPD/c3.json")"
[ "$(large_files)" != "$large" ] || fail "15% deleted: the large fragment's data file is still there"
[ "$(jf 'd.payload_bytes_copied >= 17 * 1048576' <"$TMPD/c3.json")" = true ] ||
  fail "15% deleted: $(jf 'd.payload_bytes_copied' <"$TMPD/c3.json") payload bytes copied, 17 MiB live"
lance_read "$T" --json >"$TMPD/after3.json" || fail "LanceDB cannot read the table after the rewrite"
same "$TMPD/before3.json" "$TMPD/after3.json" || fail "LanceDB reads other values after the rewrite"
"$BRICTL" verify "$T" --all-versions >/dev/null || fail "verify --all-versions"
echo "ok 15% deleted: the large fragment rewritten, LanceDB reads the same"
pass
