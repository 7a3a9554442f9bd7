#!/usr/bin/env node
// A LanceDB writer that keeps committing to a table for a while: the
// concurrent side of brid's compaction tests.
//
//   node tests/interop/lance_writer_loop.mjs TABLE --seconds S [--rows N]
//        [--start ID] [--delete-every K] [--update-every K] [--seed N]
//        [--kind plain|blobs] [--blob-size BYTES] [--pause MS]
//
// Every iteration appends N rows of the plain table's generator (or, with
// --kind blobs, of the blobs table's: id, label, a Blob v2 value of
// --blob-size bytes [65536]; updates are then off) (ids from --start
// upwards), then waits --pause ms [0]; every --delete-every-th iteration it deletes one row it
// appended earlier, and every --update-every-th (0: never) it sets f64 of two
// live rows it appended to a value of that iteration (LanceDB's update():
// the rows move to a new fragment, their old copies get a deletion vector).
// LanceDB retries its own commits on conflicts. Prints the ids it appended
// and deleted and the last value it gave each updated row, so that the
// caller can check the final rows exactly (lance_rowset.mjs).
import { openTable, isMain, runMain, parseOptions } from "./lance_common.mjs";
import { TABLES, blobsBatch } from "./lance_make.mjs";

async function main(argv) {
  const a = parseOptions(argv, { seconds: "10", rows: "20", start: "5000000", "delete-every": "3", "update-every": "0", seed: "42",
    kind: "plain", "blob-size": "65536", pause: "0" },
    "lance_writer_loop.mjs TABLE --seconds S [--rows N] [--start ID] [--delete-every K] [--update-every K] [--kind plain|blobs]");
  const table = a._[0];
  const { tbl } = await openTable(table);
  const until = Date.now() + 1000 * Number(a.seconds);
  const blobs = a.kind === "blobs";
  if (!blobs && a.kind !== "plain") throw new Error(`--kind ${a.kind}: plain or blobs`);
  const rows = Number(a.rows), every = Number(a["delete-every"]), uevery = blobs ? 0 : Number(a["update-every"]);
  const sizes = Array.from({ length: rows }, () => ["fixed", Number(a["blob-size"])]);
  let next = Number(a.start), iter = 0;
  const appended = [], deleted = [], updated = {}, dead = new Set();
  while (Date.now() < until) {
    if (Number(a.pause) > 0) await new Promise((r) => setTimeout(r, Number(a.pause)));
    await tbl.add(blobs ? blobsBatch(Number(a.seed), next, sizes, {}, false, null)
      : TABLES.plain.batch(Number(a.seed), next, rows));
    for (let i = 0; i < rows; i++) appended.push(next + i);
    next += rows;
    iter++;
    if (every > 0 && iter % every === 0) {
      const victim = appended[(iter * 7919) % appended.length];
      if (!dead.has(victim)) {
        await tbl.delete(`id = ${victim}`);
        deleted.push(victim);
        dead.add(victim);
        delete updated[victim];
      }
    }
    if (uevery > 0 && iter % uevery === 0) {
      const ids = [...new Set([(iter * 104729) % appended.length, (iter * 1299709) % appended.length]
        .map((i) => appended[i]))].filter((x) => !dead.has(x));
      if (ids.length) {
        const value = iter + 0.25;
        await tbl.update({ where: `id IN (${ids.join(",")})`, values: { f64: String(value) } });
        for (const x of ids) updated[x] = value;
      }
    }
  }
  console.log(JSON.stringify({ iterations: iter, appended, deleted, updated }));
}

if (isMain(import.meta.url)) runMain("lance_writer_loop.mjs", () => main(process.argv.slice(2)));
