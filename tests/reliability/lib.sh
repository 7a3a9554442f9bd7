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
# The crash matrices (crash_matrix.sh through brictl, brid_matrix.sh through
# brid) share these:
#   build_fixtures          builds in $FX (set FX, TAG_V=3 first) the tables
#                           stock, bri and linked (all with Inline, Packed and
#                           Dedicated Blob v2 values, deleted rows and a tag
#                           "old" on version $TAG_V) and the reads they must
#                           keep: ref_stock.json, ref_bri.json, ref_linked.json
#                           (latest), ref_v3.json (the tagged version)
#   read_registry           REGISTRY=("name reached_by eio_kind" ...) from
#                           lib/util/failpoint.c (switches and timing points left out)
#   check_state T FX WHEN   verify --all-versions passes, the latest version of
#                           T reads ref_FX.json (brictl, and LanceDB when stock
#                           Lance can read it), the tagged version reads
#                           ref_v3.json; prints what is wrong (WHEN says at
#                           which step) and returns 1. Scratch files in $CASE.
#                           With FAST=0, LanceDB also reads the tagged version.
#   CMD_FX, CMD_ARGS        the commands of the matrices: the fixture each runs
#                           on and brictl's arguments (@ stands for the table)
#   candidates REACHED [brid]  the commands that may reach a failpoint whose
#                           reached_by list is REACHED (with brid: also jobs)
#   matrix_setup SCRIPT ARGS...  parses a matrix's flags (--fast sets FAST=1,
#                           --only REGEX sets ONLY), sets START, CASE, FX and
#                           TAG_V, builds refs and the fixtures, reads the
#                           registry
#   run_matrix TITLE [brid] NA  the loop both matrices share: per failpoint of
#                           REGISTRY (matching $ONLY), the commands that may
#                           reach it (candidates), the actions the script's
#                           actions_for FP KIND IDX prints, each run through
#                           one_case; --fast (FAST=1) rotates the candidates
#                           and stops at the first that reaches the failpoint.
#                           A failpoint no command reaches fails the run; one
#                           that only others reach is noted "n/a ... NA".
#   one_case FP KIND CMD ACTION  runs the script's run_case in a subshell
#                           (0 passed, 1 failed, 3 not reached; it prints one
#                           line), then its after_case hook if defined, and
#                           records the result in $RESULTS, CASES and FAILED
#   write_fp FP / repeat_fp FP  failpoints where eio is a failed write / that
#                           one command passes many times

RELIABILITY_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PY=${PY:-/usr/bin/python3}
REFS=$TMPD/refs

build_refs() {
  local lib=$BRI_BUILD/libbri.a san=""
  [ -f "$lib" ] || fail "no $lib (build libbri first)"
  # (grep -c, not -q: under pipefail an early exit of grep fails the pipe)
  if [ "$(nm "$lib" 2>/dev/null | grep -c '__asan_report')" != 0 ]; then san="-fsanitize=address,undefined"; fi
  local pkgs="libprotobuf-c jansson libzstd liblz4 libcrypto sqlite3 libcurl expat"
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

# (the table lock's file, ops/lock.h, is brid's and stays; it is empty when free)
listing() { (cd "$1" && find . ! -name .brid.lock -printf '%p %s %y\n' | LC_ALL=C sort); }

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

build_fixtures() {
  mkdir -p "$FX"
  make_tables "$FX/gen" --tables blobs --blob-batches 2:6:300,2:5:6K,1:3:80K \
    --inline-threshold 1024 --dedicated-threshold 65536 \
    --blob-delete "(id % 5 = 2 AND id < 12) OR id = 23" >/dev/null
  mv "$FX/gen/blobs.lance" "$FX/stock.lance"
  lance_ops "$FX/stock.lance" tag old $TAG_V >/dev/null
  lance_read "$FX/stock.lance" --json >"$FX/ref_stock.json"
  lance_ops "$FX/stock.lance" read --version old >"$FX/ref_v3.json"
  "$BRICTL" scan "$FX/stock.lance" --json >"$FX/s.json"
  same_read "$FX/ref_stock.json" "$FX/s.json" || fail "fixture: brictl scan differs from LanceDB"
  "$BRICTL" scan "$FX/stock.lance" --version $TAG_V --json >"$FX/s.json"
  same_read "$FX/ref_v3.json" "$FX/s.json" || fail "fixture: brictl scan --version $TAG_V differs from LanceDB"

  cp -a "$FX/stock.lance" "$FX/bri.lance"
  "$BRICTL" compact "$FX/bri.lance" --strategy bri >/dev/null
  "$BRICTL" gen "$FX/bri.lance" --fragments 2 --rows 5 --blob-sizes 300,6K,80K,null \
    --inline-threshold 1024 --dedicated-threshold 65536 >/dev/null
  "$BRICTL" scan "$FX/bri.lance" --json >"$FX/ref_bri.json"
  latest_has_bri "$FX/bri.lance" || fail "fixture: the bri table carries no BRI"

  cp -a "$FX/stock.lance" "$FX/linked.lance"
  "$BRICTL" compact "$FX/linked.lance" --strategy link >/dev/null
  lance_read "$FX/linked.lance" --json >"$FX/ref_linked.json"
  same_read "$FX/ref_stock.json" "$FX/ref_linked.json" || fail "fixture: the linked table reads differently"
  for t in stock bri linked; do
    "$BRICTL" verify "$FX/$t.lance" --all-versions >/dev/null || fail "fixture $t does not verify"
  done
  # every fixture file is older than what the cases will write
  sleep 1
}

read_registry() {
  mapfile -t REGISTRY < <("$PY" - "$REPO/lib/util/failpoint.c" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
for m in re.finditer(r'\{"([a-z_]+\.[a-z_]+)",\s*"[^"]+",\s*"([^"]*)",\s*BRI_FP_EIO_(\w+)', text):
    print(m.group(1), m.group(2), m.group(3).lower())
EOF
  )
  [ ${#REGISTRY[@]} -ge 20 ] || fail "could not read the failpoint registry (${#REGISTRY[@]} entries)"
}

# check_state TABLE FIXTURE WHEN: verify, latest reads, tagged version reads
check_state() {
  local t=$1 fx=$2 when=$3 out=$CASE/read.json
  if ! "$BRICTL" verify "$t" --all-versions >"$CASE/verify.out" 2>&1; then
    sed 's/^/      /' "$CASE/verify.out" | head -20
    echo "verify --all-versions fails $when"; return 1
  fi
  if ! "$BRICTL" scan "$t" --json >"$out" 2>"$CASE/scan.err"; then
    echo "brictl scan fails $when: $(head -3 "$CASE/scan.err")"; return 1
  fi
  same_read "$FX/ref_$fx.json" "$out" || { echo "brictl reads other rows or bytes $when"; return 1; }
  local stock=0
  latest_has_bri "$t" || stock=1
  if [ $stock = 1 ]; then
    if ! lance_read "$t" --json >"$out" 2>"$CASE/lance.err"; then
      echo "LanceDB cannot read the table $when: $(tail -1 "$CASE/lance.err" | cut -c1-200)"; return 1
    fi
    same_read "$FX/ref_$fx.json" "$out" || { echo "LanceDB reads other rows or bytes $when"; return 1; }
  fi
  if ! "$BRICTL" scan "$t" --version $TAG_V --json >"$out" 2>"$CASE/scan.err"; then
    echo "the tagged version $TAG_V cannot be read $when: $(head -3 "$CASE/scan.err")"; return 1
  fi
  same_read "$FX/ref_v3.json" "$out" || { echo "the tagged version reads differently $when"; return 1; }
  # LanceDB opens the latest version first: it refuses the whole table while
  # the latest carries the BRI flag (by design), so only then is it asked
  if [ $FAST = 0 ] && [ $stock = 1 ]; then
    lance_ops "$t" read --version old >"$out" 2>"$CASE/lance.err" ||
      { echo "LanceDB cannot read the tagged version $when: $(tail -1 "$CASE/lance.err" | cut -c1-200)"; return 1; }
    same_read "$FX/ref_v3.json" "$out" || { echo "LanceDB reads the tagged version differently $when"; return 1; }
  fi
  return 0
}

write_fp() { # failpoints where an injected error is a failed write
  case $1 in writer.write|writer.before_fsync|blobout.before_copy|commit.txn_written|commit.before_manifest_fsync) return 0 ;; esac
  return 1
}
repeat_fp() { # failpoints passed many times by one command
  case $1 in compact.after_rows|outputs.after_record|blobout.after_link|cleanup.before_delete|cleanup.after_delete|materialize.after_place) return 0 ;; esac
  return 1
}

# The commands: compact-bri/-link/-copy compact stock with that strategy;
# compact-bri2 compacts bri (its BRI references stay terminal); materialize
# materializes bri; cleanup cleans bri --older-than 0 (tag kept, BRI sources
# cleaned file by file); cleanup-stock cleans linked --older-than 0.
declare -A CMD_FX CMD_ARGS
CMD_FX[compact-bri]=stock;   CMD_ARGS[compact-bri]="compact @ --strategy bri"
CMD_FX[compact-link]=stock;  CMD_ARGS[compact-link]="compact @ --strategy link"
CMD_FX[compact-copy]=stock;  CMD_ARGS[compact-copy]="compact @ --strategy copy"
CMD_FX[compact-bri2]=bri;    CMD_ARGS[compact-bri2]="compact @ --strategy bri"
CMD_FX[materialize]=bri;     CMD_ARGS[materialize]="materialize @"
CMD_FX[cleanup]=bri;         CMD_ARGS[cleanup]="cleanup @ --older-than 0"
CMD_FX[cleanup-stock]=linked; CMD_ARGS[cleanup-stock]="cleanup @ --older-than 0"

candidates() { # commands that may reach a failpoint, from its reached_by list
  local out="" r
  for r in ${1//,/ }; do
    # brid's job store is passed by every job; the three below between them
    # journal outputs, commit, and finish
    [ "${2:-}" = brid ] && [ "$r" = jobs ] && out+=" compact-copy materialize cleanup"
    case $r in
      compact) out+=" compact-bri compact-link compact-copy compact-bri2" ;;
      materialize) out+=" materialize" ;;
      cleanup) out+=" cleanup cleanup-stock" ;;
    esac
  done
  echo $out
}


RESULTS=$TMPD/results
FAILED=0 CASES=0
note() { echo "$*" | tee -a "$RESULTS"; }

matrix_setup() {
  local script=$1
  shift
  FAST=0 ONLY=""
  while [ $# -gt 0 ]; do
    case $1 in
      --fast) FAST=1 ;;
      --only) ONLY=$2; shift ;;
      *) echo "usage: $script [--fast] [--only REGEX]" >&2; exit 2 ;;
    esac
    shift
  done
  [ -x "$BRICTL" ] || fail "no brictl at $BRICTL"
  START=$SECONDS
  CASE=$TMPD/case
  TAG_V=3
  FX=$TMPD/fx
  build_refs
  build_fixtures
  read_registry
}

one_case() {
  local out st=0
  # a subshell writing to a file, not $(...): a daemon started in the case
  # inherits its stdout and would hold a command substitution open
  (run_case "$@") >"$TMPD/case.out" || st=$?
  out=$(cat "$TMPD/case.out")
  if declare -F after_case >/dev/null; then after_case "$st"; fi
  [ $st = 3 ] && return 3
  CASES=$((CASES + 1))
  if [ $st = 0 ]; then
    note "ok   $1 [$3, $4]: $out"
  else
    FAILED=$((FAILED + 1))
    note "FAIL $1 [$3, $4]: $out"
    if [ "${KEEP_TMP:-0}" = 1 ]; then cp -a "$CASE" "$TMPD/failed-$1-$3-${4//[:@]/_}"; fi
  fi
  return $st
}

run_matrix() {
  local title=$1 mode=$2 na=$3 idx=0 entry fp reached kind cmds reached_by acts cmd a st k n hit
  : >>"$RESULTS"
  for entry in "${REGISTRY[@]}"; do
    read -r fp reached kind <<<"$entry"
    [ -z "$ONLY" ] || [[ $fp =~ $ONLY ]] || continue
    cmds=$(candidates "$reached" "$mode")
    if [ -z "$cmds" ]; then
      note "n/a  $fp: reached by $reached only ($na)"
      continue
    fi
    idx=$((idx + 1))
    reached_by=""
    acts=$(actions_for "$fp" "$kind" "$idx")
    local -a c
    read -ra c <<<"$cmds"
    n=${#c[@]}
    for ((k = 0; k < n; k++)); do
      cmd=${c[$(((idx + k) % n))]} # rotated, so that the commands share the work
      hit=0
      for a in $acts; do
        st=0; one_case "$fp" "$kind" "$cmd" "$a" || st=$?
        if [ $st = 3 ]; then
          [ $FAST = 1 ] || note "--   $fp [$cmd, $a]: not reached"
        else
          hit=1
        fi
      done
      [ $hit = 1 ] && reached_by+=" $cmd"
      [ $FAST = 1 ] && [ -n "$reached_by" ] && break
    done
    if [ -z "$reached_by" ]; then
      FAILED=$((FAILED + 1))
      note "FAIL $fp: no command reached it (candidates: $cmds)"
    fi
  done
  echo
  echo "$title$([ $FAST = 1 ] && echo " (fast)"): $CASES cases, $FAILED failed, $((SECONDS - START)) s"
  [ $FAILED = 0 ] || fail "$FAILED $title cases failed"
}
