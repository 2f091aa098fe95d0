"""The HTTP edge, black-box against a real server process (``mercyless serve``, no proxy in
front): security headers on every answer, the operator pages off unless asked for, and bounds
on what a request may weigh and how long it may take to arrive (app/api/edge.py)."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from app.api.edge import CSP

from .harness import Client, ServerProcess

HEADERS = {"content-security-policy": CSP, "x-content-type-options": "nosniff",
           "x-frame-options": "DENY", "referrer-policy": "no-referrer"}


def test_every_answer_carries_the_security_headers(edge_server):
    server = edge_server()
    code = server.create("Ann")["code"]
    with httpx.Client(base_url=server.url, timeout=10) as http:
        answers = [http.get("/"), http.get("/js/app.js"), http.get("/css/style.css"), http.get(f"/r/{code}"),
                   http.get("/api/rules"), http.get(f"/api/rooms/{code}"), http.get("/nowhere"),
                   http.post("/api/rooms", json={"name": ""}), http.get("/healthz")]
    for r in answers:
        assert {k: r.headers.get(k) for k in HEADERS} == HEADERS, (r.request.url, r.status_code, r.headers)
    assert "frame-ancestors 'none'" in CSP and "'unsafe-inline'" not in CSP
    assert [r.status_code for r in answers[-3:]] == [404, 400, 200]


def test_the_api_pages_and_metrics_are_off_unless_asked_for(edge_server):
    off = edge_server()
    on = edge_server(api_docs="true", metrics="true")
    for path in ("/docs", "/redoc", "/openapi.json", "/metrics"):
        assert httpx.get(off.url + path).status_code == 404, path
        r = httpx.get(on.url + path)
        assert r.status_code == 200, path
        # the generated pages load FastAPI's scripts from a CDN: every header but the CSP
        assert r.headers["x-frame-options"] == "DENY"
        assert ("content-security-policy" in r.headers) == (path in ("/openapi.json", "/metrics")), path
    assert "mercyless_sockets" in httpx.get(on.url + "/metrics").text


# -- what a request may weigh ---------------------------------------------------------------------

async def _exchange(server: ServerProcess, head: bytes, timeout: float = 5) -> tuple[bytes, bool]:
    """Send ``head``; the answer the server wrote, and whether it then closed the connection
    (a server that keeps it open fails the read's timeout)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    answer = b""
    try:
        writer.write(head)
        while chunk := await asyncio.wait_for(reader.read(65536), timeout):  # until it closes
            answer += chunk
    except (ConnectionResetError, BrokenPipeError):
        # closed with what we sent still unread (a reset), or before we finished sending (a
        # broken pipe, as the write is flushed): no lingering either way
        pass
    finally:
        writer.close()
    return answer, True


async def test_a_declared_body_over_the_limit_is_refused_before_it_is_sent(edge_server):
    """Four 40 MB bodies took the server from 126 to 371 MB: now the Content-Length alone gets
    413 and the connection closed, before a byte of the body is read."""
    server = edge_server(max_body_bytes=16384)
    head = (b"POST /api/rooms HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            b"Content-Length: 40000000\r\n\r\n")
    answer, closed = await _exchange(server, head)
    assert answer.startswith(b"HTTP/1.1 413 ") and closed, answer[:300]
    assert b'"too_large"' in answer and b"x-content-type-options: nosniff" in answer.lower()
    # one just under the limit is read and answered as usual
    body = json.dumps({"name": "Ann", "rules": {"x": "y" * 16000}}).encode()
    r = httpx.post(server.url + "/api/rooms", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "bad_rules", r.text


async def test_a_streamed_body_is_counted_and_cut_off_at_the_limit(edge_server):
    """A chunked body declares no length: it is counted as it is read, and refused once past."""
    server = edge_server(max_body_bytes=16384)
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    try:
        writer.write(b"POST /api/rooms HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n")
        chunk = b"%x\r\n%s\r\n" % (4096, b" " * 4096)
        answer = b""
        for _ in range(10_000):  # 40 MB if nobody stopped it
            writer.write(chunk)
            try:
                await writer.drain()
            except ConnectionError:
                break
            try:
                answer += await asyncio.wait_for(reader.read(65536), 0.01)
            except TimeoutError:
                continue
            if answer:
                break
        answer += await asyncio.wait_for(reader.read(), 5)
    finally:
        writer.close()
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:300]
    assert b'"too_large"' in answer and b"connection: close" in answer.lower()


async def test_a_head_over_the_limit_gets_431(edge_server):
    server = edge_server(max_header_bytes=16384)
    head = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: " + b"a" * 20_000 + b"\r\n\r\n"
    answer, closed = await _exchange(server, head)
    assert answer.startswith(b"HTTP/1.1 431 ") and closed, answer[:300]
    # a megabyte is cut off as soon as the limit is passed (the rest unread: a reset, maybe
    # before the 431 arrives)
    head = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: " + b"a" * 1_000_000 + b"\r\n\r\n"
    answer, closed = await _exchange(server, head)
    assert closed and (answer == b"" or answer.startswith(b"HTTP/1.1 431 ")), answer[:300]
    ok = httpx.get(server.url + "/healthz", headers={"x-fair": "a" * 8000})
    assert ok.status_code == 200


# -- how long a request may take to arrive --------------------------------------------------------

async def _closed_within(server: ServerProcess, at_once: bytes, trickle: bytes, limit_s: float,
                         every_s: float = 0.05) -> tuple[float, bytes]:
    """Send ``at_once``, then ``trickle`` a byte every ``every_s`` seconds (slowloris): how long
    until the server closes the connection (at most ``limit_s``), and what it wrote."""
    loop = asyncio.get_running_loop()
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    began = loop.time()

    async def dribble() -> None:
        writer.write(at_once)
        for byte in trickle:
            writer.write(bytes([byte]))
            await asyncio.sleep(every_s)  # the attacker's own pace, not a wait for the server

    sending = asyncio.create_task(dribble())
    try:
        answer = await asyncio.wait_for(reader.read(), limit_s)  # until the server closes it
        return loop.time() - began, answer
    finally:
        sending.cancel()
        writer.close()


async def test_a_request_that_trickles_in_is_cut_off_within_the_read_timeout(edge_server):
    """300 slow-header connections stayed open 45 s: each is now closed (408) once
    REQUEST_READ_TIMEOUT_S has passed since it opened, however it trickles."""
    server = edge_server(request_read_timeout_s=1)
    head = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: " + b"a" * 200 + b"\r\n\r\n"
    took, answer = await _closed_within(server, b"", head, limit_s=4)
    assert 0.9 <= took <= 2.5 and answer.startswith(b"HTTP/1.1 408 "), (took, answer[:200])
    # a connection that says nothing is closed as well
    took, answer = await _closed_within(server, b"", b"", limit_s=4)
    assert 0.9 <= took <= 2.5 and answer.startswith(b"HTTP/1.1 408 "), (took, answer[:200])
    # and one whose head came at once but whose body trickles
    post = (b"POST /api/rooms HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            b"Content-Length: 1000\r\n\r\n")
    took, answer = await _closed_within(server, post, b"{" + b" " * 998, limit_s=4)
    assert 0.9 <= took <= 2.5 and b" 201 " not in answer, (took, answer[:200])


async def test_kept_alive_connections_and_game_sockets_outlive_the_read_timeout(edge_server):
    """The deadline is each request's own: a kept-alive connection's next request, past the
    timeout, gets its answer; and a game socket, once open, is no request at all."""
    server = edge_server(request_read_timeout_s=1)
    made = server.create("Ann")
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    request = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"
    writer.write(request)
    first = await asyncio.wait_for(reader.readuntil(b'{"ok":true}'), 5)
    ann = await Client(server, made["code"], made["token"]).connect()
    try:
        with pytest.raises(TimeoutError):  # nothing to hear for longer than the read timeout
            await ann.recv(timeout=1.5)
        await ann.send_raw(json.dumps({"type": "ping"}))
        assert (await ann.until(lambda m: m["type"] == "pong"))["type"] == "pong"
        writer.write(request)  # the kept-alive connection, idle meanwhile (< timeout_keep_alive)
        second = await asyncio.wait_for(reader.readuntil(b'{"ok":true}'), 5)
    finally:
        await ann.close()
        writer.close()
    assert first.startswith(b"HTTP/1.1 200 ") and second.startswith(b"HTTP/1.1 200 ")
