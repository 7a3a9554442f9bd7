#!/usr/bin/env bash
# BUSY: a real LanceDB writer committing several times a second for
# BUSY_SECONDS (at least 60) to a table under a root that brid watches with
# its built-in defaults (a configuration naming the root alone: debounce
# 30s, max_delay 5m, max_new_fragments 32, target_fragment_bytes 1G, auto
# strategy), run by test_daemon_busy.sh (a local root: inotify) and
# test_daemon_busy_s3.sh (an S3 root on the test radosgw: polls every 30 s,
# the default). BUSY_ROOT=local|s3 says which.
#
# The writer (tests/interop/lance_writer_loop.mjs) appends 20 rows an
# iteration, deletes a row every 3rd and updates two every 5th (an update
# moves rows into a new fragment), pausing BUSY_PAUSE ms (120) between
# iterations: about 10 commits a second, a busy table (unpaused, LanceDB
# commits 80 times a second here). The debounce never runs out while it
# writes; the count trigger must compact the table meanwhile. Checked:
#  - the writer committed at least 5 times a second, for at least 60 s;
#  - brid committed at least 2 compactions while the writer ran;
#  - the table's fragment count, sampled every half second (local) or second
#    (S3), never passed the bound of the defaults: max_new_fragments (32)
#    new fragments, plus those of one compaction cycle at the writer's peak
#    rate of new fragments (2 s between a count check and the job's start,
#    and the longest compaction's own seconds: one job per table runs at a
#    time), plus the compacted ones (a few size tiers; 8 allowed). Under an
#    S3 root a busy table is looked at every 2 s once a poll saw it move,
#    and a look and a claim take longer through the gateway (6 s), but until
#    that poll (up to poll_interval, 30 s) its fragments gather unseen:
#    there the bound before the first compaction is the table's 6, plus 32 s
#    and the longest compaction at the peak rate, plus the same 8;
#  - the table holds exactly the writer's rows (lance_rowset.mjs), and
#    brictl verify --all-versions passes over every version the writer and
#    brid committed.
# The numbers (rate, compactions during the writes, largest fragment count,
# the bound) are printed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_oracle
KIND=${BUSY_ROOT:-local}
SECS=${BUSY_SECONDS:-62}
PAUSE=${BUSY_PAUSE:-120} # ms between iterations: about 10 commits a second locally (S3: 0)
if [ "$KIND" = s3 ]; then
  need_s3 busy
  ROOT=$S3_PREFIX
  SAMPLE=1
  PAUSE=${BUSY_PAUSE:-50} # each commit is several requests to the gateway: about 12 a second
else
  ROOT=$TMPD/root
  mkdir -p "$ROOT"
  SAMPLE=0.5
fi
T=$ROOT/plain.lance
now_ms() { python3 -c 'import time; print(int(time.time()*1000))'; }
fragments() { "$BRICTL" inspect "$T" --json | jget 'd["totals"]["fragments"]'; }
version() { "$BRICTL" inspect "$T" --json | jget 'd["version"]'; }

make_tables "$ROOT" --tables plain --fragments 6 --rows 200 --plain-delete "" >/dev/null
printf '[daemon]\nroot = %s\n' "$ROOT" >"$TMPD/brid.conf"
brid_start busy --config "$TMPD/brid.conf"
v0=$(version)

t0=$(now_ms)
node "$INTEROP_DIR/lance_writer_loop.mjs" "$T" --seconds "$SECS" --rows 20 --delete-every 3 --update-every 5 \
  --pause "$PAUSE" >"$TMPD/writer.json" 2>"$TMPD/writer.err" &
writer=$!
: >"$TMPD/samples" # "ms fragments", one a line
while kill -0 "$writer" 2>/dev/null; do
  ms=$(now_ms) # before the read: a sample after a commit reads what it left
  n=$(fragments 2>/dev/null) && echo "$ms $n" >>"$TMPD/samples"
  sleep "$SAMPLE"
done
wait "$writer" || fail "the writer failed: $(cat "$TMPD/writer.err")"
t1=$(now_ms)
v1=$(version)

# brid's compactions that committed while the writer ran (finished in [t0,
# t1]); the largest fragment count sampled, and the largest once the first
# of them committed (the steady state: under an S3 root the first look at
# the moving table is a poll, up to poll_interval after the writes began)
ctl jobs --kind compact --state succeeded --limit 10000 --json >"$TMPD/jobs.json"
# peak: the fastest the writer added fragments, over any 2 s of samples
# without a compaction between them (a table grows faster while it is
# small), and never less than its commits a second
read -r during all max steady longest peak < <(python3 - "$TMPD/jobs.json" "$TMPD/samples" "$t0" "$t1" <<'PY'
import json, math, sys
jobs = [j for j in json.load(open(sys.argv[1]))["jobs"] if j["result"]["version"]]
t0, t1 = int(sys.argv[3]), int(sys.argv[4])
during = sorted(j["finished_at"] for j in jobs if t0 <= j["finished_at"] <= t1)
samples = [tuple(map(int, l.split())) for l in open(sys.argv[2]) if l.strip()]
first = during[0] if during else t1
longest = max([j["finished_at"] - j["started_at"] for j in jobs] or [0])
peak = 0.0
for i, (ti, ni) in enumerate(samples):
    for k in range(i + 1, len(samples)):
        tk, nk = samples[k]
        if nk < samples[k - 1][1]: break  # a compaction between
        if tk - ti >= 2000:
            peak = max(peak, (nk - ni) * 1000 / (tk - ti))
            break
print(len(during), len(jobs), max(n for _, n in samples), max([n for ms, n in samples if ms > first] or [0]),
      math.ceil(longest / 1000), math.ceil(peak))
PY
)
secs=$(((t1 - t0) / 1000))
[ "$secs" -ge 60 ] || fail "the writer ran ${secs} s, not 60"
# the writer's commits: the versions it made, brid's own left out
commits=$((v1 - v0 - all))
rate=$((commits / secs))
[ "$rate" -ge 5 ] || fail "the writer committed $commits times in ${secs} s, fewer than 5 a second"
# the bounds of the defaults: max_new_fragments, plus what is committed
# while the count is checked and claimed (2 s at the writer's peak rate of
# new fragments) and
# while a compaction runs (one job per table: the longest one's seconds),
# plus the size tiers left (8); under S3 a busy table is looked at every
# 2 s (SVC_BUSY_POLL_MS) once a poll saw it move, and the look (a listing of
# ~1,000 versions and a manifest) and the claim go through the gateway: 6
# s; before that poll, a poll_interval (30 s), on top of the table's own 6
peak=$((peak > rate ? peak : rate))
steady_bound=$((32 + peak * (2 + longest) + 8))
if [ "$KIND" = s3 ]; then
  steady_bound=$((32 + peak * (6 + longest) + 8)) bound=$((6 + peak * (32 + longest) + 8))
else
  bound=$steady_bound
fi
echo "writer: $commits commits in ${secs} s ($rate a second, at most $peak new fragments a second); brid: $during" \
  "compactions committed during the writes, $all in all, the longest ${longest} s; largest fragment count $max" \
  "(bound $bound), $steady after the first compaction (bound $steady_bound)"
[ "$during" -ge 2 ] || fail "brid committed $during compactions while the writer ran, expected at least 2: $(tail -20 "$BRID_LOG")"
[ "$max" -le "$bound" ] || fail "the table reached $max fragments during the writes, above the bound $bound"
[ "$steady" -le "$steady_bound" ] ||
  fail "the table reached $steady fragments after the first compaction, above the bound $steady_bound"
node "$INTEROP_DIR/lance_rowset.mjs" "$T" "$TMPD/writer.json" 1200 || fail "the rows are not the writer's"
brid_stop || fail "brid exited non-zero"
"$BRICTL" verify "$T" --all-versions >"$TMPD/verify.txt" 2>&1 || fail "verify --all-versions: $(tail -20 "$TMPD/verify.txt")"
echo "ok verify --all-versions: $(grep -m1 ' versions, ' "$TMPD/verify.txt")"
pass
