#!/usr/bin/env bash
# DAEMON IDLE: brid watching 1000 tables (10 directories of 100 under one
# root) sits idle: after start-up and the first planner checks, it uses
# (almost) no CPU over 30 s (inotify watches and timers, no polling), and
# its memory stays small. Prints the measured numbers:
#   idle: tables=1000 watches=1000 startup_ms=... cpu_ticks_30s=... cpu_pct=... rss_kb=... hwm_kb=...
# and checks cpu_pct < 1 and rss < 100 MiB (not under AddressSanitizer).
# IDLE_SECONDS overrides 30.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

SECS=${IDLE_SECONDS:-30}
# one small single-fragment table (compacted and cleaned offline), copied 1000 times
cp -a "$BRI_SOURCE_DIR/tests/fixtures/tables/v21.lance" "$TMPD/one.lance"
"$BRICTL" compact "$TMPD/one.lance" >/dev/null
"$BRICTL" cleanup "$TMPD/one.lance" --older-than 0 --grace 0 >/dev/null
for g in $(seq -w 0 9); do
  mkdir -p "$TMPD/root/g$g"
  for t in $(seq -w 0 99); do cp -a "$TMPD/one.lance" "$TMPD/root/g$g/t$t.lance"; done
done
t0=$(date +%s%N)
brid_start idle --root "$TMPD/root" --debounce 1s --log-level notice
startup_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
checked() {
  ctl tables --json | jget 'len(d["tables"]) == 1000 and all(t["latest_version"] is not None for t in d["tables"])' | grep -qx True &&
    [ "$(ctl status --json | jget 'd["checks_in_flight"]')" = 0 ]
}
wait_until 60 checked || fail "the first checks of 1000 tables did not finish within 60 s"
st=$(ctl status --json)
[ "$(echo "$st" | jget 'd["tables"]["watched"]')" = 1000 ] || fail "not 1000 tables watched"
watches=$(echo "$st" | jget 'd["tables"]["inotify_watches"]')
[ "$watches" = 1000 ] || fail "$watches inotify watches, expected 1000"
[ "$(echo "$st" | jget 'd["jobs"]["queued"] + d["jobs"]["running"]')" = 0 ] || fail "single-fragment tables got jobs"
sleep 1
tick=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$BRID_PID/stat"; }
c0=$(cpu)
sleep "$SECS"
c1=$(cpu)
rss=$(awk '/^VmRSS/ {print $2}' "/proc/$BRID_PID/status")
hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$BRID_PID/status")
ticks=$((c1 - c0))
pct=$(python3 -c "print(f'{100.0 * $ticks / ($tick * $SECS):.3f}')")
echo "idle: tables=1000 watches=$watches startup_ms=$startup_ms cpu_ticks_${SECS}s=$ticks cpu_pct=$pct rss_kb=$rss hwm_kb=$hwm"
python3 -c "import sys; sys.exit(0 if $pct < 1.0 else 1)" || fail "idle CPU $pct% over ${SECS}s"
# (AddressSanitizer's shadow memory and quarantine inflate RSS: no bound then)
grep -q __asan_init "$BRID" || [ "$rss" -lt 102400 ] || fail "RSS $rss kB with 1000 tables"
# still responsive
ctl tables "$TMPD/root/g5/t50.lance" >/dev/null || fail "tables TABLE among 1000"
brid_stop || fail "brid exited non-zero"
pass
