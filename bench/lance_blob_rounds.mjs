#!/usr/bin/env node
// The appends of bench/amplification.sh: one round of LanceDB appends to each
// of several identical blob tables, so that they stay identical (same rows,
// same payload bytes, written by LanceDB itself).
//
//   node bench/lance_blob_rounds.mjs TABLE... --round N [--appends K] [--rows R]
//        [--size BYTES] [--seed S]
//
// Round N appends K fragments (one add() each) of R rows with a Blob v2 value
// of --size bytes each (lance_make.mjs's blobs table: id, label, blob), ids
// from 1,000,000 x N upwards (round 0 is lance_make.mjs's table), to every
// TABLE. Prints {round, payload_bytes} (the payload one table received).
import { openTable, isMain, runMain, parseOptions, parseSize } from "../tests/interop/lance_common.mjs";
import { blobsBatch } from "../tests/interop/lance_make.mjs";

async function main(argv) {
  const a = parseOptions(argv, { round: "1", appends: "4", rows: "4", size: "256K", seed: "42" },
    "lance_blob_rounds.mjs TABLE... --round N [--appends K] [--rows R] [--size BYTES] [--seed S]");
  if (!a._.length) throw new Error("no table given");
  const k = Number(a.appends), r = Number(a.rows), size = parseSize(a.size);
  const sizes = Array.from({ length: r }, () => ["fixed", size]);
  for (const table of a._) {
    const { tbl } = await openTable(table);
    for (let i = 0; i < k; i++)
      await tbl.add(blobsBatch(Number(a.seed), 1000000 * Number(a.round) + i * r, sizes, {}, false, null));
    tbl.close();
  }
  console.log(JSON.stringify({ round: Number(a.round), payload_bytes: k * r * size }));
}

if (isMain(import.meta.url)) runMain("lance_blob_rounds.mjs", () => main(process.argv.slice(2)));
