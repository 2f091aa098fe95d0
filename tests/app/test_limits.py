"""Limits that protect a room and the server: failed joins per address, sockets per address, a
stalled reader, a half-open socket."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket

import httpx
import pytest
import websockets

from .harness import Client, ServerProcess


@pytest.fixture
def limited():
    # the message rate limit is lifted: the stalled-reader test floods the room faster than a
    # fast machine's 500/s would allow, and the rate limit has tests of its own
    server = ServerProcess(redis="fake", failed_joins_per_min=10, sockets_per_ip=6, outbox_limit=8,
                           reaction_interval_ms=0, ws_ping_interval_s=1, ws_ping_timeout_s=1,
                           rate_burst=1_000_000, rate_per_s=1_000_000).start()
    yield server
    err = server.stop()
    assert "Traceback" not in err, err[-3000:]


async def test_failed_joins_per_address_are_limited(limited):
    async with httpx.AsyncClient(base_url=limited.url) as http:
        codes = [(await http.post(f"/api/rooms/ZZZZZ{c}/join", json={"name": "x"})).status_code
                 for c in "ABCDEFGHJK"]
        assert codes == [404] * 10
        r = await http.post("/api/rooms/ZZZZZM/join", json={"name": "x"})
        assert r.status_code == 429 and r.json()["error"]["code"] == "rate_limited"
        real = limited.create("Ann")
        assert (await http.post(f"/api/rooms/{real['code']}/join", json={"name": "x"})).status_code == 429


async def test_sockets_per_address_are_limited(limited):
    host = limited.create("Ann")
    sockets = []
    for _ in range(6):
        sockets.append(await websockets.connect(f"{limited.ws_url}/ws/{host['code']}"))
    # the seventh is refused at the handshake, before it costs anything
    with pytest.raises(websockets.InvalidStatus) as refused:
        await websockets.connect(f"{limited.ws_url}/ws/{host['code']}")
    assert refused.value.response.status_code == 403
    await sockets.pop().close()
    again = await websockets.connect(f"{limited.ws_url}/ws/{host['code']}")  # a slot is free again
    for s in [*sockets, again]:
        await s.close()


def _raw_hello(port: int, code: str, token: str) -> socket.socket:
    """A client that opens the socket, says hello and then never reads nor answers a ping."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((f"GET /ws/{code} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                  f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
                 .encode())
    response = b""
    while b"\r\n\r\n" not in response:  # the handshake answer, before the first frame
        response += sock.recv(1)
    assert b" 101 " in response
    payload = json.dumps({"type": "hello", "token": token}).encode()
    mask = os.urandom(4)
    frame = bytes([0x81, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    sock.sendall(frame)
    return sock


async def test_a_stalled_reader_is_dropped_and_never_stalls_its_room(limited):
    host = limited.create("Ann")
    guest = limited.join(host["code"], "Bob")
    ann = await Client(limited, host["code"], host["token"]).connect()
    stalled = _raw_hello(limited.port, host["code"], guest["token"])
    await ann.until(lambda m: m["type"] == "patch")  # Bob connected
    # a flood of reactions: every one is a patch Bob never reads (~2,300 fill the socket's
    # buffers on this machine; the bound leaves room for larger ones)
    dropped = None
    for i in range(20_000):
        answer = await ann.send({"type": "react", "reaction": "gg"})
        assert answer["type"] == "ack", answer
        if any(e["kind"] == "disconnected" for e in ann.events):
            dropped = i
            break
    assert dropped is not None, "the stalled reader was never dropped"
    stalled.close()


async def test_a_half_open_socket_is_found_by_the_heartbeat(limited):
    host = limited.create("Ann")
    guest = limited.join(host["code"], "Bob")
    ann = await Client(limited, host["code"], host["token"]).connect()
    silent = _raw_hello(limited.port, host["code"], guest["token"])
    await ann.until(lambda m: m["type"] == "patch")  # Bob connected
    # Bob's side now never answers a ping (ping every 1 s, 1 s to answer)
    loop = asyncio.get_running_loop()
    start = loop.time()
    await ann.until(lambda m: any(e.get("kind") == "disconnected" for e in m.get("events", [])),
                    timeout=15)
    assert loop.time() - start < 10
    silent.close()
