#!/usr/bin/env bash
# DOCS: the reference documentation cannot drift from the code (OPS 11).
#  - every JSON-RPC method brid dispatches (svc_request.c's method table) has
#    a section in docs/api.md, and every method documented there is one a
#    running brid accepts;
#  - every metric a running brid exports is in docs/metrics.md, and every
#    metric documented there is exported;
#  - every configuration key brid knows (brid --check-config) is in
#    brid.conf(5), and every key the man page lists is one brid knows;
#  - every brid flag (brid --help) is in brid(8);
#  - every brictl command and option (brictl help) is in brictl(1) and in
#    the installed bash completion, and every option brictl(1) names exists;
#  - the man pages format without warnings; make install puts them and the
#    completion in place;
#  - README.md shows how to run brid and names the daemon commands, and every
#    file it cites exists.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
SRC=${BRI_SOURCE_DIR:-$REPO}
MAN=$SRC/docs/man
for f in brictl.1 brid.8 brid.conf.5; do [ -f "$MAN/$f" ] || fail "no man page docs/man/$f"; done

# words_missing FILE WORDS...: prints the words FILE does not contain (fixed strings)
words_missing() {
  local file=$1 w; shift
  for w in "$@"; do grep -qF -- "$w" "$file" || echo "$w"; done
}

# ---------------------------------------------------------------- methods
methods=$(grep -oE '^\s*\{"[a-z.]+", SVC_M_' "$SRC/daemon/brid/1_leaves/svc_request.c" | grep -oE '"[a-z.]+"' | tr -d '"')
[ "$(wc -w <<<"$methods")" -ge 10 ] || fail "could not read the method table of svc_request.c (found: $methods)"
documented=$(grep -oE '^### [a-z.]+$' "$SRC/docs/api.md" | cut -c5-)
missing=$(comm -23 <(sort <<<"$methods") <(sort <<<"$documented"))
[ -z "$missing" ] || fail "methods brid dispatches but docs/api.md does not document: $missing"

mkdir -p "$TMPD/root"
"$BRICTL" gen "$TMPD/root/t.lance" --rows 10 >/dev/null
brid_start docs --root "$TMPD/root"
# a method brid has refuses an unknown parameter (-32602); one it has not is -32601
reqs=()
for m in $documented; do reqs+=('{"jsonrpc":"2.0","id":"'"$m"'","method":"'"$m"'","params":{"zz_not_a_param":1}}'); done
bad=$(rpc_raw "${reqs[@]}" | python3 -c 'import json,sys
for l in sys.stdin:
    r = json.loads(l)
    if r["error"]["code"] != -32602: print(r["id"], r["error"]["code"])')
[ -z "$bad" ] || fail "docs/api.md documents methods brid does not take: $bad"
echo "ok $(wc -w <<<"$methods") methods documented"

# ---------------------------------------------------------------- metrics
ctl metrics >"$TMPD/metrics.txt"
exported=$(sed -n 's/^# TYPE \([a-z_]*\) .*/\1/p' "$TMPD/metrics.txt" | sort -u)
[ "$(wc -w <<<"$exported")" -ge 20 ] || fail "brid exported too few metric families: $exported"
listed=$(grep -oE '^\| `brid_[a-z_]+`' "$SRC/docs/metrics.md" | tr -d '|` ' | sort -u)
missing=$(comm -23 <(echo "$exported") <(echo "$listed"))
[ -z "$missing" ] || fail "metrics brid exports but docs/metrics.md does not list: $missing"
extra=$(comm -13 <(echo "$exported") <(echo "$listed"))
[ -z "$extra" ] || fail "docs/metrics.md lists metrics brid does not export: $extra"
brid_stop
echo "ok $(wc -w <<<"$exported") metrics documented"

# ---------------------------------------------------------------- configuration
# an S3 and an Azure root too (their settings' keys; --check-config asks nothing of the network)
printf '[daemon]\nroot = %s\nroot = s3://bucket/docs\nroot = az://container/docs\n' "$TMPD/root" >"$TMPD/min.conf"
"$BRID" --config "$TMPD/min.conf" --check-config >"$TMPD/check.json" 2>/dev/null || fail "brid --check-config failed"
python3 - "$TMPD/check.json" "$MAN/brid.conf.5" <<'EOF' || fail "brid.conf(5) and brid's configuration keys differ"
import json, re, sys
c = json.load(open(sys.argv[1]))
keys = {"daemon": set(c) - {"file", "roots", "defaults", "tables", "root_settings"} | {"root"},
        "defaults": set(c["defaults"]), "root": set().union(*c["root_settings"]) - {"root"}}
man, sec, prev = {"daemon": set(), "defaults": set(), "root": set()}, None, ""
for line in open(sys.argv[2]):
    m = re.match(r"^\.SH \[(\w+)[\] ]", line)
    if line.startswith(".SH"): sec = m.group(1) if m and m.group(1) in man else None
    m = re.match(r"^\.B ([a-z_]+)$", line)
    if m and sec and prev == ".TP": man[sec].add(m.group(1))  # a key is the tag of a .TP entry
    prev = line.strip()
bad = False
for s in man:
    if keys[s] - man[s]: print("[%s] keys missing from brid.conf(5):" % s, sorted(keys[s] - man[s])); bad = True
    if man[s] - keys[s]: print("[%s] keys in brid.conf(5) that brid does not know:" % s, sorted(man[s] - keys[s])); bad = True
sys.exit(1 if bad else 0)
EOF
flags=$("$BRID" --help | grep -oE '^\s+--[a-z-]+' | tr -d ' ')
missing=$(words_missing "$MAN/brid.8" $(sed 's/-/\\-/g' <<<"$flags"))
[ -z "$missing" ] || fail "brid flags missing from brid(8): $missing"
echo "ok configuration keys and brid flags documented"

# ---------------------------------------------------------------- brictl
"$BRICTL" --help >"$TMPD/help.txt"
cmds=$(awk '/^(table commands|brid commands|help)/{on=1; next} /^$/{on=0} on && /^  [a-z]/{print $1}' "$TMPD/help.txt")
[ "$(wc -w <<<"$cmds")" -ge 18 ] || fail "brictl --help lists too few commands: $cmds"
opts=$(grep -oE '^  (-[a-zA-Z], )?--[a-z-]+' "$TMPD/help.txt" | grep -oE -- '--[a-z-]+')
rm -rf "$TMPD/inst"
(unset MAKEFLAGS MAKELEVEL; make -s -C "$SRC" install DESTDIR="$TMPD/inst" PREFIX=/usr \
  $([[ $BRI_BUILD == *-san ]] && echo SANITIZE=1) >"$TMPD/install.log" 2>&1) ||
  fail "make install failed: $(tail -5 "$TMPD/install.log")"
COMP=$TMPD/inst/usr/share/bash-completion/completions/brictl
for f in man1/brictl.1 man8/brid.8 man5/brid.conf.5; do
  cmp -s "$TMPD/inst/usr/share/man/$f" "$MAN/${f#*/}" || fail "make install did not install $f"
done
[ -s "$COMP" ] || fail "make install did not install the bash completion"
for c in $cmds; do
  grep -qE "^\.(B|BI|BR) $c( |$)" "$MAN/brictl.1" || fail "brictl(1) does not describe command $c"
  copts=$("$BRICTL" help "$c" | grep -oE '^  (-[a-zA-Z], )?--[a-z-]+' | grep -oE -- '--[a-z-]+')
  opts="$opts $copts"
  missing=$(words_missing "$MAN/brictl.1" $(sed 's/-/\\-/g' <<<"$copts"))
  [ -z "$missing" ] || fail "brictl(1) does not name these options of $c: $missing"
  line=$(grep -E "^    $c\) opts=" "$COMP") || fail "the completion has no entry for $c"
  for o in $copts; do
    [[ " ${line#*opts=\"} " == *" $o "* || " ${line#*opts=\"}" == *" $o\""* ]] ||
      fail "the completion does not offer $o for $c"
  done
done
known=$(tr ' ' '\n' <<<"$opts" | sort -u)
named=$(grep -oE '\\-\\-[a-z]+(\\-[a-z]+)*' "$MAN/brictl.1" | sed 's/\\-/-/g' | sort -u)
extra=$(comm -13 <(echo "$known") <(echo "$named"))
[ -z "$extra" ] || fail "brictl(1) names options brictl does not have: $extra"
echo "ok $(wc -w <<<"$cmds") brictl commands and $(wc -l <<<"$known") options in brictl(1) and the completion"

# ---------------------------------------------------------------- man pages format
if command -v groff >/dev/null; then
  for f in "$MAN"/*; do
    w=$(groff -man -Tutf8 -ww -z "$f" 2>&1) || fail "groff failed on $f: $w"
    [ -z "$w" ] || fail "groff warns on $(basename "$f"): $w"
  done
  echo "ok man pages format cleanly"
fi

# ---------------------------------------------------------------- README
R=$SRC/README.md
grep -qE '^brid --(root|config)' "$R" || fail "README.md does not show how to run brid"
missing=$(for c in status tables jobs job cancel pause resume reload metrics; do
  grep -qE "brictl ($c|.*\| $c)( |$)" "$R" || echo "$c"; done)
[ -z "$missing" ] || fail "README.md does not name these daemon commands: $missing"
cited=$( (grep -oE '\]\([^)#]+\)' "$R" | sed 's/^](//; s/)$//' | grep -v '://'
  grep -oE '`[a-z][a-zA-Z0-9_./-]*/[a-zA-Z0-9_.-]+`' "$R" | tr -d '`' | grep -v '^build/') | sort -u) # build/: what make writes
for p in $cited; do [ -e "$SRC/$p" ] || fail "README.md cites $p, which does not exist"; done
echo "ok README.md: brid, its commands, $(wc -w <<<"$cited") cited files exist"
pass
