"""The deadline index across processes: a write that raced a commit never leaves a room's
deadline later than the room's own, and a deadline this process noted fires here even when the
index says otherwise (in process, on fakeredis and on the real Redis)."""

from __future__ import annotations

import asyncio
import uuid

import orjson
import pytest

from app.core.clock import Clock
from app.core.settings import Settings
from app.processes.hub import Hub
from app.rooms.actor import RoomActor
from app.rooms.model import ROUND_OVER, Room, Seat
from app.storage.store import RoomStore

GRACE_MS = 100_000


def document(version: int, dropped_at: int) -> bytes:
    """A room between rounds whose one human dropped at ``dropped_at``: its deadline is the end
    of the reconnect grace."""
    room = Room(code="DLN", version=version, host="p1", created_ms=0, rules={}, status=ROUND_OVER,
                seats=[Seat("p1", "Ann", dropped_at=dropped_at), Seat("b1", "Bot", bot="easy")])
    return orjson.dumps(room)


@pytest.fixture
async def hub(redis_client):
    redis = redis_client
    settings = Settings(reconnect_grace_ms=GRACE_MS, scheduler_poll_ms=60_000)
    store = RoomStore(redis, f"test-{uuid.uuid4().hex[:8]}", ttl_ms=3_600_000)
    hub = Hub(settings, store, Clock(), publishes=False)
    yield hub
    for actor in hub.actors.values():
        actor.task.cancel()
    await hub.stop()
    keys = [k async for k in redis.scan_iter(f"{store.prefix}*")]
    if keys:
        await redis.delete(*keys)


async def indexed(hub: Hub, code: str) -> int | None:
    score = await hub.store.redis.zscore(hub.store.deadlines_key, code)
    return None if score is None else int(score)


async def test_a_rearm_that_raced_a_commit_indexes_the_newer_deadline(hub: Hub):
    """The stale write happens: a process reads version 1 (deadline far off), another commits
    version 2 with a deadline due now and indexes it, then the first writes its older, later
    deadline over it. The version check after the write makes it read and index again."""
    store = hub.store
    await store.commit("DLN", None, 1, document(1, dropped_at=50_000), deadline=50_000 + GRACE_MS)
    real_load = store.load
    raced = False

    async def load_then_lose_the_race(code: str):
        nonlocal raced
        found = await real_load(code)
        if not raced:  # the other process commits right after this read
            raced = True
            await store.commit(code, 1, 2, document(2, dropped_at=0), deadline=GRACE_MS)
        return found

    store.load = load_then_lose_the_race  # type: ignore[method-assign]
    actor = RoomActor(hub.services, "DLN")
    await actor._rearm()
    assert raced
    assert await indexed(hub, "DLN") == GRACE_MS  # version 2's deadline, not version 1's
    assert hub.scheduler.local_due["DLN"] == GRACE_MS
    assert actor.loaded is not None and actor.loaded.room.version == 2


async def test_a_rearm_without_a_race_reads_once(hub: Hub):
    store = hub.store
    await store.commit("DLN", None, 1, document(1, dropped_at=7), deadline=None)
    loads = 0
    real_load = store.load

    async def counted(code: str):
        nonlocal loads
        loads += 1
        return await real_load(code)

    store.load = counted  # type: ignore[method-assign]
    await RoomActor(hub.services, "DLN")._rearm()
    assert loads == 1
    assert await indexed(hub, "DLN") == 7 + GRACE_MS


async def test_the_index_write_says_whether_the_room_is_still_at_the_version(hub: Hub):
    store = hub.store
    await store.commit("DLN", None, 3, document(3, dropped_at=0), deadline=None)
    assert await store.set_deadline("DLN", 10, 3) is True
    assert await store.set_deadline("DLN", 20, 2) is False
    assert await indexed(hub, "DLN") == 20  # written all the same: the caller indexes again
    assert await store.set_deadline("DLN", None, 3) is True
    assert await indexed(hub, "DLN") is None


async def test_a_deadline_noted_here_fires_though_the_index_holds_a_later_one(hub: Hub):
    """The index says "in an hour" (a racing process's stale write); this process committed
    the room with a deadline due now: its scheduler ticks the room at once instead of polling
    the index until the hour is over."""
    now = hub.clock.now_ms()
    await hub.store.commit("DLN", None, 1, document(1, dropped_at=now - GRACE_MS), deadline=None)
    await hub.store.set_deadline("DLN", now + 3_600_000)
    ticked = asyncio.Event()
    actor = hub.actor("DLN")
    tick_intent = actor.tick_intent

    def observed_tick():
        intent = tick_intent()
        run = intent.run

        def tick(loaded, at):
            ticked.set()
            return run(loaded, at)

        intent.run = tick
        return intent

    actor.tick_intent = observed_tick  # type: ignore[method-assign]
    hub.scheduler.note_due("DLN", now)
    await hub.start()
    await asyncio.wait_for(ticked.wait(), 5)
