#!/usr/bin/env bash
# ONE RELOAD PATH: `brictl reload` applies what SIGHUP applies, S3 settings
# and secrets included (issue DEPLOY). brid starts with an S3 root whose
# secret file holds a wrong secret (its polls fail), then:
#  - the secret file is corrected and `brictl reload` is sent: the root's
#    next polls succeed and its table is compacted, LanceDB reads the same;
#  - a second S3 root, with its [root] section, is added to brid.conf and
#    `brictl reload` is sent: the reply names the new roots, and the new
#    root's table is compacted;
#  - the same change through SIGHUP (a third root) gives the same result,
#    and status reports both reloads without error.
# About 15 s.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_s3 reload
P=$S3_PREFIX/one
Q=$S3_PREFIX/two
R=$S3_PREFIX/three

same() { json_eq "$1" "$2" --ignore version,fragments,ms,table,fragmentRows,schemaFields,descriptorKinds,deletionFiles; }
compacted() { # compacted TABLE: a compaction of TABLE succeeded
  [ "$(ctl jobs --kind compact --state succeeded --table "$1" --json | jget 'len(d["jobs"])')" -ge 1 ]
}
metric() { ctl metrics | grep -E "^$1 " | awk '{print $2}'; }

for t in "$P" "$Q" "$R"; do make_tables "$t" --tables blobs --small --blob-batches 3:mixed >/dev/null; done
lance_read "$P/blobs.lance" --json >"$TMPD/p_before.json"
lance_read "$Q/blobs.lance" --json >"$TMPD/q_before.json"

printf 'not-the-secret\n' >"$TMPD/secret"
chmod 600 "$TMPD/secret"
{ printf '[daemon]\nroot = %s\nretry_base = 1s\n' "$P"; s3_root_section "$P" "$TMPD/secret"; } >"$TMPD/brid.conf"
BRID_PREFIX="env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_ENDPOINT_URL -u AWS_REGION AWS_MAX_ATTEMPTS=1" \
  brid_start r --config "$TMPD/brid.conf" --debounce 1s

# 1. a wrong secret: the root's polls fail; nothing is compacted
failed() { [ "$(metric "brid_poll_failures_total\\{root=\"$P\"\\}")" -ge 1 ]; }
wait_until 15 failed || fail "the polls of a root with a wrong secret do not fail"
compacted "$P/blobs.lance" && fail "a table was compacted with a wrong secret"

# 2. the secret corrected, brictl reload: the same root now lists and compacts
printf '%s\n' "$AWS_SECRET_ACCESS_KEY" >"$TMPD/secret"
ctl reload >"$TMPD/reload1.out" 2>&1 || fail "brictl reload: $(cat "$TMPD/reload1.out")"
wait_until 30 compacted "$P/blobs.lance" ||
  fail "the corrected secret did not take effect through brictl reload: $(grep -i "$P" "$BRID_LOG" | tail -3)"
lance_read "$P/blobs.lance" --json >"$TMPD/p_after.json"
same "$TMPD/p_before.json" "$TMPD/p_after.json" || fail "LanceDB reads other values after the compaction"
echo "ok a changed S3 secret takes effect through brictl reload"

# 3. a new S3 root through brictl reload
{ printf '[daemon]\nroot = %s\nroot = %s\nretry_base = 1s\n' "$P" "$Q"
  s3_root_section "$P" "$TMPD/secret"; s3_root_section "$Q" "$TMPD/secret"; } >"$TMPD/brid.conf"
ctl reload --json >"$TMPD/reload2.json" 2>&1 || fail "brictl reload: $(cat "$TMPD/reload2.json")"
[ "$(jget '"'"$Q"'" in d["changes"]["roots"]' <"$TMPD/reload2.json")" = True ] ||
  fail "the reload reply does not name the new root: $(cat "$TMPD/reload2.json")"
wait_until 30 compacted "$Q/blobs.lance" || fail "a root added by brictl reload was not compacted"
lance_read "$Q/blobs.lance" --json >"$TMPD/q_after.json"
same "$TMPD/q_before.json" "$TMPD/q_after.json" || fail "LanceDB reads other values in the new root's table"
echo "ok a new S3 root takes effect through brictl reload"

# 4. SIGHUP runs the same code: a third root
{ printf '[daemon]\nroot = %s\nroot = %s\nroot = %s\nretry_base = 1s\n' "$P" "$Q" "$R"
  s3_root_section "$P" "$TMPD/secret"; s3_root_section "$Q" "$TMPD/secret"; s3_root_section "$R" "$TMPD/secret"; } \
  >"$TMPD/brid.conf"
kill -HUP "$BRID_PID"
wait_until 30 compacted "$R/blobs.lance" || fail "a root added by SIGHUP was not compacted"
ctl status --json >"$TMPD/status.json"
[ "$(jget 'd["last_reload"]["error"]' <"$TMPD/status.json")" = None ] ||
  fail "status reports a reload error: $(jget 'd["last_reload"]' <"$TMPD/status.json")"
echo "ok SIGHUP applies the same"
brid_stop || fail "brid did not stop cleanly"
pass
