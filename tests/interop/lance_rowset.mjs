#!/usr/bin/env node
// Checks that a table holds exactly the rows its LanceDB writer committed:
// ids 0..INITIAL-1, plus every id lance_writer_loop.mjs (or the soak's
// writer) appended, minus every id it deleted; no id lost, resurrected or
// duplicated; and every row the writer updated holds the value it gave it
// last. The writer's JSON has {appended, deleted, iterations} and, when it
// updated rows, updated: {id: f64}.
//
//   node tests/interop/lance_rowset.mjs TABLE WRITER_JSON INITIAL
//
// Prints "N rows: A appended, D deleted in I writer iterations" and exits 0,
// or prints what differs and exits 1.
import fs from "node:fs";
import { openTable } from "./lance_common.mjs";

const [table, wfile, initial] = process.argv.slice(2);
const w = JSON.parse(fs.readFileSync(wfile));
const want = new Set();
for (let i = 0; i < Number(initial); i++) want.add(i);
for (const id of w.appended) want.add(id);
for (const id of w.deleted) want.delete(id);
const updated = w.updated || {};
const { tbl } = await openTable(table);
const got = [], stale = [];
const hasF64 = (await tbl.schema()).fields.some((f) => f.name === "f64"); // a blobs table has none
for await (const b of tbl.query().select(hasF64 ? ["id", "f64"] : ["id"])) {
  for (let i = 0; i < b.numRows; i++) {
    const id = Number(b.getChild("id").get(i)), f64 = hasF64 ? b.getChild("f64").get(i) : undefined;
    got.push(id);
    if (updated[id] !== undefined && f64 !== updated[id]) stale.push([id, f64, updated[id]]);
  }
}
const gotSet = new Set(got);
const lost = [...want].filter((x) => !gotSet.has(x)), extra = got.filter((x) => !want.has(x));
if (got.length !== gotSet.size) { console.log(`duplicate rows: ${got.length} rows, ${gotSet.size} ids`); process.exit(1); }
if (lost.length || extra.length) { console.log(`lost ${lost.length} ${JSON.stringify(lost.slice(0, 10))}, resurrected or unexpected ${extra.length} ${JSON.stringify(extra.slice(0, 10))}`); process.exit(1); }
if (stale.length) { console.log(`${stale.length} updated rows hold another value (id, read, written): ${JSON.stringify(stale.slice(0, 5))}`); process.exit(1); }
const nu = Object.keys(updated).length;
console.log(`${got.length} rows: ${w.appended.length} appended, ${w.deleted.length} deleted${nu ? `, ${nu} updated` : ""} in ${w.iterations} writer iterations`);
