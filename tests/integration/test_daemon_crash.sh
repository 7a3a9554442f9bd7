#!/usr/bin/env bash
# DAEMON CRASH: kill -9 of brid in the middle of a compaction, then restart.
#  - the killed attempt's files (journaled before they were created) are on
#    disk when brid dies;
#  - the restart's recovery removes every one of them, counts the crash as an
#    attempt and requeues the job, which then succeeds;
#  - brictl scan of the compacted table equals what LanceDB read before the
#    compaction, verify passes, and no file of the killed attempt remains.
# Run for the bri strategy (no sidecar output) and the copy strategy (a new
# sidecar directory and packs), stopped by a failpoint after 10 batches, and
# for copy stopped before its 3rd copied range: the sidecar directory, a
# journaled tree, then holds a pack the journal does not name one by one,
# and recovery removes it with the directory.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_oracle

same() { json_eq "$1" "$2" --ignore version,fragments,ms,table,fragmentRows,schemaFields,descriptorKinds,deletionFiles; }

mkdir -p "$TMPD/src"
make_tables "$TMPD/src" --tables blobs --blob-batches 4:4:16K,10:4:100K >/dev/null
lance_read "$TMPD/src/blobs.lance" --json >"$TMPD/lance_before.json"

for case in bri:compact.after_rows=stop@10 copy:compact.after_rows=stop@10 copy:blobout.before_copy=stop@3; do
  strategy=${case%%:*} fp=${case#*:}
  root=$TMPD/$strategy.${fp%%=*}
  mkdir -p "$root"
  cp -a "$TMPD/src/blobs.lance" "$root/"
  T=$root/blobs.lance
  name=$strategy.${fp%%=*}
  cat >"$TMPD/$name.conf" <<EOF
[daemon]
root = $root
retry_base = 1s
[defaults]
strategy = $strategy
batch_rows = 2
cleanup_interval = 0
EOF
  # 1. stop the worker after its 10th batch, then kill brid
  BRI_FAILPOINTS=$fp brid_start "$name" --config "$TMPD/$name.conf" --debounce 1s
  wait_until 30 log_has "failpoint ${fp%%=*}: stop" || fail "$name: the compaction never reached the failpoint"
  ctl jobs --json >"$TMPD/jobs.json"
  J=$(jget 'd["jobs"][0]["id"]' <"$TMPD/jobs.json")
  [ "$(jget 'd["jobs"][0]["state"]' <"$TMPD/jobs.json")" = running ] || fail "$name: job not running"
  ctl job "$J" --json | jget '"\n".join(o["path"] for o in d["journal"])' >"$TMPD/outputs.txt"
  [ -s "$TMPD/outputs.txt" ] || fail "$name: the running job journaled nothing"
  existing=0
  while read -r p; do [ -e "$p" ] && existing=$((existing + 1)); done <"$TMPD/outputs.txt"
  [ $existing -ge 1 ] || fail "$name: no journaled output exists yet"
  if [ $strategy = copy ]; then
    grep -qv '\.lance$' "$TMPD/outputs.txt" || fail "copy: no sidecar output journaled: $(cat "$TMPD/outputs.txt")"
  fi
  if [ $name = copy.blobout.before_copy ]; then
    tree=$(ctl job "$J" --json | jget '[o["path"] for o in d["journal"] if o["kind"] == "tree"][0]')
    [ -n "$(ls -A "$tree")" ] || fail "$name: the journaled tree $tree holds nothing yet"
  fi
  brid_kill9
  n=0
  while read -r p; do [ -e "$p" ] && n=$((n + 1)); done <"$TMPD/outputs.txt"
  [ $n = $existing ] || fail "$name: outputs changed after kill -9"
  "$BRICTL" scan "$T" --json >"$TMPD/scan_killed.json" || fail "$name: table unreadable after kill -9"
  same "$TMPD/lance_before.json" "$TMPD/scan_killed.json" || fail "$name: a half-done compaction changed the table"

  # 2. restart: recovery removes the attempt's files and requeues the job
  brid_start "$name" --config "$TMPD/$name.conf" --debounce 1s
  log_has "recovery: 1 interrupted job\\(s\\): 1 requeued" || fail "$name: recovery did not requeue the job"
  while read -r p; do
    [ ! -e "$p" ] || fail "$name: $p of the killed attempt survived recovery"
  done <"$TMPD/outputs.txt"
  wait_until 30 sh -c "\"$BRICTL\" job $J --json --socket \"$SOCK\" | grep -q '\"state\": \"succeeded\"'" ||
    fail "$name: job $J did not succeed after the restart: $(ctl job "$J")"
  ctl job "$J" --json >"$TMPD/job.json"
  [ "$(jget '[a["outcome"] for a in d["attempt_log"]]' <"$TMPD/job.json")" = '["crashed", "succeeded"]' ] ||
    fail "$name: attempts $(jget 'd["attempt_log"]' <"$TMPD/job.json")"
  [ "$(jget 'd["attempts"]' <"$TMPD/job.json")" = 2 ] || fail "$name: attempts count"
  [ "$(jget 'd["journal"]' <"$TMPD/job.json")" = "[]" ] || fail "$name: journal not empty"
  [ "$(jget 'd["result"]["fragments_after"]' <"$TMPD/job.json")" = 1 ] || fail "$name: not compacted"

  # 3. the table reads as LanceDB read it before; verify passes; nothing of the killed attempt is left
  "$BRICTL" scan "$T" --json >"$TMPD/scan_after.json"
  same "$TMPD/lance_before.json" "$TMPD/scan_after.json" || fail "$name: values after recovery + compaction differ"
  ctl verify "$T" --wait --all-versions >"$TMPD/verify.out" || fail "$name: verify: $(cat "$TMPD/verify.out")"
  while read -r p; do
    [ ! -e "$p" ] || fail "$name: $p of the killed attempt remains"
  done <"$TMPD/outputs.txt"
  # every data file is one a version references (no orphan of the killed attempt under another name)
  "$BRICTL" cleanup "$T" --dry-run --older-than 0 --grace 0 --json >"$TMPD/orphans.json"
  for p in $(cat "$TMPD/outputs.txt"); do
    grep -qF "$p" "$TMPD/orphans.json" && fail "$name: cleanup still sees $p"
  done
  if [ $strategy != bri ]; then
    lance_read "$T" --json >"$TMPD/lance_after.json" || fail "$name: LanceDB cannot read the result"
    same "$TMPD/lance_before.json" "$TMPD/lance_after.json" || fail "$name: LanceDB reads other values"
  fi
  brid_stop || fail "$name: brid exited non-zero"
  echo "ok $name: $existing of $(wc -l <"$TMPD/outputs.txt") journaled output(s) of the killed attempt removed, job $J requeued and finished"
done
pass
