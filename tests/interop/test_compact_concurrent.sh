#!/usr/bin/env bash
# COMPACT under concurrency: a LanceDB writer appends and deletes in a loop
# while brid compacts the same table over and over (link strategy, so that
# LanceDB can keep writing on top). Both commit; brid rebases over appends
# and gives up (conflict, its files removed) when a delete touched what it
# was compacting. At the end the table holds exactly the rows the writer's
# history says it should: none lost, none resurrected.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
SECONDS_RUN=${SECONDS_RUN:-20}

make_tables "$TMPD" --tables plain --fragments 6 --rows 200 --plain-delete "" >/dev/null
t=$TMPD/plain.lance
node "$INTEROP_DIR/lance_writer_loop.mjs" "$t" --seconds "$SECONDS_RUN" --rows 20 --delete-every 3 \
  >"$TMPD/writer.json" 2>"$TMPD/writer.err" &
writer=$!
compactions=0 conflicts=0
deadline=$((SECONDS + SECONDS_RUN))
while [ $SECONDS -lt $deadline ]; do
  if "$BRICTL" compact "$t" --strategy link >/dev/null 2>"$TMPD/c.err"; then
    compactions=$((compactions + 1))
  else
    grep -Eq "touched fragment|changed after version|re-planned" "$TMPD/c.err" ||
      fail "compaction failed for another reason: $(cat "$TMPD/c.err")"
    conflicts=$((conflicts + 1))
  fi
  sleep 0.3
done
wait $writer || fail "the LanceDB writer failed: $(cat "$TMPD/writer.err")"
"$BRICTL" compact "$t" --strategy link >/dev/null   # and once more, quietly
node "$INTEROP_DIR/lance_rowset.mjs" "$t" "$TMPD/writer.json" 1200 >"$TMPD/rows" ||
  fail "the row set is not what the writer committed: $(cat "$TMPD/rows")"
cat "$TMPD/rows"
lance_read "$t" --json >"$TMPD/l.json"
"$BRICTL" scan "$t" --json >"$TMPD/s.json"
json_eq "$TMPD/l.json" "$TMPD/s.json" --ignore ms,table,fragmentRows,schemaFields || fail "brictl and LanceDB disagree at the end"
echo "ok: $compactions compactions committed, $conflicts gave way to a delete"
pass
