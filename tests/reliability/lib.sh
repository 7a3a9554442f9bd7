# Helpers sourced by the reliability scripts (bash), after tests/interop/lib.sh
# (which provides $TMPD, $BRICTL, $BRI_BUILD, make_tables, lance_read, lance_ops,
# fail, pass, need_oracle).
#
# Variables:
#   RELIABILITY_DIR   this directory
#   PY                the Python interpreter used for the small checkers here
#   REFS              the refs helper (refs.c), built by build_refs into $TMPD
# Functions:
#   build_refs              compiles refs.c against $BRI_BUILD/libbri.a (sanitizer
#                           flags added when that library was built with them)
#   same_read A B           two read JSONs (lance_read.mjs or brictl scan) hold the
#                           same rows and bytes: equal but for bookkeeping keys
#                           (table, version, fragments, ms, fragmentRows,
#                           schemaFields, descriptorKinds); prints the differences
#   listing DIR             every path under DIR with size and type, sorted
#   orphans TABLE [VERSIONS]  no file of TABLE is unreferenced (orphans.py), and
#                           when VERSIONS (comma list) is given, exactly those are left
#   latest_has_bri TABLE    true when the latest version carries the BRI flag
#                           (stock Lance refuses it)

RELIABILITY_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PY=${PY:-/usr/bin/python3}
REFS=$TMPD/refs

build_refs() {
  local lib=$BRI_BUILD/libbri.a san=""
  [ -f "$lib" ] || fail "no $lib (build libbri first)"
  # (grep -c, not -q: under pipefail an early exit of grep fails the pipe)
  if [ "$(nm "$lib" 2>/dev/null | grep -c '__asan_report')" != 0 ]; then san="-fsanitize=address,undefined"; fi
  local pkgs="libprotobuf-c jansson libzstd liblz4 libcrypto sqlite3"
  # shellcheck disable=SC2046
  ${CC:-cc} -std=c11 -D_GNU_SOURCE -g $san -I"$REPO/lib" -I"$BRI_BUILD/gen" \
    $(pkg-config --cflags $pkgs) "$RELIABILITY_DIR/refs.c" "$lib" \
    $(pkg-config --libs $pkgs) -lroaring -lm -pthread -o "$REFS" ||
    fail "cannot build $RELIABILITY_DIR/refs.c"
}

same_read() {
  "$PY" - "$1" "$2" <<'EOF'
import json, sys
IGNORE = {"table", "version", "fragments", "ms", "fragmentRows", "schemaFields", "descriptorKinds"}
def load(p):
    with open(p) as f:
        return json.load(f)
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in IGNORE}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x
a, b = (strip(load(p)) for p in sys.argv[1:3])
if a != b:
    def walk(x, y, path):
        if isinstance(x, dict) and isinstance(y, dict):
            for k in sorted(set(x) | set(y)):
                walk(x.get(k), y.get(k), f"{path}.{k}")
        elif x != y:
            print(f"  {path}: {json.dumps(x)[:120]} != {json.dumps(y)[:120]}", file=sys.stderr)
    walk(a, b, "$")
    sys.exit(1)
EOF
}

listing() { (cd "$1" && find . -printf '%p %s %y\n' | LC_ALL=C sort); }

orphans() {
  "$REFS" "$1" >"$TMPD/refs.out" || return 1
  if [ -n "${2:-}" ]; then "$PY" "$RELIABILITY_DIR/orphans.py" "$1" "$TMPD/refs.out" --versions "$2"
  else "$PY" "$RELIABILITY_DIR/orphans.py" "$1" "$TMPD/refs.out"; fi
}

latest_has_bri() {
  "$BRICTL" inspect "$1" --json | "$PY" -c '
import json, sys
j = json.load(sys.stdin)
sys.exit(0 if "blob_reuse_index" in json.dumps(j.get("flags")) else 1)'
}
