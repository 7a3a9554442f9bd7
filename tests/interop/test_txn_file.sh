#!/usr/bin/env bash
# TRANSACTION FILE interop (MANY): brid writes a commit's _transactions/*.txn
# without an fsync, because the manifest embeds the same transaction and
# that embedded copy is the one Lance 12 reads (docs/format/table.md 4); a
# power loss may leave the file short or gone. For each state it may be left
# in (whole, missing, empty, garbage), a LanceDB writer that opened the table
# before brid compacted it must delete rows through that stale handle (its
# commit rebases over brid's Rewrite, reading brid's transaction), read back
# exactly the rows of the same delete on the whole state, and optimize and
# clean up the table; brictl verify finds nothing wrong.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_oracle

make_tables "$TMPD/src" --tables plain --fragments 4 --rows 50 --plain-delete "" >/dev/null
pred="id >= 100 AND id < 110"
rows() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).rows))'; }
for state in whole missing empty garbage; do
  rm -rf "$TMPD/t" && mkdir "$TMPD/t" && cp -a "$TMPD/src/plain.lance" "$TMPD/t/"
  t=$TMPD/t/plain.lance
  # brid's commit is the newest .txn file (compact reads the version before it)
  damage="'$BRICTL' compact '$t' --strategy link >/dev/null && f=\$(ls -t '$t'/_transactions/*.txn | head -1) && "
  case $state in
    whole) damage+=true ;;
    missing) damage+='rm "$f"' ;;
    empty) damage+=': >"$f"' ;;
    garbage) damage+='printf "\010\001garbage" >"$f"' ;;
  esac
  lance_ops "$t" stale-delete "$pred" "$damage" >"$TMPD/del.json" 2>"$TMPD/err" ||
    fail "$state .txn: LanceDB's delete through a handle opened before brid's compaction failed: $(tail -3 "$TMPD/err")"
  node -e 'const r=JSON.parse(require("fs").readFileSync(process.argv[1]));
    if (r.deleted !== 10 || r.version !== r.opened + 2) { console.error(JSON.stringify(r)); process.exit(1); }' "$TMPD/del.json" ||
    fail "$state .txn: the delete did not remove 10 rows at the version after brid's"
  lance_read "$t" --json >"$TMPD/$state.json"
  [ $state = whole ] || json_eq "$TMPD/whole.json" "$TMPD/$state.json" --ignore ms,table ||
    fail "$state .txn: LanceDB reads the table differently than with brid's whole .txn file"
  "$BRICTL" verify "$t" --all-versions >"$TMPD/verify.out" 2>&1 || fail "$state .txn: brictl verify: $(tail -3 "$TMPD/verify.out")"
  lance_ops "$t" optimize --cleanup >"$TMPD/opt.json" 2>"$TMPD/err" || fail "$state .txn: LanceDB's optimize: $(tail -3 "$TMPD/err")"
  lance_read "$t" --json >"$TMPD/after.json"
  json_eq "$TMPD/$state.json" "$TMPD/after.json" --ignore ms,table || fail "$state .txn: optimize changed what LanceDB reads"
  echo "ok $state .txn"
done
pass
