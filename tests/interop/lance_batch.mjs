#!/usr/bin/env node
// Many tables read by LanceDB 0.39.0 (Lance 12.0.0) in one process: what
// tests/interop/lance_read.mjs and lance_indexed.mjs answer, for a list of tables.
//
//   node tests/interop/lance_batch.mjs [--answers] PATH/name.lance...
//
// Prints one JSON object per table and line, as it goes: lance_read.mjs's JSON plus
// reader "lance12" (and, with --answers, lance_indexed.mjs's answers, without their
// scan, on a table that has an index); {"table", "reader", "error"} when LanceDB fails
// on a table (the others go on). Exit status 0 unless the arguments are wrong.

import path from "node:path";
import { parseOptions, openTable, runMain } from "./lance_common.mjs";
import { readTable } from "./lance_read.mjs";
import { answers } from "./lance_indexed.mjs";

const USAGE = "usage: lance_batch.mjs [--answers] PATH/name.lance...";
const json = (v) => JSON.stringify(v, (k, x) => (typeof x === "bigint" ? x.toString() : x));

async function main() {
  const a = parseOptions(process.argv.slice(2), { answers: false }, USAGE);
  for (const t of a._) {
    const abs = path.resolve(t);
    let out;
    try {
      out = { ...await readTable(abs, {}), reader: "lance12" };
      if (a.answers) {
        const { tbl } = await openTable(abs);
        if ((await tbl.listIndices()).length) {
          try {
            const x = await answers(abs);
            delete x.scan;
            out.answers = x;
          } catch (e) {
            out.answers = { error: String(e && e.message !== undefined ? e.message : e) };
          }
        }
      }
    } catch (e) {
      out = { table: abs, reader: "lance12", error: String(e && e.message !== undefined ? e.message : e) };
    }
    process.stdout.write(json(out) + "\n");
  }
}

runMain("lance_batch.mjs", main);
