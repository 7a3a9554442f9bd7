#!/usr/bin/env bash
# Fails on an #include that goes up a layer or sideways between programs
# (docs/architecture.md). libbri's folders form one order, lowest first; a
# file may include headers of its own folder and of any folder listed before
# it. Generated
# protobuf headers (*.pb-c.h) are the format's definitions and count as the
# layer right above util. Programs reach libbri only through its public
# headers, include/bri/*.h (which may include any lib header; lib never
# includes them): daemon/rpc may use include/bri; daemon/jobs (brid's job
# store) include/bri and daemon/rpc; daemon/brictl include/bri and
# daemon/rpc; daemon/brid all three, never daemon/brictl. A program's
# main file (daemon/brid/brid.c, daemon/brictl/brictl.c) holds main alone:
# it defines no other function the program's modules could call back into.
# Inside daemon/brid the modules are layers too (BRID_LAYERS, a folder
# each, numbered lowest first): a module includes only headers of a lower
# folder ("brid/1_leaves/svc_log.h") or of a module below it in its own
# folder (BRID_TIER); only main's file lives outside them.
#   scripts/check-layers.sh [ROOT]     (ROOT defaults to the repository)
set -euo pipefail
ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$ROOT"

# Layer order of lib/, lowest first.
ORDER=(util proto storage lance/core lance/encoding lance/file lance/table lance/dataset
  blob scan compact ops gen)
# Inside lib/lance/table, the modules' own order, lowest first (a module may
# include only modules of a lower tier): the leaves (flags, the field rules,
# row id sequences, bitmaps, naming), the checks built on them, the
# manifest codec, the table and Lance's manifest invariants, what walks a
# table, the commit.
declare -A TABLE_TIER=([flags]=0 [fields]=0 [rowids]=0 [roaring_strict]=0 [sidecar]=0 [version]=0
  [bri]=1 [conflict]=1 [deletion]=1 [manifest]=2 [rules]=3 [table]=3 [frag_reuse]=4 [reach]=4 [commit]=5)
# The folders of daemon/ each folder of daemon/ may include besides its own.
declare -A DAEMON_USES=([rpc]="" [jobs]="rpc" [brictl]="rpc" [brid]="rpc jobs")
# daemon/brid's layers, lowest first (docs/architecture.md): the leaves
# (configuration, log, notify, kinds, request checks, the planner check),
# the shared state and its hooks, execution (the worker pool), the sources
# of work, scheduling, the interfaces, lifecycle.
BRID_LAYERS=(1_leaves 2_state 3_exec 4_sources 5_sched 6_iface 7_life)
# Inside a brid folder, the modules' order, lowest first (a module includes
# only the modules of a lower tier of its folder; one tier is sideways).
declare -A BRID_TIER=([log]=0 [notify]=0 [config]=1 [kinds]=2 [check]=3 [request]=3 [state]=0
  [recover]=0 [worker]=1 [roots]=0 [lease]=0 [discover]=1 [poll]=1 [watch]=2 [sched]=0
  [view]=0 [metrics]=1 [api]=2 [control]=3 [http]=3 [daemon]=0)

rank_of() {
  local i
  for i in "${!ORDER[@]}"; do [ "${ORDER[$i]}" = "$1" ] && { echo "$i"; return; }; done
  echo -1
}

# The lib folder a header path (as written in the #include) belongs to.
folder_of() {
  case "$1" in
    *.pb-c.h) echo proto ;;
    lance/*/*) echo "${1%/*}" ;;
    */*) echo "${1%%/*}" ;;
    *) echo "" ;;
  esac
}

bad=0
report() { echo "$1: includes \"$2\": $3" >&2; bad=$((bad + 1)); }

brid_rank() {
  local i
  for i in "${!BRID_LAYERS[@]}"; do [ "${BRID_LAYERS[$i]}" = "$1" ] && { echo "$i"; return; }; done
  echo -1
}

# An include between two modules of daemon/brid: only down the layers, or
# down BRID_TIER inside a layer. own: the including file's folder.
check_brid_include() {
  local file=$1 inc=$2 own=$3 to_dir mod to own_rank to_rank
  case "$inc" in
    *.pb-c.h) return ;; # refused below: not a module
    brid/*/*) to_dir=${inc#brid/} to_dir=${to_dir%%/*} ;;
    brid/*) report "$file" "$inc" "daemon/brid's modules live in its layer folders (BRID_LAYERS)"; return ;;
    */*) return ;;
    *) to_dir=$own ;;
  esac
  mod=$(basename "${file%.*}") to=$(basename "${inc%.h}")
  mod=${mod#svc_} to=${to#svc_}
  [ "$file" != daemon/brid/brid.c ] || return 0 # main: above every layer
  own_rank=$(brid_rank "$own") to_rank=$(brid_rank "$to_dir")
  if [ "$own_rank" -lt 0 ] || [ "$to_rank" -lt 0 ]; then
    report "$file" "$inc" "brid/$([ "$own_rank" -lt 0 ] && echo "$own" || echo "$to_dir") is not in the layer order (BRID_LAYERS, scripts/check-layers.sh)"
  elif [ "$to_rank" -gt "$own_rank" ]; then
    report "$file" "$inc" "brid/$to_dir is above brid/$own"
  elif [ "$to_rank" -eq "$own_rank" ] && [ "$mod" != "$to" ]; then
    if [ -z "${BRID_TIER[$mod]-}" ] || [ -z "${BRID_TIER[$to]-}" ]; then
      report "$file" "$inc" "brid/$own/$([ -z "${BRID_TIER[$mod]-}" ] && echo "$mod" || echo "$to") is not in the module order (BRID_TIER, scripts/check-layers.sh)"
    elif [ "${BRID_TIER[$to]}" -ge "${BRID_TIER[$mod]}" ]; then
      report "$file" "$inc" "brid/$own/$to is not below brid/$own/$mod in the module order"
    fi
  fi
}

# An include between two modules of lib/lance/table: only downwards in TABLE_TIER.
check_table_module() {
  local file=$1 inc=$2 mod to
  mod=$(basename "${file%.*}") to=$(basename "${inc%.h}")
  [ "$mod" != "$to" ] || return 0
  if [ -z "${TABLE_TIER[$mod]-}" ] || [ -z "${TABLE_TIER[$to]-}" ]; then
    report "$file" "$inc" "lance/table/$([ -z "${TABLE_TIER[$mod]-}" ] && echo "$mod" || echo "$to") is not in the module order (TABLE_TIER, scripts/check-layers.sh)"
  elif [ "${TABLE_TIER[$to]}" -ge "${TABLE_TIER[$mod]}" ]; then
    report "$file" "$inc" "lance/table/$to is not below lance/table/$mod in the module order"
  fi
}

check_lib_file() {
  local file=$1 own=$2 inc target
  local own_rank; own_rank=$(rank_of "$own")
  while read -r inc; do
    case "$inc" in
      bri/*) report "$file" "$inc" "include/bri is libbri's public door, for programs: lib includes its own headers"; continue ;;
    esac
    target=$(folder_of "$inc")
    if [ "$own" = lance/table ] && [ "$target" = lance/table ]; then
      check_table_module "$file" "$inc"
      continue
    fi
    [ -n "$target" ] && [ "$target" != "$own" ] || continue
    local t_rank; t_rank=$(rank_of "$target")
    if [ "$own_rank" -lt 0 ]; then
      report "$file" "$inc" "lib/$own is not in the layer order (scripts/check-layers.sh)"
    elif [ "$t_rank" -lt 0 ]; then
      report "$file" "$inc" "no such layer: $target"
    elif [ "$t_rank" -gt "$own_rank" ]; then
      report "$file" "$inc" "lib/$target is above lib/$own"
    fi
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
}

check_daemon_file() {
  local file=$1 prog=$2 inc brid_dir
  brid_dir=${file#daemon/brid/} brid_dir=${brid_dir%/*}
  local layered=$([ "$prog" = brid ] && echo 1)
  if [ -n "$layered" ] && [ "$brid_dir" = "${file#daemon/brid/}" ] && [ "$file" != daemon/brid/brid.c ]; then
    report "$file" "-" "a brid module must live in a layer folder (BRID_LAYERS)"
    layered=
  fi
  while read -r inc; do
    [ -z "$layered" ] || check_brid_include "$file" "$inc" "$brid_dir"
    case "$inc" in
      *.pb-c.h) report "$file" "$inc" "daemon/$prog reaches libbri only through include/bri"; continue ;;
      */*) ;;
      *) continue ;;  # a header of its own folder
    esac
    local top=${inc%%/*}
    case "$top" in
      brid | brictl | rpc | jobs)
        if [ "$top" != "$prog" ] && [[ " ${DAEMON_USES[$prog]-} " != *" $top "* ]]; then
          report "$file" "$inc" "daemon/$prog may not use daemon/$top"
        fi ;;
      bri) [ -f "include/$inc" ] || report "$file" "$inc" "no such public header: include/$inc" ;;
      *) report "$file" "$inc" "daemon/$prog reaches libbri only through include/bri (libbri's public headers)" ;;
    esac
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
}

while IFS= read -r f; do
  rel=${f#lib/}
  case "$rel" in
    lance/*/*) own=${rel%/*} ;;
    */*) own=${rel%%/*} ;;
    *) report "$f" "-" "a lib file must live in a layer folder"; continue ;;
  esac
  check_lib_file "$f" "$own"
done < <(find lib -name '*.[ch]' | sort)

while IFS= read -r f; do
  rel=${f#daemon/}
  check_daemon_file "$f" "${rel%%/*}"
done < <(find daemon -mindepth 2 -name '*.[ch]' | sort)

# main files: no function with external linkage but main
for f in daemon/brid/brid.c daemon/brictl/brictl.c; do
  [ -f "$f" ] || continue
  while read -r fn; do
    echo "$f: defines $fn(); only main lives in a program's main file" >&2
    bad=$((bad + 1))
  done < <(sed -n 's/^[A-Za-z_][A-Za-z0-9_ *]*[ *]\([A-Za-z_][A-Za-z0-9_]*\)(.*/\1/p' "$f" |
    grep -v '^main$' | while read -r n; do grep -Eq "^static [^(]*[ *]$n\(" "$f" || echo "$n"; done)
done

if ((bad)); then
  echo "check-layers: $bad include(s) or definition(s) break the layer order (docs/architecture.md)" >&2
  exit 1
fi
echo "check-layers: ok"
