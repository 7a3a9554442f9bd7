#!/usr/bin/env bash
# DAEMON HTTP: brid's HTTP listener (metrics_listen, --metrics-listen) as
# Prometheus and Kubernetes probes use it, on free ports (port 0: brid logs
# the port it bound).
#  - off unless configured: a brid without metrics_listen listens on no TCP
#    port (/proc/net/tcp{,6} against brid's socket inodes); status shows the
#    address bound (port 0 resolved), null when off;
#  - GET /metrics: 200, Content-Type text/plain; version=0.0.4, the families
#    `brictl metrics` prints, passing `promtool check metrics`; HEAD: the
#    same status and type, no body;
#  - GET /healthz 200 "ok"; GET /readyz 200 "ready", and 503 naming the root
#    while a root cannot be read, 200 again once it can;
#  - POST, PUT, DELETE: 405 with Allow: GET, HEAD, and nothing changes (a
#    JSON-RPC pause sent as a POST body pauses nothing); other paths 404;
#  - a kept-alive connection serves several requests;
#  - the fallbacks (timing failpoints): a render that takes 8 s makes a
#    request wait 2 s and get the previous snapshot, the next one not wait,
#    /readyz 503 (stale), /healthz 200; a loop stuck for 4 s makes /healthz
#    503 after 2 s, and 200 once it turns;
#  - draining (SIGTERM while a job runs): /readyz 503 "draining", /metrics
#    still 200;
#  - IPv6: [::1]:0;
#  - the key and the flag: --check-config shows the address, the flag wins
#    over the file, "off" turns the file's listener off, bad values exit 78
#    naming the setting and what is wrong, an address in use exits 1 naming
#    it;
#  - contrib/grafana/brid.json: every brid_* name its PromQL queries is a
#    family of a real scrape and is listed in docs/metrics.md, and every
#    query parses (promtool check rules, Grafana's variables filled in).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
SRC=${BRI_SOURCE_DIR:-$REPO}
command -v promtool >/dev/null || fail "promtool is missing (scripts/deps.sh installs package prometheus)"

mkdir -p "$TMPD/root"
"$BRICTL" gen "$TMPD/root/t.lance" --rows 10 >/dev/null

# http METHOD URL [BODY] [HEADER...]: prints "STATUS\n<headers as JSON>\n<body>"
# (one request; keep-alive checked below)
http() {
  python3 - "$@" <<'EOF'
import http.client, json, sys, urllib.parse
method, url = sys.argv[1], sys.argv[2]
body = sys.argv[3].encode() if len(sys.argv) > 3 and sys.argv[3] else None
u = urllib.parse.urlsplit(url)
c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
c.request(method, u.path, body=body)
r = c.getresponse()
data = r.read()
print(r.status)
print(json.dumps({k.lower(): v for k, v in r.getheaders()}))
sys.stdout.write(data.decode())
EOF
}
status_of() { head -1 <<<"$1"; }
header_of() { sed -n 2p <<<"$1" | jget "d.get('$2', '')"; }
body_of() { tail -n +3 <<<"$1"; }

# inodes of the TCP sockets brid listens on
tcp_listening() {
  python3 - "$1" <<'EOF'
import os, sys
pid = sys.argv[1]
inodes = set()
for fd in os.listdir("/proc/%s/fd" % pid):
    try:
        t = os.readlink("/proc/%s/fd/%s" % (pid, fd))
    except OSError:
        continue
    if t.startswith("socket:["):
        inodes.add(t[8:-1])
n = 0
for f in ("/proc/net/tcp", "/proc/net/tcp6"):
    for line in open(f).readlines()[1:]:
        x = line.split()
        if x[3] == "0A" and x[9] in inodes:
            n += 1
print(n)
EOF
}

# ---------------------------------------------------------------- off by default
brid_start off --root "$TMPD/root"
[ "$(tcp_listening "$BRID_PID")" = 0 ] || fail "brid without metrics_listen listens on a TCP port"
log_has "http: serving" && fail "brid without metrics_listen logged an HTTP listener"
[ "$(ctl status --json | jget 'd["metrics_listen"]')" = None ] || fail "status: metrics_listen is not null when off"
brid_stop
echo "ok no TCP listener unless configured"

# ---------------------------------------------------------------- the endpoints
brid_start on --root "$TMPD/root" --metrics-listen 127.0.0.1:0
ADDR=$(brid_http_addr)
[[ $ADDR =~ ^127\.0\.0\.1:[0-9]+$ ]] && [ "${ADDR#*:}" != 0 ] || fail "no bound address logged: '$ADDR'"
[ "$(tcp_listening "$BRID_PID")" = 1 ] || fail "brid does not listen on exactly one TCP port"
[ "$(ctl status --json | jget 'd["metrics_listen"]')" = "$ADDR" ] || fail "status does not show $ADDR"
URL=http://$ADDR

r=$(http GET "$URL/metrics")
[ "$(status_of "$r")" = 200 ] || fail "GET /metrics: $(status_of "$r")"
ct=$(header_of "$r" content-type)
[[ $ct == "text/plain; version=0.0.4"* ]] || fail "GET /metrics: Content-Type $ct"
body_of "$r" >"$TMPD/scrape.txt"
promtool check metrics <"$TMPD/scrape.txt" >"$TMPD/promtool.out" 2>&1 ||
  fail "promtool check metrics: $(cat "$TMPD/promtool.out")"
[ ! -s "$TMPD/promtool.out" ] || fail "promtool check metrics complains: $(cat "$TMPD/promtool.out")"
ctl metrics >"$TMPD/ctl.txt"
families() { sed -n 's/^# TYPE \([a-z_]*\) \([a-z]*\)$/\1 \2/p' "$1"; }
[ "$(families "$TMPD/scrape.txt")" = "$(families "$TMPD/ctl.txt")" ] ||
  fail "/metrics and brictl metrics differ in their families: $(diff <(families "$TMPD/scrape.txt") <(families "$TMPD/ctl.txt"))"
[ "$(families "$TMPD/scrape.txt" | wc -l)" -ge 20 ] || fail "/metrics has too few families"
grep -q '^brid_tables 1$' "$TMPD/scrape.txt" || fail "/metrics: brid_tables is not 1: $(grep '^brid_tables ' "$TMPD/scrape.txt")"
# the snapshot follows brid's state: a table created now is counted within a few seconds
"$BRICTL" gen "$TMPD/root/u.lance" --rows 10 >/dev/null
two_tables() { http GET "$URL/metrics" | grep -q '^brid_tables 2$'; }
wait_until 20 two_tables || fail "/metrics never counted the new table"
echo "ok GET /metrics: $ct, $(families "$TMPD/scrape.txt" | wc -l) families, promtool check metrics clean"
# after a compaction the job families have samples, and promtool still has nothing to say
# (copied with fresh dates, as a table just written has: brid's own first
# check of it then waits for the debounce, and does not queue a second
# compaction while the requested one runs)
cp -r "$BRI_SOURCE_DIR/tests/fixtures/tables/blobs.lance" "$TMPD/root/c.lance"
C=$(realpath "$TMPD/root/c.lance")
ctl compact "$C" --wait >/dev/null 2>&1 || fail "compact --wait"
jobs_counted() {
  http GET "$URL/metrics" >"$TMPD/scrape2.txt"
  grep -qF "brid_jobs_finished_total{table=\"$C\",kind=\"compact\",outcome=\"succeeded\"} 1" "$TMPD/scrape2.txt"
}
wait_until 5 jobs_counted || fail "/metrics does not count the compaction: $(grep finished_total "$TMPD/scrape2.txt")"
body_of "$(cat "$TMPD/scrape2.txt")" >"$TMPD/scrape2.prom"
promtool check metrics <"$TMPD/scrape2.prom" >"$TMPD/promtool2.out" 2>&1 && [ ! -s "$TMPD/promtool2.out" ] ||
  fail "promtool check metrics after a compaction: $(cat "$TMPD/promtool2.out")"
echo "ok after a compaction: $(grep -vc '^#' "$TMPD/scrape2.prom") samples, promtool check metrics clean"

r=$(http HEAD "$URL/metrics")
[ "$(status_of "$r")" = 200 ] && [ -z "$(body_of "$r")" ] || fail "HEAD /metrics: $r"
[[ $(header_of "$r" content-type) == "text/plain; version=0.0.4"* ]] || fail "HEAD /metrics: type"
r=$(http GET "$URL/healthz")
[ "$(status_of "$r")" = 200 ] && [ "$(body_of "$r")" = ok ] || fail "GET /healthz: $r"
r=$(http GET "$URL/readyz")
[ "$(status_of "$r")" = 200 ] && [ "$(body_of "$r")" = ready ] || fail "GET /readyz: $r"
echo "ok HEAD /metrics, /healthz, /readyz"

# readiness follows the roots (a snapshot lives 1 s)
mv "$TMPD/root" "$TMPD/root.away"
sleep 1.1
r=$(http GET "$URL/readyz")
[ "$(status_of "$r")" = 503 ] || fail "GET /readyz with the root gone: $(status_of "$r")"
why=$(body_of "$r")
grep -q "^root $TMPD/root: .*No such file or directory" <<<"$why" || fail "/readyz body: $why"
[ "$(status_of "$(http GET "$URL/healthz")")" = 200 ] || fail "/healthz failed with the root gone"
mv "$TMPD/root.away" "$TMPD/root"
back() { r=$(http GET "$URL/readyz") && [ "$(status_of "$r")" = 200 ]; }
wait_until 5 back || fail "GET /readyz with the root back: $r"
echo "ok /readyz 503 while a root is missing ($(tr '\n' ' ' <<<"$why")), 200 after"

# read-only: other methods 405, nothing changes
brid_state() {
  { ctl tables --json | jget '[(t["root"], t["paused"]) for t in d["tables"]]'
    ctl jobs --json | jget 'len(d["jobs"])'; }
}
before=$(brid_state)
for m in POST PUT DELETE PATCH; do
  r=$(http "$m" "$URL/metrics" '{"jsonrpc":"2.0","id":1,"method":"pause","params":{"table":"'"$TMPD/root/t.lance"'"}}')
  [ "$(status_of "$r")" = 405 ] || fail "$m /metrics: $(status_of "$r")"
  [ "$(header_of "$r" allow)" = "GET, HEAD" ] || fail "$m /metrics: Allow $(header_of "$r" allow)"
done
for p in / /metrics/ /metrics.txt /api /readyz/x; do
  r=$(http GET "$URL$p")
  [ "$(status_of "$r")" = 404 ] || fail "GET $p: $(status_of "$r")"
done
grep -q "brid serves /metrics, /healthz and /readyz" <<<"$(body_of "$r")" || fail "404 body: $(body_of "$r")"
after=$(brid_state)
[ "$before" = "$after" ] || fail "HTTP requests changed brid's tables or jobs: $before -> $after"
grep -q false <<<"$after" && ! grep -q true <<<"$after" || fail "a table is paused: $after"
echo "ok other methods 405 (Allow: GET, HEAD), other paths 404, nothing changed"

# keep-alive: three requests on one connection
python3 - "$ADDR" <<'EOF' || fail "keep-alive"
import http.client, sys
host, port = sys.argv[1].rsplit(":", 1)
c = http.client.HTTPConnection(host, int(port), timeout=10)
socks = set()
for p in ("/healthz", "/metrics", "/readyz"):
    c.request("GET", p)
    r = c.getresponse()
    r.read()
    assert r.status == 200, (p, r.status)
    socks.add(id(c.sock))
assert len(socks) == 1 and c.sock is not None, "the connection was not kept alive"
EOF
echo "ok keep-alive"

# the Grafana dashboard queries only metrics brid exports and documents
python3 - "$SRC/contrib/grafana/brid.json" "$TMPD/scrape.txt" "$SRC/docs/metrics.md" "$TMPD/dashboard.rules.json" \
  <<'EOF' || fail "contrib/grafana/brid.json"
import json, re, sys
dash = json.load(open(sys.argv[1]))
exported = set(re.findall(r"^# TYPE (brid_[a-z_]+) ", open(sys.argv[2]).read(), re.M))
documented = set(re.findall(r"^\| `(brid_[a-z_]+)`", open(sys.argv[3]).read(), re.M))
exprs = []
def walk(o):
    if isinstance(o, dict):
        for k, v in o.items():
            if k in ("expr", "query", "definition") and isinstance(v, str):
                exprs.append(v)
            else:
                walk(v)
    elif isinstance(o, list):
        for v in o:
            walk(v)
walk(dash)
names = set()
for e in exprs:
    names |= set(re.findall(r"\b(brid_[a-z_]+)\b", e))
bad = False
if len(exprs) < 20 or len(names) < 20:
    print("too few queries (%d) or metrics (%d) found" % (len(exprs), len(names))); bad = True
for n in sorted(names - exported):
    print("queries %s, which a scrape of brid does not have" % n); bad = True
for n in sorted(names - documented):
    print("queries %s, which docs/metrics.md does not list" % n); bad = True
print("  dashboard: %d queries over %d brid metrics" % (len(exprs), len(names)))
# every query as a recording rule, Grafana's variables filled in, for promtool
rules = [{"record": "dashboard:query%d" % i,
          "expr": e.replace("$__rate_interval", "5m").replace("$job", ".*").replace("$instance", ".*")}
         for i, e in enumerate(x for x in exprs if not x.startswith("label_values("))]
json.dump({"groups": [{"name": "dashboard", "rules": rules}]}, open(sys.argv[4], "w"))
sys.exit(1 if bad else 0)
EOF
promtool check rules "$TMPD/dashboard.rules.json" >"$TMPD/rules.out" 2>&1 ||
  fail "a query of contrib/grafana/brid.json is not PromQL: $(cat "$TMPD/rules.out")"
grep -q "SUCCESS: [0-9]* rules found" "$TMPD/rules.out" || fail "promtool check rules: $(cat "$TMPD/rules.out")"
echo "ok contrib/grafana/brid.json queries exported, documented metrics, in PromQL promtool parses ($(grep -o '[0-9]* rules' "$TMPD/rules.out"))"
brid_stop || fail "brid exited non-zero"

# ---------------------------------------------------------------- the fallbacks
# timed GET: prints "STATUS SECONDS" then the body
tget() {
  python3 - "$1" <<'EOF'
import http.client, sys, time, urllib.parse
u = urllib.parse.urlsplit(sys.argv[1])
t = time.monotonic()
c = http.client.HTTPConnection(u.hostname, u.port, timeout=20)
c.request("GET", u.path)
r = c.getresponse()
b = r.read().decode()
print(r.status, "%.2f" % (time.monotonic() - t))
sys.stdout.write(b)
EOF
}
between() { python3 -c "import sys; sys.exit(not $1 <= $2 < $3)"; }
# a render that takes 8 s (libuv's pool busy): a request waits 2 s, then gets
# the previous snapshot; the next does not wait again; /readyz does not trust
# a snapshot that old; /healthz is fine (the loop turns); then all is fresh
BRI_FAILPOINTS=http.render=delay:8000@2 brid_start slowrender --root "$TMPD/root" --metrics-listen 127.0.0.1:0
URL=http://$(brid_http_addr)
r=$(tget "$URL/metrics")
[[ $(head -1 <<<"$r") == "200 "* ]] || fail "first GET /metrics: $(head -1 <<<"$r")"
sleep 1.2
r=$(tget "$URL/metrics")
read -r st secs <<<"$(head -1 <<<"$r")"
[ "$st" = 200 ] && between 1.8 "$secs" 3.5 ||
  fail "GET /metrics during a slow render: $st after $secs s (expected 200 after about 2 s)"
grep -q '^brid_info' <<<"$r" || fail "the previous snapshot was not served"
read -r st2 secs2 <<<"$(tget "$URL/metrics" | sed -n 1p)"
[ "$st2" = 200 ] && between 0 "$secs2" 0.5 ||
  fail "GET /metrics while the ask is overdue: $st2 after $secs2 s (expected 200 at once)"
sleep 0.3
r=$(tget "$URL/readyz")
[[ $(head -1 <<<"$r") == "503 "* ]] || fail "GET /readyz with a stale snapshot: $(head -1 <<<"$r")"
grep -q "not ready: brid's loop or its job store has not answered for [0-9]* s; ready as of then" <<<"$r" ||
  fail "/readyz with a stale snapshot: $r"
[[ $(tget "$URL/healthz" | sed -n 1p) == "200 "* ]] || fail "GET /healthz during a slow render"
ready() { [[ $(tget "$URL/readyz" | sed -n 1p) == "200 "* ]]; }
wait_until 15 ready || fail "GET /readyz after the slow render: $(tget "$URL/readyz")"
brid_stop || fail "brid (slow render) exited non-zero"
echo "ok a slow render: waited $secs s, then the previous snapshot; the next at once ($secs2 s); /readyz 503 meanwhile"

# a stuck loop (4 s on the loop thread): /healthz answers 503 after 2 s
BRI_FAILPOINTS=http.loop_answer=delay:4000@2 brid_start stuck --root "$TMPD/root" --metrics-listen 127.0.0.1:0
URL=http://$(brid_http_addr)
sleep 1.2
[[ $(tget "$URL/healthz" | sed -n 1p) == "200 "* ]] || fail "first GET /healthz"
sleep 1.2
r=$(tget "$URL/healthz")
read -r st secs <<<"$(head -1 <<<"$r")"
[ "$st" = 503 ] && grep -q "brid's event loop has not answered for [0-9]* ms" <<<"$r" ||
  fail "GET /healthz with the loop stuck: $r"
between 1.8 "$secs" 3.5 || fail "GET /healthz with the loop stuck took $secs s"
healthy() { [[ $(tget "$URL/healthz" | sed -n 1p) == "200 "* ]]; }
wait_until 10 healthy || fail "/healthz did not recover after the loop did"
brid_stop || fail "brid (stuck loop) exited non-zero"
echo "ok a stuck loop: /healthz 503 after $secs s ($(tail -n +2 <<<"$r")), 200 once it turns again"

# draining: /readyz 503 "draining" while running jobs finish, /metrics still served
cp -a "$BRI_SOURCE_DIR/tests/fixtures/tables/blobs.lance" "$TMPD/root/d.lance"
printf '[daemon]\nroot = %s\nmetrics_listen = 127.0.0.1:0\n[defaults]\nbatch_rows = 1\nauto_compact = no\ncleanup_interval = 0\n' \
  "$TMPD/root" >"$TMPD/drain.conf"
BRI_FAILPOINTS=compact.after_rows=delay:1500 brid_start drain --config "$TMPD/drain.conf"
URL=http://$(brid_http_addr)
J=$(ctl compact "$TMPD/root/d.lance" --json | jget 'd["job"]')
job_running() { ctl job "$J" --json | grep -q '"rows_done": [1-9]'; }
wait_until 10 job_running || fail "job $J did not start"
kill -TERM "$BRID_PID"
wait_until 10 log_has "stopping: 1 job\\(s\\) running" || fail "no drain"
draining() { tget "$URL/readyz" | grep -q "^draining: brid is stopping"; }
wait_until 4 draining || fail "/readyz while draining: $(tget "$URL/readyz")"
[[ $(tget "$URL/readyz" | sed -n 1p) == "503 "* ]] || fail "/readyz while draining is not 503"
[[ $(tget "$URL/metrics" | sed -n 1p) == "200 "* ]] || fail "/metrics while draining"
brid_wait || fail "brid exited non-zero after draining"
log_has "job $J: compacted" || fail "the job did not finish during the drain"
echo "ok draining: /readyz 503 (draining), /metrics 200, then brid exits 0"

# ---------------------------------------------------------------- IPv6
if python3 -c 'import socket; s=socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null; then
  brid_start v6 --root "$TMPD/root" --metrics-listen '[::1]:0'
  ADDR=$(brid_http_addr)
  [[ $ADDR =~ ^\[::1\]:[0-9]+$ ]] || fail "IPv6: bound address '$ADDR'"
  r=$(http GET "http://$ADDR/metrics")
  [ "$(status_of "$r")" = 200 ] || fail "IPv6 GET /metrics: $(status_of "$r")"
  brid_stop
  echo "ok IPv6 ($ADDR)"
else
  echo "ok IPv6 not available here: not checked"
fi

# ---------------------------------------------------------------- the key and the flag
printf '[daemon]\nroot = %s\nmetrics_listen = 127.0.0.1:0\n' "$TMPD/root" >"$TMPD/on.conf"
"$BRID" --config "$TMPD/on.conf" --check-config 2>/dev/null | jget 'd["metrics_listen"]' >"$TMPD/v" &&
  [ "$(cat "$TMPD/v")" = 127.0.0.1:0 ] || fail "--check-config metrics_listen: $(cat "$TMPD/v")"
[ "$("$BRID" --config "$TMPD/on.conf" --metrics-listen off --check-config 2>/dev/null | jget 'd["metrics_listen"]')" = None ] ||
  fail "--metrics-listen off did not turn the file's listener off"
[ "$("$BRID" --root "$TMPD/root" --check-config 2>/dev/null | jget 'd["metrics_listen"]')" = None ] ||
  fail "metrics_listen is not off by default"
brid_start flagwins --config "$TMPD/on.conf" --metrics-listen off
log_has "http: serving" && fail "--metrics-listen off: brid still serves HTTP"
brid_stop
check_bad() { # check_bad EXPECTED-MESSAGE ARGS...
  local want=$1 rc=0; shift
  "$BRID" "$@" --check-config >/dev/null 2>"$TMPD/bad.err" || rc=$?
  [ $rc = 78 ] || fail "brid $* exited $rc, expected 78"
  grep -qF -- "$want" "$TMPD/bad.err" || fail "brid $*: message $(cat "$TMPD/bad.err"), expected '$want'"
}
check_bad '--metrics-listen: "localhost:9851" is not a numeric IPv4 address' --root "$TMPD/root" --metrics-listen localhost:9851
check_bad '--metrics-listen: "127.0.0.1:65536" is not ADDRESS:PORT' --root "$TMPD/root" --metrics-listen 127.0.0.1:65536
check_bad '--metrics-listen: "9851" is not ADDRESS:PORT' --root "$TMPD/root" --metrics-listen 9851
check_bad '"[::1:9851" is not a numeric IPv4 address and port (e.g. 127.0.0.1:9851; IPv6 in brackets' --root "$TMPD/root" --metrics-listen '[::1:9851'
check_bad 'is not a numeric IPv6 address' --root "$TMPD/root" --metrics-listen '[::g]:9851'
printf '[daemon]\nroot = %s\nmetrics_listen = 127.0.0.1\n' "$TMPD/root" >"$TMPD/bad.conf"
check_bad "$TMPD/bad.conf:3: [daemon] metrics_listen: \"127.0.0.1\" is not ADDRESS:PORT" --config "$TMPD/bad.conf"
echo "ok metrics_listen and --metrics-listen: shown, overridden, turned off, bad values refused (78)"

# an address in use: brid does not start, and says which
python3 -c 'import socket,sys,time
s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(1); print(s.getsockname()[1], flush=True); sys.stdin.read()' \
  >"$TMPD/busy.port" < <(sleep 20) &
HOLDER=$!
wait_until 5 test -s "$TMPD/busy.port" || fail "no port held"
BUSY=$(cat "$TMPD/busy.port")
rc=0
"$BRID" --root "$TMPD/root" --socket "$TMPD/busy.sock" --state "$TMPD/busy.db" --metrics-listen "127.0.0.1:$BUSY" \
  2>"$TMPD/busy.log" || rc=$?
kill "$HOLDER" 2>/dev/null || true
[ $rc = 1 ] || fail "brid with its metrics address in use exited $rc"
grep -qF "metrics_listen 127.0.0.1:$BUSY: cannot listen there: Address already in use" "$TMPD/busy.log" ||
  fail "address in use: $(cat "$TMPD/busy.log")"
[ ! -e "$TMPD/busy.sock" ] || fail "brid left its control socket behind"
echo "ok an address in use stops start-up (exit 1) and is named"
pass
