#!/usr/bin/env bash
# brictl cleanup on a copy of a real table: a dry run lists and deletes
# nothing; a run deletes old versions and what only they referenced, keeps
# the tagged version readable; an unreadable retained manifest stops the run
# with exit 2 before anything is deleted.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
t=$TMP/plain.lance
cp -a "$BRI_SOURCE_DIR/tests/fixtures/tables/plain.lance" "$t"
# a checkout dates files now, which cleanup treats as possibly in flight
find "$t" -exec touch -h -d 2020-01-01 {} +
snapshot() { (cd "$t" && find . -type f | sort); }
before=$(snapshot)
out=$("$BRICTL" cleanup "$t" --older-than 0 --dry-run)
grep -q "would delete 6 files" <<<"$out" || fail "dry run: $out"
[ "$(snapshot)" = "$before" ] || fail "dry run changed the table"
"$BRICTL" cleanup "$t" --older-than 0 --json >"$TMP/run.json"
python3 - "$TMP/run.json" <<'PY' || fail "unexpected cleanup report"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["files"] == 6 and r["versions_retained"] == 2, r
assert r["by_kind"]["manifest"]["files"] == 3 and r["by_kind"]["transaction"]["files"] == 3, r
assert all(d["path"].startswith(r["table"] + "/") for d in r["deleted"]), r
PY
"$BRICTL" inspect "$t" --json | python3 -c 'import json,sys; r=json.load(sys.stdin); assert r["versions"]["count"]==2 and r["version"]==5' ||
  fail "latest version not intact"
"$BRICTL" inspect "$t" --version 2 >/dev/null || fail "tagged version 2 no longer readable"
# corrupt the tagged (retained) manifest: nothing may be deleted
m=$(ls "$t"/_versions/*.manifest | sort | tail -1)   # version 2 = the larger V2 name
printf 'garbage' >>"$m"
cp -a "$t" "$TMP/copy"
set +e; err=$("$BRICTL" cleanup "$t" --older-than 0 2>&1); rc=$?; set -e
[ $rc -eq 2 ] || fail "corrupt retained manifest: exit $rc"
grep -qF "$m" <<<"$err" || fail "message does not name $m: $err"
diff -r "$t" "$TMP/copy" >/dev/null || fail "files changed despite the error"
set +e; "$BRICTL" cleanup "$t" --older-than yesterday 2>/dev/null; rc=$?; set -e
[ $rc -eq 1 ] || fail "bad duration: exit $rc"
echo ok
