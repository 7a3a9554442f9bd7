#!/usr/bin/env bash
# make demo: brid compacting a Blob v2 table of 200 fragments without copying
# its blob payloads.
#   scripts/demo.sh BUILD        (BUILD: the build directory, e.g. build)
# 1. writes a table of 200 fragments (2 rows each, a packed 100 KiB blob and a
#    dedicated 300 KiB blob per fragment) with brictl gen, which writes what
#    LanceDB writes (the demo needs neither LanceDB nor node: make demo
#    installs only the build's packages);
# 2. starts brid on it with built-in defaults, a private socket and store,
#    and a 3 s debounce;
# 3. shows brictl status before and while the compaction job runs;
# 4. prints fragments before and after, bytes written against bytes reused;
# 5. for comparison, compacts a copy of the original table through brid with
#    the copy strategy (what Lance's own compaction does: every payload byte
#    rewritten), following it with brictl compact --wait;
# 6. runs brictl verify through brid, and stops brid;
# then scripts/demo_managed.sh: a plain table switched to Lance 14's Managed blobs.
# Everything lives in a temporary directory, removed at the end (KEEP=1 keeps it).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:?usage: scripts/demo.sh BUILD}
BRICTL=$PWD/$BUILD/bin/brictl
BRID=$PWD/$BUILD/bin/brid
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
mkdir -p "$DEMO/later"
cp -a "$T" "$DEMO/later/media-copy.lance" # for step 5

say "2. brid on it: built-in defaults, debounce 3 s"
echo "\$ brid --root $DEMO/tables --socket $DEMO/brid.sock --state $DEMO/jobs.db --debounce 3s"
"$BRID" --root "$DEMO/tables" --socket "$DEMO/brid.sock" --state "$DEMO/jobs.db" --debounce 3s 2>"$DEMO/brid.log" &
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

say "5. for comparison: the copy strategy (Lance's own way) on the same 200 fragments"
mv "$DEMO/later/media-copy.lance" "$DEMO/tables/"
C=$DEMO/tables/media-copy.lance
for _ in $(seq 100); do ctl tables "$C" >/dev/null 2>&1 && break; sleep 0.1; done
echo "\$ brictl compact $C --strategy copy"
ctl compact "$C" --strategy copy
follow 2
echo; echo "\$ brictl jobs --table $C"; ctl jobs --table "$C"
ctl jobs --table "$C" --kind compact --json >"$DEMO/copy.json"
cw=$(jq_ '[j for j in d["jobs"] if (j["params"] or {}).get("strategy") == "copy"][0]["bytes_written"]' <"$DEMO/copy.json")
printf '%-32s %s written with copy, %s with bri (%.0fx less)\n' "same compaction" "$(numfmt --to=iec "$cw")" \
  "$(numfmt --to=iec "$written")" "$(python3 -c "print($cw / max(1, $written))")"

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
