#!/usr/bin/env bash
# DAEMON ON S3: brid with an S3 root compacts new commits by itself (issue
# 15). brid runs with root = s3://BUCKET/PREFIX on the test radosgw,
# endpoint and credentials from the root's [root] section (the secret read
# from a file; brid's own environment has no AWS_* variables), polling
# every second:
#  - LanceDB writes a blob table there before brid starts: brid finds it,
#    compacts it after the debounce (strategy auto: copy on S3), and LanceDB
#    reads identical values;
#  - LanceDB appends: the next poll sees the new version, brid compacts
#    again, LanceDB reads identical values;
#  - a table LanceDB creates after brid started is found and compacted;
#  - cleanup, verify and materialize of an S3 table run as brid's jobs;
#    LanceDB still reads the same;
#  - brictl metrics shows the root's S3 requests (LISTs of the polls, GETs,
#    server-side copies) and its polls;
#  - an S3 root that does not answer: brid starts and answers all the same,
#    the root's polls fail (brid_poll_failures_total), the error logged once;
#  - a secret written in brid.conf itself is refused, naming the key; so are
#    a secret file every user may read and settings of a root not configured;
#  - the secret as a systemd credential (secret_access_key_credential, read
#    from $CREDENTIALS_DIRECTORY): accepted, never shown; refused without
#    $CREDENTIALS_DIRECTORY, with a path for a name, or beside the _file key.
# About 10-15 s.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_s3 daemon
P=$S3_PREFIX

same() { json_eq "$1" "$2" --ignore version,fragments,ms,table,fragmentRows,schemaFields,descriptorKinds,deletionFiles; }
jobs_of() { # jobs_of KIND STATE TABLE: ids, oldest first
  ctl jobs --kind "$1" --state "$2" --table "$3" --json | jget '" ".join(str(j["id"]) for j in reversed(d["jobs"]))'
}
count_jobs() { local n; n=$(jobs_of "$@"); set -- $n; echo $#; }
at_least() { [ "$(count_jobs "$2" "$3" "$4")" -ge "$1" ]; } # at_least N KIND STATE TABLE
metric() { # metric REGEX: the value of the one sample line matching it
  ctl metrics | grep -E "^$1 " | awk '{print $2}'
}

make_tables "$P" --tables blobs --small --blob-batches 3:mixed >/dev/null
T=$P/blobs.lance
lance_read "$T" --json >"$TMPD/before.json"

printf '%s\n' "$AWS_SECRET_ACCESS_KEY" >"$TMPD/secret"
chmod 600 "$TMPD/secret"
cat >"$TMPD/brid.conf" <<EOF
[daemon]
root = $P
retry_base = 1s
$(s3_root_section "$P" "$TMPD/secret")
max_requests_in_flight = 8
EOF
# a secret in brid.conf itself is refused
{ cat "$TMPD/brid.conf"; echo "secret_access_key = $AWS_SECRET_ACCESS_KEY"; } >"$TMPD/bad.conf"
rc=0; "$BRID" --config "$TMPD/bad.conf" --check-config >/dev/null 2>"$TMPD/err" || rc=$?
[ $rc = 78 ] && grep -q "secret_access_key: secrets are never written in brid.conf" "$TMPD/err" ||
  fail "an inline secret: exit $rc: $(cat "$TMPD/err")"
# ...and so is a secret file every user may read, and settings of a root brid does not have
cp "$TMPD/secret" "$TMPD/open-secret" && chmod 644 "$TMPD/open-secret"
sed "s|$TMPD/secret|$TMPD/open-secret|" "$TMPD/brid.conf" >"$TMPD/bad.conf"
rc=0; "$BRID" --config "$TMPD/bad.conf" --check-config >/dev/null 2>"$TMPD/err" || rc=$?
[ $rc = 78 ] && grep -q "open-secret is readable by every user (mode 0644)" "$TMPD/err" ||
  fail "a world-readable secret: exit $rc: $(cat "$TMPD/err")"
# the secret as a systemd credential: $CREDENTIALS_DIRECTORY/NAME (as systemd's
# LoadCredential= gives it); never both forms, a name is one path component,
# and without $CREDENTIALS_DIRECTORY the key is refused, naming it
mkdir -p "$TMPD/creds" && cp "$TMPD/secret" "$TMPD/creds/s3" && chmod 0400 "$TMPD/creds/s3"
sed "s|^secret_access_key_file = .*|secret_access_key_credential = s3|" "$TMPD/brid.conf" >"$TMPD/cred.conf"
CREDENTIALS_DIRECTORY=$TMPD/creds "$BRID" --config "$TMPD/cred.conf" --check-config >"$TMPD/cred.json" 2>"$TMPD/err" ||
  fail "a secret as a credential: $(cat "$TMPD/err")"
[ "$(jget 'd["root_settings"][0]["secret_access_key_credential"]' <"$TMPD/cred.json")" = s3 ] &&
  ! grep -q "$AWS_SECRET_ACCESS_KEY" "$TMPD/cred.json" || fail "--check-config of a credential: $(cat "$TMPD/cred.json")"
rc=0; env -u CREDENTIALS_DIRECTORY "$BRID" --config "$TMPD/cred.conf" --check-config >/dev/null 2>"$TMPD/err" || rc=$?
[ $rc = 78 ] && grep -q 'secret_access_key_credential = s3: $CREDENTIALS_DIRECTORY is not set' "$TMPD/err" ||
  fail "a credential without \$CREDENTIALS_DIRECTORY: exit $rc: $(cat "$TMPD/err")"
sed "s|^secret_access_key_credential = s3|secret_access_key_credential = ../secret|" "$TMPD/cred.conf" >"$TMPD/bad.conf"
rc=0; CREDENTIALS_DIRECTORY=$TMPD/creds "$BRID" --config "$TMPD/bad.conf" --check-config >/dev/null 2>"$TMPD/err" || rc=$?
[ $rc = 78 ] && grep -q '"../secret" is not a credential name' "$TMPD/err" || fail "a credential path: exit $rc: $(cat "$TMPD/err")"
{ cat "$TMPD/cred.conf"; echo "secret_access_key_file = $TMPD/secret"; } >"$TMPD/bad.conf"
rc=0; CREDENTIALS_DIRECTORY=$TMPD/creds "$BRID" --config "$TMPD/bad.conf" --check-config >/dev/null 2>"$TMPD/err" || rc=$?
[ $rc = 78 ] && grep -q "secret_access_key_file or secret_access_key_credential, not both" "$TMPD/err" ||
  fail "a secret in both forms: exit $rc: $(cat "$TMPD/err")"
sed "s|^root = .*|root = $TMPD|" "$TMPD/brid.conf" >"$TMPD/bad.conf"
rc=0; "$BRID" --config "$TMPD/bad.conf" --check-config >/dev/null 2>"$TMPD/err" || rc=$?
[ $rc = 78 ] && grep -q "\[root $P\]: not a configured root" "$TMPD/err" ||
  fail "settings of an unknown root: exit $rc: $(cat "$TMPD/err")"

BRID_PREFIX="env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_ENDPOINT_URL -u AWS_REGION" \
  brid_start s3 --config "$TMPD/brid.conf" --debounce 1s

# 1. found at start-up, compacted after the debounce; LanceDB reads the same
wait_until 30 at_least 1 compact succeeded "$T" || fail "no compaction of the S3 table found at start-up"
J=$(jobs_of compact succeeded "$T" | cut -d' ' -f1)
ctl job "$J" --json >"$TMPD/j.json"
[ "$(jget 'd["result"]["fragments_before"], d["result"]["fragments_after"], d["result"]["strategy_used"]' \
  <"$TMPD/j.json")" = "(3, 1, 'copy')" ] || fail "start-up job: $(jget 'd["result"]' <"$TMPD/j.json")"
lance_read "$T" --json >"$TMPD/after1.json"
same "$TMPD/before.json" "$TMPD/after1.json" || fail "LanceDB reads other values after brid's compaction"
echo "ok start-up table compacted"

# 2. an append: polled, compacted again
lance_ops "$T" append 3 --times 2 >/dev/null
lance_read "$T" --json >"$TMPD/before2.json"
wait_until 30 at_least 2 compact succeeded "$T" || fail "appends on S3 did not trigger a compaction"
lance_read "$T" --json >"$TMPD/after2.json"
same "$TMPD/before2.json" "$TMPD/after2.json" || fail "LanceDB reads other values after the second compaction"
# the appended fragments merge; the first compaction's fragment (32 MB of
# payload, which copy counts) is larger than they are together and stays
# (the size tiers, plan.h); a poll that saw only the first append leaves it
# alone, and the compaction after the second merges both
wait_until 30 table_shape_is "(2, True, False)" "$T" ||
  fail "the table is not two polled fragments after brid's compactions: $(ctl tables --json)"
[ "$(last_held_back "$T")" = "larger than the newer fragments" ] ||
  fail "the last compaction did not hold the large fragment back: $(last_held_back "$T")"
echo "ok appends polled and compacted"

# 3. a table created after start
make_tables "$P" --tables blobnest --small --blob-batches 2:mixed >/dev/null
L=$P/blobnest.lance
lance_read "$L" --json >"$TMPD/late_before.json"
wait_until 30 at_least 1 compact succeeded "$L" || fail "the table created after start was not found and compacted"
lance_read "$L" --json >"$TMPD/late_after.json"
same "$TMPD/late_before.json" "$TMPD/late_after.json" || fail "LanceDB reads other values in the late table"
echo "ok late table found and compacted"

# 4. cleanup, verify and materialize jobs on the S3 table, through brid
ctl cleanup "$T" --older-than 0 --grace 0 --wait --json >"$TMPD/clean.json" 2>"$TMPD/err" ||
  fail "cleanup through brid: $(cat "$TMPD/err")"
[ "$(jget 'd["result"]["files"]' <"$TMPD/clean.json")" -gt 0 ] || fail "cleanup deleted nothing: $(cat "$TMPD/clean.json")"
ctl verify "$T" --wait >"$TMPD/verify.out" 2>&1 || fail "verify through brid: $(cat "$TMPD/verify.out")"
ctl materialize "$T" --wait >"$TMPD/mat.out" 2>&1 || fail "materialize through brid: $(cat "$TMPD/mat.out")"
[ "$(count_jobs cleanup succeeded "$T")" = 1 ] && [ "$(count_jobs verify succeeded "$T")" = 1 ] &&
  [ "$(count_jobs materialize succeeded "$T")" = 1 ] ||
  fail "the cleanup and verify did not run as brid's jobs: $(ctl jobs --table "$T")"
lance_read "$T" --json >"$TMPD/after3.json"
same "$TMPD/before2.json" "$TMPD/after3.json" || fail "LanceDB reads other values after cleanup and verify"
echo "ok cleanup, verify and materialize as brid's jobs"

# 5. the root's S3 requests and polls
R="root=\"$P\""
lists=$(metric "brid_storage_requests_total\{$R,kind=\"list\",status=\"2xx\"\}")
gets=$(metric "brid_storage_requests_total\{$R,kind=\"get\",status=\"2xx\"\}")
copies=$(ctl metrics | grep -E "^brid_storage_requests_total\{$R,kind=\"(copy|upload_part_copy)\",status=\"2xx\"\}" |
  awk '{s += $2} END {print s + 0}')
polls=$(metric "brid_polls_total\{$R\}")
bytes=$(metric "brid_storage_bytes_read_total\{$R\}")
[ "${lists:-0}" -ge 4 ] && [ "${gets:-0}" -ge 2 ] && [ "$copies" -ge 1 ] && [ "${polls:-0}" -ge 3 ] &&
  [ "${bytes:-0}" -gt 0 ] || fail "metrics: list $lists, get $gets, copies $copies, polls $polls, bytes in $bytes"
ctl metrics --json | jget '[f["name"] for f in d["families"] if f["name"].startswith("brid_storage")]' | grep -q requests_total ||
  fail "metrics --json has no storage families"
echo "ok metrics: $lists LIST, $gets GET, $copies server-side copies, $polls polls"
brid_stop || fail "brid did not stop cleanly"

# 6. an S3 root that does not answer holds neither start-up nor the other
#    roots; its polls fail, counted, the error logged once
mkdir -p "$TMPD/local"
cat >"$TMPD/down.conf" <<EOF
[daemon]
root = $TMPD/local
root = s3://$BRI_S3_BUCKET/unreachable
[root s3://$BRI_S3_BUCKET/unreachable]
endpoint = http://127.0.0.1:9
access_key_id = x
secret_access_key_file = $TMPD/secret
poll_interval = 1s
EOF
BRID_PREFIX="env AWS_MAX_ATTEMPTS=1" brid_start down --config "$TMPD/down.conf"
failed_twice() { [ "$(metric "brid_poll_failures_total\\{root=\"s3://$BRI_S3_BUCKET/unreachable\"\\}")" -ge 2 ]; }
wait_until 15 failed_twice || fail "the polls of an unreachable root are not counted as failures"
[ "$(grep -c "root s3://$BRI_S3_BUCKET/unreachable: unreachable: " "$BRID_LOG")" = 1 ] ||
  fail "the unreachable root's error is not logged exactly once: $(grep unreachable "$BRID_LOG")"
ctl status >/dev/null || fail "brid does not answer beside an unreachable root"
brid_stop || fail "brid did not stop cleanly"
echo "ok an unreachable root: polls fail, counted, logged once"
pass
