#!/usr/bin/env node
// Small operations on a real Lance table, done by LanceDB 0.39.0 (Lance 12.0.0), for
// interop tests that need Lance to change a table before or after brid touches it.
//
//   node tests/interop/lance_ops.mjs PATH/name.lance OP [ARGS] [options]
//
// OP:
//   info                    version, rows, fragments, versions, tags, deletion files
//   append N                one add() of N rows (one new fragment) with lance_make's values
//                           (--times K: K such add() calls, K fragments)
//                           for table kind --kind [the table's name: plain, blobs,
//                           encodings, types, nested, extras, blobnest]; ids start at
//                           --start [max(id) + 1], so values equal what lance_make writes
//                           for those ids.  blobs: N id slots with the "mixed" sizes (the
//                           uri slot is skipped).  largelist cannot be appended from JS.
//   delete SQL              delete the rows matching the predicate
//   stale-delete SQL CMD    a writer the table moves under: opens the table, runs the
//                           shell command CMD (which commits versions meanwhile) and
//                           then deletes the rows matching SQL through the handle it
//                           opened first, so that LanceDB's commit must rebase over
//                           what CMD committed (it reads those versions' transactions)
//   optimize [--cleanup]    LanceDB optimize() (see lance_optimize.mjs)
//   tag NAME [VERSION]      create tag NAME for VERSION [the current version]
//   untag NAME              delete tag NAME (LanceDB's cleanup refuses to remove tagged
//                           versions: "1 tagged version(s) have been marked for cleanup")
//   read                    lance_read.mjs's JSON, at --version V (number or tag) if given;
//                           also takes --key, --no-blob-bytes
//   versions                list versions
//   restore VERSION         commit a new version whose content is VERSION's
//   add-column NAME SQL     addColumns([{name, valueSql: SQL}]): every fragment gets one
//                           more data file holding the new column
//   drop-index NAME         dropIndex(NAME)
//   bitmap-index COL        createIndex(COL) as a BITMAP index (named COL_idx)
// Options: --kind K, --seed N [42], --start ID, --times K [1], --version V, --key COL, --no-blob-bytes,
// --cleanup, plus lance_make's generator options (e.g. --blobnest-inline-threshold).
// Output: one JSON object on stdout.

import { execSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { lancedb, openTable, parseOptions, isMain, runMain, toJson, isRemote } from "./lance_common.mjs";
import { TABLES, DEFAULTS as MAKE_DEFAULTS, MIXED, blobsBatch } from "./lance_make.mjs";
import { readTable } from "./lance_read.mjs";
import { optimizeTable } from "./lance_optimize.mjs";

function deletionFiles(abs) {
  if (isRemote(abs)) return null; /* not listed on S3 */
  const d = path.join(abs, "_deletions"), out = { arrow: 0, bin: 0 };
  if (fs.existsSync(d)) for (const f of fs.readdirSync(d)) { if (f.endsWith(".arrow")) out.arrow++; else if (f.endsWith(".bin")) out.bin++; }
  return out;
}

// {tag: version} (TagContents objects do not serialize).
async function tagVersions(tbl) {
  const tags = await tbl.tags();
  const out = {};
  for (const k of Object.keys(await tags.list()).sort()) out[k] = await tags.getVersion(k);
  return out;
}

async function maxId(tbl) {
  let m = -1n;
  for await (const b of tbl.query().select(["id"])) {
    const c = b.getChild("id");
    for (let i = 0; i < b.numRows; i++) { const v = BigInt(c.get(i)); if (v > m) m = v; }
  }
  return Number(m);
}

async function append(tbl, name, n, a) {
  const kind = a.kind || name;
  const seed = Number(a.seed);
  const start = a.start !== "" ? Number(a.start) : (await maxId(tbl)) + 1;
  let data;
  if (kind === "blobs") {
    const sizes = Array.from({ length: n }, (_, i) => MIXED[(start + i) % MIXED.length]);
    data = blobsBatch(seed, start, sizes, {}, false, null);
  } else if (kind === "largelist") {
    throw new Error("append: largelist has large_list columns, which apache-arrow 18 cannot write");
  } else if (TABLES[kind] && TABLES[kind].batch) {
    data = TABLES[kind].batch(seed, start, n, a);
  } else {
    throw new Error(`append: unknown table kind ${kind} (use --kind)`);
  }
  // Keep only the table's columns (extras has no map column in 2.1 tables).
  const have = new Set((await tbl.schema()).fields.map((f) => f.name));
  data = data.select(data.schema.fields.map((f) => f.name).filter((x) => have.has(x)));
  await tbl.add(data);
  return { op: "append", kind, start, rows: data.numRows };
}

const USAGE = "usage: lance_ops.mjs PATH/name.lance info|append N|delete SQL|stale-delete SQL CMD|optimize|tag NAME [VERSION]|untag NAME|read|versions|restore VERSION|add-column NAME SQL [options]";

async function main() {
  const defaults = {
    ...MAKE_DEFAULTS, kind: "", seed: "42", start: "", version: null, key: null,
    "no-blob-bytes": false, cleanup: false, times: "1",
  };
  const a = parseOptions(process.argv.slice(2), defaults, USAGE);
  const [table, op, ...args] = a._;
  if (!table || !op) throw new Error(USAGE);
  const need = (k) => { if (args.length < k) throw new Error(`${op}: missing argument\n${USAGE}`); };
  const { abs, tbl, name } = await openTable(table);
  let out;
  switch (op) {
    case "info": break;
    case "append":
      need(1);
      for (let k = 0; k < Number(a.times); k++) out = await append(tbl, name, Number(args[0]), { ...a, start: k ? "" : a.start });
      break;
    case "delete": {
      need(1);
      const before = await tbl.countRows();
      await tbl.delete(args[0]);
      out = { op, predicate: args[0], deleted: before - (await tbl.countRows()) };
      break;
    }
    case "stale-delete": {
      need(2);
      const opened = await tbl.version();
      const before = await tbl.countRows();
      execSync(args[1], { stdio: ["ignore", "ignore", "inherit"] });
      await tbl.delete(args[0]);
      out = { op, predicate: args[0], opened, deleted: before - (await tbl.countRows()) };
      break;
    }
    case "optimize":
      console.log(toJson({ op, ...await optimizeTable(abs, { cleanup: a.cleanup }) }));
      return;
    case "tag": {
      need(1);
      const v = args[1] !== undefined ? Number(args[1]) : await tbl.version();
      await (await tbl.tags()).create(args[0], v);
      out = { op, tag: args[0], tagVersion: v };
      break;
    }
    case "untag":
      need(1);
      await (await tbl.tags()).delete(args[0]);
      out = { op, tag: args[0] };
      break;
    case "read":
      console.log(JSON.stringify(await readTable(abs, {
        version: a.version, key: a.key === null ? undefined : a.key, blobBytes: !a["no-blob-bytes"],
      }), null, 2));
      return;
    case "versions":
      out = { op, versions: (await tbl.listVersions()).map((v) => ({ version: v.version, timestamp: v.timestamp })) };
      break;
    case "restore":
      need(1);
      await tbl.checkout(/^\d+$/.test(args[0]) ? Number(args[0]) : args[0]);
      await tbl.restore();
      out = { op, restored: args[0] };
      break;
    case "add-column":
      need(2);
      await tbl.addColumns([{ name: args[0], valueSql: args[1] }]);
      out = { op, column: args[0], sql: args[1] };
      break;
    case "drop-index":
      need(1);
      await tbl.dropIndex(args[0]);
      out = { op, index: args[0] };
      break;
    case "bitmap-index":
      need(1);
      await tbl.createIndex(args[0], { config: lancedb.Index.bitmap() });
      out = { op, column: args[0] };
      break;
    default:
      throw new Error(`unknown op ${op}\n${USAGE}`);
  }
  const stats = await tbl.stats();
  console.log(toJson({
    ...(out || { op }), table: abs, version: await tbl.version(), rows: await tbl.countRows(),
    fragments: stats.fragmentStats.numFragments, deletionFiles: deletionFiles(abs),
    tags: await tagVersions(tbl),
  }));
}

if (isMain(import.meta.url)) runMain("lance_ops.mjs", main);
