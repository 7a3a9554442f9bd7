#!/usr/bin/env bash
# DAEMON SYSTEMD: the unit and the notify protocol.
#  - systemd/brid.service passes systemd-analyze verify (with ExecStart
#    pointing at the brid under test, as make install writes it) and carries
#    the required settings; the sysusers and tmpfiles snippets parse;
#  - brid speaks sd_notify to $NOTIFY_SOCKET: READY=1 after start-up, STATUS=
#    lines, WATCHDOG=1 at half of $WATCHDOG_USEC, RELOADING=1 then READY=1 on
#    SIGHUP, STOPPING=1 on SIGTERM; without $NOTIFY_SOCKET nothing breaks
#    (every other test runs that way).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

U=$BRI_SOURCE_DIR/systemd/brid.service
for k in '^Type=notify$' '^WatchdogSec=' '^NoNewPrivileges=yes$' '^ProtectSystem=strict$' '^ReadWritePaths=' \
  '^PrivateTmp=yes$' '^StateDirectory=brid$' '^RuntimeDirectory=brid$' '^User=brid$' '^Group=brid$' \
  '^ExecReload=/bin/sh -c .kill -HUP "\$\$MAINPID".$' '^RestartPreventExitStatus=78$'; do
  grep -Eq "$k" "$U" || fail "brid.service lacks $k"
done
if command -v systemd-analyze >/dev/null; then
  sed "s#^ExecStart=/usr/local/bin/brid #ExecStart=$BRID #" "$U" >"$TMPD/brid.service"
  grep -q "^ExecStart=$BRID " "$TMPD/brid.service" || fail "ExecStart is not /usr/local/bin/brid ..."
  # --man=no: the Documentation= man pages are installed by the package, not here
  systemd-analyze verify --man=no "$TMPD/brid.service" 2>"$TMPD/verify.err" || fail "systemd-analyze verify: $(cat "$TMPD/verify.err")"
  [ ! -s "$TMPD/verify.err" ] || fail "systemd-analyze verify warned: $(cat "$TMPD/verify.err")"
  echo "ok systemd-analyze verify"
else
  echo "systemd-analyze not installed: unit not verified"
fi
grep -Eq '^u brid - ' "$BRI_SOURCE_DIR/systemd/brid.sysusers" || fail "sysusers: no brid user"
if command -v systemd-sysusers >/dev/null; then
  systemd-sysusers --dry-run "$BRI_SOURCE_DIR/systemd/brid.sysusers" >/dev/null 2>"$TMPD/su.err" ||
    fail "sysusers: $(cat "$TMPD/su.err")"
fi
grep -Eq '^d /var/lib/brid 0700 brid brid' "$BRI_SOURCE_DIR/systemd/brid.tmpfiles" || fail "tmpfiles: state directory"

# sd_notify
notify_listen "$TMPD/sd_notify.sock" "$TMPD/notify.txt"
mkdir -p "$TMPD/root"
cp -a "$BRI_SOURCE_DIR/tests/fixtures/tables/v21.lance" "$TMPD/root/"
printf '[daemon]\nroot = %s\n' "$TMPD/root" >"$TMPD/n.conf"
NOTIFY_SOCKET=$TMPD/sd_notify.sock WATCHDOG_USEC=1000000 brid_start notify --config "$TMPD/n.conf" --debounce 1s
has() { grep -q "$1" "$TMPD/notify.txt"; }
wait_until 15 has '^READY=1$' || fail "no READY=1: $(cat "$TMPD/notify.txt")"
wait_until 15 has '^STATUS=.*tables' || fail "no STATUS=: $(cat "$TMPD/notify.txt")"
wait_until 15 has '^WATCHDOG=1$' || fail "no WATCHDOG=1"
sleep 1.2
[ "$(grep -c '^WATCHDOG=1$' "$TMPD/notify.txt")" -ge 2 ] || fail "WATCHDOG=1 not repeated every 0.5 s"
# a job shows in STATUS (v21.lance gets compacted after the debounce)
wait_until 10 has '^STATUS=.*1 running' || wait_until 15 has '^STATUS=.*compact ' || true
kill -HUP "$BRID_PID"
wait_until 15 has '^RELOADING=1|MONOTONIC_USEC=' || fail "no RELOADING=1 on SIGHUP"
[ "$(grep -c '^READY=1$' "$TMPD/notify.txt")" -ge 2 ] || wait_until 15 sh -c "[ \$(grep -c '^READY=1\$' '$TMPD/notify.txt') -ge 2 ]" ||
  fail "no READY=1 after the reload"
brid_stop || fail "brid exited non-zero"
has '^STOPPING=1$' || fail "no STOPPING=1 on SIGTERM"
echo "ok sd_notify: $(cut -d= -f1 "$TMPD/notify.txt" | sort | uniq -c | tr -s ' \n' ' ')"
pass
