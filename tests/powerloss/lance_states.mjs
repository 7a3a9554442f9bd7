#!/usr/bin/env node
// Reads many Lance tables in one node process (LanceDB's start-up costs about
// half a second): for each table path in the file LIST (one a line), one JSON
// line {path, ok, read} (read: lance_read.mjs's JSON) or {path, ok: false,
// error}. The power-loss checker (tests/powerloss/check.py) compares the reads.
//
//   node tests/powerloss/lance_states.mjs LIST
import fs from "node:fs";
import { readTable } from "../interop/lance_read.mjs";
import { runMain } from "../interop/lance_common.mjs";

async function main() {
  const list = fs.readFileSync(process.argv[2], "utf8").split("\n").filter(Boolean);
  for (const p of list) {
    let line;
    try {
      line = { path: p, ok: true, read: await readTable(p) };
    } catch (e) {
      line = { path: p, ok: false, error: String(e && e.message ? e.message : e).split("\n")[0] };
    }
    process.stdout.write(JSON.stringify(line) + "\n");
  }
}

runMain("lance_states.mjs", main);
