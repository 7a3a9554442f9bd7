#!/usr/bin/env bash
# COMPACT under a busy writer (REALTABLES 3): a LanceDB writer appends,
# deletes and updates in a loop (lance_writer_loop.mjs: 20 rows per
# iteration, a delete every 2nd, an update of two rows every 3rd) while
# brictl compacts the same table over and over, cycling through the link,
# copy and bri strategies (the table has no blob column, so bri output stays
# readable by LanceDB). A compaction that meets a delete, or the delete half
# of an update, in fragments it rewrote carries those deletions over to its
# new fragments instead of giving way (lib/compact/carry.h), so that at least
# 90% of the compactions that had work commit. Without and with stable row
# ids. At the end the table holds exactly the rows the writer committed
# (none lost, resurrected or duplicated; updated rows hold their last value),
# brictl and LanceDB read the same, and verify --all-versions passes.
# SECONDS_RUN per case [12]; `make reliability` runs 60.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_oracle
SECONDS_RUN=${SECONDS_RUN:-12}

# a number of brictl's JSON report (0 when absent)
field() { local v; v=$(grep -o "\"$1\": [0-9]*" "$2" | head -1 | grep -o '[0-9]*$' || true); echo "${v:-0}"; }

run_case() { # NAME [lance_make options]
  local name=$1; shift
  make_tables "$TMPD/$name" --tables plain --fragments 6 --rows 200 --plain-delete "" "$@" >/dev/null
  local t=$TMPD/$name/plain.lance
  node "$INTEROP_DIR/lance_writer_loop.mjs" "$t" --seconds "$SECONDS_RUN" --rows 20 --delete-every 2 \
    --update-every 3 >"$TMPD/$name.writer.json" 2>"$TMPD/$name.writer.err" &
  local writer=$!
  local committed=0 gave_way=0 nothing=0 carried=0 i=0 strategies=(link copy bri)
  local deadline=$((SECONDS + SECONDS_RUN))
  while [ $SECONDS -lt $deadline ]; do
    local s=${strategies[$((i++ % 3))]}
    if "$BRICTL" compact "$t" --strategy "$s" --json >"$TMPD/c.json" 2>"$TMPD/c.err"; then
      if [ "$(field version "$TMPD/c.json")" = 0 ]; then
        nothing=$((nothing + 1))
      else
        committed=$((committed + 1))
        carried=$((carried + $(field deletions_carried "$TMPD/c.json")))
      fi
    else
      grep -Eq "touched fragment|changed after version|re-planned|deleted meanwhile|committed by another writer first" "$TMPD/c.err" ||
        fail "$name: compaction ($s) failed for another reason: $(cat "$TMPD/c.err")"
      gave_way=$((gave_way + 1))
      echo "  $name ($s) gave way: $(cat "$TMPD/c.err")"
    fi
    sleep 0.2
  done
  wait $writer || fail "$name: the LanceDB writer failed: $(cat "$TMPD/$name.writer.err")"
  "$BRICTL" compact "$t" --strategy link >/dev/null # and once more, quietly
  node "$INTEROP_DIR/lance_rowset.mjs" "$t" "$TMPD/$name.writer.json" 1200 >"$TMPD/rows" ||
    fail "$name: the rows are not what the writer committed: $(cat "$TMPD/rows")"
  lance_read "$t" --json >"$TMPD/l.json"
  "$BRICTL" scan "$t" --json >"$TMPD/s.json"
  json_eq "$TMPD/l.json" "$TMPD/s.json" --ignore ms,table,fragmentRows,schemaFields || fail "$name: brictl and LanceDB disagree at the end"
  "$BRICTL" verify "$t" --all-versions >"$TMPD/verify" || fail "$name: verify: $(cat "$TMPD/verify")"
  echo "ok $name: $(cat "$TMPD/rows"); $committed compactions committed, $gave_way gave way, $nothing found nothing to do; $carried deleted rows carried over"
  [ "$committed" -ge 5 ] || fail "$name: only $committed compactions committed"
  [ "$carried" -gt 0 ] || fail "$name: no compaction met a concurrent delete (nothing carried): the test did not test"
  [ $((committed * 10)) -ge $((9 * (committed + gave_way))) ] ||
    fail "$name: $committed of $((committed + gave_way)) compactions committed (need 90%)"
}

run_case plain
run_case stable --stable-row-ids
pass
