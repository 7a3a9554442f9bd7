#!/usr/bin/env bash
# make demo: brid compacting a Blob v2 table of 200 fragments without copying
# its blob payloads.
#   scripts/demo.sh BUILD        (BUILD: the build directory, e.g. build, or its absolute path)
# 1. writes a table of 200 fragments (2 rows each, a packed 100 KiB blob and a
#    dedicated 300 KiB blob per fragment) with brictl gen, which writes what
#    LanceDB writes (the demo needs neither LanceDB nor node: make demo
#    installs only the build's packages);
# 2. starts brid on it with built-in defaults, a private socket and store,
#    and a 3 s debounce;
# 3. shows brictl status before and while the compaction job runs;
# 4. prints fragments before and after, bytes written against bytes reused;
# 5. for comparison, compacts two identical copies of the original table
#    through brid, one with the copy strategy (what Lance's own compaction
#    does: every payload byte rewritten), one with bri (no payload byte
#    written), and prints what each job's report says it wrote and the
#    ratio. The copies sit under a second root whose tables brid watches
#    with auto_compact = no (brid.conf: [table .../compare/*.lance]), so
#    that nothing compacts them before the demo asks;
# 6. runs brictl verify through brid, and stops brid;
# then scripts/demo_managed.sh: a plain table switched to Lance 14's Managed blobs.
# Everything lives in a temporary directory under TMPDIR, removed at the end
# (KEEP=1 keeps it; tests/integration/test_demo.sh reads the two reports of
# step 5 there, copy-job.json and bri-job.json).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:?usage: scripts/demo.sh BUILD}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
BRICTL=$BUILD/bin/brictl
BRID=$BUILD/bin/brid
[ -x "$BRICTL" ] && [ -x "$BRID" ] || { echo "demo: build brictl and brid first (make)" >&2; exit 1; }
DEMO=$(mktemp -d "${TMPDIR:-/tmp}/brid-demo.XXXXXX")
BRID_PID=
finish() {
  [ -n "$BRID_PID" ] && kill "$BRID_PID" 2>/dev/null && wait "$BRID_PID" 2>/dev/null || true
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $DEMO"; else rm -rf "$DEMO"; fi
}
trap finish EXIT
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
jq_() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
ctl() { "$BRICTL" "$@" --socket "$DEMO/brid.sock"; }

T=$DEMO/tables/media.lance
mkdir -p "$DEMO/tables"
say "1. a Blob v2 table of 200 fragments"
echo "\$ brictl gen $T --fragments 200 --rows 2 --blob-sizes 100K,300K --dedicated-threshold 262144"
"$BRICTL" gen "$T" --fragments 200 --rows 2 --blob-sizes 100K,300K --dedicated-threshold 262144
"$BRICTL" inspect "$T" --json >"$DEMO/before.json"
frags_before=$(jq_ 'd["totals"]["fragments"]' <"$DEMO/before.json")
bytes_before=$(du -sb "$T" | cut -f1)
echo "$T: $frags_before fragments, $(numfmt --to=iec "$bytes_before") on disk"
mkdir -p "$DEMO/compare" # for step 5: two identical copies, compacted only when asked
cp -a "$T" "$DEMO/compare/media-copy.lance"
cp -a "$T" "$DEMO/compare/media-bri.lance"
printf '[table %s/compare/*.lance]\nauto_compact = no\n' "$DEMO" >"$DEMO/brid.conf"

say "2. brid on it: built-in defaults, debounce 3 s"
echo "\$ brid --root $DEMO/tables --root $DEMO/compare --config $DEMO/brid.conf --socket $DEMO/brid.sock --state $DEMO/jobs.db --debounce 3s"
echo "  ($DEMO/brid.conf: [table $DEMO/compare/*.lance] auto_compact = no, for step 5)"
"$BRID" --root "$DEMO/tables" --root "$DEMO/compare" --config "$DEMO/brid.conf" --socket "$DEMO/brid.sock" \
  --state "$DEMO/jobs.db" --debounce 3s 2>"$DEMO/brid.log" &
BRID_PID=$!
for _ in $(seq 100); do grep -q "ready:" "$DEMO/brid.log" && break; sleep 0.1; done
grep -q "ready:" "$DEMO/brid.log" || { cat "$DEMO/brid.log"; echo "demo: brid did not start" >&2; exit 1; }

# follow: polls brictl status every 20 ms until N jobs have ended, printing
# it when a job is seen running (with its progress)
follow() {
  local n=$1 shown=0 st
  for _ in $(seq 3000); do
    st=$(ctl status --json)
    if [ $shown = 0 ] && [ "$(echo "$st" | jq_ 'd["jobs"]["running"]')" -ge 1 ]; then
      echo; echo "\$ brictl status"; ctl status; shown=1
    fi
    [ "$(echo "$st" | jq_ 'd["jobs"]["succeeded"] + d["jobs"]["failed"] + d["jobs"]["cancelled"]')" -ge "$n" ] && break
    sleep 0.02
  done
  [ $shown = 1 ] || echo "(the job ran between two looks of brictl status)"
}

say "3. brictl status before and while the compaction job runs"
echo "\$ brictl status"
ctl status
follow 1
echo; echo "\$ brictl jobs"; ctl jobs

say "4. before and after"
J=$(ctl jobs --kind compact --json | jq_ 'd["jobs"][0]["id"]')
ctl job "$J" --json >"$DEMO/job.json"
[ "$(jq_ 'd["state"]' <"$DEMO/job.json")" = succeeded ] || { ctl job "$J"; echo "demo: the compaction failed" >&2; exit 1; }
frags_after=$("$BRICTL" inspect "$T" --json | jq_ 'd["totals"]["fragments"]')
written=$(jq_ 'd["bytes_written"]' <"$DEMO/job.json")
reused=$(jq_ 'd["bytes_reused"]' <"$DEMO/job.json")
secs=$(jq_ '"%.2f" % d["result"]["seconds"]' <"$DEMO/job.json")
printf '%-32s %s -> %s\n' "fragments" "$frags_before" "$frags_after"
printf '%-32s %s (%s bytes: new data files)\n' "bytes written" "$(numfmt --to=iec "$written")" "$written"
printf '%-32s %s (%s bytes of blob payload left in place)\n' "bytes reused (not copied)" "$(numfmt --to=iec "$reused")" "$reused"
printf '%-32s %ss\n' "compaction time" "$secs"
python3 -c "w, r = $written, $reused; print(f'{\"written / (written + reused)\":32s} {100.0 * w / max(1, w + r):.2f}%')"

say "5. for comparison: copy (Lance's own way) and bri on two identical copies of the 200 fragments"
# compact STRATEGY TABLE: a job of brid's, followed to its end; its report in $DEMO/STRATEGY-job.json
compact() {
  echo "\$ brictl compact $2 --strategy $1 --wait"
  ctl compact "$2" --strategy "$1" --wait --quiet
  ctl job "$(ctl jobs --table "$2" --kind compact --json | jq_ 'd["jobs"][0]["id"]')" --json >"$DEMO/$1-job.json"
}
C=$DEMO/compare/media-copy.lance B=$DEMO/compare/media-bri.lance
for _ in $(seq 100); do ctl tables "$B" >/dev/null 2>&1 && break; sleep 0.1; done
compact copy "$C"
compact bri "$B"
echo; echo "\$ brictl jobs --table $DEMO/compare/..."; ctl jobs --table "$C"; ctl jobs --table "$B" | tail -n +2
# from the two reports: fragments, data files written, payload copied, time
python3 - "$DEMO/copy-job.json" "$DEMO/bri-job.json" <<'PY'
import json, sys
def fmt(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB": return f"{n:.1f} {unit}" if unit != "B" else f"{n} B"
        n /= 1024
jobs = [json.load(open(f)) for f in sys.argv[1:]]
for j in jobs:
    r = j["result"]
    print(f"{r['strategy_used']:5s} job {j['id']}: {r['fragments_before']} -> {r['fragments_after']} fragments, "
          f"{fmt(r['data_bytes_written'])} of data files + {fmt(r['payload_bytes_copied'])} of payload copied "
          f"= {fmt(j['bytes_written'])} written, {fmt(r['payload_bytes_reused'])} of payload reused, {r['seconds']:.2f} s")
copy, bri = (j["bytes_written"] for j in jobs)
print(f"{'same compaction':32s} {fmt(copy)} written with copy, {fmt(bri)} with bri ({copy / max(1, bri):.0f}x less)")
PY

say "6. brictl verify (through brid), then stop brid"
echo "\$ brictl verify $T --wait"
ctl verify "$T" --wait
if "$BRICTL" verify "$T" >/dev/null 2>&1; then
  echo "\$ brictl verify $T   (offline)"; "$BRICTL" verify "$T"
fi
kill -TERM "$BRID_PID"
wait "$BRID_PID" && echo "brid stopped cleanly"
BRID_PID=
echo; echo "brid's log:"; sed 's/^/  /' "$DEMO/brid.log"
scripts/demo_managed.sh "$BUILD"
