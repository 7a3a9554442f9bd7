#!/usr/bin/env node
// The LanceDB loop that bench/many_tables.sh compares brid against: one node
// process opens every table of a directory in turn and calls optimize() on it
// (compaction, then index optimize and the default prune), as an app that
// keeps one table per user would do on a schedule.
//
//   node bench/lance_optimize_many.mjs DIR
//
// Prints {tables, compacted, ms, errors}: ms is the loop alone (connect to
// the last optimize()), compacted the calls whose compaction removed
// fragments; errors counts failures by message.
import { lancedb, isMain, runMain, parseOptions } from "../tests/interop/lance_common.mjs";

async function main(argv) {
  const a = parseOptions(argv, {}, "lance_optimize_many.mjs DIR");
  if (a._.length !== 1) throw new Error("usage: lance_optimize_many.mjs DIR");
  const t0 = Date.now();
  const db = await lancedb.connect(a._[0]);
  const names = await db.tableNames({ limit: 1 << 30 });
  let compacted = 0;
  const errors = {};
  for (const name of names) {
    try {
      const tbl = await db.openTable(name);
      const s = await tbl.optimize();
      if (s.compaction && s.compaction.fragmentsRemoved > 0) compacted++;
      tbl.close();
    } catch (e) {
      const m = String((e && e.message) || e).slice(0, 160);
      errors[m] = (errors[m] || 0) + 1;
    }
  }
  console.log(JSON.stringify({ tables: names.length, compacted, ms: Date.now() - t0, errors }));
}

if (isMain(import.meta.url)) runMain("lance_optimize_many.mjs", () => main(process.argv.slice(2)));
