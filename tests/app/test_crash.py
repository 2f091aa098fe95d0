"""Crash survival: three app processes on a Redis of the test's own (AOF), scripted players
spread across them, and processes and Redis killed (SIGKILL) and restarted mid-game.

After every round the audit (tests/app/scripted.py) checks card conservation, that the record
replays to the stored state, that every acknowledged action is in the record exactly once, and
that every player ends on the stored version with the view a fresh sync gives.
"""

from __future__ import annotations

import asyncio
import random
import signal

import pytest
import redis

from .harness import Client, RedisServer, ServerProcess
from .scripted import Player, audit, level, play_round

FAST_PRESENCE = {"node_beat_ms": 200, "node_ttl_ms": 1500}


@pytest.fixture
def cluster(tmp_path):
    store = RedisServer(tmp_path).start()
    servers: list[ServerProcess] = []
    prefix = "crash"
    for _ in range(3):
        server = ServerProcess(redis="fake", prefix=prefix, **FAST_PRESENCE)
        server.env["REDIS_URL"] = store.url
        servers.append(server.start())
    yield store, servers
    logs = [s.stop() for s in servers]
    store.stop()
    for log in logs:
        assert "Traceback" not in log, log[-3000:]
        assert '"level":"error"' not in log, log[-3000:]


async def seat_players(servers: list[ServerProcess], names: list[str], bots: int) -> tuple[str, list[Player]]:
    host = servers[0].create(names[0], {"turn_timer_s": 0})
    code = host["code"]
    infos = [host] + [servers[i % len(servers)].join(code, name) for i, name in enumerate(names[1:], 1)]
    players = [Player(servers, i % len(servers), code, info["token"]) for i, info in enumerate(infos)]
    for p in players:
        await p.connect()
    for _ in range(bots):
        assert (await players[0].request({"type": "add_bot", "level": "normal"}))["type"] == "ack"
    return code, players


async def test_killed_processes_and_redis_lose_nothing_and_apply_nothing_twice(cluster):
    store, servers = cluster
    r = redis.Redis(port=store.port)
    code, players = await seat_players(servers, ["Ann", "Bob", "Cat", "Dan"], bots=1)
    prefix = servers[0].prefix
    rng = random.Random(7)
    killed: list[ServerProcess] = []

    async def kill(i: int) -> None:
        servers[i].stop(signal.SIGKILL)
        killed.append(servers[i])

    async def restart() -> None:
        killed.pop().start()

    async def move_a_player() -> None:
        """A second hello with the same token on another process replaces the first socket."""
        p = next(p for p in players if p.client is not None and p.client.server is servers[0])
        old = p.client
        target = next(s for s in servers if s is not servers[0] and s.proc is not None)
        await p.connect(target)
        closed = await asyncio.wait_for(old.ws.wait_closed(), 10)
        assert closed is None and old.ws.close_code == 4409

    async def redis_blip() -> None:
        store.stop()
        p = players[0]
        answer = await p.client.send({"type": "react", "reaction": "gg"})
        assert answer["type"] == "error" and answer["code"] == "unavailable", answer
        store.start()  # same directory: the AOF brings every room back

    rounds = [
        {5: lambda: kill(1), 15: restart, 20: move_a_player, 30: redis_blip},
        {3: lambda: kill(0), 12: redis_blip, 18: restart, 25: lambda: kill(2), 35: restart},
    ]
    marks: dict[int, int] = {}
    for n, faults in enumerate(rounds):
        if n == 0:
            assert (await players[0].request({"type": "start"}))["type"] == "ack"
        else:
            assert (await players[0].request({"type": "rematch"}))["type"] == "ack"
        await level(players, r, prefix, code)
        marks = {i: len(p.acked) for i, p in enumerate(players)}
        await play_round(players, r, prefix, code, rng, resend=0.2, double=0.05, faults=faults)
        await level(players, r, prefix, code)
        await audit(players, r, prefix, code, marks)
        # nobody was left marked away: every process that took a player over recorded it
        assert all(e["connected"] for e in players[0].view["players"])
    assert sum(p.reconnects for p in players) > 0
    assert sum(p.resent for p in players) > 0


async def test_seats_of_a_killed_process_are_disconnected_then_given_to_bots(cluster):
    _store, servers = cluster
    for s in servers[:2]:  # a short grace, on the processes that survive
        s.stop()
        s.env["RECONNECT_GRACE_MS"] = "2000"
        s.start()
    host = servers[0].create("Ann", {"turn_timer_s": 0})
    code = host["code"]
    guest = servers[2].join(code, "Bob")
    ann = await Client(servers[0], code, host["token"]).connect()
    bob = await Client(servers[2], code, guest["token"]).connect()
    assert (await ann.send({"type": "start"}))["type"] == "ack"
    await ann.until_view(lambda v: v["room"]["status"] == "playing")
    bob_id = bob.you
    servers[2].stop(signal.SIGKILL)  # Bob's process dies; Bob never comes back
    await ann.until(lambda m: m["type"] == "patch" and any(
        e["kind"] == "disconnected" and e["player"] == bob_id for e in m["events"]), timeout=15)
    await ann.until(lambda m: m["type"] == "patch" and any(
        e["kind"] == "replaced_by_bot" and e["player"] == bob_id for e in m["events"]), timeout=15)
    bob_entry = next(e for e in ann.view["players"] if e["id"] == bob_id)
    assert bob_entry["bot"] is True
    await ann.close()
