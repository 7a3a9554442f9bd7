# Helpers sourced by brid's interop tests (bash): where things are, a scratch
# directory, wrappers around the Lance scripts of this directory, and JSON comparison.
#
#   . "$(dirname "$0")/lib.sh"        (turns on set -euo pipefail)
#
# Variables (exported):
#   REPO            repository root (two levels above this file)
#   INTEROP_DIR     this directory
#   ORACLE_NODE_DIR node_modules home of @lancedb/lancedb 0.39.0 + apache-arrow 18.1.0
#                   [$REPO/.deps/node, installed by scripts/deps.sh]
#   BRI_BUILD       build directory [$REPO/build] (scripts/run-tests.sh sets it)
#   BRICTL          brid's command line tool [$BRI_BUILD/bin/brictl]
#   TMPD            a fresh temporary directory, removed when the shell exits
#                   (kept, and its path printed, when KEEP_TMP=1); a test that sets its
#                   own EXIT trap must call _interop_cleanup from it
# Functions:
#   make_tables OUT ARGS...   lance_make.mjs --out OUT ARGS... (JSON summary on stdout)
#   lance_read TABLE ARGS...  lance_read.mjs TABLE ARGS... (add --json for JSON)
#   lance_ops TABLE OP ARGS...  lance_ops.mjs;  lance_optimize TABLE ARGS...
#   json_eq A B [--ignore k1,k2]
#                             compare two JSON values (each a file name, <(...) or JSON
#                             text), ignoring object members named k1, k2 at any depth;
#                             returns 0 if equal, else prints one line per difference
#                             ($.path: left != right) to stderr and returns 1; returns 2
#                             when an argument is not JSON
#   need_oracle               skip the test (exit 77) when node or LanceDB is missing
#   fail MSG                  print "FAIL: <test>: MSG" to stderr, exit 1
#   pass                      print "PASS: <test>", exit 0
#   skip MSG                  print "SKIP: <test>: MSG", exit 77 (scripts/run-tests.sh
#                             counts any non-zero exit, 77 included, as a failure)

set -euo pipefail

INTEROP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$INTEROP_DIR/../.." && pwd)
ORACLE_NODE_DIR=${ORACLE_NODE_DIR:-$REPO/.deps/node}
BRI_BUILD=${BRI_BUILD:-$REPO/build}
BRICTL=${BRICTL:-$BRI_BUILD/bin/brictl}
LANCEDB_LOG=${LANCEDB_LOG:-error}
export REPO INTEROP_DIR ORACLE_NODE_DIR BRI_BUILD BRICTL LANCEDB_LOG

TEST_NAME=$(basename "${0:-interop}")

TMPD=$(mktemp -d "${TMPDIR:-/tmp}/brid-interop.XXXXXX")
export TMPD
_interop_cleanup() {
  if [ "${KEEP_TMP:-0}" = 1 ]; then
    echo "kept $TMPD" >&2
  else
    rm -rf -- "$TMPD"
  fi
}
trap _interop_cleanup EXIT

fail() { echo "FAIL: $TEST_NAME: $*" >&2; exit 1; }
pass() { echo "PASS: $TEST_NAME"; exit 0; }
skip() { echo "SKIP: $TEST_NAME: $*"; exit 77; }

need_oracle() {
  command -v node >/dev/null 2>&1 || skip "node is not installed"
  [ -f "$ORACLE_NODE_DIR/node_modules/@lancedb/lancedb/package.json" ] ||
    skip "LanceDB is not installed in $ORACLE_NODE_DIR (run scripts/deps.sh)"
}

make_tables() {
  local out=$1; shift
  node "$INTEROP_DIR/lance_make.mjs" --out "$out" "$@"
}
lance_read() { node "$INTEROP_DIR/lance_read.mjs" "$@"; }
lance_ops() { node "$INTEROP_DIR/lance_ops.mjs" "$@"; }
lance_optimize() { node "$INTEROP_DIR/lance_optimize.mjs" "$@"; }

json_eq() {
  node - "$@" <<'EOF'
const fs = require("fs");
const args = process.argv.slice(2);
let ignore = new Set();
const vals = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--ignore") { ignore = new Set(args[++i].split(",").filter(Boolean)); continue; }
  vals.push(args[i]);
}
if (vals.length !== 2) { console.error("json_eq: need two JSON values"); process.exit(2); }
function load(s) {
  let text = s;
  try { if (fs.existsSync(s) && !fs.statSync(s).isDirectory()) text = fs.readFileSync(s, "utf8"); } catch {}
  try { return JSON.parse(text); } catch (e) { console.error(`json_eq: not JSON (${e.message}): ${s.slice(0, 200)}`); process.exit(2); }
}
const [a, b] = vals.map(load);
const diffs = [];
const show = (v) => (v === undefined ? "(missing)" : JSON.stringify(v));
function walk(x, y, p) {
  if (diffs.length >= 50) return;
  const ox = x !== null && typeof x === "object", oy = y !== null && typeof y === "object";
  if (ox && oy && Array.isArray(x) === Array.isArray(y)) {
    if (Array.isArray(x)) {
      if (x.length !== y.length) diffs.push(`${p}: length ${x.length} != ${y.length}`);
      for (let i = 0; i < Math.min(x.length, y.length); i++) walk(x[i], y[i], `${p}[${i}]`);
      return;
    }
    const keys = new Set([...Object.keys(x), ...Object.keys(y)]);
    for (const k of [...keys].sort()) {
      if (ignore.has(k)) continue;
      walk(x[k], y[k], `${p}.${k}`);
    }
    return;
  }
  if (JSON.stringify(x) !== JSON.stringify(y)) diffs.push(`${p}: ${show(x)} != ${show(y)}`);
}
walk(a, b, "$");
if (diffs.length) {
  console.error(`json_eq: ${diffs.length >= 50 ? "50+" : diffs.length} difference(s):`);
  for (const d of diffs) console.error("  " + d);
  process.exit(1);
}
EOF
}
