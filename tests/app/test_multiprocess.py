"""Many processes, one Redis: players on different processes play in the same room."""

from __future__ import annotations

import asyncio
import random

import pytest

from .harness import Client, ServerProcess, real_redis_available


@pytest.fixture
def two_servers():
    if not real_redis_available():
        pytest.fail("the real Redis at 127.0.0.1:6379 is not running (CI starts it)")
    a = ServerProcess(redis="real").start()
    b = ServerProcess(redis="real", prefix=a.prefix).start()
    yield a, b
    errors = a.stop() + b.stop()
    assert "Traceback" not in errors, errors[-3000:]


async def test_players_on_two_processes_play_a_round_together(two_servers):
    a, b = two_servers
    host = a.create("Ann")
    code = host["code"]
    guest = b.join(code, "Bob")  # joined through the other process
    third = a.join(code, "Cat")
    ann = await Client(a, code, host["token"]).connect()
    bob = await Client(b, code, guest["token"]).connect()
    cat = await Client(b, code, third["token"]).connect()
    clients = [ann, bob, cat]
    assert (await ann.send({"type": "add_bot", "level": "normal"}))["type"] == "ack"
    assert (await ann.send({"type": "start"}))["type"] == "ack"
    for c in clients:  # every client, on either process, sees the deal
        await c.until_view(lambda v: v["room"]["status"] == "playing" and len(v["hand"]) == 7)
    rng = random.Random(11)

    async def drive(c: Client) -> None:
        while c.view["room"]["status"] == "playing":
            if c.my_turn():
                await c.play_turn(rng)
            else:
                await c.until(lambda m: m["type"] in ("patch", "welcome"), timeout=20)

    await asyncio.wait_for(asyncio.gather(*(drive(c) for c in clients)), 180)
    versions = set()
    for c in clients:
        await c.until_view(lambda v: v["room"]["status"] in ("round_over", "match_over"))
        assert c.gaps == 0
        versions.add(c.version)
    # everyone ends on the same version and the same view as a fresh sync gives
    top = max(versions)
    for c in clients:
        await c.until_view(lambda v, c=c: c.version >= top, timeout=5)
    for c in clients:
        seen = c.view
        before = len(c.messages)
        assert (await c.send({"type": "sync"}))["type"] == "ack"
        welcome = next(m for m in c.messages[before:] if m["type"] == "welcome")
        # the history writer may commit meanwhile (it empties the room's outbox): nobody sees that
        assert welcome["version"] >= top
        assert welcome["state"] == seen
    assert len({c.view["game"]["winner"] for c in clients}) == 1
