#!/usr/bin/env node
// Edge-shape table for brid's writer interop test (test_write_roundtrip.sh):
// LanceDB writes it, brid rewrites it, LanceDB must read the same values.
//
//   node tests/interop/write_roundtrip_edge.mjs OUT_DIR STORAGE_VERSION   -> OUT_DIR/edge.lance
//
// Two appends of 3000 rows. Columns chosen for the page layouts lance_make's tables
// do not reach: an all-null list (2.1 AllNull / 2.2 Constant with levels), a list
// whose items are all null or empty, a struct whose only child is always null
// (all-null levels without repetition), fixed_size_binary(300) and
// fixed_size_list<float32?,100>? with nulls (FullZip fixed width, FSL validity zipped),
// list<fixed_size_binary(300)> (FullZip fixed width with a repetition index),
// nullable bool, a constant int32, a list that is almost always empty, one row of
// 70,000 list items (a row spanning many chunks), list<list<utf8?>?>?.
import { lancedb, arrow as A } from "./lance_common.mjs";
import { makeTable } from "./lance_make.mjs";

const [out, sv] = process.argv.slice(2);
if (!out || !sv) {
  console.error("usage: write_roundtrip_edge.mjs OUT_DIR STORAGE_VERSION");
  process.exit(2);
}
const N = 3000;
const F = (n, t, nl = true) => new A.Field(n, t, nl);
const fields = [
  F("id", new A.Int64(), false),
  F("allnull_list", new A.List(F("item", new A.Int32()))),
  F("list_itemnull", new A.List(F("item", new A.Int32()))),
  F("st_allnull", new A.Struct([F("a", new A.Int32())])),
  F("fsb300", new A.FixedSizeBinary(300)),
  F("fsl100", new A.FixedSizeList(100, F("item", new A.Float32()))),
  F("list_fsb", new A.List(F("item", new A.FixedSizeBinary(300)))),
  F("bools", new A.Bool()),
  F("const7", new A.Int32(), false),
  F("sparse_list", new A.List(F("item", new A.Int32()))),
  F("bigrow", new A.List(F("item", new A.Int64(), false))),
  F("lls", new A.List(F("item", new A.List(F("item", new A.Utf8()))))),
];
const bytes = (n, s) => {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (s * 31 + i * 7) & 255;
  return b;
};
function batch(start, n) {
  const cols = fields.map(() => []);
  for (let k = 0; k < n; k++) {
    const i = start + k;
    let c = 0;
    cols[c++].push(BigInt(i));
    cols[c++].push(null);
    cols[c++].push(i % 3 === 0 ? null : i % 3 === 1 ? [] : [null, null]);
    cols[c++].push(i % 2 ? null : { a: null });
    cols[c++].push(i % 5 === 0 ? null : bytes(300, i));
    cols[c++].push(i % 7 === 0 ? null : Array.from({ length: 100 }, (_, j) => ((i + j) % 11 === 0 ? null : i + j / 100)));
    cols[c++].push(i % 4 === 0 ? null : i % 4 === 1 ? [] : [bytes(300, i), bytes(300, i + 1)]);
    cols[c++].push(i % 3 === 0 ? null : i % 2 === 0);
    cols[c++].push(7);
    cols[c++].push(i % 97 === 0 ? [i] : []);
    cols[c++].push(i === start + 5 ? Array.from({ length: 70000 }, (_, j) => BigInt(j)) : [BigInt(i)]);
    cols[c++].push(i % 5 === 0 ? null : [[`a${i}`, null], [], null, ["x".repeat(i % 40)]]);
  }
  return makeTable(fields, cols);
}
const db = await lancedb.connect(out);
const opts = { mode: "overwrite", storageOptions: { new_table_data_storage_version: sv } };
const t = await db.createTable("edge", batch(0, N), opts);
await t.add(batch(N, N));
console.log(JSON.stringify({ table: `${out}/edge.lance`, rows: await t.countRows() }));
