#!/usr/bin/env bash
# Concurrency soak: LanceDB writers append and delete in a loop on two tables
# (soak_writer.mjs here, one per table: lance_writer_loop.mjs with an exact
# record of what committed, see below) while brictl compacts
# them (link strategy, so that LanceDB keeps writing on top) and cleans them
# (cleanup --older-than 0) over and over, for SECONDS.
#
# --older-than 0 keeps only the latest version, so a LanceDB operation that
# started from the version before (superseded a moment ago by a compaction)
# may find its files deleted under it: LanceDB fails it ("Not found"), as it
# would under Lance's own cleanup with older_than=0. The writer asks the table
# whether such an operation took effect, redoes it if not, and counts it; the
# count is printed (it is the price of --older-than 0, not a lost row).
#
#   tests/reliability/soak.sh SECONDS
#
# Compactions that lose to a LanceDB delete on their fragments give way (a
# conflict, their files removed) and are counted; any other brictl failure,
# or a writer that fails, fails the soak. At the end: one more compaction and
# cleanup, then for each table the set of ids LanceDB reads is exactly the
# initial rows plus what its writer appended minus what it deleted (no lost,
# resurrected or duplicated row), brictl scan reads what LanceDB reads, verify
# --all-versions passes, and no file is left that no version references,
# except what a writer may still stage (none: the writers have stopped, so a
# last cleanup --grace 0 runs first). Prints the counts; exit status 1 on
# failure.
set -euo pipefail
. "$(dirname "$0")/../interop/lib.sh"
. "$(dirname "$0")/lib.sh"
need_oracle
SOAK_SECONDS=${1:?usage: soak.sh SECONDS}
[ -x "$BRICTL" ] || fail "no brictl at $BRICTL"
build_refs
START=$SECONDS

TABLES=(a b)
INITIAL=1200 # 6 fragments x 200 rows, ids 0..1199, none deleted
for n in "${TABLES[@]}"; do
  make_tables "$TMPD/$n" --tables plain --fragments 6 --rows 200 --plain-delete "" --seed $((40 + ${#n})) >/dev/null
done
declare -A WPID
for n in "${TABLES[@]}"; do
  node "$RELIABILITY_DIR/soak_writer.mjs" "$TMPD/$n/plain.lance" --seconds "$SOAK_SECONDS" --rows 20 \
    --delete-every 3 --start 5000000 >"$TMPD/writer-$n.json" 2>"$TMPD/writer-$n.err" &
  WPID[$n]=$!
done

compactions=0 conflicts=0 cleanups=0 deleted_files=0 nothing=0 interrupted=0
deadline=$((SECONDS + SOAK_SECONDS))
while [ $SECONDS -lt $deadline ]; do
  for n in "${TABLES[@]}"; do
    t=$TMPD/$n/plain.lance
    if "$BRICTL" compact "$t" --strategy link --json >"$TMPD/c.json" 2>"$TMPD/c.err"; then
      if [ "$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$TMPD/c.json")" = 0 ]; then
        nothing=$((nothing + 1))
      else
        compactions=$((compactions + 1))
      fi
    else
      grep -Eq "touched fragment|changed after version|re-planned" "$TMPD/c.err" ||
        fail "compaction of $n failed for another reason: $(cat "$TMPD/c.err")"
      conflicts=$((conflicts + 1))
    fi
    if ! "$BRICTL" cleanup "$t" --older-than 0 --json >"$TMPD/k.json" 2>"$TMPD/k.err"; then
      fail "cleanup of $n failed: $(cat "$TMPD/k.err")"
    fi
    cleanups=$((cleanups + 1))
    deleted_files=$((deleted_files + $("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["files"])' "$TMPD/k.json")))
  done
  sleep 0.2
done
for n in "${TABLES[@]}"; do
  wait "${WPID[$n]}" || fail "the LanceDB writer of table $n failed: $(tail -5 "$TMPD/writer-$n.err")"
done

for n in "${TABLES[@]}"; do
  t=$TMPD/$n/plain.lance
  "$BRICTL" compact "$t" --strategy link >/dev/null 2>"$TMPD/c.err" || fail "final compaction of $n: $(cat "$TMPD/c.err")"
  "$BRICTL" cleanup "$t" --older-than 0 --grace 0 >/dev/null 2>"$TMPD/k.err" || fail "final cleanup of $n: $(cat "$TMPD/k.err")"
  node "$INTEROP_DIR/lance_rowset.mjs" "$t" "$TMPD/writer-$n.json" "$INITIAL" >"$TMPD/rows-$n" ||
    fail "table $n: the row set is not what its writer committed: $(cat "$TMPD/rows-$n")"
  lance_read "$t" --json >"$TMPD/l.json"
  "$BRICTL" scan "$t" --json >"$TMPD/s.json"
  same_read "$TMPD/l.json" "$TMPD/s.json" || fail "table $n: brictl and LanceDB read differently at the end"
  "$BRICTL" verify "$t" --all-versions >"$TMPD/v.out" 2>&1 || fail "table $n: verify fails: $(head -20 "$TMPD/v.out")"
  orphans "$t" >"$TMPD/o.out" 2>&1 || fail "table $n: unreferenced files left: $(head -20 "$TMPD/o.out")"
  echo "table $n: $(cat "$TMPD/rows-$n")"
  "$PY" -c 'import json, sys
w = json.load(open(sys.argv[1]))
print("  %d LanceDB operations interrupted by a cleanup and redone" % w["interrupted"])
for x in w["examples"]: print("    " + x)' "$TMPD/writer-$n.json"
  interrupted=$((interrupted + $("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["interrupted"])' "$TMPD/writer-$n.json")))
done
echo "soak ${SOAK_SECONDS}s: $compactions compactions committed, $conflicts gave way to a LanceDB delete," \
  "$nothing found nothing to do; $cleanups cleanups deleted $deleted_files files; $interrupted LanceDB" \
  "operations redone after a cleanup removed the version they started from; $((SECONDS - START)) s in all"
pass
