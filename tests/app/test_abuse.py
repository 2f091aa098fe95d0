"""Abuse over real sockets (the security issue's findings), and a game night that none of the
limits may touch.

1. Every frame passes the socket's limit before any work: past it a frame costs a counter (at
   most one ``rate_limited`` notice a window, no Redis), and a socket that keeps flooding is
   closed (1008) and its address's new sockets refused on every process for a while.
2. Hellos are limited per token and per address across processes; a connection that flaps
   makes no disconnected/reconnected pair; a reconnect brings no fresh burst.
3. Hellos to unknown rooms and with bad tokens are failed joins; a blocked address is refused
   at the handshake, without Redis once the process knows it.
4. The origin check compares scheme, host and port.
5. A relayed seat that bursts past the rate limit still gets its pongs.

A client's address is set with ``X-Forwarded-For`` (uvicorn trusts it from 127.0.0.1), so each
test's blocks are its own.
"""

from __future__ import annotations

import contextlib
import itertools
import json
from typing import Any

import httpx
import pytest
import redis
import websockets

from app.core.settings import Settings

from .harness import Client, RedisServer, ServerProcess, real_redis_available
from .tables import level, quiet

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
        "flood_window_ms", "flood_frames", "flood_block_s", "hellos_per_token_per_min",
        "hellos_per_ip_per_min", "drop_delay_ms", "max_frame_bytes", "outbox_limit")}
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


# -- 2. hellos and reconnects ---------------------------------------------------------------------

async def test_hellos_are_limited_per_token_and_per_address_across_processes():
    needs_real_redis()
    limits = defaults(hellos_per_token_per_min=4, hellos_per_ip_per_min=7)
    one = ServerProcess(redis="real", **limits).start()
    two = ServerProcess(redis="real", prefix=one.prefix, **limits).start()
    try:
        host = one.create("Ann")
        guests = [one.join(host["code"], f"G{i}") for i in range(3)]
        ip = address()
        for server in (one, two, one, two):  # four hellos with one token, over both processes
            await (await welcomed(server, host["code"], host["token"], ip)).close()
        fifth = await hello(one, host["code"], host["token"], ip)
        assert await closed_with(fifth) == 1013  # try again later: the client backs off
        assert fifth.messages == []
        # other tokens from the same address: seven hellos in all, then none
        await (await welcomed(two, host["code"], guests[0]["token"], ip)).close()
        await (await welcomed(one, host["code"], guests[1]["token"], ip)).close()
        late = await hello(two, host["code"], guests[2]["token"], ip)
        assert await closed_with(late) == 1013
        # another address, another count
        await (await welcomed(one, host["code"], guests[2]["token"], address())).close()
    finally:
        stopped(one, two)


async def test_a_connection_that_flaps_makes_no_disconnected_reconnected_pair():
    server = ServerProcess(redis="fake", drop_delay_ms=2000).start()
    try:
        host = server.create("Ann")
        guest = server.join(host["code"], "Bob")
        ann = await Client(server, host["code"], host["token"]).connect()
        bob = await Client(server, host["code"], guest["token"]).connect()
        await level([ann, bob])
        version = ann.version
        for _ in range(5):  # Bob's phone drops and comes back, again and again
            await bob.close()
            bob = await Client(server, host["code"], guest["token"]).connect()
        await quiet(ann)
        assert ann.version == version and bob.version == version
        assert not [e for e in ann.events if e["kind"] in ("disconnected", "reconnected")]
        # a drop that lasts is seen, after the delay
        await bob.close()
        await ann.until(lambda m: any(e["kind"] == "disconnected" for e in m.get("events", ())), timeout=10)
        assert ann.version == version + 1
    finally:
        stopped(server)


async def test_a_reconnect_brings_no_fresh_burst():
    server = ServerProcess(redis="fake", **defaults(rate_burst=5, rate_per_s=0.01)).start()
    try:
        host = server.create("Ann")
        ann = await Client(server, host["code"], host["token"]).connect()
        for _ in range(5):
            assert (await ann.send({"type": "sync"}))["type"] == "ack"
        await ann.close()
        ann = await Client(server, host["code"], host["token"]).connect()
        answer = await ann.send({"type": "sync"})
        assert answer["type"] == "error" and answer["code"] == "rate_limited", answer
    finally:
        stopped(server)


# -- 3. walking codes -----------------------------------------------------------------------------

async def test_unknown_rooms_and_bad_tokens_are_failed_joins_and_a_blocked_address_is_refused():
    server = ServerProcess(redis="fake", **defaults(failed_joins_per_min=4)).start()
    try:
        host = server.create("Ann")
        ip = address()
        missing = "ZZZZZZ" if httpx.get(f"{server.url}/api/rooms/ZZZZZZ").status_code == 404 else "YYYYYY"
        tries = [(missing, host["token"], 4404), ("nope", host["token"], 4404),
                 (host["code"], "not-a-token-of-this-room", 4401), (host["code"], 12345678, 4401)]
        for code, token, close in tries:
            assert await closed_with(await hello(server, code, token, ip)) == close, (code, token)
        # four failed: the address is refused before its hello, even with a good token
        assert await refused_at_handshake(server, host["code"], ip)
        r = httpx.post(f"{server.url}/api/rooms/{host['code']}/join", json={"name": "x"},
                       headers={"X-Forwarded-For": ip})
        assert r.status_code == 429
        # the room and other addresses are untouched
        ann = await welcomed(server, host["code"], host["token"], address())
        assert ann.you == host["player_id"]
        await ann.close()
    finally:
        stopped(server)


async def test_a_blocked_address_is_refused_without_asking_redis(own_redis: RedisServer):
    server = ServerProcess(redis="fake", **defaults(failed_joins_per_min=2))
    server.env["REDIS_URL"] = own_redis.url
    store = redis.Redis(port=own_redis.port)
    try:
        server.start()
        host = server.create("Ann")
        ip = address()
        for _ in range(2):
            assert await closed_with(await hello(server, "ZZZZZZ", host["token"], ip)) == 4404
        assert await refused_at_handshake(server, host["code"], ip)

        def commands() -> dict[str, int]:
            return {k: v["calls"] for k, v in store.info("commandstats").items()}

        before = commands()
        for _ in range(20):
            assert await refused_at_handshake(server, host["code"], ip)
        after = commands()
        asked = {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)}
        # (the process's own beats may come meanwhile: a scheduler poll, a heartbeat)
        assert not {"cmdstat_get", "cmdstat_pttl", "cmdstat_hmget", "cmdstat_incr"} & asked.keys(), asked
    finally:
        stopped(server)
        store.close()


# -- 4. origins -----------------------------------------------------------------------------------

async def test_the_origin_must_match_the_pages_scheme_host_and_port():
    server = ServerProcess(redis="fake").start()
    try:
        code = server.create("Ann")["code"]
        site = f"127.0.0.1:{server.port}"
        assert not await refused_at_handshake(server, code, origin=f"http://{site}")
        for origin in (f"https://{site}", f"http://127.0.0.1:{server.port + 1}", f"http://localhost:{server.port}",
                       f"ws://{site}", "null", f"http://{site}.evil.example"):
            assert await refused_at_handshake(server, code, origin=origin), origin
        # behind a TLS proxy (trusted from 127.0.0.1) the page is https
        proxied = {"X_Forwarded_Proto": "https"}
        assert not await refused_at_handshake(server, code, origin=f"https://{site}", **proxied)
        assert await refused_at_handshake(server, code, origin=f"http://{site}", **proxied)
    finally:
        stopped(server)


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


# -- a game night ---------------------------------------------------------------------------------

def human_move(c: Client) -> dict[str, Any]:
    """What a quick player does: the first card that can go (UNO with the last but one), else
    a draw (then the drawn card, or a pass); a pending choice is made at once."""
    game = c.game
    assert game is not None
    legal, pending = game["legal"], game.get("pending")
    if legal["choose"] and pending:
        field = pending["choice"] if pending["choice"] in ("target", "top") else "color"
        return {"type": "choose", field: legal["choose"][0]}
    if legal["play"]:
        move: dict[str, Any] = {"type": "play", "card": legal["play"][0]}
        if len(c.view["hand"]) == 2:
            move["uno"] = True
        return move
    return {"type": "draw"} if legal["draw"] else {"type": "pass"}


async def test_a_game_night_stays_well_under_every_limit():
    """Ten seats and a dozen spectators from one address (a house), spread over two processes:
    everyone pings, three phones reconnect a few times, the players move as fast as their turns
    come. With every limit at its default, nothing is refused.

    The server's clock runs ten times fast (the buckets refill on it): the script moves as fast
    as the answers come, a hundred times a second and more, and a night so compressed still
    plays its turns several times faster than a quick table of people. The hello limits count
    real minutes: ten times harder to keep under here than on a night."""
    needs_real_redis()
    one = ServerProcess(redis="real", **defaults(clock_speed=10)).start()
    two = ServerProcess(redis="real", prefix=one.prefix, **defaults(clock_speed=10)).start()
    servers = [one, two]
    try:
        # (draw one: with the default, voluntary draws, a hand with nothing to play draws at the
        # script's speed until something is playable, which no player clicks that fast)
        host = one.create("Ann", {"turn_timer_s": 0, "draw": "one"})
        seats = [host] + [one.join(host["code"], f"P{i}") for i in range(1, 10)]
        code = host["code"]
        clients = [await Client(servers[i % 2], code, s["token"]).connect() for i, s in enumerate(seats)]
        assert (await clients[0].send({"type": "start"}))["type"] == "ack"
        await level(clients)
        watchers = [one.join(host["code"], f"S{i}") for i in range(12)]
        assert all(w["spectator"] for w in watchers)
        spectators = [await Client(servers[i % 2], host["code"], w["token"]).connect()
                      for i, w in enumerate(watchers)]
        everyone = clients + spectators
        moves = 0
        while moves < 150 and clients[0].view["room"]["status"] != "match_over":
            await level(everyone)
            if clients[0].view["room"]["status"] == "round_over":  # the next round, at once
                assert (await clients[0].send({"type": "rematch"}))["type"] == "ack"
                continue
            if moves % 10 == 0:  # the heartbeat (the browser pings every 15 s: this is more)
                for c in everyone:
                    await c.send_raw('{"type":"ping"}')
                for c in everyone:
                    await c.until(lambda m: m["type"] == "pong")
            if moves in (5, 15, 25):  # three phones lose their connection and come back
                for i in (1, 4, 7):
                    await clients[i].close()
                    clients[i] = await Client(servers[(i + moves) % 2], code, seats[i]["token"]).connect()
                everyone = clients + spectators
                await level(everyone)
            mover = next((c for c in clients if c.my_turn()), None)
            if mover is None:  # (a choice or a window under way: the next patch says whose turn)
                if clients[0].view["room"]["status"] != "playing":  # the last move ended it
                    continue
                await clients[0].until(lambda m: m["type"] == "patch")
                continue
            answer = await mover.send(human_move(mover))
            assert answer["type"] == "ack", answer
            moves += 1
        await level(everyone)
        for c in everyone:
            assert c.ws.close_code is None, c.ws.close_code
            assert not [m for m in c.messages if m.get("code") == "rate_limited"]
            assert c.gaps == 0
    finally:
        stopped(*servers)
