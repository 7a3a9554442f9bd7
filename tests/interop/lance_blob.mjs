#!/usr/bin/env node
// Blob v2 payloads as real Lance (LanceDB 0.39.0, Table.fetchBlobs) returns them: the
// reference `brictl cat` is compared against.
//
//   node tests/interop/lance_blob.mjs TABLE COL ROWID     payload bytes on stdout
//                                                        (exit 3 when the blob is null)
//   node tests/interop/lance_blob.mjs TABLE COL --all     one line per visible row, in
//                                                        scan order (line i = row offset i):
//                                                        "<rowaddr> <sha256|null> <bytes> <rowid>"
//
// COL is a top-level Blob v2 column or a dotted path through structs (st.b). ROWID is
// what fetchBlobs takes: LanceDB's _rowid (= the row address fragment << 32 | offset
// unless the table has stable row ids).  --all fetches every visible row (by _rowid,
// 64 per call) and prints its _rowaddr and _rowid, what `brictl cat --rowaddr` and
// `--rowid` take.

import crypto from "node:crypto";
import { openTable, isMain, runMain } from "./lance_common.mjs";

const USAGE = "usage: lance_blob.mjs TABLE COL (ROWID | --all)";

async function main() {
  const [table, col, which] = process.argv.slice(2);
  if (!table || !col || !which) throw new Error(USAGE);
  const { tbl } = await openTable(table);
  if (which !== "--all") {
    if (!/^\d+$/.test(which)) throw new Error(USAGE);
    const [p] = await tbl.fetchBlobs(col, [BigInt(which)]);
    if (p === null || p === undefined) process.exit(3);
    process.stdout.write(Buffer.from(p));
    return;
  }
  const rows = [];
  for await (const b of tbl.query().withRowId().select(["_rowaddr"])) {
    const id = b.getChild("_rowid"), addr = b.getChild("_rowaddr");
    for (let i = 0; i < b.numRows; i++) rows.push({ id: id.get(i), addr: addr.get(i) });
  }
  const lines = [];
  for (let s = 0; s < rows.length; s += 64) {
    const chunk = rows.slice(s, s + 64);
    const ps = await tbl.fetchBlobs(col, chunk.map((r) => r.id));
    ps.forEach((p, k) => {
      const h = p === null ? "null" : crypto.createHash("sha256").update(Buffer.from(p)).digest("hex");
      lines.push(`${chunk[k].addr} ${h} ${p === null ? 0 : p.length} ${chunk[k].id}`);
    });
  }
  if (lines.length) console.log(lines.join("\n"));
}

if (isMain(import.meta.url)) runMain("lance_blob.mjs", main);
