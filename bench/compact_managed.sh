#!/usr/bin/env bash
# bench/compact_managed.sh: compacting a Managed-blob table (Lance 14,
# docs/format/blob.md 8) on an object store, brictl against pylance 14's own
# compact_files() on identical tables, each run on a server of its own started
# here: radosgw (scripts/s3-server.sh) or Azurite (scripts/azurite-server.sh).
#
#   bench/compact_managed.sh [s3|azure] [APPENDS] [REPS]
#       (default s3, 40 appends of 10 rows: lance_py.py's media kinds, a 4.5 MB
#       dedicated value, four 200 KB packed, five 10 KB inline per append; rows
#       id % 5 = 2 deleted after; each run on REPS identical copies [3], copied
#       object by object on the server, the median reported)
#
# Runs, each on identical values written by pylance 14 (.deps/py, scripts/deps.sh):
#   pylance  a Managed table (mediamanaged): pylance's compact_files(), the call alone
#            (the dataset opened before)
#   managed  the same table: brictl compact (auto; a Managed table is compacted as
#            Managed), the whole process (call_seconds: the library call alone, from
#            opening the table to its commit, as its report says)
#   bri      the plain table (media): brictl compact --strategy bri, the whole process,
#            for its requests: a Managed compaction should cost no more
#   switch   the plain table: brictl compact --strategy managed (the switch to Managed
#            blobs, then the compaction)
# Reported per run: wall seconds (the median of REPS, and each), the bytes of the objects
# it left that were not there before (data files, manifests, transactions, any payload),
# brid's payload bytes copied and requests by kind. Checked: pylance reads every table with the values it read
# before (the bri run's after materialize --managed). Prints a table and writes
# $WORK/results.json.
set -euo pipefail
cd "$(dirname "$0")/.."
STORE=${1:-s3}
APPENDS=${2:-40}
REPS=${3:-3}
BRICTL=$PWD/${BUILD:-build}/bin/brictl
PY=$PWD/.deps/py/bin/python
LANCE_PY="$PY tests/interop/lance_py.py"
[ -x "$BRICTL" ] || { echo "build first: make" >&2; exit 1; }
[ -x "$PY" ] || { echo "no pylance venv: scripts/deps.sh" >&2; exit 1; }
case $STORE in s3 | azure) ;; *) echo "usage: $0 [s3|azure] [APPENDS]" >&2; exit 2 ;; esac
WORK=${WORK:-$(mktemp -d /tmp/brid-bench-managed.XXXXXX)}
mkdir -p "$WORK"
server_start() { # server_start RUN: a server of its own; $BASE the prefix of its tables
  if [ "$STORE" = s3 ]; then
    export BRI_S3_DIR=$WORK/server-$1
    eval "$(scripts/s3-server.sh start)"
    BASE=s3://$BRI_S3_BUCKET/bench-$$/$1
  else
    export BRI_AZ_DIR=$WORK/server-$1
    eval "$(scripts/azurite-server.sh start)"
    BASE=az://$BRI_AZ_CONTAINER/bench-$$/$1
  fi
}
server_stop() {
  if [ "$STORE" = s3 ]; then BRI_S3_DIR=$WORK/server-$1 scripts/s3-server.sh stop >/dev/null 2>&1 || true
  else BRI_AZ_DIR=$WORK/server-$1 scripts/azurite-server.sh stop >/dev/null 2>&1 || true; fi
}
RUNS="pylance managed bri switch"
trap 'for r in $RUNS; do server_stop $r; done' EXIT

values() { # the rows and per-column hashes pylance reads
  $LANCE_PY read --reader lance14 "$P" | jq -c 'if .error then error(.error) else {rows, c: (.columns | map_values(.sha256))} end'
}
listing() { /usr/bin/python3 tests/interop/objects.py "$P"; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
new_bytes() { # new_bytes BEFORE AFTER: bytes of the objects AFTER lists that BEFORE does not
  awk 'NR == FNR { seen[$1] = 1; next } !($1 in seen) { n += $2 } END { print n + 0 }' "$1" "$2"
}

for run in $RUNS; do
  server_start $run
  kind=media
  [ $run = pylance ] || [ $run = managed ] && kind=mediamanaged
  echo "$run: pylance writes $APPENDS appends ($kind) to $BASE.lance, copied $REPS times ..." >&2
  $LANCE_PY make --writer lance14 "$kind:$APPENDS=$BASE.lance" | jq -e 'has("error") | not' >/dev/null
  P=$BASE.lance values >"$WORK/$run.before"
  for i in $(seq "$REPS"); do /usr/bin/python3 tests/interop/objects.py --copy "$BASE.lance" "$BASE-$i.lance"; done
  for i in $(seq "$REPS"); do
    P=$BASE-$i.lance
    listing >"$WORK/$run.objects.before"
    case $run in
      pylance) $LANCE_PY compact "$P" | jq -c '{seconds}' >"$WORK/$run.json" ;;
      *)
        strategy=auto
        [ $run = bri ] && strategy=bri
        [ $run = switch ] && strategy=managed
        t0=$(date +%s.%N)
        "$BRICTL" compact "$P" --strategy $strategy --json >"$WORK/$run.report.json"
        jq -c --argjson s "$(echo "$(date +%s.%N) - $t0" | bc)" '{seconds: $s, call_seconds: .seconds, strategy_used,
          payload_bytes_copied, requests: .storage.requests, requests_by_kind: .storage.requests_by_kind,
          managed_switch}' "$WORK/$run.report.json" >"$WORK/$run.json"
        ;;
    esac
    listing >"$WORK/$run.objects.after"
    # (stock Lance refuses a BRI table: materialized into Managed descriptors first, after the count)
    [ $run != bri ] || "$BRICTL" materialize "$P" --managed >/dev/null
    values >"$WORK/$run.after"
    cmp -s "$WORK/$run.before" "$WORK/$run.after" || { echo "$run: pylance reads other values after the compaction" >&2; exit 1; }
    jq -c --argjson b "$(new_bytes "$WORK/$run.objects.before" "$WORK/$run.objects.after")" '. + {bytes_written: $b}' \
      "$WORK/$run.json" >"$WORK/$run.$i.json"
  done
  # the median time; the rest of the median run
  med=$(jq .seconds "$WORK/$run".[0-9]*.json | median)
  jq -s -c --argjson m "$med" '(map(select(.seconds == $m)) | .[0]) + {seconds_all: map(.seconds)}' \
    "$WORK/$run".[0-9]*.json >"$WORK/$run.result.json"
  server_stop $run
done

jq -s --arg store "$STORE" --argjson appends "$APPENDS" '{store: $store, appends: $appends, pylance: .[0],
  managed: .[1], bri: .[2], switch: .[3], ratio: (.[1].seconds / .[0].seconds)}' \
  "$WORK"/{pylance,managed,bri,switch}.result.json >"$WORK/results.json"
printf '%-8s %9s %-24s %14s %14s %9s\n' run median "seconds (all runs)" "bytes written" "payload copied" requests
for run in $RUNS; do
  jq -r --arg r $run '[$r, (.seconds * 1000 | round / 1000), (.seconds_all | map(. * 1000 | round / 1000) | join(" ")),
    .bytes_written, (.payload_bytes_copied // "-"), (.requests // "-")] | @tsv' "$WORK/$run.result.json" |
    awk -F'\t' '{printf "%-8s %9.3f %-24s %14s %14s %9s\n", $1, $2, $3, $4, $5, $6}'
done
for run in managed bri switch; do echo "$run requests: $(jq -c .requests_by_kind "$WORK/$run.result.json")"; done
echo "ratio: brid's Managed compaction takes $(jq '.ratio * 1000 | round / 1000' "$WORK/results.json") of pylance's" \
  "compact_files() time on $STORE (the whole brictl process; its library call $(jq '.managed.call_seconds /
  .pylance.seconds * 1000 | round / 1000' "$WORK/results.json")); results in $WORK/results.json"
