"""A process's list of rooms in Redis (read by the others if it dies, to mark its players
disconnected) follows its sockets: a release and a hold a moment apart land in order, a listing
lost to a Redis error comes back with the next heartbeat, a slow write holds up neither the
heartbeat nor other rooms, and a socket that went while the process reclaimed its seats stays
gone (fake and real Redis)."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from app.core.clock import Clock, StepClock
from app.core.settings import Settings
from app.processes.hub import Hub
from app.processes.nodes import Nodes
from app.rooms.sockets import LocalSockets
from app.storage.store import RoomStore


class FakeConnection:
    def __init__(self, code: str, player: str) -> None:
        self.code = code
        self.player = player
        self.closed = False
        self.closed_with: int | None = None

    def close(self, code: int = 1000) -> None:
        self.closed = True
        self.closed_with = code


@pytest.fixture
async def make_hub(redis_client):
    made: list[Hub] = []

    def make(**settings) -> Hub:
        store = RoomStore(redis_client, f"test-{uuid.uuid4().hex[:8]}", ttl_ms=3_600_000)
        hub = Hub(Settings(scheduler_poll_ms=60_000, **settings), store, Clock(), publishes=False)
        made.append(hub)
        return hub

    yield make
    for hub in made:
        await hub.stop()
        keys = [k async for k in redis_client.scan_iter(f"{hub.store.prefix}*")]
        if keys:
            await redis_client.delete(*keys)


async def listed(hub: Hub) -> set[str]:
    return set(await hub.store.node_rooms(hub.node_id))


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


async def test_a_listing_lost_to_redis_comes_back_with_the_next_heartbeat(make_hub, redis_client):
    hub = make_hub(node_beat_ms=50)
    await hub.start()
    await hub.attach(FakeConnection("ROOM2", "p1"))
    await redis_client.delete(hub.store.node_rooms_key(hub.node_id))  # as if the hold had failed
    async with asyncio.timeout(5):
        while await listed(hub) != {"ROOM2"}:
            await asyncio.sleep(0.02)
    # and a room whose last socket went is no longer listed
    conn = hub.sockets["ROOM2"]["p1"]
    assert await hub.detach(conn)
    assert await listed(hub) == set()


def _slow(hub: Hub, name: str) -> tuple[asyncio.Event, asyncio.Event]:
    """Make ``hub.store.<name>`` wait for the returned gate; the other event says it is waiting."""
    gate, waiting = asyncio.Event(), asyncio.Event()
    real = getattr(hub.store, name)

    async def slow(*args, **kwargs):
        waiting.set()
        await gate.wait()
        return await real(*args, **kwargs)

    setattr(hub.store, name, slow)
    return gate, waiting


async def test_a_slow_listing_write_holds_up_neither_the_heartbeat_nor_other_rooms(make_hub, redis_client):
    hub = make_hub(node_beat_ms=50)
    await hub.start()
    hold = hub.store.hold_room
    gate, waiting = _slow(hub, "hold_room")
    stuck = asyncio.create_task(hub.attach(FakeConnection("SLOW", "p1")))
    await asyncio.wait_for(waiting.wait(), 5)
    hub.store.hold_room = hold  # type: ignore[method-assign]  # other rooms write at once
    await asyncio.wait_for(hub.attach(FakeConnection("FAST", "p1")), 5)
    assert "FAST" in await listed(hub)
    beat = await redis_client.zscore(hub.store.nodes_key, hub.node_id)
    async with asyncio.timeout(5):  # the heartbeat goes on meanwhile
        while await redis_client.zscore(hub.store.nodes_key, hub.node_id) == beat:
            await asyncio.sleep(0.02)
    assert not stuck.done()
    gate.set()
    await asyncio.wait_for(stuck, 5)
    assert await listed(hub) == {"SLOW", "FAST"}


async def test_a_socket_gone_while_the_process_reclaims_its_seats_stays_gone(make_hub):
    hub = make_hub()
    stays, goes = FakeConnection("ROOMA", "p1"), FakeConnection("ROOMB", "p2")
    await hub.attach(stays)
    await hub.attach(goes)
    gate, waiting = _slow(hub, "hold_room")
    reclaiming = asyncio.create_task(hub.nodes.reclaim())  # as after the others gave this process up
    await asyncio.wait_for(waiting.wait(), 5)
    goes.close()
    assert await hub.detach(goes)
    gate.set()
    await asyncio.wait_for(reclaiming, 10)
    assert "ROOMB" not in hub.sockets and await listed(hub) == {"ROOMA"}


async def test_a_room_held_again_while_its_failed_removal_is_retried_stays_listed(make_hub):
    hub = make_hub()
    await hub.store.beat(hub.node_id, hub.clock.now_ms(), hub.settings.node_ttl_ms)  # known alive
    hub.nodes.unlisted.add("AGAIN")  # its last socket went and the removal failed on a Redis error
    gate, waiting = _slow(hub, "beat")
    beating = asyncio.create_task(hub.nodes.beat())  # retries the removal...
    await asyncio.wait_for(waiting.wait(), 5)
    await hub.attach(FakeConnection("AGAIN", "p1"))  # ...while a new socket of the room is held
    assert "AGAIN" in await listed(hub)
    gate.set()
    await asyncio.wait_for(beating, 5)
    assert await listed(hub) == {"AGAIN"}


async def test_a_process_back_from_a_redis_outage_sweeps_nobody_before_the_others_beat_again(redis_client):
    """Redis away longer than ``NODE_TTL_MS`` (a failover) stops every heartbeat: the first
    process back must not write the others off for Redis's silence (their players marked
    disconnected, all of them then claiming their seats back). A process that really stopped
    is still swept once the live ones beat past its last beat."""
    store = RoomStore(redis_client, f"test-{uuid.uuid4().hex[:8]}", ttl_ms=3_600_000)
    clock = StepClock()
    settings = Settings(node_beat_ms=200, node_ttl_ms=1500)

    async def nothing(*args: object) -> None:
        return None

    def nodes(origin: str) -> Nodes:
        return Nodes(store, settings, clock, origin, LocalSockets(), nothing, nothing)  # type: ignore[arg-type]

    first, second = nodes("first"), nodes("second")
    swept: list[str] = []

    async def sweep(node: str) -> None:
        swept.append(node)

    first.sweep = sweep  # type: ignore[method-assign]
    await first.beat()
    await second.beat()
    clock.ms += 3000  # Redis away: no heartbeat reached it
    await first.beat()
    assert swept == []
    clock.ms += 200
    await second.beat()
    for _ in range(7):  # the second process stops now; the first beats on
        clock.ms += 200
        await first.beat()
    assert swept == []  # 1400 ms since its last beat
    clock.ms += 200
    await first.beat()
    assert swept == ["second"]
    await redis_client.delete(store.nodes_key, store.node_rooms_key("first"), store.node_rooms_key("second"))
