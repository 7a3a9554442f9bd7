#!/usr/bin/env bash
# VERSION HINT interop (MANY): on a local table LanceDB does not trust
# _versions/latest_version_hint.json, which is why brid leaves it as Lance
# wrote it (docs/format/table.md 3): after brid's commit it names the
# version before, and a power loss may leave Lance's own stale or empty.
# For each hint a table may hold (brid's compaction left it stale, empty,
# cut short, garbage, naming a version that does not exist, missing),
# LanceDB must read the latest version of a table brid compacted exactly as
# it reads it with a hint that names that version, and its next write (a
# delete) must commit the version after the latest.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_oracle

t=$TMPD/plain.lance
make_tables "$TMPD" --tables plain --fragments 4 --rows 50 --plain-delete "" >/dev/null
hint=$t/_versions/latest_version_hint.json
before=$(cat "$hint")
"$BRICTL" compact "$t" --strategy link >/dev/null
latest=$("$BRICTL" inspect "$t" --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).version))')
[ "$(cat "$hint")" = "$before" ] || fail "brid replaced the local hint $before with $(cat "$hint")"
[ "$before" = "{\"version\":$((latest - 1))}" ] || fail "LanceDB's hint $before does not name version $((latest - 1))"
lance_read "$t" --json >"$TMPD/want.json"
printf '{"version":%d}' "$latest" >"$hint"
lance_read "$t" --json >"$TMPD/named.json"
json_eq "$TMPD/want.json" "$TMPD/named.json" --ignore ms,table || fail "LanceDB reads the table differently with a hint that names the latest version"
cp -a "$t" "$TMPD/pristine.lance"

check() { # check NAME: LanceDB reads and writes the table whose hint NAME left
  lance_read "$t" --json >"$TMPD/got.json"
  json_eq "$TMPD/want.json" "$TMPD/got.json" --ignore ms,table ||
    fail "$1 hint: LanceDB reads the table differently"
  lance_ops "$t" delete "id = 0" >"$TMPD/del.json" 2>"$TMPD/err" || fail "$1 hint: LanceDB's delete() failed: $(cat "$TMPD/err")"
  local v; v=$(lance_ops "$t" info | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).version))')
  [ "$v" = $((latest + 1)) ] || fail "$1 hint: LanceDB's delete() committed version $v, expected $((latest + 1))"
  rm -rf "$t" && cp -a "$TMPD/pristine.lance" "$t"
  echo "ok $1 hint"
}
printf '{"version":%d}' $((latest - 1)) >"$hint"; check "brid's (the version before)"
printf '{"version":%d}' $((latest - 2)) >"$hint"; check stale
: >"$hint"; check empty
printf '{"vers' >"$hint"; check "cut short"
printf 'garbage\0\0\0' >"$hint"; check garbage
printf '{"version":%d}' $((latest + 5)) >"$hint"; check "too new"
rm "$hint"; check missing
pass
