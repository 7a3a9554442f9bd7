#!/usr/bin/env python3
"""fault_proxy.py: an HTTP/1.1 proxy on 127.0.0.1 that injects S3 faults
(and Azure Blob faults: Azure's errors have the same <Error><Code> body, and
the code is also sent as the x-ms-error-code header Azure gives every error,
HEAD answers included, which have no body).

Sits between brid's S3 client and radosgw (or Azurite), one upstream connection per
client connection, and forwards request by request (Content-Length bodies;
chunked or length-delimited answers), so that a fault hits one request:

    drop        read the request, close the connection without an answer
    delay:MS    wait MS milliseconds before forwarding
    status:N[:CODE]   answer HTTP N with an S3 <Error><Code>CODE</Code>
                      (CODE defaults by status: 500 InternalError,
                      503 SlowDown, 429 SlowDown), the request not forwarded
    error200:CODE     forward, then replace a 200 answer's body with an
                      <Error> (as S3 may answer CopyObject and Complete)
    truncate    forward, then send the answer's head and half its body and
                close (Content-Length says more)
    lose        forward (the server acts on it), then close without
                answering: the client cannot know the request landed

Control (not forwarded): PUT /__fault__ with a JSON list of rules
[{"match": "PUT /bucket/k", "action": "drop", "times": 1}, ...]: a rule hits
requests whose "METHOD PATH?QUERY" line contains match, times times (0 or
absent: every time), and with "rate": P only a random share P of them
(seeded by "seed", default 1, so a run is repeatable); rules are tried in
order. GET /__fault__ returns
{"hits": {index: n}, "requests": total}. DELETE /__fault__ clears the rules.

usage: fault_proxy.py UPSTREAM_HOST:PORT  (prints "port N" once listening;
exits when its standard input closes, so it never outlives the test)
"""
import asyncio
import json
import os
import random
import sys
import threading

UPSTREAM = None
RULES = []
HITS = {}
STATS = {"requests": 0}
RANDOM = random.Random(1)
DEFAULT_CODE = {500: "InternalError", 503: "SlowDown", 429: "SlowDown"}


async def read_head(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    return head, lines[0], headers


async def read_body(reader, headers, no_body=False):
    if no_body:
        return b""
    if headers.get("transfer-encoding", "").lower() == "chunked":
        out = b""
        while True:
            line = await reader.readuntil(b"\r\n")
            size = int(line.split(b";")[0], 16)
            chunk = await reader.readexactly(size + 2)
            out += line + chunk
            if size == 0:
                return out
    n = int(headers.get("content-length", "0"))
    return await reader.readexactly(n)


def error_body(code):
    return ("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>%s</Code>"
            "<Message>injected by fault_proxy</Message></Error>" % code).encode()


def rule_for(request_line):
    method, target = request_line.split(" ")[:2]
    what = method + " " + target
    for i, r in enumerate(RULES):
        if r["match"] not in what:
            continue
        times = r.get("times", 0)
        if times and HITS.get(i, 0) >= times:
            continue
        if "rate" in r and RANDOM.random() >= r["rate"]:
            continue
        HITS[i] = HITS.get(i, 0) + 1
        return r["action"]
    return None


def answer(status, reason, body, ctype="application/xml", extra=""):
    return ("HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n%s\r\n"
            % (status, reason, ctype, len(body), extra)).encode() + body


async def control(line, body, writer):
    method = line.split(" ")[0]
    if method == "PUT":
        RULES[:] = json.loads(body or b"[]")
        HITS.clear()
        RANDOM.seed(next((r.get("seed", 1) for r in RULES), 1))
    elif method == "DELETE":
        RULES.clear()
        HITS.clear()
    out = json.dumps({"hits": HITS, "requests": STATS["requests"]}).encode()
    writer.write(answer(200, "OK", out, "application/json"))
    await writer.drain()


async def serve(reader, writer):
    up_r = up_w = None
    try:
        while True:
            try:
                head, line, headers = await read_head(reader)
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            body = await read_body(reader, headers)
            if " /__fault__" in line:
                await control(line, body, writer)
                continue
            STATS["requests"] += 1
            action = rule_for(line) or ""
            if action == "drop":
                return
            if action.startswith("delay:"):
                await asyncio.sleep(int(action.split(":")[1]) / 1000)
            if action.startswith("status:"):
                parts = action.split(":")
                status = int(parts[1])
                code = parts[2] if len(parts) > 2 else DEFAULT_CODE.get(status, "InternalError")
                body = b"" if line.startswith("HEAD ") else error_body(code)
                writer.write(answer(status, "Injected", body, extra="x-ms-error-code: %s\r\n" % code))
                await writer.drain()
                continue
            if up_w is None:
                host, port = UPSTREAM.rsplit(":", 1)
                up_r, up_w = await asyncio.open_connection(host, int(port))
            up_w.write(head + body)
            await up_w.drain()
            rhead, rline, rheaders = await read_head(up_r)
            status = int(rline.split(" ")[1])
            no_body = line.startswith("HEAD ") or status in (204, 304)
            rbody = await read_body(up_r, rheaders, no_body)
            if action == "lose":
                return
            if action.startswith("error200:") and status == 200:
                b = error_body(action.split(":")[1])
                writer.write(answer(200, "OK", b))
            elif action == "truncate" and len(rbody) > 1:
                writer.write(rhead + rbody[: len(rbody) // 2])
                await writer.drain()
                return
            else:
                writer.write(rhead + rbody)
            await writer.drain()
            if rheaders.get("connection", "").lower() == "close":
                return
    except (ConnectionError, asyncio.IncompleteReadError):
        return
    finally:
        writer.close()
        if up_w is not None:
            up_w.close()


async def main():
    global UPSTREAM
    UPSTREAM = sys.argv[1]
    threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    print("port %d" % server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
