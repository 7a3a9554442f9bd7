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
#   LANCE_PY        python of the venv with pylance 14.0.3 and lancedb 0.40.0 that
#                   lance_py.py runs in [$REPO/.deps/py/bin/python, scripts/deps.sh]
#   BRI_BUILD       build directory [$REPO/build] (scripts/run-tests.sh sets it)
#   BRICTL          brid's command line tool [$BRI_BUILD/bin/brictl]
#   TMPD            a fresh temporary directory, removed when the shell exits
#                   (kept, and its path printed, when KEEP_TMP=1); a test that sets its
#                   own EXIT trap must call _interop_cleanup from it
# Functions:
#   make_tables OUT ARGS...   lance_make.mjs --out OUT ARGS... (JSON summary on stdout)
#   lance_read TABLE ARGS...  lance_read.mjs TABLE ARGS... (add --json for JSON)
#   lance_ops TABLE OP ARGS...  lance_ops.mjs;  lance_optimize TABLE ARGS...
#   lance_py ARGS...          lance_py.py ARGS... in the venv of LANCE_PY (Lance 13 and 14)
#   lance14_rows TABLE...     per table, what pylance 14 reads: its row count and every
#                             column's SHA-256 (one line; fails the test on a read error)
#   json_eq A B [--ignore k1,k2]
#                             compare two JSON values (each a file name, <(...) or JSON
#                             text), ignoring object members named k1, k2 at any depth;
#                             returns 0 if equal, else prints one line per difference
#                             ($.path: left != right) to stderr and returns 1; returns 2
#                             when an argument is not JSON
#   need_oracle               skip the test (exit 77) when node or LanceDB is missing
#   need_lance_py             skip the test (exit 77) when the venv of LANCE_PY is missing
#   need_s3 NAME              need_oracle, and fail without the test radosgw; sets
#                             S3_PREFIX=s3://$BRI_S3_BUCKET/NAME-<unique>
#   need_azure NAME           need_oracle, and fail without the test Azurite; sets
#                             AZ_PREFIX=az://$BRI_AZ_CONTAINER/NAME-<unique>
#   compact_beside_writer TABLE STRATEGY SECONDS
#                             brictl compacts TABLE in a loop beside a LanceDB writer;
#                             then the row set must be exactly the writer's
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
LANCE_PY=${LANCE_PY:-$REPO/.deps/py/bin/python}
export REPO INTEROP_DIR ORACLE_NODE_DIR BRI_BUILD BRICTL LANCEDB_LOG LANCE_PY

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

need_lance_py() {
  "$LANCE_PY" -c 'import lance, lancedb' >/dev/null 2>&1 ||
    skip "pylance and lancedb are not installed in ${LANCE_PY%/bin/python} (run scripts/deps.sh)"
}

# need_s3 NAME: the oracle and the test radosgw (scripts/run-tests.sh starts it
# and exports AWS_* and BRI_S3_BUCKET; no server is a failure, never a skip);
# sets S3_PREFIX to a fresh s3://BUCKET/NAME-... prefix for the test's tables.
need_s3() {
  need_oracle
  [ -n "${AWS_ENDPOINT_URL:-}" ] && [ -n "${BRI_S3_BUCKET:-}" ] ||
    fail "no S3 server: run through scripts/run-tests.sh (it starts radosgw with scripts/s3-server.sh)"
  S3_PREFIX=s3://$BRI_S3_BUCKET/$1-$$-$RANDOM
}

# need_azure NAME: the oracle and the test Azurite (scripts/run-tests.sh starts
# it and exports AZURE_* and BRI_AZ_CONTAINER; no server is a failure, never a
# skip); sets AZ_PREFIX to a fresh az://CONTAINER/NAME-... prefix.
need_azure() {
  need_oracle
  [ -n "${AZURE_STORAGE_ENDPOINT:-}" ] && [ -n "${BRI_AZ_CONTAINER:-}" ] ||
    fail "no Azure server: run through scripts/run-tests.sh (it starts Azurite with scripts/azurite-server.sh)"
  AZ_PREFIX=az://$BRI_AZ_CONTAINER/$1-$$-$RANDOM
}

# compact_beside_writer TABLE STRATEGY SECONDS: a LanceDB writer appends and
# deletes in a loop for SECONDS while brictl compacts TABLE over and over;
# a compaction may give way to a delete (conflict), never fail otherwise.
# Then one more compaction, and the table must hold exactly the rows the
# writer's history says. Prints how many committed and gave way.
compact_beside_writer() {
  local t=$1 strategy=$2 secs=$3 compactions=0 conflicts=0
  node "$INTEROP_DIR/lance_writer_loop.mjs" "$t" --seconds "$secs" --rows 20 --delete-every 3 \
    >"$TMPD/writer.json" 2>"$TMPD/writer.err" &
  local writer=$! deadline=$((SECONDS + secs))
  while [ $SECONDS -lt $deadline ]; do
    if "$BRICTL" compact "$t" --strategy "$strategy" >/dev/null 2>"$TMPD/c.err"; then
      compactions=$((compactions + 1))
    else
      grep -Eq "touched fragment|changed after version|re-planned|deleted meanwhile|committed by another writer first" "$TMPD/c.err" ||
        fail "compaction failed for another reason: $(cat "$TMPD/c.err")"
      conflicts=$((conflicts + 1))
    fi
    sleep 0.3
  done
  wait $writer || fail "the LanceDB writer failed: $(cat "$TMPD/writer.err")"
  "$BRICTL" compact "$t" --strategy "$strategy" >/dev/null   # and once more, quietly
  node "$INTEROP_DIR/lance_rowset.mjs" "$t" "$TMPD/writer.json" 1200 >"$TMPD/rows" ||
    fail "the row set is not what the writer committed: $(cat "$TMPD/rows")"
  cat "$TMPD/rows"
  [ "$compactions" -ge 1 ] || fail "no compaction committed beside the writer ($conflicts gave way)"
  echo "ok: $compactions compactions committed, $conflicts gave way to a delete"
}

make_tables() {
  local out=$1; shift
  node "$INTEROP_DIR/lance_make.mjs" --out "$out" "$@"
}
lance_read() { node "$INTEROP_DIR/lance_read.mjs" "$@"; }
lance_ops() { node "$INTEROP_DIR/lance_ops.mjs" "$@"; }
lance_optimize() { node "$INTEROP_DIR/lance_optimize.mjs" "$@"; }
lance_py() { "$LANCE_PY" "$INTEROP_DIR/lance_py.py" "$@"; }
lance14_rows() {
  lance_py read --reader lance14 "$@" | python3 -c '
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    if "error" in d: sys.exit("pylance: " + d["error"])
    print(d["rows"], json.dumps(sorted((k, v["sha256"]) for k, v in d["columns"].items())))' || fail "pylance 14 cannot read $*"
}

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
