#!/usr/bin/env node
// Read a Lance table with real Lance (LanceDB 0.39.0) and print its row count and one
// SHA-256 per column: the reference brid's reader is compared against.
//
//   node tests/interop/lance_read.mjs PATH/name.lance [--key COL] [--version N] [--json]
//                                     [--no-blob-bytes] [--batch N]
//
//   --key COL        sort rows by this int/string column before hashing [id if present]
//                    ("" = hash in scan order)
//   --version N      check out table version N (or the version a tag names) first
//   --json           one JSON object instead of text lines
//   --no-blob-bytes  do not fetch Blob v2 payloads (top-level blob columns then report
//                    sha256 "skipped"; struct-nested blobs are hashed as kind+size)
//   --batch N        row ids per fetchBlobs call [64]
//
// The text output, and the JSON members table, version, rows, countRows, fragments,
// key, schema, columns and ms, are exactly those of the first oracle's read_table.mjs
// (same encoding, same hashes).  The JSON also has:
//   fragmentRows  {fragment id: visible rows}, from each row's address (_rowaddr >> 32;
//                 _rowid is not an address once stable row ids are on)
//   schemaFields  [{name, type, nullable, blobV2}] per top-level field, type being the
//                 Lance logical type string stored in the manifest (int64, double,
//                 string, timestamp:us:UTC, decimal:128:38:2, fixed_size_list:float:8,
//                 list, list.struct, large_list, struct, map, dict:string:int32:false,
//                 ...).  A Blob v2 field is a "struct" with blobV2 true.
//
// Canonical per-value encoding (a column hash is SHA-256 over the framed values of all
// rows in key order):
//   frame(null) = 0x00; frame(v) = 0x01 + len(v) as u64 LE + v, where v is:
//   integers of any width and signedness: the decimal string of the stored integer;
//   date32 (days), date64 (ms), time32/time64, timestamp (any zone), duration: the
//     decimal string of the stored count in the type's own unit;
//   float16/32/64: the IEEE bits, little endian (2/4/8 bytes); bool: one byte 0 or 1;
//   decimal128/256: the stored 16/32 bytes, little endian;
//   utf8/large_utf8: UTF-8 bytes; binary/large_binary/fixed_size_binary: raw bytes;
//   list/large_list/fixed_size_list (and map, as its entries): the framed children
//     concatenated; struct: the framed children in field order;
//   dictionary: the bytes of the dictionary value it selects; Arrow null type: null.
//   Blob v2 top-level columns: the payload bytes returned by Table.fetchBlobs (so moving
//     bytes between inline/packed/dedicated storage keeps the hash), plus a histogram of
//     descriptor kinds and the payload byte total;
//   Blob v2 fields under structs: the payload bytes fetched by path (e.g. st.b);
//   Blob v2 fields inside lists: kind (u8) + size (u64 LE) per element (LanceDB cannot
//     fetch list elements).
// Beyond the oracle (which stops with an error on them): map and Arrow null columns are
// hashed as above, and large_list columns, which apache-arrow 18 cannot decode, are read
// through a DataFusion arrow_cast to list (same canonical bytes) and reported as
// LargeList<...>.
// Difference from the first oracle: its read_table.mjs recurses with the
// scanned descriptor fields, which carry no lance.blob.v2 marker, so for Blob v2 fields
// under structs or lists it hashes the whole descriptor struct (kind, position, size,
// blob_id, blob_uri), contrary to its own header and not stable across compaction.
// This script follows the header rules above (it recurses with the table schema).

import crypto from "node:crypto";
import path from "node:path";
import {
  arrow, lancedb, fbSchema, fbFile, flatbuffers, parseOptions, openTable, isMain, runMain,
} from "./lance_common.mjs";

const T = arrow.Type;
const FT = fbSchema.Type;
const BLOB_EXT = "lance.blob.v2";

// ------------------------------------------------------------------ canonical bytes
function u64le(n) { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(n)); return b; }
const decimalString = (x) => Buffer.from(BigInt(x).toString());
const view = (v, off, len) => Buffer.from(v.buffer, v.byteOffset + off, len);

export function frame(b) {
  return b === null ? Buffer.from([0]) : Buffer.concat([Buffer.from([1]), u64le(b.length), b]);
}

// Canonical bytes of row i of an Arrow Data chunk (null for a null value), read from the
// stored buffers, never through JS number conversions.
export function canonAt(data, i) {
  const t = data.type;
  if (t.typeId === T.Null || !data.getValid(i)) return null;
  switch (t.typeId) {
    case T.Int: case T.Int8: case T.Int16: case T.Int32: case T.Int64:
    case T.Uint8: case T.Uint16: case T.Uint32: case T.Uint64:
    case T.Date: case T.DateDay: case T.DateMillisecond:
    case T.Time: case T.TimeSecond: case T.TimeMillisecond: case T.TimeMicrosecond: case T.TimeNanosecond:
    case T.Timestamp: case T.TimestampSecond: case T.TimestampMillisecond:
    case T.TimestampMicrosecond: case T.TimestampNanosecond:
    case T.Duration: case T.DurationSecond: case T.DurationMillisecond:
    case T.DurationMicrosecond: case T.DurationNanosecond:
      return decimalString(data.values[i]);
    case T.Float: case T.Float16: case T.Float32: case T.Float64: {
      const w = data.values.BYTES_PER_ELEMENT;
      return view(data.values, i * w, w);
    }
    case T.Decimal: {
      const w = t.bitWidth / 8;
      return view(data.values, i * w, w);
    }
    case T.Bool: {
      const bit = data.offset + i;
      return Buffer.from([(data.values[bit >> 3] >> (bit & 7)) & 1]);
    }
    case T.Utf8: case T.LargeUtf8: case T.Binary: case T.LargeBinary: {
      const o = data.valueOffsets, a = Number(o[i]), b = Number(o[i + 1]);
      return view(data.values, a, b - a);
    }
    case T.FixedSizeBinary:
      return view(data.values, i * t.byteWidth, t.byteWidth);
    case T.List: case T.Map: {
      const o = data.valueOffsets, c = data.children[0], parts = [];
      for (let j = Number(o[i]); j < Number(o[i + 1]); j++) parts.push(frame(canonAt(c, j)));
      return Buffer.concat(parts);
    }
    case T.FixedSizeList: {
      const n = t.listSize, c = data.children[0], parts = [];
      for (let j = i * n; j < (i + 1) * n; j++) parts.push(frame(canonAt(c, j)));
      return Buffer.concat(parts);
    }
    case T.Struct:
      return Buffer.concat(data.children.map((c) => frame(canonAt(c, i))));
    case T.Dictionary:
      return canonAt(data.dictionary.data[0], Number(data.values[i]));
    default:
      throw new Error(`lance_read.mjs: no canonical encoding for Arrow type ${t}`);
  }
}

// Canonical bytes of row i of a field with Blob v2 fields below it (`field` is the
// table-schema field, `data` the scanned descriptors, `p` the dotted path).  A blob
// reached through structs only is its payload (payloads.get(path)[rowPos]); a blob
// inside a list is kind (u8) + size (u64 LE); a missing payload map means kind+size too.
function canonField(field, data, i, p, rowPos, payloads) {
  if (lancedb.isBlobField(field)) {
    if (payloads.has(p)) {
      const b = payloads.get(p)[rowPos];
      return b === null ? null : Buffer.from(b);
    }
    if (!data.getValid(i)) return null;
    return Buffer.concat([Buffer.from([data.children[0].values[i]]), u64le(data.children[2].values[i])]);
  }
  if (!data.getValid(i)) return null;
  const t = field.type;
  if (t.typeId === T.Struct) {
    return Buffer.concat(t.children.map((f, j) =>
      frame(canonField(f, data.children[j], i, `${p}.${f.name}`, rowPos, payloads))));
  }
  if (t.typeId === T.List || t.typeId === T.FixedSizeList || t.typeId === T.Map) {
    const f = t.children[0], c = data.children[0], parts = [];
    const [lo, hi] = t.typeId === T.FixedSizeList ? [i * t.listSize, (i + 1) * t.listSize]
      : [Number(data.valueOffsets[i]), Number(data.valueOffsets[i + 1])];
    for (let j = lo; j < hi; j++) parts.push(frame(canonField(f, c, j, `${p}[]`, -1, payloads)));
    return Buffer.concat(parts);
  }
  return canonAt(data, i);
}

function structBlobPaths(field, p) {
  if (lancedb.isBlobField(field)) return [p];
  if (field.type.typeId !== T.Struct) return [];
  return field.type.children.flatMap((f) => structBlobPaths(f, `${p}.${f.name}`));
}
function hasNestedBlob(field) {
  const c = field.type.children;
  return !!c && c.some((f) => lancedb.isBlobField(f) || hasNestedBlob(f));
}

// Streams framed values into a hash through a 1 MiB buffer.
class FrameSink {
  constructor() { this.h = crypto.createHash("sha256"); this.buf = Buffer.allocUnsafe(1 << 20); this.pos = 0; }
  add(b) {
    const need = b === null ? 1 : 9 + b.length;
    if (this.pos + need > this.buf.length) this.flush();
    if (need > this.buf.length) { this.h.update(frame(b)); return; }
    if (b === null) { this.buf[this.pos++] = 0; return; }
    this.buf[this.pos] = 1;
    this.buf.writeBigUInt64LE(BigInt(b.length), this.pos + 1);
    b.copy(this.buf, this.pos + 9);
    this.pos += need;
  }
  flush() { if (this.pos) { this.h.update(this.buf.subarray(0, this.pos)); this.pos = 0; } }
  digest() { this.flush(); return this.h.digest("hex"); }
}

// ------------------------------------------------------------------ schema (flatbuffers)
// The table schema comes from LanceDB as an Arrow IPC file.  It is decoded here with
// Arrow's generated flatbuffer accessors, which (unlike apache-arrow 18's Schema) know
// LargeList, to get the exact Arrow types Lance holds.

function fbFields(ipc) {
  const u8 = new Uint8Array(ipc.buffer, ipc.byteOffset, ipc.length);
  const n = u8.length;
  if (n < 18 || Buffer.from(u8.subarray(n - 6)).toString("latin1") !== "ARROW1") throw new Error("schema is not an Arrow IPC file");
  const flen = new DataView(u8.buffer, u8.byteOffset + n - 10, 4).getInt32(0, true);
  const footer = fbFile.Footer.getRootAsFooter(new flatbuffers.ByteBuffer(u8.slice(n - 10 - flen, n - 10)));
  const s = footer.schema();
  return Array.from({ length: s.fieldsLength() }, (_, i) => s.fields(i));
}
function fbMeta(f) {
  const m = {};
  for (let i = 0; i < f.customMetadataLength(); i++) m[f.customMetadata(i).key()] = f.customMetadata(i).value();
  return m;
}
const fbChildren = (f) => Array.from({ length: f.childrenLength() }, (_, i) => f.children(i));
const UNIT = ["s", "ms", "us", "ns"];

// Lance's logical type string of an Arrow field (lance-core datatypes.rs rules).
export function logicalType(f, ignoreDict = false) {
  const ext = fbMeta(f)["ARROW:extension:name"];
  if (ext === "arrow.json" || ext === "lance.json") return "json";
  const dict = ignoreDict ? null : f.dictionary();
  if (dict) {
    const it = dict.indexType();
    return `dict:${logicalType(f, true)}:${it.isSigned() ? "" : "u"}int${it.bitWidth()}:false`;
  }
  const tt = f.typeType();
  const get = (Cls) => f.type(new Cls());
  switch (tt) {
    case FT.Null: return "null";
    case FT.Bool: return "bool";
    case FT.Int: { const t = get(fbSchema.Int); return `${t.isSigned() ? "" : "u"}int${t.bitWidth()}`; }
    case FT.FloatingPoint: return ["halffloat", "float", "double"][get(fbSchema.FloatingPoint).precision()];
    case FT.Decimal: { const t = get(fbSchema.Decimal); return `decimal:${t.bitWidth()}:${t.precision()}:${t.scale()}`; }
    case FT.Utf8: return "string";
    case FT.LargeUtf8: return "large_string";
    case FT.Binary: return "binary";
    case FT.LargeBinary: return "large_binary";
    case FT.Date: return get(fbSchema.Date).unit() === fbSchema.DateUnit.DAY ? "date32:day" : "date64:ms";
    case FT.Time: { const t = get(fbSchema.Time); return `time${t.bitWidth()}:${UNIT[t.unit()]}`; }
    case FT.Timestamp: { const t = get(fbSchema.Timestamp); return `timestamp:${UNIT[t.unit()]}:${t.timezone() || "-"}`; }
    case FT.Duration: return `duration:${UNIT[get(fbSchema.Duration).unit()]}`;
    case FT.Struct_: return "struct";
    case FT.Map: return "map";
    case FT.List: case FT.LargeList: {
      const base = tt === FT.List ? "list" : "large_list";
      return fbChildren(f)[0].typeType() === FT.Struct_ ? `${base}.struct` : base;
    }
    case FT.FixedSizeList: {
      const c = fbChildren(f)[0], n = get(fbSchema.FixedSizeList).listSize();
      if (fbMeta(c)["ARROW:extension:name"] === "lance.bfloat16") return `fixed_size_list:lance.bfloat16:${n}`;
      return `fixed_size_list:${logicalType(c)}:${n}`;
    }
    case FT.FixedSizeBinary: return `fixed_size_binary:${get(fbSchema.FixedSizeBinary).byteWidth()}`;
    default: return `unsupported:${FT[tt]}`;
  }
}

const containsLargeList = (f) => f.typeType() === FT.LargeList || fbChildren(f).some(containsLargeList);

// DataFusion (arrow-rs) type name of a field whose large lists are cast to lists.
function castTypeName(f) {
  const tt = f.typeType();
  if (tt === FT.List || tt === FT.LargeList) return `List(${castTypeName(fbChildren(f)[0])})`;
  const simple = {
    bool: "Boolean", int8: "Int8", int16: "Int16", int32: "Int32", int64: "Int64", uint8: "UInt8",
    uint16: "UInt16", uint32: "UInt32", uint64: "UInt64", halffloat: "Float16", float: "Float32",
    double: "Float64", string: "Utf8", large_string: "LargeUtf8", binary: "Binary", large_binary: "LargeBinary",
  }[logicalType(f)];
  if (!simple || f.dictionary()) throw new Error(`lance_read.mjs: cannot read large_list column containing ${logicalType(f)}`);
  return simple;
}

// ------------------------------------------------------------------ read
export async function readTable(tablePath, opts = {}) {
  const o = { key: undefined, version: null, blobBytes: true, batch: 64, ...opts };
  const { abs, tbl } = await openTable(tablePath);
  if (o.version !== null && o.version !== undefined) {
    await tbl.checkout(/^\d+$/.test(String(o.version)) ? Number(o.version) : String(o.version));
  }
  const schemaIpc = await tbl.inner.schema();
  const fbf = fbFields(schemaIpc);
  const schemaFields = fbf.map((f) => ({
    name: f.name(), type: logicalType(f), nullable: f.nullable(), blobV2: fbMeta(f)["ARROW:extension:name"] === BLOB_EXT,
  }));

  // apache-arrow 18 cannot decode LargeList: such columns are scanned through a cast.
  const cast = new Set(fbf.filter(containsLargeList).map((f) => f.name()));
  let query = tbl.query();
  if (cast.size) {
    if (schemaFields.some((f) => f.blobV2)) throw new Error("lance_read.mjs: tables with both large_list and Blob v2 columns are not supported");
    const proj = {};
    for (const f of fbf) proj[f.name()] = cast.has(f.name()) ? `arrow_cast(${f.name()}, '${castTypeName(f)}')` : f.name();
    query = query.select(proj);
  }
  const t0 = Date.now();
  const batches = [];
  for await (const b of query.withRowId()) batches.push(b);
  const schema = cast.size
    ? new arrow.Schema(batches.length ? batches[0].schema.fields.filter((f) => f.name !== "_rowid") : [])
    : arrow.tableFromIPC(schemaIpc).schema;
  if (cast.size && !batches.length) throw new Error("lance_read.mjs: empty large_list table");
  const typeName = (f) => (cast.has(f.name) ? String(f.type).replace(/^List</, "LargeList<") : String(f.type));
  const blobCols = new Set(schema.fields.filter((f) => lancedb.isBlobField(f)).map((f) => f.name));
  const key = o.key === undefined ? (schema.fields.some((f) => f.name === "id") ? "id" : "") : o.key;

  let rows = [];
  for (const b of batches) for (let i = 0; i < b.numRows; i++) rows.push({ batch: b, i });
  if (key) {
    // A stable sort on precomputed keys: the same order as sorting the rows themselves.
    const keys = rows.map((r) => r.batch.getChild(key).get(r.i));
    const order = rows.map((_, k) => k).sort((x, y) => (keys[x] < keys[y] ? -1 : keys[x] > keys[y] ? 1 : 0));
    rows = order.map((k) => rows[k]);
  }
  const rowIdOf = (r) => r.batch.getChild("_rowid").get(r.i);
  async function fetchAll(col) {
    const all = [];
    for (let s = 0; s < rows.length; s += o.batch) {
      all.push(...await tbl.fetchBlobs(col, rows.slice(s, s + o.batch).map(rowIdOf)));
    }
    return all;
  }

  const out = {
    table: abs, version: await tbl.version(), rows: rows.length,
    countRows: await tbl.countRows(), fragments: (await tbl.stats()).fragmentStats.numFragments,
    key: key || null,
    schema: schema.fields.map((f) => `${f.name}:${typeName(f)}${lancedb.isBlobField(f) ? "[blob.v2]" : ""}`),
    columns: {},
  };
  for (const f of schema.fields) {
    const sink = new FrameSink();
    let nulls = 0;
    if (blobCols.has(f.name)) {
      const kinds = {};
      let bytes = 0n;
      for (const r of rows) {
        const d = r.batch.getChild(f.name).get(r.i);
        if (d === null) { kinds.null = (kinds.null || 0) + 1; continue; }
        kinds[`kind${d.kind}`] = (kinds[`kind${d.kind}`] || 0) + 1;
        bytes += BigInt(d.size);
      }
      let hash = "skipped";
      if (o.blobBytes) {
        for (const p of await fetchAll(f.name)) {
          if (p === null) nulls++;
          sink.add(p === null ? null : Buffer.from(p));
        }
        hash = sink.digest();
      } else nulls = kinds.null || 0;
      out.columns[f.name] = { type: "blob.v2", nulls, sha256: hash, descriptorKinds: kinds, payloadBytes: bytes.toString() };
      continue;
    }
    const nested = hasNestedBlob(f), payloads = new Map();
    if (nested && o.blobBytes) {
      for (const bp of structBlobPaths(f, f.name).filter((x) => x !== f.name)) payloads.set(bp, await fetchAll(bp));
    }
    rows.forEach((r, pos) => {
      const d = r.batch.getChild(f.name).data[0];
      const c = nested ? canonField(f, d, r.i, f.name, pos, payloads) : canonAt(d, r.i);
      if (c === null) nulls++;
      sink.add(c);
    });
    out.columns[f.name] = { type: typeName(f), nulls, sha256: sink.digest(), ...(nested ? { nestedBlobs: [...payloads.keys()] } : {}) };
  }

  const fragmentRows = {};
  for await (const b of tbl.query().select(["_rowaddr"])) {
    const ra = b.getChild("_rowaddr");
    for (let i = 0; i < b.numRows; i++) {
      const fid = String(ra.get(i) >> 32n);
      fragmentRows[fid] = (fragmentRows[fid] || 0) + 1;
    }
  }
  out.fragmentRows = fragmentRows;
  out.schemaFields = schemaFields;
  out.ms = Date.now() - t0;
  return out;
}

export function formatText(out) {
  const lines = [
    `table ${out.table}`,
    `version ${out.version} rows ${out.rows} countRows ${out.countRows} fragments ${out.fragments} key ${out.key}`,
    `schema ${out.schema.join(", ")}`,
  ];
  for (const [n, c] of Object.entries(out.columns)) {
    let line = `col ${n} ${c.type} nulls=${c.nulls} sha256=${c.sha256}`;
    if (c.descriptorKinds) line += ` kinds=${JSON.stringify(c.descriptorKinds)} payloadBytes=${c.payloadBytes}`;
    lines.push(line);
  }
  return lines.join("\n");
}

const USAGE = "usage: lance_read.mjs PATH/name.lance [--key COL] [--version N] [--json] [--no-blob-bytes] [--batch N]";

async function main() {
  const a = parseOptions(process.argv.slice(2),
    { key: null, version: null, json: false, "no-blob-bytes": false, batch: "64" }, USAGE);
  if (a._.length !== 1) throw new Error(USAGE);
  const out = await readTable(a._[0], {
    key: a.key === null ? undefined : a.key, version: a.version, blobBytes: !a["no-blob-bytes"], batch: Number(a.batch),
  });
  console.log(a.json ? JSON.stringify(out, null, 2) : formatText(out));
}

if (isMain(import.meta.url)) runMain("lance_read.mjs", main);
