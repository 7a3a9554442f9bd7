#!/usr/bin/env bash
# DAEMON + brictl gen (no node needed): a Blob v2 table written by brid's own
# writer while brid runs is discovered and compacted after the debounce; two
# more appends trigger one more compaction; the compacted table holds the
# same values as a table generated in one go (brictl scan hashes), and verify
# passes through the daemon. Then without inotify (as on NFS): the periodic
# sweep alone finds a new table and a later append.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

same_scan() { python3 - "$1" "$2" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
keep = lambda s: {k: s[k] for k in ("rows", "schema", "columns")}
sys.exit(0 if keep(a) == keep(b) else 1)
EOF
}
count() { ctl jobs --kind compact --state succeeded --table "$T" --json | jget 'len(d["jobs"])'; }
at_least() { [ "$(count)" -ge "$1" ]; }

mkdir -p "$TMPD/root"
T=$TMPD/root/gen.lance
brid_start gen --root "$TMPD/root" --debounce 1s
"$BRICTL" gen "$T" --fragments 4 --rows 5 --blob-sizes 1K,100K >/dev/null
wait_until 20 at_least 1 || fail "a table brictl gen created was not compacted"
"$BRICTL" gen "$T" --fragments 1 --rows 5 --blob-sizes 1K,100K >/dev/null
"$BRICTL" gen "$T" --fragments 1 --rows 5 --blob-sizes 1K,100K >/dev/null
wait_until 20 at_least 2 || fail "brictl gen appends did not trigger a compaction"
sleep 1.5
[ "$(count)" = 2 ] || fail "expected 2 compactions, got $(count)"
ctl jobs --kind compact --table "$T" --json >"$TMPD/jobs.json"
[ "$(jget '[(j["result"]["fragments_before"], j["result"]["fragments_after"]) for j in d["jobs"]]' <"$TMPD/jobs.json")" = \
  '[[3, 1], [4, 1]]' ] || fail "fragments: $(jget '[j["result"] for j in d["jobs"]]' <"$TMPD/jobs.json")"
[ "$(jget 'd["jobs"][0]["bytes_reused"] > 0' <"$TMPD/jobs.json")" = True ] || fail "no blob payload reused"
"$BRICTL" gen "$TMPD/ref.lance" --fragments 6 --rows 5 --blob-sizes 1K,100K >/dev/null
"$BRICTL" scan "$T" --json >"$TMPD/a.json"
"$BRICTL" scan "$TMPD/ref.lance" --json >"$TMPD/b.json"
same_scan "$TMPD/a.json" "$TMPD/b.json" || fail "compacted table differs from one generated in one go"
ctl verify "$T" --wait --all-versions >/dev/null || fail "verify"
brid_stop || fail "brid exited non-zero"
echo "ok inotify"

# the sweep alone (failpoint switch watch.no_inotify: no fs watch at all)
printf '[daemon]\nroot = %s\nsweep_interval = 2s\n' "$TMPD/root" >"$TMPD/sweep.conf"
BRI_FAILPOINTS=watch.no_inotify=on brid_start sweep --config "$TMPD/sweep.conf" --debounce 1s
[ "$(ctl status --json | jget 'd["tables"]["inotify_watches"]')" = 0 ] || fail "inotify watches with watch.no_inotify"
T=$TMPD/root/nfs.lance
"$BRICTL" gen "$T" --fragments 3 --rows 5 --blob-sizes 1K,100K >/dev/null
wait_until 20 at_least 1 || fail "the sweep did not find and compact a new table"
"$BRICTL" gen "$T" --fragments 2 --rows 5 --blob-sizes 1K,100K >/dev/null
wait_until 20 at_least 2 || fail "the sweep did not notice an append"
grep -q '^brid_sweeps_total [1-9]' <<<"$(ctl metrics)" || fail "metrics: sweeps"
brid_stop || fail "brid exited non-zero"
echo "ok sweep"
pass
