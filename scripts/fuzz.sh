#!/usr/bin/env bash
# Runs every libFuzzer harness in BUILD/fuzz for SECONDS each, starting from
# a scratch copy of its committed seed corpus (tests/fuzz/corpus/<name>), and
# prints the execution count of each run. Exits non-zero on the first crash;
# the crashing input is left in build-fuzz/artifacts/.
#   scripts/fuzz.sh BUILD [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:?build dir}
SECONDS_EACH=${2:-60}
mkdir -p "$BUILD/artifacts"
for f in "$BUILD"/fuzz/fuzz_*; do
  [ -x "$f" ] || continue
  name=${f##*/fuzz_}
  work=$(mktemp -d)
  [ -d "tests/fuzz/corpus/$name" ] && cp -r "tests/fuzz/corpus/$name/." "$work/"
  log="$BUILD/artifacts/$name.log"
  echo "fuzz $name: ${SECONDS_EACH}s"
  if ! "$f" -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -timeout=10 \
        -artifact_prefix="$BUILD/artifacts/$name-" "$work" >"$log" 2>&1; then
    tail -40 "$log"; rm -rf "$work"; echo "fuzz $name: FAILED"; exit 1
  fi
  grep -Eo 'Done [0-9]+ runs in [0-9]+ second' "$log" | sed "s/^/fuzz $name: /" || tail -2 "$log"
  rm -rf "$work"
done
