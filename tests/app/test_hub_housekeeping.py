"""The hub's housekeeping after the scheduler's wake-ups: actors of rooms gone quiet are forgotten,
looked for every ``EVICT_EVERY_S`` and not on every wake-up, and the sockets gauge is read when
scraped."""

from __future__ import annotations

import time
import uuid
from types import SimpleNamespace

import pytest

from app.core.clock import Clock
from app.core.settings import Settings
from app.processes.hub import EVICT_EVERY_S, EVICT_IDLE_S, Hub
from app.storage.store import RoomStore


@pytest.fixture
async def hub(redis_client):
    store = RoomStore(redis_client, f"test-{uuid.uuid4().hex[:8]}", ttl_ms=3_600_000)
    hub = Hub(Settings(scheduler_poll_ms=60_000), store, Clock(), publishes=False)
    yield hub
    for actor in hub.actors.values():
        actor.task.cancel()
    await hub.stop()


def a_socket(code: str, player: str) -> SimpleNamespace:
    return SimpleNamespace(code=code, player=player, view=None, public=None, version=0, closed=False,
                           close=lambda *args: None)


def gauge(hub: Hub, name: str) -> float:
    for line in hub.metrics.render()[0].decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"{name} not in /metrics")


async def test_a_quiet_room_s_actor_goes_and_one_with_a_socket_here_stays(hub: Hub):
    hub.actor("QUIET")
    hub.actor("HELD")
    hub.sockets.put(a_socket("HELD", "p1"))  # type: ignore[arg-type]
    later = time.monotonic() + EVICT_IDLE_S + 1
    hub._housekeep(later)
    assert set(hub.actors) == {"HELD"}
    assert gauge(hub, "mercyless_rooms") == 1


async def test_the_actors_are_walked_once_every_few_seconds_not_on_every_wake_up(hub: Hub):
    start = time.monotonic() + EVICT_IDLE_S + 1
    hub._housekeep(start)  # a look now: nothing to forget yet
    hub.actor("LATE")
    hub._last_used["LATE"] = start - EVICT_IDLE_S - 1  # as if unused for over a minute
    for step in range(1, 10):
        hub._housekeep(start + step * EVICT_EVERY_S / 10)
    assert "LATE" in hub.actors  # the scheduler woke nine times; the next look is not due
    hub._housekeep(start + EVICT_EVERY_S)
    assert "LATE" not in hub.actors


async def test_the_sockets_gauge_counts_the_sockets_when_scraped(hub: Hub):
    assert gauge(hub, "mercyless_sockets") == 0
    hub.sockets.put(a_socket("ROOM1", "p1"))  # type: ignore[arg-type]
    hub.sockets.put(a_socket("ROOM1", "p2"))  # type: ignore[arg-type]
    hub.sockets.put(a_socket("ROOM2", "p1"))  # type: ignore[arg-type]
    assert gauge(hub, "mercyless_sockets") == 3  # no wake-up of the scheduler in between
    hub.sockets.take(hub.sockets["ROOM1"]["p2"])
    assert gauge(hub, "mercyless_sockets") == 2
