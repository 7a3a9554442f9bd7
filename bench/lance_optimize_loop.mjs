#!/usr/bin/env node
// LanceDB's own optimize() in a loop, the baseline of bench/busy_writer.sh:
// every --pause ms, optimize() on the latest version; counts the calls that
// committed a compaction, that gave way to a concurrent writer (Lance's
// commit conflict errors: "preempted", "conflict", "retry"), and that found
// nothing to compact. Any other error is counted by message.
//
//   node bench/lance_optimize_loop.mjs TABLE --seconds S [--pause MS]
//
// Prints {committed, gaveWay, nothing, errors} as JSON.
import { openTable, isMain, runMain, parseOptions } from "../tests/interop/lance_common.mjs";

async function main(argv) {
  const a = parseOptions(argv, { seconds: "10", pause: "300" }, "lance_optimize_loop.mjs TABLE --seconds S [--pause MS]");
  const { tbl } = await openTable(a._[0]);
  const until = Date.now() + 1000 * Number(a.seconds);
  let committed = 0, gaveWay = 0, nothing = 0;
  const errors = {};
  while (Date.now() < until) {
    try {
      await tbl.checkoutLatest();
      const s = await tbl.optimize();
      if (s.compaction && s.compaction.fragmentsRemoved > 0) committed++;
      else nothing++;
    } catch (e) {
      const m = String((e && e.message) || e);
      if (/preempted|conflict|retry/i.test(m)) gaveWay++;
      else errors[m.slice(0, 160)] = (errors[m.slice(0, 160)] || 0) + 1;
    }
    await new Promise((r) => setTimeout(r, Number(a.pause)));
  }
  console.log(JSON.stringify({ committed, gaveWay, nothing, errors }));
}

if (isMain(import.meta.url)) runMain("lance_optimize_loop.mjs", () => main(process.argv.slice(2)));
