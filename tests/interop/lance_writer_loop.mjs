#!/usr/bin/env node
// A LanceDB writer that keeps committing to a table for a while: the
// concurrent side of brid's compaction tests.
//
//   node tests/interop/lance_writer_loop.mjs TABLE --seconds S [--rows N]
//        [--start ID] [--delete-every K] [--seed N]
//
// Every iteration appends N rows of the plain table's generator (ids from
// --start upwards) and, every K-th iteration, deletes one row it appended
// earlier. LanceDB retries its own commits on conflicts. Prints the ids it
// appended and deleted, so the caller can check the final row set exactly.
import { openTable, isMain, runMain, parseOptions } from "./lance_common.mjs";
import { TABLES } from "./lance_make.mjs";

async function main(argv) {
  const a = parseOptions(argv, { seconds: "10", rows: "20", start: "5000000", "delete-every": "3", seed: "42" },
    "lance_writer_loop.mjs TABLE --seconds S [--rows N] [--start ID] [--delete-every K]");
  const table = a._[0];
  const { tbl } = await openTable(table);
  const until = Date.now() + 1000 * Number(a.seconds);
  const rows = Number(a.rows), every = Number(a["delete-every"]);
  let next = Number(a.start), iter = 0;
  const appended = [], deleted = [];
  while (Date.now() < until) {
    await tbl.add(TABLES.plain.batch(Number(a.seed), next, rows));
    for (let i = 0; i < rows; i++) appended.push(next + i);
    next += rows;
    iter++;
    if (every > 0 && iter % every === 0) {
      const victim = appended[(iter * 7919) % appended.length];
      if (!deleted.includes(victim)) {
        await tbl.delete(`id = ${victim}`);
        deleted.push(victim);
      }
    }
  }
  console.log(JSON.stringify({ iterations: iter, appended, deleted }));
}

if (isMain(import.meta.url)) runMain("lance_writer_loop.mjs", () => main(process.argv.slice(2)));
