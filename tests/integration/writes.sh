#!/usr/bin/env bash
# TRIGGERS UNDER WRITES: the count trigger and max_delay, with a real brid
# and LanceDB writing, run by test_daemon_writes.sh (a local root: inotify)
# and test_daemon_writes_s3.sh (an S3 root on the test radosgw, polled every
# second). WRITES_ROOT=local|s3 says which. The debounce is an hour, so
# only the trigger under test can queue a compaction:
#  - max_new_fragments = 4: after a compaction, 3 appends (separate commits)
#    queue nothing; the 4th queues one at once (its log says "4 new small
#    fragments", brid_triggers_total{trigger="count"} counts it);
#  - max_delay = 4s (count trigger off): a writer appending twice a second
#    for 10 s, never quiet, gets a compaction queued about 4 s after its
#    first commit, while it still writes; its rows stay exactly its own.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_oracle
KIND=${WRITES_ROOT:-local}
if [ "$KIND" = s3 ]; then
  need_s3 writes
  ROOT=$S3_PREFIX
  printf '%s\n' "$AWS_SECRET_ACCESS_KEY" >"$TMPD/secret"
  chmod 600 "$TMPD/secret"
  SECTION=$(s3_root_section "$ROOT" "$TMPD/secret")
else
  ROOT=$TMPD/root
  mkdir -p "$ROOT"
  SECTION=
fi
T=$ROOT/plain.lance
now_ms() { python3 -c 'import time; print(int(time.time()*1000))'; }
compactions() { ctl jobs --kind compact --table "$T" --json | jget 'len(d["jobs"])'; }
at_least() { [ "$(ctl jobs --kind compact --state succeeded --table "$T" --json | jget 'len(d["jobs"])')" -ge "$1" ]; }
newest() { ctl jobs --kind compact --table "$T" --json | jget "d['jobs'][0]$1"; }

make_tables "$ROOT" --tables plain --fragments 3 --rows 100 --plain-delete "" >/dev/null
conf() { # conf MAX_DELAY MAX_NEW_FRAGMENTS
  printf '[daemon]\nroot = %s\nretry_base = 1s\n[defaults]\ndebounce = 1h\nmax_delay = %s\nmax_new_fragments = %s\ncleanup_interval = 0\n%s\n' \
    "$ROOT" "$1" "$2" "$SECTION" >"$TMPD/brid.conf"
}

# 1. the count trigger
conf 0 4
brid_start writes --config "$TMPD/brid.conf"
ctl compact "$T" --wait --quiet >/dev/null || fail "the compaction asked for failed"
lance_ops "$T" append 5 --times 3 >/dev/null
sleep 4 # a poll (S3: every second) and a look have seen the three by now
[ "$(compactions)" = 1 ] || fail "3 new fragments (max_new_fragments = 4) queued a compaction: $(ctl jobs --table "$T")"
lance_ops "$T" append 5 >/dev/null
wait_until 20 at_least 2 || fail "the 4th new fragment queued no compaction: $(tail -20 "$BRID_LOG")"
[ "$(newest '["params"]["trigger"]')" = auto ] || fail "the count trigger's job: $(newest '')"
log_has "plain.lance: version [0-9]+ has 1 bin\\(s\\) to compact \\(4 new small fragments\\): queued job" ||
  fail "the count trigger was not logged"
[ "$(ctl metrics | sed -n 's/^brid_triggers_total{trigger="count"} //p')" = 1 ] ||
  fail "brid_triggers_total{trigger=\"count\"}: $(ctl metrics | grep brid_triggers_total)"
echo "ok count trigger: 3 new fragments wait, the 4th queues a compaction"
brid_stop || fail "brid exited non-zero"

# 2. max_delay, beside a writer that is never quiet for the debounce
conf 4s 0
brid_start writes --config "$TMPD/brid.conf"
n0=$(compactions)
v0=$("$BRICTL" inspect "$T" --json | jget 'd["version"]')
t0=$(now_ms)
node "$INTEROP_DIR/lance_writer_loop.mjs" "$T" --seconds 10 --rows 5 --delete-every 0 --pause 500 \
  >"$TMPD/writer.json" 2>"$TMPD/writer.err" &
writer=$!
wait_until 20 at_least $((n0 + 1)) || fail "no compaction within max_delay of the writer's first commit"
queued=$(newest '["created_at"]')
kill -0 "$writer" 2>/dev/null || fail "the writer ended before brid's compaction was queued"
wait "$writer" || fail "the writer failed: $(cat "$TMPD/writer.err")"
# its first commit: the version after v0 (the writer's first add()), by its manifest's time
first=$("$BRICTL" inspect "$T" --version $((v0 + 1)) --json |
  jget "int(__import__('datetime').datetime.fromisoformat(d['timestamp'].replace('Z', '+00:00')).timestamp() * 1000)")
[ "$first" -ge "$t0" ] || fail "version $((v0 + 1)) is older than the writer"
wait_ms=$((queued - first))
echo "max_delay 4s: the compaction was queued ${wait_ms} ms after the writer's first commit"
[ "$wait_ms" -ge 3500 ] && [ "$wait_ms" -le 8000 ] || fail "queued ${wait_ms} ms after the first commit, max_delay is 4 s"
wait_until 30 at_least $((n0 + 1)) || fail "the max_delay compaction did not succeed"
[ "$(ctl metrics | sed -n 's/^brid_triggers_total{trigger="quiet"} //p')" -ge 1 ] ||
  fail "brid_triggers_total{trigger=\"quiet\"}: $(ctl metrics | grep brid_triggers_total)"
node "$INTEROP_DIR/lance_rowset.mjs" "$T" "$TMPD/writer.json" 320 || fail "the rows are not the writer's" # 300 made, 20 appended in 1.
brid_stop || fail "brid exited non-zero"
echo "ok max_delay"
pass
