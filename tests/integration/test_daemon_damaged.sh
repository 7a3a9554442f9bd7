#!/usr/bin/env bash
# DAEMON, DAMAGED SOURCE: a compaction job of brid on a table whose
# dedicated sidecar was truncated (docs/reliability.md, "Damaged sources")
# fails cleanly: `brictl compact --wait` exits 4 (the job failed), the job is
# failed with the refusal's message (table, fragment, row, sidecar, expected
# and actual bytes), no version is committed, the table's tree is what it
# was (the lock file aside), and brid goes on serving: the same table,
# repaired, compacts.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
mkdir -p "$TMPD/root"
T=$TMPD/root/t.lance
"$BRICTL" gen "$T" --fragments 3 --rows 4 --blob-sizes 512,20K,30K,100K --inline-threshold 1024 \
  --dedicated-threshold 65536 >/dev/null
dir1=$("$BRICTL" inspect "$T" --json | jget '[f for f in d["fragments"] if f["id"] == 1][0]["files"][0]["sidecars"]["dir"]')
DEDI=$T/$dir1/01000000000000000000000000000000.blob
cp "$DEDI" "$TMPD/good.blob"
truncate -s 10 "$DEDI"
tree() { (cd "$T" && find . ! -name .brid.lock -printf '%p %s %y\n' | LC_ALL=C sort &&
  find . -type f ! -name .brid.lock -exec sha1sum {} + | LC_ALL=C sort); }
before=$(tree)
printf '[daemon]\nroot = %s\n[defaults]\nauto_compact = no\ncleanup_interval = 0\n' "$TMPD/root" >"$TMPD/d.conf"
brid_start d --config "$TMPD/d.conf"

set +e; ctl compact "$T" --wait >"$TMPD/out" 2>"$TMPD/err"; rc=$?; set -e
[ "$rc" = 4 ] || fail "compact --wait of a damaged table: exit $rc (expected 4): $(cat "$TMPD/out" "$TMPD/err")"
ctl jobs --table "$T" --kind compact --limit 1 --json >"$TMPD/jobs.json"
[ "$(jget 'd["jobs"][0]["state"]' <"$TMPD/jobs.json")" = failed ] || fail "the job is not failed: $(cat "$TMPD/jobs.json")"
jget 'd["jobs"][0]' <"$TMPD/jobs.json" >"$TMPD/job.txt"
grep -qF "fragment 1 row 3: sidecar $DEDI does not hold its dedicated value" "$TMPD/job.txt" ||
  fail "the failed job does not say what is damaged: $(cat "$TMPD/job.txt")"
grep -qF "expected 102400 bytes, actual 10" "$TMPD/job.txt" || fail "the failed job does not give the sizes: $(cat "$TMPD/job.txt")"
[ "$("$BRICTL" inspect "$T" --json | jget 'd["version"]')" = 3 ] || fail "a version was committed"
[ "$(tree)" = "$before" ] || fail "the failed job changed the table: $(diff <(echo "$before") <(tree) | head -5)"
echo "ok a damaged table's job failed with the message, nothing committed or left"

cp "$TMPD/good.blob" "$DEDI"
ctl compact "$T" --wait >/dev/null || fail "the repaired table did not compact"
[ "$("$BRICTL" inspect "$T" --json | jget 'd["totals"]["fragments"]')" = 1 ] || fail "the repaired table was not compacted"
brid_stop
echo "ok repaired, the same table compacts"
