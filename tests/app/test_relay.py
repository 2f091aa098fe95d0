"""Sockets relayed to their room's home process (app/transport/relay.py): two real processes on the real
Redis, a room homed on the first, a player connected through the second."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import signal

import httpx
import pytest
import websockets

from .harness import Client, ServerProcess, real_redis_available

FAST = {"relay_ping_ms": 200, "relay_silence_ms": 1500, "metrics": "true"}


def metric(server: ServerProcess, name: str) -> float:
    text = httpx.get(f"{server.url}/metrics", timeout=5).text
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"{name} not in /metrics")


async def metric_becomes(server: ServerProcess, name: str, value: float, timeout: float = 10) -> None:
    """The gauges are set as sockets come and go, the sockets one on the scheduler's beat."""
    deadline = asyncio.get_running_loop().time() + timeout
    while metric(server, name) != value:
        assert asyncio.get_running_loop().time() < deadline, (name, metric(server, name), value)
        await asyncio.sleep(0.05)


@pytest.fixture
def pair():
    if not real_redis_available():
        pytest.fail("the real Redis at 127.0.0.1:6379 is not running (CI starts it)")
    home = ServerProcess(redis="real", **FAST).start()
    edge = ServerProcess(redis="real", prefix=home.prefix, **FAST).start()
    yield home, edge
    errors = home.stop() + edge.stop()
    assert "Traceback" not in errors, errors[-3000:]


async def seated(home: ServerProcess, edge: ServerProcess) -> tuple[Client, Client]:
    """Ann's socket on ``home`` (the room's first: its home), Bob's on ``edge``; a bot, started."""
    host = home.create("Ann", {"turn_timer_s": 0})
    guest = home.join(host["code"], "Bob")
    ann = await Client(home, host["code"], host["token"]).connect()
    bob = await Client(edge, host["code"], guest["token"]).connect()
    assert (await ann.send({"type": "add_bot", "level": "easy"}))["type"] == "ack"
    assert (await ann.send({"type": "start"}))["type"] == "ack"
    for c in (ann, bob):
        await c.until_view(lambda v: v["room"]["status"] == "playing")
    return ann, bob


async def play(clients: list[Client], moves: int, rng: random.Random) -> None:
    """``moves`` moves by whoever's turn it is among ``clients`` (the bot plays its own)."""
    made = 0
    while made < moves:
        top = max(c.version for c in clients)
        for c in clients:  # every view at the newest version before anyone is asked
            await c.until_view(lambda v, c=c, top=top: c.version >= top)
        mover = next((c for c in clients if c.my_turn()), None)
        if mover is None:
            await clients[0].until(lambda m: m["type"] == "patch")
            continue
        assert (await mover.play_turn(rng))["type"] == "ack"
        made += 1
        if clients[0].view["room"]["status"] != "playing":
            return


async def test_a_socket_of_a_room_homed_elsewhere_runs_its_session_on_the_home(pair):
    home, edge = pair
    ann, bob = await seated(home, edge)
    # Bob's session runs on the home; the edge only carries his frames
    await metric_becomes(home, "mercyless_sockets", 2)
    await metric_becomes(edge, "mercyless_sockets", 0)
    await metric_becomes(edge, "mercyless_relayed_sockets", 1)
    await play([ann, bob], 12, random.Random(3))
    top = max(ann.version, bob.version)
    for c in (ann, bob):
        await c.until_view(lambda v, c=c: c.version >= top)
        assert c.gaps == 0
    assert bob.view["room"] == ann.view["room"]
    # the edge passes every frame on as it came; the session's own checks answer it
    await bob.send_raw("{not json")
    bad = await bob.until(lambda m: m["type"] == "error")
    assert bad["code"] == "bad_message"
    assert (await bob.send({"type": "sync"}))["type"] == "ack"
    # a frame over 4 KiB closes the socket with 1009 at the edge, and the session on the home
    # ends with it
    await bob.send_raw(json.dumps({"type": "react", "reaction": "x" * 5000}))
    await asyncio.wait_for(bob.ws.wait_closed(), 10)
    assert bob.ws.close_code == 1009
    await metric_becomes(edge, "mercyless_relayed_sockets", 0)
    await ann.until_view(lambda v: not next(p for p in v["players"] if p["id"] == bob.you)["connected"])


async def test_when_the_home_dies_its_relayed_sockets_close_and_the_room_moves(pair):
    home, edge = pair
    ann, bob = await seated(home, edge)
    await play([ann, bob], 4, random.Random(5))
    home.stop(signal.SIGKILL)
    # found by the pings (no receiver twice in a row), well before the node's 15 s timeout
    await asyncio.wait_for(bob.ws.wait_closed(), 5)
    assert bob.ws.close_code == 1012
    committed = max(ann.version, bob.version)
    for c in (ann, bob):  # both come back through the process that is left
        c.server = edge
        await c.connect()
        assert c.version >= committed
    await metric_becomes(edge, "mercyless_sockets", 2)
    await metric_becomes(edge, "mercyless_relayed_sockets", 0)
    await play([ann, bob], 4, random.Random(6))
    assert ann.gaps == bob.gaps == 0


async def test_a_home_that_stops_hands_its_rooms_to_the_process_left_at_once(pair):
    """A rolling restart: the stopping home says so before it closes its sockets, so the
    players it drops come back through the other process, which takes the room over, instead
    of being relayed back to a process on its way out."""
    home, edge = pair
    ann, bob = await seated(home, edge)
    await play([ann, bob], 4, random.Random(9))
    assert home.proc is not None
    committed = max(ann.version, bob.version)
    home.proc.send_signal(signal.SIGTERM)  # not waited for: the players come back as it stops
    for c in (ann, bob):  # Ann's socket (on the home) first, as soon as it closes
        await asyncio.wait_for(c.ws.wait_closed(), 5)
        assert c.ws.close_code == 1012
        c.server = edge
        await c.connect()
        assert c.version >= committed
    await metric_becomes(edge, "mercyless_sockets", 2)
    assert metric(edge, "mercyless_relayed_sockets") == 0  # served there, not relayed back
    await play([ann, bob], 6, random.Random(10))
    assert ann.gaps == bob.gaps == 0


async def test_when_the_relaying_process_dies_its_players_are_disconnected(pair):
    home, edge = pair
    ann, bob = await seated(home, edge)
    edge.stop(signal.SIGKILL)
    # the home hears no ping from the edge for relay_silence_ms: Bob's session ends
    await ann.until_view(lambda v: not next(p for p in v["players"] if p["id"] == bob.you)["connected"],
                         timeout=10)
    await metric_becomes(home, "mercyless_sockets", 1)
    # Bob comes back through the home itself
    bob.server = home
    await bob.connect()
    await ann.until_view(lambda v: next(p for p in v["players"] if p["id"] == bob.you)["connected"])


async def test_with_relaying_off_each_process_serves_its_own_sockets():
    if not real_redis_available():
        pytest.fail("the real Redis at 127.0.0.1:6379 is not running (CI starts it)")
    home = ServerProcess(redis="real", relay_sockets="false", metrics="true").start()
    edge = ServerProcess(redis="real", prefix=home.prefix, relay_sockets="false", metrics="true").start()
    try:
        ann, bob = await seated(home, edge)
        await metric_becomes(edge, "mercyless_sockets", 1)
        await metric_becomes(home, "mercyless_sockets", 1)
        await play([ann, bob], 6, random.Random(8))
        assert ann.gaps == bob.gaps == 0
    finally:
        errors = home.stop() + edge.stop()
    assert "Traceback" not in errors, errors[-3000:]


async def test_a_socket_for_a_room_that_does_not_exist_is_refused_without_a_home(pair):
    _, edge = pair
    ws = await websockets.connect(f"{edge.ws_url}/ws/ZZZZZZ")
    await ws.send(json.dumps({"type": "hello", "token": "x" * 16}))
    await asyncio.wait_for(ws.wait_closed(), 10)
    assert ws.close_code == 4404


async def test_a_relayed_flood_is_cut_at_the_edge_and_answered_as_a_local_one_is():
    """The home applies the player's rate limit; the relaying process, twice as loose, drops
    the rest of a flood itself, so at most its burst reaches the home. The client sees what a
    local socket sees: its burst answered, one rate_limited notice, the rest dropped."""
    if not real_redis_available():
        pytest.fail("the real Redis at 127.0.0.1:6379 is not running (CI starts it)")
    limits = {**FAST, "rate_burst": 5, "rate_per_s": 1}
    home = ServerProcess(redis="real", **limits).start()
    edge = ServerProcess(redis="real", prefix=home.prefix, **limits).start()
    try:
        host = home.create("Ann")
        guest = home.join(host["code"], "Bob")
        await Client(home, host["code"], host["token"]).connect()
        bob = await Client(edge, host["code"], guest["token"]).connect()
        ids = [f"f{i}" for i in range(40)]
        for mid in ids:
            await bob.send_raw(json.dumps({"type": "draw", "id": mid}))
        # once the bucket has a token again, a last message: its answer comes after the others'
        for _ in range(20):
            await bob.send_raw(json.dumps({"type": "draw", "id": "last"}))
            with contextlib.suppress(TimeoutError):
                await bob.until(lambda m: m.get("id") == "last" and m.get("code") != "rate_limited",
                                timeout=0.6)
                break
        answers = [m for m in bob.messages if m["type"] in ("ack", "error") and m.get("id") in ids]
        codes = [a["code"] for a in answers]
        assert codes.count("rate_limited") == 1 and set(codes) == {"not_started", "rate_limited"}, codes
        assert 5 <= codes.count("not_started") <= 10  # the home's burst, a token or two refilled
        assert len({a["id"] for a in answers}) == len(answers)  # none answered twice
        assert not bob.ws.close_code
    finally:
        errors = home.stop() + edge.stop()
    assert "Traceback" not in errors, errors[-3000:]
