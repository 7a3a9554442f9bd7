#!/usr/bin/env node
// Indexed tables written by LanceDB 0.39.0 (Lance 12.0.0), and the answers LanceDB
// gives on them: what brid's compaction must keep (tests/interop/test_compact_indexed.sh).
//
//   node tests/interop/lance_indexed.mjs make PATH/name.lance [options]
//   node tests/interop/lance_indexed.mjs answers PATH/name.lance      (JSON on stdout)
//   node tests/interop/lance_indexed.mjs append PATH/name.lance N START
//   node tests/interop/lance_indexed.mjs delete PATH/name.lance SQL
//   node tests/interop/lance_indexed.mjs optimize PATH/name.lance
//
// make: --appends K [40] add()s of --rows N [200] rows each (one fragment each); before
// append k the index of INDEXES[k] is built (BITMAP on cat at 5, BTREE on num at 10,
// LABEL_LIST on tags at 15, IVF_PQ on vpq at 20, IVF_FLAT on vflat at 25, FTS on text at
// 30, IVF_HNSW_SQ on vhnsw at 35), so each index covers a different prefix of the
// fragments.  --skip COL,COL leaves those indexes out; --stable-row-ids; --delete SQL
// deletes at the end, or before append --delete-at K.  Every value is a function of
// the row id (lance_common's PRNG), so appends continue the same data.
//
// answers: vector top-10 (ids and distances) for three query vectors on every indexed
// vector column, without and with `where`, with default parameters and again with
// parameters that make the answer depend only on the indexed rows (see below); every FTS match with its score for three
// queries, without and with `where`, sorted by (score desc, id) because the order of
// equal scores follows row addresses, which compaction changes; countRows for `where`s
// on the indexed columns; listIndices with indexStats (indexed/unindexed rows); the
// full-scan column hashes of lance_read.mjs.  A failing vector query is reported as
// "ERROR ..." in place of its rows, so a comparison names it.

import path from "node:path";
import { lancedb, arrow, rng, seed32, pick, parseOptions, openTable, isMain, runMain, toJson } from "./lance_common.mjs";
import { readTable } from "./lance_read.mjs";

const DIM = 16;
const WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november " +
  "oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu red green blue black " +
  "white amber").split(" ");
const CATS = ["c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7"];

function schema() {
  const fsl = () => new arrow.FixedSizeList(DIM, new arrow.Field("item", new arrow.Float32(), true));
  return new arrow.Schema([
    new arrow.Field("id", new arrow.Int64(), false),
    new arrow.Field("num", new arrow.Int64(), true),
    new arrow.Field("cat", new arrow.Utf8(), true),
    new arrow.Field("tags", new arrow.List(new arrow.Field("item", new arrow.Utf8(), true)), true),
    new arrow.Field("text", new arrow.Utf8(), true),
    new arrow.Field("vpq", fsl(), true),
    new arrow.Field("vflat", fsl(), true),
    new arrow.Field("vhnsw", fsl(), true),
  ]);
}

function vector(r) {
  const v = [];
  for (let j = 0; j < DIM; j++) v.push(r() * 2 - 1);
  return v;
}

// Rows start .. start+n-1.
export function batch(start, n) {
  const rows = [];
  for (let id = start; id < start + n; id++) {
    const r = rng(seed32(7, id, 1));
    const cat = CATS[pick(r, CATS.length)];
    const tags = Array.from({ length: 1 + pick(r, 3) }, () => "t" + pick(r, 10));
    const words = Array.from({ length: 6 + pick(r, 6) }, () => WORDS[pick(r, WORDS.length)]);
    rows.push({ id: BigInt(id), num: BigInt((id * 7919) % 1000), cat, tags, text: words.join(" "),
      vpq: vector(r), vflat: vector(r), vhnsw: vector(r) });
  }
  return lancedb.makeArrowTable(rows, { schema: schema() });
}

const INDEXES = {
  5: ["cat", () => lancedb.Index.bitmap()],
  10: ["num", () => lancedb.Index.btree()],
  15: ["tags", () => lancedb.Index.labelList()],
  20: ["vpq", () => lancedb.Index.ivfPq({ numPartitions: 4, numSubVectors: 4 })],
  25: ["vflat", () => lancedb.Index.ivfFlat({ numPartitions: 4 })],
  30: ["text", () => lancedb.Index.fts()],
  35: ["vhnsw", () => lancedb.Index.hnswSq({ numPartitions: 2 })],
};

async function make(table, a) {
  const abs = path.resolve(table);
  const db = await lancedb.connect(path.dirname(abs));
  const name = path.basename(abs).replace(/\.lance$/, "");
  const appends = Number(a.appends), rows = Number(a.rows), skip = a.skip.split(",");
  const opts = a["stable-row-ids"] ? { storageOptions: { new_table_enable_stable_row_ids: "true" } } : {};
  const tbl = await db.createTable(name, batch(0, rows), opts);
  for (let k = 1; k < appends; k++) {
    if (INDEXES[k] && !skip.includes(INDEXES[k][0])) await tbl.createIndex(INDEXES[k][0], { config: INDEXES[k][1]() });
    if (a.delete && a["delete-at"] !== "" && Number(a["delete-at"]) === k) await tbl.delete(a.delete);
    await tbl.add(batch(k * rows, rows));
  }
  if (a.delete && a["delete-at"] === "") await tbl.delete(a.delete);
  return { table: abs, version: await tbl.version(), rows: await tbl.countRows() };
}

const QUERIES = [0, 1, 2].map((s) => vector(rng(seed32(99, s, 3))));

async function collect(q) {
  const out = [];
  for await (const b of q) for (const row of b.toArray()) out.push(row);
  return out;
}

export async function answers(table) {
  const { tbl, abs } = await openTable(table);
  const out = { vector: {}, hnsw: {}, exact: {}, fts: {}, counts: {}, indices: [] };
  const indices = await tbl.listIndices();
  const indexed = new Set(indices.map((i) => i.columns[0]));
  // "vector" and "hnsw": default query parameters. "exact": every partition probed,
  // PQ candidates re-ranked on the stored vectors, an ef that walks the whole HNSW
  // graph; these depend only on which rows the indexes hold, not on how LanceDB
  // happened to build them (its HNSW builds differ from run to run, and its
  // optimize() of the same rows laid out differently can give other PQ codes).
  const runs = [["vector", "vpq", {}], ["vector", "vflat", {}], ["hnsw", "vhnsw", {}],
    ["exact", "vpq", { nprobes: 10000, refine: 100 }], ["exact", "vflat", { nprobes: 10000 }],
    ["exact", "vhnsw", { ef: 100000 }]];
  for (const [group, col, o] of runs.filter((r) => indexed.has(r[1]))) {
    for (let s = 0; s < QUERIES.length; s++) {
      for (const where of [null, "num < 500", "cat = 'c3'"]) {
        let q = tbl.vectorSearch(QUERIES[s]).column(col).limit(10).select(["id"]);
        if (o.ef) q = q.ef(o.ef);
        if (o.nprobes) q = q.nprobes(o.nprobes);
        if (o.refine) q = q.refineFactor(o.refine);
        if (where) q = q.where(where);
        const key = `${col}/${s}/${where}`;
        try {
          out[group][key] = (await collect(q)).map((r) => [Number(r.id), r._distance]);
        } catch (e) {
          out[group][key] = "ERROR " + String(e.message).slice(0, 300);
        }
      }
    }
  }
  if (indexed.has("text")) {
    for (const term of ["alpha", "zulu bravo", "amber"]) {
      for (const where of [null, "num < 500"]) {
        let q = tbl.search(term, "fts", "text").limit(100000).select(["id"]);
        if (where) q = q.where(where);
        const rows = (await collect(q)).map((r) => [Number(r.id), r._score]);
        rows.sort((x, y) => y[1] - x[1] || x[0] - y[0]);
        out.fts[`${term}/${where}`] = rows;
      }
    }
  }
  for (const w of ["num < 300", "num = 17", "num >= 990", "cat = 'c3'", "cat IN ('c1','c6')",
    "array_has_any(tags, ['t1'])", "array_has_all(tags, ['t2','t3'])", "id % 7 = 3"]) {
    out.counts[w] = await tbl.countRows(w);
  }
  for (const ix of indices.sort((x, y) => x.name.localeCompare(y.name))) {
    out.indices.push({ name: ix.name, type: ix.indexType, columns: ix.columns, stats: await tbl.indexStats(ix.name) });
  }
  const r = await readTable(abs, {});
  out.scan = { rows: r.rows, columns: r.columns };
  out.version = await tbl.version();
  out.fragments = (await tbl.stats()).fragmentStats.numFragments;
  return out;
}

const USAGE = "usage: lance_indexed.mjs make|answers|append|delete|optimize PATH/name.lance [ARGS] [options]";

async function main() {
  const a = parseOptions(process.argv.slice(2), {
    appends: "40", rows: "200", "stable-row-ids": false, delete: "", "delete-at": "", skip: "",
  }, USAGE);
  const [op, table, ...rest] = a._;
  if (!table) throw new Error(USAGE);
  let out;
  if (op === "make") out = await make(table, a);
  else if (op === "answers") out = await answers(table);
  else {
    const { tbl } = await openTable(table);
    if (op === "append") await tbl.add(batch(Number(rest[1]), Number(rest[0])));
    else if (op === "delete") await tbl.delete(rest[0]);
    else if (op === "optimize") out = { optimize: await tbl.optimize() };
    else throw new Error(`unknown op ${op}\n${USAGE}`);
    out = { ...out, version: await tbl.version(), fragments: (await tbl.stats()).fragmentStats.numFragments };
  }
  console.log(toJson(out));
}

if (isMain(import.meta.url)) runMain("lance_indexed.mjs", main);
