#!/usr/bin/env bash
# DAEMON on tables today's Lance writes: a real brid (built-in defaults but a
# 1 s debounce) watching a root of tables pylance 14.0.3 (Lance 14) wrote:
#  - a plain Blob v2 table and a Managed one are compacted to one fragment each,
#    the Managed one without copying a payload byte; an indexed one (IVF_PQ,
#    BTREE, FTS) is compacted as far as its indexes allow;
#  - pylance 14 then opens every table (no panic: its manifests point at their
#    inline transaction and index section) and reads the same rows, and the
#    indexed table gives the same vector, full-text and filtered answers;
#  - a table of file version 2.3 is left alone as "unsupported" (tables,
#    status's unsupported_tables, brid_tables_unsupported) with a message naming
#    2.3, and brid stays "running", not degraded.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_lance_py
PY="$LANCE_PY $REPO/tests/interop/lance_py.py"

R=$TMPD/root
mkdir -p "$R"
$PY make --writer lance14 blob="$R/blob.lance" managed="$R/managed.lance" indexed="$R/indexed.lance" \
  v23="$R/v23.lance" >"$TMPD/made.json"
grep -q '"error"' "$TMPD/made.json" && fail "pylance could not write the tables: $(cat "$TMPD/made.json")"
$PY read --reader lance14 --answers "$R/blob.lance" "$R/managed.lance" "$R/indexed.lance" >"$TMPD/before.jsonl"

brid_start l14 --root "$R" --debounce 1s
frags() { ctl tables --json | jget '[t["fragments"] for t in d["tables"] if t["root"] == "'"$1"'"][0]'; }
state() { ctl tables --json | jget '[t["state"] for t in d["tables"] if t["root"] == "'"$1"'"][0]'; }
compacted() { [ "$(frags "$R/blob.lance")" = 1 ] && [ "$(frags "$R/managed.lance")" = 1 ] &&
  [ "$(ctl jobs --table "$R/indexed.lance" --kind compact --state succeeded --json | jget 'len(d["jobs"])')" -ge 1 ]; }
wait_until 60 compacted || fail "not compacted: blob $(frags "$R/blob.lance"), managed $(frags "$R/managed.lance"), $(ctl jobs --json | head -c 600)"
wait_until 20 sh -c "[ \"\$($BRICTL tables --socket $SOCK --json | python3 -c 'import json,sys; print([t[\"state\"] for t in json.load(sys.stdin)[\"tables\"] if t[\"root\"].endswith(\"v23.lance\")][0])')\" = unsupported ]" ||
  fail "the 2.3 table is $(state "$R/v23.lance"), not unsupported"

# the Managed table: no payload byte copied
ctl jobs --table "$R/managed.lance" --kind compact --state succeeded --json |
  jget '[(j["result"]["strategy_used"], j["result"]["payload_bytes_copied"]) for j in d["jobs"]]' |
  grep -q '"managed", 0' || fail "the Managed table's compaction: $(ctl jobs --table "$R/managed.lance" --json | head -c 400)"

# pylance 14 reads what brid left, with the same answers
$PY read --reader lance14 --answers "$R/blob.lance" "$R/managed.lance" "$R/indexed.lance" >"$TMPD/after.jsonl"
python3 - "$TMPD/before.jsonl" "$TMPD/after.jsonl" >"$TMPD/diff" 2>&1 <<'PY' || fail "pylance 14 reads brid's output differently: $(cat "$TMPD/diff")"
import json, sys
def load(p): return {json.loads(l)["table"]: json.loads(l) for l in open(p)}
def strip(v):  # the version and fragment counts a compaction changes, as the matrix ignores them
    if isinstance(v, dict): return {k: strip(x) for k, x in v.items() if k not in ("version", "fragments")}
    if isinstance(v, list): return [strip(x) for x in v]
    return v
b, a = load(sys.argv[1]), load(sys.argv[2])
for t, x in b.items():
    y = a[t]
    if "error" in y: sys.exit(f"{t}: {y['error']}")
    if x["rows"] != y["rows"] or {k: v["sha256"] for k, v in x["columns"].items()} != {k: v["sha256"] for k, v in y["columns"].items()}:
        sys.exit(f"{t}: other rows or values")
    if strip(x.get("answers")) != strip(y.get("answers")):
        sys.exit(f"{t}: other answers: {json.dumps(strip(x.get('answers')))[:300]} / {json.dumps(strip(y.get('answers')))[:300]}")
PY

# the 2.3 table: named, left alone, brid not degraded
ctl tables "$R/v23.lance" >"$TMPD/v23.txt"
grep -q "unsupported: .*Lance file version 2.3" "$TMPD/v23.txt" || fail "tables does not say why: $(cat "$TMPD/v23.txt")"
ctl status --json | jget '[t["table"] for t in d["unsupported_tables"]]' >"$TMPD/unsupported.txt"
grep -q "v23.lance" "$TMPD/unsupported.txt" || fail "status does not list the 2.3 table as unsupported"
[ "$(ctl status --json | jget 'd["state"]')" = running ] || fail "brid is $(ctl status --json | jget 'd["state"]') with an unsupported table"
ctl metrics >"$TMPD/metrics.txt"
grep -q '^brid_tables_unsupported 1$' "$TMPD/metrics.txt" || fail "metrics: $(grep unsupported "$TMPD/metrics.txt")"
[ "$(ls "$R/v23.lance/_versions" | grep -c manifest)" = 3 ] || fail "brid wrote a version of the 2.3 table"
echo "ok: blob and Managed tables compacted, indexed table compacted as far as its indexes allow, pylance 14 reads them all the same; the 2.3 table left alone as unsupported"
pass
