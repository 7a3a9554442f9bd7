// Shared plumbing for brid's interop scripts (lance_make, lance_read, lance_ops,
// lance_optimize): where the real Lance lives, loading it, argument parsing, the
// deterministic PRNG every generated value comes from, and JSON output.
//
// Real Lance is the npm package @lancedb/lancedb 0.39.0 (it bundles the Rust Lance
// 12.0.0 library) plus apache-arrow 18.1.0, installed by scripts/deps.sh into
// <repo>/.deps/node.  ORACLE_NODE_DIR overrides that directory.  Both packages are
// loaded through createRequire (their CommonJS builds): an ESM import of apache-arrow
// would give a second copy of the Arrow classes and LanceDB would then reject some
// types ("Unrecognized type id in schema").

import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const NODE_DIR = path.resolve(process.env.ORACLE_NODE_DIR || path.join(HERE, "..", "..", ".deps", "node"));

if (!process.env.LANCEDB_LOG) process.env.LANCEDB_LOG = "error";

const req = createRequire(path.join(NODE_DIR, "package.json"));
function load(name) {
  try {
    return req(name);
  } catch (e) {
    console.error(`${path.basename(process.argv[1] || "interop")}: cannot load ${name} from ${NODE_DIR} (run scripts/deps.sh or set ORACLE_NODE_DIR): ${e.message.split("\n")[0]}`);
    process.exit(1);
  }
}
export const lancedb = load("@lancedb/lancedb");
export const arrow = load("apache-arrow");
// Arrow's generated flatbuffer accessors: they know types (LargeList) that
// apache-arrow 18's data model cannot represent.
export const fbSchema = load("apache-arrow/fb/Schema_generated");
export const fbFile = load("apache-arrow/fb/File_generated");
export const flatbuffers = load("flatbuffers");

export function lancedbVersion() {
  const p = path.join(NODE_DIR, "node_modules", "@lancedb", "lancedb", "package.json");
  try { return JSON.parse(fs.readFileSync(p, "utf8")).version; } catch { return "unknown"; }
}

// True when the module whose import.meta.url is `url` is the script node was started with.
export function isMain(url) {
  if (!process.argv[1]) return false;
  try {
    return fs.realpathSync(fileURLToPath(url)) === fs.realpathSync(process.argv[1]);
  } catch {
    return url === pathToFileURL(process.argv[1]).href;
  }
}

// Parses `--key value` / `--flag` arguments.  `defaults` gives every accepted option
// with its default (a boolean default marks a flag); positional arguments are
// returned in `_`.  Unknown options are an error, so typos do not pass silently.
export function parseOptions(argv, defaults, usage) {
  const a = { ...defaults, _: [] };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    if (k === "--help" || k === "-h") { console.log(usage); process.exit(0); }
    if (!k.startsWith("--")) { a._.push(k); continue; }
    const key = k.slice(2);
    if (!(key in defaults)) throw new Error(`unknown option ${k}\n${usage}`);
    if (typeof defaults[key] === "boolean") { a[key] = true; continue; }
    if (i + 1 >= argv.length) throw new Error(`missing value for ${k}`);
    a[key] = argv[++i];
  }
  return a;
}

// Sizes like 4096, 64K, 5M (binary units).
export function parseSize(s) {
  const m = /^(\d+)([KkMmGg]?)$/.exec(String(s));
  if (!m) throw new Error(`bad size ${s}`);
  return Number(m[1]) * { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[m[2].toLowerCase()];
}

// ------------------------------------------------------------------ PRNG
// A splitmix64 finalizer turns (seed, id, salt) into a 32-bit state; xorshift32 then
// produces the stream.  Every generated value is a function of (seed, row id, salt)
// only, so any subset of rows can be regenerated (appends, re-creation).
// These exact functions are also what the first oracle's make_tables.mjs used, so
// tables written by either generator hold identical values.
const M64 = 0xFFFFFFFFFFFFFFFFn;
export function seed32(seed, id, salt) {
  let z = (BigInt(seed) * 0x9E3779B97F4A7C15n + BigInt(id) * 0xBF58476D1CE4E5B9n + BigInt(salt)) & M64;
  z = ((z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n) & M64;
  z = ((z ^ (z >> 27n)) * 0x94D049BB133111EBn) & M64;
  z ^= z >> 31n;
  const s = Number(z & 0xFFFFFFFFn);
  return s === 0 ? 0x12345678 : s;
}
function xorshift(x) {
  x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; return x >>> 0;
}
// n pseudo-random bytes: 32-bit words little endian, then single bytes for the tail.
export function fillBytes(n, s) {
  const buf = Buffer.allocUnsafe(n);
  const words = Math.floor(n / 4);
  const u32 = new Uint32Array(buf.buffer, buf.byteOffset, words);
  let x = s >>> 0;
  for (let i = 0; i < words; i++) { x = xorshift(x); u32[i] = x; }
  for (let i = words * 4; i < n; i++) { x = xorshift(x); buf[i] = x & 0xff; }
  return buf;
}
// A function returning uniform doubles in [0, 1).
export function rng(s) {
  let x = s >>> 0;
  return () => { x = xorshift(x); return x / 4294967296; };
}
// Helpers over an rng: integer in [0, n), a BigInt of `bits` random bits.
export const pick = (r, n) => Math.floor(r() * n);
export function randBits(r, bits) {
  let v = 0n;
  for (let b = 0; b < bits; b += 16) v = (v << 16n) | BigInt(Math.floor(r() * 65536));
  return BigInt.asUintN(bits, v);
}

// ------------------------------------------------------------------ output
export function toJson(v) {
  return JSON.stringify(v, (k, x) => (typeof x === "bigint" ? x.toString() : x), 2);
}

// Runs an async main and turns a rejection into "script: message" on stderr, exit 1
// (with the JS stack when INTEROP_DEBUG=1).
export function runMain(name, fn) {
  fn().catch((e) => {
    const msg = e && e.message !== undefined ? e.message : String(e);
    console.error(`${name}: ${process.env.INTEROP_DEBUG === "1" && e && e.stack ? e.stack : msg}`);
    process.exit(1);
  });
}

// ------------------------------------------------------------------ S3
// Tables on S3-compatible storage are named s3://BUCKET/PREFIX/NAME.lance; the
// endpoint and keys come from the environment as AWS tools take them
// (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION;
// scripts/s3-server.sh prints them for the test radosgw). Requests are
// path-style, and http is allowed for a local endpoint.
export const isS3 = (u) => /^s3:\/\//.test(String(u));
export function s3StorageOptions() {
  const e = process.env;
  if (!e.AWS_ENDPOINT_URL || !e.AWS_ACCESS_KEY_ID || !e.AWS_SECRET_ACCESS_KEY)
    throw new Error("s3:// tables need AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY");
  return {
    endpoint: e.AWS_ENDPOINT_URL, allow_http: "true", aws_access_key_id: e.AWS_ACCESS_KEY_ID,
    aws_secret_access_key: e.AWS_SECRET_ACCESS_KEY, region: e.AWS_REGION || "us-east-1",
    virtual_hosted_style_request: "false",
  };
}
// ------------------------------------------------------------------ Azure
// Tables on Azure Blob Storage are named az://CONTAINER/PREFIX/NAME.lance; the
// account, key and endpoint come from the environment as object_store takes
// them (AZURE_STORAGE_ACCOUNT_NAME, AZURE_STORAGE_ACCOUNT_KEY,
// AZURE_STORAGE_ENDPOINT; scripts/azurite-server.sh prints them for the test
// Azurite, whose endpoint is path-style: http://HOST:PORT/ACCOUNT).
export const isAzure = (u) => /^(az|azure|abfss?):\/\//.test(String(u));
export function azureStorageOptions() {
  const e = process.env;
  if (!e.AZURE_STORAGE_ACCOUNT_NAME || !e.AZURE_STORAGE_ACCOUNT_KEY || !e.AZURE_STORAGE_ENDPOINT)
    throw new Error("az:// tables need AZURE_STORAGE_ACCOUNT_NAME, AZURE_STORAGE_ACCOUNT_KEY and AZURE_STORAGE_ENDPOINT");
  return {
    account_name: e.AZURE_STORAGE_ACCOUNT_NAME, account_key: e.AZURE_STORAGE_ACCOUNT_KEY,
    azure_storage_endpoint: e.AZURE_STORAGE_ENDPOINT, allow_http: "true",
  };
}
// An object-store URI (s3:// or az://): no local path, nothing to walk.
export const isRemote = (u) => isS3(u) || isAzure(u);
// A LanceDB "database": a local directory, or an s3:// or az:// prefix.
export async function connectDb(dirOrUri) {
  const uri = String(dirOrUri).replace(/\/+$/, "");
  if (isS3(dirOrUri)) return lancedb.connect(uri, { storageOptions: s3StorageOptions() });
  if (isAzure(dirOrUri)) return lancedb.connect(uri, { storageOptions: azureStorageOptions() });
  return lancedb.connect(dirOrUri);
}

// Opens DIR/name.lance (or s3://.../name.lance, az://.../name.lance) through LanceDB (a LanceDB
// "database" is the parent directory or prefix). abs is the absolute path or
// the URI.
export async function openTable(tablePath) {
  const trimmed = String(tablePath).replace(/\/+$/, "");
  const abs = isRemote(trimmed) ? trimmed : path.resolve(trimmed);
  if (!isRemote(abs) && !fs.existsSync(abs)) throw new Error(`no such table: ${abs}`);
  const db = await connectDb(isRemote(abs) ? abs.slice(0, abs.lastIndexOf("/")) : path.dirname(abs));
  const name = path.basename(abs).replace(/\.lance$/, "");
  const tbl = await db.openTable(name);
  return { abs, db, tbl, name };
}
