#!/usr/bin/env bash
# DEMO: make demo's script (scripts/demo.sh) runs to its end, and its step 5
# compares what it says it compares: a copy and a bri compaction of two
# identical copies of the 200-fragment table, each a job of brid's that
# found all 200 fragments (nothing compacted them before the demo asked:
# they sit under auto_compact = no, and brid queued no job of its own for
# them), copy copying payload and bri none; the ratio it prints is the
# ratio of the bytes the two jobs' reports say they wrote. About 15 s.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
SRC=${BRI_SOURCE_DIR:-$REPO}
TMPDIR=$TMPD KEEP=1 bash "$SRC/scripts/demo.sh" "$BRI_BUILD" >"$TMPD/demo.out" 2>&1 ||
  fail "the demo failed: $(tail -30 "$TMPD/demo.out")"
D=$(ls -d "$TMPD"/brid-demo.*)
[ -f "$D/copy-job.json" ] && [ -f "$D/bri-job.json" ] || fail "the demo kept no job reports in $D"
python3 - "$D/copy-job.json" "$D/bri-job.json" "$TMPD/demo.out" <<'PY' || fail "step 5 does not show what the reports say"
import json, re, sys
copy, bri = (json.load(open(f)) for f in sys.argv[1:3])
out = open(sys.argv[3]).read()
for j, want in ((copy, "copy"), (bri, "bri")):
    r = j["result"]
    assert j["state"] == "succeeded" and r["strategy_used"] == want, (want, j["state"], r["strategy_used"])
    assert j["params"]["trigger"] == "api", j["params"]
    # nothing compacted the copies before the demo asked
    assert (r["fragments_before"], r["fragments_after"]) == (200, 1), (want, r["fragments_before"], r["fragments_after"])
    assert j["bytes_written"] == r["data_bytes_written"] + r["payload_bytes_copied"], j
assert copy["result"]["payload_bytes_copied"] > 50 << 20 and bri["result"]["payload_bytes_copied"] == 0
ratio = copy["bytes_written"] / bri["bytes_written"]
m = re.search(r"same compaction\s+.* written with copy, .* with bri \((\d+)x less\)", out)
assert m, "no comparison line"
assert int(m.group(1)) == round(ratio) and ratio > 100, (m.group(0), ratio)
print(f"ok step 5: copy wrote {copy['bytes_written']} bytes, bri {bri['bytes_written']} ({ratio:.0f}x), as printed")
PY
! grep -E "compare/media-(copy|bri)\.lance: version [0-9]+ has [0-9]+ bin\(s\) to compact" "$D/brid.log" ||
  fail "brid queued a compaction of a comparison table by itself"
grep -q "brid stopped cleanly" "$TMPD/demo.out" || fail "the demo did not stop brid cleanly"
pass
