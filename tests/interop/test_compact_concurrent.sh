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
node --input-type=module - "$t" "$TMPD/writer.json" <<'JS' || fail "the row set is not what the writer committed"
import fs from "node:fs";
const { openTable } = await import(process.env.INTEROP_DIR + "/lance_common.mjs");
const [table, wfile] = process.argv.slice(-2);
const w = JSON.parse(fs.readFileSync(wfile));
const want = new Set();
for (let i = 0; i < 1200; i++) want.add(i);
for (const id of w.appended) want.add(id);
for (const id of w.deleted) want.delete(id);
const { tbl } = await openTable(table);
const got = [];
for await (const b of tbl.query().select(["id"])) for (let i = 0; i < b.numRows; i++) got.push(Number(b.getChild("id").get(i)));
const gotSet = new Set(got);
const lost = [...want].filter((x) => !gotSet.has(x)), extra = got.filter((x) => !want.has(x));
if (got.length !== gotSet.size) { console.error("duplicate rows"); process.exit(1); }
if (lost.length || extra.length) { console.error("lost", lost.slice(0, 10), "resurrected or unexpected", extra.slice(0, 10)); process.exit(1); }
console.log(`rows ${got.length}: ${w.appended.length} appended, ${w.deleted.length} deleted over ${w.iterations} writer commits`);
JS
lance_read "$t" --json >"$TMPD/l.json"
"$BRICTL" scan "$t" --json >"$TMPD/s.json"
json_eq "$TMPD/l.json" "$TMPD/s.json" --ignore ms,table,fragmentRows,schemaFields || fail "brictl and LanceDB disagree at the end"
echo "ok: $compactions compactions committed, $conflicts gave way to a delete"
pass
