# What the object-store interop tests (test_s3*.sh, test_azure*.sh) share,
# sourced after lib.sh: the same checks on S3 and Azure, told apart only by
# the environment a test's through_proxy and few_tries set.
#
#   jfield PATH < JSON          one field of a JSON document ("storage.retries")
#   check_bri_moves_nothing TABLE BEFORE
#                               compact --strategy bri commits without a payload
#                               byte copied by brictl or the service, and brictl
#                               scan then equals BEFORE (LanceDB's read from before)
#   check_link_refused TABLE    compact --strategy link fails saying there are no
#                               links, and the table keeps its version
#   check_copy_by_server REPORT a copy compaction's report (--json): more than 10 MB
#                               of payload, all of it copied by the service, and
#                               little more than the data files through brictl
#   fault_proxy_start HOST:PORT tests/s3/fault_proxy.py in front of a server, for
#                               the rest of the test: sets PROXY; rules JSON sets
#                               its rules
#   all_versions_read TABLE     every version of TABLE reads in LanceDB
#   faults_commit_refused TABLE BEFORE STATUS NAME
#                               with the proxy refusing every manifest write (the
#                               caller's rules): a compaction through it fails
#                               naming STATUS and NAME (grep patterns), the table
#                               keeps its version, LanceDB reads BEFORE again, and
#                               no file the attempt wrote is left
#   faults_cleanup_refused TABLE STATUS
#                               with the proxy refusing every delete: cleanup fails
#                               naming STATUS and the old manifest it could not
#                               delete, and every version left reads
#   faults_cleanup_dropped TABLE BEFORE
#                               with the proxy dropping deletes now and then:
#                               cleanup completes, LanceDB reads BEFORE
# IGN (json_eq's --ignore list) is the calling test's.

jfield() { node -e 'let d=JSON.parse(require("fs").readFileSync(0,"utf8"));for(const k of process.argv[1].split("."))d=d[k];console.log(d)' "$1"; }

check_bri_moves_nothing() {
  local t=$1
  "$BRICTL" compact "$t" --strategy bri --json >"$TMPD/bri.json" || fail "compact bri $t failed"
  [ "$(jfield version <"$TMPD/bri.json")" != 0 ] || fail "compact bri $t committed nothing"
  [ "$(jfield payload_bytes_copied <"$TMPD/bri.json")" = 0 ] || fail "bri copied payload in $t"
  [ "$(jfield storage.bytes_copied_server <"$TMPD/bri.json")" = 0 ] || fail "bri had the service copy payload in $t"
  "$BRICTL" scan "$t" --json >"$TMPD/scan.json"
  json_eq "$2" "$TMPD/scan.json" --ignore "$IGN,version,fragments" ||
    fail "after compact bri, brictl scan of $t differs from LanceDB's read from before"
}

check_link_refused() {
  local t=$1 v
  v=$("$BRICTL" inspect "$t" --json | jfield version)
  if "$BRICTL" compact "$t" --strategy link >/dev/null 2>"$TMPD/link.err"; then
    fail "compact --strategy link succeeded on $t"
  fi
  grep -q "the store has no links" "$TMPD/link.err" || fail "the link refusal does not say why: $(cat "$TMPD/link.err")"
  [ "$("$BRICTL" inspect "$t" --json | jfield version)" = "$v" ] || fail "a refused link compaction changed $t"
}

check_copy_by_server() {
  local r=$1 payload through server data
  payload=$(jfield payload_bytes_copied <"$r")
  through=$(( $(jfield storage.bytes_read <"$r") + $(jfield storage.bytes_written <"$r") ))
  server=$(jfield storage.bytes_copied_server <"$r")
  data=$(jfield data_bytes_written <"$r")
  [ "$payload" -gt 10000000 ] || fail "copy moved only $payload payload bytes"
  [ "$server" -ge "$payload" ] || fail "the service copied $server bytes of $payload payload bytes"
  [ "$through" -lt $((4 * data + 1000000)) ] || fail "$through bytes went through brictl for $data bytes of data files"
}

# The proxy lives until the test's shell exits (its stdin is a pipe the shell holds).
fault_proxy_start() {
  mkfifo "$TMPD/proxy.in"
  python3 "$REPO/tests/s3/fault_proxy.py" "$1" <"$TMPD/proxy.in" >"$TMPD/proxy.port" &
  _proxy=$!
  exec 7>"$TMPD/proxy.in"
  trap 'exec 7>&-; kill $_proxy 2>/dev/null || true; _interop_cleanup' EXIT
  for _ in $(seq 50); do grep -q port "$TMPD/proxy.port" 2>/dev/null && break; sleep 0.1; done
  PROXY=http://127.0.0.1:$(awk '{print $2}' "$TMPD/proxy.port")
}
rules() { curl -sf -X PUT --data-binary "$1" "$PROXY/__fault__" >/dev/null || fail "cannot set the proxy's rules"; }

all_versions_read() {
  node --input-type=module - "$1" <<'EOF' || fail "a committed version of $1 does not read in LanceDB"
import { openTable } from "./tests/interop/lance_common.mjs";
const { tbl } = await openTable(process.argv[2]);
for (const v of await tbl.listVersions()) { await tbl.checkout(v.version); await tbl.countRows(); }
EOF
}

faults_commit_refused() {
  local t=$1 before=$2 v0
  v0=$("$BRICTL" inspect "$t" --json | jfield version)
  if (cd "$REPO" && few_tries through_proxy "$BRICTL" compact "$t" --strategy copy) >/dev/null 2>"$TMPD/refused.err"; then
    fail "compaction succeeded although no manifest could be written"
  fi
  grep -q "$3" "$TMPD/refused.err" || fail "the failure does not name the status: $(cat "$TMPD/refused.err")"
  grep -q "$4" "$TMPD/refused.err" || fail "the failure does not name the manifest: $(cat "$TMPD/refused.err")"
  rules '[]'
  [ "$("$BRICTL" inspect "$t" --json | jfield version)" = "$v0" ] || fail "a failed compaction changed the version"
  lance_read "$t" --json >"$TMPD/refused.after"
  json_eq "$before" "$TMPD/refused.after" --ignore "$IGN" || fail "after a failed compaction, LanceDB reads other values"
  # every version kept: only files no version reaches would go, and there must be none
  "$BRICTL" cleanup "$t" --older-than 1000d --grace 0 --dry-run >"$TMPD/orphans" 2>&1
  grep -q "would delete 0 files" "$TMPD/orphans" || fail "the failed compaction left files behind: $(cat "$TMPD/orphans")"
}

faults_cleanup_refused() {
  local t=$1
  if (cd "$REPO" && few_tries through_proxy "$BRICTL" cleanup "$t" --older-than 0 --grace 0) >/dev/null 2>"$TMPD/clean.err"; then
    fail "cleanup succeeded although nothing could be deleted"
  fi
  grep -q "$2" "$TMPD/clean.err" || fail "the cleanup failure does not name the status: $(cat "$TMPD/clean.err")"
  # the first deletes are the old manifests (they go before their files); the error names one
  grep -q "cleanup did not delete $t/_versions/[0-9]*.manifest" "$TMPD/clean.err" ||
    fail "the cleanup failure does not name the old manifest it could not delete: $(cat "$TMPD/clean.err")"
  all_versions_read "$t"
}

faults_cleanup_dropped() {
  local t=$1
  (cd "$REPO" && through_proxy "$BRICTL" cleanup "$t" --older-than 0 --grace 0) >"$TMPD/clean.out" 2>&1 ||
    fail "cleanup under dropped connections failed: $(cat "$TMPD/clean.out")"
  all_versions_read "$t"
  lance_read "$t" --json >"$TMPD/clean.after"
  json_eq "$2" "$TMPD/clean.after" --ignore "$IGN" || fail "after cleanup, LanceDB reads other values"
}
