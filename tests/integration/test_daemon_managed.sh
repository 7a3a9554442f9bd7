#!/usr/bin/env bash
# DAEMON, MANAGED: brid with min_reader = 14 declared for every table of an S3 root of the
# test radosgw ([table ROOT/**]: any depth below the root), beside a pylance 14 writer
# appending to a plain Blob v2 table there:
#  - brid switches the table to Managed blobs (logged, brid_managed_switches_total) and
#    compacts it, every compaction with 0 payload bytes copied, by brid or the server;
#  - when the writer is done and brid has compacted its last appends, pylance reads
#    exactly the rows the writer wrote (a local copy that got the same appends, never
#    compacted, reads the same);
#  - tables shows the declaration (min_reader 14; with TABLE, in its policy and the
#    releases it leaves out: Lance 12 and 13);
#  - strategy managed beside a declared min_reader below 14 is a configuration error.
# About 20 s.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_s3 managed
need_lance_py
P=$S3_PREFIX
T=$P/team/media.lance # below the root: [table ROOT/**] reaches it, ROOT/* would not
REF=$TMPD/ref.lance
lance_py make --writer lance14 media:4="$T" media:4="$REF" >"$TMPD/made.json"
grep -q '"error"' "$TMPD/made.json" && fail "pylance could not write the tables: $(cat "$TMPD/made.json")"

printf '%s\n' "$AWS_SECRET_ACCESS_KEY" >"$TMPD/secret"
chmod 600 "$TMPD/secret"
{
  printf '[daemon]\nroot = %s\ndebounce = 1s\n[table %s/**]\nmin_reader = 14\n' "$P" "$P"
  s3_root_section "$P" "$TMPD/secret"
} >"$TMPD/brid.conf"
# strategy managed where Lance 13 is declared: refused before anything runs
sed 's/^min_reader = 14$/min_reader = 13\nstrategy = managed/' "$TMPD/brid.conf" >"$TMPD/bad.conf"
rc=0; "$BRID" --config "$TMPD/bad.conf" --check-config >/dev/null 2>"$TMPD/err" || rc=$?
[ $rc = 78 ] && grep -q "strategy managed locks out the Lance 13 readers min_reader = 13 declares" "$TMPD/err" ||
  fail "strategy managed with min_reader 13: exit $rc: $(cat "$TMPD/err")"

brid_start managed --config "$TMPD/brid.conf"
# the writer: 6 rounds of two appends, to the S3 table and to the local reference
( for _ in 1 2 3 4 5 6; do lance_py append "$T" "$REF" >>"$TMPD/writer.jsonl" || exit 1; sleep 0.5; done ) &
writer=$!
wait "$writer" || fail "the pylance writer failed: $(tail -3 "$TMPD/writer.jsonl")"
grep -q '"error"' "$TMPD/writer.jsonl" && fail "the writer: $(grep error "$TMPD/writer.jsonl" | head -2)"
settled() { # no job queued or running, and brid's compactions caught up with the writer
  [ "$(ctl jobs --table "$T" --state queued,running --json | jget 'len(d["jobs"])')" = 0 ] &&
    [ "$(ctl tables --json | jget '[t["fragments"] for t in d["tables"] if t["root"] == "'"$T"'"][0]')" -le 2 ]
}
wait_until 60 settled || fail "brid did not settle: $(ctl tables --json | head -c 600)"
ctl jobs --table "$T" --kind compact --state succeeded --json >"$TMPD/jobs.json"
jget '[(j["result"]["strategy_used"], j["result"]["payload_bytes_copied"], j["result"]["storage"]["bytes_copied_server"],
  (j["result"]["managed_switch"] or {}).get("version", 0)) for j in d["jobs"]]' <"$TMPD/jobs.json" >"$TMPD/compactions"
python3 - "$TMPD/compactions" <<'PY' || fail "brid's compactions: $(cat "$TMPD/compactions")"
import json, sys
c = json.load(open(sys.argv[1]))
assert c and all(s == "managed" and p == 0 and sv == 0 for s, p, sv, _ in c), c
assert sum(1 for *_, v in c if v) == 1, c  # one switch
PY
log_has "switched $T to Managed blobs \(version [0-9]+, strategy auto, min_reader 14\)" || fail "the switch is not logged"
ctl metrics >"$TMPD/metrics.txt" # (into a file: grep -q closing a pipe fails it under pipefail)
grep -q '^brid_managed_switches_total 1$' "$TMPD/metrics.txt" || fail "metrics: $(grep managed_switches "$TMPD/metrics.txt")"
[ "$(lance14_rows "$T")" = "$(lance14_rows "$REF")" ] || fail "pylance reads other rows than the writer wrote"
ctl tables "$T" >"$TMPD/table.txt"
grep -q '^ *min_reader *14$' "$TMPD/table.txt" || fail "tables does not show the declaration: $(cat "$TMPD/table.txt")"
[ "$(ctl tables --json | jget '[t["min_reader"] for t in d["tables"] if t["root"] == "'"$T"'"][0]')" = 14 ] ||
  fail "tables --json does not show the declaration"
out=$(ctl tables "$T" --json | jget 'd["older_than_declared"]')
[[ $out == *"Lance 12.0.0"*"Lance 13.0.0"* ]] || fail "tables does not say which readers the declaration leaves out: $out"
echo "ok: $(($(wc -l <"$TMPD/writer.jsonl") / 2)) rounds of two appends beside $(jget 'len(d["jobs"])' <"$TMPD/jobs.json")" \
  "compactions, one switch, 0 payload bytes, rows exact"
pass
