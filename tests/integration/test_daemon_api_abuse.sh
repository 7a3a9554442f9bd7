#!/usr/bin/env bash
# DAEMON API ABUSE: brid's control socket keeps serving a well-behaved client
# while other peers misbehave. A "good client" process connects, asks for
# status and disconnects every 50 ms (retrying on a "busy" refusal); under
# every abuse below its replies must come within 1 s each (the maximum is
# printed) and none may fail:
#  - slow peers (at once): connections that send nothing, connections that
#    send one request and never read the reply, and slowloris connections
#    that send a request one byte every 250 ms; more of them than
#    max_connections. Each must be closed: by the busy refusal, by eviction
#    (a new connection takes the slot of the one stalled longest), by
#    idle_timeout, or by request_timeout (with a -32600 error), within the
#    timeout + 1.5 s; brid's fd count goes back to its baseline;
#  - 3000 connections at once: at most max_connections are held, the others
#    get the "too many connections" error or are closed, brid does not spin
#    (CPU measured while they are held), and its fd count goes back down;
#  - a second brid with a low open-file limit (ulimit -n 64) and
#    max_connections above it, flooded with 300 connections: no busy loop on
#    EMFILE, refusals name the file descriptor shortage, the good client is
#    served, the fd count goes back down;
#  - invalid UTF-8 in the method, a parameter name, a string value and the
#    id, escaped lone surrogates and \u0000, raw NUL bytes inside and around
#    a line, CR LF endings: each a JSON-RPC parse error (ASCII, "jsonrpc"
#    2.0) or a normal reply, on one connection that stays open;
#  - deep nesting (100000 '[', 100000 nested objects in params, 1000 below
#    the parser's depth limit): clear errors, no stack overflow;
#  - a torrent of pipelined requests from a peer that never reads: brid
#    stops reading it (its RSS grows by less than 50 MiB; not checked under
#    AddressSanitizer, whose quarantine keeps freed memory) and closes it after
#    request_timeout; a torrent of notifications (no replies) does not
#    starve the good client.
# Assertions are on error codes and messages, brid's pid, /proc fd counts,
# CPU ticks, RSS and latencies.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

REQ_TO=2 IDLE_TO=3 MAXC=16
export REQ_TO IDLE_TO MAXC
mkdir -p "$TMPD/root"
cat >"$TMPD/abuse.conf" <<EOF
[daemon]
root = $TMPD/root
max_connections = $MAXC
max_request_bytes = 1M
request_timeout = ${REQ_TO}s
idle_timeout = ${IDLE_TO}s
EOF

cat >"$TMPD/abuse.py" <<'PYEOF'
import json, os, resource, select, socket, struct, subprocess, sys, threading, time

MODE, SOCK, PID = sys.argv[1], sys.argv[2], int(sys.argv[3])
REQ_TO, IDLE_TO, MAXC = float(os.environ["REQ_TO"]), float(os.environ["IDLE_TO"]), int(os.environ["MAXC"])
# AddressSanitizer's quarantine keeps freed memory resident: no RSS bound then
ASAN = os.environ.get("ABUSE_ASAN") == "1"
STATUS = b'{"jsonrpc":"2.0","id":1,"method":"status"}\n'
FAILED = []

def check(cond, msg):
    if not cond:
        FAILED.append(msg)
        print("  FAILED: " + msg, flush=True)

def expect_running(s, f, when):
    """status on connection s (replies read from f) says brid is running"""
    s.sendall(STATUS)
    r = json.loads(f.readline())
    check(r.get("result", {}).get("state") == "running", "status %s: %r" % (when, r))

def finish():
    check(alive(), "brid (pid %d) is not running" % PID)
    if FAILED:
        sys.exit(1)

def alive():
    try:
        with open("/proc/%d/stat" % PID) as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False

def nfds():
    return len(os.listdir("/proc/%d/fd" % PID))

def rss_kb():
    with open("/proc/%d/status" % PID) as f:
        for l in f:
            if l.startswith("VmRSS:"):
                return int(l.split()[1])

def cpu_s():
    with open("/proc/%d/stat" % PID) as f:
        x = f.read().rsplit(")", 1)[1].split()
    return (int(x[11]) + int(x[12])) / os.sysconf("SC_CLK_TCK")

def fds_back(base, secs=15.0):
    # returns as soon as they are back; brid may first have to work through
    # what a closed peer left in its socket (slow under AddressSanitizer)
    end = time.monotonic() + secs
    while time.monotonic() < end:
        n = nfds()
        if n <= base:
            return n
        time.sleep(0.05)
    return nfds()

def raise_nofile(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(n, hard), hard))

# ------------------------------------------------------------ good client
def probe_main():
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    lat, busy, errors = [], 0, []
    while not stop.is_set():
        t0 = time.monotonic()
        while True:
            if time.monotonic() - t0 > 5:
                errors.append("no status reply within 5 s")
                break
            try:
                s = connect()  # blocking, as brictl does
                try:
                    s.sendall(STATUS)
                except OSError:
                    pass  # refused at once: the reason is still there to read
                line = s.makefile("rb").readline()
                s.close()
            except OSError as e:
                errors.append("%s" % e)
                time.sleep(0.02)
                continue
            if not line:
                errors.append("EOF instead of a reply")
                time.sleep(0.02)
                continue
            r = json.loads(line)
            if r.get("error", {}).get("code") == -32005:
                busy += 1
                time.sleep(0.02)
                continue
            if r.get("result", {}).get("state") != "running":
                errors.append("unexpected reply %r" % line[:200])
            break
        lat.append(time.monotonic() - t0)
        time.sleep(0.05)
    print(json.dumps({"n": len(lat), "max_ms": round(max(lat or [0]) * 1000), "busy": busy, "errors": errors[:5],
                      "n_errors": len(errors)}), flush=True)

class Prober:
    def __init__(self):
        self.p = subprocess.Popen([sys.executable, __file__, "probe", SOCK, str(PID)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE)
    def stop(self, label):
        out, _ = self.p.communicate(b"stop", timeout=30)
        r = json.loads(out)
        print("  %s: good client: %d status replies, max latency %d ms, %d busy retries, %d errors %s" %
              (label, r["n"], r["max_ms"], r["busy"], r["n_errors"], r["errors"]), flush=True)
        check(r["n"] >= 5, "%s: the good client got only %d replies" % (label, r["n"]))
        check(r["max_ms"] < 1000, "%s: the good client waited %d ms for a status reply" % (label, r["max_ms"]))
        check(r["n_errors"] == 0, "%s: the good client saw errors: %s" % (label, r["errors"]))
        return r

def connect(timeout=5):
    # a blocking connect waits for room in the listen backlog (SO_SNDTIMEO
    # bounds it); Python's timeout mode would fail with EAGAIN instead
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", int(timeout), 0))
    s.connect(SOCK)
    s.settimeout(timeout)
    return s

def parse_lines(data):
    return [json.loads(l) for l in data.split(b"\n") if l.strip()]

# ------------------------------------------------------------ slow peers
def slow_main():
    base = nfds()
    pr = Prober()
    time.sleep(0.3)
    t0 = time.monotonic()
    conns = []  # dict(kind, sock, t, data, closed)
    for i in range(20):
        for kind in ("silent", "noread", "slowloris"):
            s = connect()
            c = {"kind": kind, "sock": s, "t": time.monotonic(), "data": b"", "closed": None, "sent": 0}
            if kind == "noread":
                try:
                    s.sendall(STATUS)
                except (BrokenPipeError, ConnectionResetError):
                    # brid refused (busy) and closed before the request went out
                    c["closed"] = time.monotonic()
            s.setblocking(False)
            conns.append(c)
    deadline = t0 + max(REQ_TO, IDLE_TO) + 4
    next_byte = time.monotonic()
    poller = select.poll()
    by_fd = {}
    for c in conns:
        if c["closed"] is not None:
            continue
        ev = select.POLLHUP if c["kind"] == "noread" else select.POLLIN
        poller.register(c["sock"], ev)
        by_fd[c["sock"].fileno()] = c
    peak = nfds()
    while time.monotonic() < deadline and any(c["closed"] is None for c in conns):
        now = time.monotonic()
        if now >= next_byte:
            next_byte = now + 0.25
            for c in conns:
                if c["kind"] == "slowloris" and c["closed"] is None and c["sent"] < len(STATUS):
                    try:
                        c["sock"].send(STATUS[c["sent"]:c["sent"] + 1])
                        c["sent"] += 1
                    except OSError:
                        c["closed"] = now
                        poller.unregister(c["sock"])
        for fd, ev in poller.poll(50):
            c = by_fd[fd]
            if c["closed"] is not None:
                continue
            if c["kind"] == "noread":
                c["closed"] = time.monotonic()
                poller.unregister(fd)
                continue
            try:
                d = c["sock"].recv(65536)
            except OSError:
                d = b""
            if d:
                c["data"] += d
            else:
                c["closed"] = time.monotonic()
                poller.unregister(fd)
        peak = max(peak, nfds())
    pr.stop("slow peers")
    for kind, limit in (("silent", IDLE_TO), ("noread", IDLE_TO), ("slowloris", REQ_TO)):
        cs = [c for c in conns if c["kind"] == kind]
        open_ = [c for c in cs if c["closed"] is None]
        life = [c["closed"] - c["t"] for c in cs if c["closed"] is not None]
        replies = [r for c in cs for r in parse_lines(c["data"])]
        busy = sum(1 for r in replies if r.get("error", {}).get("code") == -32005)
        tmo = [r for r in replies if r.get("error", {}).get("code") == -32600]
        print("  %-9s x%d: %d still open after %.1f s; closed after %.2f..%.2f s; %d busy refusals, "
              "%d request timeouts" % (kind, len(cs), len(open_), deadline - t0, min(life or [0]), max(life or [0]),
                                       busy, len(tmo)), flush=True)
        check(not open_, "%s: %d connections never closed by brid" % (kind, len(open_)))
        check(max(life or [0]) < limit + 1.5, "%s: a connection lived %.2f s (limit %.0f s)" %
              (kind, max(life or [0]), limit))
        if kind == "slowloris":
            check(len(tmo) > 0, "slowloris: no request_timeout error")
            for r in tmo:
                check("not completed within %.0f s" % REQ_TO in r["error"]["message"],
                      "slowloris: timeout message %r" % r["error"]["message"])
    for c in conns:
        c["sock"].close()
    after = fds_back(base)
    print("  brid fds: %d before, peak %d, %d after" % (base, peak, after), flush=True)
    check(peak <= base + MAXC + 4, "brid held %d fds over its baseline (max_connections %d)" % (peak - base, MAXC))
    check(after <= base, "brid fds did not go back to %d (%d)" % (base, after))
    finish()

# ------------------------------------------------------------ many connections
def flood_main():
    n = int(sys.argv[4])
    expect = sys.argv[5]  # the refusal message expected
    raise_nofile(n + 256)
    base = nfds()
    pr = Prober()
    time.sleep(0.3)
    socks, connect_err = [], []
    peak = base
    t0 = time.monotonic()
    for i in range(n):
        try:
            s = connect(5)
            s.setblocking(False)
            socks.append(s)
        except OSError as e:
            connect_err.append(str(e))
        if i % 100 == 0:
            peak = max(peak, nfds())
    t_conn = time.monotonic() - t0
    # while they are held: brid's CPU over 1 s, and what each got
    c0, w0 = cpu_s(), time.monotonic()
    data = {s.fileno(): b"" for s in socks}
    closed = set()
    poller = select.poll()
    for s in socks:
        poller.register(s, select.POLLIN)
    by_fd = {s.fileno(): s for s in socks}
    while time.monotonic() - w0 < 1.0:
        for fd, ev in poller.poll(50):
            try:
                d = by_fd[fd].recv(4096)
            except OSError:
                d = b""
            if d:
                data[fd] += d
            else:
                closed.add(fd)
                poller.unregister(fd)
        peak = max(peak, nfds())
    cpu = (cpu_s() - c0) / (time.monotonic() - w0)
    held = [fd for fd in data if fd not in closed and not data[fd]]
    busy = [fd for fd in data if b"-32005" in data[fd]]
    msgs = set()
    for fd in busy:
        for r in parse_lines(data[fd]):
            msgs.add(r["error"]["message"])
    silent = [fd for fd in closed if not data[fd]]
    alive_now = alive()
    pr.stop("%d connections" % n)
    print("  %d connections in %.2f s (%d connect errors%s): %d refused busy, %d closed without a reply, "
          "%d held; brid CPU %.0f%% while they are held; fds: %d before, peak %d" %
          (n, t_conn, len(connect_err), (": " + connect_err[0]) if connect_err else "", len(busy), len(silent),
           len(held), cpu * 100, base, peak), flush=True)
    print("  refusal messages: %s" % sorted(msgs), flush=True)
    check(alive_now, "brid died under %d connections" % n)
    check(len(held) <= MAXC, "%d connections held (max_connections %d)" % (len(held), MAXC))
    check(len(busy) + len(silent) + len(held) == len(socks), "some connections got something else")
    check(len(busy) >= len(socks) // 2, "only %d of %d refused with an error" % (len(busy), len(socks)))
    check(all(expect in m for m in msgs) and msgs, "refusal messages %s lack %r" % (sorted(msgs), expect))
    check(cpu < 0.5, "brid used %.0f%% CPU while connections were held" % (cpu * 100))
    for s in socks:
        s.close()
    after = fds_back(base)
    print("  brid fds after closing: %d" % after, flush=True)
    check(after <= base, "brid fds did not go back to %d (%d)" % (base, after))
    # served once the flood is gone, with a fresh connection
    s = connect()
    expect_running(s, s.makefile("rb"), "after the flood")
    s.close()
    finish()

# ------------------------------------------------------------ protocol
def proto_main():
    s = connect(10)
    f = s.makefile("rb")
    cases = [
        # (bytes sent, expected code or "ok", expected id)
        (b'{"jsonrpc":"2.0","id":1,"method":"sta\xfftus"}', -32700, None),
        (b'{"jsonrpc":"2.0","id":2,"method":"\xc0\xafstatus"}', -32700, None),
        (b'{"jsonrpc":"2.0","id":3,"method":"\xed\xa0\x80"}', -32700, None),
        (b'{"jsonrpc":"2.0","id":4,"method":"status\xe2\x82"}', -32700, None),
        (b'{"jsonrpc":"2.0","id":5,"method":"status","params":{"x":"\xfe\xfe"}}', -32700, None),
        (b'{"jsonrpc":"2.0","id":6,"method":"jobs.list","params":{"\xff":1}}', -32700, None),
        (b'{"jsonrpc":"2.0","id":"\xff","method":"status"}', -32700, None),
        (b'{"jsonrpc":"2.0","id":8,"method":"\\ud800"}', -32700, None),
        (b'{"jsonrpc":"2.0","id":9,"method":"sta\\u0000tus"}', -32700, None),
        (b'{"jsonrpc":"2.0","id":10,"method":"sta\x00tus"}', -32700, None),
        (b'{"jsonrpc":"2.0","id":11,"method":"status"}\x00', -32700, None),
        (b'\x00{"jsonrpc":"2.0","id":12,"method":"status"}', -32700, None),
        (b'\x00', -32700, None),
        (b'\xef\xbb\xbf{"jsonrpc":"2.0","id":14,"method":"status"}', -32700, None),
        (b'{"jsonrpc":"2.0","id":15,"method":"status"}\r', "ok", 15),
        (b'{"jsonrpc":"2.0",\r"id":16,\r"method":"status"}\r', "ok", 16),
        (b'\r', None, None),  # a blank line: no reply
        (b'{"jsonrpc":"2.0","id":18,"method":"st\xc3\xa4tus"}\r', -32601, 18),
        (b'{"jsonrpc":"2.0","id":19,"method":"tables.get","params":{"table":"/x\xc3\xa4\\u00ff\x7f"}}', -32001, 19),
    ]
    for i, (line, want, wid) in enumerate(cases):
        t = time.monotonic()
        s.sendall(line + b"\n")
        if want is None:
            continue
        raw = f.readline()
        dt = time.monotonic() - t
        if not raw:
            check(False, "case %d %r: connection closed" % (i, line[:60]))
            return finish()
        check(all(b < 0x80 for b in raw), "case %d: reply not ASCII: %r" % (i, raw[:200]))
        r = json.loads(raw)
        check(r.get("jsonrpc") == "2.0", "case %d: no jsonrpc 2.0: %r" % (i, raw))
        got = "ok" if "result" in r else r["error"]["code"]
        msg = r.get("error", {}).get("message", "")
        print("  %-70r -> %s %s (%.0f ms)" % (line[:70], got, msg[:90], dt * 1000), flush=True)
        check(got == want, "case %d %r: got %s (%s), expected %s" % (i, line[:60], got, msg, want))
        check(r.get("id") == wid, "case %d: id %r, expected %r" % (i, r.get("id"), wid))
        if want == -32700:
            check(msg.startswith("not JSON: ") and "column" in msg, "case %d: parse error message %r" % (i, msg))
        check(dt < 1.0, "case %d took %.2f s" % (i, dt))
    # the messages say what was wrong
    s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"sta\xfftus"}\n')
    m = json.loads(f.readline())["error"]["message"]
    check("UTF-8" in m or "decode" in m, "invalid UTF-8 message: %r" % m)
    s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"sta\\u0000tus"}\n')
    m = json.loads(f.readline())["error"]["message"]
    check("\\u0000" in m, "\\u0000 message: %r" % m)
    # the same connection still works
    expect_running(s, f, "after bad input on the same connection")
    s.close()
    finish()

def deep_main():
    s = connect(10)
    f = s.makefile("rb")
    cases = [
        ("100000 [", b"[" * 100000, -32700, "depth"),
        ("100000 nested objects in params",
         b'{"jsonrpc":"2.0","id":2,"method":"status","params":' + b'{"a":' * 100000 + b"1" + b"}" * 100000 + b"}",
         -32700, "depth"),
        ("100000 { unclosed", b'{"a":' * 100000, -32700, "depth"),
        ("1000 nested objects in params",
         b'{"jsonrpc":"2.0","id":4,"method":"status","params":' + b'{"a":' * 1000 + b"1" + b"}" * 1000 + b"}",
         -32602, 'unknown parameter "a"'),
        ("1000 nested arrays in a parameter",
         b'{"jsonrpc":"2.0","id":5,"method":"jobs.list","params":{"state":' + b"[" * 1000 + b"]" * 1000 + b"}}",
         -32602, "state"),
        ("1000 nested arrays as the id",
         b'{"jsonrpc":"2.0","id":' + b"[" * 1000 + b"]" * 1000 + b',"method":"status"}',
         -32600, '"id" must be'),
    ]
    for label, line, want, text in cases:
        t = time.monotonic()
        s.sendall(line + b"\n")
        raw = f.readline()
        dt = time.monotonic() - t
        if not raw:
            check(False, "%s: connection closed" % label)
            return finish()
        r = json.loads(raw)
        got = "ok" if "result" in r else r["error"]["code"]
        msg = r.get("error", {}).get("message", "")
        print("  %-36s -> %s %s (%.0f ms)" % (label, got, msg[:80], dt * 1000), flush=True)
        check(got == want and text in msg, "%s: got %s %r, expected %s %r" % (label, got, msg, want, text))
        check(dt < 1.0, "%s took %.2f s" % (label, dt))
        check(alive(), "brid died on %s" % label)
    expect_running(s, f, "after deep nesting")
    finish()

# ------------------------------------------------------------ torrent
def torrent_main():
    base_rss, base_fds = rss_kb(), nfds()
    pr = Prober()
    time.sleep(0.3)
    # requests, never reading the replies
    s = connect()
    s.setblocking(False)
    chunk = STATUS * 2000
    sent, peak, t0 = 0, base_rss, time.monotonic()
    closed_at, stalled_at, err = None, None, ""
    pos = 0
    hup = select.poll()
    hup.register(s, select.POLLHUP | select.POLLERR)
    while time.monotonic() - t0 < REQ_TO + 6:
        try:
            k = s.send(chunk[pos:])
            sent += k
            pos = (pos + k) % len(chunk)
            stalled_at = None
        except BlockingIOError:
            if stalled_at is None:
                stalled_at = time.monotonic()
            if hup.poll(50):
                closed_at, err = time.monotonic(), "hang-up"
                break
        except OSError as e:
            closed_at, err = time.monotonic(), str(e)
            break
        peak = max(peak, rss_kb())
    s.close()
    wait = (closed_at - stalled_at) if closed_at and stalled_at else None
    print("  request torrent: %d requests sent (%.1f MB) before brid stopped reading; RSS %d -> peak %d kB "
          "(+%.1f MB); closed %s after the client's sends blocked (%s)" %
          (sent // len(STATUS), sent / 1e6, base_rss, peak, (peak - base_rss) / 1024,
           "%.2f s" % wait if wait is not None else "never", err), flush=True)
    check(ASAN or (peak - base_rss) < 50 * 1024, "brid RSS grew by %.1f MB" % ((peak - base_rss) / 1024))
    check(closed_at is not None, "a peer that never reads was never disconnected")
    check(wait is None or wait < REQ_TO + 2.5, "the peer that never reads was closed after %.2f s" % (wait or 0))
    # notifications (no replies): brid keeps up, and others are still served
    s = connect()
    s.setblocking(False)
    note = b'{"jsonrpc":"2.0","method":"status"}\n' * 2000
    sent, t0 = 0, time.monotonic()
    while time.monotonic() - t0 < 2.0:
        try:
            sent += s.send(note)
        except BlockingIOError:
            select.select([], [s], [], 0.05)
        peak = max(peak, rss_kb())
    s.close()
    r = pr.stop("torrents")
    print("  notification torrent: %.1f MB sent in 2 s; RSS peak %d kB" % (sent / 1e6, peak), flush=True)
    check(ASAN or (peak - base_rss) < 50 * 1024, "brid RSS grew by %.1f MB" % ((peak - base_rss) / 1024))
    after = fds_back(base_fds)
    check(after <= base_fds, "brid fds did not go back to %d (%d)" % (base_fds, after))
    finish()

{"probe": probe_main, "slow": slow_main, "flood": flood_main, "proto": proto_main, "deep": deep_main,
 "torrent": torrent_main}[MODE]()
PYEOF
ABUSE_ASAN=0
grep -q __asan_init "$BRID" && ABUSE_ASAN=1
export ABUSE_ASAN
abuse() { python3 "$TMPD/abuse.py" "$1" "$SOCK" "$BRID_PID" "${@:2}"; }

brid_start abuse --config "$TMPD/abuse.conf"
st=$(ctl status --json) || fail "status failed"
echo "ok start"

echo "slow peers:"
abuse slow || fail "slow peers"
log_has "idle for ${IDLE_TO} s|idle_timeout" || fail "no idle_timeout closure logged"
log_has "request_timeout" || fail "no request_timeout closure logged"
echo "ok slow peers"

echo "3000 connections:"
abuse flood 3000 "too many connections (max_connections = $MAXC)" || fail "3000 connections"
echo "ok many connections"

echo "invalid bytes:"
abuse proto || fail "invalid UTF-8 / NUL / CR LF"
echo "ok invalid bytes"

echo "deep nesting:"
abuse deep || fail "deep nesting"
echo "ok deep nesting"

echo "torrents:"
abuse torrent || fail "torrents"
log_has "does not read its replies" || fail "the non-reading peer was not logged"
echo "ok torrents"

ctl status >/dev/null || fail "status after the abuse"
brid_stop || fail "brid exited non-zero after the abuse"

# brid itself short of file descriptors
cat >"$TMPD/lowfd.sh" <<'EOF'
#!/bin/sh
ulimit -n 64
exec "$@"
EOF
chmod +x "$TMPD/lowfd.sh"
sed -i "s/^max_connections = .*/max_connections = 200/" "$TMPD/abuse.conf"
BRID_PREFIX=$TMPD/lowfd.sh brid_start lowfd --config "$TMPD/abuse.conf"
[ "$(awk '/^Max open files/ {print $4}' /proc/$BRID_PID/limits)" = 64 ] || fail "ulimit -n 64 not applied"
echo "300 connections, ulimit -n 64:"
MAXC=200 abuse flood 300 "file descriptors" || fail "EMFILE"
log_has "open-file limit \(64, [0-9]+ in use\) leaves room for [0-9]+ control connections" ||
  fail "the fd shortage was not logged"
ctl status >/dev/null || fail "status after EMFILE"
brid_stop || fail "brid exited non-zero after EMFILE"
echo "ok out of file descriptors"
pass
