#!/usr/bin/env node
// Run LanceDB's own Table.optimize() (compaction, then prune) on a table and measure it:
// the baseline brid's compactor is compared against.
//
//   node tests/interop/lance_optimize.mjs PATH/name.lance [--cleanup] [--json]
//
//   --cleanup  optimize({cleanupOlderThan: now, deleteUnverified: true}): versions older
//              than the call and unreferenced files are deleted at once.  Without it
//              LanceDB's default applies (versions older than 7 days), so nothing
//              written today is removed.
//   --json     one JSON object instead of text lines
//
// Reports: wall time; LanceDB's optimize statistics; version, rows and fragment count
// before/after; bytes and files on disk per class (lance data files, blob sidecars,
// deletions, versions, transactions, other) before and after; and the /proc/self/io
// deltas of this process (write_bytes = bytes this process sent to the block layer,
// wchar = bytes passed to write(2); both include everything LanceDB wrote).

import fs from "node:fs";
import path from "node:path";
import { openTable, parseOptions, isMain, runMain, toJson, isRemote } from "./lance_common.mjs";

function fileClass(p) {
  if (p.endsWith(".blob")) return "blob";
  if (p.endsWith(".lance")) return "lance";
  if (p.includes(`${path.sep}_deletions${path.sep}`)) return "deletions";
  if (p.includes(`${path.sep}_versions${path.sep}`)) return "versions";
  if (p.includes(`${path.sep}_transactions${path.sep}`)) return "transactions";
  return "other";
}
// Bytes and files under dir, in total and per file class.
export function diskUsage(dir, acc = { total: 0, files: 0, byClass: {} }) {
  if (isRemote(dir)) return acc; /* objects are not walked on S3: wall time only */
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) { diskUsage(p, acc); continue; }
    const size = fs.statSync(p).size, c = fileClass(p);
    acc.total += size; acc.files++;
    acc.byClass[c] = acc.byClass[c] || { bytes: 0, files: 0 };
    acc.byClass[c].bytes += size; acc.byClass[c].files++;
  }
  return acc;
}
function procIo() {
  const o = {};
  for (const l of fs.readFileSync("/proc/self/io", "utf8").trim().split("\n")) {
    const [k, v] = l.split(":");
    o[k.trim()] = Number(v);
  }
  return o;
}

// Optimizes the table at tablePath; returns the report object.
export async function optimizeTable(tablePath, { cleanup = false } = {}) {
  const { abs, tbl } = await openTable(tablePath);
  const before = diskUsage(abs);
  const s0 = await tbl.stats();
  const v0 = await tbl.version();
  const io0 = procIo();
  const t0 = process.hrtime.bigint();
  const result = await tbl.optimize(cleanup ? { cleanupOlderThan: new Date(), deleteUnverified: true } : undefined);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const io1 = procIo();
  const after = diskUsage(abs);
  const s1 = await tbl.stats();
  return {
    table: abs, cleanup, wall_ms: Math.round(ms), result,
    version: { before: v0, after: await tbl.version() }, rows: await tbl.countRows(),
    fragments: { before: s0.fragmentStats.numFragments, after: s1.fragmentStats.numFragments },
    disk: { before, after, delta: after.total - before.total },
    proc_io: Object.fromEntries(Object.keys(io1).map((k) => [k, io1[k] - io0[k]])),
  };
}

export function formatText(out) {
  return [
    `optimize ${out.table} cleanup=${out.cleanup}: ${out.wall_ms} ms, version ${out.version.before} -> ${out.version.after}, rows ${out.rows}, fragments ${out.fragments.before} -> ${out.fragments.after}`,
    `  stats ${JSON.stringify(out.result)}`,
    `  disk before ${out.disk.before.total} B (${out.disk.before.files} files) ${JSON.stringify(out.disk.before.byClass)}`,
    `  disk after  ${out.disk.after.total} B (${out.disk.after.files} files) ${JSON.stringify(out.disk.after.byClass)}`,
    `  proc io delta ${JSON.stringify(out.proc_io)}`,
  ].join("\n");
}

const USAGE = "usage: lance_optimize.mjs PATH/name.lance [--cleanup] [--json]";

async function main() {
  const a = parseOptions(process.argv.slice(2), { cleanup: false, json: false }, USAGE);
  if (a._.length !== 1) throw new Error(USAGE);
  const out = await optimizeTable(a._[0], { cleanup: a.cleanup });
  console.log(a.json ? toJson(out) : formatText(out));
}

if (isMain(import.meta.url)) runMain("lance_optimize.mjs", main);
