"""A process's list of rooms in Redis (read by the others if it dies, to mark its players
disconnected) follows its sockets: a release and a hold a moment apart land in order, and a
listing lost to a Redis error comes back with the next heartbeat (fake and real Redis)."""

from __future__ import annotations

import asyncio
import uuid

import fakeredis
import pytest
import redis.asyncio as aioredis

from app.clock import Clock
from app.hub import Hub
from app.settings import Settings
from app.store import RoomStore

from .harness import REAL_REDIS, real_redis_available


class FakeConnection:
    def __init__(self, code: str, player: str) -> None:
        self.code = code
        self.player = player
        self.closed_with: int | None = None

    def close(self, code: int = 1000) -> None:
        self.closed_with = code


@pytest.fixture
async def redis(backend: str):
    if backend == "real":
        if not real_redis_available():
            pytest.fail("the real Redis at 127.0.0.1:6379 is not running (CI starts it)")
        client = aioredis.from_url(REAL_REDIS)
    else:
        client = fakeredis.FakeAsyncRedis()
    yield client
    await client.aclose()


@pytest.fixture
async def make_hub(redis):
    made: list[Hub] = []

    def make(**settings) -> Hub:
        store = RoomStore(redis, f"test-{uuid.uuid4().hex[:8]}", ttl_ms=3_600_000)
        hub = Hub(Settings(scheduler_poll_ms=60_000, **settings), store, Clock(), publishes=False)
        made.append(hub)
        return hub

    yield make
    for hub in made:
        await hub.stop()
        keys = [k async for k in redis.scan_iter(f"{hub.store.prefix}*")]
        if keys:
            await redis.delete(*keys)


async def listed(hub: Hub) -> set[str]:
    return set(await hub.store.node_rooms(hub.origin))


async def test_a_release_and_a_hold_a_moment_apart_leave_the_room_listed(make_hub):
    hub = make_hub()
    first = FakeConnection("ROOM1", "p1")
    await hub.attach(first)
    assert await listed(hub) == {"ROOM1"}
    # the room's last socket closes, and its release is slow to reach Redis...
    gate, releasing = asyncio.Event(), asyncio.Event()
    release = hub.store.release_room

    async def slow_release(node: str, code: str) -> None:
        releasing.set()
        await gate.wait()
        await release(node, code)

    hub.store.release_room = slow_release  # type: ignore[method-assign]
    detaching = asyncio.create_task(hub.detach(first))
    await asyncio.wait_for(releasing.wait(), 5)
    # ...while a new socket of the same room arrives and is held
    attaching = asyncio.create_task(hub.attach(FakeConnection("ROOM1", "p2")))
    await asyncio.wait({attaching}, timeout=0.5)  # done at once, or waiting for the release
    gate.set()
    await asyncio.wait_for(asyncio.gather(detaching, attaching), 5)
    assert await listed(hub) == {"ROOM1"}  # the process holds a socket there


async def test_a_listing_lost_to_redis_comes_back_with_the_next_heartbeat(make_hub, redis):
    hub = make_hub(node_beat_ms=50)
    await hub.start()
    await hub.attach(FakeConnection("ROOM2", "p1"))
    await redis.delete(hub.store.node_rooms_key(hub.origin))  # as if the hold had failed
    async with asyncio.timeout(5):
        while await listed(hub) != {"ROOM2"}:
            await asyncio.sleep(0.02)
    # and a room whose last socket went is no longer listed
    conn = hub.connections["ROOM2"]["p1"]
    assert await hub.detach(conn)
    assert await listed(hub) == set()
