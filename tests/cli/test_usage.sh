#!/usr/bin/env bash
# brictl's command-line conventions (OPS 8) and exit codes: --version; --help
# and `help CMD` on every command (exit 0, the same page); global options
# before the command (git, knotc, systemctl) or among its options; one
# wording for every usage error (exit 1: "brictl CMD: ...", the usage line,
# where the help is); did-you-mean for commands and options; defaults in the
# usage lines; --opt=VALUE; the bash completion; unreadable tables exit 2,
# verify's problems 5.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
FX=$BRI_SOURCE_DIR/tests/fixtures/tables/plain.lance
run() { set +e; out=$("$BRICTL" "$@" 2>"$TMP/err"); rc=$?; set -e; err=$(cat "$TMP/err"); }
expect() { # expect CODE NEEDLE ARGS...: exit code, and NEEDLE in stdout+stderr
  local code=$1 needle=$2; shift 2
  run "$@"
  [ "$rc" -eq "$code" ] || fail "brictl $*: exit $rc, expected $code: $out $err"
  grep -qF -- "$needle" <<<"$out$err" || fail "brictl $*: '$needle' not in: $out $err"
}
# usage_error CMD NEEDLE ARGS...: exit 1, nothing on stdout, and the one
# wording: "brictl CMD: NEEDLE...", the command's usage line, its help.
usage_error() {
  local cmd=$1 needle=$2; shift 2
  run "$@"
  [ "$rc" -eq 1 ] || fail "brictl $*: exit $rc, expected 1 (usage): $err"
  [ -z "$out" ] || fail "brictl $*: a usage error printed on stdout: $out"
  local first; first=$(head -1 <<<"$err")
  if [ -n "$cmd" ]; then
    [[ $first == "brictl $cmd: "* ]] || fail "brictl $*: first line is not 'brictl $cmd: ...': $first"
    grep -q "^usage: brictl \[GLOBAL OPTIONS\] $cmd" <<<"$err" || fail "brictl $*: no usage line of $cmd: $err"
    grep -qF "Run 'brictl help $cmd' for every option." <<<"$err" || fail "brictl $*: no pointer to the help: $err"
  else
    [[ $first == "brictl: "* ]] || fail "brictl $*: first line is not 'brictl: ...': $first"
    grep -q "^usage: brictl \[GLOBAL OPTIONS\] COMMAND" <<<"$err" || fail "brictl $*: no usage line: $err"
  fi
  grep -qF -- "$needle" <<<"$first" || fail "brictl $*: '$needle' not in: $first"
}

# --- version and help ----------------------------------------------------------
expect 0 "brictl 0." --version
expect 0 "brictl 0." -V
[[ $out =~ ^brictl\ [0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "--version prints '$out'"
expect 0 "usage: brictl [GLOBAL OPTIONS] COMMAND" --help
top=$out
cmds=$(awk '/^(table commands|brid commands|help)/{on=1; next} /^$/{on=0} on && /^  [a-z]/{print $1}' <<<"$top")
[ "$(wc -w <<<"$cmds")" -ge 18 ] || fail "brictl --help lists too few commands: $cmds"
for c in $cmds; do
  expect 0 "usage: brictl [GLOBAL OPTIONS] $c" "$c" --help
  page=$out
  expect 0 "usage: brictl [GLOBAL OPTIONS] $c" help "$c"
  [ "$out" = "$page" ] || fail "brictl help $c differs from brictl $c --help"
  expect 0 "usage: brictl [GLOBAL OPTIONS] $c" "$c" -h
  expect 0 "usage: brictl [GLOBAL OPTIONS] $c" --help "$c"
  # every option of the usage line is explained on the page
  for o in $(grep -oE '\[--[a-z-]+' <<<"$page" | tr -d '[' | sort -u); do
    grep -qE "^  (-[a-zA-Z], )?$o( |$)" <<<"$page" || fail "brictl help $c: $o is not explained"
  done
done
expect 0 "exit status" help
# usage lines show the defaults
expect 0 "[--rows N (default 1000)]" gen --help
expect 0 "[--older-than DURATION (default 7d)]" cleanup --help
expect 0 "(default: 30s)" status --help

# --- bash completion (generated from the same tables) ---------------------------
"$BRICTL" completion bash >"$TMP/completion.bash"
complete_words() { # complete_words WORDS...: what TAB offers after the last word
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _brictl; echo "${COMPREPLY[*]}"' \
    _ "$TMP/completion.bash" "$@"
}
[ "$(complete_words brictl sta)" = status ] || fail "completion of 'sta': $(complete_words brictl sta)"
[ "$(complete_words brictl --socket /s stat)" = status ] || fail "completion after a global option"
[ "$(complete_words brictl compact T --dr)" = --dry-run ] || fail "completion of compact --dr"
[ "$(complete_words brictl compact T --strategy '')" = "auto bri link copy managed" ] || fail "completion of --strategy"
[ "$(complete_words brictl help compa)" = compact ] || fail "completion of help compa"
[ "$(complete_words brictl inspect T --so)" = "" ] || fail "completion offers --socket to inspect"

# --- global options before the command ----------------------------------------
expect 3 "no socket at $TMP/none.sock" --socket "$TMP/none.sock" status
expect 3 "no socket at $TMP/none.sock" status --socket "$TMP/none.sock"
expect 3 "no socket at $TMP/none.sock" --socket="$TMP/none.sock" --timeout 5s jobs
run --json inspect "$FX"
[ "$rc" = 0 ] && python3 -c 'import json,sys; json.loads(sys.argv[1])' "$out" || fail "--json before the command: $rc $err"
run inspect "$FX" --version=2 --json
[ "$rc" = 0 ] && [ "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["version"])' "$out")" = 2 ] ||
  fail "--version=2: $rc $err"
usage_error "" "--dry-run is an option of compact: put it after the command" --dry-run compact "$FX"

# --- one wording for usage errors, did you mean --------------------------------
usage_error "" "a command is required"
usage_error "" 'unknown command "frobnicate"' frobnicate
usage_error "" 'unknown command "stauts" (did you mean "status"?)' stauts
usage_error "" 'unknown option --jsn (did you mean --json?)' --jsn status
usage_error help 'unknown command "compcat" (did you mean "compact"?)' help compcat
usage_error inspect "TABLE is required" inspect
usage_error clone "SRC and DST are required" clone
usage_error clone "DST is required" clone a
usage_error inspect '--version needs a positive integer, got "abc"' inspect x --version abc
usage_error inspect '--version needs a positive integer, got "0"' inspect x --version 0
usage_error inspect "--version needs a positive integer" inspect x --version
usage_error inspect "unknown option --bogus" inspect x --bogus
usage_error status "unknown option --h (did you mean --help?)" status --h
usage_error compact "unknown option --dryrun (did you mean --dry-run?)" compact x --dryrun
usage_error compact "unknown option --strat (did you mean --strategy?)" compact x --strat bri
usage_error compact '--strategy needs one of auto, bri, link, copy, managed, got "fast"' compact x --strategy fast
usage_error compact '--repack-threshold needs a number from 0 to 1, got "2"' compact x --repack-threshold 2
usage_error inspect 'unexpected argument "b"' inspect a b
usage_error compact "--dry-run given twice" compact x --dry-run --dry-run
usage_error compact '--dry-run takes no value, got "yes"' compact x --dry-run=yes
usage_error verify "--version and --all-versions exclude each other" verify x --all-versions --version 2
usage_error clone "say --shallow or --deep" clone a b
usage_error cat "cat has no JSON output (--json)" cat x --column c --offset 0 --json
usage_error inspect "inspect works without brid; --socket does not apply" inspect x --socket /s
usage_error compact "--repack-threshold works only when brictl compact runs without brid" compact x --wait --repack-threshold 0.5
usage_error gen '--rows needs a positive integer, got "0"' gen x --rows 0
usage_error status '--timeout needs a duration with a unit, from 1s to 1d (e.g. 90s, 30m, 2h, 7d), got "0s"' status --timeout 0s
usage_error completion 'no completion for "zsh" (only bash)' completion zsh
# "--" ends the options: a table whose name starts with a dash
mkdir -p "$TMP/-odd"
expect 2 "$TMP/-odd: not a Lance table" inspect -- "$TMP/-odd"

# --- tables that cannot be read: exit 2 ----------------------------------------
expect 2 "$TMP/none: not a Lance table (no _versions directory)" inspect "$TMP/none"
mkdir -p "$TMP/empty/_versions"
expect 2 "not a Lance table (no manifest" inspect "$TMP/empty"
expect 2 "no version 99 (latest is 5)" inspect "$FX" --version 99
expect 0 "tag       v2tag -> version 2" inspect "$FX"
"$BRICTL" inspect "$FX" --version 2 --json |
  python3 -c 'import json,sys; r=json.load(sys.stdin); assert r["version"]==2 and r["totals"]["fragments"]==2 and r["totals"]["rows"]==200, r["totals"]' ||
  fail "inspect --version 2 reports the wrong version"
# verify's problems exit 5, distinct from a usage error (1) and an unreadable table (2)
cp -a "$FX" "$TMP/broken.lance"
rm "$(ls "$TMP"/broken.lance/data/*.lance | head -1)"
expect 5 "problems" verify "$TMP/broken.lance"
expect 0 "ok" verify "$FX"
echo ok
