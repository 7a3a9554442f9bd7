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
#  - brid committed at least 2 compactions while the writer ran, the first
#    less than 25 s after it began (the count trigger's: the debounce and
#    the S3 root's next poll are 30 s away);
#  - the table's fragment count, sampled every half second (local) or second
#    (S3), never passed the bound of the defaults: max_new_fragments (32)
#    new fragments, plus those of one compaction cycle at the writer's peak
#    rate of new fragments (2 s between a count check and the job's start,
#    and the longest compaction's own seconds: one job per table runs at a
#    time), plus the compacted ones (a few size tiers; 8 allowed). Under an
#    S3 root a busy table is looked at every 2 s once a poll saw it move or
#    found it committed to within the last 10 s (brid's first poll runs at
#    its start, right after the table was made), and a look and a claim
#    take longer through the gateway (6 s): the same bound with 6 s for 2,
#    from the writer's first commit on (a table found only at the poll
#    after, poll_interval later, would gather 30 s of fragments unseen);
#  - the table holds exactly the writer's rows (lance_rowset.mjs), and
#    brictl verify --all-versions passes over every version the writer and
#    brid committed.
# The numbers (rate, compactions during the writes, largest fragment count,
# the bound) are printed; so is the largest count after the first
# compaction (the steady state).
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
# of them committed (the steady state, printed)
ctl jobs --kind compact --state succeeded --limit 10000 --json >"$TMPD/jobs.json"
# peak: the fastest the writer added fragments, over any 2 s of samples
# without a compaction between them (a table grows faster while it is
# small), and never less than its commits a second
read -r during all max steady longest peak first_s < <(python3 - "$TMPD/jobs.json" "$TMPD/samples" "$t0" "$t1" <<'PY'
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
      math.ceil(longest / 1000), math.ceil(peak), (first - t0) // 1000)
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
# 2 s (SVC_BUSY_POLL_MS), and the look (a listing of ~1,000 versions and a
# manifest) and the claim go through the gateway: 6 s
peak=$((peak > rate ? peak : rate))
look=2
[ "$KIND" != s3 ] || look=6
bound=$((32 + peak * (look + longest) + 8))
echo "writer: $commits commits in ${secs} s ($rate a second, at most $peak new fragments a second); brid: $during" \
  "compactions committed during the writes, $all in all, the longest ${longest} s; largest fragment count $max" \
  "(bound $bound), $steady after the first compaction (${first_s} s after the writes began)"
# the first compaction comes from the count trigger, within seconds of the
# writer's start: never from the debounce or (S3) the next poll, both 30 s on
[ "$first_s" -lt 25 ] || fail "brid's first compaction committed ${first_s} s after the writer began, expected < 25 s"
[ "$during" -ge 2 ] || fail "brid committed $during compactions while the writer ran, expected at least 2: $(tail -20 "$BRID_LOG")"
[ "$max" -le "$bound" ] || fail "the table reached $max fragments during the writes, above the bound $bound"
node "$INTEROP_DIR/lance_rowset.mjs" "$T" "$TMPD/writer.json" 1200 || fail "the rows are not the writer's"
brid_stop || fail "brid exited non-zero"
"$BRICTL" verify "$T" --all-versions >"$TMPD/verify.txt" 2>&1 || fail "verify --all-versions: $(tail -20 "$TMPD/verify.txt")"
echo "ok verify --all-versions: $(grep -m1 ' versions, ' "$TMPD/verify.txt")"
pass
