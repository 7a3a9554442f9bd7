#!/usr/bin/env bash
# brictl's exit codes and messages for usage errors (1) and unreadable
# tables (2), and that --help succeeds.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
expect() { # expect CODE NEEDLE ARGS...
  local code=$1 needle=$2; shift 2
  set +e; out=$("$BRICTL" "$@" 2>&1); rc=$?; set -e
  [ "$rc" -eq "$code" ] || fail "brictl $*: exit $rc, expected $code: $out"
  grep -qF -- "$needle" <<<"$out" || fail "brictl $*: '$needle' not in: $out"
}
expect 1 "usage: brictl COMMAND"
expect 1 'unknown command "frobnicate"' frobnicate
expect 0 "inspect" --help
expect 1 "TABLE is required" inspect
expect 1 "--version needs a positive integer" inspect x --version abc
expect 1 "--version needs a positive integer" inspect x --version 0
expect 1 "unknown option --bogus" inspect x --bogus
expect 1 "more than one TABLE" inspect a b
expect 2 "$TMP/none: not a Lance table (no _versions directory)" inspect "$TMP/none"
mkdir -p "$TMP/empty/_versions"
expect 2 "not a Lance table (no manifest" inspect "$TMP/empty"
expect 2 "no version 99 (latest is 5)" inspect "$BRI_SOURCE_DIR/tests/fixtures/tables/plain.lance" --version 99
expect 0 "tag       v2tag -> version 2" inspect "$BRI_SOURCE_DIR/tests/fixtures/tables/plain.lance"
"$BRICTL" inspect "$BRI_SOURCE_DIR/tests/fixtures/tables/plain.lance" --version 2 --json |
  python3 -c 'import json,sys; r=json.load(sys.stdin); assert r["version"]==2 and r["totals"]["fragments"]==2 and r["totals"]["rows"]==200, r["totals"]' ||
  fail "inspect --version 2 reports the wrong version"
echo ok
