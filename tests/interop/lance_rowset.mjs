#!/usr/bin/env node
// Checks that a table holds exactly the rows its LanceDB writer committed:
// ids 0..INITIAL-1, plus every id lance_writer_loop.mjs (or the soak's
// writer) appended, minus every id it deleted; no id lost, resurrected or
// duplicated. The writer's JSON has {appended, deleted, iterations}.
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
const { tbl } = await openTable(table);
const got = [];
for await (const b of tbl.query().select(["id"])) for (let i = 0; i < b.numRows; i++) got.push(Number(b.getChild("id").get(i)));
const gotSet = new Set(got);
const lost = [...want].filter((x) => !gotSet.has(x)), extra = got.filter((x) => !want.has(x));
if (got.length !== gotSet.size) { console.log(`duplicate rows: ${got.length} rows, ${gotSet.size} ids`); process.exit(1); }
if (lost.length || extra.length) { console.log(`lost ${lost.length} ${JSON.stringify(lost.slice(0, 10))}, resurrected or unexpected ${extra.length} ${JSON.stringify(extra.slice(0, 10))}`); process.exit(1); }
console.log(`${got.length} rows: ${w.appended.length} appended, ${w.deleted.length} deleted in ${w.iterations} writer iterations`);
