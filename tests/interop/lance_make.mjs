#!/usr/bin/env node
// Deterministic generator of real Lance tables for brid's interop tests.
//
//   node tests/interop/lance_make.mjs --out DIR --tables LIST [options]
//
// Writes DIR/<name>.lance with LanceDB 0.39.0 (Lance 12.0.0) and prints a JSON summary.
// DIR may be s3://BUCKET/PREFIX (endpoint and keys from the environment: see
// s3StorageOptions in lance_common.mjs).
// Every value is a function of (--seed, row id, column), so two runs with the same
// options hold the same values (lance_read.mjs prints the same hashes); file names,
// UUIDs and timestamps differ.  Each table has a unique non-null `id int64` column
// (lance_read.mjs sorts by it).  Each fragment is one createTable/add call.
//
// Tables (--tables a,b,c or "all"):
//   plain      the oracle's plain table, same values as the first oracle's make_tables.mjs:
//              id int64, f64 double, s utf8, cat utf8 (5 values), vec fsl<float32,8>,
//              n32 int32 (1/3 null), allnull int32, bin large_binary.
//   blobs      the oracle's Blob v2 table (id, label utf8, blob), from --blob-batches.
//   encodings  the oracle's encodings table: runs (RLE), seq, f64r, zs (zstd + dict),
//              bigbin (~3 KB, FullZip), nbig (800 B utf8, 10% null).
//   types      every primitive type: bool; int8..int64 and uint8..uint64 with min, max,
//              0, +-1 and nulls; float16/32/64 with NaN (also payload NaNs), -0.0, +-inf,
//              max, smallest subnormal; date32, date64; time32 s/ms, time64 us/ns;
//              timestamp s/ms/us/ns without zone and with UTC / Europe/Paris /
//              America/New_York; duration ms/ns; decimal128(38,2), decimal128(9,3),
//              decimal256(76,10); utf8 (multi-byte, empty), large_utf8, binary,
//              large_binary, fixed_size_binary 16 and 3, fsl<float32?,4> with null items
//              and rows, fsl<int16,3>; an all-null column, constant int32 and utf8
//              columns, runs (int64 runs of 700, utf8 runs of 450), low-cardinality utf8,
//              Arrow dictionaries <int32,utf8> (nullable) and <int8,large_utf8>,
//              300-800 B strings with nulls (FullZip) and 33-70 KiB strings; and columns
//              with Lance field-metadata hints: float32 (bss=on, lz4) and float64 (bss=on,
//              zstd) -> General(ByteStreamSplit), int64 with structural-encoding=fullzip,
//              utf8 with compression=lz4 and compression=none.
//   nested     list<int32?>? (nulls, empties, null items), list<list<int32?>?>?,
//              list<utf8?>, list<double> (non-null), struct<a int32?, b utf8?>?,
//              struct<inner struct<x int64, y double?>?, tag utf8>,
//              list<struct<p int32, q utf8?>?>? (list.struct),
//              struct<l list<int32?>?, k int64>?, struct<v fsl<float32,3>, n int8?>,
//              list<fsl<int16?,2>?>?, and list<int32?>? / list<utf8?>? with
//              structural-encoding=fullzip (FullZip pages with repetition levels).
//   largelist  large_list<int32?>? and large_list<utf8?>?.  apache-arrow 18 has no
//              LargeList, so the columns are written as list and converted with
//              alterColumns(large_list) after the last append: every fragment then has
//              two data files (the cast columns live in the second one).  Appending to
//              this table from JS is not possible (LanceDB's add() cannot parse its schema).
//   extras     types Lance 12 accepts beyond the oracle's encoding: map<utf8, int32?>?
//              (logical type "map"; 2.2 only, Lance refuses maps in 2.1 files, so the
//              column is left out there) and an Arrow Null column (logical type "null").
//   blobnest   Blob v2 at top level (blob), inside a struct (st.b) and inside a list
//              (lb, list<blob>), with empty, null, inline, packed and dedicated values;
//              small per-field thresholds (--blobnest-inline-threshold 64,
//              --blobnest-dedicated-threshold 4096) keep the table small.
//
// Options (defaults in brackets):
//   --out DIR                  output directory (a LanceDB "database")          [required]
//   --tables LIST              comma list or "all"                              [plain,blobs]
//   --seed N                   PRNG seed                                        [42]
//   --storage-version V        new_table_data_storage_version (2.0, 2.1, 2.2)   [2.2]
//                              (a table with a Blob v2 column is always 2.2; with 2.0
//                              Lance refuses nested: "struct field `st` contains 215
//                              null value(s), but Lance file version 2.0 does not encode
//                              struct validity")
//   --stable-row-ids           new_table_enable_stable_row_ids=true
//   --mode overwrite|create    [overwrite]
//   --delete SQL               delete predicate for every table that has no --<t>-delete
//   --small                    CI-sized oracle tables: --enc-rows 2000 --blob-batches 1:mixed
//                              unless given (the oracle defaults write ~120 MB)
//   --<t>-fragments N          appends (fragments) for table t; --<t>-rows N rows in each.
//                              Defaults: types 2x3000, nested 2x1500, largelist 2x1000,
//                              extras 2x500, blobnest 2x24, encodings 1x--enc-rows.
//   --<t>-delete SQL           delete predicate for table t ("" = none) [none, except plain
//                              and blobs below].  Lance writes a fragment's deletions as an
//                              .arrow file below 5000 deleted rows and as a .bin roaring
//                              bitmap above, e.g. .bin: --types-rows 12000 --types-delete
//                              "id % 2 = 0"; .arrow: --types-delete "id % 7 = 3".
//   Oracle-compatible options (same names, defaults and values as make_tables.mjs):
//   --plain-name NAME [plain]  --blob-name NAME [blobs]
//   --fragments N [4]          --rows N [1000]          (the plain table)
//   --plain-delete SQL         [id % 7 = 3 OR (id >= 1100 AND id < 1900)]
//   --blob-batches SPEC        APPENDS:mixed or APPENDS:ROWS:SIZE, comma list   [4:mixed]
//                              mixed = 11 rows per append: empty 0, small 1K/16K/60K,
//                              edge64k 65536, medium 100K/1M/3M, edge4m 4194304, large 5M,
//                              null (id slot 12k+11 is the --with-uri row).
//   --blob-delete SQL          [id % 5 = 2 OR id = 21]
//   --with-uri                 external-URI row in mixed batches (LanceDB 0.39 refuses it:
//                              "outside registered external bases")
//   --inline-threshold B, --dedicated-threshold B, --pack-file-threshold B
//                              Blob v2 field thresholds of the blobs table        [Lance's]
//   --enc-rows N               rows per encodings fragment                     [20000]
//   --blobnest-inline-threshold B [64]   --blobnest-dedicated-threshold B [4096]
//
// Summary (stdout, JSON): {lancedb, out, seed, storageVersion, tables: {name: {rows,
// deleted, version, fragments, deletionFiles: {arrow, bin}, stats, ms, ...}}, ms}.
//
// The generators are exported for lance_ops.mjs (append with the same values).

import fs from "node:fs";
import path from "node:path";
import {
  arrow as A, lancedb, seed32, fillBytes, rng, pick, randBits, parseOptions, parseSize,
  lancedbVersion, isMain, runMain, toJson, connectDb, isRemote,
} from "./lance_common.mjs";

const T = A.Type;

// ================================================================== Arrow builders
// Columns are built from plain JS values with explicit buffers, so every stored bit is
// chosen here (payload NaNs, -0.0, float16 bit patterns, decimals) and nothing goes
// through a lossy conversion.  Value conventions by type:
//   ints/dates/times/timestamps/durations: number (<= 32-bit storage) or BigInt (64-bit);
//   float16: the raw u16 bits; float32/float64: a number, or {bits} (u32 number / BigInt);
//   decimal: the unscaled BigInt; bool: boolean; utf8: string; binary: Buffer;
//   list/map/fsl: array of child values; struct: object by field name;
//   dictionary: the index of the value in the field's dictionary (see dictField);
//   Blob v2 field: Buffer, null, or {data, uri}.

const DICTS = new WeakMap(); // Dictionary type -> arrow Vector of its values

function dictField(name, valueType, indexType, id, values, nullable) {
  const t = new A.Dictionary(valueType, indexType, id, false);
  DICTS.set(t, A.makeVector(buildData(new A.Field("v", valueType, false), values)));
  return new A.Field(name, t, nullable);
}

function validity(vals) {
  let nulls = 0;
  for (const v of vals) if (v === null || v === undefined) nulls++;
  if (nulls === 0) return { nullCount: 0 };
  const bm = new Uint8Array((vals.length + 7) >> 3);
  vals.forEach((v, i) => { if (v !== null && v !== undefined) bm[i >> 3] |= 1 << (i & 7); });
  return { nullBitmap: bm, nullCount: nulls };
}

// The value a non-nullable field stores under a null parent (never visible).
function zeroOf(type) {
  switch (type.typeId) {
    case T.Struct: return Object.fromEntries(type.children.map((f) => [f.name, zeroOf(f.type)]));
    case T.List: case T.Map: return [];
    case T.FixedSizeList: return Array.from({ length: type.listSize }, () => zeroOf(type.children[0].type));
    case T.Utf8: case T.LargeUtf8: return "";
    case T.Binary: case T.LargeBinary: return Buffer.alloc(0);
    case T.FixedSizeBinary: return Buffer.alloc(type.byteWidth);
    case T.Bool: return false;
    case T.Decimal: return 0n;
    case T.Dictionary: return 0;
    default: return new type.ArrayType(1)[0];
  }
}

function encodeVar(type, vals, large) {
  const n = vals.length;
  const bufs = vals.map((v) => (v === null || v === undefined ? null
    : Buffer.isBuffer(v) || v instanceof Uint8Array ? Buffer.from(v.buffer, v.byteOffset, v.length)
      : Buffer.from(String(v), "utf8")));
  const total = bufs.reduce((s, b) => s + (b ? b.length : 0), 0);
  const data = Buffer.alloc(total);
  const offsets = large ? new BigInt64Array(n + 1) : new Int32Array(n + 1);
  let pos = 0;
  bufs.forEach((b, i) => {
    if (b) { b.copy(data, pos); pos += b.length; }
    offsets[i + 1] = large ? BigInt(pos) : pos;
  });
  return A.makeData({ type, length: n, valueOffsets: offsets, data: new Uint8Array(data.buffer, data.byteOffset, total), ...validity(vals) });
}

// Builds the arrow Data of `field` for the values `vals` (conventions above).
export function buildData(field, vals) {
  const type = field.type, n = vals.length;
  if (lancedb.isBlobField(field)) {
    vals = vals.map((v) => (v === null || v === undefined ? null
      : Buffer.isBuffer(v) ? { data: v, uri: null } : v));
  }
  if (!field.nullable) {
    vals = vals.map((v) => (v === null || v === undefined ? zeroOf(type) : v));
  }
  const nb = validity(vals);
  switch (type.typeId) {
    case T.Null:
      return A.makeData({ type, length: n, nullCount: n });
    case T.Bool: {
      const bits = new Uint8Array((n + 7) >> 3);
      vals.forEach((v, i) => { if (v) bits[i >> 3] |= 1 << (i & 7); });
      return A.makeData({ type, length: n, data: bits, ...nb });
    }
    case T.Float: {
      const arr = new type.ArrayType(n);
      const w = arr.BYTES_PER_ELEMENT;
      const raw = w === 2 ? arr : w === 4 ? new Uint32Array(arr.buffer) : new BigUint64Array(arr.buffer);
      vals.forEach((v, i) => {
        if (v === null || v === undefined) return;
        if (typeof v === "object") raw[i] = v.bits; else arr[i] = v;
      });
      return A.makeData({ type, length: n, data: arr, ...nb });
    }
    case T.Int: case T.Date: case T.Time: case T.Timestamp: case T.Duration: {
      const arr = new type.ArrayType(n);
      const big = arr instanceof BigInt64Array || arr instanceof BigUint64Array;
      vals.forEach((v, i) => { if (v !== null && v !== undefined) arr[i] = big ? BigInt(v) : Number(v); });
      return A.makeData({ type, length: n, data: arr, ...nb });
    }
    case T.Decimal: {
      const words = type.bitWidth / 32;
      const arr = new Uint32Array(n * words);
      vals.forEach((v, i) => {
        if (v === null || v === undefined) return;
        let x = BigInt.asUintN(type.bitWidth, BigInt(v));
        for (let k = 0; k < words; k++) { arr[i * words + k] = Number(x & 0xFFFFFFFFn); x >>= 32n; }
      });
      return A.makeData({ type, length: n, data: arr, ...nb });
    }
    case T.Utf8: case T.Binary: return encodeVar(type, vals, false);
    case T.LargeUtf8: case T.LargeBinary: return encodeVar(type, vals, true);
    case T.FixedSizeBinary: {
      const w = type.byteWidth, data = new Uint8Array(n * w);
      vals.forEach((v, i) => { if (v) data.set(v.subarray(0, w), i * w); });
      return A.makeData({ type, length: n, data, ...nb });
    }
    case T.List: case T.Map: {
      const offsets = new Int32Array(n + 1), flat = [];
      vals.forEach((v, i) => { if (v) flat.push(...v); offsets[i + 1] = flat.length; });
      const child = buildData(type.children[0], flat);
      return A.makeData({ type, length: n, valueOffsets: offsets, child, ...nb });
    }
    case T.FixedSizeList: {
      const flat = [];
      for (const v of vals) {
        if (v) flat.push(...v); else for (let k = 0; k < type.listSize; k++) flat.push(null);
      }
      const child = buildData(type.children[0], flat);
      return A.makeData({ type, length: n, child, ...nb });
    }
    case T.Struct: {
      const children = type.children.map((f) => buildData(f, vals.map((v) => (v ? v[f.name] : null))));
      return A.makeData({ type, length: n, children, ...nb });
    }
    case T.Dictionary: {
      const idx = new type.indices.ArrayType(n);
      vals.forEach((v, i) => { if (v !== null && v !== undefined) idx[i] = v; });
      return A.makeData({ type, length: n, data: idx, dictionary: DICTS.get(type), ...nb });
    }
    default:
      throw new Error(`lance_make: no builder for ${type}`);
  }
}

// An arrow Table of one record batch from fields and per-column value arrays.
export function makeTable(fields, cols) {
  const schema = new A.Schema(fields);
  const n = cols.length ? cols[0].length : 0;
  const children = fields.map((f, k) => buildData(f, cols[k]));
  const rb = new A.RecordBatch(schema, A.makeData({ type: new A.Struct(fields), length: n, nullCount: 0, children }));
  return new A.Table(schema, [rb]);
}

// ================================================================== value helpers
const WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
  "india", "juliet", "kilo", "lima", "mike", "november", "oscar", "papa"];
const CATS = ["red", "green", "blue", "cyan", "magenta"];
const UNI = ["é", "日本語", "🙂", "Ωμέγα", "straße", "naïve", ""];
const CAT8 = ["north", "south", "east", "west", "up", "down", "left", "right"];
const DICT12 = ["apple", "banana", "cherry", "date", "elderberry", "fig", "grape",
  "honeydew", "kiwi", "lemon", "mango", "nectarine"];

// Independent stream for column k of one row: the row state mixed with the column index.
function colRng(rowState, k) {
  let s = (rowState ^ Math.imul(k + 1, 0x9E3779B9)) >>> 0;
  if (s === 0) s = 0x2545F491;
  const r = rng(s);
  r(); // decorrelate neighbouring columns
  return r;
}
const seedOf = (r) => Math.floor(r() * 4294967296) || 1;
const hex = (r, nbytes) => fillBytes(nbytes, seedOf(r)).toString("hex");
function words(r, k) {
  const w = [];
  for (let j = 0; j < k; j++) w.push(WORDS[pick(r, WORDS.length)]);
  return w.join(" ");
}

// A column of a row-generated table: field + gen(r, id) -> value.
const col = (name, type, nullable, gen, meta) => ({ field: new A.Field(name, type, nullable, meta), gen });
// Field metadata lance-encoding:<key> = value (Lance's per-field encoding hints).
const md = (o) => new Map(Object.entries(o).map(([k, v]) => [`lance-encoding:${k}`, v]));

// Integer column: min, max, 0, +-1 and null at fixed positions of a 23-row cycle
// (shifted per column), random full-range values elsewhere.
function intCol(name, type, shift) {
  const bits = type.bitWidth, signed = type.isSigned;
  const min = signed ? -(1n << BigInt(bits - 1)) : 0n;
  const max = signed ? (1n << BigInt(bits - 1)) - 1n : (1n << BigInt(bits)) - 1n;
  const specials = [min, max, 0n, signed ? -1n : 1n, null, 1n];
  const conv = (v) => (v === null ? null : bits === 64 ? v : Number(v));
  return col(name, type, true, (r, id) => {
    const m = (id + shift) % 23;
    if (m < specials.length) return conv(specials[m]);
    const v = randBits(r, bits);
    return conv(signed ? BigInt.asIntN(bits, v) : v);
  });
}
// Float column: special bit patterns on a 29-row cycle, random finite values elsewhere.
function floatCol(name, type, shift, specials, random) {
  return col(name, type, true, (r, id) => {
    const m = (id + shift) % 29;
    return m < specials.length ? specials[m] : random(r);
  });
}
const F16_SPECIALS = [0x7e00, 0x8000, 0x7c00, 0xfc00, 0x7bff, 0x0001, null, 0x7d01, 0x3c00, 0x0000];
const F32_SPECIALS = [{ bits: 0x7fc00000 }, { bits: 0x80000000 }, { bits: 0x7f800000 }, { bits: 0xff800000 },
  { bits: 0x7f7fffff }, { bits: 0x00000001 }, null, { bits: 0x7fa00001 }, { bits: 0xffc00000 }, 1];
const F64_SPECIALS = [{ bits: 0x7ff8000000000000n }, { bits: 0x8000000000000000n },
  { bits: 0x7ff0000000000000n }, { bits: 0xfff0000000000000n }, { bits: 0x7fefffffffffffffn },
  { bits: 0x0000000000000001n }, null, { bits: 0x7ff0000000000001n }, { bits: 0xfff8000000000123n }, 1];
function randF16(r) {
  let b = pick(r, 65536);
  if (((b >> 10) & 0x1f) === 0x1f) b ^= 0x4000; // keep it finite
  return b;
}
// Time/temporal column: fixed special values on a 31-row cycle, random in [lo, hi] else.
function rangeCol(name, type, shift, specials, lo, hi, big) {
  return col(name, type, true, (r, id) => {
    const m = (id + shift) % 31;
    if (m < specials.length) return specials[m];
    const span = hi - lo;
    if (!big) return lo + pick(r, Number(span) + 1);
    return lo + randBits(r, 64) % (span + 1n);
  });
}
function decimalCol(name, precision, scale, bitWidth, shift) {
  const lim = 10n ** BigInt(precision) - 1n;
  const specials = [lim, -lim, 0n, null, 1n, -1n];
  return col(name, new A.Decimal(scale, precision, bitWidth), true, (r, id) => {
    const m = (id + shift) % 19;
    if (m < specials.length) return specials[m];
    const v = randBits(r, bitWidth) % (lim + 1n);
    return r() < 0.5 ? -v : v;
  });
}

// ================================================================== table: plain (oracle)
function plainBatch(seed, start, n) {
  const fields = [
    new A.Field("id", new A.Int64(), false),
    new A.Field("f64", new A.Float64(), false),
    new A.Field("s", new A.Utf8(), false),
    new A.Field("cat", new A.Utf8(), false),
    new A.Field("vec", new A.FixedSizeList(8, new A.Field("item", new A.Float32(), true)), false),
    new A.Field("n32", new A.Int32(), true),
    new A.Field("allnull", new A.Int32(), true),
    new A.Field("bin", new A.LargeBinary(), false),
  ];
  const cols = fields.map(() => []);
  for (let i = 0; i < n; i++) {
    const id = start + i;
    const r = rng(seed32(seed, id, 1));
    const f64 = id * 0.5 + r() - 0.5;
    const nw = 1 + Math.floor(r() * 8);
    const w = [`row${id}`];
    for (let j = 0; j < nw; j++) w.push(WORDS[Math.floor(r() * WORDS.length)]);
    const cat = CATS[Math.floor(r() * CATS.length)];
    const vec = [];
    for (let j = 0; j < 8; j++) vec.push(Math.fround(r() * 2 - 1));
    const row = [BigInt(id), f64, w.join(" "), cat, vec,
      id % 3 === 0 ? null : ((id * 7919) % 100000) - 50000, null, fillBytes(id % 50, seed32(seed, id, 2))];
    row.forEach((v, k) => cols[k].push(v));
  }
  return makeTable(fields, cols);
}

// ================================================================== table: encodings (oracle)
function encodingsBatch(seed, start, n) {
  const fields = [
    new A.Field("id", new A.Int64(), false),
    new A.Field("runs", new A.Int32(), false),
    new A.Field("seq", new A.Int64(), false),
    new A.Field("f64r", new A.Float64(), false),
    new A.Field("zs", new A.Utf8(), false, new Map([["lance-encoding:compression", "zstd"]])),
    new A.Field("bigbin", new A.LargeBinary(), false),
    new A.Field("nbig", new A.Utf8(), true),
  ];
  const cols = fields.map(() => []);
  for (let k = 0; k < n; k++) {
    const i = start + k;
    const r = rng(seed32(seed, i, 5));
    const row = [BigInt(i), Math.floor(i / 1000), BigInt(i * 3 + 7), r() * 1000,
      `value-${i % 97}-` + "x".repeat(i % 13), fillBytes(3000 + (i % 5), seed32(seed, i, 6)),
      i % 10 === 0 ? null : fillBytes(400, seed32(seed, i, 7)).toString("hex")];
    row.forEach((v, c) => cols[c].push(v));
  }
  return makeTable(fields, cols);
}

// ================================================================== row-generated tables
// A table spec: columns() -> [{field, gen(r, id)}]; salt separates tables' streams.
function rowBatch(columns, salt) {
  return (seed, start, n, a = DEFAULTS) => {
    const cs = columns(a, seed);
    const vals = cs.map(() => new Array(n));
    for (let i = 0; i < n; i++) {
      const id = start + i;
      const s = seed32(seed, id, salt);
      cs.forEach((c, k) => { vals[k][i] = c.gen(colRng(s, k), id); });
    }
    return makeTable(cs.map((c) => c.field), vals);
  };
}

function typesColumns() {
  const DAY_MIN = -719162, DAY_MAX = 2932896; // 0001-01-01, 9999-12-31
  const SEC_MIN = -62135596800n, SEC_MAX = 253402300799n;
  const tsCol = (name, type, mul, shift) => rangeCol(name, type, shift,
    [0n, null, SEC_MIN * mul, SEC_MAX * mul, -1n], -2208988800n * mul, 4102444800n * mul, true);
  return [
    col("id", new A.Int64(), false, (r, id) => BigInt(id)),
    col("b", new A.Bool(), true, (r, id) => (id % 5 === 4 ? null : r() < 0.5)),
    col("b_nn", new A.Bool(), false, (r) => r() < 0.3),
    intCol("i8", new A.Int8(), 0), intCol("i16", new A.Int16(), 3), intCol("i32", new A.Int32(), 6),
    intCol("i64", new A.Int64(), 9), intCol("u8", new A.Uint8(), 12), intCol("u16", new A.Uint16(), 15),
    intCol("u32", new A.Uint32(), 18), intCol("u64", new A.Uint64(), 21),
    col("i32_small", new A.Int32(), false, (r) => pick(r, 1000)),
    col("u16_nn", new A.Uint16(), false, (r) => pick(r, 65536)),
    floatCol("f16", new A.Float16(), 0, F16_SPECIALS, randF16),
    floatCol("f32", new A.Float32(), 7, F32_SPECIALS, (r) => Math.fround((r() - 0.5) * 2e6)),
    floatCol("f64", new A.Float64(), 14, F64_SPECIALS, (r) => (r() - 0.5) * 1e12),
    rangeCol("d32", new A.DateDay(), 0, [DAY_MIN, DAY_MAX, 0, null, -1], -25000, 50000, false),
    col("d64", new A.DateMillisecond(), true, (r, id) => (id % 17 === 3 ? null
      : BigInt(id % 17 === 4 ? DAY_MIN : id % 17 === 5 ? DAY_MAX : pick(r, 75001) - 25000) * 86400000n)),
    rangeCol("t32s", new A.TimeSecond(), 1, [0, 86399, null], 0, 86399, false),
    rangeCol("t32ms", new A.TimeMillisecond(), 2, [0, 86399999, null], 0, 86399999, false),
    rangeCol("t64us", new A.TimeMicrosecond(), 3, [0n, 86399999999n, null], 0n, 86399999999n, true),
    rangeCol("t64ns", new A.TimeNanosecond(), 4, [0n, 86399999999999n, null], 0n, 86399999999999n, true),
    tsCol("ts_s", new A.TimestampSecond(), 1n, 0),
    tsCol("ts_ms", new A.TimestampMillisecond(), 1000n, 1),
    tsCol("ts_us", new A.TimestampMicrosecond(), 1000000n, 2),
    rangeCol("ts_ns", new A.TimestampNanosecond(), 3,
      [0n, null, -9223372036854775807n, 9223372036854775807n, -1n], -2208988800000000000n, 4102444800000000000n, true),
    tsCol("ts_s_utc", new A.TimestampSecond("UTC"), 1n, 4),
    tsCol("ts_ms_paris", new A.TimestampMillisecond("Europe/Paris"), 1000n, 5),
    tsCol("ts_us_utc", new A.TimestampMicrosecond("UTC"), 1000000n, 6),
    rangeCol("ts_ns_ny", new A.TimestampNanosecond("America/New_York"), 7,
      [0n, null, 1n], -2208988800000000000n, 4102444800000000000n, true),
    rangeCol("dur_ms", new A.DurationMillisecond(), 8, [0n, null, -1n], -86400000000n, 86400000000n, true),
    rangeCol("dur_ns", new A.DurationNanosecond(), 9, [0n, null, 9223372036854775807n], 0n, 10n ** 15n, true),
    decimalCol("dec128", 38, 2, 128, 0),
    decimalCol("dec128s", 9, 3, 128, 5),
    decimalCol("dec256", 76, 10, 256, 10),
    col("s", new A.Utf8(), true, (r, id) => (id % 13 === 0 ? null : id % 13 === 1 ? ""
      : `s${id} ${words(r, pick(r, 4))} ${UNI[pick(r, UNI.length)]}`)),
    col("ls", new A.LargeUtf8(), true, (r, id) => (id % 11 === 3 ? null : id % 11 === 4 ? ""
      : `${UNI[pick(r, UNI.length)]}-${id}-${words(r, 1 + pick(r, 3))}`)),
    col("bin", new A.Binary(), true, (r, id) => (id % 12 === 5 ? null : fillBytes(id % 12 === 6 ? 0 : pick(r, 41), seedOf(r)))),
    col("lbin", new A.LargeBinary(), true, (r, id) => (id % 10 === 7 ? null : fillBytes(pick(r, 101), seedOf(r)))),
    col("fsb", new A.FixedSizeBinary(16), true, (r, id) => (id % 9 === 0 ? null : fillBytes(16, seedOf(r)))),
    col("fsb3", new A.FixedSizeBinary(3), false, (r) => fillBytes(3, seedOf(r))),
    col("fsl", new A.FixedSizeList(4, new A.Field("item", new A.Float32(), true)), true, (r, id) => (id % 10 === 0 ? null
      : [0, 1, 2, 3].map(() => (r() < 0.1 ? null : Math.fround(r() * 2 - 1))))),
    col("fsl_i16", new A.FixedSizeList(3, new A.Field("item", new A.Int16(), false)), false,
      (r) => [0, 1, 2].map(() => pick(r, 65536) - 32768)),
    col("allnull", new A.Utf8(), true, () => null),
    col("const_i32", new A.Int32(), false, () => 7),
    col("const_s", new A.Utf8(), true, () => "constant-value"),
    col("runs", new A.Int64(), false, (r, id) => BigInt(Math.floor(id / 700) * 3)),
    col("runs_s", new A.Utf8(), false, (r, id) => `run-${Math.floor(id / 450)}`),
    col("cat", new A.Utf8(), false, (r) => CAT8[pick(r, CAT8.length)]),
    { field: dictField("dict", new A.Utf8(), new A.Int32(), 1, DICT12, true),
      gen: (r, id) => (id % 10 === 9 ? null : pick(r, DICT12.length)) },
    { field: dictField("dict8", new A.LargeUtf8(), new A.Int8(), 2, CAT8, false), gen: (r) => pick(r, CAT8.length) },
    col("big", new A.Utf8(), true, (r, id) => (id % 7 === 2 || r() < 0.1 ? null : hex(r, 150 + pick(r, 251)))),
    col("huge", new A.Utf8(), true, (r, id) => (id % 19 === 3 ? null
      : id % 200 === 17 ? hex(r, 16896 + pick(r, 18945)) : `h${id}-${hex(r, pick(r, 30))}`)),
    // Encodings Lance only picks when a field asks for them (field metadata).
    col("f32_bss_lz4", new A.Float32(), false, (r, id) => Math.fround(20 + Math.sin(id / 50) + r() * 1e-3), md({ bss: "on", compression: "lz4" })),
    col("f64_bss_zstd", new A.Float64(), true, (r, id) => (id % 23 === 5 ? null : 1000 + id * 0.25 + r() * 1e-6),
      md({ bss: "on", compression: "zstd" })),
    col("i64_fullzip", new A.Int64(), true, (r, id) => (id % 6 === 1 ? null : randBits(r, 40)), md({ "structural-encoding": "fullzip" })),
    col("s_lz4", new A.Utf8(), false, (r, id) => `lz4-${id % 37}-${words(r, 2)}`, md({ compression: "lz4" })),
    col("s_nocomp", new A.Utf8(), true, (r, id) => (id % 5 === 0 ? null : words(r, 1 + pick(r, 3))), md({ compression: "none" })),
  ];
}

function nestedColumns() {
  const I = (name = "item", nullable = true) => new A.Field(name, new A.Int32(), nullable);
  const listOf = (f) => new A.List(f);
  const ints = (r, k, pnull) => Array.from({ length: k }, () => (r() < pnull ? null : pick(r, 2000001) - 1000000));
  const stAB = new A.Struct([new A.Field("a", new A.Int32(), true), new A.Field("b", new A.Utf8(), true)]);
  const inner = new A.Struct([new A.Field("x", new A.Int64(), false), new A.Field("y", new A.Float64(), true)]);
  const ss = new A.Struct([new A.Field("inner", inner, true), new A.Field("tag", new A.Utf8(), false)]);
  const pq = new A.Struct([new A.Field("p", new A.Int32(), false), new A.Field("q", new A.Utf8(), true)]);
  const sl = new A.Struct([new A.Field("l", listOf(I()), true), new A.Field("k", new A.Int64(), false)]);
  const fsl3 = new A.FixedSizeList(3, new A.Field("item", new A.Float32(), true));
  const sf = new A.Struct([new A.Field("v", fsl3, false), new A.Field("n", new A.Int8(), true)]);
  const fsl2 = new A.FixedSizeList(2, new A.Field("item", new A.Int16(), true));
  return [
    col("id", new A.Int64(), false, (r, id) => BigInt(id)),
    col("l", listOf(I()), true, (r, id) => (id % 9 === 0 ? null : id % 9 === 1 ? [] : ints(r, 1 + pick(r, 6), 0.15))),
    col("ll", listOf(new A.Field("item", listOf(I()), true)), true, (r, id) => (id % 11 === 0 ? null : id % 11 === 1 ? []
      : Array.from({ length: pick(r, 4) }, () => (r() < 0.1 ? null : r() < 0.1 ? [] : ints(r, 1 + pick(r, 4), 0.1))))),
    col("ls", listOf(new A.Field("item", new A.Utf8(), true)), false, (r) =>
      Array.from({ length: pick(r, 5) }, () => (r() < 0.1 ? null : r() < 0.1 ? "" : `${words(r, 1)}${UNI[pick(r, UNI.length)]}`))),
    col("lf64", listOf(new A.Field("item", new A.Float64(), false)), false, (r) =>
      Array.from({ length: pick(r, 5) }, () => r() * 100 - 50)),
    col("st", stAB, true, (r, id) => (id % 7 === 0 ? null
      : { a: r() < 0.2 ? null : pick(r, 100000), b: r() < 0.2 ? null : `b${id}-${words(r, 1)}` })),
    col("ss", ss, false, (r, id) => ({
      inner: id % 6 === 0 ? null : { x: BigInt(id) * 1000003n, y: r() < 0.25 ? null : r() * 10 },
      tag: `t${id % 4}`,
    })),
    col("lst", listOf(new A.Field("item", pq, true)), true, (r, id) => (id % 8 === 0 ? null
      : Array.from({ length: pick(r, 4) }, () => (r() < 0.1 ? null : { p: pick(r, 1000), q: r() < 0.3 ? null : words(r, 1) })))),
    col("sl", sl, true, (r, id) => (id % 10 === 0 ? null
      : { l: r() < 0.15 ? null : r() < 0.1 ? [] : ints(r, 1 + pick(r, 5), 0.2), k: BigInt(id) * 7n })),
    col("sf", sf, false, (r) => ({
      v: [0, 1, 2].map(() => (r() < 0.05 ? null : Math.fround(r() * 10))), n: r() < 0.2 ? null : pick(r, 256) - 128,
    })),
    col("lfsl", listOf(new A.Field("item", fsl2, true)), true, (r, id) => (id % 12 === 0 ? null
      : Array.from({ length: pick(r, 4) }, () => (r() < 0.1 ? null : [pick(r, 65536) - 32768, r() < 0.2 ? null : pick(r, 100)])))),
    // FullZip with repetition levels (Lance picks it for a list only when asked).
    col("l_fullzip", listOf(I()), true, (r, id) => (id % 9 === 2 ? null : id % 9 === 3 ? [] : ints(r, 1 + pick(r, 5), 0.1)),
      md({ "structural-encoding": "fullzip" })),
    col("ls_fullzip", listOf(new A.Field("item", new A.Utf8(), true)), true, (r, id) => (id % 10 === 4 ? null
      : Array.from({ length: pick(r, 4) }, () => (r() < 0.1 ? null : `${words(r, 1)}-${hex(r, pick(r, 200))}`))),
    md({ "structural-encoding": "fullzip" })),
  ];
}

function largelistColumns() {
  return [
    col("id", new A.Int64(), false, (r, id) => BigInt(id)),
    col("ll", new A.List(new A.Field("item", new A.Int32(), true)), true, (r, id) => (id % 9 === 0 ? null : id % 9 === 1 ? []
      : Array.from({ length: 1 + pick(r, 6) }, () => (r() < 0.15 ? null : pick(r, 2000001) - 1000000)))),
    col("lls", new A.List(new A.Field("item", new A.Utf8(), true)), true, (r, id) => (id % 7 === 3 ? null
      : Array.from({ length: pick(r, 5) }, () => (r() < 0.1 ? null : `${words(r, 1 + pick(r, 2))} ${id}`)))),
  ];
}
// The alterColumns requests that turn largelist's list columns into large_list.
const LARGELIST_ALTER = [
  { path: "ll", item: "int32" },
  { path: "lls", item: "string" },
];

// Lance 12 refuses map columns in 2.0/2.1 files ("Not supported: Map data type is not
// enabled by the selected file format"): there the table has no `m`.
const mapAllowed = (a) => !/^(0\.|2\.0|2\.1|legacy|stable)/.test(String(a["storage-version"]));
function extrasColumns(a) {
  const entries = new A.Field("entries", new A.Struct([
    new A.Field("key", new A.Utf8(), false), new A.Field("value", new A.Int32(), true)]), false);
  return [
    col("id", new A.Int64(), false, (r, id) => BigInt(id)),
    col("m", new A.Map_(entries, false), true, (r, id) => (id % 8 === 0 ? null : id % 8 === 1 ? []
      : Array.from({ length: 1 + pick(r, 4) }, (_, j) => ({ key: `k${j}-${WORDS[pick(r, WORDS.length)]}`, value: r() < 0.2 ? null : pick(r, 10000) })))),
    col("nul", new A.Null(), true, () => null),
  ].filter((c) => c.field.name !== "m" || mapAllowed(a));
}

// Blob payload sizes of the blobnest table; -1 = null.  With the default thresholds
// (inline <= 64, dedicated > 4096): empty, null, inline 10/33/64, packed 65/300/1000/
// 2048/4096, dedicated 4097/10000.
const BLOBNEST_SIZES = [0, -1, 10, 64, 65, 1000, 4096, 4097, 10000, 300, 33, 2048];
function blobnestColumns(a, seed) {
  const th = {
    inlineSizeThreshold: Number(a["blobnest-inline-threshold"]),
    dedicatedSizeThreshold: Number(a["blobnest-dedicated-threshold"]),
  };
  const payload = (seed, id, salt, size) => (size < 0 ? null : fillBytes(size, seed32(seed, id, salt)));
  const S = BLOBNEST_SIZES, L = S.length;
  return [
    col("id", new A.Int64(), false, (r, id) => BigInt(id)),
    { field: lancedb.blob("blob", th), gen: (r, id) => payload(seed, id, 31, S[id % L]) },
    col("st", new A.Struct([new A.Field("a", new A.Int32(), true), lancedb.blob("b", th)]), true,
      (r, id) => (id % 10 === 7 ? null : { a: id % 4 === 1 ? null : id, b: payload(seed, id, 32, S[(id + 5) % L]) })),
    col("lb", new A.List(lancedb.blob("item", th)), true, (r, id) => (id % 9 === 4 ? null : id % 9 === 5 ? []
      : Array.from({ length: 1 + (id % 3) }, (_, j) => payload(seed, id, 40 + j, S[(id * 7 + j * 5) % L])))),
  ];
}

// ================================================================== blobs (oracle)
export const MIXED = [
  ["empty", 0], ["small", 1024], ["small", 16 * 1024], ["small", 60 * 1024],
  ["edge64k", 64 * 1024], ["medium", 100 * 1024], ["medium", 1024 * 1024],
  ["medium", 3 * 1024 * 1024], ["edge4m", 4 * 1024 * 1024], ["large", 5 * 1024 * 1024],
  ["null", -1], ["uri", -2],
];
// One append of the blobs table: rows start..start+sizes.length-1 (uri slots skipped
// unless withUri).
export function blobsBatch(seed, start, sizes, blobOpts, withUri, uriTarget) {
  const fields = [new A.Field("id", new A.Int64(), false), new A.Field("label", new A.Utf8(), false),
    lancedb.blob("blob", blobOpts)];
  const cols = [[], [], []];
  sizes.forEach(([label, size], i) => {
    const id = start + i;
    if (size === -2 && !withUri) return;
    cols[0].push(BigInt(id));
    cols[1].push(label);
    cols[2].push(size === -1 ? null : size === -2 ? { data: null, uri: uriTarget }
      : fillBytes(size, seed32(seed, id, 3)));
  });
  return makeTable(fields, cols);
}
function blobSpecs(spec) {
  return spec.split(",").filter(Boolean).map((s) => {
    const p = s.split(":");
    const sizes = p[1] === "mixed" ? MIXED
      : Array.from({ length: Number(p[1]) }, () => ["fixed", parseSize(p[2])]);
    return { count: Number(p[0]), sizes };
  });
}

// ================================================================== registry
// batch(seed, start, n, a) -> arrow Table of rows with ids start..start+n-1.
export const TABLES = {
  plain: { batch: (seed, s, n) => plainBatch(seed, s, n), fragments: "fragments", rows: "rows" },
  encodings: { batch: (seed, s, n) => encodingsBatch(seed, s, n), rows: "enc-rows", defFragments: 1 },
  types: { batch: rowBatch(typesColumns, 101), defFragments: 2, defRows: 3000 },
  nested: { batch: rowBatch(nestedColumns, 102), defFragments: 2, defRows: 1500 },
  largelist: { batch: rowBatch(largelistColumns, 103), defFragments: 2, defRows: 1000, alter: LARGELIST_ALTER },
  extras: { batch: rowBatch(extrasColumns, 104), defFragments: 2, defRows: 500 },
  blobnest: { batch: rowBatch(blobnestColumns, 105), defFragments: 2, defRows: 24 },
  blobs: {}, // built from --blob-batches
};
export const ALL_TABLES = ["plain", "blobs", "encodings", "types", "nested", "largelist", "extras", "blobnest"];

export const DEFAULTS = {
  out: "", tables: "plain,blobs", seed: "42", "storage-version": "2.2", "stable-row-ids": false,
  mode: "overwrite", delete: "",
  "plain-name": "plain", "blob-name": "blobs", fragments: "4", rows: "1000",
  // null = not given: the table's default (ORACLE_DELETE below, or --delete) applies
  "plain-delete": null, "blob-batches": "4:mixed", "blob-delete": null, "with-uri": false,
  "inline-threshold": "", "dedicated-threshold": "", "pack-file-threshold": "",
  "enc-rows": "20000",
  "blobnest-inline-threshold": "64", "blobnest-dedicated-threshold": "4096",
  small: false,
};
// --small: CI-sized oracle tables (the oracle defaults write ~120 MB).
const SMALL = { "enc-rows": "2000", "blob-batches": "1:mixed" };
for (const t of ["encodings", "types", "nested", "largelist", "extras", "blobnest"]) {
  DEFAULTS[`${t}-fragments`] = "";
  DEFAULTS[`${t}-delete`] = null;
  if (t !== "encodings") DEFAULTS[`${t}-rows`] = "";
}
const ORACLE_DELETE = { plain: "id % 7 = 3 OR (id >= 1100 AND id < 1900)", blobs: "id % 5 = 2 OR id = 21" };

// Fragment count and rows per fragment of a row-generated table under options `a`.
export function tableShape(name, a) {
  const t = TABLES[name];
  const frag = t.fragments ? a[t.fragments] : a[`${name}-fragments`];
  const rows = t.rows ? a[t.rows] : a[`${name}-rows`];
  return { fragments: frag !== "" && frag !== undefined ? Number(frag) : t.defFragments,
    rows: rows !== "" && rows !== undefined ? Number(rows) : t.defRows };
}
// Delete predicate of a table: --<t>-delete, else --delete, else the oracle default.
function deletePredicate(name, a) {
  const key = name === "blobs" ? "blob-delete" : `${name}-delete`;
  if (a[key] !== null && a[key] !== undefined) return a[key];
  if (a.delete) return a.delete;
  return ORACLE_DELETE[name] || "";
}

export function storageOptions(a) {
  const so = { new_table_data_storage_version: a["storage-version"] };
  if (a["stable-row-ids"]) so.new_table_enable_stable_row_ids = "true";
  return so;
}

// Converts the list columns of a largelist table to large_list (one new data file per
// fragment).  LanceDB's JS wrapper only forwards type names, so the request goes to the
// native table with Lance's JSON data type.
export async function alterToLargeList(tbl, alters) {
  await tbl.inner.alterColumns(alters.map((x) => ({
    path: x.path,
    dataType: JSON.stringify({ type: "large_list", fields: [{ name: "item", type: { type: x.item }, nullable: true }] }),
  })));
}

function countDeletionFiles(dir) {
  const out = { arrow: 0, bin: 0 };
  const d = path.join(dir, "_deletions");
  if (isRemote(dir)) return null; /* not listed on S3 */
  if (!fs.existsSync(d)) return out;
  for (const f of fs.readdirSync(d)) {
    if (f.endsWith(".arrow")) out.arrow++;
    else if (f.endsWith(".bin")) out.bin++;
  }
  return out;
}

async function finish(tbl, dir, pred, extra, t0) {
  let deleted = 0;
  if (pred) {
    const before = await tbl.countRows();
    await tbl.delete(pred);
    deleted = before - (await tbl.countRows());
  }
  const stats = await tbl.stats();
  return {
    ...extra, rows: await tbl.countRows(), deleted, delete: pred || null, version: await tbl.version(),
    fragments: stats.fragmentStats.numFragments, deletionFiles: countDeletionFiles(dir), stats, ms: Date.now() - t0,
  };
}

async function makeRowTable(db, name, dirName, a, seed, so) {
  const t0 = Date.now();
  const { fragments, rows } = tableShape(name, a);
  if (!(fragments >= 1)) throw new Error(`${name}: need at least one fragment`);
  let tbl = null, columns = null;
  for (let f = 0; f < fragments; f++) {
    const data = TABLES[name].batch(seed, f * rows, rows, a);
    columns = data.schema.fields.map((x) => x.name);
    if (f === 0) tbl = await db.createTable(dirName, data, { mode: a.mode, storageOptions: so });
    else await tbl.add(data);
  }
  if (TABLES[name].alter) await alterToLargeList(tbl, TABLES[name].alter);
  return finish(tbl, `${a.out.replace(/\/+$/, "")}/${dirName}.lance`, deletePredicate(name, a),
    { rowsPerFragment: rows, appends: fragments, columns }, t0);
}

async function makeBlobs(db, a, seed, so) {
  const t0 = Date.now();
  const opts = {};
  if (a["inline-threshold"] !== "") opts.inlineSizeThreshold = Number(a["inline-threshold"]);
  if (a["dedicated-threshold"] !== "") opts.dedicatedSizeThreshold = Number(a["dedicated-threshold"]);
  if (a["pack-file-threshold"] !== "") opts.packFileSizeThreshold = Number(a["pack-file-threshold"]);
  const uriFile = path.resolve(a.out, "external_blob.bin");
  if (a["with-uri"]) fs.writeFileSync(uriFile, fillBytes(4096, seed32(seed, 0, 4)));
  let tbl = null, nextId = 0, appends = 0;
  for (const { count, sizes } of blobSpecs(a["blob-batches"])) {
    for (let k = 0; k < count; k++) {
      const data = blobsBatch(seed, nextId, sizes, opts, a["with-uri"], "file://" + uriFile);
      nextId += sizes.length;
      if (tbl === null) tbl = await db.createTable(a["blob-name"], data, { mode: a.mode, storageOptions: so });
      else await tbl.add(data);
      appends++;
    }
  }
  if (tbl === null) throw new Error("blobs: --blob-batches produced no append");
  return finish(tbl, `${a.out.replace(/\/+$/, "")}/${a["blob-name"]}.lance`, deletePredicate("blobs", a), { appends }, t0);
}

export const USAGE = "usage: lance_make.mjs --out DIR --tables plain,blobs,encodings,types,nested,largelist,extras,blobnest|all [options]\n(options: see the header of tests/interop/lance_make.mjs)";

async function main() {
  const given = new Set(process.argv.slice(2).filter((x) => x.startsWith("--")).map((x) => x.slice(2)));
  const a = parseOptions(process.argv.slice(2), DEFAULTS, USAGE);
  if (a.small) for (const [k, v] of Object.entries(SMALL)) if (!given.has(k)) a[k] = v;
  if (!a.out) throw new Error(`--out DIR is required\n${USAGE}`);
  if (a._.length) throw new Error(`unexpected argument ${a._[0]}\n${USAGE}`);
  const seed = Number(a.seed);
  const tables = a.tables === "all" ? ALL_TABLES : a.tables.split(",").filter(Boolean);
  for (const t of tables) if (!ALL_TABLES.includes(t)) throw new Error(`unknown table ${t} (known: ${ALL_TABLES.join(",")})`);
  if (isRemote(a.out) && a["with-uri"]) throw new Error("--with-uri writes a local file: not with an s3:// or az:// --out");
  if (!isRemote(a.out)) fs.mkdirSync(a.out, { recursive: true });
  const t0 = Date.now();
  const db = await connectDb(a.out);
  const so = storageOptions(a);
  const summary = {
    lancedb: lancedbVersion(), out: isRemote(a.out) ? a.out : path.resolve(a.out), seed, storageVersion: a["storage-version"],
    stableRowIds: a["stable-row-ids"], tables: {},
  };
  for (const name of ALL_TABLES.filter((t) => tables.includes(t))) {
    if (name === "blobs") summary.tables[a["blob-name"]] = await makeBlobs(db, a, seed, so);
    else {
      const dirName = name === "plain" ? a["plain-name"] : name;
      summary.tables[dirName] = await makeRowTable(db, name, dirName, a, seed, so);
    }
  }
  summary.ms = Date.now() - t0;
  console.log(toJson(summary));
}

if (isMain(import.meta.url)) runMain("lance_make.mjs", main);
