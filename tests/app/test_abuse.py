"""Abuse over real sockets (the security issue's findings).

1. Every frame passes the socket's limit before any work: past it a frame costs a counter (at
   most one ``rate_limited`` notice a window, no Redis), and a socket that keeps flooding is
   closed (1008) and its address's new sockets refused on every process for a while.
5. A relayed seat that bursts past the rate limit still gets its pongs.

A client's address is set with ``X-Forwarded-For`` (uvicorn trusts it from 127.0.0.1), so each
test's blocks are its own.
"""

from __future__ import annotations

import contextlib
import itertools
import json
from typing import Any

import pytest
import redis
import websockets

from app.core.settings import Settings

from .harness import Client, RedisServer, ServerProcess, real_redis_available

_addresses = itertools.count(1)


def address() -> str:
    """A client address of the test's own (TEST-NET-3), as a proxy would pass it on."""
    n = next(_addresses)
    return f"203.0.{113 + n // 250}.{n % 250 + 1}"


def needs_real_redis() -> None:
    if not real_redis_available():
        pytest.fail("the real Redis at 127.0.0.1:6379 is not running (CI starts it)")


def stopped(*servers: ServerProcess) -> None:
    errors = "".join(s.stop() for s in servers)
    assert "Traceback" not in errors, errors[-3000:]


async def socket(server: ServerProcess, code: str, ip: str | None = None,
                 **headers: str) -> websockets.ClientConnection:
    extra = {k.replace("_", "-"): v for k, v in headers.items()}
    if ip is not None:
        extra["X-Forwarded-For"] = ip
    return await websockets.connect(f"{server.ws_url}/ws/{code}", additional_headers=extra,
                                    max_size=2**20)


async def refused_at_handshake(server: ServerProcess, code: str, ip: str | None = None,
                               **headers: str) -> bool:
    try:
        ws = await socket(server, code, ip, **headers)
    except websockets.InvalidStatus as refused:
        assert refused.response.status_code == 403
        return True
    await ws.close()
    return False


async def hello(server: ServerProcess, code: str, token: Any, ip: str | None = None) -> Client:
    """A client whose hello went out (it may be welcomed or closed)."""
    client = Client(server, code, token)
    client.ws = await socket(server, code, ip)
    await client.ws.send(json.dumps({"type": "hello", "token": token}))
    return client


async def welcomed(server: ServerProcess, code: str, token: str, ip: str | None = None) -> Client:
    client = await hello(server, code, token, ip)
    await client.until(lambda m: m["type"] == "welcome")
    return client


async def closed_with(client: Client, timeout: float = 10.0) -> int | None:
    """Read (keeping what comes) until the server closes the socket; its close code."""
    with contextlib.suppress(websockets.ConnectionClosed):
        while True:
            await client.recv(timeout)
    return client.ws.close_code


def defaults(**overrides: Any) -> dict[str, Any]:
    """Every limit at its default (the harness lifts most of them), then ``overrides``."""
    s = Settings()
    limits = {name: getattr(s, name) for name in (
        "rate_burst", "rate_per_s", "ping_burst", "ping_per_s", "failed_joins_per_min", "sockets_per_ip",
        "flood_window_ms", "flood_frames", "flood_block_s", "max_frame_bytes", "outbox_limit")}
    return {**limits, **overrides}


# -- 1. a flood costs a counter -------------------------------------------------------------------

async def test_frames_past_the_limit_get_one_notice_and_a_flooding_socket_is_closed_and_its_address_slowed():
    """Past the limit no frame is answered but the window's first message (one rate_limited);
    the flood_frames-th frame past it closes the socket with 1008, and the address's new sockets
    are refused at the handshake by every process, while other addresses get in."""
    needs_real_redis()
    limits = defaults(rate_burst=5, rate_per_s=0.01, ping_burst=3, ping_per_s=0.01, flood_frames=200,
                      flood_window_ms=60_000, flood_block_s=60)
    one = ServerProcess(redis="real", **limits).start()
    two = ServerProcess(redis="real", prefix=one.prefix, **limits).start()
    try:
        host = one.create("Ann")
        flooder = address()
        ann = await welcomed(one, host["code"], host["token"], flooder)
        within = ["{not json"] * 5 + ['{"type": "ping"}'] * 3
        past = ["{not json", b"\xff\xfe{", '{"type":"ping"}', json.dumps({"type": "sync", "id": "s"})] * 50
        for frame in within + past:  # 5 answered, 3 pongs, then 200 past the limit
            await ann.send_raw(frame)
        assert await closed_with(ann) == 1008
        kinds = [(m["type"], m.get("code")) for m in ann.messages[1:]]
        assert kinds == [("error", "bad_message")] * 5 + [("pong", None)] * 3 + [("error", "rate_limited")]
        # the address is refused by both processes, before it can say hello; another is not
        for server in (one, two, one):
            assert await refused_at_handshake(server, host["code"], flooder)
        other = await welcomed(two, host["code"], host["token"], address())
        await other.close()
    finally:
        stopped(one, two)


async def test_frames_past_the_limit_cost_no_redis(own_redis: RedisServer):
    """A burst of messages with ids past the limit: no look-up of an earlier answer per frame
    (a retry is answered from the store once the client is within its limit again)."""
    server = ServerProcess(redis="fake", **defaults(rate_burst=5, rate_per_s=0.01, flood_frames=500,
                                                     flood_window_ms=60_000, flood_block_s=0))
    server.env["REDIS_URL"] = own_redis.url
    store = redis.Redis(port=own_redis.port)
    try:
        server.start()
        host = server.create("Ann")
        ann = await welcomed(server, host["code"], host["token"])

        def commands() -> dict[str, int]:
            return {k: v["calls"] for k, v in store.info("commandstats").items()}

        before = commands()
        for i in range(505):  # 5 answered, then 500 past the limit: the last one closes it
            await ann.send_raw(json.dumps({"type": "draw", "id": f"d{i % 5}"}))
        assert await closed_with(ann) == 1008
        after = commands()
        asked = {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)}
        # the five answered cost a few commands each (the refusal is stored); the 500 none
        assert sum(asked.values()) < 40, asked
        answers = [m for m in ann.messages if m["type"] == "error"]
        assert [a["code"] for a in answers] == ["not_started"] * 5 + ["rate_limited"]
    finally:
        stopped(server)
        store.close()


# -- 5. pongs for a fast clicker, wherever the socket landed ---------------------------------------

async def test_a_seat_that_bursts_past_the_limit_gets_its_pong_on_either_process():
    """A room spread over two processes: Bob's socket reached the one that is not the room's
    home, and is relayed there. Again and again he bursts past the rate limit, then pings: he
    gets his pong every time, in a bounded time, as Ann does on the home."""
    needs_real_redis()
    # (one ping a round, the rounds back to back: within a ping allowance of 50)
    limits = defaults(rate_burst=5, rate_per_s=1, ping_burst=50, flood_frames=10_000, relay_ping_ms=200,
                      relay_silence_ms=1500)
    home = ServerProcess(redis="real", **limits).start()
    edge = ServerProcess(redis="real", prefix=home.prefix, **limits).start()
    try:
        host = home.create("Ann")
        guest = home.join(host["code"], "Bob")
        ann = await Client(home, host["code"], host["token"]).connect()
        bob = await Client(edge, host["code"], guest["token"]).connect()
        for round_ in range(40):
            for c in (ann, bob):
                for i in range(16):  # past the home's burst and the edge's (twice it)
                    await c.send_raw(json.dumps({"type": "draw", "id": f"r{round_}-{i}"}))
                await c.send_raw('{"type":"ping"}')
                pongs = sum(1 for m in c.messages if m["type"] == "pong")
                await c.until(lambda m, c=c, n=pongs: sum(1 for x in c.messages if x["type"] == "pong") > n,
                              timeout=2)
        for c in (ann, bob):
            assert not c.ws.close_code
            codes = {m.get("code") for m in c.messages if m["type"] == "error"}
            assert codes <= {"not_started", "rate_limited"}, codes
    finally:
        stopped(home, edge)
