#!/usr/bin/env bash
# DAEMON INSTALL: brid as installed and run by its unit, against a table its
# application owns (OPS "done when").
#  - `make install` into a DESTDIR; the brid user and group come from the
#    shipped sysusers file (systemd-sysusers --root), an application user
#    "lanceapp" is a member of group brid; both exist only in this test's
#    mount namespace (private copies of /etc/passwd and /etc/group);
#  - the installed brid.conf is readable by brid (the unit's User=), edited
#    as an administrator would (root, socket_group, the socket and store
#    paths of this test);
#  - brid runs as the installed unit says: ExecStart, User=, Group=,
#    UMask=, its runtime and state directories with the unit's modes;
#  - lanceapp writes a blob table with LanceDB into a group-shared directory
#    (setgid, group brid, umask 0002), asks brid to compact it with brictl
#    (lanceapp is in socket_group), and after the compaction reads it and
#    appends to it with LanceDB, as the table's owner.
# The unit's sandboxing (ProtectSystem=, ...) needs systemd itself:
# test_daemon_systemd.sh checks the unit with systemd-analyze verify, and
# tests/system/test_deb_systemd.sh runs the Debian package under systemd.
# The shipped brid.conf watches /srv/lance (docs/deploy.md); this test
# points that root at its own directory.
# Needs root (users, setpriv, a mount namespace) and systemd-sysusers.
set -euo pipefail
if [ -z "${BRID_INSTALL_NS:-}" ]; then
  [ "$(id -u)" = 0 ] || { echo "SKIP: test_daemon_install.sh: needs root"; exit 77; }
  command -v systemd-sysusers >/dev/null || { echo "SKIP: test_daemon_install.sh: no systemd-sysusers"; exit 77; }
  exec unshare --mount --propagation private env BRID_INSTALL_NS=1 bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
need_oracle
SRC=${BRI_SOURCE_DIR:-$REPO}
chmod 0755 "$TMPD"
DEST=$TMPD/dest

# make install
(unset MAKEFLAGS MAKELEVEL; make -s -C "$SRC" install DESTDIR="$DEST" PREFIX=/usr \
  $([[ $BRI_BUILD == *-san ]] && echo SANITIZE=1) >"$TMPD/install.log" 2>&1) ||
  fail "make install failed: $(tail -5 "$TMPD/install.log")"
UNIT=$DEST/usr/lib/systemd/system/brid.service CONF=$DEST/etc/brid/brid.conf
for f in "$UNIT" "$CONF" "$DEST/usr/lib/sysusers.d/brid.conf" "$DEST/usr/bin/brid" "$DEST/usr/bin/brictl"; do
  [ -e "$f" ] || fail "make install did not install $f"
done
unit() { sed -n "s/^$1=//p" "$UNIT" | tail -1; }

# the users: the shipped sysusers file, and the application's user in group brid
SYS=$TMPD/sysroot
mkdir -p "$SYS/etc"
for f in passwd group shadow gshadow; do [ -e "/etc/$f" ] && cp -p "/etc/$f" "$SYS/etc/$f"; done
systemd-sysusers --root="$SYS" "$DEST/usr/lib/sysusers.d/brid.conf" 2>"$TMPD/su.err" ||
  fail "systemd-sysusers on the shipped file: $(cat "$TMPD/su.err")"
printf 'u lanceapp - "LanceDB application" /nonexistent\nm lanceapp brid\n' >"$TMPD/app.sysusers"
systemd-sysusers --root="$SYS" "$TMPD/app.sysusers" 2>>"$TMPD/su.err" || fail "systemd-sysusers (lanceapp)"
mount --bind "$SYS/etc/passwd" /etc/passwd
mount --bind "$SYS/etc/group" /etc/group
getent passwd brid >/dev/null && getent group brid >/dev/null || fail "no brid user or group after systemd-sysusers"
id -nG lanceapp | grep -qw brid || fail "lanceapp is not in group brid: $(id lanceapp)"
echo "ok users: $(id brid); $(id lanceapp)"

# the unit's settings
USER=$(unit User) GROUP=$(unit Group) UMASK=$(unit UMask) EXEC=$(unit ExecStart)
[ "$USER" = brid ] && [ "$GROUP" = brid ] && [ -n "$UMASK" ] || fail "unit: User=$USER Group=$GROUP UMask=$UMASK"
[ -z "$(unit SupplementaryGroups)" ] || fail "the test does not model SupplementaryGroups= yet"
RUN=$TMPD/run/brid STATE=$TMPD/state/brid
install -d -o brid -g brid -m "$(unit RuntimeDirectoryMode)" "$RUN"
install -d -o brid -g brid -m "$(unit StateDirectoryMode)" "$STATE"
chmod 0755 "$TMPD/run" "$TMPD/state"

# the installed configuration: readable by the unit's user; edited as an administrator would
[ "$(stat -c %a "$CONF")" = 644 ] || fail "brid.conf installed with mode $(stat -c %a "$CONF")"
SRV=$TMPD/srv
install -d -o lanceapp -g brid -m 2775 "$SRV"
sed -i "s|^root = /srv/lance\$|root = $SRV|; s|^#socket_group = brid\$|socket_group = brid|;
        s|^#socket = /run/brid/brid.sock\$|socket = $RUN/brid.sock|;
        s|^#state = /var/lib/brid/jobs.db\$|state = $STATE/jobs.db|" "$CONF"
grep -q "^root = $SRV" "$CONF" && grep -q "^socket = $RUN/brid.sock" "$CONF" && grep -q "^state = $STATE" "$CONF" ||
  fail "could not edit the installed brid.conf"
as_brid() { setpriv --reuid=brid --regid=brid --init-groups "$@"; }
as_app() { setpriv --reuid=lanceapp --regid=lanceapp --init-groups env HOME="$TMPD" "$@"; }
read -r -a CMD <<<"$EXEC"
CMD[0]=$DEST${CMD[0]}
for i in "${!CMD[@]}"; do [ "${CMD[$i]}" = /etc/brid/brid.conf ] && CMD[$i]=$CONF; done
as_brid "${CMD[@]}" --check-config >/dev/null 2>"$TMPD/check.err" ||
  fail "the unit's user cannot use the installed configuration: $(cat "$TMPD/check.err")"

# the application writes a table, group-shared
as_app bash -c "umask 0002; node '$INTEROP_DIR/lance_make.mjs' --out '$SRV' --tables blobs --blob-batches 3:mixed" >/dev/null ||
  fail "LanceDB as lanceapp could not write the table"
T=$SRV/blobs.lance
as_app bash -c "node '$INTEROP_DIR/lance_read.mjs' '$T' --json" >"$TMPD/before.json" || fail "read before"

# brid as the unit runs it
BRID_LOG=$TMPD/brid.log
setpriv --reuid=brid --regid=brid --init-groups bash -c "umask $UMASK; exec \"\$@\"" brid "${CMD[@]}" 2>"$BRID_LOG" &
BRID_PID=$! # setpriv, then bash, exec into brid: one process
wait_until 20 grep -q "ready:" "$BRID_LOG" || fail "the installed brid did not start: $(cat "$BRID_LOG")"
SOCK=$RUN/brid.sock
as_app env BRID_SOCKET="$SOCK" timeout 120 "$DEST/usr/bin/brictl" compact "$T" --json >"$TMPD/job.json" 2>"$TMPD/c.err" ||
  fail "brictl compact as lanceapp: $(cat "$TMPD/c.err")"
[ "$(jget 'd["state"]' <"$TMPD/job.json")" = succeeded ] || fail "the compaction: $(cat "$TMPD/job.json")"
[ "$(jget 'd["result"]["version"] > 0' <"$TMPD/job.json")" = True ] || fail "nothing was compacted"
echo "ok brid (user $USER, umask $UMASK) compacted $T for lanceapp: $(jget 'd["result"]["strategy_used"]' <"$TMPD/job.json"), $(jget 'd["result"]["fragments_before"]' <"$TMPD/job.json") -> $(jget 'd["result"]["fragments_after"]' <"$TMPD/job.json") fragments"
unreadable=$(as_app find "$T" ! -readable | head -5)
[ -z "$unreadable" ] || fail "lanceapp cannot read what brid wrote: $(ls -l $unreadable)"

# LanceDB as the table's owner reads the compacted table, then appends to it
as_app bash -c "node '$INTEROP_DIR/lance_read.mjs' '$T' --json" >"$TMPD/after.json" 2>"$TMPD/r.err" ||
  fail "LanceDB as lanceapp cannot read the table brid compacted: $(cat "$TMPD/r.err")"
json_eq "$TMPD/before.json" "$TMPD/after.json" --ignore version,fragments,ms,table,fragmentRows,schemaFields,descriptorKinds ||
  fail "LanceDB reads other values after the compaction"
rows=$(jget 'd["rows"]' <"$TMPD/after.json")
as_app bash -c "umask 0002; node '$INTEROP_DIR/lance_ops.mjs' '$T' append 3" >"$TMPD/append.json" 2>"$TMPD/a.err" ||
  fail "LanceDB as lanceapp cannot append to the table brid compacted: $(cat "$TMPD/a.err")"
total=$(jget 'd["rows"]' <"$TMPD/append.json") # the table's rows after the append
as_app bash -c "node '$INTEROP_DIR/lance_read.mjs' '$T' --json" >"$TMPD/appended.json" || fail "read after the append"
[ "$total" -gt "$rows" ] && [ "$(jget 'd["rows"]' <"$TMPD/appended.json")" = "$total" ] ||
  fail "rows after the append: $(jget 'd["rows"]' <"$TMPD/appended.json"), LanceDB committed $total (from $rows)"
echo "ok LanceDB as lanceapp read the compacted table and appended to it ($rows -> $total rows)"
kill -TERM "$BRID_PID"
wait "$BRID_PID" || fail "brid exited non-zero"
BRID_PID=
pass
