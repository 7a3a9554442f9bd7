#!/usr/bin/env node
// The LanceDB side of the soak (tests/reliability/soak.sh): appends and deletes
// in a loop, like tests/interop/lance_writer_loop.mjs, and keeps an exact record
// of what it committed even when an operation fails.
//
//   node tests/reliability/soak_writer.mjs TABLE --seconds S [--rows N]
//        [--start ID] [--delete-every K] [--seed N]
//
// The table is opened with readConsistencyInterval 0 (every operation starts
// from the latest version), as a LanceDB user sharing a table with another
// writer would. A concurrent `cleanup --older-than 0` may still delete the
// files of the version an operation started from a moment ago (that version
// is old the moment brid commits a compaction on top of it): LanceDB then fails
// the operation with "Not found: .../data/X.lance" (or a manifest or
// transaction file). Such an operation is counted as interrupted, the table
// is asked whether it took effect (its ids present, its victim gone), and it
// is retried when it did not; any other error fails the writer. Prints
// {iterations, appended, deleted, interrupted, examples}.
import { lancedb, isMain, runMain, parseOptions } from "../interop/lance_common.mjs";
import { TABLES } from "../interop/lance_make.mjs";
import path from "node:path";

const VANISHED = /Not found: .*(\.lance|\.manifest|\.txn|\.arrow|\.bin)\b/;

// How many ids of [lo, hi) the latest version holds (retried when a
// concurrent cleanup removes the files of the version the query started on).
async function idsPresent(tbl, lo, hi) {
  for (let tries = 0; ; tries++) {
    try {
      let n = 0;
      for await (const b of tbl.query().where(`id >= ${lo} AND id < ${hi}`).select(["id"])) n += b.numRows;
      return n;
    } catch (e) {
      if (!VANISHED.test(String(e && e.message || e)) || tries >= 20) throw e;
    }
  }
}

async function main(argv) {
  const a = parseOptions(argv, { seconds: "10", rows: "20", start: "5000000", "delete-every": "3", seed: "42" },
    "soak_writer.mjs TABLE --seconds S [--rows N] [--start ID] [--delete-every K]");
  const abs = path.resolve(a._[0]);
  const db = await lancedb.connect(path.dirname(abs), { readConsistencyInterval: 0 });
  const tbl = await db.openTable(path.basename(abs).replace(/\.lance$/, ""));
  const until = Date.now() + 1000 * Number(a.seconds);
  const rows = Number(a.rows), every = Number(a["delete-every"]);
  let next = Number(a.start), iter = 0, interrupted = 0;
  const appended = [], deleted = [], examples = [];
  // Runs op until it took effect; done() asks the table whether it did.
  async function exactly(op, done, what) {
    for (let tries = 0; ; tries++) {
      try {
        await op();
        return;
      } catch (e) {
        const msg = String(e && e.message || e);
        if (!VANISHED.test(msg) || tries >= 20) throw new Error(`${what}: ${msg}`);
        interrupted++;
        if (examples.length < 3) examples.push(`${what}: ${msg.split("\n")[0].slice(0, 300)}`);
        if (await done()) return;
      }
    }
  }
  while (Date.now() < until) {
    const lo = next;
    await exactly(() => tbl.add(TABLES.plain.batch(Number(a.seed), lo, rows)), async () => {
      const n = await idsPresent(tbl, lo, lo + rows);
      if (n !== 0 && n !== rows) throw new Error(`append of ids ${lo}..${lo + rows - 1} half visible (${n} rows)`);
      return n === rows;
    }, `append ${lo}`);
    for (let i = 0; i < rows; i++) appended.push(lo + i);
    next += rows;
    iter++;
    if (every > 0 && iter % every === 0) {
      const victim = appended[(iter * 7919) % appended.length];
      if (!deleted.includes(victim)) {
        await exactly(() => tbl.delete(`id = ${victim}`), async () => (await idsPresent(tbl, victim, victim + 1)) === 0,
          `delete ${victim}`);
        deleted.push(victim);
      }
    }
  }
  console.log(JSON.stringify({ iterations: iter, appended, deleted, interrupted, examples }));
}

if (isMain(import.meta.url)) runMain("soak_writer.mjs", () => main(process.argv.slice(2)));
