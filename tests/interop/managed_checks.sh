# What the Managed-blob interop tests (test_managed_switch.sh locally,
# test_s3_managed.sh on the test radosgw) share, sourced after lib.sh: the
# same checks on any store. A test sets OBJECTS, the command that lists a
# table's files as "PATH SIZE" lines (paths relative to the table).
#
#   new_bytes TABLE BEFORE     bytes of the files TABLE holds now that the listing in
#                              file BEFORE does not name
#   dir_bytes TABLE DIR        bytes of the files below DIR/ of TABLE
#   report FILE KEY            a field of brictl's JSON report (dotted)
#   check_switch TABLE         compact --strategy managed on a plain Blob v2 table pylance
#                              14 wrote: one UpdateConfig version (as pylance reads its
#                              transaction: lance.blob.managed = true), then the
#                              compaction; no payload byte copied (by brictl or the
#                              server); pylance reads the same values; pylance's
#                              cleanup_old_versions, then brid's cleanup, leave it
#                              reading the same; verify --all-versions
#   check_lance_compacts TABLE a switched table: pylance appends, then its own
#                              compact_files() writes no payload (no new _blobs/ object
#                              or sidecar) and under 2% of the table's bytes in all, and
#                              reads the same values
#   check_materialize TABLE    compact --strategy bri, then materialize --managed: no
#                              payload byte copied, no BRI left, pylance reads the values
#                              of before
#   check_reclaim TABLE        a Managed table pylance wrote with 80% of its rows deleted
#                              (lance_py.py's managed80): brid's compaction and cleanup
#                              leave _blobs/ at most 1.3 times the live payload (the sizes
#                              of the live rows' Managed values) and pylance reads the same
#                              values; prints the ratio

new_bytes() {
  $OBJECTS "$1" | awk 'NR == FNR { seen[$1] = 1; next } !($1 in seen) { n += $2 } END { print n + 0 }' "$2" -
}
dir_bytes() { $OBJECTS "$1" | awk -v d="$2/" 'index($1, d) == 1 { n += $2 } END { print n + 0 }'; }
report() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): d = d[k]
print(d)' "$@"; }

check_switch() {
  local t=$1 want sv ops
  want=$(lance14_rows "$t")
  "$BRICTL" compact "$t" --strategy managed --json >"$TMPD/sw.json" || fail "compact --strategy managed $t failed"
  [ "$(report "$TMPD/sw.json" strategy_used)" = managed ] || fail "$t: strategy_used $(report "$TMPD/sw.json" strategy_used)"
  sv=$(report "$TMPD/sw.json" managed_switch.version)
  [ "$sv" -gt 0 ] || fail "$t: no switch committed: $(cat "$TMPD/sw.json")"
  [ "$(report "$TMPD/sw.json" read_version)" = "$sv" ] || fail "$t: the compaction did not plan on the switch"
  [ "$(report "$TMPD/sw.json" payload_bytes_copied)" = 0 ] || fail "$t: the switch copied payload bytes"
  [ "$(report "$TMPD/sw.json" storage.bytes_copied_server)" = 0 ] || fail "$t: the server copied payload"
  [ "$(report "$TMPD/sw.json" managed_adopted)" -gt 0 ] || fail "$t: nothing adopted"
  [ "$(lance14_rows "$t")" = "$want" ] || fail "$t: pylance reads other values after the switch"
  lance_py operations "$t" >"$TMPD/ops.json"
  ops=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); v=sys.argv[2]
print(d["operations"][v], json.dumps(d["schema_metadata_updates"].get(v), sort_keys=True))' "$TMPD/ops.json" "$sv")
  [ "$ops" = 'UpdateConfig {"replace": false, "updates": {"lance.blob.managed": "true"}}' ] ||
    fail "$t: pylance reads version $sv's transaction as: $ops"
  lance_py cleanup "$t" | grep -q '"bytesRemoved"' || fail "$t: pylance's cleanup_old_versions failed"
  [ "$(lance14_rows "$t")" = "$want" ] || fail "$t: pylance reads other values after its own cleanup"
  "$BRICTL" cleanup "$t" --older-than 0s --grace 0s >/dev/null || fail "$t: brictl cleanup failed"
  [ "$(lance14_rows "$t")" = "$want" ] || fail "$t: pylance reads other values after brid's cleanup"
  "$BRICTL" verify "$t" --all-versions >"$TMPD/verify" || fail "$t: verify: $(tail -3 "$TMPD/verify")"
  echo "ok switch $t: version $sv, $(report "$TMPD/sw.json" managed_adopted) values adopted, 0 payload bytes," \
    "both cleanups keep it"
}

check_lance_compacts() {
  local t=$1 want total pyb
  lance_py append "$t" | grep -q '"managed": true' || fail "$t: pylance did not append Managed values"
  want=$(lance14_rows "$t")
  $OBJECTS "$t" >"$TMPD/objects.before"
  lance_py compact "$t" | grep -q '"fragmentsRemoved": [1-9]' || fail "$t: pylance compacted nothing"
  # payload: a new _blobs/ object or sidecar (data/<stem>/...)
  $OBJECTS "$t" | awk 'NR == FNR { seen[$1] = 1; next } !($1 in seen) { print $1 }' "$TMPD/objects.before" - |
    { grep -E '^_blobs/|^data/[^/]+/' || true; } >"$TMPD/payload.new"
  [ ! -s "$TMPD/payload.new" ] || fail "$t: pylance's compact_files() wrote payload: $(head -3 "$TMPD/payload.new")"
  total=$($OBJECTS "$t" | awk '{ n += $2 } END { print n }')
  pyb=$(new_bytes "$t" "$TMPD/objects.before")
  [ $((pyb * 50)) -lt "$total" ] || fail "$t: pylance's compact_files() wrote $pyb bytes of a $total-byte table"
  [ "$(lance14_rows "$t")" = "$want" ] || fail "$t: pylance reads other values after its own compaction"
  echo "ok $t: after two appends pylance's compact_files() wrote $pyb of $total bytes, no payload"
}

check_materialize() {
  local t=$1 want
  want=$(lance14_rows "$t")
  "$BRICTL" compact "$t" --strategy bri >/dev/null || fail "compact --strategy bri $t failed"
  "$BRICTL" materialize "$t" --managed --json >"$TMPD/mat.json" || fail "materialize --managed $t failed"
  [ "$(report "$TMPD/mat.json" managed_switch.version)" -gt 0 ] || fail "$t: materialize did not switch"
  [ "$(report "$TMPD/mat.json" bri_files_left)" = 0 ] || fail "$t: BRI files left"
  [ "$(report "$TMPD/mat.json" values_adopted)" -gt 0 ] || fail "$t: no value became Managed"
  for k in bytes_copied bytes_linked links copies sidecars; do
    [ "$(report "$TMPD/mat.json" $k)" = 0 ] || fail "$t: materialize --managed $k = $(report "$TMPD/mat.json" $k)"
  done
  [ "$(lance14_rows "$t")" = "$want" ] || fail "$t: pylance reads other values after materialize --managed"
  "$BRICTL" cleanup "$t" --older-than 0s --grace 0s >/dev/null || fail "$t: brictl cleanup failed"
  [ "$(lance14_rows "$t")" = "$want" ] || fail "$t: pylance reads other values after brid's cleanup"
  echo "ok materialize --managed $t: $(report "$TMPD/mat.json" values_adopted) values, 0 payload bytes"
}

check_reclaim() {
  local t=$1 want live blobs
  want=$(lance14_rows "$t")
  live=$(lance_py read --reader lance14 "$t" >/dev/null && "$LANCE_PY" - "$t" <<'PY'
import sys
sys.path.insert(0, __import__("os").environ["INTEROP_DIR"])
import lance, lance_py
t = lance.dataset(sys.argv[1], storage_options=lance_py.storage_options(sys.argv[1])).to_table(columns=["blob"])
print(sum(b["size"] for b in t["blob"].to_pylist() if b and b["kind"] in (4, 5)))
PY
)
  [ "$live" -gt 0 ] || fail "$t: no live Managed payload"
  "$BRICTL" compact "$t" --json >"$TMPD/rc.json" || fail "compact $t failed"
  [ "$(report "$TMPD/rc.json" managed_repacked)" -gt 0 ] || fail "$t: nothing repacked: $(cat "$TMPD/rc.json")"
  "$BRICTL" cleanup "$t" --older-than 0s --grace 0s >/dev/null || fail "$t: brictl cleanup failed"
  blobs=$(dir_bytes "$t" _blobs)
  [ $((blobs * 10)) -le $((live * 13)) ] || fail "$t: _blobs/ holds $blobs bytes for $live bytes of live payload"
  [ "$(lance14_rows "$t")" = "$want" ] || fail "$t: pylance reads other values after the repack and cleanup"
  echo "ok reclaim $t: _blobs/ $blobs bytes for $live live ($(echo "scale=2; $blobs / $live" | bc)x)"
}
