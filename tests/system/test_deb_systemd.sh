#!/usr/bin/env bash
# SYSTEM: brid's Debian package under real systemd (docs/deploy.md). A
# minimal Debian root file system (mmdebstrap, cached under
# $BRI_ROOTFS_CACHE [/var/cache/brid-tests], keyed by its package list:
# systemd, dbus and the package's own dependencies) boots as a container
# with systemd as PID 1 (systemd-nspawn --boot, on an overlay so that the
# cache stays clean), sharing the host's network (the test radosgw). Then:
#  - `dpkg -i build/deb/brid_VERSION_amd64.deb`: brid is active as soon as
#    dpkg returns (the time is printed); dpkg -i again (an upgrade) restarts
#    it;
#  - an administrator's drop-in (LoadCredential= for the S3 secret,
#    ReadWritePaths= and SupplementaryGroups= for a second root) and a
#    changed brid.conf (debounce 1s, a root /srv/apps owned by the
#    application, an s3:// root with secret_access_key_credential) applied
#    by `systemctl reload brid`;
#  - the application's user (lanceapp, in group brid; not root, not brid)
#    writes blob tables with LanceDB (the host's node, as that uid, into the
#    container's file system) under /srv/lance (setgid, group brid),
#    /srv/apps (lanceapp's, mode 0770, no setgid) and the s3:// root; the
#    service compacts each by itself; lanceapp reads the same values with
#    LanceDB and appends to them; every file brid wrote has the directory's
#    group (under the unit's SystemCallFilter=);
#  - the sandbox holds: in brid's mount namespace nothing but its
#    ReadWritePaths is writable (/etc, /usr, /var/log, /home, /root, a
#    directory brid owns elsewhere), /tmp is brid's own;
#  - the journal has brid's entries with PRIORITY= and BRID_JOB_ID=;
#  - `systemctl stop` while a job runs (made slow by a failpoint set with
#    Environment= in a drop-in) lets the job finish, then brid exits 0;
#  - `apt-get remove` stops brid and keeps its configuration, user and
#    state; `apt-get purge` leaves nothing of brid: no file of the package,
#    no user, group, state, runtime or default root directory, no file
#    without an owner, no systemd link.
# Needs root, systemd-nspawn, mmdebstrap (scripts/deps.sh); a machine that
# cannot boot a container says so and skips (exit 77; scripts/run-tests.sh
# reports SKIP for tests/system). About a minute with the rootfs cached
# (building it: 30 s more; building the .deb when the tree is newer: 70 s).
set -euo pipefail
NAME=test_deb_systemd.sh
nope() { echo "SKIP: $NAME: $*"; exit 77; }
if [ -z "${BRID_SYSTEM_NS:-}" ]; then
  [ "$(id -u)" = 0 ] || nope "needs root (a container, mounts, users)"
  for c in systemd-nspawn mmdebstrap unshare nsenter setpriv dpkg-buildpackage; do
    command -v "$c" >/dev/null || nope "no $c here (scripts/deps.sh installs it)"
  done
  exec unshare --mount --propagation private env BRID_SYSTEM_NS=1 bash "$0" "$@"
fi
. "$(dirname "$0")/../integration/lib.sh"
need_oracle
need_s3 deb
SRC=${BRI_SOURCE_DIR:-$REPO}
chmod 0755 "$TMPD"

# ------------------------------------------------------------ the package
VERSION=$(sed -n 's/^VERSION *:= *//p' "$SRC/Makefile")
DEB=$SRC/build/deb/brid_${VERSION}_amd64.deb
stale=
# stale: a file that goes into the package is newer than the .deb
[ -f "$DEB" ] && stale=$(cd "$SRC" && find Makefile README.md config daemon debian docs include lib proto systemd \
  -newer "$DEB" -print -quit)
if [ ! -f "$DEB" ] || [ -n "$stale" ]; then
  (unset MAKEFLAGS MAKELEVEL; make -s -C "$SRC" deb >"$TMPD/deb.log" 2>&1) || fail "make deb: $(tail -20 "$TMPD/deb.log")"
fi
echo "ok package $(basename "$DEB"): $(stat -c %s "$DEB") bytes"

# ------------------------------------------------------------ the root file system
SUITE=$(. /etc/os-release && echo "$VERSION_CODENAME")
MIRROR=$(apt-cache policy | awk -v s="$SUITE/main" '$3 == s && $2 ~ /^https?:/ {print $2; exit}')
[ -n "$MIRROR" ] || nope "no Debian mirror for $SUITE/main in apt's sources"
PKGS=$( { dpkg-deb -f "$DEB" Depends | tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/[[:space:]]//g'
  echo systemd; echo systemd-sysv; echo dbus; } | grep . | sort -u | tr '\n' ,)
PKGS=${PKGS%,}
CACHE=${BRI_ROOTFS_CACHE:-/var/cache/brid-tests}
KEY=$(printf '%s %s %s\n' "$SUITE" "$MIRROR" "$PKGS" | sha256sum | cut -c1-16)
ROOTFS=$CACHE/rootfs-$KEY
mkdir -p "$CACHE"
(
  flock 9
  if [ ! -d "$ROOTFS" ]; then
    rm -rf "$ROOTFS.new"
    t0=$SECONDS
    mmdebstrap --quiet --variant=minbase --include="$PKGS" "$SUITE" "$ROOTFS.new" "$MIRROR" >"$TMPD/mmdebstrap.log" 2>&1 ||
      { tail -20 "$TMPD/mmdebstrap.log" >&2; exit 1; }
    mv "$ROOTFS.new" "$ROOTFS"
    echo "ok built the root file system $ROOTFS in $((SECONDS - t0)) s"
  fi
) 9>"$CACHE/lock" || nope "mmdebstrap could not build a $SUITE root file system from $MIRROR (see above)"

ROOT=$TMPD/root
mkdir -p "$TMPD/upper" "$TMPD/work" "$ROOT"
mount -t overlay overlay -o "lowerdir=$ROOTFS,upperdir=$TMPD/upper,workdir=$TMPD/work" "$ROOT" ||
  nope "cannot mount an overlay file system here"

# ------------------------------------------------------------ boot
NSPAWN=
stop_container() {
  if [ -n "$NSPAWN" ] && kill -0 "$NSPAWN" 2>/dev/null; then
    kill -TERM "$NSPAWN" 2>/dev/null || true # powers the container off
    for _ in $(seq 100); do kill -0 "$NSPAWN" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$NSPAWN" 2>/dev/null || true
    wait "$NSPAWN" 2>/dev/null || true
  fi
  NSPAWN=
  umount -l "$ROOT" 2>/dev/null || true
}
cleanup() {
  local rc=$?
  if [ "$rc" != 0 ] && [ "$rc" != 77 ] && [ -n "${CPID:-}" ]; then
    echo "--- journal of brid ---" >&2
    cin journalctl -u brid --no-pager -n 40 >&2 2>/dev/null || true
  fi
  stop_container
  _brid_cleanup
}
trap cleanup EXIT
mkdir -p /run/systemd/nspawn && mount -t tmpfs tmpfs /run/systemd/nspawn # this mount namespace's only
systemd-nspawn -D "$ROOT" --boot --register=no --keep-unit --machine="brid-test-$$" --console=pipe \
  </dev/null >"$TMPD/nspawn.log" 2>&1 &
NSPAWN=$!
# the container's PID 1: a /usr/lib/systemd/systemd below our systemd-nspawn
find_pid1() {
  local p q
  for p in $(pgrep -x systemd); do
    [ "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)" = "/usr/lib/systemd/systemd " ] || continue
    q=$p
    while [ "$q" -gt 1 ]; do
      q=$(ps -o ppid= -p "$q" | tr -d ' ') || break
      [ "$q" = "$NSPAWN" ] && { echo "$p"; return 0; }
    done
  done
  return 1
}
CPID=
for _ in $(seq 100); do CPID=$(find_pid1) && break; kill -0 "$NSPAWN" 2>/dev/null || break; sleep 0.2; done
[ -n "$CPID" ] || nope "systemd-nspawn could not boot a container here: $(tail -5 "$TMPD/nspawn.log")"
# cin CMD...: CMD inside the container, as its root, with a clean environment
cin() { nsenter -t "$CPID" -m -u -i -n -p -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"; }
state=
for _ in $(seq 450); do # until its manager answers and is no longer starting (90 s)
  state=$(cin systemctl is-system-running 2>&1) || true
  case $state in running | degraded) break ;; esac
  kill -0 "$NSPAWN" 2>/dev/null || break
  sleep 0.2
done
case $state in
  running | degraded) ;;
  *) nope "the container's systemd did not come up ($state): $(tail -5 "$TMPD/nspawn.log")" ;;
esac
echo "ok container booted: systemd $(cin systemctl --version | head -1 | cut -d' ' -f2) as PID 1 ($state)"

# ------------------------------------------------------------ install
cp "$DEB" "$ROOT/root/brid.deb"
t0=$(date +%s%N)
cin dpkg -i /root/brid.deb >"$TMPD/dpkg.log" 2>&1 || fail "dpkg -i: $(cat "$TMPD/dpkg.log")"
act=$(cin systemctl is-active brid) || true
t1=$(date +%s%N)
[ "$act" = active ] || fail "brid is $act right after dpkg -i: $(cin systemctl status brid --no-pager 2>&1 | tail -15)"
echo "ok dpkg -i: brid active $(((t1 - t0) / 1000000)) ms after dpkg -i began"
[ "$(cin systemctl is-enabled brid)" = enabled ] || fail "brid is not enabled after install"
cin dpkg -L brid >"$TMPD/files"
for f in /usr/bin/brid /usr/bin/brictl /lib/systemd/system/brid.service /usr/lib/sysusers.d/brid.conf \
  /usr/lib/tmpfiles.d/brid.conf /usr/share/man/man8/brid.8.gz /usr/share/man/man5/brid.conf.5.gz \
  /usr/share/man/man1/brictl.1.gz /usr/share/bash-completion/completions/brictl /usr/share/doc/brid/deploy.md.gz; do
  grep -qx "$f" "$TMPD/files" || fail "the package has no $f"
done
grep -qx /etc/brid/brid.conf <(cin dpkg-query -W -f='${Conffiles}\n' brid | awk '{print $1}') ||
  fail "/etc/brid/brid.conf is not a conffile"
[ "$(cin stat -c '%U:%G %a' /srv/lance)" = "root:brid 2775" ] || fail "/srv/lance: $(cin stat -c '%U:%G %a' /srv/lance)"
pid_a=$(cin systemctl show -p MainPID --value brid)
cin dpkg -i /root/brid.deb >"$TMPD/dpkg2.log" 2>&1 || fail "dpkg -i (upgrade): $(cat "$TMPD/dpkg2.log")"
pid_b=$(cin systemctl show -p MainPID --value brid)
[ "$(cin systemctl is-active brid)" = active ] && [ "$pid_a" != "$pid_b" ] ||
  fail "dpkg -i over the installed package did not restart brid (MainPID $pid_a -> $pid_b)"
echo "ok installed: $(wc -l <"$TMPD/files") paths; upgrade restarted brid (pid $pid_a -> $pid_b)"
echo "ok $(cin systemd-analyze security brid --no-pager 2>&1 | grep -o 'Overall exposure level.*')"

# ------------------------------------------------------------ users and directories
cin useradd --system --user-group --groups brid --no-create-home --home-dir /nonexistent \
  --shell /usr/sbin/nologin lanceapp
APP_UID=$(cin id -u lanceapp) APP_GID=$(cin id -g lanceapp) BRID_GID=$(cin getent group brid | cut -d: -f3)
cin install -d -o lanceapp -g lanceapp -m 0770 /srv/apps
cin install -d -o brid -g brid -m 0755 /var/opt/brid-probe # brid's, outside its ReadWritePaths
mkdir -p "$TMPD/apphome" && chown "$APP_UID:$APP_GID" "$TMPD/apphome"
# as_app CMD: CMD on the host as lanceapp (uid, group, group brid), umask 0002
as_app() {
  setpriv --reuid="$APP_UID" --regid="$APP_GID" --groups="$APP_GID,$BRID_GID" \
    env HOME="$TMPD/apphome" PATH="$PATH" LANCEDB_LOG=error bash -c "umask 0002; $1"
}

# ------------------------------------------------------------ the administrator's changes
printf '%s\n' "$AWS_SECRET_ACCESS_KEY" >"$ROOT/etc/brid/s3.secret"
chmod 0600 "$ROOT/etc/brid/s3.secret"
mkdir -p "$ROOT/etc/systemd/system/brid.service.d"
cat >"$ROOT/etc/systemd/system/brid.service.d/local.conf" <<EOF
[Service]
LoadCredential=s3:/etc/brid/s3.secret
ReadWritePaths=/srv/apps
SupplementaryGroups=lanceapp
EOF
cin sed -i 's|^#socket_group = brid$|socket_group = brid|' /etc/brid/brid.conf # chown(2) under the unit's filter
cin systemctl daemon-reload
cin systemctl restart brid || fail "restart with the drop-in: $(cin systemctl status brid --no-pager | tail)"
cin setpriv --reuid=lanceapp --regid=lanceapp --init-groups brictl status >/dev/null 2>"$TMPD/st.err" ||
  fail "lanceapp (group brid) cannot use brid's socket (socket_group = brid): $(cat "$TMPD/st.err")"
P=$S3_PREFIX
cin sed -i 's|^#debounce = 30s$|debounce = 1s|' /etc/brid/brid.conf
grep -q '^debounce = 1s$' "$ROOT/etc/brid/brid.conf" || fail "could not edit brid.conf's debounce"
cin sed -i "s|^root = /srv/lance\$|root = /srv/lance\nroot = /srv/apps\nroot = $P|" /etc/brid/brid.conf
cat >>"$ROOT/etc/brid/brid.conf" <<EOF

[root $P]
endpoint = $AWS_ENDPOINT_URL
region = ${AWS_REGION:-us-east-1}
addressing = path
access_key_id = $AWS_ACCESS_KEY_ID
secret_access_key_credential = s3
poll_interval = 1s
EOF
cin brid --config /etc/brid/brid.conf --check-config >/dev/null 2>"$TMPD/check.err" &&
  fail "--check-config outside the unit found a credential: no \$CREDENTIALS_DIRECTORY there"
grep -q 'secret_access_key_credential = s3: $CREDENTIALS_DIRECTORY is not set' "$TMPD/check.err" ||
  fail "--check-config without credentials: $(cat "$TMPD/check.err")"
since=$(cin date '+%Y-%m-%d %H:%M:%S')
sleep 1 # the journal's --since has whole seconds
cin systemctl reload brid || fail "systemctl reload brid"
reloaded() { cin journalctl -u brid --since "$since" -o cat | grep -q "configuration reloaded: .*\"roots\""; }
wait_until 15 reloaded || fail "no reload in the journal: $(cin journalctl -u brid --since "$since" -o cat)"
[ "$(cin systemctl is-active brid)" = active ] || fail "brid is not active after the reload"
echo "ok reload applied: $(cin journalctl -u brid --since "$since" -o cat | grep -o 'configuration reloaded.*' | cut -c1-160)"

# ------------------------------------------------------------ tables, compacted by the service
as_app "node '$INTEROP_DIR/lance_make.mjs' --out '$ROOT/srv/lance' --tables blobs --blob-batches 3:mixed" >/dev/null ||
  fail "LanceDB as lanceapp could not write under /srv/lance"
as_app "node '$INTEROP_DIR/lance_make.mjs' --out '$ROOT/srv/apps' --tables blobs --blob-batches 3:mixed" >/dev/null ||
  fail "LanceDB as lanceapp could not write under /srv/apps"
make_tables "$P" --tables blobs --small --blob-batches 3:mixed >/dev/null || fail "LanceDB could not write $P"
for t in /srv/lance/blobs.lance /srv/apps/blobs.lance; do
  as_app "node '$INTEROP_DIR/lance_read.mjs' '$ROOT$t' --json" >"$TMPD/before.$(basename "$(dirname "$t")").json"
done
lance_read "$P/blobs.lance" --json >"$TMPD/before.s3.json"
compacted() { # compacted TABLE: the id of a compact job brid finished on it
  cin brictl jobs --kind compact --state succeeded --table "$1" --json |
    jget 'd["jobs"][0]["id"] if d["jobs"] else exit(1)' 2>/dev/null
}
same() { json_eq "$1" "$2" --ignore version,fragments,ms,table,fragmentRows,schemaFields,descriptorKinds,deletionFiles; }
for t in /srv/lance/blobs.lance /srv/apps/blobs.lance "$P/blobs.lance"; do
  wait_until 60 compacted "$t" >/dev/null || fail "the service did not compact $t: $(cin brictl jobs --json | head -c 1500)"
done
J=$(compacted /srv/lance/blobs.lance)
cin brictl job "$J" --json >"$TMPD/job.json"
# (the service may have begun while LanceDB still wrote: its last job merged what was there)
[ "$(jget 'd["result"]["fragments_before"] >= 2 and d["result"]["fragments_after"] == 1' <"$TMPD/job.json")" = True ] ||
  fail "job $J: $(jget 'd["result"]' <"$TMPD/job.json")"
echo "ok the service compacted /srv/lance, /srv/apps and $P by itself (job $J:" \
  "$(jget 'd["result"]["fragments_before"]' <"$TMPD/job.json") -> 1 fragments)"

# the table's user reads, appends, reads; brid's files carry the directory's group
for t in /srv/lance/blobs.lance /srv/apps/blobs.lance; do
  d=$(basename "$(dirname "$t")") group=$([ "$d" = lance ] && echo brid || echo lanceapp)
  bad=$(cin find "$t" -user brid ! -group "$group" | head -3)
  [ -z "$bad" ] || fail "files brid wrote into $t are not group $group: $(cin ls -ln $bad)"
  [ -n "$(cin find "$t" -user brid -type f | head -1)" ] || fail "brid wrote no file into $t"
  unreadable=$(as_app "find '$ROOT$t' ! -readable" | head -3)
  [ -z "$unreadable" ] || fail "lanceapp cannot read what brid wrote: $(ls -ln $unreadable)"
  as_app "node '$INTEROP_DIR/lance_read.mjs' '$ROOT$t' --json" >"$TMPD/after.$d.json" 2>"$TMPD/r.err" ||
    fail "LanceDB as lanceapp cannot read $t after the compaction: $(cat "$TMPD/r.err")"
  same "$TMPD/before.$d.json" "$TMPD/after.$d.json" || fail "LanceDB reads other values in $t after the compaction"
  rows=$(jget 'd["rows"]' <"$TMPD/after.$d.json")
  as_app "node '$INTEROP_DIR/lance_ops.mjs' '$ROOT$t' append 3" >"$TMPD/append.json" 2>"$TMPD/a.err" ||
    fail "LanceDB as lanceapp cannot append to $t: $(cat "$TMPD/a.err")"
  total=$(jget 'd["rows"]' <"$TMPD/append.json")
  [ "$total" -gt "$rows" ] || fail "$t: $total rows after the append, $rows before"
  echo "ok $t: brid's files are group $group; lanceapp read the same values and appended ($rows -> $total rows)"
done
lance_read "$P/blobs.lance" --json >"$TMPD/after.s3.json"
same "$TMPD/before.s3.json" "$TMPD/after.s3.json" || fail "LanceDB reads other values in $P/blobs.lance"
cin systemctl show -p Environment --value brid | grep -q AWS_ && fail "brid's unit has AWS_ variables"
echo "ok $P/blobs.lance compacted with the secret from the credential; LanceDB reads the same values"

# ------------------------------------------------------------ the journal
cin journalctl -u brid -o json --no-pager >"$TMPD/journal.json"
python3 - "$TMPD/journal.json" "$J" <<'EOF' || fail "the journal lacks brid's fields"
import json, sys
job = sys.argv[2]
es = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
mine = [e for e in es if e.get("SYSLOG_IDENTIFIER") == "brid"]
assert mine, "no entry with SYSLOG_IDENTIFIER=brid"
assert any(" ready: " in e["MESSAGE"] for e in mine), "no ready entry"
done = [e for e in mine if e.get("BRID_JOB_ID") == job and e["MESSAGE"].startswith("job %s: compacted" % job)]
assert done, "no entry BRID_JOB_ID=%s for the compaction" % job
assert done[0]["PRIORITY"] == "5", "the compaction's entry has PRIORITY=%s" % done[0]["PRIORITY"]
assert all("PRIORITY" in e for e in mine)
assert not any(e["MESSAGE"].startswith("<") for e in mine), "a prefixed line went to the journal as text"
print("ok journal: %d entries of brid, job %s's with BRID_JOB_ID= and PRIORITY=5; priorities %s" %
      (len(mine), job, sorted({e["PRIORITY"] for e in mine})))
EOF

# ------------------------------------------------------------ the sandbox
MAIN=$(cin systemctl show -p MainPID --value brid)
GROUPS_OF_MAIN=$(cin awk '/^Groups:/ {$1 = ""; print}' "/proc/$MAIN/status" | xargs | tr ' ' ,)
probe() { # probe USER DIR: USER (with brid's groups) writes a file in DIR from brid's mount namespace
  cin nsenter -t "$MAIN" -m -- setpriv --reuid="$1" --regid="$1" --groups="$GROUPS_OF_MAIN" \
    sh -c "echo x >'$2/.brid-probe' && rm -f '$2/.brid-probe' && echo written" 2>&1 | tail -1 || true
}
for d in /etc /usr /var/log /var/lib /home /root /srv /boot; do
  r=$(probe root "$d")
  case $r in *"Read-only file system"* | *"Permission denied"*) ;; *) fail "root in brid's namespace could write $d: $r" ;; esac
done
r=$(probe brid /var/opt/brid-probe)
case $r in *"Read-only file system"*) ;; *) fail "brid could write its own /var/opt/brid-probe outside ReadWritePaths: $r" ;; esac
for d in /srv/lance /srv/apps /var/lib/brid; do
  [ "$(probe brid "$d")" = written ] || fail "brid cannot write its ReadWritePaths $d: $(probe brid "$d")"
done
cin nsenter -t "$MAIN" -m -- sh -c 'echo x >/tmp/brid-private-probe' || fail "no /tmp in brid's namespace"
[ ! -e "$ROOT/tmp/brid-private-probe" ] || fail "brid's /tmp is the system's"
echo "ok sandbox: /etc /usr /var/log /var/lib /home /root /srv /boot read-only even to root, brid's own" \
  "/var/opt/brid-probe read-only, /srv/lance /srv/apps /var/lib/brid writable, /tmp private"

# ------------------------------------------------------------ stop drains a running job
cat >"$ROOT/etc/systemd/system/brid.service.d/slow.conf" <<EOF
[Service]
Environment=BRI_FAILPOINTS=compact.after_rows=delay:1500
EOF
cin sed -i 's|^#batch_rows = 0$|batch_rows = 1|' /etc/brid/brid.conf
cin sed -i 's|^debounce = 1s$|debounce = 1h|' /etc/brid/brid.conf # the test starts this job itself
cin systemctl daemon-reload
cin systemctl restart brid
MAIN=$(cin systemctl show -p MainPID --value brid)
cin journalctl _PID="$MAIN" -o cat | grep -q "failpoints armed (BRI_FAILPOINTS=compact.after_rows=delay:1500)" ||
  fail "the drop-in's Environment= did not reach brid: $(cin journalctl _PID="$MAIN" -o cat | head -5)"
grep -qx 'batch_rows = 1' "$ROOT/etc/brid/brid.conf" || fail "could not set batch_rows = 1 in brid.conf"
# fragments for the job to merge: a second and a half after each (its rows are
# copied a fragment at a time), so that it runs for seconds, long enough for a
# loaded machine's polls below to see it running
for _ in 1 2 3; do
  as_app "node '$INTEROP_DIR/lance_ops.mjs' '$ROOT/srv/lance/blobs.lance' append 3" >/dev/null || fail "append as lanceapp"
done
K=$(cin brictl compact --daemon /srv/lance/blobs.lance --json | jget 'd["job"]')
running() { cin brictl job "$K" --json | grep -q '"rows_done": [1-9]'; }
wait_until 30 running || fail "job $K did not start: $(cin brictl job "$K" --json)"
OLD=$(cin systemctl show -p MainPID --value brid)
cin systemctl stop brid
[ "$(cin systemctl show -p ExecMainStatus --value brid)" = 0 ] && [ "$(cin systemctl show -p Result --value brid)" = success ] ||
  fail "brid did not stop cleanly: $(cin systemctl show -p ExecMainStatus -p Result brid)"
cin journalctl _PID="$OLD" -o cat >"$TMPD/stop.log"
grep -q "stopping: 1 job(s) running; waiting for them" "$TMPD/stop.log" || fail "no drain: $(tail -5 "$TMPD/stop.log")"
grep -q "job $K: compacted" "$TMPD/stop.log" || fail "job $K did not finish during the stop: $(tail -5 "$TMPD/stop.log")"
echo "ok systemctl stop drained job $K (it finished, brid exited 0)"
rm "$ROOT/etc/systemd/system/brid.service.d/slow.conf"
cin systemctl daemon-reload

# ------------------------------------------------------------ remove, purge
cin apt-get remove -y brid >"$TMPD/remove.log" 2>&1 || fail "apt-get remove: $(tail "$TMPD/remove.log")"
[ "$(cin systemctl is-active brid)" != active ] || fail "brid is still active after apt-get remove"
for f in /usr/bin/brid /usr/bin/brictl /lib/systemd/system/brid.service; do
  [ ! -e "$ROOT$f" ] || fail "apt-get remove left $f"
done
[ -f "$ROOT/etc/brid/brid.conf" ] && [ -d "$ROOT/var/lib/brid" ] && cin getent passwd brid >/dev/null ||
  fail "apt-get remove took the configuration, the state or the user"
echo "ok apt-get remove: stopped, binaries gone; configuration, state and user kept"
# what the administrator and the application added is theirs to remove
rm -rf "$ROOT/etc/systemd/system/brid.service.d" "$ROOT/etc/brid/s3.secret" "$ROOT/srv/lance/blobs.lance" \
  "$ROOT/srv/apps" "$ROOT/var/opt/brid-probe"
cin userdel lanceapp
cin apt-get purge -y brid >"$TMPD/purge.log" 2>&1 || fail "apt-get purge: $(tail "$TMPD/purge.log")"
cin dpkg-query -W -f='${Status}\n' brid 2>/dev/null | grep -q installed && fail "brid is still known to dpkg"
# every path of the package is gone, but directories shared with other packages
left=$(while read -r f; do
  [ -e "$ROOT$f" ] || [ -L "$ROOT$f" ] || continue
  [ "$f" = /. ] && continue
  [ -d "$ROOT$f" ] && { [ -n "$(ls -A "$ROOT$f")" ] || cin dpkg-query -S "$f" >/dev/null 2>&1; } && continue
  echo "$f"
done <"$TMPD/files")
[ -z "$left" ] || fail "purge left files of the package: $left"
for d in /etc/brid /var/lib/brid /run/brid /srv/lance; do [ ! -e "$ROOT$d" ] || fail "purge left $d"; done
cin getent passwd brid >/dev/null && fail "purge left the user brid"
cin getent group brid >/dev/null && fail "purge left the group brid"
orphans=$(cin find / -xdev \( -nouser -o -nogroup \) -print 2>/dev/null | head -5)
[ -z "$orphans" ] || fail "purge left files of no user or group: $orphans"
links=$(cin find /etc/systemd /var/lib/systemd -name '*brid*' 2>/dev/null | head -5)
[ -z "$links" ] || fail "purge left systemd state: $links"
echo "ok apt-get purge: no file, user, group, directory or unit link of brid left"
pass
