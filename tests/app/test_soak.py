"""Soak: 50 rooms x 6 seats (3 scripted players + 3 bots) on two server processes sharing the
real Redis, for SOAK_SECONDS (default 180), with 20% of actions re-sent and 5% double-clicked.

Every round (and every room when time is up) passes the audit of tests/app/scripted.py: nothing
acknowledged is lost, nothing applies twice, cards are conserved, the record replays to the
stored state, every player holds the view a fresh sync gives. No error is logged, and once the
rooms expire Redis holds as many keys as before they were made.
"""

from __future__ import annotations

import asyncio
import os
import random

import pytest
import redis

from .harness import ServerProcess, real_client, real_redis_available
from .scripted import Player, audit, level, play_round

ROOMS = 50
SOAK_S = float(os.environ.get("SOAK_SECONDS", "180"))
ROOM_TTL_MS = 20_000  # rooms expire soon after the soak, so the key count can come back
# a seat closed at a room's end is the seat's bot's after this; its deadline must fall within the
# wait for the rooms to expire, however far apart the rooms end (the default is 100 s)
RECONNECT_GRACE_MS = ROOM_TTL_MS // 2


@pytest.fixture
def pair():
    if not real_redis_available():
        pytest.fail("the real Redis at 127.0.0.1:6379 is not running (CI starts it)")
    a = ServerProcess(redis="real", room_ttl_ms=ROOM_TTL_MS, reconnect_grace_ms=RECONNECT_GRACE_MS).start()
    b = ServerProcess(redis="real", prefix=a.prefix, room_ttl_ms=ROOM_TTL_MS,
                      reconnect_grace_ms=RECONNECT_GRACE_MS).start()
    yield a, b
    logs = [a.stop(), b.stop()]
    for log in logs:
        assert "Traceback" not in log, log[-3000:]
        assert '"level":"error"' not in log, log[-3000:]


async def soak_room(servers: list[ServerProcess], store: redis.Redis, seed: int, stop_at: float,
                    totals: dict[str, int]) -> None:
    rng = random.Random(seed)
    prefix = servers[0].prefix
    host = servers[seed % 2].create(f"H{seed}", {"turn_timer_s": 0})
    code = host["code"]
    infos = [host] + [servers[(seed + i) % 2].join(code, f"P{seed}-{i}") for i in (1, 2)]
    players = [Player(servers, (seed + i) % 2, code, info["token"]) for i, info in enumerate(infos)]
    for p in players:
        await p.connect()
    for bot in ("easy", "normal", "easy"):
        assert (await players[0].request({"type": "add_bot", "level": bot}))["type"] == "ack"
    assert (await players[0].request({"type": "start"}))["type"] == "ack"
    loop = asyncio.get_running_loop()
    while True:
        await level(players, store, prefix, code)
        marks = {i: len(p.acked) for i, p in enumerate(players)}
        played = await play_round(players, store, prefix, code, rng, resend=0.2, double=0.05,
                                  think_s=0.4, until=stop_at)
        totals["actions"] += played
        await level(players, store, prefix, code)
        await audit(players, store, prefix, code, marks)
        totals["audits"] += 1
        if loop.time() > stop_at:
            break
        totals["rounds"] += 1
        assert (await players[0].request({"type": "rematch"}))["type"] == "ack"
    totals["resent"] += sum(p.resent for p in players)
    totals["double"] += sum(p.double_clicked for p in players)
    for p in players:
        await p.client.close()


async def test_fifty_rooms_of_six_for_three_minutes(pair):
    servers = list(pair)
    store = real_client()
    prefix = servers[0].prefix

    def key_count() -> int:
        return sum(1 for _ in store.scan_iter(match=f"{prefix}:*"))

    baseline = key_count()
    totals = {"actions": 0, "rounds": 0, "audits": 0, "resent": 0, "double": 0}
    stop_at = asyncio.get_running_loop().time() + SOAK_S
    await asyncio.gather(*(soak_room(servers, store, seed, stop_at, totals) for seed in range(ROOMS)))
    assert totals["audits"] >= ROOMS and totals["resent"] > 0 and totals["double"] > 0, totals
    print(f"soak: {totals}")
    # every room expires (TTL), and with it every key it had
    loop = asyncio.get_running_loop()
    deadline = loop.time() + ROOM_TTL_MS / 1000 * 3
    while key_count() > baseline and loop.time() < deadline:
        await asyncio.sleep(0.5)  # polling Redis for the expiry, bounded by the deadline
    left = sorted(k.decode() for k in store.scan_iter(match=f"{prefix}:*"))
    assert key_count() == baseline, (left, store.zrange(f"{prefix}:deadlines", 0, -1, withscores=True))
