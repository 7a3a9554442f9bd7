#!/usr/bin/env bash
# DISCOVERY under a local root (brid.conf(5) discovery_depth): which
# directories brid takes for tables, at start and later.
#  - at start, with the default depth (3): tables 1, 2 and 3 levels down are
#    watched; one 4 levels down is not, nor one inside a hidden directory,
#    a hidden table directory, one behind a symbolic link to a directory
#    outside the root, or the inside of a table (a table nested in another);
#  - a table made later in directories made later (3 levels down) is
#    watched within 5 s (inotify on the directories walked), one made 4
#    levels down is not, even after sweeps (sweep_interval = 1s: each
#    walks the roots again);
#  - a reload with discovery_depth = 4 watches both tables 4 levels down,
#    and still none of the others.
# Each table is a brictl gen table; brid only looks, so nothing is compacted
# (auto_compact = false).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ROOT=$TMPD/root
gen() { mkdir -p "$(dirname "$1")" && "$BRICTL" gen "$1" --rows 3 >/dev/null; }
gen "$ROOT/a.lance"
gen "$ROOT/d1/b.lance"
gen "$ROOT/d1/d2/c.lance"
gen "$ROOT/d1/d2/d3/deep.lance"            # 4 levels down
gen "$ROOT/.hidden/h.lance"                # inside a hidden directory
gen "$ROOT/d1/.snapshot.lance"             # a hidden table directory
gen "$TMPD/outside/o.lance"                # reached only through a link
ln -s "$TMPD/outside" "$ROOT/link"
gen "$ROOT/a.lance/nested.lance"           # inside a table: never walked

conf() { # conf [DAEMON KEYS]
  printf '[daemon]\nroot = %s\nsweep_interval = 1s\n%s[defaults]\nauto_compact = false\n' "$ROOT" "${1:-}" >"$TMPD/brid.conf"
}
conf
brid_start disc --config "$TMPD/brid.conf"

# watched: the tables brid watches, relative to the root, sorted, one line
watched() {
  ctl tables --json | jget 'sorted(t["root"][len("'"$ROOT"'") + 1:] for t in d["tables"])' |
    python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)))'
}
expect() { # expect WHAT TABLES...: brid watches exactly TABLES
  local what=$1; shift
  local got; got=$(watched)
  [ "$got" = "$*" ] || fail "$what: brid watches [$got], expected [$*]"
}
expect "at start" a.lance d1/b.lance d1/d2/c.lance
echo "ok at start: 3 tables, none 4 levels down, hidden, behind a link or inside a table"

# later: tables in new directories, found by the watches of the directories
gen "$ROOT/n1/n2/later.lance"
gen "$ROOT/n1/n2/n3/later-deep.lance"
found_later() { [ "$(watched)" = "a.lance d1/b.lance d1/d2/c.lance n1/n2/later.lance" ]; }
wait_until 5 found_later || fail "a table made 3 levels down after the start: watching [$(watched)] after 5 s"
sleep 3
expect "after sweeps" a.lance d1/b.lance d1/d2/c.lance n1/n2/later.lance
echo "ok later: the new table 3 levels down is watched within 5 s, the one 4 levels down is not"

conf 'discovery_depth = 4
'
ctl reload >/dev/null || fail "reload with discovery_depth = 4"
deeper() {
  [ "$(watched)" = "a.lance d1/b.lance d1/d2/c.lance d1/d2/d3/deep.lance n1/n2/later.lance n1/n2/n3/later-deep.lance" ]
}
wait_until 10 deeper || fail "after discovery_depth = 4: watching [$(watched)]"
echo "ok discovery_depth = 4: both tables 4 levels down, still nothing hidden, linked or nested"
brid_stop || fail "brid exited non-zero"
pass
