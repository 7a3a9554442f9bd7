#!/usr/bin/env bash
# test_powerloss.sh: make check's subset of the power-loss harness
# (tests/powerloss/run.sh --quick: compact with link then materialize and
# cleanup, and a cleanup, at most 60 crash states each; brid's life of a job
# through its SQLite store, 15 states, each then recovered by brid): no
# violation; then brid's job with the canary armed (a put skips its
# directory fsync: the manifest's name is not made durable) must report
# violations naming the state and the commit the job store recorded but
# _versions/ lost.
. "$(dirname "$0")/../interop/lib.sh"
need_oracle
RUN=$REPO/tests/powerloss/run.sh
bash "$RUN" --quick >"$TMPD/plain.out" 2>&1 || { tail -25 "$TMPD/plain.out" >&2; fail "the subset reports violations"; }
cat "$TMPD/plain.out"
last=$(tail -1 "$TMPD/plain.out")
[[ $last =~ ^powerloss:\ ([0-9]+)\ crash\ states,\ 0\ violations$ ]] || fail "last line: $last"
((BASH_REMATCH[1] >= 60)) || fail "only ${BASH_REMATCH[1]} crash states"
if bash "$RUN" --quick --canary --only brid-job >"$TMPD/canary.out" 2>&1; then
  tail -5 "$TMPD/canary.out" >&2
  fail "the canary (canary.no_put_dir_fsync) went unnoticed"
fi
last=$(tail -1 "$TMPD/canary.out")
[[ $last =~ ^powerloss:\ [0-9]+\ crash\ states,\ ([0-9]+)\ violations$ ]] && ((BASH_REMATCH[1] > 0)) ||
  fail "canary: last line: $last"
grep -m1 '^VIOLATION brid-job s[0-9]* (crash before op .*: .*_versions/ lost the commit' "$TMPD/canary.out" ||
  fail "canary: no violation names a state and a lost commit: $(grep -m2 VIOLATION "$TMPD/canary.out")"
echo "canary: $last"
pass
