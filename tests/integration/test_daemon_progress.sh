#!/usr/bin/env bash
# DAEMON PROGRESS: a running copy compaction's progress (OPS 7).
#  - bytes written count the blob payload copied, not only the data file;
#  - a rate and an ETA appear once the job has written for a second;
#  - `brictl job ID` on the running copy counts its journaled outputs by
#    kind instead of listing each one (--json has every path): its data file
#    and the sidecar directory it fills, one tree entry for every copy made
#    in it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mkdir -p "$TMPD/root"
T=$TMPD/root/t.lance
# 20 rows, each with a 200 KiB dedicated sidecar: 4 MB of payload to copy,
# in 10 fragments (one progress report each, 400 ms apart)
"$BRICTL" gen "$T" --fragments 10 --rows 2 --blob-sizes 200K --dedicated-threshold 131072 >/dev/null
printf '[daemon]\nroot = %s\n[defaults]\nauto_compact = no\ncleanup_interval = 0\nstrategy = copy\nbatch_rows = 1\n' \
  "$TMPD/root" >"$TMPD/p.conf"
export BRI_FAILPOINTS=compact.after_rows=delay:400
brid_start p --config "$TMPD/p.conf"
unset BRI_FAILPOINTS
J=$(ctl compact "$T" --json | jget 'd["job"]')
# every sample: "state rows_done bytes_written has_rate has_eta journal_entries"
sample() {
  ctl job "$J" --json | jget '" ".join(str(x) for x in [d["state"], d.get("progress", {}).get("rows_done", 0),
    d.get("progress", {}).get("bytes_written", 0), int(d.get("progress", {}).get("bytes_per_second") is not None),
    int(d.get("progress", {}).get("eta_seconds") is not None), len(d["journal"])])'
}
shown=0
while :; do
  read -r st rows bytes rate eta n < <(sample)
  [ "$st" = running ] || [ "$st" = queued ] || break
  echo "$rows $bytes $rate $eta" >>"$TMPD/samples"
  if [ $shown = 0 ] && [ "$rate" = 1 ]; then
    [ "$n" = 2 ] || fail "the running copy journaled $n outputs, not its data file and its sidecar tree"
    ctl job "$J" >"$TMPD/job.txt"
    if grep -q "^  state:      running" "$TMPD/job.txt"; then
      grep -q "^  journaled:  2 output(s) (1 data, 1 tree)" "$TMPD/job.txt" || fail "brictl job does not count the journal: $(cat "$TMPD/job.txt")"
      [ "$(grep -c "$T/data/" "$TMPD/job.txt" || true)" -lt 3 ] ||
        fail "brictl job lists the journal's $n paths: $(cat "$TMPD/job.txt")"
      grep -q "progress:   writing .*/s, ETA " "$TMPD/job.txt" || fail "brictl job: no rate or ETA: $(cat "$TMPD/job.txt")"
      shown=1
    fi
  fi
  sleep 0.1
done
[ "$st" = succeeded ] || fail "job $J ended $st"
copied=$(ctl job "$J" --json | jget 'd["result"]["payload_bytes_copied"]')
[ "$copied" -gt 4000000 ] || fail "the copy job copied $copied payload bytes"
# each row carries one 200 KiB payload: after N rows, at least N x 204800 bytes written
python3 - "$TMPD/samples" <<'PY' || fail "progress bytes written left the payload out: $(cat "$TMPD/samples")"
import sys
rows = [tuple(map(int, l.split())) for l in open(sys.argv[1]) if l.strip()]
seen = [r for r in rows if r[0] > 0]
assert seen, "no sample with rows written"
assert all(b >= n * 204800 for n, b, _, _ in seen), seen
assert any(r[2] for r in seen) and any(r[3] for r in seen), "no rate or ETA"
PY
[ $shown = 1 ] || fail "brictl job was not looked at while the job ran"
brid_stop
echo "ok progress: $(wc -l <"$TMPD/samples") samples, payload counted in bytes written ($copied copied), rate and ETA, journal counted"
pass
